"""Every budget -- counts, limits, hops, sizes and seconds -- is validated here, the same way.

A count is an ``int`` (never a ``bool``) between its minimum and :data:`MAX_COUNT` (the largest
integer SQLite and SPARQL engines take, so a huge limit is refused here instead of overflowing
deep inside a driver); seconds are a finite number. Options given as text (URL parameters) are
parsed by :func:`option_count` and :func:`option_seconds`; the on/off options beside them are checked
by :func:`check_flag`. A memory budget (``kga load --memory 4G``) is a size in bytes, parsed by
:func:`memory_bytes` and split among a load's parts by :func:`load_memory`, the index's part among what the index
worker holds by :func:`index_memory`. Anything else raises
:class:`~kg_adapters.errors.InvalidTermError` naming the budget and the value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from kg_adapters.errors import InvalidTermError

MAX_COUNT = 2**63 - 1
DEFAULT_MEMORY = 11 << 29
"""A load's memory budget (``kga load --memory``) unless one is given: 5.5 GiB (5632M), split by
:func:`load_memory` into the loading process (1.94 GiB: Oxigraph's bulk loader 1.75 GiB and
:data:`LOADER_RESERVE`) and the traversal index (3.56 GiB: numbering, sorting, the name index's rows, past
which they spill to disk); a 16 GB machine keeps room for the rest of the system. ``kga index`` gives the
whole budget to the index (it loads nothing)."""
MIN_MEMORY = 1 << 20
"""The smallest memory budget taken (1 MiB: tests force spilling with it; real loads want GBs)."""
BULK_LOAD_CEILING = 7 << 28
"""What Oxigraph's bulk loader holds at most in one bulk load, however long (1.75 GiB): it parses batches
of 1M statements and encodes at most two at once (``oxigraph::store::BulkLoader``; pyoxigraph 0.5.13 on a
Freebase-shaped dump in a fresh process: 0.79 GiB for one batch, 1.4 GiB for two, 1.5 GiB for three or
more; inside ``kga load`` of the 16M-triple dump under the default budget, with nothing cut, the loading
process peaked at 1.83 GiB (``VmHWM``), 1.65 GiB beside :data:`LOADER_RESERVE`). A load's budget gives it
at most this much, and past it no cap is needed."""
LOADER_RESERVE = 3 << 26
"""What the loading process holds beside Oxigraph's bulk loads, whatever their size (192 MiB): the
interpreter and its modules (~50 MiB), the input's blocks on their way (the one being read, the one
Oxigraph parses, those queued for the index worker and the last ones kept to report a refused line: ~3-4
blocks of 32 MiB, ``loaders.rdf.CHUNK_BYTES``) and RocksDB's own beside the bulk loader (its open files'
index and filter blocks, capped: ``LoadMemory.store_files``). Measured under
``--memory 1G`` before it was reserved: the ``kga load`` process peaked 150-190 MiB above Oxigraph's 512
MiB share at 4M-100M triples (``benchmarks/results/load_memory.md``), so the whole tree went 8-16% over."""
STORE_FILE_BYTES = 1 << 20
"""What RocksDB holds in memory for each data file (SST) it keeps open, at most: the file's index and
filter blocks (Oxigraph leaves ``cache_index_and_filter_blocks`` off, so they live beside the block caches,
one set per open file). Compaction cuts files at 64 MiB (Oxigraph's level-style options); the 16 files a
16M-triple Freebase-shaped store (2,056 MiB in 41 files) opens first held 7.6 MiB (0.47 MiB a file), and
the files a large bulk load ingests can be larger: twice that bounds one."""
MIN_STORE_FILES = 48
"""The fewest data files Oxigraph opens a database with (``MINIMUM_MAX_OPEN_FILES`` in its RocksDB
wrapper)."""
WORKER_RESERVE = 7 << 25
"""What the index worker process holds beside its shares, whatever its budget (224 MiB): the interpreter with
numpy, pyoxigraph and the C numbering (~70 MiB resident once a spill emptied everything: ``kga load`` of the
4M-triple dump under ``--memory 512M`` and ``1G``), the block of text handed over (``loaders.rdf.CHUNK_BYTES``,
31 MiB), the lines its numbering splits off (at most as much again), the rows one block makes before the
budget is checked (a block of name lines: ~300,000 literal rows, ~70 MiB) and a slice of rows being appended
to the spool (``kg_adapters.index.spool.FLUSH_ROWS``). The worker's first block of the 4M-triple dump took
it to 243 MiB before any check. Before it was reserved the worker went over its share at 4M triples under
``--memory 512M`` (0.27 GiB for 0.25) and at 100M under ``--memory 1G`` (0.71 GiB for 0.5)."""
_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def check_count(value: object, name: str, *, minimum: int = 0, required: bool = False) -> int | None:
    """``value`` as a count of at least ``minimum``; ``None`` means "no budget" unless ``required``."""
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidTermError(f"{name} must be an integer >= {minimum}, got {value!r:.60}")
    if value > MAX_COUNT:
        raise InvalidTermError(f"{name} must be an integer <= {MAX_COUNT} (2**63 - 1), got {value!r:.60}")
    return value


def check_seconds(value: object, name: str, *, positive: bool = False, required: bool = False) -> float | None:
    """``value`` as a finite number of seconds, ``> 0`` when ``positive`` (else ``>= 0``)."""
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidTermError(f"{name} must be a number of seconds, got {value!r:.60}")
    seconds = float(value)
    if not math.isfinite(seconds) or seconds < 0 or (positive and seconds == 0):
        bound = "> 0" if positive else ">= 0"
        raise InvalidTermError(f"{name} must be a finite number of seconds {bound}, got {value!r:.60}")
    return seconds


def check_flag(value: object, name: str) -> bool:
    """``value`` as an on/off option: a ``bool`` and nothing else (not 0/1, not text), so a mistyped
    option is refused instead of read as true or false."""
    if not isinstance(value, bool):
        raise InvalidTermError(f"{name} must be true or false, got {value!r:.60}")
    return value


def option_count(options: dict[str, Any], name: str, *, minimum: int = 0) -> int | None:
    """Pops option ``name`` (an int, or its decimal text from a URL) as a count; None when absent."""
    value = options.pop(name, None)
    if isinstance(value, str):
        text = value.strip()
        number = ascii_integer(text.lstrip("+-"), max_digits=30)
        if number is None:
            raise InvalidTermError(f"option {name} must be an integer, got {value!r:.60}")
        value = -number if text.startswith("-") else number
    return check_count(value, f"option {name}", minimum=minimum)


def option_seconds(options: dict[str, Any], name: str, *, positive: bool = False) -> float | None:
    """Pops option ``name`` (a number, or its text from a URL) as seconds; None when absent."""
    value = options.pop(name, None)
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise InvalidTermError(f"option {name} must be a number of seconds, got {value!r:.60}") from None
    return check_seconds(value, f"option {name}", positive=positive)


def ascii_integer(text: str, *, max_digits: int = 18) -> int | None:
    """The non-negative integer ``text`` spells in ASCII digits, None for anything else: text from the
    wire or a URL is read as the protocols define it (``str.isdigit`` accepts ``"²"``, which ``int`` refuses,
    and ``int`` accepts other scripts' digits)."""
    if 0 < len(text) <= max_digits and text.isascii() and text.isdigit():
        return int(text)
    return None


def memory_bytes(value: object, name: str = "memory") -> int:
    """A memory budget as bytes: an int, or text such as ``"4G"``, ``"512M"``, ``"2GiB"`` or
    ``"1048576"`` (units K, M, G, T of 1024, an optional ``B``/``iB``), at least :data:`MIN_MEMORY`."""
    if isinstance(value, str):
        text = value.strip().upper().removesuffix("IB").removesuffix("B")
        unit = text[-1:] if text[-1:] in _SIZE_UNITS else ""
        number = ascii_integer(text[: len(text) - len(unit)].strip(), max_digits=15)
        if number is None:
            raise InvalidTermError(f"{name} must be a size such as 4G, 512M or 1048576 (bytes), got {value!r:.60}")
        value = number * _SIZE_UNITS[unit]
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_MEMORY <= value <= MAX_COUNT:
        raise InvalidTermError(f"{name} must be a size of at least 1M (1048576 bytes), got {value!r:.60}")
    return value


@dataclass(frozen=True, kw_only=True)
class LoadMemory:
    """A load's memory budget split between its parts: ``bulk_load``, what Oxigraph's bulk loader may hold
    (its segments are cut to fit: ``loaders.rdf``), and ``index``, the traversal index's collector (past
    it, it spills: ``kg_adapters.index.spill``). The loading process's own (:data:`LOADER_RESERVE`) is in
    neither: it is held whatever their size. ``store_files``: the data files the load's database keeps open
    at most (``loaders.store_files``): without a cap RocksDB keeps every file open, and their index and
    filter blocks (:data:`STORE_FILE_BYTES` each) grow with the store, ~0.7% of it (~1.7 GiB for full
    Freebase), whatever the budget; capped, they stay within a sixteenth of the loading process's half,
    part of :data:`LOADER_RESERVE`."""

    bulk_load: int
    index: int
    store_files: int


def load_memory(value: object, name: str = "memory") -> LoadMemory:
    """The split of a load's memory budget (:func:`memory_bytes` of ``value``): half to the loading process,
    at most :data:`BULK_LOAD_CEILING` for Oxigraph's bulk loader (it needs no more) plus
    :data:`LOADER_RESERVE`, of which Oxigraph's bulk loader gets what the reserve leaves (a budget too
    small to hold the reserve still gives it a quarter of that half: a bulk load takes one block at least); the
    rest to the index. The database's open files are capped at a sixteenth of the loading process's half
    (:data:`STORE_FILE_BYTES` each; 124 files under the default budget, 48 under 1G), at Oxigraph's own
    minimum (:data:`MIN_STORE_FILES`) at least."""
    total = memory_bytes(value, name)
    loader = min(total // 2, BULK_LOAD_CEILING + LOADER_RESERVE)
    bulk_load = max(loader - LOADER_RESERVE, loader // 4)
    store_files = max(MIN_STORE_FILES, loader // 16 // STORE_FILE_BYTES)
    return LoadMemory(bulk_load=bulk_load, index=total - loader, store_files=store_files)


@dataclass(frozen=True, kw_only=True)
class IndexMemory:
    """The index worker's budget (``total``: :attr:`LoadMemory.index`, or all of ``kga index --memory``) split
    among what it holds beside :data:`WORKER_RESERVE` (``held``: what is left of ``total``): ``iris``, the
    entity numbering table (its own size, ``nbytes()``, and what growing it takes: past it, it is written as
    a sorted run); ``buffers``, the triples numbered since the last append to the spool (past it, they are
    appended; the append copies a slice at a time); ``write``, what writing the index may hold: the
    in-memory write when its estimate fits (``CollectorSpool.fits``), else the spilled write's blocks,
    merges and maps, cut from it (``kg_adapters.index.spill.SpilledCollection``). ``iris`` and
    ``buffers`` are held together while the load parses (with the glibc heap's free holes between them:
    the rest of ``held``); ``write`` comes after them, once they are on disk or reloaded."""

    total: int
    held: int
    iris: int
    buffers: int
    write: int


def index_memory(value: object, name: str = "index memory") -> IndexMemory:
    """The split of the index worker's budget (``value``: bytes, at least 1, as :func:`load_memory` gives the
    index; see :class:`IndexMemory`):
    what :data:`WORKER_RESERVE` leaves (a budget too small to hold it keeps an eighth: tests force spilling
    with 1 MiB), half to the entity numbering table (its growth included), an eighth to the buffered triples,
    all of it to the index write."""
    total = check_count(value, name, minimum=1, required=True)
    assert total is not None  # required
    held = max(total - WORKER_RESERVE, total // 8)
    return IndexMemory(total=total, held=held, iris=held // 2, buffers=held // 8, write=held)
