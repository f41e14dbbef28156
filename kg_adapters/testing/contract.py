"""The conformance suite's checks of the contract every operation shares: raw SPARQL queries where a backend
has them, closing, typed errors for malformed ids, relations, directions and budgets, and frozen records. Mixed
into :class:`kg_adapters.testing.suite.KGConformance`, which holds these to the same graph (``graph.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from kg_adapters.base import KnowledgeGraph, SparqlQueryable
from kg_adapters.errors import BackendError, InvalidTermError, KGError, QueryError
from kg_adapters.records import Edge, Entity, Literal, Path

from .expected import A_OUT, MALFORMED, NON_STRINGS, OPERATIONS
from .graph import AGE, ISO, NEWLINE_LABEL, Q3, R1, R2, R3, RDFS_LABEL, XSD_INTEGER, A, B, C, D, X, e, lit


class ContractChecks:
    """The shared contract's tests (pytest finds them through the class that mixes this in)."""

    answers_sparql = True
    """Whether the backend has the raw ``query`` ability (:class:`SparqlQueryable`). A backend that
    declares False must then not claim it (``isinstance`` is checked), and the query tests skip."""

    def sparql(self, kg: KnowledgeGraph) -> SparqlQueryable:
        """``kg`` as a :class:`SparqlQueryable`, or a skip when the backend declares it has no ``query``."""
        if not self.answers_sparql:
            assert not isinstance(kg, SparqlQueryable), "declared answers_sparql = False but has query()"
            pytest.skip("the backend declares answers_sparql = False")
        assert isinstance(kg, SparqlQueryable)
        return kg

    # -------------------------------------------------------------------------------- query
    def test_query_select(self, kg: KnowledgeGraph) -> None:
        graph = self.sparql(kg)
        assert graph.query(f"SELECT ?o WHERE {{ <{A}> <{AGE}> ?o }}") == [
            {"o": Literal(value="42", datatype=XSD_INTEGER)}
        ]
        assert graph.query(f"SELECT ?s ?p WHERE {{ ?s ?p <{D}> }} ORDER BY ?s ?p") == [
            {"s": B, "p": R2},
            {"s": C, "p": R2},
            {"s": X, "p": R3},
        ]
        assert graph.query(f"SELECT ?l WHERE {{ <{Q3}> <{RDFS_LABEL}> ?l }}") == [{"l": Literal(value=NEWLINE_LABEL)}]
        assert graph.query(f'SELECT ?x WHERE {{ ?x <{RDFS_LABEL}> "Alpha (UK)"@en-GB }}') == [{"x": A}]

    def test_query_unbound_variables_left_out(self, kg: KnowledgeGraph) -> None:
        graph = self.sparql(kg)
        rows = graph.query(f"SELECT ?x ?y WHERE {{ BIND(<{A}> AS ?x) OPTIONAL {{ <{D}> <{R1}> ?y }} }}")
        assert rows == [{"x": A}]

    def test_query_ask(self, kg: KnowledgeGraph) -> None:
        graph = self.sparql(kg)
        assert graph.query(f"ASK {{ <{A}> <{R1}> <{B}> }}") == [{"boolean": True}]
        assert graph.query(f"ASK {{ <{B}> <{R1}> <{A}> }}") == [{"boolean": False}]

    def test_query_construct(self, kg: KnowledgeGraph) -> None:
        graph = self.sparql(kg)
        rows = graph.query(f"CONSTRUCT {{ ?s <{R2}> ?o }} WHERE {{ ?s <{R2}> ?o }}")
        assert sorted(rows, key=repr) == [
            {"subject": A, "predicate": R2, "object": B},
            {"subject": B, "predicate": R2, "object": D},
            {"subject": C, "predicate": R2, "object": D},
        ]

    def test_query_errors(self, kg: KnowledgeGraph) -> None:
        graph = self.sparql(kg)
        with pytest.raises(QueryError):
            graph.query("SELECT WHERE nonsense {")
        with pytest.raises(InvalidTermError):
            graph.query(42)  # type: ignore[arg-type]

    # ----------------------------------------------------------------------- close / context
    def test_context_manager_closes(self, make_kg: Callable[[], KnowledgeGraph]) -> None:
        graph = make_kg()
        with graph as entered:
            assert entered is graph
            assert entered.neighbors(A) == {A: A_OUT}
        with pytest.raises(BackendError):
            graph.neighbors(A)

    def test_close_stops_every_operation(self, make_kg: Callable[[], KnowledgeGraph]) -> None:
        graph = make_kg()
        assert graph.search("alpha")[0] == Entity(id=A, label="Alpha")  # build the index first
        graph.close()
        graph.close()  # closing twice is harmless
        calls: list[Callable[[], object]] = [
            lambda: graph.neighbors(A),
            lambda: graph.relations(A),
            lambda: graph.paths(A, [R1]),
            lambda: graph.shortest_paths(A, D),
            lambda: graph.subgraph(A),
            lambda: graph.labels(A),
            lambda: graph.search("alpha"),
        ]
        if isinstance(graph, SparqlQueryable):
            calls.append(lambda: graph.query("ASK { ?s ?p ?o }"))
        for call in calls:
            with pytest.raises(KGError):
                call()

    def test_context_manager_closes_on_error(self, make_kg: Callable[[], KnowledgeGraph]) -> None:
        graph = make_kg()
        with pytest.raises(RuntimeError), graph:
            raise RuntimeError("boom")
        with pytest.raises(BackendError):
            graph.labels(A)

    # -------------------------------------------------------------------------- typed errors
    @pytest.mark.parametrize("operation", sorted(OPERATIONS))
    @pytest.mark.parametrize("bad", MALFORMED, ids=lambda value: repr(value)[:30])
    def test_malformed_ids_raise_invalid_term_error(self, kg: KnowledgeGraph, operation: str, bad: str) -> None:
        with pytest.raises(InvalidTermError) as info:
            OPERATIONS[operation](kg, bad)
        assert isinstance(info.value, KGError)

    def test_non_string_ids_raise_invalid_term_error(self, kg: KnowledgeGraph) -> None:
        """A bare non-string where an id goes (``kg.neighbors(42)``) is a malformed id too."""
        offenders = []
        for operation, call in sorted(OPERATIONS.items()):
            for bad in NON_STRINGS:
                try:
                    call(kg, bad)
                except InvalidTermError:
                    continue
                except Exception as exc:
                    offenders.append(f"{operation}({type(bad).__name__}): {type(exc).__name__}: {exc}")
                else:
                    offenders.append(f"{operation}({type(bad).__name__}): no error")
        assert offenders == []

    @pytest.mark.parametrize("bad", NON_STRINGS, ids=lambda value: type(value).__name__)
    def test_non_string_in_id_list_raises_invalid_term_error(self, kg: KnowledgeGraph, bad: Any) -> None:
        for call in (
            lambda: kg.neighbors([bad]),
            lambda: kg.relations([A, bad]),
            lambda: kg.labels([bad]),
            lambda: kg.paths([bad], [R1]),
            lambda: kg.subgraph([A, bad]),
            lambda: kg.neighbors(A, relations=[bad]),
        ):
            with pytest.raises(InvalidTermError):
                call()

    # Validation must not depend on the graph's contents or on early exits of an algorithm.
    BAD = "no scheme"

    def test_shortest_paths_validates_ids_up_front(self, kg: KnowledgeGraph) -> None:
        with pytest.raises(InvalidTermError):
            kg.shortest_paths(self.BAD, self.BAD)  # source == target: no expansion needed
        with pytest.raises(InvalidTermError):
            kg.shortest_paths(ISO, self.BAD)  # the source side runs dry first
        with pytest.raises(InvalidTermError):
            kg.shortest_paths(A, self.BAD, max_hops=0)

    def test_paths_validates_every_relation_up_front(self, kg: KnowledgeGraph) -> None:
        with pytest.raises(InvalidTermError):
            kg.paths(D, [R1, self.BAD])  # the first hop finds nothing

    def test_subgraph_validates_seeds_up_front(self, kg: KnowledgeGraph) -> None:
        with pytest.raises(InvalidTermError):
            kg.subgraph(self.BAD, hops=0)

    @pytest.mark.parametrize("direction", ["sideways", "OUT", "", None, "forward"])
    def test_bad_direction(self, kg: KnowledgeGraph, direction: Any) -> None:
        for call in (
            lambda: kg.neighbors(A, direction=direction),
            lambda: kg.relations(A, direction=direction),
            lambda: kg.paths(A, [R1], directions=[direction]),
            lambda: kg.shortest_paths(A, D, direction=direction),
            lambda: kg.subgraph(A, direction=direction),
        ):
            with pytest.raises(InvalidTermError):
                call()

    @pytest.mark.parametrize("value", [-1, -100, True, "2", 1.5])
    def test_bad_budgets(self, kg: KnowledgeGraph, value: Any) -> None:
        for call in (
            lambda: kg.neighbors(A, limit_per_entity=value),
            lambda: kg.paths(A, [R1], max_paths=value),
            lambda: kg.shortest_paths(A, D, max_paths=value),
            lambda: kg.shortest_paths(A, D, max_hops=value),
            lambda: kg.subgraph(A, hops=value),
            lambda: kg.subgraph(A, max_edges=value),
            lambda: kg.search("alpha", limit=value),
        ):
            with pytest.raises(InvalidTermError):
                call()

    # ------------------------------------------------------------------------------ records
    @pytest.mark.parametrize(
        ("cls", "values"),
        [
            (Edge, {"head": A, "relation": R1, "tail": B}),
            (Path, {"start": A, "edges": ()}),
            (Entity, {"id": A, "label": "Alpha", "description": None}),
            (Literal, {"value": "42", "datatype": XSD_INTEGER, "lang": None}),
        ],
    )
    def test_records_frozen_and_keyword_only(self, cls: type, values: dict[str, Any]) -> None:
        record = cls(**values)
        with pytest.raises(TypeError):
            cls(*values.values())
        for name in values:
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(record, name, "changed")
        assert hash(record) == hash(cls(**values))
        assert record == cls(**values)

    def test_returned_records_are_frozen(self, kg: KnowledgeGraph) -> None:
        edge = kg.neighbors(A)[A][0]
        with pytest.raises(dataclasses.FrozenInstanceError):
            edge.head = B  # type: ignore[misc]
        with pytest.raises(dataclasses.FrozenInstanceError):
            edge.tail.value = "43"  # type: ignore[union-attr,misc]
        path = kg.paths(A, [R1])[0]
        with pytest.raises(dataclasses.FrozenInstanceError):
            path.edges = ()  # type: ignore[misc]
        entity = kg.search("alpha")[0]
        with pytest.raises(dataclasses.FrozenInstanceError):
            entity.label = "changed"  # type: ignore[misc]
        assert kg.neighbors(A)[A][0] == e(A, AGE, lit("42", datatype=XSD_INTEGER))
