"""The conformance suite on a real Virtuoso 7.2 over HTTP (``sparql+http://``): the same graph
must give the same answers as the embedded store. A second server with tiny row caps proves that
paging and chunk splitting return complete answers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kg_adapters import connect
from kg_adapters.backends.sparql_http import RemoteSparqlGraph
from kg_adapters.base import KnowledgeGraph
from kg_adapters.errors import ResultTooLarge
from kg_adapters.testing.graph import A, write_graph
from kg_adapters.testing.suite import A_OUT, KGConformance, graph_fixture
from kg_adapters.testing.virtuoso import VirtuosoServer


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_graph(tmp_path_factory.mktemp("virtuoso-graph"))


def endpoint(server: VirtuosoServer) -> str:
    return "sparql+" + server.sparql_url


class TestVirtuoso(KGConformance):
    accent_insensitive_search = False

    make_kg = graph_fixture(
        lambda virtuoso: connect(endpoint(virtuoso), dialect="virtuoso", timeout=30, retries=0),
        "virtuoso",
        kind=RemoteSparqlGraph,
    )


class TestVirtuosoTinyPages(KGConformance):
    """Every answer larger than 3 rows is paged; chunks whose answer exceeds 12 sorted rows split."""

    accent_insensitive_search = False

    make_kg = graph_fixture(
        lambda capped_virtuoso: connect(
            endpoint(capped_virtuoso), dialect="virtuoso", max_sorted_rows=12, timeout=30, retries=0
        ),
        "capped_virtuoso",
        kind=RemoteSparqlGraph,
    )

    def test_answers_really_were_paged(self, make_kg: Callable[[], KnowledgeGraph]) -> None:
        kg = make_kg()
        assert isinstance(kg, RemoteSparqlGraph)
        assert len(A_OUT) > 3
        assert kg.neighbors(A) == {A: A_OUT}
        assert kg.queries_sent >= 2, "more edges than the server's row cap need more than one page"
        kg.close()


def test_one_entity_beyond_the_sort_ceiling_raises_not_truncates(capped_virtuoso: VirtuosoServer) -> None:
    kg = connect(endpoint(capped_virtuoso), dialect="virtuoso", max_sorted_rows=2, max_rows=1, retries=0)
    with kg, pytest.raises(ResultTooLarge):
        kg.neighbors(A)
