"""A real SPARQL endpoint on loopback that fails on purpose, for retry / rate-limit / timeout tests.

``FaultServer`` is an ``http.server.ThreadingHTTPServer`` bound to ``127.0.0.1`` on a free port and
served from a daemon thread (use it as a context manager). It speaks the SPARQL 1.1 protocol --
``GET ?query=``, ``POST`` form ``query=`` and ``POST application/sparql-query`` -- and answers from
an in-memory pyoxigraph ``Store`` (SPARQL JSON results for SELECT/ASK, N-Triples for
CONSTRUCT/DESCRIBE, HTTP 400 for a query that does not parse), or, given ``upstream=URL``,
forwards the query to a real endpoint (e.g. a test Virtuoso) and relays status, headers and body.

Before answering, each request draws one fault from a deterministic :class:`FaultPlan`:

``"ok"``          answer normally
``"<status>"``    answer with that HTTP status (``"429"``, ``"500"``, ``"502"``, ``"503"``, ``"403"``...);
                  429 carries ``Retry-After: <plan.retry_after>``; ``"429:7"`` / ``"503:7"`` say 7 s
``"reset"``       read the request, then close the socket with SO_LINGER 0 (a TCP reset, no answer)
``"stall"``       hold the request until :meth:`FaultServer.release_stalls` (then answer normally),
                  or until the client disconnects or the server stops (then close without an answer)
``"truncate"``    send the status and a Content-Length for the full body, then half the body, then close
``"drip"``        send the body ``drip_bytes`` at a time (or in pieces that take ``drip_seconds`` in all),
                  ``drip_interval`` apart, so the exchange outlasts a short client timeout although
                  bytes keep arriving; bounded by ``max_drip_seconds``; ends on stop
``"slow_headers"`` send the status line and headers one byte every ``drip_interval`` (bounded by
                  ``max_drip_seconds``), then the answer
``"redirect"``    after ``drip_interval``, answer ``302`` with a ``Location`` back to the endpoint (with
                  the query), so a client that follows it meets the plan's next fault: a loop
``"endless"``     answer 200 with a body that never ends (no Content-Length): ``endless_chunk``
                  bytes at a time until the client hangs up or the server stops
``"maxlag"``      answer as MediaWiki's API does when replication lags behind its ``maxlag`` parameter:
                  HTTP 200, a JSON ``{"error": {"code": "maxlag", ...}}`` body, ``Retry-After:
                  <plan.retry_after>`` and ``X-Database-Lag``; ``"maxlag:7"`` says 7 s

``ignore_offset=True`` makes the endpoint ignore ``OFFSET`` (as some broken servers do), and
``rewrite(query, body) -> body`` rewrites every successful answer body (malformed SPARQL JSON:
reordered or missing variables, unknown term types, booleans for SELECTs...).

Subclasses serve other HTTP APIs from the same machinery by overriding :meth:`FaultServer.request_text`
(what a request asks, as recorded) and :meth:`FaultServer._answer` (see ``wikidata_api.py``).

Nothing here sleeps to synchronise: stalls and drips wait on a ``threading.Condition`` /
``threading.Event`` with a timeout, and ``stop()`` wakes them. Every request is recorded (method,
query text, fault), and the number of requests in flight is tracked (``max_in_flight``): a request
counts from its arrival until just before the first byte of its answer, so a client that waits for
one answer before sending the next request is never seen as two in flight.

This module imports only the standard library and pyoxigraph (``requests`` only for ``upstream``).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import re
import select
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlencode, urlsplit

import pyoxigraph as ox

from kg_adapters.testing.lifecycle import ServerLifecycle

JSON_RESULTS = "application/sparql-results+json"
N_TRIPLES = "application/n-triples"
NETWORK_FAULTS = ("reset", "stall", "truncate", "drip", "slow_headers", "redirect", "endless")
MAXLAG = "maxlag"
DEFAULT_RANDOM_KINDS = ("429", "500", "502", "503", "reset", "truncate")
"""Every fault a retrying client can recover from quickly (no stall or drip: those need a timeout)."""
_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailers",
    "transfer-encoding",
    "upgrade",
    "content-length",
    "content-encoding",
    "server",
    "date",
}


def check_fault(kind: str) -> str:
    """``kind`` if it names a fault, else ValueError."""
    if kind == "ok" or kind in NETWORK_FAULTS:
        return kind
    status, _, after = kind.partition(":")
    if status == MAXLAG and (not after or after.isdigit()):
        return kind
    if len(status) == 3 and status.isdigit() and 100 <= int(status) <= 599 and (not after or after.isdigit()):
        return kind
    raise ValueError(f"unknown fault {kind!r}: use ok, reset, stall, truncate, drip, maxlag or an HTTP status like 503")


class FaultPlan:
    """Which fault each request gets, in arrival order; thread-safe and deterministic.

    The first requests take the faults of ``script`` in order; after that every request takes
    ``always`` when given, else a fault drawn from ``kinds`` with probability ``fraction`` (seeded
    ``random.Random(seed)``), else ``"ok"``. ``history`` lists what was handed out.
    """

    def __init__(
        self,
        script: Sequence[str] = (),
        *,
        fraction: float = 0.0,
        kinds: Sequence[str] = DEFAULT_RANDOM_KINDS,
        seed: int = 0,
        always: str | None = None,
        retry_after: int = 1,
    ) -> None:
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"fraction must be in [0, 1], got {fraction!r}")
        if fraction > 0 and not kinds:
            raise ValueError("a fault fraction needs at least one fault kind")
        self.script = [check_fault(kind) for kind in script]
        self.fraction = fraction
        self.kinds = [check_fault(kind) for kind in kinds]
        self.always = check_fault(always) if always is not None else None
        self.retry_after = int(retry_after)
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self.history: list[str] = []

    @classmethod
    def constant(cls, kind: str, **options: Any) -> FaultPlan:
        """Every request gets ``kind`` (e.g. a permanent ``"503"``)."""
        return cls(always=kind, **options)

    def next_fault(self) -> str:
        with self._lock:
            index = len(self.history)
            if index < len(self.script):
                fault = self.script[index]
            elif self.always is not None:
                fault = self.always
            elif self.fraction > 0 and self._random.random() < self.fraction:
                fault = self._random.choice(self.kinds)
            else:
                fault = "ok"
            self.history.append(fault)
            return fault


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it."""

    method: str
    query: str | None
    fault: str
    user_agent: str | None = None
    authorization: str | None = None


@dataclass(frozen=True)
class _Answer:
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: FaultServer


_S = TypeVar("_S", bound="FaultServer")


class FaultServer(ServerLifecycle):
    """A loopback SPARQL endpoint with scripted faults; see the module docstring."""

    def __init__(
        self,
        store: ox.Store | None = None,
        *,
        data: str | bytes | None = None,
        data_format: ox.RdfFormat = ox.RdfFormat.N_TRIPLES,
        plan: FaultPlan | None = None,
        upstream: str | None = None,
        upstream_timeout: float = 60.0,
        path: str = "/sparql",
        drip_bytes: int = 8,
        drip_interval: float = 0.05,
        drip_seconds: float | None = None,
        max_drip_seconds: float = 10.0,
        max_stall_seconds: float = 60.0,
        ignore_offset: bool = False,
        rewrite: Callable[[str | None, bytes], bytes] | None = None,
        endless_chunk: int = 1 << 16,
    ) -> None:
        if store is not None and upstream is not None:
            raise ValueError("give a store or an upstream endpoint, not both")
        self.store = store if store is not None else ox.Store()
        if data is not None:
            self.store.load(data.encode("utf-8") if isinstance(data, str) else data, format=data_format)
        self.plan = plan if plan is not None else FaultPlan()
        self.upstream = upstream
        self.upstream_timeout = upstream_timeout
        self.path = path
        self.drip_bytes = max(1, int(drip_bytes))
        self.drip_interval = float(drip_interval)
        self.drip_seconds = drip_seconds
        self.max_drip_seconds = float(max_drip_seconds)
        self.max_stall_seconds = float(max_stall_seconds)
        self.ignore_offset = ignore_offset
        self.rewrite = rewrite
        self.endless_chunk = int(endless_chunk)
        self.endless_bytes_sent = 0
        self.headers_finished = 0
        """Answers whose slow headers were sent in full."""
        self._cond = threading.Condition()
        self._stopping = threading.Event()
        self._release_generation = 0
        self._requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.stalled = 0
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self: _S) -> _S:
        if self._httpd is not None:
            return self
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), name="fault-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Releases every stall and drip (without an answer), stops serving and closes the port."""
        self._stopping.set()
        with self._cond:
            self._cond.notify_all()
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the fault server is not running")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The SPARQL endpoint URL, e.g. ``http://127.0.0.1:41234/sparql``."""
        return f"http://127.0.0.1:{self.port}{self.path}"

    # -- what tests look at ---------------------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        with self._cond:
            return list(self._requests)

    @property
    def request_count(self) -> int:
        with self._cond:
            return len(self._requests)

    @property
    def queries(self) -> list[str | None]:
        return [request.query for request in self.requests]

    def reset_counters(self) -> None:
        """Forgets recorded requests and the in-flight maximum (the plan keeps its position)."""
        with self._cond:
            self._requests.clear()
            self.max_in_flight = self.in_flight

    def release_stalls(self) -> None:
        """Lets every request stalled so far go on and be answered normally."""
        with self._cond:
            self._release_generation += 1
            self._cond.notify_all()

    def wait_for(self, *, in_flight: int | None = None, stalled: int | None = None, timeout: float = 10.0) -> bool:
        """Waits (on a condition, not a sleep) until exactly that many requests are in flight /
        stalled; False if that does not happen within ``timeout``."""

        def reached() -> bool:
            return (in_flight is None or self.in_flight == in_flight) and (stalled is None or self.stalled == stalled)

        with self._cond:
            return self._cond.wait_for(reached, timeout=timeout)

    # -- used by the handler ----------------------------------------------------------------------
    def request_text(self, fields: Mapping[str, list[str]]) -> str | None:
        """What a GET query string or POSTed form asks (recorded, and handed to ``_answer``):
        here the SPARQL ``query`` parameter."""
        values = fields.get("query")
        return values[0] if values else None

    def _arrive(
        self, method: str, query: str | None, user_agent: str | None = None, authorization: str | None = None
    ) -> str:
        fault = self.plan.next_fault()
        with self._cond:
            recorded = RecordedRequest(
                method=method, query=query, fault=fault, user_agent=user_agent, authorization=authorization
            )
            self._requests.append(recorded)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._cond.notify_all()
        return fault

    def _leave(self) -> None:
        with self._cond:
            self.in_flight -= 1
            self._cond.notify_all()

    def _stall(self, connection: socket.socket) -> bool:
        """True when released by :meth:`release_stalls`; False on disconnect, stop or the bound."""
        deadline = time.monotonic() + self.max_stall_seconds
        with self._cond:
            generation = self._release_generation
            self.stalled += 1
            self._cond.notify_all()
            try:
                while True:
                    if self._release_generation != generation:
                        return True
                    if self._stopping.is_set() or time.monotonic() >= deadline or _peer_closed(connection):
                        return False
                    self._cond.wait(timeout=0.05)
            finally:
                self.stalled -= 1

    def _answer(self, query: str | None, accept: str | None) -> _Answer:
        if query is None:
            return _text(400, "missing query parameter")
        if self.ignore_offset:
            query = re.sub(r"\bOFFSET\s+\d+", "", query, flags=re.I)
        answer = self._forward(query, accept) if self.upstream is not None else self._evaluate(query)
        if self.rewrite is not None and answer.status == 200:
            answer = _Answer(answer.status, answer.headers, self.rewrite(query, answer.body))
        return answer

    def _evaluate(self, query: str) -> _Answer:
        try:
            result = self.store.query(query)
        except SyntaxError as exc:
            return _text(400, f"query parse error: {exc}")
        except (OSError, ValueError) as exc:
            return _text(500, f"evaluation failed: {exc}")
        if isinstance(result, (ox.QuerySolutions, ox.QueryBoolean)):
            body = result.serialize(format=ox.QueryResultsFormat.JSON)
            return _Answer(200, (("Content-Type", JSON_RESULTS),), bytes(body or b""))
        triples = result.serialize(format=ox.RdfFormat.N_TRIPLES)
        return _Answer(200, (("Content-Type", N_TRIPLES),), bytes(triples or b""))

    def _forward(self, query: str, accept: str | None) -> _Answer:
        import requests

        assert self.upstream is not None
        try:
            response = requests.post(
                self.upstream,
                data={"query": query},
                headers={"Accept": accept or JSON_RESULTS},
                timeout=self.upstream_timeout,
            )
        except requests.RequestException as exc:
            return _text(502, f"upstream {self.upstream} failed: {exc}")
        headers = tuple((name, value) for name, value in response.headers.items() if name.lower() not in _HOP_BY_HOP)
        return _Answer(response.status_code, headers, response.content)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read the recorded requests instead."""

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path != self.server.owner.path:
            self._simple(404, "not found")
            return
        self._serve("GET", self.server.owner.request_text(parse_qs(parts.query, keep_blank_values=True)))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        if urlsplit(self.path).path != self.server.owner.path:
            self._simple(404, "not found")
            return
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        text = raw.decode("utf-8", "replace")
        if content_type == "application/sparql-query":
            query: str | None = text
        else:
            query = self.server.owner.request_text(parse_qs(text, keep_blank_values=True))
        self._serve("POST", query)

    # -- the request, its fault and its answer -----------------------------------------------------
    def _serve(self, method: str, query: str | None) -> None:
        owner = self.server.owner
        fault = owner._arrive(method, query, self.headers.get("User-Agent"), self.headers.get("Authorization"))
        left = False

        def leave() -> None:
            nonlocal left
            if not left:
                left = True
                owner._leave()

        try:
            if fault == "stall":
                fault = "ok" if owner._stall(self.connection) else "reset"
            if self._refuse(fault, query, leave):
                return
            answer = owner._answer(query, self.headers.get("Accept"))
            leave()
            self._deliver(fault, answer)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            leave()

    def _refuse(self, fault: str, query: str | None, leave: Callable[[], None]) -> bool:
        """Plays a fault that answers no query (a reset, an HTTP error, a redirect, an endless body);
        False for the faults that deliver the real answer."""
        owner = self.server.owner
        status, _, after = fault.partition(":")
        if fault == "reset":
            leave()
            self._reset()
        elif status == MAXLAG:
            leave()
            self._send(_maxlag(after or str(owner.plan.retry_after)))
        elif status.isdigit():
            headers: list[tuple[str, str]] = []
            if status == "429" or after:
                headers.append(("Retry-After", after or str(owner.plan.retry_after)))
            leave()
            self._send(_text(int(status), f"injected fault: HTTP {status}", tuple(headers)))
        elif fault == "redirect":
            leave()
            if not owner._stopping.wait(owner.drip_interval):
                location = owner.path + ("?" + urlencode({"query": query}) if query is not None else "")
                self._send(_Answer(302, (("Location", location),), b""))
        elif fault == "endless":
            leave()
            self._endless()
        else:
            return False
        return True

    def _deliver(self, fault: str, answer: _Answer) -> None:
        """The real answer, as the fault delivers it (slowly, cut short, dripped, or plainly)."""
        if fault == "slow_headers":
            self._slow_headers(answer)
        elif fault == "truncate":
            self._send(answer, body=answer.body[: len(answer.body) // 2], close=True)
        elif fault == "drip":
            self._drip(answer)
        else:
            self._send(answer)

    def _simple(self, status: int, message: str) -> None:
        self._send(_text(status, message))

    def _send(self, answer: _Answer, *, body: bytes | None = None, close: bool = False) -> None:
        self.send_response(answer.status)
        for name, value in answer.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(answer.body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(answer.body if body is None else body)
        self.wfile.flush()

    def _drip(self, answer: _Answer) -> None:
        owner = self.server.owner
        self.send_response(answer.status)
        for name, value in answer.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(answer.body)))
        self.send_header("Connection", "close")
        self.close_connection = True
        self.end_headers()
        self.wfile.flush()
        deadline = time.monotonic() + owner.max_drip_seconds
        body, step = answer.body, owner.drip_bytes
        if owner.drip_seconds is not None and owner.drip_interval > 0:
            pieces = max(1, math.ceil(owner.drip_seconds / owner.drip_interval))
            step = max(1, math.ceil(len(body) / pieces))
        for offset in range(0, len(body), step):
            if time.monotonic() >= deadline:
                self.wfile.write(body[offset:])
                break
            self.wfile.write(body[offset : offset + step])
            self.wfile.flush()
            if owner._stopping.wait(owner.drip_interval):
                return  # stopping: leave the answer unfinished
        self.wfile.flush()

    def _slow_headers(self, answer: _Answer) -> None:
        """The status line and headers one byte at a time, then the body at once."""
        owner = self.server.owner
        head = [f"HTTP/1.1 {answer.status} OK"]
        head += [f"{name}: {value}" for name, value in answer.headers]
        head += [f"Content-Length: {len(answer.body)}", "Connection: close", "", ""]
        raw = "\r\n".join(head).encode("latin-1")
        self.close_connection = True
        deadline = time.monotonic() + owner.max_drip_seconds
        for offset in range(len(raw)):
            self.wfile.write(raw[offset : offset + 1])
            self.wfile.flush()
            if time.monotonic() >= deadline or owner._stopping.wait(owner.drip_interval):
                return
        self.wfile.write(answer.body)
        self.wfile.flush()
        owner.headers_finished += 1

    def _endless(self) -> None:
        """200 and a body that never ends, until the client hangs up or the server stops."""
        owner = self.server.owner
        self.send_response(200)
        self.send_header("Content-Type", JSON_RESULTS)
        self.send_header("Connection", "close")
        self.close_connection = True
        self.end_headers()
        chunk = b'{"head": {"vars": ["x"]}, "results": {"bindings": [' + b" " * owner.endless_chunk
        while not owner._stopping.is_set():
            self.wfile.write(chunk)
            owner.endless_bytes_sent += len(chunk)
            chunk = b" " * owner.endless_chunk

    def _reset(self) -> None:
        """Closes the connection with a TCP reset, answering nothing."""
        self.close_connection = True
        connection = self.connection
        with contextlib.suppress(OSError):
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        # Close the descriptor itself: the handler's file objects keep the socket object alive,
        # and closing them here would make http.server's final flush fail.
        os.close(connection.detach())


class FakeClock:
    """A test clock and the sleep that advances it: ``sleep`` records the wait and moves ``now``
    forward at once, so code under test runs its backoff and pacing logic without waiting.
    Thread-safe; pass ``clock`` as the clock and ``clock.sleep`` as the sleep."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = float(start)
        self.sleeps: list[float] = []
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self.now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.sleeps.append(seconds)
            self.now += max(0.0, seconds)


def _text(status: int, message: str, headers: Iterable[tuple[str, str]] = ()) -> _Answer:
    return _Answer(status, (("Content-Type", "text/plain; charset=utf-8"), *headers), message.encode("utf-8"))


def _maxlag(seconds: str) -> _Answer:
    """MediaWiki's answer to a request whose ``maxlag`` the replication lag exceeds."""
    body = {
        "error": {
            "code": "maxlag",
            "info": f"Waiting for 10.64.0.1: {seconds} seconds lagged.",
            "host": "10.64.0.1",
            "lag": float(seconds),
            "type": "db",
        },
        "servedby": "fault-server",
    }
    headers = (
        ("Content-Type", "application/json; charset=utf-8"),
        ("Retry-After", seconds),
        ("X-Database-Lag", seconds),
        ("MediaWiki-API-Error", "maxlag"),
    )
    return _Answer(200, headers, json.dumps(body).encode("utf-8"))


def _peer_closed(connection: socket.socket) -> bool:
    """Whether the client has closed its side (readable with nothing to read)."""
    try:
        readable, _, _ = select.select([connection], [], [], 0)
        if not readable:
            return False
        return connection.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


def json_rewriter(change: Callable[[dict[str, Any]], Any]) -> Callable[[str | None, bytes], bytes]:
    """A ``rewrite`` for :class:`FaultServer`: ``change`` edits each JSON answer document in place
    (or returns a replacement); bodies that are not JSON pass unchanged."""

    def rewrite(query: str | None, body: bytes) -> bytes:
        try:
            document = json.loads(body)
        except ValueError:
            return body
        changed = change(document)
        return json.dumps(document if changed is None else changed).encode("utf-8")

    return rewrite


def rebind(name: str, term: Mapping[str, str]) -> Callable[[str | None, bytes], bytes]:
    """A ``rewrite`` binding ``?name`` to ``term`` (a SPARQL JSON term) in every row that binds it: a
    relation bound to a literal, a label bound to an IRI..."""

    def change(document: dict[str, Any]) -> None:
        for binding in document.get("results", {}).get("bindings", []):
            if name in binding:
                binding[name] = dict(term)

    return json_rewriter(change)


def repeated_rows(document: dict[str, Any]) -> None:
    """For :func:`json_rewriter`: every row sent twice."""
    bindings = document.get("results", {}).get("bindings")
    if isinstance(bindings, list):
        bindings.extend([dict(binding) for binding in bindings])


def with_lone_surrogates(document: dict[str, Any]) -> None:
    """For :func:`json_rewriter`: every term's value ends in a lone surrogate (``"\\ud800"`` on the wire)."""
    for binding in document.get("results", {}).get("bindings", []):
        for term in binding.values():
            term["value"] += "\ud800"


def superscript_counts(query: str | None, body: bytes) -> bytes:
    """A ``rewrite``: answers a COUNT query with ``"²"`` for every integer (a digit of another script:
    ``str.isdigit`` says yes, ``int`` says no); other answers pass unchanged."""
    if query is None or "COUNT" not in query:
        return body
    document = json.loads(body)
    for binding in document["results"]["bindings"]:
        for term in binding.values():
            if term.get("datatype", "").endswith("#integer"):
                term["value"] = "²"
    return json.dumps(document).encode()


def one_wide_node(relations: int = 10_001, *, base: str = "http://example.org/") -> str:
    """N-Triples of one node, ``{base}n1``, with ``relations`` relations, each to its own node: by
    default more rows than Virtuoso's row cap (10,000), so the client counts each id's rows."""
    return "".join(f"<{base}n1> <{base}p{n}> <{base}m{n}> .\n" for n in range(relations))
