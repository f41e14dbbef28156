"""Worker processes for queries written by someone else (``kga serve``, the MCP ``sparql`` tool).

Oxigraph cannot stop a query once it runs: an abandoned thread keeps evaluating it for as long as it
takes (minutes, hours), holding a CPU and its slot. So a server runs such queries in worker processes
of its own (:class:`WorkerPool`), through the :class:`~kg_adapters.base.EmbeddedSparql` ability of its
graph: each worker opens the graph's ``reader_url()`` read-only (and follows ``kga load``'s version
swaps, :class:`~kg_adapters.serve.current.CurrentGraph`) and answers one query at a time, streaming a
serialized answer back as it is written. The server waits for the answer until the query's deadline,
whatever the query writes or does not write meanwhile; past the deadline it kills the worker, so the
query stops consuming CPU at once, and starts a fresh worker in its place, so the slot is free again.

Workers are warm before they take a call: each imports what it needs and opens the graph first, so no
caller's deadline pays for a worker's start. A server starts only once its first workers are ready, and
a fresh worker replacing a stopped one takes calls once it is ready (the other workers answer meanwhile).

Workers ignore Ctrl-C (the server decides: it kills them when it stops) and die with the server even
when it is killed outright: each watches a pipe only the server holds open.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection, Pipe
from typing import IO, TYPE_CHECKING, Any

from kg_adapters import errors
from kg_adapters.base import EmbeddedSparql, SparqlRunner
from kg_adapters.errors import BackendError, BackendTimeout, KGError

if TYPE_CHECKING:
    from kg_adapters.serve.current import CurrentGraph

METHODS = ("sparql_rows", "sparql_write")
"""What a worker may be asked to call on its graph (the :class:`~kg_adapters.base.EmbeddedSparql` methods)."""
CHUNK = 1 << 16
"""Bytes of a serialized answer a worker gathers before sending them."""
_KILL_WAIT = 5.0
START_WAIT = 300.0
"""Seconds a worker may take to open its graph before it counts as failed (a hang detector: opening an
on-disk store read-only takes well under a second)."""
DEADLINE_GRACE = 2.0
"""Seconds past a call's deadline before a server abandons its thread: the work ends at the deadline by
itself (a worker is killed and replaced; a remote backend's deadline is the server's), so this only
bounds a backend that overruns its own, and lets the stopped worker be replaced before the answer."""


class DeadlinePassed(BackendTimeout):
    """A query ran past its deadline and was stopped (its worker process killed)."""


log = logging.getLogger(__name__)


class _Worker:
    """One worker process and the server's end of its connection; it opens ``warm`` (a graph URL) before
    its first call."""

    def __init__(self, lifeline: int, warm: str | None) -> None:
        ours, theirs = Pipe()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "kg_adapters.serve.workers", str(theirs.fileno()), str(lifeline)],
                pass_fds=(theirs.fileno(), lifeline),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,  # kga mcp speaks on stdout: nothing else may write there
            )
        except OSError as exc:
            ours.close()
            raise BackendError(f"cannot start a query worker process: {exc}") from exc
        finally:
            theirs.close()
        self.connection = ours
        self.connection.send(warm)

    def wait_ready(self) -> None:
        """Blocks until the worker has opened its graph.

        Raises:
            BackendError: it failed to (its error), died, or took longer than :data:`START_WAIT`.
        """
        try:
            if not self.connection.poll(START_WAIT):
                raise BackendError(f"a query worker process did not open its graph within {START_WAIT:g} s")
            kind, *payload = self.connection.recv()
        except (EOFError, OSError) as exc:
            reason = exc or "no reason given"
            raise BackendError(f"a query worker process ended while opening its graph ({reason})") from None
        if kind != "ready":
            error = _error(*payload)
            raise BackendError(f"a query worker process cannot open its graph: {error}") from error

    def kill(self) -> None:
        """Stops the process at once (SIGKILL: it only reads) and reaps it."""
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=_KILL_WAIT)
        self.connection.close()


class WorkerPool:
    """``size`` worker processes; a call takes an idle one (waiting inside its deadline for one to be free).
    ``warm``: the graph URL every worker opens before it takes a call (the graph's ``reader_url``).

    Raises:
        BackendError: a worker could not be started or could not open ``warm``.
    """

    def __init__(self, size: int, *, warm: str | None = None) -> None:
        self._lifeline_read, self._lifeline_write = os.pipe()  # workers read; only we write (never)
        self._condition = threading.Condition()
        self._closed = False
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._starting: set[_Worker] = set()
        self.size = size
        self._warm = warm
        try:
            for _ in range(size):
                self._idle.append(_Worker(self._lifeline_read, warm))
            for worker in self._idle:
                worker.wait_ready()
        except BaseException:
            self.close()
            raise

    def runner(self, deadline: float) -> SparqlRunner:
        """A runner for one query, which must answer by ``deadline`` (``time.monotonic()``)."""

        def run(reader_url: str, method: str, arguments: dict[str, Any], output: IO[bytes] | None) -> Any:
            return self.call(deadline, reader_url, method, arguments, output)

        return run

    def call(
        self, deadline: float, reader_url: str, method: str, arguments: dict[str, Any], output: IO[bytes] | None
    ) -> Any:
        """``connect(reader_url).method(**arguments)`` in a worker, its written bytes copied to ``output``.

        Raises:
            BackendTimeout: ``deadline`` passed first; the worker was killed and replaced.
            BackendError: the pool is closed, or the worker died before answering.
            KGError: what the method raised in the worker (its class and message).
        """
        if method not in METHODS:
            raise ValueError(f"a query worker does not call {method!r}")
        worker = self._take(deadline)
        healthy = False
        try:
            worker.connection.send((reader_url, method, arguments, output is not None))
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not worker.connection.poll(remaining):
                    raise DeadlinePassed("the query ran past its deadline; its worker process was stopped")
                kind, *payload = worker.connection.recv()
                if kind == "chunk":
                    assert output is not None
                    output.write(payload[0])
                    continue
                healthy = True
                if kind == "done":
                    return payload[0]
                raise _error(*payload)
        except (EOFError, OSError) as exc:
            if self._closed:
                raise BackendError("the server is shutting down") from None
            raise BackendError(
                f"the query's worker process ended before answering ({exc or 'no reason given'})"
            ) from None
        finally:
            self._give_back(worker, healthy)

    def _take(self, deadline: float) -> _Worker:
        with self._condition:
            while not self._idle and not self._closed:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise DeadlinePassed(f"all {self.size} query workers stayed busy until the deadline")
                self._condition.wait(remaining)
            if self._closed:
                raise BackendError("the server is shutting down")
            worker = self._idle.pop()
            self._busy.add(worker)
            return worker

    def _give_back(self, worker: _Worker, healthy: bool) -> None:
        """An answered worker waits for the next call; any other is killed and replaced by a fresh one,
        which takes calls once it has opened its graph (:meth:`_admit`)."""
        if not healthy:
            worker.kill()
        with self._condition:
            self._busy.discard(worker)
            if self._closed:
                pass
            elif healthy:
                self._idle.append(worker)
                self._condition.notify()
            else:
                try:
                    fresh = _Worker(self._lifeline_read, self._warm)
                except BackendError as exc:  # the next calls wait for the other workers, or their deadline
                    log.warning("kga: a stopped query worker was not replaced: %s", exc)
                else:
                    self._starting.add(fresh)
                    threading.Thread(target=self._admit, args=(fresh, worker.process.pid), daemon=True).start()
        if self._closed and healthy:
            worker.kill()

    def _admit(self, fresh: _Worker, stopped: int) -> None:
        """Waits (in its own thread) for ``fresh`` to open its graph, then lets it take calls."""
        try:
            fresh.wait_ready()
        except BackendError as exc:
            ready = False
            if not self._closed:
                log.warning("kga: a stopped query worker was not replaced: %s", exc)
        else:
            ready = True
        with self._condition:
            self._starting.discard(fresh)
            admitted = ready and not self._closed
            if admitted:
                self._idle.append(fresh)
                self._condition.notify()
        if not admitted:
            fresh.kill()
            return
        log.info("kga: query worker %d was stopped; worker %d took its place", stopped, fresh.process.pid)

    def close(self) -> None:
        """Kills every worker (running queries fail at once with "shutting down"); idempotent."""
        with self._condition:
            if self._closed:
                return
            self._closed = True
            workers = [*self._idle, *self._busy, *self._starting]
            self._idle.clear()
            self._condition.notify_all()
        for worker in workers:
            with contextlib.suppress(OSError):
                worker.process.kill()
        for worker in workers:
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.process.wait(timeout=_KILL_WAIT)
        os.close(self._lifeline_write)
        os.close(self._lifeline_read)


def pool_for(graphs: CurrentGraph, size: int) -> WorkerPool | None:
    """``size`` workers for the graph ``graphs`` serves, when it is an embedded store another process can
    open (:class:`~kg_adapters.base.EmbeddedSparql` with a ``reader_url``); else None."""
    with graphs.use() as graph:
        reader_url = graph.reader_url() if isinstance(graph, EmbeddedSparql) else None
    return None if reader_url is None else WorkerPool(size, warm=reader_url)


def _error(name: str, message: str) -> KGError:
    """The error a worker reported, as its own class when it is one of ours."""
    return errors.error_named(name, message)


# -- the worker process ----------------------------------------------------------------------------------
class _ChunkWriter:
    """The ``output`` a worker's graph writes to: the server, in chunks of about :data:`CHUNK` bytes."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.pending = bytearray()

    def write(self, data: bytes) -> int:
        self.pending += data
        if len(self.pending) >= CHUNK:
            self.flush()
        return len(data)

    def flush(self) -> None:
        if self.pending:
            self.connection.send(("chunk", bytes(self.pending)))
            self.pending.clear()


def _die_with_the_server(lifeline: int) -> None:
    """Blocks until the server's end of the lifeline closes (it exited, however), then ends this process."""
    try:
        while os.read(lifeline, 1):
            pass
    finally:
        os._exit(0)


def serve_queries(connection: Connection) -> None:
    """Opens the graph the server names first (answering "ready"), then answers calls until the server
    closes the connection."""
    from kg_adapters.serve.current import CurrentGraph

    graphs: dict[str, CurrentGraph] = {}
    try:
        warm = connection.recv()
    except (EOFError, OSError):
        return
    try:
        if warm is not None:
            graphs[warm] = CurrentGraph(warm)
    except Exception as exc:
        connection.send(_failure(exc))
        return
    connection.send(("ready",))
    while True:
        try:
            reader_url, method, arguments, writes = connection.recv()
        except (EOFError, OSError):
            return
        try:
            if method not in METHODS:
                raise BackendError(f"a query worker does not call {method!r}")
            if reader_url not in graphs:
                graphs[reader_url] = CurrentGraph(reader_url)
            with graphs[reader_url].use() as graph:
                if writes:
                    output = _ChunkWriter(connection)
                    getattr(graph, method)(**arguments, output=output)
                    output.flush()
                    answer = None
                else:
                    answer = getattr(graph, method)(**arguments)
            connection.send(("done", answer))
        except Exception as exc:  # a bug too is still an answer, so the worker stays usable
            connection.send(_failure(exc))


def _failure(exc: Exception) -> tuple[str, str, str]:
    """The message reporting ``exc`` to the server: our errors by class, any other as a BackendError."""
    if isinstance(exc, KGError):
        return ("error", type(exc).__name__, str(exc))
    return ("error", "BackendError", f"{type(exc).__name__}: {exc}")


def main(argv: list[str]) -> int:
    connection, lifeline = Connection(int(argv[0])), int(argv[1])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the server decides
    threading.Thread(target=_die_with_the_server, args=(lifeline,), daemon=True).start()
    serve_queries(connection)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
