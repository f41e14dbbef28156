"""Seeded KGQA questions generated from a graph itself, for ``kga dataset build``'s tests and benchmark.

A question is a named topic entity, a relation path of ``hops`` steps walked forward from it (a random
``out`` edge to an entity per step, the profile's relation filter applying), and as answers every
entity that path reaches from the topic (``paths``), the topic itself excluded; kept when there are
1 to ``max_answers`` answers. The text is the relations' last words ("What is the country of the place
of birth of Tom Hanks?"). Topics are drawn from the first ``pool`` subjects a SPARQL query lists (the
graph must answer ``query``), shuffled with ``seed``: the same graph and arguments give the same
questions.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from kg_adapters.base import KnowledgeGraph, SparqlQueryable
from kg_adapters.errors import InvalidTermError


def generate_questions(
    kg: KnowledgeGraph,
    count: int,
    *,
    hops: Sequence[int] = (2,),
    seed: int = 0,
    max_answers: int = 20,
    pool: int = 20_000,
    attempts_per_question: int = 40,
) -> list[dict[str, Any]]:
    """About ``count`` questions, spread evenly over ``hops`` (fewer when the graph runs out of walks),
    as ``{"id", "question", "q_entity", "a_entity", "answer", "hops", "relation_path"}`` rows."""
    if not isinstance(kg, SparqlQueryable):
        raise InvalidTermError("question generation lists topic entities with SPARQL; this KG has no query()")
    rng = random.Random(seed)
    profile = kg.profile
    rows = kg.query(f"SELECT DISTINCT ?s WHERE {{ ?s ?p ?o FILTER(isIRI(?s) && isIRI(?o)) }} LIMIT {int(pool)}")
    topics = sorted({profile.entity_id(row["s"]) for row in rows if isinstance(row["s"], str)})
    names: dict[str, str] = {}
    for start in range(0, len(topics), 500):
        names.update(kg.labels(topics[start : start + 500]))
    topics = [topic for topic in topics if topic in names]
    rng.shuffle(topics)
    questions: list[dict[str, Any]] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    for index, depth in enumerate(hops):
        wanted = count // len(hops) + (1 if index < count % len(hops) else 0)
        made = 0
        for _ in range(attempts_per_question * wanted):
            if made == wanted or not topics:
                break
            topic = topics[rng.randrange(len(topics))]
            relations = _walk(kg, topic, depth, rng)
            if relations is None or (topic, relations) in seen:
                continue
            found = kg.paths(topic, list(relations), max_paths=10_000)
            answers = sorted({str(path.end) for path in found if isinstance(path.end, str) and path.end != topic})
            if found.truncated or not 1 <= len(answers) <= max_answers:
                continue
            seen.add((topic, relations))
            answer_names = kg.labels(answers)
            words = " of the ".join(relation.rsplit(".", 1)[-1].replace("_", " ") for relation in reversed(relations))
            questions.append(
                {
                    "id": f"h{depth}-{made:04d}",
                    "question": f"What is the {words} of {names[topic]}?",
                    "q_entity": [topic],
                    "a_entity": answers,
                    "answer": [answer_names.get(answer, answer) for answer in answers],
                    "hops": depth,
                    "relation_path": list(relations),
                }
            )
            made += 1
    return questions


def _walk(kg: KnowledgeGraph, topic: str, depth: int, rng: random.Random) -> tuple[str, ...] | None:
    relations: list[str] = []
    node = topic
    for _ in range(depth):
        edges = [edge for edge in kg.neighbors(node, literals=False).get(node, []) if isinstance(edge.tail, str)]
        if not edges:
            return None
        edge = edges[rng.randrange(len(edges))]
        relations.append(edge.relation)
        node = str(edge.tail)
    return tuple(relations)
