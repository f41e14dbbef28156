"""Answers that do not fit the question are errors, never silently changed answers: a relation bound to
a literal or a blank node, a node where a label literal belongs, a literal as a subject, an unbound
end, a row about an id nobody asked for -- through every operation that reads such a binding, the
compat modules included. The same binding sent twice is one edge, in every direction.

Real loopback endpoints (:class:`FaultServer`) rewrite their honest answers; the clients are the
library's own remote backends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kg_adapters import connect
from kg_adapters.backends.sparql_http import RemoteSparqlGraph
from kg_adapters.compat import rog, tog
from kg_adapters.errors import ResultMismatch
from kg_adapters.testing.fault_server import FakeClock, FaultServer, json_rewriter, rebind, repeated_rows

EX = "http://example.org/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
DATA = "".join(
    f'<{EX}n{n}> <{EX}next> <{EX}n{(n + 1) % 4}> .\n<{EX}n{n}> <{LABEL}> "node {n}"@en .\n' for n in range(4)
)
FB = "http://rdf.freebase.com/ns/"
FB_DATA = (
    f'<{FB}m.a> <{FB}film.film.directed_by> <{FB}m.b> .\n<{FB}m.a> <{FB}type.object.name> "A"@en .\n'
    f'<{FB}m.b> <{FB}type.object.name> "B"@en .\n'
)


def graph(server: FaultServer, **options: Any) -> RemoteSparqlGraph:
    clock = FakeClock()
    kg = connect("sparql+" + server.url, retries=0, sleep=clock.sleep, clock=clock, timeout=10, **options)
    assert isinstance(kg, RemoteSparqlGraph)
    return kg


LITERAL = {"type": "literal", "value": "not a relation"}
BLANK = {"type": "bnode", "value": "b0"}
AN_IRI = {"type": "uri", "value": f"{EX}elsewhere"}

CALLS: dict[str, Callable[[RemoteSparqlGraph], object]] = {
    "neighbors out": lambda kg: kg.neighbors(f"{EX}n1"),
    "neighbors in": lambda kg: kg.neighbors(f"{EX}n1", direction="in"),
    "neighbors both": lambda kg: kg.neighbors(f"{EX}n1", direction="both"),
    "relations": lambda kg: kg.relations(f"{EX}n1", direction="both"),
    "subgraph": lambda kg: kg.subgraph(f"{EX}n1", hops=1),
    "shortest_paths": lambda kg: kg.shortest_paths(f"{EX}n1", f"{EX}n3"),
    "search_relations": lambda kg: kg.search_relations("next"),
}


@pytest.mark.parametrize("dialect", ["generic", "virtuoso"])  # virtuoso: edges grouped with GROUP_CONCAT
@pytest.mark.parametrize("term", [LITERAL, BLANK], ids=["literal", "blank node"])
@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_relation_that_is_no_iri_is_a_mismatch(call: str, term: dict[str, str], dialect: str) -> None:
    variable = "p" if call == "search_relations" else "r"  # SELECT DISTINCT ?p WHERE { ?s ?p ?o }
    with (
        FaultServer(data=DATA, rewrite=rebind(variable, term)) as server,
        graph(server, dialect=dialect) as kg,
        pytest.raises(ResultMismatch, match="relation that is not an IRI"),
    ):
        CALLS[call](kg)


@pytest.mark.parametrize("call", ["labels", "describe", "search"])
def test_a_node_where_a_label_literal_belongs_is_a_mismatch(call: str) -> None:
    with (
        FaultServer(data=DATA, rewrite=rebind("l", AN_IRI)) as server,
        graph(server) as kg,
        pytest.raises(ResultMismatch, match="not a literal"),
    ):
        if call == "search":
            kg.search("node 1")
        else:
            getattr(kg, call)([f"{EX}n1", f"{EX}n2"])


@pytest.mark.parametrize(
    ("term", "call", "message"),
    [
        ({"type": "literal", "value": "x"}, "neighbors in", "literal where the query asks for a node"),
        (AN_IRI, "neighbors out", "did not ask about"),
        ({"type": "literal", "value": "x"}, "relations", "did not ask about"),
    ],
)
def test_other_bindings_that_cannot_be(term: dict[str, str], call: str, message: str) -> None:
    name = "o" if call == "neighbors in" else "x"
    with (
        FaultServer(data=DATA, rewrite=rebind(name, term)) as server,
        graph(server) as kg,
        pytest.raises(ResultMismatch, match=message),
    ):
        CALLS[call](kg)


@pytest.mark.parametrize("dialect", ["generic", "virtuoso"])
@pytest.mark.parametrize("direction", ["out", "in", "both"])
def test_the_same_binding_twice_is_one_edge(direction: str, dialect: str) -> None:
    def answers(kg: RemoteSparqlGraph) -> tuple[object, ...]:
        ids = [f"{EX}n1", f"{EX}n2"]
        return (
            kg.neighbors(ids, direction=direction),  # type: ignore[arg-type]
            kg.relations(ids, direction=direction),  # type: ignore[arg-type]
            list(kg.subgraph(ids, hops=2, direction=direction)),  # type: ignore[arg-type]
            list(kg.paths(f"{EX}n1", [f"{EX}next", f"{EX}next"])),
        )

    with FaultServer(data=DATA) as honest, graph(honest, dialect=dialect) as kg:
        expected = answers(kg)
    assert all(expected[0].values())  # type: ignore[attr-defined]
    with FaultServer(data=DATA, rewrite=json_rewriter(repeated_rows)) as server, graph(server, dialect=dialect) as kg:
        assert answers(kg) == expected


def test_compat_modules_raise_rather_than_answer_nothing() -> None:
    """Think-on-Graph's relation_search and RoG's get_truth_paths used to answer ([], []) and []."""
    with FaultServer(data=FB_DATA, rewrite=rebind("r", BLANK)) as server:
        kg = graph(server, profile="freebase")
        with kg, pytest.raises(ResultMismatch):
            tog.relation_search("m.a", kg=kg)
    with FaultServer(data=FB_DATA, rewrite=rebind("r", LITERAL)) as server:
        kg = graph(server, profile="freebase")
        with kg, pytest.raises(ResultMismatch):
            rog.get_truth_paths(["m.a"], ["m.b"], kg)
    with FaultServer(data=FB_DATA) as server, graph(server, profile="freebase") as kg:  # the honest answers
        assert tog.relation_search("m.a", kg=kg) == (["film.film.directed_by"], [])
        assert rog.get_truth_paths(["m.a"], ["m.b"], kg) == [[("m.a", "film.film.directed_by", "m.b")]]
