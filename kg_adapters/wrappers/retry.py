"""Retrying one request: :class:`Retrier` (the policy, for any call) and :class:`RetryingTransport`,
a :class:`~kg_adapters.transport.Transport` that wraps another (SPARQL, the Wikibase API, any).

Only :class:`TransientError` (connection failures, timeouts, HTTP 429/5xx, cut-short bodies,
MediaWiki ``maxlag`` answers) is retried; everything else (``QueryError`` for HTTP 400,
``BackendError`` for 401/403, ...) propagates at once and unchanged. Waits grow exponentially with
proportional jitter; a ``RateLimited`` error's ``retry_after`` is a floor for the next wait. The time budget is measured
with the injected ``clock`` (tenacity's own monotonic clock is not used), and when the next wait
would overrun it -- in particular when the endpoint asks for a Retry-After longer than what is
left -- the transport gives up at once instead of hammering the endpoint.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypedDict, TypeVar

import tenacity

from kg_adapters.budgets import check_count, check_seconds
from kg_adapters.errors import InvalidTermError, RateLimited, RetriesExhausted, TransientError
from kg_adapters.transport import Req, Resp, Transport
from kg_adapters.url import redact_url

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from Python 3.11

__all__ = ["Retrier", "RetryPolicy", "RetryingTransport"]

_T = TypeVar("_T")
logger = logging.getLogger("kg_adapters")


@dataclass
class _Call:
    """The state of one ``execute`` call (a transport may serve several threads at once)."""

    started: float
    waits: dict[int, float] = field(default_factory=dict)
    reason: str = ""


class RetryPolicy(TypedDict, total=False):
    """:class:`Retrier`'s options, as those who build one pass them on (:class:`RetryingTransport`,
    the LLM client ``reasoning.llm.OpenAIChat``)."""

    attempts: int
    max_seconds: float
    initial_wait: float
    max_wait: float
    jitter: float
    sleep: Callable[[float], None]
    clock: Callable[[], float]
    rng: random.Random | None


class Retrier:
    """Retries transient failures of one call with exponential backoff and jitter (the policy
    shared by :class:`RetryingTransport` and the LLM client, ``reasoning.llm``).

    ``attempts`` bounds the requests sent for one query (the first one included); ``max_seconds``
    bounds the time one query may take, waits included. The wait before retry ``n`` (1-based) is
    ``min(max_wait, initial_wait * 2 ** (n - 1))`` scaled by a random factor in
    ``[1 - jitter, 1 + jitter]`` (capped at ``max_wait``), and never less than the endpoint's
    Retry-After. ``sleep``, ``clock`` and ``rng`` are injectable so tests need no real waiting.

    Counters for benchmarks: ``attempts_made`` (calls attempted), ``retries`` (waits
    before a repeated request), ``gave_up`` (queries that ended in :class:`RetriesExhausted`) and
    ``waited`` (seconds of backoff requested).
    """

    def __init__(
        self,
        *,
        attempts: int = 5,
        max_seconds: float = 120.0,
        initial_wait: float = 0.5,
        max_wait: float = 30.0,
        jitter: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        check_count(attempts, "attempts", minimum=1, required=True)
        for name, value in (("max_seconds", max_seconds), ("initial_wait", initial_wait), ("max_wait", max_wait)):
            check_seconds(value, name, required=True)
        if isinstance(jitter, bool) or not isinstance(jitter, (int, float)) or not 0 <= jitter <= 1:
            raise InvalidTermError(f"jitter must be a number in [0, 1], got {jitter!r}")
        self.attempts = attempts
        self.max_seconds = float(max_seconds)
        self.initial_wait = float(initial_wait)
        self.max_wait = float(max_wait)
        self.jitter = float(jitter)
        self._sleep = sleep
        self._clock = clock
        self._rng = rng if rng is not None else random.Random()
        self._lock = threading.Lock()
        self.attempts_made = 0
        self.retries = 0
        self.gave_up = 0
        self.waited = 0.0

    def run(self, what: str, call: Callable[[], _T]) -> _T:
        """``call()``, repeated while it raises TransientError; ``what`` names the target in the
        RetriesExhausted message."""
        state = _Call(started=self._clock())

        def wait(retry_state: tenacity.RetryCallState) -> float:
            return self._wait_before_retry(retry_state, state)

        def stop(retry_state: tenacity.RetryCallState) -> bool:
            return self._should_stop(retry_state, state)

        def log_retry(retry_state: tenacity.RetryCallState) -> None:
            outcome, action = retry_state.outcome, retry_state.next_action
            error = outcome.exception() if outcome is not None else None
            status = getattr(error, "status", None)
            logger.info(
                "retrying %s: attempt %d of %d failed (%s%s: %.200s); waiting %.2f s",
                what,
                retry_state.attempt_number,
                self.attempts,
                f"HTTP {status}, " if status is not None else "",
                type(error).__name__,
                redact_url(str(error)),
                action.sleep if action is not None else 0.0,
            )

        retrying = tenacity.Retrying(
            before_sleep=log_retry,
            sleep=self._do_sleep,
            stop=stop,
            wait=wait,
            retry=tenacity.retry_if_exception_type(TransientError),
            reraise=False,
        )
        try:
            result: _T = retrying(self._attempt, call)
        except tenacity.RetryError as exc:
            last = exc.last_attempt.exception()
            made = exc.last_attempt.attempt_number
            elapsed = self._clock() - state.started
            with self._lock:
                self.gave_up += 1
            raise RetriesExhausted(
                f"{redact_url(what)}: gave up after {made} attempt{'s' if made != 1 else ''} over {elapsed:.1f} s "
                f"({state.reason}): {redact_url(str(last))}",
                attempts=made,
                elapsed=elapsed,
            ) from last
        return result

    # -- internals -----------------------------------------------------------------------------
    def _attempt(self, call: Callable[[], _T]) -> _T:
        with self._lock:
            self.attempts_made += 1
        return call()

    def _do_sleep(self, seconds: float) -> None:
        with self._lock:
            self.retries += 1
            self.waited += seconds
        self._sleep(seconds)

    def _wait_before_retry(self, state: tenacity.RetryCallState, call: _Call) -> float:
        """The wait after attempt ``state.attempt_number``, drawn once (stop and wait both ask)."""
        number = state.attempt_number
        known = call.waits.get(number)
        if known is not None:
            return known
        base = min(self.max_wait, self.initial_wait * 2.0 ** min(number - 1, 64))
        with self._lock:
            factor = 1.0 + self.jitter * (2.0 * self._rng.random() - 1.0)
        wait = min(self.max_wait, base * factor)
        retry_after = _retry_after(state)
        if retry_after is not None:
            wait = max(wait, retry_after)
        call.waits[number] = wait
        return wait

    def _should_stop(self, state: tenacity.RetryCallState, call: _Call) -> bool:
        number = state.attempt_number
        if number >= self.attempts:
            call.reason = f"attempt limit {self.attempts} reached"
            return True
        wait = self._wait_before_retry(state, call)
        remaining = self.max_seconds - (self._clock() - call.started)
        if wait <= remaining:
            return False
        retry_after = _retry_after(state)
        if retry_after is not None and retry_after > remaining:
            call.reason = (
                f"the endpoint asked to wait {retry_after:g} s (Retry-After) but only {max(remaining, 0.0):.1f} s "
                f"remain of the {self.max_seconds:g} s budget"
            )
        else:
            call.reason = (
                f"waiting {wait:.1f} s more would exceed the {self.max_seconds:g} s budget "
                f"({max(remaining, 0.0):.1f} s left)"
            )
        return True


class RetryingTransport(Retrier, Generic[Req, Resp]):
    """A transport that retries transient failures of ``inner`` (see :class:`Retrier` for the options)."""

    def __init__(self, inner: Transport[Req, Resp], **policy: Unpack[RetryPolicy]) -> None:
        super().__init__(**policy)
        self.inner = inner

    @property
    def endpoint(self) -> str:
        return self.inner.endpoint

    def execute(self, request: Req, /) -> Resp:
        return self.run(self.endpoint, lambda: self.inner.execute(request))

    def close(self) -> None:
        self.inner.close()

    def __repr__(self) -> str:
        return f"RetryingTransport({self.inner!r}, attempts={self.attempts}, max_seconds={self.max_seconds:g})"


def _retry_after(state: tenacity.RetryCallState) -> float | None:
    outcome = state.outcome
    if outcome is None or not outcome.failed:
        return None
    error = outcome.exception()
    if isinstance(error, RateLimited) and error.retry_after is not None:
        return float(error.retry_after)
    return None
