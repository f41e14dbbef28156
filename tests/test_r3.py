"""R3 end to end on real Oxigraph stores (the hand-built toy graph with known answers and the
bundled FB15k-237 sample), offline with the BM25 scorer and with a scripted LLM server."""

from __future__ import annotations

import pytest
from support.llm_server import LLMServer, Reply, scripted_client
from support.toy_kg import BORN, PARIS_IN_FRANCE, TWO_HOPS, answered, ask, line_number, personal_kg, prompt_of, triples

from kg_adapters.base import KnowledgeGraph
from kg_adapters.errors import InvalidTermError
from kg_adapters.wrappers.counting import CountingKG
from reasoning.r3 import R3, is_claim
from reasoning.scorers import BM25Scorer

# a literal tail in the records codec's shape (reasoning paths are lossless: Answer.to_json)
PARIS_IS_CAPITAL = ("m.paris", "is", {"value": "capital city of France", "datatype": None, "lang": None})
FILMS = ("m.film1", "m.film2", "m.film3", "m.film4")
"""The choices of the preference questions; the user likes science fiction, the genre of m.film1."""
LIKED_GENRE = triples(("m.me", "user.preference.likes", "m.scifi"), ("m.film1", "film.film.genre", "m.scifi"))


def test_entity_question_links_by_search_and_cites_its_triple(toy_kg: KnowledgeGraph) -> None:
    counted = CountingKG(toy_kg)
    out = answered(R3(counted), ask("What is the place of birth of Alice Smith?"))
    assert out["prediction"] == ["m.paris"]
    assert out["reasoning_paths"] == [triples(BORN)]
    assert out["answer_text"] == "Paris"
    assert counted.asked("search") == [["Alice Smith"]]
    assert counted.asked("neighbors")[0] == ["m.alice"]
    assert (out["kg_calls"], out["llm_calls"]) == (len(counted.calls), 0)


def test_missing_evidence_expands_to_the_next_entity(toy_kg: KnowledgeGraph) -> None:
    counted = CountingKG(toy_kg)
    # BM25's expansion order: the facts whose relations share a word with the question first
    answer = R3(counted, scorer=BM25Scorer()).answer(
        ask("Which country is the place of birth of Alice Smith in?", "m.alice")
    )
    assert answer.prediction == ("m.france",)
    assert answer.to_json("q")["reasoning_paths"] == [triples(BORN, PARIS_IN_FRANCE)]
    # breadth 2: the ends whose relations (one batched call per direction) continue the best paths into
    # one stating the question better; their edges of those relations are also fetched on their own (a
    # hub's first edges may all be of one busy relation); nothing around France states it better: stop
    assert counted.asked("neighbors") == [["m.alice"], ["m.paris", "m.lyon"], ["m.paris", "m.lyon"]]
    assert counted.asked("relations")[-1] == ["m.france", "m.acme", "m.bob"]


def test_depth_bound_answers_from_what_was_found(toy_kg: KnowledgeGraph) -> None:
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
    toy_kg: KnowledgeGraph,
    claim: str,
    verdict: str,
    cited: list[list[list[object]]],
) -> None:
    out = R3(toy_kg, scorer=BM25Scorer()).answer(ask(claim)).to_json("q")  # verdicts on BM25's levels
    assert (out["prediction"], out["answer_text"], out["details"]["verdict"]) == ([verdict], verdict, verdict)
    assert out["reasoning_paths"] == cited


def test_claim_detection() -> None:
    assert is_claim(ask("Was Tom Hanks born in Concord?"))
    assert is_claim(ask("Tom Hanks was born in Concord."))
    assert is_claim(ask("Where was he born", choices=("True", "False")))
    assert not is_claim(ask("Where was Tom Hanks born?"))
    assert not is_claim(ask("which films did he make"))


def test_preference_matching_over_a_personal_kg(toy_kg: KnowledgeGraph) -> None:
    big, personal = CountingKG(toy_kg), CountingKG(personal_kg())
    answer = R3(big, personal_kg=personal, user="m.me").answer(ask("Which film should I watch tonight?", choices=FILMS))
    out = answer.to_json("q")
    assert out["prediction"] == ["m.film1"]
    assert out["answer_text"] == "Space Saga"
    assert out["details"]["verdicts"] == dict(zip(FILMS, ["True", "False", "False", "I don't know"], strict=True))
    assert out["reasoning_paths"] == [LIKED_GENRE]
    assert personal.asked("neighbors") == [["m.me"]]
    assert big.asked("neighbors") == [list(FILMS)]
    assert answer.kg_calls == len(big.calls) + len(personal.calls)


def test_questions_also_reason_over_the_personal_kg(toy_kg: KnowledgeGraph) -> None:
    answer = R3(toy_kg, personal_kg=personal_kg(), user="m.me").answer(ask("What is Me allergic to?", "m.me"))
    assert answer.prediction == ("m.peanut",)
    assert answer.to_json("q")["reasoning_paths"] == [triples(("m.me", "user.preference.allergic_to", "m.peanut"))]


def test_options_are_checked(toy_kg: KnowledgeGraph) -> None:
    with pytest.raises(TypeError):
        R3(toy_kg, beam=3)
    with pytest.raises(InvalidTermError):
        R3(toy_kg, max_depth=0)
    with pytest.raises(TypeError, match="user"):
        R3(toy_kg, personal_kg=personal_kg()).answer(ask("Which film?", choices=("m.film1",)))


def test_bundled_sample_offline(sample_kg: KnowledgeGraph) -> None:
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


WIKIDATA_COUNTRY = [["Q7259", "P19", "Q84"], ["Q84", "P17", "Q145"]]


def test_wikidata_ids_read_through_property_labels(wikidata_toy_kg: KnowledgeGraph) -> None:
    answer = R3(wikidata_toy_kg).answer(ask("Which country is the place of birth of Ada Lovelace in?"))
    assert (answer.prediction, answer.answer_text) == (("Q145",), "United Kingdom")
    assert answer.to_json("q")["reasoning_paths"] == [WIKIDATA_COUNTRY]
    claim = R3(wikidata_toy_kg).answer(ask("London is the capital city of the United Kingdom"))
    assert claim.prediction == ("True",)
    assert claim.to_json("q")["reasoning_paths"] == [
        [["Q84", "is", {"value": "capital city of the United Kingdom", "datatype": None, "lang": None}]]
    ]


# --- with a scripted LLM server (a real loopback chat-completions server) ---


AXIOM = "A place of birth lies in the country that contains it."


def test_llm_axiom_grounded_answer_and_missing_evidence(toy_kg: KnowledgeGraph) -> None:
    def step(messages: list[dict[str, str]]) -> str:
        prompt = prompt_of(messages)
        if "(Paris, country, France)" in prompt:
            return f"ANSWER: France | FACTS: {line_number(prompt, '(Paris, country, France)')}"
        return "MISSING: Paris"

    counted = CountingKG(toy_kg)
    with (
        LLMServer([(r"commonsense rule", AXIOM), (r"Using only these facts", step)]) as server,
        scripted_client(server) as llm,
    ):
        answer = R3(counted, llm=llm).answer(ask(TWO_HOPS, "m.alice"))
        prompts = server.prompts
    assert answer.prediction == ("m.france",)
    assert answer.to_json("q")["reasoning_paths"] == [triples(BORN, PARIS_IN_FRANCE)]
    assert answer.details["axioms"] == [AXIOM]
    assert answer.llm_calls == len(prompts) == 3
    assert "Axiom: " + AXIOM in prompts[1] and "MISSING:" in prompts[1]
    assert counted.asked("neighbors") == [["m.alice"], ["m.paris"]]  # the entity the LLM asked for


def test_llm_verdict_cites_facts(toy_kg: KnowledgeGraph) -> None:
    def verdict(messages: list[dict[str, str]]) -> str:
        return f"ANSWER: False | FACTS: {line_number(prompt_of(messages), '(Alice Smith, place of birth, Paris)')}"

    rules: list[tuple[str, Reply]] = [
        (r"named entities", "Alice Smith\nLyon"),
        (r"commonsense rule", "A person has one place of birth."),
        (r"Using only these facts", verdict),
    ]
    with LLMServer(rules) as server, scripted_client(server) as llm:
        answer = R3(toy_kg, llm=llm).answer(ask("Alice Smith place of birth is Lyon"))
    out = answer.to_json("q")
    assert (out["prediction"], out["details"]["verdict"], out["llm_calls"]) == (["False"], "False", 3)
    assert out["details"]["anchors"] == ["m.alice", "m.lyon"]  # linked from the LLM's names with search
    assert out["reasoning_paths"] == [triples(BORN)]


def test_ungrounded_or_malformed_replies_fall_back_to_the_scorer(toy_kg: KnowledgeGraph) -> None:
    rules = [(r"commonsense rule", "A person has one place of birth."), (r"Using only these facts", "ANSWER: True")]
    with LLMServer(rules) as server, scripted_client(server) as llm:
        claim = R3(toy_kg, llm=llm).answer(ask("Alice Smith place of birth is Lyon", "m.alice", "m.lyon"))
        assert claim.llm_calls == len(server.prompts) == 4  # axiom + one uncited verdict per depth
    assert claim.prediction == ("False",)  # the offline verdict: the KG states another birthplace
    assert claim.to_json("q")["reasoning_paths"] == [triples(BORN)]
    with LLMServer(default="??") as server, scripted_client(server) as llm:
        answer = R3(toy_kg, llm=llm).answer(ask(TWO_HOPS, "m.alice"))
        # axiom + one unusable reply per depth: the offline rule answers at the second depth, as nothing
        # around France continues the path into one stating the question better
        assert answer.llm_calls == len(server.prompts) == 3
    assert answer.prediction == ("m.france",)
    assert answer.to_json("q")["reasoning_paths"] == [triples(BORN, PARIS_IN_FRANCE)]


def test_llm_that_does_not_know_expands_then_tries_another_axiom(toy_kg: KnowledgeGraph) -> None:
    rules = [
        (r"commonsense rule", "A person has one place of birth."),
        (r"Using only these facts", "ANSWER: I don't know"),
    ]
    counted = CountingKG(toy_kg)
    with LLMServer(rules) as server, scripted_client(server) as llm:
        claim = R3(counted, llm=llm, max_axioms=1).answer(
            ask("Alice Smith place of birth is Lyon", "m.alice", "m.lyon")
        )
        assert claim.llm_calls == len(server.prompts) == 4  # axiom + one step per depth
    assert (claim.prediction, claim.reasoning_paths) == (("I don't know",), ())
    assert len(counted.asked("neighbors")) == 3  # it expanded to max_depth before giving up
    with LLMServer(rules) as server, scripted_client(server) as llm:
        entity = R3(toy_kg, llm=llm, max_axioms=2).answer(ask(TWO_HOPS, "m.alice"))
        assert entity.llm_calls == len(server.prompts) == 8  # two axiom branches of four calls
        assert "Give a different rule than: A person has one place of birth." in server.prompts[4]
    assert (entity.prediction, entity.answer_text) == ((), "I don't know")


def test_llm_preference_matching(toy_kg: KnowledgeGraph) -> None:
    def judge(messages: list[dict[str, str]]) -> str:
        prompt = prompt_of(messages)
        if "Does Space Saga match" not in prompt:
            return "ANSWER: I don't know"
        cited = [
            line_number(prompt, fact)
            for fact in ("(Me, likes, Science Fiction)", "(Space Saga, genre, Science Fiction)")
        ]
        return f"ANSWER: True | FACTS: {cited[0]}, {cited[1]}"

    rules: list[tuple[str, Reply]] = [
        (r"commonsense rule", "People enjoy films of genres they like."),
        (r"match the user's preferences", judge),
    ]
    with LLMServer(rules) as server, scripted_client(server) as llm:
        answer = R3(toy_kg, llm=llm, personal_kg=personal_kg(), user="m.me").answer(
            ask("What should I watch?", choices=FILMS)
        )
    out = answer.to_json("q")
    assert out["prediction"] == ["m.film1"] and out["llm_calls"] == 5
    assert out["details"]["verdicts"] == dict(
        zip(FILMS, ["True", "I don't know", "I don't know", "I don't know"], strict=True)
    )
    assert out["reasoning_paths"] == [LIKED_GENRE]


def test_bundled_sample_with_llm_pruning(sample_kg: KnowledgeGraph) -> None:
    born = "(Tom Hanks, place of birth, Concord)"

    def pick(messages: list[dict[str, str]]) -> str:
        prompt = prompt_of(messages)
        return str(line_number(prompt, born)) if born in prompt else "none"

    def step(messages: list[dict[str, str]]) -> str:
        return f"ANSWER: Concord | FACTS: {line_number(prompt_of(messages), born)}"

    rules: list[tuple[str, Reply]] = [
        (r"commonsense rule", "A person is born at their place of birth."),
        (r"relevant to the axiom", pick),
        (r"Using only these facts", step),
    ]
    with LLMServer(rules) as server, scripted_client(server) as llm:
        answer = R3(sample_kg, llm=llm).answer(ask("Where was Tom Hanks born?", "m.0bxtg"))
        assert answer.llm_calls == len(server.prompts) == 3  # axiom, pruning picks, answer
    assert (answer.prediction, answer.answer_text) == (("m.0qymv",), "Concord")
    assert answer.to_json("q")["reasoning_paths"] == [triples(("m.0bxtg", "people.person.place_of_birth", "m.0qymv"))]
