"""Where `kga load`'s CPU goes: ``python -m benchmarks.index_cpu --size 4M``.

CPU seconds (``time.process_time``: steadier than wall time on the shared machine, where other work
only stretches the wall clock) of each step the index worker runs on a load (:mod:`loaders.index_worker`),
run here in one process on the same blocks a load hands over: numbering (``TripleCollector.add_rdf``), the
spool's last checkpoint and its reload, the name rows, the name and relation indexes, the traversal index.
With ``--trees``, also the CPU of ``kga load``'s and ``oxigraph load``'s whole process trees on the same file
(the children's rusage: exact) and of ``kga load``'s index worker (polled; the loader's is the rest). Rounds
give medians. With ``--baseline TREE`` (another checkout, e.g. a worktree of main, its C extension built in
place), each round measures both checkouts, interleaved, each in a fresh child process, and the table gives
the ratio of this code to the baseline. Results: ``benchmarks/results/index_cpu.json`` and ``.md`` (one entry
per size and baseline, replaced, with the fingerprints of the code it measured).
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.load_scale import DATA_DIR, oxigraph_cli

NAME = "index_cpu"
STEPS = (
    "read the input (gzip, blocks: the loader's)",
    "number the triples (add_rdf)",
    "last checkpoint (spool save)",
    "spool reload",
    "name rows (label_rows)",
    "name and relation indexes",
    "traversal index (build_index)",
)


def step_seconds(path: Path, memory: int) -> dict[str, float]:
    """CPU seconds of each of :data:`STEPS` on the dump at ``path``, in this process."""
    import pyoxigraph as ox

    from kg_adapters import store_layout
    from kg_adapters.index.build import TripleCollector, build_index
    from kg_adapters.index.spool import CollectorSpool
    from kg_adapters.profiles import get_profile
    from kg_adapters.store_build import collected_label_indexes
    from loaders.indexing import _collected_labels
    from loaders.line_reading import read_blocks_from
    from loaders.rdf import CHUNK_BYTES

    seconds: dict[str, float] = dict.fromkeys(STEPS, 0.0)

    def timed(step: str, call: Callable[[], Any]) -> Any:
        started = time.process_time()
        found = call()
        seconds[step] += time.process_time() - started
        return found

    blocks = timed(
        STEPS[0], lambda: [block for _first, block, _lines, _read in read_blocks_from(str(path), CHUNK_BYTES)]
    )
    work = Path(tempfile.mkdtemp(prefix="kga-index-cpu-"))
    try:
        collector = TripleCollector()
        spool = CollectorSpool(work / "spool", memory=memory)
        spool.restore(collector, None)
        while blocks:  # each block let go once numbered, as the worker does
            started = time.process_time()
            collector.add_rdf(blocks.pop(0), ox.RdfFormat.N_TRIPLES)
            seconds[STEPS[1]] += time.process_time() - started
        gc.disable()  # as the worker writes (loaders/index_worker.py)
        timed(STEPS[2], lambda: spool.save(collector, keep=True))  # the worker's last save keeps the buffers
        timed(STEPS[3], lambda: spool.reload(collector))
        version = work / "version"
        version.mkdir()
        labels, aliases, relations = timed(STEPS[4], lambda: _collected_labels(collector))
        index_path = str(version / store_layout.LABELS)
        timed(STEPS[5], lambda: collected_label_indexes(labels, aliases, relations, index_path))
        timed(STEPS[6], lambda: build_index(None, version, get_profile("freebase"), collected=collector))
    finally:
        gc.enable()
        shutil.rmtree(work, ignore_errors=True)
    return seconds


CHILD_STEPS = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import kg_adapters
from benchmarks.index_cpu import step_seconds
try:
    from kg_adapters.index.numbering import COMPILED
except ImportError:
    COMPILED = False
steps = step_seconds(Path(sys.argv[2]), int(sys.argv[3]))
print(json.dumps({"steps": steps, "compiled": COMPILED, "package": kg_adapters.__file__}))
"""


def tree_steps(tree: Path, path: Path, memory: int) -> dict[str, Any]:
    """:func:`step_seconds` of the checkout at ``tree`` (its own code and C extension), in a fresh child
    process, with whether its numbering was the compiled one."""
    import json

    command = [sys.executable, "-c", CHILD_STEPS, str(tree), str(path), str(memory)]
    done = subprocess.run(command, cwd=tree, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the steps of {tree} failed: {done.stderr[-2000:]}")
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if not str(Path(found.pop("package")).resolve()).startswith(str(tree.resolve())):
        raise RuntimeError(f"the child measuring {tree} imported another checkout's kg_adapters")
    return found


def kga_command(tree: Path, path: Path, store: Path, memory: str | None) -> list[str]:
    """``kga load`` of the checkout at ``tree`` (run with ``cwd=tree``) on ``path``."""
    memory_option = ["--memory", memory] if memory else []
    load = [sys.executable, "-m", "kg_adapters.cli", "load", str(path), "--store", str(store)]
    return [*load, "--profile", "freebase", "--no-progress", *memory_option]


def tree_seconds(command: list[str], *, cwd: Path = common.REPO_ROOT) -> dict[str, float]:
    """CPU seconds of the whole process tree of ``command`` (``tree``: the children's rusage, exact; see
    :func:`benchmarks.common.children_cpu_seconds`) and, for ``kga load``, of its ``index worker``
    (polled with psutil until it ends: its last ~0.1 s may be missed) and its ``loader`` (the tree's
    CPU less the worker's: Oxigraph's bulk loader runs there)."""
    import psutil

    cpu_before = common.children_cpu_seconds()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    root = psutil.Process(process.pid)
    workers: dict[int, float] = {}
    while process.poll() is None:
        try:
            children = root.children(recursive=True)  # kga load starts only its index worker
        except psutil.Error:
            children = []
        for child in children:
            try:
                times = child.cpu_times()
                workers[child.pid] = times.user + times.system
            except psutil.Error:
                continue
        time.sleep(0.1)
    tree = common.children_cpu_seconds() - cpu_before
    if process.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} failed: {process.stderr.read().decode()[-2000:] if process.stderr else ''}"
        )
    if not workers:
        return {"tree": tree}
    worker = sum(workers.values())
    return {"loader": tree - worker, "index worker": worker, "tree": tree}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from kg_adapters.budgets import DEFAULT_MEMORY, load_memory

    path = Path(args.data_dir) / f"freebase-{args.size}.nt.gz"
    memory = load_memory(args.memory or DEFAULT_MEMORY).index
    baseline = Path(args.baseline).resolve() if args.baseline else None
    source = common.source_fingerprint("kg_adapters", "loaders")  # the code measured, before it may change
    rounds: list[dict[str, Any]] = []
    baseline_rounds: list[dict[str, Any]] = []
    for number in range(args.rounds):
        before = os.getloadavg()[0]
        entry: dict[str, Any] = {}
        other: dict[str, Any] = {}
        if baseline is None:
            entry["steps"] = step_seconds(path, memory)
        else:  # both checkouts in fresh children, the first one alternating between rounds
            pairs = [(entry, common.REPO_ROOT), (other, baseline)]
            for side, tree in pairs if number % 2 == 0 else pairs[::-1]:
                side.update(tree_steps(tree, path, memory))
        if args.trees:
            work = Path(tempfile.mkdtemp(prefix="kga-index-cpu-"))
            try:
                entry["kga"] = tree_seconds(kga_command(common.REPO_ROOT, path, work / "kga", args.memory))
                if baseline is not None:
                    other["kga"] = tree_seconds(kga_command(baseline, path, work / "base", args.memory), cwd=baseline)
                entry["oxigraph"] = tree_seconds(
                    [oxigraph_cli(), "load", "--location", str(work / "ox"), "--file", str(path)]
                )
            finally:
                shutil.rmtree(work, ignore_errors=True)
        entry["load"] = (before + os.getloadavg()[0]) / 2
        rounds.append(entry)
        if baseline is not None:
            other["load"] = entry["load"]
            baseline_rounds.append(other)
        common.log(f"{args.size} round {number + 1}: {entry} {other or ''}")
    result: dict[str, Any] = {
        "label": args.size,
        "rounds": rounds,
        "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "source": source,
    }
    if baseline is not None:
        result["label"] = f"{args.size} against {baseline.name}"
        result["baseline"] = {
            "tree": str(baseline),
            "source": common.source_fingerprint("kg_adapters", "loaders", root=baseline),
            "rounds": baseline_rounds,
        }
    return result


def render(results: dict[str, Any]) -> str:
    lines = [
        "# Where `kga load`'s CPU goes",
        "",
        "`python -m benchmarks.index_cpu --size SIZE [--trees]`: CPU seconds (medians of the rounds) of each step the",
        "index worker runs, in one process on the blocks a load hands over; with `--trees`, the CPU of `kga load`'s",
        "and `oxigraph load`'s whole process trees on the same file (their rusage, exact), of which `kga load`'s index",
        "worker (polled every 0.1 s) and its loader (the rest). Load is the machine's 1-minute load average (2 cores).",
        "",
    ]
    for size in results["sizes"].values():
        rounds = size["rounds"]
        base = size.get("baseline")
        load = common.median([r["load"] for r in rounds])
        lines += [
            f"{size['label']} ({len(rounds)} rounds, load {load:.1f}, {size['date']} UTC,"
            f" code {size.get('source', results.get('source', '?'))}"
            + (f", baseline {base['tree']} code {base['source']}" if base else "")
            + "):",
            "",
        ]
        if base:
            lines += [_compared(rounds, base["rounds"]), ""]
            continue
        rows = [[step, f"{common.median([r['steps'][step] for r in rounds]):.2f}"] for step in STEPS]
        worker = [sum(v for k, v in r["steps"].items() if k != STEPS[0]) for r in rounds]
        rows.append(["index worker's steps, total", f"{common.median(worker):.2f}"])
        if all("kga" in r for r in rounds):
            for side, role in (("kga", "loader"), ("kga", "index worker"), ("kga", "tree"), ("oxigraph", "tree")):
                label = f"`{'kga' if side == 'kga' else 'oxigraph'} load` {role}"
                rows.append([label, f"{common.median([r[side].get(role, 0.0) for r in rounds]):.2f}"])
            tree = {side: common.median([r[side]["tree"] for r in rounds]) for side in ("kga", "oxigraph")}
            rows.append(["`kga load` tree / `oxigraph load` tree", f"{tree['kga'] / tree['oxigraph']:.2f}x"])
        lines += [common.markdown_table(["step / process", "CPU seconds"], rows), ""]
    return "\n".join(lines)


def _compared(rounds: list[dict[str, Any]], base: list[dict[str, Any]]) -> str:
    """The steps' and processes' medians of this code and of the baseline, and their ratio."""

    def row(label: str, mine: list[float], theirs: list[float]) -> list[str]:
        ours, baseline = common.median(mine), common.median(theirs)
        return [label, f"{ours:.2f}", f"{baseline:.2f}", f"{ours / baseline:.2f}x" if baseline else "-"]

    rows = [row(step, [r["steps"][step] for r in rounds], [r["steps"][step] for r in base]) for step in STEPS]
    worker = [[sum(v for k, v in r["steps"].items() if k != STEPS[0]) for r in side] for side in (rounds, base)]
    rows.append(row("index worker's steps, total", *worker))
    if all("kga" in r for r in rounds) and all("kga" in r for r in base):
        for role in ("loader", "index worker", "tree"):
            mine = [r["kga"].get(role, 0.0) for r in rounds]
            rows.append(row(f"`kga load` {role}", mine, [r["kga"].get(role, 0.0) for r in base]))
        oxigraph = common.median([r["oxigraph"]["tree"] for r in rounds])
        trees = [common.median([r["kga"]["tree"] for r in side]) / oxigraph for side in (rounds, base)]
        rows.append(["`kga load` tree / `oxigraph load` tree", f"{trees[0]:.2f}x", f"{trees[1]:.2f}x", "-"])
    compiled = [all(r.get("compiled", True) for r in side) for side in (rounds, base)]
    header = [
        "step / process (CPU seconds)",
        "this code" + ("" if compiled[0] else " (Python numbering)"),
        "baseline" + ("" if compiled[1] else " (Python numbering)"),
        "this / baseline",
    ]
    return common.markdown_table(header, rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="4M", help="1M, 4M, 16M (a benchmarks.synth_freebase dump in --data-dir)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--trees", action="store_true", help="also kga load's and oxigraph load's processes")
    parser.add_argument("--memory", help="kga load's --memory (default: its own)")
    parser.add_argument("--baseline", help="another checkout to compare with (its C extension built in place)")
    parser.add_argument("--data-dir", default=str(DATA_DIR))
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    path = common.RESULTS_DIR / f"{NAME}.json"
    import json

    results: dict[str, Any] = (
        json.loads(path.read_text("utf-8")) if path.is_file() else {"benchmark": NAME, "sizes": {}}
    )
    entry = run(args)
    results["sizes"][entry["label"]] = entry
    print(render(results))
    if not args.no_write:
        common.write_results(NAME, results, render(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
