"""The one JSON codec for records (kg_adapters.records): lossless round trips through real JSON text,
the documented shapes pinned, and strict decoding of anything else."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kg_adapters.errors import InvalidTermError
from kg_adapters.records import (
    Edge,
    EdgeList,
    Entity,
    Literal,
    Path,
    PathResult,
    Qualifiers,
    edge_from_json,
    edge_list_from_json,
    entity_from_json,
    node_from_json,
    path_from_json,
    path_result_from_json,
    term_from_json,
    to_json,
)

text = st.text(max_size=12)
ids = st.text(min_size=1, max_size=10)
literals = st.builds(
    Literal,
    value=text,
    datatype=st.none() | st.sampled_from(["http://www.w3.org/2001/XMLSchema#integer", "http://ex.org/dt"]),
    lang=st.none() | st.sampled_from(["en", "de-ch"]),
)
nodes = ids | literals
qualifiers = st.dictionaries(ids, st.lists(nodes, min_size=1, max_size=3), max_size=3).map(Qualifiers)


def edges(depth: int = 1) -> st.SearchStrategy[Edge]:
    inner = st.just(()) if depth == 0 else st.lists(edges(depth - 1), max_size=2).map(tuple)
    return st.builds(
        Edge,
        head=ids,
        relation=ids,
        tail=nodes,
        qualifiers=qualifiers,
        rank=st.none() | st.sampled_from(["preferred", "normal", "deprecated"]),
        cvt=inner,
    )


def through_text(data: Any) -> Any:
    return json.loads(json.dumps(data, ensure_ascii=False))


@given(nodes)
def test_nodes_round_trip(node: str | Literal) -> None:
    assert node_from_json(through_text(to_json(node))) == node


@given(edges())
def test_edges_round_trip_with_cvt_qualifiers_and_rank(edge: Edge) -> None:
    assert edge_from_json(through_text(to_json(edge))) == edge


@given(ids, st.lists(edges(0), max_size=3))
def test_paths_round_trip(start: str, path_edges: list[Edge]) -> None:
    path = Path(start=start, edges=tuple(path_edges))
    assert path_from_json(through_text(to_json(path))) == path


@given(st.lists(st.builds(Path, start=ids, edges=st.lists(edges(0), max_size=2).map(tuple)), max_size=3), st.booleans())
def test_path_results_keep_their_truncated_flag(paths: list[Path], truncated: bool) -> None:
    decoded = path_result_from_json(through_text(to_json(PathResult(paths, truncated=truncated))))
    assert isinstance(decoded, PathResult)
    assert (list(decoded), decoded.truncated) == (paths, truncated)


@given(st.lists(edges(), max_size=3), st.booleans())
def test_edge_lists_keep_their_truncated_flag(listed: list[Edge], truncated: bool) -> None:
    decoded = edge_list_from_json(through_text(to_json(EdgeList(listed, truncated=truncated))))
    assert isinstance(decoded, EdgeList)
    assert (list(decoded), decoded.truncated) == (listed, truncated)


@given(st.builds(Entity, id=ids, label=st.none() | text, description=st.none() | text))
def test_entities_round_trip(entity: Entity) -> None:
    assert entity_from_json(through_text(to_json(entity))) == entity


def test_the_documented_shapes() -> None:
    name = Literal(value="Tom Hanks", lang="en")
    assert to_json(name) == {"value": "Tom Hanks", "datatype": None, "lang": "en"}
    assert to_json(Edge(head="m.1", relation="r", tail="m.2")) == ["m.1", "r", "m.2"]
    statement = Edge(
        head="Q42",
        relation="P69",
        tail="Q691283",
        rank="preferred",
        qualifiers=Qualifiers({"P582": [Literal(value="1974", datatype="http://ex.org/year")]}),
        cvt=(Edge(head="Q691283", relation="P31", tail="Q3918"),),
    )
    assert to_json(statement) == [
        "Q42",
        "P69",
        "Q691283",
        {
            "rank": "preferred",
            "qualifiers": {"P582": [{"value": "1974", "datatype": "http://ex.org/year", "lang": None}]},
            "cvt": [["Q691283", "P31", "Q3918"]],
        },
    ]
    assert to_json(Path(start="m.1", edges=(Edge(head="m.2", relation="r", tail="m.1"),))) == {
        "start": "m.1",
        "edges": [["m.2", "r", "m.1"]],
    }
    assert to_json(Entity(id="m.1", label="One")) == {"id": "m.1", "label": "One", "description": None}
    assert to_json(PathResult([], truncated=True)) == {"paths": [], "truncated": True}
    assert to_json(EdgeList([Edge(head="a", relation="r", tail="b")])) == {
        "edges": [["a", "r", "b"]],
        "truncated": False,
    }
    assert to_json(True) is True and term_from_json(False) is False


@pytest.mark.parametrize(
    ("decode", "data"),
    [
        (node_from_json, True),  # a boolean is a query cell, never a graph node
        (node_from_json, 3),
        (node_from_json, {"v": "old cache shape"}),
        (node_from_json, {"value": "x", "datatype": 5}),
        (node_from_json, {"value": "x", "colour": "red"}),
        (edge_from_json, ["a", "r"]),
        (edge_from_json, ["a", "r", "b", {}, {}]),
        (edge_from_json, [1, "r", "b"]),
        (edge_from_json, ["a", "r", "b", {"unknown": 1}]),
        (edge_from_json, ["a", "r", "b", {"qualifiers": {"q": "not a list"}}]),
        (edge_from_json, ["a", "r", "b", {"rank": 1}]),
        (edge_from_json, {"head": "a", "relation": "r", "tail": "b"}),
        (path_from_json, {"start": "a"}),
        (path_from_json, {"start": "a", "edges": "ab"}),
        (path_result_from_json, {"paths": []}),
        (path_result_from_json, {"paths": [], "truncated": "no"}),
        (edge_list_from_json, {"edges": [], "truncated": 0}),
        (entity_from_json, {"label": "no id"}),
        (entity_from_json, {"id": "x", "label": 3}),
    ],
)
def test_anything_else_is_refused_with_a_typed_error(decode: Any, data: Any) -> None:
    with pytest.raises(InvalidTermError, match="not an encoded"):
        decode(data)
