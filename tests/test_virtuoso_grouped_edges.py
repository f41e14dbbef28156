"""Virtuoso's grouped edge answers (``Dialect.grouped_edges``: IRI ends concatenated per node and
relation) against a real Virtuoso: they equal the row-by-row answers in every direction and filter,
with blank nodes, typed and tagged literals, and answers over a tiny row cap (halved chunks, one id
asked row by row); a group whose parts do not match its count, as a proxy rewrites it, is asked
again row by row; ``parallel_requests`` splits a chunk into requests sent side by side."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kg_adapters import connect
from kg_adapters.backends.dialects import get_dialect
from kg_adapters.backends.sparql_http import RemoteSparqlGraph
from kg_adapters.base import Direction
from kg_adapters.errors import InvalidTermError, ResultMismatch
from kg_adapters.records import Edge
from kg_adapters.testing.fault_server import FaultPlan, FaultServer, json_rewriter
from kg_adapters.testing.graph import NTRIPLES
from kg_adapters.testing.virtuoso import VirtuosoServer

EX = "http://example.org/"
HUB = EX + "hub"
EXTRA = "\n".join(
    [
        f"_:b1 <{EX}r1> <{EX}a> .",
        f"<{EX}a> <{EX}r5> _:b2 .",
        f"_:b2 <{EX}r1> <{EX}c> .",
        f'<{EX}c> <{EX}note> "une note"@fr-CA .',
        *(f"<{EX}e{i}> <{EX}r1> <{HUB}> ." for i in range(30)),
        *(f"<{EX}e{i}> <{EX}r2> <{HUB}> ." for i in range(5)),
        *(f"<{HUB}> <{EX}r3> <{EX}e{i}> ." for i in range(7)),
    ]
)
NODES = ["a", "b", "c", "d", "s", "x", "hub", "e0", "e3", "no-such-entity"]
ASKS: list[dict[str, Any]] = [
    {"relations": None, "literals": True},
    {"relations": None, "literals": False},
    {"relations": ["r1"], "literals": True},
    {"relations": ["r1", "r3", "note"], "literals": True},
    {"relations": ["r1", "r3", "note"], "literals": False},
]


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("grouped-graph") / "grouped.nt"
    path.write_text(NTRIPLES + EXTRA + "\n", encoding="utf-8")
    return path


def remote(url: str, *, grouped: bool = True, **options: Any) -> RemoteSparqlGraph:
    dialect = replace(get_dialect("virtuoso"), grouped_edges=grouped)
    kg = connect("sparql+" + url, dialect="virtuoso", profile="generic", retries=0, timeout=30, **options)
    assert isinstance(kg, RemoteSparqlGraph)
    kg.dialect = dialect
    return kg


def answers(kg: RemoteSparqlGraph) -> list[dict[str, list[Edge]]]:
    ids = [EX + node for node in NODES]
    found = []
    directions: tuple[Direction, ...] = ("out", "in", "both")
    for direction in directions:
        for ask in ASKS:
            relations = None if ask["relations"] is None else [EX + r for r in ask["relations"]]
            found.append(kg.neighbors(ids, direction=direction, relations=relations, literals=ask["literals"]))
    return found


@pytest.fixture(scope="module")
def row_by_row(virtuoso: VirtuosoServer) -> list[dict[str, list[Edge]]]:
    with remote(virtuoso.sparql_url, grouped=False) as kg:
        return answers(kg)


def test_grouped_answers_equal_the_row_by_row_ones(
    virtuoso: VirtuosoServer, row_by_row: list[dict[str, list[Edge]]]
) -> None:
    with remote(virtuoso.sparql_url) as kg:
        assert answers(kg) == row_by_row
    hub_in = row_by_row[5][EX + "hub"]  # direction "in", every relation
    assert len(hub_in) == 35
    blank_out = row_by_row[0][EX + "a"]
    assert any(isinstance(edge.tail, str) and edge.tail.startswith("_:") for edge in blank_out)
    assert any(isinstance(edge.head, str) and edge.head.startswith("_:") for edge in row_by_row[5][EX + "a"])


def test_parts_sent_side_by_side_give_the_same_answers_and_counts(
    virtuoso: VirtuosoServer, row_by_row: list[dict[str, list[Edge]]], caplog: pytest.LogCaptureFixture
) -> None:
    with remote(virtuoso.sparql_url, parallel_requests=3, values_chunk=40) as kg:
        kg.values_chunk = 40
        assert kg.parallel_requests == 3
        assert kg._parts([str(i) for i in range(30)]) == [
            [str(i) for i in range(0, 10)],
            [str(i) for i in range(10, 20)],
            [str(i) for i in range(20, 30)],
        ]
        with caplog.at_level(logging.DEBUG, logger="kg_adapters"):
            many = [EX + f"e{i}" for i in range(30)] + [EX + "hub"]
            found = kg.neighbors(many, direction="both")
        with remote(virtuoso.sparql_url, grouped=False) as plain:
            assert found == plain.neighbors(many, direction="both")
        transport: Any = kg.transport
        assert kg.queries_sent == transport.requests_sent
        logged = [record.getMessage() for record in caplog.records if record.getMessage().startswith("neighbors")]
        assert logged == [f"neighbors on {kg.endpoint}: {kg.queries_sent} queries"]
        assert answers(kg) == row_by_row


def test_a_group_that_does_not_match_its_count_is_asked_again_row_by_row(
    virtuoso: VirtuosoServer, row_by_row: list[dict[str, list[Edge]]]
) -> None:
    def miscount(document: dict[str, Any]) -> None:
        for binding in document.get("results", {}).get("bindings", []):
            if "n" in binding and "os" in binding:
                binding["n"]["value"] = str(int(binding["n"]["value"]) + 1)

    with FaultServer(upstream=virtuoso.sparql_url, plan=FaultPlan(), rewrite=json_rewriter(miscount)) as proxy:
        with remote(proxy.url) as kg:
            assert answers(kg) == row_by_row
        grouped = [q for q in proxy.queries if q and "GROUP_CONCAT" in q]
        plain = [q for q in proxy.queries if q and "GROUP_CONCAT" not in q]
        assert grouped and plain


def test_a_concatenation_that_is_no_literal_is_a_mismatch(virtuoso: VirtuosoServer) -> None:
    def to_iri(document: dict[str, Any]) -> None:
        for binding in document.get("results", {}).get("bindings", []):
            if "os" in binding:
                binding["os"] = {"type": "uri", "value": EX + "b"}

    with (
        FaultServer(upstream=virtuoso.sparql_url, plan=FaultPlan(), rewrite=json_rewriter(to_iri)) as proxy,
        remote(proxy.url) as kg,
        pytest.raises(ResultMismatch, match="concatenation"),
    ):
        kg.neighbors(EX + "d", direction="in")


@pytest.mark.parametrize("value", [0, -1, 1.5, "none"])
def test_parallel_requests_must_be_a_positive_count(virtuoso: VirtuosoServer, value: object) -> None:
    with pytest.raises(InvalidTermError, match="parallel_requests"):
        connect("sparql+" + virtuoso.sparql_url, dialect="virtuoso", parallel_requests=value)
