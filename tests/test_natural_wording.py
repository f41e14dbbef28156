"""Naturally worded two-hop questions on the bundled sample (a real store on disk): what the path scoring
and the lookahead of the offline methods must see to answer a question that names neither relation by its
label."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph
from reasoning.lookahead import REACHED, Hop, lookahead_scores
from reasoning.relevance import Judge
from reasoning.scorers import BM25Scorer
from reasoning.text import RelationNames


@pytest.fixture(scope="module")
def sample_kg(sample_store_url: str) -> Iterator[KnowledgeGraph]:
    with connect(sample_store_url) as kg:
        yield kg


def test_a_hop_looks_ahead_as_far_among_many_as_alone(sample_kg: KnowledgeGraph) -> None:
    """An entity with many edges (an actor's films) asked for all its relations at once must not hide the
    one edge of another relation (his nationality): each hop scores what it scores on its own."""
    tom_hanks = "m.0bxtg"
    relations = sorted(sample_kg.relations([tom_hanks], direction="out")[tom_hanks])
    edges = sample_kg.neighbors([tom_hanks], direction="out", relations=relations)[tom_hanks]
    assert len(edges) > REACHED * 5 and "people.person.nationality" in relations
    judge = Judge(BM25Scorer(), "What is the films of the nationality of Tom Hanks?", ["Tom Hanks"])
    names = RelationNames(sample_kg)
    hops = [Hop(prefix=(), relation=r, direction="out", nodes=(tom_hanks,)) for r in relations]
    together = dict(zip(relations, lookahead_scores(sample_kg, judge, names, hops), strict=True))
    alone = lookahead_scores(sample_kg, judge, names, [hops[relations.index("people.person.nationality")]])
    assert together["people.person.nationality"] == pytest.approx(alone[0]) and alone[0] > 0.9
    assert max(together, key=together.__getitem__) == "people.person.nationality"
