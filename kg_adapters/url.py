"""KG URLs: ``scheme://host/path?options``, parsed once for the registry and every backend.

Backends take a :class:`KGUrl` in ``from_url`` and import it from here, never from the registry, so
the registry may import backends and no backend imports the registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote, urlsplit

from kg_adapters.errors import InvalidTermError


@dataclass(frozen=True, kw_only=True)
class KGUrl:
    """A parsed KG URL: ``scheme://host/path?options``."""

    scheme: str
    host: str = ""
    path: str = ""
    options: dict[str, str] = field(default_factory=dict)
    raw: str = ""


def parse_url(url: str) -> KGUrl:
    """Splits a KG URL; ``oxigraph://`` (nothing after) means an in-memory store."""
    if not isinstance(url, str) or ":" not in url:
        raise InvalidTermError(f"not a KG URL (expected scheme:...): {url!r}")
    parts = urlsplit(url)
    if not parts.scheme:
        raise InvalidTermError(f"not a KG URL (no scheme): {url!r}")
    options: dict[str, str] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key in options:
            raise InvalidTermError(f"option {key!r} given twice in {url!r}")
        options[key] = value
    return KGUrl(scheme=parts.scheme.lower(), host=parts.netloc, path=unquote(parts.path), options=options, raw=url)


def local_path(url: KGUrl) -> str:
    """The absolute path of a local-store URL (``oxigraph:///abs/dir``); empty for in-memory."""
    if url.host:
        raise InvalidTermError(
            f"{url.scheme} URLs take an absolute path: {url.scheme}:///abs/path (got host {url.host!r})"
        )
    return url.path
