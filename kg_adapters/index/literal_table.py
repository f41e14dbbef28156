"""The traversal index's literal table from a load's literal rows (:class:`~kg_adapters.index.literals.LiteralColumns`),
sorted by numpy over the columns: no Python object per row, no Python comparison of values.

Values are ordered as their UTF-8 bytes (:func:`value_ranks`): by their first 8 bytes read as one big-endian
number, then, among values that tie, by their next 8, and so on (a few rounds: most values differ early).
Rows repeated (a store is a set; a dump may state a triple twice) end up adjacent in the table's order and are
dropped there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from kg_adapters.index.literals import LiteralColumns, gather, starts_of

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from kg_adapters.index.literal_spool import LiteralBlock

    Ints = npt.NDArray[np.int64]
    RankOf = Callable[[Ints], Any]


def literal_table(
    columns: LiteralColumns, entity_rank: Ints, relation_rank: Ints, width: int
) -> tuple[Ints, npt.NDArray[np.int32], Ints, bytes, list[str]]:
    """The literal objects by (entity, relation), each key's literals in answer order
    (``node_sort_key``; UTF-8 bytes sort as their text does), each distinct row once: keys, tag numbers
    (``""`` plain, ``@lang``, ``^datatype``), offsets into the UTF-8 value blob, the blob, and the tags. Tags
    are converted as the backend converts literals (``plain_literal``, which keeps the text and maps the
    datatype and language: called once per distinct tag)."""
    entities, relations, row_tags, lengths = columns.arrays()
    keys = entity_rank[entities] * width + relation_rank[relations]
    return keyed_table(keys, row_tags, columns.tag_table, lengths, columns.values)


def keyed_table(
    keys: Ints,
    row_tags: npt.NDArray[np.int32],
    tag_table: list[bytes],
    lengths: Ints,
    values: bytes | bytearray,
) -> tuple[Ints, npt.NDArray[np.int32], Ints, bytes, list[str]]:
    """:func:`literal_table` of rows given by their keys (entity rank * width + relation rank), tags (numbers
    into ``tag_table``), value lengths and values (one after the other in ``values``)."""
    import numpy as np

    count = len(keys)
    tags = [""]
    numbers: dict[str, int] = {"": 0}
    tag_of = np.zeros(max(len(tag_table), 1), dtype=np.int32)  # row tag -> tag number
    for row_tag in np.unique(row_tags).tolist():
        tag = literal_tag_order(tag_table[row_tag])[0]
        number = numbers.get(tag)
        if number is None:
            number = numbers[tag] = len(tags)
            tags.append(tag)
        tag_of[row_tag] = number
    tag_numbers = tag_of[row_tags]
    order = np.argsort(keys, kind="stable")
    starts = starts_of(lengths)
    # answer order within a key: text, then datatype, then language (``node_sort_key``); only keys with several
    # literals need it: their rows are sorted together, by key first (so each lands in its key's places), then
    # by row tag and row order (ties that write the same bytes), so that a row repeated lands beside its first
    if count > 1:
        sorted_keys = keys[order]
        repeated = np.zeros(count, dtype=bool)
        same = sorted_keys[1:] == sorted_keys[:-1]
        repeated[1:] |= same
        repeated[:-1] |= same
        if repeated.any():
            places = [tag_sort(tag) for tag in tags]
            ranked = sorted(places)
            tag_rank = np.array([ranked.index(each) for each in places], dtype=np.int64)
            positions = order[repeated]
            text_rank = value_ranks(values, starts[positions], lengths[positions])
            position_keys, position_tags = keys[positions], row_tags[positions]
            by = np.lexsort((positions, position_tags, tag_rank[tag_numbers[positions]], text_rank, position_keys))
            order[repeated] = positions[by]
            text_rank, position_keys, position_tags = text_rank[by], position_keys[by], position_tags[by]
            again = np.zeros(len(by), dtype=bool)
            again[1:] = (
                (position_keys[1:] == position_keys[:-1])
                & (text_rank[1:] == text_rank[:-1])
                & (position_tags[1:] == position_tags[:-1])
            )
            if again.any():  # the same triple twice: its first row kept
                kept = np.ones(count, dtype=bool)
                kept[np.flatnonzero(repeated)[again]] = False
                order = order[kept]
    chosen_lengths = lengths[order]
    offsets = np.zeros(len(order) + 1, dtype=np.int64)
    np.cumsum(chosen_lengths, out=offsets[1:])
    blob = gather(values, starts[order], chosen_lengths)
    final = tag_numbers[order]
    # tags numbered in order of first use, "" first: the same files whatever order the rows came in
    used, first_use = np.unique(final, return_index=True)
    renumber = np.zeros(len(tags), dtype=np.int32)
    ordered_tags = [""]
    for tag_number in used[np.argsort(first_use, kind="stable")].tolist():
        if tag_number:
            renumber[tag_number] = len(ordered_tags)
            ordered_tags.append(tags[tag_number])
    return keys[order], renumber[final], offsets, blob, ordered_tags


_MASKS = [((1 << 64) - 1) ^ ((1 << (8 * (8 - kept))) - 1) for kept in range(9)]
"""The mask of a big-endian 8-byte word that keeps its first ``kept`` bytes (index ``kept``)."""


def value_ranks(blob: bytes | bytearray | memoryview, starts: Ints, lengths: Ints) -> Ints:
    """A rank for each value ``blob[start:start + length]`` in byte order, equal values sharing one (the place
    in that order of the first of them). Round k sorts the values still tied by their bytes 8k to 8k+8 (a
    big-endian word, bytes past the value's end zero) and how many of those bytes the value has (so ``b"a"``
    comes before ``b"a\\0"``); values tied on a word that is not full are equal, so the rounds end by the
    longest tied value's length. Each round sorts only the values still tied, within their ties."""
    import numpy as np

    count = len(starts)
    ranks = np.zeros(count, dtype=np.int64)
    if count < 2:
        return ranks
    source = np.frombuffer(blob, dtype=np.uint8)
    if len(source) < 8:
        source = np.concatenate((source, np.zeros(8, dtype=np.uint8)))
    last = len(source) - 8  # the last place a whole word is read from
    words = np.ndarray(shape=(last + 1,), dtype=">u8", buffer=source, strides=(1,))
    masks = np.array(_MASKS, dtype=np.uint64)
    alive = np.arange(count, dtype=np.int64)  # values tied with another on every byte so far
    at = 0
    while alive.size:
        here = np.clip(lengths[alive] - at, 0, 8)
        place = starts[alive] + at
        late = np.clip(place - last, 0, 8).astype(np.uint64)  # a word near the blob's end: read earlier, shifted
        word = words[np.minimum(place, last)].astype(np.uint64)
        word = np.where(late < 8, word << (late * np.uint64(8) % np.uint64(64)), np.uint64(0)) & masks[here]
        rank = ranks[alive]
        by = np.lexsort((here, word, rank))
        alive, here, word, rank = alive[by], here[by], word[by], rank[by]
        size = alive.size
        spots = np.arange(size, dtype=np.int64)
        tie_starts = np.ones(size, dtype=bool)
        tie_starts[1:] = rank[1:] != rank[:-1]
        splits = tie_starts.copy()
        splits[1:] |= (word[1:] != word[:-1]) | (here[1:] != here[:-1])
        first_of_tie = np.maximum.accumulate(np.where(tie_starts, spots, 0))
        first_of_split = np.maximum.accumulate(np.where(splits, spots, 0))
        ranks[alive] = rank + (first_of_split - first_of_tie)
        tied = np.zeros(size, dtype=bool)
        tied[1:] = ~splits[1:]
        tied[:-1] |= ~splits[1:]
        alive = alive[tied & (here == 8)]  # tied on a full word: their next bytes decide
        at += 8
    return ranks


TABLE_ROW_BYTES = 160
"""Memory one row takes while :func:`keyed_table` sorts it (keys, tags, lengths, starts, the orders and ranks and
their sorts' copies), beside its value twice (the rows' and the table's)."""


def spilled_table(
    blocks: Iterable[LiteralBlock], rank_of: RankOf, relation_rank: Ints, width: int, share: int
) -> tuple[Ints, npt.NDArray[np.int32], Ints, bytes, list[str]] | None:
    """:func:`literal_table` of a spilled collection's blocks (``literals.bin``) when its rows take at most
    ``share`` bytes while sorted (None otherwise: the caller sorts them on disk); ``rank_of`` gives the entity
    rank of the load's entity numbers."""
    import numpy as np

    tag_table: list[bytes] = []
    tag_numbers: dict[bytes, int] = {}
    parts: list[tuple[Ints, npt.NDArray[np.int32], Ints, bytes]] = []
    held = 0
    for block in blocks:
        held += 2 * len(block.values) + TABLE_ROW_BYTES * len(block.lengths)
        if held > share:
            return None
        for tag in block.tag_table:
            if tag not in tag_numbers:
                tag_numbers[tag] = len(tag_table)
                tag_table.append(tag)
        mapping = np.array([tag_numbers[tag] for tag in block.tag_table] or [0], dtype=np.int32)
        keys = np.asarray(rank_of(block.entities), dtype=np.int64) * width + relation_rank[block.relations]
        parts.append((keys, mapping[block.tags], block.lengths, block.values))
    if not parts:
        return keyed_table(
            np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32), [], np.zeros(0, dtype=np.int64), b""
        )
    keys = np.concatenate([part[0] for part in parts])
    row_tags = np.concatenate([part[1] for part in parts])
    lengths = np.concatenate([part[2] for part in parts])
    values = b"".join(part[3] for part in parts)
    del parts
    return keyed_table(keys, row_tags, tag_table, lengths, values)


def literal_tag_order(row_tag: bytes) -> tuple[str, tuple[str, str]]:
    """The tag of a literal row's tag (``""``, ``@lang`` or ``^datatype``, as the backend converts
    literals: ``plain_literal`` keeps the text and maps the datatype and language), and its place in
    answer order (datatype, then language: ``node_sort_key``)."""
    from kg_adapters.terms import RDF_LANG_STRING, plain_literal

    text = row_tag[1:].decode("utf-8")
    language = row_tag[:1] == b"@"
    value = plain_literal("", RDF_LANG_STRING, text) if language else plain_literal("", text or None, None)
    tag = f"@{value.lang}" if value.lang else f"^{value.datatype}" if value.datatype else ""
    return tag, tag_sort(tag)


def tag_sort(tag: str) -> tuple[str, str]:
    """A converted tag's place in answer order: datatype, then language (``node_sort_key``)."""
    return (tag[1:], "") if tag[:1] == "^" else ("", tag[1:])
