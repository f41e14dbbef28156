"""``kga dataset build`` at work: 1,000 questions over FB15k-237 and over the 1M synthetic Freebase graph.

Run from the repository root, one graph per run (each well under an hour), under the shared lock::

    flock /work/team/heavy.lock .venv/bin/python -m benchmarks.dataset_build --graph fb15k237
    flock /work/team/heavy.lock .venv/bin/python -m benchmarks.dataset_build --graph synth-1M

Questions: generated from each graph by :func:`loaders.testing.questions.generate_questions` (seeded: a named
topic entity, a 1- or 2-hop relation path walked forward from it, its 1-20 end entities as answers; half
1-hop, half 2-hop), the same file for every side. Sides, all in this one process, one after the other:

* ``store``: ``build_dataset`` over the embedded store (``oxigraph://``, traversal index), one worker, and
  again with two worker processes;
* ``virtuoso``: the same over a real Virtuoso (bulk-loaded with ``ld_add``), through our SPARQL backend;
  its output must be byte-identical to the store's (checked, reported);
* ``networkx`` (the baseline): RoG's own functions over the whole graph in memory: ``build_graph`` (an
  ``nx.Graph`` of every triple the profile shows, as RoG builds one per question), then per question the
  ``hops``-hop neighbourhood (``single_source_shortest_path_length`` with a cutoff, induced subgraph),
  ``nx.pagerank`` personalised to the topic entities with GraftNet's restart (``alpha = 1 - 0.8``), the top
  ``max_nodes`` nodes and RoG's ``get_truth_paths`` on what is left. Building the graph is timed apart.
  It takes seconds per question, so it answers ``--baseline-questions`` of them (half 1-hop, half 2-hop),
  and the store builds those same questions again for the ratio (``store on baseline questions``).

Reported per side: questions/s (the build's own wall time; the store/Virtuoso figure includes checking the
input, names and writing the file), answer coverage (rows whose graph holds an answer, over questions with
answers, per hop count), triples per question (median and mean), rows cut by a budget; ratios against the
baseline from this one run, with the load average beside them. Also the coverage-vs-size curve of our
selection (the answer's rank under the same PageRank), per hop count, for ``--sizes``. Results:
``benchmarks/results/dataset_build.{json,md}`` (one section per graph; a run replaces its graph's section).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from benchmarks import common
from kg_adapters import connect
from loaders import load_files
from loaders.dataset_build import build_dataset, read_output
from loaders.dataset_rows import (
    DEFAULT_MAX_NODES,
    RESTART,
    QuestionInput,
    Settings,
    personalized_pagerank,
    walk_questions,
)
from loaders.testing.questions import generate_questions

NAME = "dataset_build"
WORKDIR = common.REPO_ROOT / ".kga" / "bench" / NAME
SCALE_WORKDIR = common.REPO_ROOT / ".kga" / "bench" / "scale"
FB15K = common.REPO_ROOT.parent / "shared" / "data" / "fb15k237-freebase.nt.gz"
GRAPHS = ("fb15k237", "synth-1M")
SEED = 20261124
SIZES = (50, 100, 200, 500, 1000, 2000, 5000)
TARGET_COVERAGE = 0.9
FREEBASE_NS = "http://rdf.freebase.com/ns/"


def log(message: str) -> None:
    common.log(f"[{NAME} {time.strftime('%H:%M:%S')}] {message}")


# -- data ---------------------------------------------------------------------------------------------


def dump_of(graph: str) -> Path:
    if graph == "fb15k237":
        return FB15K
    from benchmarks.scale import ensure_data

    data, _ = ensure_data(1_000_000, SCALE_WORKDIR)
    return data


def store_of(graph: str, dump: Path, workdir: Path) -> Path:
    """The store of ``graph``: the scale benchmark's own 1M store when it has one, else loaded here."""
    if graph == "synth-1M" and (SCALE_WORKDIR / "store-1M" / "kga-store.json").is_file():
        return SCALE_WORKDIR / "store-1M"
    store = workdir / f"store-{graph}"
    if not (store / "kga-store.json").is_file():
        shutil.rmtree(store, ignore_errors=True)
        log(f"loading {dump.name} into {store}")
        load_files([str(dump)], str(store), profile="freebase", progress=False)
    return store


def questions_of(graph: str, url: str, workdir: Path, count: int) -> Path:
    path = workdir / f"questions-{graph}-{count}.jsonl"
    if not path.is_file():
        with connect(url) as kg:
            questions = generate_questions(kg, count, hops=(1, 2), seed=SEED)
        path.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions), "utf-8")
    return path


def read_questions(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


# -- our build ----------------------------------------------------------------------------------------


def run_build(url: str, questions: Path, out: Path, **options: Any) -> dict[str, Any]:
    """One timed ``build_dataset`` run and the figures of the file it wrote."""
    out.unlink(missing_ok=True)
    started = time.perf_counter()
    report = build_dataset(url, questions, out, progress=False, **options)
    seconds = time.perf_counter() - started
    hops = {q["id"]: q["hops"] for q in read_questions(questions)}
    covered: dict[int, list[bool]] = {1: [], 2: []}
    triples = []
    for row in read_output(out):
        triples.append(len(row["graph"]))
        if row["a_entity"]:
            present = {node for h, _, t in row["graph"] for node in (h, t)}
            covered[hops[row["id"]]].append(any(a in present for a in row["a_entity"]))
    return {
        "seconds": seconds,
        "questions": report.rows,
        "questions_per_second": report.rows / seconds,
        "coverage": report.coverage,
        "coverage_by_hops": {str(h): sum(c) / len(c) for h, c in covered.items() if c},
        "triples_median": common.median([float(t) for t in triples]),
        "triples_mean": sum(triples) / len(triples),
        "truncated": report.truncated,
        "with_ground_paths": report.with_ground_paths,
        "sha256": hashlib.sha256(out.read_bytes()).hexdigest(),
    }


def coverage_curve(url: str, questions: list[dict[str, Any]], sizes: Sequence[int]) -> dict[str, Any]:
    """Coverage at each size, per hop count: an answer is in the written graph at size k when it and one
    of its walked neighbours are among the k best-ranked nodes (ranked as ``prune`` ranks them)."""
    import numpy as np

    inputs = [
        QuestionInput(id=q["id"], question=q["question"], q_entity=tuple(q["q_entity"]), a_entity=tuple(q["a_entity"]))
        for q in questions
    ]
    hops = {q["id"]: q["hops"] for q in questions}
    needed: dict[int, list[float]] = {1: [], 2: []}  # per question: the size from which an answer is in
    with connect(url) as kg:
        for start in range(0, len(inputs), 32):
            for walked in walk_questions(kg, inputs[start : start + 32], Settings()):
                seeds = walked.question.q_entity
                nodes, scores = personalized_pagerank(walked.edges, seeds)
                topic = np.fromiter((node not in seeds for node in nodes), dtype=bool, count=len(nodes))
                order = np.lexsort((np.arange(len(nodes)), -np.round(scores, 12), topic)).tolist()
                rank = {nodes[index]: position for position, index in enumerate(order)}
                best = float("inf")
                answers = set(walked.question.a_entity)
                for edge in walked.edges:
                    for node, other in ((edge.head, edge.tail), (edge.tail, edge.head)):
                        if node in answers:
                            best = min(best, max(rank[node], rank[other]) + 1)
                needed[hops[walked.question.id]].append(best)
    return {
        str(h): {str(k): sum(n <= k for n in values) / len(values) for k in sizes}
        for h, values in needed.items()
        if values
    }


# -- the baseline: RoG's networkx functions (kg_adapters.testing.rog_original) over the whole graph ------


def triples_of(dump: Path) -> Iterator[tuple[str, str, str]]:
    """The dump's triples the Freebase profile shows (names and the hidden namespaces left out), in
    compact ids; a literal as its text, as RoG's files write it."""
    from kg_adapters.profiles.freebase import FREEBASE_RELATION_FILTER

    with gzip.open(dump, "rt", encoding="utf-8") as handle:
        for line in handle:
            head, relation, rest = line.rstrip(" .\n").split(" ", 2)
            relation = relation[1:-1].removeprefix(FREEBASE_NS)
            if not FREEBASE_RELATION_FILTER.keeps(relation):
                continue
            if rest.startswith("<"):
                tail = rest[1:-1].removeprefix(FREEBASE_NS)
            else:
                tail = json.loads(rest[: rest.rindex('"') + 1])
            yield head[1:-1].removeprefix(FREEBASE_NS), relation, tail


def networkx_side(graph: Any, questions: list[dict[str, Any]], hops: int, max_nodes: int) -> dict[str, Any]:
    import networkx as nx

    from kg_adapters.testing import rog_original

    started = time.perf_counter()
    covered: dict[int, list[bool]] = {1: [], 2: []}
    triples: list[int] = []
    with_paths = 0
    for question in questions:
        seeds = [q for q in question["q_entity"] if q in graph]
        around: set[Any] = set()
        for seed in seeds:
            around.update(nx.single_source_shortest_path_length(graph, seed, cutoff=hops))
        neighbourhood = graph.subgraph(around)
        scores = nx.pagerank(neighbourhood, alpha=1 - RESTART, personalization=dict.fromkeys(seeds, 1.0))
        top = sorted(scores, key=lambda node: (node not in seeds, -scores[node], str(node)))[:max_nodes]
        kept = neighbourhood.subgraph(top)
        paths = rog_original.get_truth_paths(seeds, question["a_entity"], kept)
        with_paths += bool(paths)
        triples.append(kept.number_of_edges())
        present = {node for node in kept.nodes if kept.degree(node) > 0}
        covered[question["hops"]].append(any(a in present for a in question["a_entity"]))
    seconds = time.perf_counter() - started
    flat = [c for values in covered.values() for c in values]
    return {
        "seconds": seconds,
        "questions": len(questions),
        "questions_per_second": len(questions) / seconds,
        "coverage": sum(flat) / len(flat),
        "coverage_by_hops": {str(h): sum(c) / len(c) for h, c in covered.items() if c},
        "triples_median": common.median([float(t) for t in triples]),
        "triples_mean": sum(triples) / len(triples),
        "with_ground_paths": with_paths,
    }


# -- one graph ----------------------------------------------------------------------------------------


def measure(graph: str, args: argparse.Namespace) -> dict[str, Any]:
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    dump = dump_of(graph)
    store = store_of(graph, dump, workdir)
    store_url = f"oxigraph://{store}?profile=freebase"
    questions_path = questions_of(graph, store_url, workdir, args.questions)
    questions = read_questions(questions_path)
    log(f"{graph}: {len(questions)} questions ({sum(q['hops'] == 2 for q in questions)} with 2 hops)")
    result: dict[str, Any] = {
        "graph": graph,
        "dump": dump.name,
        "questions": len(questions),
        "questions_by_hops": {str(h): sum(q["hops"] == h for q in questions) for h in (1, 2)},
        "max_nodes": DEFAULT_MAX_NODES,
        "load_average_before": os.getloadavg(),
        "sides": {},
    }
    sides = result["sides"]
    out = workdir / f"rows-{graph}.jsonl"
    log("store, 1 worker")
    sides["store"] = run_build(store_url, questions_path, out)
    log(f"  {sides['store']['questions_per_second']:.1f} questions/s, coverage {sides['store']['coverage']:.3f}")
    log("store, 2 workers")
    sides["store_2_workers"] = run_build(store_url, questions_path, workdir / f"rows-{graph}-w2.jsonl", workers=2)
    if not args.no_virtuoso:
        from kg_adapters.testing.virtuoso import VirtuosoServer

        vdir = workdir / f"virtuoso-{graph}"
        shutil.rmtree(vdir, ignore_errors=True)
        settings = {"number_of_buffers": 200_000, "max_query_execution_time": 600}
        with VirtuosoServer(vdir, data_dirs=[dump.parent], **settings) as v:
            started = time.perf_counter()
            loaded = v.load([dump])
            log(f"Virtuoso: {loaded:,} triples loaded in {time.perf_counter() - started:.1f} s")
            url = f"sparql+{v.sparql_url}?profile=freebase&dialect=virtuoso"
            sides["virtuoso"] = run_build(url, questions_path, workdir / f"rows-{graph}-virtuoso.jsonl")
            log(f"  {sides['virtuoso']['questions_per_second']:.1f} questions/s")
        shutil.rmtree(vdir, ignore_errors=True)
        sides["virtuoso"]["same_rows_as_store"] = sides["virtuoso"]["sha256"] == sides["store"]["sha256"]
    sides["store_2_workers"]["same_rows_as_store"] = sides["store_2_workers"]["sha256"] == sides["store"]["sha256"]
    log("networkx: building the whole graph")
    from kg_adapters.testing import rog_original

    started = time.perf_counter()
    nx_graph = rog_original.build_graph(triples_of(dump))
    build_seconds = time.perf_counter() - started
    log(f"  {nx_graph.number_of_nodes():,} nodes, {nx_graph.number_of_edges():,} edges in {build_seconds:.1f} s")
    subset = baseline_subset(questions, args.baseline_questions)
    sides["networkx"] = networkx_side(nx_graph, subset, 2, DEFAULT_MAX_NODES)
    sides["networkx"]["graph_build_seconds"] = build_seconds
    del nx_graph
    log(f"  {sides['networkx']['questions_per_second']:.2f} questions/s, coverage {sides['networkx']['coverage']:.3f}")
    log(f"store, 1 worker, on the baseline's {len(subset)} questions")
    subset_path = workdir / f"questions-{graph}-subset.jsonl"
    subset_path.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in subset), "utf-8")
    sides["store_on_baseline_questions"] = run_build(store_url, subset_path, workdir / f"rows-{graph}-subset.jsonl")
    log("coverage curve")
    result["curve"] = coverage_curve(store_url, questions, args.sizes)
    result["load_average_after"] = os.getloadavg()
    store_speed = sides["store"]["questions_per_second"]
    # each side against the one that built the same questions in this run
    ratios = {
        side: sides[side]["questions_per_second"] / store_speed
        for side in ("store_2_workers", "virtuoso")
        if side in sides
    }
    subset_speed = sides["store_on_baseline_questions"]["questions_per_second"]
    ratios["store_on_baseline_questions"] = subset_speed / sides["networkx"]["questions_per_second"]
    result["ratios"] = ratios
    result["baseline_questions"] = len(subset)
    return result


def baseline_subset(questions: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """The first ``count`` questions, half of each hop count (networkx takes seconds per question)."""
    by_hops = {h: [q for q in questions if q["hops"] == h] for h in (1, 2)}
    return by_hops[1][: count // 2] + by_hops[2][: count - count // 2]


# -- results ------------------------------------------------------------------------------------------


def render(results: dict[str, Any]) -> str:
    lines = [
        "# kga dataset build: 1,000 questions per graph",
        "",
        f"Machine: {results['machine']['cpu_model']}, {results['machine']['cpu_usable']} usable cores "
        "(shared with other jobs: see the load averages). Generated by `python -m benchmarks.dataset_build`.",
        "Questions are generated from each graph (seeded; `loaders/testing/questions.py`): a named topic entity, a "
        "1- or 2-hop relation path walked forward from it, its 1-20 end entities as answers. Coverage: rows whose "
        "graph holds an answer, over the questions. `networkx` is the baseline: RoG's `build_graph` over the whole "
        "graph, then per question the 2-hop neighbourhood, `nx.pagerank` personalised to the topic entities "
        "(GraftNet's restart 0.8), the top nodes and RoG's `get_truth_paths`.",
        "",
    ]
    for graph in GRAPHS:
        result = results["graphs"].get(graph)
        if result is None:
            continue
        sides = result["sides"]
        load = ", ".join(f"{x:.2f}" for x in result["load_average_before"])
        load_after = ", ".join(f"{x:.2f}" for x in result["load_average_after"])
        lines += [
            f"## {graph} ({result['dump']})",
            "",
            f"{result['questions']} questions ({result['questions_by_hops']['1']} 1-hop, "
            f"{result['questions_by_hops']['2']} 2-hop), `--max-nodes {result['max_nodes']}`; load average "
            f"{load} before, {load_after} after; run {result['date_utc']}.",
            "",
        ]
        rows = []
        order = ["store", "store_2_workers", "virtuoso", "networkx", "store_on_baseline_questions"]
        for side in [side for side in order if side in sides]:
            figures = sides[side]
            ratio = result["ratios"].get(side)
            against = "networkx" if side == "store_on_baseline_questions" else "store"
            by_hops = figures["coverage_by_hops"]
            same = figures.get("same_rows_as_store")
            rows.append(
                [
                    side.replace("_", " "),
                    str(figures["questions"]),
                    f"{figures['questions_per_second']:.2f}",
                    "" if ratio is None else f"{common.fmt_ratio(ratio)} {against}",
                    f"{figures['coverage']:.3f}",
                    f"{by_hops.get('1', float('nan')):.3f} / {by_hops.get('2', float('nan')):.3f}",
                    f"{figures['triples_median']:.0f} / {figures['triples_mean']:.0f}",
                    str(figures.get("truncated", "n/a")),
                    f"{figures['with_ground_paths']}",
                    "n/a" if same is None else ("yes" if same else "NO"),
                ]
            )
        lines.append(
            common.markdown_table(
                [
                    "side",
                    "questions",
                    "questions/s",
                    "ratio (same questions)",
                    "coverage",
                    "1-hop / 2-hop",
                    "triples median / mean",
                    "rows cut by a budget",
                    "rows with ground paths",
                    "same bytes as store",
                ],
                rows,
            )
        )
        lines += [
            "",
            f"networkx built its whole graph in {sides['networkx']['graph_build_seconds']:.1f} s (not in its "
            "questions/s). Coverage of our selection by `--max-nodes` (the answer's PageRank rank):",
            "",
        ]
        curve = result["curve"]
        sizes = list(next(iter(curve.values())))
        lines.append(
            common.markdown_table(
                ["questions", *sizes],
                [[f"{h}-hop", *(f"{curve[h][k]:.3f}" for k in sizes)] for h in sorted(curve)],
            )
        )
        two = curve.get("2", {}).get(str(result["max_nodes"]))
        if two is not None:
            verdict = "met" if two >= TARGET_COVERAGE else "NOT met"
            lines += ["", f"Target (an answer inside the graph for >= 90% of 2-hop questions at the default size): "
                      f"{two:.3f}, {verdict}."]  # fmt: skip
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--graph", choices=GRAPHS, action="append", help="graph(s) to run (default: both)")
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument(
        "--baseline-questions", type=int, default=100, help="questions networkx answers (seconds each); ours too"
    )
    parser.add_argument("--sizes", type=lambda text: [int(x) for x in text.split(",")], default=list(SIZES))
    parser.add_argument("--no-virtuoso", action="store_true")
    parser.add_argument("--workdir", default=str(WORKDIR))
    args = parser.parse_args(argv)
    common.compile_bytecode("kg_adapters", "loaders")
    path = common.RESULTS_DIR / f"{NAME}.json"
    results = json.loads(path.read_text("utf-8")) if path.is_file() else {"graphs": {}}
    for graph in args.graph or GRAPHS:
        result = measure(graph, args)
        result["date_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        result["source"] = common.source_fingerprint("kg_adapters", "loaders")
        results["graphs"][graph] = result
        results["machine"] = common.machine_info()
        common.write_results(NAME, results, render(results))
        log(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
