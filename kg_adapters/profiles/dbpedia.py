"""DBpedia: resources (``dbr:``) by their bare name, ``dbo:`` ontology relations by their bare name,
``dbp:`` raw infobox properties as ``dbp:name``; the spellings of FactKG's DBpedia graph.

=============================================  ==========================
full IRI                                       id
=============================================  ==========================
``http://dbpedia.org/resource/Barack_Obama``   ``Barack_Obama``
``http://dbpedia.org/resource/Category:Jazz``  ``Category:Jazz``
``http://dbpedia.org/ontology/birthPlace``     ``birthPlace``
``http://dbpedia.org/property/birthPlace``     ``dbp:birthPlace``
anything else                                  the full IRI
=============================================  ==========================

``dbr:X`` and ``dbo:x`` are accepted as input and answered in the spelling above. A bare name is
never guessed into an IRI of another namespace: a name with ``://`` is a full IRI, anything else
a resource (or an ontology relation), and a malformed one raises InvalidTermError.
"""

from __future__ import annotations

from kg_adapters.errors import InvalidTermError
from kg_adapters.profiles.base import RDFS_COMMENT, RDFS_LABEL, Profile
from kg_adapters.sparql_terms import check_iri

DBR = "http://dbpedia.org/resource/"
DBO = "http://dbpedia.org/ontology/"
DBP = "http://dbpedia.org/property/"
_PREFIXES = {"dbr:": DBR, "dbo:": DBO, "dbp:": DBP}


def _is_full_iri(text: str) -> bool:
    return "://" in text or text.startswith("urn:")


class DBpediaProfile(Profile):
    """Names are ``rdfs:label``; descriptions ``rdfs:comment`` (short), then ``dbo:abstract``."""

    name = "dbpedia"
    entity_namespace = DBR
    relation_namespace = DBO
    label_predicates = (RDFS_LABEL,)
    description_predicates = (RDFS_COMMENT, DBO + "abstract")
    detect_namespaces = (DBR, DBO, DBP)

    def entity_iri(self, entity_id: str) -> str:
        text = self._text(entity_id, "entity id")
        if _is_full_iri(text):
            return check_iri(text)
        return self._in_namespace(DBR + text.removeprefix("dbr:"), "entity id", text)

    def relation_iri(self, relation_id: str) -> str:
        text = self._text(relation_id, "relation")
        if _is_full_iri(text):
            return check_iri(text)
        prefix, colon, local = text.partition(":")
        if colon and prefix + colon in ("dbo:", "dbp:"):
            return self._in_namespace(_PREFIXES[prefix + colon] + local, "relation", text)
        if colon:
            raise InvalidTermError(f"malformed dbpedia relation (dbo:/dbp: or a full IRI): {text[:200]!r}")
        return self._in_namespace(DBO + text, "relation", text)

    def entity_id(self, iri: str) -> str:
        local = iri[len(DBR) :] if iri.startswith(DBR) else ""
        return local if local and not _is_full_iri(local) and not local.startswith("dbr:") else iri

    def relation_id(self, iri: str) -> str:
        for namespace, spelling in ((DBO, ""), (DBP, "dbp:")):
            local = iri[len(namespace) :] if iri.startswith(namespace) else ""
            if local and ":" not in local and "/" not in local:
                return spelling + local
        return iri

    def is_local_id(self, text: str) -> bool:
        return bool(text) and not _is_full_iri(text) and not text.startswith("_:")

    def _text(self, value: object, what: str) -> str:
        if not isinstance(value, str):
            raise InvalidTermError(f"{what} must be a string, got {type(value).__name__}")
        if value.startswith("_:"):
            raise InvalidTermError(f"{what} {value!r} is a blank node; blank nodes cannot be addressed")
        return value

    def _in_namespace(self, full: str, what: str, text: str) -> str:
        if full in _PREFIXES.values():
            raise InvalidTermError(f"empty dbpedia {what}: {text!r}")
        try:
            return check_iri(full)
        except InvalidTermError as exc:
            raise InvalidTermError(f"malformed dbpedia {what} {text[:200]!r}: {exc}") from exc
