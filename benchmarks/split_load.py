"""A dump split into parts: ``kga load PART1 PART2 ...`` against the same dump in one file, and against
``oxigraph load`` of the same parts (``--file`` given once per part): ``python -m benchmarks.split_load``.

Run from the repository root under the shared lock (it measures time)::

    flock /work/team/heavy.lock .venv/bin/python -m benchmarks.split_load --size 4M --parts 4 --rounds 3

The :mod:`benchmarks.synth_freebase` dump of ``--size`` (:mod:`benchmarks.load_scale`'s file) is cut into
``--parts`` gzipped N-Triples files of consecutive lines (about the same size each; written once into
the work directory and reused). Each round loads, in a process of its own into a fresh directory and
interleaved: ``kga load`` of the parts and of the single file (``--profile freebase``, every index it
builds by default) and ``oxigraph load`` of the parts and of the single file (the ``oxigraph`` CLI from
PyPI, which loads several files in parallel). Per load: wall time, the CPU seconds of its process tree
(:func:`benchmarks.common.children_cpu_seconds`), the tree's peak RSS, disk, the machine's load average
before and after, and for ``kga`` the store's triples (the parts and the file must give the same).
Medians of the rounds and their ratios.

Results: ``benchmarks/results/split_load.json`` and ``.md`` (the entry of a size and part count is
replaced by its new run; the others are kept).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.load_scale import (
    DATA_DIR,
    disk_bytes,
    ensure_data,
    oxigraph_cli,
    raw_bytes,
    read_results,
    timed_process,
)

NAME = "split_load"
SIDES = ("kga parts", "kga file", "oxigraph parts", "oxigraph file")
RATIOS = (
    ("kga parts", "kga file", "kga: parts / one file"),
    ("oxigraph parts", "oxigraph file", "oxigraph load: parts / one file"),
    ("kga parts", "oxigraph parts", "parts: kga / oxigraph load"),
    ("kga file", "oxigraph file", "one file: kga / oxigraph load"),
)


def log(message: str) -> None:
    print(f"[split_load {time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.2f}] {message}", file=sys.stderr)


def split_dump(data: Path, parts: int, directory: Path) -> list[Path]:
    """``data`` (gzipped N-Triples) cut into ``parts`` gzipped files of consecutive whole lines, about the
    same number of bytes each; reused when they are there (a marker file is written last)."""
    directory.mkdir(parents=True, exist_ok=True)
    stem = data.name.removesuffix(".nt.gz")
    paths = [directory / f"{stem}-part{number + 1}of{parts}.nt.gz" for number in range(parts)]
    done = directory / f"{stem}-{parts}-parts.done"
    if done.is_file() and all(path.is_file() for path in paths):
        return paths
    share = -(-raw_bytes(data) // parts)
    size = max(min(1 << 22, share // 64), 1 << 12)  # blocks read: a part ends at most one past its share
    with gzip.open(data, "rb") as source:
        for number, path in enumerate(paths):
            last, written = number == parts - 1, 0
            with gzip.open(path, "wb", compresslevel=1) as part:  # as benchmarks.synth_freebase writes the dump
                while last or written < share:
                    block = source.read(size)
                    if not block:
                        break
                    if not last and written + len(block) >= share:
                        block += source.readline()  # the part ends at a line break
                    part.write(block)
                    written += len(block)
    done.write_text(json.dumps({"source": str(data), "parts": [str(path) for path in paths]}))
    return paths


def load(side: str, inputs: list[Path], target: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One load of ``inputs`` into the fresh directory ``target``."""
    shutil.rmtree(target, ignore_errors=True)
    if side.startswith("kga"):
        command = [sys.executable, "-m", "kg_adapters.cli", "load", *map(str, inputs), "--store", str(target)]
        command += ["--profile", "freebase", "--json", "--no-progress"]
    else:
        command = [oxigraph_cli(), "load", "--location", str(target)]
        for path in inputs:
            command += ["--file", str(path)]
    result = timed_process(command, timeout=args.timeout)
    result["disk_bytes"] = disk_bytes(target)
    if side.startswith("kga"):
        result["store_triples"] = json.loads(result["stdout"].strip().splitlines()[-1])["store_triples"]
    result.pop("stdout")
    shutil.rmtree(target, ignore_errors=True)
    return result


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks import scale

    triples = scale.parse_size(args.size)
    data, _queries = ensure_data(triples, Path(args.data_dir))
    work = Path(args.work_dir)
    parts = split_dump(data, args.parts, work / "parts")
    source = common.source_fingerprint("kg_adapters", "loaders")
    inputs = {"kga parts": parts, "kga file": [data], "oxigraph parts": parts, "oxigraph file": [data]}
    rounds: list[dict[str, Any]] = []
    for number in range(args.rounds):
        found: dict[str, Any] = {}
        for side in SIDES if number % 2 == 0 else tuple(reversed(SIDES)):  # interleaved, order alternated
            found[side] = load(side, inputs[side], work / side.replace(" ", "-"), args)
            log(f"{args.size} round {number + 1} {side}: {found[side]['seconds']:.1f} s, {found[side]}")
        if found["kga parts"]["store_triples"] != found["kga file"]["store_triples"]:
            raise RuntimeError(f"the parts stored other triples than the file: {found}")
        rounds.append(found)
    return {
        "label": scale.size_label(triples),
        "parts": args.parts,
        "part_bytes": [path.stat().st_size for path in parts],
        "data": str(data),
        "rounds": rounds,
        "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "source": source,
    }


def medians(entry: dict[str, Any], side: str, measure: str) -> float:
    return common.median([found[side][measure] for found in entry["rounds"]])


def render(results: dict[str, Any]) -> str:
    lines = [
        "# A dump split into parts: `kga load` of the parts vs the file vs `oxigraph load`",
        "",
        "`python -m benchmarks.split_load --size SIZE --parts N` under the shared lock: the Freebase-shaped dump",
        "cut into N gzipped parts of consecutive lines; each round loads the parts and the single file with",
        "`kga load` (one command, every index it builds by default) and with `oxigraph load` (`--file` once per",
        "part: it loads them in parallel), each in a fresh process and directory, interleaved. Medians of the",
        "rounds; CPU is the user + system seconds of the load's whole process tree; peak RSS is the tree's;",
        "load is the machine's 1-minute load average over the rounds (2 cores).",
        "",
    ]
    for entry in sorted(results["sizes"].values(), key=lambda found: (found["label"], found["parts"])):
        loads = [
            found[side][key] for found in entry["rounds"] for side in SIDES for key in ("load_before", "load_after")
        ]
        lines += [
            f"## {entry['label']} in {entry['parts']} parts",
            "",
            f"{len(entry['rounds'])} rounds, {entry['date']} UTC, code {entry['source']}, load "
            f"{min(loads):.1f}-{max(loads):.1f} (median {common.median(loads):.1f}).",
            "",
        ]
        rows = [
            [
                side,
                f"{medians(entry, side, 'seconds'):.1f} s",
                f"{medians(entry, side, 'cpu_seconds'):.1f} s",
                f"{medians(entry, side, 'peak_rss_bytes') / 2**30:.2f} GiB",
                f"{medians(entry, side, 'disk_bytes') / 2**20:,.0f} MiB",
                " / ".join(f"{found[side]['seconds']:.1f}" for found in entry["rounds"]),
            ]
            for side in SIDES
        ]
        lines += [
            common.markdown_table(["load", "time", "CPU", "peak RSS", "disk", "rounds (s)"], rows),
            "",
        ]
        rows = [
            [
                label,
                f"{common.ratio(medians(entry, top, 'seconds'), medians(entry, bottom, 'seconds')):.2f}x",
                f"{common.ratio(medians(entry, top, 'cpu_seconds'), medians(entry, bottom, 'cpu_seconds')):.2f}x",
                f"{common.ratio(medians(entry, top, 'disk_bytes'), medians(entry, bottom, 'disk_bytes')):.2f}x",
            ]
            for top, bottom, label in RATIOS
        ]
        lines += [common.markdown_table(["ratio (medians)", "time", "CPU", "disk"], rows), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="4M", help="1M, 4M, 16M (a benchmarks.synth_freebase dump)")
    parser.add_argument("--parts", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data-dir", default=str(DATA_DIR))
    parser.add_argument("--work-dir", default=str(common.REPO_ROOT / ".kga" / "bench" / "split_load"))
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if args.parts < 2:
        parser.error("--parts must be 2 or more")
    entry = measure(args)
    results = read_results(NAME)
    results["sizes"][f"{entry['label']} {entry['parts']}"] = entry
    results["machine"] = common.machine_info(("pyoxigraph", "psutil", "kg-adapters"))
    print(render(results))
    if not args.no_write:
        common.write_results(NAME, results, render(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
