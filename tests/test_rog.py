"""RoG end to end on the bundled FB15k-237 sample (a real on-disk Oxigraph store): offline planning
and vote, given plans, LLM planning/reasoning against the scripted loopback chat server (with plan
validation and repair), and truth-path extraction. Expected answers come from an independent
brute-force walk over the sample's N-Triples (support.sample_store.follow)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.llm_server import LLMServer, scripted_client
from support.sample_store import follow, open_wikidata_mini, sample_facts

from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph
from kg_adapters.errors import InvalidTermError
from kg_adapters.wrappers.counting import CountingKG
from reasoning.base import Question
from reasoning.llm import CountingLLM
from reasoning.rog import Plan, RoG, truth_paths

HANKS, CONCORD, USA, BRUBECK = "m.0bxtg", "m.0qymv", "m.09c7w0", "m.028q6"
SPIELBERG, EINSTEIN = "m.06pj8", "m.0jcx"
POB, COUNTRY = "people.person.place_of_birth", "base.biblioness.bibs_location.country"
TRIPLES, NAMES = sample_facts()


@pytest.fixture
def kg(sample_store_url: str) -> Iterator[KnowledgeGraph]:
    with connect(sample_store_url) as graph:
        yield graph


def cited(answer_paths: tuple[tuple[object, ...], ...]) -> list[list[tuple[object, ...]]]:
    return [[edge.as_tuple() for edge in path] for path in answer_paths]  # type: ignore[attr-defined]


def test_offline_one_hop(kg: KnowledgeGraph) -> None:
    answer = RoG(kg).answer(Question(id="1", question="Where was Tom Hanks born?", q_entity=(HANKS,)))
    assert answer.prediction == (CONCORD,)
    assert cited(answer.reasoning_paths) == [[(HANKS, POB, CONCORD)]]
    assert answer.answer_text == "Concord"
    assert answer.details["planner"] == "scorer"
    assert answer.details["plans"][0] == {"relations": [POB], "directions": ["out"], "usable": True}
    assert answer.details["plan_validity"] == 1.0


def test_offline_two_hops_cites_the_walk(kg: KnowledgeGraph) -> None:
    question = Question(id="2", question="In which country is the place of birth of Tom Hanks?", q_entity=(HANKS,))
    answer = RoG(kg).answer(question)
    assert answer.prediction == (USA,)
    assert cited(answer.reasoning_paths) == [[(HANKS, POB, CONCORD), (CONCORD, COUNTRY, USA)]]
    assert answer.details["plans"][0]["relations"] == [POB, COUNTRY]


def test_given_plans_skip_planning_and_reach_every_answer(kg: KnowledgeGraph) -> None:
    plan = ["film.director.film", "film.film.genre"]
    walks = follow(TRIPLES, [SPIELBERG], plan)
    expected = {walk[-1][2] for walk in walks}
    counting = CountingKG(kg)
    question = Question(id="3", question="?", q_entity=(SPIELBERG,), plans=(tuple(plan),))
    answer = RoG(counting, paths_per_answer=1000).answer(question)
    assert set(answer.prediction) == expected
    # best first: the genre most walks reach leads
    support = {end: sum(1 for walk in walks if walk[-1][2] == end) for end in expected}
    assert support[answer.prediction[0]] == max(support.values())
    assert sorted(cited(answer.reasoning_paths)) == sorted(walks)
    assert not counting.asked("search") and counting.asked("paths") == [[SPIELBERG]]
    assert answer.details["planner"] == "given"


def test_topic_entity_is_never_an_answer(kg: KnowledgeGraph) -> None:
    plan = (POB, POB)  # born in the same place: the walk back to Tom Hanks is not an answer
    question = Question(id="4", question="?", q_entity=(HANKS,), plans=(plan,))
    answer = RoG(kg).answer(question)
    assert answer.prediction == (BRUBECK,)
    assert cited(answer.reasoning_paths) == [[(HANKS, POB, CONCORD), (BRUBECK, POB, CONCORD)]]
    assert answer.details["plans"][0]["directions"] == ["out", "in"]


def test_invalid_given_step_is_repaired_or_dropped(kg: KnowledgeGraph) -> None:
    question = Question(id="5", question="?", q_entity=(HANKS,), plans=(("people.person.birthplace", COUNTRY),))
    repaired = RoG(kg).answer(question)
    assert repaired.prediction == (USA,)
    assert repaired.details["repairs"] == [["people.person.birthplace", POB]]
    assert repaired.details["plan_validity"] == 0.5
    dropped = RoG(kg, repair=False).answer(question)
    assert dropped.prediction == () and dropped.reasoning_paths == ()
    assert dropped.details["plans"][0]["usable"] is False
    assert dropped.details["plan_validity"] == 0.0


def test_llm_planning_validation_and_reasoning(kg: KnowledgeGraph) -> None:
    plans = f"1. people.person.birthplace -> {COUNTRY}\n2. people.person.nationality"
    rules = [(r"generate valid relation paths", plans), (r"Reasoning Paths:", "United States of America")]
    with LLMServer(rules) as server:
        llm = CountingLLM(scripted_client(server))
        question = Question(id="6", question="What country is Tom Hanks from?", q_entity=(HANKS,))
        answer = RoG(kg, llm=llm).answer(question)
        plan_prompt, reason_prompt = server.prompts
    assert f"Tom Hanks -> {POB} -> Concord -> {COUNTRY} -> United States of America" in reason_prompt
    assert "Tom Hanks -> people.person.nationality -> United States of America" in reason_prompt
    assert llm.calls == 2
    assert POB in plan_prompt.splitlines() and "type.object.name" not in plan_prompt  # grounded on real relations
    assert answer.prediction == (USA,)
    assert answer.answer_text == "United States of America"
    assert answer.details["planner"] == "llm"
    assert answer.details["repairs"] == [["people.person.birthplace", POB]]
    assert answer.details["plan_validity"] == pytest.approx(2 / 3)
    assert sorted(cited(answer.reasoning_paths)) == [
        [(HANKS, "people.person.nationality", USA)],
        [(HANKS, POB, CONCORD), (CONCORD, COUNTRY, USA)],
    ]


def test_llm_reply_in_rog_path_syntax(kg: KnowledgeGraph) -> None:
    reply = f"Here are the relation paths:\n<PATH>{POB}<SEP>{COUNTRY}</PATH>"
    with LLMServer([(r"generate valid", reply)]) as server:
        llm = scripted_client(server)
        plans = RoG(kg).plan_with_llm(Question(id="7", question="?", q_entity=(HANKS,)), llm)
    assert plans == [Plan(relations=(POB, COUNTRY))]


def test_truth_paths(kg: KnowledgeGraph) -> None:
    assert truth_paths(kg, [HANKS], [USA]) == [("people.person.nationality",)]
    assert truth_paths(kg, [HANKS], [BRUBECK]) == [(POB, POB)]
    assert truth_paths(kg, [HANKS], []) == []


def test_options_are_checked(kg: KnowledgeGraph) -> None:
    with pytest.raises(TypeError):
        RoG(kg, topk=3)
    with pytest.raises(InvalidTermError):
        RoG(kg, top_k=0)
    assert RoG(kg).answer(Question(id="8", question="?", q_entity=())).details == {"error": "no topic entity"}


def test_offline_influence_answers_are_all_walk_ends(kg: KnowledgeGraph) -> None:
    relation = "influence.influence_node.influenced_by"
    expected = {walk[-1][2] for walk in follow(TRIPLES, [EINSTEIN], [relation])}
    answer = RoG(kg).answer(Question(id="9", question="Who influenced Albert Einstein?", q_entity=(EINSTEIN,)))
    assert set(answer.prediction) == expected
    assert {path[0] for path in cited(answer.reasoning_paths)} == {(EINSTEIN, relation, end) for end in expected}
    assert answer.answer_text.split("; ") == [NAMES[end] for end in answer.prediction]


@pytest.fixture
def wikidata_kg(tmp_path: Path) -> Iterator[KnowledgeGraph]:
    with open_wikidata_mini(tmp_path) as graph:
        yield graph


def test_opaque_relation_ids_are_scored_by_their_labels(wikidata_kg: KnowledgeGraph) -> None:
    born = RoG(wikidata_kg).answer(Question(id="w1", question="Where was Douglas Adams born?", q_entity=("Q42",)))
    assert born.prediction == ("Q350",)
    assert cited(born.reasoning_paths) == [[("Q42", "P19", "Q350")]]
    question = Question(id="w2", question="In which country is the place of birth of Douglas Adams?", q_entity=("Q42",))
    country = RoG(wikidata_kg).answer(question)
    assert country.prediction == ("Q145",)
    assert country.details["plans"][0]["relations"] == ["P19", "P17"]


def test_llm_sees_property_labels_and_may_answer_with_them(wikidata_kg: KnowledgeGraph) -> None:
    rules = [(r"generate valid relation paths", "P19 (place of birth)"), (r"Reasoning Paths:", "Cambridge")]
    with LLMServer(rules) as server:
        llm = scripted_client(server)
        answer = RoG(wikidata_kg, llm=llm).answer(Question(id="w3", question="Where was he born?", q_entity=("Q42",)))
        plan_prompt, reason_prompt = server.prompts
    assert "P19 (place of birth)" in plan_prompt.splitlines()
    assert "Douglas Adams -> P19 (place of birth) -> Cambridge" in reason_prompt
    assert answer.prediction == ("Q350",)
    assert answer.details["plan_validity"] == 1.0


def test_every_plan_is_validated_from_one_relations_call_per_frontier(wikidata_kg: KnowledgeGraph) -> None:
    counting = CountingKG(wikidata_kg)
    plans = (("P19",), ("P27",), ("P19", "P17"))
    answer = RoG(counting).answer(Question(id="w3", question="?", q_entity=("Q42",), plans=plans))
    assert answer.prediction == ("Q145", "Q350")
    # both directions of Q42 once for all three plans, then of Q350 for the second hop of the third
    assert counting.asked("relations") == [["Q42"], ["Q42"], ["Q350"], ["Q350"]]
