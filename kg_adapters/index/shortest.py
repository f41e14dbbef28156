"""``shortest_paths`` on the index: a bidirectional level-synchronous BFS per (source, target) pair."""

from __future__ import annotations

import itertools
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

from kg_adapters.algorithms import shortest_path_steps, shortest_walks
from kg_adapters.base import Direction
from kg_adapters.index import tuning
from kg_adapters.index.edges import Triple, triple_records
from kg_adapters.index.read import Mask, Side, TraversalIndex
from kg_adapters.index.records import make_path
from kg_adapters.records import Path, PathResult

if TYPE_CHECKING:  # numpy is imported only by a hop over a large frontier
    import numpy as np
    import numpy.typing as npt

    Ints = npt.NDArray[np.int64]


_REVERSE: dict[Direction, Direction] = {"out": "in", "in": "out", "both": "both"}


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
    index: TraversalIndex,
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
    walks: list[tuple[Triple, ...]] = []
    truncated = False
    hidden = _hidden(mask)
    for source, target, s, t in pairs:
        for walk in _pair_walks(index, source == target, s, t, max_hops, direction, mask, hidden):
            if limit is not None and len(walks) >= limit:
                truncated = True
                break
            starts.append(source)
            walks.append(walk)
        if truncated:
            break
    result = PathResult(_answer_paths(index, starts, walks))
    result.truncated = truncated
    return result


def _answer_paths(index: TraversalIndex, starts: list[str], walks: list[tuple[Triple, ...]]) -> list[Path]:
    """The records of ``walks``: one ``Edge`` per distinct edge, shared by the paths that walk it."""
    distinct: list[Triple] = list(dict.fromkeys(triple for walk in walks for triple in walk))
    made = dict(zip(distinct, triple_records(index, distinct), strict=True)).__getitem__  # type: ignore[arg-type]
    return [make_path(start, tuple(map(made, walk))) for start, walk in zip(starts, walks, strict=True)]


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
    index: TraversalIndex,
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
    searches = (_Search(index, s, direction, mask, hidden), _Search(index, t, _REVERSE[direction], mask, hidden))
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
    index.names_of([n for options in steps.values() for (h, _, t_), _ in options for n in (h, t_)])  # decoded together
    names, relations = index.name_cache, index.relations

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
    of total degree above ``tuning.SMALL_FRONTIER`` (or of more than ``tuning.DEGREE_BY_NUMPY`` nodes) is
    expanded on numpy arrays, where a hub costs a few vectorised passes."""

    def __init__(
        self, index: TraversalIndex, root: int, direction: Direction, mask: Mask | None, hidden: list[int]
    ) -> None:
        self.mask = mask
        self.hidden = hidden
        self.sides: list[Side] = [index.out_side, index.in_side] if direction == "both" else [index.sides[direction]]
        """The CSR sides this search walks (a key range's ``view`` is its position here)."""
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
        if not isinstance(frontier, list) or len(frontier) > tuning.DEGREE_BY_NUMPY:
            import numpy as np

            nodes = np.asarray(frontier, dtype=np.int64)
            total = sum(int(side.degrees(nodes).sum()) for side in self.sides)
            self._degree, self._exact = total, True
            return total
        spans, total, counted = self._spans, self._degree, self._counted
        sides = [(view, side.starts) for view, side in enumerate(self.sides)]
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
        found = self._join(other) if final and lists and tuning.SMALL_FRONTIER > 0 else None
        if found is None:
            small = lists and not final and self.degree() <= tuning.SMALL_FRONTIER
            found = self._expand_small(other) if small else self._expand_large(other)
        self._spans, self._counted, self._degree, self._exact = [], 0, 0, False
        return found

    def _listed(self) -> bool:
        """Whether the search is still on Python lists, and its frontier small enough to stay there."""
        frontier = self.layers[-1]
        return self.depth is not None and isinstance(frontier, list) and len(frontier) <= tuning.DEGREE_BY_NUMPY

    def _spans_by_node(self) -> dict[int, list[tuple[int, int, int]]]:
        self.degree()
        found: dict[int, list[tuple[int, int, int]]] = {}
        for node, view, lo, hi in self._spans:
            found.setdefault(node, []).append((view, lo, hi))
        return found

    def _visible(self, node: int, lo: int, hi: int, side: Side) -> list[tuple[int, int]]:
        """The runs of ``[lo, hi)`` (one node's keys) whose relations the mask keeps."""
        mask = cast(Mask, self.mask)
        return [(start, stop) for r, start, stop in side.runs(lo, hi) if mask[r]]

    def _join(self, other: _Search) -> tuple[list[int], int] | None:
        """The last round as a join of the two frontiers: the edges between them are the shortest
        paths' middle edges (an edge to a node nearer the other root would have met earlier). Each
        pair of frontier nodes is covered once: by scanning either end's other ends against the
        other frontier (as a set, at C speed), or, for the pairs of two unscanned hubs, by a
        ``bisect`` per relation both have. Which nodes stay unscanned is chosen by ``_unscanned``,
        so the work follows the frontiers' sizes, not their hubs' degrees. None when even the
        cheapest choice reads more than ``tuning.JOIN_LIMIT`` edges (the caller takes a vectorised hop)."""
        found: dict[tuple[int, int, int, bool], None] = {}
        self.degree()
        mine: dict[int, list[tuple[int, int, int]]] | None = None
        hubs_pay = False  # whether leaving this side's largest nodes unscanned may cost less
        widest = max((hi - lo for _, _, lo, hi in self._spans), default=0)
        if widest * len(self.sides) + tuning.NODE_COST > tuning.PAIR_COST + tuning.HUB_COST:
            mine = self._spans_by_node()
            saving = sum(
                d for d in map(_degree_of, mine.values()) if d + tuning.NODE_COST > tuning.PAIR_COST + tuning.HUB_COST
            )
            hubs_pay = (
                saving > 2 * tuning.NODE_COST * len(other.layers[-1]) + tuning.HUB_COST
            )  # the other side's scans, at least
        bound = self._degree + tuning.NODE_COST * (len(self.layers[-1]) - len(other.layers[-1]))
        if not hubs_pay and other.degree(bound) > bound:  # scanning this side alone costs least
            if self._degree > tuning.JOIN_LIMIT:
                return None
            self._scan(self._spans, set(other.layers[-1]), found, flip=False)
            return self._joined(found, other)
        mine = self._spans_by_node() if mine is None else mine
        theirs = other._spans_by_node()
        here = sorted(zip(map(_degree_of, mine.values()), mine, strict=True), reverse=True)
        there = sorted(zip(map(_degree_of, theirs.values()), theirs, strict=True), reverse=True)
        cost, left_here, left_there = _unscanned([d for d, _ in here], [d for d, _ in there])
        if cost > tuning.JOIN_LIMIT:
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
        mask, sides = self.mask, self.sides
        for node, view, lo, hi in spans:
            side = sides[view]
            forwards = side.out
            ends = side.others[lo:hi].tolist()
            for nxt in targets.intersection(ends):
                at = -1
                for _ in range(ends.count(nxt)):
                    at = ends.index(nxt, at + 1)
                    relation = side.relation_at(lo + at)
                    if mask is None or mask[relation]:
                        edge = (nxt, relation, node, not forwards) if flip else (node, relation, nxt, forwards)
                        found[edge] = None

    def _runs(self, spans: list[tuple[int, int, int]], node: int) -> dict[bool, dict[int, tuple[int, int]]]:
        """A node's visible relation runs by direction (``True``: its out-edges): relation -> (start, stop)."""
        mask, sides = self.mask, self.sides
        runs: dict[bool, dict[int, tuple[int, int]]] = {}
        for view, lo, hi in spans:
            side = sides[view]
            runs[side.out] = {r: (start, stop) for r, start, stop in side.runs(lo, hi) if mask is None or mask[r]}
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
        others = {side.out: side.others for side in self.sides}
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
        sides, hidden = self.sides, self.hidden
        kept: list[tuple[int, int, int, int]] = []
        ends: list[int] = []
        offsets: list[int] = []
        for node, view, lo, hi in self._spans:
            side = sides[view]
            others = side.others
            if hidden:  # a hidden relation between the range's first and last key: its runs, one by one
                rels = side.rels  # (Side.relation_at, inlined: once per range)
                at = bisect_left(hidden, rels[lo])
                if at < len(hidden) and hidden[at] <= rels[hi - 1]:
                    for start, stop in self._visible(node, lo, hi, side):
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
        parts = [(side.out, *side.frontier(frontier, mask=self.mask)) for side in self.sides]
        node = np.concatenate([frontier[owner] for _, owner, _, _ in parts])
        rel = np.concatenate([part[2] for part in parts])
        nxt = np.concatenate([other for _, _, _, other in parts])
        head = np.concatenate([frontier[owner] if out else other for out, owner, _, other in parts])
        tail = np.concatenate([other if out else frontier[owner] for out, owner, _, other in parts])
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
        sides, ends, offsets = self.sides, spans.ends, spans.offsets
        for nxt in wanted:
            at = -1
            for _ in range(ends.count(nxt)):
                at = ends.index(nxt, at + 1)
                k = bisect_right(offsets, at) - 1
                node, view, lo, _ = spans.spans[k]
                side = sides[view]
                forwards = side.out
                relation = side.relation_at(lo + at - offsets[k])
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
    scan costs more than looking up their i pairs (``tuning.PAIR_COST``, ``tuning.HUB_COST``, ``tuning.NODE_COST``)."""
    total_here = sum(here) + tuning.NODE_COST * len(here)
    best = (total_here, 0, 0)  # scan this side only
    if not there:
        return best
    total_there = sum(there) + tuning.NODE_COST * len(there)
    kept_there = list(itertools.accumulate(d + tuning.NODE_COST for d in there))  # prefix costs, descending degrees
    ascending = [-d for d in there]
    kept_here = 0
    for i, d in enumerate(here, 1):
        kept_here += d + tuning.NODE_COST
        if d + tuning.NODE_COST <= tuning.PAIR_COST + tuning.HUB_COST and i < len(here):
            continue  # leaving this node unscanned cannot pay unless every node here is
        j = bisect_left(
            ascending, -(i * tuning.PAIR_COST + tuning.HUB_COST - tuning.NODE_COST)
        )  # degrees above the bar
        saved_there = kept_there[j - 1] if j else 0
        cost = (
            total_here
            - kept_here
            + total_there
            - saved_there
            + (i * j * tuning.PAIR_COST + (i + j) * tuning.HUB_COST if j else 0)
        )
        if cost < best[0]:
            best = (cost, i, j)
    return best


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
