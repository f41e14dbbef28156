"""Where a load's indexes come from: a new store's from what the load saw; an append's (``kga load`` into
an existing store, such as a dump split into parts loaded one by one) from the previous version's
traversal index replayed into the load's collector (:mod:`kg_adapters.index.replay`) plus what the load
saw, so appending a part never reads the whole store back. When the previous version's index cannot
stand for its triples (it has none: ``--no-index`` or an older kga; another format or profile; ids its
profile does not spell back) the append reads the store back, as before, and says so (the load's
progress and :attr:`loaders.report.LoadReport.index_source`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from kg_adapters import store_layout
from kg_adapters.index import build as index_build
from kg_adapters.index.emit import IndexStats
from kg_adapters.profiles import get_profile
from kg_adapters.store_build import rebuild_label_index
from loaders.indexing import IndexingSink

FROM_THE_LOAD = "the load"
FROM_PREVIOUS_INDEX = "the previous version's traversal index and the load"
READ_BACK = "the store read back"


@dataclass(frozen=True, kw_only=True)
class IndexPlan:
    """How a load writes its traversal, name and relation indexes."""

    replay: Path | None
    """The previous version whose traversal index is replayed into the collector (None: nothing to replay)."""
    collect: bool
    """Whether the load numbers its triples as they go by (else the indexes are read from the store)."""
    source: str
    """What the indexes are written from, in words (the report's ``index_source``)."""


def index_plan(target: Path, previous: dict[str, Any] | None, profile: str, index: bool) -> IndexPlan:
    """The plan of a load into ``target`` (``previous``: the manifest of the version it extends, None for
    a new store; ``index``: whether a traversal index is built)."""
    from kg_adapters.index.replay import replay_refusal

    if previous is None:
        return IndexPlan(replay=None, collect=index, source=FROM_THE_LOAD)
    if not index:
        return IndexPlan(replay=None, collect=False, source=f"{READ_BACK} (no traversal index is built)")
    version = store_layout.version_dir(target, previous)
    refusal = replay_refusal(version, get_profile(profile))
    if refusal is not None:
        return IndexPlan(replay=None, collect=False, source=f"{READ_BACK} ({refusal})")
    return IndexPlan(replay=version, collect=True, source=FROM_PREVIOUS_INDEX)


def index_phase(plan: IndexPlan) -> str:
    """The progress bar's phase after the parse: what the indexes are written from, for an append."""
    return "index and labels" if plan.source == FROM_THE_LOAD else f"index and labels from {plan.source}"


def write_load_indexes(
    oxstore: ox.Store | None,
    indexing: IndexingSink | None,
    tmp: Path,
    profile: str,
    index: bool,
    checkpoint: Callable[[str], None],
) -> tuple[int, float, IndexStats | None]:
    """Writes the traversal index and the name and relation indexes of the loaded version, from what the
    load saw (``indexing``: for an append, after the previous version's index replayed into it, see
    :func:`index_plan`) or else by reading ``oxstore`` back; returns (names, the seconds the load waited
    for the traversal index, the traversal index's stats when it was written from what the load saw)."""
    index_seconds = 0.0
    stats = None
    if indexing is not None:  # from what the load saw (no store read), started as the last input was handed over
        indexing.start_index()
        labels, stats = indexing.indexes_written()
        index_seconds = indexing.seconds  # the load's waits for it
        checkpoint("indexed")
    else:
        assert oxstore is not None
        if index:  # the store read back (see index_plan): its triples are the old ones and the new
            started = time.perf_counter()
            index_build.build_index(oxstore, tmp, get_profile(profile))
            index_seconds = time.perf_counter() - started
        checkpoint("indexed")
        labels = rebuild_label_index(oxstore, str(tmp / store_layout.LABELS))
    checkpoint("labelled")
    return labels, index_seconds, stats


DEFAULT_GRAPH_FORMATS = frozenset({"nt", "ttl", "rdf", "tsv", "metaqa", "freebase", "wikidata-json"})
"""Input formats whose statements the traversal index is known to count as the store does. A load reads every
format into the default graph (a quad's graph is dropped), but the quad formats (``nq``, ``trig``) are left
out: their store is counted, as before."""


def index_counts_store(plan: list[tuple[str, str]], previous: dict[str, Any] | None) -> bool:
    """Whether the traversal index a new load writes from what it saw holds every stored triple exactly
    once, blank-node triples aside (:func:`indexed_triples`): then the store need not be counted. Counting
    it scans all of it once Oxigraph is done (1.9 s of a 21 s load at 4M triples, on the critical path when
    the index is written first); the index has dropped the duplicates as it sorted. It holds them all when
    the store is new (an append's previous version may hold what its index leaves out) and every input is
    of a triple format (:data:`DEFAULT_GRAPH_FORMATS`)."""
    return previous is None and all(fmt in DEFAULT_GRAPH_FORMATS for _path, fmt in plan)


def indexed_triples(stats: IndexStats | None) -> int | None:
    """The triples the index holds, when none has a blank node (a load renames blank nodes once per bulk
    load, the index once per chunk, so blank triples may count apart): else None, count the store."""
    if stats is None or stats.blank_edges:
        return None
    return stats.edges + stats.literal_edges


def indexes_and_count(
    indexing: IndexingSink,
    plan: list[tuple[str, str]],
    previous: dict[str, Any] | None,
    count: Callable[[], int],
    tmp: Path,
    profile: str,
    checkpoint: Callable[[str], None],
) -> tuple[int, float, int]:
    """:func:`write_load_indexes` from what the load saw, and the store's triples: read from the index
    when it holds them all (:func:`index_counts_store`, :func:`indexed_triples`), else ``count()`` (the
    store scanned: before waiting for the index, which is being written beside it, when the index cannot
    count them); returns (names, the seconds waited for the index, triples)."""
    triples = None if index_counts_store(plan, previous) else count()
    labels, seconds, stats = write_load_indexes(None, indexing, tmp, profile, True, checkpoint)
    if triples is None:
        triples = indexed_triples(stats)
    return labels, seconds, count() if triples is None else triples
