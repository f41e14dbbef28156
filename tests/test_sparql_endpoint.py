"""``kga serve`` as a real process, driven by real clients: Think-on-Graph's query templates through
SPARQLWrapper (as ToG's freebase_func.py sends them), ``curl`` for the SPARQL 1.1 Protocol (GET, POST
urlencoded, POST application/sparql-query, content negotiation of JSON, XML, CSV and TSV, answered
byte for byte as Oxigraph's own serializers write them), read-only refusals, the time and size
budgets, concurrent clients, the access log, and a reader that keeps working while ``kga load``
swaps a new version of the store in."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pyoxigraph as ox
import pytest
from SPARQLWrapper import JSON, POST, POSTDIRECTLY, SPARQLWrapper
from support.servers import KGA, free_port, running

from kg_adapters.backends.oxigraph import OxigraphGraph
from kg_adapters.extras import install_command
from kg_adapters.testing.server_processes import poll_until, workers_replaced
from loaders import load_files

pytest.importorskip("starlette")

# Think-on-Graph's pre-defined queries, exactly as ToG/freebase_func.py writes them.
sparql_head_relations = (
    """\nPREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT ?relation\nWHERE {\n  ns:%s ?relation ?x .\n}"""
)
sparql_tail_relations = (
    """\nPREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT ?relation\nWHERE {\n  ?x ?relation ns:%s .\n}"""
)
sparql_tail_entities_extract = (
    """PREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT ?tailEntity\nWHERE {\nns:%s ns:%s ?tailEntity .\n}"""
)
sparql_head_entities_extract = (
    """PREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT ?tailEntity\nWHERE {\n?tailEntity ns:%s ns:%s  .\n}"""
)
sparql_id = """PREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT DISTINCT ?tailEntity\nWHERE {\n  {\n    ?entity ns:type.object.name ?tailEntity .\n    FILTER(?entity = ns:%s)\n  }\n  UNION\n  {\n    ?entity <http://www.w3.org/2002/07/owl#sameAs> ?tailEntity .\n    FILTER(?entity = ns:%s)\n  }\n}"""  # noqa: E501

FB = "http://rdf.freebase.com/ns/"
TOM = "m.0bxtg"
FORMATS = {
    "application/sparql-results+json": ox.QueryResultsFormat.JSON,
    "application/sparql-results+xml": ox.QueryResultsFormat.XML,
    "text/csv": ox.QueryResultsFormat.CSV,
    "text/tab-separated-values": ox.QueryResultsFormat.TSV,
}
PROBE = f"SELECT ?p ?o WHERE {{ <{FB}{TOM}> ?p ?o }} ORDER BY ?p ?o"


def execute_sparql(endpoint: str, sparql_txt: str, *, method: str | None = None) -> list[dict[str, dict[str, str]]]:
    """ToG's execurte_sparql: SPARQLWrapper, JSON, the bindings."""
    sparql = SPARQLWrapper(endpoint)
    sparql.setQuery(sparql_txt)
    sparql.setReturnFormat(JSON)
    if method is not None:
        sparql.setMethod(POST)
        if method == "direct":
            sparql.setRequestMethod(POSTDIRECTLY)
    results = sparql.query().convert()
    assert isinstance(results, dict)
    bindings: list[dict[str, dict[str, str]]] = results["results"]["bindings"]
    return bindings


def curl(*arguments: str) -> tuple[int, str, bytes]:
    """(status, content type, body) of ``curl ARGUMENTS``."""
    done = subprocess.run(
        ["curl", "-sS", "-o", "-", "-w", "\n%{http_code} %{content_type}", *arguments],
        capture_output=True,
        check=True,
        timeout=120,
    )
    body, _, trailer = done.stdout.rpartition(b"\n")
    status, _, content_type = trailer.decode().partition(" ")
    return int(status), content_type, body


@pytest.fixture(scope="module")
def store(sample_store: OxigraphGraph) -> OxigraphGraph:
    """The same store, opened directly: the oracle."""
    return sample_store


@pytest.fixture(scope="module")
def endpoint(sample_endpoint: str) -> str:
    return sample_endpoint


def oracle(store: OxigraphGraph, query: str, fmt: ox.QueryResultsFormat = ox.QueryResultsFormat.JSON) -> bytes:
    answer = store.store.query(query)
    assert not isinstance(answer, ox.QueryTriples)
    serialized = answer.serialize(format=fmt)
    assert serialized is not None  # no output given: the bytes are returned
    return serialized


def values(bindings: list[dict[str, dict[str, str]]], name: str) -> list[str]:
    return [row[name]["value"] for row in bindings]


def test_think_on_graph_templates_through_sparqlwrapper(endpoint: str, store: OxigraphGraph) -> None:
    # ToG's replace_relation_prefix / replace_entities_prefix
    head = [r.replace(FB, "") for r in values(execute_sparql(endpoint, sparql_head_relations % TOM), "relation")]
    direct = store.query(f"SELECT ?relation WHERE {{ <{FB}{TOM}> ?relation ?x }}")
    assert sorted(head) == sorted(str(row["relation"]).replace(FB, "") for row in direct)
    assert "type.object.name" in head and len(head) > 10
    tail = [r.replace(FB, "") for r in values(execute_sparql(endpoint, sparql_tail_relations % TOM), "relation")]
    assert sorted(tail) == sorted(
        str(row["relation"]).replace(FB, "")
        for row in store.query(f"SELECT ?relation WHERE {{ ?x ?relation <{FB}{TOM}> }}")
    )
    relation = next(r for r in head if r.startswith("film.") or r.startswith("award."))
    entities = values(execute_sparql(endpoint, sparql_tail_entities_extract % (TOM, relation)), "tailEntity")
    assert sorted(e.replace(FB, "") for e in entities) == sorted(
        str(edge.tail) for edge in store.neighbors(TOM, relations=[relation])[TOM]
    )
    target = entities[0].replace(FB, "")
    heads = values(execute_sparql(endpoint, sparql_head_entities_extract % (relation, target)), "tailEntity")
    assert f"{FB}{TOM}" in heads
    assert values(execute_sparql(endpoint, sparql_id % (TOM, TOM)), "tailEntity") == ["Tom Hanks"]
    # the same through POST (urlencoded, and the query as the body)
    for method in ("form", "direct"):
        assert values(execute_sparql(endpoint, sparql_id % (TOM, TOM), method=method), "tailEntity") == ["Tom Hanks"]


@pytest.mark.parametrize("media", sorted(FORMATS))
def test_content_negotiation_answers_with_oxigraphs_serializers(
    endpoint: str, store: OxigraphGraph, media: str
) -> None:
    expected = oracle(store, PROBE, FORMATS[media])
    status, content_type, body = curl("-G", endpoint, "--data-urlencode", f"query={PROBE}", "-H", f"Accept: {media}")
    assert (status, content_type.split(";")[0], body) == (200, media, expected)
    # POST urlencoded and POST application/sparql-query give the same bytes
    status, _, posted = curl(endpoint, "--data-urlencode", f"query={PROBE}", "-H", f"Accept: {media}")
    assert (status, posted) == (200, expected)
    status, _, direct = curl(
        endpoint, "--data-binary", PROBE, "-H", "Content-Type: application/sparql-query", "-H", f"Accept: {media}"
    )
    assert (status, direct) == (200, expected)


def test_negotiation_defaults_preferences_and_refusals(endpoint: str, store: OxigraphGraph) -> None:
    json_answer = oracle(store, PROBE)
    assert curl("-G", endpoint, "--data-urlencode", f"query={PROBE}")[2] == json_answer  # no Accept: JSON
    assert curl("-G", endpoint, "--data-urlencode", f"query={PROBE}", "-H", "Accept: */*")[2] == json_answer
    weighted = "text/csv;q=0.5, text/tab-separated-values;q=0.9, application/sparql-results+xml;q=0.1"
    tsv = curl("-G", endpoint, "--data-urlencode", f"query={PROBE}", "-H", f"Accept: {weighted}")[2]
    assert tsv == oracle(store, PROBE, ox.QueryResultsFormat.TSV)
    as_xml = curl("-G", endpoint, "--data-urlencode", f"query={PROBE}", "--data-urlencode", "format=xml")[2]
    assert as_xml == oracle(store, PROBE, ox.QueryResultsFormat.XML)
    refused_json = "application/sparql-results+json;q=0, application/json;q=0, */*;q=0.5"
    status, content_type, _ = curl(
        "-G", endpoint, "--data-urlencode", f"query={PROBE}", "-H", f"Accept: {refused_json}"
    )
    assert status == 200 and "json" not in content_type  # q=0 refuses a type even when */* would pick it
    status, _, message = curl("-G", endpoint, "--data-urlencode", f"query={PROBE}", "-H", "Accept: image/png")
    assert status == 406 and b"available" in message
    ask = curl("-G", endpoint, "--data-urlencode", f"query=ASK {{ <{FB}{TOM}> ?p ?o }}")[2]
    assert ask == b'{"head":{},"boolean":true}'
    status, content_type, triples = curl(
        "-G", endpoint, "--data-urlencode", f"query=CONSTRUCT WHERE {{ <{FB}{TOM}> <{FB}type.object.name> ?n }}"
    )
    assert (status, content_type, triples) == (
        200,
        "application/n-triples",
        f'<{FB}{TOM}> <{FB}type.object.name> "Tom Hanks"@en .\n'.encode(),
    )


@pytest.mark.parametrize(
    ("arguments", "status", "mentioned"),
    [
        (["--data-urlencode", "update=INSERT DATA { <http://a/b> <http://a/b> <http://a/c> }"], 403, b"read-only"),
        (["--data-urlencode", "query=INSERT DATA { <http://a/b> <http://a/b> <http://a/c> }"], 403, b"INSERT"),
        (["--data-urlencode", "query=DELETE WHERE { ?s ?p ?o }"], 403, b"DELETE"),
        (["--data-urlencode", "query=LOAD <http://example.org/x.nt>"], 403, b"LOAD"),
        (["--data-urlencode", "query=DROP ALL"], 403, b"DROP"),
        (
            ["--data-urlencode", "query=SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }"],
            403,
            b"SERVICE",
        ),
        (["--data-binary", "CLEAR ALL", "-H", "Content-Type: application/sparql-update"], 403, b"read-only"),
        (["--data-urlencode", "query=SELECT nonsense {"], 400, b"rejected"),
        (["--data-urlencode", "nothing=here"], 400, b"no query"),
        (["--data-binary", "x", "-H", "Content-Type: text/plain"], 415, b"sparql-query"),
        (["--data-urlencode", f"query={PROBE}", "--data-urlencode", "default-graph-uri=not an iri"], 400, b"IRI"),
        (["--data-urlencode", f"query={PROBE}", "--data-urlencode", "named-graph-uri=<x>"], 400, b"IRI"),
    ],
)
def test_refusals_say_why(
    endpoint: str, store: OxigraphGraph, arguments: list[str], status: int, mentioned: bytes
) -> None:
    got, content_type, body = curl(endpoint, *arguments)
    assert got == status and content_type.startswith("text/plain") and mentioned in body
    assert store.query("ASK { <http://a/b> ?p ?o }") == [{"boolean": False}]  # nothing was written


def test_no_file_or_directory_is_served(endpoint: str, sample_store_url: str) -> None:
    base = endpoint.removesuffix("/sparql")
    for path in [
        "/kga-store.json",
        "/etc/passwd",
        "/sparql/../kga-store.json",
        "/%2e%2e/kga-store.json",
        "/static/",
        "/static/../kga-store.json",
    ]:
        status, _, body = curl("--path-as-is", base + path)
        assert status == 404 and b"kga-store" not in body and b"root:" not in body, path
    assert curl(base + "/health")[:1] == (200,)


def test_concurrent_clients(endpoint: str) -> None:
    failures: list[BaseException] = []

    def client() -> None:
        try:
            for _ in range(10):
                assert values(execute_sparql(endpoint, sparql_id % (TOM, TOM)), "tailEntity") == ["Tom Hanks"]
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=client) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_time_and_size_budgets_and_the_access_log(sample_store_url: str) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/sparql"
    arguments = ["serve", "--kg", sample_store_url, "--port", str(port), "--timeout", "2", "--max-result-bytes", "5000"]
    with running([*arguments, "--workers", "2"], port) as process:
        assert process.stderr is not None
        server_log = process.stderr
        status, _, body = curl(url, "--data-urlencode", "query=SELECT * WHERE { ?s ?p ?o }")
        assert status == 500 and b"--max-result-bytes" in body
        endless = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
        status, _, body = curl(url, "--data-urlencode", f"query={endless}")
        assert status == 503 and b"--timeout" in body
        # both workers were stopped (one mid-answer at the cap, one at the deadline): the next query
        # waits for a fresh one, which only takes calls once ready; wait for both, not on the clock
        assert poll_until(lambda: workers_replaced(server_log) == 2), "the stopped workers were not replaced"
        assert values(execute_sparql(url, sparql_id % (TOM, TOM)), "tailEntity") == ["Tom Hanks"]  # still serving
        process.terminate()
        process.wait(timeout=30)
        server_log.seek(0)
        log = server_log.read().decode()
    lines = [line for line in log.splitlines() if '"POST /sparql"' in line or '"GET /sparql"' in line]
    assert [line.split('"')[2].split()[:2] for line in lines] == [
        ["SELECT", "500"],
        ["SELECT", "503"],
        ["SELECT", "200"],
    ]


def test_a_failing_remote_graph_never_shows_its_credentials_to_clients() -> None:
    port, dead = free_port(), free_port()  # nothing listens on ``dead``
    remote = f"sparql+http://alice:hunter2@127.0.0.1:{dead}/sparql?profile=generic&retries=1"
    with running(["serve", "--kg", remote, "--port", str(port)], port) as process:
        status, _, body = curl(f"http://127.0.0.1:{port}/sparql", "--data-urlencode", "query=ASK { ?s ?p ?o }")
        assert status == 500 and f"127.0.0.1:{dead}".encode() in body and b"hunter2" not in body, body
        process.terminate()
        process.wait(timeout=30)
        assert process.stderr is not None
        assert "hunter2" not in process.stderr.read().decode()


def test_a_reader_keeps_working_while_kga_load_swaps_a_version_in(tmp_path: Path) -> None:
    from reasoning.demo import sample_path

    store = tmp_path / "store"
    load_files([str(sample_path())], str(store), profile="freebase", progress=False)
    extra = tmp_path / "extra.nt"
    extra.write_text(f'<{FB}m.new> <{FB}type.object.name> "Newly Loaded"@en .\n', encoding="utf-8")
    port = free_port()
    url = f"http://127.0.0.1:{port}/sparql"
    ask_new = f"ASK {{ <{FB}m.new> ?p ?o }}"
    with running(["serve", "--kg", f"oxigraph://{store.resolve()}", "--port", str(port)], port):
        assert curl("-G", url, "--data-urlencode", f"query={ask_new}")[2] == b'{"head":{},"boolean":false}'
        stop, failures, answered = threading.Event(), [], [0]

        def reader() -> None:
            while not stop.is_set():
                try:
                    assert values(execute_sparql(url, sparql_id % (TOM, TOM)), "tailEntity") == ["Tom Hanks"]
                    answered[0] += 1
                except BaseException as exc:
                    failures.append(exc)
                    return

        thread = threading.Thread(target=reader)
        thread.start()
        try:
            loaded = subprocess.run(
                [KGA, "load", str(extra), "--store", str(store), "--profile", "freebase"],
                capture_output=True,
                timeout=300,
            )
        finally:
            stop.set()
            thread.join()
        assert loaded.returncode == 0, loaded.stderr
        assert failures == [] and answered[0] > 0
        assert curl("-G", url, "--data-urlencode", f"query={ask_new}")[2] == b'{"head":{},"boolean":true}'
        count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
        assert b'"2086"' in curl("-G", url, "--data-urlencode", f"query={count}")[2]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["serve", "--kg", "oxigraph:///no/such/store"], "no store at /no/such/store"),
        (["serve", "--kg", "oxigraph://", "--workers", "0"], "workers must be an integer >= 1"),
        (["serve", "--kg", "oxigraph://", "--timeout", "-1"], "timeout must be a finite number of seconds > 0"),
        (["serve", "--kg", "oxigraph://", "--timeout", "nan"], "timeout must be a finite number of seconds > 0"),
        (["mcp", "--kg", "oxigraph://", "--timeout", "inf"], "timeout must be a finite number of seconds > 0"),
        (["mcp", "--kg", "oxigraph://", "--max-rows", "0"], "max_rows must be an integer >= 1"),
        (["serve", "--kg", "oxigraph://?nonsense=1"], "unknown option"),
        (["serve", "--kg", "oxigraph://", "--port", "99999"], "expected a TCP port, 1-65535"),
        (["mcp", "--kg", "oxigraph://", "--transport", "http", "--port", "-1"], "expected a TCP port, 1-65535"),
    ],
)
def test_bad_command_lines_fail_with_a_message(arguments: list[str], message: str) -> None:
    done = subprocess.run([KGA, *arguments], capture_output=True, timeout=120)
    assert done.returncode != 0 and message in done.stderr.decode() and "Traceback" not in done.stderr.decode()


@pytest.mark.parametrize(
    ("command", "missing", "install"),
    [("mcp", "mcp", install_command("mcp")), ("serve", "uvicorn", install_command("serve"))],
)
def test_without_the_extra_the_command_says_how_to_install_it(
    tmp_path: Path, command: str, missing: str, install: str
) -> None:
    """A package directory that fails to import shadows the installed one, as if it were not installed."""
    shadow = tmp_path / missing
    shadow.mkdir()
    (shadow / "__init__.py").write_text(f'raise ImportError("No module named {missing}")\n', encoding="utf-8")
    environment = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([KGA, command, "--kg", "oxigraph://"], capture_output=True, timeout=120, env=environment)
    assert done.returncode == 1 and install in done.stderr.decode() and "Traceback" not in done.stderr.decode()
