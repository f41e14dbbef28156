"""What the read-only surfaces (``kga serve``, the MCP ``sparql`` tool) let through: SERVICE and updates
are refused wherever they hide, and names that merely spell a keyword are not."""

from __future__ import annotations

import pytest

from kg_adapters.serve.readonly import ReadOnlyViolation, query_form


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }",
        "select * { { select * { service silent <http://x/> { ?s ?p ?o } } } }",
        "SELECT * { ?s ?p ?o .SERVICE <http://x/> { ?a ?b ?c } }",
        "SELECT * { ?s ?p ?o.SERVICE?endpoint{ ?a ?b ?c } }",
        "SELECT * { ?x ?p ?y FILTER(?x<?y)SERVICE<http://x/>{ ?a ?b ?c } }",
        "# a comment\nSELECT * { SeRvIcE <http://x/> { ?s ?p ?o } }",
    ],
)
def test_service_is_refused_wherever_it_hides(query: str) -> None:
    with pytest.raises(ReadOnlyViolation, match="SERVICE"):
        query_form(query)


@pytest.mark.parametrize(
    "query",
    [
        "SELECT ?service WHERE { ?service ?p ?o } LIMIT 1",
        "SELECT $service WHERE { $service ?p ?o }",
        "PREFIX ex: <http://e/> SELECT * { ?s ex:service ?o }",
        "PREFIX service: <http://e/> SELECT * { ?s service:x ?o }",
        "PREFIX ex: <http://e/> SELECT * { ?s ex:a.service ?o }",
        "SELECT * { _:service ?p ?o }",
        'SELECT * { ?s ?p "SERVICE" } # SERVICE',
    ],
)
def test_names_that_spell_service_are_not_refused(query: str) -> None:
    assert query_form(query) == "SELECT"
