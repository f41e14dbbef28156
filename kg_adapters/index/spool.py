"""A load's :class:`~kg_adapters.index.build.TripleCollector` kept on disk: its checkpoints (a load
killed midway resumes with exactly the numbers it had at its last checkpoint) and its spill (what the
collector gathers goes to disk past its memory budget, see :mod:`kg_adapters.index.spill`).

:meth:`CollectorSpool.flush` appends what the collector gathered since the previous flush to files in
the spool directory and empties those buffers; the collector calls it when its buffers pass their share
of the budget. :meth:`CollectorSpool.spill_iris` writes the dict that numbers entity IRIs as a sorted
run (``runs/entities-N.run``) and gives the collector a new one whose numbers go on counting: a load
holds at most one run's IRIs in memory. :meth:`CollectorSpool.save` (a checkpoint) flushes, syncs the
files and returns the spool's state: the length of every file, the runs written and where the entity
dict of the moment starts. Files are only ever appended to and runs never change once written, so a
state names a prefix of each file and the runs before it. :meth:`CollectorSpool.restore` truncates the
files to a state, removes later runs (dropping what a killed load wrote after it) and rebuilds the
collector's dicts from the logs; :meth:`CollectorSpool.reload` moves everything back into the
collector before the index is written when it fits the budget, and otherwise leaves it on disk for the
spilled build (:class:`kg_adapters.index.spill.SpilledCollection`).

Files: ``entities.log`` and ``relations.log`` (the IRIs in number order, one a line: an IRI holds no
line break; entity numbers count on across runs, so line N is the IRI numbered N), ``edges.bin``
(head, relation, tail: :func:`edge_dtype`), ``out_extra.bin`` and ``in_extra.bin`` (node, relation:
:func:`extra_dtype`), ``literals.bin`` (the literal rows, a block of columns per flush:
:mod:`kg_adapters.index.literal_spool`), ``blanks.nq`` (the blank-node triples, N-Quads, one a line),
``runs/`` (the sorted IRI runs: (IRI, number) pairs).

Entity numbers: an IRI met again after its run was written gets a new number, so the numbers of a
load count IRIs once per run they appear in and can pass 2**31 on a dump of billions of triples (full
Freebase) even when its distinct IRIs are far fewer. On disk they are int64. In memory the collector
numbers each run from 0 (int32 arrays, the fast path's types) and the spool adds the run's first number
(``TripleCollector._entity_base``) as it writes: a run holds fewer than :data:`RUN_NUMBERS` IRIs (the
dict is written out at that count whatever the budget). The index itself numbers distinct entities in
int32: a load with more than :data:`~kg_adapters.index.layout.MAX_ENTITIES` of them is refused with
:class:`~kg_adapters.errors.IndexTooLarge` before any index file is written.
"""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyoxigraph as ox

from kg_adapters.budgets import DEFAULT_MEMORY, index_memory
from kg_adapters.errors import IndexTooLarge
from kg_adapters.index.layout import MAX_ENTITIES
from kg_adapters.index.literal_spool import FILE_ROW_BYTES, add_blocks, file_blocks, write_block
from kg_adapters.index.numbering import IRI_ENTRY_BYTES, IriNumbers, new_numbering
from kg_adapters.store_layout import fsync_dir

if TYPE_CHECKING:
    from kg_adapters.index.build import TripleCollector
    from kg_adapters.index.steps import BuildSteps

EDGES, OUT_EXTRA, IN_EXTRA = "edges.bin", "out_extra.bin", "in_extra.bin"
FILES = ("entities.log", "relations.log", EDGES, OUT_EXTRA, IN_EXTRA, "literals.bin", "blanks.nq")
RUNS = "runs"
RUN_NUMBERS = 2**31 - 2**27
"""The most IRIs numbered in one run (the collector's int32 numbers, from 0 in each run): the entity dict
is written out as a run at this count even when the budget would let it grow (a 2**27 margin: what one
chunk handed over can add before the count is checked)."""
RELATION_NUMBERS = 2**31 - 2**27
"""The most distinct relations (numbered in int32, never spilled): more is refused (IndexTooLarge)."""
EDGE_BYTES = 12
"""Memory one buffered IRI-to-IRI triple takes (three int32)."""
EXTRA_BYTES = 8
"""Memory one buffered (node, relation) pair of a literal or blank-node edge takes (two int32)."""
TABLE_GROWTH = 3 / 2
"""What the entity numbering table takes at most while it grows, for each byte it holds (``nbytes()``): its
slots and entries are reallocated twice as large, the old ones freed once the new ones are filled."""
FLUSH_ROWS = 1 << 20
"""Edges appended to the spool at once (20-byte records): what an append holds beside the buffers is one such
slice, whatever they hold."""
EDGE_ROW_BYTES = 20
"""Disk one spooled IRI-to-IRI triple takes (:func:`edge_dtype`)."""
EXTRA_ROW_BYTES = 12
"""Disk one spooled (node, relation) pair takes (:func:`extra_dtype`)."""
LITERAL_ROW_BYTES = 20
"""Memory one buffered literal row takes beyond its value (counted apart: ``LiteralColumns.values``): its
four 4-byte numbers and the arrays' spare room (the 4M-triple dump's literal lines: 18.4 bytes a row held
by the columns beside the values, lit23's measure)."""
WRITE_EDGE_BYTES = 107
WRITE_LITERAL_BYTES = 260
WRITE_ENTITY_BYTES = 170
"""Memory the in-memory index write takes per edge, literal row (beside its value's bytes) and entity, the
collection it writes included: it is chosen when these fit the budget's write share
(:attr:`kg_adapters.budgets.IndexMemory.write`). Measured as the peak resident memory of one process over
its own before the collection was numbered (polled every 5 ms; ``write_indexes`` of a collection numbered
from the Freebase-shaped dumps, no spool): all lines of the 1M, 4M and 16M dumps 212, 745 and 2,893 MiB
(0.786/3.15/12.6M edges, 0.214/0.854/3.42M literal rows of 31 bytes, 0.108/0.433/1.73M entities); the 4M
dump's IRI-to-IRI lines alone 488 MiB, its literal lines alone 567 MiB (~29 MiB of each is fixed: numpy and
the like, within :data:`kg_adapters.budgets.WORKER_RESERVE`). The edges alone and the literals alone give
about 126 and 550 bytes (with 200 an entity); a whole dump peaks lower than that sum (the traversal index's
sorts and the literal table come one after the other, the name index beside both), so they are taken at 0.85:
a whole dump is estimated ~11% above its peak (16M: 3.12 GiB for 2.80), an input of edges alone or
literals alone ~13% below (the interpreter's and the text's part of the reserve, ~100 MiB, is free while
the index is written). ``kga load`` of the 16M dump under the default budget: estimated 3.17 GiB (the spooled
rows' bytes counted too) against a write share of 3.34 GiB, written in memory, the worker's peak 3.08 GiB."""


def edge_dtype() -> Any:
    """A spooled IRI-to-IRI triple: (head, relation, tail), entity numbers int64, packed (20 bytes)."""
    import numpy as np

    return np.dtype([("head", "<i8"), ("relation", "<i4"), ("tail", "<i8")])


def extra_dtype() -> Any:
    """A spooled (node, relation) pair of a literal or blank-node edge: the node int64, packed (12 bytes)."""
    import numpy as np

    return np.dtype([("node", "<i8"), ("relation", "<i4")])


@dataclass(frozen=True, kw_only=True)
class NumberLimits:
    """How far the collector's numbers go (the defaults are the types' own limits; tests pass small ones
    to reach them): IRIs numbered in one run, distinct relations, distinct entities in the index."""

    run: int = RUN_NUMBERS
    relations: int = RELATION_NUMBERS
    entities: int = MAX_ENTITIES


class CollectorSpool:
    """The spool directory of one load's collector (see the module docstring); ``memory`` is the
    collector's budget in bytes (:func:`kg_adapters.budgets.memory_bytes`); ``limits``: see
    :class:`NumberLimits`."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        memory: int = DEFAULT_MEMORY,
        limits: NumberLimits = NumberLimits(),  # frozen: one shared default is safe
    ) -> None:
        self.limits = limits
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / RUNS).mkdir(exist_ok=True)
        self.memory = memory
        self.shares = index_memory(memory)
        """The budget's split (:func:`kg_adapters.budgets.index_memory`)."""
        self.iri_share = self.shares.iris
        """Bytes the entity IRI dict may take (growing it included) before it is written as a run."""
        self.buffer_share = self.shares.buffers
        """Bytes the buffered triples may take before they are appended to the files."""
        self._logged = {"entities.log": 0, "relations.log": 0}
        """IRIs of each dict already in the log (for entities: the next number to log)."""
        self.runs = 0
        """Sorted IRI runs written."""
        self._base_offset = 0
        """Where in ``entities.log`` the current entity dict's IRIs start."""
        self._iri_check = 0
        """The dict size at which the budget is next checked (see :meth:`check`)."""
        self._kept: dict[str, int] | None = None
        """The files' sizes before a save that kept the collector's buffers (``save(keep=True)``)."""
        self.literal_rows = 0
        """Literal rows in ``literals.bin`` (repeats across appends included): what the index write's estimate
        counts (:meth:`fits`); the rows' bytes vary too much to count them by."""
        self._kept_literal_rows = 0
        """``literal_rows`` before a save that kept the collector's buffers."""

    # -- while the load parses ---------------------------------------------------------------------
    def check(self, collector: TripleCollector) -> None:
        """Spills what passed its share of the budget: called after each chunk the collector numbers."""
        if len(collector._relation) > self.limits.relations:
            raise IndexTooLarge(
                f"more than {self.limits.relations:,} distinct relations: the traversal index numbers them in int32"
            )
        entities = len(collector._entity)
        if entities >= self.limits.run:
            self.spill_iris(collector)
            entities = 0
        if entities >= self._iri_check:
            # the relation table is never written as runs (a relation's number is used by every edge): what it
            # takes comes out of the entity table's share, so a graph of many relations spills its entities sooner
            share = max(self.iri_share - collector._relation.nbytes(), 0)
            growing = int(collector._entity.nbytes() * TABLE_GROWTH)  # what it takes while it grows
            width = max(growing // entities, 1) if entities else int(IRI_ENTRY_BYTES * TABLE_GROWTH)
            if entities * width > share:
                self.spill_iris(collector)
                entities = 0
            self._iri_check = entities + max(share // width - entities, 1) // 2 + 1
        extras = len(collector._out_extra_nodes) + len(collector._in_extra_nodes)
        literals = collector._literals
        buffered = (
            (collector.rows - collector._flushed_rows) * EDGE_BYTES
            + extras * EXTRA_BYTES
            + len(literals) * LITERAL_ROW_BYTES
            + len(literals.values)
        )
        if buffered > self.buffer_share:
            self.flush(collector)

    def spill_iris(self, collector: TripleCollector) -> None:
        """Writes the entity IRI dict as a sorted run of (IRI, number) and starts a new dict whose
        numbers go on from the last one (logged first: a checkpoint rebuilds the new dict from the log).
        The buffers are flushed first: their numbers count from the old dict's first."""
        from kg_adapters.index.spill import release_freed_memory, write_run

        self.flush(collector)
        base = collector._entity_base
        path = run_path(self.directory, self.runs)
        write_run(path, ((iri, base + number) for iri, number in collector._entity.sorted_items()))
        fsync_dir(path.parent)
        self.runs += 1
        collector._entity_base += len(collector._entity)
        collector._entity = new_numbering(collector.compiled)
        self._base_offset = (self.directory / "entities.log").stat().st_size
        release_freed_memory()  # the old dict's IRIs: freed, but kept by the C heap otherwise

    def flush(self, collector: TripleCollector, *, sync: bool = False, keep: bool = False) -> None:
        """Appends the collector's new data to the files (synced when ``sync``) and empties its buffers
        (unless ``keep``: then they stay in the collector, already on disk, until :meth:`reload`); entity
        numbers are written as the load's (the run's first number added, int64)."""
        import numpy as np

        if self._kept is not None:  # a save kept them: they are on disk already
            self._kept = None
            _empty_buffers(collector)
        if keep:
            self._kept = {name: (self.directory / name).stat().st_size for name in FILES}
            self._kept_literal_rows = self.literal_rows
        base = collector._entity_base
        collector._add_typed()
        self._append_iris("entities.log", collector._entity, collector._entity_base, sync=sync)
        self._append_iris("relations.log", collector._relation, 0, sync=sync)
        chunks: list[tuple[Any, Any, Any]] = [*collector._edge_chunks]
        if len(collector._heads):
            columns = [np.frombuffer(a, dtype=np.int32) for a in (collector._heads, collector._rels, collector._tails)]
            chunks.append((columns[0], columns[1], columns[2]))
        with open(self.directory / EDGES, "ab") as handle:
            for heads, rels, tails in chunks:
                for start in range(0, len(heads), FLUSH_ROWS):
                    stop = start + FLUSH_ROWS
                    rows = np.empty(len(heads[start:stop]), dtype=edge_dtype())
                    rows["head"], rows["relation"] = heads[start:stop], rels[start:stop]
                    rows["tail"] = tails[start:stop]
                    if base:
                        rows["head"] += base
                        rows["tail"] += base
                    rows.tofile(handle)
                    del rows
            _sync(handle, sync)
        for name, nodes, rels in (
            (OUT_EXTRA, collector._out_extra_nodes, collector._out_extra_rels),
            (IN_EXTRA, collector._in_extra_nodes, collector._in_extra_rels),
        ):
            with open(self.directory / name, "ab") as handle:
                pairs = np.empty(len(nodes), dtype=extra_dtype())
                pairs["node"], pairs["relation"] = (
                    np.frombuffer(nodes, dtype=np.int32),
                    np.frombuffer(rels, dtype=np.int32),
                )
                if base:
                    pairs["node"] += base
                pairs.tofile(handle)
                _sync(handle, sync)
        with open(self.directory / "literals.bin", "ab") as handle:
            self.literal_rows += len(collector._literals)
            write_block(handle, collector._literals, base)
            _sync(handle, sync)
        with open(self.directory / "blanks.nq", "ab") as handle:
            if collector._blank_set:
                handle.write(ox.serialize(collector._blank_set, format=ox.RdfFormat.N_QUADS) or b"")
            _sync(handle, sync)
        if not keep:
            from kg_adapters.index.spill import release_freed_memory

            _empty_buffers(collector)
            release_freed_memory()  # the buffers' objects: freed, but kept by the C heap otherwise
        collector._flushed_rows = collector.rows

    def save(self, collector: TripleCollector, *, keep: bool = False) -> dict[str, Any]:
        """Appends the collector's new data to the files, empties its buffers, syncs and returns the state.
        ``keep``: the last save before the index is written (:meth:`reload` next): the buffers stay in the
        collector, and :meth:`reload` reads back only what the files held before this save."""
        self.flush(collector, sync=True, keep=keep)
        return {
            "rows": collector.rows,
            "blank_count": collector._blank_count,
            "sizes": {name: (self.directory / name).stat().st_size for name in FILES},
            "entity_runs": self.runs,
            "entity_base": collector._entity_base,
            "entity_base_offset": self._base_offset,
            "literal_rows": self.literal_rows,
        }

    def _append_iris(self, name: str, numbered: IriNumbers, base: int, *, sync: bool = False) -> None:
        """Logs the IRIs numbered since the last save (the table's first is numbered ``base``)."""
        with open(self.directory / name, "ab") as handle:
            handle.write(numbered.lines_from(self._logged[name] - base))
            _sync(handle, sync)
        self._logged[name] = base + len(numbered)

    # -- resuming ----------------------------------------------------------------------------------
    def restore(self, collector: TripleCollector, state: dict[str, Any] | None) -> None:
        """Cuts the files back to ``state`` (None: empties them), removes the runs written after it,
        numbers ``collector``'s IRIs as they were then and makes this spool the collector's; the rest
        stays in the files until :meth:`reload`."""
        state = state or {}
        sizes = state.get("sizes", {})
        for name in FILES:
            path = self.directory / name
            with open(path, "ab") as handle:
                handle.truncate(int(sizes.get(name, 0)))
                _sync(handle, True)
        self.runs = int(state.get("entity_runs", 0))
        # a state saved before the rows were counted: guessed from their bytes (a value of 8 bytes, no tag)
        guessed = int(sizes.get("literals.bin", 0)) // (FILE_ROW_BYTES + 8)
        self.literal_rows = int(state.get("literal_rows", guessed))
        for path in (self.directory / RUNS).iterdir():
            if run_number(path) is None or run_number(path) >= self.runs:  # type: ignore[operator]
                path.unlink()
        base, self._base_offset = int(state.get("entity_base", 0)), int(state.get("entity_base_offset", 0))
        collector._entity_base = base
        collector._entity = new_numbering(collector.compiled)
        for name, numbers, start, offset in (
            ("entities.log", collector._entity, base, self._base_offset),
            ("relations.log", collector._relation, 0, 0),
        ):
            with open(self.directory / name, "rb") as handle:
                handle.seek(offset)
                iris = handle.read().split(b"\n")
            iris.pop()  # after the last line break
            for iri in iris:
                numbers[iri]  # numbered in log order
            if len(numbers) != len(iris):
                raise ValueError(f"{name} repeats an IRI: the spool is damaged")
            self._logged[name] = start + len(iris)
        collector.rows = collector._flushed_rows = int(state.get("rows", 0))
        collector._blank_count = int(state.get("blank_count", 0))
        collector._spool = self

    # -- writing the index -------------------------------------------------------------------------
    def fits(self, collector: TripleCollector) -> bool:
        """Whether the in-memory index write of everything collected (:meth:`write_estimate`) fits what the
        worker's reserve leaves of the budget (:attr:`~kg_adapters.budgets.IndexMemory.write`; no run written)."""
        return self.runs == 0 and self.write_estimate(collector) <= self.shares.write

    def write_estimate(self, collector: TripleCollector) -> int:
        """What the in-memory index write of everything collected would hold at its peak (``WRITE_*``): the
        edges, literal rows and entities held and spooled, and the literal rows' bytes, held and spooled (after
        a save that kept the buffers, the file's bytes before it: the held rows are counted once, as held)."""
        held = sum(len(chunk[0]) for chunk in collector._edge_chunks) + len(collector._heads)
        edges = self._spooled(EDGES) // EDGE_ROW_BYTES + held  # after a save that kept them, those before it
        spooled_rows = self.literal_rows if self._kept is None else self._kept_literal_rows
        literal_count = len(collector._literals) + spooled_rows
        return (
            edges * WRITE_EDGE_BYTES
            + literal_count * WRITE_LITERAL_BYTES
            + self._spooled("literals.bin")
            + len(collector._literals.values)
            + len(collector._entity) * WRITE_ENTITY_BYTES
        )

    def _spooled(self, name: str) -> int:
        """The bytes of a file that the collector does not hold (all of it, but for a save that kept them)."""
        return (self.directory / name).stat().st_size if self._kept is None else self._kept[name]

    def reload(self, collector: TripleCollector, steps: BuildSteps | None = None) -> None:
        """Moves the spooled edges, extras, literal rows and blank triples back into ``collector``
        (what :func:`~kg_adapters.index.build.build_index` reads) when they fit the budget (after a save
        that kept the buffers, only what the files held before it: the rest is in memory); otherwise
        flushes the rest to the files too and marks the collector spilled: its index and label rows
        are then written from the files (:class:`kg_adapters.index.spill.SpilledCollection`, going on
        from the ``steps`` a killed load recorded)."""
        import numpy as np

        if not self.fits(collector):
            from kg_adapters.index.spill import SpilledCollection

            self.flush(collector)
            if len(collector._entity):
                self.spill_iris(collector)
            collector._spilled = SpilledCollection(self, collector, steps)
            return
        # no run was written (fits): the numbers on disk are the collector's own, below 2**31
        sizes = {name: self._spooled(name) for name in FILES}
        self._kept = None  # from here on the collector's buffers are all it has
        edges = np.fromfile(self.directory / EDGES, dtype=edge_dtype(), count=sizes[EDGES] // EDGE_ROW_BYTES)
        if len(edges):
            head, relation, tail = (edges[column].astype(np.int32) for column in ("head", "relation", "tail"))
            collector._edge_chunks.insert(0, (head, relation, tail))
        del edges
        for name, held in (
            (OUT_EXTRA, (collector._out_extra_nodes, collector._out_extra_rels)),
            (IN_EXTRA, (collector._in_extra_nodes, collector._in_extra_rels)),
        ):
            pairs = np.fromfile(self.directory / name, dtype=extra_dtype(), count=sizes[name] // EXTRA_ROW_BYTES)
            if len(pairs):  # the spooled pairs first, in the order they were collected
                for column, kept in zip(("node", "relation"), held, strict=True):
                    spooled = array("i", pairs[column].astype(np.int32).tobytes())
                    spooled.extend(kept)
                    kept[:] = spooled
        front = collector._literals.empty_like()  # the spooled rows first, in the order they were collected
        add_blocks(front, file_blocks(self.directory / "literals.bin", sizes["literals.bin"]))
        collector._literals.prepend(front)
        del front
        blanks = _prefix(self.directory / "blanks.nq", sizes["blanks.nq"])
        if blanks:
            collector._blank_set.update(ox.parse(blanks, ox.RdfFormat.N_QUADS))

    def blank_quads(self) -> set[ox.Quad]:
        """The distinct blank-node triples spooled (few in the graphs indexed: they stay in memory)."""
        blanks = (self.directory / "blanks.nq").read_bytes()
        return set(ox.parse(blanks, ox.RdfFormat.N_QUADS)) if blanks else set()


def run_path(directory: Path, number: int) -> Path:
    return directory / RUNS / f"entities-{number:06d}.run"


def run_number(path: Path) -> int | None:
    """The number of a run file, None for anything else (a run cut short while written: ``.tmp``)."""
    stem = path.name.removeprefix("entities-").removesuffix(".run")
    return int(stem) if path.suffix == ".run" and stem.isdigit() else None


def _empty_buffers(collector: TripleCollector) -> None:
    """Drops what the collector buffered (on disk in the spool's files)."""
    collector._edge_chunks.clear()
    collector._heads, collector._rels, collector._tails = array("i"), array("i"), array("i")
    collector._out_extra_nodes, collector._out_extra_rels = array("i"), array("i")
    collector._in_extra_nodes, collector._in_extra_rels = array("i"), array("i")
    collector._literals.clear()
    collector._blank_set.clear()


def _prefix(path: Path, size: int) -> bytes:
    with open(path, "rb") as handle:
        data = handle.read(size)
    if len(data) != size:
        raise ValueError(f"{path.name} is shorter than the spool's state: the spool is damaged")
    return data


def _sync(handle: Any, sync: bool) -> None:
    handle.flush()
    if sync:
        os.fsync(handle.fileno())
