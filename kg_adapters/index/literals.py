"""The literal rows a load collects, held column-wise (:class:`LiteralColumns`: no Python object per row),
and turned into the name index's rows (:mod:`kg_adapters.index.literal_names`).

A row is (entity, relation, value, tag) of a literal triple: the value as UTF-8, the tag ``b""`` for a
plain string (``xsd:string`` too), ``b"@" + language`` or ``b"^" + datatype IRI`` (:data:`LiteralRow`, the
shape tests and the spilled build read them in). One shape for the split's lines and the parser's terms, so
that rows of one store triple are equal; a load may collect a triple twice (a store is a set): duplicates
are dropped by the literal table's sort (:mod:`kg_adapters.index.literal_table`), where they are adjacent.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Ints = npt.NDArray[np.int64]
    Int32s = npt.NDArray[np.int32]

LiteralRow = tuple[int, int, bytes, bytes]
"""(entity, relation, value, tag) of a literal triple (see the module docstring)."""

COLUMN_BYTES = 16
"""Memory one row takes in :class:`LiteralColumns` beyond its value's bytes (four 4-byte numbers)."""


class LiteralColumns:
    """Literal rows in the order added, column-wise: entity and relation numbers (int32), a tag number
    per row (into :attr:`tag_table`, the distinct tags, kept by :meth:`clear`: the numbers stay valid for
    the whole load), each value's length (uint32) and the values one after the other in one blob. About
    :data:`COLUMN_BYTES` per row beside the value, where a tuple per row took ~240; a pass over them is
    numpy's, not a Python loop's."""

    __slots__ = ("_tag_numbers", "entities", "lengths", "relations", "tag_table", "tags", "values")

    def __init__(self) -> None:
        self.entities, self.relations, self.tags = array("i"), array("i"), array("i")
        self.lengths = array("I")
        self.values = bytearray()
        self.tag_table: list[bytes] = []
        self._tag_numbers: dict[bytes, int] = {}

    def tag_number(self, tag: bytes) -> int:
        """The number of a row tag (numbered on first sight)."""
        number = self._tag_numbers.get(tag)
        if number is None:
            number = self._tag_numbers[tag] = len(self.tag_table)
            self.tag_table.append(tag)
        return number

    def append(self, entity: int, relation: int, value: bytes, tag: bytes) -> None:
        self.entities.append(entity)
        self.relations.append(relation)
        self.tags.append(self.tag_number(tag))
        self.lengths.append(_length(len(value)))
        self.values += value

    def extend(
        self, entities: Iterable[int], relations: Iterable[int], values: list[bytes], tags: Iterable[int]
    ) -> None:
        """Adds rows given by column (``tags`` as numbers of :meth:`tag_number`)."""
        blob = b"".join(values)
        _length(max(map(len, values), default=0))
        self.entities.extend(entities)
        self.relations.extend(relations)
        self.tags.extend(tags)
        self.lengths.extend(map(len, values))
        self.values += blob

    def extend_packed(self, entities: bytes, relations: bytes, tags: bytes, lengths: bytes, values: bytes) -> None:
        """Adds rows given as native int32 columns (``lengths``: uint32) and their values' blob (the C split's)."""
        self.entities.frombytes(entities)
        self.relations.frombytes(relations)
        self.tags.frombytes(tags)
        self.lengths.frombytes(lengths)
        self.values += values

    def prepend(self, other: LiteralColumns) -> None:
        """Puts ``other``'s rows (numbered with this table's tags) before these."""
        for name in ("entities", "relations", "tags", "lengths"):
            column = array(getattr(other, name).typecode, getattr(other, name))
            column.extend(getattr(self, name))
            setattr(self, name, column)
        self.values[:0] = other.values

    def empty_like(self) -> LiteralColumns:
        """Empty columns numbering tags as these do (whose rows :meth:`prepend` takes)."""
        empty = LiteralColumns()
        empty.tag_table, empty._tag_numbers = self.tag_table, self._tag_numbers
        return empty

    def clear(self) -> None:
        """Drops the rows (the tag numbers stay)."""
        self.entities, self.relations, self.tags = array("i"), array("i"), array("i")
        self.lengths = array("I")
        self.values = bytearray()

    def __len__(self) -> int:
        return len(self.entities)

    def nbytes(self) -> int:
        """The memory the rows take (the columns and the values; arrays' spare room not counted)."""
        return len(self.entities) * COLUMN_BYTES + len(self.values)

    def arrays(self) -> tuple[Int32s, Int32s, Int32s, Ints]:
        """(entities, relations, tags, lengths) as numpy views of the columns (lengths widened to int64)."""
        import numpy as np

        return (
            np.frombuffer(self.entities, dtype=np.int32),
            np.frombuffer(self.relations, dtype=np.int32),
            np.frombuffer(self.tags, dtype=np.int32),
            np.frombuffer(self.lengths, dtype=np.uint32).astype(np.int64),
        )

    def starts(self) -> npt.NDArray[np.int64]:
        """Where each value starts in :attr:`values`."""
        return starts_of(self.arrays()[3])

    def rows(self) -> Iterator[LiteralRow]:
        """The rows as tuples, in the order added (duplicates included): for tests and small reads."""
        values = bytes(self.values)
        position = 0
        for entity, relation, tag, length in zip(self.entities, self.relations, self.tags, self.lengths, strict=True):
            yield entity, relation, values[position : position + length], self.tag_table[tag]
            position += length


def starts_of(lengths: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The start of each value of a blob, from the values' lengths."""
    import numpy as np

    starts = np.zeros(len(lengths), dtype=np.int64)
    if len(lengths) > 1:
        np.cumsum(lengths[:-1], out=starts[1:])
    return starts


def _length(size: int) -> int:
    if size >= 1 << 32:
        raise ValueError("a literal value of 4 GiB or more cannot be indexed")
    return size


_GATHER_BYTES = 1 << 21
"""Value bytes copied per step of :func:`gather` (its index takes ~24 bytes per byte copied while it is made);
a value longer than that is copied alone, as one slice."""
_GATHER_ROWS = 1 << 20
"""Values copied per step at most (empty ones count too)."""


def gather(blob: bytes | bytearray | memoryview, starts: Ints, lengths: Ints) -> bytes:
    """The values ``blob[start:start + length]`` one after the other, numpy copying a few MiB of them at a time."""
    import numpy as np

    source = np.frombuffer(blob, dtype=np.uint8)
    ends = np.cumsum(lengths)
    out = np.empty(int(ends[-1]) if len(ends) else 0, dtype=np.uint8)
    first = 0
    while first < len(lengths):
        done = int(ends[first - 1]) if first else 0  # bytes of the values before this step's
        stop = min(int(np.searchsorted(ends, done + _GATHER_BYTES, side="right")), first + _GATHER_ROWS)
        if stop == first:  # one value longer than a step
            start, length = int(starts[first]), int(lengths[first])
            out[done : done + length] = source[start : start + length]
            first += 1
            continue
        block_lengths = lengths[first:stop]
        size = int(ends[stop - 1]) - done
        block_ends = ends[first:stop] - done
        # each byte's source: its value's start, plus its place after the value's first byte
        index = np.repeat(starts[first:stop] - (block_ends - block_lengths), block_lengths)
        index += np.arange(size, dtype=np.int64)
        out[done : done + size] = source[index]
        first = stop
    return out.tobytes()
