"""On-disk layout of an embedded store, and the rules that keep it atomic.

A store directory holds ``oxigraph/`` (the RDF data), ``labels.sqlite`` (the name index) and
``kga-store.json`` (the manifest). The manifest is written last: a directory without it is an
interrupted load and is never opened. Loads build a sibling temporary directory and swap it in
with renames, so readers see the old store or the new one, never a partial one.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

from kg_adapters.errors import StoreNotFound

MANIFEST = "kga-store.json"
DATA_DIR = "oxigraph"
LABELS = "labels.sqlite"
FORMAT_NAME = "kga-store"
FORMAT_VERSION = 1


def data_dir(store: str | Path) -> Path:
    return Path(store) / DATA_DIR


def labels_path(store: str | Path) -> Path:
    return Path(store) / LABELS


def _old_dir(store: Path) -> Path:
    return store.parent / f".{store.name}.kga-old"


def recover(store: str | Path) -> None:
    """Finishes a swap that a crash interrupted between its two renames."""
    path = Path(store)
    old = _old_dir(path)
    if not path.exists() and (old / MANIFEST).is_file():
        os.rename(old, path)
    elif path.exists() and (path / MANIFEST).is_file() and old.exists():
        shutil.rmtree(old, ignore_errors=True)


def read_manifest(store: str | Path) -> dict[str, Any]:
    """The manifest of a complete store; raises StoreNotFound for a missing or incomplete one."""
    path = Path(store)
    recover(path)
    if not path.is_dir():
        raise StoreNotFound(f"no store at {path}; create one with: kga load FILE --store {path}")
    manifest = path / MANIFEST
    if not manifest.is_file():
        raise StoreNotFound(
            f"{path} is not a complete kg-adapters store (no {MANIFEST}); an interrupted load leaves "
            f"no manifest: load it again with kga load FILE --store {path}"
        )
    try:
        data: dict[str, Any] = json.loads(manifest.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise StoreNotFound(f"{manifest} is unreadable: {exc}") from exc
    if data.get("format") != FORMAT_NAME or not data_dir(path).is_dir():
        raise StoreNotFound(f"{path} is not a kg-adapters store (bad manifest or no {DATA_DIR}/)")
    return data


def write_manifest(store: str | Path, data: dict[str, Any]) -> None:
    """Writes the manifest durably (temp file, fsync, rename): the store's completeness marker."""
    path = Path(store)
    body = {"format": FORMAT_NAME, "version": FORMAT_VERSION, **data}
    tmp = path / f".{MANIFEST}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(body, handle, indent=2, sort_keys=True)
        handle.flush()
        os.fsync(handle.fileno())
    os.rename(tmp, path / MANIFEST)
    _fsync_dir(path)


def new_temp_dir(store: str | Path) -> Path:
    """A fresh sibling directory to build a store in (same file system, so renames are atomic)."""
    path = Path(store).absolute()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.kga-tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    return tmp


def remove_stale_temps(store: str | Path) -> list[Path]:
    """Deletes temp directories left by loads whose process no longer runs; returns them."""
    path = Path(store).absolute()
    removed = []
    for candidate in path.parent.glob(f".{path.name}.kga-tmp-*"):
        try:
            pid = int(candidate.name.rsplit("-", 2)[-2])
        except (ValueError, IndexError):
            continue
        if not _process_alive(pid):
            shutil.rmtree(candidate, ignore_errors=True)
            removed.append(candidate)
    return removed


def swap_in(tmp: Path, store: str | Path) -> None:
    """Replaces ``store`` by the complete store built in ``tmp``."""
    path = Path(store).absolute()
    old = _old_dir(path)
    if old.exists():
        shutil.rmtree(old)
    if path.exists():
        os.rename(path, old)
        os.rename(tmp, path)
        _fsync_dir(path.parent)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(tmp, path)
        _fsync_dir(path.parent)


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
