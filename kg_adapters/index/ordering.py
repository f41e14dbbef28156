"""The sorts of an in-memory index write (:func:`kg_adapters.index.build._write`): the entities in the order of
their ids (:func:`ordered_entities`) and both directions of the edges (:func:`edge_columns`).

With the C extension (``_numbering_order.c``) they run on the numbering table's bytes and int32 buffers: the ids
are never made Python strings (their bytes order is their text's: UTF-8 keeps code point order), and the edges are
sorted by a counting sort by node, then a sort of each node's few edges (no sort of every edge as one array). The
Python path (no C compiler at install, or a profile that maps ids its own way) gives the same arrays, hence the
same files (``tests/test_index_order.py``).
"""

from __future__ import annotations

import itertools
import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kg_adapters.errors import BackendError
from kg_adapters.index.numbering import COMPILED, IriNumbers
from kg_adapters.index.replay import EntitySpelling
from kg_adapters.profiles import Profile
from kg_adapters.profiles.base import Profile as BaseProfile

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Ints = npt.NDArray[np.int64]


@dataclass(frozen=True, kw_only=True)
class OrderedEntities:
    """The entities of a numbering table in the order of their ids: each number's rank, the ids joined in that
    order (UTF-8) and where each ends (int64, a 0 first), and whether every id spells back into its IRI (and the
    first that does not, in number order: :class:`~kg_adapters.index.replay.EntitySpelling`)."""

    rank: Ints
    ids: bytes
    offsets: Ints
    spelled_back: tuple[bool, str | None]


def ordered_entities(table: IriNumbers, profile: Profile, *, compiled: bool = True) -> OrderedEntities:
    """The entities of ``table`` in id order (``profile.entity_id`` of each IRI); refuses two IRIs with one id."""
    import numpy as np

    from kg_adapters.index.numbering import Numbering

    if compiled and COMPILED and type(table) is Numbering and plain_ids(profile):
        return _compiled_entities(table, profile)
    spelling = EntitySpelling(profile)
    names = [spelling.id_of(iri) for iri in table.strings()]
    rank, order = ranks(names, "entity")
    encoded = [names[i].encode("utf-8") for i in order.tolist()]
    del names
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    if encoded:
        np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
    return OrderedEntities(
        rank=rank, ids=b"".join(encoded), offsets=offsets, spelled_back=(spelling.holds, spelling.first_failure)
    )


def plain_ids(profile: Profile) -> bool:
    """Whether the profile's ids are :class:`~kg_adapters.profiles.base.Profile`'s own: an IRI of the entity
    namespace whose rest ``is_local_id`` accepts is that rest, any other IRI is itself, and an id spells back
    when ``_expand`` gives its IRI (what :func:`_compiled_entities` decides without a call per IRI)."""
    kind = type(profile)
    namespace = profile.entity_namespace
    return (
        kind.entity_id is BaseProfile.entity_id
        and kind.entity_iri is BaseProfile.entity_iri
        and kind._expand is BaseProfile._expand
        and not (namespace or "").startswith("_:")
    )


def _compiled_entities(table: Any, profile: Profile) -> OrderedEntities:
    """:func:`ordered_entities` in C: one ``is_local_id`` call per IRI of the namespace, and ``id_of`` only for
    the IRIs whose id may not spell back (those kept whole, and ids starting ``_:``), in number order."""
    import numpy as np

    from kg_adapters.index._numbering import sorted_ids, suffixes

    count = len(table)
    strip = np.zeros(count, dtype=np.uint8)
    namespace = (profile.entity_namespace or "").encode()
    suspects = np.zeros(0, dtype=np.int64)
    if namespace:
        numbers_bytes, rests = suffixes(table, namespace)
        numbers = np.frombuffer(numbers_bytes, dtype=np.int32)
        local = np.frombuffer(bytes(map(bool, map(profile.is_local_id, rests))), dtype=np.uint8)
        strip[numbers] = local
        # a local id starting "_:" does not spell back (Profile._expand refuses it): its IRI is checked
        blank = np.fromiter(map(operator.methodcaller("startswith", "_:"), rests), dtype=bool, count=len(rests))
        suspects = numbers[blank & (local == 1)].astype(np.int64)
        del rests
    # an id that is its IRI spells back unless Profile._expand respells it: checked, in number order
    whole = np.flatnonzero(strip == 0)
    spelling = EntitySpelling(profile)
    check = np.union1d(whole, suspects).astype(np.int32)
    for start in range(0, check.size, 65536):
        for iri in table.strings_at(check[start : start + 65536]):
            spelling.id_of(iri)
            if not spelling.holds:
                break
        if not spelling.holds:
            break
    order_bytes, ids, offset_bytes, duplicate = sorted_ids(table, strip.tobytes(), len(namespace))
    offsets = np.frombuffer(offset_bytes, dtype=np.int64)
    if duplicate >= 0:
        shared = ids[int(offsets[duplicate]) : int(offsets[duplicate + 1])].decode("utf-8")
        raise BackendError(f"two entity IRIs share the id {shared!r}; cannot index this store")
    rank = np.empty(count, dtype=np.int64)
    rank[np.frombuffer(order_bytes, dtype=np.int32)] = np.arange(count, dtype=np.int64)
    return OrderedEntities(rank=rank, ids=ids, offsets=offsets, spelled_back=(spelling.holds, spelling.first_failure))


def ranks(names: list[str], what: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(rank of each name in sorted order, the names' order); refuses two IRIs with one id."""
    import numpy as np

    positions = sorted(range(len(names)), key=names.__getitem__)
    ordered = list(map(names.__getitem__, positions))
    if any(map(operator.eq, ordered[1:], ordered[:-1])):  # neighbours compared in C, not in a loop
        shared = next(name for name, after in itertools.pairwise(ordered) if name == after)
        raise BackendError(f"two {what} IRIs share the id {shared!r}; cannot index this store")
    order = np.array(positions, dtype=np.int64)
    rank = np.empty(len(names), dtype=np.int64)
    rank[order] = np.arange(len(names), dtype=np.int64)
    return rank, order


def edge_columns(
    edges: tuple[Any, Any, Any],
    entity_rank: Ints,
    relation_rank: Ints,
    entities: int,
    width: int,
    *,
    compiled: bool = True,
) -> dict[str, Any]:
    """The edge arrays of the index from the (heads, relations, tails) numbers (int32) and the ranks: ``out_rel``
    (relation columns in ``layout.relation_dtype(width)``), ``out_other`` (int32), ``out_start`` (where each of
    the ``entities`` starts, one more: the end), and the same ``in_*`` arrays, duplicates dropped."""
    import numpy as np

    from kg_adapters.index.layout import relation_dtype

    dtype = np.dtype(relation_dtype(width))
    heads, rels, tails = (np.ascontiguousarray(column, dtype=np.int32) for column in edges)
    if compiled and COMPILED:
        from kg_adapters.index._numbering import csr

        found = csr(
            heads,
            rels,
            tails,
            np.ascontiguousarray(entity_rank, dtype=np.int64),
            np.ascontiguousarray(relation_rank, dtype=np.int64),
            max(entities, 1),
            width,
            dtype.itemsize,
        )
        names = ("out_rel", "out_other", "out_start", "in_rel", "in_other", "in_start")
        types: tuple[Any, ...] = (dtype, np.int32, np.int64, dtype, np.int32, np.int64)
        arrays = {name: np.frombuffer(data, dtype=kind) for name, data, kind in zip(names, found, types, strict=True)}
        for name in ("out_start", "in_start"):
            arrays[name] = arrays[name][: entities + 1]
        return arrays
    out_key, out_other, in_key, in_other = python_csr(
        entity_rank[heads], relation_rank[rels], entity_rank[tails], width, max(entities, 1)
    )
    return {
        "out_rel": (out_key % width).astype(dtype),
        "out_other": out_other,
        "out_start": starts(out_key, entities, width),
        "in_rel": (in_key % width).astype(dtype),
        "in_other": in_other,
        "in_start": starts(in_key, entities, width),
    }


def sorted_keys(values: Any) -> Any:
    """An int64 array sorted: ``values`` itself, sorted in place by the C extension's radix sort (a few passes over
    the values, where ``np.sort`` compares), when it is a writable native int64 array the caller lets go of; else
    ``np.sort(values)`` (the same values in the same order)."""
    import sys

    import numpy as np

    if (
        COMPILED
        and isinstance(values, np.ndarray)
        and values.dtype == np.int64
        and values.dtype.isnative
        and sys.byteorder == "little"
        and values.flags.c_contiguous
        and values.flags.writeable
        and values.flags.owndata
    ):
        from kg_adapters.index._numbering import sort_int64

        sort_int64(values)
        return values
    return np.sort(values)


def starts(keys: Any, entities: int, width: int, out: Any = None) -> Any:
    """Where each entity's keys start in the sorted ``keys`` (one more: the end), into ``out`` when
    given (a memory-mapped array of a spilled build), bounds made a block at a time."""
    import numpy as np

    if out is None:
        out = np.empty(entities + 1, dtype=np.int32 if keys.size < 1 << 31 else np.int64)
    step = 1 << 20
    for start in range(0, entities + 1, step):
        bounds = np.arange(start, min(start + step, entities + 1), dtype=np.int64) * width
        out[start : start + len(bounds)] = keys.searchsorted(bounds)
    return out


def python_csr(h: Ints, r: Ints, t: Ints, width: int, entities: int) -> tuple[Ints, Ints, Ints, Ints]:
    """(out_key, out_other, in_key, in_other) of the edges (h, r, t), duplicates dropped: one sort of
    an int64 (key, other) number per direction when it fits (faster than ``lexsort`` over two keys)."""
    import numpy as np

    if entities * width * entities < 1 << 63:
        out = distinct_sorted(np.sort((h * width + r) * entities + t))
        out_key, out_other = np.divmod(out, entities)
        h, r = np.divmod(out_key, width)
        into = np.sort((out_other * width + r) * entities + h)
        in_key, in_other = np.divmod(into, entities)
        return out_key, out_other.astype(np.int32), in_key, in_other.astype(np.int32)
    out_key = h * width + r
    order = np.lexsort((t, out_key))
    out_key, t, h, r = out_key[order], t[order], h[order], r[order]
    if out_key.size:
        first = np.ones(out_key.size, dtype=bool)
        first[1:] = (out_key[1:] != out_key[:-1]) | (t[1:] != t[:-1])
        out_key, t, h, r = out_key[first], t[first], h[first], r[first]
    in_key = t * width + r
    order = np.lexsort((h, in_key))
    return out_key, t.astype(np.int32), in_key[order], h[order].astype(np.int32)


def distinct_sorted(ordered: Ints) -> Ints:
    """A sorted array without its repeats (``np.unique`` sorts again, and is slower)."""
    import numpy as np

    if ordered.size < 2:
        return ordered
    first = np.empty(ordered.size, dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered if first.all() else ordered[first]
