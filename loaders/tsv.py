"""TSV triple files (``h<TAB>r<TAB>t``) and MetaQA ``kb.txt`` files (``h|r|t``) as N-Triples.

Each line is one triple, turned into N-Triples text in the profile's namespace and then bulk
loaded like any N-Triples chunk. The choices, so that the same file always gives the same IRIs:

* Every line must have exactly three non-empty fields (surrounding whitespace is ignored);
  blank lines are skipped silently. ``#`` is *not* a comment marker: a name may start with it.
* A token written ``<...>`` is a full IRI in every profile.
* ``freebase``: tokens are compact ids (``m.0abc``, ``people.person.profession``) or full IRIs,
  checked by :class:`FreebaseProfile`; the slash form of FB15k/FB15k-237 (``/m/0abc``,
  ``/film/film/genre``) is accepted too and maps to the same ids (``/`` becomes ``.``), so a
  FB15k-237 ``train.txt`` lands on the same IRIs as the Freebase N-Triples dump.
* ``wikidata``: ``Q42`` entities and ``P31`` relations (or full IRIs), via :class:`WikidataProfile`.
* ``generic``: a token that looks like an IRI (``scheme://...`` or ``urn:...``) is kept as an IRI
  (and must be valid). Any other token is a *name*, such as MetaQA's ``William Dieterle`` (names
  like ``Alien: Resurrection`` are names, not IRIs). Names become
  ``http://kg-adapters.local/entity/<percent-encoded name>`` (relations:
  ``.../relation/<percent-encoded name>``), and each minted entity also gets an ``rdfs:label``
  triple with its original name, so ``search()`` finds it. Relations get no label.
* A tail is always an entity, never a literal.

A token the profile rejects makes the whole line bad (an error in strict mode, skipped with
``lenient=True``).
"""

from __future__ import annotations

import re
from urllib.parse import quote

from kg_adapters.errors import InvalidTermError
from kg_adapters.profiles import get_profile
from kg_adapters.profiles.base import RDFS_LABEL
from kg_adapters.sparql_terms import check_iri, string_literal
from loaders.report import SkipLog

LOCAL_ENTITY_NS = "http://kg-adapters.local/entity/"
LOCAL_RELATION_NS = "http://kg-adapters.local/relation/"
SEPARATORS = {"tsv": "\t", "metaqa": "|"}

_IRI_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://|urn:", re.IGNORECASE)
_LABEL = f"<{RDFS_LABEL}>"
_CACHE_SIZE = 1 << 20  # tokens whose IRI is remembered (MetaQA has ~43k); cleared when full


class BadToken(ValueError):
    """A TSV field that cannot become an IRI in the chosen profile."""


class TsvConverter:
    """Turns TSV/MetaQA lines into N-Triples text for one profile."""

    def __init__(self, format: str, profile: str) -> None:
        self.separator = SEPARATORS[format]
        self.profile = get_profile(profile)
        self.minting = self.profile.name == "generic"
        self._entities: dict[str, tuple[str, str | None]] = {}
        self._relations: dict[str, tuple[str, str | None]] = {}

    def convert(self, lines: list[bytes], first_line: int, path: str, log: SkipLog) -> tuple[list[bytes], int]:
        """N-Triples text per input line (``b""`` for blank or bad lines) and the number of lines kept.

        Bad lines go to ``log`` (which raises in strict mode). The returned list is aligned
        with ``lines`` so later parse errors still map back to input line numbers.
        """
        units: list[bytes] = []
        good = 0
        labelled: set[str] = set()
        for offset, raw in enumerate(lines):
            try:
                text = raw.decode("utf-8").rstrip("\r")
            except UnicodeDecodeError as exc:
                log.bad(path, first_line + offset, f"not valid UTF-8 ({exc.reason} at byte {exc.start})")
                units.append(b"")
                continue
            if not text.strip():
                units.append(b"")
                continue
            try:
                units.append(self._triple(text, labelled).encode("utf-8"))
                good += 1
            except BadToken as exc:
                log.bad(path, first_line + offset, str(exc))
                units.append(b"")
        return units, good

    def _triple(self, text: str, labelled: set[str]) -> str:
        fields = [field.strip() for field in text.split(self.separator)]
        if len(fields) != 3:
            what = "tab" if self.separator == "\t" else f"{self.separator!r}"
            raise BadToken(f"expected 3 {what}-separated fields, found {len(fields)}")
        head, relation, tail = fields
        if not head or not relation or not tail:
            raise BadToken("empty field")
        nodes = (
            self._node(head, relation=False),
            self._node(relation, relation=True),
            self._node(tail, relation=False),
        )
        out = ["<{}> <{}> <{}> .".format(*(iri for iri, _ in nodes))]
        for iri, label in nodes:  # only once the whole line is good, so no label is lost
            if label is not None and iri not in labelled:
                labelled.add(iri)
                out.append(label)
        return "\n".join(out)

    def _node(self, token: str, *, relation: bool) -> tuple[str, str | None]:
        """The IRI of one field, and its rdfs:label triple if it was minted from a name (cached)."""
        cache = self._relations if relation else self._entities
        hit = cache.get(token)
        if hit is None:
            hit = self._resolve(token, relation=relation)
            if len(cache) >= _CACHE_SIZE:
                cache.clear()
            cache[token] = hit
        return hit

    def _resolve(self, token: str, *, relation: bool) -> tuple[str, str | None]:
        """Maps one field as the module docstring says; raises BadToken."""
        what = "relation" if relation else "entity"
        try:
            if token.startswith("<") and token.endswith(">"):
                return check_iri(token[1:-1]), None
            if not self.minting:
                if token.startswith("/") and self.profile.name == "freebase":
                    token = token[1:].replace("/", ".")
                iri = self.profile.relation_iri(token) if relation else self.profile.entity_iri(token)
                return iri, None
            if _IRI_LIKE.match(token):
                return check_iri(token), None
            if relation:
                return LOCAL_RELATION_NS + quote(token, safe=""), None
            iri = LOCAL_ENTITY_NS + quote(token, safe="")
            return iri, f"<{iri}> {_LABEL} {string_literal(token)} ."
        except InvalidTermError as exc:
            raise BadToken(f"bad {what}: {exc}") from exc
