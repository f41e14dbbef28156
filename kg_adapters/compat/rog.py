"""RoG's ``src/utils/graph_utils.py`` over any :class:`KnowledgeGraph`: change one import.

Before (RoG, a networkx graph rebuilt per question)::

    from utils.graph_utils import build_graph, bfs_with_rule, get_truth_paths, get_simple_paths

After (the same calls; ``graph`` is any KnowledgeGraph -- a store, Virtuoso, or ``build_graph``)::

    from kg_adapters.compat.rog import build_graph, bfs_with_rule, get_truth_paths, get_simple_paths

Signatures and return shapes are RoG's: a list of paths, each a list of ``(u, relation, v)``
tuples in walk order (``u`` is the node the walk left, so a hop walked against the KG edge's
direction reads ``(tail, relation, head)``, as in RoG's undirected graph). Ids are the graph's
(names for ``build_graph`` and stores loaded with ``--format rog-dataset``; a literal is given
as its text). ``graph=None`` uses the graph set with :func:`use`.

Where the answers differ from RoG's own functions over the same triples, ours keep edges RoG loses:

1. **Several relations between one pair.** RoG's ``nx.Graph`` keeps one relation per node pair
   (the triple added last overwrites the others, whatever their direction); we keep every
   triple, so a walk over such a pair is answered once per matching relation. With one relation
   per pair the answers are the same.
2. **Duplicates.** Two KG edges that read as the same tuples (``a r b`` and ``b r a`` walked
   from ``a``; a self-loop walked either way) give one path, as in RoG.
3. **Literals** are values, not nodes: a walk may end at one but never passes through it (RoG's
   graph joins every triple sharing the string ``"1961"``). Literal ends are given as text.
4. **Order.** Paths come grouped as RoG groups them (per start, per ``(q, a)`` pair in the
   given order), but within a group in our BFS order, not networkx's insertion order.
5. ``bfs_with_rule``'s ``max_p`` is accepted and ignored, as RoG ignores it (its cut-off is
   commented out); ``max_paths=`` bounds the answer instead (None: unbounded, as RoG).
6. ``get_truth_paths`` looks ``max_hops=4`` deep (RoG: unbounded; RoG's WebQSP/CWQ subgraphs
   are 2-4 hops); ``get_simple_paths`` takes ``max_paths=`` too.
7. A start or answer with no edge is skipped (RoG: ``not in graph``). A question entity that is
   also an answer (``h == t``) gives one empty path in ``get_truth_paths`` and none in
   ``get_simple_paths``, as under the networkx RoG pins (3.1; later releases give an empty path).
8. ``get_simple_paths`` raises ``InvalidTermError`` past ``max_paths`` (100,000) partial paths
   instead of enumerating without bound (``max_paths=None`` lifts it).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

from kg_adapters.base import KnowledgeGraph
from kg_adapters.budgets import check_count
from kg_adapters.compat._default import DefaultGraph
from kg_adapters.errors import InvalidTermError
from kg_adapters.records import Edge, Literal, Node, Path

Triple = tuple[str, str, str]

_default = DefaultGraph("kg_adapters.compat.rog", "pass one")


def use(kg: KnowledgeGraph | None) -> None:
    """Sets the graph the functions read when called with ``graph=None``."""
    _default.use(kg)


_resolve = _default.resolve


def build_graph(graph: Iterable[Sequence[str]]) -> KnowledgeGraph:
    """An in-memory graph of RoG ``[head, relation, tail]`` name triples (a dataset row's
    ``graph``), in the ``names`` profile: ids are the names as written; relations are stripped
    of surrounding spaces as RoG strips them. Unlike RoG's, it keeps every triple.

    Raises:
        InvalidTermError: a triple that is not three non-empty strings.
    """
    import pyoxigraph as ox

    from kg_adapters.backends.oxigraph import OxigraphGraph
    from kg_adapters.profiles.names import name_quads

    kg = OxigraphGraph(None, profile="names")
    kg.store.extend(list(name_quads(_triples(graph), [ox.DefaultGraph()])))
    return kg


def _triples(graph: Iterable[Sequence[str]]) -> Iterable[Triple]:
    if isinstance(graph, (str, bytes)) or not isinstance(graph, Iterable):
        raise InvalidTermError(f"the graph must be a list of [head, relation, tail], got {type(graph).__name__}")
    for number, triple in enumerate(graph):
        if not isinstance(triple, Collection) or isinstance(triple, (str, bytes)) or len(triple) != 3:
            raise InvalidTermError(f"triple {number} is not [head, relation, tail] strings: {triple!r:.120}")
        if not all(isinstance(x, str) for x in triple):
            raise InvalidTermError(f"triple {number} is not [head, relation, tail] strings: {triple!r:.120}")
        head, relation, tail = triple
        yield head, relation.strip(), tail


def _text(node: Node) -> str:
    return node.value if isinstance(node, Literal) else node


def walk_tuples(path: Path) -> list[Triple]:
    """A path as RoG's ``[(u, relation, v), ...]`` in walk order."""
    tuples: list[Triple] = []
    current: Node = path.start
    for edge in path.edges:
        forward = edge.head == current
        following = edge.tail if forward else edge.head
        tuples.append((_text(current), edge.relation, _text(following)))
        current = following
    return tuples


def _distinct(paths: Iterable[list[Triple]]) -> list[list[Triple]]:
    return [list(p) for p in dict.fromkeys(tuple(p) for p in paths)]


def _present(kg: KnowledgeGraph, ids: Sequence[str]) -> set[str]:
    """The ids with at least one edge (RoG's ``node in graph``); an id the graph's profile cannot
    even spell (a name asked of a Freebase store) is not in the graph either."""
    valid = [node for node in ids if kg.profile.spells(node)]
    if not valid:
        return set()
    found = kg.neighbors(valid, direction="both", limit_per_entity=1)
    return {node for node, edges in found.items() if edges}


def bfs_with_rule(
    graph: KnowledgeGraph | None,
    start_node: str,
    target_rule: Sequence[str],
    max_p: int = 10,
    *,
    max_paths: int | None = None,
) -> list[list[Triple]]:
    """Every walk from ``start_node`` whose relations are ``target_rule``, each hop in either
    direction (RoG's rule-constrained BFS). ``max_p`` is ignored, as in RoG."""
    kg = _resolve(graph)
    rule = list(target_rule)
    if not rule:
        return [[]]
    if not _present(kg, [start_node]):
        return []
    found = kg.paths(start_node, rule, directions=["both"] * len(rule), max_paths=check_count(max_paths, "max_paths"))
    return _distinct(walk_tuples(path) for path in found)


def get_truth_paths(
    q_entity: Sequence[str], a_entity: Sequence[str], graph: KnowledgeGraph | None = None, *, max_hops: int = 4
) -> list[list[Triple]]:
    """The shortest paths (any edge direction) between each question entity and each answer
    entity, in ``q_entity`` then ``a_entity`` order: RoG's training targets."""
    kg = _resolve(graph)
    check_count(max_hops, "max_hops", minimum=1, required=True)
    heads, tails = _ids(q_entity, "q_entity"), _ids(a_entity, "a_entity")
    present = _present(kg, list(dict.fromkeys([*heads, *tails])))
    sources = [h for h in dict.fromkeys(heads) if h in present]
    targets = [t for t in dict.fromkeys(tails) if t in present]
    if not sources or not targets:
        return []
    found = kg.shortest_paths(sources, targets, max_hops=max_hops, direction="both")
    by_pair: dict[tuple[str, str], list[list[Triple]]] = {}
    for path in found:
        end = path.end
        by_pair.setdefault((path.start, _text(end)), []).append(walk_tuples(path))
    return _in_pair_order(heads, tails, present, by_pair, same_end=[[]])


def get_simple_paths(
    q_entity: Sequence[str],
    a_entity: Sequence[str],
    graph: KnowledgeGraph | None = None,
    hop: int = 2,
    *,
    max_paths: int | None = 100_000,
) -> list[list[Triple]]:
    """Every simple path (no node twice, any edge direction) of at most ``hop`` edges from each
    question entity to each answer entity. One batched ``neighbors`` call per hop.

    Raises:
        InvalidTermError: more than ``max_paths`` partial paths (raise it, or lower ``hop``).
    """
    kg = _resolve(graph)
    check_count(hop, "hop", required=True)
    limit = check_count(max_paths, "max_paths")
    heads, tails = _ids(q_entity, "q_entity"), _ids(a_entity, "a_entity")
    present = _present(kg, list(dict.fromkeys([*heads, *tails])))
    wanted = {t for t in tails if t in present}
    by_pair: dict[tuple[str, str], list[list[Triple]]] = {}
    frontier: list[tuple[str, tuple[Node, ...], tuple[Edge, ...]]] = [
        (h, (h,), ()) for h in dict.fromkeys(heads) if h in present
    ]
    for _ in range(hop):
        ends = list(dict.fromkeys(str(nodes[-1]) for _, nodes, _ in frontier))
        if not ends or not wanted:
            break
        edges = kg.neighbors(ends, direction="both")
        grown: list[tuple[str, tuple[Node, ...], tuple[Edge, ...]]] = []
        for start, nodes, walked in frontier:
            here = nodes[-1]
            for edge in edges.get(str(here), ()):
                other: Node = edge.tail if edge.head == here else edge.head
                if other == here and edge.head == edge.tail:
                    continue  # a self-loop never makes a simple path
                if other in nodes:
                    continue
                path = Path(start=start, edges=(*walked, edge))
                if _text(other) in wanted:
                    by_pair.setdefault((start, _text(other)), []).append(walk_tuples(path))
                if isinstance(other, str):
                    grown.append((start, (*nodes, other), path.edges))
                    if limit is not None and len(grown) > limit:
                        raise InvalidTermError(f"more than max_paths={limit} partial paths within {hop} hops")
        frontier = grown
    return _in_pair_order(heads, tails, present, by_pair, same_end=[])


def _in_pair_order(
    heads: Sequence[str],
    tails: Sequence[str],
    present: set[str],
    by_pair: dict[tuple[str, str], list[list[Triple]]],
    *,
    same_end: list[list[Triple]],
) -> list[list[Triple]]:
    """The paths per ``(h, t)`` pair in RoG's loop order; ``same_end`` is the answer for ``h == t``."""
    result: list[list[Triple]] = []
    for h in heads:
        if h not in present:
            continue
        for t in tails:
            if t not in present:
                continue
            if h == t:
                result.extend(list(p) for p in same_end)
                continue
            result.extend(_distinct(by_pair.get((h, t), [])))
    return result


def _ids(values: Any, what: str) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise InvalidTermError(f"{what} must be a list of ids, got {type(values).__name__}")
    for value in values:
        if not isinstance(value, str):
            raise InvalidTermError(f"{what} must hold strings, got {value!r:.80}")
    return list(values)
