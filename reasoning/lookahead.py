"""One hop judged by where it leads: a per-hop method (ToG, R3, RefKG, FiDeLiS) scores a candidate hop by
the best relation path it starts, not by the hop alone against the whole question.

A hop's own words state only part of a multi-hop question ("nationality" for "Which provinces make up the
homeland of X?"); the path it opens ("nationality, second level divisions") states all of it. So a hop
scores the best of its own path and of every one-relation continuation of it (the relations of the
entities it reaches, asked for in one batched ``neighbors`` and one ``relations`` call per direction), each
path scored by the alignment of :meth:`reasoning.relevance.Judge.path_scores` (one text per path would cost
a sentence encoder an embedding each); a continuation walked against its edge's
direction counts at ``1 - INVERSE_COST`` of its score (a question usually asks along an edge), and every
continuation pays :data:`reasoning.relevance.HOP_COST` (a longer path must state the question better). A
hop that states nothing of the question itself scores 0 whatever follows it, and so does a hop whose path
states it no better than the relations walked before it where another hop after them does: the lookahead
ranks the hops a question names, it does not invent detours.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kg_adapters.base import Direction, KnowledgeGraph
from kg_adapters.records import Edge
from reasoning.relevance import HOP_COST, INVERSE_COST, Judge
from reasoning.text import RelationNames

SIDES: tuple[Direction, Direction] = ("out", "in")
REACHED = 20
"""Entities per hop whose relations are read for its continuations (a sample says what lies behind)."""


BRANCHES = 5
"""Continuations per hop and direction scored as paths: those whose words some span of the question states
best (scoring a path reads it as one text, which costs a sentence encoder one embedding per path)."""


@dataclass(frozen=True, kw_only=True)
class Hop:
    """A candidate hop: the relations walked before it, its relation and direction, and the entities it
    is walked from."""

    prefix: tuple[str, ...]
    relation: str
    direction: Direction
    nodes: tuple[str, ...]


def own_scores(
    judge: Judge, names: RelationNames, paths: Sequence[Sequence[str]], *, whole: bool = True
) -> list[float]:
    """:meth:`Judge.path_scores` of relation-id paths."""
    phrases = names.phrases(r for path in paths for r in path)
    return judge.path_scores([[phrases[r] for r in path] for path in paths], whole=whole)


def lookahead_scores(
    kg: KnowledgeGraph,
    judge: Judge,
    names: RelationNames,
    hops: Sequence[Hop],
    *,
    skip: frozenset[str] = frozenset(),
    reached: int = REACHED,
    branches: int = BRANCHES,
) -> list[float]:
    """Each hop's score: the best path score of the hop and of its one-relation continuations (``skip``:
    relations never walked, a profile's name and description predicates)."""
    if not hops:
        return []
    tails: list[list[str]] = [[] for _ in hops]
    for side in SIDES:
        chosen = [i for i, hop in enumerate(hops) if hop.direction == side]
        if not chosen:
            continue
        nodes = list(dict.fromkeys(n for i in chosen for n in hops[i].nodes))
        relations = sorted({hops[i].relation for i in chosen})
        found = _edges(kg, nodes, side, relations, reached * 5)
        for i in chosen:
            hop = hops[i]
            ends = (
                edge.tail if side == "out" else edge.head
                for node in hop.nodes
                for edge in found.get(node, [])
                if edge.relation == hop.relation
            )
            tails[i] = [e for e in dict.fromkeys(ends) if isinstance(e, str)][:reached]
    every = list(dict.fromkeys(t for ends in tails for t in ends))
    around = {side: kg.relations(every, direction=side) if every else {} for side in SIDES}
    paths: list[tuple[str, ...]] = []
    owner: list[int] = []
    discount: list[float] = []
    extra: list[float] = []
    for i, hop in enumerate(hops):
        own = (*hop.prefix, hop.relation)
        paths.append(own)
        owner.append(i)
        discount.append(1.0)
        extra.append(0.0)
        back: Direction = "in" if hop.direction == "out" else "out"
        for side in SIDES:
            following = {r for t in tails[i] for r in around[side].get(t, ())} - skip
            if side == back:
                following.discard(hop.relation)  # straight back where the hop came from
            for relation in _best_stated(judge, names, sorted(following), branches):
                paths.append((*own, relation))
                owner.append(i)
                discount.append(1.0 - INVERSE_COST if side == "in" else 1.0)
                extra.append(HOP_COST)
    prefixes = list(dict.fromkeys(hop.prefix for hop in hops if hop.prefix))
    scores = own_scores(judge, names, [*paths, *prefixes], whole=False)
    before = dict(zip(prefixes, scores[len(paths) :], strict=True))
    best = [0.0 for _ in hops]
    alone = [0.0 for _ in hops]
    for i, score, weight, cost in zip(owner, scores[: len(paths)], discount, extra, strict=True):
        if cost == 0.0:
            alone[i] = score
        best[i] = max(best[i], score * weight - cost)
    adds = [alone[i] > before.get(hop.prefix, 0.0) for i, hop in enumerate(hops)]
    # beside a hop that states the question better than its prefix, one that does not is a detour; where
    # none does, the method's own stop rule decides
    improving = {hop.prefix for hop, added in zip(hops, adds, strict=True) if added}
    stated = [
        added or (alone[i] > 0.0 and hop.prefix not in improving)
        for i, (hop, added) in enumerate(zip(hops, adds, strict=True))
    ]
    return [score if said else 0.0 for score, said in zip(best, stated, strict=True)]


def _edges(
    kg: KnowledgeGraph, nodes: list[str], side: Direction, relations: list[str], cap: int
) -> dict[str, list[Edge]]:
    """The edges of ``relations`` at ``nodes`` (entities only), at most ``cap`` per node; the cap counts all
    relations together, so where a node reached it the relations it left without an edge are asked again on
    their own (an actor's hundred film edges must not hide his one nationality edge)."""
    found = kg.neighbors(nodes, direction=side, relations=relations, limit_per_entity=cap, literals=False)
    full = [node for node in nodes if len(found.get(node, ())) >= cap]
    if not full:
        return found
    held = {edge.relation for node in full for edge in found[node]}
    starved = [r for r in relations if r not in held]
    if starved:
        for node, edges in kg.neighbors(
            full, direction=side, relations=starved, limit_per_entity=cap, literals=False
        ).items():
            found[node] = [*found.get(node, []), *edges]
    return found


def _best_stated(judge: Judge, names: RelationNames, relations: list[str], branches: int) -> list[str]:
    if len(relations) <= branches:
        return relations
    phrases = names.phrases(relations)
    levels = judge.stated([phrases[r] for r in relations])
    order = sorted(range(len(relations)), key=lambda i: (-levels[i], i))
    return [relations[i] for i in order[:branches]]
