"""Feeding one Oxigraph bulk load through a named pipe, so its parser never waits for Python.

``Store.bulk_load`` given a Python file object calls its ``read`` for every ~2 KiB, taking the GIL each time
and running whatever produces the text (gzip, the block checks, the index worker's frames) on the parser's
own thread. Given a path, Oxigraph reads the file itself. The text is written into a FIFO by the calling
thread (zlib and ``os.write`` release the GIL) while the bulk load reads the FIFO on a thread of its own, as
the ``oxigraph`` CLI reads its file, with the decompression beside the parse instead of in its way.

Oxigraph reads a path with one reader only below 4 cores (``BulkLoader::parallel_load_from_file`` splits a
file by its size for more, which a pipe has not), so :func:`can_pipe` allows the pipe there only.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from collections.abc import Iterator

import pyoxigraph as ox

PIPE_BYTES = 1 << 20
"""The size asked for a pipe (Linux; 64 KiB by default): fewer, larger writes, each waking the reader."""

_SPLIT_FROM_CORES = 4
"""Cores from which Oxigraph splits a path it bulk loads between parsers (``target_num_threads() / 2 >= 2``)."""


def widen_pipe(fd: int) -> None:
    """Asks for a :data:`PIPE_BYTES` pipe behind ``fd`` (nothing where it cannot be resized)."""
    import fcntl

    resize = getattr(fcntl, "F_SETPIPE_SZ", None)
    if resize is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, resize, PIPE_BYTES)


def _pipe_bytes(fd: int) -> int:
    """What the pipe behind ``fd`` holds (:data:`PIPE_BYTES` where that cannot be asked)."""
    import fcntl

    size = getattr(fcntl, "F_GETPIPE_SZ", None)
    if size is not None:
        with contextlib.suppress(OSError):
            return int(fcntl.fcntl(fd, size))
    return PIPE_BYTES


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def can_pipe() -> bool:
    """Whether a bulk load may read a FIFO here: FIFOs exist, and Oxigraph reads a path as one stream."""
    return hasattr(os, "mkfifo") and (os.cpu_count() or 1) < _SPLIT_FROM_CORES


class _Loading(threading.Thread):
    """The bulk load of the FIFO at ``path``, on a thread of its own; ``failure`` is what it raised."""

    def __init__(self, store: ox.Store, path: str, format: ox.RdfFormat, guard: int) -> None:
        super().__init__(name="kga-bulk-load", daemon=True)
        self.store, self.path, self.format, self.guard = store, path, format, guard
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            self.store.bulk_load(path=self.path, format=self.format)
        except BaseException as exc:  # re-raised in the feeding thread
            self.failure = exc
        finally:
            os.close(self.guard)  # no reader left: a write the load will never read fails instead of waiting
            del self.store  # (a failure's traceback keeps this thread: the store must close with the load)


class FifoUnavailable(OSError):
    """No FIFO could be made here (no writable temporary directory, a file system without FIFOs); raised
    before any text was taken, so the caller may load the same texts another way."""


def bulk_load_piped(store: ox.Store, texts: Iterator[bytes], format: ox.RdfFormat) -> None:
    """Bulk loads the concatenated ``texts`` into ``store`` as one input read from a FIFO (see the module).

    Raises :class:`FifoUnavailable` when no FIFO can be made (no text taken yet), what producing the texts
    raised (the bulk load then ends at what it was given: the caller's load fails as a whole), else what the
    bulk load raised."""
    try:
        feed = tempfile.TemporaryDirectory(prefix="kga-feed-")
    except OSError as exc:
        raise FifoUnavailable(f"no temporary directory for the load's FIFO: {exc}") from exc
    with feed as directory:
        path = os.path.join(directory, "input")
        try:
            os.mkfifo(path, 0o600)
        except OSError as exc:
            raise FifoUnavailable(f"no FIFO for the load in {directory}: {exc}") from exc
        guard = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a reader from the start: the write end opens at once
        try:
            writer = os.open(path, os.O_WRONLY)
        except BaseException:
            os.close(guard)
            raise
        widen_pipe(writer)
        loading = _Loading(store, path, format, guard)
        try:
            loading.start()
        except BaseException:
            os.close(writer)
            os.close(guard)
            raise
        broken = False
        try:
            for text in texts:
                try:
                    _write(writer, text)
                except BrokenPipeError:  # the load stopped reading: it failed (its error is raised below)
                    broken = True
                    break
        finally:
            if not broken:  # a blank pipe-full more: once written, the load has opened the FIFO (its open would
                with contextlib.suppress(OSError):  # wait for a writer forever once the last one is closed)
                    _write(writer, b"\n" * (_pipe_bytes(writer) + 1))
            os.close(writer)  # the end of the input: the load finishes with what it was given
            loading.join()
        if loading.failure is not None:
            if isinstance(loading.failure, SyntaxError):
                loading.failure.filename = None  # the FIFO's path means nothing to the user
            raise loading.failure
        if broken:
            raise OSError("Oxigraph's bulk load stopped reading its input before the end")
