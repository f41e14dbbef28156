"""``load_files``: build or extend an on-disk store atomically (what ``kga load`` runs).

The store at the target path is never modified in place (see :mod:`kg_adapters.store_layout`):

1. Inputs are checked first (they exist, their format is known, lenient only for line formats),
   so a bad command line never touches the store.
2. A sibling temporary directory is built: a new Oxigraph database, or, to append, a hard-link
   checkpoint of the existing one (cheap: Oxigraph's data files are immutable).
3. The files are loaded, the name index is rebuilt, the database is closed, and the manifest is
   written last; then the temporary directory is swapped in with renames.

Any exception, or Ctrl-C, deletes the temporary directory and re-raises: the target keeps its
old content, or stays absent. A process killed outright leaves only the temporary directory,
which the next load removes. A lock file beside the store (``.NAME.kga-lock``) makes a second
concurrent load into the same store fail instead of silently dropping one of the two.
"""

from __future__ import annotations

import fcntl
import gc
import os
import shutil
import sqlite3
import stat
import struct
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyoxigraph as ox
from tqdm import tqdm

from kg_adapters import store_layout
from kg_adapters.errors import BackendError, InvalidTermError, LoadError, StoreNotFound
from kg_adapters.index import build as index_build
from kg_adapters.profiles import get_profile
from kg_adapters.sparql_terms import check_lang
from kg_adapters.store_build import rebuild_label_index
from kg_adapters.store_layout import exclusive_load_lock, resolved_store
from kg_adapters.terms import INDEXED_LABEL_PREDICATES
from loaders.freebase import DumpFilter, FreebaseConverter
from loaders.indexing import IndexingSink, indexing_sink, joined_on_failure
from loaders.rdf import LINE_FORMATS, ROG_DATASET, WIKIDATA_JSON, LineConverter, TripleSink, load_file, resolve_format
from loaders.report import LoadReport, SkipLog
from loaders.rog_dataset import load_rog_dataset
from loaders.tsv import SEPARATORS, TsvConverter
from loaders.wikidata_json import load_wikidata_json


def load_files(
    paths: Sequence[str],
    store: str,
    *,
    format: str | None = None,
    lenient: bool = False,
    profile: str | None = None,
    progress: bool | None = None,
    dump_filter: DumpFilter | None = None,
    languages: Sequence[str] | None = None,
    qualifiers: bool = False,
    index: bool = True,
) -> LoadReport:
    """Loads RDF/TSV files and Wikidata JSON dumps into the on-disk store at ``store`` (created,
    or appended to).

    ``format`` applies to every file (default: guessed per file from its extension);
    ``lenient`` skips bad lines of line-based formats instead of failing; ``profile`` decides
    how TSV tokens become IRIs and is recorded in the manifest (default: ``wikidata`` when every
    file is a Wikidata JSON dump, ``names`` for RoG dataset files (``format="rog-dataset"``, see
    :mod:`loaders.rog_dataset`), else ``generic``); ``progress`` shows a tqdm bar
    (``None``: only when stderr is a terminal); ``dump_filter`` drops lines of Freebase dumps
    (``format="freebase"``, see :mod:`loaders.freebase`). For Wikidata JSON dumps, ``languages``
    limits the labels, descriptions and aliases kept (None: all) and ``qualifiers`` adds the full
    statements (see :mod:`loaders.wikidata_json`). ``index`` builds the traversal index
    (:mod:`kg_adapters.index`) into the new version before it is swapped in.

    Raises:
        LoadError: an input is missing, unreadable or malformed, or the target is not a store.
            The store at ``store`` is then exactly as before (or still absent).
    """
    started = time.perf_counter()
    target = resolved_store(store)
    files = [paths] if isinstance(paths, str) else [str(path) for path in paths]
    plan = _plan(files, format, lenient, profile or "generic")
    if dump_filter is not None and any(fmt != "freebase" for _path, fmt in plan):
        raise LoadError("language and predicate filters apply to Freebase dumps only (format freebase)")
    dumps = all(fmt == WIKIDATA_JSON for _path, fmt in plan)
    datasets = {fmt == ROG_DATASET for _path, fmt in plan}
    if datasets == {True, False}:
        raise LoadError("RoG dataset files load on their own (their ids are names): load them into another store")
    if True in datasets and (profile or "names") != "names":
        raise LoadError(f"RoG dataset files load with the names profile (ids are the file's strings), not {profile!r}")
    profile = profile or ("wikidata" if dumps else "names" if True in datasets else "generic")
    if (languages is not None or qualifiers) and not dumps:
        raise LoadError("languages and qualifiers apply to Wikidata JSON dumps (--format wikidata-json) only")
    try:
        wanted = None if languages is None else [check_lang(tag) for tag in languages]
    except InvalidTermError as exc:
        raise LoadError(f"bad language: {exc}") from exc
    wikidata = {"languages": wanted, "qualifiers": qualifiers}
    show = sys.stderr.isatty() if progress is None else progress

    with exclusive_load_lock(target):
        store_layout.remove_stale_temps(target)
        previous = _previous_manifest(target)
        if previous is not None and previous.get("profile", "generic") != profile:
            raise LoadError(
                f"the store was created with profile {previous.get('profile')!r}; "
                f"append with the same profile (--profile {previous.get('profile')})",
                file=str(target),
            )
        tmp = _temp_dir(target)
        try:
            try:
                result = _build(
                    tmp,
                    target,
                    plan,
                    previous,
                    lenient=lenient,
                    profile=profile,
                    show=show,
                    dump_filter=dump_filter,
                    wikidata=wikidata,
                    index=index,
                )
                store_layout.swap_in(tmp, target)
            except (OSError, sqlite3.Error, BackendError) as exc:  # disk full, read-only, I/O errors: any phase
                raise LoadError(f"cannot build the store: {exc}", file=str(target)) from exc
        except BaseException as exc:
            release_frames(exc)
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    statements, log, triples, filtered, repaired, index_seconds = result
    return LoadReport(
        store=str(target),
        files=tuple(files),
        statements_read=statements,
        lines_skipped=log.count,
        skipped=tuple(log.kept),
        seconds=time.perf_counter() - started,
        store_triples=triples,
        appended=previous is not None,
        lines_filtered=filtered,
        lines_repaired=repaired,
        index_seconds=index_seconds,
    )


def _input_bytes(plan: list[tuple[str, str]]) -> int | None:
    """The inputs' size on disk, None when one is not a regular file (a pipe: its size is unknown)."""
    total = 0
    for path, _fmt in plan:
        try:
            status = os.stat(path)
        except OSError:
            return None
        if not stat.S_ISREG(status.st_mode):
            return None
        total += status.st_size
    return total


def _temp_dir(target: Path) -> Path:
    try:
        return store_layout.new_temp_dir(target)
    except OSError as exc:
        raise LoadError(f"cannot create a directory beside the store: {exc}", file=str(target)) from exc


def _plan(files: list[str], format: str | None, lenient: bool, profile: str) -> list[tuple[str, str]]:
    """(path, canonical format) per input, after checking everything that can be checked early."""
    if not files:
        raise LoadError("no input files given")
    try:
        get_profile(profile)
    except InvalidTermError as exc:
        raise LoadError(str(exc)) from exc
    plan: list[tuple[str, str]] = []
    for path in files:
        if not Path(path).exists():  # pipes are fine (e.g. kga load <(zcat dump.nt.gz) --format nt)
            raise LoadError("the input does not exist", file=path)
        if Path(path).is_dir():
            raise LoadError("the input is a directory, not a file", file=path)
        if not os.access(path, os.R_OK):
            raise LoadError("the input is not readable (permission denied)", file=path)
        fmt = resolve_format(path, format)
        if lenient and fmt not in LINE_FORMATS and fmt != ROG_DATASET:
            raise LoadError(
                f"lenient loading needs a line-based format (nt, nq, tsv, metaqa), not {fmt}: "
                "a bad statement in this format cannot be skipped safely; fix the file or convert it "
                "to N-Triples",
                file=path,
            )
        plan.append((path, fmt))
    return plan


def _previous_manifest(target: Path) -> dict[str, Any] | None:
    """The manifest of the existing store, None when there is none to append to."""
    if not target.exists():
        return None
    if not target.is_dir():
        raise LoadError("the store path exists and is not a directory", file=str(target))
    try:
        return store_layout.read_manifest(target)
    except StoreNotFound as exc:
        if not any(target.iterdir()):
            return None
        raise LoadError(
            f"refusing to load into a non-empty directory that is not a complete store ({exc}); "
            "remove it or choose another path",
            file=str(target),
        ) from exc


def _build(  # noqa: C901 -- issue 23 reworks the load
    tmp: Path,
    target: Path,
    plan: list[tuple[str, str]],
    previous: dict[str, Any] | None,
    *,
    lenient: bool,
    profile: str,
    show: bool,
    dump_filter: DumpFilter | None,
    wikidata: dict[str, Any],
    index: bool,
) -> tuple[int, SkipLog, int, int, int, float]:
    """Builds the complete store in ``tmp``: data, name index, traversal index, then the manifest."""
    data = tmp / store_layout.DATA_DIR
    if previous is not None:
        oxstore = _checkpoint(store_layout.data_dir(target, previous), data)
    else:
        oxstore = ox.Store(str(data))
    sink: TripleSink = oxstore
    if index and previous is None:  # a new store: number its triples as they are loaded
        sink = indexing_sink(oxstore, get_profile(profile), _input_bytes(plan))
    log = SkipLog(lenient=lenient)
    question_ids: dict[str, str] = {}  # RoG dataset files: question ids are unique across the load
    sources: list[dict[str, Any]] = list(previous.get("sources", [])) if previous else []
    total = filtered = repaired = 0
    with (
        tqdm(unit=" triples", unit_scale=True, disable=not show, file=sys.stderr, leave=False) as bar,
        joined_on_failure(sink),
    ):

        def tick(count: int) -> None:
            bar.update(count)

        for path, fmt in plan:
            bar.set_description(Path(path).name)
            skipped_before = log.count
            converter: LineConverter | None = None
            if fmt in SEPARATORS:
                converter = TsvConverter(fmt, profile)
            elif fmt == "freebase":
                converter = FreebaseConverter(dump_filter)
            if fmt == WIKIDATA_JSON:
                count = load_wikidata_json(sink, path, log=log, progress=tick, **wikidata)
            elif fmt == ROG_DATASET:
                count = load_rog_dataset(sink, path, log=log, progress=tick, seen=question_ids)
            else:
                count = load_file(sink, path, fmt, log=log, converter=converter, progress=tick)
            total += count
            source: dict[str, Any] = {
                "file": str(Path(path).absolute()),
                "format": fmt,
                "statements": count,
                "skipped": log.count - skipped_before,
                "loaded_at": store_layout.now_iso(),
                **(wikidata if fmt == WIKIDATA_JSON else {}),
            }
            if isinstance(converter, FreebaseConverter):
                source.update(filtered=converter.filtered, repaired=converter.repaired)
                filtered += converter.filtered
                repaired += converter.repaired
            sources.append(source)
    indexing = sink if isinstance(sink, IndexingSink) else None
    del sink
    index_seconds = 0.0
    try:
        if indexing is not None:  # numbered and written while the label index is built
            indexing.start_index(tmp, get_profile(profile))
        labels = rebuild_label_index(oxstore, str(tmp / store_layout.LABELS))
        oxstore.flush()
        triples = len(oxstore)
        if indexing is not None:
            indexing.index_written()
            index_seconds = indexing.seconds  # the load's waits for it
        elif index:  # an append reads the store back: its triples are the old ones and the new
            started = time.perf_counter()
            index_build.build_index(oxstore, tmp, get_profile(profile))
            index_seconds = time.perf_counter() - started
    except BaseException as exc:
        if indexing is not None:
            indexing.abandon()  # no collector outlives a failed load
        if isinstance(exc, (OSError, sqlite3.Error, BackendError)):
            raise LoadError(f"cannot finish the store: {exc}", file=str(target)) from exc
        raise
    del oxstore, indexing
    gc.collect()  # close the database before the manifest marks it complete and it is renamed
    now = store_layout.now_iso()
    store_layout.write_manifest(
        tmp,
        {
            "profile": profile,
            "triples": triples,
            "labels": labels,
            "label_predicates": list(INDEXED_LABEL_PREDICATES),
            "sources": sources,
            "created": previous.get("created", now) if previous else now,
            "updated": now,
        },
    )
    return total, log, triples, filtered, repaired, index_seconds


def _checkpoint(existing: Path, data: Path) -> ox.Store:
    """A writable copy at ``data`` of the database at ``existing``, which is never opened for writing:
    readers may have it open, and a read-write open can compact it and delete files they still need.

    Data files (``*.sst``, immutable) are hard-linked, the rest (manifest, write-ahead log) copied;
    opening the copy replays its log, so writes made with ``add()`` are kept."""
    if _writer_holds(existing):
        raise LoadError(
            "cannot append: another process has the store open for writing (write=True)", file=str(existing.parent)
        )
    try:
        data.mkdir()
        for item in existing.iterdir():
            if item.suffix in _IMMUTABLE:
                os.link(item, data / item.name)
            elif item.name not in _PRIVATE:
                shutil.copy2(item, data / item.name)
        return ox.Store(str(data))
    except OSError as exc:
        raise LoadError(f"cannot checkpoint the existing store: {exc}", file=str(existing.parent)) from exc


_IMMUTABLE = (".sst", ".blob")
_PRIVATE = ("LOCK", "LOG")


def _writer_holds(database: Path) -> bool:
    """Whether another handle holds RocksDB's write lock on ``database`` (a write=True store).

    An open-file-description lock conflicts with RocksDB's record lock even inside this process, and
    releasing it cannot drop a record lock this process holds (closing a plain fcntl lock would)."""
    probe = getattr(fcntl, "F_OFD_SETLK", None)
    lock = database / "LOCK"
    if probe is None or not lock.exists():
        return False
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.fcntl(fd, probe, struct.pack("hhqqixxxx", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0))
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def release_frames(exc: BaseException) -> None:
    """Drops the locals of the frames an exception chain keeps alive, so the Store they hold
    closes now (and not when the caller discards the exception) before its directory is deleted."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        traceback.clear_frames(current.__traceback__)
        current = current.__cause__ or current.__context__
    gc.collect()
