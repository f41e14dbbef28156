"""Where a load builds its new store version, and the checkpoints that let a killed load resume.

A load into ``DIR/NAME`` works in ``DIR/.NAME.kga-build/`` (a sibling of the store: same file system,
so the finished version is renamed into the store)::

    plan.json       what the load was asked to do (the inputs with their sizes and modification
                    times, the options, the store version it extends): a resumed load must be the same
    progress.json   the last checkpoint (replaced atomically): the phase, the input and line to go on
                    from, the counts so far, the traversal index collector's spool state
    version/        the store version being built (Oxigraph data, name indexes, traversal index)
    spool/          the traversal index collector's files (:mod:`kg_adapters.index.spool`), and once
                    the parse is done the index phase's finished steps (``steps.json``,
                    :mod:`kg_adapters.index.steps`) with their scratch files (``write/``)

Readers never look here: the store's manifest names its current version, which a load never writes
to. After ``kill -9`` or a power loss the directory stays; the next load with the same plan resumes
from ``progress.json`` (the Oxigraph data may already hold chunks loaded after the checkpoint: loading
them again changes nothing, a store being a set; the collector is cut back to the checkpoint, so the
indexes are exact), or, killed after the parse, goes on after the index phase's last recorded step. A
load with another plan, or a load that fails with an error, removes it.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

from kg_adapters import store_layout

PLAN = "plan.json"
PROGRESS = "progress.json"
FORMAT_VERSION = 3
"""Bumped when the build directory's files change (2: the spool's entity numbers are int64; 3: its
literal rows are blocks of columns, ``kg_adapters.index.literal_spool``): a load killed under an older
version starts over instead of resuming from files it would misread."""


class BuildDir:
    """The build directory of one store (see the module docstring)."""

    def __init__(self, store: Path) -> None:
        self.path = store.parent / f".{store.name}.kga-build"
        self.version = self.path / "version"
        self.spool = self.path / "spool"

    def open(self, plan: dict[str, Any]) -> dict[str, Any] | None:
        """The checkpoint to resume from when the directory holds one for ``plan``; otherwise the
        directory is emptied for a fresh build (and None returned)."""
        found = self._read(PLAN)
        progress = self._read(PROGRESS)
        if found == plan and progress is not None and self.version.is_dir():
            return progress
        self.remove()
        self.path.mkdir(parents=True)
        _write_json(self.path / PLAN, plan)
        return None

    def save(self, progress: dict[str, Any]) -> None:
        """Records a checkpoint durably (written aside, synced, renamed over the previous one)."""
        _write_json(self.path / PROGRESS, progress)

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)

    def _read(self, name: str) -> dict[str, Any] | None:
        try:
            found = json.loads((self.path / name).read_text("utf-8"))
        except (OSError, ValueError):
            return None
        return found if isinstance(found, dict) else None


def input_identity(path: str) -> dict[str, Any] | None:
    """What names an input's content cheaply (size and modification time), None for a pipe or a
    device (a resumed load cannot read the same bytes again from those)."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(status.st_mode):
        return None
    return {"path": str(Path(path).absolute()), "size": status.st_size, "mtime_ns": status.st_mtime_ns}


def _write_json(path: Path, value: Any) -> None:
    store_layout.write_json_durably(path, value)
