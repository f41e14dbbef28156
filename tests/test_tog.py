"""Think-on-Graph end to end on the bundled sample: offline (scorer pruning, stop rule) and with the
scripted loopback chat server playing ToG's relation-pruning, entity-scoring, sufficiency and
answer prompts. Every cited triple is checked against the sample's N-Triples."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.llm_server import LLMServer, Reply, scripted_client
from support.sample_store import follow, open_wikidata_mini, sample_facts

from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph
from kg_adapters.errors import InvalidTermError
from kg_adapters.records import Literal
from kg_adapters.wrappers.counting import CountingKG
from reasoning.base import Answer, Question
from reasoning.llm import CountingLLM
from reasoning.scorers import BM25Scorer
from reasoning.tog import ThinkOnGraph

HANKS, CONCORD, USA, SPIELBERG, EINSTEIN, NEWTON = "m.0bxtg", "m.0qymv", "m.09c7w0", "m.06pj8", "m.0jcx", "m.03s9v"
POB, COUNTRY = "people.person.place_of_birth", "base.biblioness.bibs_location.country"
INFLUENCED = "influence.influence_node.influenced_by"
TRIPLES, NAMES = sample_facts()


@pytest.fixture
def kg(sample_store_url: str) -> Iterator[KnowledgeGraph]:
    with connect(sample_store_url) as graph:
        yield graph


def cited(answer: Answer) -> list[list[tuple[str, str, str | Literal]]]:
    paths = [[edge.as_tuple() for edge in path] for path in answer.reasoning_paths]
    assert all(triple in TRIPLES for path in paths for triple in path)
    return paths


def test_offline_one_hop_stops_when_deeper_relations_stop_matching(kg: KnowledgeGraph) -> None:
    counting = CountingKG(kg)
    # BM25's trace: no relation but the place of birth shares a word with the question
    answer = ThinkOnGraph(counting, scorer=BM25Scorer()).answer(
        Question(id="1", question="Where was Tom Hanks born?", q_entity=(HANKS,))
    )
    assert answer.prediction == (CONCORD,)
    assert cited(answer) == [[(HANKS, POB, CONCORD)]]
    assert answer.details["depth"] == 1
    assert answer.details["stopped"] == "relations stopped matching the question"
    # both directions at depth 1 and at depth 2, and as many for the lookahead (the relations beyond each hop)
    assert len(counting.asked("relations")) == 8


def test_offline_two_hops(kg: KnowledgeGraph) -> None:
    question = Question(id="2", question="In which country is the place of birth of Tom Hanks?", q_entity=(HANKS,))
    answer = ThinkOnGraph(kg).answer(question)
    assert answer.prediction == (USA,)
    assert cited(answer) == [[(HANKS, POB, CONCORD), (CONCORD, COUNTRY, USA)]]
    assert answer.answer_text == "United States of America"


def test_offline_beam_width_bounds_the_answers(kg: KnowledgeGraph) -> None:
    text = "What genres are the films directed by Steven Spielberg?"
    question = Question(id="3", question=text, q_entity=(SPIELBERG,))
    genres = {walk[-1][2] for walk in follow(TRIPLES, [SPIELBERG], ["film.director.film", "film.film.genre"])}
    answer = ThinkOnGraph(kg, scorer=BM25Scorer()).answer(question)
    # three films survive depth 1 (no film's name shares a word with the question: id order); at depth 2 the
    # scorer keeps three genre chains, two from the same film (the freebase relation filter hides type.* and
    # common.* relations, so BM25's document frequencies are those of the relations a reasoner sees)
    assert answer.prediction == ("m.03k9fj", "m.06n90")
    assert cited(answer) == [
        [(SPIELBERG, "film.director.film", "m.011xg5"), ("m.011xg5", "film.film.genre", "m.03k9fj")],
        [(SPIELBERG, "film.director.film", "m.012mrr"), ("m.012mrr", "film.film.genre", "m.03k9fj")],
        [(SPIELBERG, "film.director.film", "m.011xg5"), ("m.011xg5", "film.film.genre", "m.06n90")],
    ]
    wide = ThinkOnGraph(kg, width=40, scorer=BM25Scorer()).answer(question)
    assert len(wide.prediction) > len(answer.prediction) and set(wide.prediction) <= genres


def level_frontiers(kg: KnowledgeGraph, question: Question, **options: Any) -> list[list[str]]:
    """The entities each level's relation exploration asks about (offline, BM25). Offline ToG is
    deterministic, so the run limited to ``depth=d + 1`` makes every call of the run limited to ``depth=d``,
    then level d + 1 starts with one ``relations`` call per direction about the beam's entities (level 1
    after the topics' names)."""
    frontiers: list[list[str]] = []
    before: list[tuple[str, list[str]]] = []
    for depth in (1, 2, 3):
        counting = CountingKG(kg)
        ThinkOnGraph(counting, depth=depth, scorer=BM25Scorer(), **options).answer(question)
        assert counting.calls[: len(before)] == before
        level = [name for name, _ in counting.calls[len(before) :]]
        if not level:  # stopped before this level
            break
        first = level.index("relations")
        assert set(level[:first]) <= {"labels"} and level[first + 1] == "relations"
        frontiers.append(counting.calls[len(before) + first][1])
        before = counting.calls
    return frontiers


def test_offline_heads_are_a_declared_budget_of_their_own(kg: KnowledgeGraph) -> None:
    question = Question(
        id="3", question="What genres are the films directed by Steven Spielberg?", q_entity=(SPIELBERG,)
    )
    # heads=0: the paper's beam, never more than width entities explored from at any level
    plain = level_frontiers(kg, question, width=2, heads=0)
    assert len(plain) == 3 and all(len(ids) <= 2 for ids in plain)
    # the default heads (3) add the best chain of each of the 3 best relation paths: at most width + heads
    spread = level_frontiers(kg, question, width=2)
    assert all(len(ids) <= 2 + 3 for ids in spread) and max(len(ids) for ids in spread) > 2
    default = level_frontiers(kg, question)
    assert all(len(ids) <= 3 + 3 for ids in default) and max(len(ids) for ids in default) > 3
    assert ThinkOnGraph(kg).heads == 3 and ThinkOnGraph(kg, heads=0).heads == 0
    for bad in (-1, 1.5, "2", True):
        with pytest.raises(InvalidTermError, match="heads"):
            ThinkOnGraph(kg, heads=bad)


def scripted_answer(
    kg: KnowledgeGraph, rules: list[tuple[str, Reply]], question: Question, **options: Any
) -> tuple[Answer, int, list[str]]:
    """ToG's answer to ``question`` with an LLM server replying by ``rules``; its LLM calls and the
    prompts the server saw."""
    with LLMServer(rules) as server:
        llm = CountingLLM(scripted_client(server))
        answer = ThinkOnGraph(kg, llm=llm, **options).answer(question)
        return answer, llm.calls, server.prompts


def relation_reply(messages: list[dict[str, str]]) -> str:
    prompt = messages[-1]["content"]
    if "Topic Entity: Tom Hanks" in prompt:
        return f"1. {{{POB} (Score: 1.0)}}: the question asks where he was born."
    if "Topic Entity: Concord" in prompt:
        return f"{{{COUNTRY} (Score: 0.9)}}; {{location.location.time_zones (Score: 0.1)}}"
    return "{none (Score: 0.0)}"


def test_llm_explores_two_levels_then_answers(kg: KnowledgeGraph) -> None:
    rules: list[tuple[str, Reply]] = [
        (r"retrieve 3 relations", relation_reply),
        (r"sufficient.*bibs_location", "{Yes}. The answer is {United States of America}."),
        (r"sufficient", "{No}. The birthplace alone does not give the country."),
    ]
    question = Question(id="4", question="In which country was Tom Hanks born?", q_entity=(HANKS,))
    answer, llm_calls, prompts = scripted_answer(kg, rules, question)
    assert llm_calls == 4  # relations, sufficiency, relations, sufficiency: one candidate needs no scoring
    assert "Relations: " in prompts[0] and "type.object.name" not in prompts[0]
    assert f"(Tom Hanks, {POB}, Concord)" in prompts[1]
    assert answer.prediction == (USA,)
    assert cited(answer) == [[(HANKS, POB, CONCORD), (CONCORD, COUNTRY, USA)]]
    assert answer.details["stopped"] == "the LLM found the triples sufficient"
    assert [chain["relations"] for chain in answer.details["beam"]] == [
        [POB, COUNTRY],
        [POB, "location.location.time_zones"],
    ]


def entity_reply(messages: list[dict[str, str]]) -> str:
    entities = re.search(r"Entities: (.*)\n", messages[-1]["content"])
    assert entities is not None
    return ", ".join("1.0" if name == "Isaac Newton" else "0.0" for name in entities.group(1).split("; "))


def test_llm_entity_scores_prune_and_answer_at_the_depth_limit(kg: KnowledgeGraph) -> None:
    rules: list[tuple[str, Reply]] = [
        (r"retrieve 3 relations", f"{{{INFLUENCED} (Score: 1.0)}}"),
        (r"score the entities", entity_reply),
        (r"sufficient", "{No}."),
        (r"List every answer", "Isaac Newton"),
    ]
    question = Question(id="5", question="Which physicist influenced Albert Einstein?", q_entity=(EINSTEIN,))
    answer, llm_calls, prompts = scripted_answer(kg, rules, question, depth=1)
    scored = [p for p in prompts if "score the entities" in p]
    influencers = sorted(NAMES[walk[-1][2]] for walk in follow(TRIPLES, [EINSTEIN], [INFLUENCED]))
    assert len(scored) == 1 and sorted(re.findall(r"Entities: (.*)\n", scored[0])[0].split("; ")) == influencers
    assert llm_calls == 4
    assert answer.prediction == (NEWTON,)
    assert cited(answer) == [[(EINSTEIN, INFLUENCED, NEWTON)]]
    assert answer.details["stopped"] == "depth limit"


def test_offline_on_opaque_wikidata_ids(tmp_path: Path) -> None:
    question = Question(id="w", question="Where was Douglas Adams born?", q_entity=("Q42",))
    with open_wikidata_mini(tmp_path) as graph:
        counting = CountingKG(graph)
        answer = ThinkOnGraph(counting, scorer=BM25Scorer()).answer(question)  # BM25's calls
    assert answer.prediction == ("Q350",)
    # one batched labels call for the relations seen, one for those the lookahead sees beyond them, one for
    # the entities reached
    assert counting.asked("labels") == [["Q42"], ["P19", "P27", "P31"], ["P17"], ["Q350"]]
    assert [[edge.as_tuple() for edge in path] for path in answer.reasoning_paths] == [[("Q42", "P19", "Q350")]]
