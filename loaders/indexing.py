"""``index_store``: add (or rebuild) the traversal index of an existing store (``kga index``).

Stores built by ``kga load`` and ``kga extract`` get their index before the manifest swap; this adds
one to a store built without it (``--no-index``, or by an older version). The index is written into
the current version directory under the store's load lock and appears with one rename, so readers
see either no index (and answer through Oxigraph) or the whole index; a build killed midway leaves
only a temporary directory, which the next build removes.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from kg_adapters.commands import Command, emit
from kg_adapters.errors import BackendError, LoadError

if TYPE_CHECKING:
    import pyoxigraph as ox

    from kg_adapters.backends.traversal_index import IndexStats, TripleCollector

_COLLECT_EVERY = 10_000
"""Quads passed to Oxigraph's ``bulk_extend`` between two handings to the collector."""


class IndexingSink:
    """A store being loaded that also hands every triple written to a
    :class:`~kg_adapters.backends.traversal_index.TripleCollector`, so the load writes the traversal
    index without reading the store back. A triple is handed over once Oxigraph has taken it: a
    chunk that fails is not, and whatever a lenient load adds again is dropped as a duplicate.
    ``seconds`` is the time spent collecting (the index's share of the load)."""

    def __init__(self, store: ox.Store, collector: TripleCollector) -> None:
        self.store = store
        self.collector = collector
        self.seconds = 0.0

    def bulk_load(self, input: bytes, format: ox.RdfFormat) -> None:
        self.store.bulk_load(input, format)
        started = time.perf_counter()
        self.collector.add_rdf(input, format)
        self.seconds += time.perf_counter() - started

    def contains_named_graph(self, graph_name: ox.NamedNode) -> bool:
        return self.store.contains_named_graph(graph_name)

    def bulk_extend(self, quads: Iterable[ox.Quad]) -> None:
        batch: list[ox.Quad] = []

        def passing() -> Iterator[ox.Quad]:
            for quad in quads:
                yield quad
                batch.append(quad)
                if len(batch) >= _COLLECT_EVERY:
                    self._collect(batch)

        self.store.bulk_extend(passing())
        self._collect(batch)

    def _collect(self, batch: list[ox.Quad]) -> None:
        started = time.perf_counter()
        self.collector.add_quads(batch)
        batch.clear()
        self.seconds += time.perf_counter() - started


def index_store(store: str, *, progress: Callable[[int], None] | None = None, every: int = 100_000) -> IndexStats:
    """Builds the traversal index of the store at ``store`` (replacing an existing one).

    Raises:
        StoreNotFound: no complete store there.
        LoadError: another load into the store is running, or the store cannot be read.
    """
    import pyoxigraph as ox

    from kg_adapters import store_layout
    from kg_adapters.backends import traversal_index
    from kg_adapters.profiles import get_profile
    from loaders.core import exclusive_load_lock

    target = Path(store).expanduser().absolute()
    with exclusive_load_lock(target):
        version = store_layout.open_version(target)
        try:
            data = ox.Store.read_only(str(version.data))
            try:
                return traversal_index.build_index(
                    data,
                    version.directory,
                    get_profile(version.manifest.get("profile", "generic")),
                    progress=progress,
                    every=every,
                )
            finally:
                del data
        except (OSError, BackendError) as exc:
            raise LoadError(f"cannot index the store: {exc}", file=str(target)) from exc
        finally:
            version.close()


def index_bytes(store: str) -> int:
    """The size on disk of the traversal index of the store at ``store`` (0 when it has none)."""
    from kg_adapters import store_layout
    from kg_adapters.backends import traversal_index

    version = store_layout.open_version(Path(store).expanduser().absolute())
    try:
        directory = traversal_index.index_dir(version.directory)
        return sum(path.stat().st_size for path in directory.iterdir()) if directory.is_dir() else 0
    finally:
        version.close()


def index_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", required=True, help="store directory")


def cmd_index(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    stats = index_store(args.store)
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
