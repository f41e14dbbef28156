"""Answer-type evidence: what kind of thing a question asks for, against what a relation path ends in.

Measured, not used by the methods: ``benchmarks.path_ranking``'s ``hybrid+types`` row ranks paths with it
(see the README: it moves the FB15k-237 ceiling on natural wording, not the sample's or the Wikidata
profile's).

Text similarity of a question and a path's relation names cannot tell "Which provinces make up the nation
of X?" from the country's form of government when the last relation is reworded; the answers can: a
province is an administrative division, a form of government is not. So

* :func:`expected_kinds` reads the kind the question asks for: the words after "which"/"what" ("which
  provinces", "what political system", "in which city"; after "kind/sort/type of"), or the wh-word's kind
  ("who": a person, "where": a place, "when": a date, "how many": a number); none when the question names
  none ("What is the capital of X?": the label wording of the benchmarks), and then nothing changes;
* :class:`EntityKinds` reads what an entity is from the graph itself: its classes through the profile's
  type predicates (``rdf:type``, Freebase's ``type.object.type``, Wikidata's ``P31``), the type a
  Freebase-shaped relation id names for its subject (``location.administrative_division.country``: an
  administrative division) and the roles it is the object of (the most specific words of its incoming
  relations: "capital", "place of birth"); a literal's datatype;
* :meth:`AnswerFit.levels` scores each path's end entities' kinds against the expected kind (one scorer
  call per reading for the kind texts not scored yet), in calibrated units: the best kind among the path's
  first ends; a path whose ends the graph says nothing about but the role they were reached by gets the
  call's best fit, so a graph without kinds changes no ranking.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from kg_adapters.base import KnowledgeGraph
from kg_adapters.errors import InvalidTermError
from kg_adapters.label_index import STOP_WORDS
from kg_adapters.records import Literal, Node
from reasoning.relevance import Judge
from reasoning.text import RelationNames, relation_tail, relation_words, schema_relations

ANSWER_WEIGHT = 0.15
"""What a perfect answer-type fit adds to a path's level (path-score units, 0-1), against a path whose ends
are of no asked kind at all."""
ENDS = 5
"""End entities per path whose kinds are read (a path's answers are mostly of one kind)."""

KINDS = 24
"""The most kinds kept per entity: its classes and subject types first, then its roles (a hub is the object
of a hundred relations; more kinds cost scoring and only add chances of a match by accident)."""
KNOWN = 50_000
"""Entities whose kinds one :class:`EntityKinds` keeps."""

_WH_KINDS = {
    "who": "person",
    "whom": "person",
    "where": "place location",
    "when": "date time",
}
_COUNT = re.compile(r"\bhow (?:many|much)\b", re.IGNORECASE)
_DETERMINER = re.compile(r"\b(?:which|what)\s+(.*)", re.IGNORECASE)
_KIND_OF = re.compile(r"^(?:kinds?|sorts?|types?)\s+of\s+(?:an?\s+)?", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
KIND_WORDS = 2
"""The most words of the noun phrase after "which"/"what" read as the asked kind."""


def expected_kinds(focus: str) -> tuple[str, ...]:
    """Readings of the kind of thing the question asks for, as words to score kinds against (a kind fits
    by its best reading); none when it names no kind. "Which provinces make up ..." -> ("provinces",
    "provinces make"): without a tagger the noun phrase's end is unknown; "In which city was ..." ->
    ("city",); "What kind of film is ..." -> ("film",); "Who directed ..." -> ("person",); "What is the
    capital of ..." -> ()."""
    if _COUNT.search(focus):
        return ("number",)
    match = _DETERMINER.search(focus)
    if match:
        rest = _KIND_OF.sub("", match.group(1).strip())
        words: list[str] = []
        for word in _WORD.findall(rest.lower()):
            if word in STOP_WORDS or len(words) == KIND_WORDS:
                break
            words.append(word)
        return tuple(" ".join(words[: n + 1]) for n in range(len(words)))
    for word in _WORD.findall(focus.lower())[:3]:  # "Where ...", "And who ..."
        if word in _WH_KINDS:
            return (_WH_KINDS[word],)
    return ()


def literal_kind(node: Literal) -> str:
    """A literal's kind: its datatype's words ("date", "integer", "g year"), else "text"."""
    if node.datatype is None:
        return "text"
    return relation_words(node.datatype) or "text"


class EntityKinds:
    """What entities are, read from the graph once per entity (see the module docstring)."""

    def __init__(self, kg: KnowledgeGraph, names: RelationNames | None = None) -> None:
        self.kg = kg
        self.names = names or RelationNames(kg)
        self.known: dict[str, tuple[tuple[str, str], ...]] = {}
        """Per entity, its kinds: ``(source, text)``, the source the incoming relation a role comes from
        ("" for a class or a subject type)."""
        profile = kg.profile
        self._types = tuple(dict.fromkeys(profile.relation_id(iri) for iri in profile.type_predicates))
        self._skip = schema_relations(kg) | frozenset(self._types)
        self._visible = {t for t in self._types if profile.relation_filter.keeps(t)}
        self._hidden = len(self._visible) < len(self._types)
        """Whether ``relations()`` hides a type predicate (Freebase's ``type.object.type``): then every
        entity is asked for its classes."""

    def kinds(self, entities: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Each entity's kind texts (possibly none), asked in one batch per graph call for the new ones."""
        return {e: tuple(dict.fromkeys(text for _, text in found)) for e, found in self.sourced(entities).items()}

    def sourced(self, entities: Iterable[str]) -> dict[str, tuple[tuple[str, str], ...]]:
        """Each entity's kinds with their sources (see :attr:`known`)."""
        wanted = list(dict.fromkeys(entities))
        missing = [e for e in wanted if e not in self.known]
        if len(self.known) + len(missing) > KNOWN:  # a bounded cache: start again
            self.known.clear()
            missing = wanted
        if missing:
            self._read(missing)
        return {e: self.known[e] for e in wanted}

    def _read(self, entities: list[str]) -> None:
        classes: dict[str, list[str]] = {}
        labels: dict[str, str] = {}
        try:
            outgoing = self.kg.relations(entities, direction="out")
            incoming = self.kg.relations(entities, direction="in")
            typed = entities if self._hidden else [e for e in entities if set(outgoing.get(e, ())) & self._visible]
            if typed:  # only entities with a type edge (where relations() lists it) are asked for their classes
                found = self.kg.neighbors(typed, direction="out", relations=list(self._types), literals=False)
                classes = {e: [edge.tail for edge in found.get(e, ()) if isinstance(edge.tail, str)] for e in typed}
                labels = self.kg.labels(sorted({c for cs in classes.values() for c in cs}))
        except InvalidTermError:  # ids the graph cannot ask about: no kinds
            outgoing, incoming = {}, {}
        roles = self.names.words(r for e in entities for r in incoming.get(e, ()) if r not in self._skip)
        for entity in entities:
            kinds = [("", labels.get(c) or relation_words(c)) for c in classes.get(entity, ())]
            kinds += [("", kind) for r in outgoing.get(entity, ()) if r not in self._skip and (kind := subject_type(r))]
            kinds += [(r, role_words(r, roles[r])) for r in incoming.get(entity, ()) if r in roles]
            self.known[entity] = tuple(dict.fromkeys(kind for kind in kinds if kind[1]))[:KINDS]


def role_words(relation: str, words: str) -> str:
    """What being the object of ``relation`` makes an entity: the relation's label (``P36`` -> "capital"),
    else its id's most specific words (``location.country.capital`` -> "capital")."""
    return relation_tail(relation) if words == relation_words(relation) else words


def subject_type(relation: str) -> str | None:
    """The type a Freebase-shaped relation id names for its subject (``domain.type.property``:
    ``location.administrative_division.country`` -> "administrative division"; through a mediator, the
    first part's), else None (an IRI's or an opaque id's property says nothing of its subject's kind)."""
    first = relation.split("..")[0]
    if "://" in first:
        return None
    parts = first.split(".")
    return relation_words(parts[-2]) if len(parts) >= 3 else None


class AnswerFit:
    """One question's answer-type evidence: its expected kind, scored against the kinds of paths' ends."""

    def __init__(self, judge: Judge, kinds: EntityKinds) -> None:
        self.judge = judge
        self.kinds = kinds
        self.readings = expected_kinds(judge.focus)
        self._levels: dict[str, float] = {}

    @property
    def active(self) -> bool:
        """Whether the question names a kind (else every level is 0 and nothing changes)."""
        return bool(self.readings)

    def levels(self, paths: Sequence[tuple[str, Sequence[Node]]]) -> list[float]:
        """Per path (the relation its last hop walks, its end nodes), how well its ends are of the asked kind,
        in calibrated units: the best kind among its first :data:`ENDS` ends (a path's answers are of one
        kind, and an end the graph says little about must not make its path look of another kind).

        An end whose only kind is the role its path's last relation gives it (every path's ends are what it
        reached them by) is one the graph says nothing else about; a path whose ends are all such is unknown
        and gets the best fit of the call (benefit of the doubt: the evidence lowers only a path whose ends
        are known to be of another kind than the asked one). All 0 when the question asks for no kind."""
        if not self.readings:
            return [0.0 for _ in paths]
        sampled = [(last, list(dict.fromkeys(ends))[:ENDS]) for last, ends in paths]
        sourced = self.kinds.sourced(n for _, ends in sampled for n in ends if isinstance(n, str))
        evidence: list[list[str]] = []
        for last, ends in sampled:
            texts = [literal_kind(n) for n in ends if isinstance(n, Literal)]
            for kinds in (sourced[n] for n in ends if isinstance(n, str)):
                if any(source != last for source, _ in kinds):
                    texts += [text for _, text in kinds]
            evidence.append(list(dict.fromkeys(texts)))
        missing = list(dict.fromkeys(t for texts in evidence for t in texts if t not in self._levels))
        if missing:
            readings = [self.judge.calibrated(self.judge.scorer.score(kind, missing)) for kind in self.readings]
            self._levels.update(zip(missing, [max(levels) for levels in zip(*readings, strict=True)], strict=True))
        fits = [max((self._levels[t] for t in texts), default=None) for texts in evidence]
        known = [fit for fit in fits if fit is not None]
        doubt = max(known, default=0.0)
        return [doubt if fit is None else fit for fit in fits]
