"""KG ids as text for prompts and scorers: relation names as words, node names, triples and the
relations worth showing (a profile's label and description predicates are data about names, not
paths a question asks for)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from kg_adapters.base import KnowledgeGraph
from kg_adapters.display import node_text as node_text  # re-exported: reasoners import it from here
from kg_adapters.errors import InvalidTermError
from kg_adapters.records import Edge, Literal, Node

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[._/#:\-]+")


def relation_words(relation: str) -> str:
    """Readable words of a relation id: ``people.person.place_of_birth`` -> "people person place of
    birth"; an IRI keeps its local name (``http://ex.org/ns#placeOfBirth`` -> "place of birth");
    ``a..b`` (a relation through a Freebase CVT) joins both parts."""
    local = relation
    if "://" in relation:
        local = re.split(r"[#/]", relation.rstrip("/#"))[-1]
    words = _SEPARATORS.sub(" ", _CAMEL.sub(" ", local)).replace("_", " ")
    return " ".join(words.lower().split())


_OPAQUE = re.compile(r"[a-z]?[0-9]+")


class RelationNames:
    """Words for relation ids, for scorers and prompts: an id's own words, or -- for an opaque id
    like Wikidata's ``P19`` -- its label in the KG ("place of birth"), asked once per relation with
    one ``labels`` call per batch."""

    def __init__(self, kg: KnowledgeGraph) -> None:
        self.kg = kg
        self.known: dict[str, str] = {}

    def words(self, relations: Iterable[str]) -> dict[str, str]:
        wanted = list(dict.fromkeys(relations))
        missing = [r for r in wanted if r not in self.known]
        opaque = [r for r in missing if _OPAQUE.fullmatch(relation_words(r))]
        labels: dict[str, str] = {}
        if opaque:
            try:
                labels = self.kg.labels(opaque)
            except InvalidTermError:  # not an id the profile can name: keep the id's words
                labels = {}
        for relation in missing:
            self.known[relation] = labels.get(relation) or relation_words(relation)
        return {r: self.known[r] for r in wanted}

    def phrases(self, relations: Iterable[str]) -> dict[str, tuple[str, str]]:
        """Each relation's words and its most specific words (:func:`relation_focus`), as
        :meth:`reasoning.relevance.Judge.path_scores` reads a relation; an opaque id's label twice."""
        words = self.words(relations)
        return {r: (text, relation_focus(r) if text == relation_words(r) else text) for r, text in words.items()}

    def shown(self, relation: str) -> str:
        """The id with its label when the id alone says nothing: ``P19 (place of birth)``."""
        words = self.known.get(relation, "")
        return f"{relation} ({words})" if words and words != relation_words(relation) else relation


def relation_tail(relation: str) -> str:
    """The most specific words of a relation, for question templates: ``people.person.place_of_birth``
    -> "place of birth"; ``film.actor.film..film.performance.film`` -> "film"."""
    local = relation.split("..")[-1]
    if "://" in local:
        return relation_words(local)
    return relation_words(local.rsplit(".", 1)[-1])


def relation_focus(relation: str) -> str:
    """What a relation states, without the domain words every relation of its domain shares: the
    property with its type unless the type only repeats the domain (``film.director.film`` -> "director
    film", ``film.film.genre`` -> "genre", ``people.person.spouse_s..people.marriage.spouse`` -> "marriage
    spouse"); an IRI's local name."""
    local = relation.split("..")[-1]
    if "://" in local:
        return relation_words(local)
    parts = local.split(".")
    if len(parts) < 3:
        return relation_words(local)
    domain, kind, prop = parts[-3:]
    return relation_words(prop if kind == domain else f"{kind}.{prop}")


def schema_relations(kg: KnowledgeGraph) -> frozenset[str]:
    """The relation ids of the profile's label and description predicates."""
    profile = kg.profile
    return frozenset(profile.relation_id(iri) for iri in (*profile.label_predicates, *profile.description_predicates))


def node_value(node: Node) -> str:
    """What a prediction holds for a node: the compact id, or a literal's value."""
    return node.value if isinstance(node, Literal) else node


def triple_text(edge: Edge, names: Mapping[str, str]) -> str:
    """``(head name, relation, tail name)``, the triple format of ToG/R3 prompts."""
    return f"({node_text(edge.head, names)}, {edge.relation}, {node_text(edge.tail, names)})"


def entity_ids(nodes: Iterable[Node]) -> list[str]:
    """The entity ids among ``nodes`` (literals left out), once each, in order."""
    return list(dict.fromkeys(node for node in nodes if isinstance(node, str)))


def parse_list(reply: str) -> list[str]:
    """Items of an LLM's list reply: one per line (bullets, numbering and an ``ans:`` prefix
    stripped), or comma-separated when the reply is one line."""
    lines = [line for line in reply.splitlines() if line.strip()]
    if len(lines) == 1:
        lines = lines[0].split(",")
    items = []
    for line in lines:
        item = re.sub(r"^\s*(?:[-*•]|\d+[.)]|ans(?:wer)?s?\s*:)\s*", "", line, flags=re.I).strip().strip("\"'`")
        if item:
            items.append(item)
    return items


def match_names(items: Sequence[str], candidates: Mapping[Node, str]) -> list[Node]:
    """The candidate nodes an LLM named, in the order it named them: an item matches a candidate
    whose name or id equals it (case and spacing ignored)."""
    index: dict[str, list[Node]] = {}
    for node, name in candidates.items():
        for key in {_key(name), _key(node_value(node))}:
            index.setdefault(key, []).append(node)
    found: dict[Node, None] = {}
    for item in items:
        for node in index.get(_key(item), ()):
            found[node] = None
    return list(found)


def _key(text: str) -> str:
    return " ".join(text.lower().split())
