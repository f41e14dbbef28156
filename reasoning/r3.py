"""R3, Right for Right Reasons (Toroghi et al., 2024): commonsense KGQA in which every factual step
rests on KG triples.

Per question: anchor entities (``q_entity``, else names linked with ``search``); their 1-hop facts
(``neighbors`` in both directions plus ``(entity, is, description)`` facts from ``describe``); a
commonsense axiom surfaced from the LLM; the facts pruned to the ``top_k`` most similar to the
axiom (scorer; by relation path, below) plus those the LLM picks among the next candidates; then a
fact-grounded answer (``True`` / ``False`` / ``I don't know`` for claims and yes/no questions, entities
otherwise) or a missing-evidence step naming the entity to expand next. Depth (``max_depth``
expansions) and breadth (``breadth`` entities per expansion, ``max_axioms`` axiom branches) are bounded.
Every answer lists the exact triples it rests on: the chain of facts from an anchor to each cited fact.

Choices where the paper is vague or needs an LLM (documented so results can be read correctly):

* A fact is scored by its whole chain from the anchor (the chain's relations, "place of birth, country"),
  so a second-hop fact keeps its context.
* Facts are scored against the question together with the axiom (the axiom alone may not name
  the question's relations). Without an LLM the axiom is the question itself and one branch is
  explored.
* Facts are kept and compared by relation path (the relations of the chain from its anchor, each with the
  direction it was walked in): every fact along one path scores alike (its path score,
  :func:`reasoning.grounding.chain_scores`, less :func:`reasoning.relevance.path_cost` per extra or
  backward hop), so pruning keeps the facts of the ``top_k`` best paths rather than an arbitrary part of
  one busy path. An entity reached by several paths (a film's director who also produced it) is
  expanded after each of them, and no chain walks straight back along the relation it just walked.
* Offline, an entity question is answered one step late: the best path's ends are the answer once the
  search has looked past it (expanded one of its ends, or found nothing around them) and no relation
  around the unexplored ends of the ``top_k`` best paths (one batched ``relations`` call per direction,
  :func:`reasoning.lookahead.continuations`) continues one into a path that would be chosen over it: of
  the ``top_k`` continued paths that state the question best by alignment
  (:meth:`reasoning.relevance.Judge.path_scores`, ``whole=False``), one whose path score less the same
  costs beats the best path's (both read whole, as the answer is chosen); or at the last depth. Until
  then ``breadth`` ends that promise the most are expanded, an end of each path they continue before a
  second end of one (:func:`reasoning.grounding.heads_first`; else the best path's own ends), and their
  promising relations' edges are fetched on their own too, so a hub's busy relation hides none.
* A claim is judged on what its chains' relations (and descriptions) say, entity names left out:
  relevant chains score at least ``stop_score`` times the best. It is ``True`` when a relevant chain links an anchor to
  another entity the claim names, ``False`` when after the last expansion relevant chains exist but
  none links them (the KG states another value), ``I don't know`` otherwise.
* With an LLM, "I don't know" keeps the search going (the scorer picks what to expand) and, after
  the last depth, moves to the next axiom's branch.
* An LLM answer that cites no valid fact, names no entity among the facts, or is malformed falls
  back to the offline decision for that step, so answers stay grounded.
* Preference matching (the paper's third task): with ``personal_kg`` (any KnowledgeGraph, e.g. an
  in-memory ``connect("oxigraph://")`` store) and a question whose ``choices`` are candidate items of
  the big KG, the user's facts (``user`` option, else the first ``q_entity``) are read from the
  personal KG and each candidate's facts from the big one; a candidate gets a verdict each. Offline,
  a candidate sharing a node with a preference is ``True``, or ``False`` when the preference's
  relation is negative (dislikes, avoids, allergic ...). With a personal KG, ordinary questions also
  see the user's personal facts and the anchors' personal facts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from kg_adapters.base import Direction, KnowledgeGraph
from kg_adapters.records import Edge, Literal, Node
from reasoning.base import Answer, KGReasoner, Question, budget, count, given, number
from reasoning.grounding import (
    AUXILIARIES,
    DESCRIBED_AS,
    VERDICT_UNKNOWN,
    WH_WORDS,
    Chain,
    Fact,
    Names,
    Run,
    best_pattern,
    best_shortest,
    chain_scores,
    description_facts,
    edge_ids,
    fact_edges,
    fact_text,
    fetch_names,
    find_names,
    heads_first,
    keywords,
    link_entities,
    other_end,
    parse_numbers,
    parse_verdict,
    path_levels,
    ranked,
    relation_phrase,
    relation_terms,
    start,
    walked,
)
from reasoning.lookahead import REACHED, continuations, own_scores
from reasoning.relevance import Judge
from reasoning.scorers import tokens
from reasoning.text import RelationNames, node_text, schema_relations
from reasoning.walks import SIDES, arrival, backward, net_level, turns_back

_NEGATIVE = frozenset(tokens("dislike dislikes disliked avoid avoids hate hates allergic allergy not never no against"))
"""Words of a preference relation that make it a reason against (as the scorer's tokens)."""
_VERDICTS = {"true", "false", "i don't know", "yes", "no"}
_ANSWER = re.compile(r"ANSWER\s*:\s*(?P<answer>.*?)\s*(?:\|\s*FACTS?\s*:\s*(?P<facts>.*))?$", re.I | re.S)
_MISSING = re.compile(r"MISSING\s*:\s*(?P<entity>.+)", re.I | re.S)


_Option = tuple[float, str, tuple[str, Direction], tuple[str, ...], int]
"""A continuation: its value, the end it starts at, its relation and direction, the continued relation path
and how many of its hops go against their edge."""


@dataclass(frozen=True, kw_only=True)
class _State:
    """What one step sees: every kept fact, what was expanded, the anchors."""

    facts: list[Fact]
    visited: set[str]
    anchors: list[str]
    relation_names: RelationNames


@dataclass(kw_only=True)
class _Outcome:
    answered: bool
    prediction: list[Node] = field(default_factory=list)
    verdict: str | None = None
    paths: list[Chain] = field(default_factory=list)
    expand: list[str] = field(default_factory=list)
    wanted: dict[str, set[tuple[str, Direction]]] = field(default_factory=dict)
    """Relations (and directions) of the entities to expand whose edges must be fetched even on a hub."""


class R3(KGReasoner):
    """Right for Right Reasons over a KnowledgeGraph (see the module docstring)."""

    name = "r3"

    top_k: int = budget(10)
    llm_candidates: int = count(30)
    max_depth: int = budget(3)
    breadth: int = budget(2)
    max_axioms: int = budget(2)
    neighbors_per_entity: int = budget(300)
    stop_score: float = number(0.5)
    personal_kg: KnowledgeGraph | None = given()
    user: str | None = given()

    def answer(self, question: Question) -> Answer:
        extra = [self.personal_kg] if self.personal_kg is not None else []
        run = start(self.kg, self.llm, self.scorer, *extra)
        if self.personal_kg is not None and question.choices and not _is_verdict_choice(question.choices):
            return self._match_preferences(run, question)
        anchors = link_entities(run, question)
        claim = is_claim(question)
        names = fetch_names([run.kg, *run.extra_kgs], anchors, Names())
        axioms: list[str] = []
        outcome = _Outcome(answered=False)
        for _ in range(self.max_axioms if run.llm is not None else 1):
            axioms.append(self._axiom(run, question, axioms))
            outcome = self._branch(run, question, anchors, axioms[-1], claim, names)
            if outcome.answered:
                break
        details = {"axioms": axioms, "anchors": anchors}
        if claim:
            verdict = outcome.verdict or VERDICT_UNKNOWN
            return run.finish(
                prediction=[verdict], paths=outcome.paths, answer_text=verdict, details={**details, "verdict": verdict}
            )
        text = ", ".join(node_text(node, names) for node in outcome.prediction) or VERDICT_UNKNOWN
        return run.finish(prediction=outcome.prediction, paths=outcome.paths, answer_text=text, details=details)

    def _axiom(self, run: Run, question: Question, previous: Sequence[str]) -> str:
        """A commonsense rule the answer relies on, from the LLM; the question itself offline."""
        avoid = f"\nGive a different rule than: {' / '.join(previous)}" if previous else ""
        reply = run.ask(
            f"Question: {question.question}\nState one general commonsense rule (an axiom) that answering "
            f"this question relies on, as one sentence.{avoid}",
            max_tokens=96,
        )
        line = next((text.strip() for text in (reply or "").splitlines() if text.strip()), "")
        return line or question.question

    def _branch(
        self, run: Run, question: Question, anchors: list[str], axiom: str, claim: bool, names: Names
    ) -> _Outcome:
        """One axiom's search: expand, prune, then answer or name the missing evidence."""
        reached: dict[str, list[Fact]] = {anchor: [] for anchor in anchors}
        frontier = list(anchors)
        if self.personal_kg is not None:
            user = self.user or (question.q_entity[0] if question.q_entity else None)
            if user is not None and user not in reached:
                reached[user] = []
                frontier.append(user)
        judge = Judge(run.scorer, focus(question, axiom), [names.get(anchor, anchor) for anchor in anchors])
        pool: dict[Chain, Fact] = {}
        visited: set[str] = set()
        relation_names = RelationNames(run.kg)
        outcome = _Outcome(answered=False)
        for depth in range(self.max_depth):
            if not frontier:
                break
            visited.update(frontier)
            new = [
                fact for fact in self._retrieve(run, frontier, reached, names, outcome.wanted) if fact.chain not in pool
            ]
            fresh = self._prune(run, judge, relation_names, axiom, new, names)
            for fact in fresh:
                pool[fact.chain] = fact
                if isinstance(fact.end, str) and fact.end not in anchors:
                    _reach(reached, fact)
            final = depth == self.max_depth - 1
            facts = list(pool.values())
            step = _State(facts=facts, visited=visited, anchors=anchors, relation_names=relation_names)
            outcome = self._step(run, question, axiom, judge, step, names, claim, final=final)
            if outcome.answered:
                return outcome
            frontier = [node for node in outcome.expand if node not in visited][: self.breadth]
        return outcome

    def _retrieve(
        self,
        run: Run,
        frontier: list[str],
        reached: dict[str, list[Fact]],
        names: Names,
        wanted: dict[str, set[tuple[str, Direction]]],
    ) -> list[Fact]:
        """The frontier's 1-hop facts in both KGs and their description facts (batched), once after each
        relation path that reached the entity (the same entity may be a film's director and its producer:
        the question decides which path its facts continue). The ``wanted`` relations' edges are fetched
        on their own as well (one call per direction): a hub's first ``neighbors_per_entity`` edges may
        all be of one busy relation."""
        edges: dict[str, list[Edge]] = {node: [] for node in frontier}
        for graph in (run.kg, *run.extra_kgs):
            found = graph.neighbors(frontier, direction="both", limit_per_entity=self.neighbors_per_entity)
            for node, node_edges in found.items():
                edges.setdefault(node, []).extend(fact_edges(node_edges, graph))
        for side in SIDES:
            relations = sorted({r for node in frontier for r, d in wanted.get(node, ()) if d == side})
            nodes = [node for node in frontier if any(d == side for _, d in wanted.get(node, ()))]
            if relations:
                more = run.kg.neighbors(
                    nodes, direction=side, relations=relations, limit_per_entity=self.neighbors_per_entity
                )
                for node, node_edges in more.items():
                    edges[node].extend(fact_edges(node_edges, run.kg))
        for fact in description_facts(run.kg, frontier):
            edges[fact.head].append(fact)
        facts = []
        for node, node_edges in edges.items():
            ways: list[tuple[str, Chain]] = [(via.start, via.chain) for via in reached.get(node, [])]
            for origin, chain in ways or [(node, ())]:
                seen = {origin, *(n for edge in chain for n in (edge.head, edge.tail))}
                for edge in dict.fromkeys(node_edges):
                    end = other_end(edge, node)
                    last = arrival(chain[-1], node) if chain else None
                    if edge.relation != DESCRIBED_AS and (
                        end in seen or turns_back(last, edge.relation, edge.head == node)
                    ):
                        continue
                    facts.append(Fact(edge=edge, chain=(*chain, edge), start=origin, end=end))
        fetch_names([run.kg, *run.extra_kgs], edge_ids(fact.edge for fact in facts), names)
        return facts

    def _prune(
        self, run: Run, judge: Judge, relation_names: RelationNames, axiom: str, facts: list[Fact], names: Names
    ) -> list[Fact]:
        """The facts of the ``top_k`` relation paths that best state the question and axiom (path scores,
        :func:`reasoning.grounding.chain_scores`, less the cost of extra and backward hops; every fact along
        one path scores alike, so a cut by fact would keep an arbitrary part of one busy path and crowd out
        the rest), plus the LLM's picks among the next paths' facts."""
        if not facts:
            return []
        levels = path_levels(chain_scores(judge, relation_names, facts), facts)
        paths = _paths_by_level(facts, levels)
        keep = [i for path in paths[: self.top_k] for i in path]
        candidates = [i for path in paths[self.top_k :] for i in path][: self.llm_candidates]
        if run.llm is not None and candidates:
            listing = "\n".join(f"{n}. {fact_text(facts[i].edge, names)}" for n, i in enumerate(candidates, 1))
            reply = run.ask(
                f"Axiom: {axiom}\nFacts:\n{listing}\nWhich facts are relevant to the axiom? Reply with their numbers."
            )
            keep += [candidates[i] for i in parse_numbers(reply, len(candidates)) or []]
        return [facts[i] for i in sorted(set(keep))]

    def _step(
        self,
        run: Run,
        question: Question,
        axiom: str,
        judge: Judge,
        state: _State,
        names: Names,
        claim: bool,
        *,
        final: bool,
    ) -> _Outcome:
        """Either a grounded answer or the entities whose facts are missing."""
        facts = state.facts
        if not facts:
            return _Outcome(answered=final, verdict=VERDICT_UNKNOWN if claim else None)
        if run.llm is not None:
            decided = self._llm_step(run, question, axiom, facts, names, claim, state.visited, final=final)
            if decided is not None and (decided.answered or decided.expand):
                return decided
            if decided is not None:  # the LLM does not know yet: expand where the scorer points
                scores = judge.scores([relation_terms(fact.chain, names) for fact in facts])
                return _Outcome(answered=False, expand=self._next_entities(facts, scores, state.visited))
        if claim:
            return self._offline_verdict(run, question, state, names, final=final)
        levels = path_levels(chain_scores(judge, state.relation_names, facts), facts)
        candidates = [i for i in range(len(facts)) if facts[i].end not in state.anchors]
        winners = [facts[i] for i in best_pattern(candidates, levels, facts)]
        if not winners:
            return _Outcome(answered=False, expand=self._next_entities(facts, levels, state.visited))
        # one step late: the best path is the answer once the search has looked past it (expanded some end
        # of it) and no unexplored end of the best paths has a relation around it that continues its path
        # into one stating the question better (read from the relations around the ends)
        ahead = [] if final else self._ahead(run, judge, state, levels)
        better = self._better(judge, state.relation_names, winners[0], ahead)
        ends = [fact.end for fact in winners if isinstance(fact.end, str)]
        beyond = [option for option in ahead if option[1] in ends]  # nothing around its ends: nothing to see
        looked = not beyond or any(end in state.visited for end in ends)
        if final or (looked and not better):
            prediction = list(dict.fromkeys(fact.end for fact in winners))
            return _Outcome(answered=True, prediction=prediction, paths=[fact.chain for fact in winners])
        # else the ends that promise a better path, or (none does) the best path's ends that lead furthest
        chosen = better or beyond
        # an end of each path they continue before a second end of one (:func:`heads_first`)
        order = heads_first([option[3][:-1] for option in chosen])
        expand = list(dict.fromkeys(chosen[i][1] for i in order))[: self.breadth]
        if not expand:
            return _Outcome(answered=False, expand=self._next_entities(facts, levels, state.visited))
        wanted: dict[str, set[tuple[str, Direction]]] = {}
        for _, end, relation, *_ in chosen:
            if end in expand and len(wanted.setdefault(end, set())) < self.top_k:
                wanted[end].add(relation)
        return _Outcome(answered=False, expand=expand, wanted=wanted)

    def _better(self, judge: Judge, names: RelationNames, winner: Fact, ahead: list[_Option]) -> list[_Option]:
        """The continuations (``ahead``) whose path would be chosen over the winner's: of the ``top_k``
        continued paths that state the question best by alignment, those whose path score less
        :func:`path_cost` beats the winner's path's, all read whole in one call (the measure the answer is
        chosen by: the alignment alone rates a hop that names a word exactly, "country" after "film", above
        the three hops a question names, where the path read as one text does not)."""
        steps = [step for step in walked(winner) if step[0] != DESCRIBED_AS]
        own = (tuple(relation for relation, _ in steps), backward(steps))
        contenders = list(dict.fromkeys((path, inverse) for *_, path, inverse in ahead))[: self.top_k]
        if not contenders:
            return []
        paths = [own, *contenders]
        scores = own_scores(judge, names, [path for path, _ in paths])
        levels = [net_level(score, len(path), inverse) for score, (path, inverse) in zip(scores, paths, strict=True)]
        winning = {path for path, level in zip(contenders, levels[1:], strict=True) if level > levels[0]}
        return [option for option in ahead if (option[3], option[4]) in winning]

    def _ahead(self, run: Run, judge: Judge, state: _State, levels: list[float]) -> list[_Option]:
        """Unexplored ends of the ``top_k`` best relation paths (:data:`REACHED` per path), each with every
        relation around it that continues its path, and how well the continued path states the question
        (its alignment, :meth:`Judge.path_scores` with ``whole=False``, less :func:`path_cost`), best first.
        The relations around the ends come from one batched ``relations`` call per direction; no
        continuation walks straight back along the relation just walked."""
        facts = state.facts
        groups = [
            (facts[path[0]], [e for i in path if isinstance(e := facts[i].end, str) and e not in state.visited])
            for path in _paths_by_level(facts, levels)[: self.top_k]
        ]
        groups = [(fact, list(dict.fromkeys(ends))[:REACHED]) for fact, ends in groups if ends]
        found, _ = continuations(
            run.kg,
            judge,
            state.relation_names,
            [(walked(fact), ends) for fact, ends in groups],
            skip=schema_relations(run.kg),
        )
        options: list[_Option] = [
            (option.value, end, option.relation, tuple(r for r, _ in option.steps), backward(option.steps))
            for option in found
            for end in option.ends
        ]
        return [options[i] for i in ranked([option[0] for option in options])]

    def _offline_verdict(self, run: Run, question: Question, state: _State, names: Names, *, final: bool) -> _Outcome:
        """A claim is judged on what its chains' relations say (entity names dropped from both sides):
        relevant chains score at least ``stop_score`` times the best, in the scorer's calibrated units
        (:meth:`Judge.calibrated`), so the rule means the same on every scorer's scale."""
        facts = state.facts
        claim_tokens = set(tokens(question.question))
        anchor_names = [names.get(anchor, anchor) for anchor in state.anchors]
        judge = Judge(run.scorer, " ".join(keywords(question.question, drop=anchor_names)))
        scores = judge.calibrated(judge.scores([relation_terms(fact.chain, names) for fact in facts]))
        best = max(scores)
        relevant = [i for i in ranked(scores) if best > 0 and scores[i] >= self.stop_score * best]

        def names_claimed_entity(fact: Fact) -> bool:
            if fact.edge.relation == DESCRIBED_AS and isinstance(fact.end, Literal):
                return len(fact.chain) == 1  # a description speaks only for the anchor it describes
            if fact.end in state.anchors:
                return fact.end != fact.start
            words = set(tokens(node_text(fact.end, names)))
            return bool(words) and words <= claim_tokens

        linking = [facts[i] for i in relevant if names_claimed_entity(facts[i])]
        if linking:
            return _Outcome(answered=True, verdict="True", paths=[fact.chain for fact in linking])
        if final and relevant:
            stated = best_shortest(relevant, scores, facts)
            return _Outcome(answered=True, verdict="False", paths=[facts[i].chain for i in stated])
        if final:
            return _Outcome(answered=True, verdict=VERDICT_UNKNOWN)
        return _Outcome(answered=False, expand=self._next_entities(facts, scores, state.visited))

    def _next_entities(self, facts: list[Fact], scores: list[float], visited: set[str]) -> list[str]:
        """Missing evidence offline: unexplored ends of the best-scoring relation paths, one path's end at
        a time (the best path's many ends must not take every slot from the next path's)."""
        waiting = [
            [end for i in path if isinstance(end := facts[i].end, str) and end not in visited]
            for path in _paths_by_level(facts, scores)
        ]
        ends: list[str] = []
        for rank in range(max((len(path) for path in waiting), default=0)):
            ends += [path[rank] for path in waiting if rank < len(path)]
            if len(set(ends)) >= self.breadth:
                break
        return list(dict.fromkeys(ends))[: self.breadth]

    def _llm_step(
        self,
        run: Run,
        question: Question,
        axiom: str,
        facts: list[Fact],
        names: Names,
        claim: bool,
        visited: set[str],
        *,
        final: bool,
    ) -> _Outcome | None:
        """The LLM's grounded answer or missing-evidence pick (an unanswered outcome naming no entity
        when it does not know: the search goes on, or the next axiom's branch); None when its reply
        is unusable."""
        listing = "\n".join(f"{n}. {fact_text(fact.edge, names)}" for n, fact in enumerate(facts, 1))
        wanted = "True, False or I don't know" if claim else "the answer entities"
        reply = run.ask(
            f"Question: {question.question}\nAxiom: {axiom}\nFacts:\n{listing}\n"
            "Using only these facts, reply on one line either\n"
            f"ANSWER: <{wanted}> | FACTS: <numbers of the facts used>\n"
            "or\nMISSING: <the entity whose facts are needed next>"
        )
        if reply is None:
            return None
        answer = _ANSWER.search(reply)
        if answer is not None:
            cited = [facts[i] for i in parse_numbers(answer.group("facts"), len(facts)) or []]
            if claim:
                verdict = parse_verdict(answer.group("answer"))
                if verdict == VERDICT_UNKNOWN:
                    return _Outcome(answered=False, verdict=verdict)
                if verdict is None or not cited:
                    return None
                return _Outcome(answered=True, verdict=verdict, paths=[fact.chain for fact in cited])
            ends = {fact.end: node_text(fact.end, names) for fact in facts if isinstance(fact.end, str)}
            chosen = find_names(answer.group("answer"), ends)
            if not chosen:
                unknown = parse_verdict(answer.group("answer")) == VERDICT_UNKNOWN
                return _Outcome(answered=False) if unknown else None
            support = cited or [fact for fact in facts if fact.end in chosen]
            return _Outcome(answered=True, prediction=list(chosen), paths=[fact.chain for fact in support])
        missing = _MISSING.search(reply)
        if missing is not None and not final:
            unexplored = {
                node: names.get(node, node)
                for fact in facts
                for node in (fact.edge.head, fact.edge.tail)
                if isinstance(node, str) and node not in visited
            }
            expand = find_names(missing.group("entity"), unexplored)
            if expand:
                return _Outcome(answered=False, expand=expand)
        return None

    def _match_preferences(self, run: Run, question: Question) -> Answer:
        """R3's preference matching: each candidate item against the user's personal KG."""
        personal = run.extra_kgs[0]
        user = self.user or (question.q_entity[0] if question.q_entity else None)
        if user is None:
            raise TypeError("preference matching needs the user: pass user=... or give it as q_entity")
        candidates = list(question.choices or ())
        preferences = fact_edges(personal.neighbors(user, direction="out")[user], personal)
        found = run.kg.neighbors(candidates, direction="both", limit_per_entity=self.neighbors_per_entity)
        item_facts = {c: fact_edges(found.get(c, []), run.kg) for c in candidates}
        names = Names()
        fetch_names([run.kg, personal], edge_ids([*preferences, *found_edges(item_facts)]), names)
        axiom = self._axiom(run, question, [])
        verdicts: dict[str, str] = {}
        paths: list[Chain] = []
        for candidate in candidates:
            verdict, support = self._judge_item(
                run, question, axiom, candidate, preferences, item_facts[candidate], names
            )
            verdicts[candidate] = verdict
            if verdict == "True":
                paths.extend(support)
        chosen = [c for c in candidates if verdicts[c] == "True"]
        text = ", ".join(names.get(c, c) for c in chosen) or VERDICT_UNKNOWN
        return run.finish(
            prediction=chosen, paths=paths, answer_text=text, details={"axioms": [axiom], "verdicts": verdicts}
        )

    def _judge_item(
        self,
        run: Run,
        question: Question,
        axiom: str,
        item: str,
        preferences: list[Edge],
        facts: list[Edge],
        names: Names,
    ) -> tuple[str, list[Chain]]:
        """One candidate's verdict and the (preference, item fact) pairs it rests on."""
        if facts:
            query = " ".join([axiom, *(fact_text(p, names) for p in preferences)])
            scores = run.scorer.score(query, [fact_text(e, names) for e in facts])
            facts = [facts[i] for i in ranked(scores, self.top_k * 3)]
        if run.llm is not None:
            numbered = [*preferences, *facts]
            item_name = names.get(item, item)
            listing = "\n".join(f"{n}. {fact_text(e, names)}" for n, e in enumerate(numbered, 1))
            reply = run.ask(
                f"Request: {question.question}\nAxiom: {axiom}\n"
                f"Facts about the user and about {item_name}:\n{listing}\n"
                f"Does {item_name} match the user's preferences? Reply on one line:\n"
                "ANSWER: <True, False or I don't know> | FACTS: <numbers of the facts used>"
            )
            answer = _ANSWER.search(reply or "")
            if answer is not None:
                verdict = parse_verdict(answer.group("answer"))
                cited = [numbered[i] for i in parse_numbers(answer.group("facts"), len(numbered)) or []]
                if verdict == VERDICT_UNKNOWN:
                    return verdict, []
                if verdict is not None and cited:
                    return verdict, [tuple(cited)]
        matches = [
            (pref, fact)
            for pref in preferences
            for fact in facts
            if _same_node(other_end(fact, item), pref.tail, names)
        ]
        negative = [(p, f) for p, f in matches if _NEGATIVE & set(tokens(relation_phrase(p.relation, names)))]
        if negative:
            return "False", [tuple(pair) for pair in negative]
        if matches:
            return "True", [tuple(pair) for pair in matches]
        return VERDICT_UNKNOWN, []


def focus(question: Question, axiom: str) -> str:
    """What facts are scored against: the axiom with the question it serves (the axiom alone may
    not name the question's relations, and an LLM's odd axiom must not derail the scorer)."""
    return question.question if axiom == question.question else f"{question.question} {axiom}"


def is_claim(question: Question) -> bool:
    """Claims and yes/no questions get a verdict: True/False choices, a leading auxiliary verb (unless
    the question offers alternatives joined by "or"), or a statement (no question mark, no wh-word)."""
    if question.choices and _is_verdict_choice(question.choices):
        return True
    words = question.question.strip().lower().split()
    if not words:
        return False
    if words[0] in AUXILIARIES:  # "Is X a man or a woman?" asks to choose, not to judge
        return " or " not in f" {' '.join(words)} "
    return not question.question.rstrip().endswith("?") and words[0] not in WH_WORDS


def _is_verdict_choice(choices: Sequence[str]) -> bool:
    return all(choice.strip().lower() in _VERDICTS for choice in choices)


def _reach(reached: dict[str, list[Fact]], fact: Fact) -> None:
    """Records a relation path reaching the fact's end (once per path)."""
    paths = reached.setdefault(str(fact.end), [])
    if all(walked(other) != walked(fact) or other.start != fact.start for other in paths):
        paths.append(fact)


def _paths_by_level(facts: Sequence[Fact], levels: Sequence[float]) -> list[list[int]]:
    """The facts' indices grouped by relation path from their anchor, the best-scoring path first."""
    groups: dict[tuple[str, tuple[tuple[str, bool], ...]], list[int]] = {}
    for i in ranked(levels):
        groups.setdefault((facts[i].start, walked(facts[i])), []).append(i)
    return list(groups.values())


def found_edges(facts: dict[str, list[Edge]]) -> list[Edge]:
    return [edge for edges in facts.values() for edge in edges]


def _same_node(a: Node, b: Node, names: Names) -> bool:
    return a == b or node_text(a, names).strip().lower() == node_text(b, names).strip().lower()
