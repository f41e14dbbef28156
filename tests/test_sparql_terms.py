"""Caller text can never change a query's meaning.

Unit tests pin the exact SPARQL text of each term; property tests throw nasty strings (quotes,
``>``, ``}``, newlines, ``#``, ``\\u003E`` escapes, SPARQL keywords, very long and empty text) at
every operation of a real in-memory Oxigraph store that holds a planted sentinel triple. Every
call must either answer correctly (nothing, for ids that are not in the graph) or raise
:class:`InvalidTermError`, and the sentinel must never come back.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pyoxigraph as ox
import pytest
import rdflib
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from kg_adapters import connect
from kg_adapters.backends.oxigraph import OxigraphGraph
from kg_adapters.errors import InvalidTermError, KGError, QueryError
from kg_adapters.records import Edge, Entity, Literal, Path
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

EX = "http://example.org/"
SECRET = EX + "secret"
HAS_SECRET = EX + "hasSecret"
SENTINEL = "SENTINEL-7f3a9c"
PERSON = EX + "person"
CITY = EX + "city"
BORN_IN = EX + "bornIn"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"

DATA = f"""
<{SECRET}> <{HAS_SECRET}> "{SENTINEL}" .
<{SECRET}> <{BORN_IN}> <{SECRET}> .
<{PERSON}> <{BORN_IN}> <{CITY}> .
<{PERSON}> <{RDFS_LABEL}> "Person" .
<{PERSON}> <{RDFS_LABEL}> "Personne"@fr .
<{CITY}> <{RDFS_LABEL}> "City"@en .
"""
KNOWN_IRIS = {SECRET, HAS_SECRET, PERSON, CITY, BORN_IN, RDFS_LABEL}
LABELED = {PERSON, CITY}
PERSON_LABELS = {"Person", "Personne"}


@pytest.fixture(scope="module")
def kg() -> OxigraphGraph:
    graph = connect("oxigraph://")
    assert isinstance(graph, OxigraphGraph)
    graph.store.load(DATA.encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
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


# ---------------------------------------------------------------------------- strategies
PIECES = [
    '"',
    "'",
    '"""',
    ">",
    "<",
    "}",
    "{",
    "\n",
    "\r",
    "\t",
    "#",
    "\\",
    "\\u003E",
    "\\U0000003E",
    "\\u0022",
    "\\u005C",
    "%3E",
    "%",
    " ",
    ".",
    ";",
    ",",
    "^^",
    "@en",
    "?s",
    "?x",
    "*",
    "} UNION { ?s ?p ?o }",
    "} UNION { ?s ?p ?o",
    " . ?s ?p ?o . ",
    '" } UNION { ?s ?p ?o } #',
    "> } UNION { ?s ?p ?o } #",
    ") } SELECT * WHERE { ?s ?p ?o",
    "FILTER(true)",
    "OPTIONAL",
    "VALUES",
    "DROP ALL",
    "INSERT DATA { <a:b> <a:b> <a:b> }",
    "http://example.org/",
    SECRET,
    "<" + SECRET + ">",
    "_:b0",
    "\x00",
    "\u2028",
    "\ufeff",
    "\U0001f680",
    "Zo\u00eb",
    "\u6771\u4eac",
    "'; DROP TABLE labels; --",
    '" OR "1"="1',
    "NEAR(",
    "en",
]

pieces = st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=8).map("".join)
nasty = st.one_of(
    pieces,
    pieces.map(lambda text: "http://example.org/" + text),
    pieces.map(lambda text: "a:" + text),
    st.text(max_size=40),
    st.just(""),
    st.integers(min_value=MAX_TERM_LENGTH - 30, max_value=MAX_TERM_LENGTH + 200).map(
        lambda n: "http://example.org/" + "x" * n
    ),
)


def empty_answers(kg: OxigraphGraph, bad: str) -> dict[str, tuple[Callable[[], object], object]]:
    """Each call with ``bad`` in an id, relation or language slot, and its correct answer when
    ``bad`` names nothing in the graph (None: checked separately)."""
    return {
        "neighbors": (lambda: kg.neighbors(bad), {bad: []}),
        "neighbors-both": (lambda: kg.neighbors([PERSON, bad], direction="both"), None),
        "neighbors-relation": (lambda: kg.neighbors(PERSON, relations=[bad]), {PERSON: []}),
        "neighbors-relation-in": (lambda: kg.neighbors(CITY, direction="in", relations=[bad, BORN_IN]), None),
        "relations": (lambda: kg.relations(bad, direction="both"), {bad: []}),
        "labels": (lambda: kg.labels(bad), {}),
        "labels-lang": (lambda: kg.labels(PERSON, lang=bad), None),
        "paths-start": (lambda: list(kg.paths(bad, [BORN_IN])), []),
        "paths-relation": (lambda: list(kg.paths(PERSON, [bad])), []),
        "paths-relation-both": (lambda: list(kg.paths(CITY, [bad], directions=["both"])), []),
        "shortest-source": (lambda: list(kg.shortest_paths(bad, CITY)), []),
        "shortest-target": (lambda: list(kg.shortest_paths(PERSON, bad)), []),
        "subgraph-seed": (lambda: list(kg.subgraph(bad, hops=1)), []),
        "subgraph-relation": (lambda: list(kg.subgraph(PERSON, hops=2, relations=[bad])), []),
    }


def leaves(value: object) -> list[object]:
    """Every id, relation and literal text inside an answer."""
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in (*leaves(key), *leaves(item))]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in leaves(item)]
    if isinstance(value, Edge):
        return [value.head, value.relation, *leaves(value.tail)]
    if isinstance(value, Path):
        return [value.start, *leaves(value.edges)]
    if isinstance(value, Entity):
        return [value.id, value.label]
    if isinstance(value, Literal):
        return [value.value]
    return [value]


def check_answer(name: str, answer: object, wanted: object, bad: str) -> None:
    found = leaves(answer)
    assert SENTINEL not in found and HAS_SECRET not in found, f"{name} revealed the sentinel for {bad!r}"
    assert SECRET not in found, f"{name} revealed the secret node for {bad!r}"
    if wanted is not None:
        assert answer == wanted, f"{name}({bad!r})"
    elif name == "neighbors-both":
        assert answer == {PERSON: kg_person_both(), bad: []}
    elif name == "neighbors-relation-in":
        assert answer == {CITY: [Edge(head=PERSON, relation=BORN_IN, tail=CITY)]}
    elif name == "labels-lang":
        assert isinstance(answer, dict) and set(answer) == {PERSON} and answer[PERSON] in PERSON_LABELS


def kg_person_both() -> list[Edge]:
    return [
        Edge(head=PERSON, relation=BORN_IN, tail=CITY),
        Edge(head=PERSON, relation=RDFS_LABEL, tail=Literal(value="Person")),
        Edge(head=PERSON, relation=RDFS_LABEL, tail=Literal(value="Personne", lang="fr")),
    ]


# -------------------------------------------------------------------------- property tests
@settings(max_examples=200, deadline=None)
@given(bad=nasty)
@example(bad="http://example.org/x> } UNION { ?s ?p ?o } #")
@example(bad='x" } UNION { ?s ?p ?o } #')
@example(bad="http://example.org/x\\u003E } UNION { ?s ?p ?o")
@example(bad="http://example.org/a#} UNION {")
@example(bad="")
@example(bad="http://example.org/" + "x" * 5000)
def test_injection_never_reveals_sentinel(kg: OxigraphGraph, bad: str) -> None:
    """Whatever the text, the answer is the correct (empty) one or a typed error; never the sentinel.

    A QueryError is tolerated here (the query was refused, its meaning did not change); the strict
    test below holds the library to InvalidTermError."""
    assume(bad not in KNOWN_IRIS)
    for name, (call, wanted) in empty_answers(kg, bad).items():
        try:
            answer = call()
        except (InvalidTermError, QueryError):
            continue
        check_answer(name, answer, wanted, bad)
    # The store is unchanged (nothing was inserted or dropped by any text).
    assert kg.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }") == [
        {"n": Literal(value="6", datatype="http://www.w3.org/2001/XMLSchema#integer")}
    ]


@settings(max_examples=200, deadline=None)
@given(bad=nasty)
def test_terms_answer_or_raise_invalid_term_error(kg: OxigraphGraph, bad: str) -> None:
    """The contract: every call answers correctly or raises InvalidTermError (no other error)."""
    assume(bad not in KNOWN_IRIS)
    for name, (call, wanted) in empty_answers(kg, bad).items():
        try:
            answer = call()
        except InvalidTermError:
            continue
        except KGError as exc:
            raise AssertionError(f"{name}({bad!r}) raised {type(exc).__name__}, not InvalidTermError") from exc
        check_answer(name, answer, wanted, bad)


@settings(max_examples=200, deadline=None)
@given(text=nasty)
@example(text="person")
@example(text="0_0")
@example(text='" OR "1"="1')
@example(text="NEAR(person city)")
@example(text="person*")
def test_search_text_is_only_ever_matched(kg: OxigraphGraph, text: str) -> None:
    """Search text goes to the name index as data: any text answers a list of named entities
    (never the unnamed secret) or raises InvalidTermError; nothing else escapes."""
    try:
        answer = kg.search(text)
    except InvalidTermError:
        return
    assert isinstance(answer, list)
    assert all(isinstance(found, Entity) and found.id in LABELED for found in answer)
    assert SENTINEL not in leaves(answer)
    if text.strip().lower() == "person":
        assert answer == [Entity(id=PERSON, label="Person")]


# Text that is a well-formed IRI tail (RFC 3987 unreserved, sub-delims, ':', '@', '/', '?', '#',
# valid percent-encodings, non-ASCII letters).
_IRI_CHAR = st.sampled_from([*"abcXYZ019-._~!$&'()*+,;=:@/?", "%3E", "%22", "%7B", "\u00eb", "\u6771"])
valid_iris = st.lists(_IRI_CHAR, max_size=30).map(lambda parts: "http://example.org/" + "".join(parts))


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
    st.builds(lambda value: Literal(value=value), pieces),
    st.builds(lambda value, lang: Literal(value=value, lang=lang.lower()), st.text(max_size=20), _LANG),
    st.builds(lambda value, datatype: Literal(value=value, datatype=datatype), pieces, _DATATYPE),
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
    rows = list(store.query(f"SELECT ?s WHERE {{ ?s <{EX}p> {written} }}"))
    assert [row[0] for row in rows] == [subject]
    # A different value never matches (the escaping did not turn it into a pattern).
    other = Literal(value=value.value + "x", lang=value.lang, datatype=value.datatype)
    assert bool(store.query(f"ASK {{ ?s ?p {literal(other)} }}")) is False


@settings(max_examples=100, deadline=None)
@given(value=st.one_of(st.text(), pieces))
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
    assert [str(row[0]) for row in rows] == [text]


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
