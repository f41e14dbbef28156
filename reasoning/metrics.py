"""KGQA evaluation as in the RoG paper (``evaluate_results.py``): Hits@1, F1, precision, recall.

RoG compares answer *strings* with normalised substring matching; our predictions are compact KG
ids (or literal values), so a prediction matches a gold answer when both normalise to the same
text (case, surrounding whitespace and repeated spaces ignored; ``m.0d05w3`` never matches
``m.0d05w``). Per question, over the distinct predictions and distinct gold answers:

* ``hits@1``: the first prediction is a gold answer;
* ``hit``: some prediction is a gold answer (what RoG's code calls "Hits@1");
* ``precision`` = matched predictions / predictions, ``recall`` = matched gold / gold, and their
  harmonic mean ``f1`` (all 0 for an empty prediction).

Scores are averaged over the questions that have gold answers; a question without a result line
scores 0 everywhere (it is counted in ``missing``). Where gold relation paths are known (the
question's ``gold_paths``, else its ``plans``):

* ``path_coverage``: share of a question's gold relation paths that some cited reasoning path
  follows (relations in order, whatever the walking direction);
* ``path_precision``: share of cited reasoning paths whose relations are a gold relation path.

``plan_validity`` averages ``details.plan_validity`` (share of planned relation steps that exist in
the KG along the way) over the answers that report it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kg_adapters import json_text
from kg_adapters.errors import LoadError

_SPACES = re.compile(r"\s+")


def normalize(answer: object) -> str:
    """The text an answer is compared by."""
    return _SPACES.sub(" ", str(answer).strip().lower())


@dataclass(frozen=True, kw_only=True)
class AnswerScores:
    hits1: float
    hit: float
    precision: float
    recall: float
    f1: float


def score_answer(prediction: Sequence[object], gold: Iterable[object]) -> AnswerScores:
    """The per-question scores of ``prediction`` (best first) against the gold answers."""
    predicted = list(dict.fromkeys(normalize(p) for p in prediction))
    answers = set(normalize(g) for g in gold)
    if not predicted or not answers:
        return AnswerScores(hits1=0.0, hit=0.0, precision=0.0, recall=0.0, f1=0.0)
    matched = [p for p in predicted if p in answers]
    precision = len(matched) / len(predicted)
    recall = len(matched) / len(answers)
    f1 = 2 * precision * recall / (precision + recall) if matched else 0.0
    return AnswerScores(
        hits1=float(predicted[0] in answers), hit=float(bool(matched)), precision=precision, recall=recall, f1=f1
    )


def relation_sequence(path: Sequence[Sequence[object]]) -> tuple[str, ...]:
    """The relations of one cited path (``[[h, r, t], ...]``)."""
    return tuple(str(triple[1]) for triple in path)


def path_scores(
    reasoning_paths: Sequence[Sequence[Sequence[object]]], gold_paths: Sequence[Sequence[str]]
) -> tuple[float, float]:
    """``(coverage, precision)`` of the cited paths against the gold relation paths."""
    gold = {tuple(p) for p in gold_paths}
    cited = [relation_sequence(path) for path in reasoning_paths]
    coverage = len(gold & set(cited)) / len(gold) if gold else 0.0
    precision = sum(1 for relations in cited if relations in gold) / len(cited) if cited else 0.0
    return coverage, precision


@dataclass(kw_only=True)
class Evaluation:
    """Macro averages over the scored questions (see the module docstring)."""

    questions: int = 0
    scored: int = 0
    missing: int = 0
    no_gold: int = 0
    hits1: float = 0.0
    hit: float = 0.0
    precision: float = 0.0
    recall: float = 0.0
    f1: float = 0.0
    with_gold_paths: int = 0
    path_coverage: float | None = None
    path_precision: float | None = None
    with_plan_validity: int = 0
    plan_validity: float | None = None
    medians: dict[str, float] = field(default_factory=dict)
    """Median ``kg_calls``, ``llm_calls`` and ``seconds`` per answered question."""

    def as_dict(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items()}

    def lines(self) -> list[str]:
        """Human-readable report lines."""
        out = [
            f"questions        {self.questions} (scored {self.scored}, missing results {self.missing}, "
            f"no gold answer {self.no_gold})",
            f"Hits@1           {self.hits1:.4f}",
            f"Hit (any)        {self.hit:.4f}",
            f"F1               {self.f1:.4f}",
            f"precision        {self.precision:.4f}",
            f"recall           {self.recall:.4f}",
        ]
        if self.path_coverage is not None and self.path_precision is not None:
            out.append(f"path coverage    {self.path_coverage:.4f} ({self.with_gold_paths} questions with gold paths)")
            out.append(f"path precision   {self.path_precision:.4f}")
        if self.plan_validity is not None:
            out.append(f"plan validity    {self.plan_validity:.4f} ({self.with_plan_validity} answers report it)")
        for name, value in self.medians.items():
            out.append(f"median {name:<9} {value:g}")
        return out


def evaluate(results: Sequence[Mapping[str, Any]], questions: Sequence[Mapping[str, Any]] | None = None) -> Evaluation:
    """Scores result lines; gold answers come from ``questions`` (``a_entity``) when given, else
    from each result's ``ground_truth``. With ``questions``, every question is counted and those
    without a result score 0; the last result line of an id wins."""
    by_id = {str(line["id"]): line for line in results}
    items: list[tuple[Mapping[str, Any] | None, Any, Any]]
    if questions is None:
        items = [(line, line.get("ground_truth", []), None) for line in by_id.values()]
    else:
        items = [
            (by_id.get(str(q["id"])), q.get("a_entity", []), q.get("gold_paths", q.get("plans"))) for q in questions
        ]
    evaluation = Evaluation(questions=len(items))
    _score_answers(evaluation, items)
    answered = [r for r, _, _ in items if r is not None]
    validities = [v for r in answered if isinstance(v := (r.get("details") or {}).get("plan_validity"), (int, float))]
    evaluation.with_plan_validity = len(validities)
    if validities:
        evaluation.plan_validity = sum(validities) / len(validities)
    for name in ("kg_calls", "llm_calls", "seconds"):
        values = sorted(float(r[name]) for r in answered if isinstance(r.get(name), (int, float)))
        if values:
            evaluation.medians[name] = _median(values)
    return evaluation


def _score_answers(evaluation: Evaluation, items: Sequence[tuple[Mapping[str, Any] | None, Any, Any]]) -> None:
    """The answer and path averages of ``evaluation`` over (result, gold answers, gold paths) items."""
    totals = dict.fromkeys(("hits1", "hit", "precision", "recall", "f1"), 0.0)
    coverage_sum = precision_sum = 0.0
    for result, gold, gold_paths in items:
        if result is None:
            evaluation.missing += 1
        if not gold:
            evaluation.no_gold += 1
            continue
        evaluation.scored += 1
        if result is None:
            continue
        scores = score_answer(result.get("prediction", []), gold)
        for name in totals:
            totals[name] += getattr(scores, name)
        if gold_paths:
            coverage, precision = path_scores(result.get("reasoning_paths", []), gold_paths)
            evaluation.with_gold_paths += 1
            coverage_sum += coverage
            precision_sum += precision
    if evaluation.scored:
        for name, total in totals.items():
            setattr(evaluation, name, total / evaluation.scored)
    if evaluation.with_gold_paths:
        evaluation.path_coverage = coverage_sum / evaluation.with_gold_paths
        evaluation.path_precision = precision_sum / evaluation.with_gold_paths


def _median(values: Sequence[float]) -> float:
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


def _numbered_lines(handle: Any, path: str | Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of a text file; bytes that are not UTF-8 raise LoadError with the line."""
    number = 0
    try:
        for number, text in enumerate(handle, start=1):
            yield number, text
    except UnicodeDecodeError as exc:
        raise LoadError(f"not valid UTF-8 (byte {exc.start} of a chunk)", file=str(path), line=number + 1) from exc


def read_question_rows(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """``(line or row number, row)`` of a questions file: JSONL (``.gz``/``.bz2`` too) or a RoG
    dataset Parquet shard (``.parquet``, the ``rog`` extra), streamed; each row's ``graph`` (a
    subgraph of up to thousands of triples, kept in the store instead) is dropped as it is read.
    A malformed line, or one that is no object with an ``id``, raises LoadError with file:line."""
    from loaders.rog_dataset import QUESTION_COLUMNS, iter_rows

    rows: list[tuple[int, dict[str, Any]]] = []
    for number, row in iter_rows(str(path), (*QUESTION_COLUMNS, "plans", "gold_paths")):
        if not isinstance(row, dict) or "id" not in row:
            raise LoadError("expected a JSON object with an 'id'", file=str(path), line=number)
        row.pop("graph", None)
        rows.append((number, row))
    return rows


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Every JSON object line of a file; a malformed line raises LoadError with file:line."""
    lines: list[dict[str, Any]] = []
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115 -- closed by the with below
    except OSError as exc:
        raise LoadError(f"cannot read the results file: {exc.strerror or exc}", file=str(path)) from exc
    with handle:
        for number, text in _numbered_lines(handle, path):
            if not text.strip():
                continue
            try:
                value = json_text.loads(text)
            except ValueError as exc:
                raise LoadError(f"not a JSON line: {exc}", file=str(path), line=number) from exc
            if not isinstance(value, dict) or "id" not in value:
                raise LoadError("expected a JSON object with an 'id'", file=str(path), line=number)
            lines.append(value)
    return lines
