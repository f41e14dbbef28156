"""Whole KG operations against a real Virtuoso behind a fault-injecting proxy: with a fraction of
requests failing, answers equal the fault-free ones; with permanent faults a typed error arrives
within the configured bound. Sleeping and the clock are injected, so nothing here waits for a
backoff (a stall or slow drip still costs one real client timeout)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from kg_adapters import connect
from kg_adapters.backends.http_transport import HttpSparqlTransport
from kg_adapters.backends.sparql_http import RemoteSparqlGraph
from kg_adapters.base import KnowledgeGraph
from kg_adapters.errors import InvalidTermError, QueryError, RetriesExhausted
from kg_adapters.records import Edge
from kg_adapters.testing.fault_server import FakeClock, FaultPlan, FaultServer
from kg_adapters.testing.fault_workload import FAULT_KINDS, QUICK_FAULT_KINDS, Op, build_workload, run_op
from kg_adapters.testing.virtuoso import VirtuosoServer, virtuoso_fixture
from kg_adapters.wrappers.retry import RetryingTransport
from reasoning.demo import DEMO_QUESTIONS, sample_path


@pytest.fixture(scope="module")
def virtuoso(tmp_path_factory: pytest.TempPathFactory, request: Any) -> VirtuosoServer:
    return virtuoso_fixture(tmp_path_factory, [sample_path()], request=request)


def remote(url: str, clock: FakeClock, *, attempts: int = 8, max_seconds: float = 600.0) -> RemoteSparqlGraph:
    transport = RetryingTransport(
        HttpSparqlTransport(url, timeout=20), attempts=attempts, max_seconds=max_seconds, sleep=clock.sleep, clock=clock
    )
    return RemoteSparqlGraph(transport, profile="freebase", dialect="virtuoso", values_chunk=7)


def workload(kg: RemoteSparqlGraph) -> list[object]:
    """A mixed batch of operations (small VALUES chunks, so each makes several requests)."""
    rng = random.Random(5)
    topics = sorted({q.topic for q in DEMO_QUESTIONS})
    answers: list[object] = []
    for question in DEMO_QUESTIONS:
        answers.append(list(kg.paths(question.topic, question.relation_path, directions=question.directions)))
    answers.append(kg.neighbors(topics, direction="both"))
    answers.append(kg.relations(topics, direction="both"))
    answers.append(kg.labels(topics))
    answers.append(list(kg.subgraph(rng.choice(topics), hops=1)))
    answers.append(list(kg.shortest_paths("m.0bxtg", "m.06pj8", max_hops=3)))
    answers.append(kg.search("tom hanks"))
    return answers


@pytest.fixture(scope="module")
def fault_free(virtuoso: VirtuosoServer) -> list[object]:
    with remote(virtuoso.sparql_url, FakeClock()) as kg:
        return workload(kg)


@pytest.mark.parametrize("fraction", [0.1, 0.3, 0.5])
def test_answers_equal_the_fault_free_ones(virtuoso: VirtuosoServer, fault_free: list[object], fraction: float) -> None:
    plan = FaultPlan(fraction=fraction, seed=int(fraction * 100), retry_after=2)
    clock = FakeClock()
    with FaultServer(upstream=virtuoso.sparql_url, plan=plan) as proxy, remote(proxy.url, clock, attempts=12) as kg:
        assert workload(kg) == fault_free
        faults = [fault for fault in plan.history if fault != "ok"]
        assert faults, "the plan injected faults"
        assert isinstance(kg.transport, RetryingTransport)
        assert kg.transport.retries == len(faults)
        assert proxy.request_count == len(plan.history)


def test_permanent_fault_gives_a_typed_error_within_the_bound(virtuoso: VirtuosoServer) -> None:
    clock = FakeClock()
    with FaultServer(upstream=virtuoso.sparql_url, plan=FaultPlan.constant("503")) as proxy:
        with remote(proxy.url, clock, attempts=4, max_seconds=30.0) as kg, pytest.raises(RetriesExhausted) as caught:
            kg.neighbors("m.0bxtg")
        assert caught.value.attempts == 4
        assert caught.value.elapsed <= 30.0
        assert proxy.request_count == 4


def test_retry_after_beyond_the_budget_gives_up_at_once(virtuoso: VirtuosoServer) -> None:
    clock = FakeClock()
    with FaultServer(upstream=virtuoso.sparql_url, plan=FaultPlan.constant("429:3600")) as proxy:
        with remote(proxy.url, clock, attempts=5, max_seconds=60.0) as kg, pytest.raises(RetriesExhausted):
            kg.labels("m.0bxtg")
        assert proxy.request_count == 1
        assert clock() == 0.0, "no time was spent waiting for a Retry-After that exceeds the budget"


def test_query_errors_are_not_retried(virtuoso: VirtuosoServer) -> None:
    clock = FakeClock()
    with FaultServer(upstream=virtuoso.sparql_url) as proxy, remote(proxy.url, clock) as kg:
        with pytest.raises(QueryError):
            kg.query("SELECT WHERE { this is not sparql")
        assert proxy.request_count == 1
        assert clock() == 0.0


def test_connect_builds_the_same_stack_from_url_options(virtuoso: VirtuosoServer) -> None:
    url = "sparql+" + virtuoso.sparql_url + "?profile=freebase&dialect=virtuoso&retries=3&timeout=15&max_rows=500"
    with connect(url) as kg:
        assert isinstance(kg, RemoteSparqlGraph)
        assert isinstance(kg.transport, RetryingTransport)
        assert kg.page_size == 500
        assert kg.labels(["m.0bxtg"]) == {"m.0bxtg": "Tom Hanks"}
    with pytest.raises(TypeError, match="colour"):
        connect(url + "&colour=blue")
    with pytest.raises(InvalidTermError):
        connect("sparql+" + virtuoso.sparql_url + "?timeout=soon")


def test_wikidata_requires_a_descriptive_user_agent(tmp_path: Path) -> None:
    with pytest.raises(InvalidTermError, match="User-Agent"):
        connect("wikidata:")
    with pytest.raises(InvalidTermError, match="User-Agent"):
        connect("wikidata:", user_agent="python-requests/2.31")
    data = (
        "<http://www.wikidata.org/entity/Q42> <http://www.wikidata.org/prop/direct/P31> "
        "<http://www.wikidata.org/entity/Q5> .\n"
        '<http://www.wikidata.org/entity/Q42> <http://www.w3.org/2000/01/rdf-schema#label> "Douglas Adams"@en .\n'
    )
    with FaultServer(data=data) as wdqs:
        kg = connect("wikidata:", user_agent="kga-tests/1.0 (tests@example.org)", base_url=wdqs.url, retries=0)
        with kg:
            assert kg.profile.name == "wikidata"
            assert kg.neighbors("Q42", relations=["P31"]) == {"Q42": [Edge(head="Q42", relation="P31", tail="Q5")]}
            assert kg.labels("Q42") == {"Q42": "Douglas Adams"}
        assert {request.user_agent for request in wdqs.requests} == {"kga-tests/1.0 (tests@example.org)"}


# -- the mixed workload of benchmarks/faults.py, at test size ----------------------------------------
@pytest.fixture(scope="module")
def mixed_ops() -> list[Op]:
    return build_workload(sample_path(), 100, seed=3)


@pytest.fixture(scope="module")
def mixed_reference(virtuoso: VirtuosoServer, mixed_ops: list[Op]) -> list[object]:
    with connect("sparql+" + virtuoso.sparql_url + "?profile=freebase&dialect=virtuoso", retries=0) as kg:
        return [run_op(kg, op) for op in mixed_ops]


def through_proxy(proxy: FaultServer, clock: FakeClock, *, retries: int) -> KnowledgeGraph:
    """``connect`` with its retry wrapper, its waits on ``clock`` (a stall or drip still costs the
    real 1 s timeout)."""
    url = "sparql+" + proxy.url + "?profile=freebase&dialect=virtuoso"
    return connect(url, timeout=1, retries=retries, retry_seconds=3600, sleep=clock.sleep, clock=clock)


def test_mixed_workload_survives_every_fault_kind(
    virtuoso: VirtuosoServer, mixed_ops: list[Op], mixed_reference: list[object]
) -> None:
    """100 operations at 30% faults of every kind (429, 5xx, resets, stalls, truncated bodies, slow
    drips) through connect(): exactly the fault-free answers."""
    plan = FaultPlan(fraction=0.3, kinds=FAULT_KINDS, seed=4, retry_after=2)
    clock = FakeClock()
    with FaultServer(upstream=virtuoso.sparql_url, plan=plan, drip_seconds=2, drip_interval=0.05) as proxy:
        with through_proxy(proxy, clock, retries=15) as kg:
            assert [run_op(kg, op) for op in mixed_ops] == mixed_reference
            transport = kg.transport  # type: ignore[attr-defined]
        injected = [fault for fault in plan.history if fault != "ok"]
        assert set(injected) == set(FAULT_KINDS), "every kind of fault was injected"
        assert transport.retries >= len(injected) and transport.gave_up == 0
        assert clock() >= 2 * injected.count("429"), "each 429 waited its Retry-After (on the fake clock)"


def test_typed_errors_past_the_retry_budget(
    virtuoso: VirtuosoServer, mixed_ops: list[Op], mixed_reference: list[object]
) -> None:
    """With one retry at 30% faults some operations run out of attempts: each of those raises
    RetriesExhausted, every other one answers exactly; none answers wrongly."""
    plan = FaultPlan(fraction=0.3, kinds=QUICK_FAULT_KINDS, seed=5)
    exhausted = 0
    with (
        FaultServer(upstream=virtuoso.sparql_url, plan=plan) as proxy,
        through_proxy(proxy, FakeClock(), retries=1) as kg,
    ):
        for op, reference in zip(mixed_ops, mixed_reference, strict=True):
            try:
                answer = run_op(kg, op)
            except RetriesExhausted as exc:
                assert exc.attempts == 2
                exhausted += 1
                continue
            assert answer == reference, op
    assert exhausted > 0
