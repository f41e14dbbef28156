"""``extract_subgraph``: copy the k-hop neighbourhood of seed entities out of any KG into a new
local store (what ``kga extract`` runs), resumable after a crash at any moment.

1. Arguments, the source URL and the target path are checked before the source is asked anything
   beyond one ``relations`` call that proves every seed exists.
2. Breadth-first from the seeds, hop by hop, the frontier is expanded in batches of at most
   ``batch_size`` ids, one ``neighbors`` call each: exactly the edges
   ``source.subgraph(seeds, hops=, direction=, relations=)`` returns, in its order, so ``max_edges``
   cuts at the same edge. Then the name and description literals of every reached entity (the
   boundary included) are fetched the same way, so ``labels`` and ``search`` work on the result.
3. Each batch is committed in one SQLite transaction together with the checkpoint (frontier cursor,
   visited nodes, counts) in the work directory (``.NAME.kga-extract`` beside the store): a crash
   loses at most the batch in flight, which the next run asks again. Triples are keyed by head,
   relation and tail (with datatype and language), so an edge reached from both ends is kept once
   and two relations between one pair stay two edges.
4. The store is built from the committed triples in a sibling temporary directory, its manifest
   written last, and swapped in (:mod:`kg_adapters.store_layout`); then the work directory is
   deleted. A crash during the build is repaired by building again.

The result depends only on the arguments and the source's answers, never on where earlier runs
were interrupted or on ``batch_size`` (which may change between runs).
"""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import pyoxigraph as ox
from tqdm import tqdm

import kg_adapters
from kg_adapters import store_layout
from kg_adapters.algorithms import HopBatch, canonical_ids, check_relations, k_hop_walk
from kg_adapters.base import Direction, KnowledgeGraph, check_direction
from kg_adapters.budgets import check_count
from kg_adapters.errors import BackendError, InvalidTermError, LoadError, StoreNotFound
from kg_adapters.index import build as index_build
from kg_adapters.profiles import Profile
from kg_adapters.profiles.base import is_blank_node
from kg_adapters.rdf_io import to_oxigraph_term
from kg_adapters.records import Edge, Literal, Node
from kg_adapters.registry import connect
from kg_adapters.store_build import rebuild_label_index
from kg_adapters.terms import INDEXED_LABEL_PREDICATES
from loaders.core import release_frames
from loaders.errors import ExtractError, ExtractStateMismatch, UnknownSeeds
from loaders.work_state import STATE_FILE, WorkState, remove_work_state

DEFAULT_BATCH_SIZE = 500
Checkpoint = Callable[[str], None]
"""Called with each durable point an extraction passes: ``fetched:K`` (batch K answered and staged,
not yet committed), ``commit:K`` (just after batch K's commit), ``built`` (temporary store complete,
not swapped in), ``swapped`` (store in place, work directory not yet removed). Batches count across
all runs. The kill -9 tests kill the process from here (``loaders.testing.extract_killed_at``)."""

_SECRET_PARAMETERS = ("password", "passwd", "token", "secret", "key", "auth")
_BUILD_CHUNK = 50_000

TripleRow = tuple[str, str, int, str, str, str]
"""(head, relation, is_literal, tail, datatype or "", lang or ""): one triple's key in the work state."""


@dataclass(frozen=True, kw_only=True)
class ExtractReport:
    """What :func:`extract_subgraph` built. ``edges`` are the subgraph's edges (what
    ``source.subgraph`` answers), ``names`` the name/description triples added beyond them,
    ``literals`` the literal-valued triples in the store, ``triples`` its size. ``batches`` and
    ``source_calls`` count the work of every run (a batch lost to a crash is asked again), ``runs``
    the runs it took; ``seconds`` is the wall time of this call."""

    store: str
    source: str | None
    profile: str
    seeds: tuple[str, ...]
    hops: int
    direction: str
    relations: tuple[str, ...] | None
    max_edges: int | None
    truncated: bool
    entities: int
    edges: int
    names: int
    literals: int
    triples: int
    batches: int
    source_calls: int
    runs: int
    started: str
    finished: str
    seconds: float


def extract_subgraph(
    source: str | KnowledgeGraph,
    seeds: Sequence[str] | str,
    *,
    hops: int,
    store: str | os.PathLike[str],
    direction: str = "both",
    relations: Sequence[str] | None = None,
    max_edges: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    work_dir: str | os.PathLike[str] | None = None,
    restart: bool = False,
    progress: bool | None = None,
    source_url: str | None = None,
    checkpoint: Checkpoint | None = None,
) -> ExtractReport:
    """Copies every triple within ``hops`` of ``seeds`` in ``source`` (a KG URL, or an open KG with
    ``source_url`` naming it for the manifest) into a new on-disk store at ``store``.

    Run again with the same arguments after an interruption, it continues from its checkpoint;
    ``restart`` discards an unfinished run instead. ``progress`` shows tqdm bars on stderr
    (``None``: when stderr is a terminal). ``checkpoint`` is called at every durable point (see
    :data:`Checkpoint`), to follow progress or, in crash tests, to kill the process there.

    Raises:
        InvalidTermError: a malformed seed, relation, direction or budget.
        UnknownBackendError: no backend for the source URL's scheme.
        UnknownSeeds: a seed the source holds no triple for.
        ExtractStateMismatch: the work directory holds an unfinished run with other arguments.
        ExtractError: the store path is not writable or already holds another store.
    """
    started = time.perf_counter()
    checkpoint = checkpoint or _no_checkpoint
    kg = connect(source) if isinstance(source, str) else source
    try:
        url = public_url(source if isinstance(source, str) else source_url)
        plan = _plan(kg, url, seeds, hops, direction, relations, max_edges, batch_size)
        target = store_layout.resolved_store(store)
        work = Path(work_dir).expanduser().absolute() if work_dir else target.parent / f".{target.name}.kga-extract"
        with _locked(target):
            record = _finished_record(target, plan.arguments)
            if record is None:
                store_layout.remove_stale_temps(target)
                try:
                    state = _open_state(work, kg, plan, restart=restart)
                except sqlite3.Error as exc:
                    raise ExtractError(f"cannot write the work directory {work}: {exc}") from exc
                try:
                    show = sys.stderr.isatty() if progress is None else progress
                    _walk(state, kg, plan, show, checkpoint)
                    _fetch_names(state, kg, plan, show, checkpoint)
                    record = _build(state, target, kg.profile, plan, checkpoint)
                except sqlite3.Error as exc:  # the checkpoint database: a full disk, an I/O error
                    raise ExtractError(f"cannot write the work directory {work} (resumable): {exc}") from exc
                finally:
                    state.close()
                checkpoint("swapped")
            remove_work_state(work)
        return _report(target, record, time.perf_counter() - started)
    finally:
        if isinstance(source, str):
            kg.close()


@contextlib.contextmanager
def _locked(target: Path) -> Iterator[None]:
    """The store's lock (shared with ``kga load``), its failures as :class:`ExtractError`."""
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(store_layout.exclusive_load_lock(target))
        except OSError as exc:
            raise ExtractError(f"cannot write the store at {target}: {exc}") from exc
        except LoadError as exc:
            raise ExtractError(f"another load or extraction into {target} is running") from exc
        yield


@dataclass(frozen=True, kw_only=True)
class _Plan:
    source: str | None
    profile: str
    seeds: list[str]
    hops: int
    direction: Direction
    relations: list[str] | None
    max_edges: int | None
    batch_size: int

    @property
    def arguments(self) -> dict[str, Any]:
        """What decides the result (compared on resume): every field but ``batch_size``."""
        return {name: getattr(self, name) for name in _DECIDING}


_DECIDING = ("source", "profile", "seeds", "hops", "direction", "relations", "max_edges")


def _plan(
    kg: KnowledgeGraph,
    url: str | None,
    seeds: Sequence[str] | str,
    hops: int,
    direction: str,
    relations: Sequence[str] | None,
    max_edges: int | None,
    batch_size: int,
) -> _Plan:
    depth = check_count(hops, "hops", required=True)
    assert depth is not None
    walk = check_direction(direction)
    limit = check_count(max_edges, "max_edges")
    size = check_count(batch_size, "batch_size", minimum=1)
    seed_ids = canonical_ids(kg, seeds)
    if not seed_ids:
        raise InvalidTermError("give at least one seed id")
    check_relations(kg, relations)
    relation_list = list(dict.fromkeys(relations)) if relations is not None else None
    arguments: dict[str, Any] = {
        "source": url,
        "profile": kg.profile.name,
        "seeds": seed_ids,
        "hops": depth,
        "direction": walk,
        "relations": relation_list,
        "max_edges": limit,
    }
    return _Plan(**arguments, batch_size=size or DEFAULT_BATCH_SIZE)


def public_url(url: str | None) -> str | None:
    """The source URL without user credentials or secret-looking parameters (for the manifest)."""
    if url is None:
        return None
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    public = [(key, value) for key, value in query if not any(word in key.lower() for word in _SECRET_PARAMETERS)]
    if "@" not in parts.netloc and len(public) == len(query):
        return url
    rest = url[len(parts.scheme) + 1 :]
    host = "//" + parts.netloc.rpartition("@")[2] if rest.startswith("//") else ""
    return f"{parts.scheme}:{host}{parts.path}" + (f"?{urlencode(public)}" if public else "")


def _finished_record(target: Path, arguments: dict[str, Any]) -> dict[str, Any] | None:
    """The extraction record of a complete store at ``target`` made with ``arguments`` (the run is
    already done), None when there is nothing there yet; anything else there is refused."""
    if not target.exists():
        return None
    if not target.is_dir():
        raise ExtractError(f"the store path {target} exists and is not a directory")
    try:
        manifest = store_layout.read_manifest(target)
    except StoreNotFound:
        if any(target.iterdir()):
            raise ExtractError(f"refusing to write into {target}: a non-empty directory that is not a store") from None
        return None
    record = manifest.get("extraction")
    if isinstance(record, dict) and all(record.get(key) == value for key, value in arguments.items()):
        return record
    raise ExtractError(f"{target} already holds a store; extract into a new path")


class _State(WorkState):
    """The checkpoint of one extraction (:class:`~loaders.work_state.WorkState`): reached nodes by hop
    and the triples committed so far."""

    SCHEMA = """
        CREATE TABLE IF NOT EXISTS nodes(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, hop INTEGER NOT NULL);
        CREATE INDEX IF NOT EXISTS nodes_by_hop ON nodes(hop, seq);
        CREATE TABLE IF NOT EXISTS triples(
            seq INTEGER PRIMARY KEY, head TEXT NOT NULL, relation TEXT NOT NULL, literal INTEGER NOT NULL,
            tail TEXT NOT NULL, datatype TEXT NOT NULL, lang TEXT NOT NULL, name INTEGER NOT NULL,
            UNIQUE(head, relation, literal, tail, datatype, lang));
        """

    def add_node(self, node: str, hop: int) -> None:
        self.db.execute("INSERT INTO nodes(id, hop) VALUES (?, ?)", (node, hop))

    def nodes(self, *, after: int, limit: int, hop: int | None = None) -> list[tuple[int, str]]:
        """(seq, id) of up to ``limit`` nodes after ``after`` in discovery order (of one hop)."""
        where, args = ("", (after, limit)) if hop is None else ("hop = ? AND", (hop, after, limit))
        query = f"SELECT seq, id FROM nodes WHERE {where} seq > ? ORDER BY seq LIMIT ?"
        return [(int(seq), str(node)) for seq, node in self.db.execute(query, args)]

    def insert(self, row: TripleRow, *, name: bool) -> bool:
        """Adds a triple; False when it is already there."""
        cursor = self.db.execute("INSERT OR IGNORE INTO triples VALUES (NULL, ?, ?, ?, ?, ?, ?, ?)", (*row, int(name)))
        return cursor.rowcount == 1

    def contains(self, row: TripleRow) -> bool:
        return (
            self.db.execute(
                "SELECT 1 FROM triples WHERE head = ? AND relation = ? AND literal = ? AND tail = ? "
                "AND datatype = ? AND lang = ?",
                row,
            ).fetchone()
            is not None
        )

    def triples(self) -> Iterator[TripleRow]:
        for head, relation, literal, tail, datatype, lang in self.db.execute(
            "SELECT head, relation, literal, tail, datatype, lang FROM triples ORDER BY seq"
        ):
            yield str(head), str(relation), int(literal), str(tail), str(datatype), str(lang)


def _open_state(work: Path, kg: KnowledgeGraph, plan: _Plan, *, restart: bool) -> _State:
    """The checkpoint to continue from: the work directory's, or a new one after checking that
    every seed exists in the source."""
    path = work / STATE_FILE
    if restart:
        remove_work_state(work)
    state, differ = _State.resume(work, plan.arguments)
    if state is not None:
        return state
    if differ:
        raise ExtractStateMismatch(
            f"{work} holds an unfinished extraction with other {', '.join(differ)}; run it again with the "
            "same arguments to finish it, or pass --restart (restart=True) to discard it"
        )
    _check_seeds(kg, plan.seeds)
    try:
        work.mkdir(parents=True, exist_ok=True)
        state = _State(path)
    except (OSError, sqlite3.Error) as exc:
        raise ExtractError(f"cannot create the work directory {work}: {exc}") from exc
    state.progress = {
        "phase": "walk",
        "hop": 0,
        "cursor": 0,
        "edges": 0,
        "names": 0,
        "truncated": False,
        "batches": 0,
        "source_calls": 1,
        "runs": 1,
        "started": store_layout.now_iso(),
    }
    with state.transaction():
        state.put("arguments", plan.arguments)
        for seed in plan.seeds:
            state.add_node(seed, 0)
    return state


def _check_seeds(kg: KnowledgeGraph, seeds: list[str]) -> None:
    known = kg.relations(seeds, direction="both")
    unknown = tuple(seed for seed in seeds if not known.get(seed))
    if unknown:
        shown = ", ".join(unknown[:10]) + (f" and {len(unknown) - 10} more" if len(unknown) > 10 else "")
        raise UnknownSeeds(f"the source has no triple for seed(s) {shown}", seeds=unknown)


def _row(edge: Edge) -> TripleRow:
    tail = edge.tail
    if isinstance(tail, Literal):
        return (edge.head, edge.relation, 1, tail.value, tail.datatype or "", tail.lang or "")
    return (edge.head, edge.relation, 0, tail, "", "")


class _CommittedEdges:
    """The edges committed to the checkpoint, as a container of ``(head, relation, tail)``."""

    def __init__(self, state: _State) -> None:
        self.state = state

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple) or len(key) != 3:
            return False
        head, relation, tail = key
        return self.state.contains(_row(Edge(head=str(head), relation=str(relation), tail=tail)))


class _StateLedger:
    """The walk's :class:`~kg_adapters.algorithms.WalkLedger` in the checkpoint database: each batch is
    committed in one transaction with the progress record (the frontier cursor is the ``seq`` of the
    last node expanded; nodes are numbered in discovery order, so every hop's nodes follow the last)."""

    def __init__(self, state: _State, checkpoint: Checkpoint) -> None:
        self.state = state
        self.checkpoint = checkpoint
        self.seen_nodes = {str(node) for (node,) in state.db.execute("SELECT id FROM nodes")}
        self.seen_edges = _CommittedEdges(state)

    @property
    def edge_count(self) -> int:
        return int(self.state.progress["edges"])

    def frontier(self, hop: int, limit: int | None) -> list[str]:
        rows = self.state.nodes(hop=hop, after=self.state.progress["cursor"], limit=-1 if limit is None else limit)
        return [node for _, node in rows]

    def record(self, batch: HopBatch) -> None:
        state, progress = self.state, self.state.progress
        (cursor,) = state.db.execute("SELECT seq FROM nodes WHERE id = ?", (batch.nodes[-1],)).fetchone()
        with state.transaction():
            for edge in batch.edges:
                state.insert(_row(edge), name=False)
            for node in batch.reached:
                state.add_node(node, batch.hop + 1)
            progress.update(hop=batch.hop, cursor=int(cursor), edges=progress["edges"] + len(batch.edges))
            progress["batches"] += 1
            progress["source_calls"] += 1
            if batch.truncated:
                progress.update(truncated=True, phase="names", cursor=0)
            self.checkpoint(f"fetched:{progress['batches']}")
        self.seen_nodes.update(batch.reached)
        self.checkpoint(f"commit:{progress['batches']}")


def _walk(state: _State, kg: KnowledgeGraph, plan: _Plan, show: bool, checkpoint: Checkpoint) -> None:
    """The breadth-first walk (:func:`~kg_adapters.algorithms.k_hop_walk`, the one ``subgraph`` runs),
    resumed from the checkpoint, one committed batch at a time."""
    progress = state.progress
    if progress["phase"] != "walk":
        return
    ledger = _StateLedger(state, checkpoint)
    walk = k_hop_walk(
        kg,
        ledger,
        hops=plan.hops,
        direction=plan.direction,
        relations=plan.relations,
        max_edges=plan.max_edges,
        batch_size=plan.batch_size,
        start_hop=progress["hop"],
    )
    shown_hop = -1
    with tqdm(unit=" ids", disable=not show, file=sys.stderr, leave=False) as bar:
        for batch in walk:
            if shown_hop != batch.hop:
                shown_hop = batch.hop
                bar.reset(state.count("SELECT COUNT(*) FROM nodes WHERE hop = ?", batch.hop))
                bar.update(
                    state.count("SELECT COUNT(*) FROM nodes WHERE hop = ? AND seq <= ?", batch.hop, progress["cursor"])
                    - len(batch.nodes)
                )
                bar.set_description(f"hop {batch.hop + 1}/{plan.hops}")
            bar.update(len(batch.nodes))
    if progress["phase"] == "walk":
        with state.transaction():
            progress.update(phase="names", cursor=0)


def _name_relations(profile: Profile) -> list[str]:
    """Relations whose literals name or describe an entity for ``labels``, ``describe`` and ``search``."""
    predicates = (*profile.label_predicates, *profile.description_predicates, *INDEXED_LABEL_PREDICATES)
    return list(dict.fromkeys(profile.relation_id(predicate) for predicate in predicates))


def _fetch_names(state: _State, kg: KnowledgeGraph, plan: _Plan, show: bool, checkpoint: Checkpoint) -> None:
    """Name and description literals of every reached entity, boundary included, in batches."""
    progress = state.progress
    if progress["phase"] != "names":
        return
    relations = _name_relations(kg.profile)
    total = state.count("SELECT COUNT(*) FROM nodes")
    done = state.count("SELECT COUNT(*) FROM nodes WHERE seq <= ?", progress["cursor"])
    bar = tqdm(total=total, initial=done, unit=" ids", desc="names", disable=not show, file=sys.stderr, leave=False)
    with bar:
        while True:
            batch = state.nodes(after=progress["cursor"], limit=plan.batch_size)
            if not batch:
                with state.transaction():
                    progress.update(phase="build", finished=store_layout.now_iso())
                return
            ids = [node for _, node in batch if not is_blank_node(node)]
            answer = kg.neighbors(ids, direction="out", relations=relations) if ids else {}
            with state.transaction():
                for node in ids:
                    for edge in answer.get(node, ()):
                        if isinstance(edge.tail, Literal) and state.insert(_row(edge), name=True):
                            progress["names"] += 1
                progress["cursor"] = batch[-1][0]
                progress["batches"] += 1
                progress["source_calls"] += 1 if ids else 0
                checkpoint(f"fetched:{progress['batches']}")
            checkpoint(f"commit:{progress['batches']}")
            bar.update(len(batch))


def _build(state: _State, target: Path, profile: Profile, plan: _Plan, checkpoint: Checkpoint) -> dict[str, Any]:
    """Writes the committed triples into a new store beside ``target`` and swaps it in."""
    progress = state.progress
    tmp = store_layout.new_temp_dir(target)
    try:
        oxstore = ox.Store(str(tmp / store_layout.DATA_DIR))
        collector = index_build.TripleCollector()  # the index is written from what goes in
        batch: list[ox.Quad] = []
        for row in state.triples():
            batch.append(_quad(row, profile))
            if len(batch) >= _BUILD_CHUNK:
                oxstore.bulk_extend(batch)
                collector.add_quads(batch)
                batch = []
        oxstore.bulk_extend(batch)
        collector.add_quads(batch)
        labels = rebuild_label_index(oxstore, str(tmp / store_layout.LABELS))
        oxstore.flush()
        triples = len(oxstore)
        index_build.build_index(oxstore, tmp, profile, collected=collector)
        del oxstore, collector
        gc.collect()  # close the database before the manifest marks it complete and it is renamed
        record = {
            **plan.arguments,
            "truncated": progress["truncated"],
            "started": progress["started"],
            "finished": progress["finished"],
            "counts": {
                "entities": state.count("SELECT COUNT(*) FROM nodes"),
                "edges": progress["edges"],
                "names": progress["names"],
                "literals": state.count("SELECT COUNT(*) FROM triples WHERE literal = 1"),
                "triples": triples,
                "batches": progress["batches"],
                "source_calls": progress["source_calls"],
                "runs": progress["runs"],
            },
            "tool": {"name": "kg-adapters", "version": kg_adapters.__version__},
        }
        store_layout.write_manifest(
            tmp,
            {
                "profile": profile.name,
                "triples": triples,
                "labels": labels,
                "label_predicates": list(INDEXED_LABEL_PREDICATES),
                "sources": [{"extracted_from": plan.arguments["source"], "loaded_at": progress["finished"]}],
                "created": progress["finished"],
                "updated": progress["finished"],
                "extraction": record,
            },
        )
        checkpoint("built")
        store_layout.swap_in(tmp, target)
    except BaseException as exc:
        release_frames(exc)
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, (OSError, sqlite3.Error, BackendError)):
            raise ExtractError(f"cannot write the store at {target}: {exc}") from exc
        raise
    return record


def _quad(row: TripleRow, profile: Profile) -> ox.Quad:
    head, relation, literal, tail, datatype, lang = row
    obj: Node = Literal(value=tail, datatype=datatype or None, lang=lang or None) if literal else tail
    return ox.Quad(_term(head, profile), to_oxigraph_term(relation, profile, relation=True), _term(obj, profile))


def _term(node: Node, profile: Profile) -> Any:
    if isinstance(node, str) and is_blank_node(node):
        return ox.BlankNode(node[2:])
    return to_oxigraph_term(node, profile)


def _report(target: Path, record: dict[str, Any], seconds: float) -> ExtractReport:
    relations = record["relations"]
    return ExtractReport(
        store=str(target),
        source=record["source"],
        profile=record["profile"],
        seeds=tuple(record["seeds"]),
        hops=record["hops"],
        direction=record["direction"],
        relations=tuple(relations) if relations is not None else None,
        max_edges=record["max_edges"],
        truncated=record["truncated"],
        started=record["started"],
        finished=record["finished"],
        seconds=seconds,
        **record["counts"],  # the report's counters, by the same names
    )


def store_snapshot(store: str | os.PathLike[str]) -> dict[str, Any]:
    """What makes two extracted stores the same, to compare runs: every triple (N-Triples, sorted),
    the name index rows, the profile, and the manifest's extraction record without its times and
    work counters (batches, source calls and runs differ when a run was interrupted)."""
    path = Path(store)
    manifest = store_layout.read_manifest(path)
    record = {k: v for k, v in manifest.get("extraction", {}).items() if k not in ("started", "finished")}
    record["counts"] = {k: v for k, v in record.get("counts", {}).items() if k not in _WORK_COUNTERS}
    data = ox.Store.read_only(str(store_layout.data_dir(path, manifest)))
    triples = sorted(str(quad.triple) for quad in data)
    del data
    labels_file = store_layout.labels_path(path, manifest)
    with contextlib.closing(sqlite3.connect(f"file:{labels_file}?mode=ro", uri=True)) as db:
        labels = sorted(db.execute("SELECT iri, label, lang FROM labels"))
    return {"profile": manifest.get("profile"), "extraction": record, "triples": triples, "labels": labels}


_WORK_COUNTERS = ("batches", "source_calls", "runs")


def _no_checkpoint(point: str) -> None:
    """The default :data:`Checkpoint`: nothing to do."""
