"""The backend conformance suite: one mixin class, hand-written expected answers.

A backend's test module subclasses :class:`KGConformance` and supplies two fixtures:

* ``kg``: a :class:`KnowledgeGraph` opened on the shared graph of ``graph.py`` (may be shared
  by every test of the class; the tests only read it);
* ``make_kg``: a callable opening a *fresh* graph on the same data, for the tests that close it.

Every expectation below is written out by hand from the picture in ``graph.py``, so all
backends are held to the same exact answers (not merely to agreeing with each other).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest

from kg_adapters.base import KnowledgeGraph, SparqlQueryable, WritableGraph
from kg_adapters.errors import InvalidTermError
from kg_adapters.records import Edge, EdgeList, Entity, Literal, Path, PathResult

from .contract import ContractChecks
from .expected import (
    A_BOTH as A_BOTH,
)
from .expected import (
    A_IN as A_IN,
)
from .expected import (
    A_OUT as A_OUT,
)
from .expected import (
    B_BOTH as B_BOTH,
)
from .expected import (
    B_IN as B_IN,
)
from .expected import (
    B_OUT as B_OUT,
)
from .expected import (
    C_BOTH as C_BOTH,
)
from .expected import (
    C_IN as C_IN,
)
from .expected import (
    C_OUT as C_OUT,
)
from .expected import (
    D_BOTH as D_BOTH,
)
from .expected import (
    D_IN as D_IN,
)
from .expected import (
    D_OUT as D_OUT,
)
from .expected import (
    ISO_IN as ISO_IN,
)
from .expected import (
    ISO_OUT as ISO_OUT,
)
from .expected import (
    LABELS_EN as LABELS_EN,
)
from .expected import (
    MALFORMED as MALFORMED,
)
from .expected import (
    NEIGHBORS as NEIGHBORS,
)
from .expected import (
    NON_STRINGS as NON_STRINGS,
)
from .expected import (
    OPERATIONS as OPERATIONS,
)
from .expected import (
    RELATIONS as RELATIONS,
)
from .expected import (
    S_BOTH as S_BOTH,
)
from .expected import (
    S_IN as S_IN,
)
from .expected import (
    S_OUT as S_OUT,
)
from .expected import (
    X_IN as X_IN,
)
from .expected import (
    X_OUT as X_OUT,
)
from .graph import (
    AGE,
    ALL_ENTITIES,
    BACKSLASH_LABEL,
    BORN,
    EMOJI_LABEL,
    ISO,
    NEWLINE_LABEL,
    NOTE,
    Q1,
    Q2,
    Q3,
    Q4,
    QUOTE_LABEL,
    R1,
    R2,
    R3,
    R4,
    RDFS_LABEL,
    TOKYO_LABEL,
    UNKNOWN,
    UNKNOWN_RELATION,
    XSD_DATE,
    XSD_INTEGER,
    ZOE_LABEL,
    A,
    B,
    C,
    D,
    F,
    G,
    S,
    X,
    e,
    lit,
)


def graph_fixture(
    make: Callable[..., KnowledgeGraph], *sources: str, kind: type | None = None, name: str = "make_kg"
) -> Any:
    """A class-scoped ``make_kg`` fixture in one line (``name="make_fb_kg"`` for the Freebase suite): it
    reads the fixtures named ``sources`` once per class and makes each graph as ``make(*their values,
    **options)``, checking that it is a ``kind`` when one is given::

        class TestMyBackend(KGConformance):
            make_kg = graph_fixture(lambda path: connect(f"mine://{path}"), "graph_file", kind=MyGraph)
    """

    def fixture(cls: type, request: pytest.FixtureRequest) -> Callable[..., KnowledgeGraph]:
        values = [request.getfixturevalue(source) for source in sources]

        def made(**options: Any) -> KnowledgeGraph:
            graph = make(*values, **options)
            assert kind is None or isinstance(graph, kind), f"expected a {kind.__name__}, got {graph!r}"
            return graph

        return made

    # a classmethod, as pytest wants class-scoped fixtures defined in a class
    return pytest.fixture(scope="class", name=name)(classmethod(fixture))  # type: ignore[arg-type]


def loaded_graph(url: str, path: os.PathLike[str] | str, **options: Any) -> KnowledgeGraph:
    """``connect(url, **options)`` (a writable graph, e.g. ``oxigraph://`` in memory) with the RDF file
    at ``path`` loaded into it."""
    from kg_adapters import connect

    graph = connect(url, **options)
    assert isinstance(graph, WritableGraph), f"{url} does not take writes"
    graph.load(str(path))
    return graph


def walks(result: Iterable[Path]) -> Counter[tuple[str, tuple[Edge, ...]]]:
    """A path answer as a multiset of (start, edges): exact, order-free, duplicates counted."""
    return Counter((path.start, path.edges) for path in result)


def expected(*paths: tuple[str, list[Edge]]) -> Counter[tuple[str, tuple[Edge, ...]]]:
    return Counter((start, tuple(edges)) for start, edges in paths)


class OneGraphPerClass:
    """The ``kg`` fixture of a conformance suite: one graph per test class, from its ``make_kg``."""

    @pytest.fixture(scope="class")
    @classmethod
    def kg(cls, make_kg: Callable[[], KnowledgeGraph]) -> Iterator[KnowledgeGraph]:
        """One graph per backend class, from the class's ``make_kg`` fixture."""
        graph = make_kg()
        yield graph
        graph.close()


class KGConformance(ContractChecks, OneGraphPerClass):
    """Mix into a test class that provides the ``make_kg`` fixture (see :func:`graph_fixture`).

    Capabilities a backend may lack are declared as class attributes, never skipped silently."""

    accent_insensitive_search = True
    """Remote endpoints match names at the server, case- but not accent-insensitively."""

    # ---------------------------------------------------------------------------- protocol
    def test_is_a_knowledge_graph(self, kg: KnowledgeGraph) -> None:
        assert isinstance(kg, KnowledgeGraph)
        assert isinstance(kg, SparqlQueryable) == self.answers_sparql
        assert kg.profile.name == "generic"

    # --------------------------------------------------------------------------- neighbors
    @pytest.mark.parametrize(("node", "direction"), sorted(NEIGHBORS))
    def test_neighbors_exact(self, kg: KnowledgeGraph, node: str, direction: str) -> None:
        answer = kg.neighbors(node, direction=direction)  # type: ignore[arg-type]
        assert answer == {node: NEIGHBORS[(node, direction)]}
        assert all(type(edge) is Edge for edge in answer[node])

    def test_neighbors_default_direction_is_out(self, kg: KnowledgeGraph) -> None:
        assert kg.neighbors(A) == {A: A_OUT}

    def test_neighbors_keeps_multi_edges(self, kg: KnowledgeGraph) -> None:
        between = [edge for edge in kg.neighbors(A)[A] if edge.tail == B]
        assert between == [e(A, R1, B), e(A, R2, B), e(A, R3, B)]

    def test_neighbors_both_keeps_true_direction(self, kg: KnowledgeGraph) -> None:
        # b r3 a is reached from a as an incoming edge, but keeps its own direction.
        both = kg.neighbors(A, direction="both")[A]
        assert e(B, R3, A) in both
        assert e(A, R3, B) in both
        assert e(A, R3, A) not in both and e(B, R3, B) not in both

    def test_neighbors_self_loop_once_in_both(self, kg: KnowledgeGraph) -> None:
        edges = kg.neighbors(S, direction="both")[S]
        assert edges.count(e(S, R4, S)) == 1
        assert edges == S_BOTH

    def test_neighbors_batch(self, kg: KnowledgeGraph) -> None:
        answer = kg.neighbors([A, D, UNKNOWN, S], direction="in")
        assert answer == {A: A_IN, D: D_IN, UNKNOWN: [], S: S_IN}
        assert list(answer) == [A, D, UNKNOWN, S]

    def test_neighbors_batch_duplicates_once(self, kg: KnowledgeGraph) -> None:
        assert kg.neighbors([C, C, A, C], direction="out") == {C: C_OUT, A: A_OUT}

    def test_neighbors_large_batch(self, kg: KnowledgeGraph) -> None:
        # More ids than any backend puts in one VALUES block: answered across several queries.
        many = [f"{UNKNOWN}/{i}" for i in range(2100)]
        ids = [*many[:700], A, *many[700:1900], S, *many[1900:], D]
        answer = kg.neighbors(ids, direction="both")
        assert list(answer) == ids
        assert answer[A] == A_BOTH and answer[S] == S_BOTH and answer[D] == D_BOTH
        assert sum(len(edges) for edges in answer.values()) == len(A_BOTH) + len(S_BOTH) + len(D_BOTH)
        assert kg.relations(ids, direction="in")[D] == [R2, R3]
        assert kg.labels(ids) == {A: "Alpha", S: ZOE_LABEL}

    def test_neighbors_empty_batch(self, kg: KnowledgeGraph) -> None:
        assert kg.neighbors([]) == {}
        assert kg.neighbors([], direction="both", relations=[R1]) == {}

    def test_neighbors_relation_filter(self, kg: KnowledgeGraph) -> None:
        assert kg.neighbors(A, relations=[R1]) == {A: [e(A, R1, B)]}
        assert kg.neighbors(A, relations=[R1, R1]) == {A: [e(A, R1, B)]}
        assert kg.neighbors(A, direction="both", relations=[R1, R2]) == {A: [e(A, R1, B), e(A, R2, B), e(C, R1, A)]}
        assert kg.neighbors(A, direction="in", relations=[R3]) == {A: [e(B, R3, A)]}
        assert kg.neighbors(A, relations=[RDFS_LABEL]) == {A: A_OUT[6:]}
        assert kg.neighbors([A, B, D], relations=[R2]) == {A: [e(A, R2, B)], B: [e(B, R2, D)], D: []}

    def test_neighbors_empty_relation_list(self, kg: KnowledgeGraph) -> None:
        assert kg.neighbors([A, B], direction="both", relations=[]) == {A: [], B: []}

    def test_neighbors_unknown_relation(self, kg: KnowledgeGraph) -> None:
        assert kg.neighbors(A, direction="both", relations=[UNKNOWN_RELATION]) == {A: []}
        assert kg.neighbors(A, relations=[UNKNOWN_RELATION, R2]) == {A: [e(A, R2, B)]}

    def test_neighbors_relations_must_be_a_list(self, kg: KnowledgeGraph) -> None:
        with pytest.raises(InvalidTermError):
            kg.neighbors(A, relations=R1)

    def test_neighbors_limit_per_entity(self, kg: KnowledgeGraph) -> None:
        assert kg.neighbors(A, limit_per_entity=2) == {A: A_OUT[:2]}
        assert kg.neighbors([A, D, B], direction="in", limit_per_entity=1) == {
            A: A_IN[:1],
            D: D_IN[:1],
            B: B_IN[:1],
        }
        assert kg.neighbors(A, limit_per_entity=0) == {A: []}
        assert kg.neighbors(A, limit_per_entity=100) == {A: A_OUT}

    def test_neighbors_without_literals(self, kg: KnowledgeGraph) -> None:
        assert kg.neighbors(A, literals=False) == {A: [e(A, R1, B), e(A, R2, B), e(A, R3, B)]}
        assert kg.neighbors(A, direction="both", literals=False) == {A: [e(A, R1, B), e(A, R2, B), e(A, R3, B), *A_IN]}
        assert kg.neighbors([S, ISO], direction="both", literals=False) == {S: [e(S, R4, S)], ISO: []}
        assert kg.neighbors(A, relations=[NOTE], literals=False) == {A: []}

    def test_neighbors_literal_values(self, kg: KnowledgeGraph) -> None:
        tails = {edge.relation: edge.tail for edge in kg.neighbors(A, relations=[AGE, BORN, NOTE])[A]}
        assert tails == {
            AGE: Literal(value="42", datatype=XSD_INTEGER),
            BORN: Literal(value="2000-01-02", datatype=XSD_DATE),
            NOTE: Literal(value="shared note"),
        }
        assert all(type(tail) is Literal for tail in tails.values())
        assert str(tails[AGE]) == "42"

    # --------------------------------------------------------------------------- relations
    @pytest.mark.parametrize(("node", "direction"), sorted(RELATIONS))
    def test_relations_exact(self, kg: KnowledgeGraph, node: str, direction: str) -> None:
        assert kg.relations(node, direction=direction) == {node: RELATIONS[(node, direction)]}  # type: ignore[arg-type]

    def test_relations_default_direction_is_out(self, kg: KnowledgeGraph) -> None:
        assert kg.relations(B) == {B: RELATIONS[(B, "out")]}

    def test_relations_batch(self, kg: KnowledgeGraph) -> None:
        answer = kg.relations([A, D, UNKNOWN, ISO, A], direction="in")
        assert answer == {A: [R1, R3], D: [R2, R3], UNKNOWN: [], ISO: []}
        assert list(answer) == [A, D, UNKNOWN, ISO]
        assert kg.relations([]) == {}

    # ------------------------------------------------------------------------------- paths
    def test_paths_one_hop(self, kg: KnowledgeGraph) -> None:
        result = kg.paths(A, [R1])
        assert isinstance(result, PathResult)
        assert result.truncated is False
        assert walks(result) == expected((A, [e(A, R1, B)]))
        (path,) = result
        assert path.entities == (A, B)
        assert path.relations == (R1,)
        assert path.end == B

    def test_paths_two_hops(self, kg: KnowledgeGraph) -> None:
        result = kg.paths(A, [R1, R1])
        assert walks(result) == expected((A, [e(A, R1, B), e(B, R1, C)]))
        assert result[0].entities == (A, B, C)

    def test_paths_cycle_not_simple(self, kg: KnowledgeGraph) -> None:
        result = kg.paths(A, [R1, R1, R1])
        assert walks(result) == expected((A, [e(A, R1, B), e(B, R1, C), e(C, R1, A)]))
        assert result[0].entities == (A, B, C, A)
        assert result[0].end == A

    def test_paths_cycle_simple(self, kg: KnowledgeGraph) -> None:
        result = kg.paths(A, [R1, R1, R1], simple=True)
        assert list(result) == []
        assert result.truncated is False
        assert walks(kg.paths(A, [R1, R1], simple=True)) == expected((A, [e(A, R1, B), e(B, R1, C)]))

    def test_paths_several_starts(self, kg: KnowledgeGraph) -> None:
        result = kg.paths([A, B, UNKNOWN, A], [R1])
        assert walks(result) == expected((A, [e(A, R1, B)]), (B, [e(B, R1, C)]))

    def test_paths_direction_in(self, kg: KnowledgeGraph) -> None:
        result = kg.paths(A, [R1], directions=["in"])
        assert walks(result) == expected((A, [e(C, R1, A)]))
        assert result[0].entities == (A, C)

    def test_paths_direction_both(self, kg: KnowledgeGraph) -> None:
        result = kg.paths(A, [R1], directions=["both"])
        assert walks(result) == expected((A, [e(A, R1, B)]), (A, [e(C, R1, A)]))
        assert sorted(path.end for path in result) == [B, C]  # type: ignore[type-var]

    def test_paths_multi_edges_are_separate_paths(self, kg: KnowledgeGraph) -> None:
        # a r3 b and b r3 a join the same pair: walked with direction both they are two paths.
        result = kg.paths(A, [R3], directions=["both"])
        assert walks(result) == expected((A, [e(A, R3, B)]), (A, [e(B, R3, A)]))
        assert [path.entities for path in result] == [(A, B), (A, B)]

    def test_paths_multi_edges_two_hops(self, kg: KnowledgeGraph) -> None:
        there = [e(A, R3, B), e(B, R3, A)]
        result = kg.paths(A, [R3, R3], directions=["both", "both"])
        assert walks(result) == expected(*((A, [first, second]) for first in there for second in there))
        assert {path.entities for path in result} == {(A, B, A)}
        assert list(kg.paths(A, [R3, R3], directions=["both", "both"], simple=True)) == []

    def test_paths_three_hops_mixed_directions(self, kg: KnowledgeGraph) -> None:
        result = kg.paths(D, [R2, R1, R3], directions=["in", "in", "out"])
        assert walks(result) == expected(
            (D, [e(B, R2, D), e(A, R1, B), e(A, R3, B)]),
            (D, [e(C, R2, D), e(B, R1, C), e(B, R3, A)]),
        )
        assert sorted(path.entities for path in result) == [(D, B, A, B), (D, C, B, A)]
        simple = kg.paths(D, [R2, R1, R3], directions=["in", "in", "out"], simple=True)
        assert walks(simple) == expected((D, [e(C, R2, D), e(B, R1, C), e(B, R3, A)]))

    def test_paths_revisiting_start_not_simple(self, kg: KnowledgeGraph) -> None:
        result = kg.paths(B, [R3, R1, R1])
        assert walks(result) == expected((B, [e(B, R3, A), e(A, R1, B), e(B, R1, C)]))
        assert result[0].entities == (B, A, B, C)
        assert list(kg.paths(B, [R3, R1, R1], simple=True)) == []

    def test_paths_literal_last_hop(self, kg: KnowledgeGraph) -> None:
        result = kg.paths(A, [NOTE])
        assert walks(result) == expected((A, [e(A, NOTE, lit("shared note"))]))
        assert result[0].entities == (A, Literal(value="shared note"))
        assert walks(kg.paths(S, [R4, NOTE])) == expected((S, [e(S, R4, S), e(S, NOTE, lit("shared note"))]))

    def test_paths_literal_never_continued(self, kg: KnowledgeGraph) -> None:
        assert list(kg.paths(A, [NOTE, NOTE], directions=["out", "in"])) == []
        assert list(kg.paths(A, [NOTE, R1])) == []

    def test_paths_self_loop(self, kg: KnowledgeGraph) -> None:
        assert walks(kg.paths(S, [R4])) == expected((S, [e(S, R4, S)]))
        assert walks(kg.paths(S, [R4], directions=["both"])) == expected((S, [e(S, R4, S)]))
        assert walks(kg.paths(S, [R4, R4])) == expected((S, [e(S, R4, S), e(S, R4, S)]))
        assert list(kg.paths(S, [R4], simple=True)) == []

    def test_paths_no_match(self, kg: KnowledgeGraph) -> None:
        for result in (
            kg.paths(UNKNOWN, [R1]),
            kg.paths(A, [UNKNOWN_RELATION]),
            kg.paths(A, [R1, R4]),
            kg.paths(D, [R1, R1]),
            kg.paths([], [R1]),
        ):
            assert list(result) == []
            assert result.truncated is False

    def test_paths_max_paths_truncates(self, kg: KnowledgeGraph) -> None:
        full = kg.paths(A, [R3, R3], directions=["both", "both"])
        assert len(full) == 4 and full.truncated is False
        cut = kg.paths(A, [R3, R3], directions=["both", "both"], max_paths=3)
        assert len(cut) == 3
        assert cut.truncated is True
        assert set(walks(cut)) <= set(walks(full))
        assert len(set(walks(cut))) == 3
        exact = kg.paths(A, [R3, R3], directions=["both", "both"], max_paths=4)
        assert walks(exact) == walks(full) and exact.truncated is False
        none = kg.paths(A, [R3, R3], directions=["both", "both"], max_paths=0)
        assert list(none) == [] and none.truncated is True
        nothing_to_cut = kg.paths(D, [R1], max_paths=0)
        assert list(nothing_to_cut) == [] and nothing_to_cut.truncated is False

    def test_paths_bad_arguments(self, kg: KnowledgeGraph) -> None:
        with pytest.raises(InvalidTermError):
            kg.paths(A, [])
        with pytest.raises(InvalidTermError):
            kg.paths(A, R1)
        with pytest.raises(InvalidTermError):
            kg.paths(A, [R1, R1], directions=["out"])
        with pytest.raises(InvalidTermError):
            kg.paths(A, [R1], directions=["sideways"])  # type: ignore[list-item]
        with pytest.raises(InvalidTermError):
            kg.paths(A, [R1], max_paths=-1)
        with pytest.raises(InvalidTermError):
            kg.paths(A, [R1], max_paths=True)
        with pytest.raises(InvalidTermError):
            kg.paths(A, [R1], max_paths="3")  # type: ignore[arg-type]

    # ---------------------------------------------------------------------- shortest paths
    A_TO_D_BOTH = expected(
        (A, [e(A, R1, B), e(B, R2, D)]),
        (A, [e(A, R2, B), e(B, R2, D)]),
        (A, [e(A, R3, B), e(B, R2, D)]),
        (A, [e(B, R3, A), e(B, R2, D)]),
        (A, [e(C, R1, A), e(C, R2, D)]),
    )

    def test_shortest_paths_both_directions(self, kg: KnowledgeGraph) -> None:
        result = kg.shortest_paths(A, D, direction="both")
        assert isinstance(result, PathResult)
        assert result.truncated is False
        assert walks(result) == self.A_TO_D_BOTH
        assert sorted(path.entities for path in result) == [(A, B, D)] * 4 + [(A, C, D)]

    def test_shortest_paths_default_direction_is_both(self, kg: KnowledgeGraph) -> None:
        assert walks(kg.shortest_paths(A, D)) == self.A_TO_D_BOTH

    def test_shortest_paths_out(self, kg: KnowledgeGraph) -> None:
        result = kg.shortest_paths(A, D, direction="out")
        assert walks(result) == expected(
            (A, [e(A, R1, B), e(B, R2, D)]),
            (A, [e(A, R2, B), e(B, R2, D)]),
            (A, [e(A, R3, B), e(B, R2, D)]),
        )

    def test_shortest_paths_out_vs_both(self, kg: KnowledgeGraph) -> None:
        assert walks(kg.shortest_paths(A, C, direction="out")) == expected(
            (A, [e(A, R1, B), e(B, R1, C)]),
            (A, [e(A, R2, B), e(B, R1, C)]),
            (A, [e(A, R3, B), e(B, R1, C)]),
        )
        both = kg.shortest_paths(A, C, direction="both")
        assert walks(both) == expected((A, [e(C, R1, A)]))
        assert both[0].entities == (A, C)

    def test_shortest_paths_in(self, kg: KnowledgeGraph) -> None:
        assert walks(kg.shortest_paths(D, A, direction="in")) == expected(
            (D, [e(B, R2, D), e(A, R1, B)]),
            (D, [e(B, R2, D), e(A, R2, B)]),
            (D, [e(B, R2, D), e(A, R3, B)]),
        )
        assert list(kg.shortest_paths(A, D, direction="in")) == []

    def test_shortest_paths_three_hops(self, kg: KnowledgeGraph) -> None:
        to_x = Counter({(start, (*edges, e(X, R3, D))): n for (start, edges), n in self.A_TO_D_BOTH.items()})
        assert walks(kg.shortest_paths(A, X)) == to_x
        assert walks(kg.shortest_paths(A, X, max_hops=3)) == to_x
        assert {path.entities[-2:] for path in kg.shortest_paths(A, X)} == {(D, X)}

    def test_shortest_paths_unreachable_within_max_hops(self, kg: KnowledgeGraph) -> None:
        result = kg.shortest_paths(A, X, max_hops=2)
        assert list(result) == [] and result.truncated is False
        assert list(kg.shortest_paths(A, D, max_hops=1)) == []
        assert list(kg.shortest_paths(A, B, max_hops=0)) == []
        assert list(kg.shortest_paths(A, X, direction="out")) == []

    def test_shortest_paths_source_is_target(self, kg: KnowledgeGraph) -> None:
        result = kg.shortest_paths(A, A)
        assert list(result) == [Path(start=A, edges=())]
        assert result[0].entities == (A,)
        assert result[0].end == A
        assert list(kg.shortest_paths(S, S, max_hops=0)) == [Path(start=S, edges=())]

    def test_shortest_paths_several_sources_and_targets(self, kg: KnowledgeGraph) -> None:
        result = kg.shortest_paths([A, B], [C, D], direction="out")
        assert walks(result) == expected(
            (A, [e(A, R1, B), e(B, R1, C)]),
            (A, [e(A, R2, B), e(B, R1, C)]),
            (A, [e(A, R3, B), e(B, R1, C)]),
            (A, [e(A, R1, B), e(B, R2, D)]),
            (A, [e(A, R2, B), e(B, R2, D)]),
            (A, [e(A, R3, B), e(B, R2, D)]),
            (B, [e(B, R1, C)]),
            (B, [e(B, R2, D)]),
        )
        assert {(path.start, path.end) for path in result} == {(A, C), (A, D), (B, C), (B, D)}

    def test_shortest_paths_literal_edges_never_walked(self, kg: KnowledgeGraph) -> None:
        # a and s share only the literal "shared note"; s's self-loop is no way out either.
        assert list(kg.shortest_paths(A, S)) == []
        assert list(kg.shortest_paths(S, A, max_hops=6)) == []
        assert list(kg.shortest_paths(A, ISO)) == []
        for path in kg.shortest_paths([A, B, C], [A, B, C, D, X]):
            assert all(isinstance(node, str) for node in path.entities)

    def test_shortest_paths_unknown_entities(self, kg: KnowledgeGraph) -> None:
        assert list(kg.shortest_paths(UNKNOWN, A)) == []
        assert list(kg.shortest_paths(A, UNKNOWN)) == []
        assert list(kg.shortest_paths([], [A])) == []

    def test_shortest_paths_max_paths(self, kg: KnowledgeGraph) -> None:
        cut = kg.shortest_paths(A, D, max_paths=2)
        assert len(cut) == 2 and cut.truncated is True
        assert set(walks(cut)) <= set(self.A_TO_D_BOTH)
        assert len(set(walks(cut))) == 2
        exact = kg.shortest_paths(A, D, max_paths=5)
        assert walks(exact) == self.A_TO_D_BOTH and exact.truncated is False

    def test_shortest_paths_bad_arguments(self, kg: KnowledgeGraph) -> None:
        with pytest.raises(InvalidTermError):
            kg.shortest_paths(A, D, direction="up")  # type: ignore[arg-type]
        with pytest.raises(InvalidTermError):
            kg.shortest_paths(A, D, max_hops=-1)
        with pytest.raises(InvalidTermError):
            kg.shortest_paths(A, D, max_paths=-1)

    # ----------------------------------------------------------------------------- subgraph
    def test_subgraph_one_hop(self, kg: KnowledgeGraph) -> None:
        result = kg.subgraph(A, hops=1)
        assert isinstance(result, EdgeList)
        assert result.truncated is False
        assert sorted(result, key=repr) == sorted(A_BOTH, key=repr)

    def test_subgraph_two_hops(self, kg: KnowledgeGraph) -> None:
        result = kg.subgraph(A, hops=2)
        second = [e(B, R1, C), e(B, R2, D), *B_OUT[3:], e(C, R2, D), *C_OUT[2:]]
        assert len(result) == 20
        assert sorted(result, key=repr) == sorted(A_BOTH + second, key=repr)
        assert set(result[:12]) == set(A_BOTH)  # nearest first
        assert result.truncated is False
        assert sorted(kg.subgraph(A), key=repr) == sorted(result, key=repr)  # hops=2 is the default

    def test_subgraph_direction(self, kg: KnowledgeGraph) -> None:
        assert sorted(kg.subgraph(A, hops=2, direction="out"), key=repr) == sorted(A_OUT + B_OUT, key=repr)
        assert sorted(kg.subgraph(A, hops=1, direction="in"), key=repr) == sorted(A_IN, key=repr)
        assert sorted(kg.subgraph(A, hops=2, direction="in"), key=repr) == sorted(A_IN + B_IN + C_IN, key=repr)

    def test_subgraph_relations(self, kg: KnowledgeGraph) -> None:
        r1_cycle = [e(A, R1, B), e(B, R1, C), e(C, R1, A)]
        assert sorted(kg.subgraph(A, hops=2, relations=[R1]), key=repr) == r1_cycle
        assert sorted(kg.subgraph(A, hops=3, relations=[R1]), key=repr) == r1_cycle
        assert sorted(kg.subgraph(A, hops=1, relations=[R1]), key=repr) == [e(A, R1, B), e(C, R1, A)]
        assert list(kg.subgraph(A, hops=2, relations=[])) == []
        assert list(kg.subgraph(A, hops=2, relations=[UNKNOWN_RELATION])) == []

    def test_subgraph_several_seeds(self, kg: KnowledgeGraph) -> None:
        result = kg.subgraph([D, S], hops=1)
        assert sorted(result, key=repr) == sorted(D_IN + S_BOTH, key=repr)
        assert result.count(e(S, R4, S)) == 1

    def test_subgraph_isolated_and_unknown(self, kg: KnowledgeGraph) -> None:
        assert list(kg.subgraph(ISO, hops=3)) == ISO_OUT
        assert list(kg.subgraph(UNKNOWN)) == []
        assert list(kg.subgraph([])) == []
        zero = kg.subgraph(A, hops=0)
        assert list(zero) == [] and zero.truncated is False

    def test_subgraph_max_edges(self, kg: KnowledgeGraph) -> None:
        cut = kg.subgraph(A, hops=2, max_edges=5)
        assert len(cut) == 5
        assert cut.truncated is True
        assert set(cut) <= set(A_BOTH)
        assert len(set(cut)) == 5
        exact = kg.subgraph(A, hops=2, max_edges=20)
        assert len(exact) == 20 and exact.truncated is False
        one_short = kg.subgraph(A, hops=2, max_edges=19)
        assert len(one_short) == 19 and one_short.truncated is True
        none = kg.subgraph(A, max_edges=0)
        assert list(none) == [] and none.truncated is True

    def test_subgraph_bad_arguments(self, kg: KnowledgeGraph) -> None:
        with pytest.raises(InvalidTermError):
            kg.subgraph(A, direction="around")  # type: ignore[arg-type]
        with pytest.raises(InvalidTermError):
            kg.subgraph(A, hops=-1)
        with pytest.raises(InvalidTermError):
            kg.subgraph(A, max_edges=-1)
        with pytest.raises(InvalidTermError):
            kg.subgraph(A, relations=R1)

    # ------------------------------------------------------------------------------- labels
    def test_labels_english(self, kg: KnowledgeGraph) -> None:
        answer = kg.labels(list(ALL_ENTITIES))
        assert answer == LABELS_EN
        assert kg.labels(list(ALL_ENTITIES), lang="en") == LABELS_EN
        assert D not in answer

    def test_labels_regional_preference(self, kg: KnowledgeGraph) -> None:
        assert kg.labels([A, B, C, X], lang="en-GB") == {
            A: "Alpha (UK)",  # exact en-gb beats en
            B: "Bravo (UK)",
            C: "Charlie plain",
            X: "Xavier",
        }
        assert kg.labels([A, B], lang="EN") == {A: "Alpha", B: "Bravo (UK)"}

    def test_labels_other_language(self, kg: KnowledgeGraph) -> None:
        assert kg.labels([A, B, C, X, S, Q1, D], lang="fr") == {
            A: "Alphe",
            B: "Bravo",
            C: "Charlie",
            X: "Xavier",
            S: ZOE_LABEL,
            Q1: QUOTE_LABEL,
        }
        # No German name: untagged beats any other language.
        assert kg.labels([A, B, C, ISO], lang="de") == {
            A: "Alpha plain",
            B: "Bravo plain",
            C: "Charlie plain",
            ISO: TOKYO_LABEL,
        }

    def test_labels_missing_omitted(self, kg: KnowledgeGraph) -> None:
        assert kg.labels(D) == {}
        assert kg.labels([D, UNKNOWN]) == {}
        assert kg.labels([]) == {}
        assert kg.labels(A) == {A: "Alpha"}

    def test_labels_unicode_and_escapes_round_trip(self, kg: KnowledgeGraph) -> None:
        answer = kg.labels([Q1, Q2, Q3, Q4, S, ISO])
        assert answer[Q1] == 'O"Brien' and len(answer[Q1]) == 7
        assert answer[Q2] == "back\\slash" and answer[Q2].count("\\") == 1
        assert answer[Q3] == "two\nlines" and "\\n" not in answer[Q3]
        assert answer[Q4] == "Rocket \U0001f680"
        assert answer[S] == "Zo\u00eb"  # composed, as written
        assert answer[ISO] == "\u6771\u4eac"

    @pytest.mark.parametrize("lang", ["en us", "", "en-", "123456789", "en-GB-toolongsubtag", 'e"n'])
    def test_labels_bad_language(self, kg: KnowledgeGraph, lang: str) -> None:
        with pytest.raises(InvalidTermError):
            kg.labels(A, lang=lang)

    def test_labels_non_string_language(self, kg: KnowledgeGraph) -> None:
        with pytest.raises(InvalidTermError):
            kg.labels(A, lang=5)  # type: ignore[arg-type]

    # ------------------------------------------------------------------------------- search
    def test_search_tiers(self, kg: KnowledgeGraph) -> None:
        # exact "Alpha" (a), then prefix "Alpha Centauri" (f), then token "Big Alpha" (g)
        assert kg.search("alpha") == [
            Entity(id=A, label="Alpha"),
            Entity(id=F, label="Alpha Centauri"),
            Entity(id=G, label="Big Alpha"),
        ]
        assert kg.search("alpha cent") == [Entity(id=F, label="Alpha Centauri")]
        assert kg.search("centauri alpha") == [Entity(id=F, label="Alpha Centauri")]
        assert kg.search("big alpha") == [Entity(id=G, label="Big Alpha")]

    def test_search_relations(self, kg: KnowledgeGraph) -> None:
        # no relation of this graph has a label: relations are found by the words of their ids
        assert kg.search_relations("age") == [Entity(id=AGE)]
        assert kg.search_relations("NOTE ") == [Entity(id=NOTE)]
        assert [found.id for found in kg.search_relations("r")] == [R1, R2, R3, R4]
        assert kg.search_relations("r", limit=2) == [Entity(id=R1), Entity(id=R2)]
        assert kg.search_relations("label") == [Entity(id=RDFS_LABEL)]
        assert kg.search_relations("r", limit=0) == [] and kg.search_relations("nothing like it") == []
        with pytest.raises(InvalidTermError):
            kg.search_relations(["age"])  # type: ignore[arg-type]

    def test_search_limit(self, kg: KnowledgeGraph) -> None:
        assert kg.search("ALPHA", limit=2) == [Entity(id=A, label="Alpha"), Entity(id=F, label="Alpha Centauri")]
        assert kg.search("alpha", limit=1) == [Entity(id=A, label="Alpha")]
        assert kg.search("alpha", limit=0) == []
        assert len(kg.search("alpha", limit=100)) == 3

    def test_search_case_and_accent_insensitive(self, kg: KnowledgeGraph) -> None:
        zoe = [Entity(id=S, label=ZOE_LABEL)]
        assert kg.search("ZOË") == zoe
        assert kg.search("  zoë  ") == zoe
        assert kg.search("Zoe\u0308") == zoe  # decomposed form
        assert kg.search("zoe") == (zoe if self.accent_insensitive_search else [])
        assert kg.search("BRAVO") == [Entity(id=B, label="Bravo")]
        assert kg.search("charlie") == [Entity(id=C, label="Charlie")]

    def test_search_unicode_and_escapes(self, kg: KnowledgeGraph) -> None:
        assert kg.search(TOKYO_LABEL) == [Entity(id=ISO, label=TOKYO_LABEL)]
        assert kg.search('o"brien') == [Entity(id=Q1, label=QUOTE_LABEL)]
        assert kg.search("BACK\\SLASH") == [Entity(id=Q2, label=BACKSLASH_LABEL)]
        assert kg.search("two lines") == [Entity(id=Q3, label=NEWLINE_LABEL)]
        assert kg.search("two\nlines") == [Entity(id=Q3, label=NEWLINE_LABEL)]
        assert kg.search(EMOJI_LABEL) == [Entity(id=Q4, label=EMOJI_LABEL)]
        assert kg.search("rocket") == [Entity(id=Q4, label=EMOJI_LABEL)]

    def test_search_punctuation_inside_words(self, kg: KnowledgeGraph) -> None:
        # "_" is a word character to Python's regex but a separator to the index's tokenizer.
        for text in ("alpha_centauri", "centauri_alpha", "big_alpha"):
            answer = kg.search(text)
            assert answer in ([], [Entity(id=F, label="Alpha Centauri")], [Entity(id=G, label="Big Alpha")])
        assert kg.search("o'brien") in ([], [Entity(id=Q1, label=QUOTE_LABEL)])

    def test_search_no_match(self, kg: KnowledgeGraph) -> None:
        assert kg.search("no such name anywhere") == []
        assert kg.search("") == []
        assert kg.search("   ") == []
        # FTS5 syntax in the text is only words: quotes and operators change nothing
        assert kg.search('alpha" OR "big') == kg.search("alpha or big")
        assert kg.search('"big" NOT "alpha*"') == kg.search("big not alpha")
        assert kg.search("*") == []
        assert kg.search("'; DROP TABLE labels; --") == []
        assert kg.search("http://example.org/a") == []  # ids are not names

    def test_search_bad_arguments(self, kg: KnowledgeGraph) -> None:
        with pytest.raises(InvalidTermError):
            kg.search(None)  # type: ignore[arg-type]
        with pytest.raises(InvalidTermError):
            kg.search("alpha", limit=-1)


def check_blank_node_walks(kg: KnowledgeGraph) -> None:
    """Walks over a graph with a blank node (``graph.BLANK_NTRIPLES``) must not fail: a blank node
    cannot be addressed, but one reached on the way is an ordinary (if terminal) node."""
    a, c = "http://example.org/bn/a", "http://example.org/bn/c"
    r, r2, r3 = "http://example.org/bn/r", "http://example.org/bn/r2", "http://example.org/bn/r3"
    (to_blank, to_c) = kg.neighbors(a)[a]
    blank = to_blank.tail
    assert isinstance(blank, str) and blank.startswith("_:")
    assert (to_blank, to_c) == (e(a, r, blank), e(a, r3, c))
    assert kg.neighbors(c, direction="in") == {c: [e(blank, r2, c), e(a, r3, c)]}
    assert walks(kg.paths(a, [r])) == expected((a, [e(a, r, blank)]))
    assert set(kg.subgraph(a, hops=2)) == {e(a, r, blank), e(a, r3, c), e(blank, r2, c)}
    through = kg.paths(a, [r, r2])
    assert walks(through) in (Counter(), expected((a, [e(a, r, blank), e(blank, r2, c)])))
    assert walks(kg.shortest_paths(a, c)) == expected((a, [e(a, r3, c)]))
    assert list(kg.shortest_paths(c, "http://example.org/bn/nowhere", max_hops=4)) == []
