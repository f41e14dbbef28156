"""How load time, disk, memory and query latency grow with the graph: 1M, 4M and 16M triples.

Run from the repository root (one command reproduces everything; ~40 min with the 16M size)::

    .venv/bin/python -m benchmarks.scale [--sizes 1M,4M,16M] [--nx-max 4M] [--virtuoso-max 16M]

Data: :mod:`benchmarks.synth_freebase` graphs (seeded, cached in ``.kga/bench/scale/``). For each size:

* load: ``loaders.load_files`` in a fresh process (median of 3 runs at 1M, one run above: a 16M load
  takes minutes on the shared machine), triples/s and the store's size on disk per triple;
* peak RSS of a fresh process that opens the store and answers every query (median of 3 runs), and of
  one that builds the networkx ``MultiDiGraph`` and answers them (where it fits: ``--nx-max``);
* latency, in one process, on the same seeded query sets, each query repeated ``--repeats`` times
  (median per query, then median over the queries), store vs networkx vs Virtuoso (our ``SparqlGraph``
  over HTTP on loopback, bulk-loaded with ``ld_add``/``rdf_loader_run``): ``neighbors`` (both
  directions), 2-hop and 3-hop ``paths()``, ``shortest_paths(max_hops=3)``, ``subgraph(hops=2,
  direction="out")``. The answers of the three sides are compared before anything is reported.

A both-direction 2-hop subgraph is not in the set: around a typical entity it contains a hub's whole
in-neighbourhood, whose size grows with the graph by construction (that is what a hub is), so it measures
the answer's growth rather than the store's.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks import common
from kg_adapters.index import read as traversal_index

if TYPE_CHECKING:
    import networkx as nx

    from benchmarks.synth_freebase import Graph

NAME = "scale"
MODULE = "benchmarks.scale"
WORKDIR = common.REPO_ROOT / ".kga" / "bench" / "scale"
KINDS = ("neighbors", "paths2", "paths3", "shortest", "subgraph2")
SIDES = ("store", "store-oxigraph", "networkx", "virtuoso")
"""store: the embedded store with its traversal index; store-oxigraph: the same store with the index
unused (``?index=false``, every answer through Oxigraph, as before the index existed). The latency
runs also time ``store-cold`` (the store with its caches of decoded ids and literals emptied before
each call, :func:`cold_runner`), and ``records`` and ``records+ids`` (:func:`records_runner`: the
answer's records made from ready strings, or from entity numbers decoded on each call; no lookups),
floors under the store's figure; they are not plotted."""
QUERY_COUNTS = {"neighbors": 100, "paths2": 100, "paths3": 100, "shortest": 50, "subgraph2": 100}
TARGET_GROWTH = 1.5
TARGET_NX_RATIO = 1.0
TARGET_INDEX_BUILD_RATIO = 0.25
TARGET_INDEX_SIZE_RATIO = 0.3
VIRTUOSO_SORTED_ROWS = 1_000_000  # hubs at 16M have > 10,000 edges: page through them, not ResultTooLarge
SEED = 20261122
GIB = 2**30


def parse_size(text: str) -> int:
    text = text.strip().upper()
    scale = {"K": 1_000, "M": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("KM")) * scale)


def size_label(triples: int) -> str:
    return f"{triples // 1_000_000}M" if triples % 1_000_000 == 0 else f"{triples // 1000}K"


def log(message: str) -> None:
    print(f"[scale {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ================================================================================================
# query sets: seeded, sampled from the generator's own edge arrays
# ================================================================================================
def sample_queries(graph: Graph, seed: int) -> dict[str, list[Any]]:
    """Query sets for one graph: every path query follows a random walk, so its answer is non-empty;
    every shortest-path pair is three undirected steps apart, so a path of <= 3 hops exists."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n = len(graph.entities)
    out_order = np.argsort(graph.heads, kind="stable")
    out_ptr = np.concatenate([[0], np.cumsum(np.bincount(graph.heads, minlength=n))])
    in_order = np.argsort(graph.tails, kind="stable")
    in_ptr = np.concatenate([[0], np.cumsum(np.bincount(graph.tails, minlength=n))])
    named = np.flatnonzero(~graph.is_cvt)
    ent, rel = graph.entities, graph.relations

    def out_edges(node: int) -> Any:
        return out_order[out_ptr[node] : out_ptr[node + 1]]

    def walk(hops: int) -> tuple[str, tuple[str, ...]] | None:
        node = int(rng.choice(named))
        start, rule = node, []
        for step in range(hops):
            options = out_edges(node)
            if step < hops - 1:
                options = options[out_ptr[graph.tails[options] + 1] > out_ptr[graph.tails[options]]]
            if len(options) == 0:
                return None
            edge = int(rng.choice(options))
            rule.append(rel[graph.rels[edge]])
            node = int(graph.tails[edge])
        return ent[start], tuple(rule)

    def distinct(count: int, make: Any) -> list[Any]:
        found: dict[Any, None] = {}
        while len(found) < count:
            item = make()
            if item is not None:
                found[item] = None
        return list(found)

    def pair() -> tuple[str, str] | None:
        source = node = int(rng.choice(named))
        for _ in range(3):
            out, inc = out_edges(node), in_order[in_ptr[node] : in_ptr[node + 1]]
            if len(out) + len(inc) == 0:
                return None
            pick = int(rng.integers(0, len(out) + len(inc)))
            node = int(graph.tails[out[pick]]) if pick < len(out) else int(graph.heads[inc[pick - len(out)]])
        return None if node == source else (ent[source], ent[node])

    return {
        "neighbors": [ent[int(i)] for i in rng.choice(named, size=QUERY_COUNTS["neighbors"], replace=False)],
        "paths2": distinct(QUERY_COUNTS["paths2"], lambda: walk(2)),
        "paths3": distinct(QUERY_COUNTS["paths3"], lambda: walk(3)),
        "shortest": distinct(QUERY_COUNTS["shortest"], pair),
        "subgraph2": [ent[int(i)] for i in rng.choice(named, size=QUERY_COUNTS["subgraph2"], replace=False)],
    }


def ensure_data(triples: int, workdir: Path) -> tuple[Path, Path]:
    """The cached dump and query sets for ``triples`` (generated on first use)."""
    from benchmarks.synth_freebase import generate

    label = size_label(triples)
    data, queries = workdir / f"freebase-{label}.nt.gz", workdir / f"freebase-{label}.queries.json"
    if not (data.is_file() and queries.is_file()):
        log(f"generating {label} triples into {data}")
        started = time.perf_counter()
        graph = generate(triples, data, seed=SEED)
        sets = sample_queries(graph, SEED + triples)
        queries.write_text(json.dumps({"triples": graph.triples, "queries": sets}), encoding="utf-8")
        log(f"  {graph.triples:,} triples, {len(graph.entities):,} entities in {time.perf_counter() - started:.1f} s")
    return data, queries


def read_query_sets(path: str) -> dict[str, list[Any]]:
    raw = json.loads(Path(path).read_text("utf-8"))["queries"]
    return {
        "neighbors": raw["neighbors"],
        "paths2": [(s, tuple(r)) for s, r in raw["paths2"]],
        "paths3": [(s, tuple(r)) for s, r in raw["paths3"]],
        "shortest": [tuple(p) for p in raw["shortest"]],
        "subgraph2": raw["subgraph2"],
    }


# ================================================================================================
# the sides: per (side, kind) the timed call and how its answer is made comparable (untimed)
# ================================================================================================
Side = tuple[Callable[[Any], Any], Callable[[Any], Any]]
"""(call, comparable): ``call(query)`` is what a user of that side runs and is timed alone;
``comparable(answer)`` turns its answer into a multiset (or a count) to compare the sides, untimed,
as ``bfs_vs_networkx`` times ``paths()`` against ``bfs_with_rule``."""


def edge_multiset(edges: Any) -> Counter[Any]:
    return Counter(e.as_tuple() for e in edges)


def path_multiset(paths: Any) -> Counter[Any]:
    return Counter(tuple(e.as_tuple() for e in p.edges) for p in paths)


def kg_runner(kg: Any) -> dict[str, Side]:
    """Our interface (embedded store or Virtuoso through SparqlGraph): kind -> (call, comparable)."""
    return {
        "neighbors": (lambda q: kg.neighbors(q, direction="both").get(q, []), edge_multiset),
        "paths2": (lambda q: kg.paths(q[0], q[1]), path_multiset),
        "paths3": (lambda q: kg.paths(q[0], q[1]), path_multiset),
        "shortest": (lambda q: kg.shortest_paths(q[0], q[1], max_hops=3), len),
        "subgraph2": (lambda q: kg.subgraph(q, hops=2, direction="out"), edge_multiset),
    }


def records_runner(kg: Any, *, decode: bool = False) -> dict[str, Side]:
    """The answer's records alone, the floor under any implementation that answers with them: each
    query's answer is read from ``kg`` once (on the untimed first call); every call then only makes
    its ``Edge``/``Path`` records (one per distinct edge, by the index's own fast constructor). No
    lookup. ``decode``: the answer is kept as the index's entity numbers, and each call also decodes
    them (each distinct id once), the floor under an answer from this index without names kept in
    memory across calls (the index's cache of decoded ids is not used)."""
    from kg_adapters.index.records import make_edge
    from kg_adapters.records import Path as PathRecord

    index = kg.traversal_index if decode else None
    number = index.number if index is not None else None
    kept: dict[tuple[str, Any], Any] = {}

    def numbered(triples: list[tuple[str, str, Any]]) -> list[tuple[Any, str, Any]]:
        """(head, relation, tail) with the entity ends as index numbers (literal tails kept)."""
        assert number is not None
        return [(number(h), r, number(t) if isinstance(t, str) else t) for h, r, t in triples]

    def named(triples: list[tuple[Any, str, Any]]) -> list[tuple[str, str, Any]]:
        if index is None:
            return triples
        decode = index.name_from_file  # on each call: not the index's cache of decoded ids
        names = {n: decode(n) for n in dict.fromkeys(n for h, _, t in triples for n in (h, t) if type(n) is int)}
        return [(names[h], r, names[t] if type(t) is int else t) for h, r, t in triples]

    def edges_of(kind: str, q: Any, read: Any) -> list[Any]:
        triples = kept.get((kind, q))
        if triples is None:
            triples = [e.as_tuple() for e in read(q)]
            triples = kept[kind, q] = numbered(triples) if index is not None else triples
        return [make_edge(h, r, t) for h, r, t in named(triples)]

    def paths_of(kind: str, q: Any, read: Any) -> list[Any]:
        walks = kept.get((kind, q))
        if walks is None:
            walks = [(p.start, [e.as_tuple() for e in p.edges]) for p in read(q)]
            if index is not None:
                walks = [(start, numbered(edges)) for start, edges in walks]
            kept[kind, q] = walks
        distinct = list(dict.fromkeys(t for _, edges in walks for t in edges))
        made = {t: make_edge(*n) for t, n in zip(distinct, named(distinct), strict=True)}
        return [PathRecord(start=start, edges=tuple(made[t] for t in edges)) for start, edges in walks]

    return {
        "neighbors": (
            lambda q: edges_of("neighbors", q, lambda n: kg.neighbors(n, direction="both").get(n, [])),
            edge_multiset,
        ),
        "paths2": (lambda q: paths_of("paths2", q, lambda x: kg.paths(x[0], x[1])), path_multiset),
        "paths3": (lambda q: paths_of("paths3", q, lambda x: kg.paths(x[0], x[1])), path_multiset),
        "shortest": (lambda q: paths_of("shortest", q, lambda x: kg.shortest_paths(x[0], x[1], max_hops=3)), len),
        "subgraph2": (
            lambda q: edges_of("subgraph2", q, lambda n: kg.subgraph(n, hops=2, direction="out")),
            edge_multiset,
        ),
    }


def cold_runner(kg: Any) -> dict[str, Side]:
    """``kg_runner`` with the index's caches of decoded ids and literal records emptied before every
    call: what a call costs when nothing it names was named by an earlier call (``kg`` is a store
    opened for this side alone, so the other sides' caches stay as they are)."""
    index = kg.traversal_index
    runner = kg_runner(kg)

    def cold(call: Callable[[Any], Any]) -> Callable[[Any], Any]:
        if index is None:  # a store the walks do not use the index for: nothing to empty
            return call

        def run(q: Any) -> Any:
            index.name_cache.clear()
            index.literal_cache.clear()
            return call(q)

        return run

    return {kind: (cold(call), comparable) for kind, (call, comparable) in runner.items()}


def nx_shortest_count(graph: nx.MultiDiGraph, source: str, target: str, max_hops: int = 3) -> int:
    """Number of shortest edge paths (at most ``max_hops``) between the pair, by bidirectional BFS over
    networkx's adjacency dicts, either direction."""
    succ, pred = graph.succ, graph.pred

    def around(node: str) -> dict[str, int]:
        """Entity neighbours of ``node``, either direction, with the number of edges to each."""
        found: dict[str, int] = {}
        for adjacency in (succ[node], pred[node]):
            for other, keys in adjacency.items():
                if isinstance(other, str) and other != node:
                    found[other] = found.get(other, 0) + len(keys)
        return found

    counts: tuple[dict[str, int], dict[str, int]] = ({source: 1}, {target: 1})
    depths: tuple[dict[str, int], dict[str, int]] = ({source: 0}, {target: 0})
    layers = ([source], [target])
    radius = [0, 0]
    while radius[0] + radius[1] < max_hops and layers[0] and layers[1]:
        side = 0 if len(layers[0]) <= len(layers[1]) else 1
        seen = counts[side]
        fresh: dict[str, int] = {}
        for node in layers[side]:
            for nxt, multiplicity in around(node).items():
                if nxt not in seen:
                    fresh[nxt] = fresh.get(nxt, 0) + seen[node] * multiplicity
        radius[side] += 1
        seen.update(fresh)
        depths[side].update(dict.fromkeys(fresh, radius[side]))
        layers[side][:] = list(fresh)
        meets = [node for node in fresh if node in depths[1 - side]]
        if meets:
            best = min(depths[1 - side][node] for node in meets)
            return sum(fresh[n] * counts[1 - side][n] for n in meets if depths[1 - side][n] == best)
    return 0


def nx_runner(graph: nx.MultiDiGraph) -> dict[str, Side]:
    """What a networkx user writes for the same questions: RoG's ``bfs_with_rule`` for paths, the graph's
    adjacency for the rest, each answer as (head, relation, tail) tuples. Shortest paths use the same
    bidirectional search as ours over networkx's dicts (``nx.all_shortest_paths`` is a one-sided BFS:
    through a hub it costs seconds per query)."""
    from benchmarks.bfs_vs_networkx import bfs_with_rule

    def neighbors(q: str) -> list[tuple[Any, Any, Any]]:
        edges = [(h, r, t) for h, t, r in graph.out_edges(q, keys=True)]
        edges += [(h, r, t) for h, t, r in graph.in_edges(q, keys=True)]
        return edges

    def paths(q: Any) -> list[Any]:
        return bfs_with_rule(graph, q[0], list(q[1]))

    def shortest(q: Any) -> int:
        return nx_shortest_count(graph, q[0], q[1])

    def subgraph2(q: str) -> list[tuple[Any, Any, Any]]:
        first = [(h, r, t) for h, t, r in graph.out_edges(q, keys=True)]
        edges = dict.fromkeys(first)
        for _, _, tail in first:
            if isinstance(tail, str) and tail != q:
                edges.update(dict.fromkeys((h, r, t) for h, t, r in graph.out_edges(tail, keys=True)))
        return list(edges)

    def identity(answer: Any) -> Any:
        return answer

    def path_tuples(found: list[Any]) -> Counter[Any]:
        return Counter(tuple(p) for p in found)

    return {
        "neighbors": (neighbors, Counter),
        "paths2": (paths, path_tuples),
        "paths3": (paths, path_tuples),
        "shortest": (shortest, identity),
        "subgraph2": (subgraph2, Counter),
    }


def size_of(answer: Any) -> int:
    return answer if isinstance(answer, int) else sum(answer.values())


# ================================================================================================
# child processes
# ================================================================================================
def child_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog=f"{MODULE} --child")
    parser.add_argument("kind", choices=("load", "serve-store", "serve-nx", "latency", "growth"))
    parser.add_argument("--data")
    parser.add_argument("--store", help="a store (for growth: comma-separated, smallest first)")
    parser.add_argument("--queries", help="query sets (for growth: one per store)")
    parser.add_argument("--virtuoso")
    parser.add_argument("--nx", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-index", action="store_true", help="load: without the traversal index")
    args = parser.parse_args(argv)
    out: dict[str, Any] = {"kind": args.kind}
    if args.kind == "load":
        from loaders import load_files
        from loaders.indexing import index_bytes

        report = load_files([args.data], args.store, profile="freebase", progress=False, index=not args.no_index)
        out.update(
            seconds=report.seconds,
            index_seconds=report.index_seconds,  # the load's waits for the index (numbered beside Oxigraph)
            index_bytes=index_bytes(args.store) if not args.no_index else 0,
            store_triples=report.store_triples,
            statements=report.statements_read,
        )
    elif args.kind == "serve-store":
        from benchmarks.bfs_vs_networkx import open_store

        kg = open_store(args.store)
        out["answers"] = run_all(kg_runner(kg), read_query_sets(args.queries))
        kg.close()
    elif args.kind == "serve-nx":
        from benchmarks.bfs_vs_networkx import build_graph, read_triples

        triples = visible(read_triples(args.data))
        graph = build_graph(triples)
        del triples
        gc.collect()
        out["answers"] = run_all(nx_runner(graph), read_query_sets(args.queries))
    elif args.kind == "growth":
        out.update(store_growth(args.store.split(","), args.queries.split(","), args.repeats))
    else:
        out.update(latency(args))
    common.emit_child_result(out)


def run_all(runner: dict[str, Side], sets: dict[str, list[Any]]) -> int:
    total = 0
    for kind in KINDS:
        call, comparable = runner[kind]
        total += sum(size_of(comparable(call(q))) for q in sets[kind])
    return total


def latency(args: argparse.Namespace) -> dict[str, Any]:
    """Every query on every side, interleaved, ``repeats`` times; answers compared first."""
    from benchmarks.bfs_vs_networkx import build_graph, open_store, read_triples

    sets = read_query_sets(args.queries)
    runners: dict[str, dict[str, Side]] = {}
    kg = open_store(args.store)
    runners["store"] = kg_runner(kg)
    plain = open_store(args.store, index=False)
    runners["store-oxigraph"] = kg_runner(plain)
    runners["store-cold"] = cold_runner(open_store(args.store))
    runners["records"] = records_runner(kg)
    runners["records+ids"] = records_runner(kg, decode=True)
    build_seconds = None
    if args.nx:
        started = time.perf_counter()
        triples = visible(read_triples(args.data))
        graph = build_graph(triples)
        del triples
        gc.collect()
        build_seconds = time.perf_counter() - started
        runners["networkx"] = nx_runner(graph)
    if args.virtuoso:
        from kg_adapters import connect

        remote = connect(
            "sparql+" + args.virtuoso,
            dialect="virtuoso",
            profile="freebase",
            timeout=300,
            max_sorted_rows=VIRTUOSO_SORTED_ROWS,
        )
        runners["virtuoso"] = kg_runner(remote)

    result: dict[str, Any] = {
        "sides": list(runners),
        "nx_build_seconds": build_seconds,
        "kinds": {},
        "load_average_before": os.getloadavg(),
    }
    for kind in KINDS:
        per_side: dict[str, list[float]] = {side: [] for side in runners}
        answer_sizes: list[int] = []
        mismatches = []
        for query in sets[kind]:
            answers = {
                side: runner[kind][1](runner[kind][0](query)) for side, runner in runners.items()
            }  # warm-up, check
            reference = answers["store"]
            answer_sizes.append(size_of(reference))
            for side, answer in answers.items():
                if answer != reference:
                    mismatches.append(
                        {"side": side, "query": query, "store": size_of(reference), side: size_of(answer)}
                    )
            for side, runner in runners.items():
                call = runner[kind][0]
                timings = []
                for _ in range(args.repeats):
                    started = time.perf_counter()
                    call(query)
                    timings.append(time.perf_counter() - started)
                per_side[side].append(common.median(timings))
        result["kinds"][kind] = {
            "queries": len(sets[kind]),
            "median_answer_size": common.median(answer_sizes),
            "max_answer_size": max(answer_sizes),
            "median_seconds": {side: common.median(values) for side, values in per_side.items()},
            "p90_seconds": {side: common.percentile(values, 90) for side, values in per_side.items()},
            "mismatches": mismatches[:5],
            "mismatch_count": len(mismatches),
        }
        log(
            f"    {kind}: "
            + ", ".join(f"{s} {common.fmt_seconds(v)}" for s, v in result["kinds"][kind]["median_seconds"].items())
        )
    result["load_average_after"] = os.getloadavg()
    return result


def visible(triples: list[Any]) -> list[Any]:
    """The triples whose relation the freebase profile's filter keeps: the store answers
    ``neighbors``, ``shortest_paths`` and ``subgraph`` without the hidden ones (names, types), so
    networkx is built from the same edges (like with like). Named relations (paths) are never hidden."""
    from kg_adapters.profiles import get_profile

    keeps = get_profile("freebase").relation_filter.keeps
    return [triple for triple in triples if keeps(triple[1])]


def store_growth(stores: list[str], queries: list[str], repeats: int) -> dict[str, Any]:
    """The store side at every size in one process, interleaved query by query (query i of each size's
    set, then i + 1, ...), so the machine's noise falls on every size alike; latency growth comes from here."""
    from benchmarks.bfs_vs_networkx import open_store

    load_before = os.getloadavg()
    kgs = [open_store(store) for store in stores]
    colds = [open_store(store) for store in stores]
    runners = [(kg_runner(kg), cold_runner(cold)) for kg, cold in zip(kgs, colds, strict=True)]
    sets = [read_query_sets(path) for path in queries]
    medians: dict[str, list[float]] = {}
    cold_medians: dict[str, list[float]] = {}
    for kind in KINDS:
        per_size: list[list[float]] = [[] for _ in stores]
        cold_per_size: list[list[float]] = [[] for _ in stores]
        for i in range(min(len(s[kind]) for s in sets)):
            for j, (warm, cold) in enumerate(runners):
                query = sets[j][kind][i]
                for runner, found in ((warm, per_size[j]), (cold, cold_per_size[j])):
                    call = runner[kind][0]
                    call(query)
                    timings = []
                    for _ in range(repeats):
                        started = time.perf_counter()
                        call(query)
                        timings.append(time.perf_counter() - started)
                    found.append(common.median(timings))
        medians[kind] = [common.median(values) for values in per_size]
        cold_medians[kind] = [common.median(values) for values in cold_per_size]
        log(
            f"    growth {kind}: "
            + ", ".join(common.fmt_seconds(v) for v in medians[kind])
            + "; caches cold: "
            + ", ".join(common.fmt_seconds(v) for v in cold_medians[kind])
        )
    for kg in (*kgs, *colds):
        kg.close()
    return {
        "median_seconds": medians,
        "cold_median_seconds": cold_medians,
        "load_average": os.getloadavg(),
        "load_average_before": load_before,
    }


def measure_growth(sizes: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any] | None:
    workdir = Path(args.workdir)
    stores = [workdir / f"store-{s['label']}" for s in sizes]
    queries = [workdir / f"freebase-{s['label']}.queries.json" for s in sizes]
    if len(sizes) < 2 or not all(p.exists() for p in [*stores, *queries]):
        return None
    log("latency growth: every size's store in one process")
    result = child(
        "growth",
        "--store",
        ",".join(map(str, stores)),
        "--queries",
        ",".join(map(str, queries)),
        "--repeats",
        str(args.repeats),
    )
    result["labels"] = [s["label"] for s in sizes]
    return result


def child(kind: str, *args: str, timeout: float = 7200.0) -> dict[str, Any]:
    return common.run_child(MODULE, ["--child", kind, *args], timeout=timeout)


# ================================================================================================
# one size
# ================================================================================================
def disk_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def measure_size(triples: int, args: argparse.Namespace) -> dict[str, Any]:
    workdir = Path(args.workdir)
    label = size_label(triples)
    data, queries = ensure_data(triples, workdir)
    written = json.loads(queries.read_text("utf-8"))["triples"]
    out: dict[str, Any] = {"label": label, "triples": written, "data_bytes": data.stat().st_size}

    # -- load ------------------------------------------------------------------------------------
    store = workdir / f"store-{label}"
    sidecar = workdir / f"store-{label}.loads.json"
    runs = args.load_runs if triples <= 4_000_000 else 1
    loads: list[dict[str, Any]] = []
    plain_loads: list[dict[str, Any]] = []  # the same load without the index: what the index adds
    reused = args.reuse_stores and store.is_dir() and sidecar.is_file()
    if reused:
        recorded = json.loads(sidecar.read_text("utf-8"))
        loads, plain_loads = recorded["with_index"], recorded["without_index"]
        log(f"  reusing {store} and the figures of its {len(loads)} load run(s)")
    else:
        sidecar.unlink(missing_ok=True)
        plain_store = workdir / f"store-{label}-without-index"
        for i in range(runs):
            for indexed in (True, False) if i % 2 == 0 else (False, True):
                target = store if indexed else plain_store
                shutil.rmtree(target, ignore_errors=True)
                flags = [] if indexed else ["--no-index"]
                result = child("load", "--data", str(data), "--store", str(target), *flags)
                (loads if indexed else plain_loads).append(result)
                shutil.rmtree(plain_store, ignore_errors=True)
                log(
                    f"  load {i + 1}/{runs} ({'with' if indexed else 'without'} the index): "
                    f"{result['store_triples']:,} triples in {result['seconds']:.1f} s"
                )
        sidecar.write_text(json.dumps({"with_index": loads, "without_index": plain_loads}), encoding="utf-8")
    out["reused_store"] = reused
    from benchmarks.bfs_vs_networkx import build_over_load, waited_over_load

    seconds = common.median([float(r["seconds"]) for r in loads])
    plain_seconds = common.median([float(r["seconds"]) for r in plain_loads])
    store_triples = int(loads[0]["store_triples"])
    size = disk_bytes(store)
    index_bytes = int(loads[0]["index_bytes"])
    out["index"] = {
        "median_seconds": seconds - plain_seconds,
        "median_waited_seconds": common.median([float(r["index_seconds"]) for r in loads]),
        "waited_over_load": waited_over_load(loads),
        "load_without_index_seconds": plain_seconds,
        "bytes": index_bytes,
        "build_over_load": build_over_load(loads, plain_loads),
        "size_over_store": index_bytes / (size - index_bytes),
    }
    log(
        f"  index: adds {seconds - plain_seconds:.1f} s to the load ({out['index']['build_over_load']:.2f}x the load "
        f"without it), {common.fmt_bytes(index_bytes)} ({index_bytes / (size - index_bytes):.2f}x the Oxigraph data)"
    )
    out["load"] = {
        "runs": len(loads),
        "median_seconds": seconds,
        "triples_per_second": store_triples / seconds,
        "store_triples": store_triples,
        "peak_rss_bytes": common.median([float(r["peak_rss_bytes"]) for r in loads]),
        "store_bytes": size,
        "store_bytes_per_triple": size / store_triples,
    }
    if args.load_only:
        return out

    # -- memory of a serving process ------------------------------------------------------------------
    serve = [child("serve-store", "--store", str(store), "--queries", str(queries)) for _ in range(args.rss_runs)]
    out["serve_store_peak_rss_bytes"] = common.median([float(r["peak_rss_bytes"]) for r in serve])
    log(f"  serving store: peak RSS {common.fmt_bytes(out['serve_store_peak_rss_bytes'])}")
    with_nx = triples <= args.nx_max
    if with_nx:
        result = child("serve-nx", "--data", str(data), "--queries", str(queries))
        out["serve_nx_peak_rss_bytes"] = float(result["peak_rss_bytes"])
        log(f"  serving networkx: peak RSS {common.fmt_bytes(out['serve_nx_peak_rss_bytes'])}")
    else:
        out["serve_nx_peak_rss_bytes"] = None
        out["nx_skipped"] = f"networkx not built above {size_label(args.nx_max)} triples (see the memory estimate)"

    # -- Virtuoso and the latency run ------------------------------------------------------------------
    virtuoso_info: dict[str, Any] | None = None
    latency_args = [
        "--store",
        str(store),
        "--queries",
        str(queries),
        "--data",
        str(data),
        "--repeats",
        str(args.repeats),
    ]
    if with_nx:
        latency_args.append("--nx")
    if triples <= args.virtuoso_max:
        from kg_adapters.testing.virtuoso import VirtuosoServer

        vdir = workdir / f"virtuoso-{label}"
        shutil.rmtree(vdir, ignore_errors=True)
        buffers = max(100_000, triples // 40)  # 8 KiB pages: ~200 bytes of buffer per triple
        with VirtuosoServer(
            vdir,
            data_dirs=[workdir],
            number_of_buffers=buffers,
            max_query_execution_time=600,
            max_sorted_top_rows=VIRTUOSO_SORTED_ROWS,
        ) as server:
            started = time.perf_counter()
            loaded = server.load([data])
            load_seconds = time.perf_counter() - started
            log(f"  Virtuoso: {loaded:,} triples loaded in {load_seconds:.1f} s")
            out["latency"] = child("latency", *latency_args, "--virtuoso", server.sparql_url)
            virtuoso_info = {
                "load_seconds": load_seconds,
                "triples": loaded,
                "triples_per_second": loaded / load_seconds,
                "number_of_buffers": buffers,
                "peak_rss_bytes": process_peak_rss(server.pid),
                "db_bytes": disk_bytes(vdir / "db") if (vdir / "db").is_dir() else None,
            }
        shutil.rmtree(vdir, ignore_errors=True)
    else:
        out["latency"] = child("latency", *latency_args)
    out["virtuoso"] = virtuoso_info
    return out


def process_peak_rss(pid: int | None) -> int | None:
    """VmHWM of another process (the Virtuoso server), from /proc."""
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


# ================================================================================================
# report
# ================================================================================================
def store_growth_ratio(results: dict[str, Any], kind: str) -> float:
    """Largest / smallest size, store side, from the same-process run when there is one."""
    same = results.get("growth")
    if same:
        values = same["median_seconds"][kind]
        return common.ratio(values[-1], values[0])
    return growth(results["sizes"], kind, "store")


def growth(sizes: list[dict[str, Any]], kind: str, side: str) -> float:
    first = sizes[0]["latency"]["kinds"][kind]["median_seconds"].get(side, float("nan"))
    last = sizes[-1]["latency"]["kinds"][kind]["median_seconds"].get(side, float("nan"))
    return common.ratio(last, first)


def label_sizes(ax: Any, xs: list[float], sizes: list[dict[str, Any]]) -> None:
    """Log-log axes with one tick per measured size, named like the tables (1M, 4M, 16M)."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(xs, [s["label"] for s in sizes])
    ax.minorticks_off()


def plot(results: dict[str, Any]) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = results["sizes"]
    same = results.get("growth")
    xs = [s["triples"] / 1e6 for s in sizes]
    sides = [  # a side no size measured (Virtuoso with --virtuoso-max 0) gets no empty panel
        side for side in SIDES if any(side in s["latency"]["kinds"][k]["median_seconds"] for s in sizes for k in KINDS)
    ]
    fig, axes = plt.subplots(1, len(sides), figsize=(4.8 * len(sides) + 0.5, 4.5), sharey=True, squeeze=False)
    for ax, side in zip(axes[0], sides, strict=True):
        for kind in KINDS:
            points = [
                (x, s["latency"]["kinds"][kind]["median_seconds"].get(side)) for x, s in zip(xs, sizes, strict=True)
            ]
            if side == "store" and same:
                points = list(zip(xs, same["median_seconds"][kind], strict=True))
            points = [(x, y * 1e3) for x, y in points if y is not None]
            if points:
                ax.plot(*zip(*points, strict=True), marker="o", label=kind)
        label_sizes(ax, xs, sizes)
        ax.set_title(side)
        ax.set_xlabel("million triples")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("median latency per query (ms)")
    axes[0][0].legend()
    fig.tight_layout()
    latency_png = common.RESULTS_DIR / "scale_latency.png"
    fig.savefig(latency_png, dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    series = {
        "store (serving process)": [s["serve_store_peak_rss_bytes"] for s in sizes],
        "networkx (serving process)": [s["serve_nx_peak_rss_bytes"] for s in sizes],
        "Virtuoso server": [(s["virtuoso"] or {}).get("peak_rss_bytes") for s in sizes],
        "store on disk": [s["load"]["store_bytes"] for s in sizes],
    }
    for name, values in series.items():
        points = [(x, v / GIB) for x, v in zip(xs, values, strict=True) if v]
        if points:
            ax.plot(*zip(*points, strict=True), marker="o", label=name, linestyle="--" if "disk" in name else "-")
    label_sizes(ax, xs, sizes)
    ax.set_xlabel("million triples")
    ax.set_ylabel("GiB (peak RSS, or bytes on disk)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    memory_png = common.RESULTS_DIR / "scale_memory.png"
    fig.savefig(memory_png, dpi=110)
    plt.close(fig)
    return [latency_png.name, memory_png.name]


def cell(seconds: float | None) -> str:
    return "skipped" if seconds is None else common.fmt_seconds(seconds)


def notes(
    sizes: list[dict[str, Any]], config: dict[str, Any] | None = None, machine: dict[str, Any] | None = None
) -> list[str]:
    """What a reader of the tables needs to know, computed from the figures (and the run's options and machine)."""
    config = config or {}
    memory = (machine or {}).get("memory_total_bytes")
    out = [
        "Notes:",
        "",
        f"- The generator writes {sizes[-1]['triples']:,} lines at {sizes[-1]['label']}; random edges repeat, "
        f"so the store holds {sizes[-1]['load']['store_triples']:,} distinct triples (the `triples` column).",
    ]
    measured = [s for s in sizes if s["serve_nx_peak_rss_bytes"]]
    for s in sizes:
        if not s["serve_nx_peak_rss_bytes"] and measured:
            base = measured[-1]
            estimate = base["serve_nx_peak_rss_bytes"] * s["load"]["store_triples"] / base["load"]["store_triples"]
            limit = config.get("nx_max")
            out.append(
                f"- networkx at {s['label']} was not built"
                + (f" (`--nx-max {size_label(limit)}`)" if limit else "")
                + f": scaling its measured {common.fmt_bytes(base['serve_nx_peak_rss_bytes'])} at {base['label']} "
                f"linearly gives ~{estimate / GIB:.1f} GiB"
                + (f", against this machine's {memory / GIB:.1f} GiB in all." if memory else ".")
            )
    out += [
        "- Virtuoso is queried through our `SparqlGraph` (`sparql+http://...&dialect=virtuoso`) over loopback HTTP, "
        "so its latency includes HTTP and JSON decoding; its RSS is the server's peak (`VmHWM`), buffers sized "
        "at ~200 bytes per triple (`NumberOfBuffers`).",
        "- `shortest` on the index is a bidirectional BFS that expands the side whose frontier has the smaller "
        "total degree (per-node CSR offsets), and its last round joins the two frontiers without reading a "
        "hub's edges (edges between two hubs are looked up per relation); a typical pair is three hops apart "
        "through a hub, whose degree grows with the graph. Both implementations order a pair's paths by their "
        "edges, so the answer does not depend on which side grows first. networkx counts the same paths with "
        "the same search over its dicts (fewer-nodes rule).",
        "- networkx is built from the edges the freebase profile's relation filter keeps (the store hides names "
        "and types from `neighbors`/`subgraph`/`shortest_paths` unless named), so both sides answer the same "
        "question; every answer is compared before timing.",
        "- Each side's timed call is the call its user makes and nothing else (our `neighbors`/`paths`/"
        "`shortest_paths`/`subgraph` returning records; networkx's adjacency read into (head, relation, tail) "
        "tuples, RoG's `bfs_with_rule`), as `bfs_vs_networkx` times `paths()`; turning answers into multisets to "
        "compare them is done untimed (results before 2026-11-26 timed that conversion too).",
    ]
    floors = [
        (s["label"], kind, common.ratio(med["records"], med["networkx"]))
        for s in sizes
        for kind in KINDS
        if "records" in (med := s["latency"]["kinds"][kind]["median_seconds"]) and "networkx" in med
    ]
    if floors:
        worst = max(floors, key=lambda f: f[2])
        out.append(
            "- `answer records alone` makes each answer's `Edge`/`Path` records from strings read beforehand (no "
            "lookup, no id decoding): the floor under any implementation that answers with these records. "
            "networkx answers with tuples of the names it holds. The "
            f"floor is at most {common.fmt_ratio(worst[2])} of networkx's whole answer ({worst[0]} {worst[1]}). "
            "`records + id decoding` keeps the answer as the index's entity numbers and also decodes them on each "
            "call (each distinct id once): what answering costs at least when no name is kept across calls (a "
            "floor under the `caches cold` column, not under the warm one; networkx keeps every name in memory)."
        )
    cold = [
        (s["label"], kind, common.ratio(med["store-cold"], med["store"]))
        for s in sizes
        for kind in KINDS
        if "store-cold" in (med := s["latency"]["kinds"][kind]["median_seconds"])
    ]
    if cold:
        low, high = min(c[2] for c in cold), max(c[2] for c in cold)
        out.append(
            "- The store keeps the entity ids and literal records its answers decoded (up to "
            f"{traversal_index.NAME_CACHE_CAP:,} ids and {traversal_index.LITERAL_CACHE_CAP:,} literals, emptied "
            "when full) across calls, as networkx keeps every name in memory; each timed query repeats a call, so "
            "the `store (index)` column is the warm figure. `store, caches cold` empties both caches before every "
            f"call: {common.fmt_ratio(low)} to {common.fmt_ratio(high)} the warm figure in this run."
        )
    virtuoso_max = config.get("virtuoso_max")
    if virtuoso_max is not None and all(not s.get("virtuoso") for s in sizes):
        out.append(f"- Virtuoso was not run (`--virtuoso-max {virtuoso_max}`): its columns say `skipped`/`n/a`.")
    reused = [s["label"] for s in sizes if s.get("reused_store")]
    if reused:
        out.append(
            f"- {', '.join(reused)}: the store was loaded by an earlier run into the same work directory "
            "(`--reuse-stores`); its load and index figures are that run's "
            f"({', '.join(str(s['load']['runs']) for s in sizes if s['label'] in reused)} load run(s))."
        )
    for s in sizes:
        index = s.get("index")
        if index:
            out.append(
                f"- {s['label']}: the traversal index added {index['median_seconds']:.1f} s to the "
                f"{s['load']['median_seconds']:.1f} s load ({index['build_over_load']:.2f}x the "
                f"{index['load_without_index_seconds']:.1f} s load without it, `index=False`; target <= "
                f"{TARGET_INDEX_BUILD_RATIO}; the load waited {index['median_waited_seconds']:.1f} s for it, as it is "
                f"numbered by a worker process while Oxigraph loads) and takes {common.fmt_bytes(index['bytes'])} "
                f"({index['size_over_store']:.2f}x the Oxigraph data; target <= {TARGET_INDEX_SIZE_RATIO})."
            )
        latency = s["latency"]
        before, after = latency.get("load_average_before"), latency.get("load_average_after")
        if before and after:
            busy = max(before[0], after[0]) > results_cores()
            verdict = "busy: absolute times are inflated, ratios in one process suffer less" if busy else "quiet"
            out.append(
                f"- {s['label']}: 1-minute load average {before[0]:.1f} before and {after[0]:.1f} after the latency "
                f"run on {results_cores()} cores ({verdict})."
            )
        mismatching = sum(k["mismatch_count"] for k in latency["kinds"].values())
        out.append(f"- {s['label']}: {mismatching} answer(s) differed between the sides.")
    return out


def results_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def render_markdown(results: dict[str, Any]) -> str:
    sizes = results["sizes"]
    lines = [
        "# Scale: load, disk, memory and latency at 1M-16M triples",
        "",
        f"`python -m {MODULE}`; {results['machine']['cpu_usable']} usable cores "
        f"({results['machine']['cpu_model']}), {common.fmt_bytes(results['machine']['memory_total_bytes'] or 0)}. "
        f"Graphs from `benchmarks/synth_freebase.py` (seed {SEED}); latencies are "
        f"medians over the queries of each query's median of {results['config']['repeats']} runs, all sides in one "
        "process on the same queries.",
        "",
        "## Load, disk, memory",
        "",
    ]
    rows = []
    for s in sizes:
        v = s["virtuoso"] or {}
        rows.append(
            [
                s["label"],
                f"{s['load']['store_triples']:,}",
                f"{s['load']['median_seconds']:.1f} s ({s['load']['runs']} run(s))",
                f"{s['load']['triples_per_second']:,.0f}",
                f"{s['load']['store_bytes_per_triple']:.0f} B",
                common.fmt_bytes(s["serve_store_peak_rss_bytes"]),
                common.fmt_bytes(s["serve_nx_peak_rss_bytes"]) if s["serve_nx_peak_rss_bytes"] else "skipped",
                f"{v['triples_per_second']:,.0f}/s" if v else "not run",
                common.fmt_bytes(v["peak_rss_bytes"]) if v.get("peak_rss_bytes") else "n/a",
            ]
        )
    lines.append(
        common.markdown_table(
            [
                "size",
                "triples",
                "load (median)",
                "triples/s",
                "disk/triple",
                "store serving RSS",
                "networkx RSS",
                "Virtuoso load",
                "Virtuoso RSS",
            ],
            rows,
        )
    )
    lines += ["", "## Median latency per query", ""]
    rows = []
    for s in sizes:
        for kind in KINDS:
            k = s["latency"]["kinds"][kind]
            med = k["median_seconds"]
            store = med["store"]
            nx_ratio = common.ratio(store, med["networkx"]) if "networkx" in med else None
            rows.append(
                [
                    s["label"],
                    kind,
                    f"{k['median_answer_size']:.0f}",
                    cell(store),
                    cell(med.get("store-cold")),
                    common.fmt_ratio(common.ratio(med["store-cold"], med["networkx"]))
                    if "store-cold" in med and "networkx" in med
                    else "n/a",
                    cell(med.get("store-oxigraph")),
                    common.fmt_ratio(common.ratio(med["store-oxigraph"], store)) if "store-oxigraph" in med else "n/a",
                    cell(med.get("networkx")),
                    "n/a"
                    if nx_ratio is None
                    else f"{common.fmt_ratio(nx_ratio)} ({'met' if nx_ratio <= TARGET_NX_RATIO else 'not met'})",
                    cell(med.get("records")),
                    common.fmt_ratio(common.ratio(med["records"], med["networkx"]))
                    if "records" in med and "networkx" in med
                    else "n/a",
                    cell(med.get("records+ids")),
                    common.fmt_ratio(common.ratio(med["records+ids"], med["networkx"]))
                    if "records+ids" in med and "networkx" in med
                    else "n/a",
                    cell(med.get("virtuoso")),
                    common.fmt_ratio(common.ratio(store, med["virtuoso"])) if "virtuoso" in med else "n/a",
                    str(k["mismatch_count"]),
                ]
            )
    lines.append(
        common.markdown_table(
            [
                "size",
                "query",
                "median answer",
                "store (index)",
                "store, caches cold",
                "cold/nx",
                "store, Oxigraph only",
                "index speed-up",
                "networkx",
                f"store/nx (target <= {TARGET_NX_RATIO:.1f}x)",
                "answer records alone",
                "records alone/nx",
                "records + id decoding",
                "records + ids/nx",
                "Virtuoso",
                "store/Virtuoso",
                "answers differing",
            ],
            rows,
        )
    )
    lines += [
        "",
        f"## Growth from {sizes[0]['label']} to {sizes[-1]['label']} (target: latency <= "
        f"{TARGET_GROWTH}x, memory flat)",
        "",
    ]
    same = results.get("growth")
    rows = []
    for kind in KINDS:
        g = store_growth_ratio(results, kind)
        per_size = same["median_seconds"][kind] if same else []
        cold = (same or {}).get("cold_median_seconds", {}).get(kind, [])
        rows.append(
            [
                kind,
                " / ".join(common.fmt_seconds(v) for v in per_size),
                common.fmt_ratio(g),
                "met" if g <= TARGET_GROWTH else "not met",
                " / ".join(common.fmt_seconds(v) for v in cold) or "n/a",
                common.fmt_ratio(common.ratio(cold[-1], cold[0])) if cold else "n/a",
                common.fmt_ratio(growth(sizes, kind, "virtuoso")),
            ]
        )
    rss = common.ratio(sizes[-1]["serve_store_peak_rss_bytes"], sizes[0]["serve_store_peak_rss_bytes"])
    rows.append(
        [
            "serving peak RSS",
            " / ".join(common.fmt_bytes(s["serve_store_peak_rss_bytes"]) for s in sizes),
            common.fmt_ratio(rss),
            "flat: met" if rss <= TARGET_GROWTH else "flat: not met",
            "",
            "",
            "",
        ]
    )
    lines.append(
        common.markdown_table(
            [
                "measure",
                "store, " + " / ".join(s["label"] for s in sizes),
                "store growth",
                "target",
                "store, caches cold",
                "cold growth",
                "Virtuoso growth (separate runs)",
            ],
            rows,
        )
    )
    lines += [
        "",
        "Store latencies in this table come from one process holding every size's store, queries interleaved "
        "across sizes (`growth` in scale.json), so the machine's load falls on all sizes alike; the "
        "per-size table above comes from one process per size, minutes apart. The cold columns are a second "
        "store object per size whose caches of decoded ids and literals are emptied before every call.",
    ]
    if results.get("plots"):
        lines += ["", "Plots: " + ", ".join(f"`{name}`" for name in results["plots"]) + ".", ""]
    else:
        lines += ["", "No plots in this run (matplotlib missing).", ""]
    lines += results.get("notes", [])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--child"]:
        child_main(argv[1:])
        return 0
    parser = common.argument_parser(MODULE, __doc__)
    parser.add_argument("--sizes", default="1M,4M,16M")
    parser.add_argument("--workdir", default=str(WORKDIR), help="cache for dumps, stores and Virtuoso databases")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs of each query per side")
    parser.add_argument("--load-runs", type=int, default=3, help="load runs at sizes <= 1M")
    parser.add_argument("--rss-runs", type=int, default=3)
    parser.add_argument("--nx-max", type=parse_size, default=parse_size("4M"), help="largest size built in networkx")
    parser.add_argument("--virtuoso-max", type=parse_size, default=parse_size("16M"))
    parser.add_argument("--merge", action="store_true", help="keep sizes of the previous results not re-run")
    parser.add_argument(
        "--reuse-stores",
        action="store_true",
        help="keep a store an earlier run loaded into --workdir (and its load figures) instead of reloading it",
    )
    parser.add_argument(
        "--load-only", action="store_true", help="generate and load the sizes into --workdir, measure nothing else"
    )
    parser.add_argument("--allow-mismatch", action="store_true", help="exit 0 even when answers differ")
    parser.add_argument(
        "--growth-only", action="store_true", help="only re-run the same-process growth step on the cached stores"
    )
    args = parser.parse_args(argv)
    Path(args.workdir).mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    previous: dict[str, Any] = {}
    json_path = common.RESULTS_DIR / f"{NAME}.json"
    if (args.merge or args.growth_only) and json_path.is_file():
        previous = {s["label"]: s for s in json.loads(json_path.read_text("utf-8"))["sizes"]}
    measured = {}
    for triples in sorted(parse_size(s) for s in args.sizes.split(",")):
        if args.growth_only:
            break
        log(f"size {size_label(triples)}")
        measured[size_label(triples)] = measure_size(triples, args)
    if args.load_only:
        log("loaded: " + ", ".join(f"{label} in {s['load']['median_seconds']:.1f} s" for label, s in measured.items()))
        return 0
    merged = {**previous, **measured}
    sizes = sorted(merged.values(), key=lambda s: s["triples"])
    results: dict[str, Any] = {
        "benchmark": NAME,
        "machine": common.machine_info(),
        "source": common.source_fingerprint("kg_adapters", "loaders"),
        "config": {k: v for k, v in vars(args).items() if k != "workdir"},
        "seconds": time.perf_counter() - began,
        "sizes": sizes,
        "growth": measure_growth(sizes, args),
    }
    results["load_average"] = os.getloadavg()
    results["notes"] = notes(sizes, results["config"], results["machine"])
    results["plots"] = []
    common.write_results(NAME, results, render_markdown(results))  # before plotting: a plot error loses nothing
    try:
        results["plots"] = plot(results)
    except ImportError as exc:
        log(f"no plots ({exc}); install matplotlib (pip install -e '.[bench]') to draw them")
    else:
        common.write_results(NAME, results, render_markdown(results))
    print(render_markdown(results))
    print(f"load average now: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    differing = sum(k["mismatch_count"] for s in sizes for k in s["latency"]["kinds"].values())
    if differing and not args.allow_mismatch:
        log(f"{differing} answer(s) differed between the sides (see 'answers differing'); pass --allow-mismatch")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
