"""On-disk layout of an embedded store, and the rules that keep it atomic and safe to read while loading.

A store directory holds ``kga-store.json`` (the manifest) and one or more version directories
``v-<time>-<hex>/``, each a complete snapshot: ``oxigraph/`` (the RDF data) and ``labels.sqlite`` (the
name index). The manifest names the current version (``"data"``) and is written last: a directory
without it is an interrupted load and is never opened. (Stores written before versions existed keep
``oxigraph/`` and ``labels.sqlite`` in the store directory itself; they are read the same way.)

A load builds a new version in a sibling temporary directory, moves it into the store and then
replaces the manifest with one rename: that rename is the swap. Readers never see a partial load.

Concurrent readers: a reader opens the version the manifest names and holds a shared ``flock`` on that
version's ``.kga-readers`` file for as long as it is open (:func:`open_version`). RocksDB opens its data
files lazily, so a version must not disappear under a reader: old versions are deleted only once no
reader holds them (:func:`collect_garbage` takes the lock exclusively and without waiting, and skips a
version in use; the next load retries). Nothing waits on anything: a reader never blocks a load, a load
never blocks a reader, and a reader killed with ``kill -9`` releases its lock with its process. A reader
keeps the snapshot it opened; reopening picks up the newest version.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kg_adapters.errors import LoadError, StoreNotFound

MANIFEST = "kga-store.json"
DATA_DIR = "oxigraph"
LABELS = "labels.sqlite"
TRAVERSAL = "traversal"
"""The traversal index (``kg_adapters.index``), when the version has one."""
READERS = ".kga-readers"
VERSION_PREFIX = "v-"
TRASH_PREFIX = ".kga-trash-"
FORMAT_NAME = "kga-store"
FORMAT_VERSION = 2  # 2: data in version directories; 1 (still read): data in the store directory
_OPEN_ATTEMPTS = 100  # each failed attempt means a load replaced the version while it was being opened


def version_dir(store: str | Path, manifest: dict[str, Any]) -> Path:
    """The directory holding the data of the version ``manifest`` names."""
    name = manifest.get("data")
    return Path(store) / name if isinstance(name, str) else Path(store)


def data_dir(store: str | Path, manifest: dict[str, Any]) -> Path:
    return version_dir(store, manifest) / DATA_DIR


def labels_path(store: str | Path, manifest: dict[str, Any]) -> Path:
    return version_dir(store, manifest) / LABELS


def read_manifest(store: str | Path) -> dict[str, Any]:
    """The manifest of a complete store; raises StoreNotFound for a missing or incomplete one."""
    path = Path(store)
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
    name = data.get("data")
    if name is not None and (not isinstance(name, str) or not name.startswith(VERSION_PREFIX) or "/" in name):
        raise StoreNotFound(f"{path} is not a kg-adapters store (bad version name {name!r} in {MANIFEST})")
    if data.get("format") != FORMAT_NAME or not data_dir(path, data).is_dir():
        raise StoreNotFound(f"{path} is not a kg-adapters store (bad manifest or no {DATA_DIR}/)")
    return data


def write_manifest(store: str | Path, data: dict[str, Any]) -> None:
    """Writes the manifest durably (temp file, fsync, rename): the store's completeness marker."""
    body = {"format": FORMAT_NAME, "version": FORMAT_VERSION, **data}
    write_json_durably(Path(store) / MANIFEST, body, indent=2)


def write_json_durably(path: Path, value: Any, *, indent: int | None = None) -> None:
    """Replaces the JSON file ``path`` atomically and durably: written aside (``.NAME.tmp``), synced,
    renamed over it, its directory synced; a crash leaves the old file or the new one, never a mix."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(value, handle, indent=indent, sort_keys=True)
        handle.flush()
        os.fsync(handle.fileno())
    os.rename(tmp, path)
    fsync_dir(path.parent)


def new_temp_dir(store: str | Path) -> Path:
    """A fresh sibling directory to build a store in (same file system, so renames are atomic)."""
    path = Path(store).absolute()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.kga-tmp-{os.getpid()}-{os.urandom(4).hex()}"
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
            import shutil  # not on the read path (opening a store)

            shutil.rmtree(candidate, ignore_errors=True)
            removed.append(candidate)
    return removed


def swap_in(tmp: Path, store: str | Path) -> None:
    """Makes the complete store built in ``tmp`` (data, name index, manifest) the current version of
    ``store``. The caller holds the load lock; ``store`` is a complete store, an empty directory or absent."""
    path = Path(store).absolute()
    manifest = json.loads((tmp / MANIFEST).read_text("utf-8"))
    name = f"{VERSION_PREFIX}{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{os.urandom(4).hex()}"
    (tmp / READERS).touch()
    if (path / MANIFEST).is_file():
        os.rename(tmp, path / name)
        fsync_dir(path)
        write_manifest(path, {**manifest, "data": name})  # the swap: readers opening from now on see it
        collect_garbage(path)
        return
    outer = new_temp_dir(path)
    os.rename(tmp, outer / name)
    write_manifest(outer, {**manifest, "data": name})
    if path.exists():
        path.rmdir()  # an empty directory, checked by the caller
    os.rename(outer, path)
    fsync_dir(path.parent)


class OpenVersion:
    """One version of a store, held open: its files stay until :meth:`close` (see the module doc)."""

    def __init__(self, store: Path, manifest: dict[str, Any], lock_fd: int | None) -> None:
        self.manifest = manifest
        self.directory = version_dir(store, manifest)
        self.data = data_dir(store, manifest)
        self.labels = labels_path(store, manifest)
        self._fd = lock_fd

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the shared lock
            self._fd = None


def open_version(store: str | Path) -> OpenVersion:
    """The store's current version with a reader's shared lock on it; never waits for a load.

    Raises StoreNotFound for a missing or incomplete store, or if loads kept replacing the version
    faster than it could be opened."""
    path = Path(store)
    for _ in range(_OPEN_ATTEMPTS):
        manifest = read_manifest(path)
        lock = version_dir(path, manifest) / READERS
        try:
            fd = os.open(lock, os.O_RDONLY | (0 if "data" in manifest else os.O_CREAT), 0o644)
        except FileNotFoundError:
            continue  # collected since the manifest was read: a newer version is current
        except OSError:
            return OpenVersion(path, manifest, None)  # a version-1 store on a read-only file system
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            if os.path.samestat(os.fstat(fd), os.stat(lock)) and data_dir(path, manifest).is_dir():
                return OpenVersion(path, manifest, fd)
        except OSError:  # being collected (BlockingIOError) or already moved away (FileNotFoundError)
            pass
        os.close(fd)
    raise StoreNotFound(f"{path} kept changing while it was being opened; try again")


def resolved_store(store: str | os.PathLike[str]) -> Path:
    """The store's real path (symlinks resolved), so every way of naming one store shares its lock."""
    return Path(store).expanduser().resolve()


@contextlib.contextmanager
def exclusive_load_lock(target: Path) -> Iterator[None]:
    """Holds ``.NAME.kga-lock`` beside the store (its resolved path: a symlink to it shares the
    lock); a second load into it fails fast."""
    target = resolved_store(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    lock_path = target.parent / f".{target.name}.kga-lock"
    with open(lock_path, "a+b") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LoadError("another load into this store is running", file=str(target)) from None
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def collect_garbage(store: str | Path) -> list[str]:
    """Deletes the versions of ``store`` that are not current and that no reader holds; returns their names.

    Called by loads (under the load lock). A version in use is left for a later load."""
    import shutil  # not on the read path (opening a store)

    path = Path(store)
    current = read_manifest(path).get("data")
    removed = []
    for entry in sorted(path.iterdir()):
        if entry.name.startswith(TRASH_PREFIX):
            shutil.rmtree(entry, ignore_errors=True)
        elif entry.name.startswith(VERSION_PREFIX) and entry.name != current and _claim(entry, [entry]):
            removed.append(entry.name)
    legacy = [path / DATA_DIR, path / LABELS, path / TRAVERSAL]
    if current is not None and any(p.exists() for p in legacy) and _claim(path, legacy):
        removed.append(DATA_DIR)
    return removed


def _claim(directory: Path, doomed: list[Path]) -> bool:
    """Moves ``doomed`` (the files of a version kept in ``directory``) out of the way and deletes them,
    if no reader holds the version's lock; False if one does."""
    try:
        fd = os.open(directory / READERS, os.O_RDONLY | os.O_CREAT, 0o644)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        trash = []
        for item in doomed:
            if item.exists():
                target = item.parent / f"{TRASH_PREFIX}{item.name}-{os.urandom(4).hex()}"
                os.rename(item, target)
                trash.append(target)
    finally:
        os.close(fd)
    import shutil

    for target in trash:
        if target.is_dir():
            shutil.rmtree(target, ignore_errors=True)
        else:
            target.unlink(missing_ok=True)
    return True


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


def fsync_dir(path: Path) -> None:
    """Makes the renames and new entries in directory ``path`` durable (a file's own fsync does not)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
