"""Helpers shared by the benchmarks: robust statistics, peak-RSS measurement in fresh
subprocesses, machine information and writing results (JSON + Markdown).

The benchmark machines are small and noisy, so everything here reports medians and ratios of
medians, never means or single runs.
"""

from __future__ import annotations

import json
import math
import os
import resource
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Child processes import this module too, so heavy modules (subprocess, platform, statistics,
# importlib.metadata) are imported where they are used: they would add megabytes to every RSS figure.

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = Path(__file__).resolve().parent / "results"
CHILD_MARKER = "BENCH-CHILD-RESULT "


# -- statistics ----------------------------------------------------------------------------------
def median(values: Sequence[float]) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[mid])
    return (ordered[mid - 1] + ordered[mid]) / 2.0


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100), linear interpolation between closest ranks."""
    if not values:
        return math.nan
    ordered = sorted(values)
    if len(ordered) == 1:
        return float(ordered[0])
    pos = (len(ordered) - 1) * q / 100.0
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return float(ordered[low] + (ordered[high] - ordered[low]) * (pos - low))


def ratio(numerator: float, denominator: float) -> float:
    if denominator == 0 or math.isnan(denominator) or math.isnan(numerator):
        return math.nan
    return numerator / denominator


# -- memory --------------------------------------------------------------------------------------
def peak_rss_bytes() -> int:
    """Peak resident set size of this process so far.

    On Linux this is ``VmHWM`` from /proc/self/status, the high-water mark of this process's own
    address space. ``ru_maxrss`` is not used there: a child started with fork/vfork + exec inherits
    the parent's high-water mark in it, so a small child of a big parent would report the parent's
    size. Elsewhere ``ru_maxrss`` (bytes on macOS, KiB on the BSDs)."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


def children_cpu_seconds() -> float:
    """CPU seconds (user + system) of this process's ended children and of the descendants they waited for:
    subtracted across one waited-for child, its whole process tree's CPU (a load's index worker too), which
    other work on the machine changes far less than wall time. Exact, unlike polling each process (which
    misses what a process spends after its last poll)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def current_rss_bytes() -> int:
    try:
        import psutil

        return int(psutil.Process().memory_info().rss)
    except ImportError:  # pragma: no cover - psutil is a bench dependency
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# -- subprocesses --------------------------------------------------------------------------------
def emit_child_result(data: Mapping[str, Any]) -> None:
    """Called by a child process: hands its figures (plus its peak RSS) back to the parent."""
    body = dict(data)
    body.setdefault("peak_rss_bytes", peak_rss_bytes())
    body.setdefault("rss_bytes", current_rss_bytes())
    sys.stdout.write(CHILD_MARKER + json.dumps(body) + "\n")
    sys.stdout.flush()


def run_child(module: str, args: Sequence[str], *, timeout: float = 600.0) -> dict[str, Any]:
    """Runs ``python -m module args`` in a fresh interpreter and returns what it emitted,
    plus ``wall_seconds`` (process start to exit, as seen by the parent)."""
    import subprocess

    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=str(REPO_ROOT),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(
            f"child {module} {' '.join(args)} failed with exit code {proc.returncode}:\n{proc.stderr[-4000:]}"
        )
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(CHILD_MARKER):
            result: dict[str, Any] = json.loads(line[len(CHILD_MARKER) :])
            result["wall_seconds"] = wall
            return result
    raise RuntimeError(f"child {module} {' '.join(args)} printed no result:\n{proc.stdout[-2000:]}")


# -- machine and results ------------------------------------------------------------------------
def _version(package: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    import platform

    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _total_memory() -> int | None:
    try:
        import psutil

        return int(psutil.virtual_memory().total)
    except ImportError:  # pragma: no cover
        return None


def machine_info(packages: Sequence[str] = ("pyoxigraph", "networkx", "psutil", "kg-adapters")) -> dict[str, Any]:
    import platform

    usable: int | None
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        usable = os.cpu_count()
    return {
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "cpu_count": os.cpu_count(),
        "cpu_usable": usable,
        "cpu_model": _cpu_model(),
        "memory_total_bytes": _total_memory(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "versions": {name: _version(name) for name in packages},
    }


def source_fingerprint(*packages: str, root: Path = REPO_ROOT) -> str:
    """A short hash of the ``.py`` and ``.c`` files of the given top-level packages of this repository (or of the
    checkout at ``root``), to record which code a run measured (and to notice code that changed while it
    ran)."""
    import hashlib

    digest = hashlib.sha256()
    for package in packages:
        for path in sorted([*(root / package).rglob("*.py"), *(root / package).rglob("*.c")]):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def compile_bytecode(*packages: str) -> bool:
    """Writes the ``.pyc`` files of this repository's ``packages`` (as ``pip install`` does for an
    installed package, and as networkx's were), so that child processes time running the code, not
    compiling it: with PYTHONDONTWRITEBYTECODE set, a child would compile every module it imports
    (about 40 ms and 1.5 MiB of the store's time to first answer and peak RSS). True if all compiled."""
    import compileall

    return all([compileall.compile_dir(REPO_ROOT / package, quiet=1) for package in packages])


def write_results(name: str, data: Mapping[str, Any], markdown: str) -> tuple[Path, Path]:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    json_path = RESULTS_DIR / f"{name}.json"
    md_path = RESULTS_DIR / f"{name}.md"
    _replace_text(json_path, json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")
    _replace_text(md_path, markdown if markdown.endswith("\n") else markdown + "\n")
    return json_path, md_path


def _replace_text(path: Path, text: str) -> None:
    """Writes ``path`` aside and renames it over the old one: a run reading the file while another writes it
    (two sizes of one benchmark at once) sees the old or the new file, never half of one."""
    aside = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    aside.write_text(text, encoding="utf-8")
    os.replace(aside, path)


def argument_parser(module: str, doc: str | None, *, data: Path | None = None, data_help: str = "") -> Any:
    """The command line of ``python -m MODULE`` (an ``argparse`` parser) described by the first paragraph
    of its ``doc``; with ``data``, a ``--data`` option (the input dump) defaulting to it."""
    import argparse

    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=(doc or "").split("\n\n")[0])
    if data is not None:
        parser.add_argument("--data", default=str(data), help=data_help or "N-Triples file (.nt or .nt.gz)")
    return parser


def case_row(group: str, case: str, outcome: str, expected: str, seconds: float, **columns: Any) -> dict[str, Any]:
    """One case of a :class:`CaseRun`: as expected when its outcome is the expected one; ``columns``
    are the benchmark's own (a note, a request count)."""
    outcome_columns = {"outcome": outcome, "expected": expected, "as_expected": outcome == expected}
    return {"group": group, "case": case, **outcome_columns, "seconds": seconds, **columns}


@dataclass(frozen=True)
class CaseRun:
    """A run of cases that each went as expected or not (the hostile-input benchmarks): named
    ``benchmarks.NAME``, timed and its load average taken from when it is made; with ``write``, its
    report is saved as ``results/NAME.json`` and ``.md``."""

    name: str
    title: str
    write: bool
    started: float = field(default_factory=time.perf_counter)
    load: tuple[float, float, float] = field(default_factory=os.getloadavg)

    def report(self, rows: list[dict[str, Any]], table: str) -> int:
        """Prints (and saves) the ``table`` of ``rows``, each with ``as_expected``. Returns the exit
        status: 0 when every case went as expected."""
        good = sum(bool(row["as_expected"]) for row in rows)
        data = {
            "machine": machine_info(),
            "load_average": self.load,
            "seconds": time.perf_counter() - self.started,
            "cases": rows,
            "as_expected": good,
        }
        markdown = "\n".join(
            [
                f"# {self.title}",
                "",
                f"`python -m benchmarks.{self.name}` ({time.strftime('%Y-%m-%d', time.gmtime())}, "
                f"{data['seconds']:.0f} s, load average {self.load[0]:.2f}): {good}/{len(rows)} cases as expected.",
                "",
                table,
                "",
            ]
        )
        print(markdown)
        if self.write:
            save_report(self.name, data, markdown)
        return 0 if good == len(rows) else 1


# -- formatting ----------------------------------------------------------------------------------
def fmt_seconds(seconds: float) -> str:
    if math.isnan(seconds):
        return "n/a"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.0f} µs"


def fmt_bytes(count: float) -> str:
    if math.isnan(count):
        return "n/a"
    return f"{count / 2**20:.1f} MiB"


def fmt_ratio(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2f}x"


def comparison_row(
    label: str,
    ours: float,
    theirs: float | None,
    ratio: float,
    note: str = "",
    *,
    fmt: Callable[[float], str] = fmt_seconds,
) -> list[str]:
    """One row of a report's table: what is measured, our figure, the baseline's (None: none), their
    ratio and a note (the target's verdict); figures in ``fmt`` (seconds unless told)."""
    return [label, fmt(ours), "" if theirs is None else fmt(theirs), fmt_ratio(ratio), note]


def load_average_text(start: Sequence[float], end: Sequence[float]) -> str:
    """``1.20 0.90 0.70 at the start, ... at the end``: the 1/5/15-minute load averages beside a run."""
    return " ".join(f"{x:.2f}" for x in start) + " at the start, " + " ".join(f"{x:.2f}" for x in end) + " at the end"


def save_report(name: str, results: Mapping[str, Any], markdown: str) -> None:
    """Writes ``benchmarks/results/<name>.json`` and ``.md`` and says where."""
    json_path, md_path = write_results(name, results, markdown)
    log(f"wrote {json_path} and {md_path}")


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines.extend("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows)
    return "\n".join(lines)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines.extend("| " + " | ".join(str(c) for c in row) + " |" for row in rows)
    return "\n".join(lines)


def log(message: str) -> None:
    """Progress on stderr, so stdout stays the benchmark's result."""
    print(message, file=sys.stderr, flush=True)
