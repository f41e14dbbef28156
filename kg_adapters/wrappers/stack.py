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

from kg_adapters.errors import InvalidTermError
from kg_adapters.transport import Req, Resp, Transport
from kg_adapters.wrappers.rate_limit import RateLimitedTransport
from kg_adapters.wrappers.retry import RetryingTransport

WRAPPER_OPTIONS = ("retries", "retry_seconds", "concurrency", "min_interval", "sleep", "clock")


def option_number(options: dict[str, Any], name: str, kind: Callable[[Any], Any]) -> Any:
    """Pops option ``name`` as a non-negative number of type ``kind`` (None when absent)."""
    value = options.pop(name, None)
    if value is None:
        return None
    try:
        number = kind(value)
    except (TypeError, ValueError):
        raise InvalidTermError(f"option {name} must be a number, got {value!r}") from None
    if number < 0:
        raise InvalidTermError(f"option {name} must not be negative, got {value!r}")
    return number


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
    retries = option_number(options, "retries", int)
    retry_seconds = option_number(options, "retry_seconds", float)
    concurrency = option_number(options, "concurrency", int)
    min_interval = option_number(options, "min_interval", float)
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
