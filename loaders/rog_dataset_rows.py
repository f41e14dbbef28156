"""RoG dataset rows read one at a time in bounded memory, however many triples a row holds.

A row of a published RoG file holds a few thousand triples, but nothing stops a file from holding a
million in one row (Parquet compresses a repeated triple to almost nothing: 1M triples fit in 1.4 KB).
Decoding such a row into Python lists, and all its quads at once, took gigabytes. Here:

* **JSONL** rows are parsed as a stream (``ijson``'s C parser over the line, read in 64 KiB pieces; a
  line is never held whole), keeping only ``id`` and each ``graph`` triple as it comes.
* **Parquet** rows are decoded by ``pyarrow`` with the graph's strings dictionary-encoded (about 16
  bytes per triple), and turned into Python strings in slices of :data:`CHUNK_TRIPLES`. pyarrow decodes
  a row whole, so a row group whose graph column holds more than :data:`MAX_DECODED_VALUES` values is
  read one row at a time, and a single row holding more is refused (a LoadError naming file:row).
* A row is checked whole before any of it is stored (a bad row adds nothing): its triples wait in
  memory up to :data:`SPILL_TRIPLES`, the rest in a temporary file.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator
from types import TracebackType
from typing import IO, Any

from kg_adapters.errors import InvalidTermError
from kg_adapters.profiles.names import check_name
from kg_adapters.rdf_io import open_maybe_compressed
from loaders.errors import LoadError
from loaders.line_reading import READ_ERRORS, read_error
from loaders.report import SkipLog

SPILL_TRIPLES = 100_000
"""Triples of one row kept in memory; more wait in a temporary file until the row is checked."""
CHUNK_TRIPLES = 50_000
"""Triples handed to the store at a time (and decoded from Parquet at a time)."""
MAX_DECODED_VALUES = 30_000_000
"""Most graph values (three per triple) pyarrow decodes at once: ~500 MB of dictionary indices and offsets."""
CHECKED_NAMES = 100_000
_READ = 1 << 16
_UTF8_BOM = b"\xef\xbb\xbf"
Triple = tuple[str, str, str]


class Row:
    """One well-formed row: its question id and its checked triples."""

    def __init__(self) -> None:
        self.question: str | None = None
        self.count = 0
        self._memory: list[Triple] = []
        self._spill: IO[str] | None = None

    def add(self, triple: Triple) -> None:
        self.count += 1
        if len(self._memory) < SPILL_TRIPLES:
            self._memory.append(triple)
            return
        if self._spill is None:
            self._spill = tempfile.TemporaryFile("w+", encoding="utf-8", prefix="kga-row-")  # noqa: SIM115
        self._spill.write(json.dumps(triple, ensure_ascii=False) + "\n")

    def question_id(self) -> str:
        assert self.question is not None
        return self.question

    def chunks(self) -> Iterator[list[Triple]]:
        """The triples, at most :data:`CHUNK_TRIPLES` at a time."""
        for start in range(0, len(self._memory), CHUNK_TRIPLES):
            yield self._memory[start : start + CHUNK_TRIPLES]
        if self._spill is None:
            return
        self._spill.seek(0)
        chunk: list[Triple] = []
        for line in self._spill:
            head, relation, tail = json.loads(line)
            chunk.append((head, relation, tail))
            if len(chunk) == CHUNK_TRIPLES:
                yield chunk
                chunk = []
        if chunk:
            yield chunk

    def close(self) -> None:
        if self._spill is not None:
            self._spill.close()
            self._spill = None
        self._memory = []

    def __enter__(self) -> Row:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class _Checker:
    """Fills a :class:`Row` from its parts as they are read, with the checks (and messages) of
    :func:`loaders.rog_dataset.row_triples`; raises InvalidTermError for a malformed part."""

    def __init__(self) -> None:
        self.row = Row()
        self.index = 0
        self.checked: dict[str, None] = {}
        """Names already checked (a subgraph repeats them), at most :data:`CHECKED_NAMES`."""
        self.id_seen = False
        self.graph_seen = False

    def question(self, value: object) -> None:
        self.id_seen = True
        if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
            raise InvalidTermError(f"'id' must be a non-empty string, got {value!r:.80}")
        self.row.question = str(value)

    def triple(self, value: object) -> None:
        index, self.index = self.index, self.index + 1
        if not isinstance(value, list) or len(value) != 3 or not all(isinstance(x, str) and x for x in value):
            raise InvalidTermError(f"{self._who()}: graph[{index}] is not three non-empty strings: {value!r:.120}")
        head, relation, tail = value[0], value[1].strip(), value[2]
        checked = self.checked
        if head not in checked or relation not in checked or tail not in checked:
            try:
                for part, what in ((head, "head"), (relation, "relation"), (tail, "tail")):
                    checked[check_name(part, what)] = None
            except InvalidTermError as exc:
                raise InvalidTermError(f"{self._who()}: graph[{index}]: {exc}") from None
            if len(checked) > CHECKED_NAMES:
                checked.clear()
        self.row.add((head, relation, tail))

    def finish(self) -> Row:
        if not self.id_seen:
            raise InvalidTermError("'id' must be a non-empty string, got None")
        if not self.graph_seen:
            raise InvalidTermError(f"{self._who()}: no 'graph' (a RoG dataset row holds its subgraph)")
        return self.row

    def _who(self) -> str:
        return f"question {self.row.question}" if self.row.question is not None else "the row"


def streamed_rows(path: str, log: SkipLog) -> Iterator[tuple[int, Row]]:
    """``(row number, row)`` for the well-formed rows of a RoG dataset file (JSONL: the line number);
    each malformed one goes to ``log`` (which raises LoadError in a strict load). Close each row."""
    if path.lower().endswith(".parquet"):
        yield from _parquet_rows(path, log)
    else:
        yield from _jsonl_rows(path, log)


# -- JSONL ---------------------------------------------------------------------------------------------
class _Line:
    """One line of the file as a stream ending at its newline, read in pieces (never whole)."""

    def __init__(self, handle: IO[bytes]) -> None:
        self.handle = handle
        self.ended = False
        self.pending = b""
        self.empty = True
        """Nothing was read: the file had ended."""

    def _piece(self) -> bytes:
        if self.ended:
            return b""
        piece = self.handle.readline(_READ)
        if not piece or piece.endswith(b"\n"):
            self.ended = True
        if piece:
            self.empty = False
        return piece

    def start(self, first: bool) -> bool:
        """Skips leading whitespace (and a byte order mark on the first line); False for a blank line."""
        while True:
            piece = self._piece()
            if first and piece.startswith(_UTF8_BOM):
                piece, first = piece[len(_UTF8_BOM) :], False
            stripped = piece.lstrip(b" \t\r\n")
            if stripped:
                self.pending = stripped
                return True
            if self.ended:
                return False

    def read(self, size: int = -1) -> bytes:
        if size == 0:  # ijson asks for nothing to learn whether the stream gives bytes
            return b""
        if self.pending:
            piece, self.pending = self.pending, b""
            return piece
        return self._piece()

    def drain(self) -> None:
        self.pending = b""
        while not self.ended:
            self._piece()


class _SurrogateGuard:
    """Passes a JSON byte stream through, raising ValueError at a ``\\u`` escape of a lone surrogate:
    ijson's C parser would silently read it as ``?``."""

    _ESCAPE = re.compile(rb"\\(?:u([0-9a-fA-F]{4})|[^u])")

    def __init__(self, stream: _Line) -> None:
        self.stream = stream
        self.carry = b""
        self.high_pending = False

    def read(self, size: int = -1) -> bytes:
        if size == 0:
            return b""
        data = self.stream.read(size)
        buffer = self.carry + data
        end = len(buffer)
        if data:  # an escape cut by the end of this piece is scanned with the next one
            tail = buffer.rfind(b"\\", max(0, end - 6))
            if tail >= 0 and self._ESCAPE.match(buffer, tail) is None:
                end = tail
        self._scan(buffer[:end], final=not data)
        self.carry = buffer[end:]
        return data

    def _scan(self, text: bytes, final: bool) -> None:
        expected = 0 if self.high_pending else None  # where the low half of a pending pair must start
        for match in self._ESCAPE.finditer(text):
            unit = int(match.group(1), 16) if match.group(1) is not None else None
            low = unit is not None and 0xDC00 <= unit <= 0xDFFF
            if expected is not None:
                if match.start() != expected or not low:
                    raise ValueError("the JSON holds text that is not valid Unicode (a lone surrogate escape)")
                expected = None
                continue
            if low:
                raise ValueError("the JSON holds text that is not valid Unicode (a lone surrogate escape)")
            if unit is not None and 0xD800 <= unit <= 0xDBFF:
                expected = match.end()
        if expected is not None and (expected != len(text) or final):
            raise ValueError("the JSON holds text that is not valid Unicode (a lone surrogate escape)")
        self.high_pending = expected is not None


def _jsonl_rows(path: str, log: SkipLog) -> Iterator[tuple[int, Row]]:
    import ijson

    try:
        with open_maybe_compressed(path) as handle:
            number = 0
            while True:
                number += 1
                line = _Line(handle)
                if not line.start(first=number == 1):
                    if line.empty:
                        return
                    continue
                checker = _Checker()
                try:
                    events = ijson.basic_parse(_SurrogateGuard(line), buf_size=_READ)
                    _read_row(events, checker)
                    for _ in events:  # the rest of the line: nothing but whitespace (else ijson says so)
                        raise InvalidTermError("more than one JSON value on the line")
                    row = checker.finish()
                except ijson.JSONError as exc:
                    line.drain()
                    log.bad(path, number, f"not a JSON line: {_first_line(exc)}")
                    checker.row.close()
                    continue
                except (InvalidTermError, ValueError) as exc:
                    line.drain()
                    reason = str(exc) if isinstance(exc, InvalidTermError) else f"not a JSON line: {exc}"
                    log.bad(path, number, reason)
                    checker.row.close()
                    continue
                line.drain()
                yield number, row
    except READ_ERRORS as exc:
        raise read_error(path, exc) from exc


def _first_line(exc: Exception) -> str:
    text = exc.args[0] if exc.args else str(exc)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return str(text).strip().splitlines()[0] if str(text).strip() else type(exc).__name__


def _read_row(events: Iterator[tuple[str, Any]], checker: _Checker) -> None:
    """Feeds ``checker`` from the events of one JSON value: a row object whose ``id`` and ``graph`` are
    kept and every other member skipped, whatever it holds."""
    event, _ = next(events)
    if event != "start_map":
        raise InvalidTermError(f"a row must be an object, got {_kind(event)}")
    depth = 1
    for event, value in events:
        if depth == 1 and event == "map_key":
            if value == "id":
                event, value = next(events)
                if event in ("start_map", "start_array"):
                    raise InvalidTermError(f"'id' must be a non-empty string, got {_kind(event)}")
                checker.question(value)
            elif value == "graph":
                _read_graph(events, checker)
            continue
        if event == "end_map" and depth == 1:
            return
        depth += 1 if event in ("start_map", "start_array") else -1 if event in ("end_map", "end_array") else 0


def _read_graph(events: Iterator[tuple[str, Any]], checker: _Checker) -> None:
    checker.graph_seen = True
    event, value = next(events)
    if event == "null":  # a null subgraph: the question has none
        return
    if event != "start_array":
        shown = value if event not in ("start_map",) else "an object"
        raise InvalidTermError(f"{checker._who()}: 'graph' must be a list of [head, relation, tail], got {shown!r:.80}")
    for event, value in events:
        if event == "end_array":
            return
        if event != "start_array":
            checker.triple(value if event != "start_map" else {})
            continue
        parts: list[Any] = []
        for inner, part in events:
            if inner == "end_array":
                break
            if inner in ("start_map", "start_array") or len(parts) == 3:  # never more than a triple held
                checker.triple([*parts, [] if inner == "start_array" else {} if inner == "start_map" else part])
            parts.append(part)
        checker.triple(parts)


def _kind(event: str) -> str:
    return {"start_array": "a list", "start_map": "an object"}.get(event, event)


# -- Parquet -------------------------------------------------------------------------------------------
def _parquet_rows(path: str, log: SkipLog) -> Iterator[tuple[int, Row]]:
    from loaders.rog_dataset import _pyarrow_parquet

    pq = _pyarrow_parquet()
    import pyarrow as pa

    try:
        schema = pq.ParquetFile(path).schema
        leaves = [schema.column(i) for i in range(len(schema))]
        graph_leaves = [leaf.path for leaf in leaves if leaf.path.split(".")[0] == "graph"]
        strings = [leaf.path for leaf in leaves if leaf.path in graph_leaves and leaf.physical_type == "BYTE_ARRAY"]
        parquet = pq.ParquetFile(path, read_dictionary=strings or None)
        number = 0
        for group in range(parquet.num_row_groups):
            meta = parquet.metadata.row_group(group)
            values = sum(
                meta.column(i).num_values
                for i in range(meta.num_columns)
                if meta.column(i).path_in_schema in graph_leaves
            )
            if values > MAX_DECODED_VALUES and meta.num_rows == 1:
                number += 1
                log.bad(path, number, f"the row holds {values:,} graph values, more than a load decodes at once")
                continue
            per_batch = max(1, meta.num_rows * MAX_DECODED_VALUES // values) if values > MAX_DECODED_VALUES else 256
            for batch in parquet.iter_batches(batch_size=per_batch, row_groups=[group], columns=["id", "graph"]):
                ids, graphs = batch.column("id"), batch.column("graph")
                for position in range(batch.num_rows):
                    number += 1
                    checker = _Checker()
                    try:
                        checker.question(ids[position].as_py())
                        checker.graph_seen = True
                        for triple in _cell_triples(graphs[position], checker):
                            checker.triple(triple)
                        row = checker.finish()
                    except InvalidTermError as exc:
                        checker.row.close()
                        log.bad(path, number, str(exc))
                        continue
                    yield number, row
    except (OSError, pa.ArrowException) as exc:
        raise LoadError(f"cannot read the Parquet file: {exc}", file=path) from exc


def _cell_triples(cell: Any, checker: _Checker) -> Iterator[Any]:
    """The triples of one row's graph cell, turned into Python values :data:`CHUNK_TRIPLES` at a time."""
    if not cell.is_valid:  # a null subgraph: the question has none
        return
    values = getattr(cell, "values", None)
    if values is None:
        shown = cell.as_py()
        raise InvalidTermError(f"{checker._who()}: 'graph' must be a list of [head, relation, tail], got {shown!r:.80}")
    for start in range(0, len(values), CHUNK_TRIPLES):
        yield from values.slice(start, CHUNK_TRIPLES).to_pylist()
