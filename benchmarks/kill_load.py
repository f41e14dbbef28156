"""``kill -9`` in the middle of ``kga load``, again and again: ``python -m benchmarks.kill_load``.

Each trial starts ``kga load`` of FB15k-237 (``../shared/data``; the bundled sample when absent)
in a child process, either into a fresh path or appending to an existing store, and kills it with
SIGKILL at a random moment of its run (uniform over the time an uninterrupted load takes, so some
kills land while parsing, some while the name index is rebuilt or the store is swapped in). Then:

* the fresh path must hold no store (``connect`` raises StoreNotFound), and the appended store
  must open with exactly its previous triples and manifest;
* the next ``kga load`` must succeed, remove the dead load's temporary directory and give a
  complete store with the right number of triples.

Results: ``benchmarks/results/kill_load.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import common

FB15K = common.REPO_ROOT.parent / "shared" / "data" / "fb15k237-freebase.nt.gz"
BASE = "<http://example.org/base> <http://example.org/p> <http://example.org/o> .\n"


def kga_load(source: Path, store: Path) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "kg_adapters.cli",
        "load",
        str(source),
        "--store",
        str(store),
        "--profile",
        "freebase",
    ]
    return subprocess.Popen(command, cwd=common.REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def store_triples(store: Path) -> int | str:
    """The store's size, or the name of the error opening it raised."""
    from kg_adapters.errors import KGError
    from loaders.testing.malformed_dumps import store_size

    try:
        return int(store_size(store, profile="freebase"))
    except KGError as exc:
        return type(exc).__name__


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(FB15K) if FB15K.is_file() else None)
    parser.add_argument("--trials", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    from loaders.testing.malformed_dumps import debris
    from reasoning.demo import sample_path

    data = Path(args.data) if args.data else sample_path()
    rng = random.Random(args.seed)
    began = time.perf_counter()
    trials: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="kga-kill-") as tmp:
        work = Path(tmp)
        (work / "base.nt").write_text(BASE)
        clean = work / "clean"
        started = time.perf_counter()
        child = kga_load(data, clean)
        if child.wait() != 0:
            raise SystemExit(child.stderr.read().decode() if child.stderr else "kga load failed")
        full_seconds = time.perf_counter() - started
        full = store_triples(clean)
        print(f"uninterrupted load: {full_seconds:.2f} s, {full} triples", file=sys.stderr)
        for number in range(args.trials):
            append = number % 2 == 1
            trial_dir = work / f"trial{number}"
            trial_dir.mkdir()
            store = trial_dir / "store"
            if append:
                base = kga_load(work / "base.nt", store)
                assert base.wait() == 0
                manifest = (store / "kga-store.json").read_bytes()
            delay = rng.uniform(0.05, full_seconds)
            child = kga_load(data, store)
            finished = False
            try:
                child.wait(timeout=delay)
                finished = True  # the load beat the kill
            except subprocess.TimeoutExpired:
                os.kill(child.pid, signal.SIGKILL)
                child.wait()
            after_kill = store_triples(store)
            left = debris(trial_dir)
            if finished:
                intact = after_kill == full
            elif append:
                intact = after_kill == 1 or after_kill == full + 1
                intact = intact and (after_kill != 1 or (store / "kga-store.json").read_bytes() == manifest)
            else:
                intact = after_kill in ("StoreNotFound", full)
            again = kga_load(data, store)
            recovered = again.wait() == 0
            final = store_triples(store)
            expected_final = full + 1 if append else full
            trials.append(
                {
                    "trial": number,
                    "target": "append to a 1-triple store" if append else "fresh path",
                    "killed_after_seconds": round(delay, 3),
                    "killed": not finished,
                    "after_kill": after_kill,
                    "debris_after_kill": left,
                    "consistent_after_kill": intact,
                    "next_load_ok": recovered,
                    "final_triples": final,
                    "complete_after_next_load": recovered and final == expected_final and debris(trial_dir) == [],
                }
            )
            print(trials[-1], file=sys.stderr)
            shutil.rmtree(trial_dir)
    ok = all(t["consistent_after_kill"] and t["complete_after_next_load"] for t in trials)
    killed = sum(t["killed"] for t in trials)
    result = {
        "benchmark": "kill_load",
        "machine": common.machine_info(("pyoxigraph", "kg-adapters")),
        "source": common.source_fingerprint("kg_adapters", "loaders"),
        "data": data.name,
        "triples": full,
        "uninterrupted_load_seconds": full_seconds,
        "seconds": time.perf_counter() - began,
        "trials": trials,
        "all_consistent": ok,
    }
    rows = [
        [
            str(t["trial"]),
            t["target"],
            f"{t['killed_after_seconds']:.2f} s" if t["killed"] else "(finished first)",
            str(t["after_kill"]),
            ", ".join(t["debris_after_kill"]) or "-",
            "yes" if t["consistent_after_kill"] else "**NO**",
            "yes" if t["complete_after_next_load"] else "**NO**",
        ]
        for t in trials
    ]
    markdown = "\n".join(
        [
            "# kill -9 during `kga load`",
            "",
            f"`python -m benchmarks.kill_load` ({time.strftime('%Y-%m-%d', time.gmtime())}): {len(trials)} loads of "
            f"{data.name} ({full:,} triples; {full_seconds:.1f} s uninterrupted) killed with SIGKILL at a random "
            f"moment; {killed} were killed mid-load. After each kill the store must be absent (fresh path) or "
            "exactly the previous one (append), and the next load must succeed and clean up.",
            "",
            common.markdown_table(
                [
                    "trial",
                    "target",
                    "killed after",
                    "store after kill (triples or error)",
                    "debris left",
                    "consistent",
                    "next load complete",
                ],
                rows,
            ),
            "",
            f"All consistent: {'yes' if ok else 'NO'}. The debris is the dead load's temporary directory, "
            "removed by the next load into the same store.",
            "",
        ]
    )
    print(markdown)
    if not args.no_write:
        json_path, md_path = common.write_results("kill_load", result, markdown)
        print(f"wrote {json_path} and {md_path}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
