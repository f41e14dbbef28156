"""Reading a traversal index: :class:`TraversalIndex` maps the files (see :mod:`kg_adapters.index`),
:class:`Side` reads a node's edges from one direction of the CSR arrays, and entity ids and literal
records are decoded through bounded caches (:class:`~kg_adapters.index.memo.BoundedMemo`).

A node's rows are found by two reads of a start array; one relation of a node by a ``bisect`` of
the relation column bounded to the node's rows (sorted by relation there). A process opens an
index in well under a millisecond and pages in only what its queries touch: the arrays are
memoryviews over their mappings (Python-int indexing at list speed, no numpy import), and numpy
arrays of them are made only for walks over large frontiers.
"""

from __future__ import annotations

import ast
import heapq
import itertools
import json
import mmap
import operator
import os
import struct
import sys
import typing
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from kg_adapters.index import tuning
from kg_adapters.index.layout import ARRAYS, COLUMNS, DTYPES, FORMAT_NAME, FORMAT_VERSION, META, arrays, index_dir
from kg_adapters.index.memo import BoundedMemo
from kg_adapters.index.records import make_literal
from kg_adapters.records import Literal

if TYPE_CHECKING:  # numpy is imported only by walks over large frontiers
    import numpy as np
    import numpy.typing as npt

    Ints = npt.NDArray[np.int64]

Mask = bytes
"""Per relation number, non-zero when a walk may follow it."""
Pairs = tuple[list[int], list[int]]
"""(relations, other ends) of some of a node's edges on one side, in answer order."""
Runs = list[tuple[int, int, int]]
"""(relation, first, last): where a node's rows of each relation lie (``[first, last)``), by relation."""

_first, _second = operator.itemgetter(0), operator.itemgetter(1)


class _Arrays(dict[str, "Ints"]):
    """The index's ``.npy`` files as numpy arrays, each mapped on first use (only walks over large
    frontiers import numpy). Holds the directory, not the index."""

    def __init__(self, directory: Path) -> None:
        super().__init__()
        self.directory = directory

    def __missing__(self, name: str) -> Ints:
        if name not in ARRAYS:
            raise KeyError(f"the traversal index has no array {name!r}")
        found = self[name] = _load(self.directory / f"{name}.npy")
        return found


class Side:
    """One direction of the CSR arrays: ``out`` holds every node's out-edges, ``in`` its in-edges.
    Node n's edges sit at positions ``starts[n]:starts[n + 1]``, each with its relation in ``rels``
    (ascending within the node's range) and its other end at the same position of ``others``
    (ascending within a relation). Every read of a node's range goes through this class;
    :meth:`edges` is the read the walks are built on."""

    __slots__ = ("_arrays", "name", "others", "out", "rels", "starts")

    def __init__(self, name: str, rels: memoryview, others: memoryview, starts: memoryview, arrays: _Arrays) -> None:
        self.name = name
        self.out = name == "out"
        self.rels, self.others, self.starts = rels, others, starts
        self._arrays = arrays

    # -- ranges ---------------------------------------------------------------------------------
    def span(self, node: int) -> tuple[int, int]:
        """Where ``node``'s edges on this side lie."""
        starts = self.starts
        return starts[node], starts[node + 1]

    def runs(self, lo: int, hi: int) -> Iterator[tuple[int, int, int]]:
        """(relation, start, stop) of each relation's run inside ``[lo, hi)``, part of one node's range."""
        rels = self.rels
        while lo < hi:
            relation = rels[lo]
            stop = bisect_right(rels, relation, lo + 1, hi)
            yield relation, lo, stop
            lo = stop

    def relation_at(self, position: int) -> int:
        """The relation of the edge at ``position``."""
        return self.rels[position]

    def relations(self, node: int) -> set[int]:
        """The relations of ``node``'s edges on this side; a long run of one relation is stepped over by
        search, not read."""
        starts, rels = self.starts, self.rels
        lo, hi = starts[node], starts[node + 1]
        if hi - lo <= tuning.SCAN:
            return set(rels[lo:hi].tolist())
        found: set[int] = set()
        while lo < hi:
            relation = rels[lo]
            found.add(relation)
            lo = bisect_right(rels, relation, lo + 1, hi)
        return found

    # -- edges ----------------------------------------------------------------------------------
    def edges(
        self, node: int, relation: int | None = None, mask: Mask | None = None, limit: int | None = None
    ) -> Pairs:
        """(relations, other ends) of ``node``'s edges on this side in answer order (``edge_sort_key``:
        out-edges by relation, then tail, as stored; in-edges by head, then relation): of one
        ``relation``, of the relations ``mask`` keeps, or of all. With ``limit``, only the first
        ``limit``: a hub's other edges are not read."""
        starts = self.starts
        lo, hi = starts[node], starts[node + 1]
        if lo == hi or limit == 0:
            return [], []
        if relation is not None:
            lo, hi = _run(self.rels, relation, lo, hi)
            if limit is not None and hi - lo > limit:
                hi = lo + limit
            ends = self.others[lo:hi].tolist()
            return [relation] * len(ends), ends
        if limit is not None and hi - lo > 4 * limit + tuning.SCAN:
            return self._first(lo, hi, mask, limit)
        relations = self.rels[lo:hi].tolist()
        ends = self.others[lo:hi].tolist()
        if mask is not None:
            kept = bytes(map(mask.__getitem__, relations))
            if not all(kept):
                relations, ends = list(itertools.compress(relations, kept)), list(itertools.compress(ends, kept))
        if not self.out and relations and relations[0] != relations[-1]:  # stored by relation, then head
            pairs = sorted(zip(ends, relations))  # noqa: B905 (equal lengths; the keyword slows each call of this hot loop)
            ends, relations = list(map(_first, pairs)), list(map(_second, pairs))
        if limit is not None and len(ends) > limit:
            del relations[limit:], ends[limit:]
        return relations, ends

    def _first(self, lo: int, hi: int, mask: Mask | None, limit: int) -> Pairs:
        """:meth:`edges` of a hub cut at ``limit``: out-edges are read relation by relation until
        enough, in-edges merged from the relations' runs (each sorted by head) until enough."""
        runs = [(r, start, stop) for r, start, stop in self.runs(lo, hi) if mask is None or mask[r]]
        others = self.others
        if self.out:
            relations: list[int] = []
            ends: list[int] = []
            for r, start, stop in runs:
                take = min(stop - start, limit - len(ends))
                ends.extend(others[start : start + take].tolist())
                relations.extend([r] * take)
                if len(ends) == limit:
                    break
            return relations, ends
        merged = heapq.merge(*[zip(others[start:stop], itertools.repeat(r)) for r, start, stop in runs])
        pairs = list(itertools.islice(merged, limit))
        return list(map(_second, pairs)), list(map(_first, pairs))

    def ends(self, nodes: list[int], relation: int) -> list[list[int]]:
        """Per node of ``nodes``, the other ends of its edges of one relation, ascending (answer
        order): :meth:`edges` for a whole frontier, the hop of a relation path. A frontier of more
        than ``SMALL_FRONTIER`` nodes is read by one vectorised gather."""
        if len(nodes) > tuning.SMALL_FRONTIER:
            import numpy as np

            owner, _, other = self.frontier(np.array(nodes, dtype=np.int64), relation=relation)
            found: list[list[int]] = [[] for _ in nodes]
            for position, end in zip(owner.tolist(), other.tolist(), strict=True):
                found[position].append(end)
            return found
        rels, others, starts = self.rels, self.others, self.starts
        lists: list[list[int]] = []
        append = lists.append
        for node in nodes:
            lo, hi = starts[node], starts[node + 1]
            if lo == hi:
                append([])
                continue
            if hi - lo == 1:  # one edge: the commonest case
                append([others[lo]] if rels[lo] == relation else [])
                continue
            lo = bisect_left(rels, relation, lo, hi)
            append(others[lo : bisect_right(rels, relation, lo, hi)].tolist())
        return lists

    def degrees(self, nodes: Ints) -> Ints:
        """How many edges each of ``nodes`` has on this side (numpy)."""
        import numpy as np

        starts = self._arrays[f"{self.name}_start"]
        return starts[nodes + 1].astype(np.int64) - starts[nodes]

    def frontier(
        self, nodes: Ints, *, relation: int | None = None, mask: Mask | None = None
    ) -> tuple[Ints, Ints, Ints]:
        """(owner position, relation, other end) of every edge of the frontier ``nodes`` on this side,
        of one ``relation`` or of the relations ``mask`` keeps, by owner in storage order: one
        vectorised gather (numpy) for a frontier too large to read node by node."""
        import numpy as np

        arrays, name = self._arrays, self.name
        rels, others, starts = arrays[f"{name}_rel"], arrays[f"{name}_other"], arrays[f"{name}_start"]
        lo, hi = starts[nodes].astype(np.int64), starts[nodes + 1].astype(np.int64)
        if relation is not None:
            lo, hi = _relation_bounds(rels, lo, hi, relation)
        idx, owner = _gather(lo, hi)
        other = np.asarray(others[idx], dtype=np.int64)
        if relation is not None:
            return owner, np.full(idx.size, relation, dtype=np.int64), other
        rel = np.asarray(rels[idx], dtype=np.int64)
        if mask is not None:
            keep = np.frombuffer(mask, dtype=np.bool_)[rel]
            owner, rel, other = owner[keep], rel[keep], other[keep]
        return owner, rel, other


def _run(rels: memoryview, relation: int, lo: int, hi: int) -> tuple[int, int]:
    """The positions holding ``relation`` in ``rels[lo:hi]`` (sorted: one node's rows)."""
    lo = bisect_left(rels, relation, lo, hi)
    if lo == hi or rels[lo] != relation:
        return lo, lo
    if lo + 1 == hi or rels[lo + 1] != relation:  # most runs hold one edge
        return lo, lo + 1
    return lo, bisect_right(rels, relation, lo + 2, hi)


def _relation_bounds(rels: Any, lo: Ints, hi: Ints, relation: int) -> tuple[Ints, Ints]:
    """Per range ``[lo[i], hi[i])`` of ``rels`` (each sorted: one node's rows), the positions
    holding ``relation``. Ranges that are short on the whole are filtered in one pass; long ones (a
    hub's) are searched, all together, one halving step at a time."""
    import numpy as np

    total = int((hi - lo).sum()) if lo.size else 0
    if total <= tuning.FILTER_ROWS * lo.size:
        idx, owner = _gather(lo, hi)
        hit = rels[idx] == relation
        owners, hits = owner[hit], idx[hit]
        counts = np.bincount(owners, minlength=lo.size)
        begin = lo.copy()
        if hits.size:
            found = np.flatnonzero(counts)
            begin[found] = hits[np.searchsorted(owners, found)]
        return begin, begin + counts
    target = np.int64(relation)
    return _lower_bounds(rels, lo, hi, target), _lower_bounds(rels, lo, hi, target + 1)


def _lower_bounds(rels: Any, lo: Ints, hi: Ints, target: np.int64) -> Ints:
    """Per range ``[lo[i], hi[i])`` of ``rels`` (each sorted), the first position whose value is not
    below ``target`` (``bisect_left``), all ranges searched together."""
    import numpy as np

    lo, hi = lo.copy(), hi.copy()
    active = np.flatnonzero(lo < hi)
    while active.size:
        middle = (lo[active] + hi[active]) >> 1
        below = rels[middle] < target
        lo[active[below]] = middle[below] + 1
        hi[active[~below]] = middle[~below]
        active = active[lo[active] < hi[active]]
    return lo


def _gather(lo: Ints, hi: Ints) -> tuple[Ints, Ints]:
    """The positions in ``[lo[i], hi[i])`` for every i, in order, and the i each came from."""
    import numpy as np

    counts = hi - lo
    total = int(counts.sum()) if counts.size else 0
    if total == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    owner = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    starts = lo - (np.cumsum(counts) - counts)
    return np.arange(total, dtype=np.int64) + starts[owner], owner


class TraversalIndex:
    """An opened traversal index (read-only, memory-mapped); the files are described in :mod:`kg_adapters.index`."""

    def __init__(self, directory: Path, meta: dict[str, Any]) -> None:
        self.directory = directory
        self.profile_name = str(meta["profile"])
        self.entity_count = int(meta["entities"])
        self.edge_count = int(meta["edges"])
        self.blank_edges = int(meta["blank_edges"])
        """Triples with a blank node (not in the index: Oxigraph answers them)."""
        self.literal_relations = frozenset(int(r) for r in meta["literal_relations"])
        """Relations with a literal (or blank-node) object somewhere: a quick test that a relation has no
        literal anywhere. Which literals an entity has is read from the literal table (:meth:`literal_runs`)."""
        self.relations: list[str] = json.loads((directory / "relations.json").read_text("utf-8"))
        self.relation_number = {name: number for number, name in enumerate(self.relations)}
        self.width = max(len(self.relations), 1)
        """How many relation numbers there are (at least 1): the length of a relation mask."""
        self._mappings: list[mmap.mmap] = []
        self._arrays = _Arrays(directory)
        self._offset_view = self._view("entity_offsets")
        views = self._views = {name: self._view(name) for name in arrays(self.blank_edges)[1:]}
        self._check_sizes(int(meta["literal_edges"]))
        self.out_side, self.in_side = (
            Side(name, views[f"{name}_rel"], views[f"{name}_other"], views[f"{name}_start"], self._arrays)
            for name in ("out", "in")
        )
        self.sides = {"out": self.out_side, "in": self.in_side}
        """The CSR by direction (:class:`Side`)."""
        self.literal_tags: list[str] = list(meta["literal_tags"])
        self.literal_fields = [_tag_fields(tag) for tag in self.literal_tags]
        """(datatype, lang) of each tag number: a tag is read once per index, not once per literal."""
        self._literal_values = self._map_blob(directory / "literals.bin")
        with open(directory / "entities.bin", "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            self._names: mmap.mmap | bytes = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        self._name_bytes: npt.NDArray[np.uint8] | None = None
        """``entities.bin`` as a numpy array, made by the first ``names_of`` that gathers with numpy."""
        self.namespaces = _Namespaces(meta["namespaces"], views["namespace_starts"], views["namespace_ids"])
        """The namespaces the ids in ``entities.bin`` are stored without."""
        self.name_from_file = _name_decoder(self._offset_view, self._names, self.namespaces)
        """The entity id numbered ``number``, decoded from ``entities.bin`` (no cache)."""
        self.name_cache: BoundedMemo[int, str] = BoundedMemo(
            self.name_from_file, cap=NAME_CACHE_CAP, budget=NAME_CACHE_BYTES, size=len, overhead=NAME_OVERHEAD
        )
        """Entity number -> id, kept across calls (``name_cache[number]`` decodes on a miss)."""
        self.literal_from_file = _literal_decoder(
            views["literal_offsets"], views["literal_tag"], self._literal_values, self.literal_fields
        )
        """The literal record at a position of the literal table, decoded from the files (no cache)."""
        self.literal_cache: BoundedMemo[int, Literal] = BoundedMemo(
            self.literal_from_file,
            cap=LITERAL_CACHE_CAP,
            budget=LITERAL_CACHE_BYTES,
            size=_text_length,
            overhead=LITERAL_OVERHEAD,
        )
        """Literal table position -> its record, kept across calls (records are immutable)."""

    def _check_sizes(self, literal_edges: int) -> None:
        """Raises ValueError when the arrays' sizes disagree with meta.json or each other (a damaged
        or foreign file), so that no read runs past an array or reads a wrong range."""
        views, entities = self._views, self.entity_count
        sizes = {
            "out_rel": self.edge_count,
            "out_other": self.edge_count,
            "in_rel": self.edge_count,
            "in_other": self.edge_count,
            "literal_rel": literal_edges,
            "literal_tag": literal_edges,
            "literal_offsets": literal_edges + 1,
        }
        if len(self._offset_view) != entities + 1 or any(len(views[name]) != size for name, size in sizes.items()):
            raise ValueError("array sizes disagree with meta.json")
        for column, start_name in COLUMNS.items():
            if column not in views:
                continue
            starts = views[start_name]
            if len(starts) != entities + 1 or starts[0] != 0 or starts[-1] != len(views[column]):
                raise ValueError(f"{start_name} does not cover {column}")

    @property
    def literal_count(self) -> int:
        """How many literal objects the literal table holds."""
        return len(self._views["literal_rel"])

    def array(self, name: str) -> Ints:
        """The array ``name`` (one of the ``.npy`` files) as a numpy array, mapped on first use."""
        return self._arrays[name]

    # -- entity ids -------------------------------------------------------------------------------
    def name(self, number: int) -> str:
        """The entity id numbered ``number``."""
        return self.name_cache[number]

    def decode_names(self, numbers: Sequence[int]) -> None:
        """Puts the ids of ``numbers`` that the name cache lacks into it, decoded together and kept
        under one lock (what a call's answer names is decoded in one batch, not id by id): by one
        numpy gather for a long list in a process that has numpy loaded already (the ids lie scattered
        over the mapped file, and a vectorised gather waits for those reads together where a loop
        waits for each in turn), else in one loop. A list whose first and last ids are cached is taken
        as cached (a warm call checks no more); what it still misses, and a batch larger than the
        cache (not kept), is decoded id by id when read (``name_cache[number]``)."""
        cache = self.name_cache
        if numbers and (numbers[0] not in cache or numbers[-1] not in cache):
            self.decode_missing(numbers)

    def decode_lists(self, lists: Iterable[list[int]]) -> None:
        """:meth:`decode_names` of several lists (a hop's ends, node by node) in one batch: the lists
        whose first or last id the cache lacks."""
        cache = self.name_cache
        missing: list[int] = []
        for numbers in lists:
            if numbers and (numbers[0] not in cache or numbers[-1] not in cache):
                missing += numbers
        if missing:
            self.decode_missing(missing)

    def decode_missing(self, numbers: Iterable[int]) -> None:
        """:meth:`decode_names` without its first-and-last test: every id of ``numbers`` the name cache
        lacks is decoded, in one batch (for callers that gathered a batch of possible misses)."""
        cache = self.name_cache
        missing = list(set(numbers).difference(cache))
        if not missing:
            return
        names = None
        if len(missing) >= tuning.NAMES_BY_NUMPY and "numpy" in sys.modules:
            names = self._gathered_names(missing)
        if names is None:
            prefix = self.namespaces.only
            if prefix is None:
                names = list(map(self.name_from_file, missing))
            else:
                offsets, blob = self._offset_view, self._names  # (name_from_file, inlined: one loop)
                names = [prefix + blob[offsets[number] : offsets[number + 1]].decode() for number in missing]
        cache.remember(missing, names)

    def names_of(self, numbers: list[int]) -> list[str]:
        """The entity ids numbered ``numbers``, in order, through the name cache (its misses decoded
        together: :meth:`decode_names`)."""
        self.decode_names(numbers)
        return list(map(self.name_cache.__getitem__, numbers))

    def names(self, numbers: Iterable[int]) -> dict[int, str]:
        """Entity number -> id for the distinct ``numbers`` (through the name cache)."""
        distinct = list(dict.fromkeys(numbers))
        return dict(zip(distinct, self.names_of(distinct), strict=True))

    def _gathered_names(self, numbers: list[int]) -> list[str] | None:
        """``names_of`` by one numpy gather of the ids' bytes, separated by line feeds (which no
        IRI holds: should an id hold one, the count shows it and None sends the caller the slow way)."""
        import numpy as np

        blob = self._name_bytes
        if blob is None:
            if not len(self._names):
                return None
            blob = self._name_bytes = np.frombuffer(self._names, dtype=np.uint8)
        offsets = self.array("entity_offsets")
        wanted = np.array(numbers, dtype=np.int64)
        starts = offsets[wanted].astype(np.int64)
        lengths = offsets[wanted + 1].astype(np.int64) - starts
        ends = np.cumsum(lengths + 1)  # where each id's separator goes, plus one
        source = np.arange(int(ends[-1]), dtype=np.int64) + np.repeat(starts - (ends - lengths - 1), lengths + 1)
        np.minimum(source, blob.size - 1, out=source)  # a separator's slot may point past the blob
        gathered = blob[source]
        gathered[ends - 1] = 10
        found: list[str] = gathered.tobytes().decode("utf-8").split("\n")
        if len(found) != len(numbers) + 1:
            return None
        found.pop()
        prefix = self.namespaces.only
        if prefix is None:
            runs = np.searchsorted(self.array("namespace_starts"), wanted, "right") - 1
            names = self.namespaces.names
            return [names[number] + local for number, local in zip(self.array("namespace_ids")[runs].tolist(), found)]  # noqa: B905 (equal lengths)
        return [prefix + local for local in found] if prefix else found

    def number(self, name: str) -> int | None:
        """The number of the entity id ``name``, None if the index holds no such entity."""
        key = name.encode("utf-8")
        offsets, blob, namespaces = self._offset_view, self._names, self.namespaces
        lo, hi = 0, self.entity_count
        prefix = namespaces.only
        if prefix is not None:  # every id in one namespace: the local parts sort as the ids do
            if not name.startswith(prefix):
                return None
            key = key[len(prefix.encode("utf-8")) :]
        while lo < hi:
            middle = (lo + hi) // 2
            found = blob[offsets[middle] : offsets[middle + 1]]
            if prefix is None:
                found = namespaces.encoded(middle) + found
            if found < key:
                lo = middle + 1
            elif found > key:
                hi = middle
            else:
                return middle
        return None

    # -- literals ---------------------------------------------------------------------------------
    def literal_runs(self, node: int, relation: int | None = None, mask: Mask | None = None) -> Runs:
        """Where entity ``node``'s literal objects lie in the literal table, per relation (of one
        ``relation``, of the relations ``mask`` keeps, or of all), by relation; each run's literals
        are in answer order (``node_sort_key``). The one way to find an entity's literals."""
        views = self._views
        starts = views["literal_start"]
        lo, hi = starts[node], starts[node + 1]
        if lo == hi:
            return []
        rels = views["literal_rel"]
        if relation is not None:
            lo, hi = _run(rels, relation, lo, hi)
            return [(relation, lo, hi)] if hi > lo else []
        if hi - lo == 1:
            r = rels[lo]
            return [(r, lo, hi)] if mask is None or mask[r] else []
        found = rels[lo:hi].tolist()
        runs: Runs = []
        at = 0
        while at < len(found):
            r = found[at]
            end = bisect_right(found, r, at + 1)
            if mask is None or mask[r]:
                runs.append((r, lo + at, lo + end))
            at = end
        return runs

    def literal_records(self, runs: Runs) -> list[Literal]:
        """The literal records of ``runs``, one list in their order, through the literal cache; the
        ones it misses are decoded together and kept under one lock."""
        cache = self.literal_cache
        if len(runs) == 1:
            _, first, last = runs[0]
            if last - first == 1:
                return [cache[first]]
            positions: Iterable[int] = range(first, last)
        else:
            positions = [p for _, first, last in runs for p in range(first, last)]
        found = list(map(cache.get, positions))
        if all(found):  # (records are never false)
            return found  # type: ignore[return-value]
        missing = [p for p, value in zip(positions, found, strict=True) if value is None]
        values = list(map(self.literal_from_file, missing))
        cache.remember(missing, values)
        decoded = dict(zip(missing, values, strict=True))
        return [decoded[p] if value is None else value for p, value in zip(positions, found, strict=True)]

    def literals(self, node: int, relation: int) -> list[Literal]:
        """The literal objects of (entity, relation), in answer order."""
        runs = self.literal_runs(node, relation)
        return self.literal_records(runs) if runs else []

    # -- ends the CSR does not hold -----------------------------------------------------------------
    def extra_relations(self, node: int, side: str) -> list[int]:
        """The relations (ascending) of ``node``'s edges on ``side`` whose other end the CSR does not hold:
        a literal or blank-node object (``out``), a blank-node subject (``in``). Known only in an index
        with blank-node edges (the arrays are written only then): empty in the others."""
        if not self.blank_edges:
            return []
        rels, starts = self._views[f"{side}_extra_rel"], self._views[f"{side}_extra_start"]
        lo, hi = starts[node], starts[node + 1]
        return rels[lo:hi].tolist() if hi > lo else []

    def node_relations(self, node: int, side: str) -> set[int]:
        """The relations of entity ``node``'s edges on ``side``: entity ends, literal objects (``out``) and,
        in a store with blank nodes, blank-node ends."""
        found = self.sides[side].relations(node)
        if side == "out":
            found.update(map(_first, self.literal_runs(node)))
        if self.blank_edges:
            found.update(self.extra_relations(node, side))
        return found

    # -- files --------------------------------------------------------------------------------------
    def _map_blob(self, path: Path) -> mmap.mmap | bytes:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size == 0:
                return b""
            mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        self._mappings.append(mapping)
        return mapping

    def _view(self, name: str) -> memoryview:
        mapping, view = _vector_view(self.directory / f"{name}.npy")
        if mapping is not None:
            self._mappings.append(mapping)
        return view

    def close(self) -> None:
        """Unmaps the files (arrays handed out earlier keep their own mapping alive)."""
        for view in (self._offset_view, *self._views.values()):
            view.release()
        for mapping in self._mappings:
            mapping.close()
        self._mappings = []
        self._name_bytes = None  # (its buffer export would keep the mapping from closing)
        self.name_cache.clear()
        self.literal_cache.clear()
        if isinstance(self._names, mmap.mmap):
            self._names.close()
        self._names = b""


NAME_CACHE_CAP = 1 << 17
"""Entity ids an opened index keeps decoded, at most."""
NAME_CACHE_BYTES = 32 << 20
"""... and their estimated memory at most (``NAME_OVERHEAD`` + length each)."""
LITERAL_CACHE_CAP = 1 << 16
"""Literal records an opened index keeps decoded, at most."""
LITERAL_CACHE_BYTES = 16 << 20
"""... and their estimated memory at most (``LITERAL_OVERHEAD`` + text length each): long texts fill it sooner."""


NAME_OVERHEAD = 100
"""What a cached id costs beyond its length, about: the str object, its int key, the dict slot."""
LITERAL_OVERHEAD = 160
"""What a cached literal record costs beyond its text's length, about: the record, the str, key, slot."""


def _text_length(literal: Literal) -> int:
    return len(literal.value)


class _Namespaces:
    """The namespaces of the entity ids, which ``entities.bin`` holds without them: runs of consecutive
    entity numbers, each run's namespace (see :mod:`kg_adapters.index`)."""

    __slots__ = ("_bytes", "ids", "names", "only", "starts")

    def __init__(self, names: list[str], starts: memoryview, ids: memoryview) -> None:
        self.names = [str(name) for name in names]
        self._bytes = [name.encode("utf-8") for name in self.names]
        self.starts, self.ids = starts, ids
        if len(starts) < 1 or starts[0] != 0 or len(ids) != len(starts):
            raise ValueError("namespace_starts and namespace_ids disagree")
        if any(not 0 <= number < len(self.names) for number in (min(ids), max(ids))):
            raise ValueError("namespace_ids number a namespace meta.json does not list")
        self.only = self.names[ids[0]] if len(starts) == 1 else None
        """The one namespace of every id (None when there are several)."""

    def of(self, number: int) -> str:
        """The namespace of the entity numbered ``number``."""
        return self.names[self.ids[bisect_right(self.starts, number) - 1]]

    def encoded(self, number: int) -> bytes:
        """:meth:`of`, as UTF-8."""
        return self._bytes[self.ids[bisect_right(self.starts, number) - 1]]


def _name_decoder(offsets: memoryview, blob: mmap.mmap | bytes, namespaces: _Namespaces) -> Callable[[int], str]:
    """Entity number -> id, read from ``entities.bin`` (no cache; holds the buffers, not the index)."""
    prefix = namespaces.only
    if prefix is None:
        of = namespaces.of

        def decode(number: int) -> str:
            return of(number) + blob[offsets[number] : offsets[number + 1]].decode()

    elif prefix:

        def decode(number: int) -> str:
            return prefix + blob[offsets[number] : offsets[number + 1]].decode()

    else:

        def decode(number: int) -> str:
            return blob[offsets[number] : offsets[number + 1]].decode()  # UTF-8 (the default: no codec lookup)

    return decode


def _literal_decoder(
    offsets: memoryview, tags: memoryview, blob: mmap.mmap | bytes, fields: list[tuple[str | None, str | None]]
) -> Callable[[int], Literal]:
    """Literal table position -> its record, read from the files (no cache; holds the buffers, not the index)."""

    def decode(position: int) -> Literal:
        text = blob[offsets[position] : offsets[position + 1]].decode("utf-8")
        return make_literal(text, *fields[tags[position]])

    return decode


def _tag_fields(tag: str) -> tuple[str | None, str | None]:
    """(datatype, lang) of a literal tag: ``""`` plain, ``@lang``, ``^datatype``."""
    if not tag:
        return None, None
    return (None, tag[1:]) if tag[0] == "@" else (tag[1:], None)


def _load(path: Path) -> Ints:
    """A memory-mapped .npy array as a plain ndarray view (numpy's memmap subclass adds work to
    every indexing operation)."""
    import numpy as np

    values = np.load(path, mmap_mode="r", allow_pickle=False)
    return values.view(np.ndarray)  # type: ignore[no-any-return]


_FORMATS: dict[str, typing.Literal["B", "H", "I", "i", "q"]] = {
    "|u1": "B",
    "<u2": "H",
    "<u4": "I",
    "<i4": "i",
    "<i8": "q",
}
"""The memoryview format of each ``.npy`` element type an index holds (:data:`~kg_adapters.index.layout.DTYPES`)."""


def _vector_view(path: Path) -> tuple[mmap.mmap | None, memoryview]:
    """The integer vector of a .npy file as a memoryview over its mapping: Python-int indexing at
    list speed, for the lookups that run one at a time."""
    with open(path, "rb") as handle:
        descr, fortran, shape = _npy_header(handle)
        if descr not in DTYPES or fortran or len(shape) != 1:
            raise ValueError(f"{path} is not a vector of little-endian integers")
        form = _FORMATS[descr]
        size = struct.calcsize(form) * shape[0]
        start = handle.tell()
        if shape[0] == 0:
            return None, memoryview(b"").cast(form)
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    raw = memoryview(mapped)[start : start + size]
    if len(raw) != size:
        raw.release()
        mapped.close()
        raise ValueError(f"{path} is shorter than its header says")
    return mapped, raw.cast(form)


def _npy_header(handle: BinaryIO) -> tuple[str, bool, tuple[int, ...]]:
    """(dtype descr, fortran order, shape) of a .npy file, read without importing numpy (the format:
    magic, version, header length, a Python dict literal); leaves ``handle`` at the data."""
    prefix = handle.read(8)
    if len(prefix) != 8 or prefix[:6] != b"\x93NUMPY" or prefix[6] not in (1, 2, 3):
        raise ValueError(f"{handle.name} is not a .npy file")
    size_format = "<H" if prefix[6] == 1 else "<I"
    (length,) = struct.unpack(size_format, handle.read(struct.calcsize(size_format)))
    header = ast.literal_eval(handle.read(length).decode("latin-1" if prefix[6] < 3 else "utf-8"))
    if not isinstance(header, dict) or not {"descr", "fortran_order", "shape"} <= header.keys():
        raise ValueError(f"{handle.name} has no .npy header")
    shape = header["shape"]
    if not isinstance(shape, tuple) or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise ValueError(f"{handle.name} has a bad .npy shape")
    return str(header["descr"]), bool(header["fortran_order"]), shape


def open_index(version_dir: str | os.PathLike[str]) -> TraversalIndex | None:
    """The index of a store version, or None when it has none (or one this version cannot read:
    the store still answers, through Oxigraph)."""
    directory = index_dir(version_dir)
    meta_path = directory / META
    if not meta_path.is_file():
        return None
    try:
        meta = json.loads(meta_path.read_text("utf-8"))
        if meta.get("format") != FORMAT_NAME or meta.get("version") != FORMAT_VERSION:
            return None
        return TraversalIndex(directory, meta)
    except (OSError, ValueError, KeyError, TypeError):
        return None
