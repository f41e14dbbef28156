"""The id memo of an indexed graph (:class:`IndexIds`): the id conversions every call repeats."""

from __future__ import annotations

from collections.abc import Sequence

from kg_adapters.base import Direction
from kg_adapters.index.hops import Hops, Mask
from kg_adapters.index.neighbors import _all_neighbor_edges
from kg_adapters.index.paths import constrained_paths, directed_paths
from kg_adapters.index.read import TraversalIndex
from kg_adapters.profiles import Profile
from kg_adapters.records import Edge, PathResult


class IndexIds:
    """The id conversions every call on an indexed graph repeats, remembered while the graph's
    profile and index stay the same: an entity spelling -> its canonical id, a canonical id -> its
    index number, a relation id -> its number. Only ids the profile accepted are remembered, so a
    bad one is checked, and refused with the same error, on every call. Each table is emptied when
    it reaches ``cap`` entries (memory stays bounded whatever the callers ask)."""

    def __init__(self, index: TraversalIndex, profile: Profile, *, cap: int = 1 << 14) -> None:
        self.index = index
        self.profile = profile
        self.cap = cap
        self._canonical: dict[str, str] = {}
        self._numbers: dict[str, int | None] = {}
        self._relations: dict[str, int | None] = {}
        self.masks: dict[bool, bytes | None] = {}
        """The graph's relation masks for unnamed walks (see ``OxigraphGraph._visible_mask``)."""

    def canonical_id(self, spelling: str) -> str:
        """``profile.canonical_id(spelling)`` (same answer, same errors)."""
        found = self._canonical.get(spelling) if type(spelling) is str else None
        if found is None:
            found = self.profile.canonical_id(spelling)
            if len(self._canonical) >= self.cap:
                self._canonical.clear()
            self._canonical[spelling] = found
        return found

    def number(self, canonical: str) -> int | None:
        """``index.number(canonical)``: the entity's number, None when the index lacks it."""
        try:
            return self._numbers[canonical]
        except KeyError:
            found = self.index.number(canonical)
            if len(self._numbers) >= self.cap:
                self._numbers.clear()
            self._numbers[canonical] = found
            return found

    def relation_number(self, relation: str) -> int | None:
        """The index number of a relation id after the profile's check (``relation_iri``, whose
        errors it raises); None when no edge of the index has that relation."""
        try:
            return self._relations[relation]
        except (KeyError, TypeError):  # TypeError: not even hashable; the profile says what is wrong
            profile = self.profile
            found = self.index.relation_number.get(profile.relation_id(profile.relation_iri(relation)))
            if len(self._relations) >= self.cap:
                self._relations.clear()
            self._relations[relation] = found
            return found

    def neighbors(self, spelling: str, direction: Direction, literals: bool, mask: Mask | None) -> list[Edge] | None:
        """``neighbors(spelling, direction=direction, literals=literals)`` of one entity id over the
        relations ``mask`` keeps (the graph checked ``direction``); None for a blank node, which
        the index does not hold (the caller asks Oxigraph)."""
        if spelling.startswith("_:"):
            return None
        node = self.canonical_id(spelling)
        number = self.number(node)
        if number is None:
            return []
        return _all_neighbor_edges(self.index, number, node, direction, mask, literals)

    def remembered_paths(self, start: object, relation_path: object) -> PathResult | None:
        """``paths(start, relation_path)`` with the other arguments at their defaults (every hop
        ``out``, no limit, not simple) when ``start`` (one id) and every relation of the list are
        in this memo, so an earlier call checked them all (the same answer as :meth:`paths` after
        ``path_arguments``, without repeating the checks); None otherwise (the caller checks)."""
        if type(start) is not str or (type(relation_path) is not list and type(relation_path) is not tuple):
            return None
        canonical = self._canonical.get(start)
        if canonical is None or not relation_path:
            return None
        remembered = self._relations
        relations: list[int | None] = []
        for relation in relation_path:
            if type(relation) is not str or relation not in remembered:
                return None
            relations.append(remembered[relation])
        outwards: list[Direction] = ["out"] * len(relations)
        return directed_paths(self.index, [canonical], [self.number(canonical)], relations, outwards, None)

    def paths(
        self,
        starts: list[str],
        relation_path: Sequence[str],
        directions: list[Direction],
        limit: int | None,
        simple: bool,
    ) -> PathResult:
        """``paths`` on the index for arguments ``algorithms.path_arguments`` checked (``starts``:
        canonical ids), its ids converted through this memo."""
        relations = list(map(self.relation_number, relation_path))
        numbers = list(map(self.number, starts))
        index = self.index
        if simple or "both" in directions:
            return constrained_paths(Hops(index, index.literals), starts, numbers, relations, directions, limit, simple)
        return directed_paths(index, starts, numbers, relations, directions, limit)
