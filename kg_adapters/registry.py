"""URL -> backend, through one registry of lazily imported classes (like fsspec/SQLAlchemy).

``connect("oxigraph:///abs/dir?profile=freebase")`` parses the URL into a :class:`KGUrl`, looks
the scheme up in :data:`BACKENDS`, imports the backend only then, and passes URL query
parameters and keyword arguments as options; a backend raises ``TypeError`` for options it does
not know. Third parties register more schemes with :func:`register` or the
``kg_adapters.backends`` entry-point group.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Protocol

from kg_adapters.base import KnowledgeGraph, ProfileDetecting, RelationFilterable, SearchConfigurable
from kg_adapters.errors import InvalidTermError, UnknownBackendError
from kg_adapters.url import KGUrl, local_path, parse_url, redact_url

__all__ = ["BACKENDS", "BackendSpec", "KGUrl", "backend_class", "connect", "local_path", "parse_url", "register"]


@dataclass(frozen=True, kw_only=True)
class BackendSpec:
    target: str
    """``"module:Class"``; the class has ``from_url(url: KGUrl, **options)``."""
    install_hint: str = ""
    """The command that installs what a third-party backend needs (``pip install ...``)."""
    bundled: bool = False
    """Ships with kg-adapters: its imports are hard dependencies, so failing to import it means a
    broken installation, not a missing extra."""


class BackendFactory(Protocol):
    def from_url(self, url: KGUrl, **options: Any) -> KnowledgeGraph: ...


def _bundled(target: str) -> BackendSpec:
    return BackendSpec(target=f"kg_adapters.backends.{target}", bundled=True)


BACKENDS: dict[str, BackendSpec] = {
    "oxigraph": _bundled("oxigraph:OxigraphGraph"),
    "rdflib": _bundled("rdflib_backend:RdflibGraph"),
    "sparql+http": _bundled("sparql_http:SparqlEndpoint"),
    "sparql+https": _bundled("sparql_http:SparqlEndpoint"),
    "wikidata": _bundled("sparql_http:WikidataQueryService"),
    "wikidata+api": _bundled("wikidata_api:WikidataApi"),
}


def register(scheme: str, target: str, *, install_hint: str = "") -> None:
    """Registers (or replaces) the backend class for a URL scheme."""
    BACKENDS[scheme] = BackendSpec(target=target, install_hint=install_hint)


def _load_entry_points() -> None:
    from importlib.metadata import entry_points  # costs ~3 MiB RSS and ~40 ms; only needed here

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
    module_name, colon, class_name = spec.target.partition(":")
    if not colon or not module_name or not class_name.isidentifier():
        raise UnknownBackendError(f"the {scheme!r} backend is registered as {spec.target!r}, not 'module:Class'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        if spec.bundled:
            from kg_adapters.extras import install_command  # its imports are our own dependencies

            repair = install_command(reinstall=True)
            hint = f"; it ships with kg-adapters, whose dependencies are incomplete; repair with: {repair}"
        else:
            hint = f"; install it with: {spec.install_hint}" if spec.install_hint else ""
        raise UnknownBackendError(f"the {scheme!r} backend cannot be imported ({exc}){hint}") from exc
    factory: Any = getattr(module, class_name, None)
    if not callable(getattr(factory, "from_url", None)):
        problem = f"has no {class_name}" if factory is None else f"{class_name} has no from_url(url, **options)"
        raise UnknownBackendError(f"the {scheme!r} backend {spec.target!r} is not usable: {module_name} {problem}")
    backend: BackendFactory = factory
    return backend


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
    cache_options = {key: merged.pop(key) for key in CACHE_OPTIONS if key in merged}
    if cache_options and merged.get("base_url"):
        cache_options["base_url"] = merged["base_url"]
    if cache_options and "search" in merged:
        cache_options["search"] = merged["search"]
    relation_filter = merged.pop("relation_filter", _UNSET)
    search = merged.pop("search", _UNSET)
    auto = merged.get("profile") == "auto"
    if auto:
        merged["profile"] = "generic"
    factory = backend_class(parsed.scheme)
    kg = factory.from_url(parsed, **merged)
    if auto:
        _detect_profile(kg)
    if relation_filter is not _UNSET:
        kg = _configured(kg, parsed.scheme, "relation_filter", RelationFilterable, relation_filter)
    if search is not _UNSET:
        kg = _configured(kg, parsed.scheme, "search", SearchConfigurable, search)
    if cache_options:
        kg = _with_cache(kg, parsed, cache_options)
    return kg


def _detect_profile(kg: KnowledgeGraph) -> None:
    """``profile=auto``: the backend samples its data and switches profile; the choice is logged."""
    if not isinstance(kg, ProfileDetecting):
        kg.close()
        raise InvalidTermError(f"profile=auto needs a backend that can sample its data; {type(kg).__name__} cannot")
    try:
        profile = kg.detect_profile()
    except BaseException:
        kg.close()
        raise
    import logging  # not imported by connect() otherwise

    logging.getLogger("kg_adapters").info("detected profile: %s (%s)", profile.name, profile.detection)


CACHE_OPTIONS = ("cache", "cache_mode", "cache_entries", "cache_max_bytes")
_UNSET = object()


def _configured(kg: KnowledgeGraph, scheme: str, option: str, ability: type, value: object) -> KnowledgeGraph:
    """``kg`` with ``option`` set through its ``ability`` Protocol's one method (``relation_filter`` ->
    ``use_relation_filter``, ``search`` -> ``use_search``); a backend without the ability refuses the option."""
    try:
        if not isinstance(kg, ability):
            raise TypeError(f"the {scheme!r} backend does not take the {option} option")
        getattr(kg, f"use_{option}")(value)
    except BaseException:
        kg.close()
        raise
    return kg


def _with_cache(kg: KnowledgeGraph, url: KGUrl, options: dict[str, Any]) -> KnowledgeGraph:
    """Wraps ``kg`` in the result cache the ``cache*`` options describe (any backend)."""
    from kg_adapters.wrappers.cache import ResultCache, cached

    target = options.get("cache")
    path = None if target in (None, "", "memory") else str(target)
    if path is not None and url.scheme in ("oxigraph", "rdflib") and not url.path:
        raise InvalidTermError(
            "a file cache needs a graph with a stable identity; an in-memory graph can only use cache='memory'"
        )
    try:
        entries = int(options.get("cache_entries", 100_000))
        max_bytes = int(options["cache_max_bytes"]) if "cache_max_bytes" in options else None
    except (TypeError, ValueError) as exc:
        raise InvalidTermError(f"cache_entries and cache_max_bytes must be integers: {exc}") from None
    mode = str(options.get("cache_mode", "readwrite"))
    if mode not in ("readwrite", "replay", "off"):
        raise InvalidTermError(f"cache_mode must be readwrite, replay or off, got {mode!r}")
    cache = ResultCache(path, memory_entries=entries, max_disk_bytes=max_bytes, mode=mode)  # type: ignore[arg-type]
    base_url = f"|base_url={options['base_url']}" if options.get("base_url") else ""  # another server, other answers
    # credentials never reach a key or a message (redact_url): the same server answers the same
    namespace = redact_url(f"{url.scheme}://{url.host}{url.path}{base_url}") + f"|profile={kg.profile.name}"
    if options.get("search") not in (None, "auto"):  # another search mode, other search answers
        namespace += f"|search={options['search']}"
    wrapped: KnowledgeGraph = cached(kg, cache=cache, namespace=namespace, close_cache=True)
    return wrapped
