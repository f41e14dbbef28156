"""RateLimitedTransport over real HTTP against the loopback fault server.

Concurrency is checked where it matters, on the server (its own in-flight counter); pacing and
Retry-After pauses are checked in a fake clock that the injected sleep advances, so nothing here
waits for real time. ``Recorder`` is a test instrument placed *inside* the limiter: it forwards to
the real HTTP transport and notes, in the fake clock, when each request actually starts.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator

import pytest

from kg_adapters.backends.http_transport import HttpSparqlTransport
from kg_adapters.errors import InvalidTermError, RateLimited
from kg_adapters.testing.fault_server import FakeClock, FaultPlan, FaultServer
from kg_adapters.transport import SparqlResult, SparqlTransport
from kg_adapters.wrappers import RateLimitedTransport, RetryingTransport

EX = "http://example.org/"
GRAPH = "".join(f"<{EX}n{n}> <{EX}next> <{EX}n{(n + 1) % 10}> .\n" for n in range(10))
QUERIES = [f"SELECT ?o WHERE {{ <{EX}n{n % 10}> ?p ?o }}" for n in range(24)]


class Recorder:
    """Forwards to a real transport, recording (clock time, query) as each request starts."""

    def __init__(self, inner: SparqlTransport, clock: Callable[[], float]) -> None:
        self.inner = inner
        self.clock = clock
        self.starts: list[tuple[float, str]] = []
        self._lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        return self.inner.endpoint

    def execute(self, query: str) -> SparqlResult:
        with self._lock:
            self.starts.append((self.clock(), query))
        return self.inner.execute(query)

    def close(self) -> None:
        self.inner.close()


def run_threads(work: Callable[[int], object], count: int) -> None:
    """Runs ``work(i)`` in ``count`` threads and re-raises the first failure."""
    errors: list[BaseException] = []
    start = threading.Barrier(count)

    def body(index: int) -> None:
        try:
            start.wait(timeout=30)
            work(index)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    if errors:
        raise errors[0]


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer(data=GRAPH) as running:
        yield running


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start=50.0)


def test_concurrency_one_means_one_request_in_flight_at_the_server(server: FaultServer) -> None:
    limiter = RateLimitedTransport(HttpSparqlTransport(server.url), concurrency=1)
    answers: dict[int, list[SparqlResult]] = {}

    def work(index: int) -> None:
        answers[index] = [limiter.execute(query) for query in QUERIES[index::6]]

    run_threads(work, 6)
    assert server.request_count == len(QUERIES)
    assert server.max_in_flight == 1
    assert limiter.max_in_flight == 1
    assert limiter.requests_started == len(QUERIES)
    assert all(len(rows.rows) == 1 for batch in answers.values() for rows in batch)


def test_concurrency_two_lets_exactly_two_through(server: FaultServer) -> None:
    """The positive control: the server's counter does see parallel requests when allowed."""
    server.plan = FaultPlan(["stall", "stall"])
    limiter = RateLimitedTransport(HttpSparqlTransport(server.url, timeout=30), concurrency=2)

    def release_when_both_stalled() -> None:
        assert server.wait_for(stalled=2, timeout=30)
        server.release_stalls()

    releaser = threading.Thread(target=release_when_both_stalled)
    releaser.start()
    run_threads(lambda index: [limiter.execute(query) for query in QUERIES[index::4]], 4)
    releaser.join(timeout=30)
    assert server.max_in_flight == 2
    assert limiter.max_in_flight == 2
    assert server.request_count == len(QUERIES)


def test_min_interval_spaces_request_starts(server: FaultServer, clock: FakeClock) -> None:
    recorder = Recorder(HttpSparqlTransport(server.url), clock)
    limiter = RateLimitedTransport(recorder, concurrency=1, min_interval=1.5, sleep=clock.sleep, clock=clock)
    run_threads(lambda index: [limiter.execute(query) for query in QUERIES[index::4]], 4)
    times = [when for when, _query in recorder.starts]
    assert len(times) == len(QUERIES)
    assert times == sorted(times)
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert all(gap >= 1.5 for gap in gaps)
    assert times[-1] - times[0] == pytest.approx(1.5 * (len(QUERIES) - 1))  # and no more than needed
    assert server.max_in_flight == 1


def test_min_interval_without_concurrency_limit(server: FaultServer, clock: FakeClock) -> None:
    recorder = Recorder(HttpSparqlTransport(server.url), clock)
    limiter = RateLimitedTransport(recorder, concurrency=8, min_interval=0.25, sleep=clock.sleep, clock=clock)
    run_threads(lambda index: [limiter.execute(query) for query in QUERIES[index::8]], 8)
    times = sorted(when for when, _query in recorder.starts)
    assert all(later - earlier >= 0.25 for earlier, later in itertools.pairwise(times))


def test_retry_after_pauses_every_thread(server: FaultServer, clock: FakeClock) -> None:
    server.plan = FaultPlan(["429:30"])
    recorder = Recorder(HttpSparqlTransport(server.url), clock)
    limiter = RateLimitedTransport(recorder, concurrency=4, sleep=clock.sleep, clock=clock)
    with pytest.raises(RateLimited):
        limiter.execute(QUERIES[0])
    limited_at = recorder.starts[0][0]
    assert limiter.not_before == limited_at + 30

    run_threads(lambda index: [limiter.execute(query) for query in QUERIES[index::4]], 4)
    later = [when for when, _query in recorder.starts[1:]]
    assert len(later) == len(QUERIES)
    assert all(when >= limited_at + 30 for when in later)  # no thread started during the pause
    assert sum(clock.sleeps) == pytest.approx(30)  # and the pause was waited out once, not per thread


def test_retrying_over_rate_limiting_recovers_and_pauses_everyone(server: FaultServer, clock: FakeClock) -> None:
    """The production stack: retries outside, so every retried request is throttled too."""
    server.plan = FaultPlan(["ok", "429:20"])
    recorder = Recorder(HttpSparqlTransport(server.url), clock)
    limiter = RateLimitedTransport(recorder, concurrency=1, sleep=clock.sleep, clock=clock)
    transport = RetryingTransport(limiter, attempts=5, sleep=clock.sleep, clock=clock)
    results: dict[int, list[SparqlResult]] = {}

    def work(index: int) -> None:
        results[index] = [transport.execute(query) for query in QUERIES[index::3]]

    run_threads(work, 3)
    assert sum(len(batch) for batch in results.values()) == len(QUERIES)
    assert server.request_count == len(QUERIES) + 1
    assert server.max_in_flight == 1
    limited_at = recorder.starts[1][0]
    assert all(when >= limited_at + 20 for when, _query in recorder.starts[2:])
    assert transport.retries == 1


def test_protocol_and_options(server: FaultServer) -> None:
    limiter = RateLimitedTransport(HttpSparqlTransport(server.url))
    assert isinstance(limiter, SparqlTransport)
    assert limiter.endpoint == server.url
    assert limiter.execute(QUERIES[0]).rows
    limiter.close()
    for bad in ({"concurrency": 0}, {"concurrency": True}, {"min_interval": -1.0}):
        with pytest.raises(InvalidTermError):
            RateLimitedTransport(limiter, **bad)


def test_pause_never_shortens(clock: FakeClock, server: FaultServer) -> None:
    limiter = RateLimitedTransport(HttpSparqlTransport(server.url), sleep=clock.sleep, clock=clock)
    limiter.pause(10)
    limiter.pause(2)
    assert limiter.not_before == clock() + 10
    limiter.execute(QUERIES[0])
    assert clock.sleeps == [10]
