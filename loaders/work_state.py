"""The checkpoint database that resumable loader jobs (``kga extract``, ``kga dataset build``) keep in
their work directory: SQLite in WAL mode with ``synchronous=FULL``, so a committed transaction survives
``kill -9`` and power loss, changed only in transactions that leave it consistent. A ``meta`` table holds
JSON values by key (the job's arguments, its ``progress`` record, saved with every transaction); each
job adds its own tables (:attr:`WorkState.SCHEMA`)."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, TypeVar

STATE_FILE = "state.sqlite"
_W = TypeVar("_W", bound="WorkState")


class WorkState:
    """One job's checkpoint database at ``path``; ``progress`` is saved by every :meth:`transaction`."""

    SCHEMA: ClassVar[str] = ""
    """The job's own tables (``CREATE TABLE IF NOT EXISTS ...``)."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(str(path), isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(
            "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);" + self.SCHEMA
        )
        self.progress: dict[str, Any] = {}

    def get(self, key: str) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value: Any) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value, sort_keys=True)))

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic step; the progress record is saved with it."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.put("progress", self.progress)
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:  # SQLite has already rolled back after a full disk or I/O error
                self.db.execute("ROLLBACK")
            raise

    @classmethod
    def resume(cls: type[_W], work: Path, arguments: dict[str, Any]) -> tuple[_W | None, list[str]]:
        """The unfinished run in ``work`` when it was started with ``arguments`` (its ``runs`` counted
        up), else None and the argument keys that differ: none when there is no checkpoint, or one a
        run killed before its first commit left (deleted: nothing to keep)."""
        path = work / STATE_FILE
        if not path.is_file():
            return None, []
        state = cls(path)
        recorded = state.get("arguments")
        if recorded == arguments:
            state.progress = state.get("progress")
            state.progress["runs"] += 1
            with state.transaction():
                pass
            return state, []
        state.close()
        if recorded is None:
            remove_work_state(work)
            return None, []
        return None, sorted(key for key in arguments if recorded.get(key) != arguments[key])

    def count(self, query: str, *args: Any) -> int:
        return int(self.db.execute(query, args).fetchone()[0] or 0)

    def close(self) -> None:
        self.db.close()


def remove_work_state(work: Path) -> None:
    """Deletes the checkpoint files, and the work directory if nothing else is in it (a work directory
    the caller chose may hold other files)."""
    for name in (STATE_FILE, f"{STATE_FILE}-wal", f"{STATE_FILE}-shm", f"{STATE_FILE}-journal"):
        with contextlib.suppress(FileNotFoundError):
            (work / name).unlink()
    with contextlib.suppress(OSError):
        work.rmdir()
