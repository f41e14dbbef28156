"""The entity ids of a spilled index write (:mod:`kg_adapters.index.spill`) without their external sort, when the
distinct IRIs (``iris.run``, in IRI order) are all of the profile's namespace with a local id: their ids are then
what follows the namespace, in the same order (cutting one shared prefix keeps bytes order), so the ranks are the
IRIs' own order. One ``is_local_id`` call per IRI, no (id, number) tuple sorted and written as runs. Where that does
not hold (an IRI kept whole, a profile that maps ids its own way), :meth:`SpilledCollection._rank` sorts the ids as
before; both give the same files (``tests/test_index_spill.py``)."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kg_adapters.index.number_map import NumberMapWriter
from kg_adapters.profiles import Profile

_BATCH = 65536
"""IRIs handled at once."""


def namespaced_ids(
    iris: Iterable[bytes], profile: Profile, names: Path, offsets: Any, ranks: NumberMapWriter
) -> tuple[bool, str | None] | None:
    """Writes the ids of the distinct ``iris`` (in IRI order) to ``names`` and where each ends to ``offsets`` (an
    array file holding its first 0 already), and each IRI's rank (its place) to ``ranks``; returns (whether every
    id spells back into its IRI, the first that does not, as ``EntitySpelling`` says), or None, having written
    nothing it keeps, when an IRI is not of the namespace with a local id (the caller sorts the ids)."""
    import numpy as np

    from kg_adapters.index.ordering import plain_ids

    namespace = profile.entity_namespace
    if not namespace or not plain_ids(profile):
        return None
    prefix = namespace.encode("utf-8")
    separator, text_separator = b"\n" + prefix, "\n" + namespace
    starts, blank = operator.methodcaller("startswith", prefix), operator.methodcaller("startswith", "_:")
    first_failure: str | None = None
    done, end = 0, 0
    iterator = iter(iris)
    with open(names, "wb") as handle:
        while batch := list(itertools.islice(iterator, _BATCH)):
            joined = b"\n".join(batch)
            if joined.count(b"\n") != len(batch) - 1 or not all(map(starts, batch)):
                return None  # (a line break in an IRI: not split here)
            rests = joined[len(prefix) :].split(separator)
            texts = joined[len(prefix) :].decode("utf-8").split(text_separator)
            if len(rests) != len(batch) or not all(map(profile.is_local_id, texts)):
                return None
            if first_failure is None and any(map(blank, texts)):  # a local id "_:..." does not spell back
                first_failure = next(text for text in texts if text.startswith("_:"))[:200]
            lengths = np.fromiter(map(len, rests), dtype=np.int64, count=len(rests))
            handle.write(b"".join(rests))
            ends = end + np.cumsum(lengths)
            offsets.add(ends)
            end = int(ends[-1])
            numbers = np.arange(done, done + len(batch), dtype=np.int64)
            ranks.put(numbers, numbers)
            done += len(batch)
    return first_failure is None, first_failure
