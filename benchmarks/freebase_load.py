"""``kga load --format freebase`` vs plain N-Triples loading, on FB15k-237 written as a Freebase dump.

Run: ``.venv/bin/python -m benchmarks.freebase_load [--data PATH] [--repeats N]``. The FB15k-237
N-Triples file is rewritten twice in a temporary directory: as the real dump lays lines out
(``<s>\\t<p>\\t<o>\\t.``, valid lines the reader passes on untouched) and with ``ns:`` prefixed
names (every line repaired: the reader's worst case). Each file is loaded into a fresh store
``--repeats`` times, the layouts (and a lenient load of the tab-separated one) interleaved; medians and
ratios to the N-Triples load, with the machine's load average.

``--disk-only`` measures disk instead (no timing, so it runs niced and without the benchmark lock): the
store ``kga load`` leaves from ``--disk-data`` (a synthetic 1M-triple Freebase dump) strict and ``--lenient``,
as N-Triples and ``--format freebase``, against ``oxigraph load``'s; ``--baseline-source DIR`` adds the
lenient loads of the package code in DIR (an older checkout). The results file keeps both parts: each mode
replaces only its own.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.common import REPO_ROOT, machine_info, markdown_table, median, ratio, write_results
from loaders import load_files

FREEBASE_NS = "http://rdf.freebase.com/ns/"
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data" / "fb15k237-freebase.nt.gz"
LENIENT = "freebase (tabs), --lenient"
"""The variant loaded leniently (the real dump needs it): streamed like a strict load since issue 23."""
DISK_DATA = Path("/work/team/data/freebase-1M.nt.gz")
DISK_VARIANTS: dict[str, list[str]] = {
    "nt": [],
    "nt --lenient": ["--lenient"],
    "--format freebase": ["--format", "freebase"],
    "--format freebase --lenient": ["--format", "freebase", "--lenient"],
}


def write_variants(source: Path, directory: Path) -> dict[str, tuple[Path, str]]:
    """name -> (file, format) for the plain, tab-separated and prefixed copies of ``source``."""
    tabbed, prefixed = directory / "freebase-rdf-tabs.gz", directory / "freebase-rdf-prefixed.gz"
    with (
        gzip.open(source, "rt", encoding="utf-8") as lines,
        gzip.open(tabbed, "wt", encoding="utf-8", compresslevel=1) as tabs,
        gzip.open(prefixed, "wt", encoding="utf-8", compresslevel=1) as short,
    ):
        for line in lines:
            subject, predicate, rest = line.rstrip("\n").split(" ", 2)
            obj = rest[: -len(" .")]
            tabs.write(f"{subject}\t{predicate}\t{obj}\t.\n")
            terms = [
                "ns:" + term[1 + len(FREEBASE_NS) : -1] if term.startswith("<" + FREEBASE_NS) else term
                for term in (subject, predicate, obj)
            ]
            short.write("\t".join(terms) + "\t.\n")
    plain = directory / "fb15k237.nt.gz"
    shutil.copyfile(source, plain)
    return {
        "nt": (plain, "nt"),
        "freebase (tabs)": (tabbed, "freebase"),
        "freebase (ns: prefixed)": (prefixed, "freebase"),
        LENIENT: (tabbed, "freebase"),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--disk-only", action="store_true", help="measure the stores' disk, not the load time")
    parser.add_argument("--disk-data", type=Path, default=DISK_DATA)
    parser.add_argument("--baseline-source", type=Path, help="also load leniently with the package code in DIR")
    args = parser.parse_args()
    previous = _previous()
    if args.disk_only:
        figures = {**{k: v for k, v in previous.items() if k != "disk"}, "disk": measure_disk(args)}
    else:
        figures = {**measure_time(args), **({"disk": previous["disk"]} if "disk" in previous else {})}
    markdown = _markdown(figures)
    print(markdown)
    write_results("freebase_load", figures, markdown)


def _previous() -> dict[str, Any]:
    path = common.RESULTS_DIR / "freebase_load.json"
    return dict(json.loads(path.read_text("utf-8"))) if path.is_file() else {}


def measure_time(args: argparse.Namespace) -> dict[str, Any]:
    """Medians of ``--repeats`` loads of FB15k-237 as N-Triples and as the two Freebase layouts."""
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="kga-freebase-load-") as tmp:
        variants = write_variants(args.data, Path(tmp))
        seconds: dict[str, list[float]] = {name: [] for name in variants}
        statements: dict[str, int] = {}
        for repeat in range(args.repeats):
            for name, (path, fmt) in variants.items():
                store = Path(tmp) / f"store-{repeat}-{fmt}-{len(seconds[name])}"
                started = time.perf_counter()
                lenient = name == LENIENT
                report = load_files(
                    [str(path)], str(store), format=fmt, profile="freebase", progress=False, lenient=lenient
                )
                seconds[name].append(time.perf_counter() - started)
                statements[name] = report.statements_read
                shutil.rmtree(store)
    assert len(set(statements.values())) == 1, f"the variants loaded different triples: {statements}"
    baseline = median(seconds["nt"])
    return {
        "triples": statements["nt"],
        "repeats": args.repeats,
        "median_seconds": {name: median(times) for name, times in seconds.items()},
        "ratios_vs_nt": {name: ratio(median(times), baseline) for name, times in seconds.items()},
        "load_average": list(load_start),
        "load_average_end": list(os.getloadavg()),
        "machine": machine_info(),
    }


def measure_disk(args: argparse.Namespace) -> dict[str, Any]:
    """Disk of the stores loaded from ``--disk-data`` by each variant (and ``oxigraph load``)."""
    from benchmarks.load_scale import load_side

    rows: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="kga-freebase-disk-", dir=REPO_ROOT / ".kga") as tmp:
        target = Path(tmp) / "store"
        result = load_side("oxigraph", args.disk_data, target, [], timeout=7200)
        rows["oxigraph load"] = {"disk_bytes": result["disk_bytes"]}
        for name, flags in DISK_VARIANTS.items():
            result = load_side("kga", args.disk_data, target, flags, timeout=7200)
            rows[f"kga load {name}"] = {"disk_bytes": result["disk_bytes"], "store_triples": result["store_triples"]}
        if args.baseline_source is not None:  # `python -m` run there imports that checkout's package first
            common.REPO_ROOT, ours = args.baseline_source.resolve(), common.REPO_ROOT
            os.environ["PYTHONPATH"] = str(args.baseline_source.resolve())
            for name in ("nt --lenient", "--format freebase --lenient"):
                result = load_side("kga", args.disk_data, target, DISK_VARIANTS[name], timeout=7200)
                rows[f"kga load {name} (before: {args.baseline_source.name})"] = {
                    "disk_bytes": result["disk_bytes"],
                    "store_triples": result["store_triples"],
                }
            del os.environ["PYTHONPATH"]
            common.REPO_ROOT = ours
    base = rows["oxigraph load"]["disk_bytes"]
    for row in rows.values():
        row["over_oxigraph"] = row["disk_bytes"] / base
    return {"data": str(args.disk_data), "rows": rows, "date_utc": machine_info()["date_utc"]}


def _markdown(figures: dict[str, Any]) -> str:
    lines = [f"# Loading FB15k-237 ({figures['triples']:,} triples) as N-Triples and as a Freebase dump", ""]
    load = ""
    if "load_average" in figures:
        averages = common.load_average_text(figures["load_average"], figures["load_average_end"])
        load = f" 1/5/15-minute load average {averages}."
    lines += [
        f"Median of {figures['repeats']} loads each (fresh store, formats interleaved), whole `load_files` call.{load}",
        "",
    ]
    baseline = figures["median_seconds"]["nt"]
    rows = [
        [name, f"{seconds:.2f} s", f"{figures['triples'] / seconds:,.0f}", f"{ratio(seconds, baseline):.2f}x"]
        for name, seconds in figures["median_seconds"].items()
    ]
    lines.append(markdown_table(["input", "median time", "triples/s", "time / N-Triples"], rows))
    disk = figures.get("disk")
    if disk is not None:
        lines += [
            "",
            f"## Disk of the store: `{Path(disk['data']).name}` ({disk['date_utc']})",
            "",
            "One load each, niced and without the benchmark lock (disk is not timing); the store directory's "
            "allocated blocks (data and indexes) against `oxigraph load`'s of the same file.",
            "",
            markdown_table(
                ["loader", "store triples", "disk", "disk / oxigraph load"],
                [
                    [
                        name,
                        f"{row['store_triples']:,}" if "store_triples" in row else "",
                        f"{row['disk_bytes'] / 2**20:.0f} MiB",
                        f"{row['over_oxigraph']:.2f}x",
                    ]
                    for name, row in disk["rows"].items()
                ],
            ),
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
