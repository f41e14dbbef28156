"""The query page of ``kga serve`` in a real headless browser: Debian's Chromium (scripts/ensure-chromium.sh),
driven by Playwright for Python pointed at it (Playwright never downloads a browser here). The page
loads ``/?query=...``, YASGUI runs the query against the server's ``/sparql`` and the results table
shows the store's answer; every request the page makes stays on the server (no CDN, nothing fetched
elsewhere). A page of another origin reads the endpoint only when ``--cors`` lets it. The vendored
YASGUI files are the ones recorded in VENDORED.json."""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from support.curl import curl
from support.servers import free_port, running

from kg_adapters.serve.page import STATIC
from kg_adapters.testing.lifecycle import serving
from kg_adapters.testing.virtuoso import in_ci

pytest.importorskip("starlette")

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
NS = "PREFIX ns: <http://rdf.freebase.com/ns/>\n"
ROWS = "table.dataTable tbody tr"
"""YASR's results table (its DataTables rows)."""


def require(what: str, present: bool) -> None:
    """Skips without ``what`` on a developer's machine; under CI (``make test`` installs both) fails."""
    if not present:
        message = f"{what} is not installed (make test installs it: scripts/ensure-chromium.sh, the dev extra)"
        if in_ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    """A Chromium with a fresh profile (--user-data-dir), so no earlier page state (YASGUI keeps tabs in
    localStorage) carries over."""
    require("Debian's chromium", Path(CHROMIUM).is_file() or shutil.which("chromium") is not None)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require("playwright (Python)", False)
    executable = CHROMIUM if Path(CHROMIUM).is_file() else str(shutil.which("chromium"))
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=executable, headless=True, args=FLAGS
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture(scope="module")
def server(sample_endpoint: str) -> str:
    return sample_endpoint.removesuffix("/sparql")


class Visit:
    """A page opened in ``browser`` with every request and console message it causes recorded."""

    def __init__(self, browser: Any, url: str) -> None:
        self.page = browser.new_page()
        self.requests: list[str] = []
        self.console: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("console", lambda message: self.console.append(f"{message.type}: {message.text}"))
        self.page.on("pageerror", lambda error: self.console.append(f"pageerror: {error}"))
        self.page.goto(url)

    def table(self) -> list[list[str]]:
        """The cells of YASR's results table once it shows rows (the row-number column left out)."""
        self.page.wait_for_selector(ROWS, timeout=60_000)
        cells: list[list[str]] = self.page.eval_on_selector_all(
            ROWS, "rows => rows.map(row => Array.from(row.querySelectorAll('td')).map(td => td.innerText.trim()))"
        )
        return [row[1:] for row in cells]


def test_the_page_runs_the_query_in_its_url_and_shows_the_rows(browser: Any, server: str) -> None:
    query = (
        NS + "SELECT ?id ?name WHERE { VALUES ?id { ns:m.0bxtg ns:m.02mjmr ns:m.06pj8 } "
        "?id ns:type.object.name ?name } ORDER BY ?name"
    )
    visit = Visit(browser, f"{server}/?query={quote(query)}")
    assert visit.table() == [
        ["ns:m.02mjmr", '"Barack Obama"@en'],
        ["ns:m.06pj8", '"Steven Spielberg"@en'],
        ["ns:m.0bxtg", '"Tom Hanks"@en'],
    ]
    assert visit.page.title().startswith("kga serve")
    assert f"{server}/sparql" in visit.requests  # YASGUI asked this server's endpoint
    assert all(urlsplit(url).netloc == urlsplit(server).netloc for url in visit.requests), visit.requests
    assert not [line for line in visit.console if line.startswith(("error", "pageerror"))], visit.console


def test_the_page_shows_a_construct(browser: Any, server: str) -> None:
    query = NS + "CONSTRUCT WHERE { ns:m.0bxtg ns:people.person.place_of_birth ?place }"
    visit = Visit(browser, f"{server}/?query={quote(query)}")
    assert visit.table() == [["ns:m.0bxtg", "ns:people.person.place_of_birth", "ns:m.0qymv"]]


def test_a_page_of_another_origin_reads_the_endpoint_only_with_cors(
    browser: Any, sample_store_url: str, tmp_path: Path
) -> None:
    """The browser enforces CORS: a page at http://localhost:A posts a query (application/sparql-query,
    so a preflight goes first) to the endpoint at http://127.0.0.1:B."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<!doctype html><title>another site</title>\n", encoding="utf-8")
    fetch = """async (endpoint) => {
        try {
            const answer = await fetch(endpoint, {method: "POST", body: "ASK { ?s ?p ?o }",
                headers: {"Content-Type": "application/sparql-query", "Accept": "application/sparql-results+json"}});
            return [answer.status, await answer.text()];
        } catch (error) { return ["refused", String(error)]; }
    }"""
    with static_site(tmp_path / "site") as site:
        origin = f"http://localhost:{site}"
        for cors, expected in (([], "refused"), (["--cors", origin], 200)):
            port = free_port()
            with running(["serve", "--kg", sample_store_url, "--port", str(port), *cors], port):
                visit = Visit(browser, f"{origin}/index.html")
                status, body = visit.page.evaluate(fetch, f"http://127.0.0.1:{port}/sparql")
                visit.page.close()
            assert status == expected, body
            if status == 200:
                assert json.loads(body) == {"head": {}, "boolean": True}


@contextlib.contextmanager
def static_site(directory: Path) -> Iterator[int]:
    """A plain local HTTP server for ``directory`` (the "other origin"); yields its port."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(directory), **kwargs)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with serving(Quiet) as site:
        yield int(site.server_address[1])


def test_the_page_and_its_files_and_nothing_else(server: str) -> None:
    page = curl(f"{server}/?query=ASK%20%7B%7D")
    assert page.status == 200 and page.media == "text/html" and b"yasgui.min.js" in page.body
    assert "script-src 'self'" in page.headers["content-security-policy"]
    for path, media in (("/static/yasgui/yasgui.min.js", "text/javascript"), ("/static/page.js", "text/javascript")):
        got = curl(server + path)
        assert got.status == 200 and got.media in (media, "application/javascript"), path
    for path in ("/static/", "/static/yasgui/", "/static/../kga-store.json", "/static/%2e%2e/page.py", "/static/x"):
        got = curl("--path-as-is", server + path)
        assert got.status == 404 and b"import" not in got.body, path


def test_the_vendored_yasgui_is_the_recorded_npm_build() -> None:
    record = json.loads((STATIC / "yasgui" / "VENDORED.json").read_text("utf-8"))
    assert record["package"] == "@zazuko/yasgui" and record["license"] == "MIT"
    assert record["integrity"].startswith("sha512-")
    for name, digest in record["files"].items():
        assert hashlib.sha256((STATIC / "yasgui" / name).read_bytes()).hexdigest() == digest, name
    assert set(record["files"]) == {"yasgui.min.js", "yasgui.min.css"}
