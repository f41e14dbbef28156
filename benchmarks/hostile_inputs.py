"""Hostile input, tried and counted: ``python -m benchmarks.hostile_inputs``.

Two parts, both from the test suite's own tables so the report and the tests cannot drift apart:

1. **Malformed dumps** (``loaders/testing/malformed_dumps.py``): each file is loaded strictly into a
   fresh path and appended to an existing one-triple store, then leniently. The table records the
   LoadError (file:line) or what was loaded, whether a store was left behind (never) and whether
   the previous store survived intact (always), and checks each outcome against the case's
   hand-written expectation.
2. **Injection fuzz** (``kg_adapters/testing/fuzz.py``): Hypothesis draws nasty strings (derandomized,
   so every run draws the same ones) and puts each into every id, relation and language-tag slot
   of every operation, and into ``search``, on each backend: the embedded store in memory and on
   disk, rdflib, the cache wrapper over the store and a real Virtuoso (skipped when not
   installed). Each call answered correctly or raised InvalidTermError; the counts say how many of
   each, and any other outcome aborts the run.

Results: ``benchmarks/results/hostile_inputs.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks import common

log = common.log


# -- malformed dumps -----------------------------------------------------------------------------
def _attempt(load: Callable[[], Any]) -> tuple[Any, Any]:
    from kg_adapters.errors import LoadError

    try:
        return load(), None
    except LoadError as exc:
        return None, exc


def run_dump_case(case: Any, workdir: Path, base: Path) -> dict[str, Any]:
    """Strict (fresh and append) and lenient loads of one case, and whether each matched the case."""
    from loaders import load_files
    from loaders.testing.malformed_dumps import line_limit, store_size

    directory = workdir / case.name
    directory.mkdir()
    source = directory / case.file
    source.write_bytes(case.data)
    fresh, appended = directory / "fresh", directory / "appended"
    shutil.copytree(base, appended)
    manifest = (appended / "kga-store.json").read_bytes()
    row: dict[str, Any] = {"case": case.name, "file": case.file, "what": case.what, "bytes": len(case.data)}
    with line_limit():
        report, error = _attempt(lambda: load_files([str(source)], str(fresh), progress=False))
        _, append_error = _attempt(lambda: load_files([str(source)], str(appended), progress=False))
        lenient_report, lenient_error = (None, None)
        if case.lenient:
            lenient_report, lenient_error = _attempt(
                lambda: load_files([str(source)], str(directory / "lenient"), lenient=True, progress=False)
            )
    if error is not None:
        row["strict"] = {"error": str(error).removeprefix(str(source)), "line": error.line}
        row["store_left_behind"] = fresh.exists()
        row["previous_intact"] = (appended / "kga-store.json").read_bytes() == manifest and store_size(appended) == 1
        row["append_failed_too"] = append_error is not None and append_error.line == error.line
    else:
        row["strict"] = {"loaded": report.statements_read, "store_triples": report.store_triples}
    if lenient_report is not None:
        row["lenient"] = {
            "loaded": lenient_report.statements_read,
            "skipped": lenient_report.lines_skipped,
            "skipped_lines": [skipped.line for skipped in lenient_report.skipped],
            "store_triples": lenient_report.store_triples,
        }
    elif lenient_error is not None:
        row["lenient"] = {"error": str(lenient_error).removeprefix(str(source)), "line": lenient_error.line}
    row["as_expected"] = _as_expected(case, row)
    shutil.rmtree(directory)
    return row


def _as_expected(case: Any, row: dict[str, Any]) -> bool:
    strict, lenient = row["strict"], row.get("lenient")
    if case.fatal or case.bad:
        line = case.bad[0] if not case.fatal else case.fatal_line
        line_ok = strict.get("line") == line or (not case.line_exact and strict.get("line") is not None)
        strict_ok = "error" in strict and line_ok and not row["store_left_behind"] and row["previous_intact"]
        strict_ok = strict_ok and row["append_failed_too"]
    else:
        strict_ok = strict.get("loaded") == case.good
    if not case.lenient:
        return bool(strict_ok)
    if case.fatal:
        return bool(strict_ok and lenient is not None and "error" in lenient)
    return bool(
        strict_ok
        and lenient is not None
        and lenient.get("loaded") == lenient.get("store_triples") == case.good
        and lenient.get("skipped_lines") == list(case.bad)[:100]
    )


def dump_markdown(rows: list[dict[str, Any]]) -> str:
    table = []
    for row in rows:
        strict = row["strict"]
        if "error" in strict:
            outcome = f"LoadError `:{strict['line']}`" if strict["line"] is not None else "LoadError (no line)"
            store = "none; previous intact" if not row["store_left_behind"] and row["previous_intact"] else "DAMAGED"
        else:
            outcome, store = f"loaded {strict['loaded']:,}", "complete"
        lenient = row.get("lenient")
        if lenient is None:
            lenient_text = "refused (not a line format)"
        elif "error" in lenient:
            lenient_text = f"LoadError `:{lenient['line']}`" if lenient["line"] is not None else "LoadError"
        else:
            lenient_text = f"{lenient['loaded']:,} loaded, {lenient['skipped']} skipped"
        table.append(
            [
                row["case"],
                f"`{row['file']}`",
                row["what"].replace("|", "\\|"),
                outcome,
                store,
                lenient_text,
                "yes" if row["as_expected"] else "**NO**",
            ]
        )
    return common.markdown_table(
        ["case", "file", "what is wrong", "strict", "store after strict", "lenient", "as expected"], table
    )


# -- injection fuzz ------------------------------------------------------------------------------
@contextmanager
def fuzz_backends(workdir: Path, with_virtuoso: bool) -> Iterator[list[tuple[str, Any, int]]]:
    """(name, open graph, examples) per backend, all on the fuzz graph; closed afterwards."""
    from kg_adapters import connect
    from kg_adapters.testing.fuzz import write_fuzz_graph
    from loaders import load_files

    graph_file = write_fuzz_graph(workdir)
    store = workdir / "fuzz-store"
    load_files([str(graph_file)], str(store), progress=False)
    memory = connect("oxigraph://")
    memory.load(str(graph_file))  # type: ignore[attr-defined]
    backends: list[tuple[str, Any, int]] = [
        ("Oxigraph in memory", memory, 150),
        ("Oxigraph on disk (`kga load` store)", connect(f"oxigraph://{store}"), 150),
        ("rdflib", connect(f"rdflib://{graph_file}"), 100),
        ("cache wrapper (SQLite file) over the store", connect(f"oxigraph://{store}", cache=str(workdir / "c")), 150),
    ]
    server = None
    if with_virtuoso:
        from kg_adapters.testing.virtuoso import VirtuosoServer, virtuoso_binary

        if virtuoso_binary() is not None:
            server = VirtuosoServer(workdir / "virtuoso", data_dirs=[workdir]).start()
            server.load([graph_file])
            url = "sparql+" + server.sparql_url
            backends.append(("Virtuoso 7.2 over HTTP", connect(url, dialect="virtuoso", timeout=30, retries=0), 100))
        else:
            log("Virtuoso is not installed: skipped")
    try:
        yield backends
    finally:
        for _, kg, _ in backends:
            kg.close()
        if server is not None:
            server.stop()


def fuzz_backend(kg: Any, examples: int) -> dict[str, Any]:
    from hypothesis import HealthCheck, assume, given, settings

    from kg_adapters.testing.fuzz import KNOWN_IRIS, calls_with, check_search, nasty, run_calls, triple_count

    calls: Counter[str] = Counter()
    searches: Counter[str] = Counter()
    strings: set[str] = set()
    options = settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )

    @options
    @given(bad=nasty)
    def run(bad: str) -> None:
        assume(bad not in KNOWN_IRIS)
        strings.add(bad)
        calls.update(run_calls(kg, bad))

    @options
    @given(text=nasty)
    def search(text: str) -> None:
        strings.add(text)
        searches[check_search(kg, text)] += 1

    started = time.perf_counter()
    run()
    search()
    return {
        "distinct_strings": len(strings),
        "operations": len(calls_with(kg, "x")),
        "calls_answered": calls["answered"],
        "calls_refused": calls["refused"],
        "searches_answered": searches["answered"],
        "searches_refused": searches["refused"],
        "wrong_answers": 0,
        "sentinel_revealed": 0,
        "other_errors": 0,
        "graph_unchanged": triple_count(kg) in (None, _fuzz_triples()),
        "seconds": time.perf_counter() - started,
    }


def _fuzz_triples() -> int:
    from kg_adapters.testing.fuzz import TRIPLE_COUNT

    return int(TRIPLE_COUNT)


def fuzz_markdown(rows: list[dict[str, Any]]) -> str:
    table = [
        [
            row["backend"],
            f"{row['distinct_strings']:,}",
            f"{row['calls_answered'] + row['calls_refused']:,}",
            f"{row['calls_answered']:,}",
            f"{row['calls_refused']:,}",
            f"{row['searches_answered'] + row['searches_refused']:,} ({row['searches_refused']} refused)",
            "0 / 0 / 0",
            "yes" if row["graph_unchanged"] else "**NO**",
        ]
        for row in rows
    ]
    return common.markdown_table(
        [
            "backend",
            "nasty strings",
            "calls",
            "answered correctly",
            "InvalidTermError",
            "searches",
            "wrong / sentinel / other error",
            "graph unchanged",
        ],
        table,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-virtuoso", action="store_true", help="leave out the Virtuoso backend")
    parser.add_argument("--no-write", action="store_true", help="do not write benchmarks/results/")
    args = parser.parse_args(argv)
    from loaders import load_files
    from loaders.testing.malformed_dumps import CASES

    began = time.perf_counter()
    workdir = Path(tempfile.mkdtemp(prefix="kga-hostile-"))
    try:
        (workdir / "base.nt").write_text("<http://example.org/base> <http://example.org/p> <http://example.org/o> .\n")
        base = workdir / "base"
        load_files([str(workdir / "base.nt")], str(base), progress=False)
        dumps = []
        for case in CASES:
            log(f"dump: {case.name}")
            dumps.append(run_dump_case(case, workdir, base))
        fuzz = []
        with fuzz_backends(workdir, not args.no_virtuoso) as backends:
            for name, kg, examples in backends:
                log(f"fuzz: {name}")
                fuzz.append({"backend": name, "examples": examples, **fuzz_backend(kg, examples)})
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    expected = sum(row["as_expected"] for row in dumps)
    calls = sum(
        row["calls_answered"] + row["calls_refused"] + row["searches_answered"] + row["searches_refused"]
        for row in fuzz
    )
    data = {
        "benchmark": "hostile_inputs",
        "machine": common.machine_info(("pyoxigraph", "rdflib", "hypothesis", "kg-adapters")),
        "source": common.source_fingerprint("kg_adapters", "loaders"),
        "seconds": time.perf_counter() - began,
        "malformed_dumps": dumps,
        "fuzz": fuzz,
    }
    markdown = "\n".join(
        [
            "# Hostile inputs",
            "",
            f"`python -m benchmarks.hostile_inputs` ({time.strftime('%Y-%m-%d', time.gmtime())}, "
            f"{data['seconds']:.0f} s). Cases come from the tests' own tables "
            "(`loaders/testing/malformed_dumps.py`, `kg_adapters/testing/fuzz.py`); "
            "`pytest tests/test_malformed_dumps.py tests/test_hostile_input.py` asserts the same outcomes.",
            "",
            f"## Malformed dumps: {len(dumps)} files, {expected} as expected",
            "",
            "Strict: loaded into a fresh path and appended to a one-triple store; a failure must name "
            "file:line, leave no store at the fresh path and the old store byte-for-byte intact. Lenient: "
            "every good line loaded, the bad lines counted exactly. A damaged compressed stream fails in both "
            "modes (how many lines it lost is unknown, so they cannot be counted); so does a line over the "
            "length limit (256 MiB; 1 MiB here), which means the file is not the format its name says. "
            "RDF/XML parse errors carry no line number.",
            "",
            dump_markdown(dumps),
            "",
            f"## Injection fuzz: {calls:,} calls, 0 wrong answers, 0 sentinel leaks, 0 untyped errors",
            "",
            "Each nasty string goes into every id, relation and language slot of 17 calls (neighbors x4, "
            "relations, labels x3, describe x2, paths x3, shortest_paths x2, subgraph x2) and into `search`. "
            "A call must answer exactly what the graph holds (nothing, for text naming nothing) or raise "
            "InvalidTermError; the planted sentinel triple must never appear.",
            "",
            fuzz_markdown(fuzz),
            "",
        ]
    )
    print(markdown)
    if not args.no_write:
        common.save_report("hostile_inputs", data, markdown)
    return 0 if expected == len(dumps) else 1


if __name__ == "__main__":
    raise SystemExit(main())
