"""SPARQL 1.1 protocol over HTTP with ``requests``: one keep-alive session per endpoint.

Why requests and not SPARQLWrapper: a pooled keep-alive session matters on HTTPS endpoints
(SPARQLWrapper opens a new connection per query), we need the response headers (Virtuoso flags a
capped answer only with ``X-SPARQL-MaxRows``) and a total deadline that a slow-dripping server
cannot stretch, and SPARQLWrapper's default User-Agent is refused by WDQS. HTTP failures are
translated into the typed errors of :mod:`kg_adapters.errors` here and nowhere else.
"""

from __future__ import annotations

import contextlib
import email.utils
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

import requests
import requests.adapters
import requests.auth
import urllib3
import urllib3.connection
import urllib3.connectionpool

from kg_adapters import json_text
from kg_adapters._version import __version__
from kg_adapters.backends.sparql_graph import plain_literal
from kg_adapters.budgets import ascii_integer, check_count, check_seconds
from kg_adapters.errors import (
    BackendError,
    BackendTimeout,
    InvalidTermError,
    QueryError,
    RateLimited,
    ResponseTooLarge,
    ResultMismatch,
    TransientError,
)
from kg_adapters.json_text import BadJsonText
from kg_adapters.transport import SparqlResult, Term
from kg_adapters.url import redact_url

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


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """(the URL without ``user:password@``, (user, password) or None); percent-escapes decoded."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port is not None else "")
    clean = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return clean, (unquote(parts.username or ""), unquote(parts.password or ""))


CREDENTIAL_OPTIONS = ("username", "password_env", "netrc")


def credentials_from_options(endpoint: str, options: dict[str, Any]) -> tuple[str, tuple[str, str] | None]:
    """Pops the credential options and answers (URL without credentials, (user, password) or None).

    Credentials come, first found first: from ``password_env=VAR`` (the password in environment
    variable VAR; the user from ``username=`` or the URL's ``user@``), from the URL itself
    (``user:password@host``), or from ``netrc=FILE`` (the host's ``machine`` entry). Without any,
    requests consults ``$NETRC`` or ``~/.netrc`` for the host, as curl does."""
    url, from_url = split_credentials(endpoint)
    username = options.pop("username", None)
    password_env = options.pop("password_env", None)
    netrc_file = options.pop("netrc", None)
    user = str(username) if username is not None else (from_url[0] if from_url else None)
    if password_env is not None:
        name = str(password_env)
        if name not in os.environ:
            raise InvalidTermError(f"password_env names the environment variable {name!r}, which is not set")
        if not user:
            raise InvalidTermError("password_env needs a user name: username=NAME or user@ in the URL")
        return url, (user, os.environ[name])
    if from_url is not None:
        return url, (user or "", from_url[1])
    if netrc_file is not None:
        import netrc

        try:
            entry = netrc.netrc(str(netrc_file)).authenticators(urlsplit(url).hostname or "")
        except (OSError, netrc.NetrcParseError) as exc:
            raise InvalidTermError(f"cannot read the netrc file {netrc_file}: {exc}") from None
        if entry is None:
            raise InvalidTermError(f"the netrc file {netrc_file} has no entry for {urlsplit(url).hostname}")
        login, _account, password = entry
        return url, (user or login or "", password or "")
    return url, None


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    seconds = ascii_integer(value)
    if seconds is not None:
        return float(seconds)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def convert_json_term(term: Any) -> Term | None:
    """A SPARQL-JSON term as our term; Virtuoso's ``nodeID://`` blank nodes become ``_:label``.
    Anything that is not a well-formed term (unknown type, a value that is not text, a datatype or
    language that is not text) raises ResultMismatch: it is never dropped or guessed at."""
    if term is None:
        return None
    if not isinstance(term, dict):
        raise ResultMismatch(f"a SPARQL JSON term is not an object: {term!r:.80}")
    kind = term.get("type")
    value = term.get("value")
    if type(value) is not str:
        raise ResultMismatch(f"a SPARQL JSON {kind!s:.20} term has a value that is not a string: {value!r:.80}")
    if kind == "uri":
        return value
    if kind in ("literal", "typed-literal"):
        datatype = term.get("datatype")
        lang = term.get("xml:lang")
        if (datatype is not None and type(datatype) is not str) or (lang is not None and type(lang) is not str):
            raise ResultMismatch(f"a SPARQL JSON literal has a datatype or language that is not a string: {term!r:.80}")
        return plain_literal(value, datatype, lang)
    if kind == "bnode":
        return "_:" + value.removeprefix("nodeID://")
    raise ResultMismatch(f"a SPARQL JSON term of unknown type {kind!r:.40}")


def parse_json_results(body: bytes, *, capped: bool = False) -> SparqlResult:
    """Parses SPARQL 1.1 JSON results. A body that is not JSON is treated as cut short
    (TransientError); JSON that is not a result document -- a ``boolean`` that is not true/false,
    variables that are not names, a binding of a variable the head does not list, a malformed
    term -- raises ResultMismatch."""
    try:
        data = json_text.loads(body)
    except BadJsonText as exc:
        raise ResultMismatch(f"a SPARQL result document that cannot be read: {exc}") from exc
    except ValueError as exc:
        raise TransientError(f"malformed or truncated SPARQL result body ({len(body)} bytes): {exc}") from exc
    if not isinstance(data, dict):
        raise ResultMismatch(f"a SPARQL result document must be a JSON object, got {type(data).__name__}")
    if "boolean" in data:
        answer = data["boolean"]
        if type(answer) is not bool or "results" in data:
            raise ResultMismatch(f"an ASK answer must be true or false, got {answer!r:.40}")
        return SparqlResult(boolean=answer, size=len(body))
    head, results = data.get("head"), data.get("results")
    names = head.get("vars") if isinstance(head, dict) else None
    bindings = results.get("bindings") if isinstance(results, dict) else None
    if not isinstance(names, list) or not isinstance(bindings, list):
        raise ResultMismatch("a SPARQL result document needs head.vars and results.bindings lists")
    if not all(type(name) is str and name for name in names) or len(set(names)) != len(names):
        raise ResultMismatch(f"head.vars must list distinct variable names, got {names!r:.120}")
    variables = tuple(names)
    rows: list[tuple[Term | None, ...]] = []
    convert = convert_json_term
    for binding in bindings:
        if not isinstance(binding, dict):
            raise ResultMismatch(f"a SPARQL JSON binding is not an object: {binding!r:.80}")
        row: list[Term | None] = []
        bound = 0
        for name in variables:
            term = binding.get(name)
            if term is None:
                row.append(None)
                continue
            bound += 1
            # IRIs are most cells: take them without a call (about 4x faster on big answers)
            if type(term) is dict and term.get("type") == "uri" and type(term.get("value")) is str:
                row.append(term["value"])
            else:
                row.append(convert(term))
        if bound != len(binding):
            extra = sorted(set(binding) - set(variables))
            raise ResultMismatch(f"a binding names variables the head does not list: {extra!r:.80}")
        rows.append(tuple(row))
    return SparqlResult(variables=variables, rows=rows, capped=capped, size=len(body))


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
    return SparqlResult(variables=TRIPLE_VARIABLES, rows=list(rows), size=len(body))


DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
"""The largest answer body read (``max_response_bytes``): far above what a row-capped endpoint
sends, far below what would exhaust memory."""
MAX_REDIRECTS = 10
_REDIRECTS = (301, 302, 303, 307, 308)
_UNSAFE_HEADER_TEXT = re.compile(r"[\x00-\x1f\x7f]")


def check_header_value(value: object, name: str) -> str:
    """``value`` as an HTTP header value; a line break or other control character (which would
    split the header, or be refused on every attempt) is an InvalidTermError at connect time."""
    if not isinstance(value, str) or _UNSAFE_HEADER_TEXT.search(value) or not value.strip():
        raise InvalidTermError(f"{name} must be non-empty text without line breaks or control characters")
    return value


class _ExchangeWatch:
    """The deadline of one exchange: the sockets it uses register here, and when the deadline
    passes a timer shuts them down, so a blocked read returns at once whatever phase it is in
    (connect, redirects, headers sent a byte at a time, body)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self.expired = False

    def register(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            expired = self.expired
        if expired:
            _shut(sock)

    def expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


_current = threading.local()


def _watch_connection(connection: Any) -> None:
    watch: _ExchangeWatch | None = getattr(_current, "watch", None)
    if watch is not None:
        watch.register(getattr(connection, "sock", None))


class _Watched:
    """Registers the connection's socket with the current exchange's watch (connect and response)."""

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        _watch_connection(self)

    def getresponse(self) -> Any:
        _watch_connection(self)
        return super().getresponse()  # type: ignore[misc]


class _WatchedHTTPConnection(_Watched, urllib3.connection.HTTPConnection):
    pass


class _WatchedHTTPSConnection(_Watched, urllib3.connection.HTTPSConnection):
    pass


class _WatchedHTTPPool(urllib3.connectionpool.HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(urllib3.connectionpool.HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


class _WatchedAdapter(requests.adapters.HTTPAdapter):
    """An adapter whose connections register their sockets with the current exchange's watch."""

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any) -> None:
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _WatchedHTTPPool, "https": _WatchedHTTPSPool}
        self.poolmanager.key_fn_by_scheme = dict(self.poolmanager.key_fn_by_scheme)


class HttpExchange:
    """One keep-alive ``requests`` session to one URL: sends form fields, returns the body and
    headers, and turns HTTP failures into typed errors.

    ``timeout`` bounds the whole exchange -- connecting, every redirect, the headers and the body --
    so a stalled or slow-dripping server fails with BackendTimeout. ``max_response_bytes`` bounds
    the body read (ResponseTooLarge past it). Credentials (``http://user:password@host/``,
    ``auth=(user, password)``, or the netrc file for the host) are sent with the requests and
    never shown: ``endpoint`` is the URL without them. ``requests_sent`` counts the requests."""

    def __init__(
        self,
        endpoint: str,
        *,
        timeout: float = 60.0,
        user_agent: str = DEFAULT_USER_AGENT,
        headers: Mapping[str, str] | None = None,
        session: requests.Session | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        auth: tuple[str, str] | requests.auth.AuthBase | None = None,
    ) -> None:
        self.timeout = check_seconds(timeout, "timeout", positive=True, required=True) or 0.0
        self.max_response_bytes = check_count(max_response_bytes, "max_response_bytes", minimum=1, required=True) or 1
        check_header_value(user_agent, "user_agent")
        for name, value in (headers or {}).items():
            check_header_value(value, f"header {name}")
        self._url, url_auth = split_credentials(endpoint)
        self._auth = auth if auth is not None else url_auth
        self._endpoint = redact_url(self._url)
        self._session = session or requests.Session()
        self._session.max_redirects = MAX_REDIRECTS
        adapter = _WatchedAdapter()
        self._session.mount("http://", adapter)
        self._session.mount("https://", adapter)
        self._session.headers.update({"User-Agent": user_agent, **(headers or {})})
        self._clock = clock
        self.requests_sent = 0
        self._count_lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        """The endpoint URL as it may be shown: without credentials."""
        return self._endpoint

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._endpoint!r}, timeout={self.timeout:g})"

    def exchange(
        self, fields: Mapping[str, str] | None = None, *, use_get: bool = False, json_body: Any = None
    ) -> tuple[bytes, Mapping[str, str]]:
        """Sends ``fields`` (as the query string, or a POSTed form) or ``json_body`` (POSTed as JSON)
        and returns (body, headers)."""
        with self._count_lock:  # one connection's calls may send side by side (parallel_requests)
            self.requests_sent += 1
        watch = _ExchangeWatch()
        timer = threading.Timer(self.timeout, watch.expire)
        timer.daemon = True
        outer = getattr(_current, "watch", None)
        _current.watch = watch
        timer.start()
        try:
            deadline = self._clock() + self.timeout
            return self._exchange(fields or {}, json_body, use_get=use_get, deadline=deadline, watch=watch)
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            if watch.expired or isinstance(exc, (requests.Timeout, urllib3.exceptions.TimeoutError)):
                raise self._late() from exc
            if isinstance(exc, requests.TooManyRedirects):
                raise BackendError(f"{self._endpoint} redirected more than {MAX_REDIRECTS} times") from exc
            if isinstance(exc, requests.ConnectionError):
                raise TransientError(f"connection to {self._endpoint} failed: {redact_url(str(exc))}") from exc
            raise TransientError(f"HTTP exchange with {self._endpoint} failed: {redact_url(str(exc))}") from exc
        except BackendError:
            if watch.expired:
                raise self._late() from None
            raise
        finally:
            timer.cancel()
            _current.watch = outer

    def _late(self) -> BackendTimeout:
        return BackendTimeout(f"{self._endpoint} took longer than {self.timeout:g} s to answer (the whole exchange)")

    def _exchange(
        self, fields: Mapping[str, str], json_body: Any, *, use_get: bool, deadline: float, watch: _ExchangeWatch
    ) -> tuple[bytes, Mapping[str, str]]:
        url, method = self._url, "GET" if use_get else "POST"
        origin = urlsplit(url).netloc
        for _hop in range(MAX_REDIRECTS + 1):
            remaining = deadline - self._clock()
            if remaining <= 0 or watch.expired:
                raise self._late()
            timeout = (min(remaining, 10.0), remaining)
            same_origin = urlsplit(url).netloc == origin
            auth = self._auth if same_origin else None  # credentials never follow a redirect elsewhere
            if json_body is not None:
                response = self._session.post(
                    url, json=json_body, timeout=timeout, stream=True, allow_redirects=False, auth=auth
                )
            elif method == "GET":
                response = self._session.get(
                    url, params=fields, timeout=timeout, stream=True, allow_redirects=False, auth=auth
                )
            else:
                response = self._session.post(
                    url, data=fields, timeout=timeout, stream=True, allow_redirects=False, auth=auth
                )
            with response:
                if response.status_code in _REDIRECTS and response.headers.get("Location"):
                    url = urljoin(url, response.headers["Location"])
                    if urlsplit(url).scheme not in ("http", "https"):
                        raise BackendError(f"{self._endpoint} redirected to a non-HTTP URL")
                    if method == "GET" and json_body is None:
                        fields = {}  # a redirected GET: the new location carries its own query string
                    elif response.status_code in (301, 302, 303):
                        if json_body is not None:
                            raise BackendError(f"{self._endpoint} redirected a JSON POST (HTTP {response.status_code})")
                        method = "GET"  # the SPARQL protocol takes the same fields in the query string
                    continue
                body = self._read_body(response, deadline)
                if watch.expired:  # cut short by the deadline (headers or body may look complete)
                    raise self._late()
                self._raise_for_status(response, body)
                return body, response.headers
        raise requests.TooManyRedirects(f"more than {MAX_REDIRECTS} redirects")

    def _read_body(self, response: requests.Response, deadline: float) -> bytes:
        declared = ascii_integer(response.headers.get("Content-Length", "").strip(), max_digits=30)
        if declared is not None and declared > self.max_response_bytes:
            raise ResponseTooLarge(
                f"{self._endpoint} announced a {declared:,}-byte answer, over max_response_bytes="
                f"{self.max_response_bytes}"
            )
        chunks: list[bytes] = []
        size = 0
        # read1 returns whatever has arrived, so a server dripping a few bytes at a time is
        # caught at the deadline (iter_content would wait for a whole 64 KiB chunk first).
        while chunk := response.raw.read1(1 << 16, decode_content=True):
            size += len(chunk)
            if size > self.max_response_bytes:
                raise ResponseTooLarge(
                    f"{self._endpoint} sent more than max_response_bytes={self.max_response_bytes} bytes; "
                    "raise the option if such answers are expected"
                )
            chunks.append(chunk)
            if self._clock() > deadline:
                raise self._late()
        return b"".join(chunks)

    def _raise_for_status(self, response: requests.Response, body: bytes) -> None:
        status = response.status_code
        if status < 300:
            return
        error = self._status_error(status, response.headers, redact_url(body.decode("utf-8", "replace").strip()))
        error.status = status
        raise error

    def _status_error(self, status: int, headers: Mapping[str, str], text: str) -> BackendError | QueryError:
        message = text[:_MAX_MESSAGE]
        where = f"{self._endpoint} answered HTTP {status}"
        if status == 429 or (status == 503 and "Retry-After" in headers):
            retry_after = parse_retry_after(headers.get("Retry-After"))
            return RateLimited(f"{where} (rate limited): {message}", retry_after=retry_after)
        if status in (502, 503, 504, 408):
            return TransientError(f"{where}: {message}")
        if status == 500:
            if _PERMANENT_500.search(message):
                return QueryError(f"{where}: {message}")
            return TransientError(f"{where}: {message}")
        if status == 400:
            return QueryError(f"{where} (query refused): {message}")
        if status in (401, 407):
            return BackendError(f"{where} (credentials missing or refused): {message}")
        return BackendError(f"{where}: {message}")

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
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        auth: tuple[str, str] | requests.auth.AuthBase | None = None,
    ) -> None:
        if method not in ("GET", "POST"):
            raise InvalidTermError(f"method must be GET or POST, got {method!r}")
        super().__init__(
            endpoint,
            timeout=timeout,
            user_agent=user_agent,
            headers={"Accept": ACCEPT, **(headers or {})},
            session=session,
            clock=clock,
            max_response_bytes=max_response_bytes,
            auth=auth,
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
