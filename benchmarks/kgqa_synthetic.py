"""Synthetic KGQA, every registered method offline (``--llm none``), per scorer and per wording.

Questions are generated from the KG itself (:mod:`reasoning.synthetic`): a named topic entity, a relation
path of 1-3 hops walked forwards from it, as answers every entity the path reaches (1 to
``--max-answers``, spread over one / a few / many answers). Each question is worded twice: with the
relations' labels ("What is the place of birth of the spouse of X?") and as a person might say it, from
the paraphrase templates of ``benchmarks/data/wordings.json`` ("Where was the wife of X born?"; only
relations with templates are walked). The reasoners never see the templates.

Every method runs on both wordings with each scorer (``bm25``; ``minilm`` and ``hybrid``, the default
where the embeddings extra is installed), one worker; reports Hits@1 / F1 per method, scorer, wording and
hop count, and the cost per question: median seconds and KG calls, and the scorer's own time and texts
scored per question. The "rog (gold plans)" run gets the gold relation path as its plan and must reach
every answer (checked).

Run with ``OPENBLAS_NUM_THREADS=1``: on a shared machine numpy's threaded BLAS makes the encoder several
times slower.

    python -m benchmarks.kgqa_synthetic                     # the bundled FB15k-237 sample
    python -m benchmarks.kgqa_synthetic --graph fb15k237    # FB15k-237 (../shared/data)
    python -m benchmarks.kgqa_synthetic --graph wikidata    # FB15k-237's facts as a Wikidata-profile graph
    python -m benchmarks.kgqa_synthetic --hops 2 --per-hop 40 --label 2hop   # 40 two-hop questions
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import RESULTS_DIR, log, machine_info, markdown_table, median, source_fingerprint, write_results
from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph
from reasoning.base import LLM, Question, Reasoner, Scorer
from reasoning.errors import UnknownMethodError
from reasoning.metrics import evaluate, read_jsonl
from reasoning.registry import METHODS, make_scorer, method_class
from reasoning.runner import run
from reasoning.synthetic import generate, read_wordings

WORDINGS_FILE = Path(__file__).resolve().parent / "data" / "wordings.json"
WORDINGS = {"labels": "label_question", "natural": "natural_question"}


class TimedScorer:
    """A scorer that counts what it is asked: calls, texts and seconds (one worker, so no races)."""

    def __init__(self, scorer: Scorer) -> None:
        self.scorer = scorer
        self.calls = 0
        self.texts = 0
        self.seconds = 0.0
        self._lock = threading.Lock()

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        started = time.perf_counter()
        scores = self.scorer.score(query, texts)
        with self._lock:
            self.calls += 1
            self.texts += len(texts)
            self.seconds += time.perf_counter() - started
        return scores

    def __getattr__(self, name: str) -> Any:  # the scorer's calibration, if it has one
        return getattr(self.scorer, name)


def forget_embeddings() -> None:
    """Empties the process's shared embedding cache where the encoder is installed."""
    from kg_adapters.encoder import minilm_installed, shared_embeddings

    if minilm_installed():
        shared_embeddings().clear()


def open_graph(name: str, workdir: Path) -> str:
    """A KG URL for ``name``: the bundled sample, FB15k-237 or its Wikidata-profile recast, loaded into
    a store under ``workdir``."""
    from loaders import load_files
    from reasoning.demo import sample_path

    store = workdir / "store"
    if name == "sample":
        load_files([str(sample_path())], str(store), profile="freebase", progress=False)
        return f"oxigraph://{store}?profile=freebase"
    if name == "fb15k237":
        from benchmarks.wikidata_profile import FB15K237

        load_files([str(FB15K237)], str(store), profile="freebase", progress=False)
        return f"oxigraph://{store}?profile=freebase"
    from benchmarks.wikidata_profile import write_graph

    write_graph(workdir / "wikidata.nt")
    load_files([str(workdir / "wikidata.nt")], str(store), profile="wikidata", progress=False)
    return f"oxigraph://{store}?profile=wikidata"


def run_method(
    name: str,
    kg: KnowledgeGraph,
    lines: list[dict[str, Any]],
    workdir: Path,
    scorer: Scorer,
    tag: str,
) -> dict[str, Any]:
    """One method over the questions (``lines`` already worded); its metrics overall and per hop."""
    try:
        method = method_class(name)
    except UnknownMethodError as exc:
        return {"missing": str(exc)}
    timed = TimedScorer(scorer)

    def factory(graph: KnowledgeGraph, llm: LLM | None) -> Reasoner:
        return method(graph, llm=llm, scorer=timed)

    parsed = [Question.from_json(q) for q in lines]
    out = workdir / f"{name}-{tag}.jsonl"
    started = time.perf_counter()
    report = run(factory, kg, parsed, out, workers=1, progress=False)
    wall = time.perf_counter() - started
    results = read_jsonl(out)
    count = max(len(lines), 1)
    summary: dict[str, Any] = {
        "failed": report.failed,
        "errors": report.errors[:5],
        "wall_seconds": wall,
        "scorer_seconds_per_question": timed.seconds / count,
        "scorer_texts_per_question": timed.texts / count,
        "scorer_calls_per_question": timed.calls / count,
    }
    for hops in ("all", 1, 2, 3):
        chosen = [q for q in lines if hops == "all" or q["hops"] == hops]
        if not chosen:
            continue
        ids = {q["id"] for q in chosen}
        evaluation = evaluate([r for r in results if r["id"] in ids], chosen)
        summary[str(hops)] = {
            "questions": evaluation.questions,
            "hits1": evaluation.hits1,
            "f1": evaluation.f1,
            "recall": evaluation.recall,
            "path_coverage": evaluation.path_coverage,
            "median_kg_calls": evaluation.medians.get("kg_calls"),
            "median_seconds": evaluation.medians.get("seconds"),
        }
    return summary


def worded(questions: list[dict[str, Any]], wording: str) -> list[dict[str, Any]]:
    key = WORDINGS[wording]
    return [{**q, "question": q[key]} for q in questions]


def question_arguments(parser: argparse.ArgumentParser, *, per_hop: int, hops: str) -> None:
    """The options that say which questions are generated (``--graph``, ``--per-hop``, ``--hops``,
    ``--max-answers``, ``--pool``, ``--seed``): benchmarks that must ask the same questions share them."""
    parser.add_argument("--graph", choices=["sample", "fb15k237", "wikidata"], default="sample")
    parser.add_argument("--per-hop", type=int, default=per_hop)
    parser.add_argument("--hops", default=hops, help="hop counts to generate questions for (comma-separated)")
    parser.add_argument("--max-answers", type=int, default=10)
    parser.add_argument("--pool", type=int, default=20_000, help="topic entities to sample from")
    parser.add_argument("--seed", type=int, default=7)


def generated(kg: KnowledgeGraph, args: argparse.Namespace) -> list[dict[str, Any]]:
    """The questions :func:`question_arguments`' options ask for, each worded twice."""
    return generate(
        kg,
        per_hop=args.per_hop,
        hops=tuple(int(h) for h in args.hops.split(",") if h),
        max_answers=args.max_answers,
        seed=args.seed,
        pool=args.pool,
        wordings=read_wordings(WORDINGS_FILE),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    question_arguments(parser, per_hop=30, hops="1,2,3")
    parser.add_argument("--scorers", default="bm25,minilm,hybrid")
    parser.add_argument("--wordings", default="labels,natural")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--label", help="suffix of the result files (default: the graph's name; none for sample)")
    args = parser.parse_args()
    label = args.label if args.label is not None else ("" if args.graph == "sample" else args.graph)
    methods = [m for m in args.methods.split(",") if m]
    wordings = [w for w in args.wordings.split(",") if w]
    load_start = os.getloadavg()

    runs: dict[str, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="kgqa-synthetic-") as tmp:
        workdir = Path(tmp)
        url = open_graph(args.graph, workdir)
        with connect(url) as kg:
            questions = generated(kg, args)
            log(f"{len(questions)} questions on {args.graph}")
            gold = [{**q, "plans": q["gold_paths"]} for q in worded(questions, "labels")]
            runs["gold"] = {"labels": run_method("rog", kg, gold, workdir, make_scorer("bm25"), "gold")}
            for scorer_name in [s for s in args.scorers.split(",") if s]:
                forget_embeddings()  # each scorer's cost from a cold start, not from the previous one's cache
                scorer = make_scorer(scorer_name)
                for wording in wordings:
                    for method in methods:
                        log(f"{args.graph}: {method} / {scorer_name} / {wording}")
                        summary = run_method(
                            method, kg, worded(questions, wording), workdir, scorer, f"{scorer_name}-{wording}"
                        )
                        runs.setdefault(f"{method}|{scorer_name}", {})[wording] = summary
    gold_recall = runs["gold"]["labels"].get("all", {}).get("recall")
    assert gold_recall == 1.0, f"RoG with gold plans must reach every answer: {runs['gold']}"

    suffix = f"_{label}" if label else ""
    (RESULTS_DIR / f"kgqa_synthetic{suffix}_questions.jsonl").write_text(
        "".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8"
    )
    load = (load_start, os.getloadavg())
    markdown = report_markdown(args, questions, runs, methods, wordings, load)
    print(markdown)
    write_results(
        f"kgqa_synthetic{suffix}",
        {
            "graph": args.graph,
            "questions": len(questions),
            "per_hop": {h: sum(1 for q in questions if q["hops"] == h) for h in (1, 2, 3)},
            "answers": answer_counts(questions),
            "seed": args.seed,
            "runs": runs,
            "load_average": {"start": load[0], "end": load[1]},
            "source": source_fingerprint("kg_adapters", "reasoning"),
            "machine": machine_info(),
        },
        markdown,
    )


def answer_counts(questions: list[dict[str, Any]]) -> dict[str, int]:
    buckets = {"1": 0, "2-3": 0, "4+": 0}
    for q in questions:
        n = len(q["a_entity"])
        buckets["1" if n == 1 else "2-3" if n <= 3 else "4+"] += 1
    return buckets


def _fmt(value: float | None, pattern: str = "{:.2f}") -> str:
    return "n/a" if value is None else pattern.format(value)


def report_markdown(
    args: argparse.Namespace,
    questions: list[dict[str, Any]],
    runs: dict[str, dict[str, dict[str, Any]]],
    methods: list[str],
    wordings: list[str],
    load: tuple[tuple[float, float, float], tuple[float, float, float]],
) -> str:
    scorers = list(dict.fromkeys(key.split("|")[1] for key in runs if "|" in key))
    counts = {h: sum(1 for q in questions if q["hops"] == h) for h in (1, 2, 3)}
    answers = answer_counts(questions)
    source = {
        "sample": "the bundled FB15k-237 sample",
        "fb15k237": "FB15k-237",
        "wikidata": "FB15k-237 as a Wikidata-profile graph",
    }[args.graph]

    def hits(key: str, wording: str, hops: str) -> str:
        summary = runs.get(key, {}).get(wording, {})
        if "missing" in summary:
            return "missing"
        return _fmt(summary.get(hops, {}).get("hits1"))

    def hits_table(hops: str) -> str:
        rows = [
            [scorer, wording, *(hits(f"{m}|{scorer}", wording, hops) for m in methods)]
            for scorer in scorers
            for wording in wordings
        ]
        return markdown_table(["scorer", "wording", *methods], rows)

    detail = []
    for scorer in scorers:
        for wording in wordings:
            for method in methods:
                summary = runs.get(f"{method}|{scorer}", {}).get(wording, {})
                if "all" not in summary:
                    continue
                by_hop = " / ".join(hits(f"{method}|{scorer}", wording, h) for h in ("1", "2", "3"))
                s = summary["all"]
                detail.append(
                    [
                        method,
                        scorer,
                        wording,
                        f"{s['hits1']:.3f}",
                        by_hop,
                        f"{s['f1']:.3f}",
                        _fmt(s["path_coverage"]),
                        _fmt(s["median_kg_calls"], "{:g}"),
                        _fmt(s["median_seconds"] and s["median_seconds"] * 1e3, "{:.1f}"),
                        f"{summary['scorer_seconds_per_question'] * 1e3:.1f}",
                        f"{summary['scorer_texts_per_question']:.0f}",
                    ]
                )
    cost = []
    for scorer in scorers:
        per_method = [
            runs[f"{m}|{scorer}"][w]
            for m in methods
            for w in wordings
            if "all" in runs.get(f"{m}|{scorer}", {}).get(w, {})
        ]
        if per_method:
            cost.append(
                [
                    scorer,
                    f"{median([s['all']['median_seconds'] for s in per_method]) * 1e3:.1f}",
                    f"{median([s['scorer_seconds_per_question'] for s in per_method]) * 1e3:.1f}",
                    f"{median([s['scorer_texts_per_question'] for s in per_method]):.0f}",
                ]
            )
    gold = runs["gold"]["labels"]["all"]
    return "\n".join(
        [
            f"# Synthetic KGQA on {source}: every method offline, per scorer and wording",
            "",
            f"{len(questions)} generated questions (1/2/3 hops: {counts[1]}/{counts[2]}/{counts[3]}; answers 1 / 2-3 / "
            f"4-{args.max_answers}: {answers['1']}/{answers['2-3']}/{answers['4+']}), seed {args.seed}, "
            "each worded with the relations' labels and naturally (benchmarks/data/wordings.json). "
            "One worker; medians per question. "
            f"Load average {load[0][0]:.1f} at the start, {load[1][0]:.1f} at the end (2 cores shared).",
            "",
            "Hits@1, all hops:",
            "",
            hits_table("all"),
            "",
            "Hits@1, two-hop questions only:",
            "",
            hits_table("2"),
            "",
            "Per method (Hits@1 by hops 1 / 2 / 3; time and the scorer's share are medians / means per question):",
            "",
            markdown_table(
                [
                    "method",
                    "scorer",
                    "wording",
                    "Hits@1",
                    "by hops",
                    "F1",
                    "path coverage",
                    "KG calls",
                    "ms",
                    "scorer ms",
                    "texts scored",
                ],
                detail,
            ),
            "",
            "Cost per question of each scorer (medians over the methods and wordings above):",
            "",
            markdown_table(["scorer", "ms per question", "scorer ms per question", "texts scored per question"], cost),
            "",
            f"RoG with the gold relation paths as plans: Hits@1 {gold['hits1']:.3f}, "
            f"recall {gold['recall']:.3f} (must be 1).",
        ]
    )


if __name__ == "__main__":
    main()
