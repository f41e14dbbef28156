"""The traversal index as the backend of one graph's operations (:class:`IndexBackend`).

networkx's backend dispatch is the model: the graph checks an operation's arguments once, asks its
backend whether it can answer (:meth:`IndexBackend.can_answer`), and calls the operation of the same
name there, or answers through its own generic code. The backend owns the index, the graph's id
memo (:class:`~kg_adapters.index.ids.IndexIds`) and its relation masks, all made for one profile: a
graph whose profile changes (a new relation filter) makes a new backend.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from kg_adapters.backends.sparql_graph import in_statement_layer
from kg_adapters.base import Direction
from kg_adapters.errors import InvalidTermError
from kg_adapters.index.edges import NodeEdges, edge_records, edges_records, read_edges
from kg_adapters.index.ids import CheckedPaths, IndexIds
from kg_adapters.index.paths import index_paths
from kg_adapters.index.read import Mask, TraversalIndex
from kg_adapters.index.shortest import shortest_paths
from kg_adapters.index.subgraph import k_hop_subgraph
from kg_adapters.profiles import Profile
from kg_adapters.records import Edge, EdgeList, PathResult

PARTS = frozenset({"edges", "relation_pairs"})
"""The operations that answer part of a generic one (one side's edges or relations of some entities,
for ``SparqlGraph.neighbors`` and ``relations``)."""
WHOLE = frozenset({"neighbors", "relations", "paths", "shortest_paths", "subgraph"})
"""The operations the backend answers whole."""
BlankEnds = Callable[[str, str, Direction], Iterator[Edge]]
"""(entity id, relation id, side) -> the edges to blank nodes Oxigraph holds for them."""


class IndexBackend:
    """The traversal index answering the walks of one graph (see the module docstring)."""

    def __init__(self, index: TraversalIndex, profile: Profile) -> None:
        self.index = index
        self.profile = profile
        self.ids = IndexIds(index, profile)
        """The id memo: spellings, canonical ids and relation ids converted by earlier calls."""
        self._masks: dict[bool, Mask | None] = {}
        walks = not index.blank_edges  # walks pass through blank nodes, and the index holds none
        self._answers = dict.fromkeys(PARTS, True) | dict.fromkeys(WHOLE, walks)
        """Whether the index answers each operation on this store and profile, whatever the arguments."""
        if profile.statements is not None:  # its statement layer is read from Oxigraph
            self._answers["neighbors"] = False
        self._cvts = profile.has_cvt_nodes

    # -- dispatch ---------------------------------------------------------------------------------
    def can_answer(self, operation: str, *, ids: Sequence[str] = (), expand_cvt: bool = False) -> bool:
        """Whether the index answers ``operation`` (checked arguments: the entity ``ids`` asked for,
        ``expand_cvt``) exactly as Oxigraph would. The parts (``edges``, ``relation_pairs``) it answers
        on any store (the caller reads blank-node ends from Oxigraph). A whole operation needs a store
        without blank nodes (walks pass through them, and the index holds none), no blank node among
        ``ids``, no CVT expansion on a profile with CVT nodes, and for ``neighbors`` a profile without
        a statement layer (read from Oxigraph)."""
        answers = self._answers.get(operation)
        if answers is None:
            raise ValueError(f"the traversal index has no operation {operation!r}")
        if not answers or (expand_cvt and self._cvts):
            return False
        for spelling in ids:  # noqa: SIM110 (a plain loop: any() over a generator costs more per call)
            if spelling[:2] == "_:":
                return False
        return True

    # -- whole operations (arguments checked by the graph) ------------------------------------------
    def neighbors(
        self,
        spellings: list[str],
        direction: Direction,
        relations: Sequence[str] | None,
        limit: int | None,
        literals: bool,
    ) -> dict[str, list[Edge]]:
        """``neighbors`` of entity ids (the caller's spellings) in answer order, each edge made once."""
        index, ids = self.index, self.ids
        if len(spellings) == 1:  # the common call
            spelling = spellings[0]
            node = ids.canonical[spelling]  # (a string: checked by the caller)
            relation, mask = self._relation_choice(relations, layer=False)
            number = ids.numbers[node]
            if number is None:
                return {spelling: []}
            return {
                spelling: edge_records(
                    index, node, read_edges(index, number, direction, relation, mask, limit, literals)
                )
            }
        canonical = dict(zip(spellings, map(ids.canonical_id, spellings), strict=True))
        relation, mask = self._relation_choice(relations, layer=False)
        found: dict[str, list[Edge]] = {}
        named: list[str] = []
        read: list[NodeEdges] = []
        for node in canonical.values():
            if node not in found:
                number = ids.number(node)
                found[node] = []
                if number is not None:
                    named.append(node)
                    read.append(read_edges(index, number, direction, relation, mask, limit, literals))
        found.update(zip(named, edges_records(index, named, read), strict=True))  # ids decoded in one batch
        if len(canonical) == 1:
            return {spelling: found[node] for spelling, node in canonical.items()}
        return {spelling: list(found[node]) for spelling, node in canonical.items()}

    def relations(self, spellings: list[str], direction: Direction) -> dict[str, list[str]]:
        """``relations`` of entity ids: each entity's relation numbers, masked, named in sorted order."""
        index, ids = self.index, self.ids
        canonical = dict(zip(spellings, map(ids.canonical_id, spellings), strict=True))
        mask = self.mask(layer=True)
        sides: tuple[Direction, ...] = ("out", "in") if direction == "both" else (direction,)
        labels = index.relations
        found: dict[str, list[str]] = {}
        for node in canonical.values():
            if node in found:
                continue
            number = ids.number(node)
            numbers: set[int] = set()
            if number is not None:
                for side in sides:
                    numbers |= index.node_relations(number, side)
            found[node] = [labels[r] for r in sorted(numbers) if mask is None or mask[r]]
        if len(canonical) == 1:
            return {spelling: found[node] for spelling, node in canonical.items()}
        return {spelling: list(found[node]) for spelling, node in canonical.items()}

    def paths(self, checked: CheckedPaths, simple: bool) -> PathResult:
        """``paths`` for arguments checked by :meth:`IndexIds.checked_paths`."""
        return index_paths(self.index, checked, simple)

    def shortest_paths(
        self, sources: list[str], targets: list[str], max_hops: int, direction: Direction, limit: int | None
    ) -> PathResult:
        """``shortest_paths`` between canonical ids."""
        number = {node: self.ids.number(node) for node in dict.fromkeys([*sources, *targets])}
        pairs = [(s, t, number[s], number[t]) for s in sources for t in targets]
        return shortest_paths(self.index, pairs, max_hops, direction, limit, self.mask(layer=True))

    def subgraph(
        self, seeds: list[str], depth: int, direction: Direction, relations: Sequence[str] | None, limit: int | None
    ) -> EdgeList:
        """``subgraph`` around canonical seed ids, over the named ``relations`` or the visible ones."""
        if relations is None:
            mask = self.mask(layer=True)
        else:
            mask = self._named_mask(map(self.ids.relation_number, relations))
        numbers = list(map(self.ids.number, seeds))
        return k_hop_subgraph(self.index, numbers, depth, direction, mask, limit)

    # -- parts of the generic operations --------------------------------------------------------------
    def edges(
        self,
        side: Direction,
        nodes: list[str],
        relation_ids: list[str] | None,
        literals: bool,
        result: dict[str, list[Edge]],
        blank_ends: BlankEnds,
    ) -> None:
        """Appends to ``result[node]`` the edges of each canonical id in ``nodes`` on ``side`` (``out``
        or ``in``), of the ``relation_ids`` (all visible: None), literal objects with ``literals``; in
        a store with blank nodes, their edges to blank nodes too (``blank_ends``, from Oxigraph)."""
        index = self.index
        numbers = index.relation_number
        relation: int | None = None
        mask: Mask | None = None
        if relation_ids is None:
            mask = self.mask(layer=False)  # the caller drops what the filter hides
        elif len(relation_ids) == 1:
            relation = numbers.get(relation_ids[0])
            if relation is None:
                return
        else:
            mask = self._named_mask(numbers.get(r) for r in relation_ids)
        literals = literals and side == "out"
        found = [(node, number) for node in nodes if (number := self.ids.number(node)) is not None]
        read = [read_edges(index, number, side, relation, mask, None, literals) for _, number in found]
        named = [node for node, _ in found]
        for (node, number), records in zip(found, edges_records(index, named, read), strict=True):
            edges = result[node]  # (ids decoded in one batch)
            edges.extend(records)
            if index.blank_edges:
                for r in index.extra_relations(number, side):
                    if (relation is None or r == relation) and (mask is None or mask[r]):
                        edges.extend(blank_ends(node, index.relations[r], side))

    def relation_pairs(self, side: Direction, nodes: Iterable[tuple[str, str]]) -> Iterator[tuple[str, str]]:
        """(IRI, relation id) for every distinct relation on the ``side`` edges of each (IRI, canonical
        id) of ``nodes``, literal and blank-node ends included."""
        index = self.index
        for full, node in nodes:
            number = self.ids.number(node)
            if number is not None:
                for r in sorted(index.node_relations(number, side)):
                    yield full, index.relations[r]

    # -- relations --------------------------------------------------------------------------------
    def mask(self, *, layer: bool) -> Mask | None:
        """Which relation numbers an operation over unnamed relations keeps: the profile's relation
        filter, and with ``layer`` the statement plumbing hidden (as ``neighbors(relations=None)``
        answers); None when it keeps them all."""
        try:
            return self._masks[layer]
        except KeyError:
            profile = self.profile
            hide_layer = layer and profile.statements is not None
            keeps = profile.relation_filter.keeps
            flags = [keeps(r) and not (hide_layer and in_statement_layer(profile, r)) for r in self.index.relations]
            mask = self._masks[layer] = None if all(flags) else bytes(flags)
            return mask

    def _named_mask(self, numbers: Iterable[int | None]) -> Mask:
        flags = bytearray(self.index.width)  # none named (or none in the index): no edges
        for number in numbers:
            if number is not None:
                flags[number] = 1
        return bytes(flags)

    def _relation_choice(self, relations: Sequence[str] | None, *, layer: bool) -> tuple[int | None, Mask | None]:
        """(one relation number, None) or (None, a mask) for ``relations`` (the caller's, each checked)."""
        if relations is None:
            try:
                return None, self._masks[layer]
            except KeyError:
                return None, self.mask(layer=layer)
        if isinstance(relations, str) or not isinstance(relations, Iterable):
            raise InvalidTermError("relations must be a list of relation ids, not one string")
        named = {n for r in relations if (n := self.ids.relation_number(r)) is not None}  # each one checked
        if len(named) == 1:
            return named.pop(), None
        return None, self._named_mask(named)
