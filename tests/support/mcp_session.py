"""An MCP SDK client session on a ``kga mcp`` server built in this process, for the MCP tests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
from mcp import Client

from kg_adapters.serve.current import CurrentGraph
from kg_adapters.serve.mcp_server import ToolBudgets, build_server

Session = Callable[[Callable[[Client], Awaitable[None]]], None]


def in_memory(url: str, budgets: ToolBudgets | None = None) -> Session:
    """Runs a test body with a client connected to the server of ``url``, in memory."""

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
