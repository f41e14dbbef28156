"""Loading Freebase-shaped dumps: ``kga load`` against ``oxigraph load``, pyoxigraph's ``bulk_load`` and
Virtuoso's bulk loader, on the same files: ``python -m benchmarks.load_scale``.

Run from the repository root, one size per run (each part stays under the shared lock's hour; the
results of every run are merged into one file)::

    flock /work/team/heavy.lock .venv/bin/python -m benchmarks.load_scale --sizes 4M
    flock /work/team/heavy.lock .venv/bin/python -m benchmarks.load_scale --sizes 16M
    flock /work/team/heavy.lock .venv/bin/python -m benchmarks.load_scale --sizes 100M --sides kga --queries

Data: :mod:`benchmarks.synth_freebase` dumps (gzipped N-Triples, seeded as :mod:`benchmarks.scale`),
generated once into ``--data-dir`` and reused. Each side loads the same file into a fresh directory
in a process of its own, the sides interleaved in one run:

* ``kga``: ``kga load FILE --store DIR --profile freebase`` (every index it builds by default);
* ``oxigraph``: the ``oxigraph`` CLI from PyPI (the same Oxigraph version as pyoxigraph),
  ``oxigraph load --location DIR --file FILE`` (the baseline of the targets);
* ``pyoxigraph``: ``Store(DIR).bulk_load(gzip stream)`` (Oxigraph fed from a Python gzip stream);
* ``virtuoso``: Debian's Virtuoso 7 (:mod:`kg_adapters.testing.virtuoso` on free ports),
  ``ld_add`` + ``rdf_loader_run()`` + ``checkpoint``, as ToG's setup instructions load Freebase
  (the server's start is not timed; its database directory is the disk figure).

Per load: wall time, disk (the output directory's files), and the peak resident memory of the whole
process tree (the loader and every process it started, summed, sampled every 50 ms with psutil),
with the machine's 1-minute load average before and after. Ratios are to ``oxigraph load`` of the
same run. ``--queries`` also times the usual queries (neighbors, 2/3-hop paths, shortest paths,
one-way 2-hop subgraphs; :mod:`benchmarks.scale`'s sets and runner) on the ``kga`` store.

Results: ``benchmarks/results/load_scale.json`` and ``.md`` (sizes from earlier runs are kept).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks import common

NAME = "load_scale"
DATA_DIR = Path("/work/team/data") if Path("/work/team").is_dir() else common.REPO_ROOT / ".kga" / "bench" / "data"
SIDES = ("kga", "oxigraph", "pyoxigraph", "virtuoso")
BASELINE = "oxigraph"
TARGET_TIME_RATIO = 1.25
TARGET_DISK_RATIO = 1.25
SAMPLE_SECONDS = 0.05
GIB = 2**30
FULL_FREEBASE = 1_900_000_000
"""Triples of the last full Freebase dump (freebase-rdf-latest), for the extrapolation."""
TOG_FILTERED_BYTES = 125 * 10**9
"""Uncompressed bytes of ToG's filtered dump (``FilterFreebase``: English and numeric triples, 125 GB by
its setup instructions; they give no triple count, so it is extrapolated by bytes read per second)."""


VIRTUOSO_REPORTS = (
    'ToG\'s filtered dump in Virtuoso "about 3 or 4 hours on our machine", a 39 GB virtuoso.db, and a tutorial',
    "reporting 6 days ([YaooXu/GoG#2](https://github.com/YaooXu/GoG/issues/2)); still loading after 10 hours",
    '("a long time ~ 10h is always needed", [DataArcTech/ToG#40](https://github.com/DataArcTech/ToG/issues/40));',
    "a day and still loading at 40 GB ([GasolSun36/ToG#14](https://github.com/GasolSun36/ToG/issues/14)); the",
    'full dump "takes tooooo long" ([openlink/virtuoso-opensource#813]'
    "(https://github.com/openlink/virtuoso-opensource/issues/813)); killed by the OOM killer on 16 GB",
    "([openlink/virtuoso-opensource#149](https://github.com/openlink/virtuoso-opensource/issues/149)).",
)
"""What users report for loading Freebase into Virtuoso (ToG's setup), cited beside the extrapolation."""


def log(message: str) -> None:
    print(f"[load_scale {time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.2f}] {message}", file=sys.stderr)


def disk_bytes(path: Path) -> int:
    """Bytes of the files under ``path`` (allocated blocks: what the disk lost to them). A load may delete
    files and directories while they are counted (RocksDB's compactions, the spill's runs): those are
    skipped, never an error (``Path.rglob`` raises when a directory vanishes under it)."""
    total = 0
    for directory, _dirs, files in os.walk(path):  # errors (a vanished directory) are ignored
        for name in files:
            try:
                status = os.lstat(os.path.join(directory, name))
            except OSError:
                continue
            if stat.S_ISREG(status.st_mode):
                total += status.st_blocks * 512
    return total


class TreeSampler:
    """Resident memory of a process and all its descendants, sampled on a thread: ``peak``, the tree's
    (summed at one instant). With ``role_of`` (a process's command line and whether it is the root, to
    the name of its role), also per role: ``peaks`` and ``latest`` of its RSS and of its anonymous part
    (``"ROLE anonymous"``: ``RssAnon``, what the process holds itself; the rest is file pages it maps),
    and ``anonymous_peak``, the tree's."""

    def __init__(self, pid: int, role_of: Callable[[list[str], bool], str] | None = None, roles: Sequence[str] = ()):
        import psutil

        self._root = psutil.Process(pid)
        self._role_of, self._roles = role_of, dict[int, str]()
        self.peak = self.anonymous_peak = 0
        self.peaks = dict.fromkeys((*roles, *(f"{role} anonymous" for role in roles)), 0)
        self.latest = dict(self.peaks)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        import psutil

        try:
            processes = [self._root, *self._root.children(recursive=True)]
        except psutil.Error:
            return
        now = dict.fromkeys(self.peaks, 0)
        total = anonymous = 0
        for process in processes:
            try:
                rss = process.memory_info().rss
                if self._role_of is not None:
                    role = self._roles.get(process.pid)
                    if role is None:
                        role = self._roles[process.pid] = self._role_of(process.cmdline(), process is self._root)
                    held = anonymous_bytes(process.pid)
                    now[role] = now.get(role, 0) + rss
                    now[f"{role} anonymous"] = now.get(f"{role} anonymous", 0) + held
                    anonymous += held
            except psutil.Error:
                continue
            total += rss
        self.latest = now
        for measure, found in now.items():
            self.peaks[measure] = max(self.peaks.get(measure, 0), found)
        self.peak, self.anonymous_peak = max(self.peak, total), max(self.anonymous_peak, anonymous)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(SAMPLE_SECONDS)

    def stop(self) -> int:
        self._sample()
        self._stop.set()
        self._thread.join()
        return self.peak


def anonymous_bytes(pid: int) -> int:
    """``RssAnon`` of a process (Linux; 0 elsewhere or once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def kill_tree(process: subprocess.Popen[bytes]) -> None:
    """Kills ``process`` and every descendant of it (a load's index worker too), children first found."""
    import psutil

    try:
        family = psutil.Process(process.pid).children(recursive=True)
    except psutil.Error:
        family = []
    process.kill()
    for child in family:
        with contextlib.suppress(psutil.Error):
            child.kill()
    process.wait()


def timed_process(command: list[str], *, timeout: float) -> dict[str, Any]:
    """Runs ``command``; its wall time, the CPU seconds of its process tree (the children it waited for
    included: steadier than wall time on a shared machine) and the tree's peak memory."""
    before = os.getloadavg()[0]
    cpu_before = common.children_cpu_seconds()
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=common.REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sampler = TreeSampler(process.pid)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_tree(process)  # not only the root: a kga load's index worker too
        raise
    finally:
        peak = sampler.stop()
    seconds = time.perf_counter() - started
    cpu = common.children_cpu_seconds() - cpu_before
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({process.returncode}):\n{err.decode()[-3000:]}")
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "peak_rss_bytes": peak,
        "load_before": before,
        "load_after": os.getloadavg()[0],
        "stdout": out.decode()[-2000:],
    }


def oxigraph_cli() -> str:
    found = shutil.which("oxigraph") or str(Path(sys.executable).parent / "oxigraph")
    if not Path(found).is_file():
        raise SystemExit("the oxigraph CLI is missing: pip install -e '.[bench]' (make .venv/.bench-installed)")
    return found


PYOXIGRAPH_LOAD = (
    "import gzip, sys, pyoxigraph as ox\n"
    "store = ox.Store(sys.argv[2])\n"
    "with gzip.open(sys.argv[1], 'rb') as stream:\n"
    "    store.bulk_load(stream, ox.RdfFormat.N_TRIPLES)\n"
    "print(len(store))\n"
)


def require_kga_option(option: str) -> None:
    """Stops with a clear message when this checkout's ``kga load`` lacks ``option`` (it is on a branch)."""
    command = [sys.executable, "-m", "kg_adapters.cli", "load", "--help"]
    shown = subprocess.run(command, cwd=common.REPO_ROOT, capture_output=True, text=True, check=True).stdout
    if option not in shown:
        raise SystemExit(f"this checkout's kga load has no {option} option yet (merge main once it has)")


def load_side(side: str, data: Path, target: Path, kga_args: list[str], *, timeout: float) -> dict[str, Any]:
    """One load of ``data`` into the fresh directory ``target`` by ``side``."""
    shutil.rmtree(target, ignore_errors=True)
    if side == "virtuoso":
        return virtuoso_load(data, target, timeout=timeout)
    if side == "kga":
        command = [sys.executable, "-m", "kg_adapters.cli", "load", str(data), "--store", str(target)]
        command += ["--profile", "freebase", "--json", *kga_args]
    elif side == "oxigraph":
        command = [oxigraph_cli(), "load", "--location", str(target), "--file", str(data)]
    elif side == "pyoxigraph":
        command = [sys.executable, "-c", PYOXIGRAPH_LOAD, str(data), str(target)]
    else:
        raise ValueError(side)
    result = timed_process(command, timeout=timeout)
    result["disk_bytes"] = disk_bytes(target)
    if side == "kga":
        report = json.loads(result["stdout"].strip().splitlines()[-1])
        result["store_triples"] = report["store_triples"]
        result["parts"] = store_parts(target)
    result.pop("stdout")
    return result


def store_parts(store: Path) -> dict[str, int]:
    """Disk bytes of a kga store's parts (Oxigraph data, name and relation indexes, traversal index)."""
    from kg_adapters import store_layout

    version = store_layout.version_dir(store, store_layout.read_manifest(store))
    return {item.name: disk_bytes(item) if item.is_dir() else item.stat().st_blocks * 512 for item in version.iterdir()}


def virtuoso_load(data: Path, target: Path, *, timeout: float) -> dict[str, Any]:
    """Virtuoso's bulk loader (ld_add, rdf_loader_run, checkpoint) on a server started for it."""
    from kg_adapters.testing.virtuoso import VirtuosoServer

    buffers = max(100_000, triples_hint(data) // 40)  # as benchmarks.scale: ~200 bytes of 8 KiB pages a triple
    with VirtuosoServer(target, data_dirs=[data.parent], number_of_buffers=buffers) as server:
        assert server.pid is not None
        before = os.getloadavg()[0]
        sampler = TreeSampler(server.pid)
        started = time.perf_counter()
        try:
            triples = server.load([data])
        finally:
            peak = sampler.stop()
        seconds = time.perf_counter() - started
        after = os.getloadavg()[0]
    return {
        "seconds": seconds,
        "peak_rss_bytes": peak,
        "load_before": before,
        "load_after": after,
        "disk_bytes": disk_bytes(target / "db"),
        "store_triples": triples,
        "number_of_buffers": buffers,
    }


def triples_hint(data: Path) -> int:
    """The triples of a generated dump (from its query-set file, written beside it)."""
    queries = data.with_name(data.name.replace(".nt.gz", ".queries.json"))
    return int(json.loads(queries.read_text("utf-8"))["triples"])


def raw_bytes(data: Path) -> int:
    """The uncompressed size of a gzipped dump (counted once, remembered beside it)."""
    import gzip

    sidecar = data.with_name(data.name + ".raw-bytes")
    if sidecar.is_file():
        return int(sidecar.read_text())
    total = 0
    with gzip.open(data, "rb") as stream:
        while block := stream.read(1 << 22):
            total += len(block)
    sidecar.write_text(str(total))
    return total


def ensure_data(triples: int, directory: Path) -> tuple[Path, Path]:
    from benchmarks import scale

    directory.mkdir(parents=True, exist_ok=True)
    return scale.ensure_data(triples, directory)


LATENCY_KINDS = ("neighbors", "relations", "paths2", "shortest", "subgraph2", "search")
"""The usual queries of a reasoner on a loaded store: 1-hop neighbours (both directions), the relations
of an entity, a 2-hop relation-path walk, shortest paths (<= 3 hops), a 2-hop subgraph, a label search."""
WALK_LIMIT = 1000
"""Edges of a node a sampling walk chooses from (a hub's first ones): sampling stays cheap on hubs."""


def query_latency(store: Path, queries: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The usual queries on the kga store, in a fresh process (the store side alone)."""
    return common.run_child(
        "benchmarks.load_scale",
        [
            "--latency-child",
            "--store",
            str(store),
            "--query-file",
            str(queries),
            "--query-repeats",
            str(args.query_repeats),
            "--latency-seeds",
            str(args.latency_seeds),
            "--latency-count",
            str(args.latency_count),
        ],
        timeout=3 * 3600,
    )


def sample_store_queries(kg: Any, starts: list[str], seed: int, count: int) -> dict[str, list[Any]]:
    """``count`` random queries of each kind, drawn through the interface (untimed) by seeded random
    walks from ``starts`` (the generator's random entities): each walk's end is a random entity of the
    graph, a 2-hop path query follows a walk (so it has an answer), a shortest-path pair is 3 random
    undirected steps apart, a search is an entity's own name."""
    import random

    rng = random.Random(f"load_scale/{seed}")

    def step(node: str, direction: str) -> Any:
        edges = kg.neighbors(node, direction=direction, literals=False, limit_per_entity=WALK_LIMIT).get(node, [])
        return rng.choice(edges) if edges else None

    def wander(node: str, steps: int) -> str:
        for _ in range(steps):
            edge = step(node, rng.choice(("out", "in")))
            if edge is None:
                break
            node = edge.tail if edge.head == node else edge.head
        return node

    def named() -> tuple[str, str]:
        while True:
            node = wander(rng.choice(starts), rng.randint(1, 3))
            label = kg.labels([node]).get(node)
            if label:
                return node, label

    def path2() -> tuple[str, tuple[str, ...]] | None:
        start, _ = named()
        first = step(start, "out")
        second = step(first.tail, "out") if first is not None else None
        return None if second is None else (start, (first.relation, second.relation))

    def pair() -> tuple[str, str] | None:
        source, _ = named()
        target = source
        for _ in range(3):
            edge = step(target, rng.choice(("out", "in")))
            if edge is None:
                return None
            target = edge.tail if edge.head == target else edge.head
        return None if target == source else (source, target)

    def some(make: Any) -> list[Any]:
        found: list[Any] = []
        while len(found) < count:
            item = make()
            if item is not None:
                found.append(item)
        return found

    entities = some(named)
    return {
        "neighbors": [node for node, _ in entities],
        "relations": [node for node, _ in some(named)],
        "paths2": some(path2),
        "shortest": some(pair),
        "subgraph2": [node for node, _ in some(named)],
        "search": [label for _, label in entities],
    }


def latency_calls(kg: Any) -> dict[str, Any]:
    return {
        "neighbors": lambda q: kg.neighbors(q, direction="both").get(q, []),
        "relations": lambda q: kg.relations(q, direction="both").get(q, []),
        "paths2": lambda q: kg.paths(q[0], q[1]),
        "shortest": lambda q: kg.shortest_paths(q[0], q[1], max_hops=3),
        "subgraph2": lambda q: kg.subgraph(q, hops=2, direction="out"),
        "search": lambda q: kg.search(q, limit=10),
    }


def latency_child(args: argparse.Namespace) -> None:
    """In a fresh process: for each seed, ``--latency-count`` random queries of every kind; each query
    timed ``--query-repeats`` times (its median kept, and its first call: nothing of it cached by an
    earlier timed call); the median over all queries of a kind, and the spread of the seeds' medians."""
    from benchmarks import scale
    from benchmarks.bfs_vs_networkx import open_store

    starts = scale.read_query_sets(args.query_file)["neighbors"]
    started = time.perf_counter()
    kg = open_store(args.store)
    opened = time.perf_counter() - started
    calls = latency_calls(kg)
    per_seed = [sample_store_queries(kg, starts, seed, args.latency_count) for seed in range(args.latency_seeds)]
    out: dict[str, Any] = {
        "open_seconds": opened,
        "seeds": args.latency_seeds,
        "per_seed": args.latency_count,
        "repeats": args.query_repeats,
        "kinds": {},
    }
    for kind in LATENCY_KINDS:
        warm, first, seed_medians, answers = [], [], [], []
        for sets in per_seed:
            this_seed = []
            for query in sets[kind]:
                times = []
                for _ in range(args.query_repeats):
                    began = time.perf_counter()
                    answer = calls[kind](query)
                    times.append(time.perf_counter() - began)
                first.append(times[0])
                this_seed.append(common.median(times))
                answers.append(len(answer))
            warm += this_seed
            seed_medians.append(common.median(this_seed))
        out["kinds"][kind] = {
            "queries": len(warm),
            "median_seconds": common.median(warm),
            "p90_seconds": common.percentile(warm, 90),
            "first_call_median_seconds": common.median(first),
            "seed_median_range": [min(seed_medians), max(seed_medians)],
            "median_answer_size": common.median([float(n) for n in answers]),
        }
    kg.close()
    common.emit_child_result(out)


def measure(triples: int, args: argparse.Namespace, results: dict[str, Any]) -> dict[str, Any]:
    """Loads the file of ``triples`` by every side asked; each side's figures replace that side's earlier
    ones for this size as soon as they are measured (written at once, unless ``--no-write``), so the
    baselines and ``kga`` can be measured in separate runs (each row says when)."""
    from benchmarks import scale

    label = scale.size_label(triples)
    data, queries = ensure_data(triples, Path(args.data_dir))
    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    sides = [side for side in args.sides.split(",") if side]
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    out: dict[str, Any] = results["sizes"].get(label) or {}
    if out.get("data") != str(data) or out.get("data_bytes") != data.stat().st_size:
        out = {"sides": {}, "runs": {}}
    out.update(label=label, triples=triples, data=str(data), data_bytes=data.stat().st_size, raw_bytes=raw_bytes(data))
    results["sizes"][label] = out
    source = common.source_fingerprint("kg_adapters", "loaders")
    log(f"{label}: {data} ({data.stat().st_size / 2**20:.0f} MiB), sides {', '.join(sides)}, {args.repeats} round(s)")
    for round_number in range(args.repeats):
        order = sides if round_number % 2 == 0 else sides[::-1]
        for side in order:
            target = work / f"{side}-{label}"
            result = load_side(side, data, target, args.kga_args, timeout=args.timeout)
            runs[side].append(result)
            log(
                f"  {side}: {result['seconds']:.1f} s, {result['disk_bytes'] / 2**20:.0f} MiB, "
                f"peak RSS {result['peak_rss_bytes'] / GIB:.2f} GiB (load {result['load_before']:.2f} -> "
                f"{result['load_after']:.2f})"
            )
            keep = side == "kga" and args.queries and round_number == args.repeats - 1
            if not keep:
                shutil.rmtree(target, ignore_errors=True)
            out["runs"][side] = runs[side]
            out["sides"][side] = summary(runs[side], args, source if side == "kga" else None)
            if side == "kga":
                out["kga_triples"] = result.get("store_triples")
                out["kga_parts"] = result.get("parts")
                out.pop("latency", None)  # it was of the store this load replaces
            save(results, args)
    if args.queries and "kga" in runs:
        store = work / f"kga-{label}"
        out["latency"] = query_latency(store, queries, args)
        out["latency"]["load_average"] = os.getloadavg()[0]
        shutil.rmtree(store, ignore_errors=True)
        save(results, args)
    return out


def summary(runs: list[dict[str, Any]], args: argparse.Namespace, source: str | None) -> dict[str, Any]:
    figures = {
        "median_seconds": common.median([r["seconds"] for r in runs]),
        "median_disk_bytes": common.median([r["disk_bytes"] for r in runs]),
        "median_peak_rss_bytes": common.median([r["peak_rss_bytes"] for r in runs]),
        **(
            {"median_cpu_seconds": common.median([r["cpu_seconds"] for r in runs])}
            if all("cpu_seconds" in r for r in runs)
            else {}
        ),
        "load_average": common.median([(r["load_before"] + r["load_after"]) / 2 for r in runs]),
        "rounds": len(runs),
        "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
    }
    if source is not None:
        figures.update(source=source, kga_args=args.kga_args)
    return figures


def ratios(size: dict[str, Any], side: str) -> tuple[float, float] | None:
    """(time, disk) of ``side`` over ``oxigraph load``'s at this size."""
    base, figures = size["sides"].get(BASELINE), size["sides"].get(side)
    if base is None or figures is None:
        return None
    return (
        figures["median_seconds"] / base["median_seconds"],
        figures["median_disk_bytes"] / base["median_disk_bytes"],
    )


def cpu_cells(size: dict[str, Any], side: str) -> list[str]:
    """The median CPU seconds of ``side``'s process tree and its ratio to ``oxigraph load``'s ("-" where
    not recorded: rows measured before CPU was, and Virtuoso, whose server is not the benchmark's child)."""
    base, figures = size["sides"].get(BASELINE, {}), size["sides"][side]
    if "median_cpu_seconds" not in figures:
        return ["-", "-"]
    seconds = figures["median_cpu_seconds"]
    ratio = f"{seconds / base['median_cpu_seconds']:.2f}x" if "median_cpu_seconds" in base else "-"
    return [f"{seconds:.1f} s", ratio]


def save(results: dict[str, Any], args: argparse.Namespace) -> None:
    if not args.no_write:
        common.write_results(NAME, results, render(results))


def read_results(name: str = NAME) -> dict[str, Any]:
    """The results file ``name`` (default this benchmark's) as written so far, or an empty one."""
    path = common.RESULTS_DIR / f"{name}.json"
    if path.is_file():
        found: dict[str, Any] = json.loads(path.read_text("utf-8"))
        return found
    return {"benchmark": name, "sizes": {}}


def fmt_mib(count: float) -> str:
    return f"{count / 2**20:,.0f} MiB"


def render(results: dict[str, Any]) -> str:
    sizes = sorted(results["sizes"].values(), key=lambda s: s["triples"])
    lines = [
        "# Loading Freebase-shaped dumps",
        "",
        "`python -m benchmarks.load_scale --sizes SIZE` (one size per run, merged here). Each loader runs in a",
        "process of its own on the same gzipped N-Triples file (`benchmarks/synth_freebase.py`); peak RSS is the",
        "whole process tree's; disk is the output directory's; ratios are to `oxigraph load` of the same file",
        "(the sides may be measured in separate runs: each row says when);",
        "load is the machine's 1-minute load average during the load (2 cores, shared).",
        "",
    ]
    rows = []
    for size in sizes:
        for side in SIDES:
            figures = size["sides"].get(side)
            if figures is None:
                continue
            rows.append(
                [
                    size["label"],
                    f"`{side}`",
                    f"{figures['median_seconds']:.1f} s",
                    f"{size['triples'] / figures['median_seconds']:,.0f}",
                    f"{found[0]:.2f}x" if (found := ratios(size, side)) else "-",
                    fmt_mib(figures["median_disk_bytes"]),
                    f"{found[1]:.2f}x" if found else "-",
                    *cpu_cells(size, side),
                    f"{figures['median_peak_rss_bytes'] / GIB:.2f} GiB",
                    f"{figures['load_average']:.1f}",
                    str(figures.get("rounds", len(size["runs"][side]))),
                    figures.get("date", size.get("date", "")),
                ]
            )
    lines.append(
        common.markdown_table(
            [
                "size",
                "loader",
                "time",
                "triples/s",
                "time vs oxigraph",
                "disk",
                "disk vs oxigraph",
                "CPU (tree)",
                "CPU vs oxigraph",
                "peak RSS",
                "load",
                "runs",
                "measured (UTC)",
            ],
            rows,
        )
    )
    parts = [(s["label"], s["kga_parts"]) for s in sizes if s.get("kga_parts")]
    if parts:
        lines += ["", "Where a `kga load` store's disk goes:", ""]
        names = sorted({name for _label, found in parts for name in found})
        lines.append(
            common.markdown_table(
                ["size", *names], [[label, *(fmt_mib(found.get(n, 0)) for n in names)] for label, found in parts]
            )
        )
    latencies = [s for s in sizes if s.get("latency")]
    if latencies:
        lines += [
            "",
            "Query latency on the `kga load` store: per kind, the median over every query of its median of",
            "the timed calls (`--query-repeats`); queries are random walks' ends drawn with several seeds",
            "(`--latency-seeds` x `--latency-count`); the range is the seeds' own medians; first is a query's",
            "first timed call:",
            "",
        ]
        rows = []
        for size in latencies:
            found = size["latency"]
            for kind, figures in found["kinds"].items():
                low, high = figures.get("seed_median_range", [figures["median_seconds"]] * 2)
                rows.append(
                    [
                        size["label"],
                        kind,
                        str(figures["queries"]),
                        common.fmt_seconds(figures["median_seconds"]),
                        f"{common.fmt_seconds(low)} - {common.fmt_seconds(high)}",
                        common.fmt_seconds(figures["p90_seconds"]),
                        common.fmt_seconds(figures["first_call_median_seconds"])
                        if "first_call_median_seconds" in figures
                        else "-",
                        f"{figures.get('median_answer_size', 0):,.0f}",
                        f"{found['load_average']:.1f}",
                    ]
                )
        headers = ["size", "query", "queries", "median", "seeds' medians", "p90", "first call", "answer size", "load"]
        lines.append(common.markdown_table(headers, rows))
        lines += [
            "",
            "Opening the store: "
            + ", ".join(f"{s['label']} {common.fmt_seconds(s['latency']['open_seconds'])}" for s in latencies)
            + ".",
        ]
    lines += ["", *extrapolation(sizes), ""]
    return "\n".join(lines)


def extrapolation(sizes: list[dict[str, Any]]) -> list[str]:
    """What full Freebase and ToG's filtered dump would take at each loader's rates at its largest size."""
    largest: dict[str, dict[str, Any]] = {}
    for size in sizes:  # sorted by triples: the last one with the side wins
        for side in size["sides"]:
            largest[side] = size
    if not largest:
        return []
    lines = [
        "Extrapolation, not a measurement: each loader's rates at the largest size it was measured at on this",
        "machine (2 shared cores), carried linearly to full Freebase (1.9B triples) and to ToG's filtered dump",
        "(125 GB of N-Triples, by bytes read per second). Loads slow down per triple as they grow, so these are",
        "lower bounds. What users report for Virtuoso:",
        *VIRTUOSO_REPORTS,
        "",
    ]
    rows = []
    for side in SIDES:
        if side not in largest:
            continue
        size = largest[side]
        seconds = size["sides"][side]["median_seconds"]
        rate, byte_rate = size["triples"] / seconds, size["raw_bytes"] / seconds
        rows.append(
            [
                f"`{side}`",
                size["label"],
                f"{rate:,.0f}",
                f"{byte_rate / 2**20:.1f} MiB/s",
                f"{FULL_FREEBASE / rate / 3600:.1f} h",
                f"{TOG_FILTERED_BYTES / byte_rate / 3600:.1f} h",
            ]
        )
    headers = [
        "loader",
        "rates at",
        "triples/s",
        "N-Triples read",
        "full Freebase (1.9B)",
        "ToG's filtered dump (125 GB)",
    ]
    lines.append(common.markdown_table(headers, rows))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="4M", help="comma-separated sizes (1M, 4M, 16M, 100M)")
    parser.add_argument("--sides", default=",".join(SIDES))
    parser.add_argument("--repeats", type=int, default=1, help="rounds of every side")
    parser.add_argument("--data-dir", default=str(DATA_DIR))
    parser.add_argument("--work-dir", default=str(common.REPO_ROOT / ".kga" / "bench" / "load_scale"))
    parser.add_argument("--kga-args", default="", help="extra kga load arguments, e.g. '--no-index'")
    parser.add_argument("--memory", help="kga load's memory budget (kga load --memory), e.g. 4G; default: kga's own")
    parser.add_argument("--queries", action="store_true", help="time the usual queries on the kga store")
    parser.add_argument("--query-repeats", type=int, default=5, help="timed calls of each query (median kept)")
    parser.add_argument("--latency-seeds", type=int, default=10, help="seeds of random query sets (--queries)")
    parser.add_argument("--latency-count", type=int, default=20, help="queries of each kind per seed")
    parser.add_argument("--timeout", type=float, default=3 * 3600)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--latency-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--query-file", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.latency_child:
        latency_child(args)
        return 0
    args.kga_args = args.kga_args.split()
    if args.memory:
        require_kga_option("--memory")
        args.kga_args += ["--memory", args.memory]
    from benchmarks import scale

    sides = [side for side in args.sides.split(",") if side]
    unknown = sorted(set(sides) - set(SIDES))
    if unknown:
        raise SystemExit(f"unknown sides {unknown}: choose from {', '.join(SIDES)}")
    if "oxigraph" in sides:
        oxigraph_cli()  # a missing tool stops the run before the first load, not after it
    results = read_results()
    results["machine"] = common.machine_info(("pyoxigraph", "psutil", "kg-adapters"))
    for text in args.sizes.split(","):
        measure(scale.parse_size(text), args, results)
    print(render(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
