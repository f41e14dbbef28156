"""How many triples each relation has, read from the traversal index (the statistics of a SPARQL
service description, without a scan of the store).

Every default-graph edge between IRIs has its relation in ``out_rel`` and every literal object in
``literal_rel``, so one pass of ``bincount`` over those memory-mapped columns counts each relation;
it goes in chunks, so memory stays bounded on a store of any size. Blank-node edges are held only
as flags per (node, relation): a relation that may have some is listed without a count rather
than with a wrong one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kg_adapters.profiles import get_profile

if TYPE_CHECKING:
    from kg_adapters.index.read import TraversalIndex

CHUNK = 1 << 22
"""Relation numbers counted at a time (at most 16 MiB of a column, and 32 MiB as int64 for ``bincount``)."""


def relation_counts(index: TraversalIndex) -> tuple[int, list[tuple[str, int | None]]]:
    """(triples of the default graph, [(relation IRI, its triples or None), ...] largest first)."""
    import numpy as np

    width = index.width
    counts = np.zeros(width, dtype=np.int64)
    for name in ("out_rel", "literal_rel"):
        rels = index.array(name)
        for start in range(0, len(rels), CHUNK):
            counts += np.bincount(rels[start : start + CHUNK], minlength=width)
    uncertain: set[int] = set()
    if index.blank_edges:
        for name in ("out_extra_rel", "in_extra_rel"):
            uncertain.update(int(number) for number in np.unique(index.array(name)))
    profile = get_profile(index.profile_name)
    present = [number for number in range(len(index.relations)) if counts[number] or number in uncertain]
    present.sort(key=lambda number: (-int(counts[number]), index.relations[number]))
    triples = index.edge_count + index.literal_count + index.blank_edges
    return triples, [
        (profile.relation_iri(index.relations[number]), None if number in uncertain else int(counts[number]))
        for number in present
    ]
