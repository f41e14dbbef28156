"""The per-hop reasoners offline on the bundled FB15k-237 sample (a real store on disk), where a hop is kept
for the path it opens: a three-hop question is answered by its three hops, not by a shorter path whose words
happen to match (a film's "country" for "the films of the country of the place of birth of X"), and a
relation kept as the prefix of a better one (Freebase's "award" before "award nominee") does not answer in
its place. Each case with BM25 and with the semantic default (MiniLM fused with BM25) where the embeddings
extra is installed: a better scorer must not lose what BM25 finds."""

from __future__ import annotations

import pytest

from kg_adapters.base import KnowledgeGraph
from reasoning.base import Question, Scorer
from reasoning.registry import method_class

PER_HOP = ["r3", "refkg", "fidelis", "tog"]
TOM_HANKS, DAVE_BRUBECK, JEREMY_IRONS = "m.0bxtg", "m.028q6", "m.016ywr"
PLACE_OF_BIRTH = "people.person.place_of_birth"
COUNTRY = "base.biblioness.bibs_location.country"


@pytest.mark.parametrize("method", PER_HOP)
@pytest.mark.parametrize(
    ("question", "topic", "last", "answers"),
    [
        (
            "What is the films of the country of the place of birth of Tom Hanks?",
            TOM_HANKS,
            "film.film_subject.films",
            {"m.0jqp3"},
        ),
        (
            "What is the capital of the country of the place of birth of Dave Brubeck?",
            DAVE_BRUBECK,
            "location.country.capital",
            {"m.0rh6k"},
        ),
    ],
)
def test_a_three_hop_question_is_answered_by_its_three_hops(
    sample_kg: KnowledgeGraph, scorer: Scorer, method: str, question: str, topic: str, last: str, answers: set[str]
) -> None:
    answer = method_class(method)(sample_kg, scorer=scorer).answer(
        Question(id="q", question=question, q_entity=(topic,))
    )
    assert answer.prediction and answer.prediction[0] in answers
    cited = {tuple(edge.relation for edge in path) for path in answer.reasoning_paths}
    assert (PLACE_OF_BIRTH, COUNTRY, last) in cited


@pytest.mark.parametrize("method", PER_HOP)
def test_a_prefix_of_the_asked_relation_does_not_answer_in_its_place(
    sample_kg: KnowledgeGraph, scorer: Scorer, method: str
) -> None:
    nominee = "award.award_nominee.award_nominations..award.award_nomination.award_nominee"
    answer = method_class(method)(sample_kg, scorer=scorer).answer(
        Question(id="q", question="What is the award nominee of Jeremy Irons?", q_entity=(JEREMY_IRONS,))
    )
    gold = {"m.02bj6k", "m.02c6pq", "m.02js9p", "m.048lv", "m.0d02km", "m.0fqjhm"}
    assert answer.prediction and set(answer.prediction) <= gold
    assert {tuple(edge.relation for edge in path) for path in answer.reasoning_paths} == {(nominee,)}


@pytest.mark.parametrize("method", ["rog", *PER_HOP])
def test_a_stated_hop_walked_against_its_edge_is_kept_after_the_first(
    toy_kg: KnowledgeGraph, scorer: Scorer, method: str
) -> None:
    """The lookahead floors a hop's value at 0 (a hop walked against its edge must state the question by more
    than INVERSE_COST to count, and ToG and RefKG drop a later hop at 0): a stated one is worth far more."""
    answer = method_class(method)(toy_kg, scorer=scorer).answer(
        Question(id="q", question="Which film was directed by the friend of Alice Smith?", q_entity=("m.alice",))
    )
    assert answer.prediction == ("m.film1",)
    cited = {tuple(edge.relation for edge in path) for path in answer.reasoning_paths}
    assert cited == {("people.person.friend", "film.film.directed_by")}
