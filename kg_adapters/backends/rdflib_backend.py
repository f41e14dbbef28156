"""An in-memory rdflib graph parsed from a file (``rdflib:///abs/file.ttl``), or empty (``rdflib://``).

Meant for small graphs: a user's personal KG beside a big one, or test fixtures. rdflib errors
are translated here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, SupportsIndex

from kg_adapters.backends.sparql_graph import Row, SparqlGraph
from kg_adapters.base import Direction
from kg_adapters.errors import BackendError, InvalidTermError, LoadError, QueryError, StoreNotFound
from kg_adapters.label_index import LabelIndex
from kg_adapters.profiles import Profile, get_profile
from kg_adapters.rdf_io import open_maybe_compressed, rdf_format
from kg_adapters.records import Edge, Literal, Node
from kg_adapters.sparql_terms import check_literal
from kg_adapters.terms import Term, plain_literal
from kg_adapters.url import KGUrl, local_path

_RDFLIB_FORMATS = {"nt": "nt", "nq": "nquads", "ttl": "turtle", "rdf": "xml", "trig": "trig"}
_QUAD_FORMATS = {"nquads", "trig"}


def _import_rdflib() -> Any:
    try:
        import rdflib
    except ImportError as exc:  # pragma: no cover - rdflib is a core dependency
        from kg_adapters.errors import UnknownBackendError

        raise UnknownBackendError("the rdflib backend needs rdflib: pip install rdflib") from exc
    return rdflib


@contextmanager
def _lexical_forms_kept(rdflib: Any) -> Iterator[None]:
    """rdflib rewrites typed literals while parsing unless told not to ("...T00:00:00Z" becomes
    "...T00:00:00+00:00"); other backends keep the file's text, so this one must too."""
    previous = rdflib.NORMALIZE_LITERALS
    rdflib.NORMALIZE_LITERALS = False
    try:
        yield
    finally:
        rdflib.NORMALIZE_LITERALS = previous


def _check_unicode(graph: Any, path: str) -> None:
    """LoadError naming ``path`` if a term of ``graph`` holds text that is not valid Unicode (rdflib reads
    ``\\uD800`` escapes into lone surrogates, which no later step could store, send or print)."""
    for triple in graph:
        for term in triple:
            for text in (str(term), getattr(term, "language", None) or "", str(getattr(term, "datatype", "") or "")):
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError as exc:
                    raise LoadError(f"a term holds text that is not valid Unicode ({exc.reason})", file=path) from None


class RdflibGraph(SparqlGraph):
    """An rdflib ``Graph`` (or ``Dataset`` for quad formats) behind :class:`KnowledgeGraph`."""

    values_chunk = 500

    def __init__(self, path: str | None = None, *, profile: str | Profile = "generic") -> None:
        super().__init__(get_profile(profile))
        self._rdflib = _import_rdflib()
        self._graph = self._rdflib.Graph()
        self.path = path
        if path:
            self.load(path)

    @classmethod
    def from_url(cls, url: KGUrl, **options: Any) -> RdflibGraph:
        profile = options.pop("profile", "generic")
        if options:
            raise TypeError(f"unknown option(s) for rdflib: {', '.join(sorted(options))}")
        return cls(local_path(url) or None, profile=profile)

    @property
    def graph(self) -> Any:
        """The underlying rdflib graph."""
        return self._graph

    def __reduce_ex__(self, protocol: SupportsIndex) -> str | tuple[Any, ...]:
        """Picklable (the triples are in memory): the copy rebuilds its name index when first asked."""
        return object.__reduce_ex__(self, protocol)

    def __getstate__(self) -> dict[str, Any]:
        self._check_open()
        dropped = ("_rdflib", "_index", "_relation_index")
        return {name: value for name, value in super().__getstate__().items() if name not in dropped}

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self.__dict__.update(_rdflib=_import_rdflib(), _index=None, _relation_index=None)

    def _convert(self, term: Any) -> Term | None:
        rdflib = self._rdflib
        if isinstance(term, rdflib.URIRef):
            return str(term)
        if isinstance(term, rdflib.Literal):
            datatype = str(term.datatype) if term.datatype is not None else None
            return plain_literal(str(term), datatype, term.language)
        if isinstance(term, rdflib.BNode):
            return "_:" + str(term)
        return None

    def _select(self, query: str) -> list[Row]:
        try:
            answer = self._graph.query(query)
        except Exception as exc:  # rdflib raises pyparsing and plain exceptions alike
            raise QueryError(f"rdflib rejected the query: {exc}") from exc
        if answer.type != "SELECT":
            raise QueryError("expected a SELECT query")
        convert = self._convert
        return [tuple(convert(term) for term in row) for row in answer]

    def _blank_node_edges(
        self, blanks: Sequence[str], side: Direction, relation_iris: Sequence[str] | None
    ) -> Iterator[tuple[str, str, Term]]:
        rdflib = self._rdflib
        predicates = [rdflib.URIRef(r) for r in relation_iris] if relation_iris is not None else [None]
        for blank in blanks:
            node = rdflib.BNode(blank[2:])
            for predicate in predicates:
                pattern = (node, predicate, None) if side == "out" else (None, predicate, node)
                for subject, found_predicate, obj in self._graph.triples(pattern):
                    other = self._convert(obj if side == "out" else subject)
                    if other is not None:
                        yield blank, str(found_predicate), other

    def query(self, sparql: str) -> list[dict[str, Node | bool]]:
        self._check_open()
        if not isinstance(sparql, str):
            raise InvalidTermError("the query must be a string")
        try:
            answer = self._graph.query(sparql)
        except Exception as exc:
            raise QueryError(f"rdflib rejected the query: {exc}") from exc
        if answer.type == "ASK":
            return [{"boolean": bool(answer.askAnswer)}]
        if answer.type == "SELECT":
            names = [str(v) for v in answer.vars]
            rows: list[dict[str, Node | bool]] = []
            for solution in answer:
                row: dict[str, Node | bool] = {}
                for name, term in zip(names, solution, strict=False):
                    value = self._convert(term)
                    if value is not None:
                        row[name] = value
                rows.append(row)
            return rows
        triples: list[dict[str, Node | bool]] = []
        for s, p, o in answer:
            cs, cp, co = self._convert(s), self._convert(p), self._convert(o)
            if cs is not None and cp is not None and co is not None:
                triples.append({"subject": cs, "predicate": cp, "object": co})
        return triples

    def _open_label_index(self) -> LabelIndex:
        index = LabelIndex()
        index.add(self._all_label_rows())
        return index

    def add(self, edges: Iterable[Edge]) -> int:
        self._check_open()
        count = 0
        for edge in edges:
            self._graph.add((self._node(edge.head), self._node(edge.relation, relation=True), self._node(edge.tail)))
            count += 1
        self._drop_search_indexes()
        return count

    def load(self, path: str, *, format: str | None = None) -> None:
        self._check_open()
        fmt = rdf_format(path, format)
        name = _RDFLIB_FORMATS[fmt.file_extension]
        loaded = self._rdflib.Graph()
        try:
            with open_maybe_compressed(path) as handle, _lexical_forms_kept(self._rdflib):
                if name in _QUAD_FORMATS:
                    dataset = self._rdflib.Dataset()
                    dataset.parse(handle, format=name)
                    for s, p, o, _graph in dataset.quads():
                        loaded.add((s, p, o))
                else:
                    loaded.parse(handle, format=name)
        except FileNotFoundError as exc:
            raise StoreNotFound(f"no such file: {path}") from exc
        except OSError as exc:
            raise BackendError(f"cannot read {path}: {exc}") from exc
        except Exception as exc:
            raise LoadError(str(exc), file=path, line=getattr(exc, "lineno", None)) from exc
        _check_unicode(loaded, path)
        self._graph += loaded
        self._drop_search_indexes()

    def _node(self, node: Node, *, relation: bool = False) -> Any:
        rdflib = self._rdflib
        if isinstance(node, Literal):
            text, lang, datatype = check_literal(node)
            if lang is not None:
                return rdflib.Literal(text, lang=lang)
            if datatype is not None:
                return rdflib.Literal(text, datatype=rdflib.URIRef(datatype))
            return rdflib.Literal(text)
        full = self._profile.relation_iri(node) if relation else self._profile.entity_iri(node)
        return rdflib.URIRef(full)
