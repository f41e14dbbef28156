"""A node's edges in answer order (``edge_sort_key``), composed from the one read of the index,
:meth:`Side.edges <kg_adapters.index.read.Side.edges>`, and the one read of its literals,
:meth:`TraversalIndex.literal_runs <kg_adapters.index.read.TraversalIndex.literal_runs>`.

This module is where the order of an answer is decided, once for every walk: :func:`read_edges`
reads a node's edges as numbers, cut at a limit before any id is decoded; :func:`place_literals`
puts literal edges after the entity edges of their relation; :func:`split_both` and
:func:`merge_both` put the out-edges among the in-edges for ``both`` (a self-loop once);
:func:`edge_records` and :func:`edge_items` make the answer's records (or, for walks that still
need the numbers, integer triples with the literal edges as records).
"""

from __future__ import annotations

import itertools
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from typing import TypeVar

from kg_adapters.base import Direction
from kg_adapters.index.read import Mask, Pairs, Runs, TraversalIndex
from kg_adapters.index.records import make_edge
from kg_adapters.records import Edge, Literal

Triple = tuple[int, int, int]
Item = Triple | Edge
"""An edge inside a walk: an entity-to-entity edge as numbers (head, relation, tail), or a literal
edge as its record."""
NodeEdges = tuple[Pairs, Runs, Pairs, int, bool]
"""What :func:`read_edges` read of one node: (out-edges, literal runs, in-edges, split, cut). Out-
and in-edges are (relations, other ends) in answer order; the in-edges before ``split`` come before
the out-edges; ``cut`` says that a limit left edges out."""

_Made = TypeVar("_Made")
_repeat = itertools.repeat


def read_edges(
    index: TraversalIndex,
    node: int,
    direction: Direction,
    relation: int | None = None,
    mask: Mask | None = None,
    limit: int | None = None,
    literals: bool = True,
) -> NodeEdges:
    """The edges of entity ``node`` in ``direction``, as numbers in answer order: of one
    ``relation``, of the relations ``mask`` keeps, or of all; with ``literals``, its literal objects
    (walking out). With ``limit``, the first ``limit`` edges of the answer only, cut on the numbers
    (no id is decoded, no record made, for an edge left out; a hub's other edges are not read)."""
    more = None if limit is None else limit + 1  # one more than kept shows whether the cut left any out
    runs: Runs = []
    if direction == "in":
        outs: Pairs = ([], [])
    else:
        outs = index.out_side.edges(node, relation, mask, more)
        if literals and index.literal_relations and (relation is None or relation in index.literal_relations):
            runs = index.literal_runs(node, relation, mask)
    if direction == "out":
        ins: Pairs = ([], [])
        split = 0
    else:
        ins = index.in_side.edges(node, relation, mask, more)
        split = len(ins[0]) if direction == "in" else split_both(ins, node)
    if limit is None:
        return outs, runs, ins, split, False
    return _cut(outs, runs, ins, split, limit)


def split_both(ins: Pairs, node: int) -> int:
    """Where ``node``'s out-edges go among its in-edges (``ins``, by head) when both are asked: after
    the in-edges whose head sorts before the node. Its self-loops are dropped from ``ins``: they are
    out-edges too, and an edge is answered once."""
    relations, heads = ins
    first = bisect_left(heads, node)
    last = bisect_right(heads, node, first)
    if last > first:
        del heads[first:last], relations[first:last]
    return first


def _cut(outs: Pairs, runs: Runs, ins: Pairs, split: int, limit: int) -> NodeEdges:
    """The first ``limit`` edges of the answer :func:`read_edges` read, on the numbers: the in-edges
    before the split, then the out-edges with the literal runs placed among them, then the other
    in-edges."""
    relations, tails = outs
    in_relations, heads = ins
    if len(tails) + sum(last - first for _, first, last in runs) + len(heads) <= limit:
        return outs, runs, ins, split, False
    before = min(split, limit)
    room = limit - before
    kept: Runs = []
    literal_count = 0
    for r, first, last in runs:
        at = bisect_right(relations, r) + literal_count  # where the run starts among the out-edges
        if at >= room:
            break
        take = min(last - first, room - at)
        kept.append((r, first, first + take))
        literal_count += take
    entity = max(min(len(tails), room - literal_count), 0)
    del relations[entity:], tails[entity:]
    after = room - entity - literal_count
    del heads[split + after :], in_relations[split + after :]
    del heads[before:split], in_relations[before:split]
    return outs, kept, ins, before, True


def place_literals(
    items: list[_Made],
    relations: list[int],
    runs: Runs,
    values: list[Literal],
    make: Callable[[int, list[Literal]], Iterable[_Made]],
) -> None:
    """Puts a node's literal edges into ``items``, its out-edges in answer order (``relations``
    theirs): each run of ``runs`` (its records in ``values``, all runs' in order) after the entity
    edges of its relation, which its literal tails sort after (``node_sort_key``). ``make(relation,
    records)`` makes the run's edges as ``items`` holds them."""
    end = len(values)
    for r, first, last in reversed(runs):  # from the last place back: earlier places stay valid
        start = end - (last - first)
        at = bisect_right(relations, r)
        items[at:at] = make(r, values[start:end])
        end = start


def merge_both(ins: list[_Made], split: int, outs: list[_Made]) -> list[_Made]:
    """A node's edges in answer order from its in-edges (``split`` from :func:`split_both`) and its
    out-edges (literal ones placed): the in-edges before the split, the out-edges, the other in-edges.
    Either list may be returned, extended."""
    if not ins:
        return outs
    if split == len(ins):
        ins.extend(outs)
        return ins
    if split == 0:
        outs.extend(ins)
        return outs
    return [*ins[:split], *outs, *ins[split:]]


def _literal_edges(index: TraversalIndex, name: str) -> Callable[[int, list[Literal]], Iterable[Edge]]:
    """``make`` for :func:`place_literals`: the literal edges of the entity ``name``."""
    labels = index.relations
    return lambda relation, values: map(make_edge, _repeat(name), _repeat(labels[relation]), values)


def edge_records(index: TraversalIndex, name: str, edges: NodeEdges) -> list[Edge]:
    """The records of what :func:`read_edges` read of the entity ``name``, in answer order (its ids
    decoded together, through the name cache)."""
    (_, tails), _, (_, heads), _, _ = edges
    cache = index.name_cache
    if (tails and (tails[0] not in cache or tails[-1] not in cache)) or (
        heads and (heads[0] not in cache or heads[-1] not in cache)
    ):  # (decode_names' own test, spared a call when the ids are cached)
        index.decode_missing(tails + heads)
    return named_records(index, name, edges)


def edges_records(index: TraversalIndex, names: list[str], read: list[NodeEdges]) -> list[list[Edge]]:
    """:func:`edge_records` of several entities (``names``, what :func:`read_edges` read of each in
    ``read``), the ids all of them miss decoded in one batch: a call touching many nodes decodes
    once, not node by node."""
    cache = index.name_cache
    missing: list[int] = []
    for (_, tails), _, (_, heads), _, _ in read:
        if tails and (tails[0] not in cache or tails[-1] not in cache):
            missing += tails
        if heads and (heads[0] not in cache or heads[-1] not in cache):
            missing += heads
    if missing:
        index.decode_missing(missing)
    return list(map(named_records, _repeat(index), names, read))


def named_records(index: TraversalIndex, name: str, edges: NodeEdges) -> list[Edge]:
    """:func:`edge_records` once the ids are decoded (a miss left is decoded when read)."""
    (relations, tails), runs, (in_relations, heads), split, _ = edges
    labels, names = index.relations.__getitem__, index.name_cache.__getitem__
    out = list(map(make_edge, _repeat(name), map(labels, relations), map(names, tails)))
    if runs:
        place_literals(out, relations, runs, index.literal_records(runs), _literal_edges(index, name))
    if not heads:
        return out
    into = list(map(make_edge, map(names, heads), map(labels, in_relations), _repeat(name)))
    return merge_both(into, split, out)


def edge_items(index: TraversalIndex, node: int, edges: NodeEdges) -> list[Item]:
    """What :func:`read_edges` read of ``node`` in answer order as walks use it: entity edges as
    (head, relation, tail) numbers, literal edges as records."""
    (relations, tails), runs, (in_relations, heads), split, _ = edges
    out: list[Item] = list(zip(_repeat(node), relations, tails))  # noqa: B905 (equal lengths; the keyword slows each call of this hot loop)
    if runs:
        place_literals(out, relations, runs, index.literal_records(runs), _literal_edges(index, index.name(node)))
    if not heads:
        return out
    return merge_both(list(zip(heads, in_relations, _repeat(node))), split, out)  # noqa: B905 (equal lengths; the keyword slows each call of this hot loop)


def triple_records(index: TraversalIndex, items: list[Item]) -> list[Edge]:
    """The records of ``items``: one ``Edge`` per triple (ids decoded together, through the name
    cache); literal edges, records already, keep their places."""
    triples: list[Triple] = [item for item in items if item.__class__ is tuple]
    if not triples:
        return items  # type: ignore[return-value]
    heads, relations, tails = zip(*triples)  # noqa: B905 (equal lengths; the keyword slows each call of this hot loop)
    names = index.names_of([*heads, *tails])
    count = len(heads)
    made = list(map(make_edge, names[:count], map(index.relations.__getitem__, relations), names[count:]))
    if len(triples) < len(items):
        next_made = iter(made).__next__
        made = [next_made() if item.__class__ is tuple else item for item in items]  # type: ignore[misc]
    return made
