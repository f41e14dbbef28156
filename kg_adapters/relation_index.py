"""A SQLite index over relations, so ``search_relations`` never scans the graph with a FILTER.

Each relation (predicate IRI) is indexed under its labels where the graph has them (``rdfs:label``
of ``dbo:birthPlace``, of ``wd:P19`` for ``wdt:P19``) and under the words of its id where it has
none or besides them (Freebase ``people.person.place_of_birth``: "people person place of birth",
and its own name "place of birth", so that text ranks exact). Ranking is the label index's:
exact, prefix, then every token (BM25). Rows keep the full IRI; profiles compact it when asked.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator

from kg_adapters.errors import BackendError
from kg_adapters.label_index import LabelIndex

WORDS_LANG = "x-id"
"""The language of rows made from the words of a relation id (never a real language tag)."""
ALIAS_LANG = "x-alias"
"""The language of an alias row: ``x-alias`` for an untagged alias, ``x-alias-en`` for an English one
(aliases are found as labels are, and never shown as the relation's label)."""
ALIAS_PREDICATES = ("http://www.w3.org/2004/02/skos/core#altLabel",)
"""What gives a relation's aliases (Wikidata's property aliases: "alma mater" of P69, "born in" of P19)."""
_SEPARATORS = re.compile(r"[._\-/:#]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WIKIDATA_TWINS = (("http://www.wikidata.org/prop/direct/", "http://www.wikidata.org/entity/"),)
RELATIONS_FILE = "relations.sqlite"


def local_name(iri: str) -> str:
    """What follows the IRI's last ``/`` or ``#`` (the whole text when neither occurs)."""
    cut = max(iri.rfind("/"), iri.rfind("#"))
    return iri[cut + 1 :] if 0 <= cut < len(iri) - 1 else iri


def id_words(iri: str) -> list[str]:
    """The texts a relation is found by from its id alone: all words of its local name, and the
    words of its last segment (``a.b.c..d.e.f``: the CVT's own property ``f``)."""
    name = local_name(iri)
    words = " ".join(_CAMEL.sub(" ", part) for part in _SEPARATORS.split(name) if part).strip()
    last = name.rsplit(".", 1)[-1] if "." in name else ""
    last_words = " ".join(_CAMEL.sub(" ", part) for part in _SEPARATORS.split(last) if part).strip()
    return [text for text in dict.fromkeys((words, last_words)) if text]


def id_phrase(iri: str) -> str:
    """The words of a relation id as a phrase to embed: for each ``..``-separated part (a Freebase CVT
    hop) its last two ``.``-separated parts (type and property: ``people.person.place_of_birth`` ->
    "person place of birth", the domain said again by the type), each word once."""
    name = local_name(iri)
    parts = [segment.split(".")[-2:] for segment in name.split("..") if segment] or [[name]]
    words = [
        word
        for part in parts
        for piece in part
        for chunk in _SEPARATORS.split(piece)
        if chunk
        for word in _CAMEL.sub(" ", chunk).split()
    ]
    seen: set[str] = set()
    kept = []
    for word in words:
        if word.lower() not in seen:
            seen.add(word.lower())
            kept.append(word)
    return " ".join(kept)


def label_subjects(relation_iri: str) -> list[str]:
    """The IRIs whose labels name a relation: the relation itself (``dbo:birthPlace``) and, for
    Wikidata's direct (truthy) predicates, the property entity (``wd:P19``)."""
    subjects = [relation_iri]
    for prefix, twin in _WIKIDATA_TWINS:
        rest = relation_iri[len(prefix) :]
        if relation_iri.startswith(prefix) and re.fullmatch(r"P[1-9][0-9]*", rest):
            subjects.append(twin + rest)
    return subjects


def alias_tag(lang: str) -> str:
    """The relation index's language for an alias in ``lang``."""
    return f"{ALIAS_LANG}-{lang}" if lang else ALIAS_LANG


def real_lang(lang: str) -> str | None:
    """The language of a label or alias row (``""`` untagged); None for the words of an id."""
    if lang == WORDS_LANG:
        return None
    if lang == ALIAS_LANG:
        return ""
    return lang.removeprefix(ALIAS_LANG + "-")


def relation_rows(
    relations: Iterable[str], labels_of: Callable[[str], Iterable[tuple[str, str]]]
) -> Iterator[tuple[str, str, str]]:
    """(relation iri, text, lang) rows, one relation at a time: every (label, lang) ``labels_of``
    gives for the IRIs that name it (:func:`label_subjects`), then the words of its id."""
    for relation in relations:
        for subject in label_subjects(relation):
            for label, lang in labels_of(subject):
                yield relation, label, lang
        for words in id_words(relation):
            yield relation, words, WORDS_LANG


def grouped_labels(labels: Iterable[tuple[str, str, str]]) -> Callable[[str], Iterable[tuple[str, str]]]:
    """``labels_of`` for :func:`relation_rows` over (subject, label, lang) rows read beforehand."""
    named: dict[str, list[tuple[str, str]]] = {}
    for subject, label, lang in labels:
        named.setdefault(subject, []).append((label, lang))
    return lambda subject: named.get(subject, ())


class RelationIndex(LabelIndex):
    """The relations of a graph by label and id words (``path=None``: in memory)."""

    any_word_fallback = True
    """A phrasing sharing one word with a relation ("born" in "where was he born") makes it a candidate."""

    def rows(self) -> list[tuple[str, str, str]]:
        """Every (relation iri, text, lang) row, in the order written (what relations are embedded from)."""
        try:
            rows = self._db.execute("SELECT iri, label, lang FROM labels ORDER BY rowid")
            return [(iri, label, lang) for iri, label, lang in rows]
        except sqlite3.Error as exc:
            raise BackendError(f"the relation index failed listing its rows: {exc}") from exc

    def relation_iris(self) -> list[str]:
        """Every relation of the graph (full IRIs), sorted."""
        try:
            return [iri for (iri,) in self._db.execute("SELECT DISTINCT iri FROM labels ORDER BY iri")]
        except sqlite3.Error as exc:
            raise BackendError(f"the relation index failed listing its relations: {exc}") from exc

    def relation_labels(self, iris: list[str], langs: tuple[str, ...]) -> dict[str, str]:
        """The best real label of each relation that has one (the first of ``langs``, else untagged, else
        any); aliases and id words are no labels."""
        from kg_adapters.records import Literal, best_label

        found: dict[str, list[Literal]] = {}
        for iri in iris:
            try:
                if self.compact:  # the rows themselves (the view would spell every IRI to compare it)
                    namespace, local = self.split_iri(iri)
                    rows = self._db.execute(
                        "SELECT label, lang FROM label_rows WHERE namespace = ? AND local = ? AND lang NOT LIKE 'x-%' "
                        "ORDER BY lang, label",
                        (namespace, local),
                    ).fetchall()
                else:
                    rows = self._db.execute(
                        "SELECT label, lang FROM labels WHERE iri = ? AND lang NOT LIKE 'x-%' ORDER BY lang, label",
                        (iri,),
                    ).fetchall()
            except sqlite3.Error as exc:
                raise BackendError(f"the relation index failed reading the labels of {iri!r:.200}: {exc}") from exc
            if rows:
                found[iri] = [Literal(value=label, lang=lang or None) for label, lang in rows]
        return {iri: best_label(labels, langs) for iri, labels in found.items()}
