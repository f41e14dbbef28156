"""``GET /sparql`` without a query answers a SPARQL 1.1 Service Description with VoID statistics, from a
real ``kga serve`` process: the endpoint, the query language only (no update: read-only), every format
it writes, and the default graph's triples and per-relation counts -- equal to a ``GROUP BY`` over the
store, whether they come from the traversal index or (small store without one) from that query; in
Turtle or JSON-LD by ``Accept``; following ``kga load``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import rdflib
from rdflib.compare import isomorphic
from rdflib.namespace import RDF, RDFS
from support.curl import curl
from support.servers import KGA, free_port, running

from kg_adapters import connect
from kg_adapters.backends.oxigraph import OxigraphGraph
from kg_adapters.base import CountsRelations
from kg_adapters.serve import service_description
from kg_adapters.serve.formats import ALL_FORMATS
from loaders import load_files

pytest.importorskip("starlette")
pytestmark = pytest.mark.filterwarnings("ignore:ConjunctiveGraph is deprecated:DeprecationWarning")  # rdflib's own

SD = rdflib.Namespace("http://www.w3.org/ns/sparql-service-description#")
VOID = rdflib.Namespace("http://rdfs.org/ns/void#")
GROUP_BY = "SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p"


@pytest.fixture(scope="module")
def endpoint(sample_endpoint: str) -> str:
    return sample_endpoint


def relation_counts(store_url: str) -> dict[str, int]:
    """The oracle: triples per relation of the default graph, by a GROUP BY over the store itself."""
    with connect(store_url) as kg:
        assert isinstance(kg, OxigraphGraph)
        return {str(row["p"].value): int(row["n"].value) for row in kg.store.query(GROUP_BY)}  # type: ignore[union-attr]


def description(endpoint: str, *arguments: str) -> tuple[rdflib.Graph, str]:
    got = curl("-G", endpoint, *arguments)
    assert got.status == 200, got
    graph = rdflib.Graph()
    graph.parse(data=got.body, format={"text/turtle": "turtle", "application/ld+json": "json-ld"}[got.media])
    return graph, got.media


def statistics(graph: rdflib.Graph) -> tuple[int | None, int | None, dict[str, int | None]]:
    """(void:triples, void:properties, {relation: void:triples}) of the described default graph."""
    (default_graph,) = graph.objects(None, SD.defaultGraph)
    triples = graph.value(default_graph, VOID.triples)
    properties = graph.value(default_graph, VOID.properties)
    partitions = {}
    for partition in graph.objects(default_graph, VOID.propertyPartition):
        size = graph.value(partition, VOID.triples)
        partitions[str(graph.value(partition, VOID.property))] = None if size is None else int(str(size))
    return (
        None if triples is None else int(str(triples)),
        None if properties is None else int(str(properties)),
        partitions,
    )


def test_the_description_names_the_endpoint_its_language_and_formats(endpoint: str, sample_store_url: str) -> None:
    graph, media = description(endpoint)
    assert media == "text/turtle"  # the default
    service = rdflib.URIRef(endpoint)
    assert (service, RDF.type, SD.Service) in graph
    assert graph.value(service, SD.endpoint) == service
    assert set(graph.objects(service, SD.supportedLanguage)) == {SD.SPARQL11Query}  # no SPARQL11Update
    assert {str(f) for f in graph.objects(service, SD.resultFormat)} == {f.iri for f in ALL_FORMATS}
    assert "read-only" in str(graph.value(service, RDFS.comment)).lower()
    counts = relation_counts(sample_store_url)
    triples, properties, partitions = statistics(graph)
    assert partitions == counts and properties == len(counts) == 81
    assert triples == sum(counts.values()) == 2085


@pytest.mark.parametrize(
    "arguments",
    [
        ["-H", "Accept: application/ld+json"],
        ["-H", "Accept: application/json"],
        ["-H", "Accept: text/turtle;q=0.2, application/ld+json;q=0.8"],
        ["--data-urlencode", "format=json-ld"],
    ],
)
def test_json_ld_by_accept_says_the_same(endpoint: str, arguments: list[str]) -> None:
    turtle, _ = description(endpoint, "-H", "Accept: text/turtle")
    json_ld, media = description(endpoint, *arguments)
    assert media == "application/ld+json"
    assert isomorphic(turtle, json_ld)


def test_a_format_typed_into_a_url_keeps_its_plus(endpoint: str) -> None:
    """``/sparql?format=application/ld+json`` typed by hand: form decoding reads its ``+`` as a space."""
    turtle, _ = description(endpoint, "-H", "Accept: text/turtle")
    json_ld, media = description(f"{endpoint}?format=application/ld+json")
    assert media == "application/ld+json" and isomorphic(turtle, json_ld)


def test_the_description_refuses_what_it_cannot_write_and_the_rest_stays(endpoint: str) -> None:
    head = curl("-I", endpoint)  # HEAD: the description's headers
    assert (head.status, head.media) == (200, "text/turtle") and int(head.headers["content-length"]) > 1000
    refused = curl("-G", endpoint, "-H", "Accept: text/csv")
    assert refused.status == 406 and b"available:" in refused.body
    assert curl("-G", endpoint, "--data-urlencode", "update=CLEAR ALL").status == 403
    assert curl(endpoint, "--data-urlencode", "nothing=here").status == 400  # a POST without a query is no GET
    assert curl("-G", endpoint, "--data-urlencode", "query=ASK { ?s ?p ?o }").body == b'{"head":{},"boolean":true}'


def test_a_store_without_an_index_is_counted_by_a_query(endpoint: str, sample_store_url: str) -> None:
    port = free_port()
    with running(["serve", "--kg", sample_store_url + "&index=false", "--port", str(port)], port):
        graph, _ = description(f"http://127.0.0.1:{port}/sparql")
    reference, _ = description(endpoint)
    assert statistics(graph) == statistics(reference)


def test_a_remote_graph_is_described_without_statistics(endpoint: str) -> None:
    """Counting a remote endpoint's relations could cost it minutes: the description says what it serves."""
    port = free_port()
    with running(["serve", "--kg", f"sparql+{endpoint}", "--port", str(port)], port):
        url = f"http://127.0.0.1:{port}/sparql"
        graph, _ = description(url)
    assert (rdflib.URIRef(url), SD.supportedLanguage, SD.SPARQL11Query) in graph
    assert statistics(graph) == (None, None, {})


def test_the_list_of_relations_is_capped(sample_store_url: str) -> None:
    counts = relation_counts(sample_store_url)
    with connect(sample_store_url) as kg:
        assert isinstance(kg, CountsRelations)
        stats = kg.relation_counts(max_relations=5)
    largest = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:5]
    assert list(stats.per_relation) == largest and stats.relations == len(counts)
    graph = rdflib.Graph()
    for triple in service_description.describe("http://127.0.0.1:1/sparql", stats):
        graph.parse(data=str(triple) + " .", format="nt")
    assert "5 relations with the most triples" in " ".join(str(o) for o in graph.objects(None, RDFS.comment))


def test_wrappers_pass_the_counts_on(sample_store_url: str) -> None:
    """A cached graph (a wrapper) has the store's ability to count, and counts the same."""
    with connect(sample_store_url) as plain, connect(sample_store_url, cache="memory") as cached:
        assert isinstance(plain, CountsRelations) and isinstance(cached, CountsRelations)
        assert cached.relation_counts() == plain.relation_counts()


def test_blank_node_edges_leave_their_relations_uncounted_not_miscounted(tmp_path: Path) -> None:
    data = tmp_path / "blank.ttl"
    data.write_text(
        "@prefix ex: <http://example.org/> .\n"
        'ex:a ex:knows ex:b , ex:c ; ex:name "A" ; ex:address [ ex:city ex:paris ] .\n'
        'ex:b ex:knows ex:c ; ex:name "B" .\n',
        encoding="utf-8",
    )
    load_files([str(data)], str(tmp_path / "store"), progress=False)
    url = f"oxigraph://{tmp_path / 'store'}"
    counts = relation_counts(url)
    with connect(url) as kg:
        stats = service_description.statistics(kg)
    stated = dict(stats.per_relation)
    assert set(stated) == set(counts) and stats.triples == sum(counts.values()) == 7
    assert all(size == counts[relation] for relation, size in stated.items() if size is not None)
    assert stated["http://example.org/knows"] == 3 and stated["http://example.org/city"] is None


def test_the_statistics_follow_kga_load(tmp_path: Path) -> None:
    from reasoning.demo import sample_path

    store = tmp_path / "store"
    load_files([str(sample_path())], str(store), profile="freebase", progress=False)
    port = free_port()
    url = f"http://127.0.0.1:{port}/sparql"
    with running(["serve", "--kg", f"oxigraph://{store}", "--port", str(port)], port):
        before = statistics(description(url)[0])
        extra = tmp_path / "extra.nt"
        extra.write_text('<http://example.org/x> <http://example.org/new> "y" .\n', encoding="utf-8")
        loaded = subprocess.run(
            [KGA, "load", str(extra), "--store", str(store), "--profile", "freebase"], capture_output=True, timeout=300
        )
        assert loaded.returncode == 0, loaded.stderr
        after = statistics(description(url)[0])
    assert before[0] == 2085 and after[0] == 2086
    assert after[2] == {**before[2], "http://example.org/new": 1}
