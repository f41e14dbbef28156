"""A real OpenAI-compatible chat-completions server on loopback with scripted replies, for tests.

``LLMServer(rules=[(r"relation paths", "people.person.place_of_birth")])`` answers
``POST /v1/chat/completions`` (``url`` is the base URL, ``http://127.0.0.1:PORT/v1``): the first rule
whose regex matches (``re.search``, DOTALL) the last user message gives the reply -- a string, or a
callable of the request's messages. A request no rule matches gets ``default`` or, without one,
HTTP 400 naming the message, so a test never passes on an unplanned prompt.

Faults come from :class:`kg_adapters.testing.fault_server.FaultPlan` (``faults=["429:2", "500", "reset"]``
are taken by the first requests in order): ``"<status>"`` answers that status (429 with
``Retry-After``), ``"reset"`` closes the socket with a TCP reset. Every request is recorded
(messages, model, temperature, max_tokens, Authorization header, fault).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any

from kg_adapters.testing.fault_server import FaultPlan, _Answer, _Handler, _text
from kg_adapters.testing.lifecycle import ServerLifecycle
from reasoning.llm import OpenAIChat

Reply = str | list[str] | Callable[[list[dict[str, str]]], str | list[str]]
"""One reply text, or one per choice (a request's ``n``), or a function of the messages giving either."""


@dataclass(frozen=True)
class ChatRequest:
    """One chat-completions request as the server saw it."""

    messages: list[dict[str, str]]
    model: str | None
    temperature: float | None
    max_tokens: int | None
    authorization: str | None
    fault: str
    body: dict[str, Any] = field(default_factory=dict)
    """The whole request body (``n``, ``use_beam_search``, ``best_of``...)."""

    @property
    def prompt(self) -> str:
        """The last user message."""
        return next((m["content"] for m in reversed(self.messages) if m.get("role") == "user"), "")


class LLMServer(ServerLifecycle):
    """Scripted chat-completions server; use as a context manager (binds a free loopback port)."""

    def __init__(
        self,
        rules: Sequence[tuple[str, Reply]] = (),
        *,
        default: str | None = None,
        faults: Sequence[str] = (),
        retry_after: int = 1,
        reject_params: Sequence[str] = (),
        choices: int | None = None,
    ) -> None:
        self.choices = choices
        """Choices in every answer whatever the request's ``n`` (a server that ignores ``n``); None: ``n``."""
        self.reject_params = tuple(reject_params)
        """Request parameters answered with HTTP 400, as a server without them answers."""
        self.rules: list[tuple[re.Pattern[str], Reply]] = [(re.compile(p, re.DOTALL), r) for p, r in rules]
        self.default = default
        self.plan = FaultPlan(faults, retry_after=retry_after)
        self._lock = threading.Lock()
        self._requests: list[ChatRequest] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def add_rule(self, pattern: str, reply: Reply) -> None:
        """Adds a rule after the existing ones."""
        with self._lock:
            self.rules.append((re.compile(pattern, re.DOTALL), reply))

    def start(self) -> LLMServer:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _ChatHandler)
        server.daemon_threads = True
        server.owner = self  # type: ignore[attr-defined]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="llm-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    @property
    def url(self) -> str:
        assert self._server is not None, "start the server first"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def requests(self) -> list[ChatRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def prompts(self) -> list[str]:
        """The last user message of every request answered with a reply (faults excluded)."""
        return [request.prompt for request in self.requests if request.fault == "ok"]

    def _record(self, request: ChatRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _reply(self, messages: list[dict[str, str]]) -> str | list[str] | None:
        prompt = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
        with self._lock:
            rules = list(self.rules)
        for pattern, reply in rules:
            if pattern.search(prompt):
                return reply if isinstance(reply, (str, list)) else reply(messages)
        return self.default


def completion(model: str | None, text: str | list[str], n: int = 1) -> bytes:
    """A chat.completion body with ``n`` choices (a list of texts gives one per choice, repeated
    from the start when shorter)."""
    texts = [text] if isinstance(text, str) else text
    choices = [
        {"index": i, "message": {"role": "assistant", "content": texts[i % len(texts)]}, "finish_reason": "stop"}
        for i in range(n)
    ]
    return json.dumps(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": model or "scripted",
            "choices": choices,
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }
    ).encode("utf-8")


class _ChatHandler(_Handler):
    def do_GET(self) -> None:
        self._simple(404, "only POST /v1/chat/completions is served")

    def do_POST(self) -> None:
        owner: LLMServer = self.server.owner  # type: ignore[assignment]  # _ChatHandler serves an LLMServer
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._simple(404, f"no such path {self.path}")
            return
        try:
            body: dict[str, Any] = json.loads(raw)
            messages = [{"role": str(m["role"]), "content": str(m["content"])} for m in body["messages"]]
        except (ValueError, KeyError, TypeError) as exc:
            self._simple(400, f"not a chat-completions request: {exc}")
            return
        fault = owner.plan.next_fault()
        owner._record(
            ChatRequest(
                messages=messages,
                model=body.get("model"),
                temperature=body.get("temperature"),
                max_tokens=body.get("max_tokens"),
                authorization=self.headers.get("Authorization"),
                fault=fault,
                body=body,
            )
        )
        rejected = [param for param in owner.reject_params if param in body]
        if rejected:
            self._simple(400, f"unsupported parameter(s): {', '.join(rejected)}")
            return
        if fault == "reset":
            self._reset()
            return
        status, _, after = fault.partition(":")
        if status.isdigit():
            headers = [("Retry-After", after or str(owner.plan.retry_after))] if status == "429" or after else []
            self._send(_text(int(status), f"injected fault: HTTP {status}", tuple(headers)))
            return
        reply = owner._reply(messages)
        if reply is None:
            self._simple(400, f"no scripted reply for: {messages[-1]['content'][:300]}")
            return
        n = body.get("n", 1)
        count = owner.choices or (n if isinstance(n, int) and n >= 1 else 1)
        self._send(_Answer(200, (("Content-Type", "application/json"),), completion(body.get("model"), reply, count)))


def scripted_client(server: LLMServer) -> OpenAIChat:
    """A client of ``server`` that sends one request per call (no retries: a fault or an unplanned
    prompt fails the test at once)."""
    return OpenAIChat("scripted", base_url=server.url, api_key="sk-test", attempts=1)
