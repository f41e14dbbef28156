"""kg_adapters.compat.rog against RoG's own algorithm and an independent oracle on the bundled sample.

``kg_adapters.testing.rog_original`` is RoG's ``graph_utils`` (networkx, undirected, one relation per
node pair) as RoG's repository writes it; ``brute_force_walks`` enumerates rule walks
over the raw triple list (a directed multigraph walked both ways). Where RoG's graph has one
relation per pair, compat must answer exactly as RoG; where it has several, compat must answer as
the brute force, which finds more than RoG (the difference the module docstring names).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import networkx as nx
import pytest
from support.sample_store import sample_facts

from kg_adapters import connect
from kg_adapters.compat import rog
from kg_adapters.errors import InvalidTermError
from kg_adapters.testing import rog_original
from kg_adapters.testing.rog_original import Triple

SEED = 11


def brute_force_walks(triples: Sequence[Triple], start: str, rule: Sequence[str]) -> set[tuple[Triple, ...]]:
    """Every walk following ``rule`` over the triple list, each triple usable either way."""
    walks: set[tuple[tuple[Triple, ...], str]] = {((), start)}
    for relation in rule:
        grown = set()
        for walked, node in walks:
            for h, r, t in triples:
                if r != relation:
                    continue
                if h == node:
                    grown.add(((*walked, (h, r, t)), t))
                if t == node:
                    grown.add(((*walked, (t, r, h)), h))
        walks = grown
    return {walked for walked, _ in walks}


def one_relation_per_pair(triples: Sequence[Triple]) -> list[Triple]:
    """The triples of node pairs joined by exactly one triple: where RoG's graph loses nothing."""
    count: dict[frozenset[str], int] = {}
    for h, _, t in triples:
        count[frozenset((h, t))] = count.get(frozenset((h, t)), 0) + 1
    return [(h, r, t) for h, r, t in triples if count[frozenset((h, t))] == 1]


def sample_rules(original: nx.Graph[str], rng: random.Random, count: int) -> list[tuple[str, list[str]]]:
    """(start, rule) pairs from random walks of 1-3 hops in RoG's graph."""
    nodes = sorted(original.nodes)
    found: list[tuple[str, list[str]]] = []
    while len(found) < count:
        start = rng.choice(nodes)
        node, rule = start, []
        for _ in range(rng.randint(1, 3)):
            neighbor = rng.choice(sorted(original.neighbors(node)))
            rule.append(original[node][neighbor]["relation"])
            node = neighbor
        found.append((start, rule))
    return found


def as_set(paths: list[list[Triple]]) -> set[tuple[Triple, ...]]:
    return {tuple(p) for p in paths}


@pytest.fixture(scope="module")
def facts() -> list[Triple]:
    return sample_facts()[0]


def test_same_answers_as_rog_where_rog_loses_no_edge(facts: list[Triple]) -> None:
    triples = one_relation_per_pair(facts)
    original = rog_original.build_graph(triples)
    rng = random.Random(SEED)
    with rog.build_graph(triples) as kg:
        for start, rule in sample_rules(original, rng, 60):
            expected = rog_original.bfs_with_rule(original, start, rule)
            got = rog.bfs_with_rule(kg, start, rule)
            assert sorted(got) == sorted(expected), (start, rule)
            assert len(got) == len(expected)  # RoG's answer has no repeats here, nor may ours
        nodes = sorted(original.nodes)
        for _ in range(25):
            q, a = rng.sample(nodes, 2), rng.sample(nodes, 2)
            expected_truth = rog_original.get_truth_paths(q, a, original)
            if any(len(p) > 4 for p in expected_truth):
                continue  # beyond our default max_hops (a documented difference)
            assert sorted(rog.get_truth_paths(q, a, kg)) == sorted(expected_truth), (q, a)
            assert sorted(rog.get_simple_paths(q, a, kg, hop=2)) == sorted(
                rog_original.get_simple_paths(q, a, original, 2)
            ), (q, a)
        # a question entity that is also an answer: one empty path, as networkx gives
        node = nodes[0]
        assert rog.get_truth_paths([node], [node], kg) == rog_original.get_truth_paths([node], [node], original) == [[]]
        # all_simple_edge_paths(G, h, h) yields nothing under the networkx RoG pins (3.1: "if source in
        # targets: return []" in a generator); later releases yield one empty path
        assert rog.get_simple_paths([node], [node], kg) == []
        assert rog.get_simple_paths([node, nodes[1]], [node], kg) == rog_original.get_simple_paths(
            [nodes[1]], [node], original, 2
        )


def test_every_edge_kept_where_rog_overwrites(facts: list[Triple], sample_store_url: str) -> None:
    """On the whole sample (pairs with several relations), over the on-disk Freebase store: the
    brute-force answer, which has walks RoG's one-relation-per-pair graph cannot find."""
    original = rog_original.build_graph(facts)
    rng = random.Random(SEED + 1)
    more_than_rog = 0
    with connect(sample_store_url) as kg:
        rog.use(kg)
        try:
            for start, rule in sample_rules(original, rng, 60):
                expected = brute_force_walks(facts, start, rule)
                got = rog.bfs_with_rule(None, start, rule)
                assert as_set(got) == expected, (start, rule)
                assert len(got) == len(expected)
                assert as_set(rog_original.bfs_with_rule(original, start, rule)) <= expected
                more_than_rog += len(expected) > len(as_set(rog_original.bfs_with_rule(original, start, rule)))
        finally:
            rog.use(None)
        # a pair joined by two relations: RoG keeps only the last one, we walk both
        pairs: dict[frozenset[str], list[Triple]] = {}
        for triple in facts:
            pairs.setdefault(frozenset((triple[0], triple[2])), []).append(triple)
        h, r1, t = next(ts for ts in pairs.values() if len({r for _, r, _ in ts}) > 1)[0]
        assert rog.bfs_with_rule(kg, h, [r1]) != [] and [(h, r1, t)] in rog.bfs_with_rule(kg, h, [r1])
        assert [(h, r1, t)] not in rog_original.bfs_with_rule(original, h, [r1]) or original[h][t]["relation"] == r1
    assert more_than_rog > 0  # the sample does have pairs RoG collapses


def test_names_graph_round_trips_awkward_names() -> None:
    triples = [
        ('Dwayne "The Rock" Johnson', "people.person.place_of_birth", "Hayward, California"),
        ("Zoë Saldaña", " film.actor.film ", "m.0abc1"),  # RoG strips relations
        ("m.0abc1", "film.performance.film", "Avatar / 2009?"),
        ("Hayward, California", "location.location.containedby", "http://example.org/not an IRI"),
    ]
    with rog.build_graph(triples) as kg:
        assert rog.bfs_with_rule(kg, "Zoë Saldaña", ["film.actor.film", "film.performance.film"]) == [
            [("Zoë Saldaña", "film.actor.film", "m.0abc1"), ("m.0abc1", "film.performance.film", "Avatar / 2009?")]
        ]
        assert rog.bfs_with_rule(kg, "Avatar / 2009?", ["film.performance.film", "film.actor.film"]) == [
            [("Avatar / 2009?", "film.performance.film", "m.0abc1"), ("m.0abc1", "film.actor.film", "Zoë Saldaña")]
        ]
        assert rog.get_truth_paths(['Dwayne "The Rock" Johnson'], ["http://example.org/not an IRI"], kg) == [
            [
                ('Dwayne "The Rock" Johnson', "people.person.place_of_birth", "Hayward, California"),
                ("Hayward, California", "location.location.containedby", "http://example.org/not an IRI"),
            ]
        ]
        assert [e.id for e in kg.search("Zoë Saldaña")] == ["Zoë Saldaña"]
        assert rog.bfs_with_rule(kg, "nobody", ["film.actor.film"]) == []
        assert rog.bfs_with_rule(kg, "nobody", []) == [[]]  # as RoG: the empty rule is met at once
        assert rog.get_truth_paths(["nobody"], ["Avatar / 2009?"], kg) == []


def test_bad_input_is_refused() -> None:
    with pytest.raises(InvalidTermError, match="triple 1"):
        rog.build_graph([("a", "r", "b"), ("a", "r")])
    with pytest.raises(InvalidTermError, match="no graph"):
        rog.bfs_with_rule(None, "a", ["r"])
    with rog.build_graph([("a", "r", "b")]) as kg, pytest.raises(InvalidTermError, match="q_entity"):
        rog.get_truth_paths("a", ["b"], kg)


def test_ids_the_graph_cannot_spell_are_not_in_it(sample_store_url: str) -> None:
    """A dataset's names asked of a Freebase store: not in the graph, as RoG skips them."""
    with connect(sample_store_url) as kg:
        assert rog.get_truth_paths(["Barack Obama"], ["m.09c7w0"], kg) == []
        assert rog.get_simple_paths(["m.09c7w0"], ["Honolulu, Hawaii"], kg) == []
        assert rog.bfs_with_rule(kg, "Barack Obama", ["people.person.place_of_birth"]) == []


@pytest.mark.parametrize("bad", [None, -1, 2**64, 2.0, True])
def test_hop_budgets_are_checked_before_any_walk(bad: object, sample_store_url: str) -> None:
    """``hop=None`` raised TypeError, and ``max_hops=None`` answered [] silently on an indexed store."""
    with rog.build_graph([("a", "r", "b")]) as kg, pytest.raises(InvalidTermError, match="hop must be an integer"):
        rog.get_simple_paths(["a"], ["b"], kg, hop=bad)  # type: ignore[arg-type]
    with connect(sample_store_url) as kg, pytest.raises(InvalidTermError, match="max_hops must be an integer"):
        rog.get_truth_paths(["m.0bxtg"], ["m.0bxtg"], kg, max_hops=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("graph", [[5], [None], 7, None, "abc"])
def test_a_graph_that_is_not_triples_is_refused(graph: object) -> None:
    """Numbers or None where triples belong escaped as TypeError."""
    with pytest.raises(InvalidTermError, match=r"triple 0|the graph must be"):
        rog.build_graph(graph)  # type: ignore[arg-type]
