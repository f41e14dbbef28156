"""Watching a running ``kga serve`` / ``kga mcp`` from outside, for the runaway-query tests and
``benchmarks/hostile_callers.py``: its query worker processes, whether they are gone, whether one is
busy, and a raw JSON-RPC session over ``kga mcp``'s stdin and stdout (needs psutil, a dev dependency).

Nothing here sleeps to synchronise: :func:`poll_until` polls a condition, pausing on an event nobody sets."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import threading
from collections.abc import Callable
from typing import IO, Any

WORKER_MODULE = "kg_adapters.serve.workers"


class ServerNotListening(RuntimeError):
    """A server process exited, or never accepted connections, before it listened."""


def free_port() -> int:
    """A loopback port free now (for a server to be started on)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_port(process: subprocess.Popen[bytes], port: int, *, attempts: int = 1200) -> None:
    """Polls until ``process`` accepts connections on loopback ``port``. Raises ServerNotListening (with
    its stderr, when that is readable) if it exits first or after ``attempts`` failed polls."""
    for _ in range(attempts):
        if process.poll() is not None:
            error = process.stderr.read().decode(errors="replace") if process.stderr else ""
            raise ServerNotListening(f"the server exited with {process.returncode}: {error}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=0.05)  # the pause between polls doubles as an exit check
    raise ServerNotListening("the server never accepted connections")


def worker_pids(pid: int, *, expected: int | None = None) -> set[int]:
    """The query worker processes the server ``pid`` runs (zombies excluded). ``expected``: polls (see
    :func:`poll_until`) until that many are seen, so a process the system is still starting under heavy
    load is not missed; what was seen last when they never are."""
    import psutil

    def seen() -> set[int]:
        found = set()
        for child in psutil.Process(pid).children():
            with contextlib.suppress(psutil.NoSuchProcess):
                if WORKER_MODULE in child.cmdline() and child.status() != psutil.STATUS_ZOMBIE:
                    found.add(child.pid)
        return found

    found = seen()
    if expected is not None and len(found) != expected:
        poll_until(lambda: len(seen()) == expected)
        found = seen()
    return found


def all_gone(pids: set[int]) -> bool:
    """Whether every process of ``pids`` has ended (reaped, or a zombie)."""
    import psutil

    for pid in pids:
        with contextlib.suppress(psutil.NoSuchProcess):
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                return False
    return True


def cpu_seconds(pids: set[int]) -> dict[int, float]:
    """The CPU time each of ``pids`` has used so far."""
    import psutil

    used = {}
    for pid in pids:
        with contextlib.suppress(psutil.NoSuchProcess):
            used[pid] = sum(psutil.Process(pid).cpu_times()[:2])
    return used


def one_busy(pids: set[int], baseline: dict[int, float], *, seconds: float = 0.3) -> bool:
    """Whether one of ``pids`` used ``seconds`` of CPU since ``baseline`` (it is evaluating a query)."""
    now = cpu_seconds(pids)
    return any(used > baseline.get(pid, 0.0) + seconds for pid, used in now.items())


def runaway_running(server_pid: int, send: Callable[[], object], *, workers: int = 1) -> tuple[set[int], bool]:
    """The ``workers`` query workers of the server ``server_pid``, and whether one of them got busy after
    ``send()`` (which must return at once) handed the server a query that runs for long."""
    pids = worker_pids(server_pid, expected=workers)
    baseline = cpu_seconds(pids)
    send()
    return pids, poll_until(lambda: one_busy(pids, baseline))


def in_background(call: Callable[[], object]) -> Callable[[], None]:
    """``call`` made to return at once: run in a daemon thread (a blocking client's request)."""
    return lambda: threading.Thread(target=call, daemon=True).start()


def workers_replaced(log: IO[bytes]) -> int:
    """How many stopped query workers a server's log (its stderr, as a file) says were replaced by fresh
    ones that are ready to take calls."""
    log.seek(0)
    return log.read().decode(errors="replace").count("took its place")


def poll_until(condition: Callable[[], bool], *, attempts: int = 1200, pause: float = 0.05) -> bool:
    """Polls ``condition`` until it holds (True) or ``attempts`` polls failed (False)."""
    waiting = threading.Event()
    for _ in range(attempts):
        if condition():
            return True
        waiting.wait(pause)
    return False


class McpStdio:
    """``kga mcp`` as a child process spoken to in raw JSON-RPC lines (so the test, not a client
    library, decides when stdin closes). :meth:`start` does the initialize handshake."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
        self.process.stdin.flush()

    def start(self) -> dict[str, Any]:
        hello = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "kga-tests", "version": "0"},
        }
        self.send({"id": 0, "method": "initialize", "params": hello})
        assert self.process.stdout is not None
        answer: dict[str, Any] = json.loads(self.process.stdout.readline())
        self.send({"method": "notifications/initialized"})
        return answer

    def call_tool(self, number: int, name: str, arguments: dict[str, Any]) -> None:
        """Sends a ``tools/call`` without waiting for its answer."""
        self.send({"id": number, "method": "tools/call", "params": {"name": name, "arguments": arguments}})

    def close_stdin(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
