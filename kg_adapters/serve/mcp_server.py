"""``kga mcp``: the graph as Model Context Protocol tools for LLM agents (official MCP Python SDK).

Tools mirror the Python API with its names and argument names (``search``, ``search_relations``,
``describe``, ``neighbors``, ``relations``, ``paths``, ``shortest_paths``, ``subgraph``, ``sparql``).
Answers are structured content an agent reads without another call: entities as
``{"id", "name"}``, edges as ``{"head", "relation", "tail"}`` with the names of both ends,
literals as ``{"value", "datatype", "lang"}``, and ``truncated: true`` whenever a budget cut the
answer. Every answer is bounded by ``max_rows`` (and the hop budget) and every call by ``timeout``;
bad arguments and backend failures come back as tool errors (``isError``) with a one-line
message, and the server keeps serving.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from kg_adapters.base import EmbeddedSparql, SparqlQueryable, check_direction
from kg_adapters.errors import InvalidTermError, KGError
from kg_adapters.records import Edge, Entity, Node, Path, PathResult, node_to_json
from kg_adapters.records import Literal as RdfLiteral
from kg_adapters.serve import check_limits, require_extra
from kg_adapters.serve.readonly import query_form

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from kg_adapters.base import KnowledgeGraph
    from kg_adapters.serve.current import CurrentGraph
    from kg_adapters.serve.workers import WorkerPool

INSTALL = "pip install 'kg-adapters[mcp]'"
Direction = Literal["out", "in", "both"]
_T = TypeVar("_T")

INSTRUCTIONS = (
    "Tools over one knowledge graph for knowledge-graph question answering. Typical flow: find the topic "
    "entity of the question with `search` (and relations with `search_relations`), look at its 1-hop "
    "neighbourhood with `relations` or `neighbors`, follow a relation path with `paths`, connect two entities "
    "with `shortest_paths`, or fetch a small `subgraph`. Ids are the graph's own (Freebase m.0d05w3, Wikidata "
    "Q42). Every answer is bounded; `truncated: true` means a budget cut it and more exists."
)


def require_mcp() -> None:
    require_extra(("mcp.server.mcpserver",), "kga mcp needs the MCP Python SDK", INSTALL)


@dataclass(frozen=True, kw_only=True)
class ToolBudgets:
    max_rows: int = 500
    """Most entities, edges, paths or rows in one answer."""
    max_hops: int = 3
    """Most hops for ``shortest_paths`` and ``subgraph``."""
    timeout: float = 30.0
    """Seconds one tool call may take."""

    def __post_init__(self) -> None:
        check_limits(self, counts=("max_rows", "max_hops"), seconds=("timeout",))


def one_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def node_json(node: Node, names: dict[str, str]) -> dict[str, Any]:
    """An entity as ``{"id", "name"}``; a literal as ``{"value", "datatype", "lang"}``."""
    if isinstance(node, RdfLiteral):
        return dict(node_to_json(node))
    return {"id": node, "name": names.get(node)}


def edge_json(edge: Edge, names: dict[str, str]) -> dict[str, Any]:
    return {"head": node_json(edge.head, names), "relation": edge.relation, "tail": node_json(edge.tail, names)}


def path_json(path: Path, names: dict[str, str]) -> dict[str, Any]:
    return {"start": node_json(path.start, names), "edges": [edge_json(edge, names) for edge in path.edges]}


def entity_json(entity: Entity) -> dict[str, Any]:
    return {"id": entity.id, "name": entity.label}


def edge_entities(edges: Sequence[Edge]) -> list[str]:
    found: dict[str, None] = {}
    for edge in edges:
        found[edge.head] = None
        if isinstance(edge.tail, str):
            found[edge.tail] = None
    return list(found)


def _ids(value: str | list[str], name: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not value:
        raise InvalidTermError(f"{name} must be an id or a non-empty list of ids")
    return list(dict.fromkeys(value))


class GraphTools:
    """The tools' logic, over a graph that follows store reloads; no MCP types here. Calls run
    concurrently, each in its own thread; ``sparql`` on the embedded store runs in ``workers`` (worker
    processes, stopped at the call's deadline), so a runaway query never holds anything another call needs."""

    def __init__(self, graphs: CurrentGraph, budgets: ToolBudgets, workers: WorkerPool | None = None) -> None:
        self.graphs = graphs
        self.budgets = budgets
        self.workers = workers

    def _run(self, work: Callable[[KnowledgeGraph], _T]) -> _T:
        with self.graphs.use() as kg:
            return work(kg)

    def _ids(self, value: str | list[str], name: str) -> list[str]:
        """One id or a list of them, at most ``max_rows`` (the budget bounds the work, not only the answer)."""
        wanted = _ids(value, name)
        if len(wanted) > self.budgets.max_rows:
            raise InvalidTermError(f"at most {self.budgets.max_rows} {name} per call (--max-rows), got {len(wanted)}")
        return wanted

    def _cap(self, value: int | None, name: str) -> int:
        if value is None:
            return self.budgets.max_rows
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidTermError(f"{name} must be an integer >= 0, got {value!r}")
        return min(value, self.budgets.max_rows)

    def _names(self, kg: KnowledgeGraph, ids: Sequence[str]) -> dict[str, str]:
        named = [node for node in ids if not node.startswith("_:")]
        return kg.labels(named) if named else {}

    def search(self, text: str, limit: int = 10) -> dict[str, Any]:
        cap = self._cap(limit, "limit")
        found = self._run(lambda kg: kg.search(text, limit=cap + 1))
        return {"entities": [entity_json(e) for e in found[:cap]], "truncated": len(found) > cap}

    def search_relations(self, text: str, limit: int = 10) -> dict[str, Any]:
        cap = self._cap(limit, "limit")
        found = self._run(lambda kg: kg.search_relations(text, limit=cap + 1))
        return {"relations": [entity_json(e) for e in found[:cap]], "truncated": len(found) > cap}

    def describe(self, ids: str | list[str], lang: str = "en") -> dict[str, Any]:
        wanted = self._ids(ids, "ids")
        found = self._run(lambda kg: kg.describe(wanted, lang=lang))
        return {
            "entities": [
                {"id": entity.id, "name": entity.label, "description": entity.description}
                for entity in (found[node] for node in wanted)
            ]
        }

    def neighbors(
        self,
        ids: str | list[str],
        direction: Direction = "out",
        relations: list[str] | None = None,
        limit_per_entity: int = 50,
    ) -> dict[str, Any]:
        wanted = self._ids(ids, "ids")
        check_direction(direction)
        cap = self._cap(limit_per_entity, "limit_per_entity")

        def work(kg: KnowledgeGraph) -> dict[str, Any]:
            found = kg.neighbors(wanted, direction=direction, relations=relations, limit_per_entity=cap + 1)
            truncated, budget, kept = False, self.budgets.max_rows, {}
            for node in wanted:
                edges = found[node]
                if len(edges) > cap:
                    edges, truncated = edges[:cap], True
                if len(edges) > budget:
                    edges, truncated = edges[:budget], True
                budget -= len(edges)
                kept[node] = edges
            names = self._names(kg, wanted + edge_entities([edge for edges in kept.values() for edge in edges]))
            return {
                "neighbors": [
                    {"entity": node_json(node, names), "edges": [edge_json(edge, names) for edge in edges]}
                    for node, edges in kept.items()
                ],
                "truncated": truncated,
            }

        return self._run(work)

    def relations(self, ids: str | list[str], direction: Direction = "out") -> dict[str, Any]:
        wanted = self._ids(ids, "ids")
        check_direction(direction)
        found, labels = self._run(lambda kg: (kg.relations(wanted, direction=direction), self._names(kg, wanted)))
        truncated, budget, kept = False, self.budgets.max_rows, []
        for node in wanted:
            names = found[node]
            if len(names) > budget:
                names, truncated = names[:budget], True
            budget -= len(names)
            kept.append({"id": node, "name": labels.get(node), "relations": names})
        return {"relations": kept, "truncated": truncated}

    def _paths(self, kg: KnowledgeGraph, result: PathResult, cap: int) -> dict[str, Any]:
        paths = list(result)[:cap]
        names = self._names(
            kg, edge_entities([edge for path in paths for edge in path.edges]) + [p.start for p in paths]
        )
        return {"paths": [path_json(path, names) for path in paths], "truncated": result.truncated or len(result) > cap}

    def paths(
        self,
        starts: str | list[str],
        relation_path: list[str],
        directions: list[Direction] | None = None,
        max_paths: int = 100,
    ) -> dict[str, Any]:
        wanted = self._ids(starts, "starts")
        cap = self._cap(max_paths, "max_paths")
        return self._run(
            lambda kg: self._paths(kg, kg.paths(wanted, relation_path, directions=directions, max_paths=cap), cap)
        )

    def shortest_paths(
        self, sources: str | list[str], targets: str | list[str], max_hops: int = 3, max_paths: int = 50
    ) -> dict[str, Any]:
        from_ids, to_ids = self._ids(sources, "sources"), self._ids(targets, "targets")
        cap = self._cap(max_paths, "max_paths")
        hops = self._hops(max_hops, "max_hops")
        return self._run(
            lambda kg: self._paths(kg, kg.shortest_paths(from_ids, to_ids, max_hops=hops, max_paths=cap), cap)
        )

    def subgraph(self, seeds: str | list[str], hops: int = 1, max_edges: int = 500) -> dict[str, Any]:
        wanted = self._ids(seeds, "seeds")
        cap = self._cap(max_edges, "max_edges")
        depth = self._hops(hops, "hops")

        def work(kg: KnowledgeGraph) -> dict[str, Any]:
            edges = kg.subgraph(wanted, hops=depth, max_edges=cap)
            names = self._names(kg, edge_entities(edges))
            return {"edges": [edge_json(edge, names) for edge in edges], "truncated": edges.truncated}

        return self._run(work)

    def sparql(self, query: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.budgets.timeout
        form = query_form(query, allowed=("SELECT", "ASK"))

        def work(kg: KnowledgeGraph) -> dict[str, Any]:
            cap = self.budgets.max_rows
            if isinstance(kg, EmbeddedSparql):
                # in a worker process stopped at the deadline; it stops reading at the budget, too
                runner = self.workers.runner(deadline) if self.workers is not None else None
                rows = kg.sparql_rows(query, max_rows=cap + 1, runner=runner)
            elif isinstance(kg, SparqlQueryable):  # a remote endpoint: its own deadline is the call's
                rows = kg.query(query)
            else:
                raise InvalidTermError("this graph does not answer SPARQL")
            if form == "ASK":
                return {"boolean": bool(rows[0]["boolean"]) if rows else False, "truncated": False}
            shown = [{name: node_to_json(value) for name, value in row.items()} for row in rows[:cap]]
            return {"rows": shown, "truncated": len(rows) > cap}

        return self._run(work)

    def _hops(self, value: int, name: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidTermError(f"{name} must be an integer >= 0, got {value!r}")
        if value > self.budgets.max_hops:
            raise InvalidTermError(f"{name} must be at most {self.budgets.max_hops} (--max-hops), got {value}")
        return value


DESCRIPTIONS = {
    "search": "Find entities by name: the topic entity of a question ('Tom Hanks' -> m.0bxtg). Exact names "
    "first, then prefixes, then all words. Start here when the question names something.",
    "search_relations": "Find relations by label or by the words of their id ('place of birth' -> "
    "people.person.place_of_birth), to choose a relation path without listing every relation.",
    "describe": "Name and description of one or more entity ids (to check that a candidate topic entity or "
    "answer is the right one).",
    "neighbors": "The 1-hop neighbourhood of entities: their edges (direction out: the entity is the head; in: "
    "the tail; both), optionally only the given relations; at most limit_per_entity edges per entity.",
    "relations": "The distinct relations on the edges of entities (their 1-hop relation set), to pick the next "
    "step of a relation path.",
    "paths": "Follow a relation path (e.g. [people.person.place_of_birth, location.location.containedby]) from "
    "start entities; the ends of the walks are the candidate answers. directions: one per hop (out, in, both).",
    "shortest_paths": "All shortest paths (at most max_hops edges, either direction) between source and target "
    "entities, to explain how two entities of a question are connected.",
    "subgraph": "Every edge within `hops` of the seed entities (a small evidence subgraph), at most max_edges.",
    "sparql": "A read-only SPARQL SELECT or ASK query on the graph (full IRIs); updates, LOAD and SERVICE are "
    "refused. Use the other tools first; this is the escape hatch.",
}


def build_server(
    graphs: CurrentGraph, budgets: ToolBudgets | None = None, workers: WorkerPool | None = None
) -> MCPServer:
    """An MCP server with the graph's tools, answering over ``graphs`` (``sparql`` on the embedded
    store in ``workers``; without them, in this process, where a query cannot be stopped)."""
    require_mcp()
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations

    tools = GraphTools(graphs, budgets or ToolBudgets(), workers)

    class GraphServer(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            """Every failure becomes a one-line tool error."""
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                raise ToolError(_tool_message(exc)) from None

    server = GraphServer("kg-adapters", instructions=INSTRUCTIONS, log_level="WARNING")
    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    for name, description in DESCRIPTIONS.items():
        tool = _guarded(getattr(tools, name), tools.budgets.timeout, ends_by_itself=name == "sparql")
        server.add_tool(tool, name=name, description=description, annotations=read_only)
    return server


def _guarded(
    method: Callable[..., dict[str, Any]], timeout: float, *, ends_by_itself: bool = False
) -> Callable[..., Awaitable[dict[str, Any]]]:
    """The tool function: runs ``method`` in a thread of its own and answers by the time budget (a call
    past it is abandoned to finish on its own; a SPARQL query's worker process is stopped); our errors
    become ToolError with a one-line message. ``ends_by_itself``: the work stops at ``timeout`` on its own
    (a worker process killed and replaced, a remote request's deadline): it gets a moment more to do so."""
    import functools

    import anyio
    from mcp.server.mcpserver.exceptions import ToolError

    from kg_adapters.serve.workers import DEADLINE_GRACE, DeadlinePassed

    past_budget = f"the call ran past the time budget of {timeout:g} s (--timeout)"
    limit = timeout + DEADLINE_GRACE if ends_by_itself else timeout

    @functools.wraps(method)
    async def tool(**arguments: Any) -> dict[str, Any]:
        try:
            with anyio.fail_after(limit):
                work = functools.partial(method, **arguments)
                return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
        except (TimeoutError, DeadlinePassed):
            raise ToolError(past_budget) from None
        except KGError as exc:
            raise ToolError(f"{type(exc).__name__}: {one_line(str(exc))}") from None

    return tool


def _tool_message(exc: Exception) -> str:
    """One line: argument validation errors as ``argument: problem``, others as their text."""
    from pydantic import ValidationError

    cause = exc.__cause__
    if isinstance(cause, ValidationError):
        problems = [
            f"{'.'.join(str(part) for part in error['loc']) or 'arguments'}: {error['msg']}" for error in cause.errors()
        ]
        return one_line("invalid arguments: " + "; ".join(problems))
    text = str(exc)
    if text.startswith("Error executing tool ") and ": " in text:  # the SDK's wrapper around our own message
        text = text.split(": ", 1)[1]
    return one_line(text)


def run(
    server: MCPServer,
    *,
    transport: str,
    host: str,
    port: int,
    announce: Callable[[str], None] | None = None,
    on_exit: Callable[[], None] | None = None,
) -> None:
    """Serves until the client disconnects (stdio) or the process is interrupted (http: on a socket
    bound before anything is announced, so a bad address or a busy port is a ``ListenError``;
    ``on_exit`` runs as soon as the stop is asked for)."""
    if transport == "stdio":
        server.run("stdio")
        return
    from kg_adapters.serve.listen import listening_socket, run_uvicorn

    sock = listening_socket(host, port)
    if announce is not None:
        announce(f"kga mcp: MCP endpoint at http://{host}:{port}/mcp")
    app = server.streamable_http_app(streamable_http_path="/mcp", host=host)  # as the SDK's own run() builds it
    run_uvicorn(app, sock, log_level=server.settings.log_level.lower(), on_exit=on_exit)
