"""The Freebase conformance mixin (CVT nodes, relation filter) on every backend: Oxigraph in
memory and on disk, rdflib, a real Virtuoso, and the result cache in front of the on-disk store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kg_adapters import connect
from kg_adapters.backends.oxigraph import OxigraphGraph
from kg_adapters.backends.sparql_http import RemoteSparqlGraph
from kg_adapters.base import KnowledgeGraph
from kg_adapters.testing.freebase_graph import write_freebase_cvt_graph
from kg_adapters.testing.freebase_suite import FreebaseConformance
from kg_adapters.testing.suite import graph_fixture
from kg_adapters.testing.virtuoso import VirtuosoServer
from kg_adapters.wrappers import CachedKG

STORE_OPTIONS = {"profile": "freebase"}
"""How the conftest's disk_store loads this module's graph."""


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_freebase_cvt_graph(tmp_path_factory.mktemp("freebase-cvt"))


def make_oxigraph_in_memory(graph_file: Path, **options: Any) -> KnowledgeGraph:
    kg = connect("oxigraph://?profile=freebase", **options)
    assert isinstance(kg, OxigraphGraph)
    kg.load(str(graph_file))
    return kg


class TestOxigraphInMemory(FreebaseConformance):
    make_fb_kg = graph_fixture(make_oxigraph_in_memory, "graph_file", name="make_fb_kg")


def make_oxigraph_on_disk(disk_store: Path, **options: Any) -> KnowledgeGraph:
    return connect(f"oxigraph://{disk_store}?profile=freebase", **options)


class TestOxigraphOnDisk(FreebaseConformance):
    make_fb_kg = graph_fixture(make_oxigraph_on_disk, "disk_store", name="make_fb_kg")

    def test_url_option(self, disk_store: Path) -> None:
        with connect(f"oxigraph://{disk_store}?profile=freebase&relation_filter=none") as kg:
            assert "type.object.type" in kg.relations("m.pacino")["m.pacino"]
        with pytest.raises(TypeError):
            connect(f"oxigraph://{disk_store}?profile=freebase&relation_filter=none", relation_filter="default")


def make_rdflib(graph_file: Path, **options: Any) -> KnowledgeGraph:
    return connect(f"rdflib://{graph_file.resolve()}?profile=freebase", **options)


class TestRdflib(FreebaseConformance):
    make_fb_kg = graph_fixture(make_rdflib, "graph_file", name="make_fb_kg")


class TestCachedOnDisk(FreebaseConformance):
    """The cache keeps ``Edge.cvt`` and keys answers by the relation filter too."""

    make_fb_kg = graph_fixture(
        lambda disk_store, **options: connect(f"oxigraph://{disk_store}?profile=freebase", cache="memory", **options),
        "disk_store",
        kind=CachedKG,
        name="make_fb_kg",
    )

    def test_cached_cvt_answers_come_back_whole(self, make_fb_kg: Callable[..., KnowledgeGraph]) -> None:
        with make_fb_kg() as kg:
            assert isinstance(kg, CachedKG)
            first = kg.neighbors("m.portman", expand_cvt=True)
            again = kg.neighbors("m.portman", expand_cvt=True)
            assert again == first and getattr(again, "from_cache", False) is True
            assert [edge.tail for edge in again["m.portman"]] == ["m.perf1", "m.perf2", "m.mar1"]
            assert all(edge.cvt for edge in again["m.portman"])


def make_virtuoso(virtuoso: VirtuosoServer, **options: Any) -> KnowledgeGraph:
    url = "sparql+" + virtuoso.sparql_url
    return connect(url, profile="freebase", dialect="virtuoso", timeout=30, retries=0, **options)


class TestVirtuoso(FreebaseConformance):
    make_fb_kg = graph_fixture(make_virtuoso, "virtuoso", name="make_fb_kg")

    def test_cvt_work_is_batched(self, make_fb_kg: Callable[..., KnowledgeGraph]) -> None:
        """However many ids: one edge query per direction, one name query for the far ends, one
        query per direction for all CVTs' edges (and one more name query to describe CVTs)."""
        people = ["m.portman", "m.pacino", "m.millepied", "m.deniro"]
        with make_fb_kg() as kg:
            assert isinstance(kg, RemoteSparqlGraph)
            sent = kg.queries_sent
            answer = kg.neighbors(people, expand_cvt=True)
            assert sum(len(edge.cvt) for edges in answer.values() for edge in edges) == 15
            assert kg.queries_sent - sent == 1 + 1 + 2
            sent = kg.queries_sent
            assert len(kg.labels(["m.perf1", "m.perf2", "m.perf3", "m.mar1", "m.heat"])) == 5
            assert kg.queries_sent - sent == 1 + 2 + 1
            sent = kg.queries_sent
            assert len(kg.paths(people, ["film.actor.film..film.performance.film"], expand_cvt=True)) == 4
            assert kg.queries_sent - sent == 1 + 1 + 2


def test_a_custom_filter_on_the_generic_profile(tmp_path: Path) -> None:
    """The generic profile filters nothing by default; a RelationFilter works there too."""
    from kg_adapters.profiles import RelationFilter
    from kg_adapters.testing.graph import R1, R2, R3, A, B, e, write_graph

    url = f"rdflib://{write_graph(tmp_path).resolve()}"
    with connect(url) as kg:
        assert kg.profile.relation_filter.empty
        assert kg.neighbors(A, literals=False) == {A: [e(A, R1, B), e(A, R2, B), e(A, R3, B)]}
    with connect(url, relation_filter=RelationFilter(drop=frozenset({R2}))) as kg:
        assert kg.neighbors(A, literals=False) == {A: [e(A, R1, B), e(A, R3, B)]}
        assert kg.neighbors(A, relations=[R2]) == {A: [e(A, R2, B)]}
        assert R2 not in kg.relations(A)[A]


def test_cli_expand_cvt(disk_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from kg_adapters.cli import main

    url = f"oxigraph://{disk_store}?profile=freebase"
    assert (
        main(["neighbors", "--kg", url, "--id", "m.pacino", "--relations", "film.actor.film", "--expand-cvt", "--json"])
        == 0
    )
    assert json.loads(capsys.readouterr().out) == {
        "id": "m.pacino",
        "edges": [
            [
                "m.pacino",
                "film.actor.film",
                "m.perf3",
                {
                    "cvt": [
                        ["m.heat", "film.film.starring", "m.perf3"],
                        ["m.perf3", "film.performance.character", "m.hanna"],
                        ["m.perf3", "film.performance.film", "m.heat"],
                    ]
                },
            ]
        ],
    }
    assert main(["neighbors", "--kg", url, "--id", "m.pacino", "--relations", "film.actor.film", "--expand-cvt"]) == 0
    text = capsys.readouterr().out
    performance = "film.performance: Al Pacino; Vincent Hanna; Heat [m.perf3]"
    assert f"  Al Pacino [m.pacino] -film.actor.film-> {performance}" in text
    assert f"      Heat [m.heat] -film.film.starring-> {performance}" in text
    assert main(["relations", "--kg", url, "--id", "m.pacino", "--expand-cvt", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["relations"] == [
        "film.actor.film",
        "film.actor.film..film.performance.character",
        "film.actor.film..film.performance.film",
    ]
    assert (
        main(
            [
                "paths",
                "--kg",
                url,
                "--start",
                "m.pacino",
                "--path",
                "film.actor.film..film.performance.film",
                "--expand-cvt",
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out) == {
        "start": "m.pacino",
        "edges": [["m.pacino", "film.actor.film", "m.perf3"], ["m.perf3", "film.performance.film", "m.heat"]],
    }


def test_a_custom_filter_on_the_wikidata_profile(tmp_path: Path) -> None:
    """Profiles with a statement layer apply the filter to truthy and statement answers alike."""
    from kg_adapters.profiles import RelationFilter
    from kg_adapters.testing.wikidata_graph import write_wikidata_graph

    url = f"rdflib://{write_wikidata_graph(tmp_path).resolve()}?profile=wikidata"
    with connect(url) as kg:
        relations = kg.relations("Q42")["Q42"]
        assert {"P31", "P69", "P27"} <= set(relations)
        full = kg.neighbors("Q42", literals=False, qualifiers=True)["Q42"]
        assert {edge.relation for edge in full} >= {"P31", "P69"}
    hidden = RelationFilter(drop=frozenset({"P31"}), drop_prefixes=("P6",))
    with connect(url, relation_filter=hidden) as kg:
        assert kg.relations("Q42") == {"Q42": [r for r in relations if r != "P31" and not r.startswith("P6")]}
        for statements in (False, True):
            edges = kg.neighbors("Q42", literals=False, qualifiers=statements)["Q42"]
            assert edges and not {edge.relation for edge in edges} & {"P31", "P69"}
        assert [edge.tail for edge in kg.neighbors("Q42", relations=["P31"])["Q42"]] == ["Q5"]
