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
import struct
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from kg_adapters import store_layout
from kg_adapters.budgets import BULK_LOAD_CEILING, LoadMemory, load_memory
from kg_adapters.errors import BackendError, InvalidTermError, LoadError, StoreNotFound
from kg_adapters.index.steps import StepEvent
from kg_adapters.profiles import get_profile
from kg_adapters.sparql_terms import check_lang
from kg_adapters.store_layout import exclusive_load_lock, resolved_store
from kg_adapters.terms import INDEXED_LABEL_PREDICATES
from loaders.checkpoints import FORMAT_VERSION, BuildDir, input_identity
from loaders.freebase import DumpFilter, FreebaseConverter
from loaders.indexing import IndexingSink, checked_memory, indexing_sink, joined_on_failure
from loaders.line_reading import LineConverter
from loaders.load_indexes import (
    IndexPlan,
    index_phase,
    index_plan,
    indexes_and_count,
    write_load_indexes,
)
from loaders.load_progress import LoadProgress
from loaders.rdf import (
    LINE_FORMATS,
    ROG_DATASET,
    WIKIDATA_JSON,
    TripleSink,
    blank_node_prefix,
    load_file,
    resolve_format,
)
from loaders.report import MAX_SKIPPED_KEPT, LoadReport, SkipLog, SkippedLine
from loaders.rog_dataset import load_rog_dataset
from loaders.store_files import open_read_only, open_store
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
    checkpoint: Checkpoint | None = None,
    memory: int | str | None = None,
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
    (:mod:`kg_adapters.index`) into the new version before it is swapped in. ``memory`` (bytes, or text
    such as ``"4G"``; default :data:`~kg_adapters.budgets.DEFAULT_MEMORY`) is the load's memory budget,
    split by :func:`kg_adapters.budgets.load_memory`: Oxigraph's bulk loads are cut to fit its share
    (``loaders.rdf``), and past theirs the index's numbering and sorting spill to disk
    (:mod:`kg_adapters.index.spill`); the store and its indexes are the same whatever the budget.

    A load killed outright (``kill -9``, a power loss) resumes when the same load runs again: from
    its last checkpoint (:data:`CHECKPOINT_SECONDS` of work at most are done again; see
    :mod:`loaders.checkpoints`), or after the parse from the last step of the index phase recorded
    (:mod:`kg_adapters.index.steps`: the name and relation indexes, the external sorts, each traversal
    file). ``checkpoint(point)`` is called as the load passes each point (``"read:N"`` as the N-th chunk
    of the parse is handed over, ``"checkpoint:N"`` after the N-th checkpoint of the parse, then
    ``"parsed"``; for each step of the index phase ``"index:STEP:started"``, ``"index:STEP:written"``
    (its files written, not yet recorded) and ``"index:STEP"`` (recorded); then ``"indexed"``,
    ``"labelled"``, ``"built"``): tests kill the load there.

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
    budget = load_memory(checked_memory(memory))
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
        indexes = index_plan(target, previous, profile, index)
        build = BuildDir(target)
        # what shapes the store: the build reads it, and a resumed load must have the same
        settings: dict[str, Any] = {"lenient": lenient, "profile": profile, "index": index, "wikidata": wikidata}
        options = {**settings, "filter": None if dump_filter is None else _filter_plan(dump_filter)}
        try:
            try:
                resumed = build.open(_fingerprint(plan, options, previous))
                result = _build(
                    build,
                    target,
                    plan,
                    previous,
                    resumed,
                    show=show,
                    dump_filter=dump_filter,
                    checkpoint=checkpoint or _no_checkpoint,
                    memory=budget,
                    indexes=indexes,
                    **settings,
                )
                store_layout.swap_in(build.version, target)
            except (OSError, sqlite3.Error, BackendError) as exc:  # disk full, read-only, I/O errors: any phase
                raise LoadError(f"cannot build the store: {exc}", file=str(target)) from exc
        except BaseException as exc:
            release_frames(exc)
            build.remove()
            raise
        build.remove()
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
        resumed=resumed is not None,
        index_source=indexes.source,
    )


Checkpoint = Callable[[str], None]
CHECKPOINT_SECONDS = 180.0
"""A load records a checkpoint after the first chunk stored this long after the previous one (and at
the end of each input): a resumed load does at most about this much work again. Strict N-Triples input
goes to Oxigraph as one bulk load per checkpoint (``loaders.rdf._Segment``): longer ones write fewer
copies of the same strings."""


def _no_checkpoint(point: str) -> None:
    return None


def _fingerprint(
    plan: list[tuple[str, str]], options: dict[str, Any], previous: dict[str, Any] | None
) -> dict[str, Any]:
    """What a resumed load must share with the killed one: the same inputs (same sizes and times),
    options and store version to extend."""
    return {
        "format": FORMAT_VERSION,
        "inputs": [{"format": fmt, "file": input_identity(path) or {"pipe": path}} for path, fmt in plan],
        "options": options,
        "previous": None if previous is None else [previous.get("data"), previous.get("updated")],
    }


def _filter_plan(dump_filter: DumpFilter) -> dict[str, Any]:
    return {
        "languages": None if dump_filter.languages is None else list(dump_filter.languages),
        "drop_predicates": sorted(dump_filter.drop_predicates),
        "drop_namespaces": list(dump_filter.drop_namespaces),
    }


def _input_bytes(plan: list[tuple[str, str]]) -> int | None:
    """The inputs' size on disk, None when one is not a regular file (a pipe: its size is unknown)."""
    identities = [input_identity(path) for path, _fmt in plan]
    return None if None in identities else sum(int(found["size"]) for found in identities if found)


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


def _build(
    build: BuildDir,
    target: Path,
    plan: list[tuple[str, str]],
    previous: dict[str, Any] | None,
    resumed: dict[str, Any] | None,
    *,
    lenient: bool,
    profile: str,
    show: bool,
    dump_filter: DumpFilter | None,
    wikidata: dict[str, Any],
    index: bool,
    checkpoint: Checkpoint,
    memory: LoadMemory,
    indexes: IndexPlan,
) -> tuple[int, SkipLog, int, int, int, float]:
    """Builds the complete store in ``build.version``: data, name index, traversal index, then the
    manifest; from the checkpoint ``resumed`` when a killed load left one."""
    tmp = build.version
    data = tmp / store_layout.DATA_DIR
    if resumed is None:
        tmp.mkdir()
        oxstore = (
            _checkpoint(store_layout.data_dir(target, previous), data, memory.store_files)
            if previous is not None
            else None
        )
    else:
        oxstore = None
    if oxstore is None:
        oxstore = open_store(data, memory.store_files)
    state = resumed or _fresh_state(previous, len(plan))
    resumable = all(input_identity(path) is not None for path, _fmt in plan)
    shown = LoadProgress(show, _input_bytes(plan), len(plan))

    def report(event: StepEvent) -> None:  # a step of the index phase (from the collector's thread or worker)
        shown.step(event)
        checkpoint(f"index:{event.step}" if event.event == "done" else f"index:{event.step}:{event.event}")

    sink: TripleSink = oxstore
    if indexes.collect:  # number its triples as they are loaded (an append's after the previous index's)
        sink = indexing_sink(
            oxstore,
            get_profile(profile),
            _input_bytes(plan),
            directory=tmp,
            spool=build.spool,
            state=state.get("index"),
            resumable=resumable,
            memory=memory.index,
            report=report,
            replay=indexes.replay,
        )
    indexing = sink if isinstance(sink, IndexingSink) else None

    def save() -> None:
        if not resumable:
            return  # a pipe cannot be read again: a killed load starts over
        if indexing is not None:
            state["index"] = indexing.checkpoint()
        build.save(state)

    with shown:
        with joined_on_failure(sink):
            if state["phase"] == "parse":
                _parse(plan, state, sink, lenient, shown, save, checkpoint, profile, dump_filter, wikidata, memory)
            else:  # resumed in its index phase: every input was read, so the bar counts the index's steps
                shown.skip(plan)
            if indexing is not None:  # the indexes come from what the load saw: the database closes at once
                _close_loaded(oxstore, indexing)
                del oxstore
            if state["phase"] == "parse":
                state["phase"] = "index"
                save()
                checkpoint("parsed")
        del sink
        shown.phase(index_phase(indexes))
        try:
            if indexing is not None:
                gc.collect()
                labels, index_seconds, triples = indexes_and_count(
                    indexing,
                    plan,
                    previous,
                    lambda: len(open_read_only(data, memory.store_files)),  # counted closed: see _close_loaded
                    tmp,
                    profile,
                    checkpoint,
                )
            else:
                labels, index_seconds, _stats = write_load_indexes(oxstore, None, tmp, profile, index, checkpoint)
                oxstore.flush()
                triples = len(oxstore)
                del oxstore
        except BaseException as exc:
            if indexing is not None:
                indexing.abandon()  # no collector outlives a failed load
            if isinstance(exc, (OSError, sqlite3.Error, BackendError)):
                raise LoadError(f"cannot finish the store: {exc}", file=str(target)) from exc
            raise
    indexing = None
    gc.collect()  # close the database before the manifest marks it complete and it is renamed
    statements, log, filtered, repaired, sources = _totals(state, lenient)
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
    checkpoint("built")
    return statements, log, triples, filtered, repaired, index_seconds


def _close_loaded(oxstore: ox.Store, indexing: IndexingSink) -> None:
    """Lets the loaded database close as soon as the bulk loads end (the caller drops the last
    reference): while it stays open, RocksDB compacts the files the bulk loads ingested in the
    background and writes them at a level Oxigraph leaves uncompressed (at 4M triples 438 to 447 MiB
    when closed after the collector's checkpoint and a count, 502 MiB after the indexes, instead of
    the 425 MiB ingested). So it closes before the checkpoint, and the caller counts it read-only,
    which compacts nothing."""
    oxstore.flush()
    indexing.release_store()


def _fresh_state(previous: dict[str, Any] | None, inputs: int) -> dict[str, Any]:
    """The progress of a load that has read nothing yet."""
    return {
        "phase": "parse",
        "inputs": [_fresh_input() for _ in range(inputs)],
        "previous_sources": list(previous.get("sources", [])) if previous else [],
        "question_ids": {},
        "index": None,
        "checkpoints": 0,
    }


def _fresh_input() -> dict[str, Any]:
    """Where one input's load stands: the next line to read, what was read before it."""
    return {
        "done": False,
        "line": 1,
        "statements": 0,
        "log": {"count": 0, "kept": []},
        "blank_prefix": blank_node_prefix(),
        "prefixes": None,
        "filtered": 0,
        "repaired": 0,
        "source": None,
    }


def _totals(state: dict[str, Any], lenient: bool) -> tuple[int, SkipLog, int, int, list[dict[str, Any]]]:
    """(statements, the skip log of all inputs in their order, filtered, repaired, manifest sources)."""
    log = SkipLog(lenient=lenient)
    for progress in state["inputs"]:
        log.count += progress["log"]["count"]
        for file, line, reason in progress["log"]["kept"]:
            if len(log.kept) < MAX_SKIPPED_KEPT:
                log.kept.append(SkippedLine(file=file, line=line, reason=reason))
    inputs = state["inputs"]
    sources = [*state["previous_sources"], *(progress["source"] for progress in inputs)]
    return (
        sum(p["statements"] for p in inputs),
        log,
        sum(p["filtered"] for p in inputs),
        sum(p["repaired"] for p in inputs),
        sources,
    )


PARALLEL_INPUTS = max(2, os.cpu_count() or 1)
"""Inputs read at once: each on a thread of its own, handing chunks to Oxigraph (which loads them on its own
threads, without the GIL) and to the traversal index collector (one chunk at a time)."""


def _parse(
    plan: list[tuple[str, str]],
    state: dict[str, Any],
    sink: TripleSink,
    lenient: bool,
    shown: LoadProgress,
    save: Callable[[], None],
    checkpoint: Checkpoint,
    profile: str,
    dump_filter: DumpFilter | None,
    wikidata: dict[str, Any],
    memory: LoadMemory,
) -> None:
    """Reads every input from where ``state`` says, several at once (RoG dataset files one after the
    other: their question ids must be unique across them), checkpointing as they go: when one is due,
    each reader stops after the chunk it is storing, the checkpoint is recorded, and all go on. The
    readers share Oxigraph's part of the budget (``memory.bulk_load``, see :func:`segment_bytes`)."""
    shown.phase("parse")
    pending = [number for number, progress in enumerate(state["inputs"]) if not progress["done"]]
    shown.skip([plan[number] for number, progress in enumerate(state["inputs"]) if progress["done"]])
    gate = _CheckpointGate(state, save, checkpoint)
    handover = _Handover(len(pending), sink.all_handed if isinstance(sink, IndexingSink) else None)
    sequential = any(plan[number][1] == ROG_DATASET for number in pending)
    readers = 1 if sequential else min(PARALLEL_INPUTS, len(pending))
    segment = segment_bytes(memory, readers)
    if readers <= 1:
        for number in pending:
            _parse_input(
                number, plan, state, sink, lenient, shown, gate, handover, profile, dump_filter, wikidata, segment
            )
        return
    queue = list(reversed(pending))
    failures: list[BaseException] = []

    def reader() -> None:
        try:
            while not gate.aborted:
                with gate.lock:
                    if not queue:
                        return
                    number = queue.pop()
                _parse_input(
                    number, plan, state, sink, lenient, shown, gate, handover, profile, dump_filter, wikidata, segment
                )
        except BaseException as exc:
            if not isinstance(exc, _Aborted):
                failures.append(exc)
            gate.abort()

    threads = [threading.Thread(target=reader, name=f"kga-load-{n}", daemon=True) for n in range(readers)]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(0.2)  # a timed join: Ctrl-C reaches this thread between waits
    except BaseException:
        gate.abort()
        for thread in threads:
            thread.join()
        raise
    if failures:
        raise failures[0]


def segment_bytes(memory: LoadMemory, readers: int) -> int | None:
    """What one reader's bulk load may hold in Oxigraph: its part of ``memory.bulk_load`` (readers load at
    once), None when that is Oxigraph's own ceiling or more (its batches bound it: long bulk loads write
    fewer files, so a segment then runs from one checkpoint to the next)."""
    share = memory.bulk_load // max(readers, 1)
    return None if share >= BULK_LOAD_CEILING else share


def _parse_input(
    number: int,
    plan: list[tuple[str, str]],
    state: dict[str, Any],
    sink: TripleSink,
    lenient: bool,
    shown: LoadProgress,
    gate: _CheckpointGate,
    handover: _Handover,
    profile: str,
    dump_filter: DumpFilter | None,
    wikidata: dict[str, Any],
    segment: int | None,
) -> None:
    """Reads one input from its recorded line on, recording its progress in ``state`` at each chunk; one
    bulk load holds at most about ``segment`` bytes in Oxigraph (None: no cap, see :func:`segment_bytes`)."""
    path, fmt = plan[number]
    progress = state["inputs"][number]
    log = SkipLog(lenient=lenient)
    log.count = progress["log"]["count"]
    log.kept = [SkippedLine(file=file, line=line, reason=reason) for file, line, reason in progress["log"]["kept"]]
    converter: LineConverter | None = None
    if fmt in SEPARATORS:
        converter = TsvConverter(fmt, profile)
    elif fmt == "freebase":
        converter = FreebaseConverter(dump_filter)
        if progress["prefixes"] is not None:
            converter.prefixes = {k.encode(): v.encode() for k, v in progress["prefixes"].items()}
        converter.filtered, converter.repaired = progress["filtered"], progress["repaired"]
    reading = _InputReading(progress, log, converter, shown, gate, path)
    shown.start_file(path)
    gate.enter()
    try:
        if fmt == WIKIDATA_JSON:
            load_wikidata_json(
                sink,
                path,
                log=log,
                progress=reading.tick,
                start_line=progress["line"],
                on_chunk=reading.chunk_done,
                on_read=reading.read,
                **wikidata,
            )
        elif fmt == ROG_DATASET:
            load_rog_dataset(sink, path, log=log, progress=reading.tick, seen=state["question_ids"])
        else:
            load_file(
                sink,
                path,
                fmt,
                log=log,
                converter=converter,
                progress=reading.tick,
                start_line=progress["line"],
                blank_prefix=progress["blank_prefix"],
                on_chunk=reading.chunk_done if fmt in LINE_FORMATS else None,
                on_read=reading.read,
                due=gate.due,
                on_handed=handover.input_handed,
                segment_bytes=segment,
            )
        reading.record(None)
        source: dict[str, Any] = {
            "file": str(Path(path).absolute()),
            "format": fmt,
            "statements": progress["statements"],
            "skipped": log.count,
            "loaded_at": store_layout.now_iso(),
            **(wikidata if fmt == WIKIDATA_JSON else {}),
        }
        if isinstance(converter, FreebaseConverter):
            source.update(filtered=converter.filtered, repaired=converter.repaired)
        progress["source"], progress["done"] = source, True
        shown.end_file(path)
    finally:
        gate.leave()


class _InputReading:
    """One input's counts, and its stops at the checkpoint gate after each stored chunk."""

    def __init__(
        self,
        progress: dict[str, Any],
        log: SkipLog,
        converter: LineConverter | None,
        shown: LoadProgress,
        gate: _CheckpointGate,
        path: str,
    ) -> None:
        self.progress, self.log, self.converter = progress, log, converter
        self.shown, self.gate, self.path = shown, gate, path
        self._statements = progress["statements"]

    def tick(self, count: int) -> None:
        self._statements += count
        self.shown.triples(count)

    def record(self, next_line: int | None) -> None:
        """Writes what was read up to ``next_line`` (None: the whole input) into the input's progress."""
        progress = self.progress
        if next_line is not None:
            progress["line"] = next_line
        progress["statements"] = self._statements
        progress["log"] = {"count": self.log.count, "kept": [[k.file, k.line, k.reason] for k in self.log.kept]}
        converter = self.converter
        if isinstance(converter, FreebaseConverter):
            progress["prefixes"] = {k.decode(): v.decode() for k, v in converter.prefixes.items()}
            progress["filtered"], progress["repaired"] = converter.filtered, converter.repaired

    def read(self, read: int | None) -> None:
        """A chunk was read (and handed to Oxigraph, or to its stream): the progress moves on, and the
        test hook sees ``read:N`` (the N-th chunk of the load; tests kill a load in mid-stream there)."""
        self.shown.read(self.path, read)
        self.gate.chunk_read()

    def chunk_done(self, next_line: int, read: int | None) -> None:
        self.shown.read(self.path, read)
        self.gate.stop(lambda: self.record(next_line))


class _Handover:
    """Counts the inputs wholly handed to the store (Oxigraph may still be storing the last of them); when
    the last is, ``all_handed()`` is called (:meth:`loaders.indexing.IndexingSink.all_handed`: the indexes
    are written beside Oxigraph's last batches). Inputs read otherwise (Wikidata JSON, RoG datasets) never
    count: their indexes start once the store is closed."""

    def __init__(self, inputs: int, all_handed: Callable[[], None] | None) -> None:
        self._left, self._all_handed = inputs, all_handed
        self._lock = threading.Lock()

    def input_handed(self) -> None:
        with self._lock:
            self._left -= 1
            if self._left or self._all_handed is None:
                return
        self._all_handed()


class _Aborted(Exception):
    """Another input's reader failed: this one stops at its next chunk."""


class _CheckpointGate:
    """Where readers of several inputs meet for a checkpoint: a reader that finds one due (or one
    asked for) records its position and waits; the last of the active readers to arrive records the
    checkpoint and lets all go on. Inputs also end with a checkpoint."""

    def __init__(self, state: dict[str, Any], save: Callable[[], None], checkpoint: Checkpoint) -> None:
        self.state, self.save, self.checkpoint = state, save, checkpoint
        self.lock = threading.Lock()
        self._changed = threading.Condition(self.lock)
        self._active = self._waiting = self._round = 0
        self._asked = False
        self._last = time.monotonic()
        self.aborted = False
        self._chunks_read = 0

    def enter(self) -> None:
        with self.lock:
            while self._asked and not self.aborted:  # a checkpoint is being gathered: start after it
                self._changed.wait()
            self._active += 1

    def leave(self) -> None:
        with self.lock:
            self._active -= 1
            if not self.aborted:
                self._asked = True  # an input's end is a checkpoint
                self._arrive_or_record()

    def chunk_read(self) -> None:
        with self.lock:
            self._chunks_read += 1
            number = self._chunks_read
        self.checkpoint(f"read:{number}")

    def due(self) -> bool:
        """Whether readers should stop at their next chunk: a checkpoint is asked for or due (an input
        read as one stream ends it there, see ``loaders.rdf._Segment``), or the load is stopping."""
        return self._asked or self.aborted or time.monotonic() - self._last >= CHECKPOINT_SECONDS

    def stop(self, record: Callable[[], None]) -> None:
        with self.lock:
            if self.aborted:
                raise _Aborted
            if not self.due():
                return
            self._asked = True
            record()
            self._waiting += 1
            round_number = self._round
            self._arrive_or_record()
            while self._round == round_number and not self.aborted:
                self._changed.wait()
            if self.aborted:
                raise _Aborted

    def _arrive_or_record(self) -> None:
        """Records the checkpoint once every active reader waits (the lock is held)."""
        if self._waiting < self._active:
            return
        self.state["checkpoints"] += 1
        self.save()
        self.checkpoint(f"checkpoint:{self.state['checkpoints']}")
        self._asked = False
        self._waiting = 0
        self._round += 1
        self._last = time.monotonic()
        self._changed.notify_all()

    def abort(self) -> None:
        with self.lock:
            self.aborted = True
            self._changed.notify_all()


def _checkpoint(existing: Path, data: Path, files: int) -> ox.Store:
    """A writable copy at ``data`` of the database at ``existing``, which is never opened for writing:
    readers may have it open, and a read-write open can compact it and delete files they still need.

    Data files (``*.sst``, immutable) are hard-linked, the rest (manifest, write-ahead log) copied;
    opening the copy replays its log, so writes made with ``add()`` are kept. It keeps at most about
    ``files`` data files open (:mod:`loaders.store_files`)."""
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
        return open_store(data, files)
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
