"""Appending a part to a store (``kga load PART --store STORE`` on an existing store, as a dump split into
parts is loaded): the indexes written from the previous version's traversal index plus what the load saw
(:mod:`kg_adapters.index.replay`) against the store read back (the path of appends before it, and still
of those whose previous version has no usable index), on the same base store and part.

Each append runs in a fresh child process on a hard-linked copy of one base store (``kga load BASE``,
built once by this code); the read-back runs are the same load with its index plan forced to read the
store back. Timed: wall and CPU seconds of the child's whole process tree (the index worker included),
with the load average. Checked: both paths write the same traversal files (byte for byte), name rows and
relation rows, and the same triple count. Run it niced, under ``flock /work/team/heavy.lock``::

    nice -n 10 flock /work/team/heavy.lock .venv/bin/python -m benchmarks.append_load \\
        --base /work/team/data/freebase-4M.nt.gz --part /work/team/data/freebase-1M.nt.gz
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import common

NAME = "append_load"
PATHS = ("replay", "read back")


def log(message: str) -> None:
    print(f"[{NAME} {time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.2f}] {message}", file=sys.stderr)


def child(path: str, store: str, part: str) -> None:
    """One append, in this process (the benchmark's child): ``path`` "read back" forces the old path."""
    import loaders.core
    from loaders import load_files
    from loaders.load_indexes import READ_BACK, IndexPlan

    if path == "read back":

        def read_back(*_args: Any) -> IndexPlan:
            return IndexPlan(replay=None, collect=False, source=f"{READ_BACK} (forced by the benchmark)")

        loaders.core.index_plan = read_back  # type: ignore[attr-defined,assignment]
    report = load_files([part], store, profile="freebase", progress=False)
    common.emit_child_result(
        {
            "seconds": report.seconds,
            "index_seconds": report.index_seconds,
            "index_source": report.index_source,
            "store_triples": report.store_triples,
            "statements_read": report.statements_read,
        }
    )


def timed_append(path: str, store: Path, part: Path, timeout: float) -> dict[str, Any]:
    before_load = os.getloadavg()[0]
    before = common.children_cpu_seconds()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.append_load", "--child", path, "--store", str(store), "--part", str(part)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=common.REPO_ROOT,
    )
    wall = time.perf_counter() - started
    cpu = common.children_cpu_seconds() - before
    if done.returncode:
        raise RuntimeError(f"the {path} append failed: {done.stderr[-2000:]}")
    lines = [line for line in done.stdout.splitlines() if line.startswith(common.CHILD_MARKER)]
    found: dict[str, Any] = json.loads(lines[-1][len(common.CHILD_MARKER) :])
    return {**found, "wall": wall, "cpu": cpu, "load_before": before_load, "load_after": os.getloadavg()[0]}


def indexes_of(store: Path) -> dict[str, Any]:
    """What the two paths must agree on: the traversal files, the name and relation rows (as sets: the
    store read back lists them in the store's order), the triple count."""
    from kg_adapters import store_layout

    manifest = store_layout.read_manifest(store)
    version = store_layout.version_dir(store, manifest)
    traversal = version / store_layout.TRAVERSAL
    found: dict[str, Any] = {
        "triples": manifest["triples"],
        "traversal": {item.name: item.read_bytes() for item in sorted(traversal.iterdir())},
    }
    for name in ("labels.sqlite", "relations.sqlite"):
        with sqlite3.connect(f"file:{version / name}?mode=ro", uri=True) as db:
            found[name] = sorted(db.execute("SELECT iri, label, lang, norm FROM labels"))
    return found


def measure(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    base = work / "base"
    if not (base / "kga-store.json").is_file():
        shutil.rmtree(base, ignore_errors=True)
        log(f"building the base store from {args.base}")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "kg_adapters.cli",
                "load",
                str(args.base),
                "--store",
                str(base),
                "--profile",
                "freebase",
            ],
            check=True,
            timeout=args.timeout,
        )
    runs: dict[str, list[dict[str, Any]]] = {path: [] for path in PATHS}
    kept: dict[str, Path] = {}
    for round_number in range(args.rounds):
        order = PATHS if round_number % 2 == 0 else tuple(reversed(PATHS))
        for path in order:
            store = work / f"{path.replace(' ', '-')}-{round_number}"
            shutil.rmtree(store, ignore_errors=True)
            subprocess.run(["cp", "-al", str(base), str(store)], check=True)
            log(f"round {round_number + 1}: appending {args.part} ({path})")
            result = timed_append(path, store, Path(args.part), args.timeout)
            log(f"  {result['wall']:.1f} s wall, {result['cpu']:.1f} CPU-s, indexes from {result['index_source']}")
            runs[path].append(result)
            if path in kept:
                shutil.rmtree(store, ignore_errors=True)
            else:
                kept[path] = store
    same = indexes_of(kept["replay"]) == indexes_of(kept["read back"])
    for store in kept.values():
        shutil.rmtree(store, ignore_errors=True)
    return summary(args, runs, same)


def summary(args: argparse.Namespace, runs: dict[str, list[dict[str, Any]]], same: bool) -> dict[str, Any]:
    """The results of the rounds in ``runs`` (``same``: whether both paths wrote the same indexes)."""
    wall = {path: common.median([run["wall"] for run in runs[path]]) for path in PATHS}
    cpu = {path: common.median([run["cpu"] for run in runs[path]]) for path in PATHS}
    return {
        "benchmark": NAME,
        "base": str(args.base),
        "part": str(args.part),
        "rounds": len(runs["replay"]),
        "runs": runs,
        "median_wall": wall,
        "median_cpu": cpu,
        "wall_ratio": common.ratio(wall["replay"], wall["read back"]),
        "cpu_ratio": common.ratio(cpu["replay"], cpu["read back"]),
        "same_indexes": same,
        "machine": common.machine_info(),
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def render(results: dict[str, Any]) -> str:
    rows = []
    for path in PATHS:
        runs = results["runs"][path]
        rows.append(
            [
                path,
                common.fmt_seconds(results["median_wall"][path]),
                f"{results['median_cpu'][path]:.1f}",
                ", ".join(f"{run['wall']:.1f}" for run in runs),
                ", ".join(f"{run['load_before']:.1f}-{run['load_after']:.1f}" for run in runs),
                runs[0]["index_source"],
            ]
        )
    table = common.markdown_table(
        ["indexes from", "median wall", "median CPU-s (tree)", "wall per round (s)", "load average", "source"], rows
    )
    store_triples = results["runs"]["replay"][0]["store_triples"]
    return "\n".join(
        [
            f"# {NAME}",
            "",
            f"Appending `{Path(results['part']).name}` to a store loaded from `{Path(results['base']).name}`"
            f" ({store_triples:,} triples after the append), {results['rounds']} rounds per path, each a fresh"
            f" child process on a hard-linked copy of the base store; measured {results['measured_at']}.",
            "",
            table,
            "",
            f"Replay / read back: wall {common.fmt_ratio(results['wall_ratio'])},"
            f" CPU {common.fmt_ratio(results['cpu_ratio'])} (medians).",
            "Same traversal files (byte for byte), name and relation rows, triple count: "
            f"**{results['same_indexes']}**.",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m benchmarks.{NAME}", description=__doc__)
    parser.add_argument("--base", default="/work/team/data/freebase-4M.nt.gz")
    parser.add_argument("--part", default="/work/team/data/freebase-1M.nt.gz")
    parser.add_argument("--work", default=f"/tmp/kga-{NAME}")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--no-write", action="store_true", help="print the results instead of writing them")
    parser.add_argument("--child", choices=PATHS, help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.store, args.part)
        return 0
    results = measure(args)
    markdown = render(results)
    if args.no_write:
        print(markdown)
    else:
        common.write_results(NAME, results, markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
