"""The tables that number a load's IRIs (:class:`~kg_adapters.index.build.TripleCollector`): IRI bytes ->
int32 number, in order of first sight, ``table[iri]`` numbering an IRI not seen yet.

The C extension ``_numbering`` (built at install: the table in ``_numbering.c``, the splits in
``_numbering_split.c``) holds the table in its own memory (about a fifth of a dict's per IRI, no Python object per
IRI) and numbers the IRI-to-IRI lines of an N-Triples chunk in one pass (:func:`split_numbered`), looking several
keys up at once (a lookup waits on memory, not on work); where it could not be built (no C compiler at install)
a dict does the same (:class:`PyNumbering`), :mod:`kg_adapters.index.iri_lines` splits the IRI lines and a
regular expression the literal ones (:func:`compiled_literals`). Both give the same numbers, hence the same spool
and the same index (``tests/test_numbering.py``); only where the numpy split falls back to its regular
expression (two IRIs of a chunk hashed alike: rare) does the Python path number a chunk's IRIs in line order
rather than the short lines first, and the index, which renumbers entities by id, is the same.
"""

from __future__ import annotations

import itertools
import operator
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from array import array

    import numpy as np
    import numpy.typing as npt

    Int32s = bytes | array[int] | npt.NDArray[np.int32]
    """Numbers as native int32 (a buffer)."""

IRI_ENTRY_BYTES = 120
"""Memory one entry of a :class:`PyNumbering` takes beyond the IRI's bytes (the key object, the number, the
table)."""


class IriNumbers(Protocol):
    """What the collector, its spool and its spilled build use of a numbering table."""

    def __getitem__(self, iri: bytes, /) -> int: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[bytes]: ...
    def get(self, iri: bytes, /) -> int | None: ...
    def keys_from(self, start: int, /) -> list[bytes]: ...
    def items(self) -> Iterable[tuple[bytes, int]]: ...
    def strings(self) -> list[str]: ...
    def strings_at(self, numbers: Int32s, /) -> list[str]: ...
    def lines_from(self, start: int, /) -> bytes: ...
    def sorted_items(self) -> Iterator[tuple[bytes, int]]: ...
    def nbytes(self) -> int: ...


class PyNumbering(defaultdict[bytes, int]):
    """The numbering table as a dict (the fallback of the C ``Numbering``): lookups stay the dict's own."""

    def __init__(self) -> None:
        super().__init__(itertools.count().__next__)

    def keys_from(self, start: int, /) -> list[bytes]:
        """The IRIs numbered ``start`` and on, in number order (a dict keeps the order they were added in)."""
        return list(itertools.islice(self, start, None))

    def strings(self) -> list[str]:
        """The IRIs decoded (UTF-8), in number order."""
        return [iri.decode("utf-8") for iri in self]

    def strings_at(self, numbers: Int32s, /) -> list[str]:
        """The IRIs of ``numbers`` (native int32: ``array("i")``, numpy int32) decoded (UTF-8), in that order."""
        wanted = _int32s(numbers)
        if wanted and (min(wanted) < 0 or max(wanted) >= len(self)):
            raise IndexError("no IRI has this number")
        keys = list(self)
        return [keys[number].decode("utf-8") for number in wanted]

    def lines_from(self, start: int, /) -> bytes:
        """The IRIs numbered ``start`` and on, each followed by a line break (what the spool logs)."""
        start = operator.index(start)  # TypeError for a non-integer, as the C table's
        if start < 0:
            raise ValueError("lines_from(start): start must be at least 0")
        if start > sys.maxsize:
            raise OverflowError("lines_from(start): start is too large")
        return b"".join(iri + b"\n" for iri in itertools.islice(self, start, None))

    def sorted_items(self) -> Iterator[tuple[bytes, int]]:
        """(IRI, number) pairs in IRI order (a spilled run)."""
        return iter(sorted(self.items()))

    def nbytes(self) -> int:
        """The memory the table takes, estimated from its first IRIs' lengths."""
        sample = list(itertools.islice(self, 1000))
        return len(self) * (IRI_ENTRY_BYTES + (sum(map(len, sample)) // len(sample) if sample else 0))


_NUMBERS_EXPECTED = "strings_at(numbers): numbers are native int32 (array('i'), numpy int32 or their bytes)"


def _int32s(numbers: Int32s) -> list[int]:
    """The numbers of a native int32 buffer (what the C table's ``strings_at`` reads); TypeError for others."""
    try:
        view = memoryview(numbers)  # type: ignore[arg-type] # (numpy arrays are buffers; their stubs say not)
    except TypeError:
        raise TypeError(_NUMBERS_EXPECTED) from None
    if not view.c_contiguous:
        raise TypeError(_NUMBERS_EXPECTED)
    order = "@=<" if sys.byteorder == "little" else "@=>!"
    kind = view.format[1:] if view.format[:1] in order else view.format
    if (view.itemsize == 1 and kind in ("B", "b", "c") and view.nbytes % 4 == 0) or (
        view.itemsize == 4 and kind in ("i", "l")
    ):
        return view.cast("B").cast("i").tolist()
    raise TypeError(_NUMBERS_EXPECTED)


SplitNumbered = Callable[[bytes, IriNumbers, IriNumbers], tuple[int, bytes, bytes, bytes, bytes]]
SuffixDecision = Callable[[bytes], "tuple[int, Callable[[bytes], object] | None] | None"]
SplitLiterals = Callable[
    [bytes, IriNumbers, IriNumbers, SuffixDecision], tuple[bytes, bytes, bytes, bytes, bytes, bytes]
]

try:
    from kg_adapters.index._numbering import Numbering as _CNumbering
    from kg_adapters.index._numbering import split_literals, split_numbered
except ImportError:  # built without the extension: the dict and numpy's split
    COMPILED = False
else:
    COMPILED = True

    class Numbering(_CNumbering):
        """The C table, with its IRIs streamed in IRI order for a spilled run."""

        __slots__ = ()

        def sorted_items(self) -> Iterator[tuple[bytes, int]]:
            """(IRI, number) pairs in IRI order: the order sorted in C (4 bytes per IRI), each pair made as it
            is read, so that a spill holds no Python object per IRI beside the table."""
            import numpy as np

            order = np.frombuffer(self.order(), dtype=np.int32)
            key_at = self.key_at
            for start in range(0, order.size, 65536):
                for number in order[start : start + 65536].tolist():
                    yield key_at(number), number


def new_numbering(compiled: bool) -> IriNumbers:
    """An empty table: the C one when ``compiled`` and the extension was built, else a dict."""
    return Numbering() if compiled and COMPILED else PyNumbering()


def compiled_split(entities: IriNumbers, relations: IriNumbers) -> SplitNumbered | None:
    """The C split for these tables (:func:`split_numbered`: both C tables), None for the Python path."""
    if COMPILED and type(entities) is Numbering and type(relations) is Numbering:
        return split_numbered  # type: ignore[return-value]
    return None


def compiled_literals(entities: IriNumbers, relations: IriNumbers) -> SplitLiterals | None:
    """The C split of the simple literal lines (``build._SIMPLE_LITERAL``) for these tables, None for the
    Python path: ``(nodes, relations, tags, lengths, values, rest)``, the subjects' and predicates' numbers and the
    tag numbers ``decide(suffix)`` gave as int32 bytes, the values' lengths (uint32 bytes) and the values one after
    the other, of the lines ``decide(suffix)`` accepts, and the other lines (refused
    ones last, each after a line break: the regular expression's split; a refused line as written, where the
    Python path respells it with single spaces: the same triple for the parser)."""
    if COMPILED and type(entities) is Numbering and type(relations) is Numbering:
        return split_literals  # type: ignore[return-value]
    return None
