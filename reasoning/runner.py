"""Running a reasoner over a questions file: ``kga reason``.

Questions are answered by ``workers`` threads sharing one KG and one LLM client; each question gets
its own :class:`CountingKG` / :class:`CountingLLM` and a fresh reasoner, so ``kg_calls`` and
``llm_calls`` are exact per question. The worker that finishes an answer writes its result line
(one at a time, flushed and fsync'd) before it takes the next question, so a crash loses at most the
line being written, and Ctrl-C -- raised in the main thread, never in a worker -- loses no answered
question: questions not yet started are dropped, running ones finish and are saved. Re-running with
the same ``--out`` skips the ids already there; a torn last line (a crash mid-write) is cut off first
and that question answered again. A question whose method raises a :class:`KGError` (an endpoint that
stays down, a refused LLM request) is reported and left out of the file, so a re-run retries it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from kg_adapters import json_text
from kg_adapters.base import KnowledgeGraph
from kg_adapters.errors import KGError, LoadError
from kg_adapters.wrappers.counting import CountingKG
from reasoning.base import LLM, Answer, Question, Reasoner
from reasoning.llm import CountingLLM
from reasoning.metrics import read_question_rows

ReasonerFactory = Callable[[KnowledgeGraph, LLM | None], Reasoner]
"""Builds the reasoner for one question from the (counting) KG and LLM it must use."""


@dataclass(kw_only=True)
class RunReport:
    """What one run did: ``answered`` now, ``skipped`` as already in the output, ``failed`` with
    ``errors`` as ``(question id, message)``, and whether a torn last line was cut off."""

    questions: int = 0
    skipped: int = 0
    answered: int = 0
    failed: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)
    repaired_torn_line: bool = False
    seconds: float = 0.0


def read_questions(path: str | Path) -> list[Question]:
    """The questions of a JSONL file or a RoG dataset file (Parquet or JSONL, its ``graph`` column
    left out); a bad line or a repeated id raises LoadError with file:line."""
    questions: list[Question] = []
    seen: set[str] = set()
    for number, line in read_question_rows(path):
        try:
            question = Question.from_json(line)
        except KGError as exc:
            raise LoadError(str(exc), file=str(path), line=number) from exc
        if question.id in seen:
            raise LoadError(f"question id {question.id!r} repeated", file=str(path), line=number)
        seen.add(question.id)
        questions.append(question)
    return questions


def finished_ids(path: str | Path) -> tuple[set[str], bool]:
    """The ids already answered in a results file, and whether a torn last line was cut off.
    A malformed line anywhere but last is not a crash artefact: LoadError, the file untouched."""
    target = Path(path)
    if not target.exists():
        return set(), False
    data = target.read_bytes()
    lines = data.split(b"\n")
    torn = lines.pop() != b""  # the text after the last newline; empty when the file ends cleanly
    done: set[str] = set()
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            record = json_text.loads(raw)
            done.add(str(record["id"]))
        except (ValueError, KeyError, TypeError) as exc:
            if number < len(lines):
                raise LoadError(f"not a result line: {exc}", file=str(target), line=number) from exc
            torn = True
            lines.pop()
    if torn:
        keep = b"".join(line + b"\n" for line in lines)
        with open(target, "r+b") as handle:
            handle.truncate(len(keep))
            handle.flush()
            os.fsync(handle.fileno())
    return done, torn


def counted(kg: KnowledgeGraph) -> CountingKG:
    """A per-question counter that keeps the KG's raw SPARQL ability, if it has one."""
    return CountingKG(kg)


def answer_counted(
    factory: ReasonerFactory, kg: KnowledgeGraph, llm: LLM | None, question: Question, scope: str = "union"
) -> Answer:
    """One question answered by a fresh reasoner, with its KG and LLM calls counted and timed;
    ``scope="question"``: on the question's own subgraph (:mod:`reasoning.scope`)."""
    started = time.perf_counter()
    if scope == "question":
        from reasoning.scope import question_graph

        with question_graph(kg, question.id) as own:
            answer = answer_counted(factory, own, llm, question)
        return dataclasses.replace(answer, kg_calls=answer.kg_calls + 1, seconds=time.perf_counter() - started)
    counting_kg = counted(kg)
    counting_llm = CountingLLM(llm) if llm is not None else None
    answer = factory(counting_kg, counting_llm).answer(question)
    return dataclasses.replace(
        answer,
        # a reasoner that counts its own calls may also have asked KGs the runner never sees (R3's personal KG)
        kg_calls=max(answer.kg_calls, len(counting_kg.calls)),
        llm_calls=counting_llm.calls if counting_llm is not None else 0,
        seconds=time.perf_counter() - started,
    )


def result_line(question: Question, answer: Answer) -> dict[str, object]:
    """The output line, with the gold answers as ``ground_truth`` so ``kga eval`` needs no questions."""
    line = answer.to_json(question.id)
    line["ground_truth"] = list(question.a_entity)
    return line


def run(
    factory: ReasonerFactory,
    kg: KnowledgeGraph,
    questions: Sequence[Question],
    out: str | Path,
    *,
    llm: LLM | None = None,
    workers: int = 1,
    progress: bool | None = None,
    scope: str = "union",
) -> RunReport:
    """Answers every question not yet in ``out``, appending one line per answer. ``scope``:
    ``union`` answers on ``kg``, ``question`` on each question's own subgraph of it."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise TypeError(f"workers must be an integer >= 1, got {workers!r}")
    if scope not in ("union", "question"):
        raise TypeError(f"scope must be 'union' or 'question', got {scope!r}")
    from tqdm import tqdm

    started = time.perf_counter()
    done, torn = finished_ids(out)
    todo = [q for q in questions if q.id not in done]
    report = RunReport(questions=len(questions), skipped=len(questions) - len(todo), repaired_torn_line=torn)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    bar = tqdm(total=len(todo), unit="q", file=sys.stderr, disable=not progress if progress is not None else None)
    with open(out, "ab") as handle, ThreadPoolExecutor(max_workers=workers) as pool:
        writing = threading.Lock()

        def answer_and_save(question: Question) -> None:
            # written here, not by the main thread: an answer is durable before its future is done
            answer = answer_counted(factory, kg, llm, question, scope)
            line = json.dumps(result_line(question, answer), ensure_ascii=False).encode("utf-8") + b"\n"
            with writing:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())

        pending: dict[Future[None], Question] = {}
        queue = iter(todo)
        try:
            while True:
                while len(pending) < 2 * workers and (question := next(queue, None)) is not None:
                    pending[pool.submit(answer_and_save, question)] = question
                if not pending:
                    break
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                # in submission order (``finished`` is a set), so errors are reported in the input's order
                for future in [future for future in pending if future in finished]:
                    question = pending.pop(future)
                    try:
                        future.result()
                    except KGError as exc:
                        report.failed += 1
                        report.errors.append((question.id, f"{type(exc).__name__}: {exc}"))
                    else:
                        report.answered += 1
                    bar.update(1)
        finally:
            for future in pending:
                future.cancel()
            bar.close()
    report.seconds = time.perf_counter() - started
    return report
