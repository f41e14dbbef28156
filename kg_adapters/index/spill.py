"""The traversal index of a load too large for its memory budget (``kga load --memory``), written
from sorted runs on disk, as QLever's index builder and Virtuoso's bulk loader do.

The budget (the index's part of a load's ``--memory``, :func:`kg_adapters.budgets.load_memory`: 4 GiB by
default; all of ``kga index --memory``) is split among what the collector
(:class:`~kg_adapters.index.build.TripleCollector`) holds:

- while the load parses, the dict that numbers entity IRIs may take half of what the worker's own
  (:data:`~kg_adapters.budgets.WORKER_RESERVE`) leaves, its growth included
  (:func:`~kg_adapters.budgets.index_memory`): past it the dict is
  written as a run of (IRI, number) sorted by IRI (``spool/runs/``) and a new dict numbers on from the
  last number (an IRI met again gets a second number); the buffered triples (three int32 per edge,
  the literal rows) may take an eighth: past it they are appended to the spool's files
  (:class:`~kg_adapters.index.spool.CollectorSpool`, the same files a checkpoint syncs, so a resumed
  load finds its runs and files as the checkpoint left them). Relations are few (thousands) and
  stay in memory: their dict's size comes out of the entity dict's share.
- when the index is written, the collection is written in memory as before (the fast path, the same
  code as a load that never spilled) when its estimate fits what the reserve leaves; otherwise
  :class:`SpilledCollection` writes it from the files, one step at a time, each holding a bounded share
  of what the reserve leaves: a block of edges being sorted (a half), a merge's reads and what follows
  them (a quarter), a block of Python items (ids, literal and name rows: a quarter) and a window of a
  number map (an eighth, :class:`NumberMap`).
  After each step and external sort the freed heap goes back to the system (:func:`release_freed_memory`):

  1. the IRI runs are merged (a k-way merge, :func:`merge_runs`): each distinct IRI gets a number in
     IRI order, and every first number of an IRI maps to it (``local_to_unique``, a number map); the
     distinct IRIs are kept in that order (``iris.run``);
  2. the profile's ids of the distinct IRIs are sorted (runs, then a merge: :func:`sorted_items`): the
     index numbers entities in the order of their ids, as the in-memory write does (``ordering.ranks``), so a
     first number maps to its entity's rank (``local_rank``), and the ids are written in order (when every
     IRI is of the profile's namespace with a local id, the ids are already in the IRIs' order and are not
     sorted: :mod:`kg_adapters.index.spilled_ids`);
  3. each direction of the CSR is sorted externally: blocks of edges are renumbered, packed into one
     int64 (key * entities + other, or a (key, other) record when that does not fit 63 bits), sorted
     and written as runs, then merged block-wise (:func:`sorted_arrays`, duplicates dropped), and
     written out; the incoming direction is packed from the outgoing one as it goes by;
  4. the nodes with literal or blank-node edges, the literal table and the name index's rows go the
     same way (literal rows sorted as the in-memory table orders them: key, text, datatype, language).

A load records each of these steps as it finishes (``SpilledCollection.STEPS``, with what the later ones
read of it: :mod:`kg_adapters.index.steps`), its scratch files synced first: killed, it goes on after
the last one recorded, from the files in ``spool/write``.

The files are byte for byte those of the in-memory write (``tests/test_index_spill.py`` compares
them). Both end in one function, :func:`kg_adapters.index.emit.emit_index`, that writes the arrays.

Runs and spooled arrays are read a block at a time (a memory map would keep every page it read
resident), and arrays are written in order to files, never through a map. The three maps of one
number per IRI number (``local_to_unique``, ``rank_of_unique``, ``local_rank``), read at random, are
:class:`~kg_adapters.index.number_map.NumberMap` files read a window at a time when they outgrow their
share (memory maps read at random kept every page resident: at 100M triples most of the index worker's
growth). What stays in memory whatever the input: the relation dict and its ranks, the distinct
blank-node triples (counted, not indexed: few in the graphs indexed), the name index's rows that name
a relation. The numbers
of the runs (an IRI counted again in each run it appears in) are int64 on disk, so they may pass 2**31
(see :mod:`kg_adapters.index.spool`); the distinct entities are counted as the runs are merged, and more
than the index's int32 holds (:data:`~kg_adapters.index.layout.MAX_ENTITIES`) is refused
(:class:`~kg_adapters.errors.IndexTooLarge`) before any index file is written.
"""

from __future__ import annotations

import functools
import gc
import heapq
import itertools
import os
import pickle
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from kg_adapters.errors import BackendError, IndexTooLarge
from kg_adapters.index.layout import STARTS
from kg_adapters.index.number_map import NumberMap, NumberMapWriter, read_block
from kg_adapters.index.steps import run_step

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from kg_adapters.index.build import TripleCollector
    from kg_adapters.index.emit import IndexStats
    from kg_adapters.index.spool import CollectorSpool
    from kg_adapters.index.steps import BuildSteps
    from kg_adapters.profiles import Profile

    Ints = npt.NDArray[np.int64]

T = TypeVar("T")
_CHUNK = 2048
"""Items per pickled chunk of a run (what a merge holds per run, read ahead)."""
_ITEM_BYTES = 200
"""Memory one Python item of a sort takes beyond its text (the tuple and its objects)."""
_EDGE_WORK_BYTES = 120
"""Memory one edge of a CSR block takes while it is renumbered, packed and sorted into a run (the row
read, the ranks looked up, the keys, the sort's copy)."""
_MERGE_WORK_BYTES = 112
"""Memory one value of a CSR merge's chunk takes through what follows it: the reads, their
concatenation, sort and distinct copy, then unpacked, packed for the other direction and sorted there
(the generators between them hold their arrays while the next one works)."""
_EXTRA_WORK_BYTES = 80
"""Memory one (node, relation) row of a literal/blank-node block takes (the ranks, key, sort's copy)."""
_LITERAL_SLICE = 65536
"""Literal rows of a spooled block made Python items at once (a block is one flush's rows, numpy columns)."""


def write_run(path: Path, items: Iterable[Any], *, sync: bool = True) -> None:
    """Writes sorted ``items`` as a run: pickled chunks of :data:`_CHUNK` (synced when ``sync``)."""
    with open(path, "wb") as handle:
        iterator = iter(items)
        while chunk := list(itertools.islice(iterator, _CHUNK)):
            pickle.dump(chunk, handle, protocol=pickle.HIGHEST_PROTOCOL)
        handle.flush()
        if sync:
            os.fsync(handle.fileno())


def read_run(path: Path) -> Iterator[Any]:
    """The items of a run (:func:`write_run`)."""
    with open(path, "rb") as handle:
        while True:
            try:
                chunk = pickle.load(handle)
            except EOFError:
                return
            yield from chunk


def merge_runs(paths: list[Path], scratch: Path, fan_in: int) -> Iterator[Any]:
    """The items of sorted runs, merged in order (duplicates kept); more runs than ``fan_in`` are
    first merged in groups into runs in ``scratch``, so a merge holds at most ``fan_in`` read buffers."""
    paths = list(paths)
    level = 0
    while len(paths) > fan_in:
        merged = []
        for number, start in enumerate(range(0, len(paths), fan_in)):
            group = paths[start : start + fan_in]
            target = scratch / f"merge-{level}-{number}.run"
            write_run(target, heapq.merge(*map(read_run, group)), sync=False)
            merged.append(target)
        paths, level = merged, level + 1
    yield from heapq.merge(*map(read_run, paths))


def sorted_items(items: Iterable[T], block: int, scratch: Path, stem: str, fan_in: int) -> Iterator[T]:
    """``items`` sorted (duplicates kept), holding at most ``block`` of them at once: sorted blocks
    become runs in ``scratch``, then are merged. One block sorts in memory and writes nothing. The freed
    heap goes back to the system once the runs are written (each block reuses the last one's: trimming
    after every block cost a full ``gc.collect`` per block, on the hot path of small budgets)."""
    runs: list[Path] = []
    iterator = iter(items)
    full = True
    while full:
        buffer = list(itertools.islice(iterator, block))
        buffer.sort()
        full = len(buffer) == block
        if not full and not runs:
            yield from buffer
            return
        if buffer:
            runs.append(scratch / f"{stem}-{len(runs)}.run")
            write_run(runs[-1], buffer, sync=False)
        del buffer  # before the next block is read: never two at once
    release_freed_memory()
    yield from merge_runs(runs, scratch, fan_in)


def release_freed_memory() -> None:
    """Hands the memory freed since to the system (glibc's ``malloc_trim``; nothing elsewhere). The many
    small objects of a sort block or of an IRI dict leave the C heap full of free holes that glibc keeps:
    without this, a process's resident size stays at its highest block's however little it then holds."""
    trim = _malloc_trim()
    if trim is not None:
        gc.collect()
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return None
    try:
        return cast("Callable[[int], int]", ctypes.CDLL(None).malloc_trim)
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None


def sorted_arrays(blocks: Iterable[Any], scratch: Path, stem: str, merge_items: int) -> Iterator[Any]:
    """The values of numpy ``blocks`` (int64, or records that sort field by field) sorted, without
    repeats, in chunks: each block is sorted and saved as a run, then the runs are merged block-wise,
    reading at most ``merge_items`` values of all runs at once. An int64 block is sorted in place."""
    import numpy as np

    from kg_adapters.index.ordering import sorted_keys

    runs: list[Path] = []
    sizes: list[int] = []
    dtype = None
    for block in blocks:
        if len(block):
            runs.append(scratch / f"{stem}-{len(runs)}.bin")
            run = distinct(sorted_keys(block))  # (sorted in place: the blocks are made for this)
            run.tofile(runs[-1])
            sizes.append(len(run))
            dtype = run.dtype
    step = max(merge_items // max(len(runs), 1), 4096)
    positions = [0] * len(runs)
    last = None
    while True:
        heads = [
            (n, read_block(path, dtype, positions[n], step)) for n, path in enumerate(runs) if positions[n] < sizes[n]
        ]
        if not heads:
            return
        bound = np.sort(np.concatenate([block[-1:] for _n, block in heads]))[0]
        taken = []
        for n, block in heads:  # every value up to the smallest last value read: none is missing
            count = int(np.searchsorted(block, bound, side="right"))
            taken.append(np.asarray(block[:count]))
            positions[n] += count
        chunk = distinct(np.sort(np.concatenate(taken), kind="stable"))  # (timsort merges the sorted pieces)
        if last is not None and chunk[0] == last:
            chunk = chunk[1:]
        if len(chunk):
            last = chunk[-1]
            yield chunk


def distinct(ordered: Any) -> Any:
    """A sorted array without its repeats."""
    import numpy as np

    if ordered.size < 2:
        return ordered
    first = np.empty(ordered.size, dtype=bool)
    first[0] = True
    first[1:] = ordered[1:] != ordered[:-1]
    return ordered if first.all() else ordered[first]


class _ArrayFile:
    """A raw file an array is appended to chunk by chunk (never written through a memory map: the pages
    written would stay resident), then handed on memory-mapped (:func:`_mapped`), read a block at a time."""

    def __init__(self, path: Path, dtype: Any) -> None:
        self.path, self.dtype, self.size = path, dtype, 0
        self._handle = open(path, "wb")  # noqa: SIM115 (closed by array())

    def add(self, values: Any) -> None:
        import numpy as np

        np.asarray(values, dtype=self.dtype).tofile(self._handle)
        self.size += len(values)

    def close(self) -> None:
        self._handle.close()

    def array(self) -> Any:
        self.close()
        return _mapped(self.path, self.dtype)


def _mapped(path: Path, dtype: Any) -> Any:
    """The raw array file at ``path`` memory-mapped (read by the index's writer a block at a time, from
    the file: :func:`kg_adapters.index.emit._block`), or an empty array."""
    import numpy as np

    if not path.stat().st_size:
        return np.zeros(0, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r")


class SpilledCollection:
    """The index and the name index's rows of a collector whose collection is on disk (see the
    module docstring); scratch files go to ``spool/write`` (emptied first, unless ``steps`` recorded
    some of the steps below: a resumed load's, :mod:`kg_adapters.index.steps`, which goes on from them)."""

    STEPS = ("iris", "ids", "edges", "out-extra", "in-extra", "literals", "starts")
    """The steps of writing the index from the files (those after the first read what it wrote)."""

    def __init__(self, spool: CollectorSpool, collector: TripleCollector, steps: BuildSteps | None = None) -> None:
        self.spool, self.collector, self.steps = spool, collector, steps
        self.scratch = spool.directory / "write"
        if steps is None or not set(steps.finished()) & set(self.STEPS):
            shutil.rmtree(self.scratch, ignore_errors=True)
        self.scratch.mkdir(exist_ok=True)
        memory = spool.shares.write  # what the reserve leaves: kg_adapters.budgets.index_memory
        self.block_bytes = memory // 2
        self.merge_bytes = memory // 4
        self.sort_items = max(memory // 4 // (_ITEM_BYTES + 64), 1024)
        """Python items (IDs, literal and name rows) sorted at once: a quarter of the budget, since what
        feeds a sort (rows read, a map's window) and the heap the process already holds come beside it."""
        self.map_bytes = memory // 8
        """What one map of a number per IRI (:class:`NumberMap`) may hold at once."""
        self.windows_written = 0
        """Windows of such maps this process wrote from spooled pairs (0: every map fitted its share in
        memory; a resumed load's skipped steps are not counted)."""
        self.fan_in = max(self.merge_bytes // (_CHUNK * _ITEM_BYTES), 4)
        self._unique: int | None = None

    # -- numbering ---------------------------------------------------------------------------------
    def _numbered(self) -> Path:
        """Merges the IRI runs once: the distinct IRIs, in IRI order, to ``iris.run``, and the map of every
        first number to its IRI's place in that order (``local_to_unique.map``, a :class:`NumberMap`)."""

        path = self.scratch / "local_to_unique.map"
        if self._unique is None:
            self._unique = run_step(self.steps, "iris", self._merge_iris, [path, self.scratch / "iris.run"])
        return path

    def _merge_iris(self) -> int:
        """Merges the IRI runs (see :meth:`_numbered`); returns the distinct IRIs."""
        import numpy as np

        from kg_adapters.index.spool import RUNS, run_number

        path = self.scratch / "local_to_unique.map"
        runs = sorted(p for p in (self.spool.directory / RUNS).iterdir() if run_number(p) is not None)
        local_to_unique = NumberMapWriter(path, self.collector._entity_base, self.map_bytes)
        unique, previous = -1, None
        locals_, uniques = [], []

        most = self.spool.limits.entities

        def distinct_iris() -> Iterator[bytes]:
            nonlocal unique, previous
            for iri, local in merge_runs(runs, self.scratch, self.fan_in):
                if iri != previous:
                    unique += 1
                    if unique >= most:
                        raise IndexTooLarge(
                            f"more than {most:,} distinct entities: the traversal index numbers them in int32 "
                            "(load with --no-index)"
                        )
                    previous = iri
                    yield iri
                locals_.append(local)
                uniques.append(unique)
                if len(locals_) >= 65536:
                    local_to_unique.put(np.array(locals_, dtype=np.int64), uniques)
                    locals_.clear()
                    uniques.clear()

        write_run(self.scratch / "iris.run", distinct_iris(), sync=False)
        if locals_:
            local_to_unique.put(np.array(locals_, dtype=np.int64), uniques)
        local_to_unique.close()
        self.windows_written += local_to_unique.windows_written
        return unique + 1

    def _ranked(self, profile: Profile) -> tuple[NumberMap, int, tuple[bool, str | None] | None]:
        """(rank of every first number, entities, whether every id spells back into its IRI and the
        first that does not): the distinct IRIs' ids sorted (as ``ordering.ranks`` does), written in order to
        ``entities.bin`` with their offsets (``entity_offsets.raw``)."""

        names = ("entities.bin", "entity_offsets.raw", "rank_of_unique.map", "local_rank.map")
        outputs = [self.scratch / name for name in names]
        found = run_step(self.steps, "ids", lambda: self._rank(profile), outputs)
        entities, spelled_back = (found, None) if isinstance(found, int) else (found[0], (found[1], found[2]))
        return NumberMap(self.scratch / "local_rank.map", self.map_bytes), entities, spelled_back

    def _rank(self, profile: Profile) -> tuple[int, bool, str | None]:
        """Writes the files of :meth:`_ranked`; returns (entities, whether every id spells back, the
        first that does not)."""
        import numpy as np

        from kg_adapters.index.replay import EntitySpelling
        from kg_adapters.index.spilled_ids import namespaced_ids

        numbered = self._numbered()
        entities = self._unique or 0
        rank_of_unique = NumberMapWriter(self.scratch / "rank_of_unique.map", entities, self.map_bytes)
        offsets = _ArrayFile(self.scratch / "entity_offsets.raw", np.int64)
        offsets.add([0])
        found = namespaced_ids(
            read_run(self.scratch / "iris.run"), profile, self.scratch / "entities.bin", offsets, rank_of_unique
        )
        if found is not None:  # the ids in the IRIs' order: no sort
            offsets.close()
            return self._ranks_written(numbered, entities, rank_of_unique, found)
        offsets.close()
        rank_of_unique.abandon()
        spelling = EntitySpelling(profile)
        ids = (
            (spelling.id_of(iri.decode("utf-8")), unique)
            for unique, iri in enumerate(read_run(self.scratch / "iris.run"))
        )
        rank_of_unique = NumberMapWriter(self.scratch / "rank_of_unique.map", entities, self.map_bytes)
        offsets = _ArrayFile(self.scratch / "entity_offsets.raw", np.int64)
        offsets.add([0])
        block = self.sort_items
        previous, done, offset = None, 0, 0
        uniques: list[int] = []
        lengths: list[int] = []

        def out() -> None:
            nonlocal done, offset
            count = len(uniques)
            rank_of_unique.put(np.array(uniques, dtype=np.int64), np.arange(done, done + count, dtype=np.int64))
            ends = offset + np.cumsum(np.array(lengths, dtype=np.int64))
            offsets.add(ends)
            uniques.clear()
            lengths.clear()
            done, offset = done + count, int(ends[-1]) if count else offset

        with open(self.scratch / "entities.bin", "wb") as names:
            for name, unique in sorted_items(ids, block, self.scratch, "ids", self.fan_in):
                if name == previous:
                    raise BackendError(f"two entity IRIs share the id {name!r}; cannot index this store")
                previous = name
                encoded = name.encode("utf-8")
                names.write(encoded)
                uniques.append(unique)
                lengths.append(len(encoded))
                if len(uniques) >= 65536:
                    out()
            out()
        offsets.close()
        return self._ranks_written(numbered, entities, rank_of_unique, (spelling.holds, spelling.first_failure))

    def _ranks_written(
        self, numbered: Path, entities: int, rank_of_unique: NumberMapWriter, spelled: tuple[bool, str | None]
    ) -> tuple[int, bool, str | None]:
        """Closes the map of ranks and writes ``local_rank.map`` from it; returns :meth:`_rank`'s answer."""
        import numpy as np

        rank_of_unique.close()
        self.windows_written += rank_of_unique.windows_written
        ranks = NumberMap(self.scratch / "rank_of_unique.map", self.map_bytes)
        with open(self.scratch / "local_rank.map", "wb") as local_rank:
            for _start, uniques_of in NumberMap(numbered, self.map_bytes).blocks(max(self.map_bytes // 16, 4096)):
                ranks[uniques_of].astype(np.int32).tofile(local_rank)
        del ranks
        return entities, spelled[0], spelled[1]

    # -- the name index's rows ---------------------------------------------------------------------
    def label_rows(self, relations: set[int]) -> Iterator[tuple[str, str, str]]:
        """(IRI, text, language or ``""``) of the literal rows of ``relations``, distinct and sorted:
        what ``TripleCollector.label_rows`` gives, sorted on disk and read as they come. The IRIs are
        merged now (not when the rows are first read: the index may be written meanwhile)."""
        return self._label_rows(relations, self._numbered())

    def _label_rows(self, relations: set[int], numbered: Path) -> Iterator[tuple[str, str, str]]:
        import numpy as np

        from kg_adapters.index.literal_names import spilled_label_rows
        from kg_adapters.index.literal_spool import file_blocks
        from kg_adapters.index.literals import gather

        local_to_unique = NumberMap(numbered, self.map_bytes)
        literal_file = self.spool.directory / "literals.bin"
        in_memory = spilled_label_rows(
            file_blocks(literal_file),
            relations,
            local_to_unique.__getitem__,
            self.spool.directory / "entities.log",
            self.block_bytes // 2,
        )
        if in_memory is not None:  # the rows fit a sort's share: sorted by numpy, their IRIs read from the log
            yield from in_memory
            return

        def keyed() -> Iterator[tuple[int, bytes, bytes]]:
            wanted_relations = np.array(sorted(relations), dtype=np.int32)
            for block in file_blocks(literal_file):
                which = np.flatnonzero(np.isin(block.relations, wanted_relations))
                if not which.size:
                    continue
                languages = [tag[1:] if tag[:1] == b"@" else b"" for tag in block.tag_table]
                for start in range(0, which.size, _LITERAL_SLICE):  # Python numbers for a slice at a time
                    rows = which[start : start + _LITERAL_SLICE]
                    lengths = block.lengths[rows]
                    values = gather(block.values, block.starts()[rows], lengths)
                    ends = np.cumsum(lengths).tolist()
                    uniques = local_to_unique[block.entities[rows]]
                    for unique, tag, begin, end in zip(
                        uniques.tolist(), block.tags[rows].tolist(), [0, *ends[:-1]], ends, strict=True
                    ):
                        yield unique, values[begin:end], languages[tag]

        block = self.sort_items
        iris = enumerate(read_run(self.scratch / "iris.run"))
        at, iri = -1, b""
        previous = None
        stem = f"labels-{min(relations)}"  # the name index's rows and the aliases' may be read at once
        for row in sorted_items(keyed(), block, self.scratch, stem, self.fan_in):
            if row == previous:
                continue
            previous = row
            while at < row[0]:
                at, iri = next(iris)
            yield iri.decode(), row[1].decode(), row[2].decode()
        release_freed_memory()  # the rows' sort

    # -- the index ---------------------------------------------------------------------------------
    def write_index(
        self,
        directory: Path,
        tmp: Path,
        profile: Profile,
        progress: Callable[[int], None] | None,
        steps: BuildSteps | None = None,
    ) -> IndexStats:
        """Writes the index files into ``tmp`` and swaps them in (see the module docstring), each step
        recorded in ``steps`` (the same as this collection's, if any) as it finishes."""
        import numpy as np

        from kg_adapters.index import build
        from kg_adapters.index.ordering import ranks

        collector = self.collector
        collector.check()
        release_freed_memory()  # what the name index's rows left
        relation_iris = collector._relation.strings()
        relation_names = [profile.relation_id(iri) for iri in relation_iris]
        relation_rank, relation_order = ranks(relation_names, "relation")
        width = max(len(relation_names), 1)
        local_rank, entities, spelled_back = self._ranked(profile)
        release_freed_memory()  # after each step: what it freed is not held through the next
        arrays: dict[str, Any] = {"entity_offsets": _mapped(self.scratch / "entity_offsets.raw", np.int64)}
        names = {"out_key": np.int64, "out_other": np.int32, "in_key": np.int64, "in_other": np.int32}
        run_step(
            self.steps,
            "edges",
            functools.partial(self._csr, local_rank, relation_rank, width, max(entities, 1)),
            [self.scratch / f"{name}.raw" for name in names],
        )
        for name, dtype in names.items():
            arrays[name] = _mapped(self.scratch / f"{name}.raw", dtype)
        release_freed_memory()
        literal_relations: set[int] = set()
        for side in ("out", "in"):
            _count, found = run_step(
                self.steps,
                f"{side}-extra",
                functools.partial(self._extra, side, local_rank, relation_rank, width),
                [self.scratch / f"{side}_extra.raw"],
            )
            arrays[f"{side}_extra"] = _mapped(self.scratch / f"{side}_extra.raw", np.int64)
            literal_relations.update(found)
        literal_files = ["literal_key.raw", "literal_tag.raw", "literals.bin", "literal_offsets.raw"]
        literal_edges, tags = run_step(
            self.steps,
            "literals",
            functools.partial(self._literals, local_rank, relation_rank, width),
            [self.scratch / name for name in literal_files],
        )
        del local_rank
        release_freed_memory()
        arrays["literal_key"] = _mapped(self.scratch / "literal_key.raw", np.int64)
        arrays["literal_tag"] = _mapped(self.scratch / "literal_tag.raw", np.int32)
        arrays["literal_offsets"] = _mapped(self.scratch / "literal_offsets.raw", np.int64)

        def write_starts() -> bool:
            for keys_name, start_name in STARTS.items():
                self._starts(arrays[keys_name], entities, width, start_name)
            return True

        run_step(self.steps, "starts", write_starts, [self.scratch / f"{name}.raw" for name in STARTS.values()])
        for keys_name, start_name in STARTS.items():
            dtype = np.int32 if arrays[keys_name].size < 1 << 31 else np.int64
            arrays[start_name] = _mapped(self.scratch / f"{start_name}.raw", dtype)
        blank_edges = len(self.spool.blank_quads()) + collector.blank_edges()
        meta = build.index_meta(
            profile,
            entities=entities,
            relations=len(relation_names),
            edges=int(arrays["out_key"].size),
            literal_edges=literal_edges,
            literal_relations=sorted(literal_relations),
            literal_tags=tags,
            blank_edges=blank_edges,
            spelled_back=spelled_back,
        )
        from kg_adapters.index.emit import emit_index

        return emit_index(
            directory,
            tmp,
            arrays,
            {
                "entities.bin": _file_chunks(self.scratch / "entities.bin"),
                "literals.bin": _file_chunks(self.scratch / "literals.bin"),
            },
            [relation_names[i] for i in relation_order.tolist()],
            meta,
            collector.rows,
            progress,
            steps,
        )

    def _starts(self, keys: Any, entities: int, width: int, name: str) -> Any:
        """``ordering.starts`` of sorted ``keys`` kept in a raw file (a memory map of it, never read through
        the map), written to ``name.raw`` as it goes: each block of keys settles the entities whose first
        key is at most its last."""
        import numpy as np

        size, step = int(keys.size), max(self.block_bytes // 16, 4096)
        out = _ArrayFile(self.scratch / f"{name}.raw", np.int32 if size < 1 << 31 else np.int64)
        settled = 0  # entities whose start is written
        for start in range(0, size, step):
            block = read_block(Path(str(keys.filename)), np.int64, start, step)
            end = min(int(block[-1]) // width + 1, entities + 1)
            for first in range(settled, end, 1 << 20):
                bounds = np.arange(first, min(first + (1 << 20), end), dtype=np.int64) * width
                out.add(start + np.searchsorted(block, bounds))
            settled = max(settled, end)
        for first in range(settled, entities + 1, 1 << 20):
            out.add(np.full(min(1 << 20, entities + 1 - first), size))
        return out.array()

    def _csr(self, local_rank: Any, relation_rank: Ints, width: int, entities: int) -> dict[str, int]:
        """Writes (out_key, out_other, in_key, in_other), sorted externally as ``ordering.python_csr`` sorts them,
        to raw files in the scratch directory; returns their sizes."""
        import numpy as np

        fits = entities * width * entities < 1 << 63
        pair = np.dtype([("key", "<i8"), ("other", "<i8")])

        def pack(keys: Ints, others: Ints) -> Any:
            if fits:
                return keys * entities + others
            packed = np.empty(len(keys), dtype=pair)
            packed["key"], packed["other"] = keys, others
            return packed

        def unpack(chunk: Any) -> tuple[Ints, Ints]:
            if fits:
                keys, others = np.divmod(chunk, entities)
                return keys, others
            return np.asarray(chunk["key"]), np.asarray(chunk["other"])

        from kg_adapters.index.spool import EDGE_ROW_BYTES, EDGES, edge_dtype

        path, row = self.spool.directory / EDGES, edge_dtype()
        count = path.stat().st_size // EDGE_ROW_BYTES
        rows = max(self.block_bytes // _EDGE_WORK_BYTES, 4096)
        merge_items = max(self.merge_bytes // _MERGE_WORK_BYTES, 4096)

        def out_blocks() -> Iterator[Any]:
            for start in range(0, count, rows):
                block = read_block(path, row, start, rows)
                ranks = local_rank[np.concatenate((block["head"], block["tail"]))]  # one pass over the map
                heads, tails = ranks[: len(block)], ranks[len(block) :]
                yield pack(heads * width + relation_rank[block["relation"]], tails)

        out_key, out_other = (
            _ArrayFile(self.scratch / "out_key.raw", np.int64),
            _ArrayFile(self.scratch / "out_other.raw", np.int32),
        )

        def in_blocks() -> Iterator[Any]:
            pending: list[Any] = []
            held = 0
            for chunk in sorted_arrays(out_blocks(), self.scratch, "out", merge_items):
                keys, others = unpack(chunk)
                out_key.add(keys)
                out_other.add(others)
                heads, rels = np.divmod(keys, width)
                pending.append(pack(others * width + rels, heads))
                held += len(chunk)
                if held >= rows:
                    yield np.concatenate(pending)
                    pending, held = [], 0
            if pending:
                yield np.concatenate(pending)

        in_key, in_other = (
            _ArrayFile(self.scratch / "in_key.raw", np.int64),
            _ArrayFile(self.scratch / "in_other.raw", np.int32),
        )
        for chunk in sorted_arrays(in_blocks(), self.scratch, "in", merge_items):
            keys, others = unpack(chunk)
            in_key.add(keys)
            in_other.add(others)
        files = {"out_key": out_key, "out_other": out_other, "in_key": in_key, "in_other": in_other}
        for file in files.values():
            file.array()  # closed
        return {name: file.size for name, file in files.items()}

    def _extra(self, side: str, local_rank: Any, relation_rank: Ints, width: int) -> tuple[int, list[int]]:
        """Writes the distinct keys (node * width + relation) of the nodes with literal or blank-node edges
        to ``{side}_extra.raw``; returns (their count, the relations of outgoing ones)."""
        import numpy as np

        from kg_adapters.index.spool import EXTRA_ROW_BYTES, IN_EXTRA, OUT_EXTRA, extra_dtype

        path = self.spool.directory / (OUT_EXTRA if side == "out" else IN_EXTRA)
        count = path.stat().st_size // EXTRA_ROW_BYTES
        rows = max(self.block_bytes // _EXTRA_WORK_BYTES, 4096)
        blocks = (
            local_rank[block["node"]] * width + relation_rank[block["relation"]]
            for block in (read_block(path, extra_dtype(), start, rows) for start in range(0, count, rows))
        )
        keys = _ArrayFile(self.scratch / f"{side}_extra.raw", np.int64)
        literal_relations: set[int] = set()
        merge_items = max(self.merge_bytes // _MERGE_WORK_BYTES, 4096)
        for chunk in sorted_arrays(blocks, self.scratch, f"{side}-extra", merge_items):
            keys.add(chunk)
            if side == "out":
                literal_relations.update(np.unique(chunk % width).tolist())
        keys.array()  # closed
        return keys.size, sorted(literal_relations)

    def _literals(self, local_rank: Any, relation_rank: Ints, width: int) -> tuple[int, list[str]]:
        """Writes the literal table (``literal_key``, ``literal_tag``, ``literal_offsets``, the value
        blob) in the in-memory table's order to the scratch directory; returns (literal edges, the tags
        by number)."""
        import numpy as np

        from kg_adapters.index.literal_spool import file_blocks
        from kg_adapters.index.literal_table import literal_tag_order, spilled_table

        literal_file = self.spool.directory / "literals.bin"
        table = spilled_table(file_blocks(literal_file), local_rank.__getitem__, relation_rank, width, self.block_bytes)
        if table is not None:  # the rows fit a sort's share: the in-memory table's sort (numpy), written out
            table_keys, table_tags, table_offsets, table_values, table_tag_names = table
            table_keys.astype(np.int64).tofile(self.scratch / "literal_key.raw")
            table_tags.astype(np.int32).tofile(self.scratch / "literal_tag.raw")
            table_offsets.astype(np.int64).tofile(self.scratch / "literal_offsets.raw")
            (self.scratch / "literals.bin").write_bytes(table_values)
            return len(table_keys), table_tag_names

        tag_of: dict[bytes, tuple[str, tuple[str, str]]] = {}  # row tag -> (tag, its place in answer order)

        def keyed() -> Iterator[tuple[int, bytes, tuple[str, str], bytes]]:
            for block in file_blocks(literal_file):
                for row_tag in block.tag_table:
                    if row_tag not in tag_of:
                        tag_of[row_tag] = literal_tag_order(row_tag)
                orders = [tag_of[row_tag][1] for row_tag in block.tag_table]
                values, table = block.values, block.tag_table
                all_ends = np.cumsum(block.lengths)
                for start in range(0, len(all_ends), _LITERAL_SLICE):  # Python numbers for a slice at a time
                    end_of_slice = start + _LITERAL_SLICE
                    keys = (
                        local_rank[block.entities[start:end_of_slice]] * width
                        + relation_rank[block.relations[start:end_of_slice]]
                    )
                    ends = all_ends[start:end_of_slice].tolist()
                    begins = (all_ends[start:end_of_slice] - block.lengths[start:end_of_slice]).tolist()
                    for key, tag, begin, end in zip(
                        keys.tolist(), block.tags[start:end_of_slice].tolist(), begins, ends, strict=True
                    ):
                        yield key, values[begin:end], orders[tag], table[tag]

        block = self.sort_items
        keys = _ArrayFile(self.scratch / "literal_key.raw", np.int64)
        numbers = _ArrayFile(self.scratch / "literal_tag.raw", np.int32)
        lengths = _ArrayFile(self.scratch / "literal_lengths.raw", np.int64)
        tags = [""]
        number_of: dict[str, int] = {"": 0}
        previous = None
        batch_keys: list[int] = []
        batch_numbers: list[int] = []
        batch_lengths: list[int] = []
        with open(self.scratch / "literals.bin", "wb") as values:
            for key, value, _order, row_tag in sorted_items(keyed(), block, self.scratch, "literals", self.fan_in):
                if (key, value, row_tag) == previous:
                    continue  # the same triple twice
                previous = (key, value, row_tag)
                tag = tag_of[row_tag][0]
                number = number_of.get(tag)
                if number is None:
                    number = number_of[tag] = len(tags)
                    tags.append(tag)
                values.write(value)
                batch_keys.append(key)
                batch_numbers.append(number)
                batch_lengths.append(len(value))
                if len(batch_keys) >= 65536:
                    for file, batch in ((keys, batch_keys), (numbers, batch_numbers), (lengths, batch_lengths)):
                        file.add(batch)
                        batch.clear()
            for file, batch in ((keys, batch_keys), (numbers, batch_numbers), (lengths, batch_lengths)):
                file.add(batch)
        keys.close()
        numbers.close()
        lengths.close()
        count, total = lengths.size, 0
        offsets = _ArrayFile(self.scratch / "literal_offsets.raw", np.int64)
        offsets.add([0])
        step = max(self.block_bytes // 16, 4096)
        for start in range(0, count, step):
            ends = total + np.cumsum(read_block(lengths.path, np.int64, start, step))
            offsets.add(ends)
            total = int(ends[-1])
        offsets.close()
        return count, tags


def _file_chunks(path: Path, size: int = 1 << 20) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        while chunk := handle.read(size):
            yield chunk
