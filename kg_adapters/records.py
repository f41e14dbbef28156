"""Frozen, keyword-only records returned by every backend.

Edges keep the KG's true direction whatever direction an operation walked them in; a
multigraph is never collapsed (two relations between one node pair are two edges).
"""

from __future__ import annotations

from dataclasses import dataclass


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


@dataclass(frozen=True, kw_only=True, slots=True)
class Edge:
    """One triple ``head --relation--> tail`` in the KG's own direction."""

    head: str
    relation: str
    tail: Node

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


def node_sort_key(node: Node) -> tuple[int, str, str, str]:
    """Orders entities before literals, then by text, so answers are deterministic."""
    if isinstance(node, str):
        return (0, node, "", "")
    return (1, node.value, node.datatype or "", node.lang or "")


def edge_sort_key(edge: Edge) -> tuple[str, str, tuple[int, str, str, str]]:
    return (edge.head, edge.relation, node_sort_key(edge.tail))
