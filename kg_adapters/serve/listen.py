"""The listening socket of ``kga serve`` and ``kga mcp --transport http``: bound before the server
starts and handed to uvicorn, so that an address that does not resolve, one the machine does not
have, or a port already in use is one typed error naming the address, and the server announces its
address only once it is listening there."""

from __future__ import annotations

import socket
from collections.abc import Callable
from types import FrameType
from typing import Any

from kg_adapters.errors import KGError


class ListenError(KGError):
    """A server cannot listen on the address it was given (``kga`` exits 1)."""


BACKLOG = 2048
"""Connections the kernel queues until the server accepts them (uvicorn's own default)."""


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host``:``port`` (the first address ``host`` resolves to) and listening,
    so a client that connects as soon as the server announces its address is queued, not refused."""
    try:
        family, kind, protocol, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (OSError, UnicodeError) as exc:  # socket.gaierror is an OSError
        raise ListenError(f"cannot listen on {_where(host, port)}: the address does not resolve ({exc})") from exc
    sock = socket.socket(family, kind, protocol)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: a restart reuses the port
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
        sock.listen(BACKLOG)  # connections wait in the kernel's queue from the announcement on, never refused
        sock.set_inheritable(True)
    except OSError as exc:
        sock.close()
        reason = exc.strerror or str(exc)
        raise ListenError(f"cannot listen on {_where(host, port)}: {reason}") from exc
    return sock


SHUTDOWN_SECONDS = 5
"""How long requests still running may take to finish once the server is asked to stop."""


def run_uvicorn(
    app: Any,
    sock: socket.socket,
    *,
    log_level: str = "warning",
    on_exit: Callable[[], None] | None = None,
    **config: Any,
) -> None:
    """Serves ``app`` on the bound ``sock`` until interrupted (Ctrl-C or SIGTERM). ``on_exit`` runs (in a
    thread of its own) as soon as the stop is asked for: it ends what requests still wait on, such as
    worker processes, so the server stops within :data:`SHUTDOWN_SECONDS`."""
    import threading

    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            super().handle_exit(sig, frame)
            if on_exit is not None:
                threading.Thread(target=on_exit, name="kga-stop", daemon=True).start()

    settings = uvicorn.Config(app, log_level=log_level, timeout_graceful_shutdown=SHUTDOWN_SECONDS, **config)
    try:
        Server(settings).run(sockets=[sock])
    finally:
        sock.close()


def _where(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def http_url(host: str, port: int, path: str) -> str:
    """The URL a server listening on ``host``:``port`` answers ``path`` at (an IPv6 address in brackets)."""
    return f"http://{_where(host, port)}{path}"
