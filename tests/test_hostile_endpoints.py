"""Hostile SPARQL endpoints (real loopback servers, kg_adapters.testing.fault_server): answers that do not fit
the question are typed errors, never wrong answers; deadlines cover the whole exchange; bodies are
capped; bad options are refused at connect(); credentials never show; retries and query counts are
logged. No test waits on a clock: deadlines are asserted by what the server managed to send."""

from __future__ import annotations

import base64
import json
import logging
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from kg_adapters import connect
from kg_adapters.backends.http_transport import HttpSparqlTransport
from kg_adapters.backends.sparql_http import RemoteSparqlGraph
from kg_adapters.errors import (
    BackendError,
    BackendTimeout,
    CacheMiss,
    InvalidTermError,
    KGError,
    ResponseTooLarge,
    ResultMismatch,
    RetriesExhausted,
)
from kg_adapters.records import Edge, Literal
from kg_adapters.testing.fault_server import FakeClock, FaultPlan, FaultServer, _Answer, json_rewriter

if TYPE_CHECKING:
    from reasoning.base import ChatMessage

EX = "http://example.org/"
DATA = "".join(
    f'<{EX}n{n}> <{EX}next> <{EX}n{(n + 1) % 6}> .\n<{EX}n{n}> <{EX}name> "node {n}"@en .\n' for n in range(6)
)
SECRET = "s3cr3t-pa55"


def graph(server: FaultServer, **options: Any) -> RemoteSparqlGraph:
    clock = FakeClock()
    settings: dict[str, Any] = {"retries": 2, "sleep": clock.sleep, "clock": clock, "timeout": 10}
    settings.update(options)
    kg = connect("sparql+" + server.url, **settings)
    assert isinstance(kg, RemoteSparqlGraph)
    return kg


# -- answers that do not fit the question ------------------------------------------------------------
def test_variables_listed_in_another_order_are_matched_by_name() -> None:
    def reverse(document: dict[str, Any]) -> None:
        if "head" in document:
            document["head"]["vars"].reverse()

    with FaultServer(data=DATA) as honest, graph(honest) as kg:
        expected = kg.neighbors([f"{EX}n1", f"{EX}n2"], direction="both")
    with FaultServer(data=DATA, rewrite=json_rewriter(reverse)) as server, graph(server) as kg:
        assert kg.neighbors([f"{EX}n1", f"{EX}n2"], direction="both") == expected
        assert kg.query(f"SELECT ?s ?o WHERE {{ ?s <{EX}next> ?o }} ORDER BY ?s") == [
            {"s": f"{EX}n{n}", "o": f"{EX}n{(n + 1) % 6}"} for n in range(6)
        ]


def _drop_variable(document: dict[str, Any]) -> None:
    if "head" in document and len(document["head"]["vars"]) > 1:
        gone = document["head"]["vars"].pop()
        for binding in document["results"]["bindings"]:
            binding.pop(gone, None)


def _uri_value_not_text(document: dict[str, Any]) -> None:
    for binding in document.get("results", {}).get("bindings", []):
        for term in binding.values():
            if term["type"] == "uri":
                term["value"] = 42


def _unknown_term_type(document: dict[str, Any]) -> None:
    for binding in document.get("results", {}).get("bindings", []):
        for term in binding.values():
            term["type"] = "mystery"


def _extra_subject(document: dict[str, Any]) -> None:
    bindings = document.get("results", {}).get("bindings", [])
    if bindings and "x" in bindings[0]:
        extra = json.loads(json.dumps(bindings[0]))
        extra["x"] = {"type": "uri", "value": f"{EX}never-asked"}
        bindings.append(extra)


def _unlisted_variable(document: dict[str, Any]) -> None:
    for binding in document.get("results", {}).get("bindings", []):
        binding["sneaky"] = {"type": "literal", "value": "x"}


def _boolean_for_select(document: dict[str, Any]) -> dict[str, Any]:
    return {"head": {}, "boolean": True}


def _ask_as_string(document: dict[str, Any]) -> dict[str, Any]:
    return {"head": {}, "boolean": "false"} if "boolean" in document else document


@pytest.mark.parametrize(
    "change",
    [_drop_variable, _uri_value_not_text, _unknown_term_type, _extra_subject, _unlisted_variable, _boolean_for_select],
)
def test_a_select_answer_that_does_not_fit_the_query_is_a_typed_error(change: Callable[[dict[str, Any]], Any]) -> None:
    with FaultServer(data=DATA, rewrite=json_rewriter(change)) as server, graph(server) as kg:
        with pytest.raises(ResultMismatch):
            kg.neighbors([f"{EX}n1", f"{EX}n2"])
        assert server.request_count == 1, "a mismatch is not retried"


def test_an_ask_answered_with_a_string_is_a_typed_error() -> None:
    with (
        FaultServer(data=DATA, rewrite=json_rewriter(_ask_as_string)) as server,
        graph(server) as kg,
        pytest.raises(ResultMismatch),
    ):
        kg.query(f"ASK {{ <{EX}n1> <{EX}next> <{EX}n2> }}")


class PlainTextServer(FaultServer):
    """Answers every query with an empty ``text/plain`` body (what some proxies send)."""

    def _answer(self, query: str | None, accept: str | None) -> _Answer:
        return _Answer(200, (("Content-Type", "text/plain"),), b"")


def test_an_empty_plain_text_body_is_not_an_empty_select_answer() -> None:
    with PlainTextServer(data=DATA) as server, graph(server) as kg:
        with pytest.raises(ResultMismatch):
            kg.labels([f"{EX}n1"])
        with pytest.raises(ResultMismatch):
            kg.query(f"ASK {{ <{EX}n1> ?p ?o }}")
        assert kg.query("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o FILTER(false) }") == []


def test_paging_a_server_that_ignores_offset_fails_instead_of_looping() -> None:
    with FaultServer(data=DATA, ignore_offset=True) as server, graph(server, max_rows=2) as kg:
        with pytest.raises(ResultMismatch, match="OFFSET"):
            kg.neighbors([f"{EX}n1", f"{EX}n2", f"{EX}n3"], direction="both")
        assert server.request_count == 2
    with FaultServer(data=DATA) as honest, graph(honest, max_rows=2) as kg:
        answer = kg.neighbors([f"{EX}n1", f"{EX}n2", f"{EX}n3"], direction="both")
        assert answer[f"{EX}n1"] == [
            Edge(head=f"{EX}n0", relation=f"{EX}next", tail=f"{EX}n1"),
            Edge(head=f"{EX}n1", relation=f"{EX}name", tail=Literal(value="node 1", lang="en")),
            Edge(head=f"{EX}n1", relation=f"{EX}next", tail=f"{EX}n2"),
        ]


# -- deadlines and sizes ---------------------------------------------------------------------------------
def test_headers_sent_a_byte_at_a_time_meet_the_deadline() -> None:
    plan = FaultPlan.constant("slow_headers")
    with FaultServer(data=DATA, plan=plan, drip_interval=0.05, max_drip_seconds=60) as server:
        transport = HttpSparqlTransport(server.url, timeout=0.5)
        with pytest.raises(BackendTimeout, match="whole exchange"):
            transport.execute(f"ASK {{ <{EX}n1> ?p ?o }}")
        server.stop()
        assert server.headers_finished == 0, "the client gave up before the headers were complete"


def test_a_slow_redirect_loop_meets_the_deadline() -> None:
    with FaultServer(data=DATA, plan=FaultPlan.constant("redirect"), drip_interval=0.2) as server:
        transport = HttpSparqlTransport(server.url, timeout=1.0)
        with pytest.raises(BackendTimeout):
            transport.execute(f"ASK {{ <{EX}n1> ?p ?o }}")
        assert server.request_count <= 10, "not every one of the redirects was followed"


def test_a_fast_redirect_loop_is_a_typed_error_and_one_redirect_is_followed() -> None:
    with (
        FaultServer(data=DATA, plan=FaultPlan.constant("redirect"), drip_interval=0) as server,
        pytest.raises(BackendError, match="redirected more than"),
    ):
        HttpSparqlTransport(server.url, timeout=30).execute(f"ASK {{ <{EX}n1> ?p ?o }}")
    with FaultServer(data=DATA, plan=FaultPlan(["redirect"]), drip_interval=0) as server:
        assert HttpSparqlTransport(server.url).execute(f"ASK {{ <{EX}n1> ?p ?o }}").boolean is True
        assert [request.method for request in server.requests] == ["POST", "GET"]


class CountingQueryParameters(FaultServer):
    """Records how many ``query`` parameters each request carried."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.query_parameters: list[int] = []

    def request_text(self, fields: Mapping[str, list[str]]) -> str | None:
        self.query_parameters.append(len(fields.get("query", [])))
        return super().request_text(fields)


def test_a_redirected_get_keeps_its_query_once() -> None:
    with CountingQueryParameters(data=DATA, plan=FaultPlan(["redirect"]), drip_interval=0) as server:
        transport = HttpSparqlTransport(server.url, method="GET")
        assert transport.execute(f"ASK {{ <{EX}n1> ?p ?o }}").boolean is True
        assert server.query_parameters == [1, 1]


def test_an_endless_body_is_cut_at_the_size_cap() -> None:
    with (
        FaultServer(data=DATA, plan=FaultPlan.constant("endless")) as server,
        graph(server, max_response_bytes=1_000_000) as kg,
    ):
        with pytest.raises(ResponseTooLarge, match="max_response_bytes"):
            kg.labels([f"{EX}n1"])
        assert server.request_count == 1, "a response that is too large is not retried"


@pytest.mark.parametrize(
    "options",
    [
        {"timeout": 0},
        {"timeout": math.nan},
        {"timeout": math.inf},
        {"timeout": -1},
        {"timeout": "nan"},
        {"timeout": "1e999"},
        {"timeout": True},
        {"retry_seconds": math.nan},
        {"retries": -1},
        {"retries": 1.5},
        {"max_rows": 0},
        {"values_chunk": 0},
        {"max_response_bytes": 0},
        {"min_interval": math.inf},
        {"user_agent": "kga/1.0\r\nX-Evil: 1"},
        {"user_agent": "kga\n"},
    ],
)
def test_bad_options_are_refused_at_connect(options: dict[str, Any]) -> None:
    with FaultServer(data=DATA) as server:
        with pytest.raises(InvalidTermError):
            connect("sparql+" + server.url, **options)
        assert server.request_count == 0


def test_bad_url_options_are_refused_at_connect() -> None:
    for bad in ("timeout=0", "timeout=nan", "timeout=inf", "max_rows=-3", "retries=x", "max_response_bytes=0"):
        with pytest.raises(InvalidTermError):
            connect(f"sparql+http://127.0.0.1:9/sparql?{bad}")


# -- credentials ---------------------------------------------------------------------------------------------
def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_credentials_in_the_url_are_sent_but_never_shown(tmp_path: Path) -> None:
    with FaultServer(data=DATA, plan=FaultPlan.constant("401")) as server:
        url = f"sparql+http://alice:{SECRET}@127.0.0.1:{server.port}/sparql"
        kg = connect(url, retries=0)
        assert isinstance(kg, RemoteSparqlGraph)
        assert SECRET not in kg.endpoint and SECRET not in repr(kg)
        with pytest.raises(BackendError) as caught:
            kg.labels([f"{EX}n1"])
        assert SECRET not in str(caught.value) and caught.value.status == 401
        assert server.requests[0].authorization == _basic("alice", SECRET)
        kg.close()
    with FaultServer(data=DATA, plan=FaultPlan.constant("503")) as server:
        url = f"sparql+http://alice:{SECRET}@127.0.0.1:{server.port}/sparql"
        clock = FakeClock()
        with connect(url, retries=2, sleep=clock.sleep, clock=clock) as kg, pytest.raises(RetriesExhausted) as retried:
            kg.labels([f"{EX}n1"])
        assert SECRET not in str(retried.value)
    with connect(f"sparql+http://alice:{SECRET}@127.0.0.1:9/sparql", retries=0) as kg:  # nothing listens on 9
        with pytest.raises(KGError) as refused:
            kg.labels([f"{EX}n1"])
        assert SECRET not in str(refused.value)
    cache = tmp_path / "replay.sqlite"
    with connect(f"sparql+http://alice:{SECRET}@127.0.0.1:9/sparql", cache=str(cache)) as kg:
        assert SECRET not in repr(kg)
    with connect(f"sparql+http://alice:{SECRET}@127.0.0.1:9/sparql", cache=str(cache), cache_mode="replay") as kg:
        with pytest.raises(CacheMiss) as missed:
            kg.labels([f"{EX}n1"])
        assert SECRET not in str(missed.value) and SECRET not in repr(kg)
    assert SECRET.encode() not in cache.read_bytes()


def test_credentials_from_the_environment_and_from_a_netrc_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KGA_TEST_PASSWORD", SECRET)
    netrc = tmp_path / "netrc"
    netrc.write_text(f"machine 127.0.0.1 login bob password {SECRET}-netrc\n")
    netrc.chmod(0o600)
    with FaultServer(data=DATA) as server:
        with connect(f"sparql+http://carol@127.0.0.1:{server.port}/sparql?password_env=KGA_TEST_PASSWORD") as kg:
            assert kg.relations([f"{EX}n1"]) == {f"{EX}n1": [f"{EX}name", f"{EX}next"]}
            assert SECRET not in repr(kg)
        with connect("sparql+" + server.url, netrc=str(netrc)) as kg:
            kg.labels([f"{EX}n1"])
        assert [request.authorization for request in server.requests] == [
            _basic("carol", SECRET),
            _basic("bob", f"{SECRET}-netrc"),
        ]
    with pytest.raises(InvalidTermError, match="KGA_TEST_UNSET"):
        connect("sparql+http://carol@127.0.0.1:9/sparql?password_env=KGA_TEST_UNSET")


def test_credentials_never_follow_a_redirect_to_another_host() -> None:
    with FaultServer(data=DATA) as elsewhere:

        class Redirecting(FaultServer):
            def _answer(self, query: str | None, accept: str | None) -> _Answer:
                return _Answer(307, (("Location", elsewhere.url.replace("127.0.0.1", "localhost")),), b"")

        with Redirecting(data=DATA) as server:
            url = f"sparql+http://alice:{SECRET}@127.0.0.1:{server.port}/sparql"
            with connect(url, retries=0) as kg:
                kg.labels([f"{EX}n1"])
            assert server.requests[0].authorization == _basic("alice", SECRET)
            assert elsewhere.requests[0].authorization is None


# -- observability -------------------------------------------------------------------------------------------
def test_each_retry_is_logged_at_info_and_each_operation_counts_its_queries_at_debug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with (
        FaultServer(data=DATA, plan=FaultPlan(["503", "429:3"])) as server,
        graph(server, retries=4) as kg,
        caplog.at_level(logging.DEBUG, logger="kg_adapters"),
    ):
        kg.labels([f"{EX}n1"])
        url = server.url
    retries = [record.getMessage() for record in caplog.records if record.levelno == logging.INFO]
    assert len(retries) == 2
    assert "HTTP 503" in retries[0] and "attempt 1 of 5" in retries[0]
    assert "HTTP 429" in retries[1] and "attempt 2 of 5" in retries[1] and "waiting 3.00 s" in retries[1]
    counts = [record.getMessage() for record in caplog.records if record.levelno == logging.DEBUG]
    assert counts == [f"labels on {url}: 1 query"]


def test_the_llm_client_has_the_same_deadline_size_cap_and_redaction() -> None:
    from reasoning.llm import OpenAIChat

    hello: list[ChatMessage] = [{"role": "user", "content": "hello"}]
    with FaultServer(path="/v1/chat/completions", plan=FaultPlan.constant("endless")) as server:
        base = server.url.removesuffix("/chat/completions").replace("127.0.0.1", f"bob:{SECRET}@127.0.0.1")
        with OpenAIChat("m", base_url=base, max_response_bytes=1_000_000, attempts=3) as llm:
            with pytest.raises(ResponseTooLarge) as caught:
                llm.chat(hello)
            assert SECRET not in str(caught.value) and SECRET not in repr(llm)
        assert server.request_count == 1
    plan = FaultPlan.constant("slow_headers")
    with FaultServer(path="/v1/chat/completions", plan=plan, drip_interval=0.05, max_drip_seconds=60) as server:
        base = server.url.removesuffix("/chat/completions")
        with OpenAIChat("m", base_url=base, timeout=0.5, attempts=1) as llm, pytest.raises(KGError) as timed_out:
            llm.chat(hello)
        server.stop()
        assert isinstance(timed_out.value, BackendTimeout) or isinstance(timed_out.value.__cause__, BackendTimeout)
        assert server.headers_finished == 0
