"""kill -9 during ``kga extract`` (issue 6): what a killed run leaves behind and how the next run
recovers, on FB15k-237 (2 hops around Tom Hanks and Steven Spielberg, ~50,000 edges).

    python -m benchmarks.kill9_extract          # writes benchmarks/results/kill9_extract.{md,json}

1. A reference ``kga extract`` runs uninterrupted.
2. Deterministic kills: the extraction runs in a child process whose checkpoint callback SIGKILLs it at a
   chosen point (``loaders.testing.kill``: before and after a batch's commit, in the walk and in the name
   phase, after the store is built but not swapped in, after the swap). The same command is then run again.
3. Kills from outside at random moments (seeded): the parent sends SIGKILL after a random delay, then
   runs the same command again; and one run killed over and over until it finishes.

After every kill the target must be absent (or complete and identical) and the next run must finish
with a store identical to the reference (every triple, the name index, the manifest's counts).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import REPO_ROOT, fmt_seconds, machine_info, markdown_table, median, ratio, write_results
from kg_adapters import store_layout
from kg_adapters.errors import StoreNotFound
from loaders import load_files
from loaders.extract import STATE_FILE, store_snapshot
from loaders.testing.kill import extract_killed_at

DATA = REPO_ROOT.parent / "shared" / "data" / "fb15k237-freebase.nt.gz"
SEEDS = ["m.0bxtg", "m.06pj8"]
MAX_REPEATED_KILLS = 40


def extract_command(source: Path, store: Path, batch_size: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "kg_adapters.cli",
        "extract",
        "--kg",
        f"oxigraph://{source}?profile=freebase",
        "--seeds",
        *SEEDS,
        "--hops",
        "2",
        "--batch-size",
        str(batch_size),
        "--store",
        str(store),
        "--json",
    ]


def extract_arguments(source: Path, store: Path, batch_size: int) -> dict[str, Any]:
    """:func:`extract_command` as ``extract_subgraph`` arguments (for the child killed at a checkpoint)."""
    return {
        "source": f"oxigraph://{source}?profile=freebase",
        "seeds": SEEDS,
        "hops": 2,
        "batch_size": batch_size,
        "store": str(store),
    }


def run_killed_at(point: str, source: Path, store: Path, batch_size: int) -> tuple[int, float]:
    """Exit status and wall seconds of an extraction that SIGKILLs itself at checkpoint ``point``."""
    started = time.perf_counter()
    proc = extract_killed_at(point, **extract_arguments(source, store, batch_size))
    if proc.returncode not in (0, -signal.SIGKILL):
        raise RuntimeError(f"extraction failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return proc.returncode, time.perf_counter() - started


def run(command: list[str]) -> tuple[int, float, dict[str, Any] | None]:
    """Exit status, wall seconds and the JSON report of one ``kga extract`` process."""
    started = time.perf_counter()
    proc = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=900, check=False)
    wall = time.perf_counter() - started
    report = json.loads(proc.stdout) if proc.returncode == 0 else None
    if proc.returncode not in (0, -signal.SIGKILL):
        raise RuntimeError(f"kga extract failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return proc.returncode, wall, report


def kill_after(command: list[str], delay: float) -> tuple[int, float]:
    """Starts ``kga extract``, SIGKILLs it after ``delay`` seconds (unless it finished first)."""
    started = time.perf_counter()
    proc = subprocess.Popen(command, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    return proc.returncode, time.perf_counter() - started


def digest(store: Path) -> str:
    return hashlib.sha256(json.dumps(store_snapshot(store), sort_keys=True).encode()).hexdigest()[:16]


def left_behind(store: Path, expected: str) -> dict[str, Any]:
    """What a killed run left: is the target a complete store (and then the finished one), and
    where its checkpoint stood."""
    try:
        store_layout.read_manifest(store)
        complete = True
    except StoreNotFound:
        complete = False
    state_path = store.parent / f".{store.name}.kga-extract" / STATE_FILE
    checkpoint = None
    if state_path.is_file():
        checkpoint = "nothing committed"
        db = sqlite3.connect(f"file:{state_path}?mode=ro", uri=True)
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'progress'").fetchone()
        except sqlite3.OperationalError:  # killed before its tables were created
            row = None
        finally:
            db.close()
        if row:
            progress = json.loads(row[0])
            checkpoint = f"{progress['phase']}, {progress['batches']} batches committed"
    temps = sorted(p.name for p in store.parent.glob(f".{store.name}.kga-tmp-*"))
    return {
        "store_complete": complete,
        "complete_store_is_final": complete and digest(store) == expected,
        "checkpoint": checkpoint,
        "temp_dirs": len(temps),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--random-kills", type=int, default=8)
    parser.add_argument("--seed", type=int, default=6)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="kga-kill9-"))
    try:
        source = work / "fb15k"
        load_files([str(args.data)], str(source), profile="freebase", progress=False)
        reference_store = work / "reference"
        _, reference_wall, reference = run(extract_command(source, reference_store, args.batch_size))
        assert reference is not None
        expected = digest(reference_store)
        batches = reference["batches"]
        walk_batches = reference["batches"] - -(-reference["entities"] // args.batch_size)

        rows: list[dict[str, Any]] = []

        def trial(kind: str, point: str, kill: Any) -> None:
            store = work / f"trial-{len(rows)}"
            status, killed_wall = kill(store)
            after = left_behind(store, expected)
            _, resume_wall, report = run(extract_command(source, store, args.batch_size))
            assert report is not None
            same = digest(store) == expected
            rows.append(
                {
                    "kind": kind,
                    "point": point,
                    "exit_status": status,
                    "killed_after_seconds": killed_wall,
                    **after,
                    "resume_seconds": resume_wall,
                    "resume_vs_uninterrupted": ratio(resume_wall, reference_wall),
                    "runs": report["runs"],
                    "identical": same,
                }
            )
            shutil.rmtree(store, ignore_errors=True)

        points = [
            "fetched:1",
            "commit:1",
            f"commit:{walk_batches}",
            f"fetched:{walk_batches + 1}",
            f"fetched:{batches // 2 + walk_batches // 2}",
            f"commit:{batches}",
            "built",
            "swapped",
        ]
        for point in points:
            trial(
                "hook",
                point,
                lambda store, point=point: run_killed_at(point, source, store, args.batch_size),
            )
        rng = random.Random(args.seed)
        for _ in range(args.random_kills):
            delay = rng.uniform(0.3, reference_wall)
            trial(
                "external",
                f"after {delay:.2f} s",
                lambda store, delay=delay: kill_after(extract_command(source, store, args.batch_size), delay),
            )

        repeated = work / "repeated"
        kills = 0
        while kills < MAX_REPEATED_KILLS:
            status, _ = kill_after(extract_command(source, repeated, args.batch_size), reference_wall / 2)
            if status == 0:
                break
            kills += 1
        repeated_same = kills < MAX_REPEATED_KILLS and digest(repeated) == expected
    finally:
        shutil.rmtree(work, ignore_errors=True)

    all_identical = all(row["identical"] for row in rows) and repeated_same
    never_partial = all(not row["store_complete"] or row["complete_store_is_final"] for row in rows)
    table = markdown_table(
        [
            "kill",
            "at",
            "exit",
            "store after kill",
            "checkpoint left",
            "temp dirs",
            "re-run / uninterrupted",
            "identical",
        ],
        [
            [
                row["kind"],
                row["point"] + (" (finished before the kill)" if row["exit_status"] == 0 else ""),
                str(row["exit_status"]),
                "complete" if row["store_complete"] else "absent",
                row["checkpoint"] or "none",
                str(row["temp_dirs"]),
                f"{row['resume_vs_uninterrupted']:.2f}x",
                "yes" if row["identical"] else "NO",
            ]
            for row in rows
        ],
    )
    resume_ratio = median([row["resume_vs_uninterrupted"] for row in rows])
    markdown = "\n".join(
        [
            "# kill -9 during `kga extract`",
            "",
            f"`python -m benchmarks.kill9_extract`: FB15k-237 in the embedded store, `kga extract --seeds "
            f"{' '.join(SEEDS)} --hops 2 --batch-size {args.batch_size}` ({reference['edges']:,} edges, "
            f"{reference['entities']:,} entities, {reference['triples']:,} triples, {batches} batches; uninterrupted: "
            f"{fmt_seconds(reference_wall)}). Each row kills one run with SIGKILL, then runs the same command again.",
            "",
            table,
            "",
            f"- Every re-run finished with a store identical to the uninterrupted one (every triple, the name "
            f"index, the manifest's counts): {'yes' if all_identical else 'NO'}.",
            f"- A killed run never left a store that looks complete (no `kga-store.json`; `connect` raises "
            f"`StoreNotFound`) unless it was killed after the swap, when the store is the finished one: "
            f"{'yes' if never_partial else 'NO'}.",
            f"- Median re-run time / uninterrupted time: {resume_ratio:.2f}x (the re-run continues from the last "
            "committed batch; a kill before the first commit or during the build costs a full build again).",
            f"- One run killed every {fmt_seconds(reference_wall / 2)} until it finished: {kills} kills, then "
            f"identical: {'yes' if repeated_same else 'NO'}.",
            "",
            "What happens: each batch (one `neighbors` call over up to `--batch-size` frontier ids) is committed "
            "to `.STORE.kga-extract/state.sqlite` in one SQLite transaction with the checkpoint (hop, cursor, "
            "visited nodes, counts). A kill loses at most the batch in flight. The next run with the same "
            "arguments reopens the checkpoint, asks that batch again (edges already written are not counted "
            "twice), builds the store in a temporary sibling directory (a leftover one from a killed build is "
            "deleted: its process is gone), writes the manifest last and swaps it in, then deletes the work "
            "directory. A run with other arguments against an unfinished work directory is refused "
            "(`ExtractStateMismatch`) unless `--restart` is given.",
        ]
    )
    print(markdown)
    write_results(
        "kill9_extract",
        {
            "reference": {**reference, "wall_seconds": reference_wall},
            "trials": rows,
            "repeated_kills": {"kills": kills, "identical": repeated_same},
            "all_identical": all_identical,
            "machine": machine_info(),
        },
        markdown,
    )


if __name__ == "__main__":
    main()
