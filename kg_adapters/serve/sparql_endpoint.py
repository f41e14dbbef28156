"""``kga serve``: the SPARQL 1.1 Protocol over any graph, read-only, at ``/sparql``.

Built on Starlette (routing, request parsing) served by uvicorn: a small, well-kept ASGI stack that
the MCP SDK's streamable HTTP transport uses too, so ``kga mcp --transport http`` and ``kga serve``
share one HTTP stack and one extra. Routes: ``/sparql`` (a query; without one, the service
description of :mod:`~kg_adapters.serve.service_description`), ``/health``, and the query page ``/``
with its own files under ``/static/`` (:mod:`~kg_adapters.serve.page`); no store file, no directory
listing. Cross-origin reads only for ``--cors`` origins (:mod:`~kg_adapters.serve.cors`).

Results are written by Oxigraph's own serializers (SPARQL JSON, XML, CSV, TSV; N-Triples, Turtle, N3,
RDF/XML, JSON-LD for CONSTRUCT/DESCRIBE) chosen by ``Accept`` and the ``format=`` spellings clients
send (:mod:`~kg_adapters.serve.formats`). The embedded store streams its
solutions straight into them; any other backend answers through ``query()`` (SELECT and ASK), its
rows written as SPARQL JSON and handed to the same serializers, so every backend answers in the
same bytes.

Budgets: each query has a deadline (``--timeout``) and a cap on the serialized answer
(``--max-result-bytes``). The embedded store's queries run in ``--workers`` worker processes
(:mod:`kg_adapters.serve.workers`) that stream the answer back as it is written: at the deadline the
client gets 503 and the worker is killed (the query stops using CPU at once, whatever it was doing:
joining, deduplicating, aggregating, writing nothing) and replaced, so its slot is free again. A remote
SPARQL backend gets the same budgets (its ``timeout`` and ``retry_seconds``, and its
``max_response_bytes`` over all the pages of an answer, checked while reading, unless its URL sets
them), which end its exchange at the deadline. ``--workers`` bounds the queries evaluated at once.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, cast

from kg_adapters.errors import (
    BackendError,
    BackendTimeout,
    InvalidTermError,
    KGError,
    QueryError,
    ResponseTooLarge,
)
from kg_adapters.records import Literal
from kg_adapters.serve import check_limits, require_extra, service_description
from kg_adapters.serve.cors import cors_middleware
from kg_adapters.serve.formats import FORMAT_PARAMETERS, GRAPH_FORMATS, RESULT_FORMATS, NotAcceptable, choose_format
from kg_adapters.serve.page import page_routes
from kg_adapters.serve.readonly import ReadOnlyViolation, query_form
from kg_adapters.serve.workers import DEADLINE_GRACE, DeadlinePassed
from kg_adapters.sparql_terms import check_iri

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

    from kg_adapters.base import SparqlRunner
    from kg_adapters.serve.current import CurrentGraph
    from kg_adapters.serve.workers import WorkerPool

MAX_REQUEST_BYTES = 1 << 20

"""Largest request body (a query) accepted."""
access_log = logging.getLogger("kg_adapters.serve.access")


def require_serve_extra() -> None:
    from kg_adapters.extras import install_command

    require_extra(("starlette", "uvicorn"), "kga serve needs Starlette and uvicorn", install_command("serve"))


@dataclass(frozen=True, kw_only=True)
class EndpointLimits:
    timeout: float = 30.0
    """Seconds a query may take, from its arrival to the last byte of its answer."""
    max_result_bytes: int = 64 << 20
    """Largest serialized answer."""
    workers: int = 4
    """Queries evaluated at once; more wait their turn (inside their deadline)."""

    def __post_init__(self) -> None:
        check_limits(self, counts=("max_result_bytes", "workers"), seconds=("timeout",))


class HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def too_large(cap: int) -> HttpError:
    return HttpError(
        500,
        f"the answer is larger than the server's result cap of {cap} bytes (--max-result-bytes); "
        "add a LIMIT or narrow the query",
    )


class LimitedSink:
    """Where a serializer writes: refuses to grow past ``cap`` bytes or to write after ``deadline``."""

    def __init__(self, cap: int, deadline: float) -> None:
        self.parts: list[bytes] = []
        self.size = 0
        self.cap = cap
        self.deadline = deadline

    def write(self, data: bytes) -> int:
        if time.monotonic() > self.deadline:
            raise HttpError(503, "the query ran past the server's time limit (--timeout); narrow it")
        self.size += len(data)
        if self.size > self.cap:
            raise too_large(self.cap)
        self.parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass


def rows_as_json(rows: list[dict[str, Any]]) -> bytes:
    """SPARQL JSON results of ``query()`` rows (full IRIs, ``_:`` blank nodes, Literal values)."""
    if len(rows) == 1 and set(rows[0]) == {"boolean"} and isinstance(rows[0]["boolean"], bool):
        return json.dumps({"head": {}, "boolean": rows[0]["boolean"]}).encode()
    variables = list(dict.fromkeys(name for row in rows for name in row))
    bindings = []
    for row in rows:
        binding: dict[str, dict[str, str]] = {}
        for name, value in row.items():
            if isinstance(value, Literal):
                term = {"type": "literal", "value": value.value}
                if value.lang:
                    term["xml:lang"] = value.lang
                elif value.datatype:
                    term["datatype"] = value.datatype
            elif isinstance(value, str) and value.startswith("_:"):
                term = {"type": "bnode", "value": value[2:]}
            else:
                term = {"type": "uri", "value": str(value)}
            binding[name] = term
        bindings.append(binding)
    return json.dumps({"head": {"vars": variables}, "results": {"bindings": bindings}}).encode()


@dataclass(frozen=True)
class ParsedRequest:
    query: str
    default_graphs: tuple[str, ...]
    named_graphs: tuple[str, ...]
    formats: tuple[str, ...]
    """The ``format=``/``output=``/``results=`` values, in order (:mod:`kg_adapters.serve.formats`)."""


def answer_query(
    graphs: CurrentGraph,
    request: ParsedRequest,
    accept: str,
    limits: EndpointLimits,
    deadline: float,
    runner: SparqlRunner | None = None,
) -> tuple[bytes, str]:
    """The serialized answer and its media type (runs in a worker thread). The embedded store answers
    through ``runner`` (a worker process, stopped at the deadline) and its own serializers."""
    import pyoxigraph as ox

    from kg_adapters.base import EmbeddedSparql, SparqlQueryable

    form = query_form(request.query)
    graph_form = form in ("CONSTRUCT", "DESCRIBE")
    try:
        chosen = choose_format(
            GRAPH_FORMATS if graph_form else RESULT_FORMATS,
            accept,
            request.formats,
            what=f"{'an' if form == 'ASK' else 'a'} {form} query",
        )
    except NotAcceptable as exc:
        raise HttpError(406, str(exc)) from exc
    name = chosen.name
    sink = LimitedSink(limits.max_result_bytes, deadline)
    output = cast(IO[bytes], sink)  # pyoxigraph writes to anything with write()
    with graphs.use() as kg:
        if isinstance(kg, EmbeddedSparql):
            for graph in (*request.default_graphs, *request.named_graphs):
                try:
                    check_iri(graph)
                except InvalidTermError as exc:
                    raise HttpError(400, f"default-graph-uri/named-graph-uri must be absolute IRIs: {exc}") from exc
            kg.sparql_write(
                request.query,
                output,
                format=name,
                default_graphs=request.default_graphs,
                named_graphs=request.named_graphs,
                runner=runner,
            )
        else:
            if graph_form:
                raise HttpError(
                    400, f"{form} is answered only by the embedded store; this graph answers SELECT and ASK"
                )
            if request.default_graphs or request.named_graphs:
                raise HttpError(400, "default-graph-uri/named-graph-uri are answered only by the embedded store")
            if not isinstance(kg, SparqlQueryable):
                raise HttpError(400, "this graph does not answer SPARQL")
            try:
                rows = kg.query(request.query)
            except ResponseTooLarge as exc:  # the backend stopped reading at the cap kga serve set on it
                raise too_large(limits.max_result_bytes) from exc
            solutions: Any = None
            try:
                solutions = ox.parse_query_results(rows_as_json(rows), ox.QueryResultsFormat.JSON)
                solutions.serialize(output, getattr(ox.QueryResultsFormat, name))
            except (SyntaxError, ValueError) as exc:  # e.g. an IRI with a space, which an endpoint may hold
                raise BackendError(f"the graph answered a term SPARQL results cannot carry: {exc}") from exc
            finally:
                del solutions  # dropped by the thread that made it (pyoxigraph refuses another)
    return b"".join(sink.parts), chosen.content_type


async def parse_request(request: Request) -> ParsedRequest:
    """The query and dataset of a SPARQL Protocol request (GET, POST urlencoded, POST sparql-query)."""
    from urllib.parse import parse_qsl

    params = parse_qsl(request.url.query, keep_blank_values=True)
    if request.method == "POST":
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_REQUEST_BYTES:
                raise HttpError(413, f"the request body is larger than {MAX_REQUEST_BYTES} bytes")
        if content_type == "application/x-www-form-urlencoded":
            params += parse_qsl(body.decode("utf-8", errors="replace"), keep_blank_values=True)
        elif content_type == "application/sparql-query":
            params.append(("query", body.decode("utf-8", errors="replace")))
        elif content_type == "application/sparql-update":
            raise HttpError(403, "this endpoint is read-only: SPARQL updates are refused")
        else:
            raise HttpError(415, "POST a query as application/x-www-form-urlencoded or application/sparql-query")
    names = [name for name, _ in params]
    if "update" in names or "using-graph-uri" in names or "using-named-graph-uri" in names:
        raise HttpError(403, "this endpoint is read-only: SPARQL updates are refused")
    queries = [value for name, value in params if name == "query"]
    if len(queries) != 1:
        raise HttpError(400, "give exactly one query parameter" if queries else "no query given (query=...)")
    return ParsedRequest(
        query=queries[0],
        default_graphs=tuple(value for name, value in params if name == "default-graph-uri"),
        named_graphs=tuple(value for name, value in params if name == "named-graph-uri"),
        formats=tuple(value for name, value in params if name in FORMAT_PARAMETERS),
    )


def build_app(  # noqa: C901 -- issue 20/21 rework
    graphs: CurrentGraph, limits: EndpointLimits, workers: WorkerPool | None = None, *, cors: tuple[str, ...] = ()
) -> Starlette:
    """The Starlette application: ``/sparql`` (GET, POST), ``/health`` and the query page (``/``,
    ``/static/``); cross-origin reads for the ``cors`` origins only (:mod:`kg_adapters.serve.cors`).
    ``workers``: where the embedded store's queries run (without them, in this process, where a query
    cannot be stopped)."""
    require_serve_extra()
    import anyio
    import anyio.from_thread
    import anyio.lowlevel
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    slots = anyio.CapacityLimiter(limits.workers)
    grace = DEADLINE_GRACE if workers is not None else 0.0  # work in this process runs on: answered at the deadline

    async def evaluate(run: Callable[[], tuple[bytes, str]], deadline: float) -> tuple[bytes, str]:
        """``run()`` in a worker thread holding one of the ``--workers`` slots until the evaluation really
        ends: a query abandoned at its deadline cannot be interrupted inside the store, so it keeps its
        slot while it runs on, and hostile queries cannot pile up unbounded evaluations."""
        token = object()
        acquired = False
        with anyio.move_on_after(max(0.0, deadline - time.monotonic())):
            await slots.acquire_on_behalf_of(token)
            acquired = True
        if not acquired:
            raise HttpError(
                503,
                f"all {limits.workers} query workers (--workers) are busy, some perhaps with queries past "
                "their time limit; try again later",
            )
        loop = anyio.lowlevel.current_token()
        lock = threading.Lock()
        state = {"started": False, "dropped": False}

        def work() -> tuple[bytes, str]:
            with lock:
                if state["dropped"]:  # abandoned before it began: its slot is already back
                    return b"", ""
                state["started"] = True
            try:
                return run()
            finally:
                with contextlib.suppress(RuntimeError):  # RuntimeError: the server's event loop has stopped
                    anyio.from_thread.run_sync(slots.release_on_behalf_of, token, token=loop)

        try:  # a worker's query is stopped at the deadline: a moment more lets it be replaced before the answer
            with anyio.fail_after(max(0.0, deadline + grace - time.monotonic())):
                return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
        except BaseException:
            with lock:
                if not state["started"]:
                    state["dropped"] = True
                    slots.release_on_behalf_of(token)
            raise

    past_deadline = f"the query ran past the server's time limit of {limits.timeout:g} s (--timeout); narrow it\n"
    past_deadline_bytes = past_deadline.encode()

    async def sparql(request: Request) -> Response:
        started = time.monotonic()
        deadline = started + limits.timeout
        status, body, media, form = 200, b"", "text/plain; charset=utf-8", "-"
        try:
            parsed = await parse_request(request)
            form = await anyio.to_thread.run_sync(query_form, parsed.query)  # a long query takes a while
            accept = request.headers.get("accept", "")

            runner = workers.runner(deadline) if workers is not None else None

            def run() -> tuple[bytes, str]:
                return answer_query(graphs, parsed, accept, limits, deadline, runner)

            body, media = await evaluate(run, deadline)
        except HttpError as exc:
            status, body = exc.status, (str(exc) + "\n").encode()
        except ReadOnlyViolation as exc:
            status, body = 403, (str(exc) + "\n").encode()
        except (QueryError, InvalidTermError) as exc:
            status, body = 400, (str(exc) + "\n").encode()
        except TimeoutError:
            status, body = 503, past_deadline_bytes
        except KGError as exc:
            # the backend's own deadline (kga serve sets it to its own), retried or not, is a timeout too
            timed_out = isinstance(exc, BackendTimeout) or isinstance(exc.__cause__, BackendTimeout)
            status, body = 503 if timed_out else 500, (str(exc).splitlines()[0] + "\n").encode()
            if isinstance(exc, DeadlinePassed):  # its worker was stopped at the deadline
                body = past_deadline_bytes
        access_log.info(
            '%s "%s %s" %s %s %s %.1fms',
            request.client.host if request.client else "-",
            request.method,
            request.url.path,
            form,
            status,
            len(body),
            (time.monotonic() - started) * 1000,
        )
        headers = {"Cache-Control": "no-store"}
        if status != 200:
            media = "text/plain; charset=utf-8"
        return _response(body, status, media, headers)

    async def health(request: Request) -> Response:
        return PlainTextResponse("ok\n")

    describe_service = service_description.handler(graphs)

    async def endpoint(request: Request) -> Response:
        """``/sparql``: a query, or without one (GET) the service description."""
        if request.method in ("GET", "HEAD") and service_description.asked(request.url.query):
            return await describe_service(request)
        return await sparql(request)

    routes = [
        Route("/sparql", endpoint, methods=["GET", "POST"]),
        Route("/health", health, methods=["GET"]),
        *page_routes(),
    ]
    return Starlette(routes=routes, middleware=cors_middleware(cors))


def _response(body: bytes, status: int, media: str, headers: dict[str, str]) -> Response:
    from starlette.responses import Response

    return Response(content=body, status_code=status, media_type=media, headers=headers)


def serve(
    graphs: CurrentGraph,
    *,
    host: str,
    port: int,
    limits: EndpointLimits,
    cors: tuple[str, ...] = (),
    announce: Callable[[str], None] | None = None,
) -> None:
    """Runs the endpoint until interrupted (uvicorn; Ctrl-C or SIGTERM stops it, and its worker processes)."""
    from kg_adapters.serve.listen import http_url, listening_socket, run_uvicorn
    from kg_adapters.serve.workers import pool_for

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    sock = listening_socket(host, port)  # a bad address or a busy port: ListenError, before any announcement
    workers = pool_for(graphs, limits.workers)
    try:
        app = build_app(graphs, limits, workers, cors=cors)
        if announce is not None:
            endpoint, page = http_url(host, port, "/sparql"), http_url(host, port, "/")
            announce(f"kga serve: SPARQL endpoint at {endpoint}, query page at {page}")
        run_uvicorn(app, sock, access_log=False, lifespan="off", on_exit=workers.close if workers else None)
    finally:
        if workers is not None:
            workers.close()
