"""FiDeLiS end to end on real Oxigraph stores (the hand-built toy graph with known answers and the
bundled FB15k-237 sample), offline with the BM25 scorer and with a scripted LLM server."""

from __future__ import annotations

import pytest
from support.llm_server import LLMServer, Reply, scripted_client
from support.toy_kg import BORN, PARIS_IN_FRANCE, TWO_HOPS, answered, ask, prompt_of, triples

from kg_adapters.base import KnowledgeGraph
from kg_adapters.errors import InvalidTermError
from kg_adapters.wrappers.counting import CountingKG
from reasoning.fidelis import FiDeLiS
from reasoning.scorers import BM25Scorer


def test_beam_search_stops_at_the_verified_path(toy_kg: KnowledgeGraph) -> None:
    counted = CountingKG(toy_kg)
    out = answered(FiDeLiS(counted), ask(TWO_HOPS, "m.alice"))
    assert out["prediction"] == ["m.france"]
    assert out["reasoning_paths"] == [triples(BORN, PARIS_IN_FRANCE)]
    assert out["details"] == {
        "keywords": ["country", "place", "birth"],
        "anchors": ["m.alice"],
        "depth": 2,
        "verified": True,
    }
    # Path-RAG: one search per keyword; per step one batched neighbors call for the beam, then the lookahead's
    # batched calls about the same entities; verified one step late (depth 3 explored, no better path there)
    assert counted.asked("search") == [["country"], ["place"], ["birth"]]
    steps = counted.asked("neighbors")
    assert steps[0] == ["m.alice"] and ["m.paris", "m.lyon", "m.bob", "m.acme"] in steps
    assert all(len(ids) <= 4 for ids in steps)
    assert (out["kg_calls"], out["llm_calls"]) == (len(counted.calls), 0)


def test_one_hop_is_verified_at_depth_one(toy_kg: KnowledgeGraph) -> None:
    answer = FiDeLiS(toy_kg).answer(ask("What is the place of birth of Alice Smith?"))
    assert answer.prediction == ("m.paris",)
    assert answer.details["depth"] == 1 and answer.details["verified"] is True
    assert answer.to_json("q")["reasoning_paths"] == [triples(BORN)]


def test_unverifiable_question_searches_to_max_depth(toy_kg: KnowledgeGraph) -> None:
    counted = CountingKG(toy_kg)
    answer = FiDeLiS(counted, max_depth=3, scorer=BM25Scorer()).answer(
        ask("Alice Smith favourite colour is Blue", "m.alice")
    )
    assert (answer.prediction, answer.answer_text) == ((), "I don't know")
    assert answer.details["verified"] is False and answer.details["depth"] == 3
    assert len(counted.asked("neighbors")) >= 3  # a beam expansion per depth (and the lookahead's calls)
    assert all(len(ids) <= 4 for ids in counted.asked("neighbors"))


def test_beam_width_bounds_the_frontier(toy_kg: KnowledgeGraph) -> None:
    counted = CountingKG(toy_kg)
    answer = FiDeLiS(counted, beam_width=1, heads=0).answer(ask(TWO_HOPS, "m.alice"))
    assert answer.prediction == ("m.france",)
    steps = counted.asked("neighbors")
    assert steps[0] == ["m.alice"] and ["m.paris"] in steps and all(len(ids) == 1 for ids in steps)
    # the heads (4 by default) widen the offline beam by the best step of each of the best relation paths
    spread = CountingKG(toy_kg)
    assert FiDeLiS(spread, beam_width=1).answer(ask(TWO_HOPS, "m.alice")).prediction == ("m.france",)
    assert all(len(ids) <= 1 + 4 for ids in spread.asked("neighbors"))


def test_heads_are_a_declared_budget_of_their_own(sample_kg: KnowledgeGraph) -> None:
    """Every ``neighbors`` call of FiDeLiS asks about the beam's ends (the step's, the retrieved relations'
    and the lookahead's): heads=0 keeps the paper's beam of ``beam_width``, the default heads (4) at most
    ``beam_width + heads``."""
    question = ask("Who influenced Albert Einstein?", "m.0jcx")
    plain = CountingKG(sample_kg)
    answer = FiDeLiS(plain, beam_width=2, heads=0, scorer=BM25Scorer()).answer(question)
    assert len(answer.prediction) == 2 and answer.details["depth"] == 1  # verified one step late
    frontiers = plain.asked("neighbors")
    assert len(frontiers) > 5 and all(len(ids) <= 2 for ids in frontiers) and max(map(len, frontiers)) == 2
    spread = CountingKG(sample_kg)
    FiDeLiS(spread, beam_width=2, scorer=BM25Scorer()).answer(question)
    assert all(len(ids) <= 2 + 4 for ids in spread.asked("neighbors"))
    assert max(len(ids) for ids in spread.asked("neighbors")) > 2
    assert FiDeLiS(sample_kg).heads == 4
    for bad in (-1, 0.5, "4", None):
        with pytest.raises(InvalidTermError, match="heads"):
            FiDeLiS(sample_kg, heads=bad)


def test_options_are_checked(toy_kg: KnowledgeGraph) -> None:
    with pytest.raises(TypeError):
        FiDeLiS(toy_kg, top_k=2)
    with pytest.raises(InvalidTermError):
        FiDeLiS(toy_kg, beam_width=0)


def test_bundled_sample_offline(sample_kg: KnowledgeGraph) -> None:
    reasoner = FiDeLiS(sample_kg)
    answer = reasoner.answer(ask("Which country is the place of birth of Tom Hanks in?", "m.0bxtg"))
    assert answer.prediction == ("m.09c7w0",)
    assert answer.details["verified"] is True
    assert answer.to_json("q")["reasoning_paths"] == [
        triples(
            ("m.0bxtg", "people.person.place_of_birth", "m.0qymv"),
            ("m.0qymv", "base.biblioness.bibs_location.country", "m.09c7w0"),
        )
    ]
    influenced = reasoner.answer(ask("Who influenced Albert Einstein?", "m.0jcx"))
    # the beam_width (4) best steps, all along influenced_by (Einstein has 7 such edges); the heads add one
    # step of each other relation path, which states the question worse
    assert len(influenced.prediction) == 4
    assert all(path[0].relation == "influence.influence_node.influenced_by" for path in influenced.reasoning_paths)


WIKIDATA_COUNTRY = [["Q7259", "P19", "Q84"], ["Q84", "P17", "Q145"]]


def test_wikidata_ids_read_through_property_labels(wikidata_toy_kg: KnowledgeGraph) -> None:
    answer = FiDeLiS(wikidata_toy_kg).answer(ask("Which country is the place of birth of Ada Lovelace in?"))
    assert (answer.prediction, answer.answer_text) == (("Q145",), "United Kingdom")
    assert answer.to_json("q")["reasoning_paths"] == [WIKIDATA_COUNTRY]


# --- with a scripted LLM server (a real loopback chat-completions server) ---


def numbers_of(prompt: str, fragment: str) -> str:
    """The numbers of every listed path containing ``fragment``, or NONE."""
    found = [line.split(".")[0] for line in prompt.splitlines() if fragment in line and line.split(".")[0].isdigit()]
    return ", ".join(found) or "NONE"


def test_llm_keywords_beam_and_deductive_verification(toy_kg: KnowledgeGraph) -> None:
    through_paris = "Paris -> location.location.country -> France"
    rules: list[tuple[str, Reply]] = [
        (r"List the keywords", "country, place of birth"),
        (r"most promising paths", lambda messages: numbers_of(prompt_of(messages), "France")),
        (r"deductively answer", lambda messages: numbers_of(prompt_of(messages), through_paris)),
    ]
    counted = CountingKG(toy_kg)
    with LLMServer(rules) as server, scripted_client(server) as llm:
        answer = FiDeLiS(counted, llm=llm).answer(ask(TWO_HOPS, "m.alice"))
        prompts = server.prompts
    out = answer.to_json("q")
    assert out["prediction"] == ["m.france"]
    assert out["reasoning_paths"] == [triples(BORN, PARIS_IN_FRANCE)]
    assert out["details"]["keywords"] == ["country", "place of birth"]
    assert (out["details"]["depth"], out["details"]["verified"]) == (2, True)
    # keywords, verification at depth 1 (NONE), the beam pick at depth 2 (more candidates than 4), verification
    assert out["llm_calls"] == len(prompts) == 4
    assert "Alice Smith -> people.person.place_of_birth -> Paris -> location.location.country -> France" in prompts[-1]
    assert counted.asked("search") == [["country"], ["place of birth"]]


def test_malformed_replies_fall_back_to_the_scorer(toy_kg: KnowledgeGraph) -> None:
    with LLMServer(default="hmm") as server, scripted_client(server) as llm:
        answer = FiDeLiS(toy_kg, llm=llm).answer(ask(TWO_HOPS, "m.alice"))
        assert answer.llm_calls == len(server.prompts)
    assert answer.prediction == ("m.france",)
    assert answer.details["keywords"] == ["hmm", "country", "place", "birth"]  # the question keeps its words
    assert answer.to_json("q")["reasoning_paths"] == [triples(BORN, PARIS_IN_FRANCE)]


def test_bundled_sample_with_llm(sample_kg: KnowledgeGraph) -> None:
    rules: list[tuple[str, Reply]] = [
        (r"List the keywords", "place of birth"),
        (r"most promising paths", lambda messages: numbers_of(prompt_of(messages), "place_of_birth")),
        (r"deductively answer", lambda messages: numbers_of(prompt_of(messages), "place_of_birth -> Concord")),
    ]
    with LLMServer(rules) as server, scripted_client(server) as llm:
        answer = FiDeLiS(sample_kg, llm=llm).answer(ask("Where was Tom Hanks born?", "m.0bxtg"))
        assert answer.llm_calls == len(server.prompts) == 3
    assert (answer.prediction, answer.answer_text) == (("m.0qymv",), "Concord")
    assert answer.to_json("q")["reasoning_paths"] == [triples(("m.0bxtg", "people.person.place_of_birth", "m.0qymv"))]
