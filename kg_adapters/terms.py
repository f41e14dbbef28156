"""Terms as stores and endpoints give them, and our literal convention, defined once for every backend's
term conversion (pyoxigraph, rdflib, SPARQL JSON) and for ``rdf_io``, and the predicates whose literals are
names (:data:`INDEXED_LABEL_PREDICATES`), for the name indexes and the loaders that build them.

A :data:`Term` is a full IRI (``str``), a blank node (``"_:label"``) or a :class:`Literal`;
:func:`plain_literal` turns a literal's parts into our :class:`Literal`.
"""

from __future__ import annotations

from kg_adapters.records import Literal
from kg_adapters.sparql_terms import GEO_WKT_LITERAL

Term = str | Literal
"""An IRI (str), a blank node ("_:label") or a Literal, as a store or endpoint spells it."""

XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
VIRTUOSO_GEOMETRY = "http://www.openlinksw.com/schemas/virtrdf#Geometry"
INDEXED_LABEL_PREDICATES = (
    "http://www.w3.org/2000/01/rdf-schema#label",
    "http://rdf.freebase.com/ns/type.object.name",
    "http://www.w3.org/2004/02/skos/core#prefLabel",
    "http://schema.org/name",
    "http://xmlns.com/foaf/0.1/name",
)
"""The predicates whose literals are names: what every backend's name index (``search``) holds."""


def plain_literal(value: str, datatype: str | None, lang: str | None) -> Literal:
    """Our literal convention: no datatype for plain and language-tagged strings. Virtuoso stores
    geo:wktLiteral as its own geometry type (and upper-cases the WKT): its datatype is reported
    as loaded, its text as Virtuoso writes it."""
    if lang:
        return Literal(value=value, lang=lang.lower())
    if datatype is None or datatype == XSD_STRING:
        return Literal(value=value)
    if datatype == VIRTUOSO_GEOMETRY:
        datatype = GEO_WKT_LITERAL
    return Literal(value=value, datatype=datatype)
