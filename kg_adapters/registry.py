"""URL -> backend, through one registry of lazily imported classes (like fsspec/SQLAlchemy).

``connect("oxigraph:///abs/dir?profile=freebase")`` parses the URL into a :class:`KGUrl`, looks
the scheme up in :data:`BACKENDS`, imports the backend only then, and passes URL query
parameters and keyword arguments as options; a backend raises ``TypeError`` for options it does
not know. Third parties register more schemes with :func:`register` or the
``kg_adapters.backends`` entry-point group.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Protocol
from urllib.parse import parse_qsl, unquote, urlsplit

from kg_adapters.base import KnowledgeGraph
from kg_adapters.errors import InvalidTermError, UnknownBackendError


@dataclass(frozen=True, kw_only=True)
class KGUrl:
    """A parsed KG URL: ``scheme://host/path?options``."""

    scheme: str
    host: str = ""
    path: str = ""
    options: dict[str, str] = field(default_factory=dict)
    raw: str = ""


@dataclass(frozen=True, kw_only=True)
class BackendSpec:
    target: str
    """``"module:Class"``; the class has ``from_url(path_or_url, **options)``."""
    install_hint: str = ""


class BackendFactory(Protocol):
    def from_url(self, location: str, **options: Any) -> KnowledgeGraph: ...


BACKENDS: dict[str, BackendSpec] = {
    "oxigraph": BackendSpec(
        target="kg_adapters.backends.oxigraph:OxigraphGraph", install_hint="pip install pyoxigraph"
    ),
    "rdflib": BackendSpec(target="kg_adapters.backends.rdflib_backend:RdflibGraph", install_hint="pip install rdflib"),
}


def register(scheme: str, target: str, *, install_hint: str = "") -> None:
    """Registers (or replaces) the backend class for a URL scheme."""
    BACKENDS[scheme] = BackendSpec(target=target, install_hint=install_hint)


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
    return KGUrl(
        scheme=parts.scheme.lower(), host=parts.netloc, path=unquote(parts.path), options=options, raw=url
    )


def _load_entry_points() -> None:
    for entry in entry_points(group="kg_adapters.backends"):
        BACKENDS.setdefault(entry.name, BackendSpec(target=entry.value))


def backend_class(scheme: str) -> BackendFactory:
    if scheme not in BACKENDS:
        _load_entry_points()
    try:
        spec = BACKENDS[scheme]
    except KeyError:
        known = ", ".join(sorted(BACKENDS))
        raise UnknownBackendError(f"no backend for URL scheme {scheme!r}; known schemes: {known}") from None
    module_name, _, class_name = spec.target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        hint = f"; install it with: {spec.install_hint}" if spec.install_hint else ""
        raise UnknownBackendError(f"the {scheme!r} backend cannot be imported ({exc}){hint}") from exc
    factory: BackendFactory = getattr(module, class_name)
    return factory


def connect(url: str, **options: Any) -> KnowledgeGraph:
    """Opens the KG at ``url``; options come from the URL query and keyword arguments.

    Raises:
        InvalidTermError: the URL is malformed or an option value is bad.
        UnknownBackendError: no backend for the scheme, or its driver is not installed.
        StoreNotFound: a local store is missing or incomplete.
        TypeError: an option the backend does not know.
    """
    parsed = parse_url(url)
    merged: dict[str, Any] = dict(parsed.options)
    for key, value in options.items():
        if key in merged and merged[key] != value:
            raise TypeError(f"option {key!r} given both in the URL and as a keyword argument")
        merged[key] = value
    factory = backend_class(parsed.scheme)
    location = parsed.path
    if parsed.scheme in ("oxigraph", "rdflib") and parsed.host:
        raise InvalidTermError(
            f"{parsed.scheme} URLs take an absolute path: {parsed.scheme}:///abs/path (got host {parsed.host!r})"
        )
    return factory.from_url(location, **merged)
