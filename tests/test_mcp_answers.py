"""``kga mcp`` answers an LLM can use: sized by ``--max-chars`` with pages behind signed cursors, names once
per answer, unknown entities and relations refused with the closest matches, relations by direction,
and the ``schema`` tool. Driven by the MCP SDK's own client, in memory and through a real ``kga mcp``."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from support.servers import KGA

from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph
from kg_adapters.records import Edge, Literal, to_json
from kg_adapters.serve.mcp_server import ToolBudgets
from loaders import load_files

mcp = pytest.importorskip("mcp")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from support.mcp_session import in_memory  # noqa: E402

TOM = "m.0bxtg"
USA = "m.09c7w0"  # the sample's hub


def run_session(url: str, body: Callable[[Client], Awaitable[None]], budgets: ToolBudgets | None = None) -> None:
    in_memory(url, budgets)(body)


def edge_json(edge: Edge) -> list[Any]:
    tail = edge.tail
    if isinstance(tail, Literal):
        return [edge.head, edge.relation, {key: part for key, part in to_json(tail).items() if part is not None}]
    return [edge.head, edge.relation, tail]


def answer(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    found = result.structured_content
    text = result.content[0].text
    assert text == json.dumps(found, ensure_ascii=False, separators=(",", ":")), "text content = structured content"
    return dict(found)


def error(result: Any) -> str:
    assert result.is_error, result.structured_content
    text: str = result.content[0].text
    assert "\n" not in text
    return text


async def every_page(client: Client, tool: str, arguments: dict[str, Any], max_chars: int) -> list[dict[str, Any]]:
    """Every page of a call, following next_cursor; each page within ``max_chars``."""
    pages = []
    cursor = None
    while True:
        found = answer(await client.call_tool(tool, {**arguments, **({"cursor": cursor} if cursor else {})}))
        text = json.dumps(found, ensure_ascii=False, separators=(",", ":"))
        assert len(text) <= max_chars, (tool, len(text))
        pages.append(found)
        cursor = found.get("next_cursor")
        if cursor is None:
            return pages
        assert found["truncated"] is True and "cursor" in found["more"]
        assert len(pages) < 200


@pytest.fixture(scope="module")
def kg(sample_store_url: str) -> Iterator[KnowledgeGraph]:
    with connect(sample_store_url) as graph:
        yield graph


def test_pages_by_size_hold_the_whole_answer_once(sample_store_url: str, kg: KnowledgeGraph) -> None:
    """At the smallest --max-chars every hub answer comes in pages that fit, each item once, in order,
    with the labels of exactly the ids on the page."""
    budgets = ToolBudgets(max_chars=2000)
    subgraph = kg.subgraph(USA, hops=2, max_edges=500)
    rows = kg.query("SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT 300")  # type: ignore[attr-defined]
    neighbours = kg.neighbors(USA, direction="both", limit_per_entity=500)[USA]
    assert len(subgraph) == 500 and subgraph.truncated and len(neighbours) > 30

    async def body(client: Client) -> None:
        pages = await every_page(client, "subgraph", {"seeds": USA, "hops": 2, "max_edges": 500}, budgets.max_chars)
        assert len(pages) > 5
        edges = [edge for found in pages for edge in found["edges"]]
        assert edges == [edge_json(e) for e in subgraph]
        for found in pages:
            on_page = {x for edge in found["edges"] for x in (edge[0], edge[1], edge[2]) if isinstance(x, str)}
            assert set(found["labels"]) <= on_page
            assert found["labels"] == {x: name for x, name in kg.labels(sorted(on_page)).items()}
        assert pages[-1]["truncated"] is True and "max_edges=500" in pages[-1]["more"]  # the count cut, said last
        assert "next_cursor" not in pages[-1]

        pages = await every_page(
            client, "sparql", {"query": "SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT 300"}, budgets.max_chars
        )
        assert sum(len(found["rows"]) for found in pages) == len(rows) == 300

        pages = await every_page(
            client,
            "neighbors",
            {"ids": USA, "direction": "both", "limit_per_entity": 500},
            budgets.max_chars,
        )
        edges = [edge for found in pages for entry in found["neighbors"] for edge in entry["edges"]]
        assert len(edges) == len(neighbours) and all(entry["id"] == USA for f in pages for entry in f["neighbors"])

    run_session(sample_store_url, body, budgets)


def test_default_budget_cuts_a_hub_and_says_how_to_get_the_rest(sample_store_url: str, kg: KnowledgeGraph) -> None:
    async def body(client: Client) -> None:
        found = answer(await client.call_tool("subgraph", {"seeds": USA, "hops": 2}))
        size = len(json.dumps(found, separators=(",", ":")))
        assert size <= 24_000 and found["truncated"] is True
        assert "--max-chars" in found["more"] and found["next_cursor"]
        # names once per answer: every edge holds ids only
        assert all(isinstance(part, str) or "value" in part for e in found["edges"] for part in e)

    run_session(sample_store_url, body)


def test_cursors_are_validated(sample_store_url: str) -> None:
    async def body(client: Client) -> None:
        asked = {"seeds": USA, "hops": 2, "max_edges": 500}
        found = answer(await client.call_tool("subgraph", asked))
        cursor = found["next_cursor"]
        again = answer(await client.call_tool("subgraph", {**asked, "cursor": cursor}))
        assert again["edges"][0] != found["edges"][0]
        other_tool = error(await client.call_tool("neighbors", {"ids": USA, "cursor": cursor}))
        assert "another call" in other_tool
        other_arguments = error(await client.call_tool("subgraph", {**asked, "max_edges": 400, "cursor": cursor}))
        assert "another call" in other_arguments
        edited = cursor[:-3] + ("AAA" if not cursor.endswith("AAA") else "BBB")
        assert "cursor" in error(await client.call_tool("subgraph", {**asked, "cursor": edited}))
        assert "cursor" in error(await client.call_tool("subgraph", {"seeds": USA, "cursor": "x" * 10_000}))

    run_session(sample_store_url, body, ToolBudgets(max_chars=3000))


def test_unknown_entities_and_relations_are_errors_that_suggest(sample_store_url: str, kg: KnowledgeGraph) -> None:
    async def body(client: Client) -> None:
        message = error(await client.call_tool("neighbors", {"ids": TOM, "relations": ["place_of_birth"]}))
        assert "unknown relation 'place_of_birth'" in message and "people.person.place_of_birth" in message
        message = error(await client.call_tool("paths", {"starts": TOM, "relation_path": ["people.person.birthplace"]}))
        assert "unknown relation" in message and "people.person.place_of_birth" in message
        message = error(await client.call_tool("schema", {"relations": ["film.film.directed_by"]}))
        assert "unknown relation 'film.film.directed_by'" in message
        # an id the graph does not hold, for every tool that takes ids
        unknown: list[tuple[str, dict[str, Any]]] = [
            ("describe", {"ids": [TOM, "m.0zzzzzz"]}),
            ("neighbors", {"ids": "m.0zzzzzz"}),
            ("relations", {"ids": "m.0zzzzzz"}),
            ("paths", {"starts": "m.0zzzzzz", "relation_path": ["people.person.place_of_birth"]}),
            ("shortest_paths", {"sources": TOM, "targets": "m.0zzzzzz"}),
            ("subgraph", {"seeds": "m.0zzzzzz"}),
        ]
        for tool, arguments in unknown:
            message = error(await client.call_tool(tool, arguments))
            assert "unknown entity 'm.0zzzzzz'" in message and "search" in message, (tool, message)
        # a name where an id belongs: the entity of that name is suggested
        message = error(await client.call_tool("describe", {"ids": "Tom Hanks"}))
        assert "unknown entity 'Tom Hanks'" in message and f"{TOM} (Tom Hanks)" in message
        # an entity without edges of the kind asked for is no error
        found = answer(await client.call_tool("neighbors", {"ids": TOM, "relations": ["film.film.genre"]}))
        assert found["neighbors"] == [{"id": TOM, "edges": []}] and found["truncated"] is False

    run_session(sample_store_url, body)


def test_relations_by_direction_and_paths_default_out(sample_store_url: str, kg: KnowledgeGraph) -> None:
    async def body(client: Client) -> None:
        found = answer(await client.call_tool("relations", {"ids": TOM}))
        entry = found["relations"][0]
        assert entry["out"] == kg.relations(TOM, direction="out")[TOM]
        assert entry["in"] == kg.relations(TOM, direction="in")[TOM]
        assert entry["out"] and entry["in"]
        for side in ("out", "in"):  # each relation walks the way it is listed
            walked = answer(
                await client.call_tool("neighbors", {"ids": TOM, "direction": side, "relations": entry[side][:1]})
            )
            assert walked["neighbors"][0]["edges"], side
        both = answer(
            await client.call_tool("neighbors", {"ids": [USA, TOM], "relations": ["people.person.place_of_birth"]})
        )
        assert [entry["id"] for entry in both["neighbors"]] == [USA, TOM]  # in the order asked, none left out
        assert both["neighbors"][0]["edges"] == [] and len(both["neighbors"][1]["edges"]) == 1
        assert set(both["labels"]) == {USA, TOM, "m.0qymv"}
        only_out = answer(await client.call_tool("relations", {"ids": TOM, "direction": "out"}))
        assert set(only_out["relations"][0]) == {"id", "out"}
        walk = answer(await client.call_tool("paths", {"starts": TOM, "relation_path": entry["out"][:1]}))
        assert walk["directions"] == ["out"] and walk["paths"]
        backwards = answer(
            await client.call_tool("paths", {"starts": TOM, "relation_path": entry["out"][:1], "directions": ["in"]})
        )
        assert backwards["directions"] == ["in"] and backwards["paths"] == []
        message = error(
            await client.call_tool("paths", {"starts": TOM, "relation_path": entry["out"][:1], "directions": []})
        )
        assert "one entry per hop" in message

    run_session(sample_store_url, body)


TYPED = """\
@prefix ex: <http://example.org/> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:alice rdf:type ex:Person ; ex:bornIn ex:paris ; ex:age 42 ; rdfs:label "Alice" .
ex:bob rdf:type ex:Person ; ex:bornIn ex:rome ; ex:age 40 .
ex:carol rdf:type ex:Person , ex:Author ; ex:bornIn ex:paris .
ex:paris rdf:type ex:City ; rdfs:label "Paris" .
ex:rome rdf:type ex:City .
ex:Person rdfs:label "person" .
"""


@pytest.mark.parametrize("index", [True, False], ids=["traversal-index", "sparql-counts"])
def test_schema_lists_relations_with_counts_examples_and_types(tmp_path: Path, index: bool) -> None:
    source = tmp_path / "typed.ttl"
    source.write_text(TYPED, encoding="utf-8")
    load_files([str(source)], str(tmp_path / "store"), progress=False)
    url = f"oxigraph://{(tmp_path / 'store').resolve()}?index={'true' if index else 'false'}"
    ex = "http://example.org/"

    async def body(client: Client) -> None:
        first = answer(await client.call_tool("schema", {"limit": 2}))
        assert first["relation_count"] == 4  # bornIn, age, type, label
        assert first["truncated"] is True and first["next_cursor"] and len(first["relations"]) == 2
        rest = answer(await client.call_tool("schema", {"limit": 2, "cursor": first["next_cursor"]}))
        assert rest["truncated"] is False and "next_cursor" not in rest
        listed = {entry["id"]: entry for entry in first["relations"] + rest["relations"]}
        assert set(listed) == {ex + "bornIn", ex + "age", RDF_TYPE, RDFS_LABEL}
        born = listed[ex + "bornIn"]
        assert born["count"] == 3 and len(born["examples"]) == 3
        assert all(example[1] == ex + "bornIn" for example in born["examples"])
        assert born["head_types"] == [{"id": ex + "Person", "count": 3}, {"id": ex + "Author", "count": 1}]
        assert born["tail_types"] == [{"id": ex + "City", "count": 2}]
        assert listed[ex + "age"]["count"] == 2 and listed[ex + "age"]["tail_types"] == []
        assert first["labels"].get(ex + "Person", rest["labels"].get(ex + "Person")) == "person"
        if index:  # counted by the traversal index: most edges first
            counts = [entry["count"] for entry in first["relations"] + rest["relations"]]
            assert counts == sorted(counts, reverse=True)
        only = answer(await client.call_tool("schema", {"relations": [ex + "age"]}))
        assert [entry["id"] for entry in only["relations"]] == [ex + "age"]

    run_session(url, body)


RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"


def test_search_relations_tool_understands_paraphrases(sample_store_url: str) -> None:
    async def body(client: Client) -> None:
        for text, relation in [
            ("where was he born", "people.person.place_of_birth"),
            ("what is her job", "people.person.profession"),
            ("nationality", "people.person.nationality"),
        ]:
            found = answer(await client.call_tool("search_relations", {"text": text, "limit": 5}))
            assert relation in [hit["id"] for hit in found["relations"]], (text, found)

    run_session(sample_store_url, body)


def test_a_real_kga_mcp_process_pages_by_its_max_chars(sample_store_url: str) -> None:
    params = StdioServerParameters(command=KGA, args=["mcp", "--kg", sample_store_url, "--max-chars", "2500"])

    async def main() -> None:
        async with Client(params) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert listed["subgraph"].input_schema["properties"]["max_edges"]["maximum"] == 500
            pages = await every_page(client, "subgraph", {"seeds": USA, "hops": 2, "max_edges": 200}, 2500)
            assert sum(len(found["edges"]) for found in pages) == 200

    anyio.run(main)
