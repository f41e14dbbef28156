"""FiDeLiS (Sui et al., 2024): faithful KGQA by Path-RAG-guided beam search with deductive
verification as the stop signal.

Per question: keywords of the question (the LLM's, plus the question's content words minus the
anchors' names that they do not already cover, so an odd reply cannot lose the question);
Path-RAG retrieves from indexes over KG names the entities matching the keywords (``search``, one
call per keyword) and, at each step, the ``retrieve_top`` relation names most similar to them; the
next-hop candidates of every beam path (one batched ``neighbors`` call per step) are pre-selected to
those along a retrieved relation or reaching a retrieved entity and scored as
``sim(keywords, step) + alpha * sim(keywords, 1-hop neighbourhood of the step's entity)``
(alpha = 0.3; the neighbourhood is the entity's relation names, one batched ``relations`` call per
step); beam search keeps ``beam_width`` (4) paths for up to ``max_depth`` (4) steps, the LLM picking
the beam among the best candidates; after every step deductive verification asks whether a path
already entails the answer, and the search stops at the first verified path(s).

Choices where the paper is vague or needs an LLM:

* A path's score is the sum of its step scores; ``sim`` of a step is the scorer on the step's
  relation words and entity name; the neighbourhood term is the best-scoring relation name around
  the step's entity.
* Offline, the beam is the top ``beam_width`` candidates by score, and a path is verified when the
  scorer, on that path's words alone, scores the keywords at least ``verify_threshold`` (0.9: with
  BM25 that means nearly every keyword is stated by the path). An LLM verification reply naming no
  path and not saying "none" is malformed and falls back to this check.
* When no path is verified within ``max_depth`` steps, the answer rests on the paths (of any depth)
  that came closest to verification, shortest first; ``details["verified"]`` says which case held.
* The answer is the end entities of the verified paths, best first; each cites its path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kg_adapters.base import KnowledgeGraph
from kg_adapters.display import format_path
from kg_adapters.records import Node, Path
from reasoning.base import Answer, KGReasoner, Question, budget, number
from reasoning.grounding import (
    Chain,
    Names,
    Run,
    edge_ids,
    fact_edges,
    fetch_names,
    keywords,
    link_entities,
    needs_label,
    other_end,
    parse_numbers,
    ranked,
    relation_phrase,
    start,
)
from reasoning.scorers import tokens
from reasoning.text import node_text, parse_list


@dataclass(frozen=True, kw_only=True)
class Beam:
    """A reasoning path from an anchor, with its accumulated Path-RAG score."""

    start: str
    chain: Chain
    end: Node
    score: float

    @property
    def nodes(self) -> set[Node]:
        return {self.start, *(n for edge in self.chain for n in (edge.head, edge.tail))}


class FiDeLiS(KGReasoner):
    """FiDeLiS over a KnowledgeGraph (see the module docstring)."""

    name = "fidelis"

    beam_width: int = budget(4)
    max_depth: int = budget(4)
    alpha: float = number(0.3)
    retrieve_top: int = budget(10)
    candidates: int = budget(16)
    edges_per_entity: int = budget(200)
    verify_threshold: float = number(0.9)

    def __init__(self, kg: KnowledgeGraph, **options: Any) -> None:
        super().__init__(kg, **options)
        self.candidates = max(self.candidates, self.beam_width)

    def answer(self, question: Question) -> Answer:
        run = start(self.kg, self.llm, self.scorer)
        anchors = link_entities(run, question)
        names = fetch_names([run.kg], anchors, Names())
        words = self._keywords(run, question, [names.get(anchor, anchor) for anchor in anchors])
        query = " ".join(words)
        indexed = self._index_entities(run, words)
        beam = [Beam(start=anchor, chain=(), end=anchor, score=0.0) for anchor in anchors]
        explored: list[Beam] = []
        verified: list[Beam] = []
        entailed: dict[Chain, float] = {}
        depth = 0
        while depth < self.max_depth:
            beam = self._step(run, question, query, beam, indexed, names)
            if not beam:
                break
            depth += 1
            explored.extend(beam)
            verified = self._verify(run, question, query, beam, names, entailed)
            if verified:
                break
        closest = verified or self._closest(run, query, explored, names, entailed)
        chosen = [path for path in closest if path.end not in anchors]
        prediction = list(dict.fromkeys(path.end for path in chosen))
        details = {"keywords": words, "anchors": anchors, "depth": depth, "verified": bool(verified)}
        text = ", ".join(node_text(node, names) for node in prediction) or "I don't know"
        return run.finish(
            prediction=prediction, paths=[path.chain for path in chosen], answer_text=text, details=details
        )

    def _keywords(self, run: Run, question: Question, anchor_names: list[str]) -> list[str]:
        reply = run.ask(
            "List the keywords of this question (the relations and kinds of things it asks about), "
            f"comma-separated, without the named entities.\n{question.question}"
        )
        chosen = [word for word in parse_list(reply or "") if tokens(word)]
        covered = {token for word in chosen for token in tokens(word)}
        own = keywords(question.question, drop=anchor_names)
        return chosen + [word for word in own if not set(tokens(word)) <= covered]

    def _index_entities(self, run: Run, words: list[str]) -> set[str]:
        """Path-RAG's entity retrieval: entities whose names match a keyword (the name index)."""
        found: set[str] = set()
        for word in words:
            found.update(entity.id for entity in run.kg.search(word, limit=self.retrieve_top))
        return found

    def _step(
        self, run: Run, question: Question, query: str, beam: list[Beam], indexed: set[str], names: Names
    ) -> list[Beam]:
        """Extends every beam path by one hop and keeps the ``beam_width`` best extensions."""
        ends = [path.end for path in beam if isinstance(path.end, str)]
        if not ends:
            return []
        found = run.kg.neighbors(ends, direction="both", limit_per_entity=self.edges_per_entity)
        steps: list[Beam] = []
        for path in beam:
            if not isinstance(path.end, str):
                continue
            seen = path.nodes
            for edge in fact_edges(found.get(path.end, []), run.kg):
                end = other_end(edge, path.end)
                if end not in seen:
                    steps.append(Beam(start=path.start, chain=(*path.chain, edge), end=end, score=path.score))
        if not steps:
            return []
        fetch_names([run.kg], edge_ids(step.chain[-1] for step in steps), names)
        steps = self._path_rag(run, query, steps, indexed, names)
        order = ranked([step.score for step in steps])
        top = [steps[i] for i in order[: self.candidates]]
        picked = self._llm_pick(run, question, top, names)
        return picked if picked is not None else top[: self.beam_width]

    def _path_rag(self, run: Run, query: str, steps: list[Beam], indexed: set[str], names: Names) -> list[Beam]:
        """Pre-selects and scores next-hop candidates: similarity plus alpha x neighbourhood similarity."""
        relations = list(dict.fromkeys(step.chain[-1].relation for step in steps))
        relation_scores = run.scorer.score(query, [relation_phrase(rel, names) for rel in relations])
        retrieved = {relations[i] for i in ranked(relation_scores, self.retrieve_top)}
        kept = [step for step in steps if step.chain[-1].relation in retrieved or step.end in indexed] or steps
        texts = [f"{relation_phrase(step.chain[-1].relation, names)} {node_text(step.end, names)}" for step in kept]
        similarity = run.scorer.score(query, texts)
        shortlist = ranked(similarity, self.candidates * 2)
        entities = list(dict.fromkeys(end for i in shortlist if isinstance(end := kept[i].end, str)))
        around = run.kg.relations(entities, direction="both") if entities else {}
        vocabulary = list(dict.fromkeys(rel for rels in around.values() for rel in rels))
        fetch_names([run.kg], [relation for relation in vocabulary if needs_label(relation)], names)
        vocabulary_scores = dict(
            zip(vocabulary, run.scorer.score(query, [relation_phrase(r, names) for r in vocabulary]), strict=True)
        )
        scored = []
        for i in shortlist:
            step = kept[i]
            nearby = around.get(step.end, []) if isinstance(step.end, str) else []
            neighbourhood = max((vocabulary_scores[rel] for rel in nearby), default=0.0)
            gain = similarity[i] + self.alpha * neighbourhood
            scored.append(Beam(start=step.start, chain=step.chain, end=step.end, score=step.score + gain))
        return scored

    def _llm_pick(self, run: Run, question: Question, top: list[Beam], names: Names) -> list[Beam] | None:
        if run.llm is None or len(top) <= self.beam_width:
            return None
        listing = "\n".join(f"{n}. {_show(path, names)}" for n, path in enumerate(top, 1))
        reply = run.ask(
            f"Question: {question.question}\nCandidate reasoning paths:\n{listing}\n"
            f"Pick the {self.beam_width} most promising paths; reply with their numbers."
        )
        picks = parse_numbers(reply, len(top))
        return None if picks is None else [top[i] for i in picks[: self.beam_width]]

    def _verify(
        self, run: Run, question: Question, query: str, beam: list[Beam], names: Names, entailed: dict[Chain, float]
    ) -> list[Beam]:
        """Deductive verification: the beam paths that already entail the answer."""
        if run.llm is not None:
            listing = "\n".join(f"{n}. {_show(path, names)}" for n, path in enumerate(beam, 1))
            reply = run.ask(
                f"Question: {question.question}\nReasoning paths:\n{listing}\n"
                "Which paths deductively answer the question? Reply with their numbers, or NONE."
            )
            picks = parse_numbers(reply, len(beam))
            if picks is not None:
                return [beam[i] for i in picks]
            if reply is not None and re.search(r"\bnone\b", reply, re.I):
                return []
        entailment = self._entailment(run, query, beam, names, entailed)
        return [path for path, score in zip(beam, entailment, strict=True) if score >= self.verify_threshold]

    def _entailment(
        self, run: Run, query: str, paths: list[Beam], names: Names, entailed: dict[Chain, float]
    ) -> list[float]:
        """How fully each path, read alone, states the keywords (the offline verifier); each chain is
        scored once per question (``entailed``), though verification and the fallback both ask."""
        for path in paths:
            if path.chain not in entailed:
                entailed[path.chain] = run.scorer.score(query, [run.terms(path.chain, names)])[0]
        return [entailed[path.chain] for path in paths]

    def _closest(
        self, run: Run, query: str, explored: list[Beam], names: Names, entailed: dict[Chain, float]
    ) -> list[Beam]:
        """Without a verified path: the explored paths closest to verification, shortest first."""
        if not explored:
            return []
        entailment = self._entailment(run, query, explored, names, entailed)
        best = max(entailment)
        if best <= 0.0:
            return []
        top = [path for path, score in zip(explored, entailment, strict=True) if score >= best - 1e-9]
        shortest = min(len(path.chain) for path in top)
        return sorted((path for path in top if len(path.chain) == shortest), key=lambda path: -path.score)


def _show(path: Beam, names: Names) -> str:
    return format_path(Path(start=path.start, edges=path.chain), names)
