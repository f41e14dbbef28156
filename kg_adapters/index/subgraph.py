"""``subgraph`` on the index: the k-hop neighbourhood of seeds, literal edges included."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from functools import partial
from typing import cast

from kg_adapters.base import Direction
from kg_adapters.index import tuning
from kg_adapters.index.hops import Hops, Item, Mask, Triple, _insert_literal_edges, _literal_runs
from kg_adapters.index.neighbors import _answer_pairs, _in_records, _out_records
from kg_adapters.index.read import TraversalIndex
from kg_adapters.index.records import make_edge
from kg_adapters.records import Edge, EdgeList


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
        if len(frontier) > tuning.SMALL_FRONTIER:  # one vectorised hop
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
    if len(nodes) > tuning.SMALL_FRONTIER:
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
