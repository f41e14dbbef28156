"""Writing a traversal index's files (:func:`emit_index`: the one place they are written, whichever way
a build computed its arrays) and the build directory's life: a temporary directory renamed to
``traversal`` last (:func:`swap`), and the leftovers of killed builds removed
(:func:`remove_stale_builds`). The format is described in :mod:`kg_adapters.index`."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg_adapters import store_layout
from kg_adapters.index.layout import ARRAYS, INDEX_DIR, KEY_COLUMNS, META

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from kg_adapters.index.steps import BuildSteps

    Ints = npt.NDArray[np.int64]

TMP_PREFIX = ".traversal-tmp-"
_TRASH_PREFIX = ".traversal-old-"


@dataclass(frozen=True, kw_only=True)
class IndexStats:
    """What :func:`build_index` wrote."""

    entities: int
    relations: int
    edges: int
    literal_edges: int
    blank_edges: int
    bytes: int


def emit_index(
    directory: Path,
    tmp: Path,
    arrays: dict[str, Any],
    blobs: dict[str, Iterable[bytes]],
    relation_names: list[str],
    meta: dict[str, Any],
    rows: int,
    progress: Callable[[int], None] | None,
    steps: BuildSteps | None = None,
) -> IndexStats:
    """Writes the index files into ``tmp`` and swaps them in: the byte ``blobs`` (the entity ids in
    order, the literal values), the ``arrays`` (in memory, or memory-mapped by a spilled build), the
    sorted relation ids and ``meta`` last (its presence marks the index complete). The one place the
    files are written, whichever way the arrays were computed, in the format of
    :mod:`kg_adapters.index`: the entity ids without their namespaces (:func:`_write_entities`), each
    sorted key array (``layout.STARTS``) as its relation column (or the column, when ``arrays`` holds it),
    every array in its narrowest type (:func:`_emitted`), a block at a time; the extra-end arrays only with
    blank-node edges.
    ``progress`` counts from ``rows``, one step per file it may write (``BUILD_FILES`` in all).
    ``steps`` records each file written (``file:NAME``, :mod:`kg_adapters.index.steps`): a resumed
    build keeps those of ``tmp`` and writes the others."""
    from kg_adapters.index.layout import arrays as wanted_arrays
    from kg_adapters.index.steps import run_step

    done = rows
    wanted = wanted_arrays(meta["blank_edges"])
    if steps is not None:
        steps.plan(FILE_STEPS)
        steps.unplan(f"file:{name}" for name in ARRAYS if name not in wanted)

    def written() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done)

    def write(name: str, produce: Callable[[], Any], outputs: list[Path]) -> Any:
        return run_step(steps, f"file:{name}", produce, outputs)

    def entities() -> list[str]:
        namespaces, starts, ids = _write_entities(tmp, blobs["entities.bin"], arrays["entity_offsets"])
        _save_runs(tmp / _NAMESPACE_RUNS, starts, ids)
        return namespaces

    outputs = [tmp / "entities.bin", tmp / "entity_offsets.npy"]  # (and the namespace runs, read below)
    meta["namespaces"] = write("entities", entities, outputs)
    arrays.pop("entity_offsets")
    written()

    def literals() -> bool:
        with open(tmp / "literals.bin", "wb") as handle:
            for chunk in blobs["literals.bin"]:
                handle.write(chunk)
            _sync(handle)
        return True

    write("literals", literals, [tmp / "literals.bin"])
    written()
    columns = {column: key for key, column in KEY_COLUMNS.items()}

    def saved(name: str) -> Any:
        if name.startswith("namespace_") and name not in arrays:  # only while a namespace file is unwritten:
            # the runs file is deleted once both are, and a resumed load may have recorded them
            arrays["namespace_starts"], arrays["namespace_ids"] = _load_runs(tmp / _NAMESPACE_RUNS)
        if name in arrays:  # (a relation column the build computed itself: written as it is)
            source = arrays[name]
            return _saved(tmp / f"{name}.npy", source, *_emitted(name, source, meta, keyed=False))
        source = arrays[columns.get(name, name)]
        return _saved(tmp / f"{name}.npy", source, *_emitted(name, source, meta))

    for name in ARRAYS:  # one progress step each, written or not
        if name in wanted and name != "entity_offsets":  # (written with the ids)
            write(name, partial(saved, name), [tmp / f"{name}.npy"])
        written()
    write("relations", partial(_saved_json, tmp / "relations.json", relation_names), [tmp / "relations.json"])
    written()
    (tmp / _NAMESPACE_RUNS).unlink(missing_ok=True)

    def finish() -> dict[str, int]:
        _write_json(tmp / META, meta)  # last: its presence marks the index complete
        stats = {name: meta[name] for name in ("entities", "relations", "edges", "literal_edges", "blank_edges")}
        return {**stats, "bytes": sum(f.stat().st_size for f in tmp.iterdir())}

    stats = write("meta", finish, [tmp / META])
    written()
    swap(tmp, directory)
    return IndexStats(**stats)


def swapped_in(directory: Path, tmp: Path, steps: BuildSteps) -> IndexStats | None:
    """The stats of the index a killed build of ``steps`` had swapped in (its files all written, ``tmp``
    renamed to ``traversal``) when that is where it stopped; else None."""
    found = steps.done("file:meta")
    if found is None or tmp.exists() or not (directory / INDEX_DIR / META).exists():
        return None
    return IndexStats(**found)


FILE_STEPS = (
    "file:entities",
    "file:literals",
    *(f"file:{n}" for n in ARRAYS if n != "entity_offsets"),
    "file:relations",
    "file:meta",
)
"""The steps of :func:`emit_index` (one per file; the arrays a build has no need of are dropped)."""
_NAMESPACE_RUNS = ".namespace-runs.npy"
"""Beside the files being written: where each run of ids in one namespace starts and its namespace (what
``namespace_starts.npy`` and ``namespace_ids.npy`` are written from, kept for a resumed build)."""


def _save_runs(path: Path, starts: Ints, ids: Ints) -> None:
    import numpy as np

    with open(path, "wb") as handle:
        np.save(handle, np.stack([starts, ids]))
        _sync(handle)


def _load_runs(path: Path) -> tuple[Ints, Ints]:
    import numpy as np

    both = np.load(path)
    return both[0], both[1]


_BLOCK = 1 << 20
"""Array elements converted at a time (a spilled build's arrays are memory-mapped: never whole in memory)."""


def _emitted(name: str, source: Any, meta: dict[str, Any], *, keyed: bool = True) -> tuple[Callable[[Any], Any], str]:
    """How the array ``name`` is made from ``source`` (a block at a time) and its type on disk; a relation
    column from the sorted keys ``node * width + relation`` unless not ``keyed`` (the column itself)."""
    from kg_adapters.index.layout import COLUMNS, offset_dtype, relation_dtype, start_dtype, tag_dtype

    width = max(int(meta["relations"]), 1)
    if name in COLUMNS:
        return ((lambda block: block % width) if keyed else (lambda block: block)), relation_dtype(width)
    if name == "literal_offsets":
        return (lambda block: block), offset_dtype(int(source[-1]))
    if name == "literal_tag":
        return (lambda block: block), tag_dtype(len(meta["literal_tags"]))
    if name == "namespace_ids":
        return (lambda block: block), tag_dtype(len(meta["namespaces"]))
    if name == "namespace_starts":
        return (lambda block: block), start_dtype(int(meta["entities"]))
    if name.endswith("_start"):
        return (lambda block: block), start_dtype(int(source[-1]))
    return (lambda block: block), str(source.dtype.str)  # the other ends: int32 as computed


def _saved(path: Path, source: Any, convert: Callable[[Any], Any], dtype: str) -> bool:
    """:func:`_save`, as a step (what it records)."""
    _save(path, source, convert, dtype)
    return True


def _saved_json(path: Path, value: Any) -> bool:
    _write_json(path, value)
    return True


def _save(path: Path, source: Any, convert: Callable[[Any], Any], dtype: str) -> None:
    """Writes ``convert`` of ``source`` as a ``.npy`` file of ``dtype``, a block at a time."""
    import numpy as np

    header = {"descr": np.dtype(dtype).str, "fortran_order": False, "shape": (len(source),)}
    with open(path, "wb") as handle:  # np.save's bytes, written a block at a time
        np.lib.format.write_array_header_1_0(handle, header)
        for start in range(0, len(source), _BLOCK):
            handle.write(np.ascontiguousarray(convert(_block(source, start, _BLOCK)), dtype=dtype).data)  # (no copy)
        _sync(handle)


def _block(source: Any, start: int, count: int) -> Any:
    """``count`` values of ``source`` from ``start``; a spilled build's memory-mapped array is read from
    its file, not through the map (a map keeps every page read resident, counted in RSS)."""
    import numpy as np

    if isinstance(source, np.memmap):
        count = max(min(count, len(source) - start), 0)
        offset = int(source.offset) + start * source.itemsize
        return np.fromfile(str(source.filename), dtype=source.dtype, count=count, offset=offset)
    return np.asarray(source[start : start + count])


def _write_entities(tmp: Path, chunks: Iterable[bytes], offsets: Any) -> tuple[list[str], Ints, Ints]:
    """Writes ``entities.bin`` and ``entity_offsets.npy`` from the entity ids in order (``chunks`` of
    their concatenated UTF-8, ``offsets`` where each starts), each id without its namespace (what
    precedes its last ``/`` or ``#``), and returns (the namespaces, the first entity of each run of
    consecutive ids in one namespace, each run's namespace number). The first
    ``layout.MAX_NAMESPACES`` namespaces are stripped; ids of others are kept whole (namespace "")."""
    import numpy as np

    from kg_adapters.index.layout import MAX_NAMESPACES, offset_dtype

    count = len(offsets) - 1
    numbers: dict[bytes, int] = {}
    starts: list[int] = []
    ids: list[int] = []
    current: bytes | None = None
    dtype = offset_dtype(int(offsets[-1]))
    pending = bytearray()
    base = 0  # where ``pending`` starts in the concatenated ids
    end = 0  # where the local parts written so far end
    source = iter(chunks)
    # both written in order (pages written through a memory map would stay resident)
    with open(tmp / "entity_offsets.npy", "wb") as local_offsets, open(tmp / "entities.bin", "wb") as handle:
        header = {"descr": np.dtype(dtype).str, "fortran_order": False, "shape": (count + 1,)}
        np.lib.format.write_array_header_1_0(local_offsets, header)
        local_offsets.write(np.zeros(1, dtype=dtype).tobytes())
        for first in range(0, count, 65536):
            bounds = _block(offsets, first, min(65536, count - first) + 1).tolist()
            while base + len(pending) < bounds[-1]:
                pending += next(source)
            data = bytes(pending[bounds[0] - base : bounds[-1] - base])
            del pending[: bounds[-1] - base]
            at, base = bounds[0], bounds[-1]
            if b"/" not in data and b"#" not in data:  # ids with no namespace (Freebase's, Wikidata's): as they are
                if current != b"":
                    current = b""
                    starts.append(first)
                    ids.append(numbers.setdefault(b"", len(numbers)))
                local_offsets.write((end + np.asarray(bounds[1:], dtype=np.int64) - at).astype(dtype).tobytes())
                end += len(data)
                handle.write(data)
                continue
            parts: list[bytes] = []
            for position, (lo, hi) in enumerate(itertools.pairwise(bounds), first):
                name = data[lo - at : hi - at]
                cut = max(name.rfind(b"/"), name.rfind(b"#")) + 1
                namespace = name[:cut]
                number = numbers.get(namespace)
                if number is None:
                    if len(numbers) < MAX_NAMESPACES or not cut:
                        number = numbers[namespace] = len(numbers)
                    else:  # too many namespaces: kept whole
                        namespace, cut, number = b"", 0, numbers.setdefault(b"", len(numbers))
                if namespace != current:
                    current = namespace
                    starts.append(position)
                    ids.append(number)
                parts.append(name[cut:])
            lengths = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
            local_offsets.write((end + np.cumsum(lengths)).astype(dtype).tobytes())
            end += int(lengths.sum())
            handle.write(b"".join(parts))
        _sync(handle)
        _sync(local_offsets)
    if not starts:
        starts, ids, numbers = [0], [0], {b"": 0}
    names = [namespace.decode("utf-8") for namespace in numbers]
    return names, np.array(starts, dtype=np.int64), np.array(ids, dtype=np.int64)


def _sync(handle: Any) -> None:
    handle.flush()
    os.fsync(handle.fileno())


def _write_json(path: Path, value: Any) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(value, handle)
        _sync(handle)


def swap(tmp: Path, directory: Path) -> None:
    """Renames the finished ``tmp`` to ``traversal``; an old index is moved aside first (a reader
    with it open keeps its mapped files; one opening in between finds no index and uses Oxigraph)."""
    target = directory / INDEX_DIR
    old = None
    if target.exists():
        old = directory / f"{_TRASH_PREFIX}{os.urandom(4).hex()}"
        os.rename(target, old)
    os.rename(tmp, target)
    store_layout.fsync_dir(directory)
    if old is not None:
        import shutil

        shutil.rmtree(old, ignore_errors=True)


def resumable_tmp(directory: Path, steps: BuildSteps) -> Path:
    """The temporary directory of a build whose steps are recorded (a load's): the same for a resumed
    build, which keeps the files recorded as written; emptied when none is (a fresh build)."""
    import shutil

    tmp = directory / f"{TMP_PREFIX}resumable"  # not a process id: remove_stale_builds keeps it
    if not any(step.startswith("file:") for step in steps.finished()):
        shutil.rmtree(tmp, ignore_errors=True)
    return tmp


def remove_stale_builds(version_dir: str | os.PathLike[str]) -> None:
    """Deletes temporary directories left by index builds that were killed."""
    import shutil  # shutil and uuid are for building: opening an index imports neither

    for entry in Path(version_dir).glob(".traversal-*"):
        if entry.name.startswith(_TRASH_PREFIX):
            shutil.rmtree(entry, ignore_errors=True)
            continue
        try:
            pid = int(entry.name[len(TMP_PREFIX) :].split("-")[0])
        except ValueError:
            continue
        if pid != os.getpid() and not store_layout._process_alive(pid):
            shutil.rmtree(entry, ignore_errors=True)
