"""Throttling requests to one endpoint: a :class:`~kg_adapters.transport.Transport` that wraps another.

Three rules, shared by every thread that uses one ``RateLimitedTransport``:

* at most ``concurrency`` requests in flight (a bounded semaphore);
* at least ``min_interval`` seconds between the starts of two requests;
* after a ``RateLimited`` error with ``retry_after`` passes through, no thread starts a request
  before that instant (one shared "not before" time), so a 429 slows the whole client down
  instead of only the thread that received it.

The wrapper does not retry: put it *inside* a :class:`~kg_adapters.wrappers.retry.RetryingTransport`
(``RetryingTransport(RateLimitedTransport(http))``) so that every retried request is throttled too.
Wikimedia's policy for the Wikidata Query Service and the Wikibase API amounts to ``concurrency=1``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic

from kg_adapters.budgets import check_count, check_seconds
from kg_adapters.errors import RateLimited
from kg_adapters.transport import Req, Resp, Transport

__all__ = ["RateLimitedTransport"]


class RateLimitedTransport(Generic[Req, Resp]):
    """Limits concurrency and request rate of ``inner`` across threads; thread-safe.

    ``sleep`` and ``clock`` are injectable (tests pass a fake clock that their sleep advances).
    Counters: ``requests_started``, ``in_flight``, ``max_in_flight``, ``waited`` (seconds of
    pacing requested) and ``not_before`` (the clock time before which no request starts).
    """

    def __init__(
        self,
        inner: Transport[Req, Resp],
        *,
        concurrency: int = 1,
        min_interval: float = 0.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        check_count(concurrency, "concurrency", minimum=1, required=True)
        check_seconds(min_interval, "min_interval", required=True)
        self.inner = inner
        self.concurrency = concurrency
        self.min_interval = float(min_interval)
        self._sleep = sleep
        self._clock = clock
        self._slots = threading.BoundedSemaphore(concurrency)
        self._start_gate = threading.Lock()
        """Held while a thread waits for its turn to start, so starts happen one at a time."""
        self._state = threading.Lock()
        self._last_start: float | None = None
        self.not_before = float("-inf")
        self.requests_started = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.waited = 0.0

    # -- Transport -----------------------------------------------------------------------------
    @property
    def endpoint(self) -> str:
        return self.inner.endpoint

    def execute(self, request: Req, /) -> Resp:
        with self._slots:
            self._wait_for_turn()
            try:
                return self.inner.execute(request)
            except RateLimited as exc:
                if exc.retry_after is not None:
                    self.pause(exc.retry_after)
                raise
            finally:
                with self._state:
                    self.in_flight -= 1

    def close(self) -> None:
        self.inner.close()

    # -- throttling ------------------------------------------------------------------------------
    def pause(self, seconds: float) -> None:
        """No request starts (in any thread) until ``seconds`` from now; never shortens a pause."""
        until = self._clock() + max(0.0, float(seconds))
        with self._state:
            self.not_before = max(self.not_before, until)

    def _wait_for_turn(self) -> None:
        with self._start_gate:
            while True:
                now = self._clock()
                with self._state:
                    ready = self.not_before
                    if self._last_start is not None:
                        ready = max(ready, self._last_start + self.min_interval)
                if now >= ready:
                    break
                with self._state:
                    self.waited += ready - now
                self._sleep(ready - now)
            with self._state:
                self._last_start = now
                self.requests_started += 1
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def __repr__(self) -> str:
        return (
            f"RateLimitedTransport({self.inner!r}, concurrency={self.concurrency}, min_interval={self.min_interval:g})"
        )
