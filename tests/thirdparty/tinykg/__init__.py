"""A third-party backend, as another project would write one: not part of kg-adapters, registered
only through the ``kg_adapters.backends`` entry point of its distribution (the ``*.dist-info`` beside
this directory), and proven by kg-adapters' shipped test kit (``tests/test_third_party_backend.py``).

``tiny:///abs/file.nt`` reads an N-Triples file into an in-memory pyoxigraph store and answers through
the public :class:`~kg_adapters.backends.sparql_graph.SparqlGraph` base, which needs only a SELECT
evaluator and a label index. It has no raw ``query`` (not ``SparqlQueryable``) and is read-only,
which its conformance test declares rather than skips.
"""

from __future__ import annotations

from typing import Any

import pyoxigraph as ox

from kg_adapters.backends.oxigraph import select_rows
from kg_adapters.backends.sparql_graph import Row, SparqlGraph
from kg_adapters.errors import StoreNotFound
from kg_adapters.label_index import LabelIndex
from kg_adapters.profiles import get_profile
from kg_adapters.store_build import store_label_rows


class TinyGraph(SparqlGraph):
    """An N-Triples file in memory, read-only."""

    def __init__(self, path: str, *, profile: str = "generic") -> None:
        super().__init__(get_profile(profile))
        self._store = ox.Store()
        try:
            with open(path, "rb") as handle:
                self._store.bulk_load(handle, ox.RdfFormat.N_TRIPLES)
        except OSError as exc:
            raise StoreNotFound(f"tiny: cannot read {path}: {exc}") from exc

    @classmethod
    def from_url(cls, url: Any, **options: Any) -> TinyGraph:
        profile = options.pop("profile", "generic")
        if options:
            raise TypeError(f"unknown option(s) for tiny: {', '.join(sorted(options))}")
        return cls(url.path, profile=profile)

    def _select(self, query: str) -> list[Row]:
        return select_rows(self._store, query)

    def _open_label_index(self) -> LabelIndex:
        index = LabelIndex()
        index.add(store_label_rows(self._store))
        return index
