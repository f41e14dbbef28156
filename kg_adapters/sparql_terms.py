"""The only place where ids, relations and literals become SPARQL text.

Every term is validated before it is written, and literals are escaped, so no caller value
can change a query's meaning. Anything that does not pass raises :class:`InvalidTermError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

import pyoxigraph as _ox

from kg_adapters.errors import InvalidTermError
from kg_adapters.records import Literal

if TYPE_CHECKING:
    from kg_adapters.sparql_lexer import Reading

MAX_TERM_LENGTH = 4096

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
# Characters RDF 1.1 forbids inside IRIREF (plus the space and control range).
_FORBIDDEN_IRI_CHARS = re.compile(r'[\x00-\x20<>"{}|^`\\\x7f]')
_LANG_TAG = re.compile(r"[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LITERAL_ESCAPES = str.maketrans(
    {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
)


def check_text(value: object, what: str, *, max_length: int | None = MAX_TERM_LENGTH) -> str:
    """``value`` if it is a string of valid Unicode (no lone surrogate, which would fail later inside
    SQLite, HTTP or the store) of at most ``max_length`` characters, else InvalidTermError."""
    if not isinstance(value, str):
        raise InvalidTermError(f"{what} must be a string, got {type(value).__name__}")
    if max_length is not None and len(value) > max_length:
        raise InvalidTermError(f"{what} is longer than {max_length} characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidTermError(f"{what} is not valid Unicode text: {exc.reason}") from exc
    return value


GEO_WKT_LITERAL = "http://www.opengis.net/ont/geosparql#wktLiteral"
"""GeoSPARQL's WKT literal datatype (Wikidata coordinates)."""


def check_iri(value: object) -> str:
    """Returns ``value`` if it is an absolute IRI (RFC 3987) that can be written as ``<value>``.
    The full grammar check is Oxigraph's IRI parser, so every backend accepts the same IRIs."""
    text = check_text(value, "IRI")
    if not _SCHEME.match(text):
        raise InvalidTermError(f"not an absolute IRI (no scheme): {text[:200]!r}")
    bad = _FORBIDDEN_IRI_CHARS.search(text)
    if bad:
        raise InvalidTermError(f"IRI contains the forbidden character {bad.group()!r}: {text[:200]!r}")
    try:
        _ox.NamedNode(text)
    except ValueError as exc:
        raise InvalidTermError(f"not a valid IRI ({exc}): {text[:200]!r}") from exc
    return text


def iri(value: str) -> str:
    """``<value>`` after validation."""
    return f"<{check_iri(value)}>"


def check_lang(tag: object) -> str:
    """A well-formed BCP-47 language tag, lower-cased."""
    text = check_text(tag, "language tag")
    if not _LANG_TAG.fullmatch(text):
        raise InvalidTermError(f"not a BCP-47 language tag: {text[:50]!r}")
    try:
        _ox.Literal("", language=text)
    except ValueError as exc:
        raise InvalidTermError(f"not a BCP-47 language tag ({exc}): {text[:50]!r}") from exc
    return text.lower()


def check_langs(tags: object) -> tuple[str, ...]:
    """One language tag or a non-empty sequence of them (preference order), each checked and lower-cased."""
    if isinstance(tags, str):
        return (check_lang(tags),)
    if isinstance(tags, (list, tuple)) and tags:
        return tuple(dict.fromkeys(check_lang(tag) for tag in tags))
    raise InvalidTermError(f"lang must be a language tag or a non-empty list of tags, got {tags!r:.100}")


_ESCAPED_BACKSLASH_U = re.compile(r"\\([uU])")  # after translation only an escaped backslash precedes u
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _hide_u(match: re.Match[str]) -> str:
    return "\\" + ("\\U00000075" if match.group(1) == "u" else "\\U00000055")


def string_literal(value: str) -> str:
    """A plain string literal, escaped. SPARQL expands ``\\u``/``\\U`` code points before parsing
    (rdflib does, per the spec), so a ``u`` after an escaped backslash is written as
    ``\\U00000075`` (eight digits, so no hex digit after it is taken in). Other control characters
    are written as ``\\u00XX``."""
    text = check_text(value, "literal").translate(_LITERAL_ESCAPES)
    text = _ESCAPED_BACKSLASH_U.sub(_hide_u, text)
    # Virtuoso ends a string at a raw NUL (its parser is C); every engine reads the \u escape.
    text = _CONTROL.sub(lambda match: f"\\u{ord(match.group()):04X}", text)
    return '"' + text + '"'


def check_literal(value: Literal) -> tuple[str, str | None, str | None]:
    """(text, lower-cased language tag, datatype IRI) of a literal a store can hold; any length."""
    text = check_text(value.value, "literal", max_length=None)
    if value.lang is not None:
        if value.datatype is not None:
            raise InvalidTermError("a literal cannot have both a language tag and a datatype")
        return text, check_lang(value.lang), None
    return text, None, None if value.datatype is None else check_iri(value.datatype)


def literal(value: Literal) -> str:
    """A literal in SPARQL syntax; language tag and datatype validated."""
    text, lang, datatype = check_literal(value)
    written = string_literal(text)
    if lang is not None:
        return f"{written}@{lang}"
    if datatype is not None:
        return f"{written}^^<{datatype}>"
    return written


def variable(name: str) -> str:
    if not isinstance(name, str) or not _VARIABLE.fullmatch(name):
        raise InvalidTermError(f"not a SPARQL variable name: {name!r}")
    return "?" + name


def values_block(name: str, iris: Iterable[str]) -> str:
    """``VALUES ?name { <a> <b> ... }`` for validated full IRIs."""
    return "VALUES " + variable(name) + " { " + " ".join(iri(value) for value in iris) + " }"


# -- reading query text ------------------------------------------------------------------------------
def expand_dotted_prefixed_names(query: str) -> str:
    """``query`` with every prefixed name whose local part holds a dot (``ns:type.object.name``)
    written as the full IRI it stands for (``<http://rdf.freebase.com/ns/type.object.name>``).

    The same query: names are found by the SPARQL grammar's lexer (:mod:`kg_adapters.sparql_lexer`),
    so strings, IRIs and comments are left alone. Oxigraph 0.5's SPARQL parser rejects local names
    with two dots (``expected ['0'..='9']``), and Freebase names every relation that way;
    Think-on-Graph's queries (``ns:m.0bxtg ns:type.object.name ?n``) must run unchanged on the
    embedded store. Text the lexer cannot read is returned as it is (the engine rejects it)."""
    if "." not in query or ":" not in query:
        return query
    from kg_adapters.sparql_lexer import LexError  # (its patterns compile on import: not for every import
    from kg_adapters.sparql_lexer import read as read_query  # of kg_adapters, ~0.1 s of a first answer)

    try:
        return names_expanded(read_query(query, "spec"))
    except LexError:
        return query


def names_expanded(reading: Reading) -> str:
    """The text of a ``spec`` reading with its dotted prefixed names written out
    (see :func:`expand_dotted_prefixed_names`)."""
    query = reading.text
    pieces: list[str] = []
    position = 0
    for name in reading.names:
        namespace = reading.prefixes.get(query[name.start : name.colon])
        local = query[name.colon + 1 : name.end]
        if namespace is None or "." not in local or "%" in local or "\\" in local:
            continue
        try:
            written = iri(namespace + local)
        except InvalidTermError:
            continue
        pieces += [query[position : name.start], written]
        position = name.end
    pieces.append(query[position:])
    return "".join(pieces)


_REGEX_SPECIALS = re.compile(r"([\\.^$|?*+()\[\]{}-])")


def exclude_relations(
    name: str, iris: Iterable[str], prefixes: Iterable[str], local: Iterable[tuple[str, str, str]] = ()
) -> str:
    """A FILTER keeping ``?name`` off the relations a profile hides: the IRIs ``iris``, any IRI
    starting with one of ``prefixes``, and, for ``(namespace, prefix, local_id_regex)``, any IRI
    ``namespace + rest`` where ``rest`` starts with ``prefix`` and is a local id (matches
    ``local_id_regex``, an XPath/PCRE regular expression). Empty text when nothing is excluded."""
    var = variable(name)
    conditions = []
    listed = [iri(value) for value in iris]
    if listed:
        conditions.append(f"{var} NOT IN ({', '.join(listed)})")
    conditions.extend(f"!STRSTARTS(STR({var}), {string_literal(check_text(p, 'prefix'))})" for p in prefixes)
    for namespace, prefix, pattern in local:
        anchored = "^" + _REGEX_SPECIALS.sub(r"\\\1", check_text(namespace, "namespace")) + f"({pattern})$"
        conditions.append(
            f"!(STRSTARTS(STR({var}), {string_literal(check_text(namespace + prefix, 'prefix'))}) && "
            f"REGEX(STR({var}), {string_literal(anchored)}))"
        )
    return f"FILTER({' && '.join(conditions)})" if conditions else ""
