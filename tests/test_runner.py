"""kga reason: the threaded runner over the bundled sample store -- per-question KG/LLM call counts,
fsync'd lines, resume, a torn last line from a crash, failures left for a re-run -- and the CLI."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.llm_server import LLMServer, Reply

from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph
from kg_adapters.cli import main
from kg_adapters.errors import LoadError
from reasoning.base import LLM, Reasoner
from reasoning.llm import OpenAIChat
from reasoning.registry import METHODS, method_class
from reasoning.rog import RoG
from reasoning.runner import finished_ids, read_questions, run
from reasoning.tog import ThinkOnGraph

HANKS, CONCORD, USA, EINSTEIN = "m.0bxtg", "m.0qymv", "m.09c7w0", "m.0jcx"
POB, COUNTRY = "people.person.place_of_birth", "base.biblioness.bibs_location.country"
QUESTIONS: list[dict[str, Any]] = [
    {"id": "born", "question": "Where was Tom Hanks born?", "q_entity": [HANKS], "a_entity": [CONCORD]},
    {
        "id": "country",
        "question": "In which country is the place of birth of Tom Hanks?",
        "q_entity": [HANKS],
        "a_entity": [USA],
    },
    {"id": "given", "question": "?", "q_entity": [HANKS], "a_entity": [USA], "plans": [[POB, COUNTRY]]},
    {"id": "einstein", "question": "Who influenced Albert Einstein?", "q_entity": [EINSTEIN], "a_entity": ["m.03s9v"]},
    {"id": "5", "question": "Where was Tom Hanks born?", "q_entity": [HANKS], "a_entity": [CONCORD]},
]


@pytest.fixture
def kg(sample_store_url: str) -> Iterator[KnowledgeGraph]:
    with connect(sample_store_url) as graph:
        yield graph


@pytest.fixture
def questions_file(tmp_path: Path) -> Path:
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    return path


def rog(kg: KnowledgeGraph, llm: LLM | None) -> Reasoner:
    return RoG(kg, llm=llm)


def lines(path: Path) -> dict[str, dict[str, Any]]:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len({r["id"] for r in records}) == len(records), "an id was written twice"
    return {r["id"]: r for r in records}


def test_run_writes_one_counted_line_per_question(kg: KnowledgeGraph, questions_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "results.jsonl"
    report = run(rog, kg, read_questions(questions_file), out, workers=2, progress=False)
    assert (report.questions, report.answered, report.skipped, report.failed) == (5, 5, 0, 0)
    written = lines(out)
    assert set(written) == {q["id"] for q in QUESTIONS}
    assert written["born"]["prediction"] == [CONCORD]
    assert written["born"]["reasoning_paths"] == [[[HANKS, POB, CONCORD]]]
    assert written["given"]["prediction"] == [USA]
    assert written["given"]["ground_truth"] == [USA]
    # validation: relations out and in at both hops, neighbors between them; retrieval; labels
    assert written["given"]["kg_calls"] == 7
    assert written["born"]["kg_calls"] == written["5"]["kg_calls"]  # counted per question, not per run
    assert all(r["llm_calls"] == 0 and r["seconds"] > 0 for r in written.values())


def test_resume_skips_answered_ids(kg: KnowledgeGraph, questions_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    questions = read_questions(questions_file)
    run(rog, kg, questions[:2], out, progress=False)
    first = out.read_text()
    report = run(rog, kg, questions, out, workers=3, progress=False)
    assert (report.skipped, report.answered) == (2, 3)
    assert out.read_text().startswith(first)
    assert set(lines(out)) == {q.id for q in questions}
    again = run(rog, kg, questions, out, progress=False)
    assert (again.skipped, again.answered) == (5, 0)


def test_torn_last_line_is_cut_and_answered_again(kg: KnowledgeGraph, questions_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    questions = read_questions(questions_file)
    run(rog, kg, questions[:2], out, progress=False)
    whole = out.read_text()
    out.write_text(whole + '{"id": "given", "prediction": ["m.0')  # a crash in the middle of a write
    assert finished_ids(out) == ({"born", "country"}, True)
    assert out.read_text() == whole
    out.write_text(whole + '{"id": "given", "prediction": ["m.0')
    report = run(rog, kg, questions[:3], out, progress=False)
    assert report.repaired_torn_line and (report.skipped, report.answered) == (2, 1)
    assert lines(out)["given"]["prediction"] == [USA]


def test_a_malformed_line_before_the_last_is_an_error(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    out.write_text('{"id": "a"}\nnot json\n{"id": "b"}\n')
    with pytest.raises(LoadError, match=r"results\.jsonl:2"):
        finished_ids(out)
    assert out.read_text() == '{"id": "a"}\nnot json\n{"id": "b"}\n'


def test_failed_questions_are_reported_and_retried(kg: KnowledgeGraph, questions_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    questions = read_questions(questions_file)
    # the scripted LLM knows no reply for Einstein's planning prompt: HTTP 400, a typed LLMError
    rules = [(r"Topic entities: Tom Hanks", f"{POB}\n{POB} -> {COUNTRY}"), (r"Reasoning Paths:\nTom Hanks", "Concord")]
    with LLMServer(rules) as server, OpenAIChat("scripted", base_url=server.url, attempts=1) as llm:
        report = run(rog, kg, questions, out, llm=llm, workers=2, progress=False)
        assert (report.answered, report.failed) == (4, 1)
        assert report.errors[0][0] == "einstein" and report.errors[0][1].startswith("LLMError")
        written = lines(out)
        assert "einstein" not in written
        assert written["born"]["prediction"] == [CONCORD]
        assert {i: r["llm_calls"] for i, r in written.items()} == {"born": 2, "country": 2, "given": 1, "5": 2}
        server.add_rule(r"Topic entities: Albert Einstein", "influence.influence_node.influenced_by")
        server.add_rule(r"Reasoning Paths:\nAlbert Einstein", "Isaac Newton")
        retry = run(rog, kg, questions, out, llm=llm, progress=False)
    assert (retry.skipped, retry.answered, retry.failed) == (4, 1, 0)
    assert lines(out)["einstein"]["prediction"] == ["m.03s9v"]


def test_question_file_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "1", "question": "?", "q_entity": ["m.1"]}\n{"id": "2", "question": 3}\n')
    with pytest.raises(LoadError, match=r"q.jsonl:2: question 2: 'question' must be a string"):
        read_questions(path)
    path.write_text('{"id": "1", "question": "?"}\n{"id": "1", "question": "?"}\n')
    with pytest.raises(LoadError, match="repeated"):
        read_questions(path)


def test_cli_reason_then_eval(
    sample_store_url: str, questions_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    argv = ["reason", "--method", "rog", "--kg", sample_store_url, "--input", str(questions_file), "--out", str(out)]
    assert main([*argv, "--workers", "2", "--option", "top_k=2", "--no-progress"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["answered"], summary["failed"]) == (5, 0)
    assert main(["eval", str(out), "--questions", str(questions_file), "--json"]) == 0
    evaluation = json.loads(capsys.readouterr().out)
    assert evaluation["hits1"] == 0.8  # Einstein's influencers come back by id, Newton is not first
    assert evaluation["recall"] == 1.0
    assert evaluation["path_coverage"] == 1.0  # the given plan is followed
    assert main([*argv, "--option", "topk=2"]) == 2
    assert "topk" in capsys.readouterr().err
    assert main([*argv, "--workers", "0"]) == 2
    assert "--workers" in capsys.readouterr().err
    assert main([*argv[:2], "nope", *argv[3:]]) == 1
    assert "no reasoning method 'nope'" in capsys.readouterr().err


def test_registry_names_every_method() -> None:
    assert set(METHODS) == {"rog", "r3", "refkg", "fidelis", "tog"}
    assert method_class("rog") is RoG
    assert method_class("tog") is ThinkOnGraph


def newton_first(messages: list[dict[str, str]]) -> str:
    names = messages[-1]["content"].split("Entities: ")[1].split("\n")[0].split("; ")
    return ", ".join("1.0" if name == "Isaac Newton" else "0.0" for name in names)


def test_cli_reason_with_an_llm_and_its_cache(
    sample_store_url: str,
    questions_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cache, first, second = tmp_path / "llm.sqlite", tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    rules: list[tuple[str, Reply]] = [
        (r"retrieve 3 relations.*Topic Entity: Tom Hanks", f"{{{POB} (Score: 1.0)}}"),
        (r"retrieve 3 relations", "{influence.influence_node.influenced_by (Score: 1.0)}"),
        (r"score the entities", newton_first),
        (r"sufficient.*place_of_birth", "{Yes}. The answer is {Concord}."),
        (r"sufficient", "{Yes}. The answer is {Isaac Newton}."),
    ]
    with LLMServer(rules) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        argv = ["reason", "--method", "tog", "--kg", sample_store_url, "--input", str(questions_file)]
        llm = ["--llm", "openai:scripted", "--llm-cache", str(cache)]
        assert main([*argv, "--out", str(first), *llm, "--option", "depth=1", "--no-progress"]) == 0
        sent = len(server.requests)
        assert main([*argv, "--out", str(second), *llm, "--option", "depth=1", "--no-progress"]) == 0
        assert len(server.requests) == sent  # the second run is answered from the cache
    capsys.readouterr()
    assert lines(first)["born"]["prediction"] == [CONCORD]
    assert lines(first)["einstein"]["prediction"] == ["m.03s9v"]
    assert [r["prediction"] for r in lines(second).values()] == [r["prediction"] for r in lines(first).values()]
    assert lines(second)["born"]["llm_calls"] == 2


@pytest.mark.parametrize(("qid", "problem"), [('"q\\ud800"', "not valid Unicode"), ('""', "non-empty string")])
def test_a_question_id_no_file_can_hold_is_refused_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], qid: str, problem: str
) -> None:
    """A lone surrogate (valid JSON escape) failed as "unexpected UnicodeEncodeError" under --scope question."""
    questions = tmp_path / "q.jsonl"
    good = '{"id": "ok", "question": "x", "q_entity": ["a"]}'
    questions.write_text(good + "\n" + f'{{"id": {qid}, "question": "x", "q_entity": ["a"]}}\n', "utf-8")
    out = str(tmp_path / "out.jsonl")
    code = main(["reason", "--kg", "oxigraph://", "--method", "rog", "--input", str(questions), "--out", out])
    error = capsys.readouterr().err
    assert code != 0 and f"{questions}:2" in error and problem in error and "unexpected" not in error, error
