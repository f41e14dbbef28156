"""Wikidata entity JSON as records and as RDF (kg_adapters.wikidata_json), on the real Q42 entity and on
single values whose WDQS rendering is known."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest
from qwikidata.snak import WikidataSnak
from support.wikidata_api import Q42_SCHOOLS, date

from kg_adapters.errors import InvalidTermError
from kg_adapters.records import Edge, Literal, Qualifiers
from kg_adapters.sparql_terms import GEO_WKT_LITERAL
from kg_adapters.testing.wikidata_graph import RECORDED
from kg_adapters.wikidata_json import (
    XSD_DATETIME,
    XSD_DECIMAL,
    canonical_decimal,
    entity_ntriples,
    parse_entity,
    snak_value,
    xsd_datetime,
)

GREGORIAN = "http://www.wikidata.org/entity/Q1985727"
JULIAN = "http://www.wikidata.org/entity/Q1985786"
NEIGHBOURS = RECORDED / "neighbours.json"


@pytest.fixture(scope="module")
def q42_json(shared_data: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((shared_data / "wikidata-Q42.json").read_text("utf-8"))["entities"]["Q42"]
    return data


@pytest.mark.parametrize(
    ("time", "precision", "calendar", "expected"),
    [
        ("+1952-03-11T00:00:00Z", 11, GREGORIAN, "1952-03-11T00:00:00Z"),
        ("+1970-00-00T00:00:00Z", 9, GREGORIAN, "1970-01-01T00:00:00Z"),
        ("+1970-05-17T00:00:00Z", 9, GREGORIAN, "1970-01-01T00:00:00Z"),
        ("+2001-05-00T00:00:00Z", 10, GREGORIAN, "2001-05-01T00:00:00Z"),
        ("+2023-02-30T00:00:00Z", 11, GREGORIAN, "2023-02-28T00:00:00Z"),
        ("+1582-10-05T00:00:00Z", 11, JULIAN, "1582-10-15T00:00:00Z"),
        ("+1511-04-09T00:00:00Z", 11, JULIAN, "1511-04-19T00:00:00Z"),
        ("-0044-03-15T00:00:00Z", 11, JULIAN, "-0043-03-13T00:00:00Z"),
        ("+1511-00-00T00:00:00Z", 9, JULIAN, "1511-01-01T00:00:00Z"),
        ("-0500-00-00T00:00:00Z", 9, GREGORIAN, "-0499-01-01T00:00:00Z"),
        ("-0001-00-00T00:00:00Z", 9, GREGORIAN, "0000-01-01T00:00:00Z"),
        ("+13798000000-00-00T00:00:00Z", 3, GREGORIAN, "13798000000-01-01T00:00:00Z"),
        ("-13798000000-00-00T00:00:00Z", 3, GREGORIAN, "-13798000000-01-01T00:00:00Z"),
        ("+0000-00-00T00:00:00Z", 9, GREGORIAN, None),
    ],
)
def test_times_render_as_wdqs(time: str, precision: int, calendar: str, expected: str | None) -> None:
    assert xsd_datetime(time, precision, calendar) == expected


def test_rendered_times_are_valid_xsd_date_times() -> None:
    for time, calendar in [("-0044-03-15T00:00:00Z", JULIAN), ("+1970-00-00T00:00:00Z", GREGORIAN)]:
        text = xsd_datetime(time, 11, calendar)
        assert text is not None
        stored = ox.Store()
        value = ox.Literal(text, datatype=ox.NamedNode(XSD_DATETIME))
        stored.add(ox.Quad(ox.NamedNode("http://a"), ox.NamedNode("http://p"), value))
        assert next(iter(stored)).object.value == text  # Oxigraph keeps it: it is canonical


@pytest.mark.parametrize(
    ("amount", "expected"),
    [
        ("+1.96", "1.96"),
        ("+1.960", "1.96"),
        ("-0.50", "-0.5"),
        ("+0", "0"),
        ("-0.000", "0"),
        ("+100", "100"),
        ("+12345678901234567890.123456789", "12345678901234567890.123456789"),
    ],
)
def test_quantities_are_canonical_decimals(amount: str, expected: str) -> None:
    assert canonical_decimal(amount) == expected


def snak(datatype: str, value: Any, kind: str) -> WikidataSnak:
    return WikidataSnak(
        {"snaktype": "value", "property": "P1", "datatype": datatype, "datavalue": {"value": value, "type": kind}}
    )


@pytest.mark.parametrize(
    ("datatype", "value", "kind", "expected"),
    [
        ("wikibase-item", {"entity-type": "item", "numeric-id": 5, "id": "Q5"}, "wikibase-entityid", "Q5"),
        ("wikibase-item", {"entity-type": "item", "numeric-id": 5}, "wikibase-entityid", "Q5"),
        ("wikibase-property", {"entity-type": "property", "id": "P31"}, "wikibase-entityid", "P31"),
        ("wikibase-form", {"entity-type": "form", "id": "L7-F4"}, "wikibase-entityid", "L7-F4"),
        (
            "entity-schema",
            {"entity-type": "entity-schema", "id": "E10"},
            "wikibase-entityid",
            "http://www.wikidata.org/entity/E10",
        ),
        ("external-id", "0000000121125921", "string", Literal(value="0000000121125921")),
        ("string", "Douglas", "string", Literal(value="Douglas")),
        ("url", "https://douglasadams.com", "string", "https://douglasadams.com"),
        ("url", "not a url", "string", Literal(value="not a url")),
        (
            "commonsMedia",
            "Douglas adams portrait.jpg",
            "string",
            "http://commons.wikimedia.org/wiki/Special:FilePath/Douglas%20adams%20portrait.jpg",
        ),
        ("geo-shape", "Data:Berlin.map", "string", "http://commons.wikimedia.org/data/main/Data:Berlin.map"),
        ("math", "E=mc^2", "string", Literal(value="E=mc^2", datatype="http://www.w3.org/1998/Math/MathML")),
        (
            "monolingualtext",
            {"text": "Douglas Noël Adams", "language": "en"},
            "monolingualtext",
            Literal(value="Douglas Noël Adams", lang="en"),
        ),
        (
            "quantity",
            {"amount": "+1.96", "unit": "http://www.wikidata.org/entity/Q11573"},
            "quantity",
            Literal(value="1.96", datatype=XSD_DECIMAL),
        ),
        (
            "globe-coordinate",
            {"latitude": 52.205, "longitude": 0.119, "globe": "http://www.wikidata.org/entity/Q2"},
            "globecoordinate",
            Literal(value="Point(0.119 52.205)", datatype=GEO_WKT_LITERAL),
        ),
        (
            "globe-coordinate",
            {"latitude": -4.5, "longitude": 1e-05, "globe": "http://www.wikidata.org/entity/Q111"},
            "globecoordinate",
            Literal(value="<http://www.wikidata.org/entity/Q111> Point(1.0E-5 -4.5)", datatype=GEO_WKT_LITERAL),
        ),
        (
            "time",
            {"time": "+1952-03-11T00:00:00Z", "precision": 11, "calendarmodel": GREGORIAN},
            "time",
            date("1952-03-11T00:00:00Z"),
        ),
    ],
)
def test_values_render_as_wdqs(datatype: str, value: Any, kind: str, expected: object) -> None:
    assert snak_value(snak(datatype, value, kind)) == expected


def test_unknown_and_no_value_have_no_value() -> None:
    for snaktype in ("somevalue", "novalue"):
        assert snak_value(WikidataSnak({"snaktype": snaktype, "property": "P570"})) is None


def test_q42_truthy_edges_take_the_best_rank(q42_json: dict[str, Any]) -> None:
    q42 = parse_entity(q42_json)
    assert len(q42.statements) == 332
    truthy = q42.truthy_edges()
    # P998 has one preferred and five normal statements; P18 one normal and one deprecated
    assert len(truthy) == 332 - 5 - 1
    assert [e.tail for e in truthy if e.relation == "P998"] == [
        Literal(value="Arts/Literature/Authors/A/Adams,_Douglas/")
    ]
    assert [e.tail for e in truthy if e.relation == "P18"] == [
        "http://commons.wikimedia.org/wiki/Special:FilePath/Douglas%20adams%20portrait.jpg"
    ]
    assert Edge(head="Q42", relation="P569", tail=date("1952-03-11T00:00:00Z")) in truthy
    assert Edge(head="Q42", relation="P2048", tail=Literal(value="1.96", datatype=XSD_DECIMAL)) in truthy
    assert Edge(head="Q42", relation="P1477", tail=Literal(value="Douglas Noël Adams", lang="en")) in truthy
    assert Edge(head="Q42", relation="P856", tail="https://douglasadams.com") in truthy
    assert all(edge.rank is None and not edge.qualifiers for edge in truthy)


def test_q42_statements_carry_qualifiers_and_ranks(q42_json: dict[str, Any]) -> None:
    statements = parse_entity(q42_json).statement_edges()
    assert len(statements) == 331  # every statement but the deprecated P18
    assert [e for e in statements if e.relation == "P69"] == Q42_SCHOOLS
    assert sorted(str(e.rank) for e in statements if e.relation == "P998") == ["normal"] * 5 + ["preferred"]
    assert [e.qualifiers for e in statements if e.relation == "P735"] == [
        Qualifiers({"P1545": [Literal(value="1")], "P3831": ["Q3409033"]}),
        Qualifiers({"P1545": [Literal(value="2")]}),
    ]


def test_q42_terms_keep_their_languages(q42_json: dict[str, Any]) -> None:
    q42 = parse_entity(q42_json)
    assert Literal(value="Douglas Adams", lang="mul") in q42.labels
    assert not [label for label in q42.labels if label.lang == "en"]  # Q42's English label is its mul label
    assert Literal(value="British science fiction writer and humorist (1952–2001)", lang="en") in q42.descriptions
    assert Literal(value="Douglas Noël Adams", lang="mul") in q42.aliases


def select(store: ox.Store, query: str) -> ox.QuerySolutions:
    """The solutions of a SELECT query."""
    solutions = store.query(query)
    assert isinstance(solutions, ox.QuerySolutions)
    return solutions


def test_rdf_has_the_wikidata_dump_shape(q42_json: dict[str, Any]) -> None:
    store = ox.Store()
    text = "\n".join(entity_ntriples(parse_entity(q42_json), languages=["en"], statements=True))
    store.load(text.encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
    rows = select(
        store,
        """PREFIX wd: <http://www.wikidata.org/entity/> PREFIX p: <http://www.wikidata.org/prop/>
        PREFIX ps: <http://www.wikidata.org/prop/statement/> PREFIX pq: <http://www.wikidata.org/prop/qualifier/>
        PREFIX wdt: <http://www.wikidata.org/prop/direct/> PREFIX wikibase: <http://wikiba.se/ontology#>
        SELECT ?school ?start ?end ?rank WHERE {
          wd:Q42 wdt:P69 ?school ; p:P69 ?st . ?st ps:P69 ?school ; pq:P580 ?start ; pq:P582 ?end ;
          wikibase:rank ?rank ; a wikibase:Statement, wikibase:BestRank } ORDER BY ?start""",
    )
    assert [(r["school"].value, r["start"].value, r["end"].value, r["rank"].value) for r in rows] == [
        (
            "http://www.wikidata.org/entity/Q4961791",
            "1959-01-01T00:00:00Z",
            "1970-01-01T00:00:00Z",
            "http://wikiba.se/ontology#NormalRank",
        ),
        (
            "http://www.wikidata.org/entity/Q691283",
            "1971-01-01T00:00:00Z",
            "1974-01-01T00:00:00Z",
            "http://wikiba.se/ontology#NormalRank",
        ),
    ]
    deprecated = select(
        store,
        """SELECT ?st WHERE { ?st <http://wikiba.se/ontology#rank> <http://wikiba.se/ontology#DeprecatedRank> .
        FILTER NOT EXISTS { ?st a <http://wikiba.se/ontology#BestRank> } }""",
    )
    assert len(list(deprecated)) == 1
    labels = select(
        store,
        "SELECT ?l WHERE { <http://www.wikidata.org/entity/Q42> <http://www.w3.org/2000/01/rdf-schema#label> ?l }",
    )
    assert sorted(str(r["l"]) for r in labels) == ['"Douglas Adams"@mul']  # en is asked for, mul always kept


def test_languages_keep_regional_variants_and_mul() -> None:
    uk = parse_entity(json.loads(NEIGHBOURS.read_text("utf-8"))["entities"]["Q145"])
    labels = [line for line in entity_ntriples(uk, languages=["en"]) if "rdf-schema#label" in line]
    assert labels == [
        '<http://www.wikidata.org/entity/Q145> <http://www.w3.org/2000/01/rdf-schema#label> "United Kingdom"@en .',
        '<http://www.wikidata.org/entity/Q145> <http://www.w3.org/2000/01/rdf-schema#label> "United Kingdom"@en-gb .',
    ]


def test_literals_are_escaped_and_bad_statement_ids_refused() -> None:
    entity = parse_entity(
        {
            "id": "Q7",
            "type": "item",
            "labels": {"en": {"language": "en", "value": 'a "quoted"\\ line\nbreak'}},
            "claims": {
                "P31": [
                    {
                        "id": "Q7$<bad>",
                        "type": "statement",
                        "rank": "normal",
                        "mainsnak": {
                            "snaktype": "value",
                            "property": "P31",
                            "datatype": "wikibase-item",
                            "datavalue": {"type": "wikibase-entityid", "value": {"entity-type": "item", "id": "Q5"}},
                        },
                    }
                ]
            },
        }
    )
    store = ox.Store()
    store.load("\n".join(entity_ntriples(entity)).encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
    assert {q.object.value for q in store} == {'a "quoted"\\ line\nbreak', "http://www.wikidata.org/entity/Q5"}
    with pytest.raises(InvalidTermError, match="statement id"):
        entity_ntriples(entity, statements=True)


@pytest.mark.parametrize(
    "data",
    [
        {"id": "Q42x", "type": "item"},
        {"id": "Q42", "type": "item", "claims": {"P31": [{"mainsnak": {"snaktype": "value", "property": "P31"}}]}},
        {
            "id": "Q42",
            "type": "item",
            "claims": {
                "P31": [
                    {
                        "id": "Q42$1",
                        "type": "statement",
                        "rank": "best",
                        "mainsnak": {"snaktype": "novalue", "property": "P31"},
                    }
                ]
            },
        },
        {"id": "Q42", "type": "item", "labels": {"en": {"value": "no language"}}},
        ["not", "an", "entity"],
    ],
)
def test_malformed_entities_raise_a_typed_error(data: Any) -> None:
    with pytest.raises(InvalidTermError):
        parse_entity(data)
