"""Wikidata entity JSON (Special:EntityData, ``wbgetentities``, the JSON dumps) as our records and
as RDF in the shape of the Wikidata RDF dumps, which the Wikidata Query Service (WDQS) serves.

One place decides how a Wikidata value becomes a :class:`~kg_adapters.records.Node`, so the
``wikidata+api:`` backend and a store loaded from a JSON dump give the same answers as WDQS.
Claims are parsed with qwikidata (references are not read). Values, as WDQS renders them:

==========================================  ===================================================
datatype                                    value
==========================================  ===================================================
wikibase-item / -property / -lexeme / ...   entity id (``Q5``, ``P31``, ``L7-F4``; the full IRI of
                                            ids the profile does not compact, as ``E10``)
time                                        ``xsd:dateTime`` cleaned as Wikibase's RDF builder
                                            does: no ``+``; month and day below the precision
                                            set to 01 (``+1970-00-00`` -> ``1970-01-01T00:00:00Z``),
                                            days past the month's end clamped; Julian dates of day
                                            precision converted to Gregorian; BCE years in XSD 1.1
                                            numbering (1 BCE is ``0000``); year 0 has no value
quantity                                    ``xsd:decimal`` of the amount in canonical form
                                            (``+1.960`` -> ``1.96``); unit and bounds dropped
monolingualtext                             language-tagged string
string, external-id, musical-notation       plain string
url                                         IRI (a value that is not a valid IRI: plain string)
commonsMedia                                IRI ``http://commons.wikimedia.org/wiki/Special:FilePath/<file>``
geo-shape, tabular-data                     IRI ``http://commons.wikimedia.org/data/main/<page>``
globe-coordinate                            ``geo:wktLiteral`` ``Point(lon lat)``, ``<globe> Point(...)``
                                            off Earth
math                                        literal typed ``http://www.w3.org/1998/Math/MathML``
==========================================  ===================================================

"Unknown value" (somevalue) and "no value" (novalue) snaks have no value here: they are left out
of truthy edges, of statements and of qualifiers. (WDQS represents them as generated blank IRIs
and ``wdno:`` classes, neither an entity a reasoner could use.) Such a statement still counts
when the best rank of its property is chosen, as in WDQS: a preferred "no value" hides the
normal-rank values from the truthy edges.

Truthy edges are WDQS's ``wdt:`` triples: the statements of the best non-deprecated rank of each
property (preferred if there is one, else normal), one edge per distinct value. Statements
(``neighbors(..., qualifiers=True)``) are every non-deprecated statement with its qualifiers and
rank, one edge per statement.

Items, properties and lexemes are read (a lexeme's lemmas are its labels; its forms and senses are
not read). Labels, descriptions and aliases keep the language of their value: a ``wbgetentities`` answer with
``languagefallback`` reports the language actually found (``mul`` for an ``en`` request, say).
Language codes RDF cannot carry are left out.
"""

from __future__ import annotations

import decimal
import re
import warnings
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, quote_plus

from kg_adapters.errors import InvalidTermError
from kg_adapters.profiles.base import RDFS_LABEL
from kg_adapters.profiles.wikidata import PQ, PROP, PS, SCHEMA_DESCRIPTION, WD, WDT, WIKIBASE, WikidataProfile
from kg_adapters.records import NO_QUALIFIERS, Edge, Literal, Node, Qualifiers
from kg_adapters.sparql_terms import GEO_WKT_LITERAL, check_iri, check_lang

with warnings.catch_warnings():  # qwikidata's typedefs use the deprecated mypy_extensions.TypedDict
    warnings.simplefilter("ignore", DeprecationWarning)
    from qwikidata.claim import WikidataClaim
    from qwikidata.snak import WikidataSnak

WDS = WD + "statement/"
SKOS_ALT_LABEL = "http://www.w3.org/2004/02/skos/core#altLabel"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_DATETIME = XSD + "dateTime"
XSD_DECIMAL = XSD + "decimal"
MATHML = "http://www.w3.org/1998/Math/MathML"
COMMONS_FILE = "http://commons.wikimedia.org/wiki/Special:FilePath/"
COMMONS_DATA = "http://commons.wikimedia.org/data/main/"
EARTH = WD + "Q2"
JULIAN = WD + "Q1985786"
RANKS = ("preferred", "normal", "deprecated")
FALLBACK_LANGS = WikidataProfile.fallback_langs
"""Wikidata's language-neutral labels (``mul``): tried after the caller's languages, and always loaded."""

_PROFILE = WikidataProfile()
_ENTITY_ID = re.compile(r"[A-Z][1-9][0-9]*(?:-[A-Z][1-9][0-9]*)?")
_PROPERTY_ID = re.compile(r"P[1-9][0-9]*")
_TIME = re.compile(r"([+-]?)([0-9]+)-([0-9]{2})-([0-9]{2})T(.+)")
_DECIMALS = decimal.Context(prec=2000, Emin=-999999, Emax=999999)


@dataclass(frozen=True, kw_only=True, slots=True)
class Statement:
    """One statement: its main value (None for "unknown"/"no value"), rank, whether it is of
    the best rank of its property (truthy) and its qualifiers (values only)."""

    id: str
    property: str
    value: Node | None
    rank: str
    best: bool
    qualifiers: Qualifiers = NO_QUALIFIERS


@dataclass(frozen=True, kw_only=True, slots=True)
class WikidataEntity:
    """An item, property or lexeme: terms as language-tagged literals, and its statements."""

    id: str
    labels: tuple[Literal, ...] = ()
    descriptions: tuple[Literal, ...] = ()
    aliases: tuple[Literal, ...] = ()
    statements: tuple[Statement, ...] = ()

    def truthy_edges(self) -> list[Edge]:
        """WDQS's ``wdt:`` edges: best-rank values, each distinct (head, relation, tail) once."""
        edges = (
            Edge(head=self.id, relation=s.property, tail=s.value)
            for s in self.statements
            if s.best and s.value is not None
        )
        return list(dict.fromkeys(edges))

    def statement_edges(self) -> list[Edge]:
        """Every non-deprecated statement with a value, with its qualifiers and rank."""
        return [
            Edge(head=self.id, relation=s.property, tail=s.value, qualifiers=s.qualifiers, rank=s.rank)
            for s in self.statements
            if s.value is not None and s.rank != "deprecated"
        ]


def parse_entity(data: Mapping[str, Any]) -> WikidataEntity:
    """One entity of an entity JSON document (a value of its ``entities`` map, or a dump line).

    Raises:
        InvalidTermError: the JSON is not a well-formed Wikidata entity.
    """
    if not isinstance(data, Mapping):
        raise InvalidTermError(f"an entity must be a JSON object, got {type(data).__name__}")
    entity_id = data.get("id")
    if not isinstance(entity_id, str) or not _PROFILE.is_local_id(entity_id):
        raise InvalidTermError(f"malformed entity id: {entity_id!r:.100}")
    try:
        labels = data.get("labels") if "labels" in data else data.get("lemmas")
        return WikidataEntity(
            id=entity_id,
            labels=_terms(labels),
            descriptions=_terms(data.get("descriptions")),
            aliases=_terms(data.get("aliases")),
            statements=tuple(_statements(entity_id, data.get("claims"))),
        )
    except (KeyError, TypeError, ValueError, OverflowError, AttributeError, decimal.InvalidOperation) as exc:
        if isinstance(exc, InvalidTermError):
            raise
        raise InvalidTermError(f"malformed entity {entity_id}: {type(exc).__name__}: {exc}") from exc


def _terms(terms: Any) -> tuple[Literal, ...]:
    """Labels/descriptions (``{lang: {language, value}}``) or aliases (``{lang: [...]}``)."""
    if not terms:  # the dumps write an empty map as []
        return ()
    found: dict[Literal, None] = {}
    for entries in terms.values():
        for entry in entries if isinstance(entries, list) else (entries,):
            lang = _lang(entry["language"])
            if lang is not None:
                found[Literal(value=str(entry["value"]), lang=lang)] = None
    return tuple(found)


_LANGS: dict[str, str | None] = {}


def _lang(code: str) -> str | None:
    """The lower-cased language tag, or None when RDF cannot carry it (remembered per code)."""
    if code not in _LANGS:
        try:
            _LANGS[code] = check_lang(code)
        except InvalidTermError:
            _LANGS[code] = None
    return _LANGS[code]


def _statements(entity_id: str, claims: Any) -> Iterator[Statement]:
    if not claims:
        return
    for property_id, claim_list in claims.items():
        if not _PROPERTY_ID.fullmatch(property_id):
            raise InvalidTermError(f"malformed property id {property_id!r:.100} in {entity_id}")
        parsed = [WikidataClaim(_without_references(claim)) for claim in claim_list]
        ranks = {claim.rank for claim in parsed}
        best = "preferred" if "preferred" in ranks else "normal"
        for claim in parsed:
            if claim.rank not in RANKS:
                raise InvalidTermError(f"unknown rank {claim.rank!r:.50} in {entity_id}")
            if claim.property_id != property_id:
                raise InvalidTermError(f"a {claim.property_id} claim is listed under {property_id} in {entity_id}")
            yield Statement(
                id=str(claim.claim_id),
                property=property_id,
                value=snak_value(claim.mainsnak),
                rank=claim.rank,
                best=claim.rank == best,
                qualifiers=Qualifiers(_qualifier_values(claim)),
            )


def _without_references(claim: Mapping[str, Any]) -> dict[str, Any]:
    """The claim without references (never read), with ``qualifiers-order`` (qwikidata reads
    qualifiers in that order only, and some producers leave it out)."""
    trimmed = {key: value for key, value in claim.items() if key != "references"}
    if trimmed.get("qualifiers") and "qualifiers-order" not in trimmed:
        trimmed["qualifiers-order"] = list(trimmed["qualifiers"])
    return trimmed


def _qualifier_values(claim: WikidataClaim) -> Iterator[tuple[str, list[Node]]]:
    for property_id, qualifiers in claim.qualifiers.items():
        values = [snak_value(qualifier.snak) for qualifier in qualifiers]
        kept = [value for value in values if value is not None]
        if kept:
            yield property_id, kept


def snak_value(snak: WikidataSnak) -> Node | None:
    """The value of a snak as WDQS renders it (see the module docstring); None for "unknown
    value", "no value" and values WDQS has no simple value for."""
    if snak.snaktype != "value" or snak.datavalue is None:
        return None
    datatype, kind, value = snak.snak_datatype, snak.value_datatype, snak.datavalue.value
    if kind == "wikibase-entityid":
        entity_id = value.get("id") or _numeric_id(value)
        if not isinstance(entity_id, str) or not _ENTITY_ID.fullmatch(entity_id):
            raise InvalidTermError(f"malformed entity id value: {entity_id!r:.100}")
        return _PROFILE.entity_id(WD + entity_id)  # E10 (an entity schema) stays a full IRI
    if kind == "time":
        cleaned = xsd_datetime(str(value["time"]), int(value["precision"]), str(value.get("calendarmodel", "")))
        return None if cleaned is None else Literal(value=cleaned, datatype=XSD_DATETIME)
    if kind == "quantity":
        return Literal(value=canonical_decimal(str(value["amount"])), datatype=XSD_DECIMAL)
    if kind == "monolingualtext":
        lang = _lang(str(value["language"]))
        return None if lang is None else Literal(value=str(value["text"]), lang=lang)
    if kind == "globecoordinate":
        return Literal(value=wkt_point(value), datatype=GEO_WKT_LITERAL)
    if kind != "string":
        return None
    text = str(value)
    if datatype == "url":
        return _iri_or_string(text)
    if datatype == "commonsMedia":
        return COMMONS_FILE + quote(text, safe="")
    if datatype in ("geo-shape", "tabular-data"):
        return COMMONS_DATA + quote_plus(text, safe=";@$!*(),/~:")
    if datatype == "math":
        return Literal(value=text, datatype=MATHML)
    return Literal(value=text)


def _numeric_id(value: Mapping[str, Any]) -> str | None:
    """The id of an entity value written in the old form (entity-type + numeric-id)."""
    prefix = {"item": "Q", "property": "P", "lexeme": "L"}.get(str(value.get("entity-type")))
    number = value.get("numeric-id")
    return f"{prefix}{number}" if prefix and isinstance(number, int) else None


def _iri_or_string(text: str) -> Node:
    try:
        return check_iri(text)
    except InvalidTermError:
        return Literal(value=text)


def xsd_datetime(time: str, precision: int, calendar: str) -> str | None:
    """A Wikibase time value as WDQS's ``xsd:dateTime`` text (None for year 0)."""
    match = _TIME.fullmatch(time)
    if match is None:
        raise InvalidTermError(f"malformed time value: {time!r:.100}")
    sign, year_text, month_text, day_text, clock = match.groups()
    year = int(year_text)
    if year == 0:
        return None
    negative = sign == "-"
    month = min(max(int(month_text), 1), 12)
    day = max(int(day_text), 1)
    astronomical = 1 - year if negative else year
    if calendar == JULIAN and precision >= 11 and astronomical >= -4712:
        gregorian_year, month, day = _julian_to_gregorian(astronomical, month, day)
        return f"{'-' if gregorian_year < 0 else ''}{abs(gregorian_year):04d}-{month:02d}-{day:02d}T{clock}"
    if precision <= 9:
        month = day = 1
    elif precision == 10:
        day = 1
    day = min(day, _days_in_month(astronomical, month))
    if negative and precision >= 9:  # XSD 1.1 numbering: 1 BCE is year 0
        year -= 1
        negative = year != 0
    return f"{'-' if negative else ''}{year:04d}-{month:02d}-{day:02d}T{clock}"


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _julian_to_gregorian(year: int, month: int, day: int) -> tuple[int, int, int]:
    """A proleptic Julian date as a proleptic Gregorian one (astronomical years), via the Julian day."""
    shift = (14 - month) // 12
    y, m = year + 4800 - shift, month + 12 * shift - 3
    jdn = day + (153 * m + 2) // 5 + 365 * y + y // 4 - 32083
    a = jdn + 32044
    b = (4 * a + 3) // 146097
    c = a - 146097 * b // 4
    d = (4 * c + 3) // 1461
    e = c - 1461 * d // 4
    m = (5 * e + 2) // 153
    return 100 * b + d - 4800 + m // 10, m + 3 - 12 * (m // 10), e - (153 * m + 2) // 5 + 1


def canonical_decimal(amount: str) -> str:
    """The canonical ``xsd:decimal`` text of a Wikibase amount (``+1.960`` -> ``1.96``, ``+0`` -> ``0``),
    which Oxigraph also stores, so the API backend and a loaded store agree."""
    number = decimal.Decimal(amount)
    if not number.is_finite():
        raise InvalidTermError(f"not a decimal amount: {amount!r:.100}")
    if number.is_zero():
        return "0"
    return format(number.normalize(_DECIMALS), "f")


def wkt_point(value: Mapping[str, Any]) -> str:
    """``Point(longitude latitude)``, numbers as PHP prints floats (14 significant digits)."""
    point = f"Point({_php_float(float(value['longitude']))} {_php_float(float(value['latitude']))})"
    globe = value.get("globe") or EARTH
    return point if globe == EARTH else f"<{check_iri(str(globe))}> {point}"


def _php_float(number: float) -> str:
    text = f"{number:.14G}"
    if "E" not in text:
        return text
    mantissa, exponent = text.split("E")
    if "." not in mantissa:
        mantissa += ".0"
    return f"{mantissa}E{int(exponent):+d}"


# -- RDF ---------------------------------------------------------------------------------------------


def entity_ntriples(
    entity: WikidataEntity, *, languages: Collection[str] | None = None, statements: bool = False
) -> list[str]:
    """The entity as N-Triples statements (one per item) in the shape of the Wikidata RDF dumps:

    * ``wd:Q wdt:P value`` for each truthy edge;
    * ``rdfs:label``, ``schema:description`` and ``skos:altLabel`` literals in ``languages``
      (None: all) -- a tag counts when it is a chosen language, a regional variant of one
      (``en-gb`` for ``en``), or ``mul``;
    * with ``statements``, every statement with a value, deprecated ones included as in WDQS::

        wd:Q p:P wds:ID . wds:ID a wikibase:Statement [, wikibase:BestRank] ;
            ps:P value ; pq:Q qualifier-value ... ; wikibase:rank wikibase:NormalRank .

    Every IRI was validated when the entity was parsed and every literal is escaped here, so the
    text always parses (N-Triples text bulk loads several times faster than pyoxigraph terms).

    Raises:
        InvalidTermError: a value cannot be written as RDF (a malformed statement id).
    """
    wanted = None if languages is None else frozenset(check_lang(tag) for tag in (*languages, *FALLBACK_LANGS))
    subject = f"<{WD}{entity.id}> "
    lines = [f"{subject}<{WDT}{edge.relation}> {_nt(edge.tail)} ." for edge in entity.truthy_edges()]
    for predicate, literals in (
        (RDFS_LABEL, entity.labels),
        (SCHEMA_DESCRIPTION, entity.descriptions),
        (SKOS_ALT_LABEL, entity.aliases),
    ):
        lines.extend(
            f"{subject}<{predicate}> {_nt(literal)} ."
            for literal in literals
            if wanted is None or literal.lang in wanted or (literal.lang or "").split("-")[0] in wanted
        )
    if not statements:
        return lines
    for statement in entity.statements:
        if statement.value is None:
            continue
        if not _STATEMENT_ID.fullmatch(statement.id):
            raise InvalidTermError(f"malformed statement id in {entity.id}: {statement.id!r:.100}")
        node = f"<{WDS}{statement.id.replace('$', '-')}> "
        lines.append(f"{subject}<{PROP}{statement.property}> {node.rstrip()} .")
        lines.append(f"{node}<{RDF_TYPE}> <{WIKIBASE}Statement> .")
        if statement.best:
            lines.append(f"{node}<{RDF_TYPE}> <{WIKIBASE}BestRank> .")
        lines.append(f"{node}<{WIKIBASE}rank> <{WIKIBASE}{statement.rank.capitalize()}Rank> .")
        lines.append(f"{node}<{PS}{statement.property}> {_nt(statement.value)} .")
        lines.extend(
            f"{node}<{PQ}{qualifier}> {_nt(value)} ."
            for qualifier, values in statement.qualifiers.items()
            for value in values
        )
    return lines


_STATEMENT_ID = re.compile(r"[A-Za-z0-9_$-]+")
_NT_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"})


def _nt(node: Node) -> str:
    """A value in N-Triples: entity ids in ``wd:``, IRIs as they are, literals escaped."""
    if isinstance(node, Literal):
        text = '"' + node.value.translate(_NT_ESCAPES) + '"'
        if node.lang is not None:
            return f"{text}@{node.lang}"
        return f"{text}^^<{node.datatype}>" if node.datatype is not None else text
    return f"<{WD}{node}>" if _PROFILE.is_local_id(node) else f"<{node}>"
