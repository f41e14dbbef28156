"""``kga mcp`` driven by the MCP SDK's own client: in memory, and as a real ``kga mcp`` process over
stdio and over streamable HTTP on loopback. Every tool's answer equals the direct ``kg.*`` call;
bad arguments come back as one-line tool errors and the server keeps serving."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from support.servers import KGA, free_port, running

from kg_adapters import connect
from kg_adapters._version import __version__
from kg_adapters.base import KnowledgeGraph
from kg_adapters.records import Edge, Literal, Node, node_to_json
from kg_adapters.serve.mcp_server import ToolBudgets

mcp = pytest.importorskip("mcp")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from support.mcp_session import in_memory  # noqa: E402

FB = "http://rdf.freebase.com/ns/"
TOM = "m.0bxtg"  # Tom Hanks in the bundled sample
TOOLS = {
    "search": ["text", "limit", "cursor"],
    "search_relations": ["text", "limit", "cursor"],
    "describe": ["ids", "lang", "cursor"],
    "neighbors": ["ids", "direction", "relations", "limit_per_entity", "cursor"],
    "relations": ["ids", "direction", "cursor"],
    "paths": ["starts", "relation_path", "directions", "max_paths", "cursor"],
    "shortest_paths": ["sources", "targets", "max_hops", "max_paths", "cursor"],
    "subgraph": ["seeds", "hops", "max_edges", "cursor"],
    "sparql": ["query", "cursor"],
    "schema": ["relations", "limit", "cursor"],
}


# -- the expected answers, from the direct calls ------------------------------------------------------
def node(value: Node) -> Any:
    """A literal with only the keys that are set; an id as itself."""
    if isinstance(value, Literal):
        return {key: part for key, part in node_to_json(value).items() if part is not None}
    return value


def edge(value: Edge) -> list[Any]:
    return [value.head, value.relation, node(value.tail)]


def labels_of(kg: KnowledgeGraph, edges: list[Edge], extra: list[str] = ()) -> dict[str, str]:  # type: ignore[assignment]
    """The ``labels`` map of an answer holding ``edges``: entity ends, relations (labelled where the graph
    labels them as entities) and ``extra`` ids."""
    ids = {e.head for e in edges} | {e.tail for e in edges if isinstance(e.tail, str)} | set(extra)
    ids |= {e.relation for e in edges}
    return kg.labels(sorted(ids)) if ids else {}


def paths_json(result: Any) -> list[dict[str, Any]]:
    return [{"start": path.start, "edges": [edge(e) for e in path.edges]} for path in result]


def expected_calls(kg: KnowledgeGraph) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(tool, arguments, the answer built from direct kg calls, without its ``more`` line) for every tool."""
    first_relation = kg.relations(TOM)[TOM][0]
    walk = kg.paths(TOM, [first_relation], max_paths=100)
    target = str(walk[0].end)
    two_hops = kg.shortest_paths(TOM, target, max_hops=3, max_paths=50)
    neighbours = kg.neighbors(TOM, direction="in", limit_per_entity=51)[TOM]
    subgraph = kg.subgraph(TOM, hops=1, max_edges=500)
    walk_edges = [e for path in walk for e in path.edges]
    names = kg.labels([TOM])
    described = kg.describe([TOM, target])
    summary = kg.relation_summaries([first_relation])[0]  # type: ignore[attr-defined]

    def entity(found: Any) -> dict[str, Any]:
        return {key: value for key, value in (("id", found.id), ("label", found.label)) if value is not None}

    return [
        (
            "search",
            {"text": "tom hanks", "limit": 3},
            {"entities": [entity(e) for e in kg.search("tom hanks", limit=3)], "truncated": False},
        ),
        (
            "search_relations",
            {"text": "place of birth", "limit": 2},
            {
                "relations": [entity(e) for e in kg.search_relations("place of birth", limit=2)],
                "truncated": len(kg.search_relations("place of birth", limit=3)) > 2,
            },
        ),
        (
            "describe",
            {"ids": [TOM, target]},
            {
                "entities": [
                    {
                        key: value
                        for key, value in (
                            ("id", described[x].id),
                            ("label", described[x].label),
                            ("description", described[x].description),
                        )
                        if value is not None
                    }
                    for x in (TOM, target)
                ],
                "truncated": False,
            },
        ),
        (
            "neighbors",
            {"ids": TOM, "direction": "in", "limit_per_entity": 50},
            {
                "direction": "in",
                "neighbors": [{"id": TOM, "edges": [edge(e) for e in neighbours[:50]]}],
                "labels": labels_of(kg, neighbours[:50], [TOM]),
                "truncated": len(neighbours) > 50,
            },
        ),
        (
            "relations",
            {"ids": [TOM], "direction": "both"},
            {
                "relations": [
                    {
                        "id": TOM,
                        "out": kg.relations(TOM, direction="out")[TOM],
                        "in": kg.relations(TOM, direction="in")[TOM],
                    }
                ],
                "labels": names,
                "truncated": False,
            },
        ),
        (  # the entity asked about is listed (and named) even when no edge is left to show
            "neighbors",
            {"ids": TOM, "relations": []},
            {"direction": "out", "neighbors": [{"id": TOM, "edges": []}], "labels": names, "truncated": False},
        ),
        (
            "paths",
            {"starts": TOM, "relation_path": [first_relation]},
            {
                "directions": ["out"],
                "paths": paths_json(walk),
                "labels": labels_of(kg, walk_edges, [TOM]),
                "truncated": walk.truncated,
            },
        ),
        (
            "shortest_paths",
            {"sources": TOM, "targets": target},
            {
                "paths": paths_json(two_hops),
                "labels": labels_of(kg, [e for p in two_hops for e in p.edges], [p.start for p in two_hops]),
                "truncated": two_hops.truncated,
            },
        ),
        (
            "subgraph",
            {"seeds": TOM},
            {
                "edges": [edge(e) for e in subgraph],
                "labels": labels_of(kg, list(subgraph)),
                "truncated": subgraph.truncated,
            },
        ),
        (
            "sparql",
            {"query": f"SELECT ?n WHERE {{ <{FB}{TOM}> <{FB}type.object.name> ?n }}"},
            {"rows": [{"n": {"value": names[TOM], "lang": "en"}}], "labels": {}, "truncated": False},
        ),
        (
            "schema",
            {"relations": [first_relation]},
            {
                "relation_count": 1,
                "relations": [
                    {
                        "id": first_relation,
                        "count": summary.count,
                        "examples": [edge(e) for e in summary.examples],
                        "head_types": [],
                        "tail_types": [],
                    }
                ],
                "labels": labels_of(kg, list(summary.examples)),
                "truncated": False,
            },
        ),
    ]


BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("search", {"text": 5}, "text"),
    ("search", {}, "text"),
    ("neighbors", {"ids": "not an id!"}, "unknown entity 'not an id!'"),
    ("neighbors", {"ids": TOM, "direction": "sideways"}, "direction"),
    ("neighbors", {"ids": []}, "ids"),
    ("paths", {"starts": TOM, "relation_path": [" bad relation"]}, "unknown relation ' bad relation'"),
    ("subgraph", {"seeds": TOM, "hops": 99}, "--max-hops"),
    ("shortest_paths", {"sources": TOM, "targets": TOM, "max_paths": -1}, "max_paths"),
    ("sparql", {"query": "INSERT DATA { <http://a/b> <http://a/b> <http://a/c> }"}, "read-only"),
    ("sparql", {"query": "LOAD <http://example.org/data.nt>"}, "read-only"),
    ("sparql", {"query": "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }"}, "SERVICE"),
    ("sparql", {"query": "CONSTRUCT WHERE { ?s ?p ?o }"}, "CONSTRUCT"),
    ("sparql", {"query": "SELECT WHERE nonsense {"}, "QueryError"),
    ("search", {"text": "tom", "cursor": "not-a-cursor"}, "cursor"),
    ("no_such_tool", {}, "Unknown tool: no_such_tool"),
]


def answer_of(result: Any) -> dict[str, Any]:
    """The structured content of a successful call, after checking that the text content is the same
    answer as compact JSON and that ``more`` is there exactly when the answer is truncated."""
    assert not result.is_error, result.content
    found = result.structured_content
    assert found is not None
    assert result.content[0].text == json.dumps(found, ensure_ascii=False, separators=(",", ":"))
    assert ("more" in found) == found["truncated"], found
    return dict(found)


async def check_tools_listed(client: Client, budgets: ToolBudgets = ToolBudgets()) -> None:  # noqa: B008
    info = client.server_info
    assert info is not None and info.name == "kg-adapters" and info.version == __version__
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(listed) == set(TOOLS)
    caps = {"limit": budgets.max_rows, "max_paths": budgets.max_rows, "limit_per_entity": budgets.max_rows}
    caps |= {"max_edges": budgets.max_rows, "hops": budgets.max_hops, "max_hops": budgets.max_hops}
    for name, arguments in TOOLS.items():
        tool = listed[name]
        schema = tool.input_schema
        assert list(schema["properties"]) == arguments, name
        assert tool.description and len(tool.description) > 40
        assert tool.annotations is not None and tool.annotations.read_only_hint
        for argument, prop in schema["properties"].items():
            assert len(prop.get("description", "")) > 20, (name, argument)
            if argument not in schema.get("required", []):  # every optional parameter states its default
                assert "default" in prop and "Default" in prop["description"], (name, argument)
            if argument in caps:
                assert prop["maximum"] == caps[argument], (name, argument)
        output = tool.output_schema
        assert output is not None and "truncated" in output["properties"], name
        assert all(p.get("description") for p in output["properties"].values()), name
    for name in ("describe", "neighbors", "relations"):  # one id or a list
        kinds = {option["type"] for option in listed[name].input_schema["properties"]["ids"]["anyOf"]}
        assert kinds == {"string", "array"}


async def check_answers(client: Client, kg: KnowledgeGraph) -> None:
    for name, arguments, expected in expected_calls(kg):
        result = await client.call_tool(name, arguments)
        found = answer_of(result)
        found.pop("more", None)
        assert found == expected, name


async def check_bad_calls(client: Client) -> None:
    for name, arguments, mentioned in BAD_CALLS:
        result = await client.call_tool(name, arguments)
        assert result.is_error, (name, arguments)
        text = result.content[0].text  # type: ignore[union-attr]
        assert "\n" not in text and "Traceback" not in text and mentioned in text, (name, text)
        again = await client.call_tool("search", {"text": "tom hanks", "limit": 1})  # still serving
        assert not again.is_error and again.structured_content is not None
        assert again.structured_content["entities"] == [{"id": TOM, "label": "Tom Hanks"}]


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
