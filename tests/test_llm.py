"""The OpenAI-compatible client against a real loopback chat-completions server
(support.llm_server): scripted replies, retries on 429/5xx/resets with an injected sleep, typed
errors, the persistent SQLite cache (and replay mode) and make_llm."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.llm_server import LLMServer

from kg_adapters.errors import CacheMiss, InvalidTermError, RateLimited, RetriesExhausted, TransientError
from kg_adapters.testing.fault_server import FakeClock
from reasoning.base import LLM, ChatMessage
from reasoning.errors import LLMError
from reasoning.llm import CountingLLM, OpenAIChat, make_llm

ASK: list[ChatMessage] = [
    {"role": "system", "content": "You answer in one word."},
    {"role": "user", "content": "Where was Tom Hanks born?"},
]


def client(server: LLMServer, clock: FakeClock, **options: object) -> OpenAIChat:
    return OpenAIChat("test-model", base_url=server.url, api_key="sk-test", sleep=clock.sleep, clock=clock, **options)  # type: ignore[arg-type]


def test_scripted_reply_and_request_recorded() -> None:
    with LLMServer([(r"born", "Concord"), (r".", "other")]) as server:
        with client(server, FakeClock()) as llm:
            assert isinstance(llm, LLM)
            assert llm.chat(ASK, max_tokens=16) == "Concord"
            assert llm.chat([{"role": "user", "content": "anything"}], temperature=0.5) == "other"
            assert (llm.llm_calls, llm.requests_sent) == (2, 2)
        first, second = server.requests
        assert first.messages == [dict(m) for m in ASK]
        assert (first.model, first.temperature, first.max_tokens) == ("test-model", 0.0, 16)
        assert first.authorization == "Bearer sk-test"
        assert (second.temperature, second.max_tokens) == (0.5, None)


def test_callable_reply_sees_the_messages() -> None:
    with LLMServer([(r"count", lambda messages: str(len(messages)))]) as server, client(server, FakeClock()) as llm:
        assert llm.chat([*ASK, {"role": "user", "content": "count them"}]) == "3"


def test_unscripted_prompt_is_a_typed_refusal_not_retried() -> None:
    with LLMServer([(r"^never$", "x")]) as server, client(server, FakeClock()) as llm:
        with pytest.raises(LLMError, match="no scripted reply"):
            llm.chat(ASK)
        assert llm.requests_sent == 1


def test_retries_429_500_reset_honouring_retry_after() -> None:
    clock = FakeClock()
    with LLMServer([(r".", "ok")], faults=["429:7", "500", "reset", "503"]) as server:
        with client(server, clock, initial_wait=0.5, max_wait=4.0) as llm:
            assert llm.chat(ASK) == "ok"
            assert llm.requests_sent == 5
            assert llm.retrier.retries == 4
        assert [request.fault for request in server.requests] == ["429:7", "500", "reset", "503", "ok"]
    assert len(clock.sleeps) == 4
    assert clock.sleeps[0] >= 7.0  # Retry-After is a floor, even above max_wait
    assert all(0 < wait <= 4.0 for wait in clock.sleeps[1:])


def test_gives_up_with_retries_exhausted() -> None:
    clock = FakeClock()
    with LLMServer([(r".", "ok")], faults=["500"] * 3) as server, client(server, clock, attempts=3) as llm:
        with pytest.raises(RetriesExhausted) as caught:
            llm.chat(ASK)
        assert caught.value.attempts == 3
        assert isinstance(caught.value.__cause__, TransientError)
        assert len(server.requests) == 3


def test_retry_after_beyond_budget_gives_up_at_once() -> None:
    clock = FakeClock()
    with LLMServer([(r".", "ok")], faults=["429:600"]) as server, client(server, clock, max_seconds=60) as llm:
        with pytest.raises(RetriesExhausted, match="Retry-After") as caught:
            llm.chat(ASK)
        assert isinstance(caught.value.__cause__, RateLimited)
        assert caught.value.__cause__.retry_after == 600
        assert clock.sleeps == []


@pytest.mark.parametrize("status", ["400", "401", "404"])
def test_refusals_fail_at_once(status: str) -> None:
    with LLMServer([(r".", "ok")], faults=[status]) as server, client(server, FakeClock()) as llm:
        with pytest.raises(LLMError, match=f"HTTP {status}"):
            llm.chat(ASK)
        assert llm.requests_sent == 1


def test_persistent_cache_survives_a_restart_and_replays_offline(tmp_path: Path) -> None:
    path = tmp_path / "llm.sqlite"
    with LLMServer([(r"born", "Concord")]) as server:
        with client(server, FakeClock(), cache=path) as llm:
            assert llm.chat(ASK) == "Concord"
            assert llm.chat(ASK) == "Concord"
            assert llm.chat(ASK, temperature=0.7) == "Concord"  # other params: another key
            assert (llm.llm_calls, llm.requests_sent, llm.cache_hits) == (3, 2, 1)
        with client(server, FakeClock(), cache=path) as llm:
            assert llm.chat(ASK) == "Concord"
            assert llm.requests_sent == 0
        assert len(server.requests) == 2
    # the server is gone: replay mode answers what was recorded and refuses the rest
    with OpenAIChat("test-model", base_url="http://127.0.0.1:9/v1", cache=path, cache_mode="replay") as llm:
        assert llm.chat(ASK) == "Concord"
        with pytest.raises(CacheMiss):
            llm.chat([{"role": "user", "content": "Where was Einstein born?"}])
        assert llm.requests_sent == 0


def test_environment_supplies_base_url_and_key(monkeypatch: pytest.MonkeyPatch) -> None:
    with LLMServer([(r".", "env")]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
        llm = make_llm("openai:env-model")
        assert isinstance(llm, OpenAIChat)
        with llm:
            assert llm.chat(ASK) == "env"
        assert server.requests[0].authorization == "Bearer sk-env"
        assert server.requests[0].model == "env-model"


def test_counting_wrapper_counts_per_wrapper() -> None:
    with LLMServer([(r".", "x")]) as server, client(server, FakeClock()) as llm:
        one, two = CountingLLM(llm), CountingLLM(llm)
        one.chat(ASK)
        one.chat(ASK)
        two.chat(ASK)
        assert (one.calls, two.calls, llm.llm_calls) == (2, 1, 3)


def test_make_llm_and_bad_input() -> None:
    assert make_llm("none") is None
    with pytest.raises(InvalidTermError, match="unknown LLM"):
        make_llm("gpt4")
    with pytest.raises(TypeError):
        make_llm("openai:m", base_url="http://127.0.0.1:9/v1", temprature=0.2)
    with pytest.raises(InvalidTermError, match="base_url"):
        OpenAIChat("m", base_url="ftp://x")
    llm = OpenAIChat("m", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(InvalidTermError, match="role"):
        llm.chat([{"role": "user"}])  # type: ignore[typeddict-item]
    with pytest.raises(InvalidTermError, match="temperature"):
        llm.chat(ASK, temperature=-1)
    assert llm.requests_sent == 0


def test_a_refused_base_url_never_shows_its_password() -> None:
    with pytest.raises(InvalidTermError, match="must be an http") as caught:
        OpenAIChat("m", base_url="ftp://alice:hunter2@example.org/v1")
    assert "hunter2" not in str(caught.value) and "alice:***@example.org" in str(caught.value)
