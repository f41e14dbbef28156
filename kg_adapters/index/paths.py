"""``paths`` on the index: relation-constrained walks (:func:`constrained_paths`) and the common
all-``out``/``in`` one (:func:`directed_paths`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from kg_adapters.base import Direction
from kg_adapters.index import tuning
from kg_adapters.index.hops import Hops, Step, _relation_ends
from kg_adapters.index.read import TraversalIndex
from kg_adapters.index.records import make_edge, make_path
from kg_adapters.records import Edge, Literal, Node, Path, PathResult

Option = tuple[int | Node, Edge]
"""Where an edge leads from the node it was reached at, and its record."""


class _Full(Exception):
    pass


def constrained_paths(  # noqa: C901 -- issue 22 (index part) rebuilds the walks on one read primitive
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
            return PathResult([make_path(start, (*prefix, edge)) for start, prefix, edge in leaves])
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
                paths.extend([make_path(start, (*prefix, edge)) for edge in edges[: room - len(paths)]])
                raise _Full
            paths.extend([make_path(start, (*prefix, edge)) for edge in edges])
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


def directed_paths(  # noqa: C901 -- issue 22 (index part) rebuilds the walks on one read primitive
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
        if len(frontier) > tuning.SMALL_FRONTIER:
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
        return PathResult([make_path(start, (*prefix, edge)) for start, prefix, node in level for edge in finals[node]])
    return _first_paths(((start, prefix, edge) for start, prefix, node in level for edge in finals[node]), cap)


def _first_paths(leaves: Iterator[tuple[str, tuple[Edge, ...], Edge]], cap: int) -> PathResult:
    """The paths of the first ``cap - 1`` (start, prefix, last edge) leaves, truncated when there are more."""
    made = [make_path(start, (*prefix, edge)) for start, prefix, edge in itertools.islice(leaves, cap)]
    if len(made) == cap:
        del made[-1]
        return PathResult(made, truncated=True)
    return PathResult(made)
