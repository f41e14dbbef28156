"""The ``with`` form of the test servers (Virtuoso, the fault server, a scripted LLM): entering starts the
server, leaving stops it, whatever the block raised; :func:`serving`, a test's own small HTTP server;
:func:`killed_on_exit`, a child process that does not outlive its test."""

from __future__ import annotations

import abc
import contextlib
import http.server
import subprocess
import threading
from collections.abc import Iterator
from types import TracebackType
from typing import Any, TypeVar

_S = TypeVar("_S", bound="ServerLifecycle")


class ServerLifecycle(abc.ABC):
    """A server with ``start()`` (returns once it answers) and ``stop()``, usable as ``with Server(...) as s:``."""

    @abc.abstractmethod
    def start(self: _S) -> _S:
        """Starts the server; returns it once it answers."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stops the server and releases its port (a server not running is left as it is)."""

    def __enter__(self: _S) -> _S:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


@contextlib.contextmanager
def serving(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[http.server.ThreadingHTTPServer]:
    """A threading HTTP server for ``handler`` on a free loopback port, answering from a background
    thread; shut down, closed and joined on exit. Its port: ``server.server_address[1]``."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


_P = TypeVar("_P", bound="subprocess.Popen[Any]")


@contextlib.contextmanager
def killed_on_exit(process: _P) -> Iterator[_P]:
    """``process`` for the block; killed and reaped if it still runs when the block ends (a failed
    assertion must not leave a child process behind)."""
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
