"""The Virtuoso test harness against a real ``virtuoso-t`` -- and what Virtuoso 7.2 really does at its limits.

Two module-scoped servers (conftest's fixtures) hold the same generated N-Triples file: ``virtuoso`` with
the defaults and ``capped_virtuoso`` with ``result_set_max_rows=50`` and ``max_sorted_top_rows=100``.
Queries go over plain ``requests`` to ``sparql_url`` so the tests see exactly what a client sees (status,
headers, body).
Skipped when Virtuoso is not installed, failed instead under ``CI``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from kg_adapters.testing.virtuoso import (
    DEFAULT_GRAPH,
    VirtuosoError,
    VirtuosoServer,
    require_virtuoso,
)

EX = "http://kg-adapters.test/e/"
P_LINK = "http://kg-adapters.test/p/link"
P_NUM = "http://kg-adapters.test/p/num"
P_NOTE = "http://kg-adapters.test/p/note"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
XSD_INT = "http://www.w3.org/2001/XMLSchema#integer"
ENTITIES = 80
JSON_FORMAT = "application/sparql-results+json"

# (value, language) of the labels of entity i; unicode from several planes and scripts.
LANGUAGES = {"en": "Entity {i}", "fr": "Entité n°{i} — été", "ja": "実体{i}番", "de": "Straße {i} 😀"}
NOTES = ['quote " inside', "back\\slash", "tab\there", "new\nline", "çà et là", "ünïcödé ✓", "Ω≈ç√∫"]


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")


def _triples() -> list[tuple[str, str, Any]]:
    """(s, p, o) where o is an IRI string, (text, lang) or int; all distinct."""
    triples: list[tuple[str, str, Any]] = []
    for i in range(ENTITIES):
        s = f"{EX}{i}"
        triples.append((s, P_LINK, f"{EX}{(i + 1) % ENTITIES}"))
        triples.append((s, P_NUM, i))
        for lang, label in LANGUAGES.items():
            triples.append((s, LABEL, (label.format(i=i), lang)))
    for j, note in enumerate(NOTES):
        triples.append((f"{EX}{j}", P_NOTE, (note, None)))
    triples.append((f"{EX}café", P_LINK, f"{EX}0"))  # a non-ASCII IRI
    return triples


def _ntriples(triples: list[tuple[str, str, Any]]) -> str:
    lines = []
    for s, p, o in triples:
        if isinstance(o, int):
            obj = f'"{o}"^^<{XSD_INT}>'
        elif isinstance(o, tuple):
            text, lang = o
            obj = f'"{_escape(text)}"' + (f"@{lang}" if lang else "")
        else:
            obj = f"<{o}>"
        lines.append(f"<{s}> <{p}> {obj} .")
    return "\n".join(lines) + "\n"


TRIPLES = _triples()


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("virtuoso-data") / "small.nt"
    path.write_text(_ntriples(TRIPLES), encoding="utf-8")
    return path


VIRTUOSO_CAPS = {"result_set_max_rows": 50, "max_sorted_top_rows": 100}
"""``capped_virtuoso``'s caps."""


def post(server: VirtuosoServer, query: str, **params: str) -> requests.Response:
    return requests.post(server.sparql_url, data={"query": query, "format": JSON_FORMAT, **params}, timeout=60)


def get(server: VirtuosoServer, query: str, **params: str) -> requests.Response:
    return requests.get(server.sparql_url, params={"query": query, "format": JSON_FORMAT, **params}, timeout=60)


def bindings(response: requests.Response) -> list[dict[str, dict[str, str]]]:
    assert response.status_code == 200, response.text[:500]
    assert response.headers["Content-Type"].startswith(JSON_FORMAT)
    rows: list[dict[str, dict[str, str]]] = response.json()["results"]["bindings"]
    return rows


def count(response: requests.Response) -> int:
    (row,) = bindings(response)
    return int(row["n"]["value"])


# ---------------------------------------------------------------------------------------------- loading, graphs


def test_count_of_loaded_triples_over_get_and_post(virtuoso: VirtuosoServer) -> None:
    assert virtuoso.sparql_url == f"http://127.0.0.1:{virtuoso.http_port}/sparql"
    query = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    assert count(get(virtuoso, query)) == len(TRIPLES)
    response = post(virtuoso, query)
    assert count(response) == len(TRIPLES)
    # No FROM: the endpoint's default graph (SYS_SPARQL_HOST) is the load graph, and Virtuoso says so.
    assert response.headers["X-SPARQL-default-graph"] == DEFAULT_GRAPH
    assert count(post(virtuoso, f"SELECT (COUNT(*) AS ?n) FROM <{DEFAULT_GRAPH}> WHERE {{ ?s ?p ?o }}")) == len(TRIPLES)
    assert virtuoso.triple_count() == len(TRIPLES)


def test_literals_round_trip_with_language_tags_and_unicode(virtuoso: VirtuosoServer) -> None:
    rows = bindings(post(virtuoso, f"SELECT ?s ?o WHERE {{ ?s <{LABEL}>|<{P_NOTE}> ?o }}"))
    got = {(r["s"]["value"], r["o"]["value"], r["o"].get("xml:lang")) for r in rows}
    want = {(s, o[0], o[1]) for s, p, o in TRIPLES if p in (LABEL, P_NOTE)}
    assert got == want
    assert all(r["o"]["type"] == "literal" for r in rows)
    (row,) = bindings(post(virtuoso, f'SELECT ?s WHERE {{ ?s <{LABEL}> "Straße 7 😀"@de }}'))
    assert row["s"] == {"type": "uri", "value": f"{EX}7"}
    (row,) = bindings(post(virtuoso, f"SELECT ?o WHERE {{ <{EX}café> <{P_LINK}> ?o }}"))
    assert row["o"]["value"] == f"{EX}0"
    (row,) = bindings(post(virtuoso, f"SELECT ?o WHERE {{ <{EX}3> <{P_NUM}> ?o }}"))
    assert row["o"] == {"type": "typed-literal", "datatype": XSD_INT, "value": "3"}


def test_queries_the_library_sends(virtuoso: VirtuosoServer) -> None:
    rows = bindings(post(virtuoso, f"SELECT ?s WHERE {{ ?s <{P_LINK}> ?o }} ORDER BY ?s LIMIT 5 OFFSET 10"))
    everything = sorted(s for s, p, _ in TRIPLES if p == P_LINK)
    assert [r["s"]["value"] for r in rows] == everything[10:15]
    rows = bindings(post(virtuoso, "SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p ORDER BY DESC(?n)"))
    assert {r["p"]["value"]: int(r["n"]["value"]) for r in rows} == {
        LABEL: ENTITIES * len(LANGUAGES),
        P_LINK: ENTITIES + 1,
        P_NUM: ENTITIES,
        P_NOTE: len(NOTES),
    }


def test_sparql_user_is_read_only(virtuoso: VirtuosoServer) -> None:
    update = f"INSERT DATA {{ GRAPH <{DEFAULT_GRAPH}> {{ <{EX}x> <{P_LINK}> <{EX}y> }} }}"
    for response in (post(virtuoso, update), requests.post(virtuoso.sparql_url, data={"update": update}, timeout=60)):
        assert response.status_code == 500  # Virtuoso answers a permission error with 500, not 403
        assert "SR186" in response.text and "No permission" in response.text
    assert virtuoso.triple_count() == len(TRIPLES)


# ---------------------------------------------------------------------------------------------- limits


def test_result_set_max_rows_truncates_with_header(capped_virtuoso: VirtuosoServer) -> None:
    response = post(capped_virtuoso, "SELECT * WHERE { ?s ?p ?o }")
    assert len(bindings(response)) == 50
    assert response.status_code == 200  # truncation is silent apart from the header
    assert response.headers["X-SPARQL-MaxRows"] == "50"
    small = post(capped_virtuoso, "SELECT * WHERE { ?s ?p ?o } LIMIT 10")
    assert len(bindings(small)) == 10 and "X-SPARQL-MaxRows" not in small.headers
    # The header means "hit the cap", not "rows were dropped": exactly 50 rows carry it too.
    exact = post(capped_virtuoso, "SELECT * WHERE { ?s ?p ?o } LIMIT 50")
    assert len(bindings(exact)) == 50 and exact.headers["X-SPARQL-MaxRows"] == "50"


def test_sorted_offset_beyond_max_sorted_top_rows_fails(capped_virtuoso: VirtuosoServer) -> None:
    ok = post(capped_virtuoso, "SELECT ?s ?o WHERE { ?s ?p ?o } ORDER BY ?s ?o LIMIT 10 OFFSET 90")  # 90 + 10 <= 100
    assert len(bindings(ok)) == 10
    response = post(capped_virtuoso, "SELECT ?s ?o WHERE { ?s ?p ?o } ORDER BY ?s ?o LIMIT 10 OFFSET 91")
    assert response.status_code == 500
    assert response.reason == "SPARQL Request Failed"
    assert response.headers["Content-Type"].startswith("text/plain")
    assert response.text.startswith(
        "Virtuoso 22023 Error SR353: Sorted TOP clause specifies more then 101 rows to sort. Only 100 are allowed."
    )


def test_sorted_offset_without_limit_truncates_silently(capped_virtuoso: VirtuosoServer) -> None:
    """A Virtuoso 7.2 trap: ORDER BY + OFFSET *without* LIMIT returns max_sorted_top_rows - OFFSET rows, HTTP 200
    and no X-SPARQL-MaxRows header, however many rows there are. Always send LIMIT with OFFSET."""
    response = post(capped_virtuoso, "SELECT ?s ?o WHERE { ?s ?p ?o } ORDER BY ?s ?o OFFSET 95")
    assert len(bindings(response)) == 5  # len(TRIPLES) - 95 == 312 rows exist
    assert "X-SPARQL-MaxRows" not in response.headers


def test_values_block_with_3000_iris(virtuoso: VirtuosoServer) -> None:
    iris = [f"{EX}{i}" for i in range(3000)]  # the first ENTITIES exist
    values = " ".join(f"<{iri}>" for iri in iris)
    rows = bindings(post(virtuoso, f"SELECT ?s ?o WHERE {{ VALUES ?s {{ {values} }} ?s <{P_NUM}> ?o }}"))
    assert sorted(int(r["o"]["value"]) for r in rows) == list(range(ENTITIES))


def test_values_block_limit_is_4094_terms(virtuoso: VirtuosoServer) -> None:
    """A one-variable VALUES block (and FILTER IN) compiles to an IN() call of at most 4094 terms."""

    def values_query(n: int) -> str:
        return "SELECT ?s WHERE { VALUES ?s { " + " ".join(f"<{EX}{i}>" for i in range(n)) + " } ?s ?p ?o }"

    assert post(virtuoso, values_query(4094)).status_code == 200
    response = post(virtuoso, values_query(4095))
    assert response.status_code == 400
    assert "SP030" in response.text and "Too many arguments" in response.text


def test_long_get_request_line_is_truncated(virtuoso: VirtuosoServer) -> None:
    """Virtuoso cuts GET request lines at ~10,000 bytes and then reports a syntax error; POST has no such limit."""
    values = " ".join(f"<{EX}{i}>" for i in range(400))  # ~14 KB once URL-encoded
    query = f"SELECT ?s WHERE {{ VALUES ?s {{ {values} }} ?s <{P_NUM}> ?o }}"
    assert get(virtuoso, query).status_code == 400
    assert len(bindings(post(virtuoso, query))) == ENTITIES


# ---------------------------------------------------------------------------------------------- formats


def test_result_formats(virtuoso: VirtuosoServer) -> None:
    query = f'SELECT ?s ?o WHERE {{ ?s ?p ?o FILTER (?s = <{EX}1> && (?o = <{EX}2> || ?o = "Entité n°1 — été"@fr)) }}'
    for accept, content_type, separator in (
        ("text/tab-separated-values", "text/tab-separated-values", "\t"),
        ("text/csv", "text/csv", ","),
    ):
        response = requests.post(virtuoso.sparql_url, data={"query": query}, headers={"Accept": accept}, timeout=60)
        assert response.status_code == 200
        assert response.headers["Content-Type"] == f"{content_type}; charset=UTF-8"
        lines = response.content.decode("utf-8").splitlines()
        # Not the W3C TSV: variables and IRIs are quoted like strings, and language tags are dropped.
        assert lines[0] == separator.join(['"s"', '"o"'])
        assert sorted(lines[1:]) == sorted(
            [separator.join([f'"{EX}1"', f'"{EX}2"']), separator.join([f'"{EX}1"', '"Entité n°1 — été"'])]
        )
    # format= short names: json and csv work, tsv is not recognised (falls back to SPARQL XML).
    assert post(virtuoso, query, format="json").headers["Content-Type"] == JSON_FORMAT
    assert post(virtuoso, query, format="csv").headers["Content-Type"].startswith("text/csv")
    assert post(virtuoso, query, format="tsv").headers["Content-Type"].startswith("application/sparql-results+xml")


# ---------------------------------------------------------------------------------------------- lifecycle


@pytest.fixture
def lone_server(tmp_path: Path) -> Iterator[VirtuosoServer]:
    require_virtuoso()
    server = VirtuosoServer(tmp_path / "vt", default_graph=None, max_query_execution_time=30)
    try:
        yield server
    finally:
        server.stop()


def test_lifecycle_union_default_graph_and_staging(lone_server: VirtuosoServer, graph_file: Path) -> None:
    with lone_server as server:
        assert server.running and server.isql_port != server.http_port
        ini = server.ini_path.read_text(encoding="utf-8")
        assert f"ServerPort = 127.0.0.1:{server.isql_port}" in ini
        assert f"ServerPort = 127.0.0.1:{server.http_port}" in ini
        assert "MaxQueryExecutionTime = 30" in ini
        # graph_file is outside DirsAllowed here, so load() links it into the staging directory first.
        assert server.load([graph_file], graph="http://kg-adapters.test/other") == len(TRIPLES)
        assert any(server.staging_dir.iterdir())
        # No default graph configured: a query without FROM sees every graph, Virtuoso's own ones included.
        union = count(post(server, "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"))
        assert union > len(TRIPLES)
        with pytest.raises(VirtuosoError, match="SR185"):
            server.isql("select no_such_procedure();")
        pid, port = server.pid, server.http_port
    assert not server.running and server.pid is None
    assert pid is not None and not os.path.exists(f"/proc/{pid}")
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://127.0.0.1:{port}/sparql", timeout=5)
    server.stop()  # idempotent


def test_load_reports_syntax_errors(virtuoso: VirtuosoServer, tmp_path: Path) -> None:
    bad = tmp_path / "bad.nt"
    bad.write_text("<http://a> <http://b> this is not n-triples .\n", encoding="utf-8")
    with pytest.raises(VirtuosoError, match="bulk load failed"):
        virtuoso.load([bad], graph="http://kg-adapters.test/bad")
    assert virtuoso.triple_count() == len(TRIPLES)
