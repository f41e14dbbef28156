"""Caller text can never change a query's meaning.

Unit tests pin the exact SPARQL text of each term; the shared hostile-input suite
(``conformance/fuzz.py``, run on every backend by ``test_hostile_input.py``) runs here on a real
in-memory Oxigraph store; property tests check that IRIs and literals round-trip exactly.
"""

from __future__ import annotations

import re
from typing import Any

import pyoxigraph as ox
import pytest
import rdflib
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from kg_adapters import connect
from kg_adapters.backends.oxigraph import OxigraphGraph
from kg_adapters.errors import InvalidTermError, QueryError
from kg_adapters.records import Literal
from kg_adapters.sparql_terms import (
    MAX_TERM_LENGTH,
    check_iri,
    check_lang,
    iri,
    literal,
    string_literal,
    values_block,
    variable,
)
from kg_adapters.testing.fuzz import (
    EX,
    HAS_SECRET,
    NTRIPLES,
    SECRET,
    SENTINEL,
    InjectionFuzz,
    storable_pieces,
    valid_iris,
)


@pytest.fixture(scope="module")
def kg() -> OxigraphGraph:
    graph = connect("oxigraph://")
    assert isinstance(graph, OxigraphGraph)
    graph.store.load(NTRIPLES.encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
    # The sentinel is really there, reachable by the escape hatch.
    assert graph.query(f"SELECT ?o WHERE {{ <{SECRET}> <{HAS_SECRET}> ?o }}") == [{"o": Literal(value=SENTINEL)}]
    return graph


# ------------------------------------------------------------------------------ unit tests
def test_iri_exact_text() -> None:
    assert iri("http://example.org/a#b") == "<http://example.org/a#b>"
    assert iri("urn:isbn:0451450523") == "<urn:isbn:0451450523>"
    assert iri("http://example.org/Zo\u00eb") == "<http://example.org/Zo\u00eb>"
    assert check_iri("a:b") == "a:b"


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "no scheme",
        "relative/path",
        "1http://x",
        "http://x> <y",
        "http://x/ y",
        "http://x/\n",
        "http://x/\t",
        'http://x/"',
        "http://x/{",
        "http://x/}",
        "http://x/|",
        "http://x/^",
        "http://x/`",
        "http://x/\\u003E",
        "http://x/\x00",
        "http://x/\x7f",
        "http://x/\ud800",
        "http://x/" + "a" * MAX_TERM_LENGTH,
    ],
)
def test_iri_rejects(bad: str) -> None:
    with pytest.raises(InvalidTermError):
        iri(bad)


@pytest.mark.parametrize("bad", [None, 42, b"http://x", ["http://x"]])
def test_iri_rejects_non_strings(bad: Any) -> None:
    with pytest.raises(InvalidTermError):
        check_iri(bad)


def test_string_literal_exact_text() -> None:
    assert string_literal("plain") == '"plain"'
    assert string_literal('O"Brien') == '"O\\"Brien"'
    assert string_literal("back\\slash") == '"back\\\\slash"'
    assert string_literal("two\nlines\r\t\b\f") == '"two\\nlines\\r\\t\\b\\f"'
    # SPARQL expands \uXXXX before parsing: the u after an escaped backslash is itself escaped
    assert string_literal("\\u0022") == '"\\\\\\U000000750022"'
    assert string_literal("") == '""'
    # Virtuoso ends a string at a raw NUL: control characters go as \u escapes
    assert string_literal("a\x00b\x1b\x7f") == '"a\\u0000b\\u001B\\u007F"'


def test_literal_exact_text() -> None:
    assert literal(Literal(value="x")) == '"x"'
    assert literal(Literal(value="x", lang="en-GB")) == '"x"@en-gb'
    assert literal(Literal(value="42", datatype="http://www.w3.org/2001/XMLSchema#integer")) == (
        '"42"^^<http://www.w3.org/2001/XMLSchema#integer>'
    )
    with pytest.raises(InvalidTermError):
        literal(Literal(value="x", lang="en", datatype="http://www.w3.org/2001/XMLSchema#string"))
    with pytest.raises(InvalidTermError):
        literal(Literal(value="x", lang="en } UNION {"))
    with pytest.raises(InvalidTermError):
        literal(Literal(value="x", datatype="xsd:int> . ?s ?p ?o . <x"))
    with pytest.raises(InvalidTermError):
        string_literal("x" * (MAX_TERM_LENGTH + 1))


def test_lang_tags() -> None:
    assert check_lang("en") == "en"
    assert check_lang("EN-gb") == "en-gb"
    assert check_lang("zh-Hant-TW") == "zh-hant-tw"
    for bad in ["", "en ", "en_GB", "e n", "en-", "-en", "toolonglang", "en@fr", "en}"]:
        with pytest.raises(InvalidTermError):
            check_lang(bad)


def test_variables_and_values() -> None:
    assert variable("x_1") == "?x_1"
    assert values_block("x", ["http://a/1", "urn:b"]) == "VALUES ?x { <http://a/1> <urn:b> }"
    assert values_block("x", []) == "VALUES ?x {  }"
    for bad in ["", "1x", "x y", "x}", "?x", "x-y"]:
        with pytest.raises(InvalidTermError):
            variable(bad)
    with pytest.raises(InvalidTermError):
        values_block("x", ["http://a/1", "http://a/2> <http://a/3"])


# ------------------------------------------------------------------------ property tests
class TestOxigraphInMemory(InjectionFuzz):
    """The shared hostile-input suite (``conformance/fuzz.py``) on an in-memory store."""

    @pytest.fixture(scope="class")
    @classmethod
    def fuzz_kg(cls, kg: OxigraphGraph) -> OxigraphGraph:
        return kg


# Text that is a well-formed IRI tail (RFC 3987 unreserved, sub-delims, ':', '@', '/', '?', '#',
# valid percent-encodings, non-ASCII letters).


@given(value=valid_iris)
@example(value="http://example.org/a#b")
@example(value="http://example.org/%3E%20%7D")
def test_iri_round_trips(kg: OxigraphGraph, value: str) -> None:
    """A valid IRI written by ``iri`` is read back as exactly the same IRI."""
    rows = kg.query(f"SELECT ?x WHERE {{ {values_block('x', [value])} }}")
    assert rows == [{"x": value}]


def test_check_iri_rejects_what_oxigraph_rejects(kg: OxigraphGraph) -> None:
    """check_iri must reject every IRI the backend cannot parse: such ids must raise
    InvalidTermError (they "never reach a query"), not a backend QueryError."""
    candidates = [
        "http://x/%zz",  # bad percent-encoding
        "a:%",
        "http://x:port/",  # non-numeric port
        "http://[::1",  # unterminated IP literal
        "http://a@@b/",
        "a:\ue000",  # private-use character outside the query part
        "http://x/\ufffe",  # non-character
        "a:#\x85",
    ]
    offenders = []
    for candidate in candidates:
        try:
            check_iri(candidate)
        except InvalidTermError:
            continue
        try:
            kg.neighbors(candidate)
        except InvalidTermError:
            continue
        except QueryError as exc:
            offenders.append(f"{candidate!r}: {exc}")
    assert offenders == []


# -------------------------------------------------------------------- literal round trips
_LANG = st.from_regex(re.compile(r"[a-z]{2,3}(-[A-Z][a-z]{3})?(-([A-Z]{2}|[0-9]{3}))?"), fullmatch=True)
_DATATYPE = st.sampled_from(
    [
        "http://example.org/datatype",
        "http://example.org/dt#x",
        "urn:x-type:1",
    ]
)
literals = st.one_of(
    st.builds(lambda value: Literal(value=value), st.text()),
    st.builds(lambda value: Literal(value=value), storable_pieces),
    st.builds(lambda value, lang: Literal(value=value, lang=lang.lower()), st.text(max_size=20), _LANG),
    st.builds(lambda value, datatype: Literal(value=value, datatype=datatype), storable_pieces, _DATATYPE),
)


def _oxigraph_term(value: Literal) -> ox.Literal:
    if value.lang is not None:
        return ox.Literal(value.value, language=value.lang)
    if value.datatype is not None:
        return ox.Literal(value.value, datatype=ox.NamedNode(value.datatype))
    return ox.Literal(value.value)


@given(value=literals)
@example(value=Literal(value='"\\u0022 } UNION { ?s ?p ?o } #'))
@example(value=Literal(value="x\\u0041y"))
@example(value=Literal(value="\\"))
@example(value=Literal(value="\r\n\t\b\f\x00\x7f\u2028"))
@example(value=Literal(value='""""'))
@example(value=Literal(value="two\nlines", lang="en-gb"))
def test_literal_round_trips_in_oxigraph(value: Literal) -> None:
    store = ox.Store()
    subject, predicate = ox.NamedNode(EX + "s"), ox.NamedNode(EX + "p")
    store.add(ox.Quad(subject, predicate, _oxigraph_term(value)))
    store.add(ox.Quad(ox.NamedNode(SECRET), predicate, ox.Literal(SENTINEL)))
    written = literal(value)
    assert bool(store.query(f"ASK {{ <{EX}s> <{EX}p> {written} }}")) is True
    solutions = store.query(f"SELECT ?s WHERE {{ ?s <{EX}p> {written} }}")
    assert isinstance(solutions, ox.QuerySolutions)
    rows = list(solutions)
    assert [row[0] for row in rows] == [subject]
    # A different value never matches (the escaping did not turn it into a pattern).
    other = Literal(value=value.value + "x", lang=value.lang, datatype=value.datatype)
    assert bool(store.query(f"ASK {{ ?s ?p {literal(other)} }}")) is False


@settings(max_examples=100, deadline=None)
@given(value=st.one_of(st.text(), storable_pieces))
@example(value='O"Brien')
@example(value="back\\slash")
@example(value="two\nlines")
@example(value="\x00\x1b\x7f")
def test_literal_round_trips_in_rdflib(value: str) -> None:
    # Text with a backslash-u sequence is covered by the focused test below.
    assume(re.search(r"\\[uU]", value) is None)
    graph = rdflib.Graph()
    graph.add((rdflib.URIRef(EX + "s"), rdflib.URIRef(EX + "p"), rdflib.Literal(value)))
    answer = graph.query(f"ASK {{ <{EX}s> <{EX}p> {literal(Literal(value=value))} }}")
    assert answer.askAnswer is True


def test_literal_escaping_survives_unicode_escape_preprocessing() -> None:
    r"""SPARQL processors may expand \uXXXX before parsing (rdflib does, as the spec says): the text
    ``x\u0022y`` (backslash, u, 0022) must still match only itself, never the literal ``x"y``."""
    text = "x\\u0022y"
    assert len(text) == 8
    graph = rdflib.Graph()
    subject, predicate = rdflib.URIRef(EX + "s"), rdflib.URIRef(EX + "p")
    graph.add((subject, predicate, rdflib.Literal('x"y')))
    graph.add((subject, predicate, rdflib.Literal("xAy")))
    asked = graph.query(f"ASK {{ ?s ?p {string_literal(text)} }}").askAnswer
    assert asked is False, "the escaped text matched the different literal 'x\"y'"
    graph.add((subject, predicate, rdflib.Literal(text)))
    rows = graph.query(f"SELECT ?o WHERE {{ ?s ?p ?o FILTER(?o = {string_literal(text)}) }}")
    assert [str(row[0]) for row in rows] == [text]  # type: ignore[index]  # rdflib types any result's rows alike


def test_check_lang_rejects_what_oxigraph_rejects() -> None:
    """check_lang must not pass tags that the backend refuses (``literal`` would then write a
    query Oxigraph cannot parse, and ``add`` would fail with a foreign error)."""
    offenders = []
    for tag in ["a", "x", "i", "en-a", "en-x", "de-1"]:
        try:
            checked = check_lang(tag)
        except InvalidTermError:
            continue
        try:
            ox.Store().query(f"ASK {{ ?s ?p {literal(Literal(value='v', lang=checked))} }}")
        except SyntaxError as exc:
            offenders.append(f"{tag!r}: {exc}")
    assert offenders == []
