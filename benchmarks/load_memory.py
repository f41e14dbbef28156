"""Memory of ``kga load`` under one fixed ``--memory`` budget as the input grows: ``python -m benchmarks.load_memory``.

Run from the repository root, one size per run, niced (it measures memory, not time: no heavy lock)::

    nice -n 10 .venv/bin/python -m benchmarks.load_memory --memory 1G --sizes 4M
    nice -n 10 .venv/bin/python -m benchmarks.load_memory --memory 1G --sizes 100M 2> load_memory-100M.log

Each load is ``kga load FILE --store DIR --profile freebase --memory SIZE`` on a
:mod:`benchmarks.synth_freebase` dump (:mod:`benchmarks.load_scale`'s files and helpers), in a process
of its own. Every 50 ms the resident memory of each process of its tree is sampled with psutil and
attributed to a role: the ``loader`` (the ``kga load`` process: Oxigraph's bulk loader runs in it), the
``index worker`` (``loaders.index_worker``: numbering, spill, the index files) and ``other``. Per load:
the peak of each role, the peak of the whole tree (summed at one instant), wall time, the store's disk,
and a timeline (RSS per role, the build directory's disk and Oxigraph data files, and how many of them
the loader has open, every ``--every`` seconds), logged as it
goes (a run that cannot finish still leaves its timeline in the results, marked unfinished).

Results: ``benchmarks/results/load_memory.json`` and ``.md`` (the entry of a size, budget and ``--tag`` is
replaced by its new run; the others are kept). Times are for the record (niced beside other work), not for comparison.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.load_scale import (
    DATA_DIR,
    GIB,
    TreeSampler,
    disk_bytes,
    ensure_data,
    kill_tree,
    raw_bytes,
    read_results,
    store_parts,
)

NAME = "load_memory"
ROLES = ("loader", "index worker", "other")


def log(message: str) -> None:
    print(f"[load_memory {time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.2f}] {message}", file=sys.stderr)


def role_of(cmdline: list[str], root: bool) -> str:
    if root:
        return "loader"
    return "index worker" if "loaders.index_worker" in cmdline else "other"


def measured_load(data: Path, target: Path, memory: str, args: argparse.Namespace, entry: dict[str, Any]) -> None:
    """One ``kga load`` of ``data`` into the fresh ``target`` under ``--memory memory``, its figures written
    into ``entry`` as they come (the timeline every ``args.every`` seconds, saved each time)."""
    shutil.rmtree(target, ignore_errors=True)
    command = [sys.executable, "-m", "kg_adapters.cli", "load", str(data), "--store", str(target)]
    command += ["--profile", "freebase", "--json", "--memory", memory, *args.kga_args.split()]
    timeline: list[dict[str, Any]] = []
    entry.update(finished=False, timeline=timeline, load_before=os.getloadavg()[0])
    code = Path(args.code) if args.code else common.REPO_ROOT
    environment = {**os.environ, "PYTHONPATH": str(code)} if args.code else None
    cpu_before = common.children_cpu_seconds()
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=code, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sampler = TreeSampler(process.pid, role_of, ROLES)
    output: dict[str, bytes] = {}
    readers = [
        threading.Thread(target=lambda name=name, stream=stream: output.update({name: stream.read()}), daemon=True)
        for name, stream in (("out", process.stdout), ("err", process.stderr))
    ]
    for reader in readers:
        reader.start()
    try:
        while process.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=args.every)
            seconds = time.perf_counter() - started
            if seconds > args.timeout:
                kill_tree(process)  # the index worker too: it would go on loading the machine
                raise RuntimeError(f"the load ran past --timeout {args.timeout:.0f} s")
            point = {
                "seconds": round(seconds, 1),
                **sampler.latest,
                "disk_bytes": building_bytes(target),
                "store_files": building_data_files(target),
                "loader_open_files": open_data_files(process.pid),
                "load": os.getloadavg()[0],
            }
            timeline.append(point)
            entry.update(
                store_files_peak=max(found.get("store_files", 0) for found in timeline),
                loader_open_files_peak=max(found.get("loader_open_files", 0) for found in timeline),
                peaks=dict(sampler.peaks),
                tree_peak_rss_bytes=sampler.peak,
                tree_peak_anonymous_bytes=sampler.anonymous_peak,
                seconds=seconds,
            )
            log(
                f"  {seconds:7.0f} s: loader {point['loader'] / GIB:.2f} GiB, worker {point['index worker'] / GIB:.2f} "
                f"GiB, tree peak {sampler.peak / GIB:.2f} GiB, disk {point['disk_bytes'] / 2**20:,.0f} MiB"
            )
            args.save()
    except BaseException:
        kill_tree(process)  # its figures are lost: the readers below would wait for it to end unsampled
        raise
    finally:
        sampler.stop()
        for reader in readers:
            reader.join()
    seconds = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(f"kga load failed ({process.returncode}):\n{output.get('err', b'').decode()[-3000:]}")
    report = json.loads(output["out"].decode().strip().splitlines()[-1])
    entry.update(
        finished=True,
        seconds=seconds,
        peaks=dict(sampler.peaks),
        tree_peak_rss_bytes=sampler.peak,
        tree_peak_anonymous_bytes=sampler.anonymous_peak,
        load_after=os.getloadavg()[0],
        cpu_seconds=common.children_cpu_seconds() - cpu_before,
        disk_bytes=disk_bytes(target),
        parts=store_parts(target),
        store_triples=report["store_triples"],
        date=time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        source=args.source,
    )


def building_bytes(target: Path) -> int:
    """Disk of ``target`` and of the build directories beside it (a load builds in a sibling)."""
    return sum(disk_bytes(item) for item in target.parent.iterdir() if target.name in item.name)


def building_data_files(target: Path) -> int:
    """Oxigraph's data files (RocksDB's ``*.sst``) in ``target`` and the build directories beside it."""
    return sum(
        1
        for item in target.parent.iterdir()
        if target.name in item.name
        for _root, _dirs, names in os.walk(item)
        for name in names
        if name.endswith(".sst")
    )


def open_data_files(pid: int) -> int:
    """How many of Oxigraph's data files the process ``pid`` has open (RocksDB keeps each open file's
    index and filter blocks in memory: ``loaders.store_files``)."""
    opened = 0
    with contextlib.suppress(OSError):
        for descriptor in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                opened += os.readlink(f"/proc/{pid}/fd/{descriptor}").endswith(".sst")
    return opened


def load_average(entry: dict[str, Any]) -> float:
    """The machine's load average during a run: its timeline's median (before and after it when it has no
    timeline: a long run's ends say little about its middle)."""
    if entry.get("timeline"):
        return common.median([point["load"] for point in entry["timeline"]])
    return float((entry.get("load_before", 0) + entry.get("load_after", entry.get("load_before", 0))) / 2)


def render(results: dict[str, Any]) -> str:
    lines = [
        "# Memory of `kga load` under one budget as the input grows",
        "",
        "`python -m benchmarks.load_memory --memory SIZE --sizes SIZE`, niced beside other work: peak resident",
        "memory of each process of the load (sampled every 50 ms): the loader (the `kga load` process, where",
        "Oxigraph's bulk loader runs), the index worker (numbering, spill, index files), and the whole tree",
        "(summed at one instant). Each figure is the peak RSS, then in brackets the peak of its anonymous part",
        "(`RssAnon`: what the process holds itself; the rest is file pages it maps, such as, before the number",
        "maps of `kg_adapters/index/number_map.py`, the spill's memory-mapped arrays, which the kernel drops under",
        "pressure). Time and disk are for the record (niced, on 2 shared cores); CPU is the user and system",
        "seconds of the load's processes. Tags name the code: none = main 201a87e's (Oxigraph's bulk loads sized",
        "to the whole loader half); `reserve` = the loading process's own memory reserved before they are sized",
        "(`kg_adapters.budgets.LOADER_RESERVE`); `i23b`, `after 1` = an earlier change's (its branch before the",
        "merge into main 0953f24); `before`, `before 1`, `before 2` = main 20d6a0d. An unfinished run shows what",
        "it sampled until it stopped. Load is the median of the load averages sampled with the timeline.",
        "Data files: the most Oxigraph data files (SST) the loader had open / the store had, sampled with the",
        "timeline (RocksDB holds",
        "each open file's index and filter blocks; `capped` = their number capped from the budget,",
        "`loaders/store_files.py`); `-` = not recorded.",
        "",
    ]
    rows = []
    for entry in sorted(results["sizes"].values(), key=lambda found: (found["tag"], found["memory"], found["triples"])):
        peaks = entry.get("peaks", {})

        def both(rss: float, anonymous: float | None) -> str:
            return f"{rss / GIB:.2f} GiB" + ("" if anonymous is None else f" ({anonymous / GIB:.2f})")

        rows.append(
            [
                entry["label"],
                f"`--memory {entry['memory']}`" + (f" ({entry['tag']})" if entry["tag"] else ""),
                both(peaks.get("loader", 0), peaks.get("loader anonymous")),
                both(peaks.get("index worker", 0), peaks.get("index worker anonymous")),
                both(entry.get("tree_peak_rss_bytes", 0), entry.get("tree_peak_anonymous_bytes")),
                f"{entry.get('seconds', 0):,.0f} s" + ("" if entry.get("finished") else " (unfinished)"),
                f"{entry['cpu_seconds']:,.0f} s" if "cpu_seconds" in entry else "-",
                f"{entry['disk_bytes'] / 2**20:,.0f} MiB" if "disk_bytes" in entry else "-",
                f"{entry['loader_open_files_peak']} / {entry['store_files_peak']}"
                if "store_files_peak" in entry
                else "-",
                f"{load_average(entry):.1f}",
                entry.get("date", "-"),
            ]
        )
    headers = [
        "size",
        "budget",
        "loader peak",
        "index worker peak",
        "tree peak",
        "time",
        "CPU",
        "disk",
        "data files",
        "load",
        "measured",
    ]
    lines.append(common.markdown_table(headers, rows))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from benchmarks import scale

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="4M", help="comma-separated sizes (1M, 4M, 16M, 100M)")
    parser.add_argument("--memory", required=True, help="kga load's memory budget for every size, e.g. 1G")
    parser.add_argument("--data-dir", default=str(DATA_DIR))
    parser.add_argument("--work-dir", default=str(common.REPO_ROOT / ".kga" / "bench" / "load_memory"))
    parser.add_argument("--kga-args", default="", help="extra kga load arguments")
    parser.add_argument("--every", type=float, default=10.0, help="seconds between timeline points")
    parser.add_argument("--timeout", type=float, default=3 * 3600)
    parser.add_argument("--tag", default="", help="names the code measured (a row of its own, e.g. 'before')")
    parser.add_argument("--code", help="a checkout whose kga load is measured (default: this one), e.g. main's")
    parser.add_argument("--keep", action="store_true", help="keep the store (default: removed after)")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    args.source = common.source_fingerprint(
        "kg_adapters", "loaders", root=Path(args.code) if args.code else common.REPO_ROOT
    )
    mine: dict[str, Any] = {}
    """The entries this run measures (by key): written into the file as it is then (runs of other sizes
    may be writing it at the same time)."""

    def save() -> dict[str, Any]:
        results = read_results(NAME)
        results["sizes"].update(mine)
        results["machine"] = common.machine_info(("pyoxigraph", "psutil", "kg-adapters"))
        if not args.no_write:
            common.write_results(NAME, results, render(results))
        return results

    args.save = save
    for text in args.sizes.split(","):
        triples = scale.parse_size(text)
        label = scale.size_label(triples)
        data, _queries = ensure_data(triples, Path(args.data_dir))
        entry: dict[str, Any] = {
            "label": label,
            "triples": triples,
            "memory": args.memory,
            "tag": args.tag,
            "data": str(data),
            "data_bytes": data.stat().st_size,
            "raw_bytes": raw_bytes(data),
        }
        mine[" ".join(filter(None, (label, args.memory, args.tag)))] = entry
        target = Path(args.work_dir) / f"kga-{label}"
        target.parent.mkdir(parents=True, exist_ok=True)
        log(f"{label}: {data} ({data.stat().st_size / 2**20:,.0f} MiB) with --memory {args.memory}")
        try:
            measured_load(data, target, args.memory, args, entry)
        finally:
            save()
            if not args.keep:
                shutil.rmtree(target, ignore_errors=True)
        peaks = entry["peaks"]
        log(
            f"{label}: loader {peaks['loader'] / GIB:.2f} GiB, index worker {peaks['index worker'] / GIB:.2f} GiB, "
            f"tree {entry['tree_peak_rss_bytes'] / GIB:.2f} GiB, {entry['seconds']:.0f} s, "
            f"{entry['disk_bytes'] / 2**20:,.0f} MiB"
        )
    print(render(save()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
