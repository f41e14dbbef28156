"""The literal rows a load collects (:data:`LiteralRow`): held in the order first added
(:class:`LiteralRows`), and turned into the name index's rows (:func:`sorted_names`)."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Iterator, Sequence

LiteralRow = tuple[int, int, bytes, bytes]
"""(entity, relation, value, tag) of a literal triple: the value as UTF-8, the tag ``b""`` for a
plain string (``xsd:string`` too), ``b"@" + language`` or ``b"^" + datatype IRI``. One shape for
the regex's lines and the parser's terms, so that a set of rows holds each store triple once."""


class LiteralRows:
    """A set of literal rows that gives them back in the order first added (a dict's keys). A ``set``
    gives them in hash order, scattered in memory, and every pass of the index write over them (the
    spool's save, the name rows, the literal table) then waits on the cache: 3-6x longer per pass."""

    __slots__ = ("_rows",)

    def __init__(self) -> None:
        self._rows: dict[LiteralRow, None] = {}

    def add(self, row: LiteralRow) -> None:
        self._rows[row] = None

    def update(self, rows: Iterable[LiteralRow]) -> None:
        self._rows.update(zip(rows, itertools.repeat(None)))

    def clear(self) -> None:
        self._rows.clear()

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[LiteralRow]:
        return iter(self._rows)


def sorted_names(rows: Sequence[LiteralRow], subjects: Sequence[str]) -> list[tuple[str, str, str]]:
    """The distinct (subject IRI, label, language) of literal ``rows`` (``subjects``: each row's subject
    IRI, decoded by the table in one call), sorted: first by IRI alone (one string compared, not a tuple),
    then as a whole, which finds the rows nearly in order and only puts a subject's several names in order."""
    names = list(
        dict.fromkeys(
            (subject, value.decode(), tag[1:].decode() if tag[:1] == b"@" else "")
            for subject, (_entity, _relation, value, tag) in zip(subjects, rows, strict=True)
        )
    )
    names.sort(key=operator.itemgetter(0))
    names.sort()
    return names
