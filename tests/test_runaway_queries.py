"""A query past its deadline ends for real: real ``kga serve`` and ``kga mcp`` processes, real clients
(requests, the MCP SDK's client, raw JSON-RPC over stdio), runaway queries that would run for hours.

Each runaway is answered at its deadline (503, or a tool error), a quick call made meanwhile gets its
answer, the runaway's worker process is gone (checked among the server's child processes) and
replaced, and the server exits on Ctrl-C, SIGTERM or a closed stdin while a runaway runs."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from collections.abc import Callable
from typing import Any

import anyio
import psutil
import pytest
import requests
from support.servers import KGA, free_port, running

from kg_adapters.testing.hostile_queries import RUNAWAY_QUERIES

pytest.importorskip("starlette")
mcp = pytest.importorskip("mcp")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

QUICK = "ASK { ?s ?p ?o }"
ENDLESS = RUNAWAY_QUERIES["cross product"]


def workers_of(pid: int) -> set[int]:
    """The query worker processes a server runs."""
    found = set()
    for child in psutil.Process(pid).children():
        try:
            if "kg_adapters.serve.workers" in child.cmdline() and child.status() != psutil.STATUS_ZOMBIE:
                found.add(child.pid)
        except psutil.NoSuchProcess:
            pass
    return found


def gone(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True


def poll_until(condition: Callable[[], bool], what: str, attempts: int = 1200) -> None:
    """Waits for ``condition`` by polling it (each pause a bounded wait on an event nobody sets)."""
    pause = threading.Event()
    for _ in range(attempts):
        if condition():
            return
        pause.wait(0.05)
    pytest.fail(f"never happened: {what}")


def busy_worker(pids: set[int], baseline: dict[int, float]) -> bool:
    """Whether one of ``pids`` has used CPU since ``baseline`` (it is evaluating a query)."""
    for pid in pids:
        try:
            times = psutil.Process(pid).cpu_times()
        except psutil.NoSuchProcess:
            continue
        if times.user + times.system > baseline.get(pid, 0.0) + 0.3:
            return True
    return False


def cpu_baseline(pids: set[int]) -> dict[int, float]:
    return {pid: sum(psutil.Process(pid).cpu_times()[:2]) for pid in pids}


def post(url: str, query: str) -> requests.Response:
    return requests.post(url, data={"query": query}, timeout=600)


@pytest.mark.parametrize("name", sorted(RUNAWAY_QUERIES))
def test_a_runaway_query_ends_at_its_deadline_and_frees_its_worker(sample_store_url: str, name: str) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/sparql"
    arguments = ["serve", "--kg", sample_store_url, "--port", str(port), "--timeout", "3", "--workers", "2"]
    with running(arguments, port) as server:
        before = workers_of(server.pid)
        assert len(before) == 2
        answers: dict[str, requests.Response] = {}
        runaway = threading.Thread(target=lambda: answers.update(runaway=post(url, RUNAWAY_QUERIES[name])))
        runaway.start()
        quick = post(url, QUICK)
        assert quick.status_code == 200 and quick.json()["boolean"] is True
        assert runaway.is_alive()  # answered while the runaway still ran
        runaway.join()
        assert answers["runaway"].status_code == 503 and "--timeout" in answers["runaway"].text
        after = workers_of(server.pid)
        stopped = before - after
        assert len(stopped) == 1 and len(after) == 2  # the runaway's worker is gone, a fresh one took its place
        assert all(gone(pid) for pid in stopped)
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
        before = workers_of(server.pid)
        answers: list[requests.Response] = []
        runaways = [threading.Thread(target=lambda: answers.append(post(url, ENDLESS))) for _ in range(2)]
        for thread in runaways:
            thread.start()
        for thread in runaways:
            thread.join()
        assert [answer.status_code for answer in answers] == [503, 503]
        assert post(url, QUICK).json()["boolean"] is True
        after = workers_of(server.pid)
        assert not before & after and len(after) == 2 and all(gone(pid) for pid in before)


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_the_server_stops_while_a_runaway_runs(sample_store_url: str, stop: signal.Signals) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/sparql"
    arguments = ["serve", "--kg", sample_store_url, "--port", str(port), "--timeout", "600", "--workers", "1"]
    with running(arguments, port) as server:
        pids = workers_of(server.pid)
        baseline = cpu_baseline(pids)
        client = threading.Thread(target=lambda: requests.post(url, data={"query": ENDLESS}, timeout=600), daemon=True)
        client.start()
        poll_until(lambda: busy_worker(pids, baseline), "the runaway reached its worker")
        server.send_signal(stop)
        try:
            server.wait(timeout=60)  # a hang detector: without the fix it stays up for the query's 600 s
        except subprocess.TimeoutExpired:
            pytest.fail("kga serve kept running after the signal")
        poll_until(lambda: all(gone(pid) for pid in pids), "the worker processes ended")
    assert server.returncode in (130, -signal.SIGTERM)


def test_mcp_calls_run_concurrently_and_a_runaway_sparql_call_ends(sample_store_url: str) -> None:
    params = StdioServerParameters(command=KGA, args=["mcp", "--kg", sample_store_url, "--timeout", "3"])
    finished: list[tuple[str, Any]] = []

    async def main() -> None:
        async with Client(params) as client:
            server = next(p for p in psutil.Process().children(recursive=True) if "mcp" in p.cmdline())
            before = workers_of(server.pid)
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
            after = workers_of(server.pid)
            assert len(before - after) == 1 and all(gone(pid) for pid in before - after) and len(after) == 2
            answered = await client.call_tool("sparql", {"query": QUICK})
            assert not answered.is_error and answered.structured_content == {"boolean": True, "truncated": False}

    anyio.run(main)


def test_kga_mcp_exits_when_its_stdin_closes_during_a_runaway(sample_store_url: str) -> None:
    server = subprocess.Popen(
        [KGA, "mcp", "--kg", sample_store_url, "--timeout", "600", "--workers", "1"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert server.stdin is not None and server.stdout is not None

    def send(message: dict[str, Any]) -> None:
        server.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())  # type: ignore[union-attr]
        server.stdin.flush()  # type: ignore[union-attr]

    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}
        send({"id": 1, "method": "initialize", "params": hello})
        assert json.loads(server.stdout.readline())["id"] == 1
        send({"method": "notifications/initialized"})
        pids = workers_of(server.pid)
        baseline = cpu_baseline(pids)
        send({"id": 2, "method": "tools/call", "params": {"name": "sparql", "arguments": {"query": ENDLESS}}})
        poll_until(lambda: busy_worker(pids, baseline), "the runaway reached its worker")
        server.stdin.close()
        try:
            server.wait(timeout=60)  # a hang detector: without the fix it stays up for the query's 600 s
        except subprocess.TimeoutExpired:
            pytest.fail("kga mcp kept running after its stdin closed")
        assert server.returncode == 0
        poll_until(lambda: all(gone(pid) for pid in pids), "the worker processes ended")
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
