"""Frozen, keyword-only records returned by every backend.

Edges keep the KG's true direction whatever direction an operation walked them in; a
multigraph is never collapsed (two relations between one node pair are two edges).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, kw_only=True, slots=True)
class Literal:
    """An RDF literal. ``datatype`` is None for plain strings (xsd:string) and language-tagged
    strings; otherwise it is the full datatype IRI. ``lang`` is lower-cased."""

    value: str
    datatype: str | None = None
    lang: str | None = None

    def __str__(self) -> str:
        return self.value


Node = str | Literal
"""An entity id (profile-compact string) or a literal."""


def node_sort_key(node: Node) -> tuple[int, str, str, str]:
    """Orders entities before literals, then by text, so answers are deterministic."""
    if isinstance(node, str):
        return (0, node, "", "")
    return (1, node.value, node.datatype or "", node.lang or "")


class Qualifiers(Mapping[str, tuple[Node, ...]]):
    """Immutable, hashable ``qualifier relation -> values`` of a statement (Wikidata ``pq:``),
    relations sorted and values in a deterministic order, so equal statements compare equal."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, Iterable[Node]] | Iterable[tuple[str, Iterable[Node]]] = ()) -> None:
        pairs = items.items() if isinstance(items, Mapping) else items
        merged: dict[str, list[Node]] = {}
        for relation, values in pairs:
            merged.setdefault(relation, []).extend(values)
        self._items: tuple[tuple[str, tuple[Node, ...]], ...] = tuple(
            (relation, tuple(sorted(dict.fromkeys(values), key=node_sort_key)))
            for relation, values in sorted(merged.items())
        )

    def __getitem__(self, relation: str) -> tuple[Node, ...]:
        for key, values in self._items:
            if key == relation:
                return values
        raise KeyError(relation)

    def __iter__(self) -> Iterator[str]:
        return (key for key, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Qualifiers):
            return self._items == other._items
        return isinstance(other, Mapping) and dict(self) == dict(other)

    def __repr__(self) -> str:
        return f"Qualifiers({dict(self._items)!r})"


NO_QUALIFIERS = Qualifiers()


@dataclass(frozen=True, kw_only=True, slots=True)
class Edge:
    """One triple ``head --relation--> tail`` in the KG's own direction.

    Optional context, empty unless an operation was asked for it:

    * ``qualifiers`` and ``rank`` (``preferred``/``normal``) when the edge is a full statement
      (Wikidata ``p:/ps:/pq:``; ``neighbors(..., qualifiers=True)``). Two statements with the same
      head, relation and tail but other qualifiers are two edges.
    * ``cvt``: when ``tail`` (or ``head``, for an incoming edge) is a Freebase CVT (mediator) node and
      the operation expanded CVTs, the mediator's other edges, so one call sees through it.
    """

    head: str
    relation: str
    tail: Node
    qualifiers: Qualifiers = NO_QUALIFIERS
    rank: str | None = None
    cvt: tuple[Edge, ...] = ()

    def as_tuple(self) -> tuple[str, str, Node]:
        return (self.head, self.relation, self.tail)


@dataclass(frozen=True, kw_only=True, slots=True)
class Path:
    """A walk from ``start`` over ``edges``; an edge may be walked backwards (tail to head)."""

    start: str
    edges: tuple[Edge, ...] = ()

    @property
    def entities(self) -> tuple[Node, ...]:
        """The node sequence visited from ``start``, one more than there are edges."""
        nodes: list[Node] = [self.start]
        current: Node = self.start
        for edge in self.edges:
            current = edge.tail if edge.head == current else edge.head
            nodes.append(current)
        return tuple(nodes)

    @property
    def relations(self) -> tuple[str, ...]:
        return tuple(edge.relation for edge in self.edges)

    @property
    def end(self) -> Node:
        return self.entities[-1]


@dataclass(frozen=True, kw_only=True, slots=True)
class Entity:
    """A KG entity as found by ``search``: its compact id and, when known, a name."""

    id: str
    label: str | None = None
    description: str | None = None


class PathResult(list[Path]):
    """Paths answered by ``paths``/``shortest_paths``; ``truncated`` is True when a budget cut
    the answer short, so an incomplete answer is never mistaken for a complete one.
    ``from_cache`` is True when a caching wrapper answered every lookup from its cache."""

    def __init__(self, paths: list[Path] | None = None, *, truncated: bool = False, from_cache: bool = False) -> None:
        super().__init__(paths or [])
        self.truncated = truncated
        self.from_cache = from_cache


class EdgeList(list[Edge]):
    """Edges answered by ``subgraph``; ``truncated`` is True when ``max_edges`` cut it short.
    ``from_cache`` is True when a caching wrapper answered every lookup from its cache."""

    def __init__(self, edges: list[Edge] | None = None, *, truncated: bool = False, from_cache: bool = False) -> None:
        super().__init__(edges or [])
        self.truncated = truncated
        self.from_cache = from_cache


def edge_sort_key(edge: Edge) -> tuple[str, str, tuple[int, str, str, str]]:
    return (edge.head, edge.relation, node_sort_key(edge.tail))


def statement_sort_key(edge: Edge) -> tuple[Any, ...]:
    """``edge_sort_key``, then rank and qualifiers: statements that share a triple keep one order."""
    qualifiers = tuple((relation, tuple(map(node_sort_key, values))) for relation, values in edge.qualifiers.items())
    return (*edge_sort_key(edge), edge.rank or "", qualifiers)


def best_label(labels: list[Literal], langs: Sequence[str]) -> str:
    """The first wanted language, then a regional variant of it, in order; then untagged; then any.
    Ties go to the earlier literal (callers order them, e.g. by predicate, tag and text)."""
    base_tags = [tag.split("-")[0] for tag in langs]
    others = len(langs) * 2

    def rank(index: int) -> tuple[int, int]:
        tag = labels[index].lang or ""
        if not tag:
            return (others, index)
        if tag in langs:
            return (langs.index(tag) * 2, index)
        base = tag.split("-")[0]
        if base in base_tags:
            return (base_tags.index(base) * 2 + 1, index)
        return (others + 1, index)

    return labels[min(range(len(labels)), key=rank)].value
