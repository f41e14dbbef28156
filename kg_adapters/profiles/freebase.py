"""Freebase: ``m.0d05w3`` entities and ``people.person.place_of_birth`` relations (RoG/WebQSP)."""

from __future__ import annotations

import re

from kg_adapters.profiles.base import RDF_TYPE, Profile
from kg_adapters.profiles.relation_filter import RelationFilter

FREEBASE_NS = "http://rdf.freebase.com/ns/"
FREEBASE_KEY_NS = "http://rdf.freebase.com/key/"
_LOCAL_ID = re.compile(r"[A-Za-z0-9_$][A-Za-z0-9_.$\-]*")
_MID = re.compile(r"[mg]\.[0-9a-z_]+")

FREEBASE_RELATION_FILTER = RelationFilter(
    drop_prefixes=(
        "type.",  # schema and object plumbing: type.object.type/name/key/permission, type.type.instance
        "common.",  # topic plumbing: descriptions, aliases, images, web pages, notable types
        "freebase.",  # editorial metadata: valuenotation, type_hints, flag
        "kg.",  # Google Knowledge Graph bookkeeping (kg.object_profile.prominent_type)
        "dataworld.",  # gardening hints left by data loads
        FREEBASE_KEY_NS,  # keys: wikipedia.en, authority.* ids
        "http://www.w3.org/1999/02/22-rdf-syntax-ns#",  # rdf:type, a copy of type.object.type
        "http://www.w3.org/2000/01/rdf-schema#",  # rdfs:label (a copy of the names), domain/range
        "http://www.w3.org/2002/07/owl#",  # owl:sameAs, owl:inverseOf
    )
)
"""What Freebase reasoners hide: Think-on-Graph drops ``type.object.type``, ``type.object.name``,
``common.*``, ``freebase.*`` and ``sameAs`` relations; the rest is the dump's other plumbing
(``type.*`` schema, keys, ``kg.*``/``dataworld.*`` bookkeeping, RDF/OWL copies). Names stay
reachable through ``labels``/``describe``/``search``, and any relation named explicitly."""


class FreebaseProfile(Profile):
    name = "freebase"
    entity_namespace = FREEBASE_NS
    relation_namespace = FREEBASE_NS
    label_predicates = (FREEBASE_NS + "type.object.name",)
    type_predicates = (FREEBASE_NS + "type.object.type", RDF_TYPE)
    description_predicates = (FREEBASE_NS + "common.topic.description",)
    detect_namespaces = (FREEBASE_NS,)
    relation_filter = FREEBASE_RELATION_FILTER
    has_cvt_nodes = True
    local_id_regex = _LOCAL_ID.pattern

    def is_cvt_candidate(self, node_id: str) -> bool:
        """CVTs are MIDs (``m.``/``g.``); schema ids such as ``film.performance`` never are."""
        return _MID.fullmatch(node_id) is not None

    def is_local_id(self, text: str) -> bool:
        return ":" not in text and _LOCAL_ID.fullmatch(text) is not None
