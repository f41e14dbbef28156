"""``kga serve`` answers the SPARQL clients people already run, as a real process: SPARQLWrapper with
its defaults and with every return format it knows, rdflib's SPARQLStore (GET, POST, form POST),
YASGUI's requests, and curl users' ``Accept`` headers (q-values, wildcards) and ``format=`` spellings;
graphs in N-Triples, Turtle, N3, RDF/XML and JSON-LD, byte for byte as Oxigraph's own serializers
write them; 406 only where no format can answer."""

from __future__ import annotations

import warnings
from urllib.parse import quote
from xml.dom.minidom import Document, Element, Text

import pyoxigraph as ox
import pytest
import rdflib
import requests
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from SPARQLWrapper import SPARQLWrapper
from support.curl import curl

from kg_adapters.backends.oxigraph import OxigraphGraph
from kg_adapters.sparql_terms import expand_dotted_prefixed_names

pytest.importorskip("starlette")
pytestmark = pytest.mark.filterwarnings("ignore:ConjunctiveGraph is deprecated:DeprecationWarning")  # rdflib's own

NS = "PREFIX ns: <http://rdf.freebase.com/ns/>\n"
SELECT = (
    NS + "SELECT ?id ?name WHERE { VALUES ?id { ns:m.0bxtg ns:m.02mjmr } ?id ns:type.object.name ?name } ORDER BY ?name"
)
ASK = NS + 'ASK { ns:m.0bxtg ns:type.object.name "Tom Hanks"@en }'
CONSTRUCT = NS + "CONSTRUCT WHERE { ns:m.0bxtg ?p ?o }"
DESCRIBE = NS + "DESCRIBE ns:m.02mjmr"
GRAPH_MEDIA = {
    "application/n-triples": ox.RdfFormat.N_TRIPLES,
    "text/turtle": ox.RdfFormat.TURTLE,
    "text/n3": ox.RdfFormat.N3,
    "application/rdf+xml": ox.RdfFormat.RDF_XML,
    "application/ld+json": ox.RdfFormat.JSON_LD,
}
RESULT_MEDIA = {
    "application/sparql-results+json": ox.QueryResultsFormat.JSON,
    "application/sparql-results+xml": ox.QueryResultsFormat.XML,
    "text/csv": ox.QueryResultsFormat.CSV,
    "text/tab-separated-values": ox.QueryResultsFormat.TSV,
}


def text_of(element: Element) -> str:
    """The text of an XML element of a SPARQL XML answer."""
    child = element.firstChild
    assert isinstance(child, Text)
    return child.data


def oracle_bytes(store: OxigraphGraph, query: str, media: str) -> bytes:
    """What Oxigraph's own serializer writes for ``query`` in ``media``."""
    answer = store.store.query(expand_dotted_prefixed_names(query))  # as kga serve writes ns:a.b.c for Oxigraph
    if isinstance(answer, ox.QueryTriples):
        written = answer.serialize(format=GRAPH_MEDIA[media])
    else:
        written = answer.serialize(format=RESULT_MEDIA[media])
    assert written is not None  # no output given: the bytes are returned
    return written


def triples(body: bytes, media: str) -> set[tuple[str, str, str]]:
    """The triples of a graph answer, read by pyoxigraph's parser for ``media``, as N-Triples terms."""
    return {(str(t.subject), str(t.predicate), str(t.object)) for t in ox.parse(body, format=GRAPH_MEDIA[media])}


def oracle_triples(store: OxigraphGraph, query: str) -> set[tuple[str, str, str]]:
    return triples(oracle_bytes(store, query, "application/n-triples"), "application/n-triples")


def rows(body: bytes, media: str) -> list[tuple[str, ...]] | bool:
    """The solutions (or the boolean) of a results answer, read by pyoxigraph's parser for ``media``."""
    answer = ox.parse_query_results(body, format=RESULT_MEDIA[media])
    if isinstance(answer, ox.QueryBoolean):
        return bool(answer)
    return [tuple(str(solution[v]) for v in answer.variables) for solution in answer]


def oracle_rows(store: OxigraphGraph, query: str) -> list[tuple[str, ...]] | bool:
    return rows(oracle_bytes(store, query, "application/sparql-results+json"), "application/sparql-results+json")


def test_sparqlwrapper_with_its_defaults_runs_every_query_form(
    sample_endpoint: str, sample_store: OxigraphGraph
) -> None:
    """SPARQLWrapper's default return format is XML: it sends ``format=xml`` (also as ``output`` and
    ``results``) and asks for SPARQL XML or RDF/XML by the query's form; convert() parses what it gets."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # SPARQLWrapper warns when an answer is not what it asked
        warnings.simplefilter("ignore", DeprecationWarning)  # rdflib's ConjunctiveGraph inside SPARQLWrapper
        select = SPARQLWrapper(sample_endpoint)
        select.setQuery(SELECT)
        answer = select.query()
        assert answer.info()["content-type"].startswith("application/sparql-results+xml")
        document = answer.convert()
        assert isinstance(document, Document)
        names = [text_of(node) for node in document.getElementsByTagName("literal")]
        assert names == ["Barack Obama", "Tom Hanks"]
        ask = SPARQLWrapper(sample_endpoint)
        ask.setQuery(ASK)
        asked = ask.query().convert()
        assert isinstance(asked, Document)
        assert text_of(asked.getElementsByTagName("boolean")[0]) == "true"
        for query in (CONSTRUCT, DESCRIBE):
            graph = SPARQLWrapper(sample_endpoint)
            graph.setQuery(query)
            answer = graph.query()
            assert answer.info()["content-type"] == "application/rdf+xml"
            converted = answer.convert()
            assert isinstance(converted, rdflib.Graph)
            got = {(t[0].n3(), t[1].n3(), t[2].n3()) for t in converted.triples((None, None, None))}
            assert got == oracle_triples(sample_store, query) and len(got) > 10


SPARQLWRAPPER_ANSWERS = {
    # return format: (media for SELECT/ASK, media for CONSTRUCT/DESCRIBE)
    "xml": ("application/sparql-results+xml", "application/rdf+xml"),
    "json": ("application/sparql-results+json", "application/ld+json"),
    "csv": ("text/csv", "application/n-triples"),  # no CSV of a graph: SPARQLWrapper accepts */*
    "tsv": ("text/tab-separated-values", "application/n-triples"),
    "turtle": ("application/sparql-results+json", "text/turtle"),  # no Turtle of a SELECT: its */* decides
    "n3": ("application/sparql-results+json", "text/n3"),
    "rdf+xml": ("application/sparql-results+json", "application/rdf+xml"),
    "rdf": ("application/sparql-results+json", "application/rdf+xml"),
    "json-ld": ("application/sparql-results+json", "application/ld+json"),
}


@pytest.mark.parametrize("return_format", sorted(SPARQLWRAPPER_ANSWERS))
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_sparqlwrapper_every_return_format(
    sample_endpoint: str, sample_store: OxigraphGraph, return_format: str, method: str
) -> None:
    for query in (SELECT, ASK, CONSTRUCT, DESCRIBE):
        graph_form = query in (CONSTRUCT, DESCRIBE)
        client = SPARQLWrapper(sample_endpoint, returnFormat=return_format)
        client.setMethod(method)
        client.setQuery(query)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # it warns of the */* it sends for a mismatched format
            answer = client.query()
        media = answer.info()["content-type"].split(";")[0]
        assert media == SPARQLWRAPPER_ANSWERS[return_format][graph_form], (query, return_format)
        assert answer.response.read() == oracle_bytes(sample_store, query, media)


@pytest.mark.parametrize("method", ["GET", "POST", "POST_FORM"])
def test_rdflib_sparqlstore(sample_endpoint: str, sample_store: OxigraphGraph, method: str) -> None:
    """rdflib's SPARQLStore asks with its default ``xml`` Accept list (RDF/XML and SPARQL XML together)."""
    graph = rdflib.Graph(store=SPARQLStore(sample_endpoint, method=method))
    rows = graph.query(SELECT)
    assert [(str(row[0]), str(row[1])) for row in rows] == [  # type: ignore[index]  # rdflib types every result's rows alike
        (r[0].strip("<>"), r[1].split('"')[1])
        for r in oracle_rows(sample_store, SELECT)  # type: ignore[union-attr]
    ]
    assert graph.query(ASK).askAnswer is True
    for query in (CONSTRUCT, DESCRIBE):
        answer = graph.query(query).graph
        assert answer is not None
        got = {(t[0].n3(), t[1].n3(), t[2].n3()) for t in answer.triples((None, None, None))}
        assert got == oracle_triples(sample_store, query)


def test_rdflib_sparqlstore_set_to_json_gets_graphs_as_json_ld(
    sample_endpoint: str, sample_store: OxigraphGraph
) -> None:
    graph = rdflib.Graph(store=SPARQLStore(sample_endpoint, returnFormat="json"))
    assert len(list(graph.query(SELECT))) == 2 and graph.query(ASK).askAnswer is True
    answer = graph.query(CONSTRUCT).graph
    assert answer is not None
    assert {(t[0].n3(), t[1].n3(), t[2].n3()) for t in answer.triples((None, None, None))} == oracle_triples(
        sample_store, CONSTRUCT
    )


@pytest.mark.parametrize("media", sorted(GRAPH_MEDIA))
def test_graphs_in_every_rdf_format_as_oxigraph_writes_them(
    sample_endpoint: str, sample_store: OxigraphGraph, media: str
) -> None:
    for query in (CONSTRUCT, DESCRIBE):
        expected = oracle_bytes(sample_store, query, media)
        got = curl("-G", sample_endpoint, "--data-urlencode", f"query={query}", "-H", f"Accept: {media}")
        assert (got.status, got.media, got.body) == (200, media, expected)
        assert triples(got.body, media) == oracle_triples(sample_store, query)
        posted = curl(
            sample_endpoint,
            "--data-binary",
            query,
            "-H",
            "Content-Type: application/sparql-query",
            "-H",
            f"Accept: {media}",
        )
        assert (posted.status, posted.body) == (200, expected)


@pytest.mark.parametrize(
    ("spelling", "select_media", "construct_media"),
    [
        ("xml", "application/sparql-results+xml", "application/rdf+xml"),
        ("XML", "application/sparql-results+xml", "application/rdf+xml"),
        ("json", "application/sparql-results+json", "application/ld+json"),
        ("csv", "text/csv", None),
        ("tsv", "text/tab-separated-values", None),
        ("srj", "application/sparql-results+json", None),
        ("turtle", None, "text/turtle"),
        ("ttl", None, "text/turtle"),
        ("n3", None, "text/n3"),
        ("nt", None, "application/n-triples"),
        ("ntriples", None, "application/n-triples"),
        ("rdf+xml", None, "application/rdf+xml"),
        ("json-ld", None, "application/ld+json"),
        ("jsonld", None, "application/ld+json"),
        ("application/ld+json", None, "application/ld+json"),
        ("text/tab-separated-values", "text/tab-separated-values", None),
        ("application/sparql-results+json", "application/sparql-results+json", "application/ld+json"),
    ],
)
@pytest.mark.parametrize("parameter", ["format", "output", "results"])
def test_format_spellings(
    sample_endpoint: str,
    sample_store: OxigraphGraph,
    spelling: str,
    select_media: str | None,
    construct_media: str | None,
    parameter: str,
) -> None:
    """A spelling names the format whatever the Accept header says; one of the other kind (``turtle``
    for a SELECT) leaves the choice to Accept."""
    for query, media in ((SELECT, select_media), (CONSTRUCT, construct_media)):
        got = curl(
            "-G", sample_endpoint, "--data-urlencode", f"query={query}", "--data-urlencode", f"{parameter}={spelling}",
            "-H", "Accept: text/csv, application/n-triples;q=0.9, */*;q=0.1",
        )  # fmt: skip
        fallback = "text/csv" if query == SELECT else "application/n-triples"
        assert (got.status, got.media) == (200, media or fallback), (query, spelling)
        assert got.body == oracle_bytes(sample_store, query, media or fallback)


@pytest.mark.parametrize(
    ("accept", "select_media", "construct_media"),
    [
        ("", "application/sparql-results+json", "application/n-triples"),
        ("*/*", "application/sparql-results+json", "application/n-triples"),
        ("*", "application/sparql-results+json", "application/n-triples"),
        ("text/*", "text/csv", "text/turtle"),
        ("application/*", "application/sparql-results+json", "application/n-triples"),
        (
            "text/turtle;q=0.5, application/rdf+xml;q=0.9, */*;q=0.1",
            "application/sparql-results+json",
            "application/rdf+xml",
        ),
        ("*/*;q=0.1, application/ld+json", "application/sparql-results+json", "application/ld+json"),
        (
            "application/n-triples;q=0, application/sparql-results+json;q=0, */*",
            "application/sparql-results+xml",
            "text/turtle",
        ),
        ("*/*, text/turtle", "application/sparql-results+json", "text/turtle"),  # named beats a wildcard
        ("application/json", "application/sparql-results+json", "application/ld+json"),
        ("application/xml", "application/sparql-results+xml", "application/rdf+xml"),
        ("text/plain", None, "application/n-triples"),
        ("text/rdf+n3", None, "text/n3"),
        ("application/x-turtle;charset=utf-8", None, "text/turtle"),
        ("application/sparql-results+json,*/*;q=0.9", "application/sparql-results+json", "application/n-triples"),
        ("application/sparql-results+json", "application/sparql-results+json", "application/ld+json"),
        # our own sparql+http client: JSON where it can, else the N-Triples it names
        (
            "application/sparql-results+json, application/n-triples;q=0.5",
            "application/sparql-results+json",
            "application/n-triples",
        ),
        ("application/n-triples,*/*;q=0.9", "application/sparql-results+json", "application/n-triples"),  # YASGUI
        (
            "application/sparql-results+xml, application/rdf+xml",
            "application/sparql-results+xml",
            "application/rdf+xml",
        ),
        ("TEXT/CSV", "text/csv", None),
        ("text/csv;q=0.5, text/tab-separated-values;q=0.9", "text/tab-separated-values", None),
        ("image/png", None, None),
        ("text/csv", "text/csv", None),
        ("text/turtle", None, "text/turtle"),
        ("*/*;q=0", None, None),
        (",", "application/sparql-results+json", "application/n-triples"),  # names nothing: as if absent
        ("text/csv;q=nan, text/tab-separated-values;q=inf", "text/tab-separated-values", None),
        ("text/csv;q=oops, */*;q=0.5", "application/sparql-results+json", "application/n-triples"),
        # a quoted parameter value may hold commas and semicolons (RFC 9110 quoted-string)
        (
            'text/csv;note="a, b";q=0.1, application/sparql-results+xml',
            "application/sparql-results+xml",
            "application/rdf+xml",
        ),
        ('text/csv;note="x;q=0", text/tab-separated-values;q=0.5', "text/csv", None),
        (
            'text/csv;note="say \\"hi\\", ok";q=0.2, text/tab-separated-values;q=0.3',
            "text/tab-separated-values",
            None,
        ),
        (
            'application/ld+json;profile="http://www.w3.org/ns/json-ld#expanded", text/turtle;q=0.5',
            None,
            "application/ld+json",
        ),
    ],
)
def test_accept_negotiation(
    sample_endpoint: str,
    sample_store: OxigraphGraph,
    accept: str,
    select_media: str | None,
    construct_media: str | None,
) -> None:
    """What a header prefers is answered; a form no acceptable format can carry is 406 with the list."""
    for query, media in ((SELECT, select_media), (CONSTRUCT, construct_media)):
        got = curl("-G", sample_endpoint, "--data-urlencode", f"query={query}", "-H", f"Accept: {accept}")
        if media is None:
            assert got.status == 406 and got.media == "text/plain" and b"available:" in got.body, (query, got)
        else:
            assert (got.status, got.media, got.body) == (200, media, oracle_bytes(sample_store, query, media)), query


@pytest.mark.parametrize(
    ("typed", "select_media", "construct_media"),
    [
        ("format=application/sparql-results+xml", "application/sparql-results+xml", "application/rdf+xml"),
        ("output=application/ld+json", "application/sparql-results+json", "application/ld+json"),
        ("results=rdf+xml", "application/sparql-results+json", "application/rdf+xml"),
        ("format=sparql-results+json", "application/sparql-results+json", "application/n-triples"),
    ],
)
def test_a_format_typed_into_a_url_keeps_its_plus(
    sample_endpoint: str, sample_store: OxigraphGraph, typed: str, select_media: str, construct_media: str
) -> None:
    """A URL written by hand (a browser's address bar, curl without --data-urlencode) sends ``+`` as is,
    which form decoding reads as a space; no format name holds a space, so it was a ``+``."""
    for query, media in ((SELECT, select_media), (CONSTRUCT, construct_media)):
        url = f"{sample_endpoint}?query={quote(query)}&{typed}"
        got = curl(url)
        assert (got.status, got.media) == (200, media), (typed, got.body)
        assert got.body == oracle_bytes(sample_store, query, media)


def test_unknown_spellings_are_refused_with_the_ones_known(sample_endpoint: str) -> None:
    for spelling in ("html", "text/html", "rdf/json", "é" * 5000):
        got = curl(
            "-G", sample_endpoint, "--data-urlencode", f"query={SELECT}", "--data-urlencode", f"format={spelling}"
        )
        assert got.status == 406 and b"format= takes" in got.body and b"json" in got.body, spelling
        assert len(got.body) < 1000  # the message quotes a bounded part of what it was given


def test_refusals_name_the_query_form_in_english(sample_endpoint: str) -> None:
    asked = {"ASK { ?s ?p ?o }": b"an ASK query", SELECT: b"a SELECT query", CONSTRUCT: b"a CONSTRUCT query"}
    for query, named in asked.items():
        got = curl("-G", sample_endpoint, "--data-urlencode", f"query={query}", "-H", "Accept: image/png")
        assert got.status == 406 and named in got.body, got.body
        spelled = curl("-G", sample_endpoint, "--data-urlencode", f"query={query}", "--data-urlencode", "format=html")
        assert spelled.status == 406 and named in spelled.body, spelled.body


def test_yasguis_requests(sample_endpoint: str, sample_store: OxigraphGraph) -> None:
    """YASGUI (the query page's editor) POSTs a form with its own Accept headers per query form."""
    accept = {"SELECT": "application/sparql-results+json,*/*;q=0.9", "CONSTRUCT": "application/n-triples,*/*;q=0.9"}
    for form, query, media in (
        ("SELECT", SELECT, "application/sparql-results+json"),
        ("CONSTRUCT", CONSTRUCT, "application/n-triples"),
    ):
        answer = requests.post(sample_endpoint, data={"query": query}, headers={"Accept": accept[form]}, timeout=60)
        assert answer.status_code == 200 and answer.headers["content-type"] == media
        assert answer.content == oracle_bytes(sample_store, query, media)
