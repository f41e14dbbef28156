"""The one exception tree of kg-adapters.

Every error the library raises on purpose derives from :class:`KGError`, so callers can
catch one class. Backends translate foreign errors (pyoxigraph, rdflib, HTTP) in one place
each, with ``raise ... from exc`` so the original stays attached::

    KGError
    ├── InvalidTermError        an id, relation, literal or option value is malformed
    ├── QueryError              the backend rejected a query (syntax, unsupported feature)
    ├── BackendError            the backend failed while answering
    │   ├── TransientError      worth retrying: may succeed later
    │   │   ├── RateLimited     the endpoint asked us to slow down (carries retry_after)
    │   │   └── BackendTimeout  no answer within the configured time
    │   ├── RetriesExhausted    a transient failure outlasted the retry budget (says what was tried)
    │   ├── ResultTooLarge      an answer exceeds what the endpoint can page through
    │   ├── ResponseTooLarge    an answer body exceeds max_response_bytes
    │   ├── ResultMismatch      an answer does not fit the query asked (variables, types, paging)
    │   ├── StoreReadOnly       a store opened for writing sits on read-only media
    │   ├── IndexTooLarge       a graph has more entities or relations than the traversal index numbers
    │   └── StoreNotFound       a local store is missing or incomplete (never opened empty)
    ├── CacheMiss               a replay-only cache was asked for something it does not hold
    ├── LoadError               a dump could not be loaded (carries file and line)
    ├── UnknownBackendError     no backend registered for a URL scheme (carries an install hint)
    └── MissingDependency       an optional extra a feature needs is not installed (says the install command)

The packages above the core add their own subclasses in their own modules: ``loaders.errors``
(``ExtractError`` and its kinds) and ``reasoning.errors`` (``LLMError``, ``UnknownMethodError``).

Unknown keyword options raise the builtin :class:`TypeError`, as Python does for functions.
"""

from __future__ import annotations


class KGError(Exception):
    """Root of every error raised by kg-adapters."""


class InvalidTermError(KGError, ValueError):
    """An id, relation, literal or argument value is malformed; it never reaches a query."""


class QueryError(KGError):
    """The backend refused or could not evaluate a query; ``status`` is the HTTP status when one was answered."""

    status: int | None = None


class BackendError(KGError):
    """The backend failed while answering; ``status`` is the HTTP status when one was answered."""

    status: int | None = None


class TransientError(BackendError):
    """A failure that may go away if the same request is repeated later."""


class RateLimited(TransientError):
    """The endpoint asked the client to slow down."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class BackendTimeout(TransientError):
    """No answer arrived within the configured time."""


class RetriesExhausted(BackendError):
    """A transient failure persisted through every allowed attempt; ``attempts`` and ``elapsed``
    say what was tried and the last failure is chained as ``__cause__``."""

    def __init__(self, message: str, *, attempts: int, elapsed: float) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.elapsed = elapsed


class ResultTooLarge(BackendError):
    """An answer is larger than the endpoint lets a client page through (e.g. Virtuoso's
    MaxSortedTopRows for one entity); narrow the request (relations, limit_per_entity)."""


class ResponseTooLarge(BackendError):
    """An answer body was larger than ``max_response_bytes`` (an endless or runaway response);
    nothing past the cap is buffered. Not retried: the same request would bring the same answer."""


class ResultMismatch(BackendError):
    """An endpoint answered something other than what was asked: a result document whose
    variables, term types or shape do not fit the query, or paging that makes no progress.
    Never turned into a plausible wrong answer; not retried."""


class StoreReadOnly(BackendError):
    """A store cannot be opened for writing: its file system or directory is read-only."""


class IndexTooLarge(BackendError):
    """A graph has more distinct entities (or relations) than the traversal index's int32 numbers hold;
    raised before any index file is written (the store itself loads: ``kga load --no-index``)."""


class CacheMiss(KGError):
    """A cache in replay mode was asked for an answer it does not hold (no network is touched)."""


class StoreNotFound(BackendError):
    """A local store is missing or was left incomplete by an interrupted load."""


class LoadError(KGError):
    """A dump could not be loaded; ``file`` and ``line`` say where (line is 1-based)."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None) -> None:
        where = file or "<input>"
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where}: {message}")
        self.file = file
        self.line = line
        self.reason = message


class UnknownBackendError(KGError):
    """No backend is registered for a URL scheme, or its driver is not installed."""


class MissingDependency(KGError):
    """An optional extra that a feature needs is not installed; the message holds the install command."""


def error_named(name: object, message: str, *, within: type[KGError] = KGError) -> KGError:
    """The error another process reported by class name, as that class when it is one of ours under
    ``within`` (and takes a message alone), else a :class:`BackendError`: a worker's typed errors
    cross the process boundary typed."""
    kind = globals().get(name) if isinstance(name, str) else None
    if isinstance(kind, type) and issubclass(kind, within):
        try:
            return kind(message)
        except TypeError:  # a class with other required arguments
            pass
    return BackendError(message)
