"""Opens a load's Oxigraph database with a cap on the data files RocksDB keeps open.

Every data file (SST) RocksDB keeps open holds its index and filter blocks in memory (Oxigraph leaves
``cache_index_and_filter_blocks`` off), and without a cap RocksDB keeps every file a load writes open:
about 0.7% of the store (0.47 MiB per 64 MiB file; ~15 MiB for a 16M-triple Freebase-shaped store of
2 GiB, ~110 MiB at 100M triples, ~1.7 GiB for full Freebase), however small the load's budget. pyoxigraph
takes no RocksDB option, but Oxigraph sizes RocksDB's ``max_open_files`` from the process's
file-descriptor limit as it opens a database (the soft ``RLIMIT_NOFILE`` less
:data:`OXIGRAPH_FD_RESERVE`); so that limit is lowered for the open and restored at once. RocksDB then
keeps at most that many files open (a least-recently-used cache of them: a file compaction needs again is
reopened, reading its blocks once more) and writes the figure into the database's ``OPTIONS-*`` file.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox

OXIGRAPH_FD_RESERVE = 48
"""The descriptors Oxigraph leaves to the rest of the process (``DEFAULT_FD_RESERVE`` of its RocksDB
wrapper): ``max_open_files`` is the soft limit less this."""

_LIMIT_LOCK = threading.Lock()
"""Two opens in one process lower and restore the limit one after the other."""


def open_store(data: Path, files: int) -> ox.Store:
    """The read-write database at ``data`` (created if missing), keeping at most about ``files`` data
    files open (see the module's docstring)."""
    with capped_files(files):
        return ox.Store(str(data))


def open_read_only(data: Path, files: int) -> ox.Store:
    """The database at ``data`` opened read-only, keeping at most about ``files`` data files open."""
    with capped_files(files):
        return ox.Store.read_only(str(data))


@contextlib.contextmanager
def capped_files(files: int) -> Iterator[None]:
    """While it lasts, the soft descriptor limit is what lets a database opened now keep ``files`` data
    files open beside the descriptors the process holds (they count too: the limit is on descriptor
    numbers, so every one open stays usable, and as many new ones as ``files`` plus Oxigraph's reserve can
    still be opened by any thread). The limit is never raised, and is restored on the way out; where it
    cannot be read or set (no ``resource`` module, no ``/proc/self/fd``), nothing is capped."""
    try:
        import resource
    except ImportError:  # not a Unix: Oxigraph sizes its files otherwise there
        yield
        return
    with _LIMIT_LOCK:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        held = _open_descriptors()
        limit = None if held is None else OXIGRAPH_FD_RESERVE + files + held
        if limit is None or (soft != resource.RLIM_INFINITY and limit >= soft):
            yield
            return
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
        try:
            yield
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _open_descriptors() -> int | None:
    """How many file descriptors the process holds, None where that cannot be listed."""
    for listing in ("/proc/self/fd", "/dev/fd"):
        with contextlib.suppress(OSError):
            return len(os.listdir(listing))
    return None


def max_open_files(data: Path) -> int | None:
    """The ``max_open_files`` RocksDB recorded when it last opened the database at ``data`` for writing
    (its newest ``OPTIONS-*`` file), None if it recorded none."""
    recorded = sorted(data.glob("OPTIONS-*"), key=lambda path: int(path.name.split("-")[-1]))
    if not recorded:
        return None
    for line in recorded[-1].read_text(errors="replace").splitlines():
        name, _, value = line.strip().partition("=")
        if name.strip() == "max_open_files":
            return int(value.strip())
    return None
