"""One HTTP exchange with a deadline and a size cap, shared by every client of the package: the remote
SPARQL transport and the Wikibase API backend (``kg_adapters.backends``) and the LLM client
(``reasoning.llm``).

:class:`HttpExchange` keeps one keep-alive ``requests`` session to one URL; its ``timeout`` bounds
the whole exchange (connecting, every redirect, the headers and the body: a timer shuts the sockets
down when it passes), ``max_response_bytes`` the body read, and credentials are sent but never shown.
HTTP failures are translated into the typed errors of :mod:`kg_adapters.errors` here and nowhere else.
"""

from __future__ import annotations

import contextlib
import email.utils
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

from kg_adapters._version import __version__
from kg_adapters.budgets import ascii_integer, check_count, check_seconds
from kg_adapters.errors import (
    BackendError,
    BackendTimeout,
    InvalidTermError,
    QueryError,
    RateLimited,
    ResponseTooLarge,
    TransientError,
)
from kg_adapters.url import redact_url

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_USER_AGENT",
    "MAX_REDIRECTS",
    "HttpExchange",
    "check_header_value",
    "parse_retry_after",
    "split_credentials",
]

DEFAULT_USER_AGENT = f"kg-adapters/{__version__} (https://pypi.org/project/kg-adapters/) python-requests"
# Virtuoso answers HTTP 500 both for passing trouble and for errors no retry can fix.
_PERMANENT_500 = re.compile(r"\b(SR353|SR352|SR350|SP0\d\d|SQ\d\d\d|SR186|37000|syntax error)\b", re.I)
_MAX_MESSAGE = 500


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
