"""Text from the wire and from files that would explode later is a typed error where it enters: lone
surrogates (``"\\ud800"``) in SPARQL JSON, Wikidata API and LLM answers and in rdflib files; JSON nested
deeper than Python's stack; ``Retry-After: ²``, ``Content-Length: ²`` and a count of ``"²"`` (``str.isdigit``
says yes, ``int`` says no). ``kga`` never prints invalid UTF-8, under any locale."""

from __future__ import annotations

import http.server
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from support.servers import KGA
from support.wikidata_api import WikidataApiServer

from kg_adapters import connect
from kg_adapters.errors import InvalidTermError, LoadError, ResultMismatch
from kg_adapters.testing.fault_server import (
    FakeClock,
    FaultPlan,
    FaultServer,
    _Answer,
    json_rewriter,
    one_wide_node,
    superscript_counts,
    with_lone_surrogates,
)
from kg_adapters.testing.lifecycle import serving

EX = "http://example.org/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
DATA = "".join(f'<{EX}n1> <{EX}p> <{EX}m{n}> .\n<{EX}m{n}> <{LABEL}> "m {n}"@en .\n' for n in range(6))
WIDE = one_wide_node()
"""One node with more relations than Virtuoso's row cap: the client counts rows per id."""
DEEP = b"[" * 200_000 + b"]" * 200_000


def options(**more: Any) -> dict[str, Any]:
    clock = FakeClock()
    return {"retries": 2, "sleep": clock.sleep, "clock": clock, "timeout": 10, **more}


def test_lone_surrogates_from_an_endpoint_are_a_mismatch() -> None:
    with (
        FaultServer(data=DATA, rewrite=json_rewriter(with_lone_surrogates)) as server,
        connect("sparql+" + server.url, **options()) as kg,
    ):
        for call in (
            lambda: kg.neighbors(f"{EX}n1"),
            lambda: kg.labels([f"{EX}m1"]),
            lambda: kg.query("SELECT ?s WHERE { ?s ?p ?o }"),  # type: ignore[attr-defined]
        ):
            with pytest.raises(ResultMismatch, match="not valid Unicode"):
                call()


@pytest.mark.parametrize("locale", ["C", "C.UTF-8"])
@pytest.mark.parametrize(
    "command", [["labels", "--id", f"{EX}m1", "--json"], ["neighbors", "--id", f"{EX}n1", "--json"]]
)
@pytest.mark.parametrize("output", ["--json", "text"])
def test_kga_never_prints_invalid_utf8(command: list[str], locale: str, output: str) -> None:
    with FaultServer(data=DATA, rewrite=json_rewriter(with_lone_surrogates)) as server:
        arguments = command if output == "--json" else [part for part in command if part != "--json"]
        environment = {**os.environ, "LC_ALL": locale, "PYTHONIOENCODING": "", "PYTHONUTF8": "0"}
        done = subprocess.run(
            [KGA, arguments[0], "--kg", f"sparql+{server.url}?retries=0", *arguments[1:]],
            capture_output=True,
            timeout=120,
            env=environment,
        )
    assert done.returncode == 1, done
    done.stdout.decode("utf-8")  # strict: valid UTF-8 (here: nothing)
    error = done.stderr.decode("utf-8")
    assert "kga: error:" in error and "not valid Unicode" in error and "Traceback" not in error


def test_json_nested_too_deeply_is_a_mismatch() -> None:
    with FaultServer(data=DATA, rewrite=lambda query, body: DEEP) as server:
        with connect("sparql+" + server.url, **options()) as kg, pytest.raises(ResultMismatch, match="too deeply"):
            kg.neighbors(f"{EX}n1")
        assert len(server.requests) == 1  # not retried as if it were cut short


class _DeepApi(WikidataApiServer):
    def _answer(self, query: str | None, accept: str | None) -> _Answer:
        return _Answer(200, (("Content-Type", "application/json"),), DEEP)


def test_the_wikidata_api_answering_too_deep_or_invalid_text() -> None:
    clock = FakeClock()
    settings = {"user_agent": "kga-tests/1.0 (test@example.org)", "sleep": clock.sleep, "clock": clock}
    with (
        _DeepApi({}) as server,
        connect("wikidata+api:", base_url=server.url, **settings) as kg,
        pytest.raises(ResultMismatch, match="too deeply"),
    ):
        kg.labels("Q1")
    entity = {"id": "Q1", "type": "item", "labels": {"en": {"language": "en", "value": "bad \ud800"}}, "claims": {}}
    with (
        WikidataApiServer({"Q1": entity}) as recorded,
        connect("wikidata+api:", base_url=recorded.url, **settings) as kg,
        pytest.raises(ResultMismatch, match="not valid Unicode"),
    ):
        kg.labels("Q1")


def test_retry_after_in_other_scripts_digits_is_no_wait_we_can_read() -> None:
    with FaultServer(data=DATA, plan=FaultPlan(["429:²", "503:²", "ok"])) as server:
        with connect("sparql+" + server.url, **options()) as kg:
            assert len(kg.neighbors(f"{EX}n1")[f"{EX}n1"]) == 6  # retried after our own backoff
        assert server.plan.history == ["429:²", "503:²", "ok"]


@contextmanager
def content_length_server(value: str) -> Iterator[str]:
    body = b'{"head":{"vars":["s"]},"results":{"bindings":[]}}'

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "application/sparql-results+json")
            self.send_header("Content-Length", value)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST

        def log_message(self, format: str, *args: object) -> None:
            pass

    with serving(Handler) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}/sparql"


def test_a_content_length_in_other_scripts_digits_is_not_read_as_a_size() -> None:
    with content_length_server("²") as url, connect("sparql+" + url, **options(retries=0)) as kg:
        assert kg.query("SELECT ?s WHERE { ?s ?p ?o }") == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("call", ["neighbors", "relations"])  # edges grouped per relation; relation rows
def test_a_count_in_other_scripts_digits_is_a_mismatch(call: str) -> None:
    with (
        FaultServer(data=WIDE, rewrite=superscript_counts) as server,  # "²" for the count the client asks at the cap
        connect("sparql+" + server.url, **options(dialect="virtuoso")) as kg,
        pytest.raises(ResultMismatch, match="not a non-negative integer"),
    ):
        getattr(kg, call)([f"{EX}n1", f"{EX}m1"])


@pytest.mark.parametrize("value", ["²", "١٢", "+²"])
def test_url_options_take_ascii_digits_only(value: str) -> None:
    with pytest.raises(InvalidTermError, match="must be an integer"):
        connect(f"sparql+http://127.0.0.1:9/sparql?retries={value}")


def test_an_rdflib_file_with_a_lone_surrogate_is_a_load_error(tmp_path: Path) -> None:
    data = tmp_path / "bad.nt"
    data.write_text(f'<{EX}s> <{LABEL}> "bad \\uD800 text" .\n', encoding="ascii")
    with pytest.raises(LoadError, match="not valid Unicode") as raised:
        connect(f"rdflib://{data}")
    assert raised.value.file == str(data)


DEEP_TEXT = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (DEEP_TEXT, "a row must be an object"),
        ('{"id": "q", "graph": [' + DEEP_TEXT + "]}", "not three non-empty strings"),
        ('{"id": "q\\ud800", "graph": []}', "not valid Unicode"),
        ('{"id": "q", "graph": [["a", "r\\udc00", "b"]]}', "not valid Unicode"),
    ],
)
def test_a_dataset_line_too_deep_or_not_unicode_is_a_load_error(tmp_path: Path, line: str, reason: str) -> None:
    from loaders import load_files

    data = tmp_path / "questions.jsonl"
    data.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(LoadError, match=reason) as raised:
        load_files([str(data)], str(tmp_path / "store"), format="rog-dataset", progress=False)
    assert (raised.value.file, raised.value.line) == (str(data), 1)


def test_what_a_load_does_not_read_may_be_nested_deeply(tmp_path: Path) -> None:
    from loaders import load_files

    data = tmp_path / "questions.jsonl"
    data.write_text('{"id": "q", "choices": ' + DEEP_TEXT + ', "graph": [["a", "r", "b"]]}\n', encoding="utf-8")
    report = load_files([str(data)], str(tmp_path / "store"), format="rog-dataset", progress=False)
    assert report.statements_read == 1


def test_a_results_file_line_nested_too_deeply_is_a_load_error(tmp_path: Path) -> None:
    from reasoning.metrics import read_jsonl

    results = tmp_path / "results.jsonl"
    results.write_text(DEEP_TEXT + "\n", encoding="utf-8")
    with pytest.raises(LoadError, match="too deeply"):
        read_jsonl(results)


def test_an_llm_server_with_odd_retry_after_and_invalid_text() -> None:
    from support.llm_server import LLMServer

    from reasoning.errors import LLMError
    from reasoning.llm import OpenAIChat

    clock = FakeClock()
    ask = [{"role": "user", "content": "hello"}]
    with LLMServer([(r".", "bad \ud800 reply")], faults=["429:²"]) as server:
        chat = OpenAIChat("m", base_url=server.url, api_key="sk-test", sleep=clock.sleep, clock=clock)
        with chat, pytest.raises(LLMError, match="not valid Unicode"):
            chat.chat(ask)  # type: ignore[arg-type]
        assert [request.fault for request in server.requests] == ["429:²", "ok"]
