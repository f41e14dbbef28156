"""R3, RefKG and FiDeLiS through the registry and ``kga reason`` / ``kga eval`` on the bundled
sample store, offline: one counted line per question, options passed through, unknown ones refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg_adapters.cli import main
from reasoning.fidelis import FiDeLiS
from reasoning.r3 import R3
from reasoning.refkg import RefKG
from reasoning.registry import method_class

HANKS, CONCORD, USA = "m.0bxtg", "m.0qymv", "m.09c7w0"
POB, COUNTRY = "people.person.place_of_birth", "base.biblioness.bibs_location.country"
QUESTIONS = [
    {"id": "born", "question": "What is the place of birth of Tom Hanks?", "q_entity": [], "a_entity": [CONCORD]},
    {
        "id": "country",
        "question": "Which country is the place of birth of Tom Hanks in?",
        "q_entity": [HANKS],
        "a_entity": [USA],
        "gold_paths": [[POB, COUNTRY]],
    },
]


def test_registry_builds_the_three_methods() -> None:
    assert (method_class("r3"), method_class("refkg"), method_class("fidelis")) == (R3, RefKG, FiDeLiS)


@pytest.mark.parametrize(
    ("method", "option", "bad_option"),
    [("r3", "top_k=5", "width=2"), ("refkg", "alpha=0.5", "beam_width=2"), ("fidelis", "beam_width=2", "top_k=2")],
)
def test_kga_reason_and_eval(
    method: str,
    option: str,
    bad_option: str,
    sample_store_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    questions, out = tmp_path / "questions.jsonl", tmp_path / "out.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    argv = ["reason", "--method", method, "--kg", sample_store_url, "--input", str(questions), "--out", str(out)]
    assert main([*argv, "--option", option, "--no-progress"]) == 0
    assert json.loads(capsys.readouterr().out)["answered"] == 2
    results = {line["id"]: line for line in map(json.loads, out.read_text().splitlines())}
    assert results["born"]["prediction"] == [CONCORD]
    assert results["country"]["prediction"] == [USA]
    assert results["country"]["reasoning_paths"] == [[[HANKS, POB, CONCORD], [CONCORD, COUNTRY, USA]]]
    assert all(line["kg_calls"] > 0 and line["llm_calls"] == 0 for line in results.values())
    assert main(["eval", str(out), "--questions", str(questions), "--json"]) == 0
    evaluation = json.loads(capsys.readouterr().out)
    assert (evaluation["hits1"], evaluation["path_coverage"]) == (1.0, 1.0)
    assert main([*argv, "--option", bad_option]) == 2
    assert bad_option.split("=")[0] in capsys.readouterr().err
