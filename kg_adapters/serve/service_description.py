"""What ``GET /sparql`` without a query answers: a SPARQL 1.1 Service Description with VoID statistics.

The description names the endpoint, the query language it answers (SPARQL 1.1 Query only: no update
language, so clients see it is read-only), every result and graph format it writes, and its default
graph's size: ``void:triples`` and one ``void:propertyPartition`` per relation (``void:property``,
``void:triples``), the relations with the most triples first, at most :data:`MAX_PARTITIONS`
(``void:properties`` says how many there are in all).

The statistics must stay cheap on a store of hundreds of millions of triples, so the server asks the
graph what it knows without a scan (:class:`~kg_adapters.base.CountsRelations`): the embedded store
counts from its traversal index, once per store version (:mod:`kg_adapters.index.counts`), or by
one ``GROUP BY`` when it is small and has no index; other graphs (remote endpoints) get the
description without statistics.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from kg_adapters.base import CountsRelations
from kg_adapters.records import GraphCounts
from kg_adapters.serve.formats import ALL_FORMATS, GRAPH_FORMATS, choose_format

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    import pyoxigraph as ox
    from starlette.requests import Request
    from starlette.responses import Response

    from kg_adapters.base import KnowledgeGraph
    from kg_adapters.serve.current import CurrentGraph

SD = "http://www.w3.org/ns/sparql-service-description#"
VOID = "http://rdfs.org/ns/void#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS_COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"
XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"
PREFIXES = {"sd": SD, "void": VOID, "formats": "http://www.w3.org/ns/formats/", "rdfs": RDFS_COMMENT[:-7]}
MAX_PARTITIONS = 1000
"""Most relations listed with their counts (the ones with the most triples)."""
DESCRIPTION_FORMATS = tuple(sorted(GRAPH_FORMATS, key=lambda f: f.name != "TURTLE"))
"""The graph formats, Turtle first (the default)."""
_access_log = logging.getLogger("kg_adapters.serve.access")


def statistics(kg: KnowledgeGraph) -> GraphCounts:
    """What ``kg`` knows of its size cheaply (:class:`~kg_adapters.base.CountsRelations`), else nothing."""
    if isinstance(kg, CountsRelations):
        return kg.relation_counts(max_relations=MAX_PARTITIONS)
    return GraphCounts()


def describe(endpoint: str, stats: GraphCounts) -> list[ox.Triple]:
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
        if stats.relations > len(stats.per_relation):
            note = f"void:propertyPartition lists the {len(stats.per_relation)} relations with the most triples"
            triples.append(ox.Triple(graph, iri(RDFS_COMMENT), ox.Literal(note, language="en")))
    partitions = [ox.BlankNode() for _ in stats.per_relation]
    triples.extend(ox.Triple(graph, iri(VOID + "propertyPartition"), partition) for partition in partitions)
    for partition, (relation, size) in zip(partitions, stats.per_relation, strict=True):
        triples.append(ox.Triple(partition, iri(VOID + "property"), iri(relation)))
        if size is not None:
            triples.append(ox.Triple(partition, iri(VOID + "triples"), count(size)))
    return triples


def asked(query_string: str) -> bool:
    """Whether a GET with this query string asks for the description: no ``query`` (and no ``update``,
    which is refused as such) among its parameters."""
    from urllib.parse import parse_qsl

    return not any(name in ("query", "update") for name, _ in parse_qsl(query_string, keep_blank_values=True))


def answer(kg: KnowledgeGraph, *, endpoint: str, accept: str, spelled: tuple[str, ...]) -> tuple[bytes, str]:
    """(body, content type) of the description in the format ``Accept``/``format=`` ask for (Turtle
    by default).

    Raises:
        NotAcceptable: no graph format is acceptable.
    """
    import pyoxigraph as ox

    chosen = choose_format(DESCRIPTION_FORMATS, accept, spelled, what="the service description")
    triples = describe(endpoint, statistics(kg))
    body = ox.serialize(triples, format=getattr(ox.RdfFormat, chosen.name), prefixes=PREFIXES)
    assert body is not None  # serialize() returns the bytes when given no output
    return body, chosen.content_type


def handler(graphs: CurrentGraph) -> Callable[[Request], Awaitable[Response]]:
    """The Starlette handler answering the description of the graph ``graphs`` serves (statistics
    computed in a worker thread; the store keeps them for its version)."""

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
                return answer(kg, endpoint=endpoint, accept=accept, spelled=spelled)

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
