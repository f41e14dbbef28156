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
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

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

    The collector numbers a chunk on a worker thread while Oxigraph loads the next one (``bulk_load``
    releases the GIL while it parses and writes), one chunk at a time and in the order
    given, so the index is the one a collector fed in the load's own thread would write. ``seconds``
    is the time the load waited for the collector (what alone would hide the thread's cost to the
    load: benchmarks compare loads with and without the index). :meth:`finish` waits for the last chunk."""

    def __init__(self, store: ox.Store, collector: TripleCollector) -> None:
        self.store = store
        self.collector = collector
        self.seconds = 0.0
        self._pending: threading.Thread | None = None
        self._outcome = _Outcome()

    def bulk_load(self, input: bytes, format: ox.RdfFormat) -> None:
        self.store.bulk_load(input, format)
        self._hand_over(self.collector.add_rdf, input, format)

    def contains_named_graph(self, graph_name: ox.NamedNode) -> bool:
        return self.store.contains_named_graph(graph_name)

    def bulk_extend(self, quads: Iterable[ox.Quad]) -> None:
        batch: list[ox.Quad] = []

        def passing() -> Iterator[ox.Quad]:
            for quad in quads:
                yield quad
                batch.append(quad)
                if len(batch) >= _COLLECT_EVERY:
                    self._hand_over(self.collector.add_quads, batch.copy())
                    batch.clear()

        self.store.bulk_extend(passing())
        self._hand_over(self.collector.add_quads, batch)

    def finish(self) -> TripleCollector:
        """The collector, once it holds every triple handed over (raises what it raised)."""
        self._wait()
        return self.collector

    def abandon(self) -> None:
        """Waits for the collector without raising (a load that failed: no thread outlives it)."""
        if self._pending is not None:
            self._pending.join()
            self._pending = None

    def _hand_over(self, add: Callable[..., None], *arguments: Any) -> None:
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


@contextlib.contextmanager
def joined_on_failure(sink: object) -> Iterator[None]:
    """Waits for the worker of ``sink`` (when it is an :class:`IndexingSink`) if the block fails."""
    try:
        yield
    except BaseException:
        if isinstance(sink, IndexingSink):
            sink.abandon()
        raise


@dataclass
class _Outcome:
    """What the collector's worker threads report back: what one raised."""

    failure: BaseException | None = None


def _run(add: Callable[..., None], arguments: tuple[Any, ...], outcome: _Outcome) -> None:
    try:
        add(*arguments)
    except BaseException as exc:  # re-raised in the load's thread by IndexingSink._wait
        outcome.failure = exc


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
