"""Which serialization answers a SPARQL request: ``Accept`` negotiation and the ``format=`` spellings.

A SELECT or ASK answers in SPARQL JSON, XML, CSV or TSV; a CONSTRUCT or DESCRIBE (and the service
description) in N-Triples, Turtle, N3, RDF/XML or JSON-LD -- every one written by Oxigraph's own
streaming serializers, named here by their attribute of ``pyoxigraph.QueryResultsFormat`` /
``pyoxigraph.RdfFormat``.

Clients ask in two ways, and this module takes both as they are sent:

- ``Accept`` (RFC 9110): q-values, ``type/*`` and ``*/*`` wildcards, other parameters ignored (a quoted
  value may hold commas and semicolons), ``q=0`` a refusal even where a wildcard would match. The most
  specific range that matches a format's own media type gives its weight; a format's other spellings
  (``application/json`` for SPARQL JSON) count only when named. Equal weights go to the exact match,
  then to the one listed first, then to the form's default (SPARQL JSON; N-Triples for graphs).
- ``format=`` / ``output=`` / ``results=`` parameters, in the spellings Virtuoso taught clients:
  SPARQLWrapper sends its return format under all three names (``xml`` by default, also ``json``,
  ``n3``, ``turtle``, ``rdf+xml``, ``json-ld``, ``csv``, ``tsv``), some values twice, the second time
  as a media type list; a ``+`` typed into a URL by hand arrives as a space and is read back as ``+``.
  A spelling wins over ``Accept``. One that names only formats of the other kind (``turtle`` for a
  SELECT) is set aside for ``Accept``; one that names no format at all is refused (406), as is an
  ``Accept`` that nothing offered satisfies.

``xml`` means SPARQL XML for a SELECT and RDF/XML for a CONSTRUCT, ``json`` SPARQL JSON or JSON-LD,
whether spelled or asked by media type -- the latter only as a last resort, when no graph format is
acceptable (:data:`LAST_RESORT`): rdflib's SPARQLStore set to ``json`` asks for a CONSTRUCT answer as
``application/sparql-results+json`` alone, and parses the JSON-LD it gets.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

W3C_FORMATS = "http://www.w3.org/ns/formats/"


@dataclass(frozen=True, kw_only=True)
class Format:
    """One serialization an answer can be written in."""

    name: str
    """Its attribute of ``pyoxigraph.QueryResultsFormat`` (results) or ``pyoxigraph.RdfFormat`` (graphs)."""
    media: str
    """The media type it is answered as (``Content-Type``)."""
    aliases: tuple[str, ...] = ()
    """Other media types that ask for it when named in ``Accept`` or ``format=``."""
    spellings: tuple[str, ...] = ()
    """Short ``format=`` values that ask for it (lower case)."""
    iri: str
    """Its IRI in the W3C's format namespace (the service description lists these)."""

    @property
    def content_type(self) -> str:
        return self.media + "; charset=utf-8" if self.media.startswith("text/") else self.media


def _table(*rows: tuple[str, str, str, str, str]) -> tuple[Format, ...]:
    """Formats from rows of (pyoxigraph name, media type, W3C format name, spellings, other media
    types), the last two space-separated."""
    return tuple(
        Format(
            name=name, media=media, iri=W3C_FORMATS + w3c, spellings=tuple(spelled.split()), aliases=tuple(more.split())
        )
        for name, media, w3c, spelled, more in rows
    )


RESULT_FORMATS: tuple[Format, ...] = _table(
    ("JSON", "application/sparql-results+json", "SPARQL_Results_JSON", "json srj sparql-results+json",
     "application/json application/x-sparqlstar-results+json text/javascript application/javascript"),
    ("XML", "application/sparql-results+xml", "SPARQL_Results_XML", "xml srx sparql-results+xml",
     "application/xml text/xml"),
    ("CSV", "text/csv", "SPARQL_Results_CSV", "csv", ""),
    ("TSV", "text/tab-separated-values", "SPARQL_Results_TSV", "tsv", ""),
)  # fmt: skip
"""SELECT and ASK answers; the first is the default."""

GRAPH_FORMATS: tuple[Format, ...] = _table(
    ("N_TRIPLES", "application/n-triples", "N-Triples", "nt ntriples n-triples", "text/plain"),
    ("TURTLE", "text/turtle", "Turtle", "turtle ttl", "application/turtle application/x-turtle"),
    ("RDF_XML", "application/rdf+xml", "RDF_XML", "xml rdf+xml rdfxml rdf/xml rdf",
     "application/xml text/xml"),
    ("JSON_LD", "application/ld+json", "JSON-LD", "json-ld jsonld json",
     "application/json application/x-json+ld"),
    ("N3", "text/n3", "N3", "n3", "text/rdf+n3 application/n3"),
)  # fmt: skip
"""CONSTRUCT and DESCRIBE answers (and the service description); the first is the default."""

ALL_FORMATS: tuple[Format, ...] = RESULT_FORMATS + GRAPH_FORMATS

FORMAT_PARAMETERS = ("format", "output", "results")
"""Request parameters that name a format (Virtuoso's, Joseki's/Fuseki's, Rasqal's); SPARQLWrapper sends all three."""


class NotAcceptable(ValueError):
    """No offered format satisfies the request (HTTP 406); the message says what is available."""


def choose_format(offered: Sequence[Format], accept: str, spelled: Iterable[str] = (), *, what: str) -> Format:
    """The format of ``offered`` (default first) that ``spelled`` ``format=`` values, else the
    ``Accept`` header ask for; ``what`` names the answer in messages ("a SELECT answer").

    Raises:
        NotAcceptable: a ``format=`` value that names no format, or an ``Accept`` header that
            refuses every offered format.
    """
    unknown: list[str] = []
    for value in spelled:
        text = _FORM_DECODED_PLUS.sub("+", value.strip().lower())
        if not text:
            continue
        found = _spelled(offered, text)
        if found is not None:
            return found
        if _spelled(ALL_FORMATS, text) is None:  # else a format of the other kind: set aside for Accept
            unknown.append(value)
    if unknown:
        names = sorted({s for f in offered for s in f.spellings})
        raise NotAcceptable(f"unknown format {unknown[0][:80]!r} for {what}; format= takes {', '.join(names)}")
    if not any(_media_ranges(accept)):  # no header, or nothing in it that names a media range
        return offered[0]
    found = negotiate(offered, accept)
    if found is None:
        available = ", ".join(f.media for f in offered)
        raise NotAcceptable(f"cannot answer {what} in {accept.strip()[:200]!r}; available: {available}")
    return found


_FORM_DECODED_PLUS = re.compile(r"(?<=[\w.-]) +(?=[\w.-])")
"""Spaces inside a ``format=`` name: a ``+`` that form decoding read as a space (``?format=rdf+xml``
typed into a URL by hand); no media type or spelling holds a space, so each was a ``+``."""

LAST_RESORT = {
    "application/sparql-results+json": "application/ld+json",
    "application/sparql-results+xml": "application/rdf+xml",
}
"""What a request naming only results formats gets for a graph: the same syntax family, which is what
rdflib's SPARQLStore set to ``json`` parses. Only when nothing named is a graph format: a client that
also names one (ours asks ``application/sparql-results+json, application/n-triples;q=0.5``) gets it."""


def negotiate(offered: Sequence[Format], accept: str) -> Format | None:
    """The format of ``offered`` the ``Accept`` header weighs highest, None when it refuses them all
    (after reading SPARQL JSON/XML as JSON-LD/RDF-XML where nothing else fits: :data:`LAST_RESORT`)."""
    ranges = list(_media_ranges(accept))
    chosen = _best(offered, ranges)
    if chosen is None and any(media in LAST_RESORT for media, _, _ in ranges):
        chosen = _best(offered, [(LAST_RESORT.get(media, media), q, position) for media, q, position in ranges])
    return chosen


def _best(offered: Sequence[Format], ranges: list[tuple[str, float, int]]) -> Format | None:
    best: tuple[float, int, int, int] | None = None
    chosen: Format | None = None
    for order, candidate in enumerate(offered):
        weight = _weight(candidate, ranges)
        if weight is None:
            continue
        quality, specificity, position = weight
        key = (quality, specificity, -position, -order)
        if quality > 0 and (best is None or key > best):
            best, chosen = key, candidate
    return chosen


def _weight(candidate: Format, ranges: list[tuple[str, float, int]]) -> tuple[float, int, int] | None:
    """(q, specificity 2/1/0, position in Accept) that decides ``candidate``: the most specific range
    matching its media type, or a range naming one of its aliases if that weighs more; None when none does."""
    kind = candidate.media.split("/")[0]
    own: tuple[float, int, int] | None = None
    named: tuple[float, int, int] | None = None
    for media, quality, position in ranges:
        if media in candidate.aliases:
            if named is None or quality > named[0]:
                named = (quality, 2, position)
            continue
        specificity = {candidate.media: 2, f"{kind}/*": 1, "*/*": 0}.get(media)
        if specificity is not None and (own is None or specificity > own[1]):
            own = (quality, specificity, position)
    weights = [weight for weight in (own, named) if weight is not None]
    return max(weights, key=lambda weight: (weight[0], weight[1], -weight[2])) if weights else None


def _media_ranges(accept: str) -> Iterable[tuple[str, float, int]]:
    """(media range lower-cased, q, position) of each part of an ``Accept`` header."""
    for position, part in enumerate(_split_unquoted(accept, ",")):
        fields = [field.strip() for field in _split_unquoted(part, ";")]
        media = fields[0].lower()
        if not media:
            continue
        if "/" not in media:
            media = "*/*" if media == "*" else media  # a bare "*" (old Java clients) means everything
        quality = 1.0
        for parameter in fields[1:]:
            name, _, value = parameter.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = min(max(float(value.strip()), 0.0), 1.0)
                except ValueError:
                    quality = 0.0
        yield media, quality if quality == quality else 0.0, position  # NaN counts as a refusal


def _split_unquoted(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` outside quoted strings (RFC 9110: a parameter value may be a
    quoted string holding commas, semicolons and backslash escapes); one pass, so linear in the text."""
    parts: list[str] = []
    start, quoted, escaped = 0, False, False
    for index, character in enumerate(text):
        if escaped:
            escaped = False
        elif quoted and character == "\\":
            escaped = True
        elif character == '"':
            quoted = not quoted
        elif character == separator and not quoted:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def _spelled(offered: Sequence[Format], text: str) -> Format | None:
    """The format of ``offered`` a lower-cased ``format=`` value names: a short spelling (``turtle``),
    or media types (``application/rdf+xml``; SPARQLWrapper also sends a whole ``Accept`` list there),
    read as an ``Accept`` header without wildcards."""
    if "/" not in text:
        return next((candidate for candidate in offered if text in candidate.spellings), None)
    named = ",".join(part for part in _split_unquoted(text, ",") if "*" not in part.split(";")[0])
    return negotiate(offered, named) if named else None
