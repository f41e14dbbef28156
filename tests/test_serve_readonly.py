"""What the read-only surfaces (``kga serve``, the MCP ``sparql`` tool) let through: SERVICE, LOAD and
updates are refused however they are spelled, and names that merely spell a keyword are not.

The oracle is Oxigraph itself: a spelling counts as dangerous when a bare pyoxigraph store, given it
with no check before, makes a request to a real local listener."""

from __future__ import annotations

from collections.abc import Iterator

import pyoxigraph as ox
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from kg_adapters.errors import QueryError
from kg_adapters.serve.readonly import ReadOnlyViolation, query_form
from kg_adapters.sparql_lexer import read, unescape_codepoints
from kg_adapters.sparql_terms import expand_dotted_prefixed_names
from kg_adapters.testing.hostile_queries import (
    SERVICE_SPELLINGS,
    UPDATE_SPELLINGS,
    RequestLog,
    Spelling,
    compose,
    probe_store,
    request_listener,
    run_raw,
)


@pytest.fixture(scope="module")
def target() -> Iterator[RequestLog]:
    with request_listener() as log:
        yield log


@pytest.mark.parametrize("spelling", [s for s in SERVICE_SPELLINGS if s.live], ids=lambda s: s.name)
def test_live_spellings_reach_the_network_when_nothing_checks_them(target: RequestLog, spelling: Spelling) -> None:
    """The control: each of these really is a federated call to Oxigraph 0.5."""
    before = target.count()
    run_raw(probe_store(), spelling.query(target.url))
    assert target.count() > before


@pytest.mark.parametrize("spelling", SERVICE_SPELLINGS + UPDATE_SPELLINGS, ids=lambda s: s.name)
def test_every_spelling_is_refused(target: RequestLog, spelling: Spelling) -> None:
    with pytest.raises(ReadOnlyViolation):
        query_form(spelling.query(target.url))


@st.composite
def spellings(draw: st.DrawFn) -> str:
    return compose(lambda pieces: draw(st.sampled_from(pieces)), lambda items: draw(st.permutations(items)))


@given(spelling=spellings())
def test_generated_spellings_oxigraph_would_send_are_refused(target: RequestLog, spelling: str) -> None:
    query = Spelling(name="generated", template=spelling).query(target.url)
    before = target.count()
    run_raw(probe_store(), query)
    sent = target.count() - before
    event(f"Oxigraph sent {'a request' if sent else 'nothing'}")
    try:
        query_form(query)
    except ReadOnlyViolation:
        return
    except QueryError:
        assert sent == 0, query  # unreadable text: Oxigraph must not have run it either
        return
    assert sent == 0, query


@pytest.mark.parametrize(
    "query",
    [
        "SELECT ?service WHERE { ?service ?p ?o } LIMIT 1",
        "SELECT $service WHERE { $service ?p ?o }",
        "PREFIX ex: <http://e/> SELECT * { ?s ex:service ?o }",
        "PREFIX ex: <http://e/> SELECT * { ?s ex:a.service ?o }",
        "PREFIX ex: <http://e/> SELECT * { ?s ex:SERVICE ?o ; ex:p ex:x.SERVICE }",
        "SELECT * { _:service ?p ?o }",
        'SELECT * { ?s ?p "SERVICE" } # SERVICE',
        "SELECT * { ?s ?p '''SERVICE <http://x/> {}''' }",
        "SELECT * { ?s <http://example.org/SERVICE> ?o }",
        "BASE <http://example.org/> SELECT * { ?s <service#x> ?o }",
        "SELECT * { ?s ?p ?o } # SERVICE <http://x/> {}\n",
        "SELECT * { ?s ?p 'insert delete load' }",
        "PREFIX ex: <http://e/>\nSELECT ?x WHERE { ?x ex:load ex:insert }",
    ],
)
def test_names_strings_and_comments_that_spell_keywords_are_not_refused(query: str) -> None:
    assert query_form(query) == "SELECT"
    ox.Store().query(query)  # and Oxigraph reads them as queries too


@pytest.mark.parametrize(
    ("query", "allowed", "error"),
    [
        ("CONSTRUCT WHERE { ?s ?p ?o }", ("SELECT", "ASK"), "CONSTRUCT queries are refused"),
        ("SELECT nonsense", ("SELECT",), None),
        ("hello", ("SELECT",), "not a SPARQL query"),
        ('SELECT * { ?s ?p "never closed }', ("SELECT",), "never closed"),
        ("", ("SELECT",), "not a SPARQL query"),
    ],
)
def test_forms_and_unreadable_text(query: str, allowed: tuple[str, ...], error: str | None) -> None:
    if error is None:
        assert query_form(query, allowed) == "SELECT"
        return
    with pytest.raises(QueryError, match=error):
        query_form(query, allowed)


@pytest.mark.parametrize(
    ("escaped", "expanded"),
    [
        ("\\u0053ERVICE", "SERVICE"),
        ("\\U00000053", "S"),
        ("\\u+053", "S"),  # Rust's from_str_radix accepts a leading plus
        ("\\u\\u0041", "\\u\\u0041"),  # a failed escape's characters are not read again
        ("\\uD800x", "\\uD800x"),  # no surrogate code points
        ("\\U00110000", "\\U00110000"),
        ("\\u00", "\\u00"),
        ("a\\\\u0041", "a\\A"),
    ],
)
def test_code_points_are_unescaped_as_spargebra_does(escaped: str, expanded: str) -> None:
    assert unescape_codepoints(escaped) == expanded


def test_oxigraph_reading_follows_its_parser() -> None:
    """Keywords without a word boundary, comments ended by CR, IRIs only when valid, one dot run in names."""
    reading = read("PREFIX ex: <http://a/> SELECT * { ?s ?p true# x\rOPTIONAL{} ex:a.b.c <not an iri> }")
    assert "OPTIONAL" in reading.code and "ex:a.b" not in reading.code and ".c" in reading.code
    assert "not an iri" in reading.code and reading.prefixes == {"ex": "http://a/"}
    spec = read("PREFIX ex: <http://a/> SELECT * { ?s ex:a.b.c ?o }", "spec")
    assert ".c" not in spec.code


def test_dotted_names_are_expanded_only_where_they_are_names() -> None:
    query = (
        "PREFIX ns: <http://rdf.freebase.com/ns/>\n"
        'SELECT ?n { ns:m.0bxtg ns:type.object.name ?n . "ns:a.b" } # ns:c.d\r ns:x'
    )
    assert expand_dotted_prefixed_names(query) == query.replace(
        "ns:m.0bxtg ns:type.object.name",
        "<http://rdf.freebase.com/ns/m.0bxtg> <http://rdf.freebase.com/ns/type.object.name>",
    )
