"""RoG's dataset files (``rmanluo/RoG-webqsp``, ``rmanluo/RoG-cwq`` on the Hugging Face hub) into a store.

The files as published: Parquet shards (``data/test-00000-of-00002.parquet``, ...) or the same rows
as JSONL (``.jsonl``, optionally ``.gz``/``.bz2``), one question per row with the columns ``id``,
``question``, ``answer``, ``q_entity``, ``a_entity``, ``graph`` and ``choices``. ``graph`` is the
question's subgraph as ``[head, relation, tail]`` strings: entities by name (``"Barack Obama"``),
CVTs as Freebase ids (``m.0abc``, ``g.11b...``), relations by Freebase name.

* **Ids are the file's own strings** (the ``names`` profile, :mod:`kg_adapters.profiles.names`):
  every answer -- edges, paths, ``prediction``, ``reasoning_paths`` -- carries them unchanged, so
  ``kga eval`` scores against ``a_entity`` and a path can be looked up in ``graph``. Each name
  is also an ``rdfs:label`` (CVT ids are not), so ``search`` finds it.
* **Which question each triple came from** is kept as a named graph per question
  (:func:`kg_adapters.profiles.names.question_graph_iri`), beside the default graph holding the
  union of all subgraphs that every operation reads. Named graphs rather than a side table: the
  store stays one RDF dataset that ``kga query`` (``GRAPH ?q {...}``), Virtuoso and any SPARQL
  tool can read, a triple repeated across questions is one default-graph triple plus one quad per
  question, and ``kga reason --scope question`` reads a question's subgraph with one query. The
  cost is that each triple is stored twice (once per question that has it, once in the union).
* **Streamed**, within a row too (:mod:`loaders.rog_dataset_rows`): Parquet through ``pyarrow`` (the
  ``rog`` extra) by record batches, only the ``id`` and ``graph`` columns decoded, the graph's strings
  dictionary-encoded and turned into Python values a slice at a time; JSONL parsed as a stream
  (``ijson``), a line never held whole. A row waits in bounded memory (spilling to a temporary file)
  until it is checked, then goes to the store in chunks. Memory stays bounded whatever the size of the
  shards (CWQ's training split is ~10 GB) and whatever one row holds.
* Question ids are unique, as in RoG's published files and as ``kga reason --input`` requires: a row
  whose id an earlier row had (of this file, an earlier file of the load, or an earlier load into
  the store) is a bad row naming both places, never merged into the first question's subgraph
  (which would give that question another's triples under ``--scope question``); a lenient load
  skips it and keeps the first.
* A row whose ``id`` or ``graph`` is malformed or missing, or a JSONL line that is not JSON, is
  bad: a strict load stops with ``LoadError`` naming ``file:row`` (JSONL: the line), a lenient one
  skips the row. A bad row adds nothing. A Parquet file without an ``id`` or ``graph`` column is
  not a RoG dataset file: refused before anything is read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from kg_adapters import json_text
from kg_adapters.errors import InvalidTermError
from kg_adapters.profiles.names import name_quads, question_graph_iri
from loaders.errors import LoadError
from loaders.line_reading import READ_ERRORS, read_chunks, read_error
from loaders.rdf import ROG_DATASET, Progress, TripleSink
from loaders.report import SkipLog

__all__ = ["QUESTION_COLUMNS", "ROG_DATASET", "iter_rows", "load_rog_dataset", "row_triples"]
BATCH_ROWS = 256
"""Rows per Parquet record batch (RoG's rows carry subgraphs of thousands of triples)."""
FLUSH_QUADS = 200_000
"""Quads buffered before one bulk insert."""
QUESTION_COLUMNS = ("id", "question", "answer", "q_entity", "a_entity", "choices")
BadLine = Callable[[int, str], None]
"""Takes ``(line number, reason)`` of a line that is not JSON."""


def is_parquet(path: str) -> bool:
    return Path(path).suffix.lower() == ".parquet"


def _pyarrow_parquet() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        from kg_adapters.extras import install_command

        raise LoadError(f"reading Parquet needs pyarrow: {install_command('rog')}") from exc
    return pq


def iter_rows(
    path: str, columns: Sequence[str] | None = None, *, on_bad_line: BadLine | None = None
) -> Iterator[tuple[int, Any]]:
    """``(row number, row)`` for every row of a RoG dataset file, streamed; a row is a dict (or,
    for a JSONL line that is not an object, whatever it decodes to). ``columns`` limits a Parquet
    read to those columns (missing ones are left out). Raises LoadError for an unreadable file,
    or for a line that is not JSON unless ``on_bad_line(number, reason)`` takes it (and the line
    is skipped)."""
    if is_parquet(path):
        yield from _parquet_rows(path, columns)
        return
    for first, lines in _chunks(path):
        for offset, raw in enumerate(lines):
            if not raw.strip():
                continue
            try:
                row = json_text.loads(raw)
            except ValueError as exc:  # UnicodeDecodeError included
                if on_bad_line is None:
                    raise LoadError(f"not a JSON line: {exc}", file=path, line=first + offset) from exc
                on_bad_line(first + offset, f"not a JSON line: {exc}")
                continue
            yield first + offset, row


def _chunks(path: str) -> Iterator[tuple[int, list[bytes]]]:
    """The JSONL file's chunks of lines; a file that cannot be opened or read is a LoadError."""
    try:
        yield from read_chunks(path, BATCH_ROWS)  # a row holds a whole subgraph: few rows per chunk
    except READ_ERRORS as exc:  # missing, unreadable, not the compression it says
        raise read_error(path, exc) from exc


def check_columns(path: str, required: Sequence[str]) -> None:
    """Refuses a Parquet file that lacks one of ``required`` columns (it is not a RoG dataset
    file, and loading it would silently add nothing); JSONL rows are checked one by one."""
    if not is_parquet(path):
        return
    pq = _pyarrow_parquet()
    import pyarrow as pa

    try:
        present = set(pq.ParquetFile(path).schema_arrow.names)
    except (OSError, pa.ArrowException) as exc:
        raise LoadError(f"cannot read the Parquet file: {exc}", file=path) from exc
    missing = [column for column in required if column not in present]
    if missing:
        raise LoadError(
            f"not a RoG dataset file: no {', '.join(repr(c) for c in missing)} column "
            f"(columns: {', '.join(sorted(present)) or 'none'})",
            file=path,
        )


def _parquet_rows(path: str, columns: Sequence[str] | None) -> Iterator[tuple[int, Any]]:
    pq = _pyarrow_parquet()
    import pyarrow as pa

    try:
        parquet = pq.ParquetFile(path)
        present = set(parquet.schema_arrow.names)
        wanted = None if columns is None else [c for c in columns if c in present]
        number = 0
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=wanted):
            for row in batch.to_pylist():
                number += 1
                yield number, row
    except (OSError, pa.ArrowException) as exc:
        raise LoadError(f"cannot read the Parquet file: {exc}", file=path) from exc


def row_triples(row: Any) -> tuple[str, list[tuple[str, str, str]]]:
    """The question id and the subgraph triples of one row; raises InvalidTermError when malformed."""
    if not isinstance(row, dict):
        raise InvalidTermError(f"a row must be an object, got {type(row).__name__}")
    qid = row.get("id")
    if isinstance(qid, bool) or not isinstance(qid, (str, int)) or qid == "":
        raise InvalidTermError(f"'id' must be a non-empty string, got {qid!r:.80}")
    if "graph" not in row:
        raise InvalidTermError(f"question {qid}: no 'graph' (a RoG dataset row holds its subgraph)")
    graph = row["graph"]
    if graph is None:  # a null subgraph: the question has none
        graph = []
    if not isinstance(graph, list):
        raise InvalidTermError(f"question {qid}: 'graph' must be a list of [head, relation, tail], got {graph!r:.80}")
    triples: list[tuple[str, str, str]] = []
    for index, triple in enumerate(graph):
        if not isinstance(triple, list) or len(triple) != 3 or not all(isinstance(x, str) and x for x in triple):
            raise InvalidTermError(f"question {qid}: graph[{index}] is not three non-empty strings: {triple!r:.120}")
        triples.append((triple[0], triple[1].strip(), triple[2]))
    return str(qid), triples


def load_rog_dataset(
    store: TripleSink, path: str, *, log: SkipLog, progress: Progress, seen: dict[str, str] | None = None
) -> int:
    """Adds every row's subgraph to ``store`` (the union in the default graph, and each question's
    own triples in its named graph); returns the triples read. ``seen`` maps the question ids of
    the load so far to where they were (``file:row``); pass one dict for all the files of a load.

    Rows are streamed (see :mod:`loaders.rog_dataset_rows`): memory stays bounded however many
    triples one row holds.

    Raises:
        LoadError: a bad row in a strict load, an unreadable file, or no pyarrow for Parquet.
    """
    from loaders.rog_dataset_rows import streamed_rows

    read = 0
    seen = {} if seen is None else seen
    default = ox.DefaultGraph()
    check_columns(path, ("id", "graph"))
    for number, row in streamed_rows(path, log):
        with row:
            try:
                qid = row.question_id()
                if qid in seen:
                    raise InvalidTermError(f"question id {qid!r:.80} repeated (first at {seen[qid]})")
                graph = ox.NamedNode(question_graph_iri(qid))
                if store.contains_named_graph(graph):
                    raise InvalidTermError(f"question id {qid!r:.80} is already in the store (an earlier load)")
            except (InvalidTermError, ValueError) as exc:
                log.bad(path, number, str(exc))
                continue
            seen[qid] = f"{path}:{number}"
            for chunk in row.chunks():  # every name was checked while the row was read
                _insert(store, list(name_quads(chunk, [default, graph])), path)
            read += row.count
            progress(row.count)
    return read


def _insert(store: TripleSink, quads: list[ox.Quad], path: str) -> None:
    try:
        store.bulk_extend(quads)
    except OSError as exc:
        raise LoadError(f"cannot store the triples: {exc}", file=path) from exc
