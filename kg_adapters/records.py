"""Frozen, keyword-only records returned by every backend.

Edges keep the KG's true direction whatever direction an operation walked them in; a
multigraph is never collapsed (two relations between one node pair are two edges).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

from kg_adapters.errors import InvalidTermError


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

    @overload
    def __init__(self, items: Mapping[str, Iterable[Node]], /) -> None: ...

    @overload
    def __init__(self, items: Iterable[tuple[str, Iterable[Node]]] = (), /) -> None: ...

    def __init__(self, items: Mapping[str, Iterable[Node]] | Iterable[tuple[str, Iterable[Node]]] = (), /) -> None:
        # two overloads, so a literal dict of mixed value lists is read as the mapping it is
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


@dataclass(frozen=True, kw_only=True, slots=True)
class RelationSummary:
    """One relation of a graph as a planner sees it (``GraphCatalog.relation_summaries``): how many edges
    it has, a few of them, and the types of their heads and tails in a bounded sample."""

    id: str
    label: str | None = None
    count: int | None = None
    """Edges with this relation; None when not counted (the deadline came first)."""
    count_is_lower_bound: bool = False
    """``count`` is where counting stopped: the relation has at least that many edges."""
    examples: tuple[Edge, ...] = ()
    head_types: tuple[tuple[str, int], ...] = ()
    """(type id, how many sampled heads have it), most frequent first."""
    tail_types: tuple[tuple[str, int], ...] = ()
    """The same for the entity tails (literal tails have no type)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class GraphCounts:
    """The size of a graph's default graph as far as it is known without scanning it (what a SPARQL
    service description states in VoID); None or empty where it is not known."""

    triples: int | None = None
    relations: int | None = None
    """How many distinct relations (predicates) it has."""
    per_relation: tuple[tuple[str, int | None], ...] = ()
    """(relation IRI, its triples, or None where not known), the largest first; possibly only the
    largest few (``relations`` tells how many there are)."""


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


# -- the one JSON codec for records ------------------------------------------------------------------
#
# Used by ``kga --json``, the result cache and reasoners' output files, so one shape is documented once:
#
#   node      an entity id as a string; a literal as {"value": ..., "datatype": ..., "lang": ...}
#   edge      [head, relation, tail] in the KG's own direction, plus one object when the edge carries
#             more: {"rank": ..., "qualifiers": {relation: [node, ...]}, "cvt": [edge, ...]} (keys present
#             only when set)
#   path      {"start": id, "edges": [edge, ...]}
#   entity    {"id": ..., "label": ..., "description": ...}
#   results   PathResult {"paths": [path, ...], "truncated": bool}; EdgeList {"edges": [...], "truncated": bool}
#
# Decoding is strict: anything that is not the shape above raises InvalidTermError (a ValueError).


def node_to_json(node: Node | bool) -> Any:
    """An entity id as itself, a literal as ``{"value", "datatype", "lang"}``, a boolean (an ASK
    answer or a query cell) as itself."""
    if isinstance(node, (str, bool)):
        return node
    if isinstance(node, Literal):
        return {"value": node.value, "datatype": node.datatype, "lang": node.lang}
    raise TypeError(f"not a node: {type(node).__name__}")


def term_from_json(data: Any) -> Node | bool:
    """The inverse of :func:`node_to_json`, booleans included (query rows)."""
    if isinstance(data, (str, bool)):
        return data
    if isinstance(data, dict) and isinstance(data.get("value"), str) and set(data) <= {"value", "datatype", "lang"}:
        datatype, lang = data.get("datatype"), data.get("lang")
        if (datatype is None or isinstance(datatype, str)) and (lang is None or isinstance(lang, str)):
            return Literal(value=data["value"], datatype=datatype, lang=lang)
    raise _not_a("node", data)


def node_from_json(data: Any) -> Node:
    """An entity id or a literal encoded by :func:`node_to_json`."""
    node = term_from_json(data)
    if isinstance(node, bool):
        raise _not_a("entity id or literal", data)
    return node


def edge_to_json(edge: Edge) -> list[Any]:
    """``[head, relation, tail]``, plus ``{"rank", "qualifiers", "cvt"}`` (only the keys set) when the
    edge is a statement or carries a CVT's edges."""
    encoded: list[Any] = [edge.head, edge.relation, node_to_json(edge.tail)]
    extra: dict[str, Any] = {}
    if edge.rank is not None:
        extra["rank"] = edge.rank
    if edge.qualifiers:
        extra["qualifiers"] = {
            relation: [node_to_json(v) for v in values] for relation, values in edge.qualifiers.items()
        }
    if edge.cvt:
        extra["cvt"] = [edge_to_json(inner) for inner in edge.cvt]
    if extra:
        encoded.append(extra)
    return encoded


def edge_from_json(data: Any) -> Edge:
    """The inverse of :func:`edge_to_json`."""
    if not isinstance(data, list) or len(data) not in (3, 4):
        raise _not_a("edge", data)
    head, relation, tail = data[:3]
    if not isinstance(head, str) or not isinstance(relation, str):
        raise _not_a("edge", data)
    if len(data) == 3:
        return Edge(head=head, relation=relation, tail=node_from_json(tail))
    extra = data[3]
    if not isinstance(extra, dict) or not set(extra) <= {"rank", "qualifiers", "cvt"}:
        raise _not_a("edge", data)
    rank, qualifiers, cvt = extra.get("rank"), extra.get("qualifiers", {}), extra.get("cvt", [])
    if not (rank is None or isinstance(rank, str)) or not isinstance(qualifiers, dict) or not isinstance(cvt, list):
        raise _not_a("edge", data)
    if not all(isinstance(values, list) for values in qualifiers.values()):
        raise _not_a("edge", data)
    return Edge(
        head=head,
        relation=relation,
        tail=node_from_json(tail),
        rank=rank,
        qualifiers=Qualifiers({q: [node_from_json(v) for v in values] for q, values in qualifiers.items()}),
        cvt=tuple(edge_from_json(inner) for inner in cvt),
    )


def path_to_json(path: Path) -> dict[str, Any]:
    """``{"start": id, "edges": [edge, ...]}``."""
    return {"start": path.start, "edges": [edge_to_json(edge) for edge in path.edges]}


def path_from_json(data: Any) -> Path:
    if not isinstance(data, dict) or set(data) != {"start", "edges"} or not isinstance(data["start"], str):
        raise _not_a("path", data)
    if not isinstance(data["edges"], list):
        raise _not_a("path", data)
    return Path(start=data["start"], edges=tuple(edge_from_json(edge) for edge in data["edges"]))


def entity_to_json(entity: Entity) -> dict[str, Any]:
    """``{"id", "label", "description"}`` (null where unknown)."""
    return {"id": entity.id, "label": entity.label, "description": entity.description}


def entity_from_json(data: Any) -> Entity:
    if not isinstance(data, dict) or not isinstance(data.get("id"), str) or not set(data) <= _ENTITY_KEYS:
        raise _not_a("entity", data)
    label, description = data.get("label"), data.get("description")
    if not (label is None or isinstance(label, str)) or not (description is None or isinstance(description, str)):
        raise _not_a("entity", data)
    return Entity(id=data["id"], label=label, description=description)


def path_result_to_json(result: PathResult) -> dict[str, Any]:
    """``{"paths": [path, ...], "truncated": bool}``."""
    return {"paths": [path_to_json(path) for path in result], "truncated": result.truncated}


def path_result_from_json(data: Any) -> PathResult:
    paths, truncated = _truncated_list(data, "paths", "path result")
    return PathResult([path_from_json(path) for path in paths], truncated=truncated)


def edge_list_to_json(edges: EdgeList) -> dict[str, Any]:
    """``{"edges": [edge, ...], "truncated": bool}``."""
    return {"edges": [edge_to_json(edge) for edge in edges], "truncated": edges.truncated}


def edge_list_from_json(data: Any) -> EdgeList:
    edges, truncated = _truncated_list(data, "edges", "edge list")
    return EdgeList([edge_from_json(edge) for edge in edges], truncated=truncated)


def _truncated_list(data: Any, key: str, what: str) -> tuple[list[Any], bool]:
    """The items and flag of ``{key: [...], "truncated": bool}``."""
    if not isinstance(data, dict) or set(data) != {key, "truncated"}:
        raise _not_a(what, data)
    items, truncated = data[key], data["truncated"]
    if not isinstance(items, list) or not isinstance(truncated, bool):
        raise _not_a(what, data)
    return items, truncated


def to_json(record: Node | bool | Edge | Path | Entity | PathResult | EdgeList) -> Any:
    """Any record in the codec's shape (see above); the ``*_from_json`` functions invert it."""
    if isinstance(record, Edge):
        return edge_to_json(record)
    if isinstance(record, Path):
        return path_to_json(record)
    if isinstance(record, Entity):
        return entity_to_json(record)
    if isinstance(record, PathResult):
        return path_result_to_json(record)
    if isinstance(record, EdgeList):
        return edge_list_to_json(record)
    return node_to_json(record)


_ENTITY_KEYS = frozenset({"id", "label", "description"})


def _not_a(what: str, data: Any) -> InvalidTermError:
    return InvalidTermError(f"not an encoded {what}: {data!r:.200}")
