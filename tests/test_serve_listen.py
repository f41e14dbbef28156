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


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.parametrize(
    ("host", "in_url"),
    [
        ("127.0.0.1", "127.0.0.1"),
        pytest.param("::1", "[::1]", marks=pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback here")),
    ],
)
@pytest.mark.parametrize("server", SERVERS)
def test_the_announced_address_is_a_url_that_answers_at_once(
    server: str, host: str, in_url: str, sample_store_url: str
) -> None:
    """The line a server prints names a URL a browser or curl can open (an IPv6 address in brackets),
    and a client that connects as soon as it reads the line is served, not refused."""
    import re
    import urllib.error

    port = free_port()
    process = subprocess.Popen(
        [KGA, *SERVERS[server], "--kg", sample_store_url, "--host", host, "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        announced = ""
        while "endpoint at" not in announced and (line := process.stderr.readline()):  # once it listens
            announced = line
        urls = re.findall(r"http://\S+?(?=,|\s|$)", announced)
        assert urls and all(url.startswith(f"http://{in_url}:{port}/") for url in urls), announced
        try:
            with urllib.request.urlopen(urls[-1], timeout=60) as answer:
                status = answer.status
        except urllib.error.HTTPError as refused:  # /mcp wants an MCP client; it answered all the same
            status = refused.code
        assert status < 500
    finally:
        process.terminate()
        process.wait(timeout=30)
        assert process.stderr is not None
        process.stderr.close()
