"""Freebase: ``m.0d05w3`` entities and ``people.person.place_of_birth`` relations (RoG/WebQSP)."""

from __future__ import annotations

import re

from kg_adapters.profiles.base import Profile

FREEBASE_NS = "http://rdf.freebase.com/ns/"
_LOCAL_ID = re.compile(r"[A-Za-z0-9_$][A-Za-z0-9_.$\-]*")


class FreebaseProfile(Profile):
    name = "freebase"
    entity_namespace = FREEBASE_NS
    relation_namespace = FREEBASE_NS
    label_predicates = (FREEBASE_NS + "type.object.name",)
    description_predicates = (FREEBASE_NS + "common.topic.description",)
    detect_namespaces = (FREEBASE_NS,)

    def is_local_id(self, text: str) -> bool:
        return ":" not in text and _LOCAL_ID.fullmatch(text) is not None
