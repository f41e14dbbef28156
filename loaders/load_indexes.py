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
) -> tuple[int, float]:
    """Writes the traversal index and the name and relation indexes of the loaded version, from what the
    load saw (``indexing``: for an append, after the previous version's index replayed into it, see
    :func:`index_plan`) or else by reading ``oxstore`` back; returns (names, the seconds the load waited
    for the traversal index)."""
    index_seconds = 0.0
    if indexing is not None:  # from what the load saw (no store read), started as the last input was handed over
        indexing.start_index()
        labels, _stats = indexing.indexes_written()
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
    return labels, index_seconds
