"""``kga mcp`` and ``kga serve``: their arguments and how they run (registered by :mod:`kg_adapters.cli`).

Only argparse and the command registry are imported here; the servers and their extras load when a
command runs."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any

from kg_adapters.budgets import check_count
from kg_adapters.commands import Command, UsageError
from kg_adapters.serve.cors import origin_list


def port_number(text: str) -> int:
    """An argparse ``type=`` for ``--port``: a TCP port, 1-65535 (refused here, not by ``bind()`` after
    the server has announced its address)."""
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"expected a TCP port, 1-65535, got {text!r}")
    return port


def mcp_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="stdio: the client starts kga mcp and talks over its stdin/stdout; http: streamable HTTP at /mcp "
        "(default: stdio)",
    )
    command.add_argument("--host", default="127.0.0.1", help="http: address to listen on (default 127.0.0.1)")
    command.add_argument(
        "--port", type=port_number, default=8000, help="http: port (default 8000); the endpoint is /mcp"
    )
    command.add_argument(
        "--max-rows", type=int, default=500, help="most entities/edges/paths/rows per answer (default 500)"
    )
    command.add_argument(
        "--max-hops", type=int, default=3, help="most hops for shortest_paths and subgraph (default 3)"
    )
    command.add_argument(
        "--max-chars",
        type=int,
        default=24_000,
        help="most characters of one answer's JSON, about 4 per token (default 24000); longer answers come in pages",
    )
    command.add_argument("--timeout", type=float, default=30.0, help="seconds per tool call (default 30)")
    command.add_argument(
        "--workers", type=int, default=2, help="sparql queries evaluated at once, each in a worker process (default 2)"
    )


def serve_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    command.add_argument("--port", type=port_number, default=8890, help="port (default 8890, Virtuoso's)")
    command.add_argument("--timeout", type=float, default=30.0, help="seconds per query, answer included")
    command.add_argument(
        "--max-result-bytes", type=int, default=64 << 20, help="largest serialized answer (default 64 MiB)"
    )
    command.add_argument("--workers", type=int, default=4, help="queries evaluated at once (default 4)")
    command.add_argument(
        "--cors",
        metavar="ORIGIN",
        type=origin_list,
        action="append",
        default=[],
        help="let web pages from ORIGIN (https://host[:port], a comma-separated list, or *) query the endpoint; "
        "repeatable (default: none, so other sites' pages cannot read it)",
    )


def run_mcp(args: argparse.Namespace) -> int:
    """Serves MCP tools until the client disconnects (stdio) or the process is interrupted (http)."""
    from kg_adapters.serve import mcp_server
    from kg_adapters.serve.workers import pool_for
    from kg_adapters.url import parse_url

    mcp_server.require_mcp()
    budgets = mcp_server.ToolBudgets(
        max_rows=args.max_rows, max_hops=args.max_hops, max_chars=args.max_chars, timeout=args.timeout
    )
    check_count(args.workers, "workers", minimum=1, required=True)
    graphs = _open(args.kg, timeout=budgets.timeout, retry_seconds=budgets.timeout)
    workers = None
    if args.transport == "stdio":
        exit_on_interrupt()
    try:
        workers = pool_for(graphs, args.workers)
        server = mcp_server.build_server(graphs, budgets, workers)
        if parse_url(args.kg).scheme == "oxigraph":  # a remote endpoint is asked nothing the agent did not ask
            mcp_server.warm_up(graphs)
        mcp_server.run(
            server,
            transport=args.transport,
            host=args.host,
            port=args.port,
            announce=lambda line: print(line, file=sys.stderr, flush=True),
            on_exit=workers.close if workers is not None else None,
        )
    finally:
        if workers is not None:
            workers.close()
        graphs.close()
        leave_without_abandoned_work()
    return 0


def run_serve(args: argparse.Namespace) -> int:
    """Serves the SPARQL endpoint until interrupted."""
    from kg_adapters.serve import sparql_endpoint

    sparql_endpoint.require_serve_extra()
    limits = sparql_endpoint.EndpointLimits(
        timeout=args.timeout, max_result_bytes=args.max_result_bytes, workers=args.workers
    )
    graphs = _open(
        args.kg, max_response_bytes=limits.max_result_bytes, timeout=limits.timeout, retry_seconds=limits.timeout
    )
    try:
        sparql_endpoint.serve(
            graphs,
            host=args.host,
            port=args.port,
            limits=limits,
            cors=tuple(dict.fromkeys(origin for given in args.cors for origin in given)),
            announce=lambda line: print(line, file=sys.stderr, flush=True),
        )
    finally:
        graphs.close()
        leave_without_abandoned_work()
    return 0


LEAVING_SECONDS = 2.0


def exit_on_interrupt() -> None:
    """Makes Ctrl-C end the process at once (status 130), as it does ``kga serve``. A stdio server reads
    stdin in a thread that no cancellation reaches, so Python would otherwise wait for the next line, or
    for stdin to close, before leaving. The servers only read, so nothing is lost; worker processes die
    with the server."""
    import os
    import signal

    def interrupted(signum: int, frame: object) -> None:
        print("kga: error: interrupted", file=sys.stderr)
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(130)

    signal.signal(signal.SIGINT, interrupted)


def leave_without_abandoned_work() -> None:
    """Ends the process now if a server stopped while threads it abandoned at their deadlines still run.

    Work in this process that cannot be stopped (a query on an in-memory store, a remote request that
    overruns its own deadline, a long tool call) is abandoned at its deadline; Python would wait for it
    before exiting, so Ctrl-C or a closed stdin would leave the server running. Such threads get
    :data:`LEAVING_SECONDS` to finish; then the process exits with the status it was leaving with
    (130 after Ctrl-C), its output flushed. The servers only read, so nothing is lost."""
    import os
    import threading
    import time

    current = threading.current_thread()
    others = [thread for thread in threading.enumerate() if thread is not current and not thread.daemon]
    end = time.monotonic() + LEAVING_SECONDS
    for thread in others:
        thread.join(max(0.0, end - time.monotonic()))
    if not any(thread.is_alive() for thread in others):
        return
    leaving = sys.exc_info()[1]
    if isinstance(leaving, KeyboardInterrupt):
        print("kga: error: interrupted", file=sys.stderr)
    status = 0 if leaving is None else 130 if isinstance(leaving, KeyboardInterrupt) else 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _open(url: str, **remote: Any) -> Any:
    """The graph a server answers from. ``remote``: the server's own budgets, handed to a remote SPARQL
    backend for the options its URL leaves unset -- ``max_response_bytes`` (the answer cap: it stops
    reading there instead of buffering a whole answer the server would then refuse), ``timeout`` and
    ``retry_seconds`` (the time budget: a request past it is abandoned by the client too, and keeps its
    worker no longer than the budget instead of the backend's 60 s plus retries)."""
    from kg_adapters.serve.current import CurrentGraph

    options = _unset_remote_options(url, remote)
    try:
        return CurrentGraph(url, **options)
    except TypeError as exc:  # an option the backend does not know
        raise UsageError(str(exc)) from exc


def _unset_remote_options(url: str, remote: dict[str, Any]) -> dict[str, Any]:
    """``remote`` without the options ``url`` sets; nothing unless it names a remote SPARQL endpoint."""
    from kg_adapters.backends.sparql_http import SparqlEndpoint, WikidataQueryService
    from kg_adapters.registry import backend_class
    from kg_adapters.url import parse_url

    parsed = parse_url(url)
    if not remote or backend_class(parsed.scheme) not in (SparqlEndpoint, WikidataQueryService):
        return {}
    return {name: value for name, value in remote.items() if name not in parsed.options}


SERVE_COMMANDS: tuple[Command, ...] = (
    Command(
        name="mcp",
        help="serve the graph to LLM agents as Model Context Protocol tools (needs kg-adapters[mcp])",
        arguments=mcp_arguments,
        run=run_mcp,
        json=False,
    ),
    Command(
        name="serve",
        help="serve the graph as a read-only SPARQL 1.1 Protocol endpoint at /sparql (needs kg-adapters[serve])",
        arguments=serve_arguments,
        run=run_serve,
        json=False,
    ),
)
