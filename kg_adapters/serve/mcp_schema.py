"""What ``kga mcp`` tells an LLM about its tools: every parameter described with its default and, for the
server's caps (``--max-rows``, ``--max-hops``), its JSON-schema ``maximum``; and an output schema for every
answer. Imported only by :func:`kg_adapters.serve.mcp_server.build_server` (pydantic comes with the MCP SDK).

A count above its ``maximum`` is answered as the maximum (the answer says ``truncated`` when more exists);
hops above ``--max-hops`` are refused with a message naming the cap.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from kg_adapters.serve.mcp_server import ToolBudgets

Direction = Literal["out", "in", "both"]


# -- answers ---------------------------------------------------------------------------------------------
class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Page(_Answer):
    truncated: bool = Field(
        description="True when the answer does not hold everything that matched: `more` says how to get the rest."
    )
    next_cursor: str | None = Field(
        None,
        description="Present when the answer was cut by size: call the same tool with the same arguments and "
        "`cursor` set to this for the next page.",
    )
    more: str | None = Field(None, description="Present when truncated: one line on how to get the rest.")
    note: str | None = Field(
        None,
        description="Present when nothing was found for a reason worth knowing: why, and the call that finds "
        "something (e.g. a relation that is there when walked the other way).",
    )


class LiteralValue(_Answer):
    value: str = Field(description="The literal's text (a very long one is shortened, saying by how much).")
    datatype: str | None = Field(None, description="Its datatype IRI, when it is not a plain string.")
    lang: str | None = Field(None, description="Its language tag, when it has one.")


Node = Annotated[str | LiteralValue, Field(description="An entity id, or a literal {value, datatype?, lang?}.")]
EdgeTriple = Annotated[
    tuple[str, str, Node],
    Field(description="[head, relation, tail] in the graph's own direction, whichever way it was walked."),
]
Labels = Annotated[
    dict[str, str],
    Field(description="The labels of the entity and relation ids in this answer (those that have one), each once."),
]


class EntityHit(_Answer):
    id: str = Field(description="The entity id to pass to the other tools.")
    label: str | None = Field(None, description="Its label.")


class SearchAnswer(Page):
    entities: list[EntityHit] = Field(description="Entities whose label matches the text, best first.")


class RelationHit(_Answer):
    id: str = Field(description="The relation id to pass to neighbors, paths, schema.")
    label: str | None = Field(None, description="Its label, where the graph labels its relations.")


class SearchRelationsAnswer(Page):
    relations: list[RelationHit] = Field(description="Relations matching the text by words or meaning, best first.")


class DescribedEntity(_Answer):
    id: str = Field(description="The id asked about.")
    label: str | None = Field(None, description="Its label, if it has one.")
    description: str | None = Field(None, description="Its description, if it has one.")


class DescribeAnswer(Page):
    entities: list[DescribedEntity] = Field(description="One per id asked about, in order.")


class EntityEdges(_Answer):
    id: str = Field(description="An entity asked about.")
    edges: list[EdgeTriple] = Field(description="Its edges in this page of the answer.")


class NeighborsAnswer(Page):
    direction: Direction = Field(description="The direction walked: out (entity is the head), in (the tail), both.")
    neighbors: list[EntityEdges] = Field(description="The edges of each entity asked about.")
    labels: Labels


class EntityRelations(_Answer):
    id: str = Field(description="An entity asked about.")
    out: list[str] | None = Field(
        None, description="Relations on edges where the entity is the head: walk them with direction out."
    )
    in_: list[str] | None = Field(
        None, alias="in", description="Relations on edges where the entity is the tail: walk them with direction in."
    )


class RelationsAnswer(Page):
    relations: list[EntityRelations] = Field(description="The relations of each entity asked about, by direction.")
    labels: Labels


class PathValue(_Answer):
    start: str = Field(description="The entity the walk starts from.")
    edges: list[EdgeTriple] = Field(description="The edges walked, in order; the last one's far end is the answer.")


class PathsAnswer(Page):
    directions: list[Direction] = Field(description="The direction each hop was walked in.")
    paths: list[PathValue] = Field(description="Every walk found.")
    labels: Labels


class ShortestPathsAnswer(Page):
    paths: list[PathValue] = Field(description="All shortest paths between sources and targets.")
    labels: Labels


class SubgraphAnswer(Page):
    edges: list[EdgeTriple] = Field(description="Every distinct edge within the hops of the seeds.")
    labels: Labels


class SparqlAnswer(Page):
    rows: list[dict[str, Node | bool]] | None = Field(
        None, description="SELECT: one object per solution, variable -> value (unbound variables left out)."
    )
    boolean: bool | None = Field(None, description="ASK: the answer.")
    labels: dict[str, str] | None = Field(
        None, description="SELECT: the labels of the entity IRIs in the rows (those that have one), each once."
    )


class TypeCount(_Answer):
    id: str = Field(description="A type (the profile's type relation: rdf:type, type.object.type, P31).")
    count: int = Field(description="How many of the sampled heads (or tails) have it.")


class RelationSchema(_Answer):
    id: str = Field(description="The relation id.")
    label: str | None = Field(None, description="Its label, where the graph labels its relations.")
    count: int | None = Field(description="How many edges have it (null: not counted before the deadline).")
    count_is_lower_bound: bool | None = Field(None, description="True when counting stopped: at least `count`.")
    examples: list[EdgeTriple] = Field(description="A few of its edges, [head, relation, tail].")
    head_types: list[TypeCount] = Field(description="The most frequent types of its heads (a sample).")
    tail_types: list[TypeCount] = Field(description="The most frequent types of its entity tails (a sample).")


class SchemaAnswer(Page):
    relation_count: int = Field(description="How many relations the whole listing has (all pages).")
    relations: list[RelationSchema] = Field(description="This page of the relations, most edges first when known.")
    labels: Labels


ANSWERS: dict[str, type[Page]] = {
    "search": SearchAnswer,
    "search_relations": SearchRelationsAnswer,
    "describe": DescribeAnswer,
    "neighbors": NeighborsAnswer,
    "relations": RelationsAnswer,
    "paths": PathsAnswer,
    "shortest_paths": ShortestPathsAnswer,
    "subgraph": SubgraphAnswer,
    "sparql": SparqlAnswer,
    "schema": SchemaAnswer,
}
"""Each tool's answer model: its output schema, and what its structured content is validated against."""


# -- parameters --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Param:
    name: str
    kind: Any
    default: Any
    description: str
    """With ``{max_rows}``/``{max_hops}`` placeholders for the server's caps."""
    maximum: Callable[[ToolBudgets], int] | None = None
    minimum: int | None = None


def _max_rows(budgets: ToolBudgets) -> int:
    return budgets.max_rows


def _max_hops(budgets: ToolBudgets) -> int:
    return budgets.max_hops


_REQUIRED = inspect.Parameter.empty
_IDS = str | list[str]
CURSOR = Param(
    "cursor",
    str | None,
    None,
    "The next_cursor of an answer cut by size, to get its next page (with the same other arguments). "
    "Default: none, the first page.",
)
PARAMS: dict[str, list[Param]] = {
    "search": [
        Param("text", str, _REQUIRED, "The name, or words of the name, of the entity to find (e.g. 'Tom Hanks')."),
        Param("limit", int, 10, "Most entities to return. Default 10, at most {max_rows}.", _max_rows, 0),
        CURSOR,
    ],
    "search_relations": [
        Param(
            "text",
            str,
            _REQUIRED,
            "What the relation means, in your own words ('where was he born', 'directed by') or words of its id.",
        ),
        Param("limit", int, 10, "Most relations to return. Default 10, at most {max_rows}.", _max_rows, 0),
        CURSOR,
    ],
    "describe": [
        Param("ids", _IDS, _REQUIRED, "One entity id or a list of them (at most {max_rows})."),
        Param("lang", str, "en", "Language tag of the labels and descriptions. Default 'en'."),
        CURSOR,
    ],
    "neighbors": [
        Param("ids", _IDS, _REQUIRED, "One entity id or a list of them (at most {max_rows})."),
        Param(
            "direction",
            Direction,
            "out",
            "out: edges where the entity is the head; in: where it is the tail; both. Default 'out'.",
        ),
        Param(
            "relations",
            list[str] | None,
            None,
            "Only edges with these relation ids (see relations or search_relations). Default: every relation "
            "(the graph's plumbing relations left out).",
        ),
        Param(
            "limit_per_entity",
            int,
            50,
            "Most edges per entity. Default 50, at most {max_rows} (and {max_rows} edges per call).",
            _max_rows,
            0,
        ),
        CURSOR,
    ],
    "relations": [
        Param("ids", _IDS, _REQUIRED, "One entity id or a list of them (at most {max_rows})."),
        Param(
            "direction",
            Direction,
            "both",
            "out: relations of edges where the entity is the head; in: the tail; both: each listed under its own "
            "direction. Default 'both'.",
        ),
        CURSOR,
    ],
    "paths": [
        Param("starts", _IDS, _REQUIRED, "The entity id (or ids, at most {max_rows}) the walks start from."),
        Param(
            "relation_path",
            list[str],
            _REQUIRED,
            "The relation ids to follow, one per hop, e.g. ['people.person.place_of_birth', "
            "'location.location.containedby'].",
        ),
        Param(
            "directions",
            list[Direction] | None,
            None,
            "One direction per hop: out follows the relation from head to tail, in from tail to head, both "
            "either way. Default: out for every hop.",
        ),
        Param("max_paths", int, 100, "Most paths to return. Default 100, at most {max_rows}.", _max_rows, 0),
        CURSOR,
    ],
    "shortest_paths": [
        Param("sources", _IDS, _REQUIRED, "Entity id (or ids, at most {max_rows}) the paths start from."),
        Param("targets", _IDS, _REQUIRED, "Entity id (or ids, at most {max_rows}) the paths end at."),
        Param("max_hops", int, 3, "Longest path in edges (either way). Default 3, at most {max_hops}.", _max_hops, 0),
        Param("max_paths", int, 50, "Most paths to return. Default 50, at most {max_rows}.", _max_rows, 0),
        CURSOR,
    ],
    "subgraph": [
        Param("seeds", _IDS, _REQUIRED, "Entity id (or ids, at most {max_rows}) to start from."),
        Param("hops", int, 1, "Edges from the seeds (either way). Default 1, at most {max_hops}.", _max_hops, 0),
        Param("max_edges", int, 500, "Most edges. Default 500, at most {max_rows}.", _max_rows, 0),
        CURSOR,
    ],
    "sparql": [
        Param(
            "query",
            str,
            _REQUIRED,
            "A SPARQL SELECT or ASK query with full IRIs. At most {max_rows} rows are read (add LIMIT/ORDER BY "
            "for the ones you want).",
        ),
        CURSOR,
    ],
    "schema": [
        Param(
            "relations",
            list[str] | None,
            None,
            "Only these relation ids (from search_relations or relations). Default: every relation of the graph.",
        ),
        Param("limit", int, 20, "Most relations per page. Default 20, at most {max_rows}.", _max_rows, 1),
        CURSOR,
    ],
}


def signature(tool: str, budgets: ToolBudgets, returns: Any) -> inspect.Signature:
    """The tool function's signature as the MCP SDK reads it: annotated parameters (description, default,
    minimum, and the server's cap as ``maximum``) and the answer type."""
    parameters = []
    for param in PARAMS[tool]:
        schema_extra: dict[str, Any] = {}
        if param.maximum is not None:
            schema_extra["maximum"] = param.maximum(budgets)
        if param.minimum is not None:
            schema_extra["minimum"] = param.minimum
        text = param.description.format(max_rows=budgets.max_rows, max_hops=budgets.max_hops)
        field = Field(description=text, json_schema_extra=schema_extra or None)
        parameters.append(
            inspect.Parameter(
                param.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=param.default,
                annotation=Annotated[param.kind, field],
            )
        )
    return inspect.Signature(parameters, return_annotation=returns)
