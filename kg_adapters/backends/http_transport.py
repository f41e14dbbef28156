"""SPARQL 1.1 protocol over HTTP with ``requests``: one keep-alive session per endpoint.

Why requests and not SPARQLWrapper: a pooled keep-alive session matters on HTTPS endpoints
(SPARQLWrapper opens a new connection per query), we need the response headers (Virtuoso flags a
capped answer only with ``X-SPARQL-MaxRows``) and a total deadline that a slow-dripping server
cannot stretch, and SPARQLWrapper's default User-Agent is refused by WDQS. HTTP failures are
translated into the typed errors of :mod:`kg_adapters.errors` here and nowhere else.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

import requests
import urllib3

from kg_adapters._version import __version__
from kg_adapters.backends.sparql_graph import plain_literal
from kg_adapters.errors import BackendError, BackendTimeout, InvalidTermError, QueryError, RateLimited, TransientError
from kg_adapters.transport import SparqlResult, Term

DEFAULT_USER_AGENT = f"kg-adapters/{__version__} (https://pypi.org/project/kg-adapters/) python-requests"
JSON_RESULTS = "application/sparql-results+json"
ACCEPT = f"{JSON_RESULTS}, application/n-triples;q=0.5"
"""SELECT/ASK answers as SPARQL JSON; CONSTRUCT/DESCRIBE as JSON where the engine can (Virtuoso
gives s/p/o bindings), otherwise as N-Triples."""
TRIPLE_VARIABLES = ("subject", "predicate", "object")
# Virtuoso answers HTTP 500 both for passing trouble and for errors no retry can fix.
_PERMANENT_500 = re.compile(r"\b(SR353|SR352|SR350|SP0\d\d|SQ\d\d\d|SR186|37000|syntax error)\b", re.I)
_MAX_MESSAGE = 500
_CONTACT = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+|https?://\S+")


def wikimedia_user_agent(user_agent: object, *, service: str, scheme: str) -> str:
    """``user_agent`` if it is descriptive, with contact information (an e-mail address or a URL),
    as the Wikimedia User-Agent policy requires; else InvalidTermError saying how to connect."""
    if not user_agent or not _CONTACT.search(str(user_agent)):
        raise InvalidTermError(
            f"{service} requires a descriptive User-Agent with contact information: "
            f"connect('{scheme}', user_agent='my-project/1.0 (me@example.org)')"
        )
    return str(user_agent)


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def convert_json_term(term: Mapping[str, Any] | None) -> Term | None:
    """A SPARQL-JSON term as our term; Virtuoso's ``nodeID://`` blank nodes become ``_:label``."""
    if term is None:
        return None
    kind = term.get("type")
    value = str(term.get("value", ""))
    if kind == "uri":
        return value
    if kind in ("literal", "typed-literal"):
        datatype = term.get("datatype")
        return plain_literal(value, None if datatype is None else str(datatype), term.get("xml:lang"))
    if kind == "bnode":
        return "_:" + value.removeprefix("nodeID://")
    return None


def parse_json_results(body: bytes, *, capped: bool = False) -> SparqlResult:
    """Parses SPARQL 1.1 JSON results; a body that does not parse is treated as cut short."""
    try:
        data = json.loads(body)
        if "boolean" in data:
            return SparqlResult(boolean=bool(data["boolean"]))
        variables = tuple(str(v) for v in data["head"]["vars"])
        bindings = data["results"]["bindings"]
        rows: list[tuple[Term | None, ...]] = []
        convert = convert_json_term
        for binding in bindings:
            row: list[Term | None] = []
            for name in variables:
                term = binding.get(name)
                # IRIs are most cells: take them without a call (about 4x faster on big answers)
                row.append(term["value"] if term is not None and term.get("type") == "uri" else convert(term))
            rows.append(tuple(row))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise TransientError(f"malformed or truncated SPARQL result body ({len(body)} bytes): {exc}") from exc
    return SparqlResult(variables=variables, rows=rows, capped=capped)


def parse_ntriples(body: bytes) -> SparqlResult:
    """A CONSTRUCT/DESCRIBE answer in N-Triples as subject/predicate/object rows."""
    import pyoxigraph as ox

    from kg_adapters.rdf_io import convert_term

    try:
        rows = [
            (convert_term(quad.subject), convert_term(quad.predicate), convert_term(quad.object))
            for quad in ox.parse(body, format=ox.RdfFormat.N_TRIPLES)
        ]
    except SyntaxError as exc:
        raise TransientError(f"malformed or truncated N-Triples body ({len(body)} bytes): {exc}") from exc
    return SparqlResult(variables=TRIPLE_VARIABLES, rows=list(rows))


def without_credentials(url: str) -> str:
    """``url`` without the ``user:password@`` of its authority (for messages, reprs and logs)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


class HttpExchange:
    """One keep-alive ``requests`` session to one URL: sends form fields, returns the body and
    headers, and turns HTTP failures into typed errors. ``timeout`` bounds the whole exchange
    (connect, server time and download), so a stalled or slow-dripping server fails with
    BackendTimeout. ``requests_sent`` counts the requests."""

    def __init__(
        self,
        endpoint: str,
        *,
        timeout: float = 60.0,
        user_agent: str = DEFAULT_USER_AGENT,
        headers: Mapping[str, str] | None = None,
        session: requests.Session | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._endpoint = endpoint
        self._shown = without_credentials(endpoint)
        self.timeout = float(timeout)
        self._session = session or requests.Session()
        self._session.headers.update({"User-Agent": user_agent, **(headers or {})})
        self._clock = clock
        self.requests_sent = 0

    @property
    def endpoint(self) -> str:
        """The endpoint as messages name it: without a user or password."""
        return self._shown

    def exchange(self, fields: Mapping[str, str], *, use_get: bool) -> tuple[bytes, Mapping[str, str]]:
        """Sends ``fields`` (as the query string, or a POSTed form) and returns (body, headers)."""
        self.requests_sent += 1
        deadline = self._clock() + self.timeout
        timeout = (min(self.timeout, 10.0), self.timeout)
        try:
            if use_get:
                response = self._session.get(self._endpoint, params=fields, timeout=timeout, stream=True)
            else:
                response = self._session.post(self._endpoint, data=fields, timeout=timeout, stream=True)
            with response:
                chunks: list[bytes] = []
                # read1 returns whatever has arrived, so a server dripping a few bytes at a time is
                # caught at the deadline (iter_content would wait for a whole 64 KiB chunk first).
                while chunk := response.raw.read1(1 << 16, decode_content=True):
                    chunks.append(chunk)
                    if self._clock() > deadline:
                        raise BackendTimeout(f"{self._shown} took longer than {self.timeout:g} s to answer")
                body = b"".join(chunks)
                self._raise_for_status(response, body)
                return body, response.headers
        except requests.Timeout as exc:
            raise BackendTimeout(f"{self._shown} did not answer within {self.timeout:g} s") from exc
        except requests.ConnectionError as exc:
            raise TransientError(f"connection to {self._shown} failed: {exc}") from exc
        except requests.RequestException as exc:
            raise TransientError(f"HTTP exchange with {self._shown} failed: {exc}") from exc
        except urllib3.exceptions.ReadTimeoutError as exc:
            raise BackendTimeout(f"{self._shown} did not answer within {self.timeout:g} s") from exc
        except urllib3.exceptions.HTTPError as exc:  # the body, read from urllib3 directly, was cut short
            raise TransientError(f"HTTP exchange with {self._shown} failed: {exc}") from exc

    def _raise_for_status(self, response: requests.Response, body: bytes) -> None:
        status = response.status_code
        if status < 300:
            return
        message = body.decode("utf-8", "replace").strip()[:_MAX_MESSAGE]
        where = f"{self._shown} answered HTTP {status}"
        if status == 429 or (status == 503 and "Retry-After" in response.headers):
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
            raise RateLimited(f"{where} (rate limited): {message}", retry_after=retry_after)
        if status in (502, 503, 504, 408):
            raise TransientError(f"{where}: {message}")
        if status == 500:
            if _PERMANENT_500.search(message):
                raise QueryError(f"{where}: {message}")
            raise TransientError(f"{where}: {message}")
        if status == 400:
            raise QueryError(f"{where} (query refused): {message}")
        raise BackendError(f"{where}: {message}")

    def close(self) -> None:
        self._session.close()


class HttpSparqlTransport(HttpExchange):
    """Sends SPARQL queries to one endpoint (GET for short queries when ``method="GET"``)."""

    def __init__(
        self,
        endpoint: str,
        *,
        timeout: float = 60.0,
        user_agent: str = DEFAULT_USER_AGENT,
        method: str = "POST",
        get_max_bytes: int = 2000,
        headers: Mapping[str, str] | None = None,
        session: requests.Session | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if method not in ("GET", "POST"):
            raise ValueError(f"method must be GET or POST, got {method!r}")
        super().__init__(
            endpoint,
            timeout=timeout,
            user_agent=user_agent,
            headers={"Accept": ACCEPT, **(headers or {})},
            session=session,
            clock=clock,
        )
        self.method = method
        self.get_max_bytes = get_max_bytes

    def execute(self, query: str) -> SparqlResult:
        use_get = self.method == "GET" and len(query.encode("utf-8")) <= self.get_max_bytes
        body, headers = self.exchange({"query": query}, use_get=use_get)
        capped = any(name.lower() == "x-sparql-maxrows" for name in headers)
        content_type = headers.get("Content-Type", "").split(";")[0].strip().lower()
        if content_type in ("application/n-triples", "text/plain"):
            return parse_ntriples(body)
        return parse_json_results(body, capped=capped)
