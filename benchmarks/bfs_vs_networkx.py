"""Constrained BFS (``paths()``) on the embedded Oxigraph store vs RoG's networkx BFS.

Run from the repository root::

    .venv/bin/python -m benchmarks.bfs_vs_networkx [--data PATH] [--queries N] [--repeats R]

What is compared, on FB15k-237 (Freebase ids):

* store: the file loaded with ``loaders.load_files`` into a temporary store, opened read-only with
  ``kg_adapters.connect("oxigraph:///...?profile=freebase")``; a query is ``kg.paths(start, rule)``.
* networkx: the same triples in a ``networkx.MultiDiGraph`` (edge key = relation, ids compacted like
  the freebase profile: ``http://rdf.freebase.com/ns/`` stripped) and RoG's ``bfs_with_rule``
  (``utils/graph_utils.py``) adapted to a MultiDiGraph, so parallel edges are kept.

Both sides hold every triple of the file, **including** the ``type.object.name`` literal triples
(as :class:`kg_adapters.records.Literal` nodes in networkx), because the store has them; a relation
path may end with ``type.object.name``. Queries are (start entity, relation path) pairs sampled by
seeded random walks, so every answer is non-empty; both sides must return the same multiset of
paths for every query before anything is timed.

Figures: per-query latency (same process, same queries, medians over repeats then over queries),
peak RSS and time to first answer (fresh subprocesses), and load throughput (``load_files``).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import sys
import time
from collections import Counter, deque
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from benchmarks import common

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import networkx as nx

    from kg_adapters.base import KnowledgeGraph
    from kg_adapters.records import Node

NAME = "bfs_vs_networkx"
MODULE = "benchmarks.bfs_vs_networkx"
FREEBASE_NS = "http://rdf.freebase.com/ns/"
XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "fb15k237-freebase.nt.gz"
HOPS = (2, 3)
MEASURED_PACKAGES = ("kg_adapters", "loaders")
SIDE_MODULES = {
    "store": ("kg_adapters", "kg_adapters.backends.oxigraph"),
    "nx": ("networkx", "pyoxigraph", "kg_adapters.records"),
}

TARGET_LATENCY_RATIO = 0.5
TARGET_RSS_RATIO = 0.2
TARGET_TTFA_RATIO = 0.03
TARGET_INDEX_BUILD_RATIO = 0.25
TARGET_INDEX_SIZE_RATIO = 0.3
TARGET_LOAD_TPS = 100_000

Query = tuple[str, tuple[str, ...]]
PathKey = tuple[tuple[str, str, "Node"], ...]


# ================================================================================================
# networkx baseline (what RoG users run)
# ================================================================================================
def compact(iri: str) -> str:
    """The freebase profile's compaction: strip the namespace (only when something is left)."""
    if iri.startswith(FREEBASE_NS) and len(iri) > len(FREEBASE_NS):
        return iri[len(FREEBASE_NS) :]
    return iri


def read_triples(path: str) -> list[tuple[str, str, Node]]:
    """(head, relation, tail) with compact ids; literal tails as :class:`Literal`, converted exactly
    like the store converts them (lower-cased language tag, no datatype for xsd:string)."""
    import gzip

    import pyoxigraph as ox

    from kg_adapters.records import Literal

    named, literal, blank = ox.NamedNode, ox.Literal, ox.BlankNode
    triples: list[tuple[str, str, Node]] = []
    handle = cast(IO[bytes], gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb"))  # noqa: SIM115
    with handle:
        for quad in ox.parse(handle, format=ox.RdfFormat.N_TRIPLES):
            subject, obj = quad.subject, quad.object
            head = compact(subject.value) if type(subject) is named else "_:" + subject.value
            tail: Node
            kind = type(obj)
            if kind is named:
                tail = compact(obj.value)
            elif kind is literal:
                if obj.language:
                    tail = Literal(value=obj.value, lang=obj.language.lower())
                else:
                    datatype = obj.datatype.value
                    tail = Literal(value=obj.value, datatype=None if datatype == XSD_STRING else datatype)
            elif kind is blank:
                tail = "_:" + obj.value
            else:  # pragma: no cover - N-Triples has no other terms
                continue
            triples.append((head, compact(quad.predicate.value), tail))
    return triples


def build_graph(triples: list[tuple[str, str, Node]]) -> nx.MultiDiGraph:
    """RoG's ``build_graph``, as a MultiDiGraph keyed by relation (so no edge is collapsed)."""
    import networkx as nx

    graph = nx.MultiDiGraph()
    for head, relation, tail in triples:
        graph.add_edge(head, tail, key=relation)
    return graph


def bfs_with_rule(graph: nx.MultiDiGraph, start_node: str, target_rule: list[str]) -> list[list[tuple[Any, ...]]]:
    """RoG's ``bfs_with_rule`` (utils/graph_utils.py) on a MultiDiGraph: a deque of (node, path),
    expanding ``out_edges`` and keeping the edges whose relation is the rule's next step."""
    result_paths = []
    queue: deque[tuple[Any, list[tuple[Any, ...]]]] = deque([(start_node, [])])
    while queue:
        current_node, current_path = queue.popleft()
        if len(current_path) == len(target_rule):
            result_paths.append(current_path)
        if len(current_path) < len(target_rule):
            if current_node not in graph:
                continue
            for _, neighbor, rel in graph.out_edges(current_node, keys=True):
                if rel != target_rule[len(current_path)]:
                    continue
                queue.append((neighbor, [*current_path, (current_node, rel, neighbor)]))
    return result_paths


# ================================================================================================
# store side
# ================================================================================================
def store_url(store_dir: str) -> str:
    return "oxigraph://" + str(Path(store_dir).resolve()) + "?profile=freebase"


def open_store(store_dir: str, *, index: bool = True) -> KnowledgeGraph:
    """The store with its traversal index, or (``index=False``) answering through Oxigraph only."""
    from kg_adapters import connect

    return connect(store_url(store_dir) + ("" if index else "&index=false"))


# ================================================================================================
# queries and answers
# ================================================================================================
def sample_queries(graph: nx.MultiDiGraph, count: int, hops: int, seed: int) -> list[Query]:
    """``count`` distinct (start, relation path) pairs from seeded random walks (out-edges only),
    so every answer has at least the walk itself. Independent of the file's triple order."""
    import random

    rng = random.Random(f"{seed}/{hops}")
    starts = sorted(node for node, degree in graph.out_degree() if degree and isinstance(node, str))
    queries: list[Query] = []
    seen: set[Query] = set()
    attempts = 0
    while len(queries) < count:
        attempts += 1
        if attempts > 1000 * count:
            raise RuntimeError(f"could not sample {count} {hops}-hop queries")
        start = node = rng.choice(starts)
        rule: list[str] = []
        for step in range(hops):
            last = step == hops - 1
            options = sorted(
                (
                    (relation, str(tail))
                    for _, tail, relation in graph.out_edges(node, keys=True)
                    if last or (isinstance(tail, str) and graph.out_degree(tail) > 0)
                ),
            )
            if not options:
                break
            relation, node = rng.choice(options)
            rule.append(relation)
        if len(rule) != hops:
            continue
        query = (start, tuple(rule))
        if query not in seen:
            seen.add(query)
            queries.append(query)
    return queries


def store_answer(result: Any) -> Counter[PathKey]:
    return Counter(tuple(edge.as_tuple() for edge in path.edges) for path in result)


def nx_answer(paths: list[list[tuple[Any, ...]]]) -> Counter[PathKey]:
    return Counter(tuple(path) for path in paths)


def load_queries(path: str) -> dict[int, list[Query]]:
    raw = json.loads(Path(path).read_text("utf-8"))
    return {int(hops): [(start, tuple(rule)) for start, rule in items] for hops, items in raw.items()}


# ================================================================================================
# child processes (fresh interpreters): peak RSS, time to first answer, load throughput
# ================================================================================================
def answer_queries(
    count_paths: Callable[[str, Sequence[str]], int],
    queries: dict[int, list[Query]],
    *,
    every: bool,
    ready: float,
    started: tuple[float, float],
) -> dict[str, Any]:
    """A child's answers: the first query's paths and the time to them -- from ``ready`` (the graph
    could answer) and from ``started`` (the interpreter's wall and CPU clocks at its start) -- then,
    with ``every``, every query's paths and the time they took."""
    start, rule = queries[HOPS[0]][0]
    first_paths = count_paths(start, rule)
    answered = time.perf_counter()
    out: dict[str, Any] = {
        "first_query_seconds": answered - ready,
        "first_answer_seconds": answered - started[0],
        "first_answer_cpu_seconds": time.process_time() - started[1],
        "first_answer_paths": first_paths,
    }
    if every:
        total = sum(count_paths(start, rule) for hops in HOPS for start, rule in queries[hops])
        out.update(all_queries_seconds=time.perf_counter() - answered, total_paths=total)
    return out


def child_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog=f"{MODULE} --child")
    parser.add_argument("kind")
    parser.add_argument("--data")
    parser.add_argument("--store")
    parser.add_argument("--queries-file")
    parser.add_argument("--no-index", action="store_true", help="load: without the traversal index")
    args = parser.parse_args(argv)
    started, started_cpu = time.perf_counter(), time.process_time()
    kind = args.kind
    out: dict[str, Any] = {"kind": kind}

    side = "nx" if kind.endswith("-nx") else "store"
    for module in SIDE_MODULES[side]:  # what each side imports (bare interpreters: only this)
        importlib.import_module(module)

    if kind in ("base-store", "base-nx"):
        pass
    elif kind in ("rss-store", "ttfa-store"):
        queries = load_queries(args.queries_file)
        imported = time.perf_counter()
        kg = open_store(args.store)
        opened = time.perf_counter()
        out.update(import_seconds=imported - started, open_seconds=opened - imported)
        out.update(
            answer_queries(
                lambda start, rule: len(kg.paths(start, rule)),
                queries,
                every=kind == "rss-store",
                ready=opened,
                started=(started, started_cpu),
            )
        )
        kg.close()
    elif kind in ("rss-nx", "ttfa-nx"):
        queries = load_queries(args.queries_file)
        imported = time.perf_counter()
        triples = read_triples(args.data)
        parsed = time.perf_counter()
        graph = build_graph(triples)
        del triples
        built = time.perf_counter()
        out.update(import_seconds=imported - started, parse_seconds=parsed - imported, build_seconds=built - parsed)
        out.update(
            answer_queries(
                lambda start, rule: len(bfs_with_rule(graph, start, list(rule))),
                queries,
                every=kind == "rss-nx",
                ready=built,
                started=(started, started_cpu),
            )
        )
    elif kind == "load":
        from loaders import load_files
        from loaders.indexing import index_bytes

        began = time.perf_counter()
        report = load_files([args.data], args.store, profile="freebase", progress=False, index=not args.no_index)
        wall = time.perf_counter() - began
        for name in ("store_triples", "statements_read", "seconds", "triples_per_second", "index_seconds"):
            out[name] = getattr(report, name, None)
        out["load_wall_seconds"] = wall
        out["index_bytes"] = index_bytes(args.store)  # built during the load, as `kga load` does by default
        out["store_bytes"] = sum(f.stat().st_size for f in Path(args.store).rglob("*") if f.is_file())
    else:
        raise SystemExit(f"unknown child kind {kind!r}")
    common.emit_child_result(out)


def build_over_load(loads: list[dict[str, Any]], plain_loads: list[dict[str, Any]]) -> float:
    """What the traversal index adds to a load, over the load without it: median load time with the
    index minus median without, over the latter. The index is numbered by a worker process while
    Oxigraph loads and written while the load builds its label index, so the time a load waits for
    it (``index_seconds``) would hide what the worker costs the load (the cores it takes); the
    difference of whole loads does not."""
    plain = common.median([float(r["seconds"]) for r in plain_loads])
    return (common.median([float(r["seconds"]) for r in loads]) - plain) / plain


def waited_over_load(loads: list[dict[str, Any]]) -> float:
    """Median over loads of the time the load waited for its index over the rest of the load."""
    return common.median([float(r["index_seconds"]) / (float(r["seconds"]) - float(r["index_seconds"])) for r in loads])


def run_children(kind: str, runs: int, args: list[str]) -> list[dict[str, Any]]:
    return [common.run_child(MODULE, ["--child", kind, *args]) for _ in range(runs)]


def med(results: list[dict[str, Any]], key: str) -> float:
    return common.median([float(r[key]) for r in results if r.get(key) is not None])


# ================================================================================================
# phases run by the parent
# ================================================================================================
def phase_load(data: str, workdir: Path, runs: int) -> tuple[str, dict[str, Any]]:
    import shutil

    runs_out: list[dict[str, Any]] = []
    plain_out: list[dict[str, Any]] = []  # the same loads without the index, interleaved with them
    kept = str(workdir / "store")
    for i in range(runs):
        for indexed in (True, False) if i % 2 == 0 else (False, True):
            target = kept if i == 0 and indexed else str(workdir / f"store-load-{i}-{indexed}")
            result = common.run_child(
                MODULE, ["--child", "load", "--data", data, "--store", target, *([] if indexed else ["--no-index"])]
            )
            (runs_out if indexed else plain_out).append(result)
            if target != kept:
                shutil.rmtree(target, ignore_errors=True)
            log(
                f"  load {i + 1}/{runs} ({'with' if indexed else 'without'} the index): "
                f"{result.get('store_triples')} triples in {common.fmt_seconds(float(result['load_wall_seconds']))} "
                f"({float(result.get('triples_per_second') or 0):,.0f} triples/s reported)"
            )
    wall_tps = [float(r["statements_read"] or r["store_triples"]) / float(r["load_wall_seconds"]) for r in runs_out]
    summary: dict[str, Any] = {
        "runs": runs_out,
        "runs_without_index": plain_out,
        "median_triples_per_second": med(runs_out, "triples_per_second"),
        "median_wall_triples_per_second": common.median(wall_tps),
        "median_seconds": med(runs_out, "seconds"),
        "median_triples_per_second_without_index": med(plain_out, "triples_per_second"),
        "store_triples": runs_out[0].get("store_triples"),
        "statements_read": runs_out[0].get("statements_read"),
        "target_triples_per_second": TARGET_LOAD_TPS,
    }
    summary["target_met"] = summary["median_triples_per_second"] >= TARGET_LOAD_TPS
    index_seconds = med(runs_out, "index_seconds")
    index_bytes = float(runs_out[0]["index_bytes"])
    added = med(runs_out, "seconds") - med(plain_out, "seconds")
    summary["index"] = {
        "median_seconds": added,
        "median_waited_seconds": index_seconds,
        "waited_over_load": waited_over_load(runs_out),
        "bytes": index_bytes,
        "build_over_load": build_over_load(runs_out, plain_out),
        "size_over_store": index_bytes / (float(runs_out[0]["store_bytes"]) - index_bytes),
    }
    log(
        f"  index: adds {added:.2f} s to a load ({summary['index']['build_over_load']:.2f}x the load without it; "
        f"the load waited {index_seconds:.2f} s for it), "
        f"{common.fmt_bytes(index_bytes)} ({summary['index']['size_over_store']:.2f}x the Oxigraph data)"
    )
    return kept, summary


def verify(
    kg: KnowledgeGraph, plain: KnowledgeGraph, graph: nx.MultiDiGraph, queries: dict[int, list[Query]]
) -> dict[str, Any]:
    """Every query on the three sides; the store with and without its index must agree exactly
    (order and all), and with networkx as multisets of paths."""
    mismatches: list[dict[str, Any]] = []
    sizes: dict[int, list[int]] = {}
    for hops, items in queries.items():
        sizes[hops] = []
        for start, rule in items:
            result = kg.paths(start, rule)
            if list(result) != list(plain.paths(start, rule)):
                mismatches.append({"start": start, "rule": list(rule), "indexed_vs_oxigraph_only": "differ"})
            ours, theirs = store_answer(result), nx_answer(bfs_with_rule(graph, start, list(rule)))
            sizes[hops].append(sum(theirs.values()))
            if ours != theirs or result.truncated or not theirs:
                mismatches.append(
                    {
                        "start": start,
                        "rule": list(rule),
                        "store_paths": sum(ours.values()),
                        "networkx_paths": sum(theirs.values()),
                        "only_store": [repr(p) for p in list((ours - theirs).keys())[:3]],
                        "only_networkx": [repr(p) for p in list((theirs - ours).keys())[:3]],
                    }
                )
    return {
        "mismatches": len(mismatches),
        "mismatch_examples": mismatches[:5],
        "answer_paths": {
            str(hops): {
                "median": common.median(s),
                "p90": common.percentile(s, 90),
                "max": max(s),
                "total": sum(s),
            }
            for hops, s in sizes.items()
        },
    }


def phase_latency(
    kg: KnowledgeGraph,
    plain: KnowledgeGraph,
    cold: KnowledgeGraph,
    graph: nx.MultiDiGraph,
    queries: dict[int, list[Query]],
    repeats: int,
) -> dict[str, Any]:
    """Per query and repeat, the sides back to back (which goes first rotates by repeat): the store
    with its traversal index, the same store through Oxigraph only, networkx, and the store (``cold``,
    opened for this side alone) with its index's caches of decoded ids and literals emptied before
    every call."""
    perf, cpu = time.perf_counter, time.thread_time
    cold_index = cold.traversal_index  # type: ignore[attr-defined]
    out: dict[str, Any] = {}
    for hops, items in queries.items():
        store_t: list[list[float]] = [[] for _ in items]
        nx_t: list[list[float]] = [[] for _ in items]
        plain_t: list[list[float]] = [[] for _ in items]
        cold_t: list[list[float]] = [[] for _ in items]
        store_c: list[list[float]] = [[] for _ in items]  # CPU time of this thread: less sensitive to
        nx_c: list[list[float]] = [[] for _ in items]  # other processes on a small shared machine
        for rep in range(repeats):
            gc.collect()
            for i, (start, rule) in enumerate(items):
                rule_list = list(rule)
                for side in ((0, 1, 2, 3), (1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2))[rep % 4]:
                    if side == 0:
                        c0, t0 = cpu(), perf()
                        kg.paths(start, rule)
                        t1, c1 = perf(), cpu()
                        store_t[i].append(t1 - t0)
                        store_c[i].append(c1 - c0)
                    elif side == 1:
                        c0, t0 = cpu(), perf()
                        bfs_with_rule(graph, start, rule_list)
                        t1, c1 = perf(), cpu()
                        nx_t[i].append(t1 - t0)
                        nx_c[i].append(c1 - c0)
                    elif side == 2:
                        t0 = perf()
                        plain.paths(start, rule)
                        plain_t[i].append(perf() - t0)
                    else:
                        cold_index.name_cache.clear()
                        cold_index.literal_cache.clear()
                        t0 = perf()
                        cold.paths(start, rule)
                        cold_t[i].append(perf() - t0)
        store_med = [common.median(t) for t in store_t]
        nx_med = [common.median(t) for t in nx_t]
        per_query_ratio = [common.ratio(s, n) for s, n in zip(store_med, nx_med, strict=True)]
        s_median, n_median = common.median(store_med), common.median(nx_med)
        s_p90, n_p90 = common.percentile(store_med, 90), common.percentile(nx_med, 90)
        s_total, n_total = sum(store_med), sum(nx_med)
        p_median = common.median([common.median(t) for t in plain_t])
        c_median = common.median([common.median(t) for t in cold_t])
        s_cpu = common.median([common.median(t) for t in store_c])
        n_cpu = common.median([common.median(t) for t in nx_c])
        out[str(hops)] = {
            "queries": len(items),
            "repeats": repeats,
            "store_median_s": s_median,
            "oxigraph_only_median_s": p_median,
            "store_cold_median_s": c_median,
            "ratio_cold_median": common.ratio(c_median, n_median),
            "index_speedup_median": common.ratio(p_median, s_median),
            "ratio_oxigraph_only_median": common.ratio(p_median, n_median),
            "networkx_median_s": n_median,
            "ratio_median": common.ratio(s_median, n_median),
            "store_p90_s": s_p90,
            "networkx_p90_s": n_p90,
            "ratio_p90": common.ratio(s_p90, n_p90),
            "store_total_s": s_total,
            "networkx_total_s": n_total,
            "ratio_total": common.ratio(s_total, n_total),
            "median_of_per_query_ratios": common.median(per_query_ratio),
            "store_cpu_median_s": s_cpu,
            "networkx_cpu_median_s": n_cpu,
            "ratio_cpu_median": common.ratio(s_cpu, n_cpu),
            "queries_where_store_faster": sum(1 for r in per_query_ratio if r <= 1.0),
            "target_ratio": TARGET_LATENCY_RATIO,
            "target_met": common.ratio(s_median, n_median) <= TARGET_LATENCY_RATIO,
            "per_query_store_median_s": store_med,
            "per_query_networkx_median_s": nx_med,
        }
        log(
            f"  {hops}-hop: store {common.fmt_seconds(s_median)}, Oxigraph only {common.fmt_seconds(p_median)}, "
            f"networkx {common.fmt_seconds(n_median)} (ratio {common.fmt_ratio(common.ratio(s_median, n_median))}; "
            f"load average {os.getloadavg()[0]:.1f})"
        )
    return out


def phase_rss(store: str, data: str, queries_file: str, runs: int) -> dict[str, Any]:
    common_args = ["--store", store, "--data", data, "--queries-file", queries_file]
    res = {kind: run_children(kind, runs, common_args) for kind in ("base-store", "rss-store", "base-nx", "rss-nx")}
    store_peak, nx_peak = med(res["rss-store"], "peak_rss_bytes"), med(res["rss-nx"], "peak_rss_bytes")
    store_base, nx_base = med(res["base-store"], "peak_rss_bytes"), med(res["base-nx"], "peak_rss_bytes")
    store_delta, nx_delta = store_peak - store_base, nx_peak - nx_base
    out: dict[str, Any] = {
        "runs": runs,
        "store_peak_rss_bytes": store_peak,
        "networkx_peak_rss_bytes": nx_peak,
        "ratio_peak": common.ratio(store_peak, nx_peak),
        "store_baseline_rss_bytes": store_base,
        "networkx_baseline_rss_bytes": nx_base,
        "store_delta_rss_bytes": store_delta,
        "networkx_delta_rss_bytes": nx_delta,
        "ratio_delta": common.ratio(store_delta, nx_delta),
        "store_all_queries_seconds": med(res["rss-store"], "all_queries_seconds"),
        "networkx_all_queries_seconds": med(res["rss-nx"], "all_queries_seconds"),
        "target_ratio": TARGET_RSS_RATIO,
        "raw": res,
    }
    out["target_met"] = out["ratio_peak"] <= TARGET_RSS_RATIO
    totals = {r["total_paths"] for r in res["rss-store"] + res["rss-nx"]}
    if len(totals) != 1:
        raise AssertionError(f"the RSS children found different numbers of paths: {sorted(totals)}")
    return out


def phase_ttfa(store: str, data: str, queries_file: str, runs: int) -> dict[str, Any]:
    common_args = ["--store", store, "--data", data, "--queries-file", queries_file]
    res: dict[str, list[dict[str, Any]]] = {"ttfa-store": [], "ttfa-nx": []}
    for _ in range(runs):  # interleaved, so drift on a noisy machine hits both sides
        for kind in res:
            res[kind].extend(run_children(kind, 1, common_args))
    store_t, nx_t = med(res["ttfa-store"], "first_answer_seconds"), med(res["ttfa-nx"], "first_answer_seconds")
    store_w, nx_w = med(res["ttfa-store"], "wall_seconds"), med(res["ttfa-nx"], "wall_seconds")
    store_c = med(res["ttfa-store"], "first_answer_cpu_seconds")
    nx_c = med(res["ttfa-nx"], "first_answer_cpu_seconds")
    return {
        "runs": runs,
        "store_first_answer_s": store_t,
        "networkx_first_answer_s": nx_t,
        "ratio": common.ratio(store_t, nx_t),
        "store_process_wall_s": store_w,
        "networkx_process_wall_s": nx_w,
        "ratio_process_wall": common.ratio(store_w, nx_w),
        "store_first_answer_cpu_s": store_c,
        "networkx_first_answer_cpu_s": nx_c,
        "ratio_cpu": common.ratio(store_c, nx_c),
        "store_breakdown_s": {
            k: med(res["ttfa-store"], k) for k in ("import_seconds", "open_seconds", "first_query_seconds")
        },
        "networkx_breakdown_s": {
            k: med(res["ttfa-nx"], k)
            for k in ("import_seconds", "parse_seconds", "build_seconds", "first_query_seconds")
        },
        "raw": res,
    }


# ================================================================================================
# report
# ================================================================================================
def verdict(met: bool) -> str:
    return "MET" if met else "NOT MET"


def summary_rows(results: dict[str, Any]) -> list[list[str]]:
    row, f_r, f_b = common.comparison_row, common.fmt_ratio, common.fmt_bytes
    rows = []
    for hops in HOPS:
        lat = results["latency"][str(hops)]
        paths = f"{hops}-hop paths(), median per query"
        rows.append(
            row(
                f"{paths}, store without its index (Oxigraph only)",
                lat["oxigraph_only_median_s"],
                lat["networkx_median_s"],
                lat["ratio_oxigraph_only_median"],
                f"index speed-up {f_r(lat['index_speedup_median'])}",
            )
        )
        cold = f"{paths}, caches of decoded ids and literals emptied before each call"
        rows.append(row(cold, lat["store_cold_median_s"], lat["networkx_median_s"], lat["ratio_cold_median"]))
        target = f"<= {TARGET_LATENCY_RATIO:.1f}x: {verdict(lat['target_met'])}"
        for label, key, ratio, note in (
            ("median per query", "median_s", "ratio_median", target),
            ("median per query, CPU time", "cpu_median_s", "ratio_cpu_median", ""),
            ("p90 per query", "p90_s", "ratio_p90", ""),
            (f"total over {lat['queries']} queries", "total_s", "ratio_total", ""),
        ):
            rows.append(
                row(f"{hops}-hop paths(), {label}", lat[f"store_{key}"], lat[f"networkx_{key}"], lat[ratio], note)
            )
    rss = results["rss"]
    n_all = sum(results["latency"][str(h)]["queries"] for h in HOPS)
    store_all, nx_all = rss["store_all_queries_seconds"], rss["networkx_all_queries_seconds"]
    rows.append(
        row(
            f"all {n_all} queries once, each side alone in a fresh process",
            store_all,
            nx_all,
            common.ratio(store_all, nx_all),
        )
    )
    rss_target = f"<= {TARGET_RSS_RATIO:.1f}x: {verdict(rss['target_met'])}"
    rows.append(
        row(
            "peak RSS (open/build + all queries)",
            rss["store_peak_rss_bytes"],
            rss["networkx_peak_rss_bytes"],
            rss["ratio_peak"],
            rss_target,
            fmt=f_b,
        )
    )
    rows.append(
        row(
            "RSS over a bare interpreter with the same imports",
            rss["store_delta_rss_bytes"],
            rss["networkx_delta_rss_bytes"],
            rss["ratio_delta"],
            fmt=f_b,
        )
    )
    ttfa = results["time_to_first_answer"]
    ttfa_target = f"<= {TARGET_TTFA_RATIO}x: {verdict(ttfa['ratio'] <= TARGET_TTFA_RATIO)}"
    rows.append(
        row(
            "time to first answer (imports + open/parse+build + 1 query)",
            ttfa["store_first_answer_s"],
            ttfa["networkx_first_answer_s"],
            ttfa["ratio"],
            ttfa_target,
        )
    )
    if "ratio_cpu" in ttfa:
        rows.append(
            row(
                "  same, CPU time of the process (all threads)",
                ttfa["store_first_answer_cpu_s"],
                ttfa["networkx_first_answer_cpu_s"],
                ttfa["ratio_cpu"],
            )
        )
    rows.append(
        row(
            "  same, whole subprocess wall time",
            ttfa["store_process_wall_s"],
            ttfa["networkx_process_wall_s"],
            ttfa["ratio_process_wall"],
        )
    )
    load = results["load"]
    if load is not None and load.get("index"):
        index = load["index"]
        build_target = (
            f"<= {TARGET_INDEX_BUILD_RATIO}x: {verdict(index['build_over_load'] <= TARGET_INDEX_BUILD_RATIO)}"
        )
        build = "traversal index build time / load time (load with it - load without, over without)"
        rows.append(row(build, index["median_seconds"], None, index["build_over_load"], build_target))
        if "median_waited_seconds" in index:
            waits = "  the load's waits for the index (numbered by a worker process beside the load)"
            rows.append(row(waits, index["median_waited_seconds"], None, index["waited_over_load"]))
        size_target = f"<= {TARGET_INDEX_SIZE_RATIO}x: {verdict(index['size_over_store'] <= TARGET_INDEX_SIZE_RATIO)}"
        size = "traversal index size / Oxigraph data size"
        rows.append(row(size, index["bytes"], None, index["size_over_store"], size_target, fmt=f_b))
    if load is not None:
        rows.append(
            [
                "load_files throughput (median of runs)",
                f"{load['median_triples_per_second']:,.0f} triples/s",
                "",
                "",
                f">= {TARGET_LOAD_TPS:,} triples/s: {verdict(load['target_met'])}",
            ]
        )
        if "median_triples_per_second_without_index" in load:
            rows.append(
                [
                    "  same, loads without the traversal index (`--no-index`)",
                    f"{load['median_triples_per_second_without_index']:,.0f} triples/s",
                    "",
                    "",
                    "",
                ]
            )
    return rows


HEADERS = ["measure", "store", "networkx", "store/networkx", "target"]


def render_markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    cfg = results["config"]
    lat, rss, ttfa, load = results["latency"], results["rss"], results["time_to_first_answer"], results["load"]
    ver = results["verification"]
    lines = [
        "# paths() on the embedded store vs RoG's networkx BFS (FB15k-237)",
        "",
        f"Generated by `python -m {MODULE}` on {m['date_utc']}: {m['cpu_usable']} usable CPU(s) "
        f"({m['cpu_model']}), Python {m['python']}, pyoxigraph {m['versions'].get('pyoxigraph')}, "
        f"networkx {m['versions'].get('networkx')}; kg_adapters+loaders source fingerprint "
        f"`{results['source']['fingerprint']}`"
        + (" (**changed during the run**)" if results["source"]["changed_during_run"] else "")
        + f". Small, noisy machine: medians and ratios only. 1-minute load average {results['load_average'][0]:.1f} "
        f"at the start, {results['load_average_end'][0]:.1f} at the end ({m['cpu_usable']} cores).",
        "",
        "## Headline ratios (store / networkx; lower is better for the store)",
        "",
    ]
    for hops in HOPS:
        x = lat[str(hops)]
        lines.append(
            f"- **{hops}-hop latency ratio (median per query): {common.fmt_ratio(x['ratio_median'])}** "
            f"(target <= {TARGET_LATENCY_RATIO:.1f}x: **{verdict(x['target_met'])}**)"
        )
    lines.append(
        f"- **Peak RSS ratio: {common.fmt_ratio(rss['ratio_peak'])}** "
        f"(target <= {TARGET_RSS_RATIO:.1f}x: **{verdict(rss['target_met'])}**)"
    )
    lines.append(
        f"- **Time to first answer ratio: {common.fmt_ratio(ttfa['ratio'])}** (no target; "
        "RoG-style code parses and rebuilds its graph on every run)"
    )
    if load is not None:
        lines.append(
            f"- **Load throughput: {load['median_triples_per_second']:,.0f} triples/s** "
            f"(target >= {TARGET_LOAD_TPS:,}/s on {m['cpu_usable']} cores: **{verdict(load['target_met'])}**)"
        )
    lines += ["", "## Table", "", common.markdown_table(HEADERS, summary_rows(results)), ""]
    lines += [
        "## Setup",
        "",
        f"- Data: `{Path(cfg['data']).name}`, {cfg['triples']:,} triples "
        f"({cfg['literal_triples']:,} of them `type.object.name` literals, kept on both sides).",
        f"- Queries: {cfg['queries_per_hops']} per hop count ({', '.join(str(h) for h in HOPS)} hops), seeded "
        f"random walks (seed {cfg['seed']}); every query answered by both sides with the same paths "
        f"({ver['mismatches']} mismatches). Paths per answer: "
        + "; ".join(
            f"{h}-hop median {sizes['median']:.0f}, p90 {sizes['p90']:.0f}, max {sizes['max']}"
            for h, sizes in ((h, ver["answer_paths"][str(h)]) for h in HOPS)
        )
        + ".",
        f"- Latency: each query set run {cfg['repeats']} times in one process (sides alternate first), after "
        "one untimed verification pass; median per query over repeats, then median / p90 over queries; "
        "total = sum of per-query medians; the CPU-time rows use the thread's CPU time instead of wall "
        "time (less disturbed by other processes). The networkx graph is `gc.freeze()`-d while timing, so neither "
        "side pays the cyclic GC for scanning it (this slightly favours networkx). The row 'each side alone' "
        "is one pass over all queries in the RSS subprocesses (after open / parse + build; no warm-up; "
        "GC as a user would have it). The store keeps the ids and literal records it decoded across calls "
        "(bounded caches, as networkx keeps every name in memory), so its repeats are warm; the 'caches ... "
        "emptied' row is a second store object whose caches are emptied before every call.",
        "- Peak RSS: high-water mark (`VmHWM`; not `ru_maxrss`, which a spawned child inherits from its "
        f"parent) of fresh subprocesses (median of {rss['runs']}): store = open read-only + all "
        "queries; networkx = parse the file + build the MultiDiGraph + all queries. Bare interpreters "
        f"with the same imports: store {common.fmt_bytes(rss['store_baseline_rss_bytes'])}, networkx "
        f"{common.fmt_bytes(rss['networkx_baseline_rss_bytes'])}.",
        f"- Time to first answer: fresh subprocesses (median of {ttfa['runs']}), measured from the start of the "
        "benchmark code (imports included, interpreter start-up excluded). Store: "
        + ", ".join(
            f"{k.replace('_seconds', '')} {common.fmt_seconds(v)}" for k, v in ttfa["store_breakdown_s"].items()
        )
        + "; networkx: "
        + ", ".join(
            f"{k.replace('_seconds', '')} {common.fmt_seconds(v)}" for k, v in ttfa["networkx_breakdown_s"].items()
        )
        + ". The store's first query runs on a freshly opened store, but the OS page cache is warm. "
        + (
            "Both sides run from compiled bytecode (networkx's written by pip, kg_adapters' and loaders' by the "
            "benchmark, as an install does)."
            if cfg.get("bytecode_compiled")
            else "kg_adapters and loaders could not be byte-compiled: their children compiled them on every start."
        ),
    ]
    if load is not None:
        lines.append(
            f"- Load: `loaders.load_files` of the .gz file into a fresh store, {len(load['runs'])} runs in fresh "
            f"subprocesses; figure = the LoadReport's triples_per_second (wall-clock around the call: "
            f"{load['median_wall_triples_per_second']:,.0f} triples/s). Each run is paired with a load without the "
            "traversal index (`index=False`, in alternating order); the index's build time is the difference of "
            "the two medians, since it is numbered by a worker process while Oxigraph loads."
        )
    return "\n".join(lines) + "\n"


log = common.log


# ================================================================================================
# main
# ================================================================================================
def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        child_main(argv[1:])
        return 0
    parser = common.argument_parser(MODULE, __doc__, data=DEFAULT_DATA)
    parser.add_argument("--queries", type=int, default=200, help="queries per hop count (default 200)")
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats of each query set (default 5)")
    parser.add_argument("--seed", type=int, default=20240607)
    parser.add_argument("--load-runs", type=int, default=3)
    parser.add_argument("--rss-runs", type=int, default=3)
    parser.add_argument("--ttfa-runs", type=int, default=3)
    parser.add_argument("--store", help="use this existing store and skip the load benchmark")
    parser.add_argument("--no-write", action="store_true", help="do not write benchmarks/results/")
    parser.add_argument("--allow-mismatch", action="store_true", help="time even if answers differ")
    args = parser.parse_args(argv)
    import tempfile

    data = str(Path(args.data).resolve())
    began = time.perf_counter()
    load_average = os.getloadavg()
    log(f"load average: {' '.join(f'{x:.2f}' for x in load_average)}")
    fingerprint = common.source_fingerprint(*MEASURED_PACKAGES)
    with tempfile.TemporaryDirectory(prefix="kga-bench-", ignore_cleanup_errors=True) as tmp:
        workdir = Path(tmp)
        if args.store:
            store, load = str(Path(args.store).resolve()), None
        else:
            log(f"load: loaders.load_files x{args.load_runs}")
            store, load = phase_load(data, workdir, args.load_runs)
            os.sync()  # no write-back of the loads' files while latencies are measured
            time.sleep(1.0)

        log("networkx: parse + build graph")
        t0 = time.perf_counter()
        triples = read_triples(data)
        t1 = time.perf_counter()
        graph = build_graph(triples)
        t2 = time.perf_counter()
        literal_triples = sum(1 for _, _, t in triples if not isinstance(t, str))
        n_triples = len(triples)
        del triples
        queries = {hops: sample_queries(graph, args.queries, hops, args.seed) for hops in HOPS}
        queries_file = workdir / "queries.json"
        queries_file.write_text(
            json.dumps({str(h): [[s, list(r)] for s, r in q] for h, q in queries.items()}), encoding="utf-8"
        )

        # The graph is long-lived: freeze it out of the cyclic GC so that neither side pays for
        # scanning it (a store user would not have it in memory; this favours networkx slightly).
        gc.collect()
        gc.freeze()
        kg = open_store(store)
        plain = open_store(store, index=False)
        log("verify: every query, every side")
        verification = verify(kg, plain, graph, queries)
        log(f"  {verification['mismatches']} mismatches; answer sizes {verification['answer_paths']}")
        if verification["mismatches"] and not args.allow_mismatch:
            print(json.dumps(verification["mismatch_examples"], indent=2, default=str), file=sys.stderr)
            raise AssertionError(f"{verification['mismatches']} queries answered differently (see above)")
        log(f"latency: {args.repeats} repeats")
        cold = open_store(store)
        latency = phase_latency(kg, plain, cold, graph, queries, args.repeats)
        kg.close()
        plain.close()
        cold.close()
        gc.unfreeze()
        del graph, kg, plain, cold
        gc.collect()

        bytecode = common.compile_bytecode(*MEASURED_PACKAGES, "benchmarks")
        log(f"bytecode of {', '.join(MEASURED_PACKAGES)} compiled for the subprocesses: {bytecode}")
        log(f"peak RSS: {args.rss_runs} subprocess runs per side")
        rss = phase_rss(store, data, str(queries_file), args.rss_runs)
        log(f"time to first answer: {args.ttfa_runs} subprocess runs per side")
        ttfa = phase_ttfa(store, data, str(queries_file), args.ttfa_runs)

        results: dict[str, Any] = {
            "benchmark": NAME,
            "machine": common.machine_info(),
            "config": {
                "data": data,
                "triples": n_triples,
                "literal_triples": literal_triples,
                "literal_triples_included": True,
                "gc_frozen_during_latency": True,
                "queries_per_hops": args.queries,
                "repeats": args.repeats,
                "seed": args.seed,
                "store_url": "oxigraph:///<temporary store dir>?profile=freebase",
                "networkx_parse_seconds_in_parent": t1 - t0,
                "networkx_build_seconds_in_parent": t2 - t1,
                "bytecode_compiled": bytecode,
            },
            "load": load,
            "verification": verification,
            "latency": latency,
            "rss": rss,
            "time_to_first_answer": ttfa,
            "queries": {str(h): [[s, list(r)] for s, r in q] for h, q in queries.items()},
            "load_average": load_average,
            "load_average_end": os.getloadavg(),
        }
        results["run_seconds"] = time.perf_counter() - began
        fingerprint_after = common.source_fingerprint(*MEASURED_PACKAGES)
        results["source"] = {
            "packages": list(MEASURED_PACKAGES),
            "fingerprint": fingerprint,
            "changed_during_run": fingerprint_after != fingerprint,
        }
        if fingerprint_after != fingerprint:
            log("WARNING: kg_adapters/loaders changed while the benchmark ran; the figures mix two versions")
        print()
        print(common.text_table(HEADERS, summary_rows(results)))
        print(f"\n(verification: {verification['mismatches']} mismatches; run took {results['run_seconds']:.0f} s)")
        print("load average: " + common.load_average_text(load_average, results["load_average_end"]))
        if not args.no_write:
            common.save_report(NAME, results, render_markdown(results))
        return 0


if __name__ == "__main__":
    sys.exit(main())
