"""RetryingTransport over real HTTP: a loopback SPARQL server (kg_adapters.testing.fault_server) injects
faults, HttpSparqlTransport translates them, and the retry wrapper must recover exactly.

Waiting is never real: the transport gets a fake clock and a sleep that only records the wait
and advances that clock. Only the stall/drip tests use a real (short) client timeout, and there
the server releases the request when the client disconnects, not after a sleep.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from kg_adapters.backends.http_transport import HttpSparqlTransport
from kg_adapters.errors import (
    BackendError,
    BackendTimeout,
    InvalidTermError,
    QueryError,
    RateLimited,
    RetriesExhausted,
    TransientError,
)
from kg_adapters.testing.fault_server import FakeClock, FaultPlan, FaultServer
from kg_adapters.transport import SparqlResult, SparqlTransport
from kg_adapters.wrappers import RetryingTransport
from kg_adapters.wrappers.retry import RetryPolicy

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from Python 3.11

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"


def _graph() -> str:
    lines = []
    for n in range(25):
        node = f"<{EX}n{n}>"
        lines.append(f"{node} <{EX}next> <{EX}n{(n + 1) % 25}> .")
        lines.append(f"{node} <{EX}skip> <{EX}n{(n * 7) % 25}> .")
        lines.append(f'{node} <{EX}label> "node {n}"@en .')
        lines.append(f'{node} <{EX}label> "nœud {n}"@fr .')
        lines.append(f'{node} <{EX}value> "{n * 3}"^^<{XSD}integer> .')
        lines.append(f'{node} <{EX}note> "plain \\"quoted\\" {n}" .')
    return "\n".join(lines) + "\n"


GRAPH = _graph()
QUERIES = [
    *(f"SELECT ?p ?o WHERE {{ <{EX}n{n}> ?p ?o }} ORDER BY ?p ?o" for n in range(25)),
    *(f"SELECT ?s ?v WHERE {{ ?s <{EX}value> ?v FILTER(?v >= {n * 3}) }} ORDER BY ?v LIMIT 5" for n in range(0, 25, 2)),
    *(f"ASK {{ <{EX}n{n}> <{EX}next> <{EX}n{n + 1}> }}" for n in range(0, 24, 3)),
    *(f"ASK {{ <{EX}n{n}> <{EX}next> <{EX}n{n + 2}> }}" for n in range(0, 8, 2)),
]
RECOVERABLE = ("429", "500", "502", "503", "reset", "truncate")


def retrying(
    url: str, clock: FakeClock, /, *, timeout: float = 10.0, **options: Unpack[RetryPolicy]
) -> RetryingTransport[str, SparqlResult]:
    settings: RetryPolicy = {"attempts": 10, "sleep": clock.sleep, "clock": clock, "rng": random.Random(1), **options}
    return RetryingTransport(HttpSparqlTransport(url, timeout=timeout), **settings)


@pytest.fixture(scope="module")
def expected() -> list[SparqlResult]:
    """What every query answers when nothing goes wrong."""
    with FaultServer(data=GRAPH) as server:
        transport = HttpSparqlTransport(server.url)
        answers = [transport.execute(query) for query in QUERIES]
        transport.close()
    assert len(QUERIES) >= 50
    assert all(answer.rows or answer.boolean is not None for answer in answers)
    return answers


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start=1000.0)


@pytest.fixture
def server() -> Iterator[FaultServer]:
    """A fault-free server; tests set ``server.plan`` before sending anything."""
    with FaultServer(data=GRAPH) as running:
        yield running


# -- recovering -------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["POST", "GET"])
def test_random_faults_give_exactly_the_fault_free_rows(
    expected: list[SparqlResult], clock: FakeClock, method: str
) -> None:
    plan = FaultPlan(fraction=0.3, kinds=RECOVERABLE, seed=20240607, retry_after=2)
    with FaultServer(data=GRAPH, plan=plan) as server:
        transport = retrying(server.url, clock)
        transport.inner.method = method  # type: ignore[attr-defined]
        answers = [transport.execute(query) for query in QUERIES]
        transport.close()

    assert answers == expected
    faults = [fault for fault in plan.history if fault != "ok"]
    assert set(faults) == set(RECOVERABLE)  # the seed exercises every kind
    assert len(faults) >= 0.2 * len(plan.history)
    # One request per attempt reached the server (nothing retried behind our back) ...
    assert server.request_count == transport.attempts_made == len(QUERIES) + len(faults)
    assert [request.query for request in server.requests if request.fault == "ok"] == QUERIES
    # ... and every fault cost exactly one backoff, at least Retry-After after a 429.
    assert transport.retries == len(clock.sleeps) == len(faults)
    for fault, wait in zip(faults, clock.sleeps, strict=True):
        assert wait > 0
        if fault == "429":
            assert wait >= 2
    assert transport.gave_up == 0


def test_backoff_grows_exponentially_and_is_capped(server: FaultServer, clock: FakeClock) -> None:
    server.plan = FaultPlan(["503"] * 6)
    transport = retrying(server.url, clock, jitter=0.0, initial_wait=0.5, max_wait=4.0)
    assert transport.execute(QUERIES[0]).rows
    assert clock.sleeps == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    assert server.request_count == 7


def test_jitter_stays_within_its_band(server: FaultServer, clock: FakeClock) -> None:
    server.plan = FaultPlan(["500"] * 8)
    transport = retrying(
        server.url, clock, jitter=0.5, initial_wait=1.0, max_wait=1000.0, max_seconds=1e6, rng=random.Random(3)
    )
    transport.execute(QUERIES[0])
    for number, wait in enumerate(clock.sleeps, start=1):
        base = 2.0 ** (number - 1)
        assert 0.5 * base <= wait <= 1.5 * base
    assert len(set(clock.sleeps)) == len(clock.sleeps)  # actually randomised


def test_retry_after_is_honoured_even_beyond_max_wait(server: FaultServer, clock: FakeClock) -> None:
    server.plan = FaultPlan(["429:45", "429:3", "ok"])
    transport = retrying(server.url, clock, max_wait=10.0, max_seconds=120.0)
    assert transport.execute(QUERIES[1]).rows
    assert len(clock.sleeps) == 2
    assert clock.sleeps[0] >= 45
    assert clock.sleeps[1] >= 3
    assert server.request_count == 3


def test_retry_after_beyond_the_budget_gives_up_at_once(server: FaultServer, clock: FakeClock) -> None:
    server.plan = FaultPlan(["429:600"])
    transport = retrying(server.url, clock, max_seconds=120.0)
    with pytest.raises(RetriesExhausted) as caught:
        transport.execute(QUERIES[0])
    assert server.request_count == 1
    assert clock.sleeps == []  # no hammering, no pointless waiting
    assert caught.value.attempts == 1
    assert "Retry-After" in str(caught.value)
    assert "600" in str(caught.value)
    assert isinstance(caught.value.__cause__, RateLimited)
    assert caught.value.__cause__.retry_after == 600


def test_status_503_with_retry_after_is_rate_limiting(server: FaultServer, clock: FakeClock) -> None:
    server.plan = FaultPlan(["503:8", "ok"])
    transport = retrying(server.url, clock)
    assert transport.execute(QUERIES[2]).rows
    assert clock.sleeps[0] >= 8


# -- not retrying -------------------------------------------------------------------------------------


def test_invalid_query_fails_at_once_with_one_request(server: FaultServer, clock: FakeClock) -> None:
    transport = retrying(server.url, clock)
    with pytest.raises(QueryError) as caught:
        transport.execute("SELEC ?x WHERE { ?x ?p ?o }")
    assert not isinstance(caught.value, TransientError)
    assert "400" in str(caught.value)
    assert server.request_count == 1
    assert transport.attempts_made == 1
    assert transport.retries == 0
    assert clock.sleeps == []


@pytest.mark.parametrize("status", ["403", "401", "404"])
def test_permanent_refusals_fail_at_once_unchanged(server: FaultServer, clock: FakeClock, status: str) -> None:
    server.plan = FaultPlan.constant(status)
    transport = retrying(server.url, clock)
    with pytest.raises(BackendError) as caught:
        transport.execute(QUERIES[0])
    assert type(caught.value) is BackendError  # neither transient nor wrapped in RetriesExhausted
    assert f"HTTP {status}" in str(caught.value)
    assert server.request_count == 1
    assert clock.sleeps == []


# -- giving up -------------------------------------------------------------------------------------


def test_permanent_503_ends_in_retries_exhausted(server: FaultServer, clock: FakeClock) -> None:
    server.plan = FaultPlan.constant("503")
    transport = retrying(server.url, clock, attempts=4, initial_wait=1.0, jitter=0.0)
    with pytest.raises(RetriesExhausted) as caught:
        transport.execute(QUERIES[0])
    error = caught.value
    assert server.request_count == 4
    assert error.attempts == 4
    assert error.elapsed == pytest.approx(sum(clock.sleeps)) == pytest.approx(1.0 + 2.0 + 4.0)
    assert "4 attempts" in str(error)
    assert "7.0 s" in str(error)
    assert "HTTP 503" in str(error)
    assert isinstance(error.__cause__, TransientError)
    assert "HTTP 503" in str(error.__cause__)
    assert transport.gave_up == 1


def test_time_budget_is_measured_with_the_injected_clock(server: FaultServer, clock: FakeClock) -> None:
    server.plan = FaultPlan.constant("502")
    transport = retrying(server.url, clock, attempts=100, max_seconds=10.0, initial_wait=1.0, jitter=0.0)
    with pytest.raises(RetriesExhausted) as caught:
        transport.execute(QUERIES[0])
    # waits 1, 2, 4 (7 s used); the next 8 s would overrun the 10 s budget
    assert clock.sleeps == [1.0, 2.0, 4.0]
    assert caught.value.attempts == 4
    assert caught.value.elapsed == pytest.approx(7.0)
    assert "budget" in str(caught.value)


def test_transport_protocol_and_options(server: FaultServer, clock: FakeClock) -> None:
    transport = retrying(server.url, clock)
    assert isinstance(transport, SparqlTransport)
    assert transport.endpoint == server.url
    for bad in ({"attempts": 0}, {"max_seconds": -1}, {"jitter": 2.0}, {"initial_wait": "1"}):
        with pytest.raises(InvalidTermError):
            RetryingTransport(transport, **bad)


# -- timeouts against a real socket -----------------------------------------------------------------


def test_stalled_request_times_out_and_is_retried(server: FaultServer, clock: FakeClock) -> None:
    server.plan = FaultPlan(["stall", "ok"])
    transport = retrying(server.url, clock, timeout=0.5)
    answer = transport.execute(QUERIES[3])
    assert answer.rows
    assert [request.fault for request in server.requests] == ["stall", "ok"]
    assert transport.retries == 1
    assert server.wait_for(stalled=0)


def test_stalled_request_alone_raises_backend_timeout(server: FaultServer) -> None:
    server.plan = FaultPlan(["stall"])
    transport = HttpSparqlTransport(server.url, timeout=0.5)
    with pytest.raises(BackendTimeout):
        transport.execute(QUERIES[0])


def test_dripping_answer_hits_the_total_deadline_and_is_retried(clock: FakeClock) -> None:
    plan = FaultPlan(["drip", "ok"])
    with FaultServer(data=GRAPH, plan=plan, drip_seconds=0.8, drip_interval=0.04) as server:
        plain = HttpSparqlTransport(server.url, timeout=0.5)
        with pytest.raises(BackendTimeout):  # bytes keep coming, but the whole exchange is too slow
            plain.execute(QUERIES[0])
        plain.close()
        server.plan = FaultPlan(["drip", "ok"])
        transport = retrying(server.url, clock, timeout=0.5)
        assert transport.execute(QUERIES[0]).rows
        assert transport.retries == 1


def test_a_slow_drip_is_cut_at_the_deadline_not_after_a_whole_chunk() -> None:
    """The deadline is checked as bytes arrive: a body dripped 8 bytes at a time is given up once the
    (ticking) clock passes it, not after the body (or 64 KiB of it) has come in."""
    ticks = itertools.count()
    with FaultServer(data=GRAPH, plan=FaultPlan.constant("drip"), drip_bytes=8, drip_interval=0.001) as server:
        transport = HttpSparqlTransport(server.url, timeout=3, clock=lambda: float(next(ticks)))
        with pytest.raises(BackendTimeout, match="longer than 3 s"):
            transport.execute(QUERIES[0])
        assert next(ticks) == 5, "the clock was read at the start and at each of the first four pieces"


def test_faults_in_front_of_an_upstream_endpoint(expected: list[SparqlResult], clock: FakeClock) -> None:
    """``upstream=`` mode: the faulty front relays to a real endpoint (here a clean fault server,
    standing in for Virtuoso) and the retrying client still gets exactly the upstream's rows."""
    plan = FaultPlan(fraction=0.3, kinds=RECOVERABLE, seed=11)
    with FaultServer(data=GRAPH) as upstream, FaultServer(upstream=upstream.url, plan=plan) as front:
        transport = retrying(front.url, clock)
        assert [transport.execute(query) for query in QUERIES[:20]] == expected[:20]
        forwarded = [request for request in front.requests if request.fault in ("ok", "truncate")]
        assert upstream.queries == [request.query for request in forwarded]
        assert transport.retries == sum(1 for fault in plan.history if fault != "ok") > 0
