"""Read throughput with 1, 2 and 4 reader processes on one on-disk store, with and without a load running.

Run from the repository root::

    .venv/bin/python -m benchmarks.concurrency [--size 1M] [--runs 3]

The store and the query sets are the scale benchmark's (``benchmarks/scale.py``; built on first use in
``.kga/bench/scale/``). Each reader is a separate process that opens the store read-only, waits at a
barrier, then answers the whole mixed query set (neighbors, 2-/3-hop paths, shortest paths, 2-hop
subgraphs: 450 queries) starting at a different offset. Throughput is all readers' queries divided by
the time from the barrier to the last reader's finish; the median of ``--runs`` runs is reported, and
the speed-up relative to one reader in the same run set. Then the reasoner with 1, 2 and 4 workers
(``reasoning.runner.run``, what ``kga reason --workers N`` runs) on synthetic questions over the store.

"with a load" runs the same readers while another process appends a 100k-triple file to the same store
(``loaders.load_files``, swapping in a new version mid-run): readers keep their snapshot (see
``kg_adapters/store_layout.py``); every reader's answer count is checked against the single-reader run.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import common, scale

NAME = "concurrency"
READER_COUNTS = (1, 2, 4)


def reader(store: str, queries: str, offset: int, barrier: Any, results: Any) -> None:
    from benchmarks.bfs_vs_networkx import open_store

    kg = open_store(store)
    runner = scale.kg_runner(kg)
    sets = scale.read_query_sets(queries)
    work = [(kind, q) for kind in scale.KINDS for q in sets[kind]]
    work = work[offset % len(work) :] + work[: offset % len(work)]
    barrier.wait()
    answers = sum(scale.size_of(runner[kind](q)) for kind, q in work)
    results.put((time.perf_counter(), len(work), answers))
    kg.close()


def loader(data: str, store: str, barrier: Any, results: Any) -> None:
    from loaders import load_files

    barrier.wait()
    report = load_files([data], store, profile="freebase", progress=False)
    results.put(("load", time.perf_counter(), report.seconds))


def one_run(store: Path, queries: Path, readers: int, append: Path | None) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    parties = readers + 1 + (append is not None)
    barrier, results = ctx.Barrier(parties), ctx.Queue()
    procs = [
        ctx.Process(target=reader, args=(str(store), str(queries), i * 97, barrier, results)) for i in range(readers)
    ]
    if append is not None:
        procs.append(ctx.Process(target=loader, args=(str(append), str(store), barrier, results)))
    for proc in procs:
        proc.start()
    barrier.wait()
    started = time.perf_counter()
    finished = [results.get(timeout=3600) for _ in procs]
    for proc in procs:
        proc.join(timeout=600)
        if proc.exitcode != 0:
            raise RuntimeError(f"a benchmark process failed with exit code {proc.exitcode}")
    reads = [r for r in finished if r[0] != "load"]
    end = max(r[0] for r in reads)
    queries_done = sum(r[1] for r in reads)
    out = {
        "readers": readers,
        "seconds": end - started,
        "queries": queries_done,
        "queries_per_second": queries_done / (end - started),
        "answers": sorted({r[2] for r in reads}),
    }
    loads = [r for r in finished if r[0] == "load"]
    if loads:
        out["load_seconds"] = loads[0][2]
    return out


def append_file(workdir: Path) -> Path:
    """100k triples for the appending loader: new CVT-free edges between fresh ids (deterministic)."""
    import gzip

    path = workdir / "append-100K.nt.gz"
    if not path.is_file():
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as out:
            ns = "http://rdf.freebase.com/ns/"
            out.writelines(
                f"<{ns}m.0zz{i:06d}> <{ns}bench.append.next> <{ns}m.0zz{i + 1:06d}> .\n" for i in range(100_000)
            )
    return path


def reasoner_throughput(store: Path, runs: int, method: str = "rog") -> dict[str, Any]:
    """``kga reason --workers N`` (``reasoning.runner.run``: N threads sharing one store) on synthetic
    questions generated from the store (``benchmarks.kgqa_synthetic``), offline (no LLM): questions/s."""
    import tempfile

    from benchmarks.bfs_vs_networkx import open_store
    from benchmarks.kgqa_synthetic import generate
    from reasoning.base import Question
    from reasoning.registry import make_scorer, method_class
    from reasoning.runner import run

    kg = open_store(str(store))
    questions = [Question.from_json(q) for q in generate(kg, per_hop=20, max_answers=5, seed=7, pool=2000)]
    cls, scorer = method_class(method), make_scorer("bm25")
    figures: dict[str, Any] = {"method": method, "questions": len(questions)}
    with tempfile.TemporaryDirectory() as tmp:
        for workers in READER_COUNTS:
            rates = []
            for i in range(runs):
                out = Path(tmp) / f"{workers}-{i}.jsonl"
                started = time.perf_counter()
                run(
                    lambda graph, llm: cls(graph, llm=llm, scorer=scorer),
                    kg,
                    questions,
                    out,
                    workers=workers,
                    progress=False,
                )
                rates.append(len(questions) / (time.perf_counter() - started))
            figures[str(workers)] = common.median(rates)
            scale.log(f"reasoner {method} workers={workers}: {figures[str(workers)]:.1f} questions/s")
    kg.close()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.concurrency", description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="1M")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workdir", default=str(scale.WORKDIR))
    args = parser.parse_args(argv)
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    triples = scale.parse_size(args.size)
    data, queries = scale.ensure_data(triples, workdir)
    store = workdir / f"concurrency-{scale.size_label(triples)}"
    shutil.rmtree(store, ignore_errors=True)
    scale.log(f"loading {data.name} into {store}")
    common.run_child(scale.MODULE, ["--child", "load", "--data", str(data), "--store", str(store)], timeout=7200)
    extra = append_file(workdir)
    load_before = os.getloadavg()

    results: dict[str, list[dict[str, Any]]] = {}
    for mode in ("idle", "with a load"):
        for readers in READER_COUNTS:
            key = f"{mode}/{readers}"
            results[key] = []
            for run in range(args.runs):
                outcome = one_run(store, queries, readers, extra if mode != "idle" else None)
                results[key].append(outcome)
                scale.log(f"{key} run {run + 1}: {outcome['queries_per_second']:.1f} queries/s")
    reasoner = reasoner_throughput(store, args.runs)
    reference = results["idle/1"][0]["answers"]
    consistent = all(r["answers"] == reference for runs in results.values() for r in runs)
    shutil.rmtree(store, ignore_errors=True)

    summary = {}
    for key, runs in results.items():
        qps = common.median([r["queries_per_second"] for r in runs])
        summary[key] = {"median_queries_per_second": qps}
    for key, entry in summary.items():
        mode = key.split("/")[0]
        entry["speedup_vs_1"] = common.ratio(
            entry["median_queries_per_second"], summary[f"{mode}/1"]["median_queries_per_second"]
        )
    data_out = {
        "benchmark": NAME,
        "machine": common.machine_info(),
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "config": {"size": args.size, "runs": args.runs, "queries_per_reader": results["idle/1"][0]["queries"]},
        "answers_identical_in_every_reader": consistent,
        "runs": results,
        "summary": summary,
        "reasoner": reasoner,
    }
    rows = [
        [
            key.split("/")[0],
            key.split("/")[1],
            f"{entry['median_queries_per_second']:.1f}",
            common.fmt_ratio(entry["speedup_vs_1"]),
        ]
        for key, entry in summary.items()
    ]
    markdown = "\n".join(
        [
            "# Read throughput with concurrent reader processes",
            "",
            f"`python -m benchmarks.concurrency`; store of the scale benchmark's {args.size} graph; each reader "
            f"answers {data_out['config']['queries_per_reader']} mixed queries; medians of {args.runs} runs; "
            f"{data_out['machine']['cpu_usable']} usable cores shared with other engineers (load average "
            f"{load_before[0]:.1f} before, {data_out['load_average_after'][0]:.1f} after).",
            "",
            common.markdown_table(["mode", "reader processes", "queries/s (median)", "vs 1 reader"], rows),
            "",
            f'Every reader returned the same answers as the single idle reader: {consistent}. "with a load": '
            "another process appends 100k triples to the same store during the run, swapping in a new version; "
            "readers keep the version they opened.",
            "",
            f"Reasoner: `kga reason --method {reasoner['method']} --llm none --workers N` (threads sharing one "
            f"store) on {reasoner['questions']} synthetic questions from the store: "
            + ", ".join(f"{n} worker(s) {reasoner[str(n)]:.1f} questions/s" for n in READER_COUNTS)
            + ". Offline the work is Python under one GIL, so threads do not add throughput; they overlap "
            "waiting when an LLM or a remote endpoint is in the loop.",
        ]
    )
    common.write_results(NAME, data_out, markdown)
    print(markdown)
    return 0 if consistent else 1


if __name__ == "__main__":
    sys.exit(main())
