"""Real server processes for tests: a free loopback port, start, wait until it accepts connections
(polling the port, never a fixed sleep), and stop."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from kg_adapters.testing.server_processes import free_port, wait_for_port

__all__ = ["KGA", "free_port", "running", "wait_for_port"]

KGA = str(Path(sys.executable).parent / "kga")


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
