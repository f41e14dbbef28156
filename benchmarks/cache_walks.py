"""``connect(store, cache="memory")`` beside the plain store: the walks (``paths``, ``shortest_paths``,
``subgraph``) on FB15k-237.

Run from the repository root::

    .venv/bin/python -m benchmarks.cache_walks [--data PATH] [--queries N] [--repeats R]

The file is loaded once (``loaders.load_files``, traversal index included) and three graphs answer the
same sampled queries in one process:

* ``plain``: ``connect("oxigraph:///...?profile=freebase")``, the index walks;
* ``cache``: the same URL with ``cache="memory"``: the store walks natively (``NativeWalks``), so the
  cache keeps whole answers and the index answers every miss;
* ``cache file``: the same with ``cache=FILE`` (whole answers also written to SQLite on a miss);
* ``hop by hop``: the cache over a wrapper that hides ``native_walks``, so the walks run hop by hop over
  the cache, as every cached store did before the cache knew native walks (the figure to beat).

Every side's answer must equal the plain store's for every query before anything is timed. Per query:
``warm`` is the median of ``--repeats`` calls after one; ``first`` is the call that meets a fresh cache
(each side's cache made empty for it), beside the plain store's first call of it; the sides take turns
at asking first, as they share the traversal index's own caches. Figures are medians
over queries of each query's ratio to ``plain``; the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks import common

NAME = "cache_walks"
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "fb15k237-freebase.nt.gz"
SIDES = ("plain", "cache", "cache file", "hop by hop")

Query = Callable[[Any], Any]


def store_url(store: Path) -> str:
    return f"oxigraph://{store.resolve()}?profile=freebase"


def open_side(side: str, store: Path, workdir: Path) -> Any:
    """The graph of one side (see the module docstring)."""
    from kg_adapters import connect
    from kg_adapters.wrappers import CachedKG, ResultCache
    from kg_adapters.wrappers.base import DelegatingGraph

    if side == "plain":
        return connect(store_url(store))
    if side == "cache":
        return connect(store_url(store), cache="memory")
    if side == "cache file":
        return connect(store_url(store), cache=str(workdir / "cache.sqlite"))

    class HopByHop(DelegatingGraph):
        """The store without its ``native_walks`` declaration: the cache then walks over itself."""

        def _adopt_abilities(self) -> None:
            super()._adopt_abilities()
            self.__dict__.pop("native_walks", None)

    return CachedKG(HopByHop(connect(store_url(store))), cache=ResultCache(), namespace="bench:hop-by-hop")


def sample(data: str, store: Path, count: int, seed: int) -> dict[str, list[tuple[str, Query]]]:
    """Queries per operation from seeded random walks over the store's out-edges (entity ends only), so
    every path query has an answer: 2- and 3-hop relation paths, shortest paths between a walk's ends
    (at most 3 hops, either direction) and 2-hop outgoing subgraphs of its start."""
    from benchmarks.bfs_vs_networkx import read_triples
    from kg_adapters import connect

    rng = random.Random(seed)
    kg = connect(store_url(store))
    names = sorted({head for head, _, tail in read_triples(data) if isinstance(tail, str)})
    queries: dict[str, list[tuple[str, Query]]] = {"paths2": [], "paths3": [], "shortest": [], "subgraph2": []}
    seen: set[str] = set()
    while min(len(found) for found in queries.values()) < count:
        start = node = rng.choice(names)
        rule: list[str] = []
        for _ in range(3):
            edges = [e for e in kg.neighbors(node, literals=False)[node] if isinstance(e.tail, str)]
            if not edges:
                break
            edge = rng.choice(sorted(edges, key=lambda e: (e.relation, e.tail)))
            rule.append(edge.relation)
            node = str(edge.tail)
        label = f"{start} {' '.join(rule)}"
        if len(rule) < 3 or label in seen:
            continue
        seen.add(label)
        end = node
        made: dict[str, tuple[str, Query]] = {
            "paths2": (f"paths({start}, {rule[:2]})", partial(ask_paths, start, rule[:2])),
            "paths3": (f"paths({start}, {rule})", partial(ask_paths, start, rule)),
            "shortest": (f"shortest_paths({start}, {end})", partial(ask_shortest, start, end)),
            "subgraph2": (f"subgraph({start})", partial(ask_subgraph, start)),
        }
        for kind, item in made.items():
            if len(queries[kind]) < count:
                queries[kind].append(item)
    kg.close()
    return queries


def ask_paths(start: str, rule: list[str], graph: Any) -> Any:
    return graph.paths(start, rule)


def ask_shortest(source: str, target: str, graph: Any) -> Any:
    return graph.shortest_paths(source, target, max_hops=3)


def ask_subgraph(seed: str, graph: Any) -> Any:
    return graph.subgraph(seed, hops=2, direction="out")


def timed(graph: Any, query: Query) -> float:
    started = time.perf_counter()
    query(graph)
    return time.perf_counter() - started


def measure(store: Path, queries: dict[str, list[tuple[str, Query]]], repeats: int) -> dict[str, Any]:
    """Per operation and side: the per-query warm and first-touch medians, checked answers first."""
    graphs = {side: open_side(side, store, store.parent) for side in SIDES}
    results: dict[str, Any] = {}
    for kind, items in queries.items():
        common.log(f"{kind}: {len(items)} queries")
        warm: dict[str, list[float]] = {side: [] for side in SIDES}
        first: dict[str, list[float]] = {side: [] for side in SIDES}
        for number, (text, query) in enumerate(items):
            turn = number % len(SIDES)  # who asks first takes turns: the sides share the index's own caches
            for side in SIDES[turn:] + SIDES[:turn]:  # each side's first call of this query, on an empty cache
                if side != "plain":
                    graphs[side].cache.clear()
                first[side].append(timed(graphs[side], query))
            expected = query(graphs["plain"])
            for side in SIDES[1:]:
                answer = query(graphs[side])
                if answer != expected or answer.truncated != expected.truncated:
                    raise AssertionError(f"{side} answers {text} differently from the plain store")
            for side in SIDES:
                warm[side].append(statistics.median(timed(graphs[side], query) for _ in range(repeats)))
        results[kind] = {
            "queries": len(items),
            "warm_median_seconds": {side: common.median(warm[side]) for side in SIDES},
            "first_median_seconds": {side: common.median(first[side]) for side in SIDES},
            "warm_ratio": {side: per_query_ratio(warm[side], warm["plain"]) for side in SIDES[1:]},
            "first_ratio": {side: per_query_ratio(first[side], first["plain"]) for side in SIDES[1:]},
        }
        common.log(
            "  warm: "
            + ", ".join(f"{side} {results[kind]['warm_ratio'][side]:.2f}x plain" for side in SIDES[1:])
            + "; first call: "
            + ", ".join(f"{side} {results[kind]['first_ratio'][side]:.2f}x" for side in SIDES[1:])
            + f" (load average {os.getloadavg()[0]:.1f})"
        )
    for graph in graphs.values():
        graph.close()
    return results


def per_query_ratio(side: list[float], plain: list[float]) -> float:
    """The median over queries of one side's time over the plain store's time for that query."""
    return common.median([s / p for s, p in zip(side, plain, strict=True) if p > 0])


def render(data: dict[str, Any]) -> str:
    rows = []
    for kind, found in data["operations"].items():
        plain = found["warm_median_seconds"]["plain"]
        rows.append(
            [
                kind,
                common.fmt_seconds(plain),
                f"{found['warm_ratio']['cache']:.2f}x",
                f"{found['first_ratio']['cache']:.2f}x",
                f"{found['warm_ratio']['cache file']:.2f}x",
                f"{found['first_ratio']['cache file']:.2f}x",
                f"{found['warm_ratio']['hop by hop']:.2f}x",
                f"{found['first_ratio']['hop by hop']:.2f}x",
            ]
        )
    table = common.markdown_table(
        [
            "walk",
            "plain store, warm (median)",
            "cache: warm / plain",
            "cache: first call / plain",
            "cache file: warm / plain",
            "cache file: first call / plain",
            "hop by hop: warm / plain",
            "hop by hop: first call / plain",
        ],
        rows,
    )
    return (
        f'# `cache="memory"` beside the plain store (FB15k-237)\n\n'
        f"`python -m benchmarks.cache_walks`: {data['queries']} queries per walk, {data['repeats']} timed repeats "
        f"of each warm call; ratios are medians over queries of (side / plain store) for the same query, warm "
        f"beside warm and first call beside first call.\n\n"
        f"{table}\n\n"
        f'`cache`: whole answers of the native walks (`cache="memory"`); `cache file`: the same with a SQLite '
        f"file (a miss also writes the answer); `hop by hop`: the walks over the cache, as "
        f"before. First call: the first call of a query, meeting an empty cache.\n\n"
        f"Load average (1/5/15 min): {common.load_average_text(data['load_average_start'], data['load_average_end'])}; "
        f"run on {data['date']}.\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cache_walks", description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--seed", type=int, default=22)
    args = parser.parse_args(argv)
    import loaders

    load_start = os.getloadavg()
    common.log(f"load average {load_start[0]:.1f} / {load_start[1]:.1f} / {load_start[2]:.1f} at the start")
    with tempfile.TemporaryDirectory(prefix="kga-cache-walks-") as workdir:
        store = Path(workdir) / "store"
        common.log(f"loading {args.data}")
        loaders.load_files([args.data], str(store), profile="freebase", progress=False)
        queries = sample(args.data, store, args.queries, args.seed)
        operations = measure(store, queries, args.repeats)
    data = {
        "benchmark": NAME,
        "date": time.strftime("%Y-%m-%d"),
        "data": Path(args.data).name,
        "queries": args.queries,
        "repeats": args.repeats,
        "seed": args.seed,
        "operations": operations,
        "load_average_start": load_start,
        "load_average_end": os.getloadavg(),
        "machine": common.machine_info(("pyoxigraph", "kg-adapters")),
    }
    markdown = render(data)
    print(markdown)
    common.save_report(NAME, data, markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
