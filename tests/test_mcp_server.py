"""``kga mcp`` driven by the MCP SDK's own client: in memory, and as a real ``kga mcp`` process over
stdio and over streamable HTTP on loopback. Every tool's answer equals the direct ``kg.*`` call;
bad arguments come back as one-line tool errors and the server keeps serving."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio
import pytest
from support.servers import KGA, free_port, running

from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph
from kg_adapters.records import Edge, Literal, Node
from kg_adapters.serve.current import CurrentGraph
from kg_adapters.serve.mcp_server import ToolBudgets, build_server

mcp = pytest.importorskip("mcp")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

FB = "http://rdf.freebase.com/ns/"
TOM = "m.0bxtg"  # Tom Hanks in the bundled sample
TOOLS = {
    "search": ["text", "limit"],
    "search_relations": ["text", "limit"],
    "describe": ["ids", "lang"],
    "neighbors": ["ids", "direction", "relations", "limit_per_entity"],
    "relations": ["ids", "direction"],
    "paths": ["starts", "relation_path", "directions", "max_paths"],
    "shortest_paths": ["sources", "targets", "max_hops", "max_paths"],
    "subgraph": ["seeds", "hops", "max_edges"],
    "sparql": ["query"],
}


# -- the expected answers, from the direct calls ------------------------------------------------------
def node(value: Node, names: dict[str, str]) -> dict[str, Any]:
    if isinstance(value, Literal):
        return {"value": value.value, "datatype": value.datatype, "lang": value.lang}
    return {"id": value, "name": names.get(value)}


def edges_json(kg: KnowledgeGraph, edges: list[Edge], extra: list[str] = ()) -> list[dict[str, Any]]:  # type: ignore[assignment]
    ids = {e.head for e in edges} | {e.tail for e in edges if isinstance(e.tail, str)} | set(extra)
    names = kg.labels(sorted(ids)) if ids else {}
    return [{"head": node(e.head, names), "relation": e.relation, "tail": node(e.tail, names)} for e in edges]


def expected_calls(kg: KnowledgeGraph) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(tool, arguments, the answer built from direct kg calls) for every tool."""
    first_relation = kg.relations(TOM)[TOM][0]
    walk = kg.paths(TOM, [first_relation], max_paths=100)
    target = str(walk[0].end)
    two_hops = kg.shortest_paths(TOM, target, max_hops=3, max_paths=50)
    neighbours = kg.neighbors(TOM, direction="in", limit_per_entity=51)[TOM]
    subgraph = kg.subgraph(TOM, hops=1, max_edges=500)
    all_path_edges = [edge for path in walk for edge in path.edges]
    names = kg.labels(sorted({TOM, *(e.head for e in all_path_edges), *(str(e.tail) for e in all_path_edges)}))

    def paths_json(result: Any) -> list[dict[str, Any]]:
        out = []
        for path in result:
            path_names = kg.labels(
                sorted(
                    {path.start, *(e.head for e in path.edges)}
                    | {e.tail for e in path.edges if isinstance(e.tail, str)}
                )
            )
            out.append({"start": node(path.start, path_names), "edges": edges_json(kg, list(path.edges))})
        return out

    described = kg.describe([TOM, target])
    return [
        (
            "search",
            {"text": "tom hanks", "limit": 3},
            {"entities": [{"id": e.id, "name": e.label} for e in kg.search("tom hanks", limit=3)], "truncated": False},
        ),
        (
            "search_relations",
            {"text": "place of birth", "limit": 2},
            {
                "relations": [{"id": e.id, "name": e.label} for e in kg.search_relations("place of birth", limit=2)],
                "truncated": len(kg.search_relations("place of birth", limit=3)) > 2,
            },
        ),
        (
            "describe",
            {"ids": [TOM, target]},
            {
                "entities": [
                    {"id": described[x].id, "name": described[x].label, "description": described[x].description}
                    for x in (TOM, target)
                ]
            },
        ),
        (
            "neighbors",
            {"ids": TOM, "direction": "in", "limit_per_entity": 50},
            {
                "neighbors": [{"entity": node(TOM, kg.labels(TOM)), "edges": edges_json(kg, neighbours[:50])}],
                "truncated": len(neighbours) > 50,
            },
        ),
        (
            "relations",
            {"ids": [TOM], "direction": "both"},
            {
                "relations": [{"id": TOM, "name": names[TOM], "relations": kg.relations(TOM, direction="both")[TOM]}],
                "truncated": False,
            },
        ),
        (  # the entity asked about is named even when it has no edges to name it
            "neighbors",
            {"ids": TOM, "relations": []},
            {"neighbors": [{"entity": {"id": TOM, "name": names[TOM]}, "edges": []}], "truncated": False},
        ),
        (
            "paths",
            {"starts": TOM, "relation_path": [first_relation]},
            {"paths": paths_json(walk), "truncated": walk.truncated},
        ),
        (
            "shortest_paths",
            {"sources": TOM, "targets": target},
            {"paths": paths_json(two_hops), "truncated": two_hops.truncated},
        ),
        (
            "subgraph",
            {"seeds": TOM},
            {"edges": edges_json(kg, list(subgraph)), "truncated": subgraph.truncated},
        ),
        (
            "sparql",
            {"query": f"SELECT ?n WHERE {{ <{FB}{TOM}> <{FB}type.object.name> ?n }}"},
            {"rows": [{"n": {"value": names[TOM], "datatype": None, "lang": "en"}}], "truncated": False},
        ),
    ]


BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("search", {"text": 5}, "text"),
    ("search", {}, "text"),
    ("neighbors", {"ids": "not an id!"}, "InvalidTermError"),
    ("neighbors", {"ids": TOM, "direction": "sideways"}, "direction"),
    ("neighbors", {"ids": []}, "ids"),
    ("paths", {"starts": TOM, "relation_path": [" bad relation"]}, "InvalidTermError"),
    ("subgraph", {"seeds": TOM, "hops": 99}, "--max-hops"),
    ("shortest_paths", {"sources": TOM, "targets": TOM, "max_paths": -1}, "max_paths"),
    ("sparql", {"query": "INSERT DATA { <http://a/b> <http://a/b> <http://a/c> }"}, "read-only"),
    ("sparql", {"query": "LOAD <http://example.org/data.nt>"}, "read-only"),
    ("sparql", {"query": "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }"}, "SERVICE"),
    ("sparql", {"query": "CONSTRUCT WHERE { ?s ?p ?o }"}, "CONSTRUCT"),
    ("sparql", {"query": "SELECT WHERE nonsense {"}, "QueryError"),
    ("no_such_tool", {}, "Unknown tool: no_such_tool"),
]

Session = Callable[[Callable[[Client], Awaitable[None]]], None]


def in_memory(url: str, budgets: ToolBudgets | None = None) -> Session:
    def run(body: Callable[[Client], Awaitable[None]]) -> None:
        graphs = CurrentGraph(url)
        server = build_server(graphs, budgets)

        async def main() -> None:
            async with Client(server) as client:
                await body(client)

        try:
            anyio.run(main)
        finally:
            graphs.close()

    return run


async def check_tools_listed(client: Client) -> None:
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(listed) == set(TOOLS)
    for name, arguments in TOOLS.items():
        schema = listed[name].input_schema
        assert list(schema["properties"]) == arguments, name
        description = listed[name].description
        assert description and len(description) > 40
    for name in ("describe", "neighbors", "relations"):  # one id or a list
        kinds = {option["type"] for option in listed[name].input_schema["properties"]["ids"]["anyOf"]}
        assert kinds == {"string", "array"}


async def check_answers(client: Client, kg: KnowledgeGraph) -> None:
    for name, arguments, expected in expected_calls(kg):
        result = await client.call_tool(name, arguments)
        assert not result.is_error, (name, result.content)
        assert result.structured_content == expected, name


async def check_bad_calls(client: Client) -> None:
    for name, arguments, mentioned in BAD_CALLS:
        result = await client.call_tool(name, arguments)
        assert result.is_error, (name, arguments)
        text = result.content[0].text  # type: ignore[union-attr]
        assert "\n" not in text and "Traceback" not in text and mentioned in text, (name, text)
        again = await client.call_tool("search", {"text": "tom hanks", "limit": 1})  # still serving
        assert not again.is_error and again.structured_content is not None
        assert again.structured_content["entities"] == [{"id": TOM, "name": "Tom Hanks"}]


@pytest.fixture(scope="module")
def kg(sample_store_url: str) -> Iterator[KnowledgeGraph]:
    with connect(sample_store_url) as graph:
        yield graph


def test_in_memory_tools_answers_and_errors(sample_store_url: str, kg: KnowledgeGraph) -> None:
    async def body(client: Client) -> None:
        await check_tools_listed(client)
        await check_answers(client, kg)
        await check_bad_calls(client)

    in_memory(sample_store_url)(body)


def test_budgets_truncate_and_say_so(sample_store_url: str, kg: KnowledgeGraph) -> None:
    async def body(client: Client) -> None:
        found = await client.call_tool("neighbors", {"ids": TOM, "limit_per_entity": 50})
        assert found.structured_content is not None
        assert len(found.structured_content["neighbors"][0]["edges"]) == 3
        assert found.structured_content["truncated"] is True
        edges = await client.call_tool("subgraph", {"seeds": TOM, "max_edges": 500})
        assert edges.structured_content is not None
        assert len(edges.structured_content["edges"]) == 3 and edges.structured_content["truncated"] is True
        rows = await client.call_tool("sparql", {"query": "SELECT ?s WHERE { ?s ?p ?o }"})
        assert rows.structured_content is not None
        assert len(rows.structured_content["rows"]) == 3 and rows.structured_content["truncated"] is True
        # billions of solutions: the store stops reading at the budget instead of materialising them all
        huge = await client.call_tool("sparql", {"query": "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"})
        assert not huge.is_error, huge.content
        assert huge.structured_content is not None and huge.structured_content["truncated"] is True
        assert len(huge.structured_content["rows"]) == 3
        small = await client.call_tool("neighbors", {"ids": TOM, "relations": ["people.person.place_of_birth"]})
        assert small.structured_content is not None and small.structured_content["truncated"] is False
        too_many: list[tuple[str, dict[str, Any]]] = [
            ("neighbors", {"ids": [TOM, "m.0a", "m.0b", "m.0c"]}),
            ("relations", {"ids": [TOM, "m.0a", "m.0b", "m.0c"]}),
            ("subgraph", {"seeds": [TOM, "m.0a", "m.0b", "m.0c"]}),
            ("shortest_paths", {"sources": TOM, "targets": [TOM, "m.0a", "m.0b", "m.0c"]}),
        ]
        for name, arguments in too_many:  # the row budget bounds the ids one call may ask about, not only the answer
            many = await client.call_tool(name, arguments)
            assert many.is_error and "--max-rows" in many.content[0].text, name  # type: ignore[union-attr]
        deep = await client.call_tool("shortest_paths", {"sources": TOM, "targets": TOM, "max_hops": 2})
        assert deep.is_error and "--max-hops" in deep.content[0].text  # type: ignore[union-attr]

    assert len(kg.neighbors(TOM)[TOM]) > 3
    in_memory(sample_store_url, ToolBudgets(max_rows=3, max_hops=1))(body)


def test_a_200_call_session(sample_store_url: str, kg: KnowledgeGraph) -> None:
    calls = expected_calls(kg)

    async def body(client: Client) -> None:
        for number in range(200):
            if number % 10 == 9:
                name, arguments, _ = BAD_CALLS[number // 10 % len(BAD_CALLS)]
                assert (await client.call_tool(name, arguments)).is_error
                continue
            name, arguments, expected = calls[number % len(calls)]
            result = await client.call_tool(name, arguments)
            assert not result.is_error and result.structured_content == expected, (number, name)

    in_memory(sample_store_url)(body)


def test_kga_mcp_over_stdio(sample_store_url: str, kg: KnowledgeGraph) -> None:
    params = StdioServerParameters(command=KGA, args=["mcp", "--kg", sample_store_url])

    async def main() -> None:
        async with Client(params) as client:
            await check_tools_listed(client)
            await check_answers(client, kg)
            await check_bad_calls(client)

    anyio.run(main)


def test_kga_mcp_over_streamable_http(sample_store_url: str, kg: KnowledgeGraph) -> None:
    port = free_port()
    with running(["mcp", "--kg", sample_store_url, "--transport", "http", "--port", str(port)], port):

        async def main() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                await check_tools_listed(client)
                await check_answers(client, kg)
                await check_bad_calls(client)

        anyio.run(main)


def test_a_call_past_the_time_budget_is_a_tool_error(sample_store_url: str) -> None:
    """A real process: the agent gets its answer at the deadline, and the graph serves the next call."""
    params = StdioServerParameters(command=KGA, args=["mcp", "--kg", sample_store_url, "--timeout", "1"])
    endless = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"

    async def main() -> None:
        async with Client(params) as client:
            result = await client.call_tool("sparql", {"query": endless})
            assert result.is_error
            assert "time budget" in result.content[0].text  # type: ignore[union-attr]
            after = await client.call_tool("search", {"text": "tom hanks"})  # the runaway holds nothing
            assert not after.is_error and after.structured_content is not None

    anyio.run(main)


def test_a_stalled_remote_call_frees_the_graph_at_the_time_budget() -> None:
    """--timeout bounds the remote request too: the next call gets the graph, instead of 'busy' for the
    backend's own 60 s plus retries."""
    from kg_adapters.testing.fault_server import FaultPlan, FaultServer

    data = '<http://example.org/s> <http://example.org/p> "o" .\n'
    with FaultServer(data=data, plan=FaultPlan(["stall"]), max_stall_seconds=120) as upstream:
        params = StdioServerParameters(command=KGA, args=["mcp", "--kg", f"sparql+{upstream.url}", "--timeout", "3"])

        async def main() -> None:
            async with Client(params) as client:
                stalled = await client.call_tool("sparql", {"query": "ASK { ?s ?p ?o }"})
                message = stalled.content[0].text  # type: ignore[union-attr]
                # the call's budget, or the backend's (the same length) if that one is noticed first
                assert stalled.is_error and ("time budget" in message or "took longer than 3 s" in message), message
                answered = await client.call_tool("sparql", {"query": "ASK { ?s ?p ?o }"})
                assert not answered.is_error and answered.structured_content == {"boolean": True, "truncated": False}

        anyio.run(main)
        assert upstream.plan.history == ["stall", "ok"]  # abandoned at the budget, not retried
