"""Real server processes for tests: a free loopback port, start, wait until it accepts connections
(polling the port, never a fixed sleep), and stop."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

KGA = str(Path(sys.executable).parent / "kga")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_port(process: subprocess.Popen[bytes], port: int, *, attempts: int = 1200) -> None:
    """Polls until ``process`` accepts connections on ``port``; fails the test if it exits first."""
    for _ in range(attempts):
        if process.poll() is not None:
            error = process.stderr.read().decode(errors="replace") if process.stderr else ""
            pytest.fail(f"the server exited with {process.returncode}: {error}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=0.05)  # the pause between polls doubles as an exit check
    pytest.fail("the server never accepted connections")


@contextlib.contextmanager
def running(arguments: list[str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    """``kga ARGUMENTS`` as a process listening on ``port``; terminated (and reaped) on exit.

    Its stderr goes to a file, not a pipe: a server logging every request would fill a pipe that
    nobody drains and stall mid-test. ``process.stderr`` reads that file from its start."""
    log = tempfile.NamedTemporaryFile(prefix="kga-server-", suffix=".log")  # noqa: SIM115 (closed below)
    process = subprocess.Popen([KGA, *arguments], stdout=subprocess.DEVNULL, stderr=log)
    process.stderr = open(log.name, "rb")  # noqa: SIM115 (closed below)
    try:
        wait_for_port(process, port)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stderr.close()
        log.close()
