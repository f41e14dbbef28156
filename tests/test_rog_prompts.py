"""``--option prompts=rog-original``: RoG's released planner gets exactly the prompts it was trained on,
checked on a real OpenAI-compatible stand-in server (messages and decoding parameters)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.llm_server import LLMServer
from support.rog_files import ROWS, write_jsonl

from kg_adapters.compat.rog import build_graph
from kg_adapters.errors import InvalidTermError
from reasoning.base import Question
from reasoning.errors import LLMError
from reasoning.llm import OpenAIChat
from reasoning.rog import RoG

PLANNER = "Please generate a valid relation path that can be helpful for answering the following question: "
ANSWER = (
    "Based on the reasoning paths, please answer the given question. Please keep the answer as simple as possible "
    "and return all the possible answers as a list."
)
QUESTION = Question(id="q", question="what country is new jersey in", q_entity=("New Jersey",))
BEAMS = [
    "<PATH>location.location.containedby</PATH>",
    "<PATH>location.location.containedby<SEP>people.person.nationality</PATH>",
    "no path here",
]
# RoG's path text (walk order, "->" both ways), the end some walk reaches along every edge first
EXPECTED_ANSWER_PROMPT = (
    f"{ANSWER}\n\nReasoning Paths:\n"
    "New Jersey -> location.location.containedby -> United States of America\n"
    "New Jersey -> location.location.containedby -> United States of America -> people.person.nationality -> "
    'Dwayne "The Rock" Johnson\n'
    "New Jersey -> location.location.containedby -> Passaic\n"
    "New Jersey -> location.location.containedby -> United States of America -> people.person.nationality -> "
    "Zoë Saldaña\n"
    "\nQuestion:\nwhat country is new jersey in?"
)


def graph_triples() -> list[tuple[str, str, str]]:
    return [(h, r, t) for row in ROWS for h, r, t in row["graph"]]


def test_planner_and_answer_prompts_as_trained() -> None:
    with LLMServer([(r"^Please generate", BEAMS), (r"Reasoning Paths:", "United States of America")]) as server:
        with build_graph(graph_triples()) as kg, OpenAIChat("rmanluo/RoG", base_url=server.url) as llm:
            answer = RoG(kg, llm=llm, prompts="rog-original").answer(QUESTION)
        plan_request, answer_request = server.requests
    assert plan_request.messages == [
        {"role": "system", "content": ""},
        {"role": "user", "content": PLANNER + "what country is new jersey in"},
    ]
    body = plan_request.body
    assert (body["n"], body["use_beam_search"], body["best_of"], body["temperature"], body["max_tokens"]) == (
        3,
        True,
        3,
        0.0,
        100,
    )
    assert answer.details["plans"] == [
        {"relations": ["location.location.containedby"], "directions": ["both"], "usable": True},
        {
            "relations": ["location.location.containedby", "people.person.nationality"],
            "directions": ["both", "in"],
            "usable": True,
        },
    ]
    assert answer_request.messages == [
        {"role": "system", "content": ""},
        {"role": "user", "content": EXPECTED_ANSWER_PROMPT},
    ]
    assert (answer_request.body["temperature"], answer_request.body["max_tokens"]) == (0.0, 512)
    assert "n" not in answer_request.body
    assert answer.prediction == ("United States of America",)


def test_multiple_choice_uses_rogs_choice_instruction() -> None:
    question = Question(
        id="q",
        question="what country is new jersey in?",
        q_entity=("New Jersey",),
        plans=(("location.location.containedby",),),
        choices=("United States of America", "Canada"),
    )
    with LLMServer([(r"Reasoning Paths:", "United States of America")]) as server:
        with build_graph(graph_triples()) as kg, OpenAIChat("rmanluo/RoG", base_url=server.url) as llm:
            RoG(kg, llm=llm, prompts="rog-original").answer(question)
        (request,) = server.requests
    assert request.messages[1]["content"].startswith(
        "Based on the reasoning paths, please answer the given question. Please select the answers from the given "
        "choices and return the answers only.\n\nReasoning Paths:\n"
    )
    assert request.messages[1]["content"].endswith(
        "\n\nQuestion:\nwhat country is new jersey in?\nChoices:\nUnited States of America\nCanada"
    )


def test_servers_without_beam_search_get_k_samples() -> None:
    with LLMServer([(r"^Please generate", BEAMS)], reject_params=["use_beam_search"]) as server:
        with OpenAIChat("rmanluo/RoG", base_url=server.url) as llm:
            messages = [{"role": "system", "content": ""}, {"role": "user", "content": PLANNER + "q"}]
            first = llm.candidates(messages, n=3, beam_search=True)  # type: ignore[arg-type]
            second = llm.candidates(messages, n=3, beam_search=True)  # type: ignore[arg-type]
            assert llm.beam_search_refused
        refused, sampled, again = server.requests
    assert first == second == BEAMS
    assert refused.body["use_beam_search"] is True
    for request in (sampled, again):  # beam search is not offered again once refused
        assert "use_beam_search" not in request.body and "best_of" not in request.body
        assert (request.body["n"], request.body["temperature"]) == (3, 0.7)


def test_cli_option_and_bad_value(tmp_path: Path) -> None:
    dataset = write_jsonl(tmp_path / "test.jsonl", ROWS[1:2])
    store, out = tmp_path / "store", tmp_path / "out.jsonl"
    run = [sys.executable, "-m", "kg_adapters.cli"]
    assert (
        subprocess.run([*run, "load", str(dataset), "--format", "rog-dataset", "--store", str(store)]).returncode == 0
    )
    with LLMServer([(r"^Please generate", BEAMS), (r"Reasoning Paths:", "United States of America")]) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.url}
        args = ["reason", "--kg", f"oxigraph://{store}", "--method", "rog", "--input", str(dataset), "--out", str(out)]
        done = subprocess.run(
            [*run, *args, "--llm", "openai:rmanluo/RoG", "--option", "prompts=rog-original"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert server.requests[0].messages[1]["content"] == PLANNER + ROWS[1]["question"]
    assert json.loads(out.read_text("utf-8"))["prediction"] == ["United States of America"]
    with build_graph(graph_triples()) as kg, pytest.raises(InvalidTermError, match="rog-original"):
        RoG(kg, prompts="rog")


def test_servers_that_ignore_n_get_the_rest_as_single_samples() -> None:
    with LLMServer([(r"^Please generate", BEAMS)], choices=1) as server:
        with OpenAIChat("rmanluo/RoG", base_url=server.url) as llm:
            messages = [{"role": "system", "content": ""}, {"role": "user", "content": PLANNER + "q"}]
            replies = llm.candidates(messages, n=3, beam_search=True)  # type: ignore[arg-type]
        beams, *samples = server.requests
    assert replies == [BEAMS[0]] * 3  # the scripted server answers its first text to every request
    assert (beams.body["n"], beams.body["use_beam_search"], beams.body["temperature"]) == (3, True, 0.0)
    assert [(r.body["n"], r.body["temperature"], "use_beam_search" in r.body) for r in samples] == [(1, 0.7, False)] * 2
    more = LLMServer([(r"^Please generate", BEAMS)], choices=4)  # more than asked for: not an answer to it
    too_many = pytest.raises(LLMError, match="asked for 3")
    with more as server, OpenAIChat("rmanluo/RoG", base_url=server.url) as llm, too_many:
        llm.candidates(messages, n=3, beam_search=True)  # type: ignore[arg-type]


def test_rog_original_plans_with_a_server_that_ignores_n() -> None:
    replies = iter(BEAMS)
    with (
        LLMServer(
            [(r"^Please generate", lambda _: next(replies)), (r"^Based on", "United States of America")], choices=1
        ) as server,
        OpenAIChat("rmanluo/RoG", base_url=server.url) as llm,
        build_graph(graph_triples()) as kg,
    ):
        answer = RoG(kg, llm=llm, prompts="rog-original").answer(QUESTION)
    assert [p["relations"] for p in answer.details["plans"]] == [
        ["location.location.containedby"],
        ["location.location.containedby", "people.person.nationality"],
    ]
    assert answer.prediction == ("United States of America",)
