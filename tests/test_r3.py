"""R3 end to end on real Oxigraph stores (the hand-built toy graph with known answers and the
bundled FB15k-237 sample), offline with the BM25 scorer and with a scripted LLM server."""

from __future__ import annotations

import pytest
from support.toy_kg import personal_kg, sample_kg, toy_kg, triples  # noqa: F401 (fixtures)

from kg_adapters.base import KnowledgeGraph
from kg_adapters.errors import InvalidTermError
from kg_adapters.wrappers.counting import CountingKG
from reasoning.base import Question, Reasoner
from reasoning.r3 import R3, is_claim

BORN = ("m.alice", "people.person.place_of_birth", "m.paris")
PARIS_IN_FRANCE = ("m.paris", "location.location.country", "m.france")
PARIS_IS_CAPITAL = ("m.paris", "is", "capital city of France")


def ask(text: str, *entities: str, choices: tuple[str, ...] | None = None) -> Question:
    return Question(id="q", question=text, q_entity=entities, choices=choices)


def test_entity_question_links_by_search_and_cites_its_triple(toy_kg: KnowledgeGraph) -> None:  # noqa: F811
    counted = CountingKG(toy_kg)
    reasoner = R3(counted)
    assert isinstance(reasoner, Reasoner)
    answer = reasoner.answer(ask("What is the place of birth of Alice Smith?"))
    out = answer.to_json("q")
    assert out["prediction"] == ["m.paris"]
    assert out["reasoning_paths"] == [triples(BORN)]
    assert out["answer_text"] == "Paris"
    assert counted.asked("search") == [["Alice Smith"]]
    assert counted.asked("neighbors")[0] == ["m.alice"]
    assert (answer.kg_calls, answer.llm_calls) == (len(counted.calls), 0)


def test_missing_evidence_expands_to_the_next_entity(toy_kg: KnowledgeGraph) -> None:  # noqa: F811
    counted = CountingKG(toy_kg)
    answer = R3(counted).answer(ask("Which country is the place of birth of Alice Smith in?", "m.alice"))
    assert answer.prediction == ("m.france",)
    assert answer.to_json("q")["reasoning_paths"] == [triples(BORN, PARIS_IN_FRANCE)]
    expansions = counted.asked("neighbors")
    assert expansions[0] == ["m.alice"] and "m.paris" in expansions[1]
    assert all(len(frontier) <= 2 for frontier in expansions[1:])  # breadth 2, one batched call per depth
    assert len(expansions) <= 3  # max_depth


def test_depth_bound_answers_from_what_was_found(toy_kg: KnowledgeGraph) -> None:  # noqa: F811
    counted = CountingKG(toy_kg)
    answer = R3(counted, max_depth=1).answer(ask("Which country is the place of birth of Alice Smith in?", "m.alice"))
    assert answer.prediction == ("m.paris",)
    assert len(counted.asked("neighbors")) == 1


@pytest.mark.parametrize(
    ("claim", "verdict", "cited"),
    [
        ("Alice Smith place of birth is Paris", "True", [triples(BORN)]),
        ("Alice Smith place of birth is Lyon", "False", [triples(BORN)]),
        ("Paris is the capital city of France", "True", [triples(PARIS_IS_CAPITAL)]),
        ("Lyon is the capital city of France", "False", [triples(PARIS_IN_FRANCE, PARIS_IS_CAPITAL)]),
        ("Alice Smith favourite colour is Blue", "I don't know", []),
    ],
)
def test_claims_get_grounded_verdicts(
    toy_kg: KnowledgeGraph,  # noqa: F811
    claim: str,
    verdict: str,
    cited: list[list[list[str]]],
) -> None:
    out = R3(toy_kg).answer(ask(claim)).to_json("q")
    assert (out["prediction"], out["answer_text"], out["details"]["verdict"]) == ([verdict], verdict, verdict)
    assert out["reasoning_paths"] == cited


def test_claim_detection() -> None:
    assert is_claim(ask("Was Tom Hanks born in Concord?"))
    assert is_claim(ask("Tom Hanks was born in Concord."))
    assert is_claim(ask("Where was he born", choices=("True", "False")))
    assert not is_claim(ask("Where was Tom Hanks born?"))
    assert not is_claim(ask("which films did he make"))


def test_preference_matching_over_a_personal_kg(toy_kg: KnowledgeGraph) -> None:  # noqa: F811
    big, personal = CountingKG(toy_kg), CountingKG(personal_kg())
    films = ("m.film1", "m.film2", "m.film3", "m.film4")
    answer = R3(big, personal_kg=personal, user="m.me").answer(ask("Which film should I watch tonight?", choices=films))
    out = answer.to_json("q")
    assert out["prediction"] == ["m.film1"]
    assert out["answer_text"] == "Space Saga"
    assert out["details"]["verdicts"] == {
        "m.film1": "True",
        "m.film2": "False",
        "m.film3": "False",
        "m.film4": "I don't know",
    }
    assert out["reasoning_paths"] == [
        triples(("m.me", "user.preference.likes", "m.scifi"), ("m.film1", "film.film.genre", "m.scifi"))
    ]
    assert personal.asked("neighbors") == [["m.me"]]
    assert big.asked("neighbors") == [list(films)]
    assert answer.kg_calls == len(big.calls) + len(personal.calls)


def test_questions_also_reason_over_the_personal_kg(toy_kg: KnowledgeGraph) -> None:  # noqa: F811
    answer = R3(toy_kg, personal_kg=personal_kg(), user="m.me").answer(ask("What is Me allergic to?", "m.me"))
    assert answer.prediction == ("m.peanut",)
    assert answer.to_json("q")["reasoning_paths"] == [triples(("m.me", "user.preference.allergic_to", "m.peanut"))]


def test_options_are_checked(toy_kg: KnowledgeGraph) -> None:  # noqa: F811
    with pytest.raises(TypeError):
        R3(toy_kg, beam=3)  # type: ignore[call-arg]
    with pytest.raises(InvalidTermError):
        R3(toy_kg, max_depth=0)
    with pytest.raises(TypeError, match="user"):
        R3(toy_kg, personal_kg=personal_kg()).answer(ask("Which film?", choices=("m.film1",)))


def test_bundled_sample_offline(sample_kg: KnowledgeGraph) -> None:  # noqa: F811
    reasoner = R3(sample_kg)
    born = reasoner.answer(ask("What is the place of birth of Tom Hanks?"))
    assert born.prediction == ("m.0qymv",)
    assert born.answer_text == "Concord"
    country = reasoner.answer(ask("Which country contains the place of birth of Tom Hanks?", "m.0bxtg"))
    assert country.prediction == ("m.09c7w0",)
    assert country.to_json("q")["reasoning_paths"] == [
        triples(
            ("m.0bxtg", "people.person.place_of_birth", "m.0qymv"),
            ("m.0qymv", "base.biblioness.bibs_location.country", "m.09c7w0"),
        )
    ]
    verdict = reasoner.answer(ask("Tom Hanks place of birth is Concord"))
    assert verdict.prediction == ("True",)
    assert verdict.to_json("q")["reasoning_paths"] == [triples(("m.0bxtg", "people.person.place_of_birth", "m.0qymv"))]
