"""Reading RDF (and TSV) files into a pyoxigraph Store as fast as Oxigraph allows.

Line-based formats are read (:mod:`loaders.line_reading`) from the (possibly .gz/.bz2) stream in pieces:
N-Triples and N-Quads in blocks of about :data:`CHUNK_BYTES` of whole lines (no Python object per
line), Freebase dumps in such blocks too (:class:`BlockConverter`), other converted formats (TSV, MetaQA) in
chunks of :data:`CHUNK_LINES` lines. N-Triples (and
what the converters make of their lines) go to Oxigraph's bulk loader as one stream (:class:`_Segment`),
strict or lenient: a lenient load first checks each piece with Oxigraph's parser and blanks the lines it
refuses, reporting each (:mod:`loaders.refused`), since one refused line fails a whole bulk load and stores
nothing of it. N-Quads and pieces with blank nodes are loaded piece by piece; only a piece that fails is
parsed again line by line, to find the bad lines: strict loads stop at the first, lenient loads skip them
and bulk load the rest of the piece. Other formats (Turtle, RDF/XML, TriG) are parsed as one
stream, since a statement can span lines, and fed to ``Store.bulk_extend`` (which lets us count
the statements and move them to the default graph); they cannot be loaded leniently.

Choices worth knowing:

* Every statement goes to the **default graph**: the graph name of N-Quads/TriG statements is
  dropped, because the KnowledgeGraph interface and the name index read the default graph only.
* Blank nodes are **scoped per file**: ``_:b1`` in two files are two nodes, while ``_:b1`` in
  two chunks of one file stay one node (Oxigraph's bulk loader would rename them per chunk, so
  chunks containing ``_:`` go through the parser with a per-file prefix instead).
* Relative IRIs in Turtle/RDF/XML/TriG resolve against the input file's ``file://`` URI.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
import sys
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, NoReturn, Protocol, cast, runtime_checkable

import pyoxigraph as ox

from kg_adapters.errors import InvalidTermError, LoadError
from kg_adapters.rdf_guard import (
    PARSER_BUFFER,
    LineCounter,
    check_xml_entities,
    is_buffer_overflow,
    token_too_long,
)
from kg_adapters.rdf_io import RDF_FORMATS, open_maybe_compressed, rdf_format
from loaders.line_reading import (
    READ_ERRORS,
    BlockConverter,
    LineConverter,
    bytes_read,
    open_counted,
    read_blocks_from,
    read_chunks_from,
    read_error,
    skip_bom,
)
from loaders.piped import PIPE_BYTES, FifoUnavailable, bulk_load_piped, can_pipe
from loaders.refused import has_token_over_buffer, without_refused
from loaders.refused import parser_reason as _reason
from loaders.report import SkipLog
from loaders.tsv import SEPARATORS

CHUNK_LINES = 100_000
"""Lines per bulk-loaded chunk. Each ``bulk_load`` call has a fixed cost that grows with the store
(Oxigraph writes and ingests new files for every call): at 1M triples, 20k-line chunks spent ~40%
more CPU than 100k-line ones (FB15k-237: 2.3 s against 1.4 s); 100k lines stay tens of MB."""

WIKIDATA_JSON = "wikidata-json"
"""Wikidata's JSON dumps (one entity per line; see :mod:`loaders.wikidata_json`)."""

CONVERTED_FORMATS = frozenset({"freebase", *SEPARATORS})
"""Line formats whose lines a converter turns into N-Triples first."""

LINE_FORMATS = frozenset({"nt", "nq", *CONVERTED_FORMATS, WIKIDATA_JSON})
"""Formats with one statement (or entity) per line: chunked, and loadable leniently."""

ROG_DATASET = "rog-dataset"
FORMAT_NAMES = ("nt", "nq", "ttl", "rdf", "trig", "tsv", "metaqa", "freebase", WIKIDATA_JSON, ROG_DATASET)
"""Canonical format names (``rdf`` is RDF/XML); :data:`RDF_FORMATS` aliases are accepted too."""

CHUNK_BYTES = 31 << 20
"""Bytes of N-Triples or N-Quads text per bulk-loaded block (:func:`read_blocks_from`): ~240,000 Freebase
lines. Each ``bulk_load`` call commits files that RocksDB compacts later: fewer, larger calls cost Oxigraph
less CPU and leave a smaller store (on a 4M-triple dump, 100,000-line chunks took ~15% more CPU than one
stream). Kept under glibc's largest dynamic mmap threshold (32 MiB on 64-bit): a block of 32 MiB was mapped
afresh and faulted in page by page each time, here and in the index worker that reads it (8,200 faults a
block, 0.5 against 0.1 CPU-s for 20 joins), where a smaller one reuses the heap's freed block."""

BULK_STATEMENT_BYTES = 400
BULK_TEXT_FACTOR = 3
"""What Oxigraph's bulk loader holds for one statement of a bulk load (its parsed quad, the encoded
sets and the string table of its batch): about ``BULK_STATEMENT_BYTES`` plus ``BULK_TEXT_FACTOR`` bytes
per byte of its N-Triples text (pyoxigraph 0.5.13, Freebase-shaped lines of ~131 bytes: 0.79 GiB for
1M statements in one bulk load, 0.39 GiB for 500k, 0.2 GiB for 250k). See :func:`bulk_load_bytes`."""

_PROGRESS_EVERY = 10_000
_BLANK_NODE = re.compile(rb"_:")
"""Where a blank node label may start (a regular expression finds it ~3x faster than ``in``, which
stops at every ``_`` of a Freebase IRI)."""
_ODD_LINE = re.compile(rb"\n[#\n \t]")
"""A line break followed by a comment, a blank line or an indented line (one pass over a block)."""

Progress = Callable[[int], None]
ChunkDone = Callable[[int, "int | None"], None]
"""``on_chunk(next_line, bytes_read)``: called after each chunk of a line format is stored."""


class TripleSink(Protocol):
    """Where the loaders write: a pyoxigraph ``Store``, or a wrapper that also sees every triple
    written (:class:`loaders.indexing.IndexingSink`, which numbers them for the traversal index)."""

    def bulk_load(self, input: bytes, format: ox.RdfFormat) -> None: ...

    def bulk_extend(self, quads: Iterable[ox.Quad]) -> None: ...

    def contains_named_graph(self, graph_name: ox.NamedNode) -> bool: ...


def resolve_format(path: str, name: str | None) -> str:
    """The canonical format of ``path``: ``name`` if given, else guessed from the extension.

    ``.tsv`` is TSV; ``.txt`` is MetaQA when its first line has ``|`` and no tab, else TSV; a
    file named ``freebase-rdf-*`` is a Freebase dump; ``.json`` is a Wikidata JSON dump; ``.parquet``
    is a RoG dataset shard (its JSONL form needs ``rog-dataset`` named). Compression
    suffixes (``.gz``, ``.bz2``) are ignored for the guess.
    """
    if name is not None:
        key = name.lower()
        if key in CONVERTED_FORMATS or key in (WIKIDATA_JSON, ROG_DATASET):
            return key
        try:
            return rdf_format(path, key).file_extension
        except InvalidTermError:
            known = ", ".join(sorted({*RDF_FORMATS, *CONVERTED_FORMATS, WIKIDATA_JSON, ROG_DATASET}))
            raise LoadError(f"unknown format {name!r}; known: {known}", file=path) from None
    if Path(path).name.startswith("freebase-rdf"):
        return "freebase"
    suffixes = [s.lstrip(".").lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in ("gz", "bz2"):
        suffixes.pop()
    last = suffixes[-1] if suffixes else ""
    if last == "tsv":
        return "tsv"
    if last == "json":
        return WIKIDATA_JSON
    if last == "parquet":
        return ROG_DATASET
    if last == "txt":
        return _sniff_txt(path) if Path(path).is_file() else "tsv"  # never consume a pipe's first line
    try:
        return rdf_format(path).file_extension
    except InvalidTermError:
        raise LoadError(
            f"cannot tell the format from the file name; pass a format ({', '.join(FORMAT_NAMES)})",
            file=path,
        ) from None


def _sniff_txt(path: str) -> str:
    """MetaQA (``h|r|t``) if the first line has ``|`` and no tab, else TSV."""
    try:
        with open_maybe_compressed(path) as handle:
            first = handle.readline()
    except READ_ERRORS as exc:
        raise read_error(path, exc) from exc
    return "metaqa" if b"|" in first and b"\t" not in first else "tsv"


def load_file(
    store: TripleSink,
    path: str,
    format: str,
    *,
    log: SkipLog,
    converter: LineConverter | None,
    progress: Progress,
    start_line: int = 1,
    blank_prefix: str | None = None,
    on_chunk: ChunkDone | None = None,
    on_read: Callable[[int | None], None] | None = None,
    due: Callable[[], bool] | None = None,
    on_handed: Callable[[], None] | None = None,
    segment_bytes: int | None = None,
) -> int:
    """Adds one file to ``store``; returns the good statements read. Raises LoadError.

    Line formats start at ``start_line`` (the lines before it are read and dropped: a resumed load)
    and call ``on_chunk(next_line, bytes_read)`` each time everything before ``next_line`` is stored
    (``bytes_read``: of the file as it lies on disk, compressed or not; None for a pipe), and
    ``on_read(bytes_read)`` as they read. N-Triples loads (strict or lenient, whose refused lines are blanked
    first: :func:`_checked`) hand the input to Oxigraph as one stream
    (:class:`_Segment`) until ``due()`` says a checkpoint is due (default: never) or Oxigraph would hold
    more than ``segment_bytes`` of it (:func:`bulk_load_bytes`; None: no cap; a segment holds one piece
    at least); the rest chunk by chunk. ``blank_prefix`` scopes the file's blank nodes (default: a fresh
    one); a resumed load passes the one it used before. ``on_handed()`` is called once the whole input
    has been handed to ``store``: for a stream, as Oxigraph takes its last text (before it has stored it)."""
    prefix = blank_prefix or blank_node_prefix()
    handed = _Once(on_handed)
    try:
        if format not in LINE_FORMATS:
            statements = _load_stream(store, path, format, progress=progress, prefix=prefix, on_read=on_read)
            handed()
            return statements
        syntax = ox.RdfFormat.N_QUADS if format == "nq" else ox.RdfFormat.N_TRIPLES
        streamed = syntax == ox.RdfFormat.N_TRIPLES
        statements = 0
        pieces = _pieces(path, converter, start_line, log)
        if streamed and log.lenient:
            pieces = _checked(pieces, path, log)
        for first_piece in pieces:
            piece: _Piece | None = first_piece
            if streamed and not _held_out(first_piece):
                segment = _Segment(first_piece, pieces, progress, on_read, due or _never, handed, segment_bytes)
                try:
                    stream_load(store, segment.texts())
                except SyntaxError as exc:
                    _refuse(segment, exc, path)
                except MemoryError as exc:  # only a line longer than the parser's buffer holds such a token
                    if not is_buffer_overflow(exc):
                        raise
                    _refuse(segment, exc, path)
                statements += segment.statements
                piece = segment.held  # a piece with blank nodes ends the stream: it goes through the parser
                if piece is None:
                    if on_chunk is not None:
                        on_chunk(segment.next_line, segment.position)
                    continue
            assert piece is not None
            bad = _insert_chunk(store, piece.data, piece.units, piece.first, syntax, path, log, prefix)
            statements += piece.count - bad
            progress(piece.count - bad)
            if on_read is not None:
                on_read(piece.position)
            if on_chunk is not None:
                on_chunk(piece.next_line, piece.position)
        handed()
        return statements
    except READ_ERRORS as exc:
        raise read_error(path, exc) from exc


def bulk_load_bytes(statements: int, text_bytes: int) -> int:
    """What Oxigraph's bulk loader holds for ``statements`` of ``text_bytes`` of N-Triples in one bulk load
    (:data:`BULK_STATEMENT_BYTES`, :data:`BULK_TEXT_FACTOR`)."""
    return statements * BULK_STATEMENT_BYTES + text_bytes * BULK_TEXT_FACTOR


def _never() -> bool:
    return False


class _Once:
    """Calls ``call`` (when given) the first time it is called, never again."""

    def __init__(self, call: Callable[[], None] | None) -> None:
        self._call = call

    def __call__(self) -> None:
        call, self._call = self._call, None
        if call is not None:
            call()


@dataclass(frozen=True, kw_only=True)
class _Piece:
    """Lines of a line format as N-Triples (or N-Quads) text: the input line of its first, the text
    (without a last line break), the converter's one unit per input line (None: the text's lines are the
    input's), the statements it holds, the input line after it, and the input's bytes read so far."""

    first: int
    data: bytes
    units: list[bytes] | None
    count: int
    next_line: int
    position: int | None
    alone: bool = False
    """Loaded on its own (from bytes), not in a stream: a lenient load's piece with a token too long for the
    parser's buffer (:func:`loaders.refused.has_token_over_buffer`)."""


def _pieces(path: str, converter: LineConverter | None, start_line: int, log: SkipLog) -> Iterator[_Piece]:
    """The input from ``start_line`` on, in pieces: blocks of whole lines (N-Triples, N-Quads, and what a
    :class:`BlockConverter` makes of them), or chunks of lines converted (converted lazily, in order: a
    converter keeps state across chunks)."""
    if converter is None or isinstance(converter, BlockConverter):  # no Python object per line where none is needed
        for first, data, lines, position in read_blocks_from(path, CHUNK_BYTES, start_line=start_line):
            units: list[bytes] | None = None
            if converter is None:
                count = _block_statements(data, lines)
            else:
                data, units, count = converter.convert_block(data, lines, first, path, log)
            yield _Piece(first=first, data=data, units=units, count=count, next_line=first + lines, position=position)
        return
    for first, lines_read, position in read_chunks_from(path, CHUNK_LINES, start_line=start_line):
        units, count = converter.convert(lines_read, first, path, log)
        yield _Piece(
            first=first,
            data=b"\n".join(units),
            units=units,
            count=count,
            next_line=first + len(lines_read),
            position=position,
        )


def _held_out(piece: _Piece) -> bool:
    """Whether ``piece`` is loaded on its own rather than in a stream: it holds blank nodes (they go through the
    parser, to scope their labels to the file) or a token too long for a stream (``_Piece.alone``)."""
    return piece.alone or _BLANK_NODE.search(piece.data) is not None


def _checked(pieces: Iterator[_Piece], path: str, log: SkipLog) -> Iterator[_Piece]:
    """The N-Triples ``pieces`` of a lenient load with the lines Oxigraph's parser refuses blanked (each one
    reported to ``log``): a stream of them never fails (:mod:`loaders.refused`). A piece that may hold a token
    longer than the parser's buffer (which no parser reading a stream takes) is marked to be bulk loaded on its
    own, from bytes, as lenient loads always did (its bad lines found as :func:`_insert_chunk` finds them)."""
    for piece in pieces:
        if has_token_over_buffer(piece.data):  # the parser refuses it from a stream: bulk loaded on its own
            yield dataclasses.replace(piece, alone=True)
            continue
        cleaned = without_refused(piece.data, piece.units, piece.first, path, log)
        if cleaned is None:
            yield piece
        else:
            kept = piece.count - cleaned.dropped
            yield dataclasses.replace(piece, data=cleaned.data, units=cleaned.units, count=kept)


class _Segment:
    """Consecutive pieces of one input handed to Oxigraph as one stream (:func:`stream_load`): one bulk
    load, hence one set of files written, for all of them. Oxigraph's bulk loader writes each string of a
    load once, but every load writes the strings it meets again: loaded in 32 MiB blocks, a 4M-triple
    Freebase dump took 17% more disk (497 MiB against 425) and 18% more CPU than as one stream.

    The stream runs from ``first`` until the input ends, a checkpoint is ``due()`` (the load records
    checkpoints between segments: see :mod:`loaders.core`), the next piece would take what Oxigraph holds
    of the stream past ``cap`` bytes (:func:`bulk_load_bytes`: its memory follows one bulk load's size up
    to its own ceiling, ``kg_adapters.budgets.BULK_LOAD_CEILING``; the next segment starts there, with no
    checkpoint: a resumed load goes on from the last one, as after a blank-node piece), or a piece is loaded
    on its own (:func:`_held_out`): that piece is then ``held`` for the caller.
    ``progress`` counts each piece's statements as Oxigraph takes it, ``on_read`` the input's bytes;
    ``ended()`` is called as Oxigraph takes the input's last text. Only the last :data:`_KEPT` pieces (and
    those within :data:`_KEPT_BYTES` of the last) are kept (Oxigraph fails within the text it has taken
    last), to report a refused line's own error."""

    def __init__(
        self,
        first: _Piece,
        rest: Iterator[_Piece],
        progress: Progress,
        on_read: Callable[[int | None], None] | None,
        due: Callable[[], bool],
        ended: Callable[[], None],
        cap: int | None = None,
    ) -> None:
        self._first, self._rest = first, rest
        self._cap, self._held_bytes = cap, 0
        """The cap on what Oxigraph holds of the stream, and what it holds (estimated) so far."""
        self._progress, self._on_read, self._due, self._ended = progress, on_read, due, ended
        self.statements = 0
        self.held: _Piece | None = None
        self.next_line, self.position = first.first, first.position
        self._starts: list[tuple[int, int, bool]] = []
        """(the stream's line number of its first line, its input line, whether its lines are the
        input's one for one) per piece streamed."""
        self._kept: list[tuple[int, _Piece]] = []
        """(the stream's line number of its first line, the piece) of the last pieces."""
        self._kept_bytes = 0

    def texts(self) -> Iterator[bytes]:
        """The pieces' texts, each followed by a line break (yields the pieces one by one)."""
        piece: _Piece | None = self._first
        line = 1
        while piece is not None:
            breaks = piece.next_line - piece.first - 1 if piece.units is None else piece.data.count(b"\n")
            self._starts.append((line, piece.first, piece.units is None or breaks == len(piece.units) - 1))
            self._kept.append((line, piece))
            self._kept_bytes += len(piece.data)
            while len(self._kept) > _KEPT and self._kept_bytes - len(self._kept[0][1].data) >= _KEPT_BYTES:
                self._kept_bytes -= len(self._kept.pop(0)[1].data)
            line += breaks + 1
            self.statements += piece.count
            self._progress(piece.count)
            if self._on_read is not None:
                self._on_read(piece.position)
            yield piece.data
            yield b"\n"
            self.next_line, self.position = piece.next_line, piece.position
            cost = bulk_load_bytes(piece.count, len(piece.data))
            self._held_bytes += cost
            if self._due() or (self._cap is not None and self._held_bytes + cost > self._cap):
                return  # (the next piece is about as large as this one)
            piece = next(self._rest, None)
            if piece is None:
                self._ended()  # the input's last text is in Oxigraph's hands
            elif _held_out(piece):
                self.held = piece
                return

    def input_line(self, line: int | None) -> int:
        """The input line of the stream's line ``line`` (1-based)."""
        if line is None or not self._starts:
            return self._first.first
        found = self._starts[bisect.bisect_right(self._starts, (line, sys.maxsize, True)) - 1]
        start, first, direct = found
        if direct:
            return first + line - start
        for kept_start, piece in self._kept:
            if kept_start == start and piece.units is not None:
                return _input_line(piece.units, piece.first, line - start + 1) or first
        return first

    def kept(self) -> list[_Piece]:
        """The last pieces streamed (where Oxigraph refused something)."""
        return [piece for _start, piece in self._kept]


_KEPT = 3
_KEPT_BYTES = 4 * PIPE_BYTES
"""The text kept behind the last piece: what a FIFO and Oxigraph's parser may hold of the stream not yet
parsed when it refuses a line (:mod:`loaders.piped`)."""


def _refuse(segment: _Segment, failure: SyntaxError | MemoryError, path: str) -> NoReturn:
    """Raises the LoadError of a stream Oxigraph refused: for the first bad line of the last pieces,
    with that line's own error (as a load chunk by chunk reports it), else where Oxigraph said. A lenient
    stream was checked with the same parser first (:func:`_checked`), so it gets here only if the parser
    and the bulk loader disagree: nothing of the stream was stored, so that fails the load too."""
    log = SkipLog(lenient=False)
    for piece in segment.kept():
        units = piece.units if piece.units is not None else piece.data.split(b"\n")
        if isinstance(failure, MemoryError):
            long = next((offset for offset, unit in enumerate(units) if len(unit) > PARSER_BUFFER), None)
            if long is not None:
                raise token_too_long(path, piece.first + long) from failure
            continue
        for offset, unit in enumerate(units):
            try:
                for _ in ox.parse(unit, ox.RdfFormat.N_TRIPLES):
                    pass
            except SyntaxError as exc:
                log.bad(path, piece.first + offset, _reason(exc))  # raises: the load is strict
    if isinstance(failure, MemoryError):
        raise token_too_long(path, None) from failure
    log.bad(path, segment.input_line(failure.lineno), _reason(failure))
    raise failure


class PieceStream:
    """A binary stream over byte strings, read as one input (what ``Store.bulk_load`` reads: ~2 KiB a call)."""

    def __init__(self, texts: Iterator[bytes]) -> None:
        self._texts = texts
        self._current = b""
        self._offset = 0

    def read(self, size: int = -1) -> bytes:
        while self._offset >= len(self._current):
            text = next(self._texts, None)
            if text is None:
                return b""
            self._current, self._offset = text, 0
        start = self._offset
        self._offset = len(self._current) if size < 0 else min(start + size, len(self._current))
        return self._current[start : self._offset]


@runtime_checkable
class PieceLoader(Protocol):
    """A sink that loads a stream of N-Triples pieces itself (and sees each piece: see
    :class:`loaders.indexing.IndexingSink`)."""

    def bulk_load_pieces(self, texts: Iterator[bytes]) -> None: ...


def stream_load(store: TripleSink, texts: Iterator[bytes]) -> None:
    """Bulk loads the N-Triples ``texts`` (whole lines each) as one input: one Oxigraph bulk load."""
    if isinstance(store, PieceLoader):
        store.bulk_load_pieces(texts)
    elif isinstance(store, ox.Store):
        bulk_load_texts(store, texts)
    else:
        for text in texts:
            store.bulk_load(text, ox.RdfFormat.N_TRIPLES)


def bulk_load_texts(store: ox.Store, texts: Iterator[bytes]) -> None:
    """One Oxigraph bulk load of the N-Triples ``texts``: read from a FIFO where Oxigraph reads one as a
    stream (:mod:`loaders.piped`: its parser then never waits for Python), else from a Python stream."""
    if can_pipe():
        try:
            bulk_load_piped(store, texts, ox.RdfFormat.N_TRIPLES)
            return
        except FifoUnavailable:  # raised before any text was taken: the same texts go as a stream
            pass
    store.bulk_load(cast(IO[bytes], PieceStream(texts)), ox.RdfFormat.N_TRIPLES)


def _block_statements(data: bytes, lines: int) -> int:
    """The statements of a block of ``lines`` lines: every line, unless some are blank, comments or
    indented (then they are counted one by one)."""
    if _ODD_LINE.search(data) or data[:1] in (b"#", b" ", b"\t", b"\n"):
        return _count_statements(data.split(b"\n"))
    return lines


def _count_statements(lines: list[bytes]) -> int:
    """N-Triples/N-Quads lines that hold a statement (not blank, not a comment)."""
    count = 0
    for line in lines:
        start = line.lstrip()[:1]
        if start and start != b"#":
            count += 1
    return count


def _insert_chunk(
    store: TripleSink,
    data: bytes,
    units: list[bytes] | None,
    first: int,
    syntax: ox.RdfFormat,
    path: str,
    log: SkipLog,
    prefix: str,
) -> int:
    """Loads one chunk ``data``, the newline-joined ``units`` (``units[i]`` is the text of input
    line ``first + i``; None: the lines of ``data``); returns how many lines were bad."""
    try:
        _insert(store, data, syntax, prefix)
        return 0
    except SyntaxError as exc:
        failure = exc
    except MemoryError as exc:  # only a line longer than the parser's buffer holds such a token
        if not is_buffer_overflow(exc):
            raise
        lines = units if units is not None else data.split(b"\n")
        long = next((offset for offset, unit in enumerate(lines) if len(unit) > PARSER_BUFFER), 0)
        raise token_too_long(path, first + long) from exc
    if units is None:
        units = data.split(b"\n")
    good: list[bytes] = []
    bad = 0
    for offset, unit in enumerate(units):
        if not unit:
            continue
        try:
            for _ in ox.parse(unit, syntax):
                pass
        except SyntaxError as exc:
            log.bad(path, first + offset, _reason(exc))
            bad += 1
            continue
        good.append(unit)
    if bad == 0:  # the chunk fails only as a whole: report where Oxigraph said
        raise LoadError(_reason(failure), file=path, line=_input_line(units, first, failure.lineno))
    _insert(store, b"\n".join(good), syntax, prefix)
    return bad


def _insert(store: TripleSink, data: bytes, syntax: ox.RdfFormat, prefix: str) -> None:
    """Bulk loads N-Triples bytes directly; N-Quads and blank nodes go through the parser."""
    if syntax == ox.RdfFormat.N_TRIPLES and not _BLANK_NODE.search(data):
        store.bulk_load(data, syntax)
    else:
        store.bulk_extend(_default_graph(ox.parse(data, syntax), prefix))


def _default_graph(quads: Iterable[ox.Quad], prefix: str) -> Iterator[ox.Quad]:
    """The quads in the default graph, with blank node labels prefixed (scoped to one file)."""
    blank = ox.BlankNode
    for quad in quads:
        subject, obj = quad.subject, quad.object
        if type(subject) is blank:
            subject = blank(prefix + subject.value)
        if type(obj) is blank:
            obj = blank(prefix + obj.value)
        yield ox.Quad(subject, quad.predicate, obj)


def blank_node_prefix() -> str:
    """A fresh blank-node label prefix, one per file."""
    return f"f{uuid.uuid4().hex[:12]}_"


def _input_line(units: list[bytes], first: int, lineno: int | None) -> int | None:
    """The input line whose unit holds line ``lineno`` (1-based) of the newline-joined chunk."""
    if lineno is None:
        return None
    seen = 0
    for offset, unit in enumerate(units):
        seen += unit.count(b"\n") + 1
        if seen >= lineno:
            return first + offset
    return first + len(units) - 1


def _load_stream(
    store: TripleSink,
    path: str,
    format: str,
    *,
    progress: Progress,
    prefix: str,
    on_read: Callable[[int | None], None] | None = None,
) -> int:
    """Parses a whole Turtle / RDF/XML / TriG file (statements may span lines) into ``store``;
    blank node labels get the file's ``prefix`` (anonymous ones, ``[]``, are numbered by the parser).
    ``on_read(bytes_read)`` is called with the statement counts (bytes of the file as it lies on disk)."""
    syntax = RDF_FORMATS[format]
    count = 0
    raw: IO[bytes] | None = None

    def statements(quads: Iterable[ox.Quad]) -> Iterator[ox.Quad]:
        nonlocal count
        for quad in _default_graph(quads, prefix):
            count += 1
            if count % _PROGRESS_EVERY == 0:
                progress(_PROGRESS_EVERY)
                if on_read is not None and raw is not None:
                    on_read(bytes_read(raw))
            yield quad

    if syntax == ox.RdfFormat.RDF_XML:
        with open_maybe_compressed(path) as handle:
            check_xml_entities(path, handle)
    reader: LineCounter | None = None
    try:
        with open_counted(path) as (handle, raw):
            skip_bom(handle, path)
            reader = LineCounter(handle)
            parsed = ox.parse(reader.stream_for_parser(), syntax, base_iri=Path(path).absolute().as_uri())
            store.bulk_extend(statements(parsed))
    except SyntaxError as exc:
        raise LoadError(_reason(exc), file=path, line=exc.lineno) from exc
    except MemoryError as exc:
        if not is_buffer_overflow(exc):
            raise
        raise token_too_long(path, reader.line if reader is not None else None) from exc
    progress(count % _PROGRESS_EVERY)
    return count
