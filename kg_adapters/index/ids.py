"""The id memo of an indexed graph (:class:`IndexIds`): the id conversions every call repeats."""

from __future__ import annotations

from collections.abc import Sequence

from kg_adapters.algorithms import path_arguments
from kg_adapters.base import Direction, Ids, KnowledgeGraph
from kg_adapters.index.memo import BoundedMemo
from kg_adapters.index.read import TraversalIndex
from kg_adapters.profiles import Profile

CheckedPaths = tuple[list[str], list["int | None"], list["int | None"], list[Direction], "int | None"]
"""A ``paths`` call's checked arguments: the canonical start ids, their numbers, the relation
numbers, one direction per hop, the path budget (lists the walks only read)."""

IDS_CAP = 1 << 14
"""Spellings, ids and relations each memo of :class:`IndexIds` keeps, at most."""


class IndexIds:
    """The id conversions every call on an indexed graph repeats, remembered while the graph's
    profile and index stay the same: an entity spelling -> its canonical id, a canonical id -> its
    index number, a relation id -> its number (each a :class:`BoundedMemo` of ``cap`` entries). Only
    ids the profile accepted are remembered, so a bad one is checked, and refused with the same
    error, on every call."""

    def __init__(self, index: TraversalIndex, profile: Profile, *, cap: int = IDS_CAP) -> None:
        self.index = index
        self.profile = profile
        numbers = index.relation_number

        def relation_number(relation: str) -> int | None:
            return numbers.get(profile.relation_id(profile.relation_iri(relation)))

        self.canonical: BoundedMemo[str, str] = BoundedMemo(profile.canonical_id, cap=cap)
        """Entity spelling -> its canonical id (``profile.canonical_id``)."""
        self.numbers: BoundedMemo[str, int | None] = BoundedMemo(index.number, cap=cap)
        """Canonical entity id -> its index number, None when the index lacks it."""
        self.relations: BoundedMemo[str, int | None] = BoundedMemo(relation_number, cap=cap)
        """Relation id -> its index number after the profile's check (``relation_iri``, whose errors
        it raises), None when no edge of the index has that relation."""
        self.path_calls: BoundedMemo[tuple[str, tuple[str, ...]], CheckedPaths] = BoundedMemo(None, cap=cap)
        """(start id, relation path) -> :data:`CheckedPaths` of a ``paths`` call with the default
        directions and budget, remembered whole once checked."""

    def canonical_id(self, spelling: str) -> str:
        """``profile.canonical_id(spelling)`` (same answer, same errors)."""
        if type(spelling) is str:
            return self.canonical[spelling]
        return self.profile.canonical_id(spelling)  # (refused: not remembered)

    def number(self, canonical: str) -> int | None:
        """``index.number(canonical)``: the entity's number, None when the index lacks it."""
        return self.numbers[canonical]

    def checked_paths(
        self,
        kg: KnowledgeGraph,
        starts: Ids,
        relation_path: Sequence[str],
        directions: Sequence[Direction] | None,
        max_paths: int | None,
    ) -> CheckedPaths:
        """``paths``' arguments checked by ``algorithms.path_arguments`` through this memo, with the numbers
        of the start ids and relations. A call with one start id, the default directions and budget
        is remembered whole (:attr:`path_calls`): repeating it checks nothing again."""
        key = None
        if directions is None and max_paths is None and type(starts) is str and type(relation_path) in (list, tuple):
            key = (starts, tuple(relation_path))
            try:
                found = self.path_calls.get(key)
            except TypeError:  # an unhashable relation: refused below
                key = None
            else:
                if found is not None:
                    return found
        start_ids, dirs, limit = path_arguments(
            kg,
            starts,
            relation_path,
            directions,
            max_paths,
            canonical=self.canonical_id,
            check_relation=self.relation_number,
        )
        numbers, relations = self.numbers.__getitem__, self.relations.__getitem__
        checked = (start_ids, list(map(numbers, start_ids)), list(map(relations, relation_path)), dirs, limit)
        if key is not None:
            self.path_calls.remember([key], [checked])
        return checked

    def relation_number(self, relation: str) -> int | None:
        """The index number of a relation id (see :attr:`relations`)."""
        try:
            return self.relations[relation]
        except TypeError:  # not even hashable: the profile says what is wrong
            self.profile.relation_iri(relation)
            raise
