"""A Wikidata-shaped test graph in the shape of the Wikidata RDF dumps and WDQS.

Truthy ``wdt:`` edges exist only for best-rank statements, as in the dumps; statements are
``wd:Q p:P wds:S . wds:S ps:P value ; pq:Q qualifier ; wikibase:rank rank``; literals follow the
WDQS conventions (time -> xsd:dateTime, quantity -> xsd:decimal, monolingual text -> language-tagged
string, external id -> plain string, coordinates -> geo:wktLiteral)::

    Q42 (Douglas Adams)
      P31  Q5            normal                                       truthy
      P69  Q691283       normal  P580 1971, P582 1974, P512 Q1765120  truthy (once)
      P69  Q691283       normal  P580 1980                            (same triple, other qualifiers)
      P27  Q145          preferred  P580 1952                         truthy
      P27  Q174193       normal                                       not truthy (a preferred one exists)
      P27  Q999          deprecated                                   never answered
      P569 1952-03-11T00:00:00Z (xsd:dateTime), P2048 1.96 (xsd:decimal),
      P1559 "Douglas Adams"@en, P214 "113230702"                      truthy, normal
    Q350 (Cambridge)  P17 Q145 normal, P625 Point(0.1218 52.2053) normal; P138 Q350 (a self-loop)
    Q691283           P131 Q350 normal, P131 Q145 deprecated

Names exercise the fallbacks: exact tag, regional variant, ``mul``, any other language, and an
alias (skos:altLabel) that must never be taken for a label.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from kg_adapters.records import Literal

XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_DATETIME = XSD + "dateTime"
XSD_DECIMAL = XSD + "decimal"
GEO_WKT = "http://www.opengis.net/ont/geosparql#wktLiteral"
WD_UNIT_METRE = "http://www.wikidata.org/entity/Q11573"

RECORDED = Path(__file__).parent / "data" / "wikidata"
"""Real Wikidata answers, recorded: ``neighbours.json`` (Special:EntityData JSON of Q42's neighbourhood)
and ``searches.json`` (``wbsearchentities`` hits by search text)."""

TURTLE = r"""@prefix wd: <http://www.wikidata.org/entity/> .
@prefix wds: <http://www.wikidata.org/entity/statement/> .
@prefix wdt: <http://www.wikidata.org/prop/direct/> .
@prefix p: <http://www.wikidata.org/prop/> .
@prefix ps: <http://www.wikidata.org/prop/statement/> .
@prefix pq: <http://www.wikidata.org/prop/qualifier/> .
@prefix wikibase: <http://wikiba.se/ontology#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix schema: <http://schema.org/> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix geo: <http://www.opengis.net/ont/geosparql#> .

wd:Q42 wdt:P31 wd:Q5 ;
    wdt:P69 wd:Q691283 ;
    wdt:P27 wd:Q145 ;
    wdt:P569 "1952-03-11T00:00:00Z"^^xsd:dateTime ;
    wdt:P2048 "1.96"^^xsd:decimal ;
    wdt:P1559 "Douglas Adams"@en ;
    wdt:P214 "113230702" ;
    p:P31 wds:Q42-s1 ;
    p:P69 wds:Q42-s2 , wds:Q42-s3 ;
    p:P27 wds:Q42-s4 , wds:Q42-s5 , wds:Q42-s6 ;
    p:P569 wds:Q42-s7 ;
    p:P2048 wds:Q42-s8 ;
    p:P1559 wds:Q42-s9 ;
    p:P214 wds:Q42-s10 ;
    rdfs:label "Douglas Adams"@en , "Douglas Adams (UK)"@en-gb , "Дуглас Адамс"@ru , "ダグラス・アダムズ"@ja ;
    schema:description "English writer and humorist"@en , "britischer Schriftsteller"@de , "écrivain anglais"@fr ;
    skos:altLabel "Douglas Noël Adams"@en , "DNA"@de .

wds:Q42-s1 a wikibase:Statement ; ps:P31 wd:Q5 ; wikibase:rank wikibase:NormalRank .
wds:Q42-s2 a wikibase:Statement ; ps:P69 wd:Q691283 ; wikibase:rank wikibase:NormalRank ;
    pq:P580 "1971-01-01T00:00:00Z"^^xsd:dateTime ;
    pq:P582 "1974-01-01T00:00:00Z"^^xsd:dateTime ;
    pq:P512 wd:Q1765120 .
wds:Q42-s3 a wikibase:Statement ; ps:P69 wd:Q691283 ; wikibase:rank wikibase:NormalRank ;
    pq:P580 "1980-01-01T00:00:00Z"^^xsd:dateTime .
wds:Q42-s4 a wikibase:Statement ; ps:P27 wd:Q145 ; wikibase:rank wikibase:PreferredRank ;
    pq:P580 "1952-03-11T00:00:00Z"^^xsd:dateTime .
wds:Q42-s5 a wikibase:Statement ; ps:P27 wd:Q174193 ; wikibase:rank wikibase:NormalRank .
wds:Q42-s6 a wikibase:Statement ; ps:P27 wd:Q999 ; wikibase:rank wikibase:DeprecatedRank ;
    pq:P580 "1900-01-01T00:00:00Z"^^xsd:dateTime .
wds:Q42-s7 a wikibase:Statement ; ps:P569 "1952-03-11T00:00:00Z"^^xsd:dateTime ; wikibase:rank wikibase:NormalRank .
wds:Q42-s8 a wikibase:Statement ; ps:P2048 "1.96"^^xsd:decimal ; wikibase:rank wikibase:NormalRank .
wds:Q42-s9 a wikibase:Statement ; ps:P1559 "Douglas Adams"@en ; wikibase:rank wikibase:NormalRank .
wds:Q42-s10 a wikibase:Statement ; ps:P214 "113230702" ; wikibase:rank wikibase:NormalRank .

wd:Q350 wdt:P17 wd:Q145 ;
    wdt:P625 "Point(0.1218 52.2053)"^^geo:wktLiteral ;
    wdt:P138 wd:Q350 ;
    p:P17 wds:Q350-s1 ;
    p:P625 wds:Q350-s2 ;
    p:P138 wds:Q350-s3 ;
    rdfs:label "Cambridge"@mul , "Кембридж"@ru ;
    schema:description "city in Cambridgeshire, England"@en .
wds:Q350-s1 a wikibase:Statement ; ps:P17 wd:Q145 ; wikibase:rank wikibase:NormalRank .
wds:Q350-s2 a wikibase:Statement ; ps:P625 "Point(0.1218 52.2053)"^^geo:wktLiteral ; wikibase:rank wikibase:NormalRank .
wds:Q350-s3 a wikibase:Statement ; ps:P138 wd:Q350 ; wikibase:rank wikibase:NormalRank .

wd:Q691283 wdt:P131 wd:Q350 ;
    p:P131 wds:Q691283-s1 , wds:Q691283-s2 ;
    rdfs:label "Colegio de San Juan"@es ;
    skos:altLabel "St John's College"@en .
wds:Q691283-s1 a wikibase:Statement ; ps:P131 wd:Q350 ; wikibase:rank wikibase:NormalRank .
wds:Q691283-s2 a wikibase:Statement ; ps:P131 wd:Q145 ; wikibase:rank wikibase:DeprecatedRank .

wd:Q5 rdfs:label "human"@en , "Mensch"@de ;
    schema:description "common name of Homo sapiens"@en .
wd:Q145 rdfs:label "United Kingdom"@en , "Vereinigtes Königreich"@de , "Royaume-Uni"@fr ;
    schema:description "Staat in Westeuropa"@de .
wd:Q174193 rdfs:label "United Kingdom of Great Britain and Ireland"@en-gb ,
        "Vereinigtes Königreich Großbritannien und Irland"@de .
wd:Q1765120 skos:altLabel "BA"@en .
"""


def write_wikidata_graph(directory: Path, name: str = "wikidata-mini.ttl") -> Path:
    path = Path(directory) / name
    path.write_text(TURTLE, encoding="utf-8")
    return path


def time(value: str) -> Literal:
    return Literal(value=value, datatype=XSD_DATETIME)


BORN = time("1952-03-11T00:00:00Z")
HEIGHT = Literal(value="1.96", datatype=XSD_DECIMAL)
NATIVE_NAME = Literal(value="Douglas Adams", lang="en")
VIAF = Literal(value="113230702")
CAMBRIDGE_POINT = Literal(value="Point(0.1218 52.2053)", datatype=GEO_WKT)


# -- the same graph as Wikidata entity JSON (what ``wbgetentities`` answers), for entity-API backends ---------

_VALUE_TYPES = {
    "wikibase-item": "wikibase-entityid",
    "time": "time",
    "quantity": "quantity",
    "monolingualtext": "monolingualtext",
    "external-id": "string",
    "globe-coordinate": "globecoordinate",
}


def _snak(prop: str, datatype: str, value: object) -> dict[str, object]:
    return {
        "snaktype": "value",
        "hash": hashlib.sha1(repr((prop, value)).encode("utf-8")).hexdigest(),
        "property": prop,
        "datavalue": {"value": value, "type": _VALUE_TYPES[datatype]},
        "datatype": datatype,
    }


def _item(prop: str, qid: str) -> dict[str, object]:
    return _snak(prop, "wikibase-item", {"entity-type": "item", "numeric-id": int(qid[1:]), "id": qid})


def _time(prop: str, iso: str) -> dict[str, object]:
    value = {"time": "+" + iso, "timezone": 0, "before": 0, "after": 0, "precision": 11}
    return _snak(prop, "time", {**value, "calendarmodel": "http://www.wikidata.org/entity/Q1985727"})


def _statement(
    statement_id: str, mainsnak: dict[str, object], rank: str = "normal", *qualifiers: dict[str, object]
) -> dict[str, object]:
    grouped: dict[str, list[dict[str, object]]] = {}
    for qualifier in qualifiers:
        grouped.setdefault(str(qualifier["property"]), []).append(qualifier)
    found: dict[str, object] = {"mainsnak": mainsnak, "type": "statement", "id": statement_id, "rank": rank}
    if grouped:
        found.update({"qualifiers": grouped, "qualifiers-order": list(grouped)})
    return found


def _terms(*values: tuple[str, str]) -> dict[str, dict[str, str]]:
    return {lang: {"language": lang, "value": value} for value, lang in values}


def _entity(qid: str, claims: list[dict[str, object]], **terms: object) -> dict[str, object]:
    grouped: dict[str, list[dict[str, object]]] = {}
    for claim in claims:
        mainsnak = claim["mainsnak"]
        assert isinstance(mainsnak, dict)
        grouped.setdefault(str(mainsnak["property"]), []).append(claim)
    return {"type": "item", "id": qid, "labels": {}, "descriptions": {}, "aliases": {}, **terms, "claims": grouped}


ENTITIES: dict[str, dict[str, object]] = {
    "Q42": _entity(
        "Q42",
        [
            _statement("Q42$s1", _item("P31", "Q5")),
            _statement(
                "Q42$s2",
                _item("P69", "Q691283"),
                "normal",
                _time("P580", "1971-01-01T00:00:00Z"),
                _time("P582", "1974-01-01T00:00:00Z"),
                _item("P512", "Q1765120"),
            ),
            _statement("Q42$s3", _item("P69", "Q691283"), "normal", _time("P580", "1980-01-01T00:00:00Z")),
            _statement("Q42$s4", _item("P27", "Q145"), "preferred", _time("P580", "1952-03-11T00:00:00Z")),
            _statement("Q42$s5", _item("P27", "Q174193")),
            _statement("Q42$s6", _item("P27", "Q999"), "deprecated", _time("P580", "1900-01-01T00:00:00Z")),
            _statement("Q42$s7", _time("P569", "1952-03-11T00:00:00Z")),
            _statement("Q42$s8", _snak("P2048", "quantity", {"amount": "+1.96", "unit": WD_UNIT_METRE})),
            _statement("Q42$s9", _snak("P1559", "monolingualtext", {"text": "Douglas Adams", "language": "en"})),
            _statement("Q42$s10", _snak("P214", "external-id", "113230702")),
        ],
        labels=_terms(
            ("Douglas Adams", "en"),
            ("Douglas Adams (UK)", "en-gb"),
            ("Дуглас Адамс", "ru"),
            ("ダグラス・アダムズ", "ja"),
        ),
        descriptions=_terms(
            ("English writer and humorist", "en"), ("britischer Schriftsteller", "de"), ("écrivain anglais", "fr")
        ),
        aliases={
            "en": [{"language": "en", "value": "Douglas Noël Adams"}],
            "de": [{"language": "de", "value": "DNA"}],
        },
    ),
    "Q350": _entity(
        "Q350",
        [
            _statement("Q350$s1", _item("P17", "Q145")),
            _statement(
                "Q350$s2",
                _snak(
                    "P625",
                    "globe-coordinate",
                    {
                        "latitude": 52.2053,
                        "longitude": 0.1218,
                        "altitude": None,
                        "precision": 0.0001,
                        "globe": "http://www.wikidata.org/entity/Q2",
                    },
                ),
            ),
            _statement("Q350$s3", _item("P138", "Q350")),
        ],
        labels=_terms(("Cambridge", "mul"), ("Кембридж", "ru")),
        descriptions=_terms(("city in Cambridgeshire, England", "en")),
    ),
    "Q691283": _entity(
        "Q691283",
        [
            _statement("Q691283$s1", _item("P131", "Q350")),
            _statement("Q691283$s2", _item("P131", "Q145"), "deprecated"),
        ],
        labels=_terms(("Colegio de San Juan", "es")),
        aliases={"en": [{"language": "en", "value": "St John's College"}]},
    ),
    "Q5": _entity(
        "Q5",
        [],
        labels=_terms(("human", "en"), ("Mensch", "de")),
        descriptions=_terms(("common name of Homo sapiens", "en")),
    ),
    "Q145": _entity(
        "Q145",
        [],
        labels=_terms(("United Kingdom", "en"), ("Vereinigtes Königreich", "de"), ("Royaume-Uni", "fr")),
        descriptions=_terms(("Staat in Westeuropa", "de")),
    ),
    "Q174193": _entity(
        "Q174193",
        [],
        labels=_terms(
            ("United Kingdom of Great Britain and Ireland", "en-gb"),
            ("Vereinigtes Königreich Großbritannien und Irland", "de"),
        ),
    ),
    "Q1765120": _entity("Q1765120", [], aliases={"en": [{"language": "en", "value": "BA"}]}),
}
"""The graph above as ``wbgetentities`` entity JSON (statement ids ``Q42$s1``; Q999 is missing), for a
backend that reads the Wikibase API; it must answer what the suite expects of the RDF graph."""
