"""``paths`` on the index: :func:`index_paths` answers exactly what ``algorithms.constrained_paths``
answers (no CVT steps), hop by hop on integers.

Each hop expands its frontier (distinct nodes) through one relation, a backward pass keeps the
nodes that can still complete the path, and records are made only for edges of answered paths,
each once (paths sharing a prefix share its edges), a hop's ids decoded together. The common call
(every hop ``out`` or ``in``, paths need not be simple) reads each hop's ends for the whole frontier
at once (:meth:`Side.ends <kg_adapters.index.read.Side.ends>`); the others read each node's edges as
every walk does (:func:`~kg_adapters.index.edges.read_edges`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any, cast

from kg_adapters.index.edges import Item, edge_items, place_literals, read_edges, triple_records
from kg_adapters.index.ids import CheckedPaths
from kg_adapters.index.read import Runs, TraversalIndex
from kg_adapters.index.records import make_edge, make_path
from kg_adapters.records import Edge, Literal, Node, Path, PathResult

Hop = Callable[[int, Iterable[int]], tuple[dict[int, list[Any]], dict[int, list[Edge]]]]
"""``hop(depth, nodes)``: where the edges of each of ``nodes`` that lead on (every one, on the last
hop) go on the hop at ``depth`` (a node number, or the literal a last hop ends on), and their records."""
_repeat = itertools.repeat


def index_paths(index: TraversalIndex, checked: CheckedPaths, simple: bool) -> PathResult:
    """``paths`` for checked arguments (:meth:`IndexIds.checked_paths`: the canonical start ids and
    their numbers, one relation number per hop, None where the index has no such edge, one direction
    per hop, the path budget)."""
    if simple or "both" in checked[3]:
        return _constrained_paths(index, checked, simple)
    return _directed_paths(index, checked)


def _directed_paths(index: TraversalIndex, checked: CheckedPaths) -> PathResult:
    """Every hop ``out`` or ``in``, paths not necessarily simple: each hop's ends read for the whole
    frontier at once, and only the last hop's literal runs looked up."""
    starts, start_numbers, relations, directions, limit = checked
    last = len(relations) - 1
    layers: list[dict[int, list[int]]] = []
    frontier = [n for n in dict.fromkeys(start_numbers) if n is not None]
    for depth, relation in enumerate(relations):
        if relation is None or not frontier:
            return PathResult()  # no walk gets past this hop
        lists = index.sides[directions[depth]].ends(frontier, relation)
        layers.append(dict(zip(frontier, lists)))  # noqa: B905 (equal lengths; the keyword slows each call of this hot loop)
        if depth < last:  # one node's ends of one relation are distinct already
            frontier = lists[0] if len(lists) == 1 else list(dict.fromkeys(itertools.chain.from_iterable(lists)))
    runs: dict[int, Runs] = {}
    if directions[last] == "out" and relations[last] in index.literal_relations:  # the walk can end on a literal
        for node in frontier:
            found = index.literal_runs(node, relations[last])
            if found:
                runs[node] = found
    ending = {node for node, ends in layers[last].items() if ends}
    ending.update(runs)
    alive = _alive(layers, ending)
    # expanded hop by hop as _expand does, each hop's records made here from its ends (the common call)
    labels, names = index.relations, index.name_cache
    cap = limit + 1 if limit is not None else None
    level: list[tuple[str, tuple[Edge, ...], int]] = [
        (start, (), number) for start, number in zip(starts, start_numbers, strict=True) if number in alive[0]
    ]
    for depth in range(last):
        layer, keep, label = layers[depth], alive[depth + 1], labels[relations[depth]]  # type: ignore[index]
        forwards = directions[depth] == "out"
        options: dict[int, list[tuple[int, Edge]]] = {}  # per node: (where each kept edge leads, its record)
        kept = {node: [end for end in layer[node] if end in keep] for node in {node for _, _, node in level}}
        index.decode_lists(kept.values())  # the hop's missed ids in one batch
        for node, ends in kept.items():
            name = names[node]
            if forwards:
                edges = [make_edge(name, label, names[other]) for other in ends]
            else:
                edges = [make_edge(names[other], label, name) for other in ends]
            options[node] = list(zip(ends, edges))  # noqa: B905 (equal lengths; the keyword slows each call of this hot loop)
        level = [(start, (*prefix, edge), end) for start, prefix, node in level for end, edge in options[node]]
        if cap is not None:
            del level[cap:]
    layer, label = layers[last], labels[relations[last]]  # type: ignore[index]
    forwards = directions[last] == "out"
    finals: dict[int, list[Edge]] = {}
    nodes = {node for _, _, node in level}
    index.decode_lists([layer[node] for node in nodes])  # the last hop's missed ids in one batch
    for node in nodes:
        name = names[node]
        if forwards:
            finals[node] = edges = [make_edge(name, label, names[other]) for other in layer[node]]
            if node in runs:  # its literal edges, after the entity ones
                found = runs[node]
                literals = index.literal_records(found)
                place_literals(edges, [found[0][0]] * len(edges), found, literals, _literal_maker(name, label))
        else:
            finals[node] = [make_edge(names[other], label, name) for other in layer[node]]
    return _paths_of(level, finals, cap)


def _literal_maker(name: str, label: str) -> Callable[[int, list[Literal]], Iterable[Edge]]:
    return lambda _, values: map(make_edge, _repeat(name), _repeat(label), values)


def _constrained_paths(index: TraversalIndex, checked: CheckedPaths, simple: bool) -> PathResult:
    """The general walk: hops may go ``both`` ways, paths may have to be simple. Each node's edges are
    read as :func:`read_edges` gives them (literal edges on the last hop)."""
    starts, start_numbers, relations, directions, limit = checked
    last = len(relations) - 1
    layers: list[dict[int, list[Item]]] = []
    ends_layers: list[dict[int, list[Any]]] = []
    frontier = [n for n in dict.fromkeys(start_numbers) if n is not None]
    for depth, (relation, direction) in enumerate(zip(relations, directions, strict=True)):
        if relation is None or not frontier:
            return PathResult()  # no walk gets past this hop
        literals = depth == last
        layer = {
            node: edge_items(index, node, read_edges(index, node, direction, relation, None, None, literals))
            for node in frontier
        }
        ends = {node: [_end(item, node) for item in items] for node, items in layer.items()}
        layers.append(layer)
        ends_layers.append(ends)
        if depth < last:  # (no literal edges before the last hop)
            frontier = list(dict.fromkeys(cast(Iterable[int], itertools.chain.from_iterable(ends.values()))))
    alive = _alive(ends_layers, {node for node, items in layers[last].items() if items})
    hop = partial(_constrained_hop, index, layers, ends_layers, alive)
    if not simple:
        return _expand(starts, start_numbers, alive, hop, limit)
    return _simple_paths(starts, start_numbers, alive, hop, limit)


def _constrained_hop(
    index: TraversalIndex,
    layers: list[dict[int, list[Item]]],
    ends_layers: list[dict[int, list[Any]]],
    alive: list[set[int]],
    depth: int,
    nodes: Iterable[int],
) -> tuple[dict[int, list[Any]], dict[int, list[Edge]]]:
    """A :data:`Hop` of :func:`_constrained_paths`."""
    keep = alive[depth + 1] if depth + 1 < len(alive) else None
    ends: dict[int, list[Any]] = {}
    records: dict[int, list[Edge]] = {}
    for node in nodes:
        items, found = layers[depth][node], ends_layers[depth][node]
        if keep is not None:
            items = [item for item, end in zip(items, found, strict=True) if end in keep]
            found = [end for end in found if end in keep]
        ends[node], records[node] = found, triple_records(index, items)
    return ends, records


def _end(item: Item, node: int) -> int | Node:
    """Where an edge of ``node`` leads: its other end (itself for a self-loop), or a literal edge's literal."""
    if isinstance(item, tuple):
        head, _, tail = item
        return tail if head == node else head
    return item.tail


def _alive(layers: Sequence[Mapping[int, list[Any]]], ending: set[int]) -> list[set[int]]:
    """Per hop, the nodes of its frontier from which the rest of the path can be completed (the
    backward pass): ``ending`` at the last hop, then the nodes with an end alive one hop further."""
    alive = [ending]
    ahead = ending
    for depth in range(len(layers) - 2, -1, -1):
        ahead = {node for node, ends in layers[depth].items() if not ahead.isdisjoint(ends)}
        alive.append(ahead)
    alive.reverse()
    return alive


def _expand(
    starts: list[str], start_numbers: list[int | None], alive: list[set[int]], hop: Hop, limit: int | None
) -> PathResult:
    """The paths, not necessarily simple: every prefix kept completes (the backward pass saw to it),
    so expanding hop by hop, in order, lists them in depth-first order, and ``limit + 1`` prefixes
    per hop are enough."""
    last = len(alive) - 1
    cap = limit + 1 if limit is not None else None
    level: list[tuple[str, tuple[Edge, ...], Any]] = [
        (start, (), number) for start, number in zip(starts, start_numbers, strict=True) if number in alive[0]
    ]
    for depth in range(last):
        ends, records = hop(depth, {node for _, _, node in level})
        level = [
            (start, (*prefix, edge), end)
            for start, prefix, node in level
            for end, edge in zip(ends[node], records[node])  # noqa: B905 (equal lengths; the keyword slows each call of this hot loop)
        ]
        if cap is not None:
            del level[cap:]
    _, records = hop(last, {node for _, _, node in level})
    return _paths_of(level, records, cap)


def _paths_of(
    level: list[tuple[str, tuple[Edge, ...], Any]], records: dict[int, list[Edge]], cap: int | None
) -> PathResult:
    """The paths ending with each prefix of ``level`` (start, edges, last node) continued by each of
    that node's last-hop ``records``; with ``cap``, the first ``cap - 1`` (``truncated`` if there are more)."""
    if cap is None:
        return PathResult(
            [make_path(start, (*prefix, edge)) for start, prefix, node in level for edge in records[node]]
        )
    leaves = ((start, prefix, edge) for start, prefix, node in level for edge in records[node])
    made = [make_path(start, (*prefix, edge)) for start, prefix, edge in itertools.islice(leaves, cap)]
    if len(made) == cap:
        del made[-1]
        return PathResult(made, truncated=True)
    return PathResult(made)


class _Full(Exception):
    pass


def _simple_paths(
    starts: list[str], start_numbers: list[int | None], alive: list[set[int]], hop: Hop, limit: int | None
) -> PathResult:
    """The simple paths (no node twice), depth first in edge order from each start."""
    last = len(alive) - 1
    memo: list[dict[int, tuple[list[Any], list[Edge]]]] = [{} for _ in alive]
    start = ""
    room: int | None = None
    paths: list[Path] = []

    def walk(depth: int, node: int, prefix: tuple[Edge, ...], visited: tuple[int, ...]) -> None:
        """Appends to ``paths`` every completion of ``prefix`` from ``node`` at ``depth``; raises
        ``_Full`` when one more than ``room`` would be needed."""
        options = memo[depth].get(node)
        if options is None:
            ends, records = hop(depth, (node,))
            options = memo[depth][node] = (ends[node], records[node])
        ends_of, edges = options
        if depth == last:
            edges = [edge for end, edge in zip(ends_of, edges, strict=True) if end not in visited]
            if room is not None and len(paths) + len(edges) > room:
                paths.extend([make_path(start, (*prefix, edge)) for edge in edges[: room - len(paths)]])
                raise _Full
            paths.extend([make_path(start, (*prefix, edge)) for edge in edges])
            return
        for end, edge in zip(ends_of, edges, strict=True):
            if end not in visited:
                walk(depth + 1, end, (*prefix, edge), (*visited, end))

    result = PathResult()
    for start, number in zip(starts, start_numbers, strict=True):  # noqa: B007 (walk reads start)
        if number is None or number not in alive[0]:
            continue
        room = limit - len(result) if limit is not None else None
        paths = []
        try:
            walk(0, number, (), (number,))
        except _Full:
            result.truncated = True
        result.extend(paths)
        if result.truncated:
            return result
    return result
