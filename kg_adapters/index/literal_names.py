"""The name index's rows from a load's literal rows (:class:`~kg_adapters.index.literals.LiteralColumns`):
(subject IRI, label, language or ``""``) of the rows of some predicates, distinct and in that order. In memory
only the name predicates' rows are decoded and sorted as Python tuples (:func:`sorted_names`: measured faster
at 4M than ranks by numpy, whose IRI order needs a Python sort anyway); a spilled collection's are sorted by
numpy over ranks (:func:`spilled_label_rows`: its IRIs are already numbered in IRI order) when they fit."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg_adapters.index.literal_table import value_ranks
from kg_adapters.index.literals import LiteralColumns, gather, starts_of

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from kg_adapters.index.literal_spool import LiteralBlock

    UniqueOf = Callable[[npt.NDArray[np.int64]], Any]


def named_rows(columns: LiteralColumns, relations: Iterable[int]) -> tuple[npt.NDArray[np.int32], list[str], list[str]]:
    """(entity numbers, values decoded, languages or ``""``) of the rows of ``relations``, in row order: only
    those rows' values are decoded."""
    import numpy as np

    entities, row_relations, tags, lengths = columns.arrays()
    which = np.flatnonzero(np.isin(row_relations, np.asarray(list(relations), dtype=np.int32)))
    if not which.size:
        return np.zeros(0, dtype=np.int32), [], []
    blob = gather(columns.values, starts_of(lengths)[which], lengths[which])
    ends = np.cumsum(lengths[which]).tolist()
    texts = [blob[start:end].decode() for start, end in zip([0, *ends[:-1]], ends, strict=True)]
    languages = [tag[1:].decode() if tag[:1] == b"@" else "" for tag in columns.tag_table]
    return entities[which], texts, list(map(languages.__getitem__, tags[which].tolist()))


def sorted_names(subjects: Sequence[str], texts: Sequence[str], languages: Sequence[str]) -> list[tuple[str, str, str]]:
    """The distinct (subject IRI, label, language) of literal rows given by column, sorted: first by IRI
    alone (one string compared, not a tuple), then as a whole, which finds the rows nearly in order and only
    puts a subject's several names in order."""
    names = list(dict.fromkeys(zip(subjects, texts, languages, strict=True)))
    names.sort(key=operator.itemgetter(0))
    names.sort()
    return names


def spilled_label_rows(
    blocks: Iterable[LiteralBlock], relations: Iterable[int], unique_of: UniqueOf, iris_log: Path, share: int
) -> list[tuple[str, str, str]] | None:
    """The name rows (:func:`sorted_names`) of a spilled collection's blocks (``literals.bin``) when the rows of
    ``relations`` take at most ``share`` bytes as columns (None otherwise: the caller sorts them on disk).
    ``unique_of`` maps the load's entity numbers to their IRIs' places in IRI order (several numbers of one
    IRI: one place); the IRIs are read from ``iris_log`` (``entities.log``: line N is the IRI numbered N)."""
    import numpy as np

    wanted = np.array(sorted(set(relations)), dtype=np.int32)
    languages: list[str] = []
    language_numbers: dict[str, int] = {}
    parts: list[tuple[Any, Any, Any, bytes]] = []
    held = 0
    for block in blocks:
        which = np.flatnonzero(np.isin(block.relations, wanted))
        if not which.size:
            continue
        numbers = []
        for tag in block.tag_table:
            language = tag[1:].decode() if tag[:1] == b"@" else ""
            numbers.append(language_numbers.setdefault(language, len(language_numbers)))
            if len(languages) < len(language_numbers):
                languages.append(language)
        lengths = block.lengths[which]
        values = gather(block.values, block.starts()[which], lengths)
        parts.append((block.entities[which], lengths, np.array(numbers, dtype=np.int64)[block.tags[which]], values))
        held += 2 * len(values) + _NAME_ROW_BYTES * which.size
        if held > share:
            return None
    if not parts:
        return []
    entities = np.concatenate([part[0] for part in parts])
    lengths = np.concatenate([part[1] for part in parts])
    row_language = np.concatenate([part[2] for part in parts])
    blob = b"".join(part[3] for part in parts)
    del parts
    uniques = np.asarray(unique_of(entities), dtype=np.int64)
    starts = starts_of(lengths)
    text_rank = value_ranks(blob, starts, lengths)
    ordered_languages = sorted(languages)
    language_rank = np.array([ordered_languages.index(language) for language in languages], dtype=np.int64)
    row_language = language_rank[row_language]
    order = np.lexsort((row_language, text_rank, uniques))
    first = np.ones(order.size, dtype=bool)
    first[1:] = (
        (uniques[order[1:]] != uniques[order[:-1]])
        | (text_rank[order[1:]] != text_rank[order[:-1]])
        | (row_language[order[1:]] != row_language[order[:-1]])
    )
    order = order[first]
    numbers_needed, line_of = np.unique(entities[order], return_inverse=True)
    lines = _lines_at(iris_log, numbers_needed)
    subject_iris = [line.decode() for line in map(lines.__getitem__, line_of.reshape(-1).tolist())]
    begins, ends = starts[order].tolist(), (starts[order] + lengths[order]).tolist()
    texts = [blob[begin:end].decode() for begin, end in zip(begins, ends, strict=True)]
    row_languages = list(map(ordered_languages.__getitem__, row_language[order].tolist()))
    return list(zip(subject_iris, texts, row_languages, strict=True))


_NAME_ROW_BYTES = 320
"""Memory one name row of :func:`spilled_label_rows` takes beside its text twice (bytes, then str): its numbers,
ranks and sorts, then the row given back (a tuple, its IRI and language)."""
_LOG_BLOCK = 1 << 24


def _lines_at(path: Path, numbers: npt.NDArray[np.int64]) -> list[bytes]:
    """Lines ``numbers`` (sorted, distinct) of a file of lines, read a block at a time."""
    import numpy as np

    found: list[bytes] = []
    first_line, carry = 0, b""
    with open(path, "rb") as handle:
        while len(found) < len(numbers) and (block := handle.read(_LOG_BLOCK)):
            data = carry + block
            breaks = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
            low, high = np.searchsorted(numbers, [first_line, first_line + len(breaks)])
            here = numbers[low:high] - first_line
            line_starts = np.concatenate(([0], breaks[:-1] + 1))[here].tolist()
            found.extend(data[start:end] for start, end in zip(line_starts, breaks[here].tolist(), strict=True))
            carry = data[int(breaks[-1]) + 1 :] if len(breaks) else data
            first_line += len(breaks)
    if len(found) != len(numbers):
        raise ValueError(f"{path.name} is shorter than its numbers: the spool is damaged")
    return found
