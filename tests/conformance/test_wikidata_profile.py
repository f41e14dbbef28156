"""The Wikidata conformance suite on Oxigraph (on disk), rdflib, a real Virtuoso, and a Virtuoso
whose tiny row cap makes every statement query page or count-and-pack."""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.wikidata_api import WikidataApiServer

from kg_adapters import connect
from kg_adapters.backends.oxigraph import OxigraphGraph
from kg_adapters.backends.rdflib_backend import RdflibGraph
from kg_adapters.backends.sparql_http import RemoteSparqlGraph
from kg_adapters.backends.wikidata_api import WikidataApiGraph
from kg_adapters.base import KnowledgeGraph
from kg_adapters.records import Edge, Entity
from kg_adapters.testing.graph import A, D, write_freebase_graph, write_graph
from kg_adapters.testing.suite import A_OUT, graph_fixture
from kg_adapters.testing.virtuoso import VirtuosoServer
from kg_adapters.testing.wikidata_graph import ENTITIES, write_wikidata_graph
from kg_adapters.testing.wikidata_suite import Q42_EDUCATED, Q42_STATEMENTS, WikidataConformance
from kg_adapters.wrappers.cache import CachedKG

RDFS = "http://www.w3.org/2000/01/rdf-schema#label"


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_wikidata_graph(tmp_path_factory.mktemp("wikidata-graph"))


class TestWikidataOxigraphOnDisk(WikidataConformance):
    make_kg = graph_fixture(
        lambda disk_store: connect(f"oxigraph://{disk_store}?profile=wikidata"), "disk_store", kind=OxigraphGraph
    )


class TestWikidataRdflib(WikidataConformance):
    make_kg = graph_fixture(
        lambda graph_file: connect(f"rdflib://{graph_file}", profile="wikidata"), "graph_file", kind=RdflibGraph
    )


def make_wikidata_cached(disk_store: Path) -> KnowledgeGraph:
    kg = connect(f"oxigraph://{disk_store}?profile=wikidata", cache="memory")
    assert isinstance(kg, CachedKG)
    kg.neighbors("Q42", qualifiers=True)  # warm: later answers come from the cache
    return kg


class TestWikidataCached(WikidataConformance):
    """Statements survive the cache: qualifiers and ranks are part of what is remembered."""

    make_kg = graph_fixture(make_wikidata_cached, "disk_store")

    def test_statements_from_the_cache(self, kg: KnowledgeGraph) -> None:
        assert isinstance(kg, CachedKG)
        answer = kg.neighbors("Q42", qualifiers=True)
        assert answer == {"Q42": Q42_STATEMENTS}
        assert getattr(answer, "from_cache", False) is True


@pytest.fixture(scope="module")
def wikibase_api() -> Iterator[WikidataApiServer]:
    """A real Wikibase Action API on loopback serving the suite's graph as entity JSON."""
    with WikidataApiServer(ENTITIES) as server:
        yield server


class TestWikidataEntityApi(WikidataConformance):
    """``wikidata+api:`` reads entity JSON: its ``neighbors`` answers Wikidata properties only (names come
    from ``labels``/``describe``) and it has no statement nodes, both declared rather than skipped."""

    name_edges = False
    statement_layer_relations = False

    make_kg = graph_fixture(
        lambda wikibase_api: connect(
            "wikidata+api:", base_url=wikibase_api.url, user_agent="kga-tests/1 (t@example.org)"
        ),
        "wikibase_api",
        kind=WikidataApiGraph,
    )


VIRTUOSO_CAPS = {"result_set_max_rows": 4, "max_sorted_top_rows": 1000}
"""``capped_virtuoso``'s caps: statement answers come in pages or count-and-pack chunks."""


class TestWikidataVirtuoso(WikidataConformance):
    wkt_point = "POINT(0.1218 52.2053)"

    make_kg = graph_fixture(
        lambda virtuoso: connect("sparql+" + virtuoso.sparql_url, profile="wikidata", dialect="virtuoso", retries=0),
        "virtuoso",
        kind=RemoteSparqlGraph,
    )

    def test_statements_are_batched(self, make_kg: Callable[[], KnowledgeGraph]) -> None:
        """Per direction and id chunk: one ordinary query and one statement query, whatever the
        number of statements and qualifiers; a statement relation alone needs only the latter."""
        ids = ["Q42", "Q145", "Q350", "Q691283", "Q5"]
        for kwargs, queries in (
            ({"direction": "out"}, 2),
            ({"direction": "both"}, 4),
            ({"direction": "both", "relations": ["P69", "P131"]}, 2),
            ({"direction": "out", "relations": ["P69", RDFS]}, 2),
        ):
            with make_kg() as kg:
                assert isinstance(kg, RemoteSparqlGraph)
                kg.neighbors(ids, qualifiers=True, **kwargs)
                assert kg.queries_sent == queries, kwargs


def make_wikidata_query_service_shape(virtuoso: VirtuosoServer) -> KnowledgeGraph:
    kg = connect("wikidata:", base_url=virtuoso.sparql_url, user_agent="kga-tests/1.0 (tests@example.org)", retries=0)
    assert isinstance(kg, RemoteSparqlGraph)
    assert kg.dialect.name == "wdqs"
    return kg


class TestWikidataQueryServiceShape(WikidataConformance):
    """``connect("wikidata:")`` (the WDQS factory: wdqs dialect, one query at a time, User-Agent
    policy) pointed at a local endpoint holding the test graph."""

    wkt_point = "POINT(0.1218 52.2053)"

    make_kg = graph_fixture(make_wikidata_query_service_shape, "virtuoso")


def make_wikidata_virtuoso_capped(capped_virtuoso: VirtuosoServer) -> KnowledgeGraph:
    kg = connect(
        "sparql+" + capped_virtuoso.sparql_url,
        profile="wikidata",
        dialect="virtuoso",
        max_sorted_rows=1000,
        retries=0,
    )
    assert isinstance(kg, RemoteSparqlGraph)
    return kg


class TestWikidataVirtuosoCapped(WikidataConformance):
    wkt_point = "POINT(0.1218 52.2053)"

    make_kg = graph_fixture(make_wikidata_virtuoso_capped, "capped_virtuoso")

    def test_statement_answers_were_capped(self, make_kg: Callable[[], KnowledgeGraph]) -> None:
        with make_kg() as kg:
            assert isinstance(kg, RemoteSparqlGraph)
            assert kg.neighbors("Q42", qualifiers=True) == {"Q42": Q42_STATEMENTS}
            assert kg.queries_sent > 2, "a capped answer is fetched again in pages"


def test_profiles_without_statements_answer_ordinary_edges(tmp_path: Path) -> None:
    with connect("oxigraph://") as kg:
        assert isinstance(kg, OxigraphGraph)
        kg.load(str(write_graph(tmp_path)))
        assert kg.neighbors(A, qualifiers=True) == {A: A_OUT}
        assert kg.neighbors([A, D], direction="both", qualifiers=True) == kg.neighbors([A, D], direction="both")
    with connect("oxigraph://?profile=freebase") as kg:
        assert isinstance(kg, OxigraphGraph)
        kg.load(str(write_freebase_graph(tmp_path)))
        assert kg.neighbors("m.01", qualifiers=True) == kg.neighbors("m.01")
        assert all(e.rank is None and not e.qualifiers for e in kg.neighbors("m.01", qualifiers=True)["m.01"])


def test_readme_wikidata_example_runs(disk_store: Path) -> None:
    readme = Path(__file__).resolve().parents[2] / "README.md"
    section = readme.read_text("utf-8").split("### Wikidata and DBpedia", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    code = "from kg_adapters import connect\n" + block.group(1).replace(
        "/abs/path/.kga/wikidata-store", str(disk_store)
    )
    out = io.StringIO()
    scope: dict[str, Any] = {}
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(readme), "exec"), scope)
    assert [line.split(" {")[0] for line in out.getvalue().splitlines()] == ["Q691283 normal", "Q691283 normal"]
    assert scope["truthy"] == {"Q42": [Edge(head="Q42", relation="P69", tail="Q691283")]}
    assert scope["full"] == {"Q42": Q42_EDUCATED}
    assert scope["names"] == {"Q42": "Douglas Adams", "Q350": "Cambridge"}
    assert scope["facts"] == Entity(id="Q42", label="Douglas Adams", description="English writer and humorist")


WDQS_BOOKKEEPING = """
@prefix wd: <http://www.wikidata.org/entity/> .
@prefix wdt: <http://www.wikidata.org/prop/direct/> .
@prefix wikibase: <http://wikiba.se/ontology#> .
@prefix schema: <http://schema.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
wd:Q1 wdt:P31 wd:Q5 ;
    schema:version "1234"^^xsd:integer ;
    schema:dateModified "2024-01-01T00:00:00Z"^^xsd:dateTime ;
    wikibase:sitelinks "7"^^xsd:integer ;
    wikibase:statements "1"^^xsd:integer .
"""


@pytest.mark.parametrize("relation_filter", ["default", None])
def test_wdqs_bookkeeping_is_hidden_unless_asked_for(tmp_path: Path, relation_filter: str | None) -> None:
    dump = tmp_path / "q1.ttl"
    dump.write_text(WDQS_BOOKKEEPING, encoding="utf-8")
    with connect("oxigraph://?profile=wikidata", relation_filter=relation_filter) as kg:
        assert isinstance(kg, OxigraphGraph)
        kg.load(str(dump))
        relations = kg.relations("Q1")["Q1"]
        sitelinks = kg.neighbors("Q1", relations=["http://wikiba.se/ontology#sitelinks"])["Q1"]
    if relation_filter == "default":
        assert relations == ["P31"]
    else:
        assert relations == [
            "P31",
            "http://schema.org/dateModified",
            "http://schema.org/version",
            "http://wikiba.se/ontology#sitelinks",
            "http://wikiba.se/ontology#statements",
        ]
    assert [edge.tail.value for edge in sitelinks if not isinstance(edge.tail, str)] == ["7"]
