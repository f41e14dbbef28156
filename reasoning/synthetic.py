"""Synthetic KGQA questions over any KG, worded two ways: with the relations' labels and as a person
might say them.

A question is a topic entity with a name, a relation path of 1-3 hops walked forwards from it (``out``
edges to entities, the profile's name and description predicates excluded) and, as answers, every entity
that path reaches (the topic never among them). The label wording strings the relations' labels
together ("What is the place of birth of the spouse of Tom Hanks?"); the natural wording comes from
paraphrase templates per relation (:class:`Wording`, data the caller supplies: "Where was the wife of Tom
Hanks born?"). With wordings given, only relations that have one are walked, so every question gets both.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kg_adapters.base import KnowledgeGraph, SparqlQueryable
from kg_adapters.errors import InvalidTermError
from kg_adapters.records import Edge
from reasoning.scorers import tokens
from reasoning.text import RelationNames, relation_tail, relation_words, schema_relations

ANSWER_BUCKETS = ((1, 1), (2, 3), (4, 1_000_000))
"""Answer counts the generator spreads each hop's questions over: one, a few, many (up to max_answers)."""


@dataclass(frozen=True, kw_only=True)
class Wording:
    """How a person words one relation: ``phrases`` name the relation's tail of ``{x}`` ("the birthplace
    of {x}"), ``questions`` ask for it ("Where was {x} born?"). A template starting with ``{x}'s`` is
    used only where ``{x}`` is the topic's own name."""

    phrases: tuple[str, ...]
    questions: tuple[str, ...]


def read_wordings(path: str | Path) -> dict[str, Wording]:
    """Relation id -> :class:`Wording` from a JSON file ``{"relations": [{"ids", "np", "q"}, ...]}``;
    InvalidTermError names a malformed entry or a template without ``{x}``."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return wordings_from_json(data.get("relations") if isinstance(data, dict) else None)


def wordings_from_json(entries: object) -> dict[str, Wording]:
    if not isinstance(entries, list):
        raise InvalidTermError("wordings: 'relations' must be a list of {ids, np, q} objects")
    found: dict[str, Wording] = {}
    for entry in entries:
        ids, phrases, questions = (entry.get(key) if isinstance(entry, dict) else None for key in ("ids", "np", "q"))
        templates = [*(phrases or []), *(questions or [])]
        if not ids or not phrases or not questions or not all(isinstance(t, str) and "{x}" in t for t in templates):
            raise InvalidTermError(f"wordings: an entry needs ids, np and q templates with {{x}}, got {entry!r:.100}")
        for relation in ids:
            found[str(relation)] = Wording(phrases=tuple(phrases), questions=tuple(questions))
    return found


def label_question(labels: Sequence[str], name: str) -> str:
    """``labels`` of a path's relations in walking order -> "What is the C of the B of the A of name?"."""
    return "What is the " + " of the ".join(reversed(labels)) + f" of {name}?"


def natural_question(relations: Sequence[str], name: str, wordings: Mapping[str, Wording], rng: random.Random) -> str:
    """A question nesting one paraphrase per relation: noun phrases for the inner hops, a question for
    the last ("Where was the wife of Tom Hanks born?"). KeyError for a relation without a wording."""
    phrase = name
    for position, relation in enumerate(relations):
        wording = wordings[relation]
        last = position == len(relations) - 1
        options = [t for t in (wording.questions if last else wording.phrases) if position == 0 or "{x}'s" not in t]
        if not last:  # an inner phrase ends with what it nests ("the birthplace of the wife of X"), so it reads
            options = [t for t in options if t.endswith("{x}")] or options
        if not options:  # every template is possessive and {x} is a phrase: "What is the X of ..."
            options = ["What is " + t + "?" if last else t for t in wording.phrases if "{x}'s" not in t]
        phrase = rng.choice(options).replace("{x}", phrase)
    return phrase[:1].upper() + phrase[1:]


def relation_labels(kg: KnowledgeGraph, relations: Sequence[str]) -> dict[str, str]:
    """What the label wording calls each relation: the KG's label of an opaque id (Wikidata ``P19`` ->
    "place of birth"), else the id's most specific words (``people.person.place_of_birth`` -> "place of
    birth")."""
    named = RelationNames(kg).words(relations)
    return {r: relation_tail(r) if named[r] == relation_words(r) else named[r] for r in relations}


def topic_pool(kg: KnowledgeGraph, size: int) -> list[str]:
    """Up to ``size`` entities with an edge to another entity (in the store's order), sorted."""
    if not isinstance(kg, SparqlQueryable):
        raise InvalidTermError("question generation samples topic entities with SPARQL; this KG has no query()")
    rows = kg.query(f"SELECT DISTINCT ?s WHERE {{ ?s ?p ?o FILTER(isIRI(?s) && isIRI(?o)) }} LIMIT {int(size)}")
    profile = kg.profile
    return sorted({profile.entity_id(row["s"]) for row in rows if isinstance(row["s"], str)})


def generate(
    kg: KnowledgeGraph,
    *,
    per_hop: int,
    hops: Sequence[int] = (1, 2, 3),
    max_answers: int = 10,
    seed: int = 7,
    pool: int = 20_000,
    wordings: Mapping[str, Wording] | None = None,
) -> list[dict[str, Any]]:
    """``per_hop`` questions for each hop count (fewer when the KG runs out of walks), spread over the
    answer counts of :data:`ANSWER_BUCKETS`. Each is a RoG-format line plus ``gold_paths``, ``hops``,
    ``label_question`` and, with ``wordings``, ``natural_question``; ``question`` is the label wording."""
    rng = random.Random(seed)
    topics = topic_pool(kg, pool)
    rng.shuffle(topics)
    names: dict[str, str] = {}
    for start in range(0, len(topics), 500):
        names.update(kg.labels(topics[start : start + 500]))
    topics = [t for t in topics if t in names]
    if not topics:
        return []
    schema = schema_relations(kg)
    questions: list[dict[str, Any]] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    for hop_count in hops:
        made = 0
        per_bucket = [0 for _ in ANSWER_BUCKETS]
        cap = -(-per_hop // len(ANSWER_BUCKETS))
        attempts = 0
        while made < per_hop and attempts < 200 * per_hop:
            attempts += 1
            relaxed = attempts > 100 * per_hop  # the KG lacks some answer counts: take any
            topic = topics[rng.randrange(len(topics))]
            relations = _walk(kg, topic, hop_count, schema, wordings, rng)
            if relations is None or (topic, relations) in seen:
                continue
            found = kg.paths(topic, list(relations), max_paths=10_000)
            answers = sorted({p.end for p in found if isinstance(p.end, str) and p.end != topic})
            if found.truncated or not 1 <= len(answers) <= max_answers:
                continue
            bucket = next(i for i, (low, high) in enumerate(ANSWER_BUCKETS) if low <= len(answers) <= high)
            if per_bucket[bucket] >= cap and not relaxed:
                continue
            seen.add((topic, relations))
            per_bucket[bucket] += 1
            labels = relation_labels(kg, relations)
            line: dict[str, Any] = {
                "id": f"h{hop_count}-{made:03d}",
                "question": label_question([labels[r] for r in relations], names[topic]),
                "q_entity": [topic],
                "a_entity": answers,
                "gold_paths": [list(relations)],
                "hops": hop_count,
            }
            line["label_question"] = line["question"]
            if wordings is not None:
                line["natural_question"] = natural_question(relations, names[topic], wordings, rng)
            questions.append(line)
            made += 1
    return questions


def _ambiguous(relation: str, edges: Sequence[Edge], schema: frozenset[str]) -> bool:
    """Whether another relation at the node reads as ``relation`` does to a reader of words (the same
    stems: "award" and "award winner", "won" and "winner" stemming alike): a label-worded question
    could not tell them apart, so the walk is not asked."""
    words = set(tokens(relation_tail(relation)))
    return any(
        set(tokens(relation_tail(edge.relation))) == words
        for edge in edges
        if edge.relation != relation and edge.relation not in schema
    )


def _walk(
    kg: KnowledgeGraph,
    topic: str,
    hops: int,
    schema: frozenset[str],
    wordings: Mapping[str, Wording] | None,
    rng: random.Random,
) -> tuple[str, ...] | None:
    """A random relation path of ``hops`` out-edges to entities from ``topic`` (worded relations only,
    when wordings are given), never one relation twice in a row ("the genre of the genre of X" reads as
    "the genre of X" once a reader drops the repeated words); None when the walk dead-ends or a step is
    :func:`_ambiguous`."""
    relations: list[str] = []
    node = topic
    for _ in range(hops):
        edges = [
            edge
            for edge in kg.neighbors(node, direction="out", literals=False).get(node, [])
            if edge.relation not in schema
            and isinstance(edge.tail, str)
            and (wordings is None or edge.relation in wordings)
        ]
        if not edges:
            return None
        by_relation = sorted({edge.relation for edge in edges} - set(relations[-1:]))
        if not by_relation:
            return None
        relation = by_relation[rng.randrange(len(by_relation))]
        if _ambiguous(relation, kg.neighbors(node, direction="both", literals=False).get(node, []), schema):
            return None
        tails = [edge.tail for edge in edges if edge.relation == relation and isinstance(edge.tail, str)]
        relations.append(relation)
        node = tails[rng.randrange(len(tails))]
    return tuple(relations)
