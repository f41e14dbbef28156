"""Steps shared by the grounded reasoners (R3, RefKG, FiDeLiS): counting one question's KG and LLM
calls, naming and verbalising triples, linking question entities, and parsing LLM replies so that
a malformed reply yields ``None`` (the caller then falls back to its scorer) instead of an error.
"""

from __future__ import annotations

import re
import time
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kg_adapters.base import KnowledgeGraph
from kg_adapters.records import Edge, Literal, Node
from kg_adapters.wrappers.counting import CountingKG
from reasoning.base import LLM, Answer, ChatMessage, Question, Scorer
from reasoning.llm import CountingLLM
from reasoning.lookahead import own_scores
from reasoning.relevance import Judge
from reasoning.scorers import tokens
from reasoning.text import RelationNames, node_text, node_value, parse_list, schema_relations
from reasoning.walks import Step, backward, net_level, walked_steps

Chain = tuple[Edge, ...]
"""Facts leading from an anchor entity to a node, in walking order (each edge in KG direction)."""
VERDICT_UNKNOWN = "I don't know"
DESCRIBED_AS = "is"
"""The relation of ``(entity, is, description)`` facts (not a KG relation: never looked up)."""

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NUMBER = re.compile(r"\d+")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CAPITALISED_SPAN = re.compile(r"(?:[A-Z0-9][\w'.&-]*)(?:\s+(?:of|the|de|and|[A-Z0-9][\w'.&-]*))*")
AUXILIARIES = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "do",
        "does",
        "did",
        "can",
        "could",
        "has",
        "have",
        "had",
        "will",
        "would",
        "should",
        "may",
        "might",
    ]
)
"""Verbs that open a yes/no question ("Is ...", "Did ...")."""
WH_WORDS = frozenset(["who", "whom", "whose", "what", "which", "where", "when", "why", "how"])
_QUESTION_WORDS = AUXILIARIES | WH_WORDS | frozenset(["in", "on", "at", "the", "a", "an", "it"])
"""Words that open a question rather than a name (dropped from the start of a capitalised span)."""


@dataclass(frozen=True, kw_only=True)
class Fact:
    """A fact reached from an anchor: the chain leading to it (ending with ``edge``) and its far end."""

    edge: Edge
    chain: Chain
    start: str
    end: Node


def best_shortest(indices: Sequence[int], scores: Sequence[float], facts: Sequence[Fact]) -> list[int]:
    """The best-scoring facts, and among them the shortest chains (scores saturate at 1.0, so a
    chain that only appends an irrelevant fact must not tie with the one it extends)."""
    if not indices:
        return []
    best = max(scores[i] for i in indices)
    top = [i for i in indices if scores[i] >= best - 1e-9]
    shortest = min(len(facts[i].chain) for i in top)
    return [i for i in top if len(facts[i].chain) == shortest]


def best_pattern(indices: Sequence[int], scores: Sequence[float], facts: Sequence[Fact]) -> list[int]:
    """Every fact among ``indices`` whose chain follows the same relations from the same anchor as
    one of the best and shortest chains: all answers of the best relation path, however their names
    happen to score (BM25 favours short names)."""
    patterns = {_pattern(facts[i]) for i in best_shortest(indices, scores, facts)}
    return [i for i in indices if _pattern(facts[i]) in patterns]


def _pattern(fact: Fact) -> tuple[str, tuple[tuple[str, bool], ...]]:
    return (fact.start, walked(fact))


def walked(fact: Fact) -> tuple[Step, ...]:
    """The fact's relation path as walked from its anchor (:func:`reasoning.walks.walked_steps`)."""
    return walked_steps(fact.start, fact.chain)


@dataclass(kw_only=True)
class Run:
    """One question's view of the KG(s) and LLM, counting every call made for it."""

    kg: CountingKG
    llm: CountingLLM | None
    scorer: Scorer
    started: float
    extra_kgs: tuple[CountingKG, ...] = ()
    _terms: dict[Chain, str] = field(default_factory=dict)

    def terms(self, chain: Chain, names: Mapping[str, str]) -> str:
        """``chain_terms``, computed once per chain of this question (its ids are named by then)."""
        text = self._terms.get(chain)
        if text is None:
            text = self._terms[chain] = chain_terms(chain, names)
        return text

    def ask(self, prompt: str, *, max_tokens: int = 256) -> str | None:
        """The LLM's reply to one short prompt; None when running without an LLM."""
        if self.llm is None:
            return None
        messages: list[ChatMessage] = [
            {"role": "system", "content": "You answer questions over knowledge-graph facts. Be brief."},
            {"role": "user", "content": prompt},
        ]
        return self.llm.chat(messages, temperature=0.0, max_tokens=max_tokens)

    def finish(
        self,
        *,
        prediction: Sequence[Node],
        paths: Iterable[Chain],
        answer_text: str,
        details: Mapping[str, Any] | None = None,
    ) -> Answer:
        return Answer(
            prediction=tuple(node_value(node) for node in prediction),
            reasoning_paths=tuple(dict.fromkeys(path for path in paths if path)),
            answer_text=answer_text,
            kg_calls=len(self.kg.calls) + sum(len(extra.calls) for extra in self.extra_kgs),
            llm_calls=self.llm.calls if self.llm is not None else 0,
            seconds=time.perf_counter() - self.started,
            details=dict(details or {}),
        )


def start(kg: KnowledgeGraph, llm: LLM | None, scorer: Scorer, *extra: KnowledgeGraph) -> Run:
    return Run(
        kg=CountingKG(kg),
        llm=CountingLLM(llm) if llm is not None else None,
        scorer=scorer,
        started=time.perf_counter(),
        extra_kgs=tuple(CountingKG(other) for other in extra),
    )


def relation_phrase(relation: str, names: Mapping[str, str] | None = None) -> str:
    """Readable words of a relation id: its label when the KG has one (Wikidata ``P19`` -> ``place of
    birth``), else the last dotted segment of each part of a Freebase name (``people.person.place_of_birth``
    -> ``place of birth``; a CVT pair ``a.b.c..d.e.f`` -> ``c f``), or the local name of an IRI, with
    camelCase and underscores split."""
    if names is not None and relation in names:
        return names[relation]
    if relation == DESCRIBED_AS:
        return relation
    local = re.split(r"[/#]", relation.rstrip("/#"))[-1] if "/" in relation or "#" in relation else relation
    parts = [part.split(".")[-1] for part in local.split("..")]
    return " ".join(_CAMEL.sub(" ", part).replace("_", " ") for part in parts if part)


def other_end(edge: Edge, node: Node) -> Node:
    """The node an edge leads to when walked from ``node`` (either direction)."""
    return edge.tail if edge.head == node else edge.head


def fact_text(edge: Edge, names: Mapping[str, str]) -> str:
    """``(Tom Hanks, place of birth, Concord)``."""
    return f"({node_text(edge.head, names)}, {relation_phrase(edge.relation, names)}, {node_text(edge.tail, names)})"


def sentence(edge: Edge, names: Mapping[str, str]) -> str:
    """A triple verbalised as a sentence: ``Tom Hanks place of birth Concord.``"""
    return f"{node_text(edge.head, names)} {relation_phrase(edge.relation, names)} {node_text(edge.tail, names)}."


def chain_text(chain: Chain, names: Mapping[str, str]) -> str:
    return " ".join(sentence(edge, names) for edge in chain)


def distinct_words(text: str) -> str:
    """The words of ``text`` as written (lower-cased), each stem once: a text repeating a relevant word
    is no more relevant, and a sentence encoder reads words, not stems."""
    kept: dict[str, str] = {}
    for word in _WORD.findall(text.lower()):
        for token in tokens(word):
            kept.setdefault(token, word)
    return " ".join(kept.values())


def chain_terms(chain: Chain, names: Mapping[str, str]) -> str:
    """A chain's distinct words, for scoring (:func:`distinct_words`)."""
    return distinct_words(chain_text(chain, names))


def relation_terms(chain: Chain, names: Mapping[str, str]) -> str:
    """The distinct words of what a chain states, not whom it names: its relations, and the text
    of its ``(entity, is, description)`` facts. Every fact along one relation path reads the same, so
    its answers tie and are judged by what the path asks, not by how their names sound."""
    words = [relation_phrase(edge.relation, names) for edge in chain]
    words += [edge.tail.value for edge in chain if edge.relation == DESCRIBED_AS and isinstance(edge.tail, Literal)]
    return distinct_words(" ".join(words))


def chain_scores(
    judge: Judge, relation_names: RelationNames, facts: Sequence[Fact], *, whole: bool = True
) -> list[float]:
    """How well each fact's chain of relations states the question (:meth:`Judge.path_scores`; a description
    fact adds no relation): every fact along one relation path scores alike."""
    paths = [tuple(edge.relation for edge in fact.chain if edge.relation != DESCRIBED_AS) for fact in facts]
    return own_scores(judge, relation_names, paths, whole=whole)


def path_levels(scores: Sequence[float], facts: Sequence[Fact]) -> list[float]:
    """Each fact's path score less the cost of its chain's length and of its hops walked against their
    edges (:func:`reasoning.relevance.path_cost`): a longer or backward chain must state the question
    better to win."""
    return [
        net_level(level, len(fact.chain), backward(walked(fact))) for level, fact in zip(scores, facts, strict=True)
    ]


class Names(dict[str, str]):
    """Labels of entity and relation ids known so far, and every id already asked for (named or
    not), so no id is asked for twice."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: set[str] = set()


def fetch_names(graphs: Sequence[KnowledgeGraph], ids: Iterable[Node], known: Names) -> Names:
    """Adds the labels of the ids not asked for yet, asking each graph in turn for those still
    unnamed (one batched call per graph), and returns ``known``."""
    fresh = [node for node in dict.fromkeys(ids) if isinstance(node, str) and node not in known.asked]
    for graph in graphs:
        missing = [node for node in fresh if node not in known]
        if not missing:
            break
        known.update(graph.labels(missing))
    known.asked.update(fresh)
    return known


def edge_ids(edges: Iterable[Edge]) -> list[Node]:
    """The nodes of edges, and the relations that need a label, to be named in one call."""
    ids: list[Node] = []
    for edge in edges:
        ids += [edge.head, edge.tail]
        if needs_label(edge.relation):
            ids.append(edge.relation)
    return ids


def needs_label(relation: str) -> bool:
    """Whether a relation id is opaque (Wikidata ``P19``) rather than made of words (Freebase
    ``people.person.place_of_birth``, ``dbo:birthPlace``), so only opaque ids cost a label lookup."""
    return relation != DESCRIBED_AS and not any(
        word.isalpha() and len(word) > 2 for word in _WORD.findall(relation_phrase(relation))
    )


def fact_edges(edges: Iterable[Edge], kg: KnowledgeGraph) -> list[Edge]:
    """The edges that state facts: names and descriptions are shown with every triple already (and
    descriptions come as ``(entity, is, description)`` facts from ``describe``)."""
    schema = schema_relations(kg)
    return [edge for edge in edges if edge.relation not in schema]


def description_facts(kg: KnowledgeGraph, ids: Sequence[str]) -> list[Edge]:
    """``(entity, is, description)`` facts from ``describe`` (one batched call), so a description
    counts as evidence a method can cite."""
    if not ids:
        return []
    described = kg.describe(list(ids))
    return [
        Edge(head=entity_id, relation=DESCRIBED_AS, tail=Literal(value=entity.description))
        for entity_id, entity in described.items()
        if entity.description
    ]


def link_entities(run: Run, question: Question, *, per_phrase: int = 1) -> list[str]:
    """The question's anchor entities: ``q_entity`` when given, else names found in the question
    (by the LLM, else capitalised spans) looked up with ``search``."""
    if question.q_entity:
        return list(question.q_entity)
    phrases: list[str] = []
    reply = run.ask(f"List the named entities in this question, one per line, nothing else.\n{question.question}")
    if reply:
        phrases = parse_list(reply)
    if not phrases:
        phrases = capitalised_spans(question.question)
    found: list[str] = []
    for phrase in phrases[:5]:
        found.extend(entity.id for entity in run.kg.search(phrase, limit=per_phrase))
    return list(dict.fromkeys(found))


def capitalised_spans(text: str) -> list[str]:
    """Runs of capitalised words (``Tom Hanks``, ``Bank of America``), question words dropped."""
    spans = []
    for match in _CAPITALISED_SPAN.finditer(text):
        words = match.group(0).rstrip("?.!,'s").split()
        while words and words[0].lower() in _QUESTION_WORDS:
            words = words[1:]
        while words and words[-1].lower() in ("of", "the", "de", "and"):
            words = words[:-1]
        if words:
            spans.append(" ".join(words).removesuffix("'s").removesuffix("'"))
    return list(dict.fromkeys(spans))


def keywords(text: str, *, drop: Iterable[str] = ()) -> list[str]:
    """Content words of ``text`` as written, lower-cased (stop words, one-letter words and the words
    of the ``drop`` phrases removed; compared as the scorer's tokens)."""
    dropped = {token for phrase in drop for token in tokens(phrase)}
    words = [word for word in _WORD.findall(text.lower()) if len(word) > 1]
    return list(dict.fromkeys(word for word in words if (stems := tokens(word)) and not set(stems) <= dropped))


def ranked(scores: Sequence[float], k: int | None = None) -> list[int]:
    """Indices by descending score, ties in input order; the first ``k`` when given."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return order if k is None else order[:k]


def heads_first(paths: Sequence[Hashable]) -> list[int]:
    """Indices of items ranked best first, each with its relation path: the first item of every path, then
    the rest, each part in rank order. Offline, a method ranks the tails of one relation alike (or by their
    names, which know nothing of the answer), so one relation's many tails must not take every slot from
    the other paths a question may need one hop further."""
    firsts: dict[Hashable, int] = {}
    for i, path in enumerate(paths):
        firsts.setdefault(path, i)
    heads = set(firsts.values())
    return [*firsts.values(), *(i for i in range(len(paths)) if i not in heads)]


def spread(paths: Sequence[Hashable], width: int, heads: int) -> list[int]:
    """A beam over items ranked best first, each with its relation path, in rank order: the ``width`` first
    items and the ``heads`` first of :func:`heads_first` (the first item of each of the ``heads`` best paths,
    the best other items where there are fewer paths): a path's one item must not stand for all of its
    tails either. At most ``width + heads`` items (fewer where the two overlap); ``heads=0`` is the plain
    beam of the ``width`` best."""
    return sorted({*range(min(width, len(paths))), *heads_first(paths)[:heads]})


def parse_numbers(reply: str | None, count: int) -> list[int] | None:
    """0-based indices of the 1-based item numbers in a reply (``"2, 5"``), in reply order;
    None when the reply names no valid item."""
    if not reply:
        return None
    picks = [int(text) - 1 for text in _NUMBER.findall(reply)]
    valid = list(dict.fromkeys(i for i in picks if 0 <= i < count))
    return valid or None


def find_names(reply: str | None, names: Mapping[str, str]) -> list[str]:
    """Ids whose name occurs in the reply as whole words (case-insensitive), in reply order; a
    longer name claims its span first, so ``Toy Story 2`` does not also count as ``Toy Story``."""
    if not reply:
        return []
    text = reply.lower()
    claimed = [False] * len(text)
    found: list[tuple[int, str]] = []
    for node_id, name in sorted(names.items(), key=lambda item: (-len(item[1]), item[0])):
        if not name.strip():
            continue
        pattern = re.compile(r"(?<!\w)" + re.escape(name.lower()) + r"(?!\w)")
        for match in pattern.finditer(text):
            if not any(claimed[match.start() : match.end()]):
                claimed[match.start() : match.end()] = [True] * (match.end() - match.start())
                found.append((match.start(), node_id))
                break
    return [node_id for _, node_id in sorted(found)]


def parse_verdict(reply: str | None) -> str | None:
    """``True``, ``False`` or ``I don't know`` from a reply, else None."""
    if not reply:
        return None
    text = reply.strip().lower()
    if re.search(r"\bi\s+don'?t\s+know\b|\bunknown\b|\bnot\s+enough\b", text):
        return VERDICT_UNKNOWN
    first = re.search(r"\b(true|yes|false|no)\b", text)
    if first is None:
        return None
    return "True" if first.group(1) in ("true", "yes") else "False"
