"""``build_dataset``: a RoG-style KGQA dataset from any graph and a questions file (``kga dataset build``).

Input (``questions``): JSONL (optionally ``.gz``/``.bz2``) or Parquet in RoG's layout, one question per
row with ``id``, ``question`` and ``q_entity`` (topic entity ids), optionally ``a_entity`` (answer ids),
``answer`` (answer names) and ``choices``; ids in the KG profile's spelling. Other columns (RoG's
``graph``) are ignored. Output (``out``, by extension: ``.jsonl``, ``.jsonl.gz`` or ``.parquet``): one row
per question, in input order, with RoG's columns ``id, question, answer, q_entity, a_entity, graph,
choices`` plus ``ground_paths`` and ``truncated`` (how a row is made: :mod:`loaders.dataset_rows`).

1. **Checked first**: the arguments, the output's extension (and pyarrow for Parquet), then every row
   of the input: a row that is not an object, has no usable ``id`` or ``question``, no ``q_entity``,
   a malformed id or an ``id`` an earlier row had is a :class:`~loaders.errors.BadQuestion` naming
   ``file:row`` (JSONL: the line); then, in batched ``relations`` calls, an id the KG has no triple for
   (:class:`~loaders.errors.UnknownEntity`). With ``lenient`` such rows are skipped and counted
   instead. A strict build that fails here leaves nothing behind.
2. **Built in groups** of ``group_size`` questions (one batched walk per group, see
   :func:`~loaders.dataset_rows.build_rows`), by ``workers`` processes that each open the KG URL, and
   each group's rows committed in one transaction to a checkpoint (``.OUT.kga-build/`` beside the
   output: SQLite, WAL, synchronous): Ctrl-C or ``kill -9`` loses at most the groups in flight, and the
   same command continues (other arguments, or an input whose bytes changed, raise
   :class:`~loaders.errors.DatasetStateMismatch` unless ``restart``). Progress with ETA on stderr.
3. **Written atomically**: the rows, in input order, go to a temporary file beside the output, which is
   fsync'd and renamed over it; then the checkpoint is deleted. An existing output is never replaced
   unless ``overwrite``. Memory stays bounded by a group: questions, duplicate ids and rows live in the
   checkpoint database, never in a list as long as the input.

The rows depend only on the KG, the input and the settings: not on ``workers``, ``group_size``,
``batch_size`` or where a run was interrupted.
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import hashlib
import json
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, BinaryIO

from kg_adapters.base import KnowledgeGraph
from kg_adapters.budgets import check_count, check_flag
from kg_adapters.errors import InvalidTermError, LoadError, MissingDependency
from kg_adapters.profiles.base import is_blank_node
from kg_adapters.registry import connect
from kg_adapters.sparql_terms import check_text
from kg_adapters.store_layout import fsync_dir
from loaders.dataset_rows import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_EDGES_PER_NODE,
    DEFAULT_HOPS,
    DEFAULT_MAX_EDGES,
    DEFAULT_MAX_NODES,
    BuiltRow,
    QuestionInput,
    Settings,
    build_rows,
)
from loaders.errors import (
    BadQuestion,
    DatasetBuildError,
    DatasetStateMismatch,
    DuplicateQuestionId,
    NoTopicEntity,
    UnknownEntity,
)
from loaders.extract import public_url
from loaders.report import MAX_SKIPPED_KEPT, SkippedLine
from loaders.rog_dataset import check_columns, iter_rows
from loaders.work_state import STATE_FILE, WorkState, remove_work_state

__all__ = ["OUTPUT_SUFFIXES", "BuildReport", "build_dataset", "read_output"]

OUTPUT_SUFFIXES = (".jsonl", ".jsonl.gz", ".parquet")
DEFAULT_GROUP_SIZE = 32
"""Questions walked together (their frontiers share ``neighbors`` calls); bounds a worker's memory."""
CHECK_IDS = 500
"""Most ids per ``relations`` call while checking that every id exists."""
INPUT_COLUMNS = ("id", "question", "answer", "q_entity", "a_entity", "choices")
_SCAN_COMMIT = 1000
Checkpoint = Callable[[str], None]
"""Called at each durable point: ``scanned``, ``checked``, ``commit:K`` (group K of all runs committed),
``written`` (the output renamed into place, the checkpoint not yet deleted). Crash tests kill there."""


@dataclass(frozen=True, kw_only=True)
class BuildReport:
    """What :func:`build_dataset` wrote. ``questions`` counts the input's rows, ``rows`` those written,
    ``skipped`` those a lenient build left out (``skipped_rows``: the first ones, with reasons).
    ``covered`` counts rows with answers whose graph holds one (``coverage`` = covered / with_answers);
    ``truncated`` rows a budget cut. ``built_now`` rows were built by this run in ``seconds``."""

    out: str
    questions: int
    rows: int
    skipped: int
    skipped_rows: tuple[SkippedLine, ...]
    truncated: int
    with_answers: int
    covered: int
    coverage: float | None
    with_ground_paths: int
    triples: int
    triples_per_row: float
    walked_edges: int
    built_now: int
    seconds: float
    questions_per_second: float
    runs: int


def build_dataset(
    kg: str | KnowledgeGraph,
    questions: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    hops: int = DEFAULT_HOPS,
    max_nodes: int = DEFAULT_MAX_NODES,
    ids: bool = False,
    workers: int = 1,
    lenient: bool = False,
    edges_per_node: int = DEFAULT_EDGES_PER_NODE,
    max_edges: int = DEFAULT_MAX_EDGES,
    batch_size: int = DEFAULT_BATCH_SIZE,
    group_size: int = DEFAULT_GROUP_SIZE,
    restart: bool = False,
    overwrite: bool = False,
    work_dir: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
    source_url: str | None = None,
    checkpoint: Checkpoint | None = None,
) -> BuildReport:
    """Builds the dataset of ``questions`` over ``kg`` (a KG URL, or an open KG with ``source_url``
    naming it) into ``out``; see the module docstring. ``workers > 1`` needs a URL (each worker process
    opens its own connection). ``progress``: a bar with ETA on stderr (None: when stderr is a terminal).

    Raises:
        InvalidTermError: a malformed budget or option.
        BadQuestion: (strict) a bad input row, naming ``file:row``; its kinds ``NoTopicEntity``,
            ``DuplicateQuestionId``, ``UnknownEntity``.
        LoadError: the input cannot be read (or is Parquet without pyarrow).
        MissingDependency: a Parquet output without pyarrow.
        DatasetStateMismatch: an unfinished build of ``out`` with other arguments or input.
        DatasetBuildError: the output exists, has no known extension, or cannot be written.
    """
    started = time.perf_counter()
    checkpoint = checkpoint or _no_checkpoint
    settings = Settings(
        hops=_count(hops, "hops", 1),
        max_nodes=_count(max_nodes, "max_nodes", 1),
        ids=check_flag(ids, "ids"),
        edges_per_node=_count(edges_per_node, "edges_per_node", 1),
        max_edges=_count(max_edges, "max_edges", 1),
        batch_size=_count(batch_size, "batch_size", 1),
    )
    workers, group_size = _count(workers, "workers", 1), _count(group_size, "group_size", 1)
    lenient, restart = check_flag(lenient, "lenient"), check_flag(restart, "restart")
    overwrite = check_flag(overwrite, "overwrite")
    target = Path(out).expanduser().absolute()
    output_format = _output_format(target)
    source = Path(questions).expanduser().absolute()
    if target.exists() and source.exists() and target.samefile(source):
        raise DatasetBuildError(f"the output {target} is the questions file; write the dataset elsewhere")
    url = kg if isinstance(kg, str) else source_url
    if workers > 1 and url is None:
        raise TypeError("workers > 1 needs the KG's URL (each worker process opens its own connection)")
    graph = connect(kg) if isinstance(kg, str) else kg
    try:
        arguments = {
            "kg": public_url(url),
            "profile": graph.profile.key,
            "settings": asdict(settings),
            "lenient": lenient,
            "input": _fingerprint(source),
        }
        work = Path(work_dir).expanduser().absolute() if work_dir else target.parent / f".{target.name}.kga-build"
        with _locked(target):
            state = _open_state(work, target, arguments, restart=restart, overwrite=overwrite)
            try:
                try:
                    if state.phase == "scan":
                        _scan(state, str(source), graph, lenient)
                        checkpoint("scanned")
                    if state.phase == "check":
                        _check(state, graph, str(source), lenient)
                        checkpoint("checked")
                except sqlite3.Error:
                    raise
                except Exception:  # a bad row, an unreadable input, a KG that fails: nothing built yet to keep
                    state.close()
                    remove_work_state(work)
                    raise
                show = sys.stderr.isatty() if progress is None else progress
                built = _build(state, graph, url, settings, workers, group_size, show, checkpoint)
                _write(state, target, output_format)
                report = _report(state, target, built, time.perf_counter() - started)
            except sqlite3.Error as exc:  # a full disk, an I/O error
                raise DatasetBuildError(f"cannot write the checkpoint in {work} (resumable): {exc}") from exc
            finally:
                state.close()
            checkpoint("written")
            remove_work_state(work)
        return report
    finally:
        if isinstance(kg, str):
            graph.close()


def _count(value: object, name: str, minimum: int) -> int:
    checked = check_count(value, name, minimum=minimum, required=True)
    assert checked is not None
    return checked


def _output_format(target: Path) -> str:
    name = target.name.lower()
    suffix = next((suffix for suffix in OUTPUT_SUFFIXES if name.endswith(suffix)), None)
    if suffix is None or name == suffix:
        raise DatasetBuildError(f"the output {target} must end in {', '.join(OUTPUT_SUFFIXES)}")
    if target.is_dir():
        raise DatasetBuildError(f"the output {target} is a directory")
    if suffix == ".parquet":
        _pyarrow()
    return suffix


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet  # the writer lives in the submodule
    except ImportError as exc:
        from kg_adapters.extras import install_command

        raise MissingDependency(f"writing Parquet needs pyarrow: {install_command('rog')}") from exc
    return pa


def _fingerprint(source: Path) -> dict[str, Any]:
    """The input's path, size and SHA-256: a resumed build must read the same bytes."""
    digest = hashlib.sha256()
    try:
        with open(source, "rb") as handle:
            size = 0
            while block := handle.read(1 << 20):
                digest.update(block)
                size += len(block)
    except OSError as exc:
        raise LoadError(f"cannot read the questions file: {exc.strerror or exc}", file=str(source)) from exc
    return {"path": str(source), "bytes": size, "sha256": digest.hexdigest()}


@contextlib.contextmanager
def _locked(target: Path) -> Iterator[None]:
    """The output's lock (``.OUT.kga-lock`` beside it): two builds of one output never interleave. The
    lock file is deleted on the way out, so a build leaves nothing behind but its output (or its
    checkpoint). The output's missing directories are made, and removed again if left empty."""
    lock_path = target.parent / f".{target.name}.kga-lock"
    made = [directory for directory in reversed(target.parents) if not directory.exists()]
    try:
        handle = _lock_file(lock_path, target)
        try:
            yield
        finally:
            with contextlib.suppress(FileNotFoundError):
                lock_path.unlink()  # still holding the lock: no other build holds this file
            handle.close()
    finally:
        for directory in reversed(made):
            with contextlib.suppress(OSError):
                directory.rmdir()  # only when empty


def _lock_file(lock_path: Path, target: Path) -> BinaryIO:
    """The lock file, open and locked (made, with its directories, if missing). A build that opened it
    just before the build holding it deleted it sees that, and opens the file now at the path."""
    while True:
        try:
            lock_path.parent.mkdir(parents=True, exist_ok=True)
            handle = open(lock_path, "a+b")  # noqa: SIM115 (held open until the lock is released)
        except OSError as exc:
            raise DatasetBuildError(f"cannot write beside the output {target}: {exc}") from exc
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise DatasetBuildError(f"another build of {target} is running") from None
        try:
            current = os.stat(lock_path).st_ino == os.fstat(handle.fileno()).st_ino
        except FileNotFoundError:
            current = False
        if current:
            return handle
        handle.close()


# -- the checkpoint -----------------------------------------------------------------------------------


class _State(WorkState):
    """The checkpoint of one build (:class:`~loaders.work_state.WorkState`): the questions in input
    order (``seq``) with their built rows, and the rows skipped."""

    SCHEMA = """
        CREATE TABLE IF NOT EXISTS questions(
            seq INTEGER PRIMARY KEY, qid TEXT NOT NULL UNIQUE, line INTEGER NOT NULL, data TEXT NOT NULL,
            row TEXT, triples INTEGER, walked INTEGER, covered INTEGER, truncated INTEGER, paths INTEGER);
        CREATE INDEX IF NOT EXISTS questions_todo ON questions(seq) WHERE row IS NULL;
        CREATE TABLE IF NOT EXISTS skipped(n INTEGER PRIMARY KEY, line INTEGER NOT NULL, reason TEXT NOT NULL);
        """

    @property
    def phase(self) -> str:
        return str(self.progress["phase"])

    def skip(self, line: int, reason: str) -> None:
        self.db.execute("INSERT INTO skipped(line, reason) VALUES (?, ?)", (line, reason))


def _open_state(work: Path, target: Path, arguments: dict[str, Any], *, restart: bool, overwrite: bool) -> _State:
    path = work / STATE_FILE
    if restart:
        remove_work_state(work)
    try:
        state, differ = _State.resume(work, arguments)
    except sqlite3.Error as exc:
        raise DatasetBuildError(f"the checkpoint {path} cannot be read ({exc}); pass --restart to discard it") from exc
    if state is not None:
        return state
    if differ:
        raise DatasetStateMismatch(
            f"{work} holds an unfinished build of {target.name} with another {', '.join(differ)}; run it again "
            "with the same arguments and input to finish it, or pass --restart (restart=True) to discard it"
        )
    if target.exists() and not overwrite:
        raise DatasetBuildError(f"{target} already exists; pass --overwrite (overwrite=True) to replace it")
    try:
        work.mkdir(parents=True, exist_ok=True)
        state = _State(path)
    except (OSError, sqlite3.Error) as exc:
        raise DatasetBuildError(f"cannot create the checkpoint directory {work}: {exc}") from exc
    state.progress = {"phase": "scan", "runs": 1, "groups": 0, "skipped": 0, "started": time.time()}
    with state.transaction():
        state.put("arguments", arguments)
    return state


# -- 1. reading and checking the questions ------------------------------------------------------------


def parse_question(row: Any, canonical: Callable[[str], str]) -> QuestionInput:
    """One input row as a question, ids in their canonical spelling.

    Raises:
        NoTopicEntity: no ``q_entity``, or an empty one (``file``/``line`` unset: the caller knows them).
        InvalidTermError: anything else malformed, naming the field.
    """
    if not isinstance(row, dict):
        raise InvalidTermError(f"a question row must be an object, got {type(row).__name__}")
    qid = row.get("id")
    if isinstance(qid, bool) or not isinstance(qid, (str, int)) or qid == "":
        raise InvalidTermError(f"'id' must be a non-empty string, got {qid!r:.80}")
    qid = check_text(str(qid), "the question id", max_length=None)
    question = row.get("question")
    if not isinstance(question, str):
        raise InvalidTermError(f"question {qid}: 'question' must be a string, got {question!r:.80}")
    check_text(question, f"question {qid}: 'question'", max_length=None)
    topics = row.get("q_entity")
    if topics is None or topics == []:
        raise NoTopicEntity(f"question {qid}: no q_entity (the topic entity ids a subgraph is cut around)")
    answer = row.get("answer")
    return QuestionInput(
        id=qid,
        question=question,
        q_entity=_ids(topics, qid, "q_entity", canonical),
        a_entity=_ids(row.get("a_entity") or [], qid, "a_entity", canonical),
        answer=None if answer is None else _texts(answer, qid, "answer"),
        choices=_texts(row.get("choices") or [], qid, "choices"),
    )


def _texts(values: Any, qid: str, field: str) -> tuple[str, ...]:
    if isinstance(values, str) or not isinstance(values, list):
        raise InvalidTermError(f"question {qid}: {field!r} must be a list of strings, got {values!r:.80}")
    return tuple(check_text(value, f"question {qid}: {field!r}", max_length=None) for value in values)


def _ids(values: Any, qid: str, field: str, canonical: Callable[[str], str]) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for value in _texts(values, qid, field):
        try:
            node = canonical(value)
        except InvalidTermError as exc:
            raise InvalidTermError(f"question {qid}: {field!r} holds a malformed id: {exc}") from exc
        if is_blank_node(node):
            raise InvalidTermError(f"question {qid}: {field!r} holds a blank node {node!r}, which no query can name")
        found[node] = None
    return tuple(found)


def _scan(state: _State, source: str, kg: KnowledgeGraph, lenient: bool) -> None:
    """Every row of the input, checked and stored in order (a killed scan starts over: it is quick)."""
    with state.transaction():
        state.db.execute("DELETE FROM questions")
        state.db.execute("DELETE FROM skipped")
        state.progress["skipped"] = 0
    canonical = kg.profile.canonical_id
    check_columns(source, ("id", "question", "q_entity"))

    def bad_line(line: int, reason: str) -> None:
        _reject(state, BadQuestion(reason, file=source, line=line), line, lenient)

    rows = iter_rows(source, INPUT_COLUMNS, on_bad_line=bad_line)
    while state.phase == "scan":
        with state.transaction():  # a chunk of rows at a time
            for taken, (line, row) in enumerate(rows, 1):
                _store_question(state, source, line, row, canonical, lenient)
                if taken == _SCAN_COMMIT:
                    break
            else:
                state.progress["phase"] = "check"


def _store_question(
    state: _State, source: str, line: int, row: Any, canonical: Callable[[str], str], lenient: bool
) -> None:
    try:
        question = parse_question(row, canonical)
    except NoTopicEntity as exc:
        _reject(state, NoTopicEntity(exc.reason, file=source, line=line), line, lenient)
        return
    except InvalidTermError as exc:
        _reject(state, BadQuestion(str(exc), file=source, line=line), line, lenient)
        return
    data = json.dumps(question.to_json(), ensure_ascii=False)
    try:
        state.db.execute("INSERT INTO questions(qid, line, data) VALUES (?, ?, ?)", (question.id, line, data))
    except sqlite3.IntegrityError:
        (first,) = state.db.execute("SELECT line FROM questions WHERE qid = ?", (question.id,)).fetchone()
        where = f"{source}:{first}"
        message = f"question id {question.id!r:.80} repeated (first at {where})"
        _reject(state, DuplicateQuestionId(message, file=source, line=line, first=where), line, lenient)


def _reject(state: _State, error: BaseException, line: int, lenient: bool) -> None:
    """A bad row: raised (strict), or recorded as skipped (lenient)."""
    if not lenient:
        raise error
    reason = error.reason if isinstance(error, LoadError) else str(error)
    state.skip(line, reason)
    state.progress["skipped"] += 1


def _check(state: _State, kg: KnowledgeGraph, source: str, lenient: bool) -> None:
    """Every id of every stored question exists in the KG (one ``relations`` call per ``CHECK_IDS`` ids)."""
    after = int(state.progress.get("checked", 0))
    while True:
        batch: list[tuple[int, int, QuestionInput]] = []
        wanted: dict[str, None] = {}
        for seq, line, data in state.db.execute(
            "SELECT seq, line, data FROM questions WHERE seq > ? ORDER BY seq", (after,)
        ):
            question = QuestionInput.from_json(json.loads(data))
            batch.append((int(seq), int(line), question))
            wanted.update(dict.fromkeys((*question.q_entity, *question.a_entity)))
            if len(wanted) >= CHECK_IDS:
                break
        if not batch:
            break
        ids = list(wanted)  # one row may name more than CHECK_IDS ids: asked CHECK_IDS at a time all the same
        known: dict[str, list[str]] = {}
        for start in range(0, len(ids), CHECK_IDS):
            known.update(kg.relations(ids[start : start + CHECK_IDS], direction="both"))
        with state.transaction():
            for seq, line, question in batch:
                unknown = tuple(node for node in (*question.q_entity, *question.a_entity) if not known.get(node))
                if unknown:
                    shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
                    error = UnknownEntity(
                        f"question {question.id}: the KG has no triple for {shown}", file=source, line=line, ids=unknown
                    )
                    _reject(state, error, line, lenient)
                    state.db.execute("DELETE FROM questions WHERE seq = ?", (seq,))
            after = batch[-1][0]
            state.progress["checked"] = after
    with state.transaction():
        state.progress["phase"] = "build"


# -- 2. building the rows -----------------------------------------------------------------------------


def _groups(state: _State, size: int) -> Iterator[list[tuple[int, QuestionInput]]]:
    """The questions not built yet, ``size`` at a time, in input order (read as they are needed)."""
    after = -1
    while True:
        rows = state.db.execute(
            "SELECT seq, data FROM questions WHERE row IS NULL AND seq > ? ORDER BY seq LIMIT ?", (after, size)
        ).fetchall()
        if not rows:
            return
        after = int(rows[-1][0])
        yield [(int(seq), QuestionInput.from_json(json.loads(data))) for seq, data in rows]


def _build(
    state: _State,
    kg: KnowledgeGraph,
    url: str | None,
    settings: Settings,
    workers: int,
    group_size: int,
    show: bool,
    checkpoint: Checkpoint,
) -> int:
    """Builds every question not built yet; returns how many this run built."""
    from tqdm import tqdm

    total = state.count("SELECT COUNT(*) FROM questions")
    done = state.count("SELECT COUNT(*) FROM questions WHERE row IS NOT NULL")
    built = 0

    def commit(group: list[tuple[int, QuestionInput]], rows: list[BuiltRow]) -> None:
        nonlocal built
        with state.transaction():
            for (seq, _), made in zip(group, rows, strict=True):
                row = made.row
                state.db.execute(
                    "UPDATE questions SET row = ?, triples = ?, walked = ?, covered = ?, truncated = ?, paths = ? "
                    "WHERE seq = ?",
                    (
                        json.dumps(row, ensure_ascii=False),
                        len(row["graph"]),
                        made.walked_edges,
                        None if made.covered is None else int(made.covered),
                        int(row["truncated"]),
                        len(row["ground_paths"]),
                        seq,
                    ),
                )
            state.progress["groups"] += 1
        built += len(group)
        checkpoint(f"commit:{state.progress['groups']}")
        bar.update(len(group))

    with tqdm(
        total=total, initial=done, unit=" q", desc="questions", disable=not show, file=sys.stderr, leave=False
    ) as bar:
        groups = _groups(state, group_size)
        if workers == 1:
            for group in groups:
                commit(group, build_rows(kg, [question for _, question in group], settings))
        else:
            assert url is not None
            _build_in_processes(url, settings, workers, groups, commit)
    with state.transaction():
        state.progress["phase"] = "write"
    return built


_worker_kg: KnowledgeGraph | None = None


def _worker_start(url: str) -> None:
    """Opens the worker's KG. Ctrl-C is the parent's to handle (it stops handing out groups and keeps
    what was committed); a worker finishes its group and is shut down with the pool."""
    import signal

    global _worker_kg
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _worker_kg = connect(url)


def _worker_ready() -> None:
    """A task that only makes the pool start a worker."""


@contextlib.contextmanager
def _ctrl_c_blocked() -> Iterator[None]:
    """SIGINT blocked in this thread meanwhile (a Ctrl-C then waits, and is raised on leaving). A process
    started meanwhile inherits the block, so it never sees Ctrl-C: the parent handles it, and a worker is
    not interrupted while it imports (before its initializer ignores SIGINT)."""
    import signal

    if not hasattr(signal, "pthread_sigmask"):  # (not POSIX)
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _worker_rows(questions: list[QuestionInput], settings: Settings) -> list[BuiltRow]:
    assert _worker_kg is not None
    return build_rows(_worker_kg, questions, settings)


def _build_in_processes(
    url: str,
    settings: Settings,
    workers: int,
    groups: Iterator[list[tuple[int, QuestionInput]]],
    commit: Callable[[list[tuple[int, QuestionInput]], list[BuiltRow]], None],
) -> None:
    """Groups built by ``workers`` processes (spawned: no state inherited), at most two each in flight."""
    import multiprocessing
    from concurrent.futures.process import BrokenProcessPool

    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_worker_start, initargs=(url,))
    with _ctrl_c_blocked():  # every worker started now inherits it: Ctrl-C never interrupts one importing
        for _ in range(workers):
            pool.submit(_worker_ready)  # (a spawned pool starts a worker per task until it has them all)
    pending: dict[Future[list[BuiltRow]], list[tuple[int, QuestionInput]]] = {}
    try:
        while True:
            while len(pending) < 2 * workers and (group := next(groups, None)) is not None:
                pending[pool.submit(_worker_rows, [question for _, question in group], settings)] = group
            if not pending:
                break
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in [future for future in pending if future in finished]:
                commit(pending.pop(future), future.result())
    except BrokenProcessPool as exc:  # a worker died (killed, out of memory) or could not open the KG
        raise DatasetBuildError(f"a worker process failed ({exc}); the rows built so far are kept: run again") from exc
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


# -- 3. the report and the output ---------------------------------------------------------------------


def _report(state: _State, target: Path, built: int, seconds: float) -> BuildReport:
    query = (
        "SELECT COUNT(*), SUM(triples), SUM(walked), SUM(truncated), SUM(covered IS NOT NULL), SUM(covered), "
        "SUM(paths > 0) FROM questions"
    )
    sums = (int(value or 0) for value in state.db.execute(query).fetchone())
    counts = dict(zip(_SUMMED, sums, strict=True))
    rows, with_answers, skipped = counts["rows"], counts["with_answers"], int(state.progress["skipped"])
    kept = tuple(
        SkippedLine(file=str(state.get("arguments")["input"]["path"]), line=int(line), reason=str(reason))
        for line, reason in state.db.execute("SELECT line, reason FROM skipped ORDER BY n LIMIT ?", (MAX_SKIPPED_KEPT,))
    )
    return BuildReport(
        out=str(target),
        questions=rows + skipped,
        skipped=skipped,
        skipped_rows=kept,
        coverage=counts["covered"] / with_answers if with_answers else None,
        triples_per_row=counts["triples"] / rows if rows else 0.0,
        built_now=built,
        seconds=seconds,
        questions_per_second=built / seconds if seconds > 0 else 0.0,
        runs=int(state.progress["runs"]),
        **counts,
    )


_SUMMED = ("rows", "triples", "walked_edges", "truncated", "with_answers", "covered", "with_ground_paths")
"""The report's fields that :func:`_report`'s query sums over the built rows, in its columns' order."""


def _rows(state: _State) -> Iterator[dict[str, Any]]:
    for (text,) in state.db.execute("SELECT row FROM questions ORDER BY seq"):
        yield json.loads(text)


def _write(state: _State, target: Path, output_format: str) -> None:
    """All rows in input order into a temporary file beside ``target``, fsync'd, renamed over it."""
    tmp = target.parent / f".{target.name}.kga-tmp"
    try:
        if output_format == ".parquet":
            _write_parquet(tmp, _rows(state))
        else:
            with open(tmp, "wb") as raw:
                if output_format == ".jsonl.gz":
                    with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed:
                        _write_jsonl(packed, _rows(state))
                else:
                    _write_jsonl(raw, _rows(state))
                raw.flush()
                os.fsync(raw.fileno())
        os.replace(tmp, target)
        fsync_dir(target.parent)
    except BaseException as exc:  # a full disk, Ctrl-C: no half-written file stays beside the output
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError):
            raise DatasetBuildError(f"cannot write {target} (the built rows are kept: run again): {exc}") from exc
        raise


def _write_jsonl(handle: BinaryIO | gzip.GzipFile, rows: Iterator[dict[str, Any]]) -> None:
    for row in rows:
        handle.write(json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n")


PARQUET_BATCH_ROWS = 256


def rog_parquet_fields(pa: Any) -> list[tuple[str, Any]]:
    """RoG's Parquet columns as ``pyarrow`` (the module, passed in) types: strings, lists of strings,
    ``graph`` a list of string lists."""
    strings = pa.list_(pa.string())
    return [
        ("id", pa.string()),
        ("question", pa.string()),
        ("answer", strings),
        ("q_entity", strings),
        ("a_entity", strings),
        ("graph", pa.list_(strings)),
        ("choices", strings),
    ]


def _write_parquet(tmp: Path, rows: Iterator[dict[str, Any]]) -> None:
    """RoG's Parquet columns (:func:`rog_parquet_fields`), plus ``ground_paths`` (lists of relation
    lists) and ``truncated``; written in row groups."""
    pa = _pyarrow()
    built = [("ground_paths", pa.list_(pa.list_(pa.string()))), ("truncated", pa.bool_())]
    schema = pa.schema(rog_parquet_fields(pa) + built)
    with pa.parquet.ParquetWriter(str(tmp), schema) as writer:
        batch: list[dict[str, Any]] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= PARQUET_BATCH_ROWS:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                batch = []
        if batch:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
    with open(tmp, "rb") as handle:
        os.fsync(handle.fileno())


def read_output(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """The rows of a built dataset file (any of the three formats), in order."""
    for _, row in iter_rows(str(path)):
        yield row


def _no_checkpoint(point: str) -> None:
    """The default :data:`Checkpoint`: nothing to do."""
