"""``paths``, ``shortest_paths`` and ``subgraph`` on a :class:`TraversalIndex`, on integers.

Each function answers exactly what its counterpart in :mod:`kg_adapters.algorithms` answers over
``neighbors`` (same edges, same order, same ``truncated``): the walks follow the same rules, but a
hop is a vectorised ``searchsorted`` over the whole frontier, nodes stay integers until the answer,
and ids are checked once per call. Literal tails (which the index does not hold) are read from
Oxigraph only where a walk can end on them. The caller validates the arguments and falls back to
the generic algorithms where the index cannot answer (blank nodes, CVT expansion).
"""

from __future__ import annotations

import heapq
import itertools
import operator
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from kg_adapters.algorithms import shortest_path_steps, shortest_walks
from kg_adapters.backends.traversal_index import STARTS, TraversalIndex
from kg_adapters.base import Direction
from kg_adapters.profiles import Profile
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


class _EdgeRecord:
    """Builds an :class:`Edge` at a third of the frozen dataclass's keyword ``__init__`` cost
    (answers are made of thousands of them): a class with the same slots whose plain ``__init__``
    fills them, then hands the object to ``Edge`` (``__class__`` assignment between classes of one
    layout). The result is an ordinary frozen ``Edge``: the conformance suite compares."""

    __slots__ = ("head", "relation", "tail", "qualifiers", "rank", "cvt")  # noqa: RUF023 (as Edge declares them)

    def __init__(self, head: str, relation: str, tail: Node) -> None:
        self.head = head
        self.relation = relation
        self.tail = tail
        self.qualifiers = NO_QUALIFIERS
        self.rank = None
        self.cvt = ()
        self.__class__ = Edge  # type: ignore[assignment]


class _PathRecord:
    """:class:`Path` built as :class:`_EdgeRecord` builds edges."""

    __slots__ = ("start", "edges")  # noqa: RUF023 (as Path declares them)

    def __init__(self, start: str, edges: tuple[Edge, ...]) -> None:
        self.start = start
        self.edges = edges
        self.__class__ = Path  # type: ignore[assignment]


assert _EdgeRecord.__slots__ == Edge.__slots__ and _PathRecord.__slots__ == Path.__slots__
make_edge = cast(Callable[[str, str, Node], Edge], _EdgeRecord)
"""``Edge(head=, relation=, tail=)``, the other fields at their defaults."""
_path = cast(Callable[[str, tuple[Edge, ...]], Path], _PathRecord)


class IndexIds:
    """The id conversions every call on an indexed graph repeats, remembered while the graph's
    profile and index stay the same: an entity spelling -> its canonical id, a canonical id -> its
    index number, a relation id -> its number. Only ids the profile accepted are remembered, so a
    bad one is checked, and refused with the same error, on every call. Each table is emptied when
    it reaches ``cap`` entries (memory stays bounded whatever the callers ask)."""

    def __init__(self, index: TraversalIndex, profile: Profile, *, cap: int = 1 << 14) -> None:
        self.index = index
        self.profile = profile
        self.cap = cap
        self._canonical: dict[str, str] = {}
        self._numbers: dict[str, int | None] = {}
        self._relations: dict[str, int | None] = {}
        self.masks: dict[bool, bytes | None] = {}
        """The graph's relation masks for unnamed walks (see ``OxigraphGraph._visible_mask``)."""

    def canonical_id(self, spelling: str) -> str:
        """``profile.canonical_id(spelling)`` (same answer, same errors)."""
        found = self._canonical.get(spelling) if type(spelling) is str else None
        if found is None:
            found = self.profile.canonical_id(spelling)
            if len(self._canonical) >= self.cap:
                self._canonical.clear()
            self._canonical[spelling] = found
        return found

    def number(self, canonical: str) -> int | None:
        """``index.number(canonical)``: the entity's number, None when the index lacks it."""
        try:
            return self._numbers[canonical]
        except KeyError:
            found = self.index.number(canonical)
            if len(self._numbers) >= self.cap:
                self._numbers.clear()
            self._numbers[canonical] = found
            return found

    def relation_number(self, relation: str) -> int | None:
        """The index number of a relation id after the profile's check (``relation_iri``, whose
        errors it raises); None when no edge of the index has that relation."""
        try:
            return self._relations[relation]
        except (KeyError, TypeError):  # TypeError: not even hashable; the profile says what is wrong
            profile = self.profile
            found = self.index.relation_number.get(profile.relation_id(profile.relation_iri(relation)))
            if len(self._relations) >= self.cap:
                self._relations.clear()
            self._relations[relation] = found
            return found

    def neighbors(self, spelling: str, direction: Direction, literals: bool, mask: Mask | None) -> list[Edge] | None:
        """``neighbors(spelling, direction=direction, literals=literals)`` of one entity id over the
        relations ``mask`` keeps (the graph checked ``direction``); None for a blank node, which
        the index does not hold (the caller asks Oxigraph)."""
        if spelling.startswith("_:"):
            return None
        node = self.canonical_id(spelling)
        number = self.number(node)
        if number is None:
            return []
        return _all_neighbor_edges(self.index, number, node, direction, mask, literals)

    def remembered_paths(self, start: object, relation_path: object) -> PathResult | None:
        """``paths(start, relation_path)`` with the other arguments at their defaults (every hop
        ``out``, no limit, not simple) when ``start`` (one id) and every relation of the list are
        in this memo, so an earlier call checked them all (the same answer as :meth:`paths` after
        ``path_arguments``, without repeating the checks); None otherwise (the caller checks)."""
        if type(start) is not str or (type(relation_path) is not list and type(relation_path) is not tuple):
            return None
        canonical = self._canonical.get(start)
        if canonical is None or not relation_path:
            return None
        remembered = self._relations
        relations: list[int | None] = []
        for relation in relation_path:
            if type(relation) is not str or relation not in remembered:
                return None
            relations.append(remembered[relation])
        outwards: list[Direction] = ["out"] * len(relations)
        return directed_paths(self.index, [canonical], [self.number(canonical)], relations, outwards, None)

    def paths(
        self,
        starts: list[str],
        relation_path: Sequence[str],
        directions: list[Direction],
        limit: int | None,
        simple: bool,
    ) -> PathResult:
        """``paths`` on the index for arguments ``algorithms.path_arguments`` checked (``starts``:
        canonical ids), its ids converted through this memo."""
        relations = list(map(self.relation_number, relation_path))
        numbers = list(map(self.number, starts))
        index = self.index
        if simple or "both" in directions:
            return constrained_paths(Hops(index, index.literals), starts, numbers, relations, directions, limit, simple)
        return directed_paths(index, starts, numbers, relations, directions, limit)


_head_relation = operator.itemgetter(0, 1)
_SCAN = 64
"""A node's keys up to this many are read in one slice by ``node_relations``; a longer range is
stepped over relation by relation."""


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
        if len(nodes) > SMALL_FRONTIER:
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
        if len(nodes) <= SMALL_FRONTIER:
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
        return [_path(start, tuple(map(lookup, walk))) for start, walk in zip(starts, walks, strict=True)]


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


# --------------------------------------------------------------------------------- neighbors
def _run(keys: memoryview, key: int, lo: int, hi: int) -> tuple[int, int]:
    """The positions holding ``key`` in ``keys[lo:hi]`` (sorted: one node's keys, from its start array)."""
    lo = bisect_left(keys, key, lo, hi)
    if lo == hi or keys[lo] != key:
        return lo, lo
    if lo + 1 == hi or keys[lo + 1] != key:  # most runs hold one edge
        return lo, lo + 1
    return lo, bisect_left(keys, key + 1, lo + 2, hi)


def _side_pairs(
    index: TraversalIndex, number: int, side: Direction, relation: int | None, mask: Mask | None
) -> tuple[list[int], list[int]]:
    """(relations, other ends) of one node's ``side`` edges in CSR order (relation, other end)."""
    keys, others, starts = index.sides[side]
    lo, hi = starts[number], starts[number + 1]
    if lo == hi:
        return [], []
    base = number * index.width
    if relation is not None:
        lo, hi = _run(keys, base + relation, lo, hi)
        ends = others[lo:hi].tolist()
        return [relation] * len(ends), ends
    relations = list(map((-base).__add__, keys[lo:hi].tolist()))
    ends = others[lo:hi].tolist()
    if mask is not None and not all(map(mask.__getitem__, relations)):
        kept = [(r, end) for r, end in zip(relations, ends, strict=True) if mask[r]]
        relations, ends = [r for r, _ in kept], [end for _, end in kept]
    return relations, ends


def node_relations(index: TraversalIndex, number: int, side: Direction) -> set[int]:
    """The relations of entity ``number``'s ``side`` (``out``/``in``) edges, literal and blank-node
    ones included. A long run of one relation is stepped over by search, not read."""
    views = index.views
    base = number * index.width
    found: set[int] = set()
    for name in ("out_key", "out_extra") if side == "out" else ("in_key", "in_extra"):
        keys, starts = views[name], views[STARTS[name]]
        lo, hi = starts[number], starts[number + 1]
        if hi - lo <= _SCAN:
            found.update([key - base for key in keys[lo:hi].tolist()])
            continue
        while lo < hi:
            key = keys[lo]
            found.add(key - base)
            lo = bisect_left(keys, key + 1, lo + 1, hi)
    return found


def _first_pairs(
    index: TraversalIndex, number: int, side: Direction, mask: Mask | None, limit: int
) -> tuple[list[int], list[int]] | None:
    """(relations, other ends) of the first ``limit`` of one node's ``side`` edges in answer order
    (out: by relation, then tail, as the CSR holds them; in: by head, then relation: the relations'
    runs of heads merged; ``both`` drops the self-loops, which the out-edges hold, after the cut,
    and the cut keeps enough); the rest of a hub's edges is not read. None for a node with few
    edges more than ``limit`` (``_side_pairs`` costs less there)."""
    keys, others, starts = index.sides[side]
    lo, hi = starts[number], starts[number + 1]
    if hi - lo <= 4 * limit + _SCAN:
        return None
    base = number * index.width
    runs = [(r, start, stop) for r, start, stop in _segments(keys, base, lo, hi) if mask is None or mask[r]]
    if side == "out":
        relations: list[int] = []
        ends: list[int] = []
        for r, start, stop in runs:
            take = min(stop - start, limit - len(ends))
            ends.extend(others[start : start + take].tolist())
            relations.extend([r] * take)
            if len(ends) == limit:
                break
        return relations, ends
    merged = heapq.merge(*[zip(others[start:stop], itertools.repeat(r)) for r, start, stop in runs])
    pairs = list(itertools.islice(merged, limit))
    return [r for _, r in pairs], [h for h, _ in pairs]


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


def neighbor_edges(  # noqa: C901 -- issue 22 (index part) splits these walks
    index: TraversalIndex,
    number: int,
    name: str,
    direction: Direction,
    relation: int | None,
    mask: Mask | None,
    literals: bool,
    limit: int | None = None,
) -> list[Edge]:
    """The edges of entity ``number`` (id ``name``) as ``neighbors`` answers them, in
    ``edge_sort_key`` order: out-edges (literal ones after the entity ones of their relation),
    in-edges ordered by head, and for ``both`` the in-edges around the out-edges by head (a
    self-loop once). ``relation`` or ``mask`` keeps relations (neither: all). With ``limit``, the
    first ``limit`` of them: the ends are cut as integers, so no record or id is made for an
    edge the answer leaves out."""
    if limit is None and relation is None:
        return _all_neighbor_edges(index, number, name, direction, mask, literals)
    if limit == 0:
        return []
    labels, names_of = index.relations, index.names_of
    edges: list[Edge] = []
    first_only = limit if relation is None else None  # (one relation's ends come in answer order)
    if direction != "in":
        found = _first_pairs(index, number, "out", mask, first_only) if first_only is not None else None
        relations, tails = found or _side_pairs(index, number, "out", relation, mask)
        if limit is not None and len(tails) > limit:
            relations, tails = relations[:limit], tails[:limit]
        if tails:
            edges = [make_edge(name, labels[r], tail) for r, tail in zip(relations, names_of(tails), strict=True)]
        if literals and index.literal_relations:
            for r in reversed(literal_relations(index, number, relation, mask)):
                at = bisect_right(relations, r)  # after the entity edges of the relation
                if limit is not None and at >= limit:
                    continue  # past the cut (earlier relations land before it)
                values = index.literals(number, r)
                if values:
                    label = labels[r]
                    edges[at:at] = [make_edge(name, label, value) for value in values]
            if limit is not None:
                del edges[limit:]
        if direction == "out":
            return edges
    found = _first_pairs(index, number, "in", mask, first_only) if first_only is not None else None
    if found is not None:
        relations, heads = found  # in answer order already
    else:
        relations, heads = _side_pairs(index, number, "in", relation, mask)
        if relation is None and len(heads) > 1:
            pairs = sorted(zip(heads, relations, strict=True))  # the CSR holds (relation, head)
            heads, relations = [h for h, _ in pairs], [r for _, r in pairs]
    if not heads:
        return edges
    if direction == "in":
        if limit is not None:
            heads, relations = heads[:limit], relations[:limit]
        return [make_edge(head, labels[r], name) for head, r in zip(names_of(heads), relations, strict=True)]
    first = bisect_left(heads, number)
    last = bisect_right(heads, number, first)  # self-loops: already among the out-edges
    if last > first:
        heads, relations = heads[:first] + heads[last:], relations[:first] + relations[last:]
    if limit is not None and len(heads) + len(edges) > limit:
        # the in-edges whose head sorts before ``number``, the out-edges, the other in-edges: cut at ``limit``
        del edges[max(limit - first, 0) :]
        keep = limit - len(edges)
        heads, relations = heads[:keep], relations[:keep]
        first = min(first, keep)
    into = [make_edge(head, labels[r], name) for head, r in zip(names_of(heads), relations, strict=True)]
    if first == len(into):
        into.extend(edges)
        return into
    return [*into[:first], *edges, *into[first:]]


def _all_neighbor_edges(
    index: TraversalIndex, number: int, name: str, direction: Direction, mask: Mask | None, literals: bool
) -> list[Edge]:
    """``neighbor_edges`` without a limit or a named relation: the common call, kept to the reads
    and records its answer needs (each side's keys and ends read once, ids from the name cache)."""
    edges: list[Edge] = []
    if direction != "in":
        relations, tails = _answer_pairs(index, number, "out", mask)
        edges = _out_records(index, name, relations, tails)
        if literals and index.literal_relations:
            _insert_literal_edges(
                index, name, _literal_runs(index, number, mask), edges, partial(bisect_right, relations)
            )
        if direction == "out":
            return edges
    relations, heads = _answer_pairs(index, number, "in", mask)
    if not heads:
        return edges
    if direction == "both":
        first = bisect_left(heads, number)
        last = bisect_right(heads, number, first)  # self-loops: already among the out-edges
        if last > first:
            del heads[first:last], relations[first:last]
    else:
        first = len(heads)
    into = _in_records(index, heads, relations, name)
    if not edges:
        return into
    if first == len(into):
        into.extend(edges)
        return into
    return [*into[:first], *edges, *into[first:]]


def _answer_pairs(
    index: TraversalIndex, number: int, side: Direction, mask: Mask | None
) -> tuple[list[int], list[int]]:
    """(relations, other ends) of entity ``number``'s ``side`` (``out``/``in``) edges whose relation
    ``mask`` keeps, in answer order: out-edges by (relation, tail), as the CSR holds them; in-edges by
    (head, relation), which the CSR's (relation, head) order already is when they share one relation."""
    keys, others, starts = index.sides[side]
    lo, hi = starts[number], starts[number + 1]
    if lo == hi:
        return [], []
    relations = list(map((-number * index.width).__add__, keys[lo:hi].tolist()))
    ends = others[lo:hi].tolist()
    if mask is not None:
        kept = bytes(map(mask.__getitem__, relations))
        if not all(kept):
            relations, ends = list(itertools.compress(relations, kept)), list(itertools.compress(ends, kept))
    if side == "in" and relations and relations[0] != relations[-1]:
        pairs = sorted(zip(ends, relations, strict=True))
        ends, relations = list(map(_first, pairs)), list(map(_second, pairs))
    return relations, ends


_first, _second = operator.itemgetter(0), operator.itemgetter(1)


def _out_records(index: TraversalIndex, name: str, relations: list[int], tails: list[int]) -> list[Edge]:
    """The records of entity ``name``'s out-edges of ``relations`` to the entity numbers ``tails``."""
    labels, names = index.relations, index.name_cache
    return list(
        map(make_edge, itertools.repeat(name), map(labels.__getitem__, relations), map(names.__getitem__, tails))
    )


def _in_records(index: TraversalIndex, heads: list[int], relations: list[int], name: str) -> list[Edge]:
    """The records of entity ``name``'s in-edges of ``relations`` from the entity numbers ``heads``."""
    labels, names = index.relations, index.name_cache
    return list(
        map(make_edge, map(names.__getitem__, heads), map(labels.__getitem__, relations), itertools.repeat(name))
    )


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


# ------------------------------------------------------------------------------------- paths
Step = int | Triple | Edge
"""One edge of a relation hop inside ``constrained_paths``: its other end (``out``/``in``), its
(head, relation, tail) numbers (``both``), or a literal edge (last hop only)."""
Option = tuple[int | Node, Edge]
"""Where an edge leads from the node it was reached at, and its record."""


class _Full(Exception):
    pass


def constrained_paths(  # noqa: C901 -- issue 22 (index part) splits these walks
    hops: Hops,
    starts: list[str],
    start_numbers: list[int | None],
    relations: list[int | None],
    directions: list[Direction],
    limit: int | None,
    simple: bool,
) -> PathResult:
    """``algorithms.constrained_paths`` (no CVT steps) on the index: each hop expands its frontier
    through one relation (plain integer lists, no records), a backward pass keeps the nodes that
    can still complete the path, and records are made only for edges of answered paths, each
    once (paths sharing a prefix share its edges)."""
    last = len(relations) - 1
    layers: list[dict[int, list[Step]]] = []
    frontier = [n for n in dict.fromkeys(start_numbers) if n is not None]
    for depth, (relation, direction) in enumerate(zip(relations, directions, strict=True)):
        if relation is None or not frontier:
            return PathResult()  # no walk gets past this hop
        lists = hops.relation_steps(frontier, direction, relation, literals=depth == last)
        layers.append(dict(zip(frontier, lists, strict=True)))
        if depth < last:  # before the last hop every step is an entity edge (no literals asked for)
            if direction == "both":
                ends = (t if h == node else h for node, steps in zip(frontier, lists, strict=True) for h, _, t in steps)  # type: ignore[misc]
                frontier = list(dict.fromkeys(ends))
            else:
                frontier = list(dict.fromkeys(itertools.chain.from_iterable(lists)))  # type: ignore[arg-type]

    alive: list[set[int]] = [set() for _ in relations]
    alive[last] = {node for node, steps in layers[last].items() if steps}
    for depth in range(last - 1, -1, -1):
        ahead = alive[depth + 1]
        if directions[depth] == "both":
            alive[depth] = {
                node
                for node, steps in layers[depth].items()
                if any((t if h == node else h) in ahead for h, _, t in steps)  # type: ignore[misc]
            }
        else:
            alive[depth] = {node for node, steps in layers[depth].items() if not ahead.isdisjoint(steps)}
    if not alive[0]:
        return PathResult()

    names, names_of = hops.names, hops.index.names_of
    relation_names = [hops.index.relations[r] if r is not None else "" for r in relations]
    memo: list[dict[int, tuple[list[Any], list[Edge]]]] = [{} for _ in relations]

    def options(depth: int, node: int) -> tuple[list[Any], list[Edge]]:
        """Where the edges of ``node`` at ``depth`` lead and their records: those that lead on
        (every one, at the last hop). Ends are integers; the end of a literal edge is its literal."""
        steps: list[Any] = layers[depth][node]
        relation = relation_names[depth]
        keep = alive[depth + 1] if depth < last else None
        direction = directions[depth]
        literals: list[Edge] = []
        if direction == "both":
            ends: list[Any] = []
            edges: list[Edge] = []
            for step in steps:
                if type(step) is tuple:
                    h, _, t = step
                    nxt = t if h == node else h
                    if keep is None or nxt in keep:
                        ends.append(nxt)
                        edges.append(make_edge(names[h], relation, names[t]))
                else:
                    ends.append(step.tail)
                    edges.append(step)
        else:
            if keep is not None:
                ends = [step for step in steps if step in keep]
            elif type(steps[-1]) is int:
                ends = steps
            else:  # literal edges follow the entity ones (out)
                ends = [step for step in steps if type(step) is int]
                literals = steps[len(ends) :]
            if direction == "out":
                head = names[node]
                edges = [make_edge(head, relation, tail) for tail in names_of(ends)]
            else:
                tail = names[node]
                edges = [make_edge(head, relation, tail) for head in names_of(ends)]
            if literals:
                ends = [*ends, *(edge.tail for edge in literals)]
                edges.extend(literals)
        found = memo[depth][node] = (ends, edges)
        return found

    if not simple:
        # Every prefix kept completes (the backward pass saw to it), so expanding hop by hop, in
        # order, lists the paths in the depth-first order, and ``limit + 1`` prefixes per hop are enough.
        cap = limit + 1 if limit is not None else None
        level: list[tuple[str, tuple[Edge, ...], int]] = [
            (start, (), number) for start, number in zip(starts, start_numbers, strict=True) if number in alive[0]
        ]
        for depth in range(last):
            found = memo[depth]
            for node in {node for _, _, node in level}:
                if node not in found:
                    options(depth, node)
            level = [
                (start, (*prefix, edge), end)
                for start, prefix, node in level
                for end, edge in zip(*found[node], strict=True)
            ]
            if cap is not None:
                del level[cap:]
        found = memo[last]
        for node in {node for _, _, node in level}:
            if node not in found:
                options(last, node)
        leaves = ((start, prefix, edge) for start, prefix, node in level for edge in found[node][1])
        if cap is None:
            return PathResult([_path(start, (*prefix, edge)) for start, prefix, edge in leaves])
        return _first_paths(leaves, cap)

    start = ""
    room: int | None = None
    paths: list[Path] = []

    def walk(depth: int, node: int, prefix: tuple[Edge, ...], visited: tuple[int, ...] | None) -> None:
        """Appends to ``paths`` every completion of ``prefix`` from ``node`` at ``depth``, depth
        first in edge order; raises ``_Full`` when one more than ``room`` would be needed."""
        ends, edges = memo[depth].get(node) or options(depth, node)
        if depth == last:
            if visited is not None:
                edges = [edge for end, edge in zip(ends, edges, strict=True) if end not in visited]
            if room is not None and len(paths) + len(edges) > room:
                paths.extend([_path(start, (*prefix, edge)) for edge in edges[: room - len(paths)]])
                raise _Full
            paths.extend([_path(start, (*prefix, edge)) for edge in edges])
            return
        for end, edge in zip(ends, edges, strict=True):
            if visited is None:
                walk(depth + 1, end, (*prefix, edge), None)
            elif end not in visited:
                walk(depth + 1, end, (*prefix, edge), (*visited, end))

    result = PathResult()
    for start, number in zip(starts, start_numbers, strict=True):  # noqa: B007 (walk reads start)
        if number is None or number not in alive[0]:
            continue
        room = limit - len(result) if limit is not None else None
        paths = []
        try:
            walk(0, number, (), (number,) if simple else None)
        except _Full:
            result.truncated = True
        result.extend(paths)
        if result.truncated:
            return result
    return result


def directed_paths(  # noqa: C901 -- issue 22 (index part) splits these walks
    index: TraversalIndex,
    starts: list[str],
    start_numbers: list[int | None],
    relations: list[int | None],
    directions: list[Direction],
    limit: int | None,
) -> PathResult:
    """:func:`constrained_paths` when every hop walks ``out`` or ``in`` and paths need not be simple
    (the common call): the same answer, with the hop's ends read straight from the index and each
    id decoded once (a hop's ends are named with its records and head the next hop's records;
    starts are named by the caller), without the per-call view, closures and name memo the
    general walk needs."""
    last = len(relations) - 1
    layers: list[dict[int, list[int]]] = []
    frontier = [n for n in dict.fromkeys(start_numbers) if n is not None]
    for depth, relation in enumerate(relations):
        if relation is None or not frontier:
            return PathResult()  # no walk gets past this hop
        if len(frontier) > SMALL_FRONTIER:
            lists = Hops(index, None).relation_ends(frontier, directions[depth], relation)
        else:
            lists = _relation_ends(index, frontier, directions[depth], relation)
        layers.append(dict(zip(frontier, lists, strict=True)))
        if depth < last:  # one node's ends of one relation are distinct already
            frontier = lists[0] if len(lists) == 1 else list(dict.fromkeys(itertools.chain.from_iterable(lists)))
    relation = relations[last]
    literals: dict[int, list[Literal]] = {}
    if directions[last] == "out" and relation in index.literal_relations:  # the walk can end on a literal
        literals_of = index.literals
        for node in frontier:
            values = literals_of(node, relation)
            if values:
                literals[node] = values

    # backward pass: keep the nodes that still complete the path (alive[depth])
    ahead = {node for node, ends in layers[last].items() if ends}
    ahead.update(literals)
    alive = [ahead]
    for depth in range(last - 1, -1, -1):
        ahead = {node for node, ends in layers[depth].items() if not ahead.isdisjoint(ends)}
        alive.append(ahead)
    if not ahead:
        return PathResult()
    alive.reverse()

    # Every prefix kept completes, so expanding hop by hop, in order, lists the paths in the
    # depth-first order, and ``limit + 1`` prefixes per hop are enough.
    labels, names = index.relations, index.name_cache  # (a start's name is its canonical id)
    name_of = names.__getitem__
    cap = limit + 1 if limit is not None else None
    level: list[tuple[str, tuple[Edge, ...], int]] = [
        (start, (), number) for start, number in zip(starts, start_numbers, strict=True) if number in ahead
    ]
    for depth in range(last):
        layer, keep, label = layers[depth], alive[depth + 1], labels[relations[depth]]  # type: ignore[index]
        forwards = directions[depth] == "out"
        options: dict[int, tuple[list[int], list[Edge]]] = {}  # per node: where its kept edges lead, their records
        for node in {node for _, _, node in level}:
            ends = [end for end in layer[node] if end in keep]
            index.prefetch_names(ends)  # (a long list of misses: one numpy gather)
            ids = list(map(name_of, ends))
            name = names[node]
            if forwards:
                options[node] = (ends, [make_edge(name, label, other) for other in ids])
            else:
                options[node] = (ends, [make_edge(other, label, name) for other in ids])
        level = [
            (start, (*prefix, edge), end)
            for start, prefix, node in level
            for end, edge in zip(*options[node], strict=True)
        ]
        if cap is not None:
            del level[cap:]
    layer, label = layers[last], labels[relation]  # type: ignore[index]
    forwards = directions[last] == "out"
    finals: dict[int, list[Edge]] = {}
    for node in {node for _, _, node in level}:
        name = names[node]
        index.prefetch_names(layer[node])
        if forwards:
            edges = [make_edge(name, label, other) for other in map(name_of, layer[node])]
            if node in literals:  # literal edges follow the entity ones
                edges.extend([make_edge(name, label, value) for value in literals[node]])
        else:
            edges = [make_edge(other, label, name) for other in map(name_of, layer[node])]
        finals[node] = edges
    if cap is None:
        return PathResult([_path(start, (*prefix, edge)) for start, prefix, node in level for edge in finals[node]])
    return _first_paths(((start, prefix, edge) for start, prefix, node in level for edge in finals[node]), cap)


def _first_paths(leaves: Iterator[tuple[str, tuple[Edge, ...], Edge]], cap: int) -> PathResult:
    """The paths of the first ``cap - 1`` (start, prefix, last edge) leaves, truncated when there are more."""
    made = [_path(start, (*prefix, edge)) for start, prefix, edge in itertools.islice(leaves, cap)]
    if len(made) == cap:
        del made[-1]
        return PathResult(made, truncated=True)
    return PathResult(made)


# ---------------------------------------------------------------------------- shortest paths
DEGREE_BY_NUMPY = 512
"""Frontiers of more nodes than this have their total degree counted by one vectorised pass over
the start arrays rather than two reads per node."""

PAIR_COST = 32
"""The cost, in edges scanned, of looking up the edges between two unscanned nodes on the search's
last round (their relations' runs intersected, one ``bisect`` per relation both have); see ``_join``."""
HUB_COST = 160
"""The cost, in edges scanned, of finding one unscanned node's relation runs (a ``bisect`` per relation)."""
NODE_COST = 16
"""The cost, in edges scanned, of one scanned node's slices and set lookups, whatever its degree."""
JOIN_LIMIT = 1 << 16
"""A last round whose join would still scan more edges than this is one vectorised hop instead."""


class _Spans:
    """The key ranges ``(node, view, lo, hi)`` of the visible edges one small expansion read, and
    their other ends in one list (``ends[offsets[k]:]`` starts range k's): the new layer's nodes and
    nodes met before. ``parents`` finds the edges into a node again by searching ``ends`` at C speed."""

    __slots__ = ("ends", "offsets", "spans")

    def __init__(self, spans: list[tuple[int, int, int, int]], ends: list[int], offsets: list[int]) -> None:
        self.spans = spans
        self.ends = ends
        self.offsets = offsets


Reached = list[tuple[int, int, int, bool]] | _Spans | tuple["Ints", "Ints", "Ints", "Ints", "Ints"]
"""The edges one expansion followed to new nodes: the last round's ``(node, relation, next node,
forwards)``; an earlier round's key ranges (``_Spans``), read again only for the nodes on a shortest
path; or, for a large frontier, numpy arrays (node, head, relation, tail, next node)."""


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
    from the CSR keys; ties: the source), so a hub is expanded only when the other side costs more,
    and joins the two frontiers on the last round without reading the hubs' edges. Which side grows
    first changes neither the paths found nor their order (``shortest_walks``)."""
    starts: list[str] = []
    walks: list[tuple[Item, ...]] = []
    truncated = False
    hidden = _hidden(mask)
    for source, target, s, t in pairs:
        for walk in _pair_walks(hops, source == target, s, t, max_hops, direction, mask, hidden):
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


def _hidden(mask: Mask | None) -> list[int]:
    """The relation numbers ``mask`` hides, ascending (a search skips a key range holding none
    without reading its relations)."""
    if mask is None:
        return []
    found: list[int] = []
    at = mask.find(0)
    while at >= 0:
        found.append(at)
        at = mask.find(0, at + 1)
    return found


def _pair_walks(
    hops: Hops,
    same: bool,
    s: int | None,
    t: int | None,
    max_hops: int,
    direction: Direction,
    mask: Mask | None,
    hidden: list[int],
) -> Iterator[tuple[Triple, ...]]:
    if same:
        return iter([()])
    if s is None or t is None:
        return iter(())
    searches = (_Search(hops, s, direction, mask, hidden), _Search(hops, t, _REVERSE[direction], mask, hidden))
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
    hops.index.prefetch_names([n for options in steps.values() for (h, _, t_), _ in options for n in (h, t_)])
    names, relations = hops.names, hops.index.relations

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
    ``reached[k - 1]`` the edges that reached them. Small expansions run node by node over the key
    ranges counted for the degree, reading the other ends as whole slices (set operations at C
    speed, no Python work per edge); the last round joins the two frontiers (``_join``). A frontier
    of total degree above ``SMALL_FRONTIER`` (or of more than ``DEGREE_BY_NUMPY`` nodes) is
    expanded on numpy arrays, where a hub costs a few vectorised passes."""

    def __init__(self, hops: Hops, root: int, direction: Direction, mask: Mask | None, hidden: list[int]) -> None:
        index = hops.index
        self.hops = hops
        self.mask = mask
        self.hidden = hidden
        self.width = index.width
        self.sides: tuple[Direction, ...] = ("out", "in") if direction == "both" else (direction,)
        self.views = [(index.views[f"{side}_key"], index.views[f"{side}_other"], side == "out") for side in self.sides]
        self.starts = [index.views[f"{side}_start"] for side in self.sides]
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

            nodes = np.asarray(frontier, dtype=np.int64)
            total = 0
            for side in self.sides:
                starts = self.hops.index.array(f"{side}_start")
                total += int((starts[nodes + 1].astype(np.int64) - starts[nodes]).sum())
            self._degree, self._exact = total, True
            return total
        spans, total, counted = self._spans, self._degree, self._counted
        sides = list(enumerate(self.starts))
        while counted < len(frontier) and (bound is None or total <= bound):
            node = frontier[counted]
            for view, node_starts in sides:
                lo, hi = node_starts[node], node_starts[node + 1]
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
            small = lists and not final and self.degree() <= SMALL_FRONTIER
            found = self._expand_small(other) if small else self._expand_large(other)
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

    def _visible(self, node: int, lo: int, hi: int, keys: memoryview) -> list[tuple[int, int]]:
        """The runs of ``[lo, hi)`` (one node's keys) whose relations the mask keeps."""
        mask = cast(Mask, self.mask)
        return [(start, stop) for r, start, stop in _segments(keys, node * self.width, lo, hi) if mask[r]]

    def _join(self, other: _Search) -> tuple[list[int], int] | None:
        """The last round as a join of the two frontiers: the edges between them are the shortest
        paths' middle edges (an edge to a node nearer the other root would have met earlier). Each
        pair of frontier nodes is covered once: by scanning either end's other ends against the
        other frontier (as a set, at C speed), or, for the pairs of two unscanned hubs, by a
        ``bisect`` per relation both have. Which nodes stay unscanned is chosen by ``_unscanned``,
        so the work follows the frontiers' sizes, not their hubs' degrees. None when even the
        cheapest choice reads more than ``JOIN_LIMIT`` edges (the caller takes a vectorised hop)."""
        found: dict[tuple[int, int, int, bool], None] = {}
        self.degree()
        mine: dict[int, list[tuple[int, int, int]]] | None = None
        hubs_pay = False  # whether leaving this side's largest nodes unscanned may cost less
        widest = max((hi - lo for _, _, lo, hi in self._spans), default=0)
        if widest * len(self.sides) + NODE_COST > PAIR_COST + HUB_COST:
            mine = self._spans_by_node()
            saving = sum(d for d in map(_degree_of, mine.values()) if d + NODE_COST > PAIR_COST + HUB_COST)
            hubs_pay = saving > 2 * NODE_COST * len(other.layers[-1]) + HUB_COST  # the other side's scans, at least
        bound = self._degree + NODE_COST * (len(self.layers[-1]) - len(other.layers[-1]))
        if not hubs_pay and other.degree(bound) > bound:  # scanning this side alone costs least
            if self._degree > JOIN_LIMIT:
                return None
            self._scan(self._spans, set(other.layers[-1]), found, flip=False)
            return self._joined(found, other)
        mine = self._spans_by_node() if mine is None else mine
        theirs = other._spans_by_node()
        here = sorted(zip(map(_degree_of, mine.values()), mine, strict=True), reverse=True)
        there = sorted(zip(map(_degree_of, theirs.values()), theirs, strict=True), reverse=True)
        cost, left_here, left_there = _unscanned([d for d, _ in here], [d for d, _ in there])
        if cost > JOIN_LIMIT:
            return None
        hubs_here = [node for _, node in here[:left_here]]
        hubs_there = [node for _, node in there[:left_there]]
        scanned = [(node, *span) for _, node in here[left_here:] for span in mine[node]]
        self._scan(scanned, set(other.layers[-1]), found, flip=False)
        if hubs_here:
            scanned = [(node, *span) for _, node in there[left_there:] for span in theirs[node]]
            other._scan(scanned, set(hubs_here), found, flip=True)
        if hubs_here and hubs_there:
            self._probe(mine, hubs_here, other, theirs, hubs_there, found)
        return self._joined(found, other)

    def _joined(self, found: dict[tuple[int, int, int, bool], None], other: _Search) -> tuple[list[int], int]:
        """Adds the last layer from the join's edges (``(node, relation, next node, forwards)``)."""
        assert self.depth is not None
        reached = list(found)
        meets = list(dict.fromkeys(entry[2] for entry in reached))
        self.depth.update(dict.fromkeys(meets, len(self.layers)))
        self.layers.append(meets)
        self.reached.append(reached)
        return (meets, other.radius) if meets else ([], 0)

    def _scan(
        self,
        spans: list[tuple[int, int, int, int]],
        targets: set[int],
        found: dict[tuple[int, int, int, bool], None],
        *,
        flip: bool,
    ) -> None:
        """Adds to ``found`` the visible edges of the key ranges ``spans`` (node, view, lo, hi) whose
        other end is in ``targets``, as the joining side walks them (``flip``: this is the other
        side, whose edges run the other way). Each range's other ends are one slice matched against
        ``targets`` as a set; only the matches are read one by one."""
        width, mask, views = self.width, self.mask, self.views
        for node, view, lo, hi in spans:
            keys, others, forwards = views[view]
            ends = others[lo:hi].tolist()
            for nxt in targets.intersection(ends):
                at = -1
                for _ in range(ends.count(nxt)):
                    at = ends.index(nxt, at + 1)
                    relation = keys[lo + at] - node * width
                    if mask is None or mask[relation]:
                        edge = (nxt, relation, node, not forwards) if flip else (node, relation, nxt, forwards)
                        found[edge] = None

    def _runs(self, spans: list[tuple[int, int, int]], node: int) -> dict[bool, dict[int, tuple[int, int]]]:
        """A node's visible relation runs by direction (``True``: its out-edges): relation -> (start, stop)."""
        base, mask, views = node * self.width, self.mask, self.views
        runs: dict[bool, dict[int, tuple[int, int]]] = {}
        for view, lo, hi in spans:
            keys, _, forwards = views[view]
            runs[forwards] = {
                r: (start, stop) for r, start, stop in _segments(keys, base, lo, hi) if mask is None or mask[r]
            }
        return runs

    def _probe(
        self,
        mine: dict[int, list[tuple[int, int, int]]],
        hubs_here: list[int],
        other: _Search,
        theirs: dict[int, list[tuple[int, int, int]]],
        hubs_there: list[int],
        found: dict[tuple[int, int, int, bool], None],
    ) -> None:
        """Adds to ``found`` the edges between two unscanned nodes: for each relation both have (one
        as out-edges, the other as in-edges), a ``bisect`` for one in the other's run."""
        others = {forwards: ends for _, ends, forwards in self.views}
        runs_there = [(hub, other._runs(theirs[hub], hub)) for hub in hubs_there]
        for node in hubs_here:
            for forwards, runs in self._runs(mine[node], node).items():
                ends = others[forwards]
                for hub, hub_runs in runs_there:
                    reverse = hub_runs.get(not forwards)
                    if not reverse:
                        continue
                    for relation in runs.keys() & reverse.keys():
                        start, stop = runs[relation]
                        at = bisect_left(ends, hub, start, stop)
                        if at < stop and ends[at] == hub:
                            found[(node, relation, hub, forwards)] = None

    def _expand_small(self, other: _Search) -> tuple[list[int], int]:
        depth, there = self.depth, other.depth
        assert depth is not None and there is not None
        views, hidden, width = self.views, self.hidden, self.width
        kept: list[tuple[int, int, int, int]] = []
        ends: list[int] = []
        offsets: list[int] = []
        for node, view, lo, hi in self._spans:
            keys, others, _ = views[view]
            if hidden:  # a hidden relation between the range's first and last key: its runs, one by one
                at = bisect_left(hidden, keys[lo] - node * width)
                if at < len(hidden) and hidden[at] <= keys[hi - 1] - node * width:
                    for start, stop in self._visible(node, lo, hi, keys):
                        kept.append((node, view, start, stop))
                        offsets.append(len(ends))
                        ends += others[start:stop].tolist()
                    continue
            kept.append((node, view, lo, hi))
            offsets.append(len(ends))
            ends += others[lo:hi].tolist()
        spans = _Spans(kept, ends, offsets)
        new = dict.fromkeys(ends)
        for known in new.keys() & depth.keys():
            del new[known]
        radius = len(self.layers)
        self.layers.append(list(new))
        self.reached.append(spans)
        depth.update(dict.fromkeys(new, radius))
        met = new.keys() & there.keys()
        if not met:
            return [], 0
        best = min(there[node] for node in met)
        return [node for node in new if node in met and there[node] == best], best

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
            reached, nearer = self.reached[radius - 1], set[int]()
            if isinstance(reached, _Spans):
                self._spans_parents(reached, wanted, found, nearer)
            elif isinstance(reached, list):
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

    def _spans_parents(
        self, spans: _Spans, wanted: set[int], found: dict[int, list[tuple[int, Triple]]], nearer: set[int]
    ) -> None:
        """``parents`` over one small expansion's key ranges: the edges into ``wanted``, each found
        by searching the ranges' other ends (one list) at C speed (the ranges hold visible relations)."""
        width, views, ends, offsets = self.width, self.views, spans.ends, spans.offsets
        for nxt in wanted:
            at = -1
            for _ in range(ends.count(nxt)):
                at = ends.index(nxt, at + 1)
                k = bisect_right(offsets, at) - 1
                node, view, lo, _ = spans.spans[k]
                keys, _, forwards = views[view]
                relation = keys[lo + at - offsets[k]] - node * width
                triple = (node, relation, nxt) if forwards else (nxt, relation, node)
                found.setdefault(nxt, []).append((node, triple))
                nearer.add(node)


def _degree_of(spans: list[tuple[int, int, int]]) -> int:
    """The number of edges in one node's key ranges ``(view, lo, hi)``."""
    return sum(hi - lo for _, lo, hi in spans)


def _unscanned(here: list[int], there: list[int]) -> tuple[int, int, int]:
    """(estimated cost, i, j): the last round's cheapest cover of every pair of the two frontiers'
    nodes (degrees descending): the i highest-degree nodes here and the j there stay unscanned, the
    other nodes here are scanned against the whole other frontier, the other nodes there against
    the i, and the i x j pairs are looked up. Given i, the best j leaves unscanned the nodes whose
    scan costs more than looking up their i pairs (``PAIR_COST``, ``HUB_COST``, ``NODE_COST``)."""
    total_here = sum(here) + NODE_COST * len(here)
    best = (total_here, 0, 0)  # scan this side only
    if not there:
        return best
    total_there = sum(there) + NODE_COST * len(there)
    kept_there = list(itertools.accumulate(d + NODE_COST for d in there))  # prefix costs, descending degrees
    ascending = [-d for d in there]
    kept_here = 0
    for i, d in enumerate(here, 1):
        kept_here += d + NODE_COST
        if d + NODE_COST <= PAIR_COST + HUB_COST and i < len(here):
            continue  # leaving this node unscanned cannot pay unless every node here is
        j = bisect_left(ascending, -(i * PAIR_COST + HUB_COST - NODE_COST))  # degrees above the bar
        saved_there = kept_there[j - 1] if j else 0
        cost = total_here - kept_here + total_there - saved_there + (i * j * PAIR_COST + (i + j) * HUB_COST if j else 0)
        if cost < best[0]:
            best = (cost, i, j)
    return best


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
    if direction != "both":
        return _one_way_subgraph(hops, seed_numbers, depth, direction, mask, limit)
    items: list[Item] = []
    frontier = [n for n in seed_numbers if n is not None]
    seen_nodes: set[int] = set(frontier)
    seen_triples: set[Item] = set()  # (walking both ways, an edge is met from its head and from its tail)
    truncated = False
    for hop in range(depth):
        if not frontier:
            break
        last = hop == depth - 1
        lists = _adjacency(hops, frontier, direction, mask)
        reached: list[int] = []
        for node, edges in zip(frontier, lists, strict=True):
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
                        nxt = t if h == node else h
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


def _one_way_subgraph(
    hops: Hops, seed_numbers: list[int | None], depth: int, direction: Direction, mask: Mask | None, limit: int | None
) -> EdgeList:
    """:func:`k_hop_subgraph` walking only ``out`` or only ``in``: each edge is met once (from the
    one node it is read at), so a node's edges become records as they are read, in answer order
    (out: by relation, then tail, literal edges after the entity edges of their relation; in: by
    head, then relation), and only the ends that lead on are kept as integers. With ``limit``, a
    node's ends are cut to the room left before any record is made (a hub costs what is kept)."""
    index = hops.index
    out = direction == "out"
    literals = out and hops.literals_of is not None and bool(index.literal_relations)
    records: list[Edge] = []
    frontier = [n for n in seed_numbers if n is not None]
    seen = set(frontier)
    truncated = False
    for hop in range(depth):
        if not frontier:
            break
        leads_on = hop < depth - 1
        reached: list[int] = []
        per_node: Iterator[tuple[list[Edge], list[int], bool]]
        if len(frontier) > SMALL_FRONTIER:  # one vectorised hop
            per_node = _vectorised_one_way(hops, frontier, direction, mask, limit, records)
        else:
            per_node = (
                _one_way_edges(index, node, out, mask, literals, None if limit is None else limit - len(records))
                for node in frontier
            )
        for edges, ends, cut in per_node:
            records.extend(edges)
            if cut:
                truncated = True
                break
            if leads_on:
                for end in ends:
                    if end not in seen:
                        seen.add(end)
                        reached.append(end)
        if truncated:
            break
        frontier = reached
    result = EdgeList(records)
    result.truncated = truncated
    return result


def _vectorised_one_way(
    hops: Hops, frontier: list[int], direction: Direction, mask: Mask | None, limit: int | None, records: list[Edge]
) -> Iterator[tuple[list[Edge], list[int], bool]]:
    """``_one_way_edges`` for a frontier read by one vectorised hop: each node's items cut to the
    room ``records`` leaves under ``limit``, then named as :func:`k_hop_subgraph` names them."""
    for items in hops.adjacency(frontier, direction, mask=mask, literals=True):
        room = None if limit is None else limit - len(records)
        cut = room is not None and len(items) > room
        if cut:
            items = items[:room]
        triples = [item for item in items if isinstance(item, tuple)]
        yield _distinct_edges(hops, items), [t if direction == "out" else h for h, _, t in triples], cut


def _one_way_edges(
    index: TraversalIndex, node: int, out: bool, mask: Mask | None, literals: bool, room: int | None
) -> tuple[list[Edge], list[int], bool]:
    """(records, other ends, cut) of one node's out- or in-edges in answer order (see
    :func:`_one_way_subgraph`); with ``room``, at most that many records, the ends cut before
    any record is made, and ``cut`` True when the node had more edges."""
    relations, ends = _answer_pairs(index, node, "out" if out else "in", mask)
    runs = _literal_runs(index, node, mask) if literals else []
    cut = False
    if room is not None and len(ends) + sum(last - first for _, first, last in runs) > room:
        cut = True
        relations, ends = relations[:room], ends[:room]
    name = index.name_cache[node]
    if not out:
        return _in_records(index, ends, relations, name), ends, cut
    edges = _out_records(index, name, relations, ends)
    if runs:
        _insert_literal_edges(index, name, runs, edges, partial(bisect_right, relations), room)
        if cut:
            del edges[room:]
    return edges, ends, cut


def _adjacency(hops: Hops, nodes: list[int], direction: Direction, mask: Mask | None) -> list[list[Item]]:
    """``hops.adjacency(nodes, direction, mask=mask, literals=True)``, each node's ranges read from
    the start arrays in one loop."""
    if len(nodes) > SMALL_FRONTIER:
        return hops.adjacency(nodes, direction, mask=mask, literals=True)
    index = hops.index
    width, views = index.width, index.views
    out_keys, out_others, in_keys, in_others = views["out_key"], views["out_other"], views["in_key"], views["in_other"]
    out_starts, in_starts, literal_starts = views["out_start"], views["in_start"], views["literal_start"]
    literals = direction != "in" and hops.literals_of is not None and bool(index.literal_relations)
    names = index.name_cache
    lists: list[list[Item]] = []
    for node in nodes:
        base = node * width
        triples: list[Triple] = []
        if direction != "in":
            lo, hi = out_starts[node], out_starts[node + 1]
            pairs = zip(out_keys[lo:hi].tolist(), out_others[lo:hi].tolist(), strict=True)
            triples = [(node, key - base, other) for key, other in pairs if mask is None or mask[key - base]]
        if direction != "out":
            lo, hi = in_starts[node], in_starts[node + 1]
            pairs = zip(in_keys[lo:hi].tolist(), in_others[lo:hi].tolist(), strict=True)
            ins = [(other, key - base, node) for key, other in pairs if mask is None or mask[key - base]]
            triples = sorted(ins) if direction == "in" else sorted({*triples, *ins})
        items = cast(list[Item], triples)
        if literals and literal_starts[node] < literal_starts[node + 1]:
            runs = _literal_runs(index, node, mask)
            if runs:
                items = list(items)
                _insert_literal_edges(index, names[node], runs, items, _after_relation(triples, node))
        lists.append(items)
    return lists


def _after_relation(triples: list[Triple], node: int) -> Callable[[int], int]:
    """Where ``node``'s edges of a relation end among ``triples`` (sorted): the place for its literals."""
    return lambda r: bisect_left(triples, (node, r + 1))


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


def _distinct_edges(hops: Hops, items: list[Item]) -> list[Edge]:
    """The records of ``items`` (distinct edges): one ``Edge`` each (no cache to fill), ids from
    the name cache; literal edges (records already) keep their places."""
    triples: list[Triple] = [item for item in items if item.__class__ is tuple]
    if not triples:
        return cast(list[Edge], list(items))
    heads, relations, tails = zip(*triples, strict=True)
    index = hops.index
    index.prefetch_names(heads + tails)
    names = index.name_cache.__getitem__
    edges = list(map(make_edge, map(names, heads), map(index.relations.__getitem__, relations), map(names, tails)))
    if len(triples) < len(items):
        made = iter(edges).__next__
        edges = [made() if item.__class__ is tuple else item for item in items]  # type: ignore[misc]
    return edges
