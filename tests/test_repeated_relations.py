"""Questions that state a relation twice ("Who influenced those who influenced X?") are answered by
walking it twice, on the bundled FB15k-237 sample in a real store, by every method offline with BM25 and
with the semantic default where the embeddings extra is installed; a relation walked twice where the
question states it once stays a detour."""

from __future__ import annotations

import pytest

from kg_adapters.base import KnowledgeGraph
from reasoning.base import Question, Scorer
from reasoning.registry import method_class
from reasoning.relevance import Judge
from reasoning.text import relation_focus, relation_words

METHODS = ["rog", "r3", "refkg", "fidelis", "tog"]
EINSTEIN = "m.0jcx"
INFLUENCED_BY = "influence.influence_node.influenced_by"


def influencers(kg: KnowledgeGraph, people: set[str]) -> set[str]:
    """Who influenced any of ``people``, in the graph itself."""
    found = kg.neighbors(sorted(people), direction="out", relations=[INFLUENCED_BY])
    return {edge.tail for edges in found.values() for edge in edges if isinstance(edge.tail, str)}


@pytest.mark.parametrize("method", METHODS)
def test_a_relation_the_question_states_twice_is_walked_twice(
    sample_kg: KnowledgeGraph, scorer: Scorer, method: str
) -> None:
    second = influencers(sample_kg, influencers(sample_kg, {EINSTEIN}))
    answer = method_class(method)(sample_kg, scorer=scorer).answer(
        Question(id="q", question="Who influenced those who influenced Albert Einstein?", q_entity=(EINSTEIN,))
    )
    assert answer.prediction and answer.prediction[0] in second
    cited = {tuple(edge.relation for edge in path) for path in answer.reasoning_paths}
    assert cited == {(INFLUENCED_BY, INFLUENCED_BY)}


@pytest.mark.parametrize("method", METHODS)
def test_a_relation_the_question_states_once_is_walked_once(
    sample_kg: KnowledgeGraph, scorer: Scorer, method: str
) -> None:
    first = influencers(sample_kg, {EINSTEIN})
    answer = method_class(method)(sample_kg, scorer=scorer).answer(
        Question(id="q", question="Who influenced Albert Einstein?", q_entity=(EINSTEIN,))
    )
    assert answer.prediction and set(answer.prediction) <= first
    assert {tuple(edge.relation for edge in path) for path in answer.reasoning_paths} == {(INFLUENCED_BY,)}


def test_the_path_score_counts_a_repeat_only_as_often_as_the_question_says_it(scorer: Scorer) -> None:
    influenced = ("influence influence node influenced by", "influence node influenced by")
    twice = Judge(scorer, "Who influenced those who influenced?")
    once, again = twice.path_scores([[influenced], [influenced, influenced]], whole=False)
    assert again > once  # the question says it twice: one walk states half of it
    thrice = twice.path_scores([[influenced, influenced, influenced]], whole=False)[0]
    assert thrice < again  # a third walk is a detour
    single = Judge(scorer, "Who influenced?")
    once, again = single.path_scores([[influenced], [influenced, influenced]], whole=False)
    assert again < once  # walked twice where the question says it once: a detour


@pytest.mark.parametrize("method", METHODS)
def test_a_word_for_the_kind_of_thing_walked_through_adds_no_hop(
    sample_kg: KnowledgeGraph, scorer: Scorer, method: str
) -> None:
    """ "the people who influenced X": "people" names what the middle entities are, not a relation; every
    ``people.person.*`` relation relates to it, none of them is a third hop."""
    second = influencers(sample_kg, influencers(sample_kg, {EINSTEIN}))
    answer = method_class(method)(sample_kg, scorer=scorer).answer(
        Question(id="q", question="Who influenced the people who influenced Albert Einstein?", q_entity=(EINSTEIN,))
    )
    assert answer.prediction and answer.prediction[0] in second
    assert {tuple(edge.relation for edge in path) for path in answer.reasoning_paths} == {
        (INFLUENCED_BY, INFLUENCED_BY)
    }


def test_a_word_only_domains_hold_counts_for_no_relation(scorer: Scorer) -> None:
    """Another domain's shape: "organizations" is the domain of every ``organization.organization.*`` relation
    and the specific words of none, so a relation stating it (a little, as a semantic scorer relates every
    relation to it) is a detour; "films", which ``film.director.film`` states, still counts."""
    founders = ("organization organization founders", relation_focus("organization.organization.founders"))
    sectors = ("organization organization sectors", relation_focus("organization.organization.sectors"))
    judge = Judge(scorer, "Who founded the organizations that founded?")
    twice, detour = judge.path_scores([[founders, founders], [founders, founders, sectors]], whole=False)
    assert judge.kind_words() == (False, True)
    assert detour < twice
    films = Judge(scorer, "What films did the director make?")
    films.path_scores([[("film director film", "director film")], [("film film genre", "genre")]], whole=False)
    assert films.kind_words() == (False, False, False)
    people = Judge(scorer, "Where were the people born?")  # "person" in the specific words repeats the domain
    people.path_scores([[("people person place of birth", relation_focus("people.person.place_of_birth"))]])
    assert people.kind_words() == (True, False)


def test_a_relation_through_an_intermediate_node_keeps_its_own_words(scorer: Scorer) -> None:
    """Only an id's domain (its first word) can name a kind: ``location.location.adjoin_s..`` holds "adjoin" in
    the words before its specific ones, and still states "adjoins"."""
    adjoins = "location.location.adjoin_s..location.adjoining_relationship.adjoins"
    judge = Judge(scorer, "What is the adjoins of the state?")
    judge.path_scores([[(relation_words(adjoins), relation_focus(adjoins))]])
    assert judge.kind_words() == (False, False)
