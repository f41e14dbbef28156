"""KG URLs: ``scheme://host/path?options``, parsed once for the registry and every backend.

:func:`redact_url` is the one function that makes a URL (or any text holding URLs) safe to show --
in error messages, reprs, logs, ``kg.endpoint``, cache keys and manifests; credentials stay only
where a request is sent (``HttpExchange`` keeps them apart from the URL it shows).

Backends take a :class:`KGUrl` in ``from_url`` and import it from here, never from the registry, so
the registry may import backends and no backend imports the registry.
"""

from __future__ import annotations

import re
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

    def __repr__(self) -> str:
        """Without credentials, like every message and repr: the password of ``user:password@`` and the
        values of credential-named options (:data:`SECRET_PARAMETERS`) read from the parsed fields."""
        shown = redact_options(self.options)
        return (
            f"KGUrl(scheme={self.scheme!r}, host={redact_netloc(self.host)!r}, path={self.path!r}, "
            f"options={shown!r}, raw={redact_url(self.raw)!r})"
        )

    __str__ = __repr__


REDACTED = "***"
SECRET_PARAMETERS = (
    "password",
    "passwd",
    "pwd",
    "secret",
    "client_secret",
    "token",
    "access_token",
    "auth",
    "api_key",
    "apikey",
    "key",
)
"""Query parameters whose values are credentials (compared case-insensitively)."""

_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^\s/?#@:]*):(?P<password>[^\s/?#@]*)@")
_PARAMETER = re.compile(
    r"(?P<name>[?&;](?:" + "|".join(re.escape(name) for name in SECRET_PARAMETERS) + r")=)(?P<value>[^&;#\s'\"]*)",
    re.IGNORECASE,
)


def redact_netloc(netloc: str) -> str:
    """A URL's ``user:password@host:port`` part with the password replaced by ``***``."""
    userinfo, at, host = netloc.rpartition("@")
    user, colon, _password = userinfo.partition(":")
    return f"{user}{colon}{REDACTED if colon else ''}{at}{host}"


def redact_options(options: dict[str, str]) -> dict[str, str]:
    """URL options with the values of credential-named ones (:data:`SECRET_PARAMETERS`) replaced by ``***``."""
    return {name: REDACTED if name.lower() in SECRET_PARAMETERS and value else value for name, value in options.items()}


def redact_url(text: str) -> str:
    """``text`` with every URL password (``scheme://user:PASSWORD@host``) and the value of every
    credential-like query parameter (``?api_key=...``) replaced by ``***``; the rest unchanged."""
    if "://" not in text and "=" not in text:
        return text
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:{REDACTED}@", text)
    return _PARAMETER.sub(lambda m: m["name"] + (REDACTED if m["value"] else ""), text)


def parse_url(url: str) -> KGUrl:
    """Splits a KG URL; ``oxigraph://`` (nothing after) means an in-memory store."""
    if not isinstance(url, str) or ":" not in url:
        raise InvalidTermError(f"not a KG URL (expected scheme:...): {redact_url(str(url))!r}")
    parts = urlsplit(url)
    if not parts.scheme:
        raise InvalidTermError(f"not a KG URL (no scheme): {redact_url(url)!r}")
    options: dict[str, str] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key in options:
            raise InvalidTermError(f"option {key!r} given twice in {redact_url(url)!r}")
        options[key] = value
    return KGUrl(scheme=parts.scheme.lower(), host=parts.netloc, path=unquote(parts.path), options=options, raw=url)


def local_path(url: KGUrl) -> str:
    """The absolute path of a local-store URL (``oxigraph:///abs/dir``); empty for in-memory."""
    if url.host:
        raise InvalidTermError(
            f"{url.scheme} URLs take an absolute path: {url.scheme}:///abs/path (got host {url.host!r})"
        )
    return url.path
