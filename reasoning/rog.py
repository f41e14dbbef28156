"""RoG (Reasoning on Graphs) retrieval: relation-path plans grounded with constrained BFS.

RoG plans relation paths for a question, retrieves every KG walk that follows a plan from the
topic entities (``KnowledgeGraph.paths``, RoG's Algorithm 1) and reasons over the walks, which it
shows to the LLM as ``e0 -> r1 -> e1 -> ...``. Without an LLM, ``vote`` ranks the walks' end
entities by how many walks reach them (RoG's retrieval-only baseline).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kg_adapters.base import Direction, KnowledgeGraph
from kg_adapters.display import format_path as format_path  # re-exported (moved to the core for kga paths)
from kg_adapters.display import node_text
from kg_adapters.display import path_entities as path_entities
from kg_adapters.records import Node, Path, PathResult
from reasoning.base import LLM, Answer, CandidateLLM, ChatMessage, KGReasoner, Question, budget, choice, flag
from reasoning.relevance import Judge, path_cost
from reasoning.scorers import stem
from reasoning.text import (
    RelationNames,
    entity_ids,
    match_names,
    node_value,
    parse_list,
    relation_words,
    schema_relations,
)
from reasoning.walks import SIDES, turns_back


@dataclass(frozen=True, kw_only=True)
class Plan:
    """One relation path to follow from the topic entities, with a direction per hop."""

    relations: tuple[str, ...]
    directions: tuple[Direction, ...] | None = None


def retrieve(
    kg: KnowledgeGraph, topic_entities: Sequence[str], plans: Sequence[Plan], *, max_paths: int = 1000
) -> PathResult:
    """Every walk that follows one of the plans from a topic entity (one batched BFS per plan)."""
    found = PathResult()
    for plan in plans:
        result = kg.paths(topic_entities, plan.relations, directions=plan.directions, max_paths=max_paths)
        found.extend(result)
        found.truncated = found.truncated or result.truncated
    return found


def follows_edges(path: Path) -> bool:
    """Whether the walk follows every edge in the KG's direction (head to tail)."""
    current: Node = path.start
    for edge in path.edges:
        if edge.head != current:
            return False
        current = edge.tail
    return True


def vote(paths: Sequence[Path]) -> list[tuple[Node, int]]:
    """End entities ranked: those some walk reaches following every edge forwards first, then by
    how many retrieved walks reach them (ties by id). RoG walks a plan both ways, as its
    undirected graph does, but a plan is read forwards: "born in" from a person reaches a place,
    while walked backwards from a place it reaches whoever was born there."""
    counts = Counter(path.end for path in paths)
    forward = {path.end for path in paths if follows_edges(path)}
    return sorted(counts.items(), key=lambda item: (item[0] not in forward, -item[1], str(item[0])))


# -- the full method ---------------------------------------------------------------------------------


PLAN_PROMPT = (
    "Please generate valid relation paths that can be helpful for answering the following question.\n"
    "Give at most {k} relation paths, best first, one per line, with the relations of a path separated "
    'by " -> ". Use only relations of the knowledge graph; the topic entities have these relations:\n'
    "{relations}\n\nTopic entities: {topics}\nQuestion: {question}"
)
"""RoG's planning instruction, with the topic entities' relations listed: RoG's planner is fine-tuned
on the KG's vocabulary, a general chat model has to be shown it."""

REASON_PROMPT = (
    "Based on the reasoning paths, please answer the given question. Please keep the answer as simple "
    "as possible and return all the possible answers as a list.\n\nReasoning Paths:\n{paths}\n\n"
    "Question:\n{question}"
)
"""RoG's reasoning prompt (Appendix, "Reasoning on Graphs")."""


ROG_PLANNER_INSTRUCTION = (
    "Please generate a valid relation path that can be helpful for answering the following question: "
)
"""The instruction RoG's released planner (``rmanluo/RoG``) was fine-tuned on, followed directly by
the question (RoG's ``gen_rule_path.py``); it answers ``<PATH>r1<SEP>r2</PATH>``, decoded by beam
search for the top 3 paths."""
ROG_ANSWER_INSTRUCTION = (
    "Based on the reasoning paths, please answer the given question. Please keep the answer as simple as "
    "possible and return all the possible answers as a list."
)
ROG_CHOICE_INSTRUCTION = (
    "Based on the reasoning paths, please answer the given question. Please select the answers from the given "
    "choices and return the answers only."
)
"""RoG's ``build_qa_input.py`` instructions for short answers and for multiple choice."""
ROG_PLAN_TOKENS = 100
ROG_ANSWER_TOKENS = 512
"""``max_new_tokens`` of RoG's planning and answering scripts."""
PROMPT_STYLES = ("default", "rog-original")


def rog_path_text(path: Path, names: Mapping[str, str]) -> str:
    """RoG's ``path_to_string``: ``e0 -> r1 -> e1 -> ...`` in walk order, whatever the edges' direction."""
    text = node_text(path.start, names)
    current: Node = path.start
    for edge in path.edges:
        current = edge.tail if edge.head == current else edge.head
        text += f" -> {edge.relation} -> {node_text(current, names)}"
    return text


def parse_rog_paths(replies: Sequence[str]) -> list[Plan]:
    """The relation paths in the planner's replies: ``<PATH>r1<SEP>r2</PATH>`` as RoG parses them."""
    plans: list[Plan] = []
    for reply in replies:
        found = re.search(r"<PATH>(.*)</PATH>", reply)
        if found is None:
            continue
        steps = tuple(step.strip() for step in found.group(1).split("<SEP>") if step.strip())
        if steps and Plan(relations=steps) not in plans:
            plans.append(Plan(relations=steps))
    return plans


@dataclass(frozen=True, kw_only=True)
class CheckedPlan:
    """A plan after validation: the relations walked (repaired where needed), their directions, how
    many of the original steps were valid, and the repairs made as ``(original, replacement)``."""

    plan: Plan
    valid_steps: int
    steps: int
    repairs: tuple[tuple[str, str], ...] = ()

    @property
    def usable(self) -> bool:
        return len(self.plan.relations) == self.steps


class RoG(KGReasoner):
    """Reasoning on Graphs: plan relation paths, ground them with constrained BFS, reason on the walks.

    Planning: a question's ``plans`` skip it; with an LLM, RoG's planning prompt (showing the topic
    entities' relations) yields up to ``top_k`` paths; offline, a beam of ``beam_width`` relation
    paths grows hop by hop (up to ``max_hops``) from the topic entities' relations, ranked by the
    scorer against the question, and the ``top_k`` best of every length are kept.
    Validation walks each given or LLM plan from the topic entities: a step is valid when some entity of the
    frontier has that relation (in either direction, which fixes the hop's direction); an invalid
    step is repaired to the frontier's relation the scorer finds closest (``repair=False`` drops the
    plan instead). ``details["plan_validity"]`` is the share of valid steps.
    ``prompts="rog-original"`` (``--option prompts=rog-original``) sends RoG's released planner
    (``rmanluo/RoG``) exactly the prompts it was trained on instead (see :meth:`plan_rog_original`,
    :meth:`rog_original_answer_messages`); the default prompts suit general chat models.
    Reasoning: with an LLM, RoG's reasoning prompt over at most ``prompt_paths`` walks; offline,
    "vote": the end entities of the walks ranked by how many walks reach them -- all given plans'
    walks, or only the best-ranked planned path that finds any (the others would flood precision).
    Topic entities are never answers. Each answer cites up to ``paths_per_answer`` walks.
    """

    name = "rog"

    top_k: int = budget(3)
    max_hops: int = budget(3)
    beam_width: int = budget(5)
    repair: bool = flag(True)
    max_paths: int = budget(1000)
    max_frontier: int = budget(500)
    prompt_paths: int = budget(50)
    paths_per_answer: int = budget(3)
    prompts: str = choice("default", PROMPT_STYLES)

    def __init__(self, kg: KnowledgeGraph, **options: Any) -> None:
        super().__init__(kg, **options)
        self._schema = schema_relations(kg)
        self.relation_names = RelationNames(kg)
        self._asked: dict[tuple[tuple[str, ...], Direction], dict[str, list[str]]] = {}

    def _relations(self, frontier: Sequence[str], side: Direction) -> dict[str, list[str]]:
        """``kg.relations`` of a frontier, asked once per question: planning and the validation of
        every plan start from the same topic entities."""
        key = (tuple(frontier), side)
        if key not in self._asked:
            self._asked[key] = self.kg.relations(list(frontier), direction=side)
        return self._asked[key]

    # -- the loop ------------------------------------------------------------------------------------
    def answer(self, question: Question) -> Answer:
        topics = list(question.q_entity)
        if not topics:
            return Answer(prediction=(), details={"error": "no topic entity"})
        self._asked.clear()
        if question.plans:
            planner = "given"
            proposed = [Plan(relations=tuple(p)) for p in question.plans if p]
        elif self.llm is not None:
            planner = "llm"
            proposed = (
                self.plan_rog_original(question, self.llm)
                if self.prompts == "rog-original"
                else self.plan_with_llm(question, self.llm)
            )
        else:
            planner = "scorer"
            proposed = self.plan_offline(question)
        if planner == "scorer":  # grown from the KG's own relations: valid by construction
            checked = [CheckedPlan(plan=p, valid_steps=len(p.relations), steps=len(p.relations)) for p in proposed]
        else:
            checked = [self.validate(topics, plan) for plan in proposed]
        steps = sum(c.steps for c in checked)
        plans = [c.plan for c in checked if c.usable]
        walks = [retrieve(self.kg, topics, [plan], max_paths=self.max_paths) for plan in plans]
        every = [w for found in walks for w in found]
        if self.llm is not None:
            used = every
            ranked, reply = self.reason_with_llm(question, used, self.llm)
        else:
            used = every if planner == "given" else next((list(found) for found in walks if found), [])
            ranked, reply = [node for node, _ in vote(used)], ""
        prediction = [node for node in ranked if node not in topics]
        by_end: dict[Node, list[Path]] = {}
        for walk in sorted(used, key=lambda w: len(w.edges)):
            by_end.setdefault(walk.end, []).append(walk)
        cited = tuple(walk.edges for node in prediction for walk in by_end.get(node, [])[: self.paths_per_answer])
        names = self.kg.labels(entity_ids(prediction)) if prediction and not reply else {}
        details: dict[str, Any] = {
            "planner": planner,
            "plans": [
                {"relations": list(c.plan.relations), "directions": list(c.plan.directions or ()), "usable": c.usable}
                for c in checked
            ],
            "plan_validity": (sum(c.valid_steps for c in checked) / steps) if steps else 0.0,
            "repairs": [list(pair) for c in checked for pair in c.repairs],
            "walks": len(every),
            "truncated": any(found.truncated for found in walks),
        }
        return Answer(
            prediction=tuple(node_value(node) for node in prediction),
            reasoning_paths=cited,
            answer_text=reply or "; ".join(node_text(node, names) for node in prediction),
            details=details,
        )

    # -- planning ------------------------------------------------------------------------------------
    def plan_with_llm(self, question: Question, llm: LLM) -> list[Plan]:
        """RoG's planning prompt; each reply line ``r1 -> r2`` (or RoG's ``<PATH>r1<SEP>r2</PATH>``)
        is one plan; a line whose steps hold spaces is prose and skipped."""
        topics = list(question.q_entity)
        relations = sorted(
            {r for side in SIDES for rs in self._relations(topics, side).values() for r in rs} - self._schema
        )
        names = self.kg.labels(topics)
        self.relation_names.words(relations)
        prompt = PLAN_PROMPT.format(
            k=self.top_k,
            relations="\n".join(self.relation_names.shown(r) for r in relations),
            topics=", ".join(names.get(t, t) for t in topics),
            question=question.question,
        )
        reply = llm.chat([{"role": "user", "content": prompt}])
        plans: list[Plan] = []
        for line in reply.replace("</PATH>", "\n").splitlines():
            line = line.replace("<PATH>", "").replace("<SEP>", "->")
            line = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line)
            line = re.sub(r"\s*\([^()]*\)", "", line)  # "P19 (place of birth)" as the prompt showed it
            steps = tuple(step.strip().strip("`'\"") for step in line.split("->") if step.strip())
            if any(len(step.split()) != 1 for step in steps):
                continue  # prose, not a relation path
            if steps and Plan(relations=steps) not in plans:
                plans.append(Plan(relations=steps))
        return plans[: self.top_k]

    def plan_rog_original(self, question: Question, llm: LLM) -> list[Plan]:
        """RoG's released planner as trained: its instruction and the question, an empty system
        prompt (the server's LLaMA-2 chat template renders both), ``top_k`` beams (``n`` with the
        server's beam search; ``n`` samples where it has none)."""
        messages: list[ChatMessage] = [
            {"role": "system", "content": ""},
            {"role": "user", "content": ROG_PLANNER_INSTRUCTION + question.question},
        ]
        if isinstance(llm, CandidateLLM):
            replies = llm.candidates(messages, n=self.top_k, beam_search=True, max_tokens=ROG_PLAN_TOKENS)
        else:
            replies = [llm.chat(messages, max_tokens=ROG_PLAN_TOKENS)]
        return parse_rog_paths(replies)[: self.top_k]

    def plan_offline(self, question: Question) -> list[Plan]:
        """A beam of relation paths grown hop by hop from the topic entities, ranked by the scorer on the
        question without the topics' names; the plans are the ``top_k`` best of all lengths, scored
        together and ordered by :meth:`Judge.order` (a longer plan, or one walking an edge backwards, must
        match the question better by :func:`path_cost`)."""
        topics = list(question.q_entity)
        judge = Judge(self.scorer, question.question, self.kg.labels(topics).values())
        beam: list[tuple[Plan, list[str]]] = [(Plan(relations=(), directions=()), topics)]
        candidates: list[Plan] = []
        for hop in range(self.max_hops):
            grown = self._grow(beam)
            if not grown:
                break
            names = self.relation_names.words(r for plan, _ in grown for r in plan.relations)
            texts = [plan_text(plan, names) for plan, _ in grown]
            phrases = self.relation_names.phrases(r for plan, _ in grown for r in plan.relations)
            scores = judge.path_scores([[phrases[r] for r in plan.relations] for plan, _ in grown], whole=False)
            order = sorted(range(len(grown)), key=lambda i: (-scores[i], texts[i]))
            kept = [grown[i] for i in order[: self.beam_width]]
            candidates.extend(plan for plan, _ in kept)
            if hop + 1 < self.max_hops:
                beam = [(plan, self._advance(plan, frontier)) for plan, frontier in kept]
        if not candidates:
            return []
        phrases = self.relation_names.phrases(r for plan in candidates for r in plan.relations)
        scores = judge.path_scores([[phrases[r] for r in plan.relations] for plan in candidates])
        return judge.order(candidates, scores, cost=_plan_cost, paths=True)[: self.top_k]

    def _grow(self, beam: Sequence[tuple[Plan, list[str]]]) -> list[tuple[Plan, list[str]]]:
        """Every one-relation extension of the beam's plans (both directions), with the frontier it
        extends; one ``relations`` call per direction for the whole beam. A plan never walks straight
        back along the relation it just walked (its words would be the same, so only chance could make
        the detour outscore the plan without it)."""
        frontier = list(dict.fromkeys(e for _, ids in beam for e in ids))
        grown: list[tuple[Plan, list[str]]] = []
        if not frontier:
            return grown
        for side in SIDES:
            found = self._relations(frontier, side)
            for plan, ids in beam:
                last = (plan.relations[-1], (plan.directions or ())[-1] == "out") if plan.relations else None
                for relation in sorted({r for e in ids for r in found.get(e, ())} - self._schema):
                    if turns_back(last, relation, side == "out"):
                        continue
                    longer = Plan(relations=(*plan.relations, relation), directions=(*(plan.directions or ()), side))
                    grown.append((longer, ids))
        return grown

    def _advance(self, plan: Plan, frontier: list[str]) -> list[str]:
        """The entities one more hop along ``plan``'s last step from ``frontier`` (capped)."""
        direction = (plan.directions or ("both",))[-1]
        edges = self.kg.neighbors(frontier[: self.max_frontier], direction=direction, relations=[plan.relations[-1]])
        reached = (edge.tail if edge.head == node else edge.head for node, found in edges.items() for edge in found)
        return entity_ids(reached)[: self.max_frontier]

    # -- validation ----------------------------------------------------------------------------------
    def validate(self, topics: Sequence[str], plan: Plan) -> CheckedPlan:
        """Walks ``plan`` from the topic entities, fixing each hop's direction and repairing (or
        stopping at) steps no frontier entity has."""
        frontier = list(topics)
        relations: list[str] = []
        directions: list[Direction] = []
        repairs: list[tuple[str, str]] = []
        valid = 0
        for index, relation in enumerate(plan.relations):
            if not frontier:
                break
            wanted = plan.directions[index] if plan.directions else "both"
            sides: tuple[Direction, ...] = SIDES if wanted == "both" else (wanted,)
            present = {side: set(_union(self._relations(frontier, side))) - self._schema for side in sides}
            step_sides = [side for side in sides if relation in present[side]]
            if step_sides:
                valid += 1
            elif self.repair and any(present.values()):
                options = sorted(set().union(*present.values()))
                replacement = self.closest(relation, options)
                repairs.append((relation, replacement))
                relation = replacement
                step_sides = [side for side in sides if relation in present[side]]
            else:
                break
            direction: Direction = step_sides[0] if len(step_sides) == 1 else "both"
            relations.append(relation)
            directions.append(direction)
            if index + 1 < len(plan.relations):
                frontier = self._advance(Plan(relations=(relation,), directions=(direction,)), frontier)
        return CheckedPlan(
            plan=Plan(relations=tuple(relations), directions=tuple(directions)),
            valid_steps=valid,
            steps=len(plan.relations),
            repairs=tuple(repairs),
        )

    def closest(self, relation: str, options: Sequence[str]) -> str:
        """The option the scorer finds closest to ``relation`` (ties: most similar spelling)."""
        names = self.relation_names.words([relation, *options])
        scores = self.scorer.score(names[relation], [names[o] for o in options])
        similarity = [difflib.SequenceMatcher(None, relation, option).ratio() for option in options]
        best = max(range(len(options)), key=lambda i: (scores[i], similarity[i], -i))
        return options[best]

    # -- reasoning -----------------------------------------------------------------------------------
    def reason_with_llm(self, question: Question, walks: Sequence[Path], llm: LLM) -> tuple[list[Node], str]:
        """RoG's reasoning prompt over the walks (most supported ends first); the reply's items
        matched to the walks' end entities by name or id."""
        rank = {end: place for place, (end, _) in enumerate(vote(walks))}
        shown = sorted(walks, key=lambda w: (rank[w.end], not follows_edges(w)))[: self.prompt_paths]
        names = self.kg.labels(path_entities(shown)) if shown else {}
        ends = {w.end: node_text(w.end, names) for w in walks}
        if self.prompts == "rog-original":
            reply = llm.chat(self.rog_original_answer_messages(question, shown, names), max_tokens=ROG_ANSWER_TOKENS)
            return match_names(parse_list(reply), ends), reply.strip()
        self.relation_names.words(r for walk in shown for r in walk.relations)
        relations = {r: self.relation_names.shown(r) for r in self.relation_names.known}
        prompt = REASON_PROMPT.format(
            paths="\n".join(format_path(w, {**names, **relations}) for w in shown), question=question.question
        )
        reply = llm.chat([{"role": "user", "content": prompt}])
        return match_names(parse_list(reply), ends), reply.strip()

    @staticmethod
    def rog_original_answer_messages(
        question: Question, walks: Sequence[Path], names: Mapping[str, str]
    ) -> list[ChatMessage]:
        """RoG's ``build_qa_input.py`` prompt: instruction, reasoning paths in RoG's text, the
        question (``?`` added as RoG adds it) and, for multiple choice, the choices."""
        text = question.question if question.question.endswith("?") else question.question + "?"
        body = f"Question:\n{text}"
        instruction = ROG_ANSWER_INSTRUCTION
        if question.choices:
            body += "\nChoices:\n" + "\n".join(question.choices)
            instruction = ROG_CHOICE_INSTRUCTION
        paths = "\n".join(rog_path_text(walk, names) for walk in walks)
        content = f"{instruction}\n\nReasoning Paths:\n{paths}\n\n{body}"
        return [{"role": "system", "content": ""}, {"role": "user", "content": content}]


def plan_text(plan: Plan, names: Mapping[str, str] | None = None) -> str:
    """A plan's words (``names`` of its relations where given), each stem once, for scoring against
    a question: a relation repeated along a path, or "artists" after "artist", must not make a
    longer path look more relevant."""
    words: dict[str, str] = {}
    for relation in plan.relations:
        text = names[relation] if names is not None and relation in names else relation_words(relation)
        for word in text.split():
            words.setdefault(stem(word), word)
    return " ".join(words.values())


def _plan_cost(plan: Plan) -> float:
    return path_cost(len(plan.relations), sum(direction == "in" for direction in plan.directions or ()))


def _union(found: Mapping[str, Sequence[str]]) -> list[str]:
    return sorted({r for rs in found.values() for r in rs})


def truth_paths(
    kg: KnowledgeGraph, q_entity: Sequence[str], a_entity: Sequence[str], *, max_hops: int = 3
) -> list[tuple[str, ...]]:
    """RoG's training targets: the relation sequences of the shortest paths between each question
    entity and each answer entity (``shortest_paths``), distinct, in order of discovery."""
    if not q_entity or not a_entity:
        return []
    found = kg.shortest_paths(list(q_entity), list(a_entity), max_hops=max_hops, direction="both")
    return list(dict.fromkeys(path.relations for path in found if path.edges))
