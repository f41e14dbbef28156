"""The servers find the embedded store under any number of wrappers; the relation index's label
lookup fails with a typed error."""

from __future__ import annotations

import pytest

from kg_adapters import connect
from kg_adapters.errors import BackendError
from kg_adapters.relation_index import RelationIndex
from kg_adapters.serve.current import embedded_store
from kg_adapters.wrappers.counting import CountingKG


def test_embedded_store_is_found_under_every_wrapper_level() -> None:
    store = connect("oxigraph://")
    wrapped = CountingKG(CountingKG(store))
    assert embedded_store(wrapped) is store
    assert embedded_store(store) is store


def test_a_graph_without_an_embedded_store_is_answered_as_it_is() -> None:
    remote = connect("sparql+http://127.0.0.1:9/sparql")
    wrapped = CountingKG(remote)
    assert embedded_store(wrapped) is wrapped


def test_relation_labels_on_a_closed_index_is_a_backend_error() -> None:
    index = RelationIndex()
    index.add([("http://example.org/p", "place", "en")])
    assert index.relation_labels(["http://example.org/p"], ("en",)) == {"http://example.org/p": "place"}
    index.close()
    with pytest.raises(BackendError, match="relation index"):
        index.relation_labels(["http://example.org/p"], ("en",))
