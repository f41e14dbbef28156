"""RefKG (refining knowledge-graph retrieval, 2024): decouple the question, retrieve an evidence
subgraph hop by hop, refine it, and answer from the verbalised evidence.

Per question: query decoupling into single-hop sub-queries (LLM); for each sub-query in turn, the
top ``top_k`` relations of each frontier entity (``relations``, both directions; LLM picks, else
the scorer) are followed with one batched ``neighbors`` call per direction, building the evidence
subgraph as chains of facts from the anchors; the chains are refined by the scorer against the
question, keeping those scoring at least ``alpha`` (0.6, the paper's threshold) times the best chain;
the kept triples
are verbalised as sentences and the LLM answers from that evidence.

Choices where the paper is vague or needs an LLM:

* Every score is read in the scorer's calibrated units (:meth:`reasoning.relevance.Judge.calibrated`:
  0 for an unrelated text, 1 for one stating the question), against the question without the anchors'
  names, so the rules below mean the same on every scorer's scale.
* Without an LLM, decoupling yields the whole question once per hop (up to ``max_hops``); a hop
  after the first follows only relations the scorer finds relevant (above 0), never straight back along
  the relation a chain just walked, and the search stops when no relation is relevant. A relation is
  judged by the best path it opens (:func:`reasoning.lookahead.lookahead_scores`, less the
  :func:`reasoning.relevance.path_cost` its hops add: one walked against its edge costs here as in every
  method).
* A chain is refined as a whole (the distinct words of its relations), so a second-hop triple is judged
  in the context of the first, and every answer of one relation path scores alike; ``alpha`` is relative
  to the best chain (an absolute level would mean something else on each scorer).
* An entity reached by several relation paths (a film's director who also produced it) is continued
  after each of them: the path the question names must exist to be found. The frontier keeps the
  ``entities_per_hop`` entities whose best chain matches the sub-query best.
* The answer offline is the end of the kept chains whose relation path (each relation with the
  direction it was walked in) scores best less a cost per extra hop and per hop walked against its
  edge (:func:`reasoning.relevance.path_cost`; shortest among ties); with an LLM
  the reply's names are matched to entities of the kept evidence, and an unusable reply falls back
  to the offline answer. Without kept evidence the answer is ``I don't know``.
* The LLM picks relations once per hop from the union of the frontier's relations (one call, not
  one per entity); each entity then follows the picked relations it has.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kg_adapters.base import Direction
from kg_adapters.records import Edge, Node
from reasoning.base import Answer, KGReasoner, Question, budget, fraction
from reasoning.grounding import (
    VERDICT_UNKNOWN,
    Chain,
    Fact,
    Names,
    Run,
    best_pattern,
    chain_scores,
    edge_ids,
    fact_edges,
    fetch_names,
    find_names,
    link_entities,
    needs_label,
    other_end,
    parse_numbers,
    path_levels,
    ranked,
    sentence,
    start,
    walked,
)
from reasoning.lookahead import Hop, lookahead_scores, own_scores
from reasoning.relevance import Judge
from reasoning.scorers import tokens
from reasoning.text import RelationNames, node_text, schema_relations
from reasoning.walks import SIDES, arrival, turns_back

_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.):])\s*")


@dataclass(frozen=True, kw_only=True)
class Reach:
    """An entity of the search's frontier and the chain of facts that reached it from an anchor."""

    node: str
    start: str
    chain: Chain


class RefKG(KGReasoner):
    """RefKG over a KnowledgeGraph (see the module docstring)."""

    name = "refkg"

    top_k: int = budget(3)
    alpha: float = fraction(0.6)
    max_hops: int = budget(3)
    entities_per_hop: int = budget(30)
    edges_per_entity: int = budget(200)
    _anchor_names: tuple[str, ...] = ()
    _judges: dict[str, Judge]
    _relation_names: RelationNames

    def answer(self, question: Question) -> Answer:
        run = start(self.kg, self.llm, self.scorer)
        anchors = link_entities(run, question)
        subqueries = self._decouple(run, question)
        names = fetch_names([run.kg], anchors, Names())
        self._anchor_names = tuple(names.get(anchor, anchor) for anchor in anchors)
        self._relation_names = RelationNames(run.kg)
        self._judges = {}
        evidence = self._retrieve(run, anchors, subqueries, names)
        judge = self._judge(run, question.question)
        levels = chain_scores(judge, self._relation_names, evidence)
        answers = [i for i in ranked(levels) if evidence[i].end not in anchors]
        best = max((levels[i] for i in answers), default=0.0)
        kept = [i for i in answers if best > 0 and levels[i] >= self.alpha * best]
        facts = [evidence[i] for i in kept]
        text = verbalise(facts, names)
        details = {"subqueries": subqueries, "anchors": anchors, "evidence": text, "retrieved": len(evidence)}
        if not facts:
            return run.finish(prediction=[], paths=[], answer_text=VERDICT_UNKNOWN, details=details)
        chosen = self._llm_answer(run, question, facts, text, names)
        if chosen is None:
            winners = best_pattern(range(len(kept)), path_levels([levels[i] for i in kept], facts), facts)
            chosen = [facts[i] for i in winners]
        prediction = list(dict.fromkeys(fact.end for fact in chosen))
        answer_text = ", ".join(node_text(node, names) for node in prediction)
        return run.finish(
            prediction=prediction, paths=[fact.chain for fact in chosen], answer_text=answer_text, details=details
        )

    def _decouple(self, run: Run, question: Question) -> list[str]:
        """Single-hop sub-queries in answering order (the LLM's), else the question once per hop."""
        reply = run.ask(
            "Split this question into single-hop sub-questions, one per line, in the order they must be "
            f"answered.\n{question.question}"
        )
        lines = [_LIST_ITEM.sub("", line).strip() for line in (reply or "").splitlines()]
        subqueries = [line for line in lines if tokens(line)][: self.max_hops]
        return subqueries or [question.question] * self.max_hops

    def _retrieve(self, run: Run, anchors: list[str], subqueries: list[str], names: Names) -> list[Fact]:
        """The evidence subgraph: one hop per sub-query along the selected relations. An entity reached by
        several relation paths (a film's director who also produced it) is continued after each of them,
        so the path the question names is among the chains."""
        frontier = [Reach(node=anchor, start=anchor, chain=()) for anchor in anchors]
        evidence: list[Fact] = []
        for hop, subquery in enumerate(subqueries):
            if not frontier:
                break
            selected = self._select_relations(run, subquery, frontier, names, first=hop == 0)
            reached: dict[tuple[Node, str, tuple[tuple[str, bool], ...]], Reach] = {}
            for direction in SIDES:
                relations = sorted({rel for pairs in selected for rel, d in pairs if d == direction})
                if not relations:
                    continue
                nodes = list(dict.fromkeys(reach.node for reach in frontier))
                found = run.kg.neighbors(
                    nodes, direction=direction, relations=relations, limit_per_entity=self.edges_per_entity
                )
                for reach, pairs in zip(frontier, selected, strict=True):
                    allowed = {rel for rel, d in pairs if d == direction}
                    for edge in fact_edges(found.get(reach.node, []), run.kg):
                        if edge.relation not in allowed:
                            continue
                        end = other_end(edge, reach.node)
                        fact = Fact(edge=edge, chain=(*reach.chain, edge), start=reach.start, end=end)
                        evidence.append(fact)
                        if isinstance(end, str) and end not in anchors:
                            reached.setdefault(
                                (end, fact.start, walked(fact)), Reach(node=end, start=fact.start, chain=fact.chain)
                            )
            fetch_names([run.kg], edge_ids(fact.edge for fact in evidence), names)
            frontier = self._best_reached(run, subquery, list(reached.values()))
        return evidence

    def _best_reached(self, run: Run, subquery: str, reached: list[Reach]) -> list[Reach]:
        """The next frontier: the ``entities_per_hop`` reached entities whose chains best match the sub-query
        (an entity reached by several paths counts once, after its best)."""
        paths = [tuple(edge.relation for edge in reach.chain) for reach in reached]
        scores = own_scores(self._judge(run, subquery), self._relation_names, paths)
        order = ranked(scores)
        kept = set(list(dict.fromkeys(reached[i].node for i in order))[: self.entities_per_hop])
        return [reached[i] for i in order if reached[i].node in kept]

    def _select_relations(
        self, run: Run, subquery: str, frontier: list[Reach], names: Names, *, first: bool
    ) -> list[list[tuple[str, Direction]]]:
        """Each frontier entry's chosen ``(relation, direction)`` pairs (never straight back along the relation
        it just walked, :func:`reasoning.walks.turns_back`)."""
        nodes = list(dict.fromkeys(reach.node for reach in frontier))
        around: dict[str, list[tuple[str, Direction]]] = {node: [] for node in nodes}
        for direction in SIDES:
            for node, relations in run.kg.relations(nodes, direction=direction).items():
                around[node].extend((rel, direction) for rel in relations)
        per_entry = [
            [
                (rel, side)
                for rel, side in around.get(reach.node, [])
                if not turns_back(arrival(reach.chain[-1], reach.node) if reach.chain else None, rel, side == "out")
            ]
            for reach in frontier
        ]
        union = list(dict.fromkeys(pair for pairs in per_entry for pair in pairs))
        fetch_names([run.kg], [relation for relation, _ in union if needs_label(relation)], names)
        picked = self._llm_relations(run, subquery, union)
        if picked is not None:
            return [[pair for pair in pairs if pair in picked] for pairs in per_entry]
        hops = [
            Hop(prefix=tuple(edge.relation for edge in reach.chain), relation=rel, direction=side, nodes=(reach.node,))
            for reach, pairs in zip(frontier, per_entry, strict=True)
            for rel, side in pairs
        ]
        every = lookahead_scores(
            run.kg, self._judge(run, subquery), self._relation_names, hops, skip=schema_relations(run.kg)
        )
        choice: list[list[tuple[str, Direction]]] = []
        at = 0
        for pairs in per_entry:
            scores = every[at : at + len(pairs)]
            at += len(pairs)
            choice.append([pairs[i] for i in ranked(scores, self.top_k) if first or scores[i] > 0])
        return choice

    def _judge(self, run: Run, query: str) -> Judge:
        """One judge per sub-query of this question (it keeps its spans' scores)."""
        if query not in self._judges:
            self._judges[query] = Judge(run.scorer, query, self._anchor_names)
        return self._judges[query]

    def _llm_relations(
        self, run: Run, subquery: str, pairs: list[tuple[str, Direction]]
    ) -> set[tuple[str, Direction]] | None:
        if run.llm is None or not pairs:
            return None
        listing = "\n".join(f"{n}. {rel}{' (inverse)' if d == 'in' else ''}" for n, (rel, d) in enumerate(pairs, 1))
        reply = run.ask(
            f"Sub-question: {subquery}\nRelations:\n{listing}\n"
            f"Which {self.top_k} relations lead to the answer? Reply with their numbers."
        )
        picks = parse_numbers(reply, len(pairs))
        return None if picks is None else {pairs[i] for i in picks[: self.top_k]}

    def _llm_answer(
        self, run: Run, question: Question, facts: list[Fact], text: str, names: Names
    ) -> list[Fact] | None:
        """The kept facts whose end the LLM names as an answer; None when its reply is unusable."""
        reply = run.ask(
            f"Evidence:\n{text}\nQuestion: {question.question}\nAnswer with the answer names only, one per line."
        )
        ends = {fact.end: node_text(fact.end, names) for fact in facts if isinstance(fact.end, str)}
        chosen = find_names(reply, ends)
        if not chosen:
            return None
        support: dict[Node, Fact] = {}
        for fact in sorted(facts, key=lambda fact: len(fact.chain)):
            if fact.end in chosen:
                support.setdefault(fact.end, fact)
        return [support[node] for node in chosen]


def verbalise(facts: list[Fact], names: Names) -> str:
    """The distinct triples of the facts' chains as sentences, one per line."""
    edges: dict[Edge, None] = {}
    for fact in facts:
        edges.update(dict.fromkeys(fact.chain))
    return "\n".join(sentence(edge, names) for edge in edges)
