"""Cross-origin access to ``kga serve`` (``--cors ORIGIN``), off by default.

Without ``--cors`` a browser lets no other web page read the endpoint's answers: a local endpoint
should not answer every page its user visits. ``--cors https://app.example.org`` (repeatable, or a
comma-separated list; ``*`` for any origin) lets those pages query it: Starlette's CORS middleware
answers preflight requests (``OPTIONS`` with ``Access-Control-Request-Method``) for GET and POST with
the headers SPARQL clients send, and adds ``Access-Control-Allow-Origin`` to answers for an allowed
origin, and tells Chromium's Private Network Access preflight that such a page (a public site) may
reach this local server. No credentials are ever allowed (the endpoint has none to protect, and none
are read).
"""

from __future__ import annotations

import argparse
import ipaddress
import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from starlette.middleware import Middleware

ALLOWED_METHODS = ("GET", "POST")
ALLOWED_HEADERS = ("Accept", "Content-Type")
"""Request headers a cross-origin page may send (Starlette adds the CORS-safelisted ones anyway)."""
PREFLIGHT_SECONDS = 600


def origin_list(text: str) -> list[str]:
    """An argparse ``type=`` for ``--cors``: ``*`` or comma-separated origins (``scheme://host[:port]``),
    spelled as browsers send them in ``Origin`` (lower case, no default port, no trailing slash).

    A value no browser sends (a wildcard host such as ``https://*.example.org``, a space, a
    percent-escape, port 0) is refused rather than accepted to match no page at all."""
    origins = [_one_origin(part) for part in (piece.strip() for piece in text.split(",")) if part]
    if not origins:
        raise argparse.ArgumentTypeError(f"expected an origin (or *), got {text!r}")
    return origins


def _one_origin(part: str) -> str:
    """One ``--cors`` item in the form browsers send in ``Origin``."""
    if part == "*":
        return part
    if "*" in part:
        raise argparse.ArgumentTypeError(
            f"wildcard origins are not supported, got {part!r}: give each origin (repeat --cors), or * for any"
        )
    try:
        parsed = urlsplit(part.removesuffix("/"))
    except ValueError as exc:  # an unclosed IPv6 bracket
        raise argparse.ArgumentTypeError(f"{part!r} is not an origin: {exc}") from None
    try:
        port = parsed.port
    except ValueError:
        port = 0
    if (
        parsed.scheme not in ("http", "https")
        or not parsed.hostname
        or parsed.username is not None
        or parsed.path
        or parsed.query
        or parsed.fragment
    ):
        raise argparse.ArgumentTypeError(
            f"expected an origin such as https://example.org or http://localhost:3000 (or *), got {part!r}"
        )
    if port == 0:
        raise argparse.ArgumentTypeError(f"the port of {part!r} is not a TCP port, 1-65535")
    host = _ascii_host(parsed.hostname, part)
    default = {"http": 80, "https": 443}[parsed.scheme]
    return f"{parsed.scheme}://{host}" + ("" if port in (None, default) else f":{port}")


_HOST_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
"""A label of a host name as browsers send it: letters, digits, hyphens inside, underscores (which
browsers keep in host names)."""


def _ascii_host(hostname: str, origin: str) -> str:
    """The host of an origin as browsers send it: lower case, a name in its ASCII (punycode) form,
    an IPv6 address in brackets."""
    if ":" in hostname:
        try:
            return f"[{ipaddress.IPv6Address(hostname).compressed}]"
        except ValueError:
            raise argparse.ArgumentTypeError(f"the host of {origin!r} is not an IPv6 address") from None
    try:
        ascii_host = hostname.encode("idna").decode("ascii").lower()
    except UnicodeError:
        ascii_host = ""
    if not all(_HOST_LABEL.fullmatch(label) for label in ascii_host.removesuffix(".").split(".")):
        raise argparse.ArgumentTypeError(f"the host name of {origin!r} is not a valid domain name")
    return ascii_host


def cors_middleware(origins: tuple[str, ...]) -> list[Middleware]:
    """The middleware stack for ``origins`` (none when empty: cross-origin reads stay refused)."""
    if not origins:
        return []
    from starlette.middleware import Middleware
    from starlette.middleware.cors import CORSMiddleware

    return [
        Middleware(
            CORSMiddleware,
            allow_origins=list(origins),
            allow_methods=list(ALLOWED_METHODS),
            allow_headers=list(ALLOWED_HEADERS),
            allow_credentials=False,
            allow_private_network=True,  # a public page of an allowed origin may reach this local server
            max_age=PREFLIGHT_SECONDS,
        )
    ]
