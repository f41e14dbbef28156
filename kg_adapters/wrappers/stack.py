"""The transport stack every remote backend builds from its options:
``RetryingTransport(RateLimitedTransport(http))``, so every retried request is throttled too.

``retries`` (default 4: five attempts in all), ``retry_seconds`` (the time budget of one request,
waits included; default 120), ``concurrency`` and ``min_interval`` are the option names the
backends accept, as URL parameters or keyword arguments; ``sleep`` and ``clock`` are the test seam.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from kg_adapters.budgets import option_count, option_seconds
from kg_adapters.transport import Req, Resp, Transport
from kg_adapters.wrappers.rate_limit import RateLimitedTransport
from kg_adapters.wrappers.retry import RetryingTransport

WRAPPER_OPTIONS = ("retries", "retry_seconds", "concurrency", "min_interval", "sleep", "clock")


def guarded(
    transport: Transport[Req, Resp],
    options: dict[str, Any],
    *,
    default_concurrency: int | None,
) -> Transport[Req, Resp]:
    """``transport`` throttled (when a concurrency or interval applies) and retried, as the
    :data:`WRAPPER_OPTIONS` popped from ``options`` say; ``sleep`` and ``clock`` are the seams for
    tests and benchmarks (the waits of both wrappers and the clock their budgets are measured with;
    the HTTP deadline always runs on real time)."""
    sleep: Callable[[float], None] = options.pop("sleep", time.sleep)
    clock: Callable[[], float] = options.pop("clock", time.monotonic)
    retries = option_count(options, "retries")
    retry_seconds = option_seconds(options, "retry_seconds")
    concurrency = option_count(options, "concurrency")
    min_interval = option_seconds(options, "min_interval")
    concurrency = concurrency if concurrency is not None else default_concurrency
    if concurrency or min_interval:
        transport = RateLimitedTransport(
            transport, concurrency=concurrency or 8, min_interval=min_interval or 0.0, sleep=sleep, clock=clock
        )
    attempts = 5 if retries is None else retries + 1
    if attempts > 1:
        transport = RetryingTransport(
            transport,
            attempts=attempts,
            max_seconds=retry_seconds if retry_seconds is not None else 120.0,
            sleep=sleep,
            clock=clock,
        )
    return transport
