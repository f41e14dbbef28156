"""Freebase dumps (``freebase-rdf-latest.gz``, ``--format freebase``): the dump's quirks repaired
line by line, optional filters, then bulk loaded like any N-Triples chunk.

The last Freebase dump is "N-Triples" that strict parsers reject in places. Each line is read as
``subject<TAB>predicate<TAB>object<TAB>.`` (any whitespace also works) and turned into valid
N-Triples; a line that needed no change is passed on untouched (the common, fast case). Repairs,
counted in ``LoadReport.lines_repaired``:

* prefixed names (``ns:m.0abc``, ``key:wikipedia.en``, ``rdf:type``, ``xsd:gYear`` datatypes, and
  any ``@prefix``/``PREFIX`` line of the file) become full IRIs;
* bare Turtle numbers and booleans (``... measurement_unit.dated_percentage.rate> 4.5 .``) become
  typed literals (``xsd:integer``/``decimal``/``double``/``boolean``);
* characters an IRI may not contain (spaces, ``|``, ``{}``, ``^``, a backtick, a stray ``\\``, a ``%`` not
  followed by two hex digits) are percent-encoded, as RFC 3987 maps them to a URI;
* inside a literal, an unescaped ``"`` or a ``\\`` that starts no valid escape is escaped, and ``_``
  in a language tag becomes ``-`` (``zh_Hant`` -> ``zh-Hant``).

Ill-typed literals (``"1999-13-45"^^xsd:date``) are kept as they are (Oxigraph stores the lexical
form). A line that still cannot be read (wrong number of fields, unknown prefix, an IRI without a scheme,
invalid UTF-8, a language tag Oxigraph refuses) is bad: a strict load stops with
``LoadError(file, line)``, a lenient one skips and counts it.

Filters (:class:`DumpFilter`) drop lines before loading, counted in ``LoadReport.lines_filtered``:
``languages`` keeps language-tagged literals only in those languages (``en`` keeps ``en`` and
``en-GB``; untagged and typed literals always stay), ``drop_predicates`` drops exact predicates and
``drop_namespaces`` every predicate starting with a prefix; predicates are given as Freebase ids
(``common.topic.alias``, ``common.``) or full IRIs (``http://rdf.freebase.com/key/``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from kg_adapters.errors import InvalidTermError
from kg_adapters.profiles.freebase import FREEBASE_KEY_NS, FREEBASE_NS
from kg_adapters.sparql_terms import check_lang
from loaders.report import SkipLog

XSD = "http://www.w3.org/2001/XMLSchema#"
DEFAULT_PREFIXES = {
    "ns": FREEBASE_NS,
    "fb": FREEBASE_NS,
    "key": FREEBASE_KEY_NS,
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "xsd": XSD,
}

_IRI_NEEDS_REPAIR = re.compile(rb'[\x00-\x20<>"{}|^`]|\\(?!u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})|%(?![0-9A-Fa-f]{2})')
_LITERAL_BODY = re.compile(rb'(?:[^"\\\r\n]|\\[tbnrf"\'\\]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*')
_LITERAL_TOKEN = re.compile(rb'\\[tbnrf"\'\\]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}|(\\)|(")')
_LANG = re.compile(rb"[A-Za-z]+(?:-[A-Za-z0-9]+)*")
_DATATYPE = re.compile(rb"\^\^(<[^>]*>|[A-Za-z][\w.\-]*:\S*)")
_PREFIXED = re.compile(rb"([A-Za-z][\w.\-]*)?:(\S*)")
_BLANK = re.compile(rb"_:[A-Za-z0-9_][A-Za-z0-9_.\-]*")
_PREFIX_LINE = re.compile(rb"(?:@prefix|PREFIX)\s+([A-Za-z][\w.\-]*)?:\s*<([^>]*)>\s*\.?", re.IGNORECASE)
_SPACED = re.compile(rb"(\S+)\s+(\S+)\s+(.+?)\s*\.")
_BARE = [
    (re.compile(rb"[+-]?[0-9]+"), XSD + "integer"),
    (re.compile(rb"[+-]?[0-9]*\.[0-9]+"), XSD + "decimal"),
    (re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][+-]?[0-9]+"), XSD + "double"),
    (re.compile(rb"true|false"), XSD + "boolean"),
]
_CACHE_SIZE = 1 << 16


def _byte_class(excluded: bytes) -> bytes:
    """A regular-expression class of every byte but ``excluded``, written as ranges (a class of allowed
    bytes scans ~1.5x faster than the negated one in ``re``)."""
    allowed = [byte for byte in range(256) if byte not in excluded]
    ranges, start = [], allowed[0]
    for previous, byte in itertools.pairwise([*allowed, 999]):
        if byte != previous + 1:
            ranges.append(b"\\x%02x" % start + (b"-\\x%02x" % previous if previous > start else b""))
            start = byte
    return b"[" + b"".join(ranges) + b"]"


# A line no repair or filter changes, in the two layouts the slow path passes on untouched (the dump's
# ``s<TAB>p<TAB>o<TAB>.`` and N-Triples' ``s p o .``): full IRIs that need no percent-encoding, a literal
# whose escapes are all valid, an optional language tag without ``_`` or a datatype IRI. Possessive
# quantifiers keep a failing line linear in its length.
_IRI_CHARS = _byte_class(bytes(range(0x21)) + b'<>"{}|^`\\%')
_IRI_ESCAPE = rb"(?:%[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})"
_CLEAN_IRI = rb"<(?!>)" + _IRI_CHARS + rb"*+(?:" + _IRI_ESCAPE + _IRI_CHARS + rb"*+)*+>"
_PREDICATE_CHARS = _byte_class(bytes(range(0x21)) + bytes(range(0x80, 0x100)) + b'<>"{}|^`\\%')
"""A predicate's characters on the fast path: ASCII only, so its bytes are the text the filter compares."""
_CLEAN_PREDICATE_BODY = _PREDICATE_CHARS + rb"*+(?:" + _IRI_ESCAPE + _PREDICATE_CHARS + rb"*+)*+>"
_LITERAL_CHARS = _byte_class(b'"\\\r\n')
_CLEAN_LITERAL = (
    b'"' + _LITERAL_CHARS + rb"""*+(?:\\(?:[tbnrf"'\\]|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})""" + _LITERAL_CHARS + b'*+)*+"'
)
_CLEAN_LANG = rb"[A-Za-z]++(?:-[A-Za-z0-9]++)*+"


class BadLine(ValueError):
    """A dump line that cannot be turned into a triple."""


@dataclass(frozen=True, kw_only=True)
class DumpFilter:
    """Lines to leave out of a Freebase load (see the module docstring)."""

    languages: tuple[str, ...] | None = None
    drop_predicates: frozenset[str] = field(default_factory=frozenset)
    drop_namespaces: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.languages is not None:
            try:
                tags = tuple(check_lang(tag) for tag in self.languages)
            except InvalidTermError as exc:
                raise InvalidTermError(f"languages: {exc}") from exc
            if not tags:
                raise InvalidTermError("languages must name at least one language")
            object.__setattr__(self, "languages", tags)
        object.__setattr__(self, "drop_predicates", frozenset(self.drop_predicates))
        object.__setattr__(self, "drop_namespaces", tuple(self.drop_namespaces))

    def keeps_predicate(self, iri: str) -> bool:
        relation = iri[len(FREEBASE_NS) :] if iri.startswith(FREEBASE_NS) else iri
        for name in (relation, iri):
            if name in self.drop_predicates or name.startswith(self.drop_namespaces):
                return False
        return True

    def keeps_language(self, tag: str) -> bool:
        if self.languages is None:
            return True
        tag = tag.lower()
        return any(tag == wanted or tag.startswith(wanted + "-") for wanted in self.languages)


def clean_lines(dump_filter: DumpFilter) -> re.Pattern[bytes]:
    """A run of lines (each ending in a line break, or where the text ends) that :class:`FreebaseConverter`
    passes on untouched and keeps under ``dump_filter``: its predicate not dropped, its language tag (if any)
    kept."""
    dropped = [
        re.escape(name.encode("utf-8")) + end
        for names, end in ((dump_filter.drop_predicates, b">"), (dump_filter.drop_namespaces, b""))
        for given in sorted(names)
        for name in (given, FREEBASE_NS + given)
    ]
    predicate = b"<(?!>)" + (b"(?!" + b"|".join(dropped) + b")" if dropped else b"") + _CLEAN_PREDICATE_BODY
    lang = _CLEAN_LANG
    if dump_filter.languages is not None:  # kept: the tag is a wanted one, or starts with one and a "-"
        wanted = b"|".join(re.escape(tag.encode("ascii")) for tag in dump_filter.languages)  # lower-cased
        lang = b"(?=" + _CLEAN_LANG + b"[ \t])(?i:" + wanted + b")(?:-[A-Za-z0-9]++)*+"
    obj = b"(?:" + _CLEAN_IRI + b"|" + _CLEAN_LITERAL + b"(?:@" + lang + b"|\\^\\^" + _CLEAN_IRI + b")?)"
    line = _CLEAN_IRI + b"(?:\t" + predicate + b"\t" + obj + b"\t| " + predicate + b" " + obj + b" )\\.(?:\n|\\Z)"
    return re.compile(b"(?:" + line + b")*+")


class FreebaseConverter:
    """Turns Freebase dump lines into N-Triples text (see the module docstring)."""

    def __init__(self, dump_filter: DumpFilter | None = None) -> None:
        self.filter = dump_filter or DumpFilter()
        self.prefixes: dict[bytes, bytes] = {k.encode(): v.encode() for k, v in DEFAULT_PREFIXES.items()}
        self.filtered = 0
        self.repaired = 0
        self._predicates: dict[bytes, tuple[bytes, bool, bool]] = {}
        self._iris: dict[bytes, bytes] = {}
        self._clean = clean_lines(self.filter).match

    def convert(self, lines: list[bytes], first_line: int, path: str, log: SkipLog) -> tuple[list[bytes], int]:
        """N-Triples text per input line (``b""`` for blank, filtered or bad lines, so the list
        stays aligned with the input) and the number of lines kept (:meth:`convert_block` on their text)."""
        block = b"\n".join(lines)
        if not (block.startswith(b"<") or b"\n<" in block):  # no line can be clean (a prefixed dump)
            return self._convert_each(lines, first_line, path, log)
        units = list(lines)
        return units, self._patch(block, units, 0, 0, first_line, path, log)

    def convert_block(
        self, data: bytes, lines: int, first_line: int, path: str, log: SkipLog
    ) -> tuple[bytes, list[bytes] | None, int]:
        """(N-Triples text, one unit per input line or None when every line is kept as it is, statements kept)
        for ``data``, ``lines`` whole lines of the dump joined by line breaks.

        Runs of lines that need nothing (:func:`clean_lines`, the common case) are matched in C and kept as
        they are, with no Python object per line; only a block holding another line is split into lines,
        and only those lines go through :meth:`convert_line`. A block of such lines all in the dump's
        ``s<TAB>p<TAB>o<TAB>.`` layout with no other tab gets spaces for its tabs (one ``bytes.replace``):
        the index worker reads space-separated lines without parsing them (``index.iri_lines``)."""
        clean_end = self._clean(data).end()  # type: ignore[union-attr] # matches the empty run
        if clean_end == len(data) and data[-1:] not in (b"\n", b""):  # (an empty last line is no statement)
            if data.count(b"\t") == 3 * lines and data.count(b"\t.\n") + data.endswith(b"\t.") == lines:
                data = data.replace(b"\t", b" ")  # every tab separates terms: N-Triples' own spacing
            return data, None, lines
        units = data.split(b"\n")
        index = data.count(b"\n", 0, clean_end)
        good = index + self._patch(data, units, index, clean_end, first_line, path, log)
        return b"\n".join(units), units, good

    def _patch(
        self, block: bytes, units: list[bytes], index: int, position: int, first_line: int, path: str, log: SkipLog
    ) -> int:
        """Converts ``units[index:]``, the lines of ``block`` from ``position`` on, in place; returns how
        many of them are kept."""
        clean = self._clean
        end = len(block)
        good = 0
        while index < len(units):
            line = units[index]
            if line[:1] == b"<":  # a clean line starts with an IRI: match the run of clean lines from here
                clean_end = clean(block, position).end()  # type: ignore[union-attr] # matches the empty run
                if clean_end > position:
                    run = block.count(b"\n", position, clean_end) + (clean_end == end and block[-1:] != b"\n")
                    good += run
                    index += run
                    position = clean_end
                    continue
            try:
                unit = self.convert_line(line)
            except BadLine as exc:
                log.bad(path, first_line + index, str(exc))
                unit = b""
            units[index] = unit
            good += bool(unit)
            index += 1
            position += len(line) + 1
        return good

    def _convert_each(self, lines: list[bytes], first_line: int, path: str, log: SkipLog) -> tuple[list[bytes], int]:
        """:meth:`convert` line by line."""
        units: list[bytes] = []
        good = 0
        for offset, raw in enumerate(lines):
            try:
                unit = self.convert_line(raw)
            except BadLine as exc:
                log.bad(path, first_line + offset, str(exc))
                unit = b""
            units.append(unit)
            good += bool(unit)
        return units, good

    def convert_line(self, raw: bytes) -> bytes:
        """One dump line as N-Triples text (``b""`` when blank, a declaration or filtered); raises BadLine.
        The reference :meth:`convert` agrees with, line for line."""
        line = raw.strip()
        if not line or line.startswith(b"#"):
            return b""
        if line[:1] in (b"@", b"P", b"p") and (declared := _PREFIX_LINE.fullmatch(line)):
            self.prefixes[declared.group(1) or b""] = declared.group(2)
            return b""
        parts = line.split(b"\t")
        if len(parts) == 4 and parts[3] == b".":
            subject, predicate, obj = parts[0], parts[1], parts[2].strip()
        else:
            spaced = _SPACED.fullmatch(line)
            if spaced is None:
                raise BadLine("expected: subject predicate object .")
            subject, predicate, obj = spaced.groups()
        predicate_term, keep, changed = self._predicate(predicate)
        if not keep:
            self.filtered += 1
            return b""
        iris = self._iris
        subject_term = iris.get(subject)
        if subject_term is None:
            subject_term = self._node(subject, "subject")
        object_term = iris.get(obj)
        if object_term is None:
            object_term = self._object(obj)
        if object_term is None:
            self.filtered += 1
            return b""
        if not changed and subject_term == subject and object_term == obj:
            return line
        self.repaired += 1
        return b"%s %s %s ." % (subject_term, predicate_term, object_term)

    def _predicate(self, token: bytes) -> tuple[bytes, bool, bool]:
        """(IRI term, kept by the filter, changed) for a predicate token (cached: dumps reuse few)."""
        known = self._predicates.get(token)
        if known is None:
            term = self._iri(token, "predicate")
            keep = self.filter.keeps_predicate(term[1:-1].decode("utf-8", "replace"))
            known = (term, keep, term is not token)
            if len(self._predicates) >= _CACHE_SIZE:
                self._predicates.clear()
            self._predicates[token] = known
        return known

    def _iri(self, token: bytes, what: str) -> bytes:
        """``<iri>`` for an IRI or prefixed-name token, repaired; the token itself when valid."""
        if token.startswith(b"<") and token.endswith(b">") and len(token) > 2:
            body = token[1:-1]
            if not _IRI_NEEDS_REPAIR.search(body):
                return token
            return b"<" + _IRI_NEEDS_REPAIR.sub(_percent, body) + b">"
        prefixed = _PREFIXED.fullmatch(token)
        if prefixed is None:
            raise BadLine(f"{what} is not an IRI: {token[:100].decode('utf-8', 'replace')!r}")
        namespace = self.prefixes.get(prefixed.group(1) or b"")
        if namespace is None:
            raise BadLine(f"unknown prefix in {what}: {token[:100].decode('utf-8', 'replace')!r}")
        return b"<" + _IRI_NEEDS_REPAIR.sub(_percent, namespace + prefixed.group(2)) + b">"

    def _object(self, token: bytes) -> bytes | None:
        """The object as an N-Triples term; None when the language filter drops it."""
        first = token[:1]
        if first == b'"':
            return self._literal(token)
        if first != b"<" and first != b"_":
            for pattern, datatype in _BARE:
                if pattern.fullmatch(token):
                    return b'"%s"^^<%s>' % (token, datatype.encode())
        return self._node(token, "object")

    def _node(self, token: bytes, what: str) -> bytes:
        """A subject or object IRI/blank node term, remembered (dumps repeat their nodes)."""
        term = token if token[:1] == b"_" and _BLANK.fullmatch(token) else self._iri(token, what)
        if len(self._iris) >= _CACHE_SIZE:
            self._iris.clear()
        self._iris[token] = term
        return term

    def _literal(self, token: bytes) -> bytes | None:
        end = token.rfind(b'"')
        if end == 0:
            raise BadLine("unterminated literal")
        body, suffix = token[1:end], token[end + 1 :]
        new_suffix = suffix
        if suffix.startswith(b"@"):
            tag = suffix[1:].replace(b"_", b"-")
            if not _LANG.fullmatch(tag):
                raise BadLine(f"bad language tag: {suffix[:50].decode('utf-8', 'replace')!r}")
            if not self.filter.keeps_language(tag.decode("ascii")):
                return None
            new_suffix = b"@" + tag
        elif suffix:
            datatype = _DATATYPE.fullmatch(suffix)
            if datatype is None:
                raise BadLine(f"unexpected text after a literal: {suffix[:50].decode('utf-8', 'replace')!r}")
            new_suffix = b"^^" + self._iri(datatype.group(1), "datatype")
        new_body = body if _LITERAL_BODY.fullmatch(body) else _LITERAL_TOKEN.sub(_escape, body)
        if new_body is body and new_suffix == suffix:
            return token
        return b'"' + new_body + b'"' + new_suffix


def _percent(match: re.Match[bytes]) -> bytes:
    return b"".join(b"%%%02X" % byte for byte in match.group())


def _escape(match: re.Match[bytes]) -> bytes:
    if match.group(1):
        return b"\\\\"
    if match.group(2):
        return b'\\"'
    return match.group()


def parse_list(text: str | None) -> tuple[str, ...]:
    """``"common.,freebase."`` -> ``("common.", "freebase.")`` (blank items dropped)."""
    return tuple(item.strip() for item in (text or "").split(",") if item.strip())


def dump_filter(
    languages: Iterable[str] | None = None,
    drop_predicates: Iterable[str] = (),
    drop_namespaces: Iterable[str] = (),
) -> DumpFilter | None:
    """A :class:`DumpFilter`, or None when nothing is filtered."""
    langs = tuple(languages) if languages is not None else None
    predicates, namespaces = frozenset(drop_predicates), tuple(drop_namespaces)
    if langs is None and not predicates and not namespaces:
        return None
    return DumpFilter(languages=langs, drop_predicates=predicates, drop_namespaces=namespaces)
