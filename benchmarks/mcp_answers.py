"""``kga mcp`` answers on hubs: characters per answer before and after the size budget, and 6 quick calls
while a runaway query runs.

Run: ``.venv/bin/python -m benchmarks.mcp_answers [--store DIR] [--part sizes|concurrent|all]``.

*sizes*: FB15k-237 (``../shared/data``, freebase profile) and its biggest hub (the United States,
``m.09c7w0``). Each call is answered through the MCP SDK's client by the server as it is, with the default
budgets (``--max-rows 500``, ``--max-chars 24000``); the baseline is the answer the server gave before
this change, rebuilt from the same graph calls: indented JSON, every edge naming both ends, cut only by
``--max-rows``. Reported: the characters of one answer (the first page now), how many pages hold the
whole answer now, and their characters in all.

*concurrent*: a real ``kga mcp`` process over stdio; the time for 6 quick calls (search, search_relations,
describe, neighbors, relations, schema) issued at once, alone and while a runaway SPARQL query (a
four-way cross product) runs; medians of ``--repeats`` rounds, the ratio of the two.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from benchmarks.common import REPO_ROOT, fmt_seconds, machine_info, markdown_table, median, write_results
from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph
from kg_adapters.records import Edge, Literal, Node, node_to_json

FB15K = REPO_ROOT.parent / "shared" / "data" / "fb15k237-freebase.nt.gz"
HUB = "m.09c7w0"
CONTAINS = "location.location.contains"
KGA = str(Path(sys.executable).parent / "kga")
QUICK_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search", {"text": "Tom Hanks", "limit": 3}),
    ("search_relations", {"text": "where was he born", "limit": 5}),
    ("describe", {"ids": ["m.0bxtg", HUB]}),
    ("neighbors", {"ids": "m.0bxtg", "relations": ["people.person.place_of_birth"]}),
    ("relations", {"ids": "m.0bxtg"}),
    ("schema", {"relations": ["people.person.place_of_birth"]}),
]
RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"


# -- the answers before this change, rebuilt from the same graph calls ---------------------------------------
def _old_node(node: Node, names: dict[str, str]) -> Any:
    if isinstance(node, Literal):
        return node_to_json(node)
    return {"id": node, "name": names.get(node)}


def _old_edge(edge: Edge, names: dict[str, str]) -> dict[str, Any]:
    return {"head": _old_node(edge.head, names), "relation": edge.relation, "tail": _old_node(edge.tail, names)}


def _names(kg: KnowledgeGraph, edges: list[Edge]) -> dict[str, str]:
    ids = sorted({e.head for e in edges} | {e.tail for e in edges if isinstance(e.tail, str)})
    return kg.labels(ids) if ids else {}


def old_answers(kg: KnowledgeGraph) -> dict[str, int]:
    """Characters of each answer as the server wrote it before (indented JSON, names on every edge)."""
    sizes = {}
    subgraph = kg.subgraph(HUB, hops=2, max_edges=500)
    names = _names(kg, list(subgraph))
    answer: Any = {"edges": [_old_edge(e, names) for e in subgraph], "truncated": subgraph.truncated}
    sizes["subgraph hops=2"] = len(json.dumps(answer, indent=2, ensure_ascii=False))
    paths = kg.paths(HUB, [CONTAINS, CONTAINS], max_paths=500)
    names = _names(kg, [e for p in paths for e in p.edges])
    answer = {
        "paths": [{"start": _old_node(p.start, names), "edges": [_old_edge(e, names) for e in p.edges]} for p in paths],
        "truncated": paths.truncated,
    }
    sizes["paths max_paths=500"] = len(json.dumps(answer, indent=2, ensure_ascii=False))
    rows = kg.query("SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT 501")  # type: ignore[attr-defined]
    answer = {"rows": [{k: node_to_json(v) for k, v in row.items()} for row in rows[:500]], "truncated": True}
    sizes["sparql SELECT ?s ?p ?o"] = len(json.dumps(answer, indent=2, ensure_ascii=False))
    edges = kg.neighbors(HUB, direction="both", limit_per_entity=501)[HUB][:500]
    names = _names(kg, edges)
    answer = {
        "neighbors": [{"entity": _old_node(HUB, names), "edges": [_old_edge(e, names) for e in edges]}],
        "truncated": True,
    }
    sizes["neighbors both, limit 500"] = len(json.dumps(answer, indent=2, ensure_ascii=False))
    return sizes


CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "subgraph hops=2": ("subgraph", {"seeds": HUB, "hops": 2}),
    "paths max_paths=500": ("paths", {"starts": HUB, "relation_path": [CONTAINS, CONTAINS], "max_paths": 500}),
    "sparql SELECT ?s ?p ?o": ("sparql", {"query": "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"}),
    "neighbors both, limit 500": ("neighbors", {"ids": HUB, "direction": "both", "limit_per_entity": 500}),
}


async def new_answers(client: Any) -> dict[str, dict[str, int]]:
    """Characters of the first page, the number of pages of the whole answer and their characters."""
    found = {}
    for name, (tool, arguments) in CALLS.items():
        pages, total, first, cursor = 0, 0, 0, None
        while True:
            result = await client.call_tool(tool, {**arguments, **({"cursor": cursor} if cursor else {})})
            assert not result.is_error, result.content
            text = result.content[0].text
            pages += 1
            total += len(text)
            first = first or len(text)
            cursor = result.structured_content.get("next_cursor")
            if cursor is None:
                break
        found[name] = {"first_page_chars": first, "pages": pages, "all_pages_chars": total}
    return found


def sizes_part(store: Path) -> dict[str, Any]:
    from mcp import Client

    from kg_adapters.serve.current import CurrentGraph
    from kg_adapters.serve.mcp_server import build_server

    url = f"oxigraph://{store}?profile=freebase"
    with connect(url) as kg:
        before = old_answers(kg)
    graphs = CurrentGraph(url)
    after: dict[str, dict[str, int]] = {}

    async def main() -> None:
        async with Client(build_server(graphs)) as client:
            after.update(await new_answers(client))

    try:
        anyio.run(main)
    finally:
        graphs.close()
    return {"before_chars": before, "after": after}


# -- 6 quick calls while a runaway query runs ----------------------------------------------------------------
async def _timed_quick_calls(client: Any) -> tuple[float, list[str]]:
    """Seconds until all 6 quick calls answered (issued at once), and the ones that failed."""
    started = time.perf_counter()
    failures: list[str] = []

    async def one(tool: str, arguments: dict[str, Any]) -> None:
        result = await client.call_tool(tool, arguments)
        if result.is_error:
            failures.append(f"{tool}: {result.content[0].text}")

    async with anyio.create_task_group() as group:
        for tool, arguments in QUICK_CALLS:
            group.start_soon(one, tool, arguments)
    return time.perf_counter() - started, failures


def concurrent_part(store: Path, repeats: int, timeout: float) -> dict[str, Any]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    url = f"oxigraph://{store}?profile=freebase"
    params = StdioServerParameters(command=KGA, args=["mcp", "--kg", url, "--timeout", str(timeout)])
    alone: list[float] = []
    beside: list[float] = []
    failed: list[int] = []
    errors: list[str] = []

    async def main() -> None:
        async with Client(params) as client:
            await _timed_quick_calls(client)  # warm: encoder, indexes, relation vectors
            for _ in range(repeats):
                seconds, failures = await _timed_quick_calls(client)
                if failures:
                    raise RuntimeError(f"a quick call failed on its own: {failures}")
                alone.append(seconds)
                async with anyio.create_task_group() as group:

                    async def runaway() -> None:
                        await client.call_tool("sparql", {"query": RUNAWAY})

                    group.start_soon(runaway)
                    await anyio.sleep(0.5)  # the runaway query is running (a benchmark may wait; tests may not)
                    seconds, failures = await _timed_quick_calls(client)
                    beside.append(seconds)
                    failed.append(len(failures))
                    errors.extend(failure[:200] for failure in failures[:1])

    anyio.run(main)
    return {
        "repeats": repeats,
        "timeout_seconds": timeout,
        "alone_median_seconds": median(alone),
        "beside_runaway_median_seconds": median(beside),
        "ratio": median(beside) / median(alone),
        "failed_calls_per_round": failed,
        "errors": errors[:3],
    }


def fb15k_store(directory: Path) -> Path:
    from loaders import load_files

    store = directory / "fb15k237"
    if not (store / "kga-store.json").is_file():
        load_files([str(FB15K)], str(store), profile="freebase", progress=False)
    return store.resolve()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", help="work directory for the FB15k-237 store (default: a temporary one)")
    parser.add_argument("--part", choices=["sizes", "concurrent", "all"], default="all")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=10.0, help="kga mcp --timeout for the concurrent part")
    args = parser.parse_args()
    load_before = os.getloadavg()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="kga-mcp-bench-") as tmp:
        store = fb15k_store(Path(args.store) if args.store else Path(tmp))
        if args.part in ("sizes", "all"):
            results["sizes"] = sizes_part(store)
        if args.part in ("concurrent", "all"):
            results["concurrent"] = concurrent_part(store, args.repeats, args.timeout)
    load_after = os.getloadavg()
    lines = [
        "# kga mcp answers on hubs (FB15k-237)",
        "",
        f"1-minute load average {load_before[0]:.1f} at the start, {load_after[0]:.1f} at the end.",
    ]
    if "sizes" in results:
        before, after = results["sizes"]["before_chars"], results["sizes"]["after"]
        rows = [
            [
                name,
                f"{before[name]:,}",
                f"{after[name]['first_page_chars']:,}",
                f"{after[name]['first_page_chars'] / before[name]:.2f}x",
                str(after[name]["pages"]),
                f"{after[name]['all_pages_chars']:,} ({after[name]['all_pages_chars'] / before[name]:.2f}x)",
            ]
            for name in CALLS
        ]
        lines += [
            "",
            f"Hub {HUB} (United States); default budgets (--max-rows 500, --max-chars 24000).",
            "",
            markdown_table(
                ["call", "chars before", "chars now (one answer)", "now / before", "pages", "all pages now"], rows
            ),
        ]
    if "concurrent" in results:
        found = results["concurrent"]
        lines += [
            "",
            f"6 quick calls at once, a real kga mcp (--timeout {found['timeout_seconds']:g}), median of "
            f"{found['repeats']}: alone {fmt_seconds(found['alone_median_seconds'])}, while a runaway query runs "
            f"{fmt_seconds(found['beside_runaway_median_seconds'])} ({found['ratio']:.2f}x); calls of the 6 that "
            f"failed in each round beside it: {found['failed_calls_per_round']}"
            + (f" (e.g. {found['errors'][0]})" if found["errors"] else "")
            + ".",
        ]
    markdown = "\n".join(lines)
    print(markdown)
    results |= {"load_average": load_before, "load_average_end": load_after, "machine": machine_info()}
    write_results("mcp_answers", results, markdown)


if __name__ == "__main__":
    main()
