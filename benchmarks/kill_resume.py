"""``kill -9`` during each phase of a large ``kga load``, then the same load again (``benchmarks.kill_resume``).

Run from the repository root (the 16M file takes about an hour on the shared 2-core machine)::

    flock /work/team/heavy.lock .venv/bin/python -m benchmarks.kill_resume --size 16M

The file is :mod:`benchmarks.synth_freebase`'s dump of that size (shared with :mod:`benchmarks.load_scale`).
An uninterrupted ``load_files`` builds the reference store. Then, for each point of the load (a
checkpoint of the parse, the end of the parse, the traversal index written, the name indexes written,
the manifest written before the swap), a child process loads the same file into a fresh path and
SIGKILLs itself when the load reaches that point by its own progress
(:func:`loaders.testing.kill.load_killed_at`); ``kga load`` with the same arguments then resumes it.
The resumed store must answer exactly as the reference: the same triples (a digest of every triple in
the store's order), the same traversal index files, name and relation index rows, manifest counts, and
the same answers to :mod:`benchmarks.scale`'s query sets (neighbors, 2/3-hop paths, shortest paths,
one-way subgraphs), compared answer by answer.

Results: ``benchmarks/results/kill_resume.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import common

NAME = "kill_resume"
POINTS = ("checkpoint:2", "parsed", "indexed", "labelled", "built")
PHASES = {
    "checkpoint:2": "parse (after its 2nd checkpoint)",
    "parsed": "traversal index (the parse done)",
    "indexed": "name indexes (the traversal index written)",
    "labelled": "manifest (every index written)",
    "built": "swap (the manifest written)",
}


def log(message: str) -> None:
    print(f"[kill_resume {time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.2f}] {message}", file=sys.stderr)


def fingerprint(store: Path) -> dict[str, Any]:
    """Digests of what a reader of the store gets: its triples, index files, index rows, counts."""
    import pyoxigraph as ox

    from kg_adapters import store_layout

    manifest = store_layout.read_manifest(store)
    version = store_layout.version_dir(store, manifest)
    data = ox.Store.read_only(str(version / store_layout.DATA_DIR))
    digest = hashlib.sha256()
    count = 0
    for quad in data:
        digest.update(str(quad).encode() + b"\n")
        count += 1
    del data
    out: dict[str, Any] = {"triples": count, "triples_sha256": digest.hexdigest()}
    traversal = version / store_layout.TRAVERSAL
    out["traversal"] = {
        item.name: hashlib.sha256(item.read_bytes()).hexdigest() for item in sorted(traversal.iterdir())
    }
    for name in ("labels.sqlite", "relations.sqlite"):
        rows = hashlib.sha256()
        with sqlite3.connect(f"file:{version / name}?mode=ro", uri=True) as db:
            for row in db.execute("SELECT iri, label, lang, norm FROM labels ORDER BY rowid"):
                rows.update(json.dumps(row).encode())
        out[name] = rows.hexdigest()
    out["manifest"] = {
        "triples": manifest["triples"],
        "labels": manifest["labels"],
        "statements": [s["statements"] for s in manifest["sources"]],
    }
    return out


def answers(store: Path, queries: Path) -> str:
    """A digest of the store's answers to every query of the sets (in a child: a fresh process)."""
    result = common.run_child(
        "benchmarks.kill_resume", ["--answers-child", "--store", str(store), "--queries", str(queries)], timeout=7200
    )
    return str(result["digest"])


def answers_child(store: str, queries: str) -> None:
    from benchmarks import scale
    from benchmarks.bfs_vs_networkx import open_store

    sets = scale.read_query_sets(queries)
    kg = open_store(store)
    runner = scale.kg_runner(kg)
    digest = hashlib.sha256()
    for kind in scale.KINDS:
        call, comparable = runner[kind]
        for query in sets[kind]:
            found = comparable(call(query))
            answer = sorted(map(repr, found.items())) if isinstance(found, dict) else found
            digest.update(repr((kind, query, answer)).encode())
    kg.close()
    common.emit_child_result({"digest": digest.hexdigest()})


def kga_load(data: Path, store: Path) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kg_adapters.cli",
            "load",
            str(data),
            "--store",
            str(store),
            "--profile",
            "freebase",
            "--json",
        ],
        cwd=common.REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"kga load failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - started, json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="16M")
    parser.add_argument("--points", default=",".join(POINTS))
    parser.add_argument("--work-dir", default=str(common.REPO_ROOT / ".kga" / "bench" / "kill_resume"))
    parser.add_argument(
        "--checkpoint-seconds", type=float, help="the killed loads' checkpoint interval (default: the library's)"
    )
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--answers-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--queries", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.answers_child:
        answers_child(args.store, args.queries)
        return 0
    from benchmarks import load_scale, scale
    from loaders.testing.kill import load_killed_at

    triples = scale.parse_size(args.size)
    data, queries = load_scale.ensure_data(triples, load_scale.DATA_DIR)
    work = Path(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    began = time.perf_counter()
    reference = work / "reference"
    seconds, report = kga_load(data, reference)
    expected, expected_answers = fingerprint(reference), answers(reference, queries)
    log(f"uninterrupted load: {seconds:.1f} s, {report['store_triples']:,} triples")
    shutil.rmtree(reference)
    trials: list[dict[str, Any]] = []
    for point in args.points.split(","):
        store = work / f"store-{point.replace(':', '-')}"
        started = time.perf_counter()
        killed = load_killed_at(
            point,
            checkpoint_seconds=args.checkpoint_seconds,
            timeout=7200,
            paths=[str(data)],
            store=str(store),
            profile="freebase",
        )
        killed_after = time.perf_counter() - started
        was_killed = killed.returncode == -signal.SIGKILL
        visible = store.exists()
        resume_seconds, _report = kga_load(data, store)
        found = fingerprint(store)
        same_answers = answers(store, queries) == expected_answers
        trial = {
            "point": point,
            "phase": PHASES.get(point, point),
            "killed": was_killed,
            "killed_after_seconds": killed_after,
            "store_visible_after_kill": visible,
            "resume_seconds": resume_seconds,
            "resume_over_uninterrupted": resume_seconds / seconds,
            "same_store": found == expected,
            "same_answers": same_answers,
            "differences": sorted(k for k in expected if found.get(k) != expected[k]),
            "load_average": os.getloadavg()[0],
        }
        trials.append(trial)
        log(f"  {point}: {trial}")
        shutil.rmtree(store, ignore_errors=True)
    ok = all(
        t["killed"] and not t["store_visible_after_kill"] and t["same_store"] and t["same_answers"] for t in trials
    )
    result = {
        "benchmark": NAME,
        "machine": common.machine_info(("pyoxigraph", "kg-adapters")),
        "source": common.source_fingerprint("kg_adapters", "loaders"),
        "data": str(data),
        "triples": report["store_triples"],
        "uninterrupted_seconds": seconds,
        "checkpoint_seconds": args.checkpoint_seconds,
        "seconds": time.perf_counter() - began,
        "trials": trials,
        "all_exact": ok,
    }
    rows = [
        [
            t["phase"],
            "yes" if t["killed"] else "**no**",
            f"{t['killed_after_seconds']:.0f} s",
            "**yes**" if t["store_visible_after_kill"] else "no",
            f"{t['resume_seconds']:.0f} s ({t['resume_over_uninterrupted']:.2f}x)",
            "yes" if t["same_store"] else f"**NO** ({', '.join(t['differences'])})",
            "yes" if t["same_answers"] else "**NO**",
            f"{t['load_average']:.1f}",
        ]
        for t in trials
    ]
    markdown = "\n".join(
        [
            "# kill -9 during each phase of `kga load`, then resume",
            "",
            f"`python -m benchmarks.kill_resume --size {args.size}` ({time.strftime('%Y-%m-%d', time.gmtime())}): "
            f"{Path(data).name} ({report['store_triples']:,} triples; {seconds:.0f} s uninterrupted). Each load "
            "is killed with SIGKILL when it reaches the phase by its own progress, then `kga load` with the same "
            "arguments resumes it; the resumed store is compared with the uninterrupted one (digest of every "
            "triple, traversal index files, name and relation index rows, manifest counts) and answers every "
            "query of the scale benchmark's sets as it does.",
            "",
            common.markdown_table(
                [
                    "killed during",
                    "killed",
                    "after",
                    "store visible after the kill",
                    "resume (vs uninterrupted)",
                    "same store",
                    "same answers",
                    "load",
                ],
                rows,
            ),
            "",
            f"All exact: {'yes' if ok else 'NO'}.",
            "",
        ]
    )
    print(markdown)
    if not args.no_write:
        common.write_results(NAME, result, markdown)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
