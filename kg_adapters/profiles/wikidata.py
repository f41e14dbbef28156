"""Wikidata: ``Q42`` entities (``wd:``) and ``P31`` truthy relations (``wdt:``)."""

from __future__ import annotations

import re

from kg_adapters.profiles.base import RDFS_LABEL, Profile

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
_ENTITY_ID = re.compile(r"[QPL][1-9][0-9]*(-[SF][1-9][0-9]*)?")
_PROPERTY_ID = re.compile(r"P[1-9][0-9]*")


class WikidataProfile(Profile):
    name = "wikidata"
    entity_namespace = WD
    relation_namespace = WDT
    label_predicates = (RDFS_LABEL,)
    description_predicates = ("http://schema.org/description",)

    def is_local_id(self, text: str) -> bool:
        return _ENTITY_ID.fullmatch(text) is not None

    def relation_iri(self, relation_id: str) -> str:
        if isinstance(relation_id, str) and not _PROPERTY_ID.fullmatch(relation_id) and self.is_local_id(
            relation_id
        ):
            return self._expand(relation_id, None, "relation")
        return super().relation_iri(relation_id)
