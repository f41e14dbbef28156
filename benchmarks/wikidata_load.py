"""``kga load --format wikidata-json`` throughput, against loading the same triples as N-Triples.

Run: ``.venv/bin/python -m benchmarks.wikidata_load [--copies N] [--runs R]``. The dump is built
from the recorded entities of the tests (``kg_adapters/testing/data/wikidata/neighbours.json``, plus the real Q42
from ``../shared/data`` when present), each copied ``N`` times under fresh ids, gzip-compressed as
Wikidata writes its dumps. Each load (truthy triples and all terms; then with ``--qualifiers``) is
timed ``R`` times into a fresh store; the baseline loads the N-Triples the first load produced.
Figures are medians; the ratio says what reading entity JSON costs over reading the triples.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from benchmarks.common import (
    REPO_ROOT,
    fmt_seconds,
    load_average_text,
    machine_info,
    markdown_table,
    median,
    ratio,
    write_results,
)
from kg_adapters import store_layout
from kg_adapters.testing.wikidata_graph import RECORDED
from loaders import load_files

NEIGHBOURS = RECORDED / "neighbours.json"
Q42 = REPO_ROOT.parent / "shared" / "data" / "wikidata-Q42.json"  # ../shared/data beside the checkout
_ID = re.compile(r'"(Q[1-9][0-9]*)(\$|")')


def entities() -> list[dict[str, Any]]:
    found = list(json.loads(NEIGHBOURS.read_text("utf-8"))["entities"].values())
    if Q42.is_file():
        found.extend(json.loads(Q42.read_text("utf-8"))["entities"].values())
    return [entity for entity in found if entity["id"].startswith("Q")]


def write_dump(path: Path, copies: int) -> int:
    """``copies`` copies of every entity, item ids shifted per copy (values too, so edges stay inside
    one copy); returns the number of entities written."""
    lines = [json.dumps(entity, ensure_ascii=False) for entity in entities()]
    written = 0
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("[\n")
        for copy in range(copies):
            shift = (copy + 1) * 1_000_000_000
            for line in lines:
                handle.write(_ID.sub(lambda m, s=shift: f'"Q{int(m[1][1:]) + s}{m[2]}', line) + ",\n")
                written += 1
        handle.write("]\n")
    return written


def timed_load(source: Path, store: Path, **options: Any) -> tuple[float, int]:
    shutil.rmtree(store, ignore_errors=True)
    started = time.perf_counter()
    report = load_files([str(source)], str(store), progress=False, **options)
    return time.perf_counter() - started, report.statements_read


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=150)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    load_start = os.getloadavg()

    with tempfile.TemporaryDirectory(prefix="kga-wd-bench-") as tmp:
        work = Path(tmp)
        dump = work / "dump.json.gz"
        count = write_dump(dump, args.copies)
        rows: list[list[str]] = []
        figures: dict[str, Any] = {"entities": count, "copies": args.copies, "runs": args.runs}
        for label, options in (("truthy + terms", {}), ("with --qualifiers", {"qualifiers": True})):
            runs = [timed_load(dump, work / "store", **options) for _ in range(args.runs)]
            seconds = median([run[0] for run in runs])
            triples = runs[0][1]
            nt = work / "same.nt.gz"
            store = work / "store"
            loaded = ox.Store.read_only(str(store_layout.data_dir(store, store_layout.read_manifest(store))))
            with gzip.open(nt, "wb") as out:
                loaded.dump(out, ox.RdfFormat.N_TRIPLES, from_graph=ox.DefaultGraph())
            del loaded
            baseline = median([timed_load(nt, work / "nt-store")[0] for _ in range(args.runs)])
            figures[label] = {
                "seconds": seconds,
                "triples": triples,
                "triples_per_second": triples / seconds,
                "entities_per_second": count / seconds,
                "ntriples_seconds": baseline,
                "json_over_ntriples": ratio(seconds, baseline),
            }
            rows.append(
                [
                    label,
                    f"{triples:,}",
                    fmt_seconds(seconds),
                    f"{triples / seconds:,.0f}",
                    f"{count / seconds:,.0f}",
                    fmt_seconds(baseline),
                    f"{ratio(seconds, baseline):.2f}x",
                ]
            )
    table = markdown_table(
        ["load", "triples", "median time", "triples/s", "entities/s", "same triples as N-Triples", "JSON / N-Triples"],
        rows,
    )
    load_end = os.getloadavg()
    markdown = (
        f"# Wikidata JSON dump loading\n\n{count:,} entities (gzip), median of {args.runs} runs. 1/5/15-minute load "
        f"average {load_average_text(load_start, load_end)} (2 cores).\n\n{table}\n"
    )
    figures["load_average"], figures["load_average_end"] = list(load_start), list(load_end)
    figures["machine"] = machine_info()
    write_results("wikidata_load", figures, markdown)
    print(markdown)


if __name__ == "__main__":
    main()
