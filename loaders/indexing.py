"""``index_store``: add (or rebuild) the traversal index of an existing store (``kga index``).

Stores built by ``kga load`` and ``kga extract`` get their index before the manifest swap; this adds
one to a store built without it (``--no-index``, or by an older version). The index is written into
the current version directory under the store's load lock and appears with one rename, so readers
see either no index (and answer through Oxigraph) or the whole index; a build killed midway leaves
only a temporary directory, which the next build removes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from kg_adapters.budgets import DEFAULT_MEMORY
from kg_adapters.commands import Command, emit
from kg_adapters.errors import BackendError, LoadError, error_named
from kg_adapters.rdf_guard import PARSER_BUFFER

if TYPE_CHECKING:
    import pyoxigraph as ox

    from kg_adapters.index.build import TripleCollector
    from kg_adapters.index.emit import IndexStats
    from kg_adapters.index.spool import CollectorSpool
    from kg_adapters.index.steps import BuildSteps, StepReport
    from kg_adapters.profiles import Profile

NameRows = list[tuple[str, str, str]]
CollectedNames = tuple[Iterable[tuple[str, str, str]], NameRows, list[str]]
"""(label rows, relation alias rows, predicates) of a load: (subject IRI, text, language or "") rows; the
label rows are read once, as they come (a spilled collection streams them from disk)."""
_COLLECT_EVERY = 10_000
"""Quads passed to Oxigraph's ``bulk_extend`` between two handings to the collector."""
WORKER_MIN_BYTES = 1 << 20
"""Loads of at least this much input (or of input of unknown size, such as a pipe) number their
triples in a worker process (:mod:`loaders.index_worker`); smaller ones on a thread, since starting
the worker (an interpreter and its imports) takes ~0.3 s, longer than such a load."""
_ANSWER_CAP = 1 << 20
"""The most bytes read of one of the worker's answer lines."""
_LONGEST_STATEMENT = PARSER_BUFFER // 2
"""Longest N-Quads statement handed to the worker as text (its parser holds a token of up to
:data:`~kg_adapters.rdf_guard.PARSER_BUFFER` bytes); a chunk with a longer one goes pickled."""
_FRAMES_AHEAD = 2
"""Chunks that may wait for the worker beside the one it numbers (~31 MiB each, see
``loaders.rdf.CHUNK_BYTES``): Oxigraph's parser goes on reading while the worker catches up."""


class IndexingSink:
    """A store being loaded that also hands every triple written to a
    :class:`~kg_adapters.index.build.TripleCollector`, so the load writes the traversal, name and
    relation indexes without reading the store back. A triple is handed over once Oxigraph has taken
    it: a chunk that fails is not, and whatever a lenient load adds again is dropped as a duplicate.

    The collector numbers a chunk while Oxigraph loads the next one, one chunk at a time and in the
    order given, so the indexes are those a collector fed in the load's own thread would write: on a
    thread (:class:`ThreadIndexingSink`) or in a worker process (:class:`WorkerIndexingSink`).

    :meth:`start_index` has the indexes written into the version ``directory``; the load calls
    :meth:`all_handed` as soon as every input has been handed over, so that they are written while
    Oxigraph still encodes and stores its last batches (about half of its work on a 1M-triple dump, on
    one core), not after. :meth:`indexes_written` waits for them. ``resumable``: the collector's spool is
    saved when the writing starts (the load's last checkpoint reads that state, see :meth:`checkpoint`),
    and each step of the writing is recorded as it finishes, so that a killed load resumed from that
    state goes on after the last one (:class:`kg_adapters.index.steps.BuildSteps`); ``report`` is told
    of the steps.
    ``seconds`` is the time the load waited for the collector (what alone would hide its cost to the
    load: benchmarks compare loads with and without the index)."""

    def __init__(
        self, store: ox.Store, directory: Path, profile: Profile, *, resumable: bool, report: StepReport | None = None
    ) -> None:
        self.store = store
        self.directory, self.profile, self.resumable = directory, profile, resumable
        self.report = report
        """Told of each step of the writing (:mod:`kg_adapters.index.steps`) as it starts and finishes."""
        self.seconds = 0.0
        self._collecting = threading.Lock()
        """Held while a chunk is handed to the collector (inputs read on several threads take turns),
        and while the collector is asked for a checkpoint or to write."""
        self._started = False

    def bulk_load(self, input: bytes, format: ox.RdfFormat) -> None:
        self.store.bulk_load(input, format)  # several threads may load at once (Oxigraph runs without the GIL)
        with self._collecting:
            self._add_rdf(input, format)

    def bulk_load_pieces(self, texts: Iterator[bytes]) -> None:
        """Bulk loads N-Triples ``texts`` as one stream (:func:`loaders.rdf.bulk_load_texts`), each handed to
        the collector as it is handed to Oxigraph (it numbers one while Oxigraph parses it). A text Oxigraph then
        refuses fails the load (it is strict) before the collector's numbers are used: see
        ``TripleCollector.add_rdf``."""
        import pyoxigraph as ox

        from loaders.rdf import bulk_load_texts

        def handed() -> Iterator[bytes]:
            for text in texts:
                if text != b"\n":  # not the line break between two texts
                    with self._collecting:
                        self._add_rdf(text, ox.RdfFormat.N_TRIPLES)
                yield text

        bulk_load_texts(self.store, handed())

    def contains_named_graph(self, graph_name: ox.NamedNode) -> bool:
        return self.store.contains_named_graph(graph_name)

    def release_store(self) -> None:
        """Drops the sink's reference to the store (the load closes it before writing the indexes)."""
        del self.store

    def bulk_extend(self, quads: Iterable[ox.Quad]) -> None:
        batch: list[ox.Quad] = []

        def passing() -> Iterator[ox.Quad]:
            for quad in quads:
                yield quad
                batch.append(quad)
                if len(batch) >= _COLLECT_EVERY:
                    with self._collecting:
                        self._add_quads(batch.copy())
                    batch.clear()

        self.store.bulk_extend(passing())
        with self._collecting:
            self._add_quads(batch)

    def all_handed(self) -> None:
        """Every input has been handed over (Oxigraph may still be storing the last of it): the indexes
        start now (see :meth:`start_index`). A load that then fails abandons them with the rest."""
        self.start_index()

    def start_index(self) -> None:
        """Starts writing the traversal index, then the name and relation indexes, of every triple
        handed over into the version directory (once: a second call does nothing)."""
        with self._collecting:
            if not self._started:
                self._started = True
                self._start_writing()

    def checkpoint(self) -> dict[str, Any]:
        """Saves every triple handed over so far to the spool (synced) and returns its state, from
        which a load resumed after a crash starts (see :class:`kg_adapters.index.spool.CollectorSpool`);
        once the writing has started, the state saved then (nothing was handed over since)."""
        with self._collecting:
            return self._final_state() if self._started else self._checkpoint()

    def indexes_written(self) -> tuple[int, IndexStats]:
        """Waits for the indexes :meth:`start_index` started: (names written, the traversal index's
        stats); raises what writing them raised."""
        raise NotImplementedError

    def abandon(self) -> None:
        """Stops the collector without raising (a load that failed: nothing outlives it)."""
        raise NotImplementedError

    def _add_rdf(self, data: bytes, format: ox.RdfFormat) -> None:
        raise NotImplementedError

    def _add_quads(self, quads: list[ox.Quad]) -> None:
        raise NotImplementedError

    def _start_writing(self) -> None:
        raise NotImplementedError

    def _checkpoint(self) -> dict[str, Any]:
        raise NotImplementedError

    def _final_state(self) -> dict[str, Any]:
        raise NotImplementedError


def indexing_sink(
    store: ox.Store,
    profile: Profile,
    input_bytes: int | None,
    *,
    directory: Path,
    spool: Path,
    state: dict[str, Any] | None = None,
    resumable: bool = True,
    memory: int = DEFAULT_MEMORY,
    report: StepReport | None = None,
    replay: Path | None = None,
) -> IndexingSink:
    """The sink for a new store's load into the version ``directory``: a worker process when the input
    is large (``input_bytes`` at least :data:`WORKER_MIN_BYTES`, or None: unknown) and the profile is
    one of the package's (the worker finds it by name), else a thread (also when no worker can be
    started). The collector keeps its checkpoints in ``spool`` and starts from ``state`` (a checkpoint
    of a killed load); ``resumable``: see :class:`IndexingSink`; ``memory`` is its budget in bytes (past
    it, it spills to ``spool``: :mod:`kg_adapters.index.spill`); ``report``: see :class:`IndexingSink`.
    ``replay``: the store version whose traversal index a fresh collector is given first (an append's
    previous version, :mod:`kg_adapters.index.replay`; a resumed one has it in its checkpoint)."""
    from kg_adapters.index.build import TripleCollector
    from kg_adapters.index.spool import CollectorSpool
    from kg_adapters.profiles import PROFILES

    large = input_bytes is None or input_bytes >= WORKER_MIN_BYTES
    if large and PROFILES.get(profile.name) is type(profile) and type(profile).__module__.startswith("kg_adapters."):
        try:
            return WorkerIndexingSink(
                store,
                directory,
                profile,
                spool,
                state,
                memory,
                resumable=resumable,
                report=report,
                replay=replay,
            )
        except OSError:
            pass  # no interpreter to start (an embedded Python): the thread numbers them
    collector = TripleCollector()
    saved = CollectorSpool(spool, memory=memory)
    saved.restore(collector, state)
    if replay is not None and state is None:
        from kg_adapters.index.replay import replay_into

        replay_into(collector, replay, profile)
    return ThreadIndexingSink(store, directory, profile, collector, saved, resumable=resumable, report=report)


def write_indexes(
    collector: TripleCollector,
    directory: str | os.PathLike[str],
    profile: Profile,
    steps: BuildSteps | None = None,
) -> tuple[int, IndexStats]:
    """Writes the traversal index, and beside it on a thread the name and relation indexes, of what
    ``collector`` holds into the version ``directory``; returns (names written, the traversal index's
    stats). Both spend much of their time outside the GIL (numpy's sorts, SQLite's inserts and full-text
    index): once Oxigraph is done, they take both cores. The rows of the name and relation indexes are
    taken first (the index build may let go of the collector's rows); a spilled collection's, read from
    its files as they come, are all written before the index is (their sort takes the budget's share
    the index's steps take after it), and only indexed inside SQLite beside it
    (:func:`~kg_adapters.store_build.begin_label_indexes`). ``steps`` records each step as it
    finishes (``names``, ``traversal`` and the traversal index's own): a load killed among them goes on
    after the last one recorded (:mod:`kg_adapters.index.steps`)."""
    from kg_adapters import store_layout
    from kg_adapters.index.build import build_index
    from kg_adapters.index.emit import FILE_STEPS, IndexStats
    from kg_adapters.index.steps import run_step
    from kg_adapters.relation_index import RELATIONS_FILE
    from kg_adapters.store_build import begin_collected_label_indexes, collected_label_indexes

    directory = Path(directory)
    index_path = directory / store_layout.LABELS
    name_files = [index_path, index_path.with_name(RELATIONS_FILE)]
    if steps is not None:
        spilled_steps = () if collector._spilled is None else collector._spilled.STEPS
        steps.plan(["names", *spilled_steps, *FILE_STEPS, "traversal"])

    def traversal() -> dict[str, int]:
        return asdict(build_index(None, directory, profile, collected=collector, steps=steps))

    def indexed() -> IndexStats:
        return IndexStats(**run_step(steps, "traversal", traversal, [directory / store_layout.TRAVERSAL]))

    named = None if steps is None else steps.done("names")
    if named is not None and all(path.exists() for path in name_files):  # written before a kill
        return int(named), indexed()
    rows = [_collected_labels(collector)]
    names: Callable[[], int]
    if isinstance(rows[0][0], list):  # held in memory: read and written beside the index

        def written() -> int:
            labels, aliases, relations = rows.pop()  # held by this frame alone: freed once written
            return collected_label_indexes(labels, aliases, relations, str(index_path))

        def names() -> int:
            return run_step(steps, "names", written, name_files)

    else:  # read from the spill's files as they come, before the index (with a sort's share of the budget);
        # then indexed inside SQLite (a few MiB, no row held) beside it
        if steps is not None:
            steps.start("names")
        count, finish = begin_collected_label_indexes(*rows.pop(), str(index_path))

        def names() -> int:
            finish()
            if steps is not None:
                steps.record("names", count, synced=name_files)
            return count

    outcome = _Outcome()
    writing = threading.Thread(target=_run, args=(names, (), outcome), name="kga-names", daemon=True)
    writing.start()
    try:
        stats = indexed()
    finally:
        writing.join()
    if outcome.failure is not None:
        raise outcome.failure
    return int(outcome.result), stats


class ThreadIndexingSink(IndexingSink):
    """Numbers each chunk on a worker thread while Oxigraph loads the next (``bulk_load`` releases
    the GIL while it parses and writes)."""

    def __init__(
        self,
        store: ox.Store,
        directory: Path,
        profile: Profile,
        collector: TripleCollector,
        spool: CollectorSpool,
        *,
        resumable: bool,
        report: StepReport | None = None,
    ) -> None:
        super().__init__(store, directory, profile, resumable=resumable, report=report)
        self.collector = collector
        self.spool = spool
        self._pending: threading.Thread | None = None
        self._outcome = _Outcome()
        self._state: dict[str, Any] = {}

    def _add_rdf(self, data: bytes, format: ox.RdfFormat) -> None:
        self._hand_over(self.collector.add_rdf, data, format)

    def _add_quads(self, quads: list[ox.Quad]) -> None:
        self._hand_over(self.collector.add_quads, quads)

    def _start_writing(self) -> None:
        from kg_adapters.index.steps import STEPS_FILE, BuildSteps

        self._wait()
        if self.resumable:
            self._state = self.spool.save(self.collector, keep=True)
        spool, directory, profile = self.spool, self.directory, self.profile
        steps = BuildSteps(spool.directory / STEPS_FILE if self.resumable else None, self._state, self.report)

        def write(collector: TripleCollector) -> tuple[int, IndexStats]:
            spool.reload(collector, steps)
            return write_indexes(collector, directory, profile, steps)

        self._hand_over(write, self.collector)

    def _checkpoint(self) -> dict[str, Any]:
        self._wait()
        return self.spool.save(self.collector)

    def _final_state(self) -> dict[str, Any]:
        return self._state

    def indexes_written(self) -> tuple[int, IndexStats]:
        self._wait()
        written, self._outcome.result = self._outcome.result, None
        if written is None:
            raise RuntimeError("indexes_written() before start_index()")
        return cast("tuple[int, IndexStats]", written)

    def abandon(self) -> None:
        if self._pending is not None:
            self._pending.join()
            self._pending = None

    def _hand_over(self, add: Callable[..., Any], *arguments: Any) -> None:
        """Starts ``add(*arguments)`` on a worker thread once the previous one is done (at most one
        chunk waits in memory, and the collector is never used by two threads at once). The thread
        holds the collector, not this sink: a failed load's store closes as soon as the load lets go."""
        self._wait()
        worker = threading.Thread(target=_run, args=(add, arguments, self._outcome), name="kga-index", daemon=True)
        worker.start()
        self._pending = worker

    def _wait(self) -> None:
        if self._pending is not None:
            started = time.perf_counter()
            self._pending.join()
            self._pending = None
            self.seconds += time.perf_counter() - started
        if self._outcome.failure is not None:
            failure, self._outcome.failure = self._outcome.failure, None
            raise failure


class WorkerIndexingSink(IndexingSink):
    """Hands each chunk to a worker process (:mod:`loaders.index_worker`) over a pipe: the numbering
    and the writing of the indexes run beside the load instead of taking turns with it for the GIL.
    Frames go to the worker from a thread of their own, up to :data:`_FRAMES_AHEAD` chunks ahead of
    it, so Oxigraph's parser does not wait for each chunk's numbering. A worker that fails or dies
    fails the load with :class:`BackendError` (the store is then left as it was)."""

    def __init__(
        self,
        store: ox.Store,
        directory: Path,
        profile: Profile,
        spool: Path,
        state: dict[str, Any] | None,
        memory: int = DEFAULT_MEMORY,
        *,
        resumable: bool = True,
        report: StepReport | None = None,
        replay: Path | None = None,
    ) -> None:
        super().__init__(store, directory, profile, resumable=resumable, report=report)
        spool.mkdir(parents=True, exist_ok=True)
        resume = spool.parent / f"{spool.name}.resume.json"
        resume.write_text(json.dumps(state), encoding="utf-8")
        self._state: dict[str, Any] | None = None
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "loaders.index_worker",
                str(os.getpid()),
                str(spool),
                str(resume),
                str(memory),
                *([] if replay is None else [str(replay), profile.name]),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # failures come back as the answer
            env=_worker_environment(),
        )
        assert self._process.stdin is not None
        _widen_pipe(self._process.stdin)
        self._frames = _FrameWriter(self._process.stdin)

    def _add_rdf(self, data: bytes, format: ox.RdfFormat) -> None:
        from loaders.index_worker import RDF

        self._send(RDF, format.media_type.encode(), data)

    def _add_quads(self, quads: list[ox.Quad]) -> None:
        import pyoxigraph as ox

        from loaders.index_worker import OBJECTS, QUADS

        if not quads:
            return
        data = ox.serialize(quads, format=ox.RdfFormat.N_QUADS) or b""
        if len(data) > _LONGEST_STATEMENT and max(map(len, data.split(b"\n"))) > _LONGEST_STATEMENT:
            import pickle  # a statement the worker's N-Quads parser could not hold: the objects themselves

            self._send(OBJECTS, b"", pickle.dumps(quads))
        else:
            self._send(QUADS, b"", data)

    def _start_writing(self) -> None:
        from loaders.index_worker import WRITE

        request = {"directory": str(self.directory), "profile": self.profile.name, "save": self.resumable}
        self._send(WRITE, json.dumps(request).encode(), b"")
        self._frames.close()

    def _checkpoint(self) -> dict[str, Any]:
        from loaders.index_worker import CHECKPOINT

        self._send(CHECKPOINT, b"", b"")
        return self._saved_state()

    def _final_state(self) -> dict[str, Any]:
        if self._state is None:
            self._state = self._saved_state()
        return self._state

    def _saved_state(self) -> dict[str, Any]:
        started = time.perf_counter()
        answer = self._reply()
        self.seconds += time.perf_counter() - started
        if "state" not in answer:
            self.abandon()
            raise _failure(answer, self._process.returncode)
        state: dict[str, Any] = answer["state"]
        return state

    def indexes_written(self) -> tuple[int, IndexStats]:
        from kg_adapters.index.emit import IndexStats

        if self.resumable:
            with self._collecting:
                self._final_state()  # the state answered first (the load's last checkpoint took it, or not)
        from kg_adapters.index.steps import StepEvent

        started = time.perf_counter()
        answer = self._reply()
        while isinstance(answer.get("step"), dict):  # a step of the writing, before the last answer
            if self.report is not None:
                self.report(StepEvent(**answer["step"]))
            answer = self._reply()
        self.seconds += time.perf_counter() - started
        self.abandon()  # it has answered (or died): reap it
        if "stats" not in answer:
            raise _failure(answer, self._process.returncode)
        return int(answer["labels"]), IndexStats(**answer["stats"])

    def abandon(self) -> None:
        process = self._process
        if process.poll() is None:
            process.kill()  # also once it has answered: it is only exiting
        self._frames.close()
        self._frames.join()
        if process.stdout is not None:
            with contextlib.suppress(OSError):
                process.stdout.close()
        process.wait()

    def _send(self, kind: bytes, text: bytes, data: bytes) -> None:
        from loaders.index_worker import HEADER

        started = time.perf_counter()
        try:
            self._frames.put(HEADER.pack(kind, len(text), len(data)), text, data)
        except OSError as exc:  # the worker is gone: its answer says why
            answer = self._reply()
            self.abandon()
            raise _failure(answer, self._process.returncode) from exc
        finally:
            self.seconds += time.perf_counter() - started

    def _reply(self) -> dict[str, Any]:
        """The worker's next answer line, parsed (empty when it has none)."""
        stdout = self._process.stdout
        assert stdout is not None
        try:
            line = stdout.readline(_ANSWER_CAP)
        except (OSError, ValueError):  # closed by abandon()
            line = b""
        try:
            answer = json.loads(line) if line else {}
        except ValueError:
            answer = {}
        return answer if isinstance(answer, dict) else {}


class _FrameWriter:
    """Writes frames to the worker's standard input on a thread of its own, at most
    :data:`_FRAMES_AHEAD` waiting: :meth:`put` returns as soon as a frame is queued. A write that fails
    (the worker is gone) is raised by the next :meth:`put`; later frames are dropped."""

    def __init__(self, stdin: IO[bytes]) -> None:
        import queue

        self._stdin = stdin
        self._queue: queue.Queue[tuple[bytes, ...] | None] = queue.Queue(maxsize=_FRAMES_AHEAD)
        self._failure: OSError | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._write, name="kga-index-frames", daemon=True)
        self._thread.start()

    def put(self, *parts: bytes) -> None:
        if self._failure is not None:
            raise self._failure
        if self._closed:
            raise OSError("the worker's input is closed")
        self._queue.put(parts)

    def close(self) -> None:
        """No more frames: the worker's input is closed once the queued ones are written."""
        if not self._closed:
            self._closed = True
            self._queue.put(None)

    def join(self) -> None:
        self._thread.join()

    def _write(self) -> None:
        while True:
            frame = self._queue.get()
            if frame is None:
                break
            if self._failure is not None:
                continue  # the worker is gone: drop what is left
            try:
                for part in frame:
                    self._stdin.write(part)
                self._stdin.flush()
            except (OSError, ValueError) as exc:
                self._failure = exc if isinstance(exc, OSError) else OSError(str(exc))
        with contextlib.suppress(OSError, ValueError):
            self._stdin.close()


def _widen_pipe(stream: IO[bytes]) -> None:
    """Asks for a 1 MiB pipe to the worker (Linux; 64 KiB by default): a 32 MiB chunk then crosses in 32
    writes, not 512, each waking the worker up."""
    from loaders.piped import widen_pipe

    widen_pipe(stream.fileno())


def _failure(answer: dict[str, Any], status: int | None) -> BackendError:
    error = answer.get("error")
    if isinstance(error, dict):
        message = f"the traversal index worker failed: {error.get('type')}: {error.get('message')}"
        return cast(BackendError, error_named(error.get("type"), message, within=BackendError))  # kept typed
    return BackendError(f"the traversal index worker stopped without an answer (exit status {status})")


def _worker_environment() -> dict[str, str]:
    """This environment, with the directories this process imports ``kg_adapters`` and ``loaders``
    from first on the worker's path (it must number with the same code), and without the working
    directory ``python -m`` puts before them (``PYTHONSAFEPATH``, Python 3.11+): a load run from another
    checkout's directory would otherwise start that checkout's worker."""
    import kg_adapters
    import loaders

    roots = [str(Path(module.__file__ or "").resolve().parent.parent) for module in (kg_adapters, loaders)]
    environment = dict(os.environ)
    inherited = environment.get("PYTHONPATH")
    environment["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([*roots, *([inherited] if inherited else [])]))
    environment["PYTHONSAFEPATH"] = "1"
    return environment


def _collected_labels(collector: TripleCollector) -> CollectedNames:
    from kg_adapters.relation_index import ALIAS_PREDICATES, label_subjects
    from kg_adapters.terms import INDEXED_LABEL_PREDICATES

    relations = collector.relation_iris()
    naming = {subject for relation in relations for subject in label_subjects(relation)}
    aliases = [row for row in collector.label_rows(ALIAS_PREDICATES) if row[0] in naming]
    return collector.label_rows(INDEXED_LABEL_PREDICATES), aliases, relations


@contextlib.contextmanager
def joined_on_failure(sink: object) -> Iterator[None]:
    """Stops the collector of ``sink`` (when it is an :class:`IndexingSink`) if the block fails."""
    try:
        yield
    except BaseException:
        if isinstance(sink, IndexingSink):
            sink.abandon()
        raise


@dataclass
class _Outcome:
    """What the collector's worker threads report back: what one raised, what the last returned."""

    failure: BaseException | None = None
    result: Any = None


def _run(add: Callable[..., Any], arguments: tuple[Any, ...], outcome: _Outcome) -> None:
    try:
        outcome.result = add(*arguments)
    except BaseException as exc:  # re-raised in the load's thread by ThreadIndexingSink._wait
        outcome.failure = exc


def index_store(
    store: str,
    *,
    progress: Callable[[int], None] | None = None,
    every: int = 100_000,
    memory: int | str | None = None,
) -> IndexStats:
    """Builds the traversal index of the store at ``store`` (replacing an existing one). ``memory`` (bytes,
    or text such as ``"4G"``: :func:`kg_adapters.budgets.memory_bytes`; default
    :data:`~kg_adapters.budgets.DEFAULT_MEMORY`) is what the store's triples read back may hold in memory
    before they spill to disk (:mod:`kg_adapters.index.spill`; the files are the same).

    Raises:
        StoreNotFound: no complete store there.
        LoadError: the memory budget is not a size, another load into the store is running, or the store
            cannot be read.
    """
    import pyoxigraph as ox

    from kg_adapters import store_layout
    from kg_adapters.index import build as index_build
    from kg_adapters.profiles import get_profile

    budget = checked_memory(memory)
    target = Path(store).expanduser().absolute()
    with store_layout.exclusive_load_lock(target):
        version = store_layout.open_version(target)
        try:
            data = ox.Store.read_only(str(version.data))
            try:
                return index_build.build_index(
                    data,
                    version.directory,
                    get_profile(version.manifest.get("profile", "generic")),
                    progress=progress,
                    every=every,
                    memory=budget,
                )
            finally:
                del data
        except (OSError, BackendError) as exc:
            raise LoadError(f"cannot index the store: {exc}", file=str(target)) from exc
        finally:
            version.close()


def checked_memory(memory: int | str | None) -> int:
    """A load's or an index build's ``memory`` budget (bytes, text such as ``"4G"``, or None: the default
    :data:`~kg_adapters.budgets.DEFAULT_MEMORY`) in bytes; one that is not a size raises LoadError."""
    from kg_adapters.budgets import memory_bytes
    from kg_adapters.errors import InvalidTermError

    try:
        return DEFAULT_MEMORY if memory is None else memory_bytes(memory)
    except InvalidTermError as exc:
        raise LoadError(str(exc)) from exc


def index_bytes(store: str) -> int:
    """The size on disk of the traversal index of the store at ``store`` (0 when it has none)."""
    from kg_adapters import store_layout
    from kg_adapters.index.layout import index_dir

    version = store_layout.open_version(Path(store).expanduser().absolute())
    try:
        directory = index_dir(version.directory)
        return sum(path.stat().st_size for path in directory.iterdir()) if directory.is_dir() else 0
    finally:
        version.close()


MEMORY_HELP = (
    "memory budget, e.g. 4G or 512M (default {default}); past it the index's numbering, sorting and name rows "
    "spill to disk; the files are the same"
)
"""The ``--memory`` help of ``kga load`` and ``kga index`` (``{default}``: each command's default)."""


def index_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", required=True, help="store directory")
    parser.add_argument(
        "--memory",
        help=MEMORY_HELP.format(default=f"{DEFAULT_MEMORY >> 20}M: all of it for the index, which loads nothing"),
    )


def cmd_index(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    stats = index_store(args.store, memory=args.memory)
    seconds = time.perf_counter() - started
    if args.json:
        emit({"store": args.store, **asdict(stats), "seconds": round(seconds, 3)})
    else:
        print(
            f"indexed {stats.edges} entity edges of {stats.entities} entities and {stats.relations} relations "
            f"in {args.store} ({stats.bytes / 1e6:.1f} MB, {seconds:.2f} s)"
        )
    return 0


INDEX_COMMAND = Command(
    name="index",
    help="build the traversal index of an existing store (fast walks)",
    arguments=index_arguments,
    run=cmd_index,
    kg=False,
)
"""``kga index --store DIR`` (registered with the loaders' commands in :mod:`loaders.cli`)."""
