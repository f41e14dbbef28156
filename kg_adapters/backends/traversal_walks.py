"""``paths``, ``shortest_paths`` and ``subgraph`` on a :class:`TraversalIndex`, on integers.

Each function answers exactly what its counterpart in :mod:`kg_adapters.algorithms` answers over
``neighbors`` (same edges, same order, same ``truncated``): the walks follow the same rules, but a
hop is a vectorised ``searchsorted`` over the whole frontier, nodes stay integers until the answer,
and ids are checked once per call. Literal tails (which the index does not hold) are read from
Oxigraph only where a walk can end on them. The caller validates the arguments and falls back to
the generic algorithms where the index cannot answer (blank nodes, CVT expansion).
"""

from __future__ import annotations

import weakref
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from kg_adapters.algorithms import shortest_path_steps, shortest_walks
from kg_adapters.backends.traversal_index import TraversalIndex
from kg_adapters.base import Direction
from kg_adapters.records import NO_QUALIFIERS, Edge, EdgeList, Literal, Node, Path, PathResult

if TYPE_CHECKING:  # numpy is imported only by a hop over a large frontier
    import numpy as np
    import numpy.typing as npt

    Ints = npt.NDArray[np.int64]
Mask = bytes
"""Per relation number, non-zero when a walk may follow it."""
Triple = tuple[int, int, int]
Item = Triple | Edge
"""An edge inside a walk: an entity-to-entity edge as integers, or a literal edge from Oxigraph."""
LiteralsOf = Callable[[int, int], list[Literal]]
"""The literal objects of (entity number, relation number), read from the store, in answer order."""

_REVERSE: dict[Direction, Direction] = {"out": "in", "in": "out", "both": "both"}
SMALL_FRONTIER = 4096
"""Frontiers up to this size are expanded node by node through the memoryviews. Both ways do
Python work per edge for the answer; on FB15k-237 2/3-hop ``paths()`` the CPU time was the same
for limits 48 to unbounded, and staying node by node spares importing numpy (~0.2 s, ~16 MiB of
peak RSS) in processes whose walks stay small. Larger frontiers take one vectorised hop."""


_new = object.__new__
_EDGE_SLOTS = tuple(getattr(Edge, name).__set__ for name in ("head", "relation", "tail", "qualifiers", "rank", "cvt"))
_PATH_SLOTS = tuple(getattr(Path, name).__set__ for name in ("start", "edges"))


def make_edge(head: str, relation: str, tail: Node) -> Edge:
    """``Edge(head=, relation=, tail=)`` without the frozen dataclass's keyword ``__init__`` (half
    the cost; answers are made of thousands of them). Same object: the conformance suite compares."""
    edge: Edge = _new(Edge)
    set_head, set_relation, set_tail, set_qualifiers, set_rank, set_cvt = _EDGE_SLOTS
    set_head(edge, head)
    set_relation(edge, relation)
    set_tail(edge, tail)
    set_qualifiers(edge, NO_QUALIFIERS)
    set_rank(edge, None)
    set_cvt(edge, ())
    return edge


def _path(start: str, edges: tuple[Edge, ...]) -> Path:
    path: Path = _new(Path)
    _PATH_SLOTS[0](path, start)
    _PATH_SLOTS[1](path, edges)
    return path


class Hops:
    """One call's view of the index: which relations it may walk and how to name the answer."""

    def __init__(self, index: TraversalIndex, literals_of: LiteralsOf | None) -> None:
        self.index = index
        self.literals_of = literals_of
        self._names: dict[int, str] = {}
        self._edges: dict[Triple, Edge] = {}

    # -- hops -----------------------------------------------------------------------------------
    def edges(
        self, nodes: Ints, direction: Direction, *, relation: int | None = None, mask: Mask | None = None
    ) -> tuple[Ints, Ints, Ints, Ints]:
        """(owner position, head, relation, tail) of the entity edges of ``nodes`` in ``direction``,
        one relation or the relations ``mask`` keeps, ordered by owner then ``edge_sort_key``
        (``both``: a self-loop once)."""
        import numpy as np

        if direction == "both":
            out = self._side(nodes, "out", relation, mask)
            into = self._side(nodes, "in", relation, mask)
            owner = np.concatenate((out[0], into[0]))
            head = np.concatenate((out[1], into[1]))
            rel = np.concatenate((out[2], into[2]))
            tail = np.concatenate((out[3], into[3]))
            order = np.lexsort((tail, rel, head, owner))
            owner, head, rel, tail = owner[order], head[order], rel[order], tail[order]
            if owner.size > 1:
                keep = np.ones(owner.size, dtype=np.bool_)
                keep[1:] = (
                    (owner[1:] != owner[:-1])
                    | (head[1:] != head[:-1])
                    | (rel[1:] != rel[:-1])
                    | (tail[1:] != tail[:-1])
                )
                owner, head, rel, tail = owner[keep], head[keep], rel[keep], tail[keep]
            return owner, head, rel, tail
        owner, head, rel, tail = self._side(nodes, direction, relation, mask)
        if direction == "in" and relation is None and owner.size > 1:
            order = np.lexsort((rel, head, owner))  # the CSR holds (tail, relation, head)
            owner, head, rel, tail = owner[order], head[order], rel[order], tail[order]
        return owner, head, rel, tail

    def _side(
        self, nodes: Ints, side: Direction, relation: int | None, mask: Mask | None
    ) -> tuple[Ints, Ints, Ints, Ints]:
        import numpy as np

        index = self.index
        keys, others = index.array(f"{side}_key"), index.array(f"{side}_other")
        width = index.width
        base = nodes * width
        if relation is not None:
            lo = keys.searchsorted(base + relation, "left")
            hi = keys.searchsorted(base + relation, "right")
        else:
            lo = keys.searchsorted(base, "left")
            hi = keys.searchsorted(base + width, "left")
        idx, owner = _gather(lo, hi)
        other = np.asarray(others[idx], dtype=np.int64)
        node = nodes[owner]
        if relation is not None:
            rel = np.full(idx.size, relation, dtype=np.int64)
        else:
            rel = np.asarray(keys[idx], dtype=np.int64) - node * width
            if mask is not None:
                keep = np.frombuffer(mask, dtype=np.bool_)[rel]
                owner, node, rel, other = owner[keep], node[keep], rel[keep], other[keep]
        if side == "out":
            return owner, node, rel, other
        return owner, other, rel, node

    def node_edges(self, node: int, direction: Direction, relation: int | None, mask: Mask | None) -> list[Triple]:
        """The entity edges of one node as :meth:`edges` orders them, read through the memoryviews."""
        if direction == "both":
            found = set(self._node_side(node, "out", relation, mask))
            found.update(self._node_side(node, "in", relation, mask))
            return sorted(found)
        edges = self._node_side(node, direction, relation, mask)
        if direction == "in" and relation is None and len(edges) > 1:
            edges.sort()
        return edges

    def _node_side(self, node: int, side: Direction, relation: int | None, mask: Mask | None) -> list[Triple]:
        views = self.index.views
        keys, others = (views["out_key"], views["out_other"]) if side == "out" else (views["in_key"], views["in_other"])
        width = self.index.width
        base = node * width
        if relation is not None:
            lo = bisect_left(keys, base + relation)
            hi = bisect_right(keys, base + relation, lo)
            if side == "out":
                return [(node, relation, other) for other in others[lo:hi].tolist()]
            return [(other, relation, node) for other in others[lo:hi].tolist()]
        lo = bisect_left(keys, base)
        hi = bisect_left(keys, base + width, lo)
        pairs = zip([key - base for key in keys[lo:hi].tolist()], others[lo:hi].tolist(), strict=True)
        if mask is not None:
            pairs = ((r, other) for r, other in pairs if mask[r])  # type: ignore[assignment]
        if side == "out":
            return [(node, r, other) for r, other in pairs]
        return [(other, r, node) for r, other in pairs]

    def side_lists(
        self, nodes: list[int], side: Direction, relation: int | None, mask: Mask | None
    ) -> list[list[Triple]]:
        """Per node, its entity edges on one side (``out``/``in``) in CSR order."""
        if len(nodes) <= SMALL_FRONTIER:
            return [self._node_side(node, side, relation, mask) for node in nodes]
        import numpy as np

        owner, head, rel, tail = self._side(np.array(nodes, dtype=np.int64), side, relation, mask)
        lists: list[list[Triple]] = [[] for _ in nodes]
        for position, h, r, t in zip(owner.tolist(), head.tolist(), rel.tolist(), tail.tolist(), strict=True):
            lists[position].append((h, r, t))
        return lists

    def _node_literal_relations(self, node: int, relation: int | None, mask: Mask | None) -> list[int]:
        keys = self.index.views["out_extra"]
        width = self.index.width
        base = node * width
        if relation is not None:
            lo = bisect_left(keys, base + relation)
            return [relation] if lo < len(keys) and keys[lo] == base + relation else []
        lo = bisect_left(keys, base)
        hi = bisect_left(keys, base + width, lo)
        found = [key - base for key in keys[lo:hi].tolist()]
        return found if mask is None else [r for r in found if mask[r]]

    def adjacency(
        self,
        nodes: list[int],
        direction: Direction,
        *,
        relation: int | None = None,
        mask: Mask | None = None,
        literals: bool,
    ) -> list[list[Item]]:
        """Per node of ``nodes``: its edges as ``neighbors`` orders them (literal ones included when
        ``literals`` and the direction walks out). Small frontiers go node by node through the
        memoryviews, large ones through one vectorised hop."""
        lists: list[list[Item]]
        if len(nodes) <= SMALL_FRONTIER:
            lists = [list(self.node_edges(node, direction, relation, mask)) for node in nodes]
        else:
            import numpy as np

            array = np.array(nodes, dtype=np.int64)
            owner, head, rel, tail = self.edges(array, direction, relation=relation, mask=mask)
            lists = [[] for _ in nodes]
            for position, h, r, t in zip(owner.tolist(), head.tolist(), rel.tolist(), tail.tolist(), strict=True):
                lists[position].append((h, r, t))
        if (
            literals
            and direction != "in"
            and self.literals_of is not None
            and (relation is None or relation in self.index.literal_relations)
        ):
            for position, node in enumerate(nodes):
                relation_numbers = self._node_literal_relations(node, relation, mask)
                if relation_numbers:
                    lists[position] = self._with_literals(node, lists[position], relation_numbers)
        return lists

    def _with_literals(self, node: int, items: list[Item], relation_numbers: list[int]) -> list[Item]:
        """``items`` (entity edges, ``edge_sort_key`` order) with ``node``'s literal edges of the
        relations (ascending) merged in: after the node's entity edges of the same relation, before
        its next relation; each relation's literals come in ``node_sort_key`` order."""
        assert self.literals_of is not None
        head, relations = self.name(node), self.index.relations
        keys = [(item[0], item[1]) for item in items]  # type: ignore[index]
        merged = list(items)
        for r in reversed(relation_numbers):  # from the last place back: earlier places stay valid
            values = self.literals_of(node, r)
            if values:
                at = bisect_right(keys, (node, r))
                merged[at:at] = [make_edge(head, relations[r], value) for value in values]
        return merged

    # -- answers ------------------------------------------------------------------------------
    def name(self, number: int) -> str:
        found = self._names.get(number)
        if found is None:
            found = self._names[number] = self.index.name(number)
        return found

    def prefetch(self, numbers: list[int]) -> None:
        missing = [n for n in numbers if n not in self._names]
        if missing:
            self._names.update(self.index.names(missing))

    def answer_edges(self, items: Sequence[Item]) -> list[Edge]:
        """The records of ``items``: ids turned into strings once per call, one ``Edge`` per edge."""
        triples = [item for item in items if isinstance(item, tuple)]
        self.prefetch([n for triple in triples for n in (triple[0], triple[2])])
        names, relations, made = self._names, self.index.relations, self._edges
        for triple in triples:
            if triple not in made:
                head, relation, tail = triple
                made[triple] = make_edge(names[head], relations[relation], names[tail])
        return [made[item] if isinstance(item, tuple) else item for item in items]

    def answer_paths(self, starts: list[str], walks: list[tuple[Item, ...]]) -> list[Path]:
        items = [item for walk in walks for item in walk]
        self.answer_edges(items)
        made: dict[Item, Edge] = self._edges  # type: ignore[assignment]
        for item in items:
            if isinstance(item, Edge):
                made[item] = item  # literal edges stand for themselves
        lookup = made.__getitem__
        return [_path(start, tuple(map(lookup, walk))) for start, walk in zip(starts, walks, strict=True)]


def _gather(lo: Ints, hi: Ints) -> tuple[Ints, Ints]:
    """The positions in ``[lo[i], hi[i])`` for every i, in order, and the i each came from."""
    import numpy as np

    counts = hi - lo
    total = int(counts.sum()) if counts.size else 0
    if total == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    owner = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    starts = lo - (np.cumsum(counts) - counts)
    return np.arange(total, dtype=np.int64) + starts[owner], owner


def _ends(adjacency: dict[int, list[Triple]], step: Direction) -> Iterator[int]:
    """The nodes the entity edges of each node lead to, in order."""
    for node, triples in adjacency.items():
        if step == "out":
            yield from (t for _, _, t in triples)
        elif step == "in":
            yield from (h for h, _, _ in triples)
        else:
            yield from (t if h == node else h for h, _, t in triples)


def _next(item: Item, node: int | str, step: Direction) -> Node | int:
    """The node an edge leads to from ``node`` (as ``algorithms.other_end`` and its steps)."""
    if isinstance(item, tuple):
        if step == "out":
            return item[2]
        if step == "in":
            return item[0]
        return item[2] if item[0] == node else item[0]
    return item.tail


# ------------------------------------------------------------------------------------- paths
class _Full(Exception):
    pass


def constrained_paths(
    hops: Hops,
    starts: list[str],
    start_numbers: list[int | None],
    relations: list[int | None],
    directions: list[Direction],
    limit: int | None,
    simple: bool,
) -> PathResult:
    """``algorithms.constrained_paths`` (no CVT steps) on the index."""
    depth_count = len(relations)
    layers: list[dict[int, list[Item]]] = []
    frontier = [n for n in dict.fromkeys(start_numbers) if n is not None]
    for depth, (relation, direction) in enumerate(zip(relations, directions, strict=True)):
        adjacency: dict[int, list[Item]] = {}
        last = depth == depth_count - 1
        if relation is not None and frontier:
            lists = hops.adjacency(frontier, direction, relation=relation, literals=last)
            adjacency = dict(zip(frontier, lists, strict=True))
        layers.append(adjacency)
        if not last:  # before the last hop every item is an entity edge (no literals asked for)
            frontier = list(dict.fromkeys(_ends(adjacency, direction)))  # type: ignore[arg-type]

    alive: list[set[int]] = [set() for _ in range(depth_count)]
    alive[-1] = {node for node, edges in layers[-1].items() if edges}
    for depth in range(depth_count - 2, -1, -1):
        step, ahead, here = directions[depth], alive[depth + 1], alive[depth]
        for node, edges in layers[depth].items():
            triples: list[Triple] = edges  # type: ignore[assignment]
            if step == "out":
                found = any(t in ahead for _, _, t in triples)
            elif step == "in":
                found = any(h in ahead for h, _, _ in triples)
            else:
                found = any((t if h == node else h) in ahead for h, _, t in triples)
            if found:
                here.add(node)

    result = PathResult()
    for start, number in zip(starts, start_numbers, strict=True):
        if number is None or number not in alive[0]:
            continue
        walks: list[tuple[Item, ...]] = []
        room = limit - len(result) if limit is not None else -1
        try:
            _walk(layers, alive, directions, number, 0, (), (number,) if simple else None, walks, room)
        except _Full:
            result.truncated = True
        result.extend(hops.answer_paths([start] * len(walks), walks))
        if result.truncated:
            return result
    return result


def _walk(
    layers: list[dict[int, list[Item]]],
    alive: list[set[int]],
    steps: list[Direction],
    node: int,
    depth: int,
    prefix: tuple[Item, ...],
    visited: tuple[int | Node, ...] | None,
    out: list[tuple[Item, ...]],
    room: int,
) -> None:
    last = depth == len(layers) - 1
    step = steps[depth]
    ahead = alive[depth + 1] if not last else set()
    for item in layers[depth].get(node, ()):
        nxt = _next(item, node, step)
        if visited is not None and nxt in visited:
            continue
        if last:
            if len(out) == room:
                raise _Full
            out.append((*prefix, item))
        elif isinstance(nxt, int) and nxt in ahead:
            _walk(
                layers,
                alive,
                steps,
                nxt,
                depth + 1,
                (*prefix, item),
                None if visited is None else (*visited, nxt),
                out,
                room,
            )


# ---------------------------------------------------------------------------- shortest paths
DEGREE_BY_NUMPY = 512
OFFSETS_FROM_EDGES = 1 << 16
"""Indexes with at least this many edges read node ranges from :class:`NodeRanges`."""
_BLOCK_BITS = 10
_KEY_ARRAYS = {"out": "out_key", "in": "in_key", "literal": "out_extra"}


class NodeRanges:
    """Where each node's keys start, per side (``out``/``in``, and ``literal`` for the relations with
    literal objects): node n's keys are ``[start(n), start(n + 1))``, two memory reads where a
    ``bisect`` over the keys takes ~log2(edges) scattered ones (~2 us at 4M edges, growing with the
    graph). Made from the index's keys by one ``searchsorted`` per block of 1,024 nodes, the first
    time a walk reaches the block, and kept while the index is open: a first query costs no scan
    of the whole index, and memory follows the nodes walked (at most 8 bytes a node and side)."""

    def __init__(self, index: TraversalIndex) -> None:
        self.index = index
        self.blocks: dict[str, dict[int, memoryview]] = {side: {} for side in _KEY_ARRAYS}

    def of(self, side: str, node: int) -> tuple[int, int]:
        number = node >> _BLOCK_BITS
        block = self.blocks[side].get(number)
        if block is None:
            block = self._make(side, number)
        at = node - (number << _BLOCK_BITS)
        return block[at], block[at + 1]

    def _make(self, side: str, number: int) -> memoryview:
        import numpy as np

        start = number << _BLOCK_BITS
        stop = min(start + (1 << _BLOCK_BITS), self.index.entity_count)
        bounds = np.arange(start, stop + 1, dtype=np.int64) * self.index.width
        array: npt.NDArray[Any] = self.index.array(_KEY_ARRAYS[side]).searchsorted(bounds)
        block = self.blocks[side][number] = array.data
        return block


_RANGES: weakref.WeakKeyDictionary[TraversalIndex, NodeRanges] = weakref.WeakKeyDictionary()


def node_ranges(index: TraversalIndex) -> NodeRanges | None:
    """The index's :class:`NodeRanges`; None for small indexes, whose walks stay without numpy."""
    if index.edge_count < OFFSETS_FROM_EDGES:
        return None
    found = _RANGES.get(index)
    if found is None:
        found = _RANGES[index] = NodeRanges(index)
    return found


"""Frontiers of more nodes than this have their total degree counted by one vectorised
``searchsorted`` rather than a ``bisect`` per node."""

HUB_DEGREE = 128
"""On the search's last round, nodes of higher degree are hubs: their edges are not read (see ``_join``)."""
JOIN_SAVING = 16
"""The last round joins the two frontiers when the hubs it would not read have more edges than this
many per node of the other frontier (each of which the join must look up)."""

Reached = list[tuple[int, int, int, bool]] | tuple["Ints", "Ints", "Ints", "Ints", "Ints"]
"""The edges one expansion followed to new nodes: ``(node, relation, next node, forwards)`` while
small, else numpy arrays (node, head, relation, tail, next node)."""


def shortest_paths(
    hops: Hops,
    pairs: list[tuple[str, str, int | None, int | None]],
    max_hops: int,
    direction: Direction,
    limit: int | None,
    mask: Mask | None,
) -> PathResult:
    """``algorithms.all_shortest_paths`` on the index: a bidirectional level-synchronous BFS per
    (source, target) pair that expands the side whose frontier has the smaller total degree (read
    from the CSR keys; ties: the source), so a hub is expanded only when the other side costs more.
    Which side grows first changes neither the paths found nor their order (``shortest_walks``)."""
    starts: list[str] = []
    walks: list[tuple[Item, ...]] = []
    truncated = False
    for source, target, s, t in pairs:
        for walk in _pair_walks(hops, source == target, s, t, max_hops, direction, mask):
            if limit is not None and len(walks) >= limit:
                truncated = True
                break
            starts.append(source)
            walks.append(walk)
        if truncated:
            break
    result = PathResult(hops.answer_paths(starts, walks))
    result.truncated = truncated
    return result


def _pair_walks(
    hops: Hops, same: bool, s: int | None, t: int | None, max_hops: int, direction: Direction, mask: Mask | None
) -> Iterator[tuple[Triple, ...]]:
    if same:
        return iter([()])
    if s is None or t is None:
        return iter(())
    searches = (_Search(hops, s, direction, mask), _Search(hops, t, _REVERSE[direction], mask))
    meeting: list[int] = []
    side, depth = 0, 0
    while searches[0].radius + searches[1].radius < max_hops and searches[0].alive and searches[1].alive:
        side = _cheaper_side(searches)
        final = searches[0].radius + searches[1].radius + 1 == max_hops
        meeting, depth = searches[side].expand(searches[1 - side], final=final)
        if meeting:
            break
    if not meeting:
        return iter(())
    depths = (searches[0].radius, depth) if side == 0 else (depth, searches[1].radius)
    parents = (searches[0].parents(meeting, depths[0]), searches[1].parents(meeting, depths[1]))
    steps = shortest_path_steps(parents, meeting)
    hops.prefetch([n for options in steps.values() for (h, _, t_), _ in options for n in (h, t_)])
    names, relations = hops._names, hops.index.relations

    def key(triple: Triple) -> tuple[str, str, tuple[int, str, str, str]]:
        return (names[triple[0]], relations[triple[1]], (0, names[triple[2]], "", ""))  # edge_sort_key

    return shortest_walks(steps, s, t, key)


def _cheaper_side(searches: tuple[_Search, _Search]) -> int:
    """The side whose frontier has the smaller total degree (ties: the source). The side with fewer
    nodes is counted first and the other only until it exceeds that, so a hub on the side not
    expanded is never counted in full."""
    first = 0 if len(searches[0].layers[-1]) <= len(searches[1].layers[-1]) else 1
    bound = searches[first].degree()
    other = searches[1 - first].degree(bound)
    if other < bound:
        return 1 - first
    return 0 if other == bound else first


class _Search:
    """One side of the bidirectional search: layer k holds the nodes at distance k from the root, and
    ``reached[k - 1]`` the edges that reached them. Small expansions run node by node in Python over
    the key ranges counted for the degree; a frontier of total degree above ``SMALL_FRONTIER`` (or of
    more than ``DEGREE_BY_NUMPY`` nodes) is expanded on numpy arrays, where a hub costs a few
    vectorised passes instead of Python work per edge."""

    def __init__(self, hops: Hops, root: int, direction: Direction, mask: Mask | None) -> None:
        index = hops.index
        self.hops = hops
        self.mask = mask
        self.width = index.width
        self.sides: tuple[Direction, ...] = ("out", "in") if direction == "both" else (direction,)
        self.views = [(index.views[f"{side}_key"], index.views[f"{side}_other"], side == "out") for side in self.sides]
        self.layers: list[list[int] | Ints] = [[root]]
        self.reached: list[Reached] = []
        self.depth: dict[int, int] | None = {root: 0}
        """Every node's distance from the root while all layers are Python lists, else None."""
        self._spans: list[tuple[int, int, int, int]] = []
        """(node, view, lo, hi): the frontier's key ranges counted so far, in frontier order."""
        self._counted = 0
        self._degree = 0
        self._exact = False

    @property
    def radius(self) -> int:
        return len(self.layers) - 1

    @property
    def alive(self) -> bool:
        return len(self.layers[-1]) > 0

    def degree(self, bound: int | None = None) -> int:
        """The frontier's total degree in this side's direction (CSR key ranges, hidden relations
        included: what expanding it reads); counting stops once it exceeds ``bound`` (the sum so far,
        > ``bound``, is returned)."""
        frontier = self.layers[-1]
        if self._exact:
            return self._degree
        if not isinstance(frontier, list) or len(frontier) > DEGREE_BY_NUMPY:
            import numpy as np

            starts = np.asarray(frontier, dtype=np.int64) * self.width
            total = 0
            for side in self.sides:
                array = self.hops.index.array(f"{side}_key")
                total += int((array.searchsorted(starts + self.width) - array.searchsorted(starts)).sum())
            self._degree, self._exact = total, True
            return total
        ranges = node_ranges(self.hops.index)
        width, spans, views, total = self.width, self._spans, self.views, self._degree
        counted = self._counted
        if ranges is not None:
            of = ranges.of
            while counted < len(frontier) and (bound is None or total <= bound):
                node = frontier[counted]
                for view, side in enumerate(self.sides):
                    lo, hi = of(side, node)
                    if hi > lo:
                        spans.append((node, view, lo, hi))
                        total += hi - lo
                counted += 1
        while counted < len(frontier) and (bound is None or total <= bound):
            node = frontier[counted]
            base = node * width
            for view, (keys, _, _) in enumerate(views):
                lo = bisect_left(keys, base)
                probe = lo + 8  # most nodes have fewer edges: look there before a full bisect
                if probe >= len(keys) or keys[probe] >= base + width:
                    hi = bisect_left(keys, base + width, lo, min(probe, len(keys)))
                else:
                    hi = bisect_left(keys, base + width, probe + 1)
                if hi > lo:
                    spans.append((node, view, lo, hi))
                    total += hi - lo
            counted += 1
        self._counted, self._degree = counted, total
        self._exact = counted == len(frontier)
        return total

    def expand(self, other: _Search, *, final: bool) -> tuple[list[int], int]:
        """Adds the next layer (with ``final``, the last the search may add, only the nodes ``other``
        has reached). Returns the new nodes ``other`` has reached, those nearest its root (where the
        shortest paths meet), and their distance from that root; ``[]`` if none."""
        lists = self._listed() and other._listed()
        found = self._join(other) if final and lists and SMALL_FRONTIER > 0 else None
        if found is None:
            small = lists and self.degree() <= SMALL_FRONTIER
            found = self._expand_small(other, final) if small else self._expand_large(other)
        self._spans, self._counted, self._degree, self._exact = [], 0, 0, False
        return found

    def _listed(self) -> bool:
        """Whether the search is still on Python lists, and its frontier small enough to stay there."""
        frontier = self.layers[-1]
        return self.depth is not None and isinstance(frontier, list) and len(frontier) <= DEGREE_BY_NUMPY

    def _spans_by_node(self) -> dict[int, list[tuple[int, int, int]]]:
        self.degree()
        found: dict[int, list[tuple[int, int, int]]] = {}
        for node, view, lo, hi in self._spans:
            found.setdefault(node, []).append((view, lo, hi))
        return found

    def _join(self, other: _Search) -> tuple[list[int], int] | None:
        """The last round as a join of the two frontiers: the edges between them are the shortest
        paths' middle edges (an edge to a node nearer the other root would have met earlier). Each
        edge is found from an end of degree <= ``HUB_DEGREE``, or, between two hubs, by a ``bisect``
        per relation of one hub, so no hub's edges are read. None when the scans would read more
        than ``SMALL_FRONTIER`` edges (the caller expands instead)."""
        mine = self._spans_by_node()
        hubs_here = {node for node, spans in mine.items() if sum(hi - lo for _, lo, hi in spans) > HUB_DEGREE}
        hub_edges = sum(hi - lo for node in hubs_here for _, lo, hi in mine[node])
        if hub_edges <= JOIN_SAVING * len(other.layers[-1]):
            return None  # reading this side's hubs costs less than counting the other frontier's edges
        theirs = other._spans_by_node()
        hubs = [
            hubs_here,
            {node for node, spans in theirs.items() if sum(hi - lo for _, lo, hi in spans) > HUB_DEGREE},
        ]
        hub_edges += sum(hi - lo for node in hubs[1] for _, lo, hi in theirs[node])
        if self._degree + other._degree - hub_edges > SMALL_FRONTIER:
            return None
        assert self.depth is not None
        width, mask = self.width, self.mask
        found: dict[tuple[int, int, int, bool], None] = {}
        ends = (set(other.layers[-1]), set(self.layers[-1]))
        for flip, (search, spans_of, skip, targets) in enumerate(
            ((self, mine, hubs[0], ends[0]), (other, theirs, hubs[1], ends[1]))
        ):
            views = search.views
            for node, spans in spans_of.items():
                if node in skip:
                    continue
                base = node * width
                for view, lo, hi in spans:
                    keys, others, forwards = views[view]
                    for key, nxt in zip(keys[lo:hi].tolist(), others[lo:hi].tolist(), strict=True):
                        if nxt in targets and (mask is None or mask[key - base]):
                            # as this side walks: node --(relation)--> nxt, the triple's direction by ``forwards``
                            found[
                                (nxt, key - base, node, not forwards) if flip else (node, key - base, nxt, forwards)
                            ] = None
        for node in hubs[0]:
            base = node * width
            for view, lo, hi in mine[node]:
                keys, others, forwards = self.views[view]
                for relation, start, stop in _segments(keys, base, lo, hi):
                    if mask is not None and not mask[relation]:
                        continue
                    for hub in hubs[1]:
                        at = bisect_left(others, hub, start, stop)
                        if at < stop and others[at] == hub:
                            found[(node, relation, hub, forwards)] = None
        reached = list(found)
        meets = list(dict.fromkeys(entry[2] for entry in reached))
        self.depth.update(dict.fromkeys(meets, len(self.layers)))
        self.layers.append(meets)
        self.reached.append(reached)
        return (meets, other.radius) if meets else ([], 0)

    def _expand_small(self, other: _Search, final: bool) -> tuple[list[int], int]:
        depth, there = self.depth, other.depth
        assert depth is not None and there is not None
        reached: list[tuple[int, int, int, bool]] = []
        new: dict[int, None] = {}
        width, mask, views = self.width, self.mask, self.views
        for node, view, lo, hi in self._spans:
            keys, others, forwards = views[view]
            base = node * width
            for key, nxt in zip(keys[lo:hi].tolist(), others[lo:hi].tolist(), strict=True):
                if nxt in depth or (final and nxt not in there):
                    continue
                relation = key - base
                if mask is None or mask[relation]:
                    reached.append((node, relation, nxt, forwards))
                    new[nxt] = None
        radius = len(self.layers)
        self.layers.append(list(new))
        self.reached.append(reached)
        depth.update(dict.fromkeys(new, radius))
        meets = [node for node in new if node in there]
        if not meets:
            return [], 0
        best = min(there[node] for node in meets)
        return [node for node in meets if there[node] == best], best

    def _expand_large(self, other: _Search) -> tuple[list[int], int]:
        import numpy as np

        frontier = np.asarray(self.layers[-1], dtype=np.int64)
        parts = [self.hops._side(frontier, side, None, self.mask) for side in self.sides]
        node = np.concatenate([frontier[owner] for owner, _, _, _ in parts])
        head = np.concatenate([part[1] for part in parts])
        rel = np.concatenate([part[2] for part in parts])
        tail = np.concatenate([part[3] for part in parts])
        ends = [part[3] if side == "out" else part[1] for side, part in zip(self.sides, parts, strict=True)]
        nxt = np.concatenate(ends)
        keep = ~self._holds(nxt)
        node, head, rel, tail, nxt = node[keep], head[keep], rel[keep], tail[keep], nxt[keep]
        new = np.unique(nxt)
        self.layers.append(new)
        self.reached.append((node, head, rel, tail, nxt))
        self.depth = None
        for distance, layer in enumerate(other.layers):
            hit = _member(_sorted(layer), new)
            if hit.any():
                return [int(n) for n in new[hit].tolist()], distance
        return [], 0

    def _holds(self, values: Ints) -> npt.NDArray[np.bool_]:
        import numpy as np

        found = np.zeros(values.size, dtype=np.bool_)
        for layer in self.layers:
            found |= _member(_sorted(layer), values)
        return found

    def parents(self, nodes: list[int], distance: int) -> dict[int, list[tuple[int, Triple]]]:
        """node -> its ``(parent, triple)`` one layer nearer the root, for ``nodes`` (at ``distance``)
        and, layer by layer, the parents that lead to them: only the edges of shortest paths."""
        found: dict[int, list[tuple[int, Triple]]] = {}
        wanted = set(nodes)
        for radius in range(distance, 0, -1):
            reached, nearer = self.reached[radius - 1], set()
            if isinstance(reached, list):
                for node, relation, nxt, forwards in reached:
                    if nxt in wanted:
                        triple = (node, relation, nxt) if forwards else (nxt, relation, node)
                        found.setdefault(nxt, []).append((node, triple))
                        nearer.add(node)
            else:
                import numpy as np

                node_a, head_a, rel_a, tail_a, nxt_a = reached
                hit = _member(np.array(sorted(wanted), dtype=np.int64), nxt_a)
                columns = (a[hit].tolist() for a in (node_a, head_a, rel_a, tail_a, nxt_a))
                for node, h, r, t, nxt in zip(*columns, strict=True):
                    found.setdefault(nxt, []).append((node, (h, r, t)))
                    nearer.add(node)
            wanted = nearer
        return found


def _segments(keys: memoryview, base: int, lo: int, hi: int) -> Iterator[tuple[int, int, int]]:
    """(relation, start, stop) of each relation's run in the sorted keys ``[lo, hi)`` of one node."""
    while lo < hi:
        relation = keys[lo] - base
        stop = bisect_left(keys, base + relation + 1, lo, hi)
        yield relation, lo, stop
        lo = stop


def _sorted(layer: list[int] | Ints) -> Ints:
    """A layer as a sorted numpy array (layers made by numpy are already)."""
    import numpy as np

    return np.array(sorted(layer), dtype=np.int64) if isinstance(layer, list) else layer


def _member(sorted_values: Ints, values: Ints) -> npt.NDArray[np.bool_]:
    """Which of ``values`` are in ``sorted_values``."""
    import numpy as np

    if sorted_values.size == 0:
        return np.zeros(values.size, dtype=np.bool_)
    at = np.minimum(sorted_values.searchsorted(values), sorted_values.size - 1)
    found: npt.NDArray[np.bool_] = sorted_values[at] == values
    return found


# ---------------------------------------------------------------------------------- subgraph
def k_hop_subgraph(
    hops: Hops,
    seeds: list[str],
    seed_numbers: list[int | None],
    depth: int,
    direction: Direction,
    mask: Mask | None,
    limit: int | None,
) -> EdgeList:
    """``algorithms.k_hop_subgraph`` on the index (literal edges included, as ``neighbors`` gives them).
    An edge can only be met twice when the walk goes ``both`` ways (from its head and from its tail),
    so only then are edges checked for repeats; the last hop's ends are not collected."""
    items: list[Item] = []
    frontier = [n for n in seed_numbers if n is not None]
    seen_nodes: set[int] = set(frontier)
    seen_triples: set[Item] | None = set() if direction == "both" else None
    truncated = False
    for hop in range(depth):
        if not frontier:
            break
        last = hop == depth - 1
        lists = _adjacency(hops, frontier, direction, mask)
        reached: list[int] = []
        for node, edges in zip(frontier, lists, strict=True):
            if seen_triples is not None:
                edges = [item for item in edges if item not in seen_triples]
                seen_triples.update(edges)
            if limit is not None and len(items) + len(edges) > limit:
                edges = edges[: limit - len(items)]
                truncated = True
            items.extend(edges)
            if not last:
                for item in edges:
                    if item.__class__ is tuple:
                        h, _, t = item
                        nxt = t if direction == "out" else h if direction == "in" else t if h == node else h
                        if nxt not in seen_nodes:
                            seen_nodes.add(nxt)
                            reached.append(nxt)
            if truncated:
                break
        if truncated:
            break
        frontier = reached
    result = EdgeList(_distinct_edges(hops, items))
    result.truncated = truncated
    return result


def _adjacency(hops: Hops, nodes: list[int], direction: Direction, mask: Mask | None) -> list[list[Item]]:
    """``hops.adjacency(nodes, direction, mask=mask, literals=True)``, each node's ranges read from
    the :class:`NodeRanges` where the index has them (two reads, not two bisects per side)."""
    ranges = node_ranges(hops.index)
    if ranges is None or len(nodes) > SMALL_FRONTIER:
        return hops.adjacency(nodes, direction, mask=mask, literals=True)
    index, of = hops.index, ranges.of
    width, views = index.width, index.views
    out_keys, out_others, in_keys, in_others = views["out_key"], views["out_other"], views["in_key"], views["in_other"]
    literal_keys = views["out_extra"]
    literals = direction != "in" and hops.literals_of is not None
    lists: list[list[Item]] = []
    for node in nodes:
        base = node * width
        triples: list[Triple] = []
        if direction != "in":
            lo, hi = of("out", node)
            pairs = zip(out_keys[lo:hi].tolist(), out_others[lo:hi].tolist(), strict=True)
            triples = [(node, key - base, other) for key, other in pairs if mask is None or mask[key - base]]
        if direction != "out":
            lo, hi = of("in", node)
            pairs = zip(in_keys[lo:hi].tolist(), in_others[lo:hi].tolist(), strict=True)
            ins = [(other, key - base, node) for key, other in pairs if mask is None or mask[key - base]]
            triples = sorted(ins) if direction == "in" else sorted({*triples, *ins})
        items = cast(list[Item], triples)
        if literals:
            lo, hi = of("literal", node)
            if hi > lo:
                found = [key - base for key in literal_keys[lo:hi].tolist() if mask is None or mask[key - base]]
                if found:
                    items = hops._with_literals(node, items, found)
        lists.append(items)
    return lists


def _distinct_edges(hops: Hops, items: list[Item]) -> list[Edge]:
    """The records of ``items`` (distinct edges): one ``Edge`` each, made inline (no cache to fill)."""
    triples = [item for item in items if item.__class__ is tuple]
    names = hops.index.names(list({n for h, _, t in triples for n in (h, t)}))
    relations = hops.index.relations
    new, edge_class = _new, Edge
    set_head, set_relation, set_tail, set_qualifiers, set_rank, set_cvt = _EDGE_SLOTS
    made: list[Edge] = []
    append = made.append
    for item in items:
        if item.__class__ is tuple:
            h, r, t = item
            edge = new(edge_class)
            set_head(edge, names[h])
            set_relation(edge, relations[r])
            set_tail(edge, names[t])
            set_qualifiers(edge, NO_QUALIFIERS)
            set_rank(edge, None)
            set_cvt(edge, ())
            append(edge)
        else:
            append(item)  # type: ignore[arg-type]
    return made
