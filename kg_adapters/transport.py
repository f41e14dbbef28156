"""How a remote backend sends one request: the ``Transport`` and ``SparqlTransport`` interfaces.

The remote backends (``backends/sparql_http.py``, ``backends/wikidata_api.py``) turn each operation
into batched requests and hand every request to a transport. Retrying and rate limiting are
transports that wrap another transport of any request and answer type (``wrappers/retry.py``,
``wrappers/rate_limit.py``), so each HTTP request is retried or throttled on its own, never a
whole multi-request operation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, TypeVar, runtime_checkable

from kg_adapters.terms import Term


@dataclass(frozen=True, kw_only=True)
class SparqlResult:
    """One parsed answer. ``capped`` is True when the endpoint says it cut the rows at its own
    limit (Virtuoso: the ``X-SPARQL-MaxRows`` header), so callers must page or report truncation."""

    variables: tuple[str, ...] = ()
    rows: list[tuple[Term | None, ...]] = field(default_factory=list)
    boolean: bool | None = None
    capped: bool = False
    size: int = 0
    """Bytes of the body the answer was read from (0 where unknown), so an answer read in pages
    can be held to one byte budget."""


Req = TypeVar("Req", contravariant=True)
Resp = TypeVar("Resp", covariant=True)


@runtime_checkable
class Transport(Protocol[Req, Resp]):
    """Sends one request to one endpoint and answers it, raising the typed errors of
    ``kg_adapters.errors`` (``TransientError`` and ``RateLimited`` for what is worth retrying)."""

    @property
    def endpoint(self) -> str: ...

    def execute(self, request: Req, /) -> Resp: ...

    def close(self) -> None: ...


@runtime_checkable
class SparqlTransport(Protocol):
    """Sends one SPARQL query to one endpoint and parses the answer.

    Raises the typed errors of ``kg_adapters.errors``: ``QueryError`` for a query the endpoint
    refuses (HTTP 400), ``BackendError`` for permanent failures (401/403, ...), ``RateLimited``
    (429, with ``retry_after``), ``BackendTimeout`` and other ``TransientError`` for failures worth
    retrying (connection errors, 500/502/503/504, truncated or malformed bodies).
    """

    @property
    def endpoint(self) -> str: ...

    def execute(self, query: str) -> SparqlResult: ...

    def close(self) -> None: ...
