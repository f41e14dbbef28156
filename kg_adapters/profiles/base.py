"""The profile base class: id compaction/expansion and label predicates."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass

from kg_adapters.errors import InvalidTermError
from kg_adapters.profiles.relation_filter import NO_FILTER, RelationFilter
from kg_adapters.sparql_terms import check_iri, check_langs

RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
RDFS_COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
_ABSOLUTE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_BLANK_NODE = re.compile(r"_:[A-Za-z0-9_][A-Za-z0-9_.\-]*")


def is_blank_node(node_id: str) -> bool:
    """Whether ``node_id`` names a blank node (``_:label``) as backends report them."""
    return node_id.startswith("_:")


@dataclass(frozen=True, kw_only=True)
class StatementModel:
    """Where a graph keeps full statements beside its truthy edges (the Wikibase RDF model)::

        entity  <claim_namespace>P      statement
        statement <value_namespace>P    value
        statement <qualifier_namespace>Q  qualifier value      (any number)
        statement <rank_predicate>      rank

    ``ranks`` maps the rank IRIs a statement may have to the names ``Edge.rank`` reports; a
    statement of any other rank (deprecated) is left out. Statements replace the truthy edges
    and every other edge under ``namespace`` (the statement plumbing) in statement answers."""

    namespace: str
    truthy_namespace: str
    claim_namespace: str
    value_namespace: str
    qualifier_namespace: str
    rank_predicate: str
    ranks: Mapping[str, str]
    property_id: re.Pattern[str]
    """The local names of properties (``P69``) in the namespaces above."""

    def property_of(self, iri: str, namespace: str) -> str | None:
        """The property id of ``iri`` when it is ``namespace`` + a property id, else None."""
        if iri.startswith(namespace) and self.property_id.fullmatch(iri[len(namespace) :]):
            return iri[len(namespace) :]
        return None


class Profile:
    """Generic RDF: ids are full IRIs. Subclasses map namespaces to compact ids."""

    name = "generic"
    label_predicates: tuple[str, ...] = (RDFS_LABEL,)
    description_predicates: tuple[str, ...] = (RDFS_COMMENT,)
    """In order of preference (a description of the first predicate wins within one language)."""
    type_predicates: tuple[str, ...] = (RDF_TYPE,)
    """What gives an entity's types (a planner's view of a relation's heads and tails)."""
    entity_namespace: str | None = None
    relation_namespace: str | None = None
    fallback_langs: tuple[str, ...] = ()
    """Language tags tried after the caller's (Wikidata's ``mul``), before untagged and other names."""
    statements: StatementModel | None = None
    """Full statements with qualifiers and ranks (``neighbors(..., qualifiers=True)``), if the graph has them."""
    detect_namespaces: tuple[str, ...] = ()
    """IRI prefixes of subjects and predicates that mark a graph of this profile (``?profile=auto``)."""
    detection: str | None = None
    """Why ``?profile=auto`` chose this profile (None when the profile was named)."""
    relation_filter: RelationFilter = NO_FILTER
    """Relations hidden unless named (see :mod:`kg_adapters.profiles.relation_filter`)."""
    has_cvt_nodes = False
    """Whether the graph has CVT (mediator) nodes: nameless entities that group one n-ary fact."""
    local_id_regex: str | None = None
    """:meth:`is_local_id` as a regular expression a SPARQL engine can run (REGEX), when it is one:
    lets a relation filter's compact prefixes be pushed into queries (:meth:`hidden_relations`)."""

    def hidden_relations(self) -> tuple[list[str], list[str], list[tuple[str, str, str]]]:
        """The relation filter as IRIs a query can exclude, for ``sparql_terms.exclude_relations``:
        (IRIs, IRI prefixes, (namespace, compact prefix, local id regex)). Only what is dropped
        exactly: a remote endpoint must not hide an edge the filter keeps (the filter still runs on
        every answer; pushing it down only keeps hidden edges off the wire and out of row caps)."""
        relation_filter = self.relation_filter
        iris = []
        for relation in sorted(relation_filter.drop):
            try:
                full = self.relation_iri(relation)
            except InvalidTermError:
                continue
            if self.relation_id(full) == relation:
                iris.append(full)
        prefixes: list[str] = []
        local: list[tuple[str, str, str]] = []
        if type(self).relation_id is not Profile.relation_id:
            return iris, prefixes, local  # its own id mapping: only exact IRIs are safe to push
        namespace = self.relation_namespace
        for prefix in relation_filter.drop_prefixes:
            if _ABSOLUTE.match(prefix):
                if namespace is None or not (namespace.startswith(prefix) or prefix.startswith(namespace)):
                    prefixes.append(prefix)
            elif namespace is not None and self.local_id_regex is not None:
                local.append((namespace, prefix, self.local_id_regex))
        return iris, prefixes, local

    def is_cvt_candidate(self, node_id: str) -> bool:
        """Whether ``node_id`` (canonical) may be a CVT node; it is one when it also has no name."""
        return False

    def label_langs(self, lang: object) -> tuple[str, ...]:
        """The caller's language tags (one or a preference list, checked), then the profile's
        fallback tags (Wikidata's ``mul``): the order labels and descriptions are picked in."""
        return tuple(dict.fromkeys((*check_langs(lang), *self.fallback_langs)))

    def with_relation_filter(self, relation_filter: object) -> Profile:
        """A copy of this profile with another relation filter: a :class:`RelationFilter`, ``None``
        or ``"none"`` (keep every relation) or ``"default"`` (the profile's own default).

        Raises:
            InvalidTermError: any other value.
        """
        if relation_filter is None or relation_filter == "none":
            chosen = NO_FILTER
        elif relation_filter == "default":
            chosen = type(self).relation_filter
        elif isinstance(relation_filter, RelationFilter):
            chosen = relation_filter
        else:
            raise InvalidTermError(
                f"relation_filter must be a RelationFilter, None, 'none' or 'default'; got {relation_filter!r:.100}"
            )
        changed = copy.copy(self)
        changed.relation_filter = chosen
        return changed

    @property
    def key(self) -> str:
        """The profile's name, plus a fingerprint of its relation filter when that is not the
        default: what caches key answers by."""
        if self.relation_filter == type(self).relation_filter:
            return self.name
        return f"{self.name};relation_filter={self.relation_filter.key}"

    def entity_iri(self, entity_id: str) -> str:
        """The full IRI of a compact entity id; raises InvalidTermError when malformed."""
        return self._expand(entity_id, self.entity_namespace, "entity id")

    def relation_iri(self, relation_id: str) -> str:
        """The full IRI of a compact relation id; raises InvalidTermError when malformed."""
        return self._expand(relation_id, self.relation_namespace, "relation")

    def entity_id(self, iri: str) -> str:
        """The compact id of a full entity IRI (the IRI itself outside the namespace, or when the
        rest is no compact id, as for ``wd:statement/...``: every answer can be asked again)."""
        ns = self.entity_namespace
        if ns is not None and iri.startswith(ns) and self.is_local_id(iri[len(ns) :]):
            return iri[len(ns) :]
        return iri

    def relation_id(self, iri: str) -> str:
        ns = self.relation_namespace
        if ns is not None and iri.startswith(ns) and self.is_local_id(iri[len(ns) :]):
            return iri[len(ns) :]
        return iri

    def canonical_id(self, node_id: str) -> str:
        """The one spelling answers use for ``node_id`` (compact when the profile can compact it);
        blank nodes (``_:label``) pass through. Raises InvalidTermError when malformed."""
        if isinstance(node_id, str) and node_id.startswith("_:"):
            if not _BLANK_NODE.fullmatch(node_id):
                raise InvalidTermError(f"malformed blank node id: {node_id[:200]!r}")
            return node_id
        return self.entity_id(self.entity_iri(node_id))

    def is_local_id(self, text: str) -> bool:
        """Whether ``text`` is a compact id of this profile (not a full IRI)."""
        return False

    def spells(self, node_id: object) -> bool:
        """Whether ``node_id`` is an entity id of this profile (compact, a full IRI or a blank node):
        :meth:`canonical_id` would accept it."""
        try:
            self.canonical_id(node_id)  # type: ignore[arg-type]
        except InvalidTermError:
            return False
        return True

    def _expand(self, value: str, namespace: str | None, what: str) -> str:
        if not isinstance(value, str):
            raise InvalidTermError(f"{what} must be a string, got {type(value).__name__}")
        if value.startswith("_:"):
            raise InvalidTermError(f"{what} {value!r} is a blank node; blank nodes cannot be addressed")
        if namespace is not None and self.is_local_id(value):
            return namespace + value
        if _ABSOLUTE.match(value):
            return check_iri(value)
        if namespace is None:
            raise InvalidTermError(f"{what} must be a full IRI in the {self.name} profile: {value[:200]!r}")
        raise InvalidTermError(f"malformed {self.name} {what}: {value[:200]!r}")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"
