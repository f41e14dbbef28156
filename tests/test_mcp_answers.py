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
from kg_adapters.testing.virtuoso import VirtuosoServer
from loaders import load_files

mcp = pytest.importorskip("mcp")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from support.mcp_session import in_memory  # noqa: E402

TOM = "m.0bxtg"
BORN = "people.person.place_of_birth"
BIRTHPLACE = "m.0qymv"  # Tom Hanks's, in the sample
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
        # a walk the wrong way is explained, with the directions that walk it
        assert f"directions={json.dumps(['out'])}" in backwards["note"] and TOM in backwards["note"]
        assert "note" not in walk
        second_hop = answer(await client.call_tool("paths", {"starts": TOM, "relation_path": [BORN, BORN]}))
        assert second_hop["paths"] == [] and "hop 2" in second_hop["note"]
        assert f"directions={json.dumps(['out', 'in'])}" in second_hop["note"]
        turned = answer(
            await client.call_tool("paths", {"starts": TOM, "relation_path": [BORN, BORN], "directions": ["out", "in"]})
        )
        assert turned["paths"] and "note" not in turned
        nothing_either_way = answer(
            await client.call_tool(
                "paths", {"starts": TOM, "relation_path": ["film.film.genre"], "directions": ["both"]}
            )
        )
        assert nothing_either_way["paths"] == [] and "no such edge" in nothing_either_way["note"]
        assert "directions=" not in nothing_either_way["note"]
        backwards_neighbors = answer(
            await client.call_tool("neighbors", {"ids": TOM, "direction": "in", "relations": [BORN]})
        )
        assert backwards_neighbors["neighbors"] == [{"id": TOM, "edges": []}]
        assert "direction='out'" in backwards_neighbors["note"]
        two_hops = [edge.tail for edge in kg.neighbors(BIRTHPLACE)[BIRTHPLACE] if isinstance(edge.tail, str)]
        far = next(node for node in two_hops if not kg.shortest_paths(TOM, node, max_hops=1))
        unconnected = answer(await client.call_tool("shortest_paths", {"sources": TOM, "targets": far, "max_hops": 1}))
        assert unconnected["paths"] == [] and "at most 1 edge " in unconnected["note"]
        assert "raise max_hops (at most 3" in unconnected["note"]
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


def test_sparql_rows_name_their_entities(sample_store_url: str, kg: KnowledgeGraph) -> None:
    """Rows keep the full IRIs an agent writes in its next query; ``labels`` names the entities among them."""
    ns = "http://rdf.freebase.com/ns/"
    query = f"SELECT ?p ?o WHERE {{ <{ns}{TOM}> ?p ?o }}"

    async def body(client: Client) -> None:
        found = answer(await client.call_tool("sparql", {"query": query}))
        tails = {row["o"] for row in found["rows"] if isinstance(row["o"], str)}
        assert f"{ns}{BIRTHPLACE}" in tails
        expected = kg.labels([iri.removeprefix(ns) for iri in tails])
        assert found["labels"] == {ns + node: label for node, label in expected.items()}
        assert found["labels"][f"{ns}{BIRTHPLACE}"] == "Concord"
        assert not any(relation in found["labels"] for relation in (row["p"] for row in found["rows"]))
        asked = answer(await client.call_tool("sparql", {"query": "ASK { ?s ?p ?o }"}))
        assert asked == {"boolean": True, "truncated": False}

    run_session(sample_store_url, body)


def test_huge_labels_and_literals_keep_every_answer_within_max_chars(tmp_path: Path) -> None:
    """Hostile data: a name and a literal of 50,000 characters each. Every tool's answer still fits the
    smallest --max-chars, the long texts shortened saying by how much."""
    ex = "http://example.org/"
    huge = "x" * 50_000
    source = tmp_path / "huge.ttl"
    source.write_text(
        f"""@prefix ex: <{ex}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:a rdfs:label "alpha {huge}" ; rdfs:comment "{huge}" ; ex:knows ex:b ; ex:note "{huge}" .
ex:b rdfs:label "beta {huge}" ; ex:knows ex:a .
""",
        encoding="utf-8",
    )
    load_files([str(source)], str(tmp_path / "store"), progress=False)
    url = f"oxigraph://{(tmp_path / 'store').resolve()}"
    budgets = ToolBudgets(max_chars=2000)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search", {"text": "alpha"}),
        ("describe", {"ids": [ex + "a", ex + "b"]}),
        ("neighbors", {"ids": [ex + "a", ex + "b"], "direction": "both"}),
        ("relations", {"ids": [ex + "a", ex + "b"]}),
        ("paths", {"starts": ex + "a", "relation_path": [ex + "knows", ex + "knows"]}),
        ("shortest_paths", {"sources": ex + "a", "targets": ex + "b"}),
        ("subgraph", {"seeds": ex + "a", "hops": 2}),
        ("sparql", {"query": "SELECT * WHERE { ?s ?p ?o }"}),
        ("schema", {}),
    ]

    async def body(client: Client) -> None:
        for tool, arguments in calls:
            pages = await every_page(client, tool, arguments, budgets.max_chars)
            text = json.dumps(pages, ensure_ascii=False)
            assert "more characters]" in text, tool  # something long was there, and it says it was cut

    run_session(url, body, budgets)


WALKS_NT = """\
<http://example.org/alice> <http://example.org/bornIn> <http://example.org/paris> .
<http://example.org/bob> <http://example.org/bornIn> <http://example.org/rome> .
<http://example.org/paris> <http://example.org/capitalOf> <http://example.org/france> .
<http://example.org/rome> <http://example.org/capitalOf> <http://example.org/italy> .
<http://example.org/alice> <http://www.w3.org/2000/01/rdf-schema#label> "Alice" .
<http://example.org/paris> <http://www.w3.org/2000/01/rdf-schema#label> "Paris" .
"""


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The walks graph, for the conftest's ``virtuoso`` and ``disk_store`` fixtures."""
    path = tmp_path_factory.mktemp("walks") / "walks.nt"
    path.write_text(WALKS_NT, encoding="utf-8")
    return path


@pytest.mark.parametrize("backend", ["store", "rdflib", "virtuoso"])
def test_wrong_way_walks_are_explained_on_every_backend(
    backend: str, graph_file: Path, request: pytest.FixtureRequest
) -> None:
    """The same notes whatever answers the walks: an on-disk store, an rdflib file, a remote Virtuoso."""
    ex = "http://example.org/"
    if backend == "store":
        url = f"oxigraph://{request.getfixturevalue('disk_store')}"
    elif backend == "rdflib":
        url = f"rdflib://{graph_file}"
    else:
        server: VirtuosoServer = request.getfixturevalue("virtuoso")
        url = f"sparql+{server.sparql_url}?dialect=virtuoso&retries=0"

    async def body(client: Client) -> None:
        # from a city, "who was born here" walks bornIn in; out finds nothing, and the note says so
        wrong = answer(await client.call_tool("paths", {"starts": ex + "paris", "relation_path": [ex + "bornIn"]}))
        assert wrong["paths"] == [] and f"directions={json.dumps(['in'])}" in wrong["note"]
        right = answer(
            await client.call_tool(
                "paths", {"starts": ex + "paris", "relation_path": [ex + "bornIn"], "directions": ["in"]}
            )
        )
        assert [path["edges"] for path in right["paths"]] == [[[ex + "alice", ex + "bornIn", ex + "paris"]]]
        assert "note" not in right
        # the second hop of a person's walk: where the birthplace is the capital of
        second = answer(
            await client.call_tool(
                "paths",
                {
                    "starts": [ex + "alice", ex + "bob"],
                    "relation_path": [ex + "bornIn", ex + "capitalOf"],
                    "directions": ["out", "in"],
                },
            )
        )
        assert second["paths"] == [] and "hop 2" in second["note"] and "the 2 entities hop 1 reaches" in second["note"]
        assert f"directions={json.dumps(['out', 'out'])}" in second["note"]
        backwards = answer(await client.call_tool("neighbors", {"ids": ex + "paris", "relations": [ex + "bornIn"]}))
        assert backwards["neighbors"] == [{"id": ex + "paris", "edges": []}]
        assert "direction='in'" in backwards["note"]

    run_session(url, body)


def test_a_search_that_finds_nothing_says_why(sample_store_url: str) -> None:
    """A name holds every content word of the text, or it is not found: the note names the words no name
    holds (a typo) or finds the name without the word that is no part of it, instead of a bare []."""

    async def body(client: Client) -> None:
        typo = answer(await client.call_tool("search", {"text": "Tom Hankss"}))
        assert typo["entities"] == [] and "'hankss'" in typo["note"] and f"{TOM} (Tom Hanks)" in typo["note"]
        extra_word = answer(await client.call_tool("search", {"text": "the actor tom hanks"}))
        assert extra_word["entities"] == [] and f"'tom hanks' finds {TOM} (Tom Hanks)" in extra_word["note"]
        nothing = answer(await client.call_tool("search", {"text": "qqqq zzzz"}))
        assert nothing["entities"] == [] and "'qqqq', 'zzzz'" in nothing["note"]
        found = answer(await client.call_tool("search", {"text": "Tom Hanks"}))
        assert "note" not in found
        no_relation = answer(await client.call_tool("search_relations", {"text": "qqqq zzzz"}))
        assert no_relation["relations"] == [] and "schema" in no_relation["note"]

    run_session(sample_store_url, body)
