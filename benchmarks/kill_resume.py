"""``kill -9`` during each phase of a large ``kga load``, then the same load again (``benchmarks.kill_resume``).

Run from the repository root, one or two points per run (each part stays within the shared lock's
time; the uninterrupted reference is kept in the work directory and reused while the code is the same,
the trials of every run are merged into one results file, also from runs made at the same time)::

    flock /work/team/heavy.lock .venv/bin/python -m benchmarks.kill_resume --size 16M --points stream,numbering
    flock /work/team/heavy.lock .venv/bin/python -m benchmarks.kill_resume --size 16M --points index-write,labels,swap

The file is :mod:`benchmarks.synth_freebase`'s dump of that size (shared with :mod:`benchmarks.load_scale`).
An uninterrupted ``kga load`` builds the reference store. Then, for each phase, ``kga load`` with the same
arguments runs in a session of its own, the harness watches what the load has visibly done (the input's
read position, the build directory's progress record, the index and name index files of the version
being built) and, when the load is inside the phase, SIGKILLs its whole process tree (the loader and
its index worker: a power loss, not a polite stop). The swap point is reached by the load's own
checkpoint callback (:func:`loaders.testing.kill.load_killed_at` ``built``): the manifest written, the
version not yet swapped in, a window too short to hit from outside. ``kga load`` with the same
arguments then resumes. The resumed store must answer exactly as the reference: the same triples (a
digest of every triple in the store's order), the same traversal index files, name and relation index
rows, manifest counts, and the same answers to :mod:`benchmarks.scale`'s query sets (neighbors, 2/3-hop
paths, shortest paths, one-way subgraphs) plus each neighbors entity's relations, name and name search,
compared answer by answer (a digest of every answer).

Results: ``benchmarks/results/kill_resume.json`` and ``.md``, one record per size (a run of one size
keeps the other sizes' records as they are).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
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
POINTS = ("stream", "numbering", "index-write", "labels", "swap", "index-files", "index-sort")
PHASES = {
    "stream": "parse/stream (input read past a checkpoint)",
    "numbering": "index phase (parse recorded done, the traversal index not yet in place)",
    "index-write": "index writing (traversal files being written, not yet renamed in)",
    "labels": "labels (the name index being written)",
    "swap": "swap (manifest written, not yet swapped in)",
    "index-files": "index steps: traversal files being written, some recorded (the files step by step)",
    "index-sort": "index steps: the edges' external sort, the IRI runs merged and the ids ranked recorded (--memory)",
}
SORT_MEMORY = "256M"
"""The budget of the ``index-sort`` point's loads (the kill and the resume): small enough that the index
phase sorts on disk, step by step (:class:`kg_adapters.index.spill.SpilledCollection`)."""
STREAM_PAST_CHECKPOINT = 0.05
"""The stream kill comes once the input was read this share of its size past the last checkpoint seen
(work the resume must redo), or at :data:`STREAM_FALLBACK` of it when no checkpoint came."""
STREAM_FALLBACK = 0.85
POLL_SECONDS = 0.01


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
    for entity in sets["neighbors"]:  # the relations, the name and the name search of each
        relations = {d: kg.relations(entity, direction=d).get(entity, []) for d in ("out", "in")}
        label = kg.labels([entity]).get(entity)
        found = [e.id for e in kg.search(label, limit=20)] if label else []
        digest.update(repr(("names", entity, relations, label, found)).encode())
    kg.close()
    common.emit_child_result({"digest": digest.hexdigest()})


def kga_command(data: Path, store: Path, *options: str) -> list[str]:
    load = ["load", str(data), "--store", str(store), "--profile", "freebase", "--json", *options]
    return [sys.executable, "-m", "kg_adapters.cli", *load]


def kga_load(data: Path, store: Path, *options: str) -> tuple[float, dict[str, Any]]:
    """(seconds, the load's JSON report with ``steps_done``: the index phase's steps its progress named as
    it started them, :func:`steps_shown`)."""
    started = time.perf_counter()
    command = kga_command(data, store, "--progress", *options)
    done = subprocess.run(command, cwd=common.REPO_ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"kga load failed:\n{done.stderr[-3000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return time.perf_counter() - started, {**report, "steps_done": steps_shown(done.stderr)}


def steps_shown(progress: str) -> list[str]:
    """The index phase's steps a load's progress output named (each as it started it)."""
    from loaders.load_progress import STEP_NAMES

    step_of = {named: step for step, named in STEP_NAMES.items()}
    found = re.findall(r"(?:^|[\r\n])(?:index|labels): ([^:|\r\n]+):", progress)
    steps = [step_of.get(named) or f"file:{named.removeprefix('writing ')}" for named in found]
    return sorted(set(steps))


def steps_recorded(store: Path) -> list[str]:
    """The index phase's steps a killed load recorded as finished (its ``spool/steps.json``)."""
    from kg_adapters.index.steps import STEPS_FILE
    from loaders.checkpoints import BuildDir

    try:
        return sorted(json.loads((BuildDir(store).spool / STEPS_FILE).read_text("utf-8"))["done"])
    except (OSError, ValueError, KeyError):
        return []


def observe(store: Path, data: Path, tree: list[Any]) -> dict[str, Any]:
    """What a running load has visibly done: its progress record (phase, checkpoints), how far the
    input was read (the open file's position, over the process tree), and the version being built."""
    import psutil

    from kg_adapters import store_layout
    from loaders.checkpoints import PROGRESS, BuildDir

    build = BuildDir(store)
    seen: dict[str, Any] = {"phase": None, "checkpoints": 0, "read": 0}
    try:
        progress = json.loads((build.path / PROGRESS).read_text("utf-8"))
        seen["phase"], seen["checkpoints"] = progress.get("phase"), progress.get("checkpoints", 0)
    except (OSError, ValueError):
        pass
    for process in tree:
        try:
            for handle in process.open_files():
                if handle.path == str(data):
                    seen["read"] = max(seen["read"], handle.position)
        except psutil.Error:
            continue
    seen["index_files"], seen["index_done"] = 0, False
    try:  # the traversal index is written into a directory of its own, renamed to its name when done
        for entry in build.version.iterdir():
            if entry.name == store_layout.TRAVERSAL:
                seen["index_done"] = True
            elif entry.is_dir() and entry.name != store_layout.DATA_DIR:
                seen["index_files"] += sum(1 for item in entry.rglob("*") if item.is_file() and item.stat().st_size)
    except OSError:
        pass
    try:  # the name index is written beside its path and renamed to it when complete (label_index.IndexBuild)
        seen["labels_bytes"] = (build.version / f"{store_layout.LABELS}.building").stat().st_size
    except OSError:
        seen["labels_bytes"] = 0
    seen["steps"] = steps_recorded(store)
    seen["manifest"] = (build.version / store_layout.MANIFEST).is_file()
    return seen


class Watch:
    """Decides, from what a load has visibly done, when it is inside ``point``'s phase."""

    def __init__(self, point: str, size: int) -> None:
        self.point, self.size = point, size
        self.checkpoint_read: tuple[int, int] | None = None  # (checkpoints, read position) when first seen

    def inside(self, seen: dict[str, Any]) -> bool:
        if self.point == "stream":
            if seen["phase"] not in (None, "parse"):
                return False
            if seen["checkpoints"] and (self.checkpoint_read is None or self.checkpoint_read[0] < seen["checkpoints"]):
                self.checkpoint_read = (seen["checkpoints"], seen["read"])
            past = seen["read"] - self.checkpoint_read[1] if self.checkpoint_read else 0
            return past >= STREAM_PAST_CHECKPOINT * self.size or seen["read"] >= STREAM_FALLBACK * self.size
        if seen["manifest"]:
            return False
        if self.point == "numbering":  # the worker numbers beside the parse and starts writing the index as the
            # last input is handed over, so its files may be in progress already when the parse is recorded done
            return bool(seen["phase"] == "index" and not seen["index_done"])
        if self.point == "index-write":
            return bool(seen["index_files"] > 0 and not seen["index_done"])
        if self.point == "labels":
            return bool(seen["labels_bytes"] > 0)
        steps = set(seen["steps"])
        if self.point == "index-files":
            return any(step.startswith("file:") for step in steps) and "file:meta" not in steps
        if self.point == "index-sort":
            return "ids" in steps and "edges" not in steps
        raise ValueError(self.point)


def kill_inside(point: str, data: Path, store: Path, *, timeout: float) -> dict[str, Any]:
    """Runs ``kga load`` and SIGKILLs its process tree once it is inside ``point``'s phase."""
    import psutil

    started = time.perf_counter()
    if point == "swap":
        from loaders.testing.kill import load_killed_at

        done = load_killed_at("built", timeout=timeout, paths=[str(data)], store=str(store), profile="freebase")
        return {"killed": done.returncode == -signal.SIGKILL, "after": time.perf_counter() - started, "seen": None}
    process = subprocess.Popen(
        kga_command(data, store, *point_options(point)),
        cwd=common.REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    root = psutil.Process(process.pid)
    watch = Watch(point, data.stat().st_size)
    seen: dict[str, Any] | None = None
    killed = False
    while process.poll() is None and time.perf_counter() - started < timeout:
        try:
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            break
        seen = observe(store, data, tree)
        if watch.inside(seen):
            for member in tree:  # the whole tree at once, as a power loss would
                try:
                    member.send_signal(signal.SIGKILL)
                except psutil.Error:
                    continue
            killed = process.wait() == -signal.SIGKILL  # reaped by Popen (psutil would leave it 0)
            psutil.wait_procs(tree[1:], timeout=60)
            break
        time.sleep(POLL_SECONDS)  # polling what the load did, not timing the kill
    process.wait()
    return {"killed": killed, "after": time.perf_counter() - started, "seen": seen if killed else None}


def point_options(point: str) -> list[str]:
    """The ``kga load`` options of ``point``'s loads (the kill and the resume)."""
    return ["--memory", SORT_MEMORY] if point == "index-sort" else []


def cached_reference(work: Path, data: Path, queries: Path) -> dict[str, Any]:
    """The uninterrupted load's fingerprint and answers, kept in ``work`` while the code is the same."""
    path = work / "reference.json"
    source = common.source_fingerprint("kg_adapters", "loaders")
    try:
        found: dict[str, Any] = json.loads(path.read_text("utf-8"))
        if found["data"] == str(data) and found["source"] == source:
            return found
    except (OSError, ValueError, KeyError):
        pass
    reference = work / "reference"
    shutil.rmtree(reference, ignore_errors=True)
    seconds, report = kga_load(data, reference)
    made = {
        "data": str(data),
        "source": source,
        "seconds": seconds,
        "triples": report["store_triples"],
        "fingerprint": fingerprint(reference),
        "answers": answers(reference, queries),
        "load_average": os.getloadavg()[0],
    }
    shutil.rmtree(reference)
    path.write_text(json.dumps(made), encoding="utf-8")
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="16M")
    parser.add_argument("--points", default=",".join(POINTS), help=f"comma-separated, of {', '.join(POINTS)}")
    parser.add_argument("--work-dir", default=str(common.REPO_ROOT / ".kga" / "bench" / "kill_resume"))
    parser.add_argument("--timeout", type=float, default=7200)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--answers-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--queries", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.answers_child:
        answers_child(args.store, args.queries)
        return 0
    from benchmarks import load_scale, scale

    size = scale.size_label(scale.parse_size(args.size))
    points = [point for point in args.points.split(",") if point]
    unknown = sorted(set(points) - set(POINTS))
    if unknown:
        raise SystemExit(f"unknown points {unknown}: choose from {', '.join(POINTS)}")
    data, queries = load_scale.ensure_data(scale.parse_size(args.size), load_scale.DATA_DIR)
    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    reference = cached_reference(work, data, queries)
    log(f"uninterrupted load: {reference['seconds']:.1f} s, {reference['triples']:,} triples")
    results = read_results(read_entries().get(size), data, reference)
    for point in points:
        store = work / f"store-{point}"
        shutil.rmtree(store, ignore_errors=True)
        from loaders.checkpoints import BuildDir

        BuildDir(store).remove()
        killed = kill_inside(point, data, store, timeout=args.timeout)
        visible = store.exists()
        recorded = steps_recorded(store)
        resume_seconds, report = kga_load(data, store, *point_options(point))
        found = fingerprint(store)
        expected = reference["fingerprint"]
        trial = {
            "point": point,
            "phase": PHASES[point],
            "killed": killed["killed"],
            "killed_after_seconds": killed["after"],
            "seen_at_kill": killed["seen"],
            "store_visible_after_kill": visible,
            "resumed_from_checkpoint": bool(report.get("resumed")),
            "index_steps_recorded_at_kill": recorded,
            "index_steps_redone": sorted(set(recorded) & set(report["steps_done"])),
            "resume_seconds": resume_seconds,
            "resume_over_uninterrupted": resume_seconds / reference["seconds"],
            "same_store": found == expected,
            "same_answers": answers(store, queries) == reference["answers"],
            "differences": sorted(k for k in expected if found.get(k) != expected[k]),
            "load_average": os.getloadavg()[0],
            "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
            "source": reference["source"],
            "uninterrupted_seconds": reference["seconds"],
        }
        log(f"  {point}: {trial}")
        shutil.rmtree(store, ignore_errors=True)
        seconds, began = time.perf_counter() - began, time.perf_counter()
        if args.no_write:
            results["trials"][point] = trial
            results["seconds"] = results.get("seconds", 0.0) + seconds
        else:  # after each point: a later failure keeps the earlier trials
            results = record_trial(work, size, data, reference, trial, seconds)
    print(render_size(size, results))
    return 0 if all_exact(results) else 1


def record_trial(
    work: Path, size: str, data: Path, reference: dict[str, Any], trial: dict[str, Any], seconds: float
) -> dict[str, Any]:
    """Adds ``trial`` to the size's record in the results files, read again under a lock: runs of other
    points at the same time (each writing after its own points) keep each other's trials."""
    import fcntl

    with open(work / "results.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        entries = read_entries()
        results = read_results(entries.get(size), data, reference)
        results["trials"][trial["point"]] = trial
        results["seconds"] = results.get("seconds", 0.0) + seconds
        entries[size] = results
        write_entries(entries)
    return results


def trials_of(results: dict[str, Any]) -> list[dict[str, Any]]:
    """A size's trials in phase order (a record of the first harness holds them as a list)."""
    trials = results["trials"]
    if isinstance(trials, list):
        return list(trials)
    return [trials[p] for p in POINTS if p in trials]


def all_exact(results: dict[str, Any]) -> bool:
    """Whether every trial that killed its load gave the uninterrupted store and answers (a trial whose load
    finished before the watch saw its phase proves nothing either way: :func:`render_size` names it)."""
    trials = [t for t in trials_of(results) if t["killed"]]
    return bool(trials) and all(
        t["killed"] and not t["store_visible_after_kill"] and t["same_store"] and t["same_answers"] for t in trials
    )


def data_size(data: str) -> str:
    """The size label (``4M``) of a :mod:`benchmarks.synth_freebase` dump's path."""
    found = re.search(r"-(\d+[KM])\.nt", Path(data).name)
    return found.group(1) if found else Path(data).name


def size_order(size: str) -> tuple[int, str]:
    found = re.fullmatch(r"(\d+)([KM])", size)
    return (int(found.group(1)) * {"K": 1_000, "M": 1_000_000}[found.group(2)], size) if found else (0, size)


def read_entries() -> dict[str, dict[str, Any]]:
    """Every size's record in the results file; a file of one record (the first harness's layout)
    becomes the record of its data's size."""
    try:
        found: dict[str, Any] = json.loads((common.RESULTS_DIR / f"{NAME}.json").read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    if isinstance(found.get("sizes"), dict):
        return dict(found["sizes"])
    if isinstance(found.get("data"), str) and "trials" in found:
        return {data_size(found["data"]): found}
    return {}


def write_entries(entries: dict[str, dict[str, Any]]) -> None:
    """Writes every size's record, smallest size first, to the results files."""
    ordered = {size: entries[size] for size in sorted(entries, key=size_order)}
    sections = [render_size(size, entry) for size, entry in ordered.items()]
    markdown = "\n".join(["# kill -9 during each phase of `kga load`, then resume", "", *sections])
    common.write_results(NAME, {"benchmark": NAME, "sizes": ordered}, markdown)


def read_results(found: dict[str, Any] | None, data: Path, reference: dict[str, Any]) -> dict[str, Any]:
    """The size's recorded trials when they were made on this data with this code; else a fresh record."""
    fresh: dict[str, Any] = {
        "benchmark": NAME,
        "machine": common.machine_info(("pyoxigraph", "psutil", "kg-adapters")),
        "source": reference["source"],
        "data": str(data),
        "triples": reference["triples"],
        "uninterrupted_seconds": reference["seconds"],
        "uninterrupted_load_average": reference["load_average"],
        "trials": {},
    }
    if found is None or found.get("data") != str(data) or not isinstance(found.get("trials"), dict):
        return fresh
    if found.get("source") == reference["source"]:
        return found
    for point, trial in found["trials"].items():  # another code's trials stay, each naming its code
        trial.setdefault("source", found.get("source", "?"))
        trial.setdefault("uninterrupted_seconds", found.get("uninterrupted_seconds"))
        fresh["trials"][point] = trial
    return fresh


def steps_text(trial: dict[str, Any]) -> str:
    """How many of the index phase's steps the killed load had recorded, and which the resume did again."""
    recorded = trial.get("index_steps_recorded_at_kill")
    if not recorded:
        return "-"
    redone = trial.get("index_steps_redone", [])
    return f"{len(recorded)}: " + ("none" if not redone else f"**{', '.join(redone)}**")


def render_size(size: str, results: dict[str, Any]) -> str:
    """The markdown section of one size's record."""
    legacy = isinstance(results["trials"], list)
    rows = [
        [
            t["phase"],
            "yes" if t["killed"] else "**no**",
            f"{t['killed_after_seconds']:.0f} s",
            seen_text(t.get("seen_at_kill")) if t["killed"] else "- (not killed)",
            "**yes**" if t["store_visible_after_kill"] else "no",
            resumed_text(t),
            steps_text(t),
            f"{t['resume_seconds']:.0f} s ({t['resume_over_uninterrupted']:.2f}x)",
            "yes" if t["same_store"] else f"**NO** ({', '.join(t['differences'])})",
            "yes" if t["same_answers"] else "**NO**",
            f"{t['load_average']:.1f}",
            t.get("source", results.get("source", "?")),
        ]
        for t in trials_of(results)
    ]
    missing = [] if legacy else [PHASES[p] for p in POINTS if p not in results["trials"]]
    unkilled = [t["phase"] for t in trials_of(results) if not t["killed"]]
    headers = [
        "killed during",
        "killed",
        "after",
        "what the load had done",
        "store visible after the kill",
        "resumed from a checkpoint",
        "index steps recorded at the kill: done again by the resume",
        "resume (vs uninterrupted)",
        "same store",
        "same answers",
        "load",
        "code",
    ]
    if legacy:
        method = (
            "Measured with the first harness (a21cceb): each load was killed with SIGKILL from its own "
            "checkpoint callback at a phase boundary, then `kga load` with the same arguments resumed it."
        )
    else:
        method = (
            "Each load runs in a session of its own and its whole process tree is SIGKILLed when what it has "
            "visibly done (the input's read position, the build directory's progress record, the files of the "
            "version being built) shows it inside the phase; the swap point is the load's own callback after "
            "the manifest is written. Then `kga load` with the same arguments resumes."
        )
    return "\n".join(
        [
            f"## {size}",
            "",
            f"`python -m benchmarks.kill_resume --size {size}` ({'' if legacy else 'split into parts, merged here; '}"
            f"{results['machine'].get('date_utc', '')[:10]}, uninterrupted load on code {results.get('source', '?')}; "
            "each trial names the code it ran, its resume time is against the uninterrupted load of that code): "
            f"{Path(results['data']).name} ({results['triples']:,} triples; "
            f"{results['uninterrupted_seconds']:.0f} s uninterrupted"
            + (
                f" at load {results['uninterrupted_load_average']:.1f})."
                if "uninterrupted_load_average" in results
                else ")."
            )
            + f" {method} The resumed store is compared with the uninterrupted one (digest of every triple, "
            "traversal index files, name and relation index rows, manifest counts) and answers every query of the "
            "scale benchmark's sets"
            + ("." if legacy else ", plus each entity's relations, name and name search, as it does."),
            "",
            common.markdown_table(headers, rows),
            "",
            f"All exact: {'yes' if all_exact(results) else 'NO'}."
            + (
                f" Not killed (the load finished before its phase was seen; its resume was an append of the same"
                f" file, so the manifest differs): {'; '.join(unkilled)}."
                if unkilled
                else ""
            )
            + (f" Not run yet: {'; '.join(missing)}." if missing else ""),
            "",
        ]
    )


def resumed_text(trial: dict[str, Any]) -> str:
    if "resumed_from_checkpoint" not in trial:
        return "not recorded"
    return "yes" if trial["resumed_from_checkpoint"] else "no (started over)"


def seen_text(seen: dict[str, Any] | None) -> str:
    if not seen:
        return "its own callback"
    parts = [f"phase {seen['phase'] or 'parse'}", f"{seen['checkpoints']} checkpoint(s)"]
    if seen["read"]:
        parts.append(f"read {seen['read'] / 2**20:,.0f} MiB")
    parts.append("index written" if seen.get("index_done") else f"{seen['index_files']} index file(s) in progress")
    if seen["labels_bytes"]:
        parts.append(f"labels {seen['labels_bytes'] / 2**20:,.1f} MiB")
    return ", ".join(parts)


if __name__ == "__main__":
    raise SystemExit(main())
