"""``neighbors`` and ``relations`` of one entity on the index, in answer order."""

from __future__ import annotations

import heapq
import itertools
import operator
from bisect import bisect_left, bisect_right
from functools import partial

from kg_adapters.base import Direction
from kg_adapters.index import tuning
from kg_adapters.index.hops import Mask, _insert_literal_edges, _literal_runs, _run, _segments, literal_relations
from kg_adapters.index.layout import STARTS
from kg_adapters.index.read import TraversalIndex
from kg_adapters.index.records import make_edge
from kg_adapters.records import Edge


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
        if hi - lo <= tuning.SCAN:
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
    if hi - lo <= 4 * limit + tuning.SCAN:
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


def neighbor_edges(  # noqa: C901 -- issue 22 (index part) rebuilds the walks on one read primitive
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
