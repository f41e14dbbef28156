"""LLM clients: an OpenAI-compatible chat-completions client with retries and a persistent cache.

``make_llm("openai:gpt-4o-mini")`` talks to any server speaking ``POST {base_url}/chat/completions``
(OpenAI, vLLM, llama.cpp, Ollama, LiteLLM...). The base URL and key come from the arguments or the
environment (``OPENAI_BASE_URL``, default ``https://api.openai.com/v1``; ``OPENAI_API_KEY``, sent
as a bearer token when set). ``make_llm("none")`` is ``None``: reasoners then run offline.

Failures are typed (:mod:`kg_adapters.errors`): 429 raises ``RateLimited`` (with Retry-After),
5xx/408 and broken connections ``TransientError``, a timeout ``BackendTimeout`` -- all retried
with backoff by :class:`kg_adapters.wrappers.retry.Retrier`, then ``RetriesExhausted``; a refused
request (400/401/403/404...) or a body that is no chat completion raises ``LLMError`` at once.

``cache=PATH`` keeps every reply in a SQLite file (:class:`kg_adapters.sqlite_lru.ResultCache`)
keyed by model, messages, temperature and max_tokens -- not by base URL or key, so the same model
served elsewhere reuses the replies. ``cache_mode="replay"`` never sends a request and raises
``CacheMiss`` for anything not recorded, so an experiment can be re-run offline.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import requests

from kg_adapters import json_text
from kg_adapters.base import call_options, forwards
from kg_adapters.budgets import ascii_integer, check_count, check_seconds
from kg_adapters.errors import BackendError, CacheMiss, InvalidTermError, QueryError, RateLimited, TransientError
from kg_adapters.http_exchange import DEFAULT_MAX_RESPONSE_BYTES, HttpExchange, parse_retry_after
from kg_adapters.json_text import BadJsonText
from kg_adapters.sqlite_lru import CacheMode, ResultCache
from kg_adapters.url import redact_url
from kg_adapters.wrappers.retry import Retrier, RetryPolicy
from reasoning.base import LLM, CandidateLLM, ChatMessage
from reasoning.errors import LLMError

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from Python 3.11

__all__ = ["DEFAULT_BASE_URL", "CountingLLM", "OpenAIChat", "make_llm"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
CACHE_FORMAT = "kga-llm/1"
"""Part of every cache key: bump it when the key or value encoding changes."""
_MAX_MESSAGE = 500
SAMPLING_TEMPERATURE = 0.7
"""The temperature of the ``n`` samples asked for when a server has no beam search: greedy decoding
would give ``n`` copies of one path."""
LLM_RETRY: RetryPolicy = {"attempts": 6, "max_seconds": 300.0, "initial_wait": 1.0, "max_wait": 60.0}
"""The LLM client's retry policy where the caller gives none: longer than a SPARQL endpoint's, as a
model server under load answers slowly."""


class OpenAIChat:
    """A chat model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    ``timeout`` bounds one HTTP exchange; the other keywords are the retry policy (:class:`RetryPolicy`
    over the defaults :data:`LLM_RETRY`), whose ``sleep`` and ``clock`` tests inject. Counters:
    ``llm_calls`` (``chat`` calls answered, cache hits included), ``requests_sent`` (HTTP requests,
    retries included) and ``cache_hits``. Thread-safe.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        cache: str | os.PathLike[str] | ResultCache | None = None,
        cache_mode: CacheMode = "readwrite",
        session: requests.Session | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        **retry: Unpack[RetryPolicy],
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise InvalidTermError(f"model must be a non-empty string, got {model!r}")
        check_seconds(timeout, "timeout", positive=True, required=True)
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        if not self.base_url.startswith(("http://", "https://")):
            raise InvalidTermError(f"base_url must be an http(s) URL, got {redact_url(self.base_url)!r}")
        self.endpoint = f"{self.base_url}/chat/completions"
        self.shown_endpoint = redact_url(self.endpoint)
        """The endpoint as messages and logs show it (no credentials)."""
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.timeout = float(timeout)
        policy: RetryPolicy = {**LLM_RETRY, **retry}
        self.retrier = Retrier(**policy)
        self._owns_cache = not isinstance(cache, ResultCache)
        if isinstance(cache, ResultCache):
            self.cache: ResultCache | None = cache
        elif cache is not None:
            self.cache = ResultCache(cache, mode=cache_mode)
        elif cache_mode == "replay":
            raise InvalidTermError("cache_mode='replay' needs a cache file")
        else:
            self.cache = None
        self._http = _ChatExchange(
            self.endpoint,
            timeout=timeout,
            headers={"Authorization": f"Bearer {key}"} if key else None,
            session=session,
            max_response_bytes=max_response_bytes,
        )
        self._lock = threading.Lock()
        self.llm_calls = 0
        self.requests_sent = 0
        self.cache_hits = 0
        self.beam_search_refused = False

    def chat(self, messages: Sequence[ChatMessage], *, temperature: float = 0.0, max_tokens: int | None = None) -> str:
        """The assistant's reply to ``messages`` (from the cache when recorded)."""
        payload = self._payload(messages, temperature, max_tokens)
        key = (CACHE_FORMAT, self.model, payload["messages"], payload["temperature"], max_tokens)
        if self.cache is not None:
            found = self.cache.get(key)
            if isinstance(found, str):
                with self._lock:
                    self.cache_hits += 1
                    self.llm_calls += 1
                return found
            if self.cache.mode == "replay":
                raise CacheMiss(f"no recorded reply of {self.model} for these messages (replay mode)")
        reply = self.retrier.run(self.shown_endpoint, lambda: self._exchange(payload))
        if self.cache is not None:
            self.cache.put(key, reply)
        with self._lock:
            self.llm_calls += 1
        return reply

    @forwards(CandidateLLM.candidates)
    def candidates(self, messages: Sequence[ChatMessage], **options: Any) -> list[str]:
        """``n`` replies to one request (``n`` choices). ``beam_search``: the ``n`` best beams, asked
        with vLLM's parameters (``use_beam_search``, ``best_of=n``, temperature 0); a server that
        refuses them (HTTP 400) is asked again for ``n`` samples at ``temperature`` (at least
        :data:`SAMPLING_TEMPERATURE`), and not offered beam search again (``beam_search_refused``).
        A server that ignores ``n`` (answers fewer choices) gets the missing ones asked one sample
        per request at that temperature; more choices than asked for is an LLMError. The options are
        :class:`CandidateLLM`'s (:func:`call_options`)."""
        settings = call_options(CandidateLLM.candidates, options)
        n, beam_search = settings["n"], settings["beam_search"]
        temperature, max_tokens = settings["temperature"], settings["max_tokens"]
        check_count(n, "n", minimum=1, required=True)
        payload = self._payload(messages, temperature, max_tokens)
        payload["n"] = n
        sampling = {**payload, "temperature": max(float(temperature), SAMPLING_TEMPERATURE)} if beam_search else payload
        replies: list[str] | None = None
        if beam_search and not self.beam_search_refused:
            beams = {**payload, "temperature": 0.0, "use_beam_search": True, "best_of": n}
            try:
                replies = self._candidates(beams, n)
            except LLMError as exc:
                if "HTTP 400" not in str(exc):
                    raise
                with self._lock:
                    self.beam_search_refused = True
        if replies is None:
            replies = self._candidates(sampling, n)
        if len(replies) < n:  # the server ignored n: one sample per request for the rest
            one = {**sampling, "n": 1}
            replies = [*replies, *(self._candidates(one, 1, sample=i)[0] for i in range(len(replies), n))]
        return replies

    def _candidates(self, payload: dict[str, Any], n: int, *, sample: int | None = None) -> list[str]:
        """Up to ``n`` replies (fewer when the server ignores ``n``); ``sample`` tells apart the
        cache entries of single-sample requests that are otherwise the same."""
        extra: dict[str, Any] = {key: payload[key] for key in ("n", "use_beam_search", "best_of") if key in payload}
        if sample is not None:
            extra["sample"] = sample
        key = (CACHE_FORMAT, self.model, payload["messages"], payload["temperature"], payload.get("max_tokens"), extra)
        if self.cache is not None:
            found = self.cache.get(key)
            if isinstance(found, list) and found and all(isinstance(text, str) for text in found):
                with self._lock:
                    self.cache_hits += 1
                    self.llm_calls += 1
                return list(found)[:n]
            if self.cache.mode == "replay":
                raise CacheMiss(f"no recorded replies of {self.model} for these messages (replay mode)")
        replies = self.retrier.run(self.shown_endpoint, lambda: self._exchange_all(payload))
        if len(replies) > n:
            raise LLMError(f"{self.shown_endpoint}: asked for {n} choices, got {len(replies)}")
        if self.cache is not None:
            self.cache.put(key, replies)
        with self._lock:
            self.llm_calls += 1
        return replies

    def close(self) -> None:
        self._http.close()
        if self.cache is not None and self._owns_cache:
            self.cache.close()

    def __enter__(self) -> OpenAIChat:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"OpenAIChat({self.model!r}, base_url={redact_url(self.base_url)!r})"

    def _payload(self, messages: Sequence[ChatMessage], temperature: float, max_tokens: int | None) -> dict[str, Any]:
        checked: list[dict[str, str]] = []
        for message in messages:
            role, content = message.get("role"), message.get("content")
            if not isinstance(role, str) or not isinstance(content, str):
                raise InvalidTermError(f"a chat message needs string 'role' and 'content', got {message!r:.120}")
            checked.append({"role": role, "content": content})
        if not checked:
            raise InvalidTermError("chat needs at least one message")
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or temperature < 0:
            raise InvalidTermError(f"temperature must be a number >= 0, got {temperature!r}")
        payload: dict[str, Any] = {"model": self.model, "messages": checked, "temperature": float(temperature)}
        if max_tokens is not None:
            check_count(max_tokens, "max_tokens", minimum=1)
            payload["max_tokens"] = max_tokens
        return payload

    def _exchange(self, payload: dict[str, Any]) -> str:
        return self._exchange_all(payload)[0]

    def _exchange_all(self, payload: dict[str, Any]) -> list[str]:
        with self._lock:
            self.requests_sent += 1
        body, _headers = self._http.exchange(json_body=payload)
        return _reply_texts(self.shown_endpoint, body)


class _ChatExchange(HttpExchange):
    """The HTTP exchange of a chat completion (whole-exchange deadline, size cap, redaction), with
    the status mapping of OpenAI-compatible servers: 429 (``retry-after-ms`` or ``Retry-After``),
    5xx, 408 and 409 are worth retrying; any other refusal is an LLMError."""

    def _status_error(self, status: int, headers: Mapping[str, str], text: str) -> BackendError | QueryError:
        message = text[:_MAX_MESSAGE]
        where = f"{self.endpoint} answered HTTP {status}"
        if status == 429:
            milliseconds = ascii_integer(headers.get("retry-after-ms", "").strip())
            retry_after = (
                milliseconds / 1000.0 if milliseconds is not None else parse_retry_after(headers.get("Retry-After"))
            )
            return RateLimited(f"{where} (rate limited): {message}", retry_after=retry_after)
        if status >= 500 or status in (408, 409):
            return TransientError(f"{where}: {message}")
        return LLMError(f"{where}: {message}")


def _index_of(value: object) -> int:
    """A choice's ``index``: an integer (JSON number or ASCII digits); anything else is a ValueError."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    number = ascii_integer(value) if isinstance(value, str) else None
    if number is None:
        raise ValueError(f"not a choice index: {value!r:.40}")
    return number


def _reply_texts(endpoint: str, body: bytes) -> list[str]:
    """The text of every choice, in ``index`` order."""
    try:
        data = json_text.loads(body)
    except BadJsonText as exc:
        raise LLMError(f"{endpoint}: a reply that cannot be read: {exc}") from exc
    except ValueError as exc:
        raise TransientError(f"{endpoint}: malformed or truncated reply ({len(body)} bytes): {exc}") from exc
    try:
        choices = sorted(data["choices"], key=lambda choice: _index_of(choice.get("index", 0)))
        contents = [choice["message"]["content"] for choice in choices]
        if not contents:
            raise IndexError("no choices")
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise LLMError(f"{endpoint}: not a chat completion: {body[:_MAX_MESSAGE]!r}") from exc
    if not all(isinstance(content, str) for content in contents):
        raise LLMError(f"{endpoint}: the reply has no text content: {body[:_MAX_MESSAGE]!r}")
    return contents


class CountingLLM:
    """Delegates to ``inner`` and counts the ``chat`` calls made through this wrapper (a reasoner's
    ``llm_calls`` for one question, while several questions share one client)."""

    def __init__(self, inner: LLM) -> None:
        self.inner = inner
        self.calls = 0
        self._lock = threading.Lock()

    @forwards(LLM.chat)
    def chat(self, messages: Sequence[ChatMessage], **options: Any) -> str:
        with self._lock:
            self.calls += 1
        return self.inner.chat(messages, **options)

    @forwards(CandidateLLM.candidates)
    def candidates(self, messages: Sequence[ChatMessage], **options: Any) -> list[str]:
        """The inner model's ``candidates`` (one call); a model without them answers ``n`` chats."""
        with self._lock:
            self.calls += 1
        if isinstance(self.inner, CandidateLLM):
            return self.inner.candidates(messages, **options)
        settings = call_options(CandidateLLM.candidates, options)
        count = settings.pop("n")
        del settings["beam_search"]
        return [self.inner.chat(messages, **settings) for _ in range(count)]


def make_llm(spec: str, **options: Any) -> LLM | None:
    """``"none"`` -> None (run offline); ``"openai:MODEL"`` -> :class:`OpenAIChat` (``options`` are
    its keyword arguments; unknown ones raise TypeError)."""
    if not isinstance(spec, str):
        raise InvalidTermError(f"an LLM spec must be a string, got {type(spec).__name__}")
    if spec == "none":
        if options:
            raise TypeError(f"--llm none takes no options, got {sorted(options)}")
        return None
    kind, _, model = spec.partition(":")
    if kind == "openai" and model:
        return OpenAIChat(model, **options)
    raise InvalidTermError(f"unknown LLM {spec!r}: use none or openai:MODEL")
