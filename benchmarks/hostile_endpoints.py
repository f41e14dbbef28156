"""Hostile endpoints, credentials and shared disks, tried and counted:
``python -m benchmarks.hostile_endpoints``.

Every case runs against real components -- a loopback SPARQL server that misbehaves on purpose
(``kg_adapters/testing/fault_server.py``), real stores on disk, a child process with a file-size limit
standing for a full disk, a read-only bind mount for read-only media (skipped where mounting is not
allowed) -- and records what the caller saw: the typed error (or the exact answer), how many
requests the server received, and how long the call took. The same cases are asserted by
``tests/test_hostile_endpoints.py``, ``tests/test_shared_disks.py`` and ``tests/test_cli_failures.py``.

Results: ``benchmarks/results/hostile_endpoints.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import math
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from benchmarks import common

log = common.log
EX = "http://example.org/"
DATA = "".join(
    f'<{EX}n{n}> <{EX}next> <{EX}n{(n + 1) % 6}> .\n<{EX}n{n}> <{EX}name> "node {n}"@en .\n' for n in range(6)
)
SECRET = "s3cr3t-pa55"
KGA = [sys.executable, "-m", "kg_adapters.cli"]
Outcome = dict[str, Any]


def _attempt(call: Callable[[], Any]) -> tuple[str, Any]:
    from kg_adapters.errors import KGError

    started = time.perf_counter()
    try:
        value = call()
        outcome = "answered"
    except KGError as exc:
        value, outcome = exc, type(exc).__name__
    return outcome, (value, time.perf_counter() - started)


def _each_term(document: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> None:
    for binding in document.get("results", {}).get("bindings", []):
        for term in binding.values():
            change(term)


def _reverse_vars(document: dict[str, Any]) -> None:
    if "head" in document and "vars" in document["head"]:
        document["head"]["vars"].reverse()


def _drop_var(document: dict[str, Any]) -> None:
    if "head" in document and len(document["head"].get("vars", [])) > 1:
        gone = document["head"]["vars"].pop()
        for binding in document["results"]["bindings"]:
            binding.pop(gone, None)


def _extra_subject(document: dict[str, Any]) -> None:
    bindings = document.get("results", {}).get("bindings", [])
    if bindings and "x" in bindings[0]:
        bindings.append({**bindings[0], "x": {"type": "uri", "value": f"{EX}never-asked"}})


def endpoint_cases() -> list[Outcome]:
    from kg_adapters import connect
    from kg_adapters.backends.http_transport import HttpSparqlTransport
    from kg_adapters.testing.fault_server import FakeClock, FaultPlan, FaultServer, _Answer, json_rewriter

    def graph(server: FaultServer, **options: Any) -> Any:
        clock = FakeClock()
        return connect("sparql+" + server.url, retries=2, sleep=clock.sleep, clock=clock, timeout=10, **options)

    ids = [f"{EX}n1", f"{EX}n2"]
    with FaultServer(data=DATA) as honest, graph(honest) as kg:
        expected = kg.neighbors(ids, direction="both")

    class PlainText(FaultServer):
        def _answer(self, query: str | None, accept: str | None) -> _Answer:
            return _Answer(200, (("Content-Type", "text/plain"),), b"")

    def uri_int(term: dict[str, Any]) -> None:
        if term["type"] == "uri":
            term["value"] = 42

    def mystery(term: dict[str, Any]) -> None:
        term["type"] = "mystery"

    rewrites: list[tuple[str, Callable[[dict[str, Any]], Any], str]] = [
        ("head.vars listed in another order", _reverse_vars, "answered"),
        ("a projected variable missing", _drop_var, "ResultMismatch"),
        ('a "uri" whose value is a number', lambda d: _each_term(d, uri_int), "ResultMismatch"),
        ("a term of unknown type", lambda d: _each_term(d, mystery), "ResultMismatch"),
        ("a row about an id not asked for", _extra_subject, "ResultMismatch"),
        ('{"boolean": true} answering a SELECT', lambda d: {"head": {}, "boolean": True}, "ResultMismatch"),
    ]
    rows: list[Outcome] = []
    for name, change, want in rewrites:
        with FaultServer(data=DATA, rewrite=json_rewriter(change)) as server, graph(server) as kg:
            outcome, (value, seconds) = _attempt(lambda kg=kg: kg.neighbors(ids, direction="both"))
            if outcome == "answered":
                outcome = "answered, identical" if value == expected else "answered, DIFFERENT"
                want = "answered, identical"
            rows.append(_row("endpoint", name, outcome, want, server.request_count, seconds))
    with FaultServer(data=DATA, rewrite=json_rewriter(lambda d: {"head": {}, "boolean": "false"})) as server:
        with graph(server) as kg:
            outcome, (_, seconds) = _attempt(lambda: kg.query(f"ASK {{ <{EX}n1> ?p ?o }}"))
        rows.append(_row("endpoint", 'ASK answered "false" (a string)', outcome, "ResultMismatch", 1, seconds))
    with PlainText(data=DATA) as server, graph(server) as kg:
        outcome, (_, seconds) = _attempt(lambda: kg.labels([f"{EX}n1"]))
        rows.append(_row("endpoint", "empty text/plain body to a SELECT", outcome, "ResultMismatch", 1, seconds))
    with FaultServer(data=DATA, ignore_offset=True) as server, graph(server, max_rows=2) as kg:
        outcome, (_, seconds) = _attempt(lambda: kg.neighbors(ids, direction="both"))
        rows.append(
            _row("endpoint", "ignores OFFSET, max_rows=2", outcome, "ResultMismatch", server.request_count, seconds)
        )
    plan = FaultPlan.constant("slow_headers")
    with FaultServer(data=DATA, plan=plan, drip_interval=0.05, max_drip_seconds=60) as server:
        transport = HttpSparqlTransport(server.url, timeout=1)
        outcome, (_, seconds) = _attempt(lambda: transport.execute(f"ASK {{ <{EX}n1> ?p ?o }}"))
        rows.append(_row("deadline", "headers 1 byte / 50 ms, timeout=1", outcome, "BackendTimeout", 1, seconds))
    with FaultServer(data=DATA, plan=FaultPlan.constant("redirect"), drip_interval=0.3) as server:
        transport = HttpSparqlTransport(server.url, timeout=2)
        outcome, (_, seconds) = _attempt(lambda: transport.execute(f"ASK {{ <{EX}n1> ?p ?o }}"))
        rows.append(
            _row(
                "deadline",
                "redirect loop, 0.3 s a hop, timeout=2",
                outcome,
                "BackendTimeout",
                server.request_count,
                seconds,
            )
        )
    with FaultServer(data=DATA, plan=FaultPlan.constant("redirect"), drip_interval=0) as server:
        transport = HttpSparqlTransport(server.url, timeout=30)
        outcome, (_, seconds) = _attempt(lambda: transport.execute(f"ASK {{ <{EX}n1> ?p ?o }}"))
        rows.append(_row("deadline", "fast redirect loop", outcome, "BackendError", server.request_count, seconds))
    before = common.peak_rss_bytes()
    with FaultServer(data=DATA, plan=FaultPlan.constant("endless")) as server, graph(server) as kg:
        outcome, (_, seconds) = _attempt(lambda: kg.labels([f"{EX}n1"]))
        grown = max(0, common.peak_rss_bytes() - before)
        row = _row("size", "endless body, default cap (64 MiB)", outcome, "ResponseTooLarge", 1, seconds)
        row["note"] = f"peak RSS grew {common.fmt_bytes(grown)}"
        rows.append(row)
    bad = [
        {"timeout": 0},
        {"timeout": math.nan},
        {"timeout": math.inf},
        {"timeout": -1},
        {"retry_seconds": math.nan},
        {"retries": -1},
        {"max_rows": 0},
        {"max_response_bytes": 0},
        {"min_interval": math.inf},
        {"user_agent": "kga/1.0\r\nX-Evil: 1"},
    ]
    refused = 0
    with FaultServer(data=DATA) as server:
        for options in bad:
            outcome, _ = _attempt(lambda options=options: connect("sparql+" + server.url, **options))
            refused += outcome == "InvalidTermError"
        row = _row(
            "options",
            f"{len(bad)} bad option values at connect()",
            f"{refused} x InvalidTermError",
            f"{len(bad)} x InvalidTermError",
            server.request_count,
            0.0,
        )
        rows.append(row)
    return rows


def credential_cases(workdir: Path) -> list[Outcome]:
    from kg_adapters import connect
    from kg_adapters.testing.fault_server import FakeClock, FaultPlan, FaultServer

    shown: list[str] = []
    sent: list[bool] = []
    for status in ("401", "400", "503"):
        with FaultServer(data=DATA, plan=FaultPlan.constant(status)) as server:
            clock = FakeClock()
            url = f"sparql+http://alice:{SECRET}@127.0.0.1:{server.port}/sparql"
            with connect(url, retries=2, sleep=clock.sleep, clock=clock) as kg:
                shown += [kg.endpoint, repr(kg)]
                _, (error, _) = _attempt(lambda kg=kg: kg.labels([f"{EX}n1"]))
                shown.append(str(error))
            sent.append(server.requests[0].authorization is not None)
    with connect(f"sparql+http://alice:{SECRET}@127.0.0.1:9/sparql", retries=0) as kg:
        shown.append(str(_attempt(lambda: kg.labels([f"{EX}n1"]))[1][0]))
    cache = workdir / "replay.sqlite"
    with connect(f"sparql+http://alice:{SECRET}@127.0.0.1:9/sparql", cache=str(cache), cache_mode="readwrite") as kg:
        shown.append(repr(kg))
    with connect(f"sparql+http://alice:{SECRET}@127.0.0.1:9/sparql", cache=str(cache), cache_mode="replay") as kg:
        shown.append(str(_attempt(lambda: kg.labels([f"{EX}n1"]))[1][0]))
    done = subprocess.run(
        [*KGA, "labels", "--kg", f"sparql+http://a:{SECRET}@127.0.0.1:9/s?retries=0", "--id", f"{EX}n1"],
        capture_output=True,
        text=True,
    )
    shown.append(done.stderr)
    leaks = sum(SECRET in text for text in shown) + (SECRET.encode() in cache.read_bytes())
    rows = [
        _row(
            "credentials",
            "user:password@ in the URL: HTTP 401/400/503, refused, RetriesExhausted, CacheMiss, repr, "
            "kg.endpoint, kga stderr, cache file",
            f"{leaks} leaks in {len(shown) + 1} places; sent {sum(sent)}/{len(sent)}",
            f"0 leaks in {len(shown) + 1} places; sent {len(sent)}/{len(sent)}",
            len(sent),
            0.0,
        )
    ]
    os.environ["KGA_BENCH_PASSWORD"] = SECRET
    netrc = workdir / "netrc"
    netrc.write_text(f"machine 127.0.0.1 login bob password {SECRET}\n")
    with FaultServer(data=DATA) as server:
        with connect(f"sparql+http://carol@127.0.0.1:{server.port}/sparql?password_env=KGA_BENCH_PASSWORD") as kg:
            kg.relations([f"{EX}n1"])
        with connect("sparql+" + server.url, netrc=str(netrc)) as kg:
            kg.relations([f"{EX}n1"])
        authorized = sum(request.authorization is not None for request in server.requests)
    rows.append(
        _row(
            "credentials",
            "password_env=VAR and netrc=FILE instead of the URL",
            f"{authorized}/2 requests authorized",
            "2/2 requests authorized",
            2,
            0.0,
        )
    )
    return rows


def disk_cases(workdir: Path) -> list[Outcome]:
    import random
    import string

    from kg_adapters import connect
    from kg_adapters.store_layout import exclusive_load_lock
    from kg_adapters.wrappers.cache import ResultCache
    from loaders import load_files
    from loaders.testing.full_disk import LOAD, run_with_file_size_limit
    from loaders.testing.read_only import read_only

    rows: list[Outcome] = []
    small = workdir / "small.nt"
    small.write_text("".join(f"<{EX}a{n}> <{EX}r> <{EX}a{n + 1}> .\n" for n in range(10)))
    names = workdir / "names.nt"
    rng = random.Random(7)
    names.write_text(
        "".join(
            f'<{EX}n{n}> <http://www.w3.org/2000/01/rdf-schema#label> "'
            + "".join(rng.choice(string.ascii_letters + " ") for _ in range(300))
            + '"@en .\n'
            for n in range(4000)
        )
    )
    for limit, phase in ((3_000_000, "name index"), (60_000, "data")):
        store = workdir / f"full-{limit}"
        load_files([str(small)], str(store), progress=False)
        started = time.perf_counter()
        failed = run_with_file_size_limit(LOAD, limit, str(names), str(store), cwd=common.REPO_ROOT)
        seconds = time.perf_counter() - started
        error = str(failed["error"]).rpartition(".")[2]
        with connect(f"oxigraph://{store}") as kg:
            intact = len(kg.neighbors([f"{EX}a{n}" for n in range(10)])[f"{EX}a9"]) == 1
        outcome = f"{error}, old store {'intact' if intact else 'DAMAGED'}"
        rows.append(
            _row(
                "disk",
                f"disk full in the {phase} phase of an append",
                outcome,
                "LoadError, old store intact",
                0,
                seconds,
            )
        )
    real = workdir / "real"
    load_files([str(small)], str(real), progress=False)
    (workdir / "links").mkdir()
    link = workdir / "links" / "store"
    link.symlink_to(real)
    with exclusive_load_lock(real):
        outcome, (_, seconds) = _attempt(lambda: load_files([str(names)], str(link), progress=False))
    rows.append(_row("disk", "second load into one store through a symlink", outcome, "LoadError", 0, seconds))
    media = workdir / "media"
    load_files([str(small)], str(media / "store"), progress=False)
    with ResultCache(media / "cache.sqlite") as cache:
        cache.put_many([(["k", n], {"n": n}) for n in range(1000)])
    try:
        with ExitStack() as stack:
            stack.enter_context(read_only(media))
            outcome, (_, seconds) = _attempt(lambda: connect(f"oxigraph://{media / 'store'}", write=True))
            rows.append(_row("disk", "connect(write=True) on read-only media", outcome, "StoreReadOnly", 0, seconds))
            with ResultCache(media / "cache.sqlite", mode="replay") as replay:
                started = time.perf_counter()
                hits = len(replay.lookup([["k", n] for n in range(1000)]))
                seconds = time.perf_counter() - started
            rows.append(
                _row("disk", "replay cache on read-only media", f"{hits}/1000 hits", "1000/1000 hits", 0, seconds)
            )
    except BaseException as exc:  # pytest.skip outside pytest: mounting not allowed here
        if type(exc).__name__ != "Skipped":
            raise
        rows.append(_row("disk", "read-only media", f"skipped: {exc}", "skipped", 0, 0.0))
    path = workdir / "shared.sqlite"
    with ResultCache(path) as cache:
        cache.put_many([(["k", n], {"n": n}) for n in range(5000)])
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("DELETE FROM entries WHERE key = 'none'")
    try:
        started = time.perf_counter()
        reader = ResultCache(path, memory_entries=0)
        hits = len(reader.lookup([["k", n] for n in range(5000)]))
        reader.close()
        seconds = time.perf_counter() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    rows.append(
        _row(
            "disk",
            "cache hits while another process holds the write lock",
            f"{hits}/5000 hits",
            "5000/5000 hits",
            0,
            seconds,
        )
    )
    return rows


def _row(group: str, case: str, outcome: str, expected: str, requests: int, seconds: float) -> Outcome:
    return common.case_row(group, case, outcome, expected, round(seconds, 3), requests=requests)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--no-write", action="store_true", help="print the tables only")
    args = parser.parse_args(argv)
    run = common.CaseRun(
        "hostile_endpoints", "Hostile endpoints, credentials and shared disks", write=not args.no_write
    )
    with tempfile.TemporaryDirectory(prefix="kga-hostile-") as tmp:
        rows = endpoint_cases() + credential_cases(Path(tmp)) + disk_cases(Path(tmp))
    for row in rows:
        row["as_expected"] = row["as_expected"] or row["expected"] == "skipped"
    table = common.markdown_table(
        ["case", "outcome", "expected", "requests", "seconds"],
        [
            [
                row["case"],
                row["outcome"] + (f" ({row['note']})" if row.get("note") else ""),
                row["expected"],
                str(row["requests"]),
                f"{row['seconds']:.2f}",
            ]
            for row in rows
        ],
    )
    return run.report(rows, table)


if __name__ == "__main__":
    raise SystemExit(main())
