"""The query page of ``kga serve`` at ``/``: YASGUI on this server's ``/sparql``.

YASGUI (the npm package ``@zazuko/yasgui``, MIT) ships inside the package as its published build
(``static/yasgui/``, recorded with its integrity in ``VENDORED.json`` by ``scripts/vendor_yasgui.py``):
nothing is fetched from a CDN or anywhere else when the page runs. ``/?query=...`` fills the editor
and runs the query on load. The page's Content-Security-Policy allows scripts, styles and requests to
this server only, so the browser itself holds it to that.

``/static/`` serves the files of ``kg_adapters/serve/static`` and nothing else (Starlette's
``StaticFiles``: no directory listing, no path outside that directory).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import BaseRoute

STATIC = Path(__file__).with_name("static")
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
"""YASGUI sets element styles from its scripts (hence ``'unsafe-inline'`` for styles only)."""


def page_routes() -> list[BaseRoute]:
    """``/`` (the page) and ``/static/...`` (its files)."""
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    page = (STATIC / "index.html").read_bytes()

    async def query_page(request: Request) -> Response:
        from starlette.responses import Response

        headers = {"Content-Security-Policy": CONTENT_SECURITY_POLICY, "X-Content-Type-Options": "nosniff"}
        return Response(page, media_type="text/html; charset=utf-8", headers=headers)

    return [
        Route("/", query_page, methods=["GET"]),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]
