"""The servers ask a graph for the :class:`EmbeddedSparql` ability instead of unwrapping it: every wrapper
forwards it, so what a wrapper adds applies to the servers' queries too (a counting wrapper counts them,
a cache answers and refuses as it does for ``query``), and the worker processes find the store through
it. The relation index's label lookup fails with a typed error."""

from __future__ import annotations

import io
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg_adapters import connect
from kg_adapters.base import EmbeddedSparql, SparqlQueryable
from kg_adapters.errors import BackendError, CacheMiss, QueryError, StoreNotFound
from kg_adapters.relation_index import RelationIndex
from kg_adapters.serve.workers import WorkerPool
from kg_adapters.testing.server_processes import all_gone, worker_pids
from kg_adapters.wrappers.cache import ResultCache, cached
from kg_adapters.wrappers.counting import CountingKG

NAME = "SELECT ?n WHERE { <http://rdf.freebase.com/ns/m.0bxtg> <http://rdf.freebase.com/ns/type.object.name> ?n }"


@pytest.fixture(scope="module")
def workers() -> Iterator[WorkerPool]:
    pool = WorkerPool(1)
    yield pool
    pool.close()


def test_every_wrapper_level_forwards_the_ability_and_sees_the_queries(
    sample_store_url: str, workers: WorkerPool
) -> None:
    store = connect(sample_store_url)
    inner = CountingKG(store)
    outer = CountingKG(inner)
    assert isinstance(outer, EmbeddedSparql) and outer.reader_url() == store.reader_url()  # type: ignore[attr-defined]
    output = io.BytesIO()
    outer.sparql_write(NAME, output, format="TSV", runner=workers.runner(time.monotonic() + 60))
    assert output.getvalue() == b'?n\n"Tom Hanks"@en\n'
    rows = outer.sparql_rows(NAME, max_rows=5, runner=workers.runner(time.monotonic() + 60))
    assert [str(row["n"].value) for row in rows] == ["Tom Hanks"]  # type: ignore[union-attr]
    assert outer.asked("query") == inner.asked("query") == [[NAME], [NAME]]
    outer.close()


def test_a_cache_answers_the_servers_rows_and_refuses_misses_in_replay(
    sample_store_url: str, workers: WorkerPool, tmp_path: object
) -> None:
    counting = CountingKG(connect(sample_store_url))
    cache = ResultCache(None)
    graph = cached(counting, cache=cache, namespace="sample")
    assert isinstance(graph, EmbeddedSparql)
    first = graph.sparql_rows(NAME, max_rows=3, runner=workers.runner(time.monotonic() + 60))
    again = graph.sparql_rows(NAME, max_rows=3, runner=workers.runner(time.monotonic() + 60))
    assert first == again and getattr(again, "from_cache", False)
    assert counting.asked("query") == [[NAME]]  # the second answer never reached the store
    replay = cached(counting, cache=ResultCache(None, mode="replay"), namespace="sample")
    with pytest.raises(CacheMiss):
        replay.sparql_rows("ASK { ?s ?p ?o }", runner=workers.runner(time.monotonic() + 60))  # type: ignore[attr-defined]
    with pytest.raises(CacheMiss):
        replay.sparql_write("ASK { ?s ?p ?o }", io.BytesIO(), format="JSON")  # type: ignore[attr-defined]
    assert counting.asked("query") == [[NAME]]
    graph.close()


def test_errors_in_the_worker_come_back_typed(sample_store_url: str, workers: WorkerPool) -> None:
    with connect(sample_store_url) as graph:
        assert isinstance(graph, EmbeddedSparql)
        with pytest.raises(QueryError, match="rejected"):
            graph.sparql_rows("SELECT nonsense {", runner=workers.runner(time.monotonic() + 60))
        with pytest.raises(QueryError, match="no format"):
            graph.sparql_write(NAME, io.BytesIO(), format="TURTLE", runner=workers.runner(time.monotonic() + 60))
        assert graph.sparql_rows("ASK {}", runner=workers.runner(time.monotonic() + 60)) == [{"boolean": True}]


def test_in_memory_and_remote_graphs(workers: WorkerPool) -> None:
    memory = CountingKG(connect("oxigraph://"))
    assert isinstance(memory, EmbeddedSparql) and memory.reader_url() is None
    # no other process can open it: answered here, even when a runner is offered
    assert memory.sparql_rows("ASK {}", runner=workers.runner(time.monotonic() + 60)) == [{"boolean": True}]
    remote = CountingKG(connect("sparql+http://127.0.0.1:9/sparql"))
    assert isinstance(remote, SparqlQueryable) and not isinstance(remote, EmbeddedSparql)


def test_relation_labels_on_a_closed_index_is_a_backend_error() -> None:
    index = RelationIndex()
    index.add([("http://example.org/p", "place", "en")])
    assert index.relation_labels(["http://example.org/p"], ("en",)) == {"http://example.org/p": "place"}
    index.close()
    with pytest.raises(BackendError, match="relation index"):
        index.relation_labels(["http://example.org/p"], ("en",))


def test_workers_open_the_graph_before_a_server_starts(sample_store_url: str, tmp_path: Path) -> None:
    """A pool's workers are warm before any call (no caller's deadline pays for their start): one that
    cannot open its graph fails the pool at once, with the reason, and leaves no process behind."""
    others = worker_pids(os.getpid())  # the module's own pool
    with pytest.raises(BackendError, match="cannot open its graph: no store") as raised:
        WorkerPool(2, warm=f"oxigraph://{tmp_path}/no-store")
    assert isinstance(raised.value.__cause__, StoreNotFound)
    assert worker_pids(os.getpid()) == others
    with connect(sample_store_url) as graph:
        assert isinstance(graph, EmbeddedSparql)
        reader_url = graph.reader_url()
    assert reader_url is not None
    pool = WorkerPool(2, warm=reader_url)
    try:
        started = worker_pids(os.getpid()) - others
        assert len(started) == 2
        answer = pool.call(time.monotonic() + 60, reader_url, "sparql_rows", {"sparql": "ASK {}"}, None)
        assert answer == [{"boolean": True}]
    finally:
        pool.close()
    assert all_gone(started)
