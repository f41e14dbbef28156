"""Wikidata JSON dumps (``latest-all.json.gz``/``.bz2``, or a slice of one) into a store, in the shape
WDQS serves (see :mod:`kg_adapters.wikidata_json`): truthy ``wdt:`` triples, ``rdfs:label``,
``schema:description`` and ``skos:altLabel`` in the chosen languages (regional variants and ``mul``
included), and with ``qualifiers`` every statement as ``p:/ps:/pq:`` with ``wikibase:rank``.

The dump is a JSON array with one entity per line (``[``, then ``{...},`` lines, then ``]``). It is
streamed: decompressed on the fly and read in blocks of :data:`CHUNK_ENTITIES` lines, each chunk's
triples written as N-Triples and bulk loaded, so memory stays bounded by a chunk whatever the dump's
size. A line may also
hold a whole Special:EntityData answer (``{"entities": {...}}``), so downloaded entities load too.

qwikidata parses the claims; its dump reader is not used, because it needs a ``.json[.gz|.bz2]``
file name (no pipes), does not say which line failed, and a single undecodable byte ends its
iteration, where a strict load must name the line and a lenient one must go on.

A line that is not valid JSON or not a well-formed entity is bad: a strict load stops with
``LoadError`` naming ``file:line``, a lenient one skips the line and counts it. A bad line adds
nothing (its triples are built completely before any is stored).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from typing import Any

import pyoxigraph as ox

from kg_adapters import json_text
from kg_adapters.errors import InvalidTermError, LoadError
from kg_adapters.wikidata_json import entity_ntriples, parse_entity
from loaders.line_reading import READ_ERRORS, read_chunks_from, read_error
from loaders.rdf import ChunkDone, Progress, TripleSink
from loaders.report import SkipLog

CHUNK_ENTITIES = 1_000
"""Lines (entities) per bulk-loaded chunk: entity lines run to hundreds of kilobytes."""


def load_wikidata_json(
    store: TripleSink,
    path: str,
    *,
    log: SkipLog,
    progress: Progress,
    languages: Collection[str] | None = None,
    qualifiers: bool = False,
    start_line: int = 1,
    on_chunk: ChunkDone | None = None,
    on_read: Callable[[int | None], None] | None = None,
) -> int:
    """Adds the entities of one dump file to ``store``; returns the triples read.

    From line ``start_line`` on (the lines before it are read and dropped: a resumed load); after each
    chunk is stored, ``on_read(bytes_read)`` and ``on_chunk(next_line, bytes_read)`` are called (bytes of
    the file as it lies on disk, None for a pipe): the load shows its progress and records checkpoints
    there, so a killed load of a dump of many hours resumes inside the file.

    Raises:
        LoadError: a bad line in a strict load, or a file that cannot be read or decompressed.
    """
    triples = 0
    try:
        for first, lines, position in read_chunks_from(path, CHUNK_ENTITIES, start_line=start_line):
            units: list[bytes] = []
            count = 0
            for offset, raw in enumerate(lines):
                text = raw.strip().rstrip(b",")
                if text in (b"", b"[", b"]"):
                    continue
                try:
                    written = [
                        line
                        for entity in _entities(json_text.loads(text))
                        for line in entity_ntriples(parse_entity(entity), languages=languages, statements=qualifiers)
                    ]
                    units.append("\n".join(written).encode("utf-8"))
                except ValueError as exc:  # bad UTF-8 or JSON, a malformed entity, a lone surrogate
                    log.bad(path, first + offset, _reason(exc))
                    continue
                count += len(written)
            try:
                store.bulk_load(b"\n".join(units), ox.RdfFormat.N_TRIPLES)
            except SyntaxError as exc:  # every term was checked: the writer is wrong, not the dump
                raise LoadError(
                    f"the triples written for lines from here on do not parse: {exc}", file=path, line=first
                ) from exc
            triples += count
            progress(count)
            if on_read is not None:
                on_read(position)
            if on_chunk is not None:
                on_chunk(first + len(lines), position)
    except READ_ERRORS as exc:
        raise read_error(path, exc) from exc
    return triples


def _entities(document: Any) -> Iterator[Any]:
    """The entities of one line: the line itself, or each of an EntityData answer's ``entities``."""
    if isinstance(document, dict) and isinstance(document.get("entities"), dict) and "id" not in document:
        yield from document["entities"].values()
    else:
        yield document


def _reason(exc: ValueError) -> str:
    if isinstance(exc, InvalidTermError):
        return str(exc)
    if isinstance(exc, UnicodeDecodeError):
        return f"not valid UTF-8 ({exc.reason} at byte {exc.start})"
    if isinstance(exc, UnicodeEncodeError):
        return f"text that is not valid Unicode ({exc.reason})"
    return f"not a JSON entity: {exc}"
