"""The spool's ``literals.bin`` (see :mod:`kg_adapters.index.spool`): the literal rows a flush appends, as one
block of columns per flush, written and read by numpy (no Python object per row).

A block: a head ``<4sIQQQ`` (``KGL1``, the number of tags T, their bytes, the number of rows N, of value bytes
V), T tag lengths
(uint32) and the tags' bytes (the collector's tag table: tag numbers are its indexes), then N entity numbers
(int64, the load's: a run's first number added), N relation numbers (int32), N tag numbers (int32), N value
lengths (uint32) and the V bytes of the values. A file is whole blocks (a checkpoint's sizes fall between
them: a block is written by one flush); 20 bytes per row beside its value.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from kg_adapters.index.literals import LiteralColumns, LiteralRow, starts_of

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_MAGIC = b"KGL1"
_HEAD = struct.Struct("<4sIQQQ")
FILE_ROW_BYTES = 20
"""Disk one spooled literal row takes beside its value."""


@dataclass(frozen=True, kw_only=True)
class LiteralBlock:
    """The rows of one block: entities (int64, the load's numbers), relations, tags (numbers into
    ``tag_table``), lengths (int64) and the values' bytes."""

    entities: npt.NDArray[np.int64]
    relations: npt.NDArray[np.int32]
    tags: npt.NDArray[np.int32]
    lengths: npt.NDArray[np.int64]
    values: bytes
    tag_table: list[bytes]

    def rows(self) -> list[LiteralRow]:
        """The rows as tuples (tags as bytes)."""
        ends = self.lengths.cumsum().tolist()
        begins = (self.lengths.cumsum() - self.lengths).tolist()
        values, table = self.values, self.tag_table
        columns = (self.entities.tolist(), self.relations.tolist(), self.tags.tolist(), begins, ends)
        return [
            (entity, relation, values[begin:end], table[tag])
            for entity, relation, tag, begin, end in zip(*columns, strict=True)
        ]

    def starts(self) -> npt.NDArray[np.int64]:
        return starts_of(self.lengths)


def write_block(handle: IO[bytes], columns: LiteralColumns, base: int) -> None:
    """Appends ``columns``' rows as one block (nothing when there are none), entity numbers plus ``base``."""
    import numpy as np

    if not len(columns):
        return
    table = columns.tag_table
    entities, relations, tags, lengths = columns.arrays()
    handle.write(_HEAD.pack(_MAGIC, len(table), sum(map(len, table)), len(entities), len(columns.values)))
    handle.write(np.array([len(tag) for tag in table], dtype="<u4").tobytes())
    handle.write(b"".join(table))
    handle.write((entities.astype("<i8") + base).tobytes())
    handle.write(relations.astype("<i4").tobytes())
    handle.write(tags.astype("<i4").tobytes())
    handle.write(lengths.astype("<u4").tobytes())
    handle.write(columns.values)


def read_blocks(data: bytes) -> Iterator[LiteralBlock]:
    """The blocks of a ``literals.bin`` stretch; ValueError when it does not end at a block's end."""
    position = 0
    while position < len(data):
        block, position = _block_at(data, position)
        yield block


def file_blocks(path: Path, size: int | None = None) -> Iterator[LiteralBlock]:
    """The blocks of a ``literals.bin`` file (its first ``size`` bytes when given), read one at a time."""
    with open(path, "rb") as handle:
        left = path.stat().st_size if size is None else size
        while left > 0:
            head = handle.read(min(_HEAD.size, left))
            tags, tag_bytes, rows, value_bytes = _head(head)
            body_size = 4 * tags + tag_bytes + FILE_ROW_BYTES * rows + value_bytes
            if _HEAD.size + body_size > left:
                raise ValueError("literals.bin ends inside a block: the spool is damaged")
            block, _end = _block_at(head + handle.read(body_size), 0)
            left -= _HEAD.size + body_size
            yield block


def _head(head: bytes) -> tuple[int, int, int, int]:
    """(tags, their bytes, rows, value bytes) of a block's head."""
    if len(head) < _HEAD.size:
        raise ValueError("literals.bin ends inside a block: the spool is damaged")
    magic, tags, tag_bytes, rows, value_bytes = _HEAD.unpack(head)
    if magic != _MAGIC:
        raise ValueError("literals.bin holds no literal block here: the spool is damaged")
    return tags, tag_bytes, rows, value_bytes


def _block_at(data: bytes, position: int) -> tuple[LiteralBlock, int]:
    import numpy as np

    tag_count, tag_bytes, rows, value_bytes = _head(data[position : position + _HEAD.size])
    at = position + _HEAD.size
    end = at + 4 * tag_count + tag_bytes + FILE_ROW_BYTES * rows + value_bytes
    if end > len(data):
        raise ValueError("literals.bin ends inside a block: the spool is damaged")
    tag_lengths = np.frombuffer(data, dtype="<u4", count=tag_count, offset=at).tolist() if tag_count else []
    at += 4 * tag_count
    if sum(tag_lengths) != tag_bytes:
        raise ValueError("literals.bin holds a damaged block")
    table = []
    for length in tag_lengths:
        table.append(bytes(data[at : at + length]))
        at += length

    def column(dtype: str, size: int) -> npt.NDArray[np.generic]:
        nonlocal at
        found = np.frombuffer(data, dtype=dtype, count=rows, offset=at) if rows else np.zeros(0, dtype=dtype)
        at += size * rows
        return found

    entities = column("<i8", 8).astype(np.int64)
    relations = column("<i4", 4).astype(np.int32)
    tags = column("<i4", 4).astype(np.int32)
    lengths = column("<u4", 4).astype(np.int64)
    if rows and (int(tags.min()) < 0 or int(tags.max()) >= len(table) or int(lengths.sum()) != value_bytes):
        raise ValueError("literals.bin holds a damaged block")
    block = LiteralBlock(
        entities=entities,
        relations=relations,
        tags=tags,
        lengths=lengths,
        values=bytes(data[at : at + value_bytes]),
        tag_table=table,
    )
    return block, end


def add_blocks(columns: LiteralColumns, blocks: Iterator[LiteralBlock]) -> None:
    """Appends the blocks' rows to ``columns`` (entity numbers as they are: below 2**31, as a spool reloaded
    whole has them), tags renumbered into its table."""
    import numpy as np

    for block in blocks:
        if block.entities.size and not 0 <= int(block.entities.min()) <= int(block.entities.max()) < 1 << 31:
            raise ValueError("literals.bin holds an entity number out of range: the spool is damaged")
        numbers = np.array([columns.tag_number(tag) for tag in block.tag_table] or [0], dtype=np.int32)
        columns.extend_packed(
            block.entities.astype(np.int32).tobytes(),
            block.relations.tobytes(),
            numbers[block.tags].tobytes(),
            block.lengths.astype(np.uint32).tobytes(),
            block.values,
        )


def literal_rows(data: bytes) -> list[LiteralRow]:
    """The rows of a ``literals.bin`` stretch, as tuples (for tests)."""
    return [row for block in read_blocks(data) for row in block.rows()]
