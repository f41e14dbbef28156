"""``kga serve --cors ORIGIN``: off by default, then exactly the origins given, preflight included --
real requests with ``Origin`` headers (curl) to real server processes. A real browser's cross-origin
fetch is in ``tests/test_query_page.py``."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
from support.curl import Exchange, curl
from support.servers import KGA, free_port, running

pytest.importorskip("starlette")

ASK = "query=ASK { ?s ?p ?o }"


def serve(sample_store_url: str, *cors: str) -> Iterator[str]:
    port = free_port()
    with running(["serve", "--kg", sample_store_url, "--port", str(port), *cors], port):
        yield f"http://127.0.0.1:{port}/sparql"


@pytest.fixture(scope="module")
def closed(sample_store_url: str) -> Iterator[str]:
    yield from serve(sample_store_url)


@pytest.fixture(scope="module")
def opened(sample_store_url: str) -> Iterator[str]:
    yield from serve(
        sample_store_url, "--cors", "http://localhost:3000", "--cors", "https://a.example, https://B.example/"
    )


def preflight(endpoint: str, origin: str, method: str = "POST", headers: str = "content-type") -> Exchange:
    return curl(
        "-X", "OPTIONS", endpoint, "-H", f"Origin: {origin}", "-H", f"Access-Control-Request-Method: {method}",
        "-H", f"Access-Control-Request-Headers: {headers}",
    )  # fmt: skip


def test_without_cors_no_page_of_another_origin_may_read_answers(closed: str) -> None:
    got = curl("-G", closed, "--data-urlencode", ASK, "-H", "Origin: http://localhost:3000")
    assert got.status == 200 and "access-control-allow-origin" not in got.headers
    answer = preflight(closed, "http://localhost:3000")
    assert answer.status == 405 and "access-control-allow-origin" not in answer.headers


@pytest.mark.parametrize("origin", ["http://localhost:3000", "https://a.example", "https://b.example"])
def test_allowed_origins_pass_preflight_and_read_answers(opened: str, origin: str) -> None:
    answer = preflight(opened, origin)
    assert answer.status == 200 and answer.headers["access-control-allow-origin"] == origin
    assert {m.strip() for m in answer.headers["access-control-allow-methods"].split(",")} >= {"GET", "POST"}
    assert "content-type" in answer.headers["access-control-allow-headers"].lower()
    assert "origin" in answer.headers.get("vary", "").lower()
    posted = curl(
        opened, "--data-binary", "ASK { ?s ?p ?o }", "-H", "Content-Type: application/sparql-query",
        "-H", f"Origin: {origin}",
    )  # fmt: skip
    assert (posted.status, posted.headers["access-control-allow-origin"]) == (200, origin)
    assert posted.body == b'{"head":{},"boolean":true}'
    described = curl(opened, "-G", "-H", f"Origin: {origin}")  # the service description too
    assert described.status == 200 and described.headers["access-control-allow-origin"] == origin


@pytest.mark.parametrize("origin", ["http://localhost:3001", "http://evil.example", "null", "https://a.example.evil"])
def test_other_origins_are_refused(opened: str, origin: str) -> None:
    answer = preflight(opened, origin)
    assert answer.status == 400 and "access-control-allow-origin" not in answer.headers
    got = curl("-G", opened, "--data-urlencode", ASK, "-H", f"Origin: {origin}")
    assert got.status == 200 and "access-control-allow-origin" not in got.headers  # the browser withholds it


def test_a_public_page_of_an_allowed_origin_may_reach_the_local_endpoint(opened: str) -> None:
    """Chromium's Private Network Access asks a local server whether a public page may reach it
    (``Access-Control-Request-Private-Network``); ``--cors`` names exactly the pages that may."""
    for method in ("GET", "POST"):
        answer = curl(
            "-X", "OPTIONS", opened, "-H", "Origin: https://a.example",
            "-H", f"Access-Control-Request-Method: {method}", "-H", "Access-Control-Request-Private-Network: true",
        )  # fmt: skip
        assert answer.status == 200 and answer.headers["access-control-allow-origin"] == "https://a.example"
        assert answer.headers["access-control-allow-private-network"] == "true"
    refused = curl(
        "-X", "OPTIONS", opened, "-H", "Origin: https://evil.example", "-H", "Access-Control-Request-Method: GET",
        "-H", "Access-Control-Request-Private-Network: true",
    )  # fmt: skip
    assert refused.status == 400 and "access-control-allow-origin" not in refused.headers  # the preflight fails


def test_an_international_origin_is_matched_as_browsers_send_it(sample_store_url: str) -> None:
    """Browsers send a host name in its ASCII (punycode) form; ``--cors`` may name it either way."""
    for endpoint in serve(sample_store_url, "--cors", "https://Bücher.example:8443/"):
        answer = preflight(endpoint, "https://xn--bcher-kva.example:8443")
        assert answer.status == 200
        assert answer.headers["access-control-allow-origin"] == "https://xn--bcher-kva.example:8443"


def test_preflight_refuses_methods_and_headers_not_allowed(opened: str) -> None:
    assert preflight(opened, "http://localhost:3000", method="DELETE").status == 400
    assert preflight(opened, "http://localhost:3000", headers="x-secret-token").status == 400


def test_any_origin_with_a_star(sample_store_url: str) -> None:
    for endpoint in serve(sample_store_url, "--cors", "*"):
        assert preflight(endpoint, "http://anything.example").status == 200
        got = curl("-G", endpoint, "--data-urlencode", ASK, "-H", "Origin: http://anything.example")
        assert got.headers["access-control-allow-origin"] == "*"


@pytest.mark.parametrize(
    "value",
    [
        "localhost:3000",
        "ftp://x.example",
        "http://x.example/path",
        "http://x:99999",
        "",
        "https://*.example.org",
        "http://exa mple.example",
        "http://x.example:0",
        "http://[::1",
        "http://%41.example",
    ],
)
def test_a_bad_origin_is_a_usage_error(value: str) -> None:
    """Refused when given, never accepted to match no page at all (a browser never sends ``*.`` or a space)."""
    done = subprocess.run([KGA, "serve", "--kg", "oxigraph://", "--cors", value], capture_output=True, timeout=120)
    stderr = done.stderr.decode()
    assert done.returncode == 2 and "--cors" in stderr and "Traceback" not in stderr, stderr
    assert "invalid origin_list value" not in stderr, stderr  # says what is wrong
