"""The read-only surfaces never make a request: every SERVICE, LOAD and update spelling
(:mod:`kg_adapters.testing.hostile_queries`) sent to a real ``kga serve`` (GET, POST form, POST
``application/sparql-query``, ``update=``, ``application/sparql-update``) and to a real ``kga mcp``'s
``sparql`` tool is refused, and a real listener the queries name sees zero requests."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest
import requests
from support.servers import KGA, free_port, running

from kg_adapters.testing.hostile_queries import SERVICE_SPELLINGS, UPDATE_SPELLINGS, RequestLog, request_listener

pytest.importorskip("starlette")
mcp = pytest.importorskip("mcp")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

SPELLINGS = SERVICE_SPELLINGS + UPDATE_SPELLINGS


@pytest.fixture(scope="module")
def target() -> Iterator[RequestLog]:
    with request_listener() as log:
        yield log


@pytest.fixture(scope="module")
def endpoint(sample_store_url: str) -> Iterator[str]:
    port = free_port()
    with running(["serve", "--kg", sample_store_url, "--port", str(port), "--workers", "1"], port):
        yield f"http://127.0.0.1:{port}/sparql"


def test_kga_serve_refuses_every_spelling_in_every_request_form(endpoint: str, target: RequestLog) -> None:
    refused: dict[str, list[int]] = {}
    for spelling in SPELLINGS:
        query = spelling.query(target.url)
        answers = [
            requests.get(endpoint, params={"query": query}, timeout=120),
            requests.post(endpoint, data={"query": query}, timeout=120),
            requests.post(
                endpoint,
                data=query.encode(),
                headers={"Content-Type": "application/sparql-query; charset=utf-8"},
                timeout=120,
            ),
            requests.post(endpoint, data={"update": query}, timeout=120),
            requests.post(
                endpoint, data=query.encode(), headers={"Content-Type": "application/sparql-update"}, timeout=120
            ),
        ]
        refused[spelling.name] = [answer.status_code for answer in answers]
    assert {name: codes for name, codes in refused.items() if set(codes) - {403, 400}} == {}
    assert target.requests == []
    assert requests.get(endpoint, params={"query": "ASK { ?s ?p ?o }"}, timeout=120).json()["boolean"] is True


def test_kga_mcp_refuses_every_spelling(sample_store_url: str, target: RequestLog) -> None:
    params = StdioServerParameters(command=KGA, args=["mcp", "--kg", sample_store_url, "--workers", "1"])

    async def main() -> None:
        async with Client(params) as client:
            for spelling in SPELLINGS:
                result = await client.call_tool("sparql", {"query": spelling.query(target.url)})
                assert result.is_error, spelling.name

    anyio.run(main)
    assert target.requests == []
