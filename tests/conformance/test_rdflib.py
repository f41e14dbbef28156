"""The conformance suite on the rdflib backend (``rdflib:///abs/file.nt``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_adapters import connect
from kg_adapters.backends.rdflib_backend import RdflibGraph
from kg_adapters.errors import InvalidTermError, StoreNotFound
from kg_adapters.records import Edge, Entity, Literal
from kg_adapters.testing.graph import FB, write_blank_graph, write_freebase_graph, write_graph
from kg_adapters.testing.suite import KGConformance, check_blank_node_walks, graph_fixture


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_graph(tmp_path_factory.mktemp("rdflib-graph"))


class TestRdflib(KGConformance):
    make_kg = graph_fixture(lambda path: connect(f"rdflib://{path.resolve()}"), "graph_file", kind=RdflibGraph)


def test_missing_file_is_store_not_found(tmp_path: Path) -> None:
    with pytest.raises(StoreNotFound):
        connect(f"rdflib://{tmp_path / 'missing.nt'}")


def test_unknown_option_is_type_error(graph_file: Path) -> None:
    with pytest.raises(TypeError):
        connect(f"rdflib://{graph_file}", foo=1)
    with pytest.raises(TypeError):
        connect(f"rdflib://{graph_file}?write=true")


def test_empty_graph() -> None:
    with connect("rdflib://") as kg:
        assert kg.neighbors("http://example.org/a") == {"http://example.org/a": []}
        assert kg.search("alpha") == []


def test_freebase_profile_compact_ids(tmp_path: Path) -> None:
    path = write_freebase_graph(tmp_path)
    with connect(f"rdflib://{path}?profile=freebase") as kg:
        assert kg.profile.name == "freebase"
        assert kg.neighbors("m.01", relations=["people.person.place_of_birth", "type.object.name"]) == {
            "m.01": [
                Edge(head="m.01", relation="people.person.place_of_birth", tail="m.02"),
                Edge(head="m.01", relation="type.object.name", tail=Literal(value="Ada Lovelace", lang="en")),
            ]
        }
        assert kg.neighbors("m.01") == {  # the relation filter hides names unless they are named
            "m.01": [Edge(head="m.01", relation="people.person.place_of_birth", tail="m.02")]
        }
        assert kg.neighbors("m.02", direction="out", literals=False) == {
            "m.02": [
                Edge(head="m.02", relation="http://example.org/sameAs", tail="http://example.org/london"),
                Edge(head="m.02", relation="location.location.containedby", tail="m.03"),
            ]
        }
        assert kg.relations("m.01", direction="in") == {
            "m.01": ["film.film.release_date_s..film.film_regional_release_date.film_release_region"]
        }
        assert kg.labels(["m.01", "m.02", "m.03"]) == {"m.01": "Ada Lovelace", "m.02": "London", "m.03": "England"}
        assert kg.search("london") == [Entity(id="m.02", label="London")]
        paths = kg.paths("m.01", ["people.person.place_of_birth", "location.location.containedby"])
        assert [path.entities for path in paths] == [("m.01", "m.02", "m.03")]
        assert FB not in repr(list(paths))
        assert kg.query(f"SELECT ?o WHERE {{ <{FB}m.01> <{FB}people.person.place_of_birth> ?o }}") == [  # type: ignore[attr-defined]
            {"o": FB + "m.02"}
        ]
        with pytest.raises(InvalidTermError):
            kg.neighbors("m.01 x")


def test_walks_through_blank_nodes(tmp_path: Path) -> None:
    with connect(f"rdflib://{write_blank_graph(tmp_path)}") as kg:
        check_blank_node_walks(kg)
