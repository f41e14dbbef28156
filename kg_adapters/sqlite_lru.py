"""The general key -> JSON value store behind the result cache and the LLM reply cache: an
in-memory LRU in front of an optional SQLite file (WAL mode, one table ``entries(key, value, size,
last_used)``, values zlib-compressed JSON, least recently used rows evicted past ``max_disk_bytes``).

``mode="replay"`` opens the file read-only and stores nothing, so a run can prove it needs no network
(the wrapper turns a miss into :class:`~kg_adapters.errors.CacheMiss`); ``mode="off"`` stores nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any
from typing import Literal as TypingLiteral

from kg_adapters.base import ClosesOnExit
from kg_adapters.budgets import check_count
from kg_adapters.errors import BackendError, CacheMiss, InvalidTermError

__all__ = ["CacheMode", "ResultCache"]

CacheMode = TypingLiteral["readwrite", "replay", "off"]


def _key_digest(key: Sequence[object]) -> str:
    text = json.dumps(list(key), ensure_ascii=True, separators=(",", ":"), sort_keys=True, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- the store: memory LRU + SQLite --------------------------------------------------------------------

_MODES: tuple[str, ...] = ("readwrite", "replay", "off")
_SQL_CHUNK = 500
_TOUCH_FLUSH = 4096


class ResultCache(ClosesOnExit):
    """Key -> JSON value store: an in-memory LRU of ``memory_entries`` in front of an optional
    SQLite file at ``path``. Thread-safe (one lock); several processes may share a file (WAL),
    though the ``max_disk_bytes`` accounting only counts what this process wrote since opening.

    Keys are sequences of JSON scalars/lists (hashed with SHA-256); values are any JSON value.
    ``max_disk_bytes`` bounds the stored bytes (key + compressed value per row): past it the least
    recently used rows are deleted and their pages freed (incremental vacuum). Reads refresh
    ``last_used`` lazily (flushed with the next write, every few thousand reads and on close).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        memory_entries: int = 100_000,
        max_disk_bytes: int | None = None,
        mode: CacheMode = "readwrite",
    ) -> None:
        if mode not in _MODES:
            raise InvalidTermError(f"mode must be one of readwrite, replay, off; got {mode!r}")
        check_count(memory_entries, "memory_entries", required=True)
        check_count(max_disk_bytes, "max_disk_bytes")
        self.mode: CacheMode = mode
        self.path = str(Path(path).expanduser().absolute()) if path is not None else None
        self.memory_entries = memory_entries
        self.max_disk_bytes = max_disk_bytes
        self._lock = threading.RLock()
        self._memory: OrderedDict[str, Any] = OrderedDict()
        self.generation = 0
        """Bumped by clear(), so wrappers drop what they remember from before."""
        self._touched: dict[str, int] = {}
        self._tick = 0
        self._disk_bytes = 0
        self._closed = False
        self.memory_hits = 0
        self.disk_hits = 0
        self.misses = 0
        self.evicted = 0
        self._conn: sqlite3.Connection | None = None
        if self.path is not None and mode != "off":
            self._conn = self._open(self.path)

    # -- public API -------------------------------------------------------------------------------
    @property
    def writable(self) -> bool:
        return self.mode == "readwrite"

    def get(self, key: Sequence[object], default: Any = None) -> Any:
        """The value stored under ``key``, or ``default``."""
        found = self.lookup([key])
        return found.get(0, default)

    def lookup(self, keys: Sequence[Sequence[object]]) -> dict[int, Any]:
        """The stored values of the keys that are present, by position in ``keys``."""
        digests = [_key_digest(key) for key in keys]
        found: dict[int, Any] = {}
        with self._lock:
            self._check_open()
            if self.mode == "off":
                self.misses += len(digests)
                return found
            pending: dict[str, list[int]] = {}
            for position, digest in enumerate(digests):
                if digest in self._memory:
                    self._memory.move_to_end(digest)
                    found[position] = self._memory[digest]
                    self.memory_hits += 1
                    self._touch(digest)
                else:
                    pending.setdefault(digest, []).append(position)
            if pending and self._conn is not None:
                for digest, value in self._read_disk(list(pending)):
                    for position in pending.pop(digest):
                        found[position] = value
                        self.disk_hits += 1
                    self._remember(digest, value)
                    self._touch(digest)
            self.misses += sum(len(positions) for positions in pending.values())
            if len(self._touched) >= _TOUCH_FLUSH and self.writable and self._conn is not None:
                self._flush_touches()
        return found

    def put(self, key: Sequence[object], value: Any) -> None:
        self.put_many([(key, value)])

    def put_many(self, items: Iterable[tuple[Sequence[object], Any]]) -> None:
        """Stores every (key, value); ignored in ``replay`` and ``off`` mode."""
        rows: list[tuple[str, Any]] = [(_key_digest(key), value) for key, value in items]
        with self._lock:
            self._check_open()
            if not self.writable:
                return
            for digest, value in rows:
                self._remember(digest, value)
            if self._conn is not None:
                self._write_disk(rows)

    def clear(self) -> None:
        """Deletes every entry, in memory and on disk."""
        with self._lock:
            self._check_open()
            if self.mode == "replay":
                raise BackendError("a replay-mode cache is read-only and cannot be cleared")
            self._memory.clear()
            self.generation += 1
            self._touched.clear()
            if self._conn is not None:
                try:
                    self._conn.execute("DELETE FROM entries")
                    self._conn.execute("PRAGMA incremental_vacuum")
                except sqlite3.Error as exc:
                    raise BackendError(f"cannot clear the cache {self.path}: {exc}") from exc
            self._disk_bytes = 0

    def disk_bytes(self) -> int:
        """Bytes stored on disk (keys plus compressed values), as this process accounts them."""
        with self._lock:
            return self._disk_bytes

    def __len__(self) -> int:
        with self._lock:
            self._check_open()
            if self._conn is None:
                return len(self._memory)
            row = self._conn.execute("SELECT COUNT(*) FROM entries").fetchone()
            return int(row[0])

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {
                "memory_hits": self.memory_hits,
                "disk_hits": self.disk_hits,
                "misses": self.misses,
                "memory_entries": len(self._memory),
                "disk_bytes": self._disk_bytes,
                "evicted": self.evicted,
            }

    def close(self) -> None:
        """Flushes pending ``last_used`` updates and closes the file; idempotent."""
        with self._lock:
            if self._closed:
                return
            if self._conn is not None:
                try:
                    if self.writable and self._touched:
                        self._flush_touches()
                finally:
                    self._conn.close()
                    self._conn = None
            self._memory.clear()
            self._closed = True

    def __repr__(self) -> str:
        return f"ResultCache({self.path!r}, mode={self.mode!r})"

    def __getstate__(self) -> dict[str, Any]:
        """What a copy in another process needs: the settings, and a memory-only cache's entries (a file
        cache's copy opens the same file). Statistics start again from zero."""
        with self._lock:
            self._check_open()
            memory = list(self._memory.items()) if self._conn is None else []
            return {
                "path": self.path,
                "memory_entries": self.memory_entries,
                "max_disk_bytes": self.max_disk_bytes,
                "mode": self.mode,
                "memory": memory,
            }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(  # type: ignore[misc]
            state["path"],
            memory_entries=state["memory_entries"],
            max_disk_bytes=state["max_disk_bytes"],
            mode=state["mode"],
        )
        self._memory.update(state["memory"])

    # -- internals --------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise BackendError("the result cache is closed")

    def _open(self, path: str) -> sqlite3.Connection:
        """Opens the file; only creating it takes the write lock, so a process that only reads (or
        finds another process mid-write) never waits for one. Replay mode opens it read-only, and
        on read-only media (where SQLite cannot make its ``-shm`` file) as an immutable file."""
        try:
            if self.mode == "replay":
                if not os.path.isfile(path):
                    raise CacheMiss(f"replay cache {path} does not exist")
                writable = os.access(os.path.dirname(path), os.W_OK) and os.access(path, os.W_OK)
                conn = sqlite3.connect(
                    Path(path).as_uri() + ("?mode=ro" if writable else "?immutable=1"),
                    uri=True,
                    check_same_thread=False,
                    timeout=30.0,
                )
            else:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(path, check_same_thread=False, timeout=30.0, isolation_level=None)
                conn.execute("PRAGMA synchronous=NORMAL")
                if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'entries'").fetchone():
                    conn.execute("PRAGMA auto_vacuum=INCREMENTAL")  # takes effect only on a new file
                    conn.execute("PRAGMA journal_mode=WAL")
                    conn.execute(
                        "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value BLOB NOT NULL, "
                        "size INTEGER NOT NULL, last_used INTEGER NOT NULL)"
                    )
                    conn.execute("CREATE INDEX IF NOT EXISTS entries_last_used ON entries (last_used)")
            total, newest = conn.execute(
                "SELECT COALESCE(SUM(size), 0), COALESCE(MAX(last_used), 0) FROM entries"
            ).fetchone()
        except sqlite3.Error as exc:
            raise BackendError(f"cannot open the result cache {path}: {exc}") from exc
        self._disk_bytes = int(total)
        self._tick = int(newest)
        return conn

    def _flush_touches(self) -> None:
        """Writes pending ``last_used`` times if the write lock is free at once; they are a hint for
        eviction, so a reader never waits on (or fails because of) another process's write."""
        conn = self._conn
        assert conn is not None
        try:
            conn.execute("PRAGMA busy_timeout = 0")
            try:
                self._write_disk([])
            finally:
                conn.execute("PRAGMA busy_timeout = 30000")
        except (BackendError, sqlite3.Error):
            if len(self._touched) > 4 * _TOUCH_FLUSH:
                self._touched.clear()

    def _next_tick(self) -> int:
        self._tick = max(time.time_ns(), self._tick + 1)
        return self._tick

    def _touch(self, digest: str) -> None:
        if self._conn is not None and self.writable:
            self._touched[digest] = self._next_tick()

    def _remember(self, digest: str, value: Any) -> None:
        if self.memory_entries <= 0:
            return
        self._memory[digest] = value
        self._memory.move_to_end(digest)
        while len(self._memory) > self.memory_entries:
            self._memory.popitem(last=False)

    def _read_disk(self, digests: list[str]) -> Iterator[tuple[str, Any]]:
        assert self._conn is not None
        for offset in range(0, len(digests), _SQL_CHUNK):
            chunk = digests[offset : offset + _SQL_CHUNK]
            marks = ",".join("?" * len(chunk))
            try:
                rows = self._conn.execute(f"SELECT key, value FROM entries WHERE key IN ({marks})", chunk).fetchall()
            except sqlite3.Error as exc:
                raise BackendError(f"cannot read the result cache {self.path}: {exc}") from exc
            for digest, blob in rows:
                try:
                    value = json.loads(zlib.decompress(blob))
                except (zlib.error, ValueError):
                    continue  # a damaged row reads as a miss and is overwritten by the next put
                yield str(digest), value

    def _write_disk(self, rows: list[tuple[str, Any]]) -> None:
        """One transaction: store ``rows``, flush touched ``last_used`` values, evict past the bound."""
        conn = self._conn
        assert conn is not None
        encoded: list[tuple[str, bytes, int, int]] = []
        for digest, value in rows:
            blob = zlib.compress(
                json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("utf-8")
            )
            encoded.append((digest, blob, len(digest) + len(blob), self._next_tick()))
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for digest, blob, size, tick in encoded:
                    old = conn.execute("SELECT size FROM entries WHERE key = ?", (digest,)).fetchone()
                    if old is not None:
                        self._disk_bytes -= int(old[0])
                    conn.execute(
                        "INSERT OR REPLACE INTO entries (key, value, size, last_used) VALUES (?, ?, ?, ?)",
                        (digest, blob, size, tick),
                    )
                    self._disk_bytes += size
                    self._touched.pop(digest, None)
                if self._touched:
                    conn.executemany(
                        "UPDATE entries SET last_used = ? WHERE key = ?",
                        [(tick, digest) for digest, tick in self._touched.items()],
                    )
                    self._touched.clear()
                evicted = self._evict(conn)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            if evicted:
                conn.execute("PRAGMA incremental_vacuum")
        except sqlite3.Error as exc:
            self._disk_bytes = int(conn.execute("SELECT COALESCE(SUM(size), 0) FROM entries").fetchone()[0])
            raise BackendError(f"cannot write the result cache {self.path}: {exc}") from exc

    def _evict(self, conn: sqlite3.Connection) -> int:
        limit = self.max_disk_bytes
        if limit is None or self._disk_bytes <= limit:
            return 0
        excess = self._disk_bytes - limit
        victims: list[tuple[str]] = []
        freed = 0
        for digest, size in conn.execute("SELECT key, size FROM entries ORDER BY last_used, key"):
            if freed >= excess:
                break
            victims.append((digest,))
            freed += int(size)
        conn.executemany("DELETE FROM entries WHERE key = ?", victims)
        self._disk_bytes -= freed
        self.evicted += len(victims)
        return len(victims)
