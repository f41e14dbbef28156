"""Wikidata: ``Q42`` entities (``wd:``) and ``P31`` truthy relations (``wdt:``), full statements
(``p:/ps:/pq:`` with ``wikibase:rank``) on request, ``mul`` as the language fallback of labels.

The namespaces are those of the Wikidata RDF dumps and the Wikidata Query Service."""

from __future__ import annotations

import re

from kg_adapters.profiles.base import RDFS_LABEL, Profile, StatementModel
from kg_adapters.profiles.relation_filter import RelationFilter

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
PROP = "http://www.wikidata.org/prop/"
PS = PROP + "statement/"
PQ = PROP + "qualifier/"
WIKIBASE = "http://wikiba.se/ontology#"
SCHEMA_DESCRIPTION = "http://schema.org/description"
_ENTITY_ID = re.compile(r"[QPL][1-9][0-9]*(-[SF][1-9][0-9]*)?")
_PROPERTY_ID = re.compile(r"P[1-9][0-9]*")

WIKIDATA_STATEMENTS = StatementModel(
    namespace=PROP,
    truthy_namespace=WDT,
    claim_namespace=PROP,
    value_namespace=PS,
    qualifier_namespace=PQ,
    rank_predicate=WIKIBASE + "rank",
    ranks={WIKIBASE + "PreferredRank": "preferred", WIKIBASE + "NormalRank": "normal"},
    property_id=_PROPERTY_ID,
)

WIKIDATA_RELATION_FILTER = RelationFilter(
    drop=frozenset({"http://schema.org/version", "http://schema.org/dateModified", "http://schema.org/about"}),
    drop_prefixes=(WIKIBASE,),
)
"""WDQS page bookkeeping on entities (revision, modification time, sitelink/statement counts)."""


class WikidataProfile(Profile):
    """Labels are ``rdfs:label`` and descriptions ``schema:description``; aliases (``skos:altLabel``)
    are never taken for a label."""

    name = "wikidata"
    entity_namespace = WD
    relation_namespace = WDT
    label_predicates = (RDFS_LABEL,)
    type_predicates = (WDT + "P31",)
    description_predicates = (SCHEMA_DESCRIPTION,)
    fallback_langs = ("mul",)
    statements = WIKIDATA_STATEMENTS
    relation_filter = WIKIDATA_RELATION_FILTER
    detect_namespaces = ("http://www.wikidata.org/",)

    def is_local_id(self, text: str) -> bool:
        return _ENTITY_ID.fullmatch(text) is not None

    def relation_iri(self, relation_id: str) -> str:
        if isinstance(relation_id, str) and not _PROPERTY_ID.fullmatch(relation_id) and self.is_local_id(relation_id):
            return self._expand(relation_id, None, "relation")
        return super().relation_iri(relation_id)
