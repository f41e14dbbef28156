"""Reading SPARQL query text the way the engines that run it read it, for decisions taken before a
query runs: what a read-only surface refuses (:mod:`kg_adapters.serve.readonly`) and which prefixed
names are written out in full (:func:`kg_adapters.sparql_terms.expand_dotted_prefixed_names`).

Two readings, because engines differ:

``oxigraph``
    Oxigraph 0.5's parser (spargebra, a PEG grammar), as the installed pyoxigraph executes it.
    Keywords match case-insensitively in ASCII and *without a word boundary*: ``?s ?p trueSERVICE<x>{}``
    is ``true`` then ``SERVICE``, and ``true service:x {}`` is a SERVICE call to ``:x``. Comments end
    at CR or LF. ``<...>`` is an IRI only when its content is a valid IRI (resolved against the BASE
    declared so far); otherwise ``<`` is an operator and what follows is read as query text. A prefixed
    name's local part takes at most one run of dots (``ex:a.b.c`` is ``ex:a.b`` ``.`` ``c``), and a
    local part that makes no valid IRI falls back to the bare prefix, its local text read as query.
``spec``
    The SPARQL 1.1 grammar's lexer (§19.8): IRIREF by its characters, local parts with any dots.

Each reading runs on the text as sent and on the text with ``\\uXXXX``/``\\UXXXXXXXX`` escapes expanded
over the whole query before parsing (§19.2: rdflib does this, and so does spargebra built with its
``standard-unicode-escaping`` feature; the pyoxigraph wheels are not). A decision holds only when it
holds for every reading, so where engines could disagree the stricter answer wins.

A :class:`Reading` splits the text into *protected* spans (comments, strings, IRIs, variables, blank
node labels, local parts that are certainly one name) and *code*: everything an engine may read as
keywords. Since Oxigraph matches keywords inside longer words, a keyword is looked for anywhere in the
code, not as a whole word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

import pyoxigraph as _ox

Mode = Literal["oxigraph", "spec"]
MODES: tuple[Mode, ...] = ("oxigraph", "spec")

_BASE_CHARS = (
    "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c-\u200d"
    "\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd"
)
"""PN_CHARS_BASE as Oxigraph 0.5 has it (without the astral planes the specification adds)."""
_ASTRAL = "\U00010000-\U000effff"


def _patterns(base: str) -> dict[str, re.Pattern[str]]:
    chars_u = base + "_"
    chars = chars_u + "\\-0-9\u00b7\u0300-\u036f\u203f-\u2040"
    plx = r"%[0-9A-Fa-f]{2}|\\[_~.\-!$&'()*+,;=/?#@%]"
    local_char = f"[{chars}:]|{plx}"
    return {
        "prefix": re.compile(f"(?:[{base}][{chars}]*(?:\\.+[{chars}]+)*)?:"),
        "word": re.compile(f"[{base}][{chars}]*(?:\\.+[{chars}]+)*"),
        "varname": re.compile(f"[0-9{chars_u}][0-9{chars_u}\u00b7\u0300-\u036f\u203f-\u2040]*"),
        # Oxigraph: one optional run of dots, once; the specification: dots anywhere but at the end
        "local_oxigraph": re.compile(f"(?:[{chars_u}:0-9]|{plx})(?:{local_char})*(?:\\.+(?:{local_char})+)?"),
        "local_spec": re.compile(f"(?:[{chars_u}:0-9]|{plx})(?:(?:{local_char}|\\.)*(?:{local_char}))?"),
        "bnode_oxigraph": re.compile(f"_:[0-9{chars_u}][{chars}]*(?:\\.+[{chars}]+)*"),
        "bnode_spec": re.compile(f"_:[0-9{chars_u}](?:[{chars}.]*[{chars}])?"),
        # everything but IRIs and strings, in one pass: what each alternative is, the loop in read() says
        "code_run": re.compile(f"[^ \\t\\r\\n#<'\"?$_:{base}]+"),
    }


_OXIGRAPH = _patterns(_BASE_CHARS)
_SPEC = _patterns(_BASE_CHARS + _ASTRAL)
_ECHAR_UCHAR = r"\\[tbnrf\"'\\]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}"
_STRINGS = [  # spargebra's order: long forms first, each falling back to the short form of its quote
    re.compile(f"'''(?:(?:''|')?(?:[^'\\\\]|{_ECHAR_UCHAR}))*'''"),
    re.compile(f'"""(?:(?:""|")?(?:[^"\\\\]|{_ECHAR_UCHAR}))*"""'),
    re.compile(f"'(?:[^'\\\\\\n\\r]|{_ECHAR_UCHAR})*'"),
    re.compile(f'"(?:[^"\\\\\\n\\r]|{_ECHAR_UCHAR})*"'),
]
_SPEC_IRIREF = re.compile(r'<(?:[^<>"{}|^`\\\x00-\x20]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*>')
_SPACE = " \t\r\n"
_SPACE_RUN = re.compile("[ \t\r\n]+")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_UNSAFE_IN_IRI = re.compile(r'[\x00-\x20<>"{}|^`\\]')
_PROBE = _ox.Store()


class LexError(ValueError):
    """Text no engine reads as SPARQL (an unterminated string, say)."""


@dataclass(frozen=True)
class PrefixedName:
    start: int
    colon: int
    """Index of the ``:`` ending the prefix."""
    end: int
    protected: bool
    """The local part is certainly part of this one name (not read again as query text)."""


@dataclass
class Reading:
    """One reading of a query text."""

    text: str
    mode: Mode
    code: str = ""
    """``text`` with every protected span replaced by spaces (same length, same offsets)."""
    prologue_end: int = 0
    """Where the query form starts, after BASE, PREFIX and VERSION declarations."""
    base: str | None = None
    prefixes: dict[str, str] = field(default_factory=dict)
    """Declared prefixes (``""`` for ``:``) and their absolute IRIs."""
    names: list[PrefixedName] = field(default_factory=list)

    def code_contains(self, keyword: str) -> bool:
        """Whether ``keyword`` (ASCII letters) occurs anywhere in the code, ASCII case-insensitively,
        inside longer words too (Oxigraph matches keywords without a word boundary)."""
        return keyword.translate(_ASCII_LOWER) in self.code.translate(_ASCII_LOWER)

    def code_words(self) -> list[str]:
        """The code's maximal runs of ASCII letters, upper-cased (keywords as word-bounded lexers see them)."""
        return [word.upper() for word in re.findall(r"[A-Za-z]+", self.code)]

    def first_word(self) -> str:
        """The code's first run of ASCII letters after the prologue, upper-cased ('' if none)."""
        found = re.match(r"[ \t\r\n]*([A-Za-z]*)", self.code[self.prologue_end :])
        return found.group(1).upper() if found else ""


def unescape_codepoints(text: str) -> str:
    """``text`` with ``\\uXXXX`` and ``\\UXXXXXXXX`` replaced by their characters over the whole text, as
    spargebra's ``standard-unicode-escaping`` does before parsing: a sequence that is no valid code
    point is left as it is (its characters are not looked at again), and the digits are read as Rust's
    ``u32::from_str_radix`` reads them (a leading ``+`` is accepted)."""
    if "\\u" not in text and "\\U" not in text:
        return text
    out: list[str] = []
    position, length = 0, len(text)
    while position < length:
        char = text[position]
        if char != "\\" or position + 1 >= length or text[position + 1] not in "uU":
            out.append(char)
            position += 1
            continue
        size = 4 if text[position + 1] == "u" else 8
        digits = text[position + 2 : position + 2 + size]
        if len(digits) < size:  # too short: the backslash, then the rest as it is
            out.append(text[position:])
            break
        value = _radix16(digits)
        if value is None or value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
            out.append(text[position : position + 2 + size])
        else:
            out.append(chr(value))
        position += 2 + size
    return "".join(out)


def _radix16(digits: str) -> int | None:
    """``u32::from_str_radix(digits, 16)``: ASCII hex digits, an optional leading ``+``."""
    body = digits[1:] if digits.startswith("+") else digits
    if not body or any(c not in "0123456789abcdefABCDEF" for c in body):
        return None
    return int(body, 16)


def _unescape_iri(content: str) -> str | None:
    """spargebra's ``unescape_iriref``: only ``\\u``/``\\U`` escapes; None when the content is refused."""
    if "\\" not in content:
        return content
    out: list[str] = []
    position = 0
    while True:
        slash = content.find("\\", position)
        if slash < 0:
            out.append(content[position:])
            return "".join(out)
        out.append(content[position:slash])
        kind = content[slash + 1 : slash + 2]
        if kind not in ("u", "U"):
            return None
        size = 4 if kind == "u" else 8
        digits = content[slash + 2 : slash + 2 + size]
        value = _radix16(digits) if len(digits) == size else None
        if value is None or value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
            return None
        out.append(chr(value))
        position = slash + 2 + size


@lru_cache(maxsize=4096)
def resolve_iri(iri: str, base: str | None) -> str | None:
    """The absolute IRI ``iri`` names (relative ones resolved against ``base``), by Oxigraph's own IRI
    parser; None when Oxigraph refuses it (then ``<`` is an operator to its parser)."""
    if base is None:
        try:
            return _ox.NamedNode(iri).value
        except ValueError:
            return None
    if _UNSAFE_IN_IRI.search(iri):
        return None
    try:
        answer = _PROBE.query(f"SELECT (<{iri}> AS ?i) {{}}", base_iri=base)
    except (SyntaxError, ValueError):
        return None
    for solution in answer:  # type: ignore[union-attr]
        return str(solution[0].value)
    return None


def read(text: str, mode: Mode = "oxigraph") -> Reading:  # noqa: C901 -- issue 20: one pass of a lexer
    """The reading of ``text`` in ``mode``.

    Raises:
        LexError: a quote that starts no string any engine accepts.
    """
    patterns = _OXIGRAPH if mode == "oxigraph" else _SPEC
    varname, bnode, prefix_pattern = patterns["varname"], patterns[f"bnode_{mode}"], patterns["prefix"]
    local_pattern, word, code_run = patterns[f"local_{mode}"], patterns["word"], patterns["code_run"]
    reading = Reading(text=text, mode=mode)
    protected: list[tuple[int, int]] = []  # in order, never overlapping
    protect = protected.append
    length = len(text)

    def space(position: int) -> int:
        while position < length:
            found = _SPACE_RUN.match(text, position)
            if found is not None:
                position = found.end()
            elif text[position] == "#":
                end = _comment_end(text, position)
                protect((position, end))
                position = end
            else:
                break
        return position

    def iri_at(position: int) -> tuple[int, str] | None:
        """(end, absolute IRI or '') of an IRI starting at ``position``."""
        if mode == "spec":
            found = _SPEC_IRIREF.match(text, position)
            if found is None:
                return None
            unescaped = _unescape_iri(found.group()[1:-1])
            resolved = resolve_iri(unescaped, reading.base) if unescaped is not None else None
            return found.end(), resolved or ""
        close = text.find(">", position + 1)
        if close < 0:
            return None
        unescaped = _unescape_iri(text[position + 1 : close])
        resolved = resolve_iri(unescaped, reading.base) if unescaped is not None else None
        return (close + 1, resolved) if resolved is not None else None

    # the prologue: BASE, PREFIX and VERSION declarations, each keyword matched as Oxigraph does
    position = space(0)
    while True:
        head = text[position : position + 7].translate(_ASCII_LOWER)
        if head.startswith("base"):
            after = space(position + 4)
            iri = iri_at(after) if text.startswith("<", after) else None
            if iri is None or not iri[1]:
                break
            protect((after, iri[0]))
            reading.base, position = iri[1], space(iri[0])
        elif head.startswith("prefix"):
            after = space(position + 6)
            declared = prefix_pattern.match(text, after)
            if declared is None:
                break
            at = space(declared.end())
            iri = iri_at(at) if text.startswith("<", at) else None
            if iri is None:
                break
            protect((after, declared.end()))  # a declaration: no keyword can start inside it
            protect((at, iri[0]))
            if iri[1]:
                reading.prefixes[declared.group()[:-1]] = iri[1]
            position = space(iri[0])
        elif head.startswith("version"):
            after = space(position + 7)
            end = _string_end(text, after)
            if end is None:
                break
            protect((after, end))
            position = space(end)
        else:
            break
    reading.prologue_end = position

    while position < length:
        found = code_run.match(text, position)  # punctuation and digits: code, nothing to look at
        if found is not None:
            position = found.end()
            continue
        char = text[position]
        if char in _SPACE or char == "#":
            position = space(position)
        elif char == "<":
            iri = iri_at(position)
            if iri is None:
                position += 1  # an operator; what follows is read as query text
            else:
                protect((position, iri[0]))
                position = iri[0]
        elif char in "'\"":
            end = _string_end(text, position)
            if end is None:
                raise LexError(f"a string starting at character {position} is never closed or holds a bad escape")
            protect((position, end))
            position = end
        elif char in "?$":
            name = varname.match(text, position + 1)
            if name is None:
                position += 1
            else:
                protect((position, name.end()))
                position = name.end()
        elif text.startswith("_:", position):
            label = bnode.match(text, position)
            if label is None:
                position += 2
            else:
                protect((position, label.end()))
                position = label.end()
        else:
            prefix = prefix_pattern.match(text, position)
            if prefix is not None:
                colon = prefix.end() - 1
                local = local_pattern.match(text, prefix.end())
                end = local.end() if local is not None else prefix.end()
                safe = local is not None and _one_name(reading, text[position:colon], local.group())
                if safe:
                    protect((prefix.end(), end))
                reading.names.append(PrefixedName(start=position, colon=colon, end=end, protected=safe))
                position = end
            else:
                matched = word.match(text, position)
                position = matched.end() if matched is not None else position + 1
    pieces: list[str] = []
    done = 0
    for start, end in protected:
        pieces.append(text[done:start])
        pieces.append(" " * (end - start))
        done = end
    pieces.append(text[done:])
    reading.code = "".join(pieces)
    return reading


def _one_name(reading: Reading, prefix: str, local: str) -> bool:
    """Whether a prefixed name's local part certainly stays part of the name: every lexer of the
    specification keeps it; Oxigraph keeps it when the name expands to a valid IRI (else it falls back
    to the bare prefix and reads the local part as query text)."""
    if reading.mode == "spec":
        return True
    namespace = reading.prefixes.get(prefix)
    return namespace is not None and resolve_iri(namespace + local.replace("\\", ""), None) is not None


def _comment_end(text: str, start: int) -> int:
    ends = [index for index in (text.find("\r", start), text.find("\n", start)) if index >= 0]
    return min(ends) if ends else len(text)


def _string_end(text: str, start: int) -> int | None:
    for pattern in _STRINGS:
        found = pattern.match(text, start)
        if found is not None:
            return found.end()
    return None


def readings(text: str, modes: tuple[Mode, ...] = MODES) -> list[Reading]:
    """Every reading of ``text`` in ``modes``, on the text as sent and with its code points unescaped."""
    texts = [text]
    unescaped = unescape_codepoints(text)
    if unescaped != text:
        texts.append(unescaped)
    return [read(variant, mode) for variant in texts for mode in modes]
