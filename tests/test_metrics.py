"""kga eval's numbers on hand-made result files (worked out by hand in the comments)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kg_adapters.cli import main
from kg_adapters.errors import LoadError
from reasoning.metrics import evaluate, path_scores, read_jsonl, score_answer

QUESTIONS: list[dict[str, Any]] = [
    {"id": "a", "question": "?", "q_entity": ["m.1"], "a_entity": ["m.x", "m.y"], "gold_paths": [["r1"], ["r2", "r3"]]},
    {"id": "b", "question": "?", "q_entity": ["m.1"], "a_entity": ["1969"]},
    {"id": "c", "question": "?", "q_entity": ["m.1"], "a_entity": ["m.z"]},
    {"id": "d", "question": "?", "q_entity": ["m.1"], "a_entity": []},
]
RESULTS: list[dict[str, Any]] = [
    # a: predictions x, w, y -> top right; 2 of 3 predictions right, both gold found
    {
        "id": "a",
        "prediction": ["m.x", "m.w", "m.y"],
        "reasoning_paths": [[["m.1", "r1", "m.x"]], [["m.1", "r9", "m.w"]]],
        "kg_calls": 4,
        "llm_calls": 0,
        "seconds": 0.5,
        "details": {"plan_validity": 0.5},
        "ground_truth": ["m.x", "m.y"],
    },
    # b: a literal, matched case- and space-insensitively, but second
    {
        "id": "b",
        "prediction": ["1970", " 1969 "],
        "reasoning_paths": [],
        "kg_calls": 2,
        "llm_calls": 0,
        "seconds": 0.25,
        "details": {"plan_validity": 1.0},
        "ground_truth": ["1969"],
    },
    # c has no result line; d has no gold answer
    {"id": "d", "prediction": ["m.q"], "reasoning_paths": [], "kg_calls": 6, "llm_calls": 0, "seconds": 1.0},
]


def test_per_question_scores() -> None:
    a = score_answer(["m.x", "m.w", "m.y"], ["m.x", "m.y"])
    assert (a.hits1, a.hit, a.recall) == (1.0, 1.0, 1.0)
    assert a.precision == pytest.approx(2 / 3)
    assert a.f1 == pytest.approx(0.8)
    b = score_answer(["1970", " 1969 "], ["1969"])
    assert (b.hits1, b.hit, b.precision, b.recall) == (0.0, 1.0, 0.5, 1.0)
    assert b.f1 == pytest.approx(2 / 3)
    empty = score_answer([], ["m.x"])
    assert (empty.hits1, empty.f1, empty.precision, empty.recall) == (0.0, 0.0, 0.0, 0.0)
    assert score_answer(["m.0d05w3"], ["m.0d05w"]).hit == 0.0  # ids match exactly, never as substrings
    assert score_answer(["m.x", "m.x"], ["m.x"]).precision == 1.0  # repeated predictions count once


def test_path_scores() -> None:
    coverage, precision = path_scores([[["m.1", "r1", "m.x"]], [["m.1", "r9", "m.w"]]], [["r1"], ["r2", "r3"]])
    assert (coverage, precision) == (0.5, 0.5)
    assert path_scores([], [["r1"]]) == (0.0, 0.0)


def test_evaluate_with_questions_counts_missing_as_wrong() -> None:
    evaluation = evaluate(RESULTS, QUESTIONS)
    assert (evaluation.questions, evaluation.scored, evaluation.missing, evaluation.no_gold) == (4, 3, 1, 1)
    assert evaluation.hits1 == pytest.approx(1 / 3)  # a right, b wrong, c missing
    assert evaluation.hit == pytest.approx(2 / 3)
    assert evaluation.precision == pytest.approx((2 / 3 + 0.5) / 3)
    assert evaluation.recall == pytest.approx(2 / 3)
    assert evaluation.f1 == pytest.approx((0.8 + 2 / 3) / 3)
    assert (evaluation.with_gold_paths, evaluation.path_coverage, evaluation.path_precision) == (1, 0.5, 0.5)
    assert evaluation.plan_validity == pytest.approx(0.75)
    assert evaluation.medians == {"kg_calls": 4.0, "llm_calls": 0.0, "seconds": 0.5}


def test_evaluate_from_ground_truth_alone() -> None:
    evaluation = evaluate(RESULTS)
    assert (evaluation.questions, evaluation.scored, evaluation.missing, evaluation.no_gold) == (3, 2, 0, 1)
    assert evaluation.hits1 == 0.5
    assert evaluation.f1 == pytest.approx((0.8 + 2 / 3) / 2)
    assert evaluation.path_coverage is None


def test_kga_eval_prints_the_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results, questions = tmp_path / "r.jsonl", tmp_path / "q.jsonl"
    results.write_text("".join(json.dumps(line) + "\n" for line in RESULTS))
    questions.write_text("".join(json.dumps(line) + "\n" for line in QUESTIONS))
    assert main(["eval", str(results), "--questions", str(questions)]) == 0
    text = capsys.readouterr().out
    assert "Hits@1           0.3333" in text
    assert "F1               0.4889" in text
    assert "path coverage    0.5000 (1 questions with gold paths)" in text
    assert main(["eval", str(results), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["hits1"] == 0.5


def test_malformed_results_name_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "prediction": []}\nnot json\n')
    with pytest.raises(LoadError, match=r"bad.jsonl:2"):
        read_jsonl(bad)
    assert main(["eval", str(bad)]) == 1
    assert "bad.jsonl:2" in capsys.readouterr().err
