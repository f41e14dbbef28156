"""Names as ids: graphs whose triples name entities by their text, as dataset files do.

RoG's datasets (``rmanluo/RoG-webqsp``, ``RoG-cwq``), MetaQA's ``kb.txt`` and similar files write
triples such as ``["Barack Obama", "people.person.place_of_birth", "Honolulu"]``: the file's own
strings are the ids a reasoner is scored against. In this profile those strings *are* the ids,
so every answer (edges, paths, predictions) carries them unchanged.

The store needs IRIs, so a name ``N`` becomes ``http://kg-adapters.local/entity/<N percent-encoded>``
(a relation: ``.../relation/<...>``) and back, exactly (``quote``/``unquote`` with nothing kept
safe): quotes, spaces, slashes and any Unicode survive the round trip. A name that already is an
absolute IRI (``scheme://...`` or ``urn:...``, valid, outside those namespaces) stays that IRI,
the same rule the TSV loader's generic minting follows, so a MetaQA store loaded with the generic
profile opens with this one and answers in names. The ``rdfs:label`` triples minted for names are
hidden from ``neighbors``/``relations`` (the relation filter) unless asked for by name. Freebase
ids among the names (``m.0abc``, ``g.11b...``) are CVT (mediator) candidates: nameless ones are
described from their neighbours.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from urllib.parse import quote, unquote

import pyoxigraph as ox

from kg_adapters.errors import InvalidTermError
from kg_adapters.profiles.base import RDFS_LABEL, Profile
from kg_adapters.profiles.relation_filter import RelationFilter
from kg_adapters.sparql_terms import MAX_TERM_LENGTH, check_iri

NAMES_ENTITY_NS = "http://kg-adapters.local/entity/"
NAMES_RELATION_NS = "http://kg-adapters.local/relation/"
NAMES_QUESTION_NS = "http://kg-adapters.local/question/"
"""Named graphs holding each question's own triples (see :func:`question_graph_iri`)."""

_IRI_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://|urn:", re.IGNORECASE)
_MID = re.compile(r"[mg]\.[0-9a-z_]+")


def check_name(value: object, what: str) -> str:
    """``value`` if it can be a name (an IRI is minted for every such string), else InvalidTermError."""
    if not isinstance(value, str):
        raise InvalidTermError(f"{what} must be a string, got {type(value).__name__}")
    if not value:
        raise InvalidTermError(f"{what} must not be empty")
    if len(value) > MAX_TERM_LENGTH:
        raise InvalidTermError(f"{what} longer than {MAX_TERM_LENGTH} characters: {value[:80]!r}...")
    if value.startswith("_:"):
        raise InvalidTermError(f"{what} {value!r} is a blank node; blank nodes cannot be addressed")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidTermError(f"{what} is not valid Unicode text ({exc.reason}): {value[:80]!r}") from exc
    return value


def _mint(value: object, namespace: str, what: str) -> str:
    value = check_name(value, what)
    if _IRI_LIKE.match(value) and not value.startswith((NAMES_ENTITY_NS, NAMES_RELATION_NS)):
        try:
            return check_iri(value)
        except InvalidTermError:
            pass  # not a valid IRI: a name that happens to start like one
    return namespace + quote(value, safe="")


def _name(iri: str, namespace: str) -> str:
    return unquote(iri[len(namespace) :]) if iri.startswith(namespace) else iri


def question_graph_iri(question_id: str) -> str:
    """The named graph that holds the triples of question ``question_id`` in a loaded dataset."""
    if not isinstance(question_id, str) or not question_id:
        raise InvalidTermError(f"a question id must be a non-empty string, got {question_id!r:.80}")
    return NAMES_QUESTION_NS + quote(question_id, safe="")


def name_quads(
    triples: Iterable[tuple[str, str, str]], graphs: Sequence[ox.NamedNode | ox.DefaultGraph]
) -> Iterator[ox.Quad]:
    """The quads of ``(head, relation, tail)`` name triples in each of ``graphs``, plus one
    ``rdfs:label`` per name (not for Freebase MIDs: CVTs stay nameless) so ``search`` finds them.
    Raises InvalidTermError for a component that is not a usable name."""
    profile = NamesProfile()
    label = ox.NamedNode(RDFS_LABEL)
    labelled: set[str] = set()
    entities: dict[str, ox.NamedNode] = {}  # a subgraph names its entities many times: mint each once
    relations: dict[str, ox.NamedNode] = {}
    for head, relation, tail in triples:
        h = entities.get(head) or entities.setdefault(head, ox.NamedNode(profile.entity_iri(head)))
        r = relations.get(relation) or relations.setdefault(relation, ox.NamedNode(profile.relation_iri(relation)))
        t = entities.get(tail) or entities.setdefault(tail, ox.NamedNode(profile.entity_iri(tail)))
        for graph in graphs:
            yield ox.Quad(h, r, t, graph)
        for name, node in ((head, h), (tail, t)):
            if name not in labelled and not profile.is_cvt_candidate(name):
                labelled.add(name)
                for graph in graphs:
                    yield ox.Quad(node, label, ox.Literal(name), graph)


class NamesProfile(Profile):
    """Ids are the names written in dataset files (see the module docstring)."""

    name = "names"
    entity_namespace = NAMES_ENTITY_NS
    relation_namespace = NAMES_RELATION_NS
    label_predicates = (RDFS_LABEL,)
    has_cvt_nodes = True
    relation_filter = RelationFilter(drop=frozenset({RDFS_LABEL}))
    """The minted names are plumbing, not facts of the dataset: reachable through ``labels``/``search``."""

    def is_cvt_candidate(self, node_id: str) -> bool:
        """Freebase MIDs among the names (RoG's subgraphs keep CVTs as ``m.``/``g.`` ids)."""
        return _MID.fullmatch(node_id) is not None

    def entity_iri(self, entity_id: str) -> str:
        return _mint(entity_id, NAMES_ENTITY_NS, "entity id")

    def relation_iri(self, relation_id: str) -> str:
        return _mint(relation_id, NAMES_RELATION_NS, "relation")

    def entity_id(self, iri: str) -> str:
        return _name(iri, NAMES_ENTITY_NS)

    def relation_id(self, iri: str) -> str:
        return _name(iri, NAMES_RELATION_NS)

    def is_local_id(self, text: str) -> bool:
        return not _IRI_LIKE.match(text)
