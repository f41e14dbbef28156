"""Hostile callers and hostile data, round 2 (issue 20), tried and counted: ``python -m benchmarks.hostile_callers``.

Four groups, each case run against real components and compared with what it must do:

1. **No outbound request**: every hand-written SERVICE/LOAD/update spelling
   (``kg_adapters/testing/hostile_queries.py``) and 1,000 generated ones (seeded) against the read-only
   check, against a bare pyoxigraph store (how many Oxigraph itself would send), and through real
   ``kga serve`` (GET, POST form, POST sparql-query, ``update=``, sparql-update) and ``kga mcp`` processes
   while a local listener counts the requests it gets.
2. **Deadlines**: runaway queries (an aggregate over a cross product, joined path closures, a deduplicated
   CONSTRUCT) through ``kga serve --timeout 2 --workers 2`` and ``kga mcp --timeout 2``: when each is
   answered, whether a quick call made meanwhile is answered, whether the runaway's worker process is gone
   and replaced, and how long the servers take to exit on Ctrl-C, SIGTERM and a closed stdin.
3. **Answers that do not fit**: a loopback endpoint rewrites its answers (relations bound to literals and
   blank nodes, IRIs for labels, repeated bindings, lone surrogates, JSON nested 200,000 deep, ``²`` as a
   Retry-After, a Content-Length and a count).
4. **Data in**: a RoG row holding 1M and 3M triples (Parquet, 1.4 KB) and 1M (JSONL), RDF/XML entity
   expansion, a Turtle token over Oxigraph's 16 MiB buffer: outcome and peak memory of ``kga load``.

Results: ``benchmarks/results/hostile_callers.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from benchmarks import common
from kg_adapters.testing.server_processes import (
    McpStdio,
    all_gone,
    free_port,
    in_background,
    poll_until,
    runaway_running,
    wait_for_port,
    worker_pids,
)

log = common.log
KGA = [sys.executable, "-m", "kg_adapters.cli"]
Row = dict[str, Any]


def _row(group: str, case: str, outcome: str, expected: str, seconds: float, note: str = "") -> Row:
    return common.case_row(group, case, outcome, expected, round(seconds, 2), note=note)


# -- servers -------------------------------------------------------------------------------------------
@contextlib.contextmanager
def _server(arguments: list[str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen([*KGA, *arguments], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(process, port)
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=60)


# -- 1. no outbound request ----------------------------------------------------------------------------
def outbound_cases(store_url: str) -> list[Row]:
    import requests

    from kg_adapters.errors import QueryError
    from kg_adapters.serve.readonly import query_form
    from kg_adapters.testing.hostile_queries import (
        SERVICE_SPELLINGS,
        UPDATE_SPELLINGS,
        Spelling,
        compose,
        probe_store,
        request_listener,
        run_raw,
    )

    rows: list[Row] = []
    spellings = SERVICE_SPELLINGS + UPDATE_SPELLINGS
    seeded = random.Random(20)
    generated = [
        Spelling(name=f"generated {n}", template=compose(seeded.choice, lambda items: seeded.sample(items, len(items))))
        for n in range(1000)
    ]
    with request_listener() as target:
        for label, group in (("hand-written", spellings), ("generated (seeded)", generated)):
            started = time.perf_counter()
            live = refused = refused_live = 0
            for spelling in group:
                query = spelling.query(target.url)
                before = target.count()
                run_raw(probe_store(), query)
                sent = target.count() > before
                try:
                    query_form(query)
                except QueryError:
                    refused += 1
                    refused_live += sent
                live += sent
            rows.append(
                _row(
                    "no outbound request",
                    f"{len(group)} {label} spellings, {live} of them sent by a bare Oxigraph store",
                    f"{refused_live}/{live} sent ones refused ({refused}/{len(group)} refused in all)",
                    f"{live}/{live} sent ones refused",
                    time.perf_counter() - started,
                )
            )
            rows[-1]["as_expected"] = refused_live == live
        before = target.count()
        started = time.perf_counter()
        port = free_port()
        url = f"http://127.0.0.1:{port}/sparql"
        statuses: list[int] = []
        with _server(["serve", "--kg", store_url, "--port", str(port), "--workers", "1"], port):
            for spelling in spellings:
                query = spelling.query(target.url)
                statuses += [
                    requests.get(url, params={"query": query}, timeout=120).status_code,
                    requests.post(url, data={"query": query}, timeout=120).status_code,
                    requests.post(
                        url, data=query.encode(), headers={"Content-Type": "application/sparql-query"}, timeout=120
                    ).status_code,
                    requests.post(url, data={"update": query}, timeout=120).status_code,
                    requests.post(
                        url, data=query.encode(), headers={"Content-Type": "application/sparql-update"}, timeout=120
                    ).status_code,
                ]
        refused = sum(status in (400, 403) for status in statuses)
        rows.append(
            _row(
                "no outbound request",
                f"kga serve: {len(spellings)} spellings x 5 request forms",
                f"{refused}/{len(statuses)} refused, {target.count() - before} requests sent",
                f"{len(statuses)}/{len(statuses)} refused, 0 requests sent",
                time.perf_counter() - started,
            )
        )
        before = target.count()
        started = time.perf_counter()
        errors = _mcp_sparql_errors(store_url, [spelling.query(target.url) for spelling in spellings])
        rows.append(
            _row(
                "no outbound request",
                f"kga mcp sparql tool: {len(spellings)} spellings",
                f"{errors}/{len(spellings)} refused, {target.count() - before} requests sent",
                f"{len(spellings)}/{len(spellings)} refused, 0 requests sent",
                time.perf_counter() - started,
            )
        )
    return rows


def _mcp_sparql_errors(store_url: str, queries: list[str]) -> int:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    errors = 0

    async def main() -> None:
        nonlocal errors
        params = StdioServerParameters(command=KGA[0], args=[*KGA[1:], "mcp", "--kg", store_url, "--workers", "1"])
        async with Client(params) as client:
            for query in queries:
                errors += (await client.call_tool("sparql", {"query": query})).is_error

    anyio.run(main)
    return errors


# -- 2. deadlines -------------------------------------------------------------------------------------
def deadline_cases(store_url: str) -> list[Row]:
    import requests

    from kg_adapters.testing.hostile_queries import RUNAWAY_QUERIES

    rows: list[Row] = []
    quick = "ASK { ?s ?p ?o }"
    for name, runaway in RUNAWAY_QUERIES.items():
        port = free_port()
        url = f"http://127.0.0.1:{port}/sparql"
        arguments = ["serve", "--kg", store_url, "--port", str(port), "--timeout", "2", "--workers", "2"]
        with _server(arguments, port) as server:
            before = worker_pids(server.pid, expected=2)
            answered: dict[str, Any] = {}

            def ask(query: str = runaway, into: dict[str, Any] = answered, target: str = url) -> None:
                started = time.perf_counter()
                into["status"] = requests.post(target, data={"query": query}, timeout=600).status_code
                into["seconds"] = time.perf_counter() - started

            thread = threading.Thread(target=ask)
            thread.start()
            started = time.perf_counter()
            meanwhile = requests.post(url, data={"query": quick}, timeout=600).status_code
            quick_seconds = time.perf_counter() - started
            during = thread.is_alive()
            thread.join()
            after = worker_pids(server.pid, expected=2)
            stopped = before - after
            freed = len(stopped) == 1 and len(after) == 2 and all_gone(stopped)
            next_status = requests.post(url, data={"query": quick}, timeout=600).status_code
        rows.append(
            _row(
                "deadlines",
                f"kga serve --timeout 2: {name}",
                f"{answered['status']}; quick call {meanwhile} meanwhile; "
                f"worker {'killed and replaced' if freed else 'kept'}; next call {next_status}",
                "503; quick call 200 meanwhile; worker killed and replaced; next call 200",
                answered["seconds"],
                f"quick call {quick_seconds:.2f} s, {'during' if during else 'after'} the runaway",
            )
        )
    port = free_port()
    url = f"http://127.0.0.1:{port}/sparql"
    with _server(["serve", "--kg", store_url, "--port", str(port), "--timeout", "2", "--workers", "2"], port) as server:
        before = worker_pids(server.pid, expected=2)
        results: list[int] = []
        started = time.perf_counter()
        threads = [
            threading.Thread(
                target=lambda: results.append(
                    requests.post(url, data={"query": RUNAWAY_QUERIES["cross product"]}, timeout=600).status_code
                )
            )
            for _ in range(2)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - started
        after_status = requests.post(url, data={"query": quick}, timeout=600).status_code
        replaced = all_gone(before) and len(worker_pids(server.pid, expected=2)) == 2
    rows.append(
        _row(
            "deadlines",
            "kga serve --workers 2: two runaways, then a quick query",
            f"{sorted(results)}; then {after_status}; both workers {'replaced' if replaced else 'kept'}",
            "[503, 503]; then 200; both workers replaced",
            seconds,
        )
    )
    for stop in (signal.SIGINT, signal.SIGTERM):
        rows.append(_stop_during_runaway(store_url, stop))
    rows += _mcp_deadline_cases(store_url)
    return rows


def _stop_during_runaway(store_url: str, stop: signal.Signals) -> Row:
    import requests

    from kg_adapters.testing.hostile_queries import RUNAWAY_QUERIES

    port = free_port()
    url = f"http://127.0.0.1:{port}/sparql"
    arguments = ["serve", "--kg", store_url, "--port", str(port), "--timeout", "600", "--workers", "1"]
    with _server(arguments, port) as server:
        query = RUNAWAY_QUERIES["cross product"]
        pids, _ = runaway_running(
            server.pid, in_background(lambda: requests.post(url, data={"query": query}, timeout=600))
        )
        started = time.perf_counter()
        server.send_signal(stop)
        try:
            server.wait(timeout=120)
            exited = "exited"
        except subprocess.TimeoutExpired:
            exited = "kept running"
        seconds = time.perf_counter() - started
        workers_gone = poll_until(lambda: all_gone(pids), attempts=600)
    name = "Ctrl-C" if stop == signal.SIGINT else "SIGTERM"
    return _row(
        "deadlines",
        f"kga serve: {name} while a query runs for its 600 s --timeout",
        f"{exited}, workers {'gone' if workers_gone else 'left'}",
        "exited, workers gone",
        seconds,
    )


def _mcp_deadline_cases(store_url: str) -> list[Row]:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from kg_adapters.testing.hostile_queries import RUNAWAY_QUERIES

    rows: list[Row] = []
    finished: list[tuple[str, float, bool]] = []

    async def main() -> None:
        params = StdioServerParameters(
            command=KGA[0], args=[*KGA[1:], "mcp", "--kg", store_url, "--timeout", "2", "--workers", "2"]
        )
        async with Client(params) as client:
            started = time.perf_counter()

            async def call(label: str, tool: str, arguments: dict[str, Any]) -> None:
                result = await client.call_tool(tool, arguments)
                finished.append((label, time.perf_counter() - started, bool(result.is_error)))

            async with anyio.create_task_group() as group:
                group.start_soon(call, "runaway", "sparql", {"query": RUNAWAY_QUERIES["path closures"]})
                await anyio.wait_all_tasks_blocked()
                await call("search", "search", {"text": "tom hanks"})

    anyio.run(main)
    order = [label for label, _, _ in finished]
    search = next(entry for entry in finished if entry[0] == "search")
    runaway = next(entry for entry in finished if entry[0] == "runaway")
    rows.append(
        _row(
            "deadlines",
            "kga mcp --timeout 2: a runaway sparql call and a search made meanwhile",
            f"finished {' then '.join(order)}; runaway {'a tool error' if runaway[2] else 'answered'}; "
            f"search {'failed' if search[2] else 'answered'}",
            "finished search then runaway; runaway a tool error; search answered",
            runaway[1],
            f"search answered in {search[1]:.2f} s",
        )
    )
    session = McpStdio([*KGA, "mcp", "--kg", store_url, "--timeout", "600", "--workers", "1"])
    try:
        session.start()
        query = RUNAWAY_QUERIES["cross product"]
        pids, _ = runaway_running(session.process.pid, lambda: session.call_tool(1, "sparql", {"query": query}))
        started = time.perf_counter()
        session.close_stdin()
        try:
            session.process.wait(timeout=120)
            exited = "exited"
        except subprocess.TimeoutExpired:
            exited = "kept running"
        seconds = time.perf_counter() - started
    finally:
        session.stop()
    rows.append(
        _row(
            "deadlines",
            "kga mcp: stdin closed while a query runs for its 600 s --timeout",
            f"{exited}, workers {'gone' if poll_until(lambda: all_gone(pids), attempts=600) else 'left'}",
            "exited, workers gone",
            seconds,
        )
    )
    return rows


# -- 3. answers that do not fit -----------------------------------------------------------------------
def answer_cases() -> list[Row]:
    from kg_adapters import connect
    from kg_adapters.testing.fault_server import (
        FakeClock,
        FaultPlan,
        FaultServer,
        json_rewriter,
        one_wide_node,
        rebind,
        repeated_rows,
        superscript_counts,
        with_lone_surrogates,
    )

    ex = "http://example.org/"
    label = "http://www.w3.org/2000/01/rdf-schema#label"
    data = "".join(f'<{ex}n{n}> <{ex}p> <{ex}n{n + 1}> .\n<{ex}n{n}> <{label}> "n {n}"@en .\n' for n in range(6))

    def attempt(server: FaultServer, call: Callable[[Any], Any], **options: Any) -> str:
        clock = FakeClock()
        settings = {"retries": 2, "sleep": clock.sleep, "clock": clock, "timeout": 10, **options}
        try:
            with connect("sparql+" + server.url, **settings) as kg:
                call(kg)
            return "answered"
        except Exception as exc:
            return type(exc).__name__

    cases: list[tuple[str, dict[str, Any], Callable[[Any], Any], str, dict[str, Any]]] = [
        (
            "a relation bound to a literal",
            {"rewrite": rebind("r", {"type": "literal", "value": "x"})},
            lambda kg: kg.neighbors(f"{ex}n1"),
            "ResultMismatch",
            {},
        ),
        (
            "a relation bound to a blank node",
            {"rewrite": rebind("r", {"type": "bnode", "value": "b0"})},
            lambda kg: kg.relations(f"{ex}n1"),
            "ResultMismatch",
            {},
        ),
        (
            "an IRI where a label literal belongs",
            {"rewrite": rebind("l", {"type": "uri", "value": f"{ex}x"})},
            lambda kg: kg.labels([f"{ex}n1", f"{ex}n2"]),
            "ResultMismatch",
            {},
        ),
        (
            "a literal as a subject",
            {"rewrite": rebind("o", {"type": "literal", "value": "x"})},
            lambda kg: kg.neighbors(f"{ex}n1", direction="in"),
            "ResultMismatch",
            {},
        ),
        (
            "a lone surrogate in labels",
            {"rewrite": json_rewriter(with_lone_surrogates)},
            lambda kg: kg.labels([f"{ex}n1"]),
            "ResultMismatch",
            {},
        ),
        (
            "JSON nested 200,000 deep",
            {"rewrite": lambda q, b: b"[" * 200_000 + b"]" * 200_000},
            lambda kg: kg.neighbors(f"{ex}n1"),
            "ResultMismatch",
            {},
        ),
        (
            "Retry-After: ² on 429 and 503",
            {"plan": FaultPlan(["429:²", "503:²"])},
            lambda kg: kg.neighbors(f"{ex}n1"),
            "answered",
            {},
        ),
    ]
    rows: list[Row] = []
    for case, server_options, call, expected, options in cases:
        started = time.perf_counter()
        with FaultServer(data=data, **server_options) as server:
            outcome = attempt(server, call, **options)
        rows.append(_row("answers", case, outcome, expected, time.perf_counter() - started))
    started = time.perf_counter()
    with FaultServer(data=data) as honest:
        clock = FakeClock()
        with connect("sparql+" + honest.url, retries=0, sleep=clock.sleep, clock=clock) as kg:
            expected_edges = {d: kg.neighbors(f"{ex}n1", direction=d) for d in ("out", "in", "both")}
    with FaultServer(data=data, rewrite=json_rewriter(repeated_rows)) as server:
        clock = FakeClock()
        with connect("sparql+" + server.url, retries=0, sleep=clock.sleep, clock=clock) as kg:
            same = all(kg.neighbors(f"{ex}n1", direction=d) == e for d, e in expected_edges.items())  # type: ignore[arg-type]
    rows.append(
        _row(
            "answers",
            "every binding sent twice (out, in, both)",
            "the same edges" if same else "edges repeated",
            "the same edges",
            time.perf_counter() - started,
        )
    )
    started = time.perf_counter()
    with FaultServer(data=one_wide_node(), rewrite=superscript_counts) as server:
        outcome = attempt(server, lambda kg: kg.relations([f"{ex}n1"]), dialect="virtuoso")
    rows.append(_row("answers", "a Virtuoso count of ²", outcome, "ResultMismatch", time.perf_counter() - started))
    started = time.perf_counter()
    with FaultServer(data=data, rewrite=json_rewriter(with_lone_surrogates)) as server:
        done = subprocess.run(
            [*KGA, "labels", "--kg", f"sparql+{server.url}?retries=0", "--id", f"{ex}n1", "--json"],
            capture_output=True,
            timeout=120,
            env={**os.environ, "LC_ALL": "C"},
        )
    try:
        done.stdout.decode("utf-8")
        valid = "valid UTF-8"
    except UnicodeDecodeError:
        valid = "invalid UTF-8"
    rows.append(
        _row(
            "answers",
            "kga labels --json of a lone surrogate, C locale",
            f"exit {done.returncode}, {valid} output",
            "exit 1, valid UTF-8 output",
            time.perf_counter() - started,
        )
    )
    return rows


# -- 4. data in -----------------------------------------------------------------------------------------
def data_cases(workdir: Path) -> list[Row]:
    from kg_adapters.rdf_guard import DOCUMENT_LIMIT, ENTITY_LIMIT
    from loaders.testing.huge_rows import peak_memory, write_jsonl_row, write_parquet_row

    rows: list[Row] = []
    files: list[tuple[str, Path, str]] = []
    for triples, kind in ((1_000_000, "parquet"), (3_000_000, "parquet"), (1_000_000, "jsonl.gz")):
        path = workdir / f"row-{triples}.{kind}"
        (write_parquet_row if kind == "parquet" else write_jsonl_row)(path, triples)
        files.append(
            (f"a RoG row of {triples // 1_000_000}M triples ({kind}, {path.stat().st_size:,} bytes)", path, "loaded")
        )
    namespace = 'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/"'

    def rdf_xml(declarations: str, value: str) -> str:
        return (
            f'<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n{declarations}]>\n<rdf:RDF {namespace}>\n'
            f'<rdf:Description rdf:about="http://example.org/s"><ex:p>{value}</ex:p></rdf:Description>\n</rdf:RDF>\n'
        )

    wide = "x" * (ENTITY_LIMIT - 10)
    hostile = {
        "billion laughs: 10 nested entities (1 KB)": rdf_xml(
            ' <!ENTITY l0 "lol">\n' + "".join(f' <!ENTITY l{i} "{f"&l{i - 1};" * 10}">\n' for i in range(1, 10)), "&l9;"
        ),
        "quadratic blow-up: a 64 KiB entity referenced 1,000 times": rdf_xml(
            f' <!ENTITY w "{wide}">\n', "&w;" * (DOCUMENT_LIMIT // len(wide) + 2)
        ),
        "an external entity (file:///etc/passwd)": rdf_xml(' <!ENTITY x SYSTEM "file:///etc/passwd">\n', "&x;"),
    }
    for case, text in hostile.items():
        path = workdir / f"hostile-{len(files)}.rdf"
        path.write_text(text, encoding="utf-8")
        files.append((case, path, "LoadError"))
    big = workdir / "big-token.ttl"
    with open(big, "w", encoding="utf-8") as handle:
        handle.write('@prefix ex: <http://example.org/> .\nex:s ex:p ex:o .\nex:s ex:q "')
        handle.write("a" * (17 << 20))
        handle.write('" .\n')
    files.append(("a Turtle literal of 17 MiB (the parser's buffer is 16 MiB)", big, "LoadError"))
    for case, path, expected in files:
        store = workdir / f"store-{path.stem}"
        started = time.perf_counter()
        status, peak, error = peak_memory(
            [*KGA, "load", str(path), "--store", str(store)]
            + (["--format", "rog-dataset"] if "row-" in path.name else [])
        )
        seconds = time.perf_counter() - started
        where = error.strip().splitlines()[-1] if error.strip() else ""
        outcome = (
            "loaded" if status == 0 else ("LoadError" if where.startswith(f"kga: error: {path}:") else f"exit {status}")
        )
        rows.append(
            _row(
                "data in",
                case,
                outcome,
                expected,
                seconds,
                f"peak {peak / 2**20:.0f} MiB" + (f"; {where[12:]}" if status else ""),
            )
        )
    return rows


def _sample_store(workdir: Path) -> str:
    from loaders import load_files
    from reasoning.demo import sample_path

    store = workdir / "sample"
    load_files([str(sample_path())], str(store), profile="freebase", progress=False)
    return f"oxigraph://{store}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--no-write", action="store_true", help="print the tables only")
    parser.add_argument("--only", choices=["outbound", "deadlines", "answers", "data"], action="append")
    args = parser.parse_args(argv)
    run = common.CaseRun("hostile_callers", "Hostile callers and hostile data, round 2", write=not args.no_write)
    groups = args.only or ["outbound", "deadlines", "answers", "data"]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="kga-hostile-callers-") as tmp:
        workdir = Path(tmp)
        store_url = _sample_store(workdir)
        if "outbound" in groups:
            log("no outbound request ...")
            rows += outbound_cases(store_url)
        if "deadlines" in groups:
            log("deadlines ...")
            rows += deadline_cases(store_url)
        if "answers" in groups:
            log("answers that do not fit ...")
            rows += answer_cases()
        if "data" in groups:
            log("data in ...")
            rows += data_cases(workdir)
    table = common.markdown_table(
        ["group", "case", "outcome", "expected", "seconds", "note"],
        [
            [row["group"], row["case"], row["outcome"], row["expected"], f"{row['seconds']:.2f}", row["note"]]
            for row in rows
        ],
    )
    return run.report(rows, table)


if __name__ == "__main__":
    raise SystemExit(main())
