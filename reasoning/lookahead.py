"""One hop judged by where it leads: a per-hop method (ToG, R3, RefKG, FiDeLiS) scores a candidate hop by
the best relation path it starts, not by the hop alone against the whole question.

A hop's own words state only part of a multi-hop question ("nationality" for "Which provinces make up the
homeland of X?"); the path it opens ("nationality, second level divisions") states all of it. So a hop
scores the best of its own path and of every one-relation continuation of it (the relations of the
entities it reaches, asked for in one batched ``neighbors`` and one ``relations`` call per direction), each
path scored by the alignment of :meth:`reasoning.relevance.Judge.path_scores` (one text per path would cost
a sentence encoder an embedding each), less what the hop and its continuation add to the path's
:func:`reasoning.relevance.path_cost`, as every method charges it: :data:`reasoning.relevance.INVERSE_COST`
for a hop walked against its edge (a question usually asks along an edge), :data:`reasoning.relevance.HOP_COST`
for a hop after the first (a longer path must state the question better). A hop that states nothing of the
question itself scores 0 whatever follows it, and so does a hop whose path states it no better than the
relations walked before it where another hop after them does: the lookahead ranks the hops a question
names, it does not invent detours. R3 reads the same :func:`continuations` around the ends of its best
paths.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kg_adapters.base import Direction, KnowledgeGraph
from kg_adapters.records import Edge
from reasoning.relevance import Judge
from reasoning.text import RelationNames
from reasoning.walks import SIDES, Step, added_cost, backward, net_level, turns_back

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
    """Each hop's score: the best alignment of the hop's path and of its one-relation continuations
    (:func:`continuations`), each less what its hops add to the prefix's :func:`path_cost` (a hop after the
    first, a hop walked against its edge), 0 at the least; 0 for a hop whose own path states nothing of the
    question (``skip``: relations never walked, a profile's name and description predicates). The floor is a
    decision: a hop walked against its edge must state the question by more than its
    :data:`reasoning.relevance.INVERSE_COST` to count, the rule every method's :func:`path_cost` applies
    (ToG and RefKG drop a later hop scored 0); a hop the question states is worth far more ("Which film was
    directed by the friend of X?" walks "directed by" backwards, tests/test_long_paths.py)."""
    if not hops:
        return []
    tails: list[list[str]] = [[] for _ in hops]
    for side in SIDES:
        chosen = [i for i, hop in enumerate(hops) if hop.direction == side]
        if not chosen:
            continue
        nodes = list(dict.fromkeys(n for i in chosen for n in hops[i].nodes))
        relations = sorted({hops[i].relation for i in chosen})
        found = capped_edges(kg, nodes, side, relations, reached * 5)
        for i in chosen:
            hop = hops[i]
            ends = (
                edge.tail if side == "out" else edge.head
                for node in hop.nodes
                for edge in found.get(node, [])
                if edge.relation == hop.relation
            )
            tails[i] = [e for e in dict.fromkeys(ends) if isinstance(e, str)][:reached]
    # the prefix's own costs are common to every hop after it: each hop pays only what it adds
    walks = [(*((relation, True) for relation in hop.prefix), (hop.relation, hop.direction == "out")) for hop in hops]
    prefixes = list(dict.fromkeys(hop.prefix for hop in hops if hop.prefix))
    following, aligned = continuations(
        kg, judge, names, list(zip(walks, tails, strict=True)), skip=skip, branches=branches, also=prefixes
    )
    alone = [aligned[tuple(relation for relation, _ in steps)] for steps in walks]
    adds = [alone[i] > aligned.get(hop.prefix, 0.0) for i, hop in enumerate(hops)]
    # beside a hop that states the question better than its prefix, one that does not is a detour; where
    # none does, the method's own stop rule decides
    improving = {hop.prefix for hop, added in zip(hops, adds, strict=True) if added}
    stated = [
        added or (alone[i] > 0.0 and hop.prefix not in improving)
        for i, (hop, added) in enumerate(zip(hops, adds, strict=True))
    ]
    best = [score - added_cost(steps, len(steps) - 1) for score, steps in zip(alone, walks, strict=True)]
    for option in following:
        i = option.group
        best[i] = max(best[i], option.aligned - added_cost(option.steps, len(walks[i]) - 1))
    return [max(score, 0.0) if said else 0.0 for score, said in zip(best, stated, strict=True)]


@dataclass(frozen=True, kw_only=True)
class Continuation:
    """A relation around the ends of a walked path that continues it: the path's index among the groups
    asked about, the continued path as walked, the ends it is found at, and the continued path's alignment
    (:meth:`Judge.path_scores` with ``whole=False``)."""

    group: int
    steps: tuple[Step, ...]
    ends: tuple[str, ...]
    aligned: float

    @property
    def relation(self) -> tuple[str, Direction]:
        """The continuing relation and the direction it is walked in."""
        relation, forward = self.steps[-1]
        return relation, "out" if forward else "in"

    @property
    def value(self) -> float:
        """The alignment less the continued path's :func:`path_cost`."""
        return net_level(self.aligned, len(self.steps), backward(self.steps))


def continuations(
    kg: KnowledgeGraph,
    judge: Judge,
    names: RelationNames,
    groups: Sequence[tuple[Sequence[Step], Sequence[str]]],
    *,
    skip: frozenset[str] = frozenset(),
    branches: int | None = None,
    also: Sequence[tuple[str, ...]] = (),
) -> tuple[list[Continuation], dict[tuple[str, ...], float]]:
    """Every relation around the ends of each ``(walked path, ends)`` group that continues the path (one
    batched ``relations`` call per direction for all ends; ``skip`` and straight back never), with the
    continued path's alignment; and the alignment of every path scored: the continued ones, each group's
    own and the ``also`` paths, all in one call (a lexical scorer's scores compare only within a call),
    each distinct path once. ``branches``: per group and direction only the relations whose words some
    span of the question states best."""
    every = list(dict.fromkeys(end for _, ends in groups for end in ends))
    around = {side: kg.relations(every, direction=side) if every else {} for side in SIDES}
    found: list[tuple[int, tuple[Step, ...], tuple[str, ...]]] = []
    for group, (steps, ends) in enumerate(groups):
        last = steps[-1] if steps else None
        for side in SIDES:
            at: dict[str, list[str]] = {}
            for end in ends:
                for relation in around[side].get(end, ()):
                    if relation not in skip and not turns_back(last, relation, side == "out"):
                        at.setdefault(relation, []).append(end)
            chosen = sorted(at) if branches is None else _best_stated(judge, names, sorted(at), branches)
            found.extend((group, (*steps, (relation, side == "out")), tuple(at[relation])) for relation in chosen)
    owns = [tuple(relation for relation, _ in steps) for steps, _ in groups]
    continued = [tuple(relation for relation, _ in steps) for _, steps, _ in found]
    paths = list(dict.fromkeys([*owns, *also, *continued]))
    aligned = dict(zip(paths, own_scores(judge, names, paths, whole=False), strict=True))
    following = [
        Continuation(group=group, steps=steps, ends=ends, aligned=aligned[path])
        for (group, steps, ends), path in zip(found, continued, strict=True)
    ]
    return following, aligned


def capped_edges(
    kg: KnowledgeGraph, nodes: list[str], side: Direction, relations: list[str], cap: int, *, literals: bool = False
) -> dict[str, list[Edge]]:
    """The edges of ``relations`` at ``nodes`` (entities only unless ``literals``), at most ``cap`` per node;
    the cap counts all relations together, so where a node reached it the relations it left without an edge
    are asked again on their own, in one call for every such node (an actor's hundred film edges must not
    hide his one nationality edge). Ask per direction: with ``both`` a busy relation's edges one way would
    hide its edge the other way."""
    found = kg.neighbors(nodes, direction=side, relations=relations, limit_per_entity=cap, literals=literals)
    starved: dict[str, set[str]] = {}
    for node in nodes:
        if len(found.get(node, ())) >= cap:  # what one node holds says nothing of another's
            left = set(relations) - {edge.relation for edge in found[node]}
            if left:
                starved[node] = left
    if starved:
        asked = sorted(set().union(*starved.values()))
        more = kg.neighbors(list(starved), direction=side, relations=asked, limit_per_entity=cap, literals=literals)
        for node, left in starved.items():
            found[node] = [*found[node], *(edge for edge in more.get(node, []) if edge.relation in left)]
    return found


def _best_stated(judge: Judge, names: RelationNames, relations: list[str], branches: int) -> list[str]:
    if len(relations) <= branches:
        return relations
    phrases = names.phrases(relations)
    levels = judge.stated([phrases[r] for r in relations])
    order = sorted(range(len(relations)), key=lambda i: (-levels[i], i))
    return [relations[i] for i in order[:branches]]
