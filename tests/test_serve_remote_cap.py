"""``kga serve`` over a remote SPARQL backend holds its ``--max-result-bytes`` cap while it reads the
backend's answer, not only when it writes its own: a real ``kga serve`` process in front of a fault
server whose answer never ends, and in front of a real Virtuoso that caps rows (so the answer comes
in pages), behind a recording proxy that counts the pages read. The same byte budget holds for a raw
``query()`` on ``sparql+http://`` (``max_response_bytes``, all pages together). A remote term that
SPARQL results cannot carry is a one-line error, not a traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.servers import free_port, running

from kg_adapters import connect
from kg_adapters.backends.sparql_http import RemoteSparqlGraph
from kg_adapters.errors import ResponseTooLarge
from kg_adapters.http_exchange import DEFAULT_MAX_RESPONSE_BYTES
from kg_adapters.testing.fault_server import FaultPlan, FaultServer, json_rewriter
from kg_adapters.testing.virtuoso import VirtuosoServer, virtuoso_fixture

pytest.importorskip("starlette")

ROWS = 2000
ROW_CAP = 100
CAP = 50_000
"""The serve cap: above one page of ROW_CAP rows (~35 KB), far below the whole answer (~700 KB)."""
EX = "http://example.org/"
EVERYTHING = f"SELECT ?s ?o WHERE {{ ?s <{EX}says> ?o }}"


def curl_query(url: str, query: str) -> tuple[int, bytes]:
    done = subprocess.run(
        ["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", url, "--data-urlencode", f"query={query}"],
        capture_output=True,
        check=True,
        timeout=120,
    )
    body, _, status = done.stdout.rpartition(b"\n")
    return int(status), body


@pytest.fixture(scope="module")
def virtuoso(tmp_path_factory: pytest.TempPathFactory, request: Any) -> VirtuosoServer:
    data = tmp_path_factory.mktemp("many") / "many.nt"
    with data.open("w", encoding="utf-8") as out:
        for n in range(ROWS):
            out.write(f'<{EX}s{n}> <{EX}says> "{n:05d} {"x" * 200}" .\n')
    return virtuoso_fixture(tmp_path_factory, [Path(data)], request=request, result_set_max_rows=ROW_CAP)


def test_an_endless_remote_answer_stops_at_the_serve_cap() -> None:
    with FaultServer(plan=FaultPlan.constant("endless")) as upstream:
        port = free_port()
        kg = f"sparql+{upstream.url}?retries=0"
        with running(["serve", "--kg", kg, "--port", str(port), "--max-result-bytes", str(CAP)], port):
            status, body = curl_query(f"http://127.0.0.1:{port}/sparql", "SELECT ?x WHERE { ?x ?p ?o }")
        assert status == 500 and b"--max-result-bytes" in body and str(CAP).encode() in body, body
        # kga serve hung up near its own cap, long before the backend's default one
        assert upstream.endless_bytes_sent < DEFAULT_MAX_RESPONSE_BYTES // 4


def test_a_paged_remote_answer_stops_at_the_serve_cap(virtuoso: VirtuosoServer) -> None:
    with FaultServer(upstream=virtuoso.sparql_url) as proxy:
        port = free_port()
        kg = f"sparql+{proxy.url}?dialect=virtuoso&retries=0"
        with running(["serve", "--kg", kg, "--port", str(port), "--max-result-bytes", str(CAP)], port):
            url = f"http://127.0.0.1:{port}/sparql"
            status, body = curl_query(url, EVERYTHING)
            assert status == 500 and b"--max-result-bytes" in body, body
            pages_read = proxy.request_count
            assert pages_read <= 3  # the first capped answer and a page or two, of ROWS / ROW_CAP + 1
            status, body = curl_query(url, f"{EVERYTHING} LIMIT 20")
            assert status == 200 and body.count(b'"o":') == 20  # still serving answers under the cap


def test_a_raw_query_holds_max_response_bytes_over_all_its_pages(virtuoso: VirtuosoServer) -> None:
    url = f"sparql+{virtuoso.sparql_url}"
    with connect(url, dialect="virtuoso", max_response_bytes=CAP) as kg:
        assert isinstance(kg, RemoteSparqlGraph)
        with pytest.raises(ResponseTooLarge, match="max_response_bytes=50000"):
            kg.query(EVERYTHING)
    with connect(url, dialect="virtuoso") as kg:  # the default budget: every page, every row
        assert isinstance(kg, RemoteSparqlGraph)
        rows = kg.query(EVERYTHING)
    assert len(rows) == ROWS and len({str(row["s"]) for row in rows}) == ROWS


def test_a_remote_term_sparql_results_cannot_carry_is_a_one_line_error() -> None:
    """Endpoints hold IRIs with spaces (Freebase dumps in Virtuoso do); Oxigraph's serializers refuse them."""

    def spaced(document: dict[str, Any]) -> None:
        for binding in document.get("results", {}).get("bindings", []):
            binding["s"] = {"type": "uri", "value": f"{EX}a b"}

    data = f'<{EX}s> <{EX}says> "o" .\n'
    with FaultServer(data=data, rewrite=json_rewriter(spaced)) as upstream:
        port = free_port()
        with running(["serve", "--kg", f"sparql+{upstream.url}?retries=0", "--port", str(port)], port) as process:
            url = f"http://127.0.0.1:{port}/sparql"
            status, body = curl_query(url, EVERYTHING)
            assert status == 500 and body.startswith(b"the graph answered a term SPARQL results cannot carry"), body
            assert curl_query(url, "ASK { ?s ?p ?o }") == (200, b'{"head":{},"boolean":true}')  # still serving
            process.terminate()
            process.wait(timeout=30)
            assert process.stderr is not None
            assert "Traceback" not in process.stderr.read().decode()


def test_a_stalled_remote_query_gives_its_worker_back_at_the_serve_deadline() -> None:
    """The serve's --timeout bounds the remote request too: a stalled upstream holds the only worker until
    the deadline, not for the backend's own 60 s (plus retries), so the next query gets the worker."""
    data = f'<{EX}s> <{EX}says> "o" .\n'
    with FaultServer(data=data, plan=FaultPlan(["stall"]), max_stall_seconds=120) as upstream:
        port = free_port()
        arguments = ["serve", "--kg", f"sparql+{upstream.url}", "--port", str(port), "--timeout", "3", "--workers", "1"]
        with running(arguments, port):
            url = f"http://127.0.0.1:{port}/sparql"
            status, body = curl_query(url, "ASK { ?s ?p ?o }")
            # the serve's deadline, or the backend's (the same length) if that one is noticed first
            assert status == 503 and (b"--timeout" in body or b"took longer than 3 s" in body), body
            # waits for the worker (inside its own deadline), which the stalled query has given back
            assert curl_query(url, "ASK { ?s ?p ?o }") == (200, b'{"head":{},"boolean":true}')
        assert upstream.plan.history == ["stall", "ok"]  # abandoned, not retried


@pytest.mark.parametrize("options", ["timeout=1&retries=0", "timeout=1&retry_seconds=1"])
def test_a_remote_timeout_is_a_503_as_the_serve_deadline_is(options: str) -> None:
    """The backend's own deadline noticed first (here shorter than --timeout), retried or not: 503, not 500."""
    with FaultServer(data=f'<{EX}s> <{EX}says> "o" .\n', plan=FaultPlan.constant("stall")) as upstream:
        port = free_port()
        kg = f"sparql+{upstream.url}?{options}"
        with running(["serve", "--kg", kg, "--port", str(port), "--timeout", "60"], port):
            status, body = curl_query(f"http://127.0.0.1:{port}/sparql", "ASK { ?s ?p ?o }")
    assert status == 503 and b"took longer than 1 s" in body, body
