"""The lines of N-Triples text Oxigraph's parser refuses, found before the text is loaded.

Oxigraph's bulk loader is atomic: one refused line fails the whole bulk load, and nothing of it is
stored. A lenient load that streams its input into one bulk load (as a strict one does, see
``loaders.rdf._Segment``) therefore checks each piece with the same parser first (about 0.9 CPU-s per
million Freebase lines, against ~7 for Oxigraph's load) and blanks the lines it refuses: the stream then
never fails, the skip report names each refused line's file and line, and the traversal, name and relation
indexes are fed only what the store holds. Blanking (rather than dropping) keeps every other line where
it was, so the stream's line numbers still map to the input's.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

import pyoxigraph as ox

from kg_adapters.rdf_guard import PARSER_BUFFER
from loaders.report import SkipLog

_LINE_IN_MESSAGE = re.compile(r"^Parser error at line \d+ (column|between)")
_RESTARTS = 16
"""Refused lines found by parsing on after each one, before a piece is checked line by line (each restart
joins the rest of the piece again: many refusals would make that quadratic)."""


@dataclass(frozen=True, kw_only=True)
class Cleaned:
    """A piece with its refused lines blanked: its text, its units (None: the text's lines are the
    input's) and how many statements were dropped."""

    data: bytes
    units: list[bytes] | None
    dropped: int


def parser_reason(exc: SyntaxError) -> str:
    """Oxigraph's message without its chunk-relative line number."""
    message = str(exc.msg or exc)
    return _LINE_IN_MESSAGE.sub(lambda m: "Parser error " + ("at column" if m[1] == "column" else "between"), message)


def without_refused(data: bytes, units: list[bytes] | None, first: int, path: str, log: SkipLog) -> Cleaned | None:
    """None when the parser takes every line of ``data`` (the newline-joined ``units``, ``units[i]`` the text
    of input line ``first + i``; None: the lines of ``data``); else the text with every refused unit blanked,
    each reported to ``log`` as ``path``:line with its own error."""
    try:
        _parse(data)
        return None
    except SyntaxError as exc:
        failure = exc
    lines = list(units) if units is not None else data.split(b"\n")
    dropped = _blank_refused(lines, first, path, log, failure)
    text = b"\n".join(lines)
    try:
        _parse(text)
    except SyntaxError:  # refused only beside another line: check each line alone
        dropped += _blank_each(lines, 0, first, path, log)
        text = b"\n".join(lines)
    return Cleaned(data=text, units=lines if units is not None else None, dropped=dropped)


def has_token_over_buffer(data: bytes) -> bool:
    """Whether a line of ``data`` may hold a token longer than Oxigraph's parser buffer, which its parser refuses
    (a stream fails, and so does :func:`without_refused`) while ``Store.bulk_load`` takes it from bytes: a lenient
    load bulk loads such a piece on its own. A line that long holds a whole window of half the buffer at one of
    these steps: one ``find`` per window, not per line."""
    step = PARSER_BUFFER // 2
    return any(data.find(b"\n", start, start + step) < 0 for start in range(0, len(data) - step, step))


def _blank_refused(lines: list[bytes], first: int, path: str, log: SkipLog, failure: SyntaxError) -> int:
    """Blanks the refused units of ``lines``, parsing on after each refusal; returns the statements dropped."""
    dropped, start = 0, 0
    for _restart in range(_RESTARTS):
        at = start + _unit_of(lines, start, failure.lineno)
        found = False
        for candidate in (at - 1, at) if at > start else (at,):  # a statement left open is refused a line late
            reason = _refusal(lines[candidate])
            if reason is not None:
                dropped += _drop(lines, candidate, first, path, log, reason)
                found = True
        if not found:  # the parser's line is not refused alone: check every line from here on its own
            return dropped + _blank_each(lines, start, first, path, log)
        start = at + 1
        if start >= len(lines):
            return dropped
        try:
            _parse(b"\n".join(lines[start:]))
            return dropped
        except SyntaxError as exc:
            failure = exc
    return dropped + _blank_each(lines, start, first, path, log)


def _blank_each(lines: list[bytes], start: int, first: int, path: str, log: SkipLog) -> int:
    """Checks ``lines[start:]`` one unit at a time; blanks the refused ones."""
    dropped = 0
    for offset in range(start, len(lines)):
        if lines[offset]:
            reason = _refusal(lines[offset])
            if reason is not None:
                dropped += _drop(lines, offset, first, path, log, reason)
    return dropped


def _drop(lines: list[bytes], offset: int, first: int, path: str, log: SkipLog, reason: str) -> int:
    """Reports and blanks unit ``offset``; returns the statements it held."""
    log.bad(path, first + offset, reason)
    held = sum(1 for line in lines[offset].split(b"\n") if line.strip() and not line.lstrip().startswith(b"#"))
    lines[offset] = b""
    return held


def _unit_of(lines: list[bytes], start: int, lineno: int | None) -> int:
    """The offset from ``start`` of the unit holding line ``lineno`` (1-based) of ``lines[start:]`` joined."""
    if lineno is None:
        return 0
    seen = 0
    for offset in range(len(lines) - start):
        seen += lines[start + offset].count(b"\n") + 1
        if seen >= lineno:
            return offset
    return len(lines) - start - 1


def _refusal(unit: bytes) -> str | None:
    """Why the parser refuses ``unit`` alone (None: it does not)."""
    try:
        _parse(unit)
    except SyntaxError as exc:
        return parser_reason(exc)
    return None


def _parse(data: bytes) -> None:
    """Parses ``data`` as N-Triples as Oxigraph's bulk loader does (raises its SyntaxError)."""
    deque(ox.parse(data, ox.RdfFormat.N_TRIPLES), maxlen=0)
