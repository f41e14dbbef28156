"""What ``GET /sparql`` without a query answers: a SPARQL 1.1 Service Description with VoID statistics.

The description names the endpoint, the query language it answers (SPARQL 1.1 Query only: no update
language, so clients see it is read-only), every result and graph format it writes, and its default
graph's size: ``void:triples`` and one ``void:propertyPartition`` per relation (``void:property``,
``void:triples``), the relations with the most triples first, at most :data:`MAX_PARTITIONS`
(``void:properties`` says how many there are in all).

The statistics must stay cheap on a store of hundreds of millions of triples, so they come from what
the store already keeps: the traversal index holds every default-graph edge keyed by
``node * relations + relation`` and every literal object the same way, so one pass of ``bincount``
over those memory-mapped arrays counts each relation (chunked: memory stays bounded), once per store
version. Where the index holds blank-node edges only as flags, the relations that may have them are
listed without a count rather than with a wrong one. A store without an index is counted by one
``GROUP BY`` query when it is small (:data:`SMALL_STORE` triples); other graphs (remote endpoints,
large unindexed stores) get the description without statistics.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kg_adapters.serve.formats import ALL_FORMATS, GRAPH_FORMATS, choose_format

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    import pyoxigraph as ox
    from starlette.requests import Request
    from starlette.responses import Response

    from kg_adapters.backends.oxigraph import OxigraphGraph
    from kg_adapters.base import KnowledgeGraph
    from kg_adapters.index.read import TraversalIndex
    from kg_adapters.serve.current import CurrentGraph

SD = "http://www.w3.org/ns/sparql-service-description#"
VOID = "http://rdfs.org/ns/void#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS_COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"
XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"
PREFIXES = {"sd": SD, "void": VOID, "formats": "http://www.w3.org/ns/formats/", "rdfs": RDFS_COMMENT[:-7]}
MAX_PARTITIONS = 1000
"""Most relations listed with their counts (the ones with the most triples)."""
SMALL_STORE = 200_000
"""Triples up to which a store without a traversal index is counted by a ``GROUP BY`` query."""
DESCRIPTION_FORMATS = tuple(sorted(GRAPH_FORMATS, key=lambda f: f.name != "TURTLE"))
"""The graph formats, Turtle first (the default)."""
_access_log = logging.getLogger("kg_adapters.serve.access")
_CHUNK = 1 << 22
"""Index keys counted at a time (32 MiB of int64 and as much for their remainders)."""


@dataclass(frozen=True, kw_only=True)
class Statistics:
    """The default graph's size, as far as it is known cheaply."""

    triples: int | None = None
    relations: int | None = None
    """How many distinct relations (``void:properties``)."""
    partitions: tuple[tuple[str, int | None], ...] = ()
    """(relation IRI, its triples or None where not known), most triples first, at most MAX_PARTITIONS."""


class StatisticsCache:
    """Statistics per store version: computed on the first description asked of it, kept while it
    is current (a version never changes; ``kga load`` swaps in a new one)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: object = None
        self._value = Statistics()

    def get(self, kg: KnowledgeGraph) -> Statistics:
        key = _version_key(kg)
        with self._lock:  # one computation at a time; a second request waits for it, not repeats it
            if key is None or key != self._key:
                self._value, self._key = statistics(kg), key
            return self._value


def statistics(kg: KnowledgeGraph) -> Statistics:
    """What :mod:`this module <kg_adapters.serve.service_description>` can count cheaply of ``kg``."""
    from kg_adapters.backends.oxigraph import OxigraphGraph
    from kg_adapters.serve.current import embedded_store

    store = embedded_store(kg)
    if not isinstance(store, OxigraphGraph):
        return Statistics()
    index = store.traversal_index
    if index is not None:
        return index_statistics(index)
    return small_store_statistics(store)


def index_statistics(index: TraversalIndex) -> Statistics:
    """Counts per relation from the traversal index (one chunked pass over its key arrays)."""
    import numpy as np

    from kg_adapters.profiles import get_profile

    width = index.width
    counts = np.zeros(width, dtype=np.int64)
    for name in ("out_key", "literal_key"):
        keys = index.array(name)
        for start in range(0, len(keys), _CHUNK):
            counts += np.bincount(keys[start : start + _CHUNK] % width, minlength=width)
    uncertain: set[int] = set()
    if index.blank_edges:  # these edges are only flagged per (node, relation): their relations go uncounted
        for name in ("out_extra", "in_extra"):
            uncertain.update(int(r) for r in np.unique(index.array(name) % width))
    profile = get_profile(index.profile_name)
    present = [number for number in range(len(index.relations)) if counts[number] or number in uncertain]
    present.sort(key=lambda number: (-int(counts[number]), index.relations[number]))
    partitions = tuple(
        (profile.relation_iri(index.relations[number]), None if number in uncertain else int(counts[number]))
        for number in present[:MAX_PARTITIONS]
    )
    return Statistics(
        triples=index.edge_count + len(index.views["literal_key"]) + index.blank_edges,
        relations=len(present),
        partitions=partitions,
    )


def small_store_statistics(store: OxigraphGraph) -> Statistics:
    """Counts per relation by one ``GROUP BY`` query, for a store of at most SMALL_STORE triples."""
    size = store.manifest.get("triples") if store.path is not None else len(store.store)
    if not isinstance(size, int) or size > SMALL_STORE:
        return Statistics()
    query = "SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p"
    rows = [(str(row["p"].value), int(row["n"].value)) for row in store.store.query(query)]  # type: ignore[union-attr]
    rows.sort(key=lambda row: (-row[1], row[0]))
    return Statistics(triples=sum(n for _, n in rows), relations=len(rows), partitions=tuple(rows[:MAX_PARTITIONS]))


def describe(endpoint: str, stats: Statistics) -> list[ox.Triple]:
    """The service description of the endpoint at ``endpoint`` (an absolute IRI) as triples."""
    import pyoxigraph as ox

    def iri(value: str) -> ox.NamedNode:
        return ox.NamedNode(value)

    def count(value: int) -> ox.Literal:
        return ox.Literal(str(value), datatype=iri(XSD_INTEGER))

    service, dataset, graph = iri(endpoint), ox.BlankNode(), ox.BlankNode()
    a = iri(RDF_TYPE)
    triples = [
        ox.Triple(service, a, iri(SD + "Service")),
        ox.Triple(service, iri(SD + "endpoint"), service),
        ox.Triple(service, iri(SD + "supportedLanguage"), iri(SD + "SPARQL11Query")),
        *(ox.Triple(service, iri(SD + "resultFormat"), iri(f.iri)) for f in ALL_FORMATS),
        ox.Triple(
            service,
            iri(RDFS_COMMENT),
            ox.Literal(
                "Read-only: SPARQL 1.1 Query (SELECT, ASK, CONSTRUCT, DESCRIBE) over GET and POST; "
                "SPARQL Update, LOAD and SERVICE are refused.",
                language="en",
            ),
        ),
        ox.Triple(service, iri(SD + "defaultDataset"), dataset),
        ox.Triple(dataset, a, iri(SD + "Dataset")),
        ox.Triple(dataset, iri(SD + "defaultGraph"), graph),
        ox.Triple(graph, a, iri(SD + "Graph")),
        ox.Triple(graph, a, iri(VOID + "Dataset")),
        ox.Triple(graph, iri(VOID + "sparqlEndpoint"), service),
    ]
    if stats.triples is not None:
        triples.append(ox.Triple(graph, iri(VOID + "triples"), count(stats.triples)))
    if stats.relations is not None:
        triples.append(ox.Triple(graph, iri(VOID + "properties"), count(stats.relations)))
        if stats.relations > len(stats.partitions):
            note = f"void:propertyPartition lists the {len(stats.partitions)} relations with the most triples"
            triples.append(ox.Triple(graph, iri(RDFS_COMMENT), ox.Literal(note, language="en")))
    partitions = [ox.BlankNode() for _ in stats.partitions]
    triples.extend(ox.Triple(graph, iri(VOID + "propertyPartition"), partition) for partition in partitions)
    for partition, (relation, size) in zip(partitions, stats.partitions, strict=True):
        triples.append(ox.Triple(partition, iri(VOID + "property"), iri(relation)))
        if size is not None:
            triples.append(ox.Triple(partition, iri(VOID + "triples"), count(size)))
    return triples


def asked(query_string: str) -> bool:
    """Whether a GET with this query string asks for the description: no ``query`` (and no ``update``,
    which is refused as such) among its parameters."""
    from urllib.parse import parse_qsl

    return not any(name in ("query", "update") for name, _ in parse_qsl(query_string, keep_blank_values=True))


def answer(
    kg: KnowledgeGraph, cache: StatisticsCache, *, endpoint: str, accept: str, spelled: tuple[str, ...]
) -> tuple[bytes, str]:
    """(body, content type) of the description in the format ``Accept``/``format=`` ask for (Turtle
    by default).

    Raises:
        NotAcceptable: no graph format is acceptable.
    """
    import pyoxigraph as ox

    chosen = choose_format(DESCRIPTION_FORMATS, accept, spelled, what="the service description")
    triples = describe(endpoint, cache.get(kg))
    body = ox.serialize(triples, format=getattr(ox.RdfFormat, chosen.name), prefixes=PREFIXES)
    assert body is not None  # serialize() returns the bytes when given no output
    return body, chosen.content_type


def handler(graphs: CurrentGraph) -> Callable[[Request], Awaitable[Response]]:
    """The Starlette handler answering the description of the graph ``graphs`` serves (statistics
    computed in a worker thread, once per store version)."""
    cache = StatisticsCache()

    async def describe_service(request: Request) -> Response:
        import anyio.to_thread
        from starlette.responses import Response

        from kg_adapters.errors import KGError
        from kg_adapters.serve.formats import FORMAT_PARAMETERS, NotAcceptable

        started = time.monotonic()
        accept = request.headers.get("accept", "")
        spelled = tuple(value for name, value in request.query_params.multi_items() if name in FORMAT_PARAMETERS)
        endpoint = endpoint_iri(request)

        def run() -> tuple[bytes, str]:
            with graphs.use() as kg:
                return answer(kg, cache, endpoint=endpoint, accept=accept, spelled=spelled)

        status, media = 200, "text/plain; charset=utf-8"
        try:
            body, media = await anyio.to_thread.run_sync(run)
        except NotAcceptable as exc:
            status, body = 406, (str(exc) + "\n").encode()
        except KGError as exc:
            status, body = 500, (str(exc).splitlines()[0] + "\n").encode()
        _access_log.info(
            '%s "%s %s" %s %s %s %.1fms',
            request.client.host if request.client else "-",
            request.method,
            request.url.path,
            "DESCRIPTION",
            status,
            len(body),
            (time.monotonic() - started) * 1000,
        )
        return Response(body, status_code=status, media_type=media, headers={"Cache-Control": "no-store"})

    return describe_service


def endpoint_iri(request: Request) -> str:
    """The absolute IRI of the endpoint as the client reached it (its Host header); where that is no
    IRI (a hostile Host), the address the server listens on."""
    import pyoxigraph as ox

    iri = str(request.url.replace(query="", fragment=""))
    try:
        ox.NamedNode(iri)
    except ValueError:
        host, port = request.scope.get("server") or ("127.0.0.1", 80)
        iri = f"{request.url.scheme}://{f'[{host}]' if ':' in host else host}:{port}{request.url.path}"
    return iri


def _version_key(kg: KnowledgeGraph) -> object:
    """What identifies the data ``kg`` answers from: an on-disk store's path and current version (a
    load makes a new one); None where the statistics are not kept (in memory, other backends)."""
    from kg_adapters.backends.oxigraph import OxigraphGraph
    from kg_adapters.serve.current import embedded_store

    store = embedded_store(kg)
    if isinstance(store, OxigraphGraph) and store.path is not None:
        return (store.path, store.manifest.get("data"), store.manifest.get("updated"))
    return None
