"""The conformance suite on Oxigraph: in memory (``oxigraph://`` + ``load``) and on disk
(a store built by ``loaders.load_files``, opened read-only with ``oxigraph:///abs/path``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

import loaders
from kg_adapters import connect
from kg_adapters.backends.oxigraph import OxigraphGraph
from kg_adapters.base import KnowledgeGraph
from kg_adapters.errors import BackendError, InvalidTermError, StoreNotFound, UnknownBackendError
from kg_adapters.records import Edge, Entity, Literal
from kg_adapters.store_layout import DATA_DIR, MANIFEST
from kg_adapters.testing.graph import (
    FB,
    R1,
    RDFS_LABEL,
    TRIPLE_COUNT,
    A,
    B,
    D,
    e,
    write_blank_graph,
    write_freebase_graph,
    write_graph,
)
from kg_adapters.testing.suite import A_OUT, KGConformance, check_blank_node_walks, graph_fixture, loaded_graph


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_graph(tmp_path_factory.mktemp("oxigraph-graph"))


@pytest.fixture(scope="module")
def disk_store(graph_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("oxigraph-store") / "conformance-store"
    report = loaders.load_files([str(graph_file)], str(store), progress=False)
    assert report.statements_read == TRIPLE_COUNT
    assert report.store_triples == TRIPLE_COUNT
    assert (store / MANIFEST).is_file()
    return store.resolve()


@pytest.fixture(scope="module")
def disk_store_without_index(graph_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("oxigraph-store") / "no-index-store"
    loaders.load_files([str(graph_file)], str(store), progress=False, index=False)
    return store.resolve()


def read_only_indexed(store: Path) -> KnowledgeGraph:
    kg = connect(f"oxigraph://{store}")
    assert isinstance(kg, OxigraphGraph) and kg.write is False
    assert kg.traversal_index is not None  # walks on the index
    return kg


def without_index(store: Path) -> KnowledgeGraph:
    kg = connect(f"oxigraph://{store}")
    assert isinstance(kg, OxigraphGraph) and kg.traversal_index is None
    return kg


class TestOxigraphInMemory(KGConformance):
    make_kg = graph_fixture(partial(loaded_graph, "oxigraph://"), "graph_file", kind=OxigraphGraph)


class TestOxigraphOnDisk(KGConformance):
    make_kg = graph_fixture(read_only_indexed, "disk_store")

    def test_read_only(self, kg: KnowledgeGraph) -> None:
        assert isinstance(kg, OxigraphGraph)
        with pytest.raises(BackendError):
            kg.add([e(A, R1, A)])
        assert kg.neighbors(A) == {A: A_OUT}

    def test_two_readers_at_once(self, make_kg: Callable[[], KnowledgeGraph]) -> None:
        with make_kg() as first, make_kg() as second:
            assert first.neighbors(A) == second.neighbors(A) == {A: A_OUT}


class TestOxigraphOnDiskWithoutIndex(KGConformance):
    """A store without a traversal index answers the same, through Oxigraph."""

    make_kg = graph_fixture(without_index, "disk_store_without_index")


# ------------------------------------------------------------------------- opening stores
def test_missing_store_is_store_not_found(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(StoreNotFound):
        connect(f"oxigraph://{missing}")
    assert not missing.exists()  # never created empty


def test_directory_without_manifest_is_store_not_found(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(StoreNotFound):
        connect(f"oxigraph://{empty}")
    assert os.listdir(empty) == []  # never opened (so never initialised) empty


def test_interrupted_load_is_store_not_found(disk_store: Path, tmp_path: Path) -> None:
    """A store whose manifest is missing (what an interrupted load leaves) is never opened."""
    partial = tmp_path / "partial"
    (partial / DATA_DIR).mkdir(parents=True)
    with pytest.raises(StoreNotFound):
        connect(f"oxigraph://{partial}")
    assert os.listdir(partial / DATA_DIR) == []


def test_bad_manifest_is_store_not_found(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    (bad / DATA_DIR).mkdir(parents=True)
    (bad / MANIFEST).write_text("{not json", encoding="utf-8")
    with pytest.raises(StoreNotFound):
        connect(f"oxigraph://{bad}")
    (bad / MANIFEST).write_text('{"format": "something-else"}', encoding="utf-8")
    with pytest.raises(StoreNotFound):
        connect(f"oxigraph://{bad}")


def test_unknown_option_is_type_error() -> None:
    with pytest.raises(TypeError):
        connect("oxigraph://", foo=1)
    with pytest.raises(TypeError):
        connect("oxigraph://?foo=1")


def test_unknown_scheme() -> None:
    with pytest.raises(UnknownBackendError):
        connect("nosuchbackend:///x")


def test_in_memory_store_is_writable_and_empty() -> None:
    with connect("oxigraph://") as kg:
        assert isinstance(kg, OxigraphGraph)
        assert kg.neighbors(A) == {A: []}
        assert kg.add([e(A, R1, B), Edge(head=A, relation=R1, tail=Literal(value="x", lang="EN"))]) == 2
        assert kg.neighbors(A) == {A: [e(A, R1, B), e(A, R1, Literal(value="x", lang="en"))]}


def test_add_rebuilds_search(graph_file: Path) -> None:
    with connect("oxigraph://") as kg:
        assert isinstance(kg, OxigraphGraph)
        kg.load(str(graph_file))
        assert kg.search("zulu") == []
        kg.add([Edge(head=D, relation=RDFS_LABEL, tail=Literal(value="Zulu"))])
        assert kg.search("zulu") == [Entity(id=D, label="Zulu")]


def test_write_option_on_disk(graph_file: Path, tmp_path: Path) -> None:
    store = tmp_path / "writable"
    loaders.load_files([str(graph_file)], str(store), progress=False)
    with connect(f"oxigraph://{store.resolve()}?write=true") as kg:
        assert isinstance(kg, OxigraphGraph)
        kg.add([Edge(head=D, relation=RDFS_LABEL, tail=Literal(value="Zulu"))])
        assert kg.search("zulu") == [Entity(id=D, label="Zulu")]
    with connect(f"oxigraph://{store.resolve()}") as kg:
        assert kg.search("zulu") == [Entity(id=D, label="Zulu")]
        assert kg.labels(D) == {D: "Zulu"}
        assert kg.neighbors(A) == {A: A_OUT}


# ------------------------------------------------------------------------ freebase profile
FREEBASE_M01 = [
    Edge(head="m.01", relation="people.person.place_of_birth", tail="m.02"),
    Edge(head="m.01", relation="type.object.name", tail=Literal(value="Ada Lovelace", lang="en")),
]


def check_freebase_graph(kg: KnowledgeGraph) -> None:
    assert kg.profile.name == "freebase"
    assert kg.neighbors("m.01") == {"m.01": FREEBASE_M01[:1]}  # names are hidden by the relation filter
    named = kg.neighbors("m.01", relations=["people.person.place_of_birth", "type.object.name"])
    assert named == {"m.01": FREEBASE_M01}
    assert kg.neighbors("m.02", literals=False) == {
        "m.02": [
            Edge(head="m.02", relation="http://example.org/sameAs", tail="http://example.org/london"),
            Edge(head="m.02", relation="location.location.containedby", tail="m.03"),
        ]
    }
    assert kg.relations("m.01", direction="in") == {
        "m.01": ["film.film.release_date_s..film.film_regional_release_date.film_release_region"]
    }
    assert kg.labels(["m.01", "m.02", "m.03", "m.99"]) == {"m.01": "Ada Lovelace", "m.02": "London", "m.03": "England"}
    assert kg.search("london") == [Entity(id="m.02", label="London")]
    paths = kg.paths("m.01", ["people.person.place_of_birth", "location.location.containedby"])
    assert [path.entities for path in paths] == [("m.01", "m.02", "m.03")]
    cycle = kg.shortest_paths("m.01", "m.03", direction="out")
    assert [path.entities for path in cycle] == [("m.01", "m.02", "m.03")]
    assert [path.entities for path in kg.shortest_paths("m.01", "m.03")] == [("m.01", "m.03")]
    assert FB not in repr(list(paths))
    # The escape hatch answers full IRIs, whatever the profile.
    assert kg.query(f"SELECT ?o WHERE {{ <{FB}m.01> <{FB}people.person.place_of_birth> ?o }}") == [  # type: ignore[attr-defined]
        {"o": FB + "m.02"}
    ]
    with pytest.raises(InvalidTermError):
        kg.neighbors("m.01 x")
    with pytest.raises(InvalidTermError):
        kg.neighbors("m.01", relations=["people person"])


def test_freebase_profile_in_memory(tmp_path: Path) -> None:
    path = write_freebase_graph(tmp_path)
    with connect("oxigraph://?profile=freebase") as kg:
        assert isinstance(kg, OxigraphGraph)
        kg.load(str(path))
        check_freebase_graph(kg)


def test_freebase_profile_on_disk(tmp_path: Path) -> None:
    path = write_freebase_graph(tmp_path)
    store = tmp_path / "fb-store"
    loaders.load_files([str(path)], str(store), profile="freebase", progress=False)
    with connect(f"oxigraph://{store.resolve()}?profile=freebase") as kg:
        check_freebase_graph(kg)
    with connect(f"oxigraph://{store.resolve()}", profile="freebase") as kg:
        check_freebase_graph(kg)


def test_freebase_full_iri_and_compact_id_in_one_batch(tmp_path: Path) -> None:
    """Answers are keyed by the ids the caller gave: two spellings of one entity, two keys."""
    with connect("oxigraph://?profile=freebase") as kg:
        assert isinstance(kg, OxigraphGraph)
        kg.load(str(write_freebase_graph(tmp_path)))
        answer = kg.labels(["m.01", FB + "m.01"])
        assert answer == {"m.01": "Ada Lovelace", FB + "m.01": "Ada Lovelace"}
        edges = kg.neighbors(["m.01", FB + "m.01"], relations=["people.person.place_of_birth"])
        assert set(edges) == {"m.01", FB + "m.01"}
        assert edges["m.01"] == [Edge(head="m.01", relation="people.person.place_of_birth", tail="m.02")]


def test_walks_through_blank_nodes_in_memory(tmp_path: Path) -> None:
    with connect("oxigraph://") as kg:
        assert isinstance(kg, OxigraphGraph)
        kg.load(str(write_blank_graph(tmp_path)))
        check_blank_node_walks(kg)


def test_walks_through_blank_nodes_on_disk(tmp_path: Path) -> None:
    store = tmp_path / "blank-store"
    loaders.load_files([str(write_blank_graph(tmp_path))], str(store), progress=False)
    with connect(f"oxigraph://{store.resolve()}") as kg:
        check_blank_node_walks(kg)


@pytest.mark.parametrize(
    "edge",
    [
        Edge(head=A, relation=R1, tail=Literal(value="x", lang="a")),  # not a BCP-47 tag
        Edge(head=A, relation=R1, tail=Literal(value="x", lang="en-x")),
        Edge(head="http://example.org/%zz", relation=R1, tail=B),  # bad percent-encoding
        Edge(head=A, relation="http://example.org:port/r", tail=B),
        Edge(head=A, relation=R1, tail=Literal(value="1", datatype="http://example.org/%zz")),
        Edge(head="no scheme", relation=R1, tail=B),
    ],
    ids=["lang-a", "lang-en-x", "head-percent", "relation-port", "datatype-percent", "head-no-scheme"],
)
def test_add_malformed_terms_raise_invalid_term_error(edge: Edge) -> None:
    with connect("oxigraph://") as kg:
        assert isinstance(kg, OxigraphGraph)
        with pytest.raises(InvalidTermError):
            kg.add([edge])
        assert kg.neighbors(A) == {A: []}
