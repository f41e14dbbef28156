"""A query past its deadline ends for real: real ``kga serve`` and ``kga mcp`` processes, real clients
(requests, the MCP SDK's client, raw JSON-RPC over stdio), runaway queries that would run for hours.

Each runaway is answered at its deadline (503, or a tool error), a quick call made meanwhile gets its
answer, the runaway's worker process is gone (checked among the server's child processes) and
replaced, and the server exits on Ctrl-C, SIGTERM or a closed stdin while a runaway runs."""

from __future__ import annotations

import signal
import subprocess
import threading
from typing import Any

import anyio
import psutil
import pytest
import requests
from support.servers import KGA, free_port, running

from kg_adapters.testing.hostile_queries import RUNAWAY_QUERIES
from kg_adapters.testing.server_processes import (
    McpStdio,
    all_gone,
    in_background,
    poll_until,
    runaway_running,
    worker_pids,
    workers_replaced,
)

pytest.importorskip("starlette")
mcp = pytest.importorskip("mcp")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

QUICK = "ASK { ?s ?p ?o }"
ENDLESS = RUNAWAY_QUERIES["cross product"]


def post(url: str, query: str) -> requests.Response:
    return requests.post(url, data={"query": query}, timeout=600)


@pytest.mark.parametrize("name", sorted(RUNAWAY_QUERIES))
def test_a_runaway_query_ends_at_its_deadline_and_frees_its_worker(sample_store_url: str, name: str) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/sparql"
    arguments = ["serve", "--kg", sample_store_url, "--port", str(port), "--timeout", "3", "--workers", "2"]
    with running(arguments, port) as server:
        before = worker_pids(server.pid, expected=2)
        assert len(before) == 2
        answers: dict[str, requests.Response] = {}
        runaway = threading.Thread(target=lambda: answers.update(runaway=post(url, RUNAWAY_QUERIES[name])))
        runaway.start()
        quick = post(url, QUICK)
        assert quick.status_code == 200 and quick.json()["boolean"] is True
        assert runaway.is_alive()  # answered while the runaway still ran
        runaway.join()
        assert answers["runaway"].status_code == 503 and "--timeout" in answers["runaway"].text
        after = worker_pids(server.pid, expected=2)
        stopped = before - after
        assert len(stopped) == 1 and len(after) == 2  # the runaway's worker is gone, a fresh one took its place
        assert all_gone(stopped)
        assert post(url, QUICK).status_code == 200
        server.terminate()
        server.wait(timeout=60)
        assert server.stderr is not None
        log = server.stderr.read().decode()
    assert "Traceback" not in log and "unsendable" not in log and "panicked" not in log


def test_every_worker_taken_by_runaways_is_free_again(sample_store_url: str) -> None:
    """The issue's scenario: as many runaways as workers, then an ordinary query."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/sparql"
    arguments = ["serve", "--kg", sample_store_url, "--port", str(port), "--timeout", "2", "--workers", "2"]
    with running(arguments, port) as server:
        before = worker_pids(server.pid, expected=2)
        answers: list[requests.Response] = []
        runaways = [threading.Thread(target=lambda: answers.append(post(url, ENDLESS))) for _ in range(2)]
        for thread in runaways:
            thread.start()
        for thread in runaways:
            thread.join()
        assert [answer.status_code for answer in answers] == [503, 503]
        server_log = server.stderr
        assert server_log is not None  # fresh workers take calls once ready: wait for that, not the clock
        assert poll_until(lambda: workers_replaced(server_log) == 2), "the stopped workers were not replaced"
        assert post(url, QUICK).json()["boolean"] is True
        after = worker_pids(server.pid, expected=2)
        assert not before & after and len(after) == 2 and all_gone(before)


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_the_server_stops_while_a_runaway_runs(sample_store_url: str, stop: signal.Signals) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/sparql"
    arguments = ["serve", "--kg", sample_store_url, "--port", str(port), "--timeout", "600", "--workers", "1"]
    with running(arguments, port) as server:
        pids, busy = runaway_running(server.pid, in_background(lambda: post(url, ENDLESS)))
        assert busy, "the runaway never reached its worker"
        server.send_signal(stop)
        try:
            server.wait(timeout=60)  # a hang detector: without the fix it stays up for the query's 600 s
        except subprocess.TimeoutExpired:
            pytest.fail("kga serve kept running after the signal")
        assert poll_until(lambda: all_gone(pids)), "the worker processes outlived their server"
    assert server.returncode in (130, -signal.SIGTERM)


def test_mcp_calls_run_concurrently_and_a_runaway_sparql_call_ends(sample_store_url: str) -> None:
    params = StdioServerParameters(command=KGA, args=["mcp", "--kg", sample_store_url, "--timeout", "3"])
    finished: list[tuple[str, Any]] = []

    async def main() -> None:
        async with Client(params) as client:
            server = next(p for p in psutil.Process().children(recursive=True) if "mcp" in p.cmdline())
            before = worker_pids(server.pid, expected=2)
            assert len(before) == 2

            async def call(label: str, tool: str, arguments: dict[str, Any]) -> None:
                finished.append((label, await client.call_tool(tool, arguments)))

            async with anyio.create_task_group() as group:
                group.start_soon(call, "runaway", "sparql", {"query": ENDLESS})
                await anyio.wait_all_tasks_blocked()
                for text in ("tom hanks", "forrest gump"):
                    await call("search", "search", {"text": text})
            assert [label for label, _ in finished] == ["search", "search", "runaway"]  # not blocked by it
            assert all(not result.is_error for label, result in finished if label == "search")
            runaway = finished[-1][1]
            assert runaway.is_error and "time budget" in runaway.content[0].text
            after = worker_pids(server.pid, expected=2)
            assert len(before - after) == 1 and all_gone(before - after) and len(after) == 2
            answered = await client.call_tool("sparql", {"query": QUICK})
            assert not answered.is_error and answered.structured_content == {"boolean": True, "truncated": False}

    anyio.run(main)


@pytest.mark.parametrize("stop", ["stdin closed", "ctrl-c", "sigterm"])
@pytest.mark.parametrize("running_query", [True, False], ids=["during a runaway", "idle"])
def test_kga_mcp_exits_when_its_stdin_closes_or_it_is_stopped(
    sample_store_url: str, stop: str, running_query: bool
) -> None:
    """Over stdio, Ctrl-C too: the SDK reads stdin in a thread no cancellation reaches, so without the
    fix Ctrl-C waited for the next line (or stdin to close), even with nothing running."""
    session = McpStdio([KGA, "mcp", "--kg", sample_store_url, "--timeout", "600", "--workers", "1"])
    try:
        assert "result" in session.start()
        if running_query:
            pids, busy = runaway_running(
                session.process.pid, lambda: session.call_tool(1, "sparql", {"query": ENDLESS})
            )
            assert busy, "the runaway never reached its worker"
        else:
            pids = worker_pids(session.process.pid, expected=1)
        if stop == "stdin closed":
            session.close_stdin()
        else:
            session.process.send_signal(signal.SIGINT if stop == "ctrl-c" else signal.SIGTERM)
        try:
            session.process.wait(timeout=60)  # a hang detector: without the fix it stays up for the query's 600 s
        except subprocess.TimeoutExpired:
            pytest.fail(f"kga mcp kept running after: {stop}")
        assert session.process.returncode == {"stdin closed": 0, "ctrl-c": 130, "sigterm": -signal.SIGTERM}[stop]
        assert poll_until(lambda: all_gone(pids)), "the worker processes outlived their server"
    finally:
        session.stop()


def test_concurrent_mcp_calls_answer_as_one_at_a_time(sample_store_url: str) -> None:
    """No lock serialises the calls any more: many at once on a fresh graph (its indexes opened by
    whichever call comes first) answer exactly as the direct calls do."""
    from test_mcp_server import expected_calls

    from kg_adapters import connect
    from kg_adapters.serve.current import CurrentGraph
    from kg_adapters.serve.mcp_server import build_server

    with connect(sample_store_url) as kg:
        calls = expected_calls(kg) * 5
    graphs = CurrentGraph(sample_store_url)
    server = build_server(graphs)
    answers: dict[int, Any] = {}

    async def main() -> None:
        async with Client(server) as client:

            async def call(number: int, tool: str, arguments: dict[str, Any]) -> None:
                answers[number] = await client.call_tool(tool, arguments)

            async with anyio.create_task_group() as group:
                for number, (tool, arguments, _) in enumerate(calls):
                    group.start_soon(call, number, tool, arguments)

    try:
        anyio.run(main)
    finally:
        graphs.close()
    for number, (tool, _, expected) in enumerate(calls):
        assert not answers[number].is_error, (tool, answers[number].content)
        assert answers[number].structured_content == expected, tool
