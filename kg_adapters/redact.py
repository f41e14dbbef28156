"""Secrets out of everything shown: :func:`redact_url` is the one function that makes a URL (or any
text holding URLs) safe to print -- in error messages, reprs, logs, ``kg.endpoint``, cache keys and
manifests. Credentials stay only where a request is sent (``HttpExchange`` keeps them apart from
the URL it shows)."""

from __future__ import annotations

import re

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


def redact_url(text: str) -> str:
    """``text`` with every URL password (``scheme://user:PASSWORD@host``) and the value of every
    credential-like query parameter (``?api_key=...``) replaced by ``***``; the rest unchanged."""
    if "://" not in text and "=" not in text:
        return text
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:{REDACTED}@", text)
    return _PARAMETER.sub(lambda m: m["name"] + (REDACTED if m["value"] else ""), text)
