"""Reading a traversal index: :class:`TraversalIndex` maps the files (see :mod:`kg_adapters.index`)
and decodes entity ids and literals through bounded caches (:class:`DecodedCache`).

A node's keys are found by two reads of a start array (a ``bisect`` over all the keys would cost
~log2(edges) scattered reads, each a Python int); one relation of a node by a ``bisect`` bounded to
the node's keys. A process opens an index in well under a millisecond and pages in only what its
queries touch.
"""

from __future__ import annotations

import ast
import json
import mmap
import os
import struct
import sys
import threading
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

from kg_adapters.index import tuning
from kg_adapters.index.layout import ARRAYS, FORMAT_NAME, FORMAT_VERSION, META, STARTS, index_dir
from kg_adapters.index.records import make_literal
from kg_adapters.records import Literal

if TYPE_CHECKING:  # numpy is imported only by walks over large frontiers
    import numpy as np
    import numpy.typing as npt

    Ints = npt.NDArray[np.int64]
_Value = TypeVar("_Value")


class TraversalIndex:
    """An opened traversal index (read-only, memory-mapped); the files are described in :mod:`kg_adapters.index`."""

    def __init__(self, directory: Path, meta: dict[str, Any]) -> None:
        self.directory = directory
        self.profile_name = str(meta["profile"])
        self.entity_count = int(meta["entities"])
        self.edge_count = int(meta["edges"])
        self.blank_edges = int(meta["blank_edges"])
        self.literal_relations = frozenset(int(r) for r in meta["literal_relations"])
        """Relations with a literal or blank-node object somewhere (only their hops ask Oxigraph)."""
        self.relations: list[str] = json.loads((directory / "relations.json").read_text("utf-8"))
        self.relation_number = {name: number for number, name in enumerate(self.relations)}
        self.width = max(len(self.relations), 1)
        self._mappings: list[mmap.mmap] = []
        self._arrays: dict[str, Ints] = {}
        self._offset_view = self._view("entity_offsets")
        self.views = {name: self._view(name) for name in ARRAYS[1:]}
        """The CSR arrays as memoryviews over their mappings: a one-node hop (two reads of a start
        array, a ``bisect`` inside the node's keys for one relation, and a slice) costs a few
        microseconds there, against ~20 us of numpy call overhead; opening them needs no
        numpy (its import alone costs ~0.2 s and ~16 MiB, more than opening the store)."""
        self.sides = {
            side: (self.views[f"{side}_key"], self.views[f"{side}_other"], self.views[f"{side}_start"])
            for side in ("out", "in")
        }
        """(keys, other ends, node starts) of the out- and in-edge CSR, by side."""
        if len(self._offset_view) != self.entity_count + 1 or len(self.views["out_key"]) != self.edge_count:
            raise ValueError("array sizes disagree with meta.json")
        for keys_name, start_name in STARTS.items():
            starts = self.views[start_name]
            if len(starts) != self.entity_count + 1 or starts[0] != 0 or starts[-1] != len(self.views[keys_name]):
                raise ValueError(f"{start_name} does not cover {keys_name}")
        self.literal_tags: list[str] = list(meta["literal_tags"])
        self.literal_fields = [_tag_fields(tag) for tag in self.literal_tags]
        """(datatype, lang) of each tag number: a tag is read once per index, not once per literal."""
        self._literal_values = self._map_blob(directory / "literals.bin")
        with open(directory / "entities.bin", "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            self._names: mmap.mmap | bytes = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        self._name_bytes: npt.NDArray[np.uint8] | None = None
        """``entities.bin`` as a numpy array, made by the first ``names_of`` that gathers with numpy."""
        self.name_from_file = _name_decoder(self._offset_view, self._names)
        """The entity id numbered ``number``, decoded from ``entities.bin`` (no cache)."""
        self.name_cache: DecodedCache[str] = DecodedCache(
            self.name_from_file, cap=NAME_CACHE_CAP, budget=NAME_CACHE_BYTES, size=len, overhead=NAME_OVERHEAD
        )
        """Entity number -> id, kept across calls (``name_cache[number]`` decodes on a miss)."""
        views = self.views
        self.literal_cache: DecodedCache[Literal] = DecodedCache(
            _literal_decoder(views["literal_offsets"], views["literal_tag"], self._literal_values, self.literal_fields),
            cap=LITERAL_CACHE_CAP,
            budget=LITERAL_CACHE_BYTES,
            size=_text_length,
            overhead=LITERAL_OVERHEAD,
        )
        """Literal table position -> its record, kept across calls (records are immutable)."""

    # -- the CSR arrays as numpy arrays (walks over large frontiers) ---------------------------
    def array(self, name: str) -> Ints:
        """The array ``name`` (one of the ``.npy`` files) as a numpy array, mapped on first use, so
        that only a walk that needs numpy imports it."""
        found = self._arrays.get(name)
        if found is None:
            if name not in ARRAYS:
                raise KeyError(f"the traversal index has no array {name!r}")
            found = self._arrays[name] = _load(self.directory / f"{name}.npy")
        return found

    # -- ids ----------------------------------------------------------------------------------
    def name(self, number: int) -> str:
        """The entity id numbered ``number``."""
        return self.name_cache[number]

    def names_of(self, numbers: list[int]) -> list[str]:
        """The entity ids numbered ``numbers``, in order (one call for a whole list), through the
        name cache. Many misses at once, in a process that has numpy loaded already, are gathered by
        numpy into one buffer decoded at once: the ids lie scattered over the mapped files, and a
        vectorised gather waits for those reads together where a loop waits for each in turn."""
        self.prefetch_names(numbers)
        return list(map(self.name_cache.__getitem__, numbers))

    def prefetch_names(self, numbers: Sequence[int]) -> None:
        """Puts the ids of a long list of entity numbers into the name cache by one numpy gather
        when many are missing and numpy is loaded already (else each is decoded on first use). A
        list whose first, middle and last numbers are cached is taken as warm, without a scan."""
        cache = self.name_cache
        if len(numbers) < tuning.NAMES_BY_NUMPY or "numpy" not in sys.modules:
            return
        if numbers[0] in cache and numbers[len(numbers) // 2] in cache and numbers[-1] in cache:
            return
        missing = [n for n in dict.fromkeys(numbers) if n not in cache]
        if len(missing) >= tuning.NAMES_BY_NUMPY:
            found = self._gathered_names(missing)
            if found is not None:
                cache.remember(missing, found)

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
        starts = offsets[wanted]
        lengths = offsets[wanted + 1] - starts
        ends = np.cumsum(lengths + 1)  # where each id's separator goes, plus one
        source = np.arange(int(ends[-1]), dtype=np.int64) + np.repeat(starts - (ends - lengths - 1), lengths + 1)
        np.minimum(source, blob.size - 1, out=source)  # a separator's slot may point past the blob
        gathered = blob[source]
        gathered[ends - 1] = 10
        found: list[str] = gathered.tobytes().decode("utf-8").split("\n")
        if len(found) != len(numbers) + 1:
            return None
        found.pop()
        return found

    def number(self, name: str) -> int | None:
        """The number of the entity id ``name``, None if the index holds no such entity."""
        key = name.encode("utf-8")
        offsets, blob = self._offset_view, self._names
        lo, hi = 0, self.entity_count
        while lo < hi:
            middle = (lo + hi) // 2
            found = blob[offsets[middle] : offsets[middle + 1]]
            if found < key:
                lo = middle + 1
            elif found > key:
                hi = middle
            else:
                return middle
        return None

    def literals(self, node: int, relation: int) -> list[Literal]:
        """The literal objects of (entity, relation), in ``node_sort_key`` order."""
        views = self.views
        starts = views["literal_start"]
        lo, hi = starts[node], starts[node + 1]
        if lo == hi:
            return []
        key = node * self.width + relation
        keys = views["literal_key"]
        lo = bisect_left(keys, key, lo, hi)
        hi = bisect_right(keys, key, lo, hi)
        if lo == hi:
            return []
        return self.literal_records(lo, hi)

    def literal_records(self, lo: int, hi: int) -> list[Literal]:
        """The literals at positions ``[lo, hi)`` of the literal table, as records (through the
        literal cache)."""
        if hi - lo == 1:
            return [self.literal_cache[lo]]
        return list(map(self.literal_cache.__getitem__, range(lo, hi)))

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
        for view in (self._offset_view, *self.views.values()):
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


class DecodedCache(dict[int, _Value]):
    """Number -> what the index decodes it to (an entity id, a literal record), each decoded on its
    first use and kept across calls: a walk answers with names, and networkx's speed comes from
    holding them all as objects. Bounded twice: at ``cap`` entries or ``budget`` bytes (each value
    counted as ``overhead + size(value)``, an estimate of what it holds) the cache is emptied before
    it takes more, so memory stays bounded whatever the callers ask; a value larger than the whole
    budget is handed back, not kept. Reads are single dict operations; fills take a lock (threads
    may share a graph). ``decode`` must not hold the index that owns the cache (a reference cycle
    would keep the index and its mapped files alive until the cyclic collector runs)."""

    def __init__(
        self,
        decode: Callable[[int], _Value],
        *,
        cap: int,
        budget: int,
        size: Callable[[_Value], int],
        overhead: int,
    ) -> None:
        super().__init__()
        self._decode = decode
        self.cap, self.budget, self._size, self._overhead = cap, budget, size, overhead
        self.bytes = 0
        """The estimated size of the values kept."""
        self._lock = threading.Lock()

    def __missing__(self, number: int) -> _Value:
        value = self._decode(number)
        added = self._overhead + self._size(value)
        with self._lock:
            if len(self) >= self.cap or self.bytes + added > self.budget:
                self.clear()
                if added > self.budget:
                    return value
            self[number] = value
            self.bytes += added
        return value

    def remember(self, numbers: list[int], values: list[_Value]) -> None:
        """Keeps ``values`` for ``numbers`` (decoded together elsewhere), as far as they fit."""
        added = self._overhead * len(values) + sum(map(self._size, values))
        if len(numbers) > self.cap or added > self.budget:
            return  # more than the whole cache: each is kept, or not, on its next miss
        with self._lock:
            if len(self) + len(numbers) > self.cap or self.bytes + added > self.budget:
                self.clear()
            self.update(zip(numbers, values, strict=True))
            self.bytes += added

    def clear(self) -> None:
        super().clear()
        self.bytes = 0


NAME_CACHE_CAP = 1 << 17
"""Entity ids an opened index keeps decoded, at most."""
NAME_CACHE_BYTES = 32 << 20
"""... and their estimated memory at most (``NAME_OVERHEAD`` + length each; ~110 bytes a Freebase id)."""
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


def _name_decoder(offsets: memoryview, blob: mmap.mmap | bytes) -> Callable[[int], str]:
    """Entity number -> id, read from ``entities.bin`` (no cache; holds the buffers, not the index)."""

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
    """A memory-mapped .npy array as a plain ndarray view (numpy's memmap subclass adds ~1 us
    to every indexing operation)."""
    import numpy as np

    values = np.load(path, mmap_mode="r", allow_pickle=False)
    return values.view(np.ndarray)  # type: ignore[no-any-return]


def _vector_view(path: Path) -> tuple[mmap.mmap | None, memoryview]:
    """The int64 or int32 vector of a .npy file as a memoryview over its mapping: Python-int
    indexing at list speed, for the lookups that run one at a time."""
    with open(path, "rb") as handle:
        descr, fortran, shape = _npy_header(handle)
        if descr not in ("<i8", "<i4") or fortran or len(shape) != 1:
            raise ValueError(f"{path} is not a little-endian int64 or int32 vector")
        wide = descr == "<i8"
        start = handle.tell()
        if shape[0] == 0:
            return None, memoryview(b"").cast("q" if wide else "i")
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    raw = memoryview(mapped)[start : start + (8 if wide else 4) * shape[0]]
    if len(raw) != (8 if wide else 4) * shape[0]:
        raw.release()
        mapped.close()
        raise ValueError(f"{path} is shorter than its header says")
    return mapped, raw.cast("q") if wide else raw.cast("i")


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
