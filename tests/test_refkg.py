"""RefKG end to end on real Oxigraph stores (the hand-built toy graph with known answers and the
bundled FB15k-237 sample), offline with the BM25 scorer and with a scripted LLM server."""

from __future__ import annotations

import pytest
from support.llm_server import LLMServer, Reply, scripted_client
from support.toy_kg import BORN, PARIS_IN_FRANCE, TWO_HOPS, answered, ask, line_number, prompt_of, triples

from kg_adapters.base import KnowledgeGraph
from kg_adapters.errors import InvalidTermError
from kg_adapters.wrappers.counting import CountingKG
from reasoning.refkg import RefKG
from reasoning.scorers import BM25Scorer


def test_two_hop_question_offline(toy_kg: KnowledgeGraph) -> None:
    counted = CountingKG(toy_kg)
    out = answered(RefKG(counted, scorer=BM25Scorer()), ask(TWO_HOPS, "m.alice"))  # BM25's exact trace
    assert out["prediction"] == ["m.france"]
    assert out["answer_text"] == "France"
    assert out["reasoning_paths"] == [triples(BORN, PARIS_IN_FRANCE)]
    evidence = out["details"]["evidence"].splitlines()
    assert evidence[:2] == ["Alice Smith place of birth Paris.", "Paris country France."]
    assert out["details"]["subqueries"] == [TWO_HOPS] * 3
    # per hop: one batched relations call per direction for the frontier; the lookahead's neighbors call for
    # the direction its candidate hops take (Alice's and her places' edges all point out) and one relations
    # call per direction around the entities they reach; one neighbors call for the hops chosen; the names
    # of what was reached. The third hop finds no relation that states the question and stops there.
    frontier = ["m.acme", "m.lyon", "m.paris"]

    def per_direction(ids: list[str]) -> list[tuple[str, list[str]]]:
        return [("relations", ids), ("relations", ids)]

    assert [(name, sorted(ids)) for name, ids in counted.calls] == [
        ("labels", ["m.alice"]),
        *per_direction(["m.alice"]),
        ("neighbors", ["m.alice"]),
        *per_direction(["m.acme", "m.bob", "m.lyon", "m.paris"]),
        ("neighbors", ["m.alice"]),
        ("labels", frontier),
        *per_direction(frontier),
        ("neighbors", frontier),
        *per_direction(["m.berlin", "m.france"]),
        ("neighbors", frontier),
        ("labels", ["m.france"]),
        *per_direction(["m.france"]),
    ]
    assert (out["kg_calls"], out["llm_calls"]) == (len(counted.calls), 0)


def test_refinement_threshold_alpha(toy_kg: KnowledgeGraph) -> None:
    question = ask("What is the place of birth of Alice Smith?", "m.alice")
    # alpha on BM25's levels: the employer relation shares no word with the question
    everything = RefKG(toy_kg, alpha=0.0, scorer=BM25Scorer()).answer(question).details["evidence"].splitlines()
    refined = RefKG(toy_kg, scorer=BM25Scorer()).answer(question)
    kept = refined.details["evidence"].splitlines()
    assert "Alice Smith employer Acme Corp." in everything
    assert set(kept) < set(everything) and "Alice Smith employer Acme Corp." not in kept
    assert refined.prediction == ("m.paris",)
    assert refined.to_json("q")["reasoning_paths"] == [triples(BORN)]
    nothing = RefKG(toy_kg, alpha=1.0, scorer=BM25Scorer()).answer(ask("Alice Smith favourite colour", "m.alice"))
    assert (nothing.prediction, nothing.reasoning_paths, nothing.answer_text) == ((), (), "I don't know")


def test_entity_linking_and_relation_selection_follow_the_question(toy_kg: KnowledgeGraph) -> None:
    counted = CountingKG(toy_kg)
    answer = RefKG(counted).answer(ask("Where is the headquarters of the employer of Alice Smith?"))
    assert answer.prediction == ("m.berlin",)
    assert answer.to_json("q")["reasoning_paths"] == [
        triples(
            ("m.alice", "people.person.employer", "m.acme"),
            ("m.acme", "organization.organization.headquarters", "m.berlin"),
        )
    ]
    assert counted.asked("search") == [["Alice Smith"]]


def test_options_are_checked(toy_kg: KnowledgeGraph) -> None:
    with pytest.raises(TypeError):
        RefKG(toy_kg, beam_width=2)
    with pytest.raises(InvalidTermError):
        RefKG(toy_kg, alpha=1.5)
    with pytest.raises(InvalidTermError):
        RefKG(toy_kg, top_k=0)


def test_bundled_sample_offline(sample_kg: KnowledgeGraph) -> None:
    influenced_by = "influence.influence_node.influenced_by"
    truth = sorted(str(edge.tail) for edge in sample_kg.neighbors("m.0jcx", relations=[influenced_by])["m.0jcx"])
    answer = RefKG(sample_kg).answer(ask("Who influenced Albert Einstein?", "m.0jcx"))
    assert sorted(answer.prediction) == truth and len(truth) == 7
    assert sorted(answer.to_json("q")["reasoning_paths"]) == [[["m.0jcx", influenced_by, node]] for node in truth]
    born = RefKG(sample_kg).answer(ask("What is the place of birth of Tom Hanks?"))
    assert (born.prediction, born.answer_text) == (("m.0qymv",), "Concord")


WIKIDATA_COUNTRY = [["Q7259", "P19", "Q84"], ["Q84", "P17", "Q145"]]


def test_wikidata_ids_read_through_property_labels(wikidata_toy_kg: KnowledgeGraph) -> None:
    answer = RefKG(wikidata_toy_kg).answer(ask("Which country is the place of birth of Ada Lovelace in?"))
    assert (answer.prediction, answer.answer_text) == (("Q145",), "United Kingdom")
    assert answer.to_json("q")["reasoning_paths"] == [WIKIDATA_COUNTRY]


# --- with a scripted LLM server (a real loopback chat-completions server) ---


SUBQUERIES = ["What is the place of birth of Alice Smith?", "Which country is that place in?"]


def test_llm_decoupling_relation_selection_and_answer(toy_kg: KnowledgeGraph) -> None:
    def pick(messages: list[dict[str, str]]) -> str:
        prompt = prompt_of(messages)
        wanted = "people.person.place_of_birth" if SUBQUERIES[0] in prompt else "location.location.country"
        return str(line_number(prompt, wanted))

    rules: list[tuple[str, Reply]] = [
        (r"Split this question", "1. " + SUBQUERIES[0] + "\n2. " + SUBQUERIES[1]),
        (r"relations lead to the answer", pick),
        (r"Evidence:", "France"),
    ]
    counted = CountingKG(toy_kg)
    with LLMServer(rules) as server, scripted_client(server) as llm:
        answer = RefKG(counted, llm=llm).answer(ask(TWO_HOPS, "m.alice"))
        prompts = server.prompts
    out = answer.to_json("q")
    assert out["prediction"] == ["m.france"] and out["answer_text"] == "France"
    assert out["reasoning_paths"] == [triples(BORN, PARIS_IN_FRANCE)]
    assert out["details"]["subqueries"] == SUBQUERIES
    assert out["llm_calls"] == len(prompts) == 4  # decoupling, one relation pick per hop, answer
    assert "Paris country France." in prompts[-1]  # the answer prompt carries the verbalised evidence
    assert counted.asked("neighbors") == [["m.alice"], ["m.paris"]]  # only the picked relations' directions


def test_malformed_replies_fall_back_to_the_scorer(toy_kg: KnowledgeGraph) -> None:
    with LLMServer(default="?!") as server, scripted_client(server) as llm:
        answer = RefKG(toy_kg, llm=llm).answer(ask(TWO_HOPS, "m.alice"))
        prompts = server.prompts
        assert answer.llm_calls == len(prompts)
    # decoupling, one relation pick per hop that had relations to pick from, the answer
    assert prompts[0].startswith("Split this question") and prompts[-1].startswith("Evidence:")
    assert len(prompts) >= 4 and all("relations lead to the answer" in prompt for prompt in prompts[1:-1])
    assert answer.details["subqueries"] == [TWO_HOPS] * 3
    assert answer.prediction == ("m.france",)
    assert answer.to_json("q")["reasoning_paths"] == [triples(BORN, PARIS_IN_FRANCE)]


def test_bundled_sample_with_llm(sample_kg: KnowledgeGraph) -> None:
    def pick(messages: list[dict[str, str]]) -> str:
        return str(line_number(prompt_of(messages), "influence.influence_node.influenced_by"))

    rules: list[tuple[str, Reply]] = [
        (r"Split this question", "Who influenced Albert Einstein?"),
        (r"relations lead to the answer", pick),
        (r"Evidence:", "Isaac Newton\nDavid Hume"),
    ]
    with LLMServer(rules) as server, scripted_client(server) as llm:
        answer = RefKG(sample_kg, llm=llm).answer(ask("Who influenced Albert Einstein?", "m.0jcx"))
        assert answer.llm_calls == len(server.prompts) == 3
    assert answer.answer_text == "Isaac Newton, David Hume"
    influenced_by = "influence.influence_node.influenced_by"
    assert answer.to_json("q")["reasoning_paths"] == [[["m.0jcx", influenced_by, node]] for node in answer.prediction]
