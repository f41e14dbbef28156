"""Reading the edges of a node or of a whole frontier from the CSR arrays (:class:`Hops`, one call's
view), and a node's literal runs.
"""

from __future__ import annotations

import itertools
import operator
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from kg_adapters.base import Direction
from kg_adapters.index import tuning
from kg_adapters.index.read import TraversalIndex
from kg_adapters.index.records import make_edge, make_path
from kg_adapters.records import Edge, Literal, Path

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
Step = int | Triple | Edge
"""One edge of a relation hop inside ``constrained_paths``: its other end (``out``/``in``), its
(head, relation, tail) numbers (``both``), or a literal edge (last hop only)."""

_head_relation = operator.itemgetter(0, 1)


class Hops:
    """One call's view of the index: which relations it may walk and how to name the answer."""

    def __init__(self, index: TraversalIndex, literals_of: LiteralsOf | None) -> None:
        self.index = index
        self.literals_of = literals_of
        self.names = index.name_cache
        """Entity numbers to ids (``names[number]``), the index's cache across calls."""
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
        if relation is not None:
            lo = keys.searchsorted(nodes * width + relation, "left")
            hi = keys.searchsorted(nodes * width + relation, "right")
        else:
            starts = index.array(f"{side}_start")
            lo, hi = starts[nodes].astype(np.int64), starts[nodes + 1].astype(np.int64)
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
        keys, others, starts = self.index.sides[side]
        lo, hi = starts[node], starts[node + 1]
        if lo == hi:
            return []
        base = node * self.index.width
        if relation is not None:
            lo, hi = _run(keys, base + relation, lo, hi)
            if side == "out":
                return [(node, relation, other) for other in others[lo:hi].tolist()]
            return [(other, relation, node) for other in others[lo:hi].tolist()]
        pairs = zip([key - base for key in keys[lo:hi].tolist()], others[lo:hi].tolist(), strict=True)
        if mask is not None:
            pairs = ((r, other) for r, other in pairs if mask[r])  # type: ignore[assignment]
        if side == "out":
            return [(node, r, other) for r, other in pairs]
        return [(other, r, node) for r, other in pairs]

    def relation_steps(
        self, nodes: list[int], direction: Direction, relation: int, *, literals: bool
    ) -> list[list[Step]]:
        """Per node of ``nodes``, its edges of one relation as ``neighbors`` orders them: the other
        ends (``out``/``in``, ascending), or (head, relation, tail) triples (``both``); with
        ``literals`` and a direction walking out, the node's literal edges of the relation after
        the entity edges they sort after."""
        lists: list[list[Step]]
        if direction == "both":
            lists = []
            for node, outs, ins in zip(
                nodes,
                self.relation_ends(nodes, "out", relation),
                self.relation_ends(nodes, "in", relation),
                strict=True,
            ):
                found = [(node, relation, t) for t in outs]
                if ins:
                    found = sorted({*found, *[(h, relation, node) for h in ins]})
                lists.append(found)  # type: ignore[arg-type]
        else:
            lists = self.relation_ends(nodes, direction, relation)  # type: ignore[assignment]
        if (
            not literals
            or direction == "in"
            or self.literals_of is None
            or relation not in self.index.literal_relations
        ):
            return lists
        literals_of, names, name = self.literals_of, self.names, self.index.relations[relation]
        for node, steps in zip(nodes, lists, strict=True):
            values = literals_of(node, relation)
            if values:
                head = names[node]
                edges = [make_edge(head, name, value) for value in values]
                # after the entity edges whose head sorts first (out: all of them; both: up to node)
                at = len(steps) if direction == "out" else bisect_left(cast(list[Triple], steps), (node + 1, -1, -1))
                steps[at:at] = edges
        return lists

    def relation_ends(self, nodes: list[int], side: Direction, relation: int) -> list[list[int]]:
        """Per node of ``nodes``, the other ends of its ``side`` (``out``/``in``) edges of one
        relation, ascending (CSR order)."""
        if len(nodes) > tuning.SMALL_FRONTIER:
            import numpy as np

            owner, head, _, tail = self._side(np.array(nodes, dtype=np.int64), side, relation, None)
            lists: list[list[int]] = [[] for _ in nodes]
            for position, other in zip(owner.tolist(), (tail if side == "out" else head).tolist(), strict=True):
                lists[position].append(other)
            return lists
        return _relation_ends(self.index, nodes, side, relation)

    def side_lists(
        self, nodes: list[int], side: Direction, relation: int | None, mask: Mask | None
    ) -> list[list[Triple]]:
        """Per node, its entity edges on one side (``out``/``in``) in CSR order."""
        if len(nodes) <= tuning.SMALL_FRONTIER:
            return [self._node_side(node, side, relation, mask) for node in nodes]
        import numpy as np

        owner, head, rel, tail = self._side(np.array(nodes, dtype=np.int64), side, relation, mask)
        lists: list[list[Triple]] = [[] for _ in nodes]
        for position, h, r, t in zip(owner.tolist(), head.tolist(), rel.tolist(), tail.tolist(), strict=True):
            lists[position].append((h, r, t))
        return lists

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
        if len(nodes) <= tuning.SMALL_FRONTIER:
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
                relation_numbers = literal_relations(self.index, node, relation, mask)
                if relation_numbers:
                    lists[position] = self._with_literals(node, lists[position], relation_numbers)
        return lists

    def _with_literals(self, node: int, items: list[Item], relation_numbers: list[int]) -> list[Item]:
        """``items`` (entity edges, ``edge_sort_key`` order) with ``node``'s literal edges of the
        relations (ascending) merged in: after the node's entity edges of the same relation, before
        its next relation; each relation's literals come in ``node_sort_key`` order."""
        assert self.literals_of is not None
        head, relations = self.name(node), self.index.relations
        merged = list(items)
        for r in reversed(relation_numbers):  # from the last place back: earlier places stay valid
            values = self.literals_of(node, r)
            if values:
                at = bisect_right(items, (node, r), key=_head_relation)  # type: ignore[arg-type]
                merged[at:at] = map(make_edge, itertools.repeat(head), itertools.repeat(relations[r]), values)
        return merged

    # -- answers ------------------------------------------------------------------------------
    def name(self, number: int) -> str:
        return self.names[number]

    def answer_edges(self, items: Sequence[Item]) -> list[Edge]:
        """The records of ``items``: ids turned into strings once per call, one ``Edge`` per edge."""
        triples = [item for item in items if isinstance(item, tuple)]
        self.index.prefetch_names([n for triple in triples for n in (triple[0], triple[2])])
        names, relations, made = self.names, self.index.relations, self._edges
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
        return [make_path(start, tuple(map(lookup, walk))) for start, walk in zip(starts, walks, strict=True)]


def _relation_ends(index: TraversalIndex, nodes: list[int], side: Direction, relation: int) -> list[list[int]]:
    """:meth:`Hops.relation_ends` node by node through the memoryviews (any frontier size)."""
    keys, others, starts = index.sides[side]
    width = index.width
    lists: list[list[int]] = []
    append = lists.append
    for node in nodes:
        lo, hi = starts[node], starts[node + 1]
        if lo == hi:
            append([])
            continue
        key = node * width + relation
        if hi - lo == 1:  # one edge: the commonest case
            append([others[lo]] if keys[lo] == key else [])
            continue
        lo = bisect_left(keys, key, lo, hi)
        append(others[lo : bisect_left(keys, key + 1, lo, hi)].tolist())
    return lists


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


def _run(keys: memoryview, key: int, lo: int, hi: int) -> tuple[int, int]:
    """The positions holding ``key`` in ``keys[lo:hi]`` (sorted: one node's keys, from its start array)."""
    lo = bisect_left(keys, key, lo, hi)
    if lo == hi or keys[lo] != key:
        return lo, lo
    if lo + 1 == hi or keys[lo + 1] != key:  # most runs hold one edge
        return lo, lo + 1
    return lo, bisect_left(keys, key + 1, lo + 2, hi)


def literal_relations(index: TraversalIndex, number: int, relation: int | None, mask: Mask | None) -> list[int]:
    """The relations (ascending) in which entity ``number`` has literal objects."""
    if relation is not None and relation not in index.literal_relations:
        return []
    views = index.views
    keys, starts = views["out_extra"], views["out_extra_start"]
    lo, hi = starts[number], starts[number + 1]
    if lo == hi:
        return []
    base = number * index.width
    if relation is not None:
        lo = bisect_left(keys, base + relation, lo, hi)
        return [relation] if lo < hi and keys[lo] == base + relation else []
    found = [key - base for key in keys[lo:hi].tolist()]
    return found if mask is None else [r for r in found if mask[r]]


def _segments(keys: memoryview, base: int, lo: int, hi: int) -> Iterator[tuple[int, int, int]]:
    """(relation, start, stop) of each relation's run in the sorted keys ``[lo, hi)`` of one node."""
    while lo < hi:
        relation = keys[lo] - base
        stop = bisect_left(keys, base + relation + 1, lo, hi)
        yield relation, lo, stop
        lo = stop


def _literal_runs(index: TraversalIndex, number: int, mask: Mask | None) -> list[tuple[int, int, int]]:
    """(relation, first, last): where entity ``number``'s literal objects of each relation that
    ``mask`` keeps lie in the literal table, by ascending relation."""
    views = index.views
    starts = views["literal_start"]
    lo, hi = starts[number], starts[number + 1]
    if lo == hi:
        return []
    base = number * index.width
    if hi - lo == 1:
        r = views["literal_key"][lo] - base
        return [(r, lo, hi)] if mask is None or mask[r] else []
    keys = views["literal_key"][lo:hi].tolist()
    runs: list[tuple[int, int, int]] = []
    at = 0
    while at < len(keys):
        key = keys[at]
        end = bisect_right(keys, key, at + 1)
        r = key - base
        if mask is None or mask[r]:
            runs.append((r, lo + at, lo + end))
        at = end
    return runs


def _insert_literal_edges(
    index: TraversalIndex,
    name: str,
    runs: list[tuple[int, int, int]],
    items: list[Any],
    place: Callable[[int], int],
    room: int | None = None,
) -> None:
    """Puts the literal edges of entity ``name`` (``runs``, from :func:`_literal_runs`) into its
    ``items`` (records or triples in answer order), each relation's run at ``place(relation)``: after
    the entity's entity edges of that relation. With ``room``, only those that land among the first
    ``room`` items (no record made for the rest)."""
    labels = index.relations
    for r, first, last in reversed(runs):  # from the last place back: earlier places stay valid
        at = place(r)
        if room is not None:
            if at >= room:
                continue
            last = min(last, first + room - at)
        values = index.literal_records(first, last)
        items[at:at] = map(make_edge, itertools.repeat(name), itertools.repeat(labels[r]), values)
