"""Synthetic KGQA over any store: every registered reasoning method, offline (``--llm none``).

Questions are generated from the KG itself: a topic entity with a name, a relation path of 1-3
hops walked forward from it (``out`` edges, a profile's name/description predicates excluded), the
answers every entity that path reaches (1 to ``--max-answers`` of them, the topic never among
them), and a template text made of the relations' most specific words ("What is the country of the
place of birth of Tom Hanks?"). The gold relation path goes in ``gold_paths``; the "rog (gold
plans)" run gets it as ``plans`` too, and must reach every answer (recall 1.0, checked).

Reports Hits@1 / F1 / recall per method and hop count, path coverage (the gold relation path among
the cited paths), and the medians of KG calls and seconds per question, written to
``benchmarks/results/kgqa_synthetic[_LABEL].{json,md}``. A method whose module is not there yet is
reported as missing. The templates reuse the relations' own words, so a lexical scorer has an
easier job than on real questions: these figures measure the retrieval loops, not language skill.

    python -m benchmarks.kgqa_synthetic                       # the bundled FB15k-237 sample
    python -m benchmarks.kgqa_synthetic --data ../shared/data/fb15k237-freebase.nt.gz --label fb15k237
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import RESULTS_DIR, machine_info, markdown_table, source_fingerprint, write_results
from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph, SparqlQueryable
from reasoning.base import LLM, Question, Reasoner
from reasoning.errors import UnknownMethodError
from reasoning.metrics import evaluate, read_jsonl
from reasoning.registry import METHODS, make_scorer, method_class
from reasoning.runner import run
from reasoning.text import relation_tail, schema_relations


def topic_pool(kg: KnowledgeGraph, size: int) -> list[str]:
    """Entities with at least one edge to another entity (first ``size`` the store lists)."""
    if not isinstance(kg, SparqlQueryable):
        raise SystemExit("question generation samples topic entities with SPARQL; this KG has no query()")
    rows = kg.query(f"SELECT DISTINCT ?s WHERE {{ ?s ?p ?o FILTER(isIRI(?s) && isIRI(?o)) }} LIMIT {int(size)}")
    profile = kg.profile
    return sorted({profile.entity_id(row["s"]) for row in rows if isinstance(row["s"], str)})


def question_text(relations: Sequence[str], name: str) -> str:
    words = [relation_tail(relation) for relation in reversed(relations)]
    return "What is the " + " of the ".join(words) + f" of {name}?"


def generate(kg: KnowledgeGraph, *, per_hop: int, max_answers: int, seed: int, pool: int) -> list[dict[str, Any]]:
    """``per_hop`` questions for each of 1, 2 and 3 hops (fewer when the KG runs out of walks)."""
    rng = random.Random(seed)
    topics = topic_pool(kg, pool)
    rng.shuffle(topics)
    names = {}
    for start in range(0, len(topics), 500):
        names.update(kg.labels(topics[start : start + 500]))
    topics = [t for t in topics if t in names]
    schema = schema_relations(kg)
    questions: list[dict[str, Any]] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    for hops in (1, 2, 3):
        made, attempts = 0, 0
        while made < per_hop and attempts < 40 * per_hop:
            attempts += 1
            topic = topics[rng.randrange(len(topics))]
            relations: list[str] = []
            node = topic
            for _ in range(hops):
                edges = [
                    e
                    for e in kg.neighbors(node, direction="out", literals=False).get(node, [])
                    if e.relation not in schema and isinstance(e.tail, str)
                ]
                if not edges:
                    break
                edge = edges[rng.randrange(len(edges))]
                relations.append(edge.relation)
                assert isinstance(edge.tail, str)
                node = edge.tail
            if len(relations) < hops or (topic, tuple(relations)) in seen:
                continue
            found = kg.paths(topic, relations, max_paths=10_000)
            answers = sorted({p.end for p in found if isinstance(p.end, str) and p.end != topic})
            if found.truncated or not 1 <= len(answers) <= max_answers:
                continue
            seen.add((topic, tuple(relations)))
            questions.append(
                {
                    "id": f"h{hops}-{made:03d}",
                    "question": question_text(relations, names[topic]),
                    "q_entity": [topic],
                    "a_entity": answers,
                    "gold_paths": [relations],
                    "hops": hops,
                }
            )
            made += 1
    return questions


def run_method(
    name: str, kg: KnowledgeGraph, questions: list[dict[str, Any]], workdir: Path, *, gold_plans: bool
) -> dict[str, Any]:
    """Runs one method over the questions; its metrics overall and per hop count."""
    try:
        method = method_class(name)
    except UnknownMethodError as exc:
        return {"missing": str(exc)}
    scorer = make_scorer("bm25")

    def factory(graph: KnowledgeGraph, llm: LLM | None) -> Reasoner:
        return method(graph, llm=llm, scorer=scorer)

    lines = [{**q, "plans": q["gold_paths"]} if gold_plans else q for q in questions]
    parsed = [Question.from_json(q) for q in lines]
    out = workdir / f"{name}{'-gold' if gold_plans else ''}.jsonl"
    started = time.perf_counter()
    report = run(factory, kg, parsed, out, workers=1, progress=False)
    wall = time.perf_counter() - started
    results = read_jsonl(out)
    summary: dict[str, Any] = {"failed": report.failed, "errors": report.errors[:5], "wall_seconds": wall}
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
            "precision": evaluation.precision,
            "recall": evaluation.recall,
            "path_coverage": evaluation.path_coverage,
            "median_kg_calls": evaluation.medians.get("kg_calls"),
            "median_seconds": evaluation.medians.get("seconds"),
        }
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kg", help="KG URL (default: the bundled sample, loaded into a temporary store)")
    parser.add_argument("--data", help="an RDF dump to load into a temporary store instead (freebase profile)")
    parser.add_argument("--label", default="", help="suffix of the result files")
    parser.add_argument("--per-hop", type=int, default=30)
    parser.add_argument("--max-answers", type=int, default=10)
    parser.add_argument("--pool", type=int, default=20_000, help="topic entities to sample from")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="kgqa-synthetic-") as tmp:
        workdir = Path(tmp)
        url = args.kg
        if url is None:
            from loaders import load_files
            from reasoning.demo import sample_path

            load_files([args.data or str(sample_path())], str(workdir / "store"), profile="freebase")
            url = f"oxigraph://{workdir / 'store'}?profile=freebase"
        with connect(url) as kg:
            questions = generate(kg, per_hop=args.per_hop, max_answers=args.max_answers, seed=args.seed, pool=args.pool)
            runs: dict[str, dict[str, Any]] = {}
            for name in METHODS:
                runs[name] = run_method(name, kg, questions, workdir, gold_plans=False)
            runs["rog (gold plans)"] = run_method("rog", kg, questions, workdir, gold_plans=True)
    gold = runs["rog (gold plans)"].get("all", {})
    assert gold.get("recall") == 1.0, f"RoG with gold plans must reach every answer: {gold}"

    suffix = f"_{args.label}" if args.label else ""
    (RESULTS_DIR / f"kgqa_synthetic{suffix}_questions.jsonl").write_text(
        "".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8"
    )
    markdown = report_markdown(args, questions, runs)
    print(markdown)
    write_results(
        f"kgqa_synthetic{suffix}",
        {
            "kg": args.kg or args.data or "bundled fb15k237 sample",
            "questions": len(questions),
            "per_hop": {h: sum(1 for q in questions if q["hops"] == h) for h in (1, 2, 3)},
            "seed": args.seed,
            "runs": runs,
            "source": source_fingerprint("kg_adapters", "reasoning"),
            "machine": machine_info(),
        },
        markdown,
    )


def report_markdown(args: argparse.Namespace, questions: list[dict[str, Any]], runs: dict[str, Any]) -> str:
    rows = []
    for name, summary in runs.items():
        if "missing" in summary:
            rows.append([name, "missing", "", "", "", "", "", ""])
            continue
        for hops in ("all", "1", "2", "3"):
            if hops not in summary:
                continue
            s = summary[hops]
            coverage = "n/a" if s["path_coverage"] is None else f"{s['path_coverage']:.2f}"
            seconds = s["median_seconds"]
            rows.append(
                [
                    name if hops == "all" else "",
                    f"{hops} ({s['questions']})",
                    f"{s['hits1']:.3f}",
                    f"{s['f1']:.3f}",
                    f"{s['recall']:.3f}",
                    coverage,
                    f"{s['median_kg_calls']:g}" if s["median_kg_calls"] is not None else "n/a",
                    f"{seconds * 1e3:.1f}" if seconds is not None else "n/a",
                ]
            )
    counts = {h: sum(1 for q in questions if q["hops"] == h) for h in (1, 2, 3)}
    source = args.kg or args.data or "the bundled FB15k-237 sample"
    return "\n".join(
        [
            "# Synthetic KGQA, every method offline (--llm none, BM25 scorer)",
            "",
            f"KG: {source}. {len(questions)} generated questions (1/2/3 hops: {counts[1]}/{counts[2]}/{counts[3]}), "
            f"seed {args.seed}, at most {args.max_answers} answers each. Medians per question; one worker.",
            "",
            markdown_table(["method", "hops (n)", "Hits@1", "F1", "recall", "path coverage", "KG calls", "ms"], rows),
        ]
    )


if __name__ == "__main__":
    main()
