"""``subgraph`` on the index: :func:`k_hop_subgraph` answers exactly what ``algorithms.k_hop_subgraph``
answers (literal edges included, as ``neighbors`` gives them), hop by hop on integers.
"""

from __future__ import annotations

from kg_adapters.base import Direction
from kg_adapters.index.edges import Item, NodeEdges, edge_items, named_records, read_edges, triple_records
from kg_adapters.index.read import Mask, Runs, TraversalIndex
from kg_adapters.records import Edge, EdgeList


def k_hop_subgraph(
    index: TraversalIndex,
    seed_numbers: list[int | None],
    depth: int,
    direction: Direction,
    mask: Mask | None,
    limit: int | None,
) -> EdgeList:
    """The distinct edges within ``depth`` hops of the seeds (their numbers: None for an id the index
    lacks), nearest first, each node's edges in answer order; cut at ``limit`` edges (``truncated``).
    An edge can only be met twice when the walk goes ``both`` ways (from its head and from its tail),
    so only then are edges checked for repeats; the last hop's ends are not collected."""
    if direction != "both":
        return _one_way(index, [n for n in seed_numbers if n is not None], depth, direction == "out", mask, limit)
    items: list[Item] = []
    frontier = [n for n in seed_numbers if n is not None]
    seen_nodes: set[int] = set(frontier)
    seen_edges: set[Item] = set()
    truncated = False
    for hop in range(depth):
        if not frontier:
            break
        leads_on = hop < depth - 1
        reached: list[int] = []
        for node in frontier:
            edges = [
                item
                for item in edge_items(index, node, read_edges(index, node, direction, None, mask))
                if item not in seen_edges
            ]
            seen_edges.update(edges)
            if limit is not None and len(items) + len(edges) > limit:
                edges = edges[: limit - len(items)]
                truncated = True
            items.extend(edges)
            if leads_on:
                for item in edges:
                    if item.__class__ is tuple:
                        head, _, tail = item
                        nxt = tail if head == node else head
                        if nxt not in seen_nodes:
                            seen_nodes.add(nxt)
                            reached.append(nxt)
            if truncated:
                break
        if truncated:
            break
        frontier = reached
    return EdgeList(triple_records(index, items), truncated=truncated)


def _one_way(
    index: TraversalIndex, frontier: list[int], depth: int, out: bool, mask: Mask | None, limit: int | None
) -> EdgeList:
    """:func:`k_hop_subgraph` from the seeds' numbers walking only ``out`` (or only ``in``): each edge
    is met once (from the one node it is read at), so a hop's edges become records once the hop is
    read (the ids they name decoded in one batch), and only the ends that lead on are kept as
    integers. With ``limit``, a node's edges are cut to the room left before any id is decoded (a hub
    costs what is kept)."""
    direction: Direction = "out" if out else "in"
    names, literals = index.name_cache, index.literal_cache
    records: list[Edge] = []
    seen = set(frontier)
    for hop in range(depth):
        if not frontier:
            break
        leads_on = hop < depth - 1
        reached: list[int] = []
        read: list[NodeEdges] = []
        missing: list[int] = []
        literal_runs: Runs = []
        kept = len(records)
        for node in frontier:
            edges = read_edges(index, node, direction, None, mask, None if limit is None else limit - kept, out)
            read.append(edges)
            ends = edges[0][1] if out else edges[2][1]
            if ends and (ends[0] not in names or ends[-1] not in names):
                missing += ends  # (decoded with the hop's other misses)
            if edges[1] and edges[1][0][1] not in literals:
                literal_runs += edges[1]
            if edges[4]:  # cut: the budget is spent
                break
            if limit is not None:
                kept += _edge_count(edges)
            if leads_on:
                for end in ends:
                    if end not in seen:
                        seen.add(end)
                        reached.append(end)
        if missing:
            index.decode_missing(missing)
        if literal_runs:
            index.literal_records(literal_runs)  # (decoded in one batch, kept for the records below)
        for node, edges in zip(frontier, read):  # noqa: B905 (read stops at a cut; the keyword slows this loop)
            records.extend(named_records(index, names[node], edges))
        if read[-1][4]:
            return EdgeList(records, truncated=True)
        frontier = reached
    return EdgeList(records)


def _edge_count(edges: NodeEdges) -> int:
    """How many edges :func:`read_edges` read (entity and literal ones)."""
    (_, tails), runs, (_, heads), _, _ = edges
    return len(tails) + len(heads) + sum(last - first for _, first, last in runs)
