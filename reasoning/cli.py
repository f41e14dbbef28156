"""``kga demo``, ``kga reason`` and ``kga eval``: the reasoning package's commands, contributed to the
``kga`` registry through the ``kg_adapters.commands`` entry point. Only the argument parsers are
imported with the CLI; the reasoning machinery is imported when a command runs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg_adapters import json_text
from kg_adapters.commands import Command, count
from kg_adapters.errors import InvalidTermError, KGError

if TYPE_CHECKING:
    from kg_adapters.base import KnowledgeGraph
    from reasoning.base import LLM, Reasoner


def parse_options(items: list[str] | None) -> dict[str, Any]:
    """``KEY=VALUE`` pairs; a value that parses as JSON (``3``, ``0.6``, ``true``) is taken as such."""
    options: dict[str, Any] = {}
    for item in items or []:
        key, sep, text = item.partition("=")
        if not sep or not key.isidentifier():
            raise InvalidTermError(f"--option takes KEY=VALUE, got {item!r}")
        try:
            options[key] = json_text.loads(text)
        except ValueError:
            options[key] = text
    return options


def cmd_reason(args: argparse.Namespace) -> int:
    from kg_adapters.registry import connect
    from reasoning.llm import make_llm
    from reasoning.registry import make_scorer, method_class
    from reasoning.runner import read_questions, run
    from reasoning.scope import check_question_graphs, questions_without_graph

    questions = read_questions(args.input)
    if args.limit is not None:
        questions = questions[: args.limit]
    method = method_class(args.method)
    scorer = make_scorer(args.scorer)
    options = parse_options(args.option)
    llm_options = {"cache": args.llm_cache} if args.llm_cache and args.llm != "none" else {}
    llm = make_llm(args.llm, **llm_options)

    def factory(kg: KnowledgeGraph, counted_llm: LLM | None) -> Reasoner:
        return method(kg, llm=counted_llm, scorer=scorer, **options)

    try:
        with connect(args.kg) as kg:
            try:
                factory(kg, llm)  # unknown options fail here, before any question is asked
            except TypeError as exc:
                print(f"kga: error: {exc}", file=sys.stderr)
                return 2
            if args.scope == "question":
                check_question_graphs(kg)
                missing = questions_without_graph(kg, [q.id for q in questions])
                if questions and len(missing) == len(questions):
                    print(
                        f"kga: error: none of the {len(questions)} questions of {args.input} has a subgraph in this "
                        "store: load that file into it (kga load FILE --format rog-dataset)",
                        file=sys.stderr,
                    )
                    return 2
                if missing:
                    print(
                        f"kga: {len(missing)} of {len(questions)} questions have no subgraph in this store (an empty "
                        f"graph in the file, or not loaded), answered on an empty graph: {', '.join(missing[:5])}"
                        + (" ..." if len(missing) > 5 else ""),
                        file=sys.stderr,
                    )
            try:
                report = run(
                    factory,
                    kg,
                    questions,
                    args.out,
                    llm=llm,
                    workers=args.workers,
                    progress=args.progress,
                    scope=args.scope,
                )
            except KeyboardInterrupt:
                return _interrupted(args)
    finally:
        close = getattr(llm, "close", None)
        if close is not None:
            close()
    if report.repaired_torn_line:
        print(f"kga: cut off a torn last line in {args.out} (its question is answered again)", file=sys.stderr)
    for question_id, message in report.errors[:10]:
        print(f"kga: question {question_id} failed: {message}", file=sys.stderr)
    summary = {
        "questions": report.questions,
        "skipped": report.skipped,
        "answered": report.answered,
        "failed": report.failed,
        "seconds": round(report.seconds, 3),
        "out": args.out,
    }
    print(json.dumps(summary))
    return 1 if report.failed else 0


def _interrupted(args: argparse.Namespace) -> int:
    """Ctrl-C during ``kga reason``: one line saying what was saved and how to resume (exit 130)."""
    from reasoning.runner import finished_ids

    try:
        saved = len(finished_ids(args.out)[0])
    except (KGError, OSError):
        saved = 0
    print(
        f"kga: error: interrupted; {saved} answered question(s) are saved in {args.out}; run the same command "
        "again to resume (answered questions are skipped)",
        file=sys.stderr,
    )
    return 130


def cmd_eval(args: argparse.Namespace) -> int:
    from reasoning.metrics import evaluate, read_jsonl, read_question_rows

    results = read_jsonl(args.results)
    questions = [row for _, row in read_question_rows(args.questions)] if args.questions else None
    evaluation = evaluate(results, questions)
    if args.json:
        print(json.dumps(evaluation.as_dict()))
    else:
        print("\n".join(evaluation.lines()))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from reasoning.demo import run_demo

    run_demo(Path(args.store), as_json=args.json)
    return 0


def demo_arguments(demo: argparse.ArgumentParser) -> None:
    demo.add_argument(
        "--store",
        default=".kga/demo-store",
        help="store directory, created from the bundled sample when absent (default: .kga/demo-store)",
    )


def reason_arguments(reason: argparse.ArgumentParser) -> None:
    reason.add_argument("--method", required=True, help="rog, r3, refkg, fidelis or tog")
    reason.add_argument(
        "--input", required=True, help="questions: JSONL (RoG format), or a RoG dataset file (.parquet or JSONL rows)"
    )
    reason.add_argument(
        "--scope",
        choices=["union", "question"],
        default="union",
        help="union: every question on the whole KG (default); question: each on its own subgraph, as RoG, "
        "GNN-RAG and SubgraphRAG do (a store loaded with kga load --format rog-dataset)",
    )
    reason.add_argument("--out", required=True, help="results JSONL (appended to; ids already there are skipped)")
    reason.add_argument("--llm", default="none", help="none (offline, scorer judgements) or openai:MODEL")
    reason.add_argument("--llm-cache", help="SQLite file caching LLM replies (default: none, nothing cached)")
    reason.add_argument("--scorer", default="bm25", help="bm25 (default) or minilm (needs the embeddings extra)")
    reason.add_argument("--workers", type=count(1), default=1, help="questions answered at once")
    reason.add_argument("--limit", type=count(), help="only the first N questions (default: all)")
    reason.add_argument(
        "--option", action="append", metavar="KEY=VALUE", help="method option (repeatable; default: the method's own)"
    )
    reason.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None, help="progress bar (default: on a TTY)"
    )


def eval_arguments(evaluate_parser: argparse.ArgumentParser) -> None:
    evaluate_parser.add_argument("results", help="results JSONL written by kga reason")
    evaluate_parser.add_argument(
        "--questions",
        help="questions JSONL or RoG dataset file (.parquet): gold answers and paths; counts missing results "
        "(default: each result's own ground_truth)",
    )


COMMANDS = [
    Command(
        name="demo",
        help="load the bundled FB15k-237 sample and answer questions by retrieval",
        arguments=demo_arguments,
        run=cmd_demo,
        kg=False,
    ),
    Command(
        name="reason",
        help="answer a questions file with a KGQA method (resumable)",
        arguments=reason_arguments,
        run=cmd_reason,
    ),
    Command(
        name="eval",
        help="Hits@1, F1, precision, recall (and path scores) of a results file",
        arguments=eval_arguments,
        run=cmd_eval,
        kg=False,
    ),
]
"""Registered as ``reasoning`` in the ``kg_adapters.commands`` entry-point group (pyproject.toml)."""
