"""Graph algorithms written once over the :class:`KnowledgeGraph` interface.

They touch the graph only through batched ``neighbors`` calls (one per hop and direction), so
their cost in backend queries is bounded by hops x ceil(frontier / batch size) on every backend,
and every budget that cuts an answer short sets ``truncated``.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Generator, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

from kg_adapters.base import Direction, Ids, KnowledgeGraph, as_id_list, call_options, check_direction, forwards
from kg_adapters.budgets import check_count
from kg_adapters.errors import InvalidTermError
from kg_adapters.records import Edge, EdgeList, Node, Path, PathResult, edge_sort_key

_REVERSE: dict[Direction, Direction] = {"out": "in", "in": "out", "both": "both"}


def canonical_ids(kg: KnowledgeGraph, ids: Ids, canonical: Callable[[str], str] | None = None) -> list[str]:
    """The caller's ids validated and in the one spelling edges use (so walks can match them).
    ``canonical``: the profile's ``canonical_id`` or a backend's memo of it (same answers, same errors)."""
    canonical = canonical or kg.profile.canonical_id
    if isinstance(ids, str):  # one id: as as_id_list would give it, without the list's checks
        return [canonical(ids)]
    return list(dict.fromkeys(canonical(node) for node in as_id_list(ids)))


def check_relations(
    kg: KnowledgeGraph, relations: Sequence[str] | None, check: Callable[[str], object] | None = None
) -> None:
    """Validates every relation before any query runs, so a bad one never goes unnoticed.
    ``check``: the profile's ``relation_iri`` or a backend's memo of it (same errors)."""
    if relations is None:
        return
    if isinstance(relations, str):
        raise InvalidTermError("relations must be a list of relation ids, not one string")
    check = check or kg.profile.relation_iri
    for relation in relations:
        check(relation)


def other_end(edge: Edge, node: str) -> Node:
    """The node reached from ``node`` over ``edge`` (walked forwards or backwards)."""
    return edge.tail if edge.head == node else edge.head


@dataclass(frozen=True, slots=True)
class NeighborOptions:
    """The checked options of one ``neighbors`` call (:meth:`KnowledgeGraph.neighbors`)."""

    direction: Direction
    relations: Sequence[str] | None
    limit_per_entity: int | None
    literals: bool
    expand_cvt: bool
    qualifiers: bool


def neighbor_options(options: Mapping[str, Any]) -> NeighborOptions:
    """The options of a ``neighbors`` call over the Protocol's defaults, checked, for a backend that
    takes them as ``**options`` (:func:`~kg_adapters.base.forwards`): one definition of the signature,
    one check of the direction and the limit. An unknown option is a TypeError."""
    settings = call_options(KnowledgeGraph.neighbors, options)
    check_direction(settings["direction"])
    settings["limit_per_entity"] = check_count(settings["limit_per_entity"], "limit_per_entity")
    return NeighborOptions(**settings)


def path_arguments(
    kg: KnowledgeGraph,
    starts: Ids,
    relation_path: Sequence[str],
    directions: Sequence[Direction] | None,
    max_paths: int | None,
    *,
    canonical: Callable[[str], str] | None = None,
    check_relation: Callable[[str], object] | None = None,
) -> tuple[list[str], list[Direction], int | None]:
    """The checked arguments of ``paths`` (start ids, one direction per hop, the path budget), for
    every implementation of it, so all refuse bad input alike (``canonical``, ``check_relation``:
    see :func:`canonical_ids`, :func:`check_relations`)."""
    start_ids = canonical_ids(kg, starts, canonical)
    if isinstance(relation_path, str) or not relation_path:
        raise InvalidTermError("relation_path must be a non-empty list of relations")
    check_relations(kg, relation_path, check_relation)
    hops = len(relation_path)
    if directions is None:
        dirs: list[Direction] = ["out"] * hops
    else:
        dirs = list(directions)
        if len(dirs) != hops:
            raise InvalidTermError(f"directions has {len(dirs)} entries for a {hops}-hop relation path")
        dirs = [check_direction(d) for d in dirs]
    return start_ids, dirs, None if max_paths is None else check_count(max_paths, "max_paths")


def shortest_path_arguments(
    kg: KnowledgeGraph,
    sources: Ids,
    targets: Ids,
    max_hops: int,
    direction: Direction,
    max_paths: int | None,
) -> tuple[list[str], list[str], int, int | None]:
    """The checked arguments of ``shortest_paths`` (source ids, target ids, the hop and path budgets),
    for every implementation of it."""
    check_direction(direction)
    hops = check_count(max_hops, "max_hops", required=True)
    limit = check_count(max_paths, "max_paths")
    assert hops is not None  # required=True
    return canonical_ids(kg, sources), canonical_ids(kg, targets), hops, limit


def subgraph_arguments(
    kg: KnowledgeGraph,
    seeds: Ids,
    hops: int,
    direction: Direction,
    relations: Sequence[str] | None,
    max_edges: int | None,
    *,
    canonical: Callable[[str], str] | None = None,
) -> tuple[list[str], int, int | None]:
    """The checked arguments of ``subgraph`` (seed ids, the hop and edge budgets), for every
    implementation of it. ``canonical``: as for :func:`canonical_ids`."""
    check_direction(direction)
    depth = check_count(hops, "hops", required=True)
    limit = check_count(max_edges, "max_edges")
    seed_ids = canonical_ids(kg, seeds, canonical)
    check_relations(kg, relations)
    assert depth is not None  # required=True
    return seed_ids, depth, limit


def constrained_paths(
    kg: KnowledgeGraph,
    starts: Ids,
    relation_path: Sequence[str],
    *,
    directions: Sequence[Direction] | None = None,
    max_paths: int | None = None,
    simple: bool = False,
    expand_cvt: bool = False,
) -> PathResult:
    """RoG Algorithm 1. Each hop's frontier (distinct nodes, not paths) is expanded with one batched
    ``neighbors`` call; paths are then enumerated depth-first over the layered adjacency in a
    deterministic order, visiting only nodes that can still complete the path."""
    start_ids, dirs, limit = path_arguments(kg, starts, relation_path, directions, max_paths)
    collapsed = {relation: parts for relation in relation_path if (parts := _cvt_step(kg, relation, expand_cvt))}
    layers = _path_layers(kg, start_ids, relation_path, dirs, collapsed)
    alive = _completable(layers, dirs)

    result = PathResult()
    steps = [_STEPS[d] for d in dirs]
    for start in start_ids:
        if start not in alive[0]:
            continue
        walks: list[tuple[Edge, ...]] = []
        room = limit - len(result) if limit is not None else -1
        try:
            _walk(layers, alive, steps, start, simple, walks, room)
        except _Full:
            result.truncated = True
        if collapsed:
            walks = [tuple(real for edge in walk for real in (edge.cvt or (edge,))) for walk in walks]
        result.extend([Path(start=start, edges=walk) for walk in walks])
        if result.truncated:
            return result
    return result


def _step_end(step: object, edge: Edge, node: str) -> Node:
    """Where ``edge`` leads from ``node`` on a hop walked as ``step`` (one of :data:`_STEPS`' values)."""
    return edge.tail if step is _TAIL else edge.head if step is _HEAD else other_end(edge, node)


def _path_layers(
    kg: KnowledgeGraph,
    start_ids: list[str],
    relation_path: Sequence[str],
    dirs: list[Direction],
    collapsed: Mapping[str, tuple[str, str]],
) -> list[dict[str, list[Edge]]]:
    """One adjacency per hop: the edges of that hop's frontier (the distinct nodes reached so far)
    over its relation, from one batched ``neighbors`` call (or a walk through CVTs)."""
    layers: list[dict[str, list[Edge]]] = []
    frontier: list[str] = start_ids
    for relation, direction in zip(relation_path, dirs, strict=True):
        if not frontier:
            adjacency = {}
        elif relation in collapsed:
            adjacency = _through_cvts(kg, frontier, relation, collapsed[relation], direction)
        else:
            adjacency = kg.neighbors(frontier, direction=direction, relations=[relation])
        layers.append(adjacency)
        step = _STEPS[direction]
        reached = (_step_end(step, edge, node) for node in frontier for edge in adjacency.get(node, ()))
        frontier = list(dict.fromkeys(node for node in reached if isinstance(node, str)))
    return layers


def _completable(layers: list[dict[str, list[Edge]]], dirs: list[Direction]) -> list[set[str]]:
    """``alive[i]``: the nodes at depth ``i`` from which the rest of the path can be completed."""
    hops = len(layers)
    alive: list[set[str]] = [set() for _ in range(hops)]
    alive[hops - 1] = {node for node, edges in layers[hops - 1].items() if edges}
    for depth in range(hops - 2, -1, -1):
        step, ahead = _STEPS[dirs[depth]], alive[depth + 1]
        alive[depth] = {
            node for node, edges in layers[depth].items() if any(_step_end(step, edge, node) in ahead for edge in edges)
        }
    return alive


def _cvt_step(kg: KnowledgeGraph, relation: str, expand_cvt: bool) -> tuple[str, str] | None:
    """``(r1, r2)`` when ``relation`` is a collapsed CVT relation ``r1..r2`` to walk through CVTs."""
    if not expand_cvt or not kg.profile.has_cvt_nodes:
        return None
    first, _, second = relation.partition("..")
    if not first or not second:
        return None
    check_relations(kg, [first, second])
    return first, second


def _through_cvts(
    kg: KnowledgeGraph, frontier: list[str], relation: str, parts: tuple[str, str], direction: Direction
) -> dict[str, list[Edge]]:
    """One hop of a collapsed relation ``r1..r2`` (one ``neighbors`` call): edges that carry the
    relation itself (as in FB15k-237), and walks ``head --r1--> CVT --r2--> tail`` as one
    stand-in edge ``head --r1..r2--> tail`` whose ``cvt`` holds the two real edges (the path gets
    those). As everywhere, a walk through a CVT never leads back to the node it started from."""
    first, second = parts
    answer = kg.neighbors(
        frontier, direction=direction, relations=list(dict.fromkeys((relation, first, second))), expand_cvt=True
    )
    adjacency: dict[str, list[Edge]] = {}
    for node in frontier:
        edges: list[Edge] = []
        for edge in answer.get(node, ()):
            plain = replace(edge, cvt=()) if edge.cvt else edge
            if edge.relation == relation:
                edges.append(plain)
                continue
            if edge.head == node and direction != "in" and edge.relation == first:
                edges.extend(
                    Edge(head=node, relation=relation, tail=inner.tail, cvt=(plain, inner))
                    for inner in edge.cvt
                    if inner.head == edge.tail and inner.relation == second
                )
            if edge.tail == node and direction != "out" and edge.relation == second:
                edges.extend(
                    Edge(head=inner.head, relation=relation, tail=node, cvt=(inner, plain))
                    for inner in edge.cvt
                    if inner.tail == edge.head and inner.relation == first
                )
        edges.sort(key=edge_sort_key)
        adjacency[node] = edges
    return adjacency


_TAIL, _HEAD, _EITHER = "tail", "head", "either"
_STEPS: dict[Direction, str] = {"out": _TAIL, "in": _HEAD, "both": _EITHER}
"""Which end of an edge a hop reaches: ``out`` edges of a node have it as head, ``in`` edges as
tail (as the :class:`KnowledgeGraph` contract says), ``both`` needs the general :func:`other_end`."""


class _Full(Exception):
    """Raised by :func:`_walk` when one more walk would exceed ``max_paths``."""


def _walk(
    layers: list[dict[str, list[Edge]]],
    alive: list[set[str]],
    steps: list[str],
    start: str,
    simple: bool,
    out: list[tuple[Edge, ...]],
    room: int,
) -> None:
    """Appends every walk from ``start`` to ``out``, depth-first in edge order; raises
    :class:`_Full` instead of appending walk number ``room + 1`` (``room < 0``: no budget).
    Iterative (one stack entry per hop), so a relation path of any length walks without recursion."""
    last = len(layers) - 1
    prefix: list[Edge] = []
    nodes: list[str] = [start]
    on_path: set[Node] = {start} if simple else set()
    pending: list[Iterator[Edge]] = [iter(layers[0].get(start, ()))]
    while pending:
        depth = len(pending) - 1
        edge = next(pending[-1], None)
        if edge is None:
            pending.pop()
            left = nodes.pop()
            if prefix:
                prefix.pop()
            if simple:
                on_path.discard(left)
            continue
        node, step = nodes[-1], steps[depth]
        nxt = edge.tail if step is _TAIL else edge.head if step is _HEAD else other_end(edge, node)
        if simple and nxt in on_path:
            continue
        if depth == last:
            if len(out) == room:
                raise _Full
            out.append((*prefix, edge))
        elif isinstance(nxt, str) and nxt in alive[depth + 1]:
            prefix.append(edge)
            nodes.append(nxt)
            if simple:
                on_path.add(nxt)
            pending.append(iter(layers[depth + 1].get(nxt, ())))


class _Adjacency:
    """Entity-to-entity edges fetched on demand in batches and kept for one operation."""

    def __init__(self, kg: KnowledgeGraph) -> None:
        self._kg = kg
        self._edges: dict[Direction, dict[str, list[Edge]]] = {"out": {}, "in": {}, "both": {}}

    def fetch(self, direction: Direction, nodes: Sequence[str]) -> None:
        known = self._edges[direction]
        missing = [node for node in dict.fromkeys(nodes) if node not in known]
        if missing:
            answer = self._kg.neighbors(missing, direction=direction, literals=False)
            for node in missing:
                known[node] = answer.get(node, [])

    def edges(self, direction: Direction, node: str) -> list[Edge]:
        return self._edges[direction][node]


class _PairSearch:
    """Bidirectional level-synchronous BFS for one (source, target) pair, advanced in lockstep
    with the other pairs so that all of them share one batched expansion per round. It expands the
    side with fewer nodes (a degree is not known before its ``neighbors`` call); the traversal index
    expands the side with the smaller total degree. Both find the same paths (:func:`shortest_walks`)."""

    def __init__(self, source: str, target: str, direction: Direction, max_hops: int) -> None:
        self.source, self.target = source, target
        self.max_hops = max_hops
        self.dirs: tuple[Direction, Direction] = (direction, _REVERSE[direction])
        self.dist: tuple[dict[str, int], dict[str, int]] = ({source: 0}, {target: 0})
        self.parents: tuple[dict[str, list[tuple[str, Edge]]], dict[str, list[tuple[str, Edge]]]] = ({}, {})
        self.layers: list[list[str]] = [[source], [target]]
        self.radius = [0, 0]
        self.meeting: list[str] = [source] if source == target else []
        self.done = source == target

    def next_side(self) -> int:
        return 0 if len(self.layers[0]) <= len(self.layers[1]) else 1

    def need(self) -> tuple[Direction, list[str]] | None:
        if self.done:
            return None
        if self.radius[0] + self.radius[1] >= self.max_hops or not self.layers[0] or not self.layers[1]:
            self.done = True
            return None
        side = self.next_side()
        return self.dirs[side], self.layers[side]

    def advance(self, adjacency: _Adjacency) -> None:
        side = self.next_side()
        dist, parents, other = self.dist[side], self.parents[side], self.dist[1 - side]
        depth = self.radius[side] + 1
        new_layer: list[str] = []
        for node in self.layers[side]:
            for edge in adjacency.edges(self.dirs[side], node):
                nxt = other_end(edge, node)
                if not isinstance(nxt, str) or nxt == node:
                    continue
                seen = dist.get(nxt)
                if seen is None:
                    dist[nxt] = depth
                    new_layer.append(nxt)
                    seen = depth
                if seen == depth:
                    parents.setdefault(nxt, []).append((node, edge))
        self.layers[side] = new_layer
        self.radius[side] = depth
        meets = [node for node in new_layer if node in other]
        if meets:
            best = min(depth + other[node] for node in meets)
            self.meeting = sorted(node for node in meets if depth + other[node] == best)
            self.done = True

    def walks(self) -> Iterator[tuple[Edge, ...]]:
        if self.source == self.target:
            yield ()
            return
        steps = shortest_path_steps(self.parents, self.meeting)
        yield from shortest_walks(steps, self.source, self.target, edge_sort_key)


_N = TypeVar("_N", bound=Hashable)
_E = TypeVar("_E")


def shortest_path_steps(
    parents: tuple[Mapping[_N, Sequence[tuple[_N, _E]]], Mapping[_N, Sequence[tuple[_N, _E]]]], meeting: Iterable[_N]
) -> dict[_N, list[tuple[_E, _N]]]:
    """The edges of every shortest path, each as a step ``node -> (edge, next node)`` oriented from the
    source to the target, from a bidirectional search's parents (per side: node -> its ``(parent,
    edge)`` one layer nearer that side's root) and the nodes where the two searches met. Generic over
    ids: strings here, the traversal index's integers in :mod:`kg_adapters.index`."""
    steps: dict[_N, list[tuple[_E, _N]]] = {}
    for side, found in enumerate(parents):
        layer = set(meeting)
        while layer:
            nearer: set[_N] = set()
            for node in layer:
                for parent, edge in found.get(node, ()):
                    if side == 0:
                        steps.setdefault(parent, []).append((edge, node))
                    else:
                        steps.setdefault(node, []).append((edge, parent))
                    nearer.add(parent)
            layer = nearer
    return steps


def shortest_walks(
    steps: Mapping[_N, Sequence[tuple[_E, _N]]], source: _N, target: _N, key: Callable[[_E], Any]
) -> Iterator[tuple[_E, ...]]:
    """Every walk from ``source`` to ``target`` over ``steps`` (:func:`shortest_path_steps`), in the
    lexicographic order of their edges' ``key`` (``edge_sort_key``: head, relation, tail). All shortest
    paths of a pair are the same whichever side a bidirectional search expands first; this order does
    not depend on it either, so every implementation answers alike (and ``max_paths`` cuts alike)."""
    ordered = {node: sorted(options, key=lambda option: key(option[0])) for node, options in steps.items()}

    def walk(node: _N) -> Iterator[tuple[_E, ...]]:
        if node == target:
            yield ()
            return
        for edge, nxt in ordered.get(node, ()):
            for rest in walk(nxt):
                yield (edge, *rest)

    return walk(source)


def all_shortest_paths(
    kg: KnowledgeGraph,
    sources: Ids,
    targets: Ids,
    *,
    max_hops: int = 4,
    direction: Direction = "both",
    max_paths: int | None = None,
) -> PathResult:
    """All shortest paths for every (source, target) pair, as RoG extracts its "truth paths": pairs in
    sources x targets order, the paths of a pair in the lexicographic order of their edges (head,
    relation, tail of the first edge, then of the second...), which ``max_paths`` cuts. Literal-valued
    edges are never walked. Cost: at most ``max_hops`` rounds of batched expansion."""
    source_ids, target_ids, hops, limit = shortest_path_arguments(kg, sources, targets, max_hops, direction, max_paths)
    searches = [_PairSearch(source, target, direction, hops) for source in source_ids for target in target_ids]
    adjacency = _Adjacency(kg)
    while True:
        needs = [(search, search.need()) for search in searches]
        active = [(search, need) for search, need in needs if need is not None]
        if not active:
            break
        wanted: dict[Direction, dict[str, None]] = {}
        for _search, (side_direction, nodes) in active:
            wanted.setdefault(side_direction, {}).update(dict.fromkeys(nodes))
        for side_direction, wanted_nodes in wanted.items():
            adjacency.fetch(side_direction, list(wanted_nodes))
        for search, _need in active:
            search.advance(adjacency)

    result = PathResult()
    for search in searches:
        for walk in search.walks():
            if limit is not None and len(result) >= limit:
                result.truncated = True
                return result
            result.append(Path(start=search.source, edges=walk))
    return result


EdgeKey = tuple[str, str, Node]
"""An edge of a walk as ``(head, relation, tail)``: walks ask for plain edges, which these identify."""


@dataclass(frozen=True)
class HopBatch:
    """One step of :func:`k_hop_walk`: the frontier ``nodes`` of ``hop`` expanded by one batched
    ``neighbors`` call, the ``edges`` seen for the first time (in walk order), the nodes first
    ``reached`` through them (the next hop's frontier, in order), and whether ``max_edges`` cut it."""

    hop: int
    nodes: tuple[str, ...]
    edges: tuple[Edge, ...]
    reached: tuple[str, ...]
    truncated: bool
    keys: tuple[EdgeKey, ...] = ()
    """The edges as ``(head, relation, tail)``, in the same order (what a ledger keys them by)."""


class WalkLedger(Protocol):
    """What a k-hop walk has done so far, kept by its caller (in memory, or committed to disk so that a
    killed walk resumes): the walk asks it and hands it each batch before yielding that batch."""

    @property
    def edge_count(self) -> int:
        """Distinct edges recorded so far."""
        ...

    def frontier(self, hop: int, limit: int | None) -> list[str]:
        """The next (at most ``limit``) nodes first reached at ``hop`` that no recorded batch expanded."""
        ...

    @property
    def seen_nodes(self) -> Container[str]:
        """The nodes reached so far (the seeds included)."""
        ...

    @property
    def seen_edges(self) -> Container[EdgeKey]:
        """The edges recorded so far, as ``(head, relation, tail)``."""
        ...

    def record(self, batch: HopBatch) -> None:
        """Keeps ``batch``: its nodes are expanded, its edges and reached nodes seen."""
        ...


class MemoryLedger:
    """The :class:`WalkLedger` of a walk held in memory (``subgraph``); ``edges`` in walk order."""

    def __init__(self, seeds: Sequence[str]) -> None:
        self.levels: list[list[str]] = [list(seeds)]
        self.expanded: dict[int, int] = {}
        self.seen_nodes: set[str] = set(seeds)
        self.edges: list[Edge] = []
        self.seen_edges: set[EdgeKey] = set()

    @property
    def edge_count(self) -> int:
        return len(self.seen_edges)

    def frontier(self, hop: int, limit: int | None) -> list[str]:
        if hop >= len(self.levels):
            return []
        start = self.expanded.get(hop, 0)
        return self.levels[hop][start : None if limit is None else start + limit]

    def record(self, batch: HopBatch) -> None:
        self.expanded[batch.hop] = self.expanded.get(batch.hop, 0) + len(batch.nodes)
        self.edges.extend(batch.edges)
        self.seen_edges.update(batch.keys)
        if batch.reached:
            while len(self.levels) <= batch.hop + 1:
                self.levels.append([])
            self.levels[batch.hop + 1].extend(batch.reached)
            self.seen_nodes.update(batch.reached)


def k_hop_walk(
    kg: KnowledgeGraph,
    ledger: WalkLedger,
    *,
    hops: int,
    direction: Direction = "both",
    relations: Sequence[str] | None = None,
    max_edges: int | None = None,
    batch_size: int | None = None,
    start_hop: int = 0,
) -> Generator[HopBatch, None, None]:
    """The breadth-first k-hop walk, resumable: hop by hop, the frontier the ``ledger`` holds is
    expanded ``batch_size`` ids at a time (all of a hop at once when None), one ``neighbors`` call
    each; every batch is recorded in the ledger, then yielded. Distinct edges come nearest first, in
    frontier order, and ``max_edges`` cuts at the same edge whatever the batch size, so a walk resumed
    from a ledger a killed walk committed (``start_hop`` = the hop of its last batch) ends identically.
    The seeds (hop 0) must be in the ledger, canonical, and the relations checked (``check_relations``)."""
    depth = check_count(hops, "hops")
    check_direction(direction)
    limit = check_count(max_edges, "max_edges")
    size = check_count(batch_size, "batch_size", minimum=1)
    hop = start_hop
    seen_edges, seen_nodes = ledger.seen_edges, ledger.seen_nodes
    while hop < (depth or 0):
        nodes = ledger.frontier(hop, size)
        if not nodes:
            if not ledger.frontier(hop + 1, 1):
                return
            hop += 1
            continue
        adjacency = kg.neighbors(nodes, direction=direction, relations=relations)
        edges: dict[EdgeKey, Edge] = {}  # keyed by plain tuples: hashing them is far cheaper than an Edge
        reached: dict[str, None] = {}
        room = None if limit is None else limit - ledger.edge_count
        truncated = False
        for node in nodes:
            for edge in adjacency.get(node, ()):
                key = (edge.head, edge.relation, edge.tail)
                if key in edges or key in seen_edges:
                    continue
                if room is not None and len(edges) >= room:
                    truncated = True
                    break
                edges[key] = edge
                nxt = edge.tail if edge.head == node else edge.head
                if isinstance(nxt, str) and nxt not in reached and nxt not in seen_nodes:
                    reached[nxt] = None
            if truncated:
                break
        batch = HopBatch(
            hop=hop,
            nodes=tuple(nodes),
            edges=tuple(edges.values()),
            reached=tuple(reached),
            truncated=truncated,
            keys=tuple(edges),
        )
        ledger.record(batch)
        yield batch
        if truncated:
            return


def k_hop_subgraph(
    kg: KnowledgeGraph,
    seeds: Ids,
    *,
    hops: int = 2,
    direction: Direction = "both",
    relations: Sequence[str] | None = None,
    max_edges: int | None = None,
) -> EdgeList:
    """Distinct edges within ``hops`` of the seeds, nearest first; one batched expansion per hop
    (:func:`k_hop_walk` over a :class:`MemoryLedger`)."""
    frontier, _, _ = subgraph_arguments(kg, seeds, hops, direction, relations, max_edges)
    ledger = MemoryLedger(frontier)
    result = EdgeList()
    for batch in k_hop_walk(kg, ledger, hops=hops, direction=direction, relations=relations, max_edges=max_edges):
        result.extend(batch.edges)
        result.truncated = batch.truncated
    return result


class _OpenGraph(KnowledgeGraph, Protocol):
    def _check_open(self) -> None: ...

    def _neighbors(self, ids: Ids, asked: NeighborOptions) -> dict[str, list[Edge]]: ...


class WalksOverNeighbors:
    """The mixin for backends that have no faster native way to walk: ``neighbors`` takes the
    Protocol's options, checks them once and hands them to the backend's batched
    ``_neighbors(ids, asked)`` (:class:`NeighborOptions`); ``paths``, ``shortest_paths`` and
    ``subgraph`` are computed by this module over it."""

    @forwards(KnowledgeGraph.neighbors)
    def neighbors(self: _OpenGraph, ids: Ids, **options: Any) -> dict[str, list[Edge]]:
        self._check_open()
        return self._neighbors(ids, neighbor_options(options))

    @forwards(KnowledgeGraph.paths)
    def paths(self: _OpenGraph, starts: Ids, relation_path: Sequence[str], **options: Any) -> PathResult:
        self._check_open()
        return constrained_paths(self, starts, relation_path, **options)

    @forwards(KnowledgeGraph.shortest_paths)
    def shortest_paths(self: _OpenGraph, sources: Ids, targets: Ids, **options: Any) -> PathResult:
        self._check_open()
        return all_shortest_paths(self, sources, targets, **options)

    @forwards(KnowledgeGraph.subgraph)
    def subgraph(self: _OpenGraph, seeds: Ids, **options: Any) -> EdgeList:
        self._check_open()
        return k_hop_subgraph(self, seeds, **options)
