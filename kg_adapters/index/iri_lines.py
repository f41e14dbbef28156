"""Splitting the IRI-to-IRI lines of N-Triples text with numpy: no Python object per line or per IRI.

A load numbers every IRI it hands to Oxigraph (:class:`kg_adapters.index.build.TripleCollector`).
Splitting each line with a regular expression and looking every IRI up in a dict of millions cost
more than half the collector's time (a dict lookup that misses the CPU's caches per IRI). Here the
lines ``<s> <p> <o> .`` are found by byte positions, each chunk's IRIs are compared as fixed-width
rows of bytes (a hash to group them, then every row compared with its group's first: exact), and
only each chunk's distinct IRIs become ``bytes`` for the collector's dicts (about a third of them on
a Freebase dump, whose subjects repeat on consecutive lines).

This is the fallback of the C extension (:mod:`kg_adapters.index.numbering`), which splits and numbers the
same lines in one pass where it was built; ``tests/test_numbering.py`` holds the two to the same results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Positions = npt.NDArray[np.int64]

WIDEST_IRI = 128
"""The longest IRI (in bytes) compared as a row of bytes; a line with a longer one is split the
old way (:attr:`IriLines.long`), so that one long IRI does not widen every row of its chunk."""

_LT, _GT, _SPACE, _TAB, _DOT, _BACKSLASH, _NEWLINE = 60, 62, 32, 9, 46, 92, 10


@dataclass(frozen=True, kw_only=True)
class Distinct:
    """A column of IRIs as its distinct values (in order of first sight) and, per IRI, which one."""

    values: list[bytes]
    which: Positions


@dataclass(frozen=True, kw_only=True)
class IriLines:
    """The lines ``<s> <p> <o> .`` of a text (a single space or tab between terms, no escape, no ``<``, ``>`` or
    backslash inside an IRI: the lines the strict pattern ``build._SIMPLE_TRIPLE`` splits), with
    IRIs of at most :data:`WIDEST_IRI` bytes. ``entities`` numbers subjects then objects (the
    subjects' positions first, then the objects'); ``rest`` is the other lines, with their line
    breaks; ``long`` the split lines with a longer IRI."""

    count: int
    entities: Distinct
    relations: Distinct
    rest: bytes
    long: bytes


def split_iri_lines(data: bytes) -> IriLines | None:
    """The IRI-to-IRI lines of N-Triples ``data`` (see :class:`IriLines`); None when two different
    IRIs of one chunk share the hash bits compared (the high bits: the low ones hold positions), and the
    caller splits it the slow way: rare, and exact either way.

    A line is split when it reads ``<X> <Y> <Z> .`` (a space or a tab for each space) with exactly three ``>``
    and no backslash: in a
    line Oxigraph accepts (the load fails otherwise) an IRI then holds no ``<``, ``>`` or escape."""
    import numpy as np

    text = np.frombuffer(data, dtype=np.uint8)
    size = len(data)
    breaks = np.flatnonzero(text == _NEWLINE)
    starts = np.concatenate(([0], breaks + 1))
    ends = np.concatenate((breaks, [size]))
    closing = np.flatnonzero(text == _GT)
    first_gt = np.searchsorted(closing, starts)
    candidate = (ends - starts >= 10) & (np.searchsorted(closing, ends) - first_gt == 3)
    if data.find(b"\\") >= 0:
        escapes = np.flatnonzero(text == _BACKSLASH)
        candidate &= np.searchsorted(escapes, ends) == np.searchsorted(escapes, starts)
    lines = np.flatnonzero(candidate)
    starts, ends, first_gt = starts[lines], ends[lines], first_gt[lines]
    gt1, gt2, gt3 = closing[first_gt], closing[first_gt + 1], closing[first_gt + 2]
    last = size - 1
    shaped = (  # <X> <Y> <Z> . (each separator a space or a tab)
        (text[starts] == _LT)
        & _separator(text[gt1 + 1])
        & (text[gt1 + 2] == _LT)
        & _separator(text[gt2 + 1])
        & (text[np.minimum(gt2 + 2, last)] == _LT)  # past the text when a line ends ">>>"
        & (gt3 == ends - 3)
        & _separator(text[np.minimum(gt3 + 1, last)])
        & (text[np.minimum(gt3 + 2, last)] == _DOT)
    )
    short = shaped & (np.maximum(np.maximum(gt1 - starts, gt2 - gt1), gt3 - gt2) - 3 <= WIDEST_IRI)
    long_lines = lines[shaped & ~short]
    keep = np.flatnonzero(short)
    lines, starts, gt1, gt2, gt3 = (a[keep] for a in (lines, starts, gt1, gt2, gt3))
    entities = _distinct(text, np.concatenate((starts, gt2 + 2)) + 1, np.concatenate((gt1, gt3)))
    relations = _distinct(text, gt1 + 3, gt2)
    if entities is None or relations is None:
        return None
    other = np.ones(breaks.size + 1, dtype=bool)
    other[lines] = False
    other[long_lines] = False
    return IriLines(
        count=int(lines.size),
        entities=entities,
        relations=relations,
        rest=_lines(data, breaks, np.flatnonzero(other)),
        long=_lines(data, breaks, long_lines),
    )


def _separator(found: npt.NDArray[np.uint8]) -> npt.NDArray[np.bool_]:
    """Whether each byte separates terms: a space, or a tab (the Freebase dump's layout)."""
    return (found == _SPACE) | (found == _TAB)  # type: ignore[no-any-return]


def _lines(data: bytes, breaks: Positions, chosen: Positions) -> bytes:
    """Lines ``chosen`` (numbers) of ``data``, each followed by a line break."""
    if not chosen.size:
        return b""
    import numpy as np

    starts = np.concatenate(([0], breaks + 1))[chosen].tolist()
    ends = np.concatenate((breaks, [len(data)]))[chosen].tolist()
    return b"\n".join([data[start:end] for start, end in zip(starts, ends, strict=True)]) + b"\n"


_WORD_MASKS = [(1 << (8 * size)) - 1 for size in range(8)] + [(1 << 64) - 1]
"""The low ``size`` bytes of a little-endian 64-bit word, by ``size``."""


def _distinct(text: npt.NDArray[np.uint8], starts: Positions, ends: Positions) -> Distinct | None:
    """The byte strings ``text[starts[i]:ends[i]]`` (each at most :data:`WIDEST_IRI` bytes, holding
    no NUL byte: an IRI cannot) grouped by a hash, each then compared whole with its group's first."""
    import numpy as np

    count = starts.size
    if not count:
        return Distinct(values=[], which=np.zeros(0, dtype=np.int64))
    sizes = ends - starts
    width = max(8, -(-int(sizes.max()) // 8) * 8)
    padded = np.zeros(text.size + width, dtype=np.uint8)
    padded[: text.size] = text
    words = np.lib.stride_tricks.sliding_window_view(padded, width)[starts].view("<u8")
    masks = np.array(_WORD_MASKS, dtype=np.uint64)
    hashed = np.zeros(count, dtype=np.uint64)
    for column in range(words.shape[1]):  # the bytes after each string's end zeroed, then hashed
        words[:, column] &= masks[np.clip(sizes - 8 * column, 0, 8)]
        hashed ^= words[:, column]
        hashed *= np.uint64(0x9E3779B97F4A7C15)
        hashed ^= hashed >> np.uint64(29)
    # one sort of (hash's high bits, position): groups of equal hashes, each in order of position
    bits = max(int(count - 1).bit_length(), 1)
    low = np.uint64((1 << bits) - 1)
    keys = (hashed & ~low) | np.arange(count, dtype=np.uint64)
    keys.sort()
    positions = (keys & low).astype(np.int64)
    new = np.empty(count, dtype=bool)
    new[0] = True
    np.not_equal(keys[1:] >> np.uint64(bits), keys[:-1] >> np.uint64(bits), out=new[1:])
    group = np.cumsum(new) - 1
    firsts = positions[new]  # each group's first position, groups in hash order
    which = np.empty(count, dtype=np.int64)
    which[positions] = group
    if not (words == words[firsts[which]]).all():
        return None  # two strings with one hash
    order = np.argsort(firsts)  # groups in order of first sight
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    values = words[firsts[order]].view(f"S{width}").ravel().tolist()
    return Distinct(values=values, which=rank[which])
