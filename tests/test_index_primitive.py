"""The index's one read (``Side.edges``), the reads composed on it, its dispatch and its caches.

``Side.edges`` is checked against a plain sort of the arrays it reads, on real stores; every walk built
on it must answer as the same store through Oxigraph only, on random multigraphs of several shapes
(parallel edges, self-loops, hubs, literals of several kinds, relations the profile hides); every
cache of the package stays within its bound and is listed in the package's cache table.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

import kg_adapters.index
from kg_adapters import connect
from kg_adapters.backends.oxigraph import OxigraphGraph
from kg_adapters.base import Direction, KnowledgeGraph
from kg_adapters.errors import InvalidTermError
from kg_adapters.index import tuning
from kg_adapters.index.backend import IndexBackend
from kg_adapters.index.edges import edge_records, read_edges
from kg_adapters.index.ids import IndexIds
from kg_adapters.index.memo import BoundedMemo
from kg_adapters.index.read import Side, TraversalIndex
from loaders import load_files

FB = "http://rdf.freebase.com/ns/"
DIRECTIONS: list[Direction] = ["out", "in", "both"]
SHAPES = [
    # (seed, nodes, edges, relations, literal share, self-loop share, hub share)
    (11, 40, 300, 3, 0.5, 0.10, 0.3),
    (12, 120, 900, 12, 0.2, 0.02, 0.1),
    (13, 25, 400, 2, 0.9, 0.20, 0.5),
]


def _graph(seed: int, nodes: int, edges: int, relations: int, literals: float, loops: float, hubs: float) -> str:
    rng = random.Random(seed)
    ids = [f"m.{i:04x}" for i in range(nodes)]
    names = [f"film.r{r:02}.x" for r in range(relations)] + ["common.topic.notable_for", "type.object.type"]
    lines = set()
    for _ in range(edges):
        head = rng.choice(ids[:3]) if rng.random() < hubs else rng.choice(ids)
        tail = head if rng.random() < loops else rng.choice(ids[:3]) if rng.random() < hubs else rng.choice(ids)
        lines.add(f"<{FB}{head}> <{FB}{rng.choice(names)}> <{FB}{tail}> .")
    for node in ids:
        if rng.random() < 0.7:
            lines.add(f'<{FB}{node}> <{FB}type.object.name> "Name {node}"@en .')
        for _ in range(rng.randrange(3) if rng.random() < literals else 0):
            value = rng.choice(
                ['"a literal"', '"b"@de', f'"{rng.randint(1, 9)}"^^<http://www.w3.org/2001/XMLSchema#integer>']
            )
            lines.add(f"<{FB}{node}> <{FB}{rng.choice(names)}> {value} .")
    return "\n".join(sorted(lines)) + "\n"


@pytest.fixture(scope="module", params=SHAPES, ids=lambda shape: f"seed{shape[0]}")
def pair(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[KnowledgeGraph, KnowledgeGraph]]:
    """(indexed, Oxigraph-only) graphs of one random multigraph."""
    base = tmp_path_factory.mktemp("shape")
    source = base / "graph.nt"
    source.write_text(_graph(*request.param), encoding="utf-8")
    load_files([str(source)], str(base / "indexed"), profile="freebase", progress=False)
    load_files([str(source)], str(base / "plain"), profile="freebase", progress=False, index=False)
    with connect(f"oxigraph://{base / 'indexed'}") as fast, connect(f"oxigraph://{base / 'plain'}") as slow:
        assert isinstance(fast, OxigraphGraph) and fast.traversal_index is not None
        assert isinstance(slow, OxigraphGraph) and slow.traversal_index is None
        yield fast, slow


def _index(kg: KnowledgeGraph) -> TraversalIndex:
    assert isinstance(kg, OxigraphGraph) and kg.traversal_index is not None
    return kg.traversal_index


def _brute(side: Side, node: int, relation: int | None, mask: bytes | None) -> tuple[list[int], list[int]]:
    """A node's edges on ``side`` by a plain sort of its rows of the arrays (the answer order)."""
    lo, hi = side.span(node)
    pairs = list(zip(side.rels[lo:hi].tolist(), side.others[lo:hi].tolist(), strict=True))
    pairs = [(r, o) for r, o in pairs if (relation is None or r == relation) and (mask is None or mask[r])]
    pairs.sort(key=(lambda p: p) if side.out else (lambda p: (p[1], p[0])))
    return [r for r, _ in pairs], [o for _, o in pairs]


@pytest.mark.parametrize("hub_way", [False, True], ids=["sliced", "runs-merged"])
def test_side_edges_is_a_sort_of_the_arrays(
    pair: tuple[KnowledgeGraph, KnowledgeGraph], hub_way: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every node, side, relation, mask and limit: the first ``limit`` of the node's edges in answer
    order (with ``hub_way`` every node counts as a hub, whose first edges come from its relations' runs)."""
    if hub_way:
        monkeypatch.setattr(tuning, "SCAN", -1000)
    index = _index(pair[0])
    rng = random.Random(7)
    checked = 0
    for side in (index.out_side, index.in_side):
        for node in range(index.entity_count):
            relation = rng.choice([None, None, rng.randrange(index.width)])
            mask = (
                None
                if relation is not None or rng.random() < 0.5
                else bytes(rng.random() < 0.6 for _ in range(index.width))
            )
            relations, ends = _brute(side, node, relation, mask)
            for limit in (None, 0, 1, 2, 5):
                expected = (relations, ends) if limit is None else (relations[:limit], ends[:limit])
                assert side.edges(node, relation, mask, limit) == expected, (side.name, node, relation, limit)
                checked += len(expected[1])
    assert checked > 500


def test_read_edges_records_are_neighbors_through_oxigraph(pair: tuple[KnowledgeGraph, KnowledgeGraph]) -> None:
    """The composed read (both sides merged, literal edges placed, cut at a limit on the numbers) makes
    exactly Oxigraph's ``neighbors`` answer, for every entity, direction and limit."""
    fast, slow = pair
    index = _index(fast)
    for number in range(index.entity_count):
        name = index.name(number)
        for direction in DIRECTIONS:
            expected = slow.neighbors(name, direction=direction, relations=None)[name]
            mask = fast._index_backend().mask(layer=False)  # type: ignore[attr-defined]
            for limit in (None, 0, 1, 3, len(expected), len(expected) + 1):
                read = read_edges(index, number, direction, None, mask, limit, True)
                assert edge_records(index, name, read) == expected[:limit], (name, direction, limit)
                assert read[4] == (limit is not None and len(expected) > limit)  # cut says what it left out


def test_every_walk_answers_as_oxigraph(pair: tuple[KnowledgeGraph, KnowledgeGraph]) -> None:
    fast, slow = pair
    index = _index(fast)
    rng = random.Random(3)
    ids = [index.name(n) for n in range(index.entity_count)] + ["m.ffff"]
    relations = list(index.relations)
    found = 0
    for _ in range(40):
        some = rng.sample(ids, rng.randint(1, 3))
        direction = rng.choice(DIRECTIONS)
        named = rng.choice([None, rng.sample(relations, min(2, len(relations)))])
        calls: list[tuple[str, tuple[object, ...], dict[str, object]]] = [
            (
                "neighbors",
                (some,),
                {"direction": direction, "relations": named, "limit_per_entity": rng.choice([None, 2])},
            ),
            ("relations", (some,), {"direction": direction}),
            ("paths", (some[0], rng.choices(relations, k=rng.randint(1, 3))), {"simple": rng.random() < 0.3}),
            (
                "paths",
                (some, rng.choices(relations, k=2)),
                {"directions": [rng.choice(DIRECTIONS) for _ in range(2)], "max_paths": rng.choice([None, 3])},
            ),
            ("shortest_paths", (some, rng.sample(ids, 2)), {"max_hops": rng.randint(1, 4), "direction": direction}),
            (
                "subgraph",
                (some,),
                {
                    "hops": rng.randint(1, 2),
                    "direction": direction,
                    "relations": named,
                    "max_edges": rng.choice([None, 7]),
                },
            ),
        ]
        for operation, args, options in calls:
            expected = getattr(slow, operation)(*args, **options)
            answer = getattr(fast, operation)(*args, **options)
            assert answer == expected, (operation, args, options)
            assert getattr(answer, "truncated", None) == getattr(expected, "truncated", None)
            found += len(answer)
    assert found > 100


def test_can_answer_decides_once_per_operation(tmp_path: Path) -> None:
    """Whole operations need a store without blank nodes, no blank id, no CVT expansion on a CVT
    profile; the parts are answered on any store; an unknown operation is a programming error."""
    data = tmp_path / "blank.nt"
    data.write_text(f"<{FB}m.a> <{FB}r.one> <{FB}m.b> .\n<{FB}m.a> <{FB}r.two> _:x .\n", encoding="utf-8")
    load_files([str(data)], str(tmp_path / "blank"), profile="freebase", progress=False)
    data.write_text(f"<{FB}m.a> <{FB}r.one> <{FB}m.b> .\n", encoding="utf-8")
    load_files([str(data)], str(tmp_path / "plain"), profile="freebase", progress=False)
    with connect(f"oxigraph://{tmp_path / 'blank'}") as blank, connect(f"oxigraph://{tmp_path / 'plain'}") as plain:
        with_blanks, without = blank._index_backend(), plain._index_backend()  # type: ignore[attr-defined]
        assert isinstance(with_blanks, IndexBackend) and isinstance(without, IndexBackend)
        for operation in ("neighbors", "relations", "paths", "shortest_paths", "subgraph"):
            assert not with_blanks.can_answer(operation)
            assert without.can_answer(operation)
            assert not without.can_answer(operation, expand_cvt=True)  # freebase has CVT nodes
            assert not without.can_answer(operation, ids=["m.a", "_:b0"])
        for part in ("edges", "relation_pairs"):
            assert with_blanks.can_answer(part) and without.can_answer(part)
        with pytest.raises(ValueError, match="no operation"):
            without.can_answer("sparql")
        assert blank.relations("m.a") == {"m.a": ["r.one", "r.two"]}  # a part: read from the index


def test_bounded_memo_keeps_its_bounds() -> None:
    computed: list[int] = []

    def double(key: int) -> str:
        computed.append(key)
        if key < 0:
            raise InvalidTermError("negative")
        return "x" * key

    memo: BoundedMemo[int, str] = BoundedMemo(double, cap=4, budget=40, size=len, overhead=2)
    for key in [1, 2, 3, 1, 2, 3]:
        assert memo[key] == "x" * key
    assert computed == [1, 2, 3] and memo.bytes == 6 + 3 * 2
    for key in range(4, 9):
        memo[key]
        assert len(memo) <= 4 and memo.bytes <= 40
    assert memo[50] == "x" * 50 and 50 not in memo  # larger than the whole budget: answered, not kept
    with pytest.raises(InvalidTermError):
        memo[-1]
    assert -1 not in memo  # a failed computation is not kept
    memo.remember(list(range(10, 20)), ["y"] * 10)  # more than the whole memo: not kept
    assert not set(memo) & set(range(10, 20)) and len(memo) <= 4
    memo.remember([30, 31], ["a", "b"])
    assert memo[30] == "a" and memo[31] == "b" and len(memo) <= 4
    memo.clear()
    assert len(memo) == 0 and memo.bytes == 0
    owned: BoundedMemo[str, int] = BoundedMemo(None, cap=2)
    with pytest.raises(KeyError):
        owned["missing"]


def test_every_cache_is_in_the_table_and_under_its_bound(pair: tuple[KnowledgeGraph, KnowledgeGraph]) -> None:
    """The package docstring's table names every ``BoundedMemo`` an index and a graph's backend own,
    and each stays within its cap however many distinct ids and calls pass through it."""
    fast, _ = pair
    assert isinstance(fast, OxigraphGraph)
    index = _index(fast)
    backend = fast._index_backend()
    assert backend is not None
    table = kg_adapters.index.__doc__ or ""
    owners = {"": index, "IndexIds.": backend.ids}
    found = {
        prefix + name: memo
        for prefix, owner in owners.items()
        for name, memo in vars(owner).items()
        if isinstance(memo, BoundedMemo)
    }
    assert set(found) == {
        "name_cache",
        "literal_cache",
        "IndexIds.canonical",
        "IndexIds.numbers",
        "IndexIds.relations",
        "IndexIds.path_calls",
    }
    for name in found:
        assert f"    {name} " in table, name
    small = IndexIds(index, fast.profile, cap=3)
    caps = index.name_cache.cap, index.literal_cache.cap
    index.name_cache.cap, index.literal_cache.cap = 5, 2
    index.name_cache.clear()
    index.literal_cache.clear()
    ids = [index.name(n) for n in range(index.entity_count)]
    relations = list(index.relations)
    for number, node in enumerate(ids):
        small.canonical_id(node)
        small.number(node)
        small.relation_number(relations[number % len(relations)])
        small.checked_paths(fast, node, [relations[number % len(relations)]], None, None)
        fast.neighbors(node, direction="both")
        for memo in (*vars(small).values(), index.name_cache, index.literal_cache):
            if isinstance(memo, BoundedMemo):
                assert len(memo) <= memo.cap
    assert len(small.path_calls) > 0 and len(index.name_cache) > 0
    index.name_cache.cap, index.literal_cache.cap = caps


def _batches(monkeypatch: pytest.MonkeyPatch, index: TraversalIndex) -> dict[str, list[int]]:
    """The sizes of the batches each decoded cache of ``index`` keeps from now on (``remember`` calls)."""
    kept: dict[str, list[int]] = {"names": [], "literals": []}
    original = BoundedMemo.remember

    def counted(memo: BoundedMemo[int, object], keys: list[int], values: list[object]) -> None:
        if memo is index.name_cache or memo is index.literal_cache:
            kept["names" if memo is index.name_cache else "literals"].append(len(keys))
        original(memo, keys, values)

    monkeypatch.setattr(BoundedMemo, "remember", counted)
    return kept


def _hub(slow: KnowledgeGraph, index: TraversalIndex) -> str:
    """The entity with the most edges (both directions)."""
    degree = {
        index.name(n): len(slow.neighbors(index.name(n), direction="both")[index.name(n)])
        for n in range(index.entity_count)
    }
    return max(degree, key=degree.__getitem__)


def test_a_cold_call_decodes_its_ids_in_one_batch(
    pair: tuple[KnowledgeGraph, KnowledgeGraph], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the caches emptied, ``neighbors`` of a node keeps its answer's ids with one ``remember``
    (one lock), and decodes nothing it does not answer with; of several nodes, one batch for all."""
    fast, slow = pair
    index = _index(fast)
    kept = _batches(monkeypatch, index)["names"]
    hub = _hub(slow, index)
    index.name_cache.clear()
    answer = fast.neighbors(hub, direction="both")[hub]
    named = {edge.tail for edge in answer if edge.head == hub and isinstance(edge.tail, str)}  # out-edges' tails
    named |= {edge.head for edge in answer if edge.head != hub}  # in-edges' heads (a self-loop is an out-edge)
    assert answer == slow.neighbors(hub, direction="both")[hub] and len(named) > 3
    assert kept == [len(named)]  # one batch, holding exactly the ids answered
    assert set(index.name_cache.values()) == named
    some = [index.name(n) for n in range(0, index.entity_count, 3)]
    index.name_cache.clear()
    kept.clear()
    assert fast.neighbors(some, direction="in") == slow.neighbors(some, direction="in")
    assert len(kept) == 1  # every node's heads in one batch


@pytest.mark.parametrize("direction", ["out", "in"])
def test_a_cold_subgraph_decodes_each_hop_in_one_batch(
    pair: tuple[KnowledgeGraph, KnowledgeGraph], monkeypatch: pytest.MonkeyPatch, direction: Direction
) -> None:
    """With the caches emptied, a subgraph walking one way keeps the ids (and literal records) each
    hop answers with in one batch per hop, and answers as Oxigraph does, cut by ``max_edges`` or not."""
    fast, slow = pair
    index = _index(fast)
    kept = _batches(monkeypatch, index)
    hub = _hub(slow, index)
    for hops, limit in ((2, None), (3, None), (2, 9)):
        index.name_cache.clear()
        index.literal_cache.clear()
        kept["names"].clear()
        kept["literals"].clear()
        answer = fast.subgraph(hub, hops=hops, direction=direction, max_edges=limit)
        expected = slow.subgraph(hub, hops=hops, direction=direction, max_edges=limit)
        assert answer == expected and answer.truncated == expected.truncated and len(answer) > 3
        assert 1 <= len(kept["names"]) <= hops and len(kept["literals"]) <= hops, kept
