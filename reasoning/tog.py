"""Think-on-Graph (Sun et al., ICLR 2024): beam search over the KG with the LLM as the pruner.

From the topic entities, each depth (up to ``depth``, 3 in the paper) does

1. relation exploration: the relations of every beam entity (both directions, one ``relations`` call
   per direction for the whole beam), the one just walked back excluded; *relation pruning* keeps the
   ``width`` best per entity, each with a score in [0, 1] (the LLM's "retrieve N relations and rate
   their contribution" prompt, or the scorer);
2. entity exploration: the entities behind the kept relations (one ``neighbors`` call per direction);
   *entity pruning* scores each relation's candidates (the LLM's scoring prompt, skipped when there is
   one candidate, or the scorer), a chain's score is the product of its scores, and the ``width`` best
   chains over the whole beam survive;
3. reasoning: the LLM is asked whether the triples of the beam suffice to answer ("{Yes}/{No}");
   on Yes it answers from them, otherwise the search goes one level deeper; at the last depth it
   answers from what it has.

Offline (``llm=None``) the scorer prunes, as in the paper's BM25/SentenceBERT pruning ablation, on the
question without the topic entities' names, and every rule compares path scores of one question
(:meth:`reasoning.relevance.Judge.path_scores`, less :func:`reasoning.relevance.path_cost` per extra or
backward hop), so none depends on the scorer's scale:

* relations by the best relation path they open (:func:`reasoning.lookahead.lookahead_scores`; a relation
  at 0 states nothing of the question and is dropped);
* entities by ``0.5 + 0.5 * relevance`` in the scorer's calibrated units
  (:meth:`reasoning.relevance.Judge.calibrated`; an entity's name rarely shares words with its question, so
  a non-matching one is neutral rather than fatal, and a relation with many tails is not diluted as scores
  summing to 1 would dilute it); the beam keeps the ``width`` best chains and the best chain of each of
  the ``heads`` (3) best relation paths, at most ``width + heads`` chains (:func:`reasoning.grounding.spread`:
  one relation's many tails must not crowd out the path a question needs one hop further; ``heads=0`` is
  the paper's beam of ``width``);
* the stop rule: go deeper while some next hop opens a path that states the question better (its extra
  hop's cost paid) than every chain the last level grew states it itself;
* the answer: the chains (``width`` at most, best chain score first) of the relation path, of any level,
  whose own relations state the question best (shortest on a tie): a hop kept for the path it opens is
  judged by what it states once the search stops there.

Entity pruning by name similarity knows nothing about the answer, so with ``width=3`` a question with
more answers than that loses recall by design.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kg_adapters.base import Direction, KnowledgeGraph
from kg_adapters.records import Edge, Node
from reasoning.base import LLM, Answer, KGReasoner, Question, budget, count
from reasoning.grounding import spread
from reasoning.lookahead import Hop, lookahead_scores, own_scores
from reasoning.relevance import Judge
from reasoning.text import (
    RelationNames,
    entity_ids,
    match_names,
    node_text,
    node_value,
    parse_list,
    schema_relations,
    triple_text,
)
from reasoning.walks import SIDES, Step, arrival, backward, net_level, turns_back, walked_steps

RELATION_PROMPT = (
    "Please retrieve {width} relations (separated by semicolon) that contribute to the question and rate "
    "their contribution on a scale from 0 to 1 (the sum of the scores of {width} relations is 1).\n"
    "Answer in the form {{relation (Score: 0.5)}}.\n"
    "Q: {question}\nTopic Entity: {entity}\nRelations: {relations}\nA: "
)
ENTITY_PROMPT = (
    "Please score the entities' contribution to the question on a scale from 0 to 1 (the sum of the "
    "scores of all entities is 1). Answer with one score per entity, in order, separated by commas.\n"
    "Q: {question}\nRelation: {relation}\nEntities: {entities}\nScore: "
)
EVALUATE_PROMPT = (
    "Given a question and the associated retrieved knowledge graph triplets (entity, relation, entity), "
    "you are asked to answer whether it's sufficient for you to answer the question with these triplets "
    "and your knowledge (Yes or No). If Yes, give the answer as: {{Yes}}. The answer is {{answer}}.\n"
    "Q: {question}\nKnowledge Triplets: {triples}\nA: "
)
ANSWER_PROMPT = (
    "Given a question and the associated retrieved knowledge graph triplets (entity, relation, entity), "
    "you are asked to answer the question with these triplets and your knowledge. List every answer, "
    "one per line.\nQ: {question}\nKnowledge Triplets: {triples}\nA: "
)
_SCORED_RELATION = re.compile(r"\{?\s*([^{};]+?)\s*\(\s*Score:\s*([0-9.]+)\s*\)\s*\}?")
_NUMBER = re.compile(r"[0-9]*\.?[0-9]+")


@dataclass(frozen=True, kw_only=True)
class Chain:
    """One beam element: the triples walked from a topic entity, the node reached, and its score."""

    start: str
    edges: tuple[Edge, ...]
    node: Node
    score: float


class ThinkOnGraph(KGReasoner):
    """Think-on-Graph; see the module docstring. Options: ``width`` (beam, 3), ``heads`` (offline the beam
    also keeps the best chain of each of the ``heads`` best relation paths, 3; 0: the paper's beam),
    ``depth`` (3), ``max_entities`` (candidates of one relation shown to the LLM, 20 as in ToG's code)."""

    name = "tog"

    width: int = budget(3)
    heads: int = count(3)
    depth: int = budget(3)
    max_entities: int = budget(20)

    def __init__(self, kg: KnowledgeGraph, **options: Any) -> None:
        super().__init__(kg, **options)
        self._schema = schema_relations(kg)
        self._names: dict[str, str] = {}
        self._nameless: set[str] = set()
        self.relation_names = RelationNames(kg)
        self._judge = Judge(self.scorer, "")

    def answer(self, question: Question) -> Answer:
        topics = list(question.q_entity)
        if not topics:
            return Answer(prediction=(), details={"error": "no topic entity"})
        self._learn_names(topics)
        self._judge = Judge(
            self.scorer, question.question, [self._names[t] for t in topics if t in self._names], ties_to_earlier=True
        )
        beam = [Chain(start=topic, edges=(), node=topic, score=1.0) for topic in topics]
        pool: list[Chain] = []  # every chain the last level grew, best first (the beam is its head)
        explored: list[Chain] = []  # every chain any level grew
        reply = ""
        stopped = "depth limit"
        reached = 0
        for level in range(1, self.depth + 1):
            scored = self._explore_relations(question, beam)
            if not scored:
                stopped = "no relation left"
                break
            if self.llm is None and level > 1 and not self._deeper_helps(pool, scored):
                stopped = "relations stopped matching the question"
                break
            grown = self._explore_entities(question, scored)
            if not grown:
                stopped = "no entity left"
                break
            pool, reached = grown, level
            explored.extend(grown)
            beam = (
                grown[: self.width]
                if self.llm is not None
                else [grown[i] for i in spread([_walk(c) for c in grown], self.width, self.heads)]
            )
            if self.llm is not None:
                sufficient, reply = self._evaluate(question, beam, self.llm)
                if sufficient:
                    stopped = "the LLM found the triples sufficient"
                    break
        if self.llm is not None and reached and stopped != "the LLM found the triples sufficient":
            reply = self.llm.chat([{"role": "user", "content": self._prompt(ANSWER_PROMPT, question, beam)}]).strip()
        if self.llm is None and explored:
            beam = self._settled(explored)
        chains = [chain for chain in beam if chain.edges]
        if self.llm is not None:
            candidates = {chain.node: node_text(chain.node, self._names) for chain in chains}
            ranked = match_names(_answer_items(reply), candidates)
        else:
            ranked = list(dict.fromkeys(chain.node for chain in chains))
        prediction = [node for node in ranked if node not in topics]
        cited = tuple(chain.edges for node in prediction for chain in chains if chain.node == node)
        return Answer(
            prediction=tuple(node_value(node) for node in prediction),
            reasoning_paths=cited,
            answer_text=reply or "; ".join(node_text(node, self._names) for node in prediction),
            details={"depth": reached, "stopped": stopped, "beam": [_chain_json(chain) for chain in beam]},
        )

    # -- relation exploration and pruning -----------------------------------------------------------
    def _explore_relations(
        self, question: Question, beam: Sequence[Chain]
    ) -> list[tuple[Chain, str, Direction, float]]:
        """``(chain, relation, direction, relation score)`` of the relations kept for each chain."""
        open_chains = [chain for chain in beam if isinstance(chain.node, str)]
        entities = entity_ids(chain.node for chain in open_chains)
        if not entities:
            return []
        found = {side: self.kg.relations(entities, direction=side) for side in SIDES}
        self.relation_names.words(r for side in SIDES for names in found[side].values() for r in names)
        kept: list[tuple[Chain, str, Direction, float]] = []
        for chain in open_chains:
            assert isinstance(chain.node, str)
            options = [
                (relation, side)
                for side in SIDES
                for relation in found[side].get(chain.node, ())
                if relation not in self._schema and not turns_back(_last(chain), relation, side == "out")
            ]
            if not options:
                continue
            if self.llm is None:  # each hop by the best path it opens; one walked backwards ranks below
                prefix = tuple(edge.relation for edge in chain.edges)
                hops = [Hop(prefix=prefix, relation=r, direction=side, nodes=(chain.node,)) for r, side in options]
                scores = lookahead_scores(self.kg, self._judge, self.relation_names, hops, skip=self._schema)
            else:
                scores = self._relation_scores(question, chain.node, [r for r, _ in options], self.llm)
            order = sorted(range(len(options)), key=lambda i: (-scores[i], i))[: self.width]
            kept.extend((chain, options[i][0], options[i][1], scores[i]) for i in order if scores[i] > 0)
        return kept

    def _relation_scores(self, question: Question, entity: str, relations: list[str], llm: LLM) -> list[float]:
        """The LLM's ratings of the relations (0 for one it does not rate)."""
        self.relation_names.words(relations)
        prompt = RELATION_PROMPT.format(
            width=self.width,
            question=question.question,
            entity=self._names.get(entity, entity),
            relations="; ".join(self.relation_names.shown(r) for r in dict.fromkeys(relations)),
        )
        reply = llm.chat([{"role": "user", "content": prompt}])
        given: dict[str, float] = {}
        for name, score in _SCORED_RELATION.findall(reply):
            # "P19 (place of birth)" as the prompt showed it, or the bare id
            given.setdefault(re.sub(r"\s*\([^()]*\)$", "", name).strip().strip("`'\""), float(score))
        return [given.get(relation, 0.0) for relation in relations]

    def _deeper_helps(self, pool: Sequence[Chain], scored: Sequence[tuple[Chain, str, Direction, float]]) -> bool:
        """Offline stop rule: whether some hop of the next level opens a path (its relation score: the
        lookahead's best path through it) that states the question better than every chain the last level
        grew states it by itself; both are path alignments (:meth:`Judge.path_scores`) less the path's
        :func:`path_cost` (the extra hop's cost is in the promise). Every chain the last level grew counts,
        not only the beam: a beam kept for what might follow must not hide a chain that already states the
        question. Going deeper costs no answer: the final beam is chosen over every level (:meth:`_settled`)."""
        own = own_scores(self._judge, self.relation_names, [_walk(chain)[0] for chain in pool], whole=False)
        current = [net_level(score, *_size(chain)) for score, chain in zip(own, pool, strict=True)]
        # a relation score is what the hop and the path it opens add to its chain's path_cost
        extended = [net_level(score, *_size(chain)) for chain, *_, score in scored]
        return max(extended, default=0.0) > max(current, default=0.0)

    # -- entity exploration and pruning -------------------------------------------------------------
    def _explore_entities(
        self, question: Question, scored: Sequence[tuple[Chain, str, Direction, float]]
    ) -> list[Chain]:
        edges: dict[Direction, dict[str, list[Edge]]] = {}
        for side in SIDES:
            wanted = [(chain, relation) for chain, relation, direction, _ in scored if direction == side]
            if wanted:
                heads = entity_ids(chain.node for chain, _ in wanted)
                edges[side] = self.kg.neighbors(heads, direction=side, relations=sorted({r for _, r in wanted}))
        candidates: list[tuple[Chain, str, float, list[tuple[Edge, Node]]]] = []
        for chain, relation, side, relation_score in scored:
            assert isinstance(chain.node, str)
            found = [edge for edge in edges.get(side, {}).get(chain.node, []) if edge.relation == relation]
            steps = [(edge, edge.tail if side == "out" else edge.head) for edge in found]
            steps = [(edge, node) for edge, node in steps if node not in _visited(chain)][: self.max_entities]
            if steps:
                candidates.append((chain, relation, relation_score, steps))
        self._learn_names(entity_ids(node for *_, steps in candidates for _, node in steps))
        grown: list[Chain] = []
        for chain, relation, relation_score, steps in candidates:
            scores = self._entity_scores(question, relation, [node for _, node in steps])
            grown.extend(
                Chain(
                    start=chain.start, edges=(*chain.edges, edge), node=node, score=chain.score * relation_score * score
                )
                for (edge, node), score in zip(steps, scores, strict=True)
            )
        grown.sort(key=lambda chain: -chain.score)
        return [chain for chain in grown if chain.score > 0]

    def _settled(self, explored: Sequence[Chain]) -> list[Chain]:
        """The final beam offline: up to ``width`` chains, best chain score first, of the relation path (of
        any level) whose own relations state the question best (path score less :func:`path_cost`; the
        shorter on a tie). A hop was kept by the best path it opens (the lookahead); once the search stops,
        each path is judged by what it states itself (a relation that prefixes a better one, "award" before
        "award nominee" on Freebase, won its level by what might follow it, and a level gone deeper on a
        promise may have found no better path)."""
        walks = [_walk(chain) for chain in explored]
        levels = self._levels(walks)
        best = min(range(len(explored)), key=lambda i: (-levels[i], len(explored[i].edges), -explored[i].score, i))
        chosen = [chain for chain, walk in zip(explored, walks, strict=True) if walk == walks[best]]
        return sorted(chosen, key=lambda chain: -chain.score)[: self.width]

    def _levels(self, paths: Sequence[tuple[tuple[str, ...], int]]) -> list[float]:
        """Each ``(relations, backward hops)`` path's score (:func:`own_scores`, all in one call) less
        :func:`path_cost` of its hops."""
        scores = own_scores(self._judge, self.relation_names, [relations for relations, _ in paths])
        return [net_level(score, len(relations), back) for score, (relations, back) in zip(scores, paths, strict=True)]

    def _entity_scores(self, question: Question, relation: str, nodes: list[Node]) -> list[float]:
        texts = [node_text(node, self._names) for node in nodes]
        if self.llm is None:
            return [0.5 + 0.5 * score for score in self._judge.calibrated(self._judge.scores(texts))]
        if len(nodes) == 1:
            return [1.0]
        prompt = ENTITY_PROMPT.format(question=question.question, relation=relation, entities="; ".join(texts))
        numbers = [float(n) for n in _NUMBER.findall(self.llm.chat([{"role": "user", "content": prompt}]))]
        if len(numbers) != len(nodes):
            return [1.0 / len(nodes)] * len(nodes)  # ToG's fallback when the reply is unusable
        return numbers

    # -- reasoning ----------------------------------------------------------------------------------
    def _evaluate(self, question: Question, beam: Sequence[Chain], llm: LLM) -> tuple[bool, str]:
        reply = llm.chat([{"role": "user", "content": self._prompt(EVALUATE_PROMPT, question, beam)}]).strip()
        return bool(re.match(r"\W*yes\b", reply, flags=re.I)), reply

    def _prompt(self, template: str, question: Question, beam: Sequence[Chain]) -> str:
        names = {**self._names, **{r: self.relation_names.shown(r) for r in self.relation_names.known}}
        triples = dict.fromkeys(triple_text(edge, names) for chain in beam for edge in chain.edges)
        return template.format(question=question.question, triples="\n".join(triples))

    def _learn_names(self, ids: Sequence[str]) -> None:
        """Names of ``ids`` in one batched call; ids already asked for (named or not) are not asked again."""
        missing = [i for i in ids if i not in self._names and i not in self._nameless]
        if missing:
            found = self.kg.labels(missing)
            self._names.update(found)
            self._nameless.update(i for i in missing if i not in found)


def _walk(chain: Chain) -> tuple[tuple[str, ...], int]:
    """The chain's relations and how many of its hops were walked against their edge's direction."""
    return tuple(edge.relation for edge in chain.edges), _backward(chain)


def _size(chain: Chain) -> tuple[int, int]:
    """The chain's hops and how many of them were walked against their edge."""
    return len(chain.edges), _backward(chain)


def _backward(chain: Chain) -> int:
    return backward(walked_steps(chain.start, chain.edges))


def _last(chain: Chain) -> Step | None:
    return arrival(chain.edges[-1], chain.node) if chain.edges else None


def _visited(chain: Chain) -> set[Node]:
    return {node for edge in chain.edges for node in (edge.head, edge.tail)}


def _answer_items(reply: str) -> list[str]:
    """Answer names in a ToG reply: the braces after "the answer is", else the reply's lines."""
    after = re.split(r"answer is", reply, maxsplit=1, flags=re.I)
    if len(after) == 2:
        braced = re.findall(r"\{([^{}]+)\}", after[1])
        text = braced[0] if braced else after[1].strip().rstrip(".")
        return parse_list(text.replace(" and ", ", "))
    return parse_list(reply)


def _chain_json(chain: Chain) -> dict[str, Any]:
    return {"relations": [edge.relation for edge in chain.edges], "score": round(chain.score, 6)}
