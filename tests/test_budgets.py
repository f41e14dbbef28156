"""Every budget is validated the same way (kg_adapters.budgets), on every operation and through the
wrappers: bad values are InvalidTermError before any query, never an overflow deep in a driver or a
silently empty answer; and walks are iterative, so long relation paths need no recursion."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph
from kg_adapters.budgets import MAX_COUNT, check_flag
from kg_adapters.errors import InvalidTermError
from kg_adapters.records import Edge
from kg_adapters.wrappers.cache import ResultCache, cached

EX = "http://example.org/"
CHAIN = 1200


@pytest.fixture(params=["plain", "cached"])
def kg(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KnowledgeGraph]:
    graph = connect("oxigraph://", write=True)
    graph.add(Edge(head=f"{EX}n{n}", relation=f"{EX}r", tail=f"{EX}n{n + 1}") for n in range(CHAIN))  # type: ignore[attr-defined]
    graph.add([Edge(head=f"{EX}n0", relation=f"{EX}name", tail=f"{EX}n0")])  # type: ignore[attr-defined]
    if request.param == "cached":
        graph = cached(graph, cache=ResultCache(tmp_path / "cache.sqlite"), namespace="budgets", close_cache=True)
    with graph:
        yield graph


OPERATIONS: dict[str, Callable[[KnowledgeGraph, Any], object]] = {
    "neighbors limit_per_entity": lambda kg, v: kg.neighbors(f"{EX}n0", limit_per_entity=v),
    "paths max_paths": lambda kg, v: kg.paths(f"{EX}n0", [f"{EX}r"], max_paths=v),
    "shortest_paths max_hops": lambda kg, v: kg.shortest_paths(f"{EX}n0", f"{EX}n2", max_hops=v),
    "shortest_paths max_paths": lambda kg, v: kg.shortest_paths(f"{EX}n0", f"{EX}n2", max_paths=v),
    "subgraph hops": lambda kg, v: kg.subgraph(f"{EX}n0", hops=v),
    "subgraph max_edges": lambda kg, v: kg.subgraph(f"{EX}n0", max_edges=v),
    "search limit": lambda kg, v: kg.search("n0", limit=v),
}
REQUIRED = {"shortest_paths max_hops", "subgraph hops", "search limit"}


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
@pytest.mark.parametrize("value", [-1, True, 1.5, "3", 10**30, MAX_COUNT + 1])
def test_bad_budgets_are_typed_errors(kg: KnowledgeGraph, operation: str, value: object) -> None:
    with pytest.raises(InvalidTermError):
        OPERATIONS[operation](kg, value)


@pytest.mark.parametrize("operation", sorted(REQUIRED))
def test_required_budgets_refuse_none_instead_of_answering_nothing(kg: KnowledgeGraph, operation: str) -> None:
    with pytest.raises(InvalidTermError):
        OPERATIONS[operation](kg, None)


def test_the_largest_budget_is_accepted(kg: KnowledgeGraph) -> None:
    assert kg.search("n0", limit=MAX_COUNT) == []
    assert len(kg.subgraph(f"{EX}n0", hops=2, max_edges=MAX_COUNT)) == 3


def test_a_relation_path_of_1200_hops_walks_without_recursion(kg: KnowledgeGraph) -> None:
    found = kg.paths(f"{EX}n0", [f"{EX}r"] * CHAIN)
    assert len(found) == 1
    assert found[0].edges[-1] == Edge(head=f"{EX}n{CHAIN - 1}", relation=f"{EX}r", tail=f"{EX}n{CHAIN}")
    assert len(found[0].edges) == CHAIN
    simple = kg.paths(f"{EX}n0", [f"{EX}r"] * CHAIN, simple=True, directions=["both"] * CHAIN)
    assert [len(path.edges) for path in simple] == [CHAIN]


def test_flags_are_bools_and_nothing_else() -> None:
    assert (check_flag(True, "verify"), check_flag(False, "verify")) == (True, False)
    for bad in (1, 0, "yes", "false", None):
        with pytest.raises(InvalidTermError, match="verify must be true or false"):
            check_flag(bad, "verify")
