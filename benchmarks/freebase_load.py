"""``kga load --format freebase`` vs plain N-Triples loading, on FB15k-237 written as a Freebase dump.

Run: ``.venv/bin/python -m benchmarks.freebase_load [--data PATH] [--repeats N]``. The FB15k-237
N-Triples file is rewritten twice in a temporary directory: as the real dump lays lines out
(``<s>\\t<p>\\t<o>\\t.``, valid lines the reader passes on untouched) and with ``ns:`` prefixed
names (every line repaired: the reader's worst case). Each file is loaded into a fresh store
``--repeats`` times, the three formats interleaved; medians and ratios to the N-Triples load.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import tempfile
import time
from pathlib import Path

from benchmarks.common import REPO_ROOT, machine_info, markdown_table, median, ratio, write_results
from loaders import load_files

FREEBASE_NS = "http://rdf.freebase.com/ns/"
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data" / "fb15k237-freebase.nt.gz"


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
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="kga-freebase-load-") as tmp:
        variants = write_variants(args.data, Path(tmp))
        seconds: dict[str, list[float]] = {name: [] for name in variants}
        statements: dict[str, int] = {}
        for repeat in range(args.repeats):
            for name, (path, fmt) in variants.items():
                store = Path(tmp) / f"store-{repeat}-{fmt}-{len(seconds[name])}"
                started = time.perf_counter()
                report = load_files([str(path)], str(store), format=fmt, profile="freebase", progress=False)
                seconds[name].append(time.perf_counter() - started)
                statements[name] = report.statements_read
                shutil.rmtree(store)
    assert len(set(statements.values())) == 1, f"the variants loaded different triples: {statements}"
    baseline = median(seconds["nt"])
    rows = [
        [
            name,
            f"{median(times):.2f} s",
            f"{statements[name] / median(times):,.0f}",
            f"{ratio(median(times), baseline):.2f}x",
        ]
        for name, times in seconds.items()
    ]
    markdown = "\n".join(
        [
            f"# Loading FB15k-237 ({statements['nt']:,} triples) as N-Triples and as a Freebase dump",
            "",
            f"Median of {args.repeats} loads each (fresh store, formats interleaved), whole `load_files` call.",
            "",
            markdown_table(["input", "median time", "triples/s", "time / N-Triples"], rows),
        ]
    )
    print(markdown)
    write_results(
        "freebase_load",
        {
            "triples": statements["nt"],
            "repeats": args.repeats,
            "median_seconds": {name: median(times) for name, times in seconds.items()},
            "ratios_vs_nt": {name: ratio(median(times), baseline) for name, times in seconds.items()},
            "machine": machine_info(),
        },
        markdown,
    )


if __name__ == "__main__":
    main()
