"""Writing a traversal index: :class:`TripleCollector` numbers the triples a load writes, and
:func:`build_index` writes the files (see :mod:`kg_adapters.index` for the format).

Building is atomic: the files are written into a temporary directory inside the version directory
and renamed to ``traversal`` last (a crash leaves only the temporary directory, never a half index).
A load numbers the triples as it hands them to Oxigraph (:class:`TripleCollector`) and writes the
index from those numbers; ``kga index`` and appends read the store back, which costs about as much as
loading it (Oxigraph looks every IRI of every triple up on disk). Both give the same files.
"""

from __future__ import annotations

import itertools
import os
import re
from array import array
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pyoxigraph as ox

from kg_adapters.budgets import DEFAULT_MEMORY
from kg_adapters.errors import BackendError
from kg_adapters.index.emit import (
    TMP_PREFIX,
    IndexStats,
    emit_index,
    remove_stale_builds,
    resumable_tmp,
    swapped_in,
)
from kg_adapters.index.layout import ARRAYS, FORMAT_NAME, FORMAT_VERSION, STARTS
from kg_adapters.index.literal_names import named_rows, sorted_names
from kg_adapters.index.literal_table import literal_table
from kg_adapters.index.literals import LiteralColumns, LiteralRow
from kg_adapters.index.numbering import (
    SplitLiterals,
    SplitNumbered,
    compiled_literals,
    compiled_split,
    new_numbering,
)
from kg_adapters.index.ordering import distinct_sorted, edge_columns, ordered_entities, ranks, sorted_keys, starts
from kg_adapters.profiles import Profile

if TYPE_CHECKING:  # numpy is imported only when a build runs
    import numpy as np
    import numpy.typing as npt

    from kg_adapters.index.iri_lines import IriLines
    from kg_adapters.index.spill import SpilledCollection
    from kg_adapters.index.spool import CollectorSpool
    from kg_adapters.index.steps import BuildSteps

    Ints = npt.NDArray[np.int64]

BUILD_FILES = len(ARRAYS) + 4
"""The progress steps after reading: one per file a build may write (entities, literal values, the
arrays, relations, meta), an array it has no need of (no blank-node edges) counted as written."""


def build_index(
    store: ox.Store | None,
    version_dir: str | os.PathLike[str],
    profile: Profile,
    *,
    progress: Callable[[int], None] | None = None,
    every: int = 100_000,
    collected: TripleCollector | None = None,
    memory: int = DEFAULT_MEMORY,
    steps: BuildSteps | None = None,
) -> IndexStats:
    """Writes the traversal index of ``store`` (its default graph) into ``version_dir/traversal``,
    replacing any index there. ``collected``, when given, holds every triple of the store's default
    graph (what a load wrote, see :class:`TripleCollector`), and the store is not read at all;
    otherwise the store is read back (about as slow as loading it: Oxigraph looks each IRI up on
    disk; what it reads spills to disk past ``memory`` bytes, see :mod:`kg_adapters.index.spill`).
    ``progress(done)`` reports a running count of work: every ``every`` triples read
    (``done`` = triples read; once, for collected triples), then once per file written
    (``done`` = triples + files).

    Atomic: the files go to a temporary directory renamed into place last; a crash at any point
    leaves the previous index (or none) and a temporary directory that the next build removes. With
    ``steps`` (a load's, :mod:`kg_adapters.index.steps`) the temporary directory is the same for a
    resumed build, which keeps the files its steps recorded."""
    directory = Path(version_dir)
    remove_stale_builds(directory)
    tmp = directory / f"{TMP_PREFIX}{os.getpid()}-{os.urandom(4).hex()}"
    if steps is not None:
        tmp = resumable_tmp(directory, steps)
        if (stats := swapped_in(directory, tmp, steps)) is not None:
            return stats
    tmp.mkdir(exist_ok=True)
    spool_dir = tmp.with_name(tmp.name + "-collect")  # beside tmp: a killed build's is removed alike
    try:
        if collected is None:
            if store is None:
                raise ValueError("build_index needs the store or the collected triples")
            from kg_adapters.index.spool import CollectorSpool

            collected = TripleCollector(distinct=True)
            spool = CollectorSpool(spool_dir, memory=memory)
            spool.restore(collected, None)
            quads = _counted(store.quads_for_pattern(None, None, None, graph_name=ox.DefaultGraph()), progress, every)
            try:
                while batch := list(itertools.islice(quads, _READ_BATCH)):  # the budget is checked per batch
                    collected.add_quads(batch)
            except OSError as exc:
                raise BackendError(f"Oxigraph failed while the traversal index was read from it: {exc}") from exc
            spool.reload(collected)
        elif progress is not None:
            progress(collected.rows)
        return _write(collected, directory, tmp, profile, progress, steps)
    except BaseException:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        if spool_dir.exists():
            import shutil

            shutil.rmtree(spool_dir, ignore_errors=True)


def _counted(quads: Iterable[ox.Quad], progress: Callable[[int], None] | None, every: int) -> Iterator[ox.Quad]:
    if progress is None:
        yield from quads
        return
    for rows, quad in enumerate(quads, 1):
        yield quad
        if rows % every == 0:
            progress(rows)


_READ_BATCH = 50_000
"""Quads of a store read back handed to the collector at once."""
_XSD = "http://www.w3.org/2001/XMLSchema#"
_XSD_STRING = _XSD + "string"
_TYPED_BATCH = 50_000
"""Typed literals canonicalized together (see ``TripleCollector._add_typed``)."""

_SIMPLE_TRIPLE = re.compile(rb"^<([^<>\\\n]*)>[ \t]<([^<>\\\n]*)>[ \t]<([^<>\\\n]*)>[ \t]\.$", re.MULTILINE)
"""An N-Triples line ``<s> <p> <o> .`` with single spaces or tabs (the Freebase dump's layout) and no
escapes: in a valid line (the
loader adds only lines Oxigraph parsed) each group is then an IRI, spelled as its UTF-8 bytes."""


def _escaped_iri(data: bytes) -> bool:
    """Whether a line of N-Triples ``data`` that :data:`_QUICK_TRIPLE` splits holds a backslash (an escape
    in one of its IRIs): only lines with a backslash are looked at, none in most dumps (one ``memchr``)."""
    at = data.find(b"\\")
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        if _QUICK_TRIPLE.match(data, start, end):
            return True
        at = data.find(b"\\", end)
    return False


_QUICK_TRIPLE = re.compile(rb"^<([^>]*)>[ \t]<([^>]*)>[ \t]<([^>]*)>[ \t]\.$", re.MULTILINE)
""":data:`_SIMPLE_TRIPLE` with each group any run of bytes up to the next ``>`` (one byte compared
per step, where the strict pattern tests each byte against a set). In a valid N-Triples line an
IRI holds no ``<``, ``>`` or line break, so the lines it splits are those :data:`_SIMPLE_TRIPLE`
splits unless a group holds a backslash (an escape): ``TripleCollector.add_rdf`` then splits the
chunk with the strict pattern (:func:`_escaped_iri`)."""

_SIMPLE_LITERAL = re.compile(
    rb'^<([^<>\\\n]*)>[ \t]<([^<>\\\n]*)>[ \t]"([^"\\\n\r]*)"(@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*|\^\^<[^<>\\\n]*>|)[ \t]\.$',
    re.MULTILINE,
)
"""An N-Triples line ``<s> <p> "text" .``, ``"text"@lang`` or ``"text"^^<datatype>`` with single
spaces or tabs and no escapes: the text is then the literal's value as UTF-8 bytes, and the suffix says its tag."""

_CANONICAL = {
    (_XSD + "integer").encode(): re.compile(rb"-?[1-9][0-9]*|0"),
    (_XSD + "date").encode(): re.compile(rb"[0-9]{4}-[0-9]{2}-[0-9]{2}"),
    (_XSD + "boolean").encode(): re.compile(rb"true|false"),
}
"""Typed values Oxigraph stores as written, by datatype: these lexical forms are their values' own
canonical forms (or, like ``"1999-02-30"``, kept verbatim as ill-typed), so a line spelling one needs no
canonicalization (``tests/test_traversal_index.py`` compares them with Oxigraph's store form by form).
Other typed literals go through ``TripleCollector._add_typed``."""


def _literal_tag(term: ox.Literal) -> bytes:
    language = term.language
    if language:
        return b"@" + language.encode()
    datatype = term.datatype.value
    return b"" if datatype == _XSD_STRING else b"^" + datatype.encode()


class _SuffixTags(dict[bytes, "bytes | re.Pattern[bytes] | None"]):
    """The tag of a literal suffix of :data:`_SIMPLE_LITERAL` (cached: a load has few): the tag, the
    pattern its value must match to be stored as written, or None when Oxigraph must read the line."""

    def __missing__(self, suffix: bytes) -> bytes | re.Pattern[bytes] | None:
        found: bytes | re.Pattern[bytes] | None
        if not suffix:
            found = b""
        elif suffix[:1] == b"@":
            found = suffix.lower()  # as Oxigraph's parser writes language tags
        else:
            datatype = suffix[3:-1]
            found = b"" if datatype == _XSD_STRING.encode() else _CANONICAL.get(datatype)
        self[suffix] = found
        return found

    def decision(self, suffix: bytes) -> tuple[bytes, Callable[[bytes], object] | None] | None:
        """What the C split (:func:`~kg_adapters.index.numbering.compiled_literals`) does with the lines of a
        suffix: (their rows' tag, the check each value must pass, or None), or None: the parser reads them."""
        tag = self[suffix]
        if tag is None or type(tag) is bytes:
            return None if tag is None else (tag, None)
        return b"^" + suffix[3:-1], cast("re.Pattern[bytes]", tag).fullmatch


class TripleCollector:
    """The triples a load writes to the default graph, numbered as they go by, so that the load
    builds the index without reading the store back.

    Entities and relations are numbered by a dict keyed by their IRIs' UTF-8 bytes, in order of
    first sight (renumbered by id when the index is written). N-Triples text is split by one regular
    expression into the IRI-to-IRI lines (no Python object per triple) and the rest; a
    second one takes the literal lines without escapes whose literal Oxigraph stores as written
    (:data:`_SIMPLE_LITERAL`, :data:`_CANONICAL`), and Oxigraph's parser reads what is left (other
    typed literals, blank nodes, escapes, comments) as quads. A load may
    add a triple twice (a store is a set): duplicates are dropped when the index is written.
    ``distinct=True`` says the source has none (a store read back), so blank-node triples and
    literal triples need not be remembered to be counted once. ``compiled=False`` numbers with dicts and
    numpy even where the C extension was built (:mod:`kg_adapters.index.numbering`: the same numbers)."""

    def __init__(self, *, distinct: bool = False, compiled: bool = True) -> None:
        self.compiled = compiled
        self._entity = new_numbering(compiled)
        self._relation = new_numbering(compiled)
        self._edge_chunks: list[tuple[Any, Any, Any]] = []
        self._heads, self._rels, self._tails = array("i"), array("i"), array("i")
        self._out_extra_nodes, self._out_extra_rels = array("i"), array("i")
        self._in_extra_nodes, self._in_extra_rels = array("i"), array("i")
        self._distinct = distinct
        self._literals = LiteralColumns()
        """The literal rows (duplicates included: the literal table drops them)."""
        self._suffix_tags = _SuffixTags()
        self._typed: list[ox.Quad] = []
        self._blank_set: set[ox.Quad] = set()
        self._blank_count = 0
        self.rows = 0
        """Triples added (duplicates included)."""
        self.unreadable: str | None = None
        self._entity_base = 0
        """The number of the current entity dict's first IRI (earlier ones were spilled as runs)."""
        self._flushed_rows = 0
        """``rows`` when the buffers were last appended to the spool."""
        self._spool: CollectorSpool | None = None
        """Where the collector spills past its memory budget (set by ``CollectorSpool.restore``)."""
        self._spilled: SpilledCollection | None = None
        """Set when the collection is written from the spool's files (``CollectorSpool.reload``)."""

    def add_rdf(self, data: bytes, format: ox.RdfFormat) -> None:
        """Adds the default-graph triples of ``data`` (as ``Store.bulk_load`` reads it, blank
        nodes renamed per call). Text that does not parse (or holds a token longer than the parser's
        buffer) marks the collector unusable instead of raising: a load hands text over as Oxigraph
        starts reading it, and fails with Oxigraph's own error (its line) when Oxigraph refuses it;
        writing an index from it raises."""
        from kg_adapters.rdf_guard import is_buffer_overflow

        try:
            self._add_rdf(data, format)
        except SyntaxError as exc:
            self.unreadable = self.unreadable or f"{exc.msg or exc}"
        except MemoryError as exc:  # a token longer than the parser's buffer: Oxigraph refuses it too
            if not is_buffer_overflow(exc):
                raise
            self.unreadable = self.unreadable or str(exc)
        if self._spool is not None:
            self._spool.check(self)  # spills what passed its share of the memory budget

    def check(self) -> None:
        """Raises when some text handed over did not parse (see :meth:`add_rdf`)."""
        if self.unreadable is not None:
            raise BackendError(f"the traversal index was handed text that does not parse: {self.unreadable}")

    def _add_rdf(self, data: bytes, format: ox.RdfFormat) -> None:
        if format != ox.RdfFormat.N_TRIPLES:
            self.add_quads(ox.parse(data, format, rename_blank_nodes=True))
            return
        from kg_adapters.index.iri_lines import split_iri_lines

        split = compiled_split(self._entity, self._relation)
        if split is not None:  # the C extension's tables
            rest = self._add_numbered(split, data)
        elif (lines := split_iri_lines(data)) is None:  # two IRIs hashed alike: the regular expression's split
            rest = self._add_iri_lines(data)
        else:
            self._add_split(lines)
            rest = lines.rest
            if lines.long:
                rest = self._add_iri_lines(lines.long) + rest
        if rest.strip():
            rest = self._add_literal_lines(rest)
        if rest.strip():
            self.add_quads(ox.parse(rest, ox.RdfFormat.N_TRIPLES, rename_blank_nodes=True))

    def _add_numbered(self, split: SplitNumbered, data: bytes) -> bytes:
        """Numbers the IRI-to-IRI lines of ``data`` in C (the lines and numbers of :meth:`_add_split` and
        :meth:`_add_iri_lines`, in one pass) and returns the other lines."""
        import numpy as np

        count, heads, rels, tails, rest = split(data, self._entity, self._relation)
        if count:
            self._edge_chunks.append(
                (np.frombuffer(heads, np.int32), np.frombuffer(rels, np.int32), np.frombuffer(tails, np.int32))
            )
            self.rows += count
        return rest

    def _add_split(self, lines: IriLines) -> None:
        """Numbers the IRI-to-IRI lines :func:`~kg_adapters.index.iri_lines.split_iri_lines` found: a
        dict lookup per distinct IRI of the chunk, numpy for the rest."""
        import numpy as np

        if not lines.count:
            return
        entities, relations = lines.entities, lines.relations
        numbers = np.fromiter(
            map(self._entity.__getitem__, entities.values), dtype=np.int32, count=len(entities.values)
        )[entities.which]
        relation_numbers = np.fromiter(
            map(self._relation.__getitem__, relations.values), dtype=np.int32, count=len(relations.values)
        )
        self._edge_chunks.append((numbers[: lines.count], relation_numbers[relations.which], numbers[lines.count :]))
        self.rows += lines.count

    def _add_iri_lines(self, data: bytes) -> bytes:
        """Adds the lines of N-Triples ``data`` that :data:`_QUICK_TRIPLE` splits (or the strict
        :data:`_SIMPLE_TRIPLE` when an IRI holds an escape) and returns the other lines."""
        import numpy as np

        # an escape in an IRI: the strict split, which leaves its line to the parser
        parts = (_SIMPLE_TRIPLE if _escaped_iri(data) else _QUICK_TRIPLE).split(data)
        count = len(parts) // 4
        if count:
            entity, relation = self._entity.__getitem__, self._relation.__getitem__
            self._edge_chunks.append(
                (
                    np.fromiter(map(entity, parts[1::4]), dtype=np.int32, count=count),
                    np.fromiter(map(relation, parts[2::4]), dtype=np.int32, count=count),
                    np.fromiter(map(entity, parts[3::4]), dtype=np.int32, count=count),
                )
            )
            self.rows += count
        return b"".join(parts[0::4])  # the other lines, with their line breaks

    def _add_literal_lines(self, text: bytes) -> bytes:
        """Adds the lines of N-Triples ``text`` that :data:`_SIMPLE_LITERAL` splits and whose literal
        Oxigraph stores as written; returns the other lines, for the parser."""
        split = compiled_literals(self._entity, self._relation)
        if split is not None:  # the C extension's tables: the same lines, numbers and rows
            return self._add_compiled_literals(split, text)
        parts = _SIMPLE_LITERAL.split(text)
        if len(parts) == 1:
            return text
        subjects, predicates, values, suffixes = parts[1::5], parts[2::5], parts[3::5], parts[4::5]
        rest = [b"".join(parts[0::5])]
        final: dict[bytes, int] = {}  # suffix -> the number of the tag its rows get
        refused: list[int] = []  # rows the parser reads (typed values Oxigraph may respell)
        for suffix in set(suffixes):
            tag = self._suffix_tags[suffix]
            if type(tag) is bytes:
                final[suffix] = self._literals.tag_number(tag)
                continue
            final[suffix] = self._literals.tag_number(b"^" + suffix[3:-1])
            positions = list(itertools.compress(itertools.count(), map(suffix.__eq__, suffixes)))
            if tag is None:
                refused.extend(positions)
                continue
            here = list(map(values.__getitem__, positions))
            canonical = cast("re.Pattern[bytes]", tag).fullmatch
            if not all(map(canonical, here)):
                refused.extend(
                    position for position, value in zip(positions, here, strict=True) if not canonical(value)
                )
        tags = list(map(final.__getitem__, suffixes))
        if refused:
            keep = bytearray(b"\x01") * len(suffixes)
            for position in sorted(refused):
                keep[position] = 0
                rest.append(
                    b'\n<%s> <%s> "%s"%s .'
                    % (subjects[position], predicates[position], values[position], suffixes[position])
                )
            subjects, predicates, values = (
                list(itertools.compress(column, keep)) for column in (subjects, predicates, values)
            )
            tags = list(itertools.compress(tags, keep))
        entities = list(map(self._entity.__getitem__, subjects))
        relations = list(map(self._relation.__getitem__, predicates))
        self._out_extra_nodes.extend(entities)
        self._out_extra_rels.extend(relations)
        self._literals.extend(entities, relations, values, tags)
        self.rows += len(entities)
        return b"".join(rest)

    def _add_compiled_literals(self, split: SplitLiterals, text: bytes) -> bytes:
        nodes, relations, tags, lengths, values, rest = split(text, self._entity, self._relation, self._decision)
        self._out_extra_nodes.frombytes(nodes)
        self._out_extra_rels.frombytes(relations)
        self._literals.extend_packed(nodes, relations, tags, lengths, values)
        self.rows += len(nodes) // 4
        return rest

    def _decision(self, suffix: bytes) -> tuple[int, Callable[[bytes], object] | None] | None:
        """What the C split does with the lines of a literal suffix (``_SuffixTags.decision``), the tag as
        its number in the literal rows' table."""
        decision = self._suffix_tags.decision(suffix)
        return None if decision is None else (self._literals.tag_number(decision[0]), decision[1])

    def add_quads(self, quads: Iterable[ox.Quad]) -> None:
        """Adds the quads of the default graph (others are not indexed)."""
        entity, relation = self._entity.__getitem__, self._relation.__getitem__
        heads, rels, tails = self._heads, self._rels, self._tails
        named, literal, default = ox.NamedNode, ox.Literal, ox.DefaultGraph
        distinct = self._distinct
        literals = self._literals
        rows = 0
        for quad in quads:
            if type(quad.graph_name) is not default:
                continue
            rows += 1
            subject, obj = quad.subject, quad.object
            r = relation(quad.predicate.value.encode())
            if type(subject) is named:
                s = entity(subject.value.encode())
                if type(obj) is named:
                    heads.append(s)
                    rels.append(r)
                    tails.append(entity(obj.value.encode()))
                    continue
                self._out_extra_nodes.append(s)
                self._out_extra_rels.append(r)
                if type(obj) is literal:
                    if distinct:
                        literals.append(s, r, obj.value.encode(), _literal_tag(obj))
                    elif obj.language is None and obj.datatype.value != _XSD_STRING:
                        self._typed.append(quad)  # Oxigraph may store it in another spelling
                        if len(self._typed) >= _TYPED_BATCH:
                            self._add_typed()
                    else:
                        literals.append(s, r, obj.value.encode(), _literal_tag(obj))
                    continue
            elif type(obj) is named:
                self._in_extra_nodes.append(entity(obj.value.encode()))
                self._in_extra_rels.append(r)
            if distinct:
                self._blank_count += 1
            else:
                self._blank_set.add(quad)
        self.rows += rows
        if self._spool is not None:
            self._spool.check(self)

    # -- what _write reads ------------------------------------------------------------------------
    def iris(self) -> tuple[list[str], list[str]]:
        """The entity and the relation IRIs, in number order."""
        return self._entity.strings(), self._relation.strings()

    def edges(self) -> tuple[Ints, Ints, Ints]:
        """(heads, relations, tails) of the IRI-to-IRI triples (duplicates included)."""
        import numpy as np

        chunks = [
            *self._edge_chunks,
            tuple(np.frombuffer(a, dtype=np.int32) for a in (self._heads, self._rels, self._tails)),
        ]
        return cast(
            "tuple[Ints, Ints, Ints]",
            tuple(np.concatenate([chunk[i] for chunk in chunks]).astype(np.int64) for i in range(3)),
        )

    def edge_columns(self) -> tuple[Any, Any, Any]:
        """(heads, relations, tails) of the IRI-to-IRI triples as int32 (duplicates included)."""
        import numpy as np

        chunks = [*self._edge_chunks, (self._heads, self._rels, self._tails)]
        return cast(
            "tuple[Any, Any, Any]",
            tuple(np.concatenate([np.frombuffer(chunk[i], dtype=np.int32) for chunk in chunks]) for i in range(3)),
        )

    def extras(self) -> tuple[tuple[Ints, Ints], tuple[Ints, Ints]]:
        """(nodes, relations) with a literal or blank-node object, and with a blank-node subject."""
        import numpy as np

        def pair(nodes: array[int], rels: array[int]) -> tuple[Ints, Ints]:
            return np.frombuffer(nodes, dtype=np.int32).astype(np.int64), np.frombuffer(rels, dtype=np.int32).astype(
                np.int64
            )

        return pair(self._out_extra_nodes, self._out_extra_rels), pair(self._in_extra_nodes, self._in_extra_rels)

    def literal_columns(self) -> LiteralColumns:
        """The literal rows collected (duplicates included)."""
        self._add_typed()
        return self._literals

    def literal_rows(self) -> list[LiteralRow]:
        """The distinct literal rows collected, as tuples in the order first added (for tests)."""
        return list(dict.fromkeys(self.literal_columns().rows()))

    def _add_typed(self) -> None:
        """Adds the typed literals waiting in ``_typed`` as Oxigraph stores them: it keeps numbers,
        booleans, dates and durations as values and writes them back canonically (``"01"`` and
        ``"+1"`` as xsd:integer are both ``"1"``, one triple), so they pass through an in-memory
        store, which encodes terms as the on-disk one does."""
        if not self._typed:
            return
        canonical = ox.Store()
        canonical.bulk_extend(self._typed)
        self._typed.clear()
        entity, relation = self._entity.__getitem__, self._relation.__getitem__
        for quad in canonical:
            subject, obj = quad.subject, quad.object
            if type(subject) is ox.NamedNode and type(obj) is ox.Literal:  # what was put in
                s, r = entity(subject.value.encode()), relation(quad.predicate.value.encode())
                self._literals.append(s, r, obj.value.encode(), _literal_tag(obj))

    def blank_edges(self) -> int:
        return self._blank_count if self._distinct else len(self._blank_set)

    def label_rows(self, predicates: Iterable[str]) -> Iterable[tuple[str, str, str]]:
        """(subject IRI, label, language or ``""``) of the literal triples of ``predicates`` collected,
        distinct and sorted: what the name index holds, read from the load instead of the store (a
        list; from disk, as they are read, when the collection spilled)."""
        self.check()
        numbers = {self._relation.get(iri.encode()) for iri in predicates} - {None}
        if not numbers:
            return []
        if self._spilled is not None:
            return self._spilled.label_rows(cast("set[int]", numbers))
        entities, texts, languages = named_rows(self.literal_columns(), cast("set[int]", numbers))
        if not texts:
            return []
        return sorted_names(self._entity.strings_at(entities), texts, languages)

    def relation_iris(self) -> list[str]:
        """The predicates of the triples collected."""
        return [iri.decode() for iri in self._relation]


def _write(
    collected: TripleCollector,
    directory: Path,
    tmp: Path,
    profile: Profile,
    progress: Callable[[int], None] | None,
    steps: BuildSteps | None = None,
) -> IndexStats:
    import numpy as np

    collected.check()
    if collected._spilled is not None:  # past the memory budget: from the spool's files
        return collected._spilled.write_index(directory, tmp, profile, progress, steps)
    rows = collected.rows
    entities = ordered_entities(collected._entity, profile, compiled=collected.compiled)
    entity_rank, count = entities.rank, len(entities.rank)
    relation_names = [profile.relation_id(iri) for iri in collected._relation.strings()]
    relation_rank, relation_order = ranks(relation_names, "relation")
    width = max(len(relation_names), 1)

    arrays: dict[str, Any] = edge_columns(
        collected.edge_columns(), entity_rank, relation_rank, count, width, compiled=collected.compiled
    )
    edges = int(arrays["out_other"].size)

    def extra_keys(pairs: tuple[Ints, Ints]) -> Ints:
        nodes, relations = pairs
        return distinct_sorted(sorted_keys(entity_rank[nodes] * width + relation_rank[relations]))

    out_extra_pairs, in_extra_pairs = collected.extras()
    blank_edges = collected.blank_edges()
    literal_key, literal_tag, literal_offsets, literal_values, tags = literal_table(
        collected.literal_columns(), entity_rank, relation_rank, width
    )
    literal_edges = int(literal_key.size)
    arrays.update(
        {
            "entity_offsets": entities.offsets,
            "out_extra": extra_keys(out_extra_pairs),
            "in_extra": extra_keys(in_extra_pairs),
            "literal_key": literal_key,
            "literal_tag": literal_tag,
            "literal_offsets": literal_offsets,
        }
    )
    for keys_name, start_name in STARTS.items():
        if start_name not in arrays:  # (the edges' come with their columns)
            arrays[start_name] = starts(arrays[keys_name], count, width)
    meta = index_meta(
        profile,
        entities=count,
        relations=len(relation_names),
        edges=edges,
        literal_edges=literal_edges,
        literal_relations=np.flatnonzero(np.bincount(arrays["out_extra"] % width, minlength=width)).tolist(),
        literal_tags=tags,
        blank_edges=blank_edges,
        spelled_back=entities.spelled_back,
    )
    return emit_index(
        directory,
        tmp,
        arrays,
        {"entities.bin": iter((entities.ids,)), "literals.bin": iter((literal_values,))},
        [relation_names[i] for i in relation_order.tolist()],
        meta,
        rows,
        progress,
        steps,
    )


def index_meta(
    profile: Profile,
    *,
    entities: int,
    relations: int,
    edges: int,
    literal_edges: int,
    literal_relations: list[int],
    literal_tags: list[str],
    blank_edges: int,
    spelled_back: tuple[bool, str | None] | None,
) -> dict[str, Any]:
    """The index's ``meta.json``. ``spelled_back``: whether every entity id spells back into its IRI and
    the first that does not (:class:`~kg_adapters.index.replay.EntitySpelling`), None when not known."""
    spelling: dict[str, bool | str | None] = {} if spelled_back is None else {"entity_ids_spell_back": spelled_back[0]}
    if spelled_back is not None and not spelled_back[0]:
        spelling["unspelled_entity_id"] = spelled_back[1]
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "profile": profile.name,
        "entities": entities,
        "relations": relations,
        "edges": edges,
        "literal_edges": literal_edges,
        "literal_relations": literal_relations,
        "literal_tags": literal_tags,
        "blank_edges": blank_edges,
        "rows": edges + literal_edges + blank_edges,
        **spelling,
    }
