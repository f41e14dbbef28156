"""The conformance suite through ``kga serve``: our own ``sparql+http://`` backend against a real
``kga serve`` process over the embedded store must give the embedded store's answers. The same
endpoint over the rdflib backend (answered through ``query()``, written by Oxigraph's serializers)
gives the same bytes as over the embedded store."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.servers import free_port, running

from kg_adapters import connect
from kg_adapters.backends.sparql_http import RemoteSparqlGraph
from kg_adapters.base import KnowledgeGraph
from kg_adapters.testing.graph import AGE, A, write_graph
from kg_adapters.testing.suite import A_OUT, KGConformance, graph_fixture
from loaders import load_files

pytest.importorskip("starlette")


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_graph(tmp_path_factory.mktemp("serve-graph"))


@pytest.fixture(scope="module")
def served(graph_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = tmp_path_factory.mktemp("serve-store") / "store"
    load_files([str(graph_file)], str(store), progress=False)
    port = free_port()
    with running(["serve", "--kg", f"oxigraph://{store.resolve()}", "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/sparql"


@pytest.fixture(scope="module")
def served_rdflib(graph_file: Path) -> Iterator[str]:
    port = free_port()
    with running(["serve", "--kg", f"rdflib://{graph_file}", "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/sparql"


class TestThroughKgaServe(KGConformance):
    accent_insensitive_search = False  # remote search matches at the server (see RemoteSparqlGraph.search)

    make_kg = graph_fixture(
        lambda served: connect("sparql+" + served, dialect="oxigraph", timeout=30, retries=0),
        "served",
        kind=RemoteSparqlGraph,
    )

    def test_answers_came_over_http(self, make_kg: Callable[[], KnowledgeGraph]) -> None:
        with make_kg() as kg:
            assert isinstance(kg, RemoteSparqlGraph)
            assert kg.neighbors(A) == {A: A_OUT} and kg.queries_sent >= 1


@pytest.mark.parametrize("accept", ["application/sparql-results+json", "application/sparql-results+xml", "text/csv"])
def test_other_backends_answer_in_the_same_bytes(served: str, served_rdflib: str, accept: str) -> None:
    query = f"SELECT ?s ?o WHERE {{ ?s <{AGE}> ?o }} ORDER BY ?s"

    def fetch(endpoint: str) -> bytes:
        return subprocess.run(
            ["curl", "-sS", "--fail", "-G", endpoint, "--data-urlencode", f"query={query}", "-H", f"Accept: {accept}"],
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout

    assert fetch(served_rdflib) == fetch(served)
