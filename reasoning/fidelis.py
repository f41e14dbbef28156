"""FiDeLiS (Sui et al., 2024): faithful KGQA by Path-RAG-guided beam search with deductive
verification as the stop signal.

Per question: keywords of the question (the LLM's, plus the question's content words minus the
anchors' names that they do not already cover, so an odd reply cannot lose the question);
Path-RAG retrieves from indexes over KG names the entities matching the keywords (``search``, one
call per keyword) and, at each step, the ``retrieve_top`` relation names most similar to them; the
next-hop candidates of every beam path (one batched ``neighbors`` call per step, plus for the retrieved
relations one per direction and a repeat ask for the relations a capped entity was left without, so a
hub's busy relations hide none) are pre-selected to those along a retrieved relation or reaching a
retrieved entity and scored as
``sim(keywords, step) + alpha * sim(keywords, 1-hop neighbourhood of the step's entity)``
(alpha = 0.3; the neighbourhood is the best of the entity's relation names, one batched ``relations``
call per direction and step, one walked against its edge less ``INVERSE_COST`` and never the one straight
back along the step); beam search keeps ``beam_width`` (4) paths for up to ``max_depth`` (4) steps, the
LLM picking the beam among the ``candidates`` (16) best; offline the beam keeps the ``beam_width`` best
plus the best of each of the ``heads`` (4) best relation paths, at most ``beam_width + heads`` paths
(``heads=0``: the paper's beam). After every step deductive verification asks whether a path already
entails the answer, and the search stops at the first verified path(s).

Choices where the paper is vague or needs an LLM:

* A step is ranked first by the relation path it opens (:func:`reasoning.lookahead.lookahead_scores`:
  the best :meth:`reasoning.relevance.Judge.path_scores` alignment of its relation chain and of that
  chain's one-relation continuations, less the :func:`reasoning.relevance.path_cost` the hops add), then
  by the Path-RAG score above (the sum of its step scores in the scorer's
  calibrated units, :meth:`reasoning.relevance.Judge.calibrated`): a hop's own words state only part of
  a multi-hop question, and a sum of per-hop scores against the whole question reads each hop diluted.
  No step walks straight back along the relation just walked. Offline the shortlist and the beam keep,
  besides the best steps, the best step of each of the best relation paths
  (:func:`reasoning.grounding.spread`): one relation's many edges must not crowd out the path a question
  needs one hop further. The beam: the ``beam_width`` best and the heads of the ``heads`` best paths, at
  most ``beam_width + heads``; the shortlist scored with its neighbourhood: the ``2 x candidates`` best and
  the heads of the ``2 x candidates`` best paths, at most ``4 x candidates``.
* The lookahead judges a hop by the relations behind a sample of the entities it reaches; the beam keeps
  single entities. So a shortlisted step's promise is capped by what its own end bears out (its own path
  and its one-relation continuations from there, read from the relations fetched for the neighbourhood
  score: no extra KG call), and a step along a relation the beam's promise rests on is kept by the
  pre-selection whatever its similarity to the whole question: a film without a producer must not take
  the place of one with a producer, and ten "award" relations must not crowd out "produced by".
* Offline (and after a malformed LLM verification reply), verification comes one step late: the beam
  is verified when no path one hop longer opens a path that states the question better than the beam's
  best states it itself: the longer paths' promise (from the lookahead's call,
  :func:`reasoning.lookahead.lookahead_scores`) against the beam's own path scores
  (:func:`reasoning.lookahead.own_scores` with ``whole=False``), two calls, each less
  :func:`reasoning.relevance.path_cost` per extra or backward hop; the verified paths are then the explored
  paths that state it best. Every comparison is between path scores of one question, so no level depends
  on the scorer's scale. In a path's alignment a word two relations state equally counts for the earlier
  one (Freebase's "country" then "country capital" for "What is the capital of the country of X?").
  There is no verification threshold: the LLM's verdict is a yes or no, and offline the stop compares
  path scores of one question with each other, so no absolute level is needed (an option that did nothing
  would be accepted silently, so there is none: ``verify_threshold`` is refused like any unknown option).
* When no path is verified within ``max_depth`` steps, the answer rests on the explored paths (of any
  depth) that state the question best by the same measure, shortest first; none when no explored path
  states anything of it; ``details["verified"]`` says which case held.
* The answer is the end entities of the verified paths, best first; each cites its path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from kg_adapters.base import Direction, KnowledgeGraph
from kg_adapters.display import format_path
from kg_adapters.records import Edge, Node, Path
from reasoning.base import Answer, KGReasoner, Question, budget, count, number
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
    spread,
    start,
)
from reasoning.lookahead import Hop, capped_edges, lookahead_scores, own_scores
from reasoning.relevance import INVERSE_COST, Judge, path_cost, question_focus
from reasoning.scorers import tokens
from reasoning.text import RelationNames, node_text, parse_list, schema_relations
from reasoning.walks import SIDES, Step, added_cost, arrival, backward, net_level, turns_back, walked_steps


@dataclass(frozen=True, kw_only=True)
class Beam:
    """A reasoning path from an anchor, with its accumulated Path-RAG score."""

    start: str
    chain: Chain
    end: Node
    score: float
    promise: float = 0.0
    """The best relation path this path opens (:func:`reasoning.lookahead.lookahead_scores`)."""
    walked: Direction = "out"
    """The direction the last hop was walked in."""
    onward: frozenset[str] = frozenset()
    """The relations from this path's end its promise rests on (:meth:`FiDeLiS._borne_out`)."""

    @property
    def relations(self) -> tuple[str, ...]:
        return tuple(edge.relation for edge in self.chain)

    @property
    def nodes(self) -> set[Node]:
        return {self.start, *(n for edge in self.chain for n in (edge.head, edge.tail))}


@dataclass(frozen=True, kw_only=True)
class Search:
    """One question's search: the run, what the scorer reads, its judge and relation names."""

    run: Run
    query: str
    judge: Judge
    relations: RelationNames


class FiDeLiS(KGReasoner):
    """FiDeLiS over a KnowledgeGraph (see the module docstring)."""

    name = "fidelis"

    beam_width: int = budget(4)
    heads: int = count(4)
    max_depth: int = budget(4)
    alpha: float = number(0.3)
    retrieve_top: int = budget(10)
    candidates: int = budget(16)
    edges_per_entity: int = budget(200)

    def __init__(self, kg: KnowledgeGraph, **options: Any) -> None:
        super().__init__(kg, **options)
        self.candidates = max(self.candidates, self.beam_width)

    def answer(self, question: Question) -> Answer:
        run = start(self.kg, self.llm, self.scorer)
        anchors = link_entities(run, question)
        names = fetch_names([run.kg], anchors, Names())
        words = self._keywords(run, question, [names.get(anchor, anchor) for anchor in anchors])
        # offline the question itself, its topics' names left out, is what the scorer reads: the same
        # words to BM25 (its stop words dropped), and to a sentence encoder the wording ("where ... born")
        query = " ".join(words) if run.llm is not None else question_focus(question.question, names.values())
        search = Search(
            run=run, query=query, judge=Judge(run.scorer, query, ties_to_earlier=True), relations=RelationNames(run.kg)
        )
        indexed = self._index_entities(run, words)
        beam = [Beam(start=anchor, chain=(), end=anchor, score=0.0) for anchor in anchors]
        explored: list[Beam] = []
        verified: list[Beam] = []
        undecided = False  # the last beam awaits the offline verdict: does going deeper help?
        depth = 0
        while depth < self.max_depth:
            grown = self._step(search, question, beam, indexed, names)
            if not grown:
                break
            if undecided and not self._deeper_helps(search, beam, grown):
                verified = self._closest(search, explored)
                if verified:  # else nothing so far states the question: search on
                    break
            beam = grown
            depth += 1
            explored.extend(beam)
            verdict = self._verify(search, question, beam, names)
            undecided = verdict is None
            if verdict:
                verified = verdict
                break
        closest = verified or self._closest(search, explored)
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
        self, search: Search, question: Question, beam: list[Beam], indexed: set[str], names: Names
    ) -> list[Beam]:
        """Extends every beam path by one hop and keeps the ``beam_width`` best extensions (offline also the
        best of each of the ``heads`` best relation paths, at most ``beam_width + heads``): by the best
        relation path each opens, then by the Path-RAG score."""
        run = search.run
        ends = [path.end for path in beam if isinstance(path.end, str)]
        if not ends:
            return []
        found = run.kg.neighbors(ends, direction="both", limit_per_entity=self.edges_per_entity)
        found = self._retrieved_edges(search, ends, found, names)
        steps: list[Beam] = []
        for path in beam:
            if not isinstance(path.end, str):
                continue
            seen = path.nodes
            for edge in fact_edges(found.get(path.end, []), run.kg):
                end = other_end(edge, path.end)
                walked: Direction = "out" if edge.head == path.end else "in"
                last = arrival(path.chain[-1], path.end) if path.chain else None
                if end not in seen and not turns_back(last, edge.relation, walked == "out"):
                    chain = (*path.chain, edge)
                    steps.append(Beam(start=path.start, chain=chain, end=end, score=path.score, walked=walked))
        if not steps:
            return []
        fetch_names([run.kg], edge_ids(step.chain[-1] for step in steps), names)
        promised = frozenset(relation for path in beam for relation in path.onward)
        steps = self._path_rag(search, steps, indexed, names, promised)
        ranked_steps = sorted(steps, key=lambda step: (-step.promise, -step.score))
        if run.llm is None:  # the beam keeps the best step of each of the best relation paths too (spread)
            walks = [_walk(step) for step in ranked_steps]
            return [ranked_steps[i] for i in spread(walks, self.beam_width, self.heads)]
        top = ranked_steps[: self.candidates]
        picked = self._llm_pick(run, question, top, names)
        return picked if picked is not None else top[: self.beam_width]

    def _retrieved_edges(
        self, search: Search, ends: list[str], found: dict[str, list[Edge]], names: Names
    ) -> dict[str, list[Edge]]:
        """``found`` plus the edges of the ``retrieve_top`` relations around ``ends`` most similar to the
        question (one batched ``relations`` call, then per direction one ``neighbors`` call for all of them, a
        relation's share of ``edges_per_entity`` per entity, and one more for the relations a capped entity
        was left without, :func:`reasoning.lookahead.capped_edges`): an entity with more edges than
        ``edges_per_entity`` (a country, a genre) must not hide the relation the question asks for."""
        run = search.run
        around = run.kg.relations(ends, direction="both")
        schema = schema_relations(run.kg)
        listed = list(dict.fromkeys(r for rels in around.values() for r in rels if r not in schema))
        if not listed:
            return found
        fetch_names([run.kg], [relation for relation in listed if needs_label(relation)], names)
        scores = search.judge.scores([relation_phrase(relation, names) for relation in listed])
        wanted = [listed[i] for i in ranked(scores, self.retrieve_top)]
        share = max(1, self.edges_per_entity // len(wanted))  # a relation's share: a busy one hides none
        more = [capped_edges(run.kg, ends, side, wanted, share, literals=True) for side in SIDES]
        return {
            node: list(dict.fromkeys([*found.get(node, []), *(e for m in more for e in m.get(node, []))]))
            for node in ends
        }

    def _promise(self, search: Search, steps: list[Beam]) -> list[Beam]:
        """Each step with the best relation path it opens (the lookahead, one batched ``neighbors`` and
        ``relations`` call per direction), less the :func:`reasoning.relevance.path_cost` its hops add."""
        hops = {
            step: Hop(
                prefix=step.relations[:-1],
                relation=step.relations[-1],
                direction=step.walked,
                nodes=(str(other_end(step.chain[-1], step.end)),),
            )
            for step in steps
        }
        distinct = list(dict.fromkeys(hops.values()))
        schema = frozenset(schema_relations(search.run.kg))
        ahead = dict(
            zip(
                distinct,
                lookahead_scores(search.run.kg, search.judge, search.relations, distinct, skip=schema),
                strict=True,
            )
        )
        return [replace(step, promise=ahead[hops[step]]) for step in steps]

    def _path_rag(
        self, search: Search, steps: list[Beam], indexed: set[str], names: Names, promised: frozenset[str]
    ) -> list[Beam]:
        """Pre-selects and scores next-hop candidates: similarity plus alpha x neighbourhood similarity.
        A step along a relation the beam's promise rests on (``promised``) is always kept: the similarity of
        one relation's words to the whole question ranks the relations of a path's last hop low when the
        question's other hops name many relations of one kind (ten "award" relations before "produced by")."""
        run, judge = search.run, search.judge
        relations = list(dict.fromkeys(step.chain[-1].relation for step in steps))
        relation_scores = judge.scores([relation_phrase(rel, names) for rel in relations])
        retrieved = {relations[i] for i in ranked(relation_scores, self.retrieve_top)}
        retrieved |= promised
        kept = [step for step in steps if step.chain[-1].relation in retrieved or step.end in indexed] or steps
        texts = [f"{relation_phrase(step.chain[-1].relation, names)} {node_text(step.end, names)}" for step in kept]
        similarity = judge.calibrated(judge.scores(texts))
        kept = self._promise(search, kept)  # the shortlist by the paths they open, then by similarity
        order = sorted(range(len(kept)), key=lambda i: (-kept[i].promise, -similarity[i], i))
        wide = self.candidates * 2  # at most 2 x wide steps (the module docstring)
        shortlist = [order[i] for i in spread([_walk(kept[i]) for i in order], wide, wide)]
        entities = list(dict.fromkeys(end for i in shortlist if isinstance(end := kept[i].end, str)))
        around = {side: run.kg.relations(entities, direction=side) if entities else {} for side in SIDES}
        vocabulary = list(dict.fromkeys(rel for found in around.values() for rels in found.values() for rel in rels))
        fetch_names([run.kg], [relation for relation in vocabulary if needs_label(relation)], names)
        around_scores = judge.calibrated(judge.scores([relation_phrase(r, names) for r in vocabulary]))
        vocabulary_scores = dict(zip(vocabulary, around_scores, strict=True))
        borne = self._borne_out(search, [kept[i] for i in shortlist], around)
        scored = []
        for i, (promise, onward) in zip(shortlist, borne, strict=True):
            step = kept[i]
            gain = similarity[i] + self.alpha * self._neighbourhood(step, around, vocabulary_scores)
            scored.append(replace(step, score=step.score + gain, promise=promise, onward=onward))
        return scored

    @staticmethod
    def _borne_out(
        search: Search, steps: list[Beam], around: dict[Direction, dict[str, list[str]]]
    ) -> list[tuple[float, frozenset[str]]]:
        """Each step's promise as far as its own end bears it out: the lookahead judges a hop by the
        relations behind a sample of the entities it reaches, while the beam keeps single entities, and an
        entity the promised path cannot go on from (a film with no producer, a person with no spouse edge
        this way round) must not take the place of one it can. The promise is capped by the best of the
        step's own path and of its one-relation continuations from its end (``around``: the relations there
        per direction, never straight back or a profile's name predicates), each alignment less what its
        hops after the step's prefix add to :func:`path_cost`, as the lookahead charges them. With each
        promise, the relations of the continuations that reach the cap (none when the step's own path does, or
        when the step promises nothing)."""
        schema = schema_relations(search.run.kg)
        walks = [walked_steps(step.start, step.chain) for step in steps]
        options: list[list[tuple[Step, ...]]] = []
        for step, walk in zip(steps, walks, strict=True):
            onward = [walk]
            if isinstance(step.end, str):
                onward += [
                    (*walk, (relation, side == "out"))
                    for side in SIDES
                    for relation in around[side].get(step.end, [])
                    if relation not in schema and not turns_back(walk[-1], relation, side == "out")
                ]
            options.append(onward)
        paths = list(dict.fromkeys(tuple(r for r, _ in path) for onward in options for path in onward))
        aligned = dict(zip(paths, own_scores(search.judge, search.relations, paths, whole=False), strict=True))
        borne = []
        for step, walk, onward in zip(steps, walks, options, strict=True):
            prefix = len(walk) - 1
            values = [aligned[tuple(r for r, _ in path)] - added_cost(path, prefix) for path in onward]
            promise = min(step.promise, max(max(values), 0.0))
            level = promise - 1e-9
            rests_on = frozenset(
                path[-1][0] for path, value in zip(onward[1:], values[1:], strict=True) if value >= level
            )
            borne.append((promise, frozenset() if promise <= 0.0 or values[0] >= level else rests_on))
        return borne

    @staticmethod
    def _neighbourhood(step: Beam, around: dict[Direction, dict[str, list[str]]], scores: dict[str, float]) -> float:
        """How well the relations around the step's end state the question: the best of them, one walked
        against its edge less :data:`INVERSE_COST`, never the one straight back along the step (every
        tail of a relation has it, so it would rank them all alike)."""
        if not isinstance(step.end, str):
            return 0.0
        last = arrival(step.chain[-1], step.end)
        levels = [
            scores[relation] - (INVERSE_COST if side == "in" else 0.0)
            for side in SIDES
            for relation in around[side].get(step.end, [])
            if not turns_back(last, relation, side == "out")
        ]
        return max([0.0, *levels])

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

    def _verify(self, search: Search, question: Question, beam: list[Beam], names: Names) -> list[Beam] | None:
        """Deductive verification by the LLM: the beam paths that already entail the answer; None offline
        or when the reply names no path and does not say "none" (then the offline rule decides)."""
        run = search.run
        if run.llm is None:
            return None
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
        return None

    def _deeper_helps(self, search: Search, beam: list[Beam], grown: list[Beam]) -> bool:
        """Offline verification, one step late: whether some path one hop longer opens a path (its promise,
        the lookahead's best path through it) that states the question better than every path of the beam
        states it itself, both path alignments less :func:`path_cost` (the two hops before the last of a
        three-hop question may state it no better than one near-synonym hop: what they lead to does). When
        not, the beam's paths entail what the question asks; the answer is then chosen over every level
        explored (:meth:`_closest`), so going deeper on a promise costs no answer."""
        own = own_scores(search.judge, search.relations, [path.relations for path in beam], whole=False)
        current = [net_level(score, len(path.chain), _backwards(path)) for score, path in zip(own, beam, strict=True)]
        # a promise is what the step and the path it opens add to the path_cost of the path it grew from
        ahead = [net_level(step.promise, len(step.chain) - 1, _backwards(step, last=False)) for step in grown]
        return max(ahead) > max(current)

    def _levels(self, search: Search, paths: list[Beam]) -> list[float]:
        """Each path's score (:meth:`reasoning.relevance.Judge.path_scores` of its relations, all read in one
        call) less a cost per extra hop and per hop walked against its edge's direction."""
        chains = list(dict.fromkeys(path.relations for path in paths))
        scores = dict(zip(chains, own_scores(search.judge, search.relations, chains), strict=True))
        return [net_level(scores[path.relations], len(path.chain), _backwards(path)) for path in paths]

    def _closest(self, search: Search, explored: list[Beam]) -> list[Beam]:
        """The explored paths whose relations state the question best (:meth:`_levels`), shortest first;
        none when no path states anything of it."""
        if not explored:
            return []
        levels = self._levels(search, explored)
        best = max(levels)
        leader = explored[levels.index(best)]
        if best + path_cost(len(leader.chain), _backwards(leader)) <= 0.0:
            return []
        top = [path for path, level in zip(explored, levels, strict=True) if level >= best - 1e-9]
        shortest = min(len(path.chain) for path in top)
        return sorted((path for path in top if len(path.chain) == shortest), key=lambda path: -path.score)


def _show(path: Beam, names: Names) -> str:
    return format_path(Path(start=path.start, edges=path.chain), names)


def _walk(path: Beam) -> tuple[str, tuple[Step, ...]]:
    """The path's anchor and relation path as walked."""
    return path.start, walked_steps(path.start, path.chain)


def _backwards(path: Beam, *, last: bool = True) -> int:
    """How many of the path's hops (``last``: its last hop too) were walked against their edge."""
    return backward(walked_steps(path.start, path.chain if last else path.chain[:-1]))
