"""``kga serve`` and ``kga mcp --transport http`` refuse an address they cannot listen on with one
typed error line naming it (exit 1), before announcing an endpoint; and they serve on the one they can."""

from __future__ import annotations

import socket
import subprocess
import urllib.request

import pytest
from support.servers import KGA, free_port, running

from kg_adapters.serve.listen import ListenError, listening_socket

SERVERS = {
    "serve": ["serve"],
    "mcp": ["mcp", "--transport", "http"],
}


def kga(arguments: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KGA, *arguments], capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("server", SERVERS)
def test_a_busy_port_is_one_error_line(server: str, sample_store_url: str) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = kga([*SERVERS[server], "--kg", sample_store_url, "--port", str(port)])
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines == [f"kga: error: cannot listen on 127.0.0.1:{port}: Address already in use"], done.stderr
    assert "endpoint at" not in done.stderr


@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.parametrize("host", ["host.invalid", "999.1.1.1", "203.0.113.7"])
def test_an_address_the_machine_cannot_listen_on_is_refused(server: str, host: str, sample_store_url: str) -> None:
    """A name that does not resolve, a malformed address, an address of another machine."""
    port = free_port()
    done = kga([*SERVERS[server], "--kg", sample_store_url, "--host", host, "--port", str(port)])
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"kga: error: cannot listen on {host}:{port}: "), done.stderr
    assert "Traceback" not in done.stderr and "ERROR:" not in done.stderr


def test_the_socket_is_bound_where_asked_and_errors_are_typed() -> None:
    sock = listening_socket("127.0.0.1", 0)
    try:
        host, port = sock.getsockname()[:2]
        assert host == "127.0.0.1" and port > 0
        sock.listen()
        with pytest.raises(ListenError, match=rf"cannot listen on 127\.0\.0\.1:{port}: Address already in use"):
            listening_socket("127.0.0.1", port)
    finally:
        sock.close()
    with pytest.raises(ListenError, match=r"cannot listen on \[::zz\]:80: the address does not resolve"):
        listening_socket("::zz", 80)


def test_serve_answers_on_the_socket_it_bound(sample_store_url: str) -> None:
    port = free_port()
    with running(["serve", "--kg", sample_store_url, "--port", str(port)], port) as process:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/sparql?query=ASK%7B%7D", timeout=30) as response:
            assert response.status == 200
            assert b"true" in response.read()
        process.terminate()
        process.wait(timeout=30)
        assert process.stderr is not None
        log = process.stderr.read().decode()
    assert f"kga serve: SPARQL endpoint at http://127.0.0.1:{port}/sparql" in log
