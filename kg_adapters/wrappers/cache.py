"""A per-entity result cache in front of any :class:`KnowledgeGraph`, persistent in SQLite.

``cached(kg, cache=ResultCache("cache.sqlite"), namespace="https://query.wikidata.org/sparql")``
answers ``neighbors``/``relations``/``labels`` entity by entity: each id is looked up under its
own key and only the misses are fetched from the wrapped KG, in one batched call. The walks
(``paths``, ``shortest_paths``, ``subgraph``) depend on the wrapped KG: over one that walks natively
(:class:`~kg_adapters.base.NativeWalks`: the embedded store's traversal index), whole answers are
cached, keyed by every argument, so the native walk answers a miss; over any other, the shared
algorithms run over the wrapper itself, so every hop goes through the cache and a beam search that
expands the same entities again pays nothing for them. Answers say whether they came from the cache
(``from_cache`` on :class:`CachedDict`, :class:`CachedList`, ``PathResult`` and ``EdgeList``).

:class:`ResultCache` (``kg_adapters.sqlite_lru``) is an in-memory LRU in front of an optional
SQLite file. ``mode="replay"`` opens it read-only and makes a miss raise :class:`CacheMiss`
without touching the wrapped KG, so a run can prove it needs no network; ``mode="off"`` stores
nothing.

Keys are the SHA-256 of a canonical JSON of ``(format version, namespace, profile key,
operation, arguments...)``. The namespace must identify the endpoint or store (URL, absolute
path) -- use :func:`cache_namespace` -- so two KGs never share entries; the profile key (its
name, plus its relation filter's fingerprint when that is not the default) is added automatically.
Blank-node ids are cached like any id, so the namespace must name a store whose blank-node ids
are stable (on-disk stores and SPARQL endpoints; not a file re-loaded into memory).
The cache does not see writes to the wrapped KG: clear it after changing the data.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar, cast

from kg_adapters import algorithms
from kg_adapters.base import (
    Direction,
    EmbeddedSparql,
    Ids,
    KnowledgeGraph,
    Langs,
    NativeWalks,
    as_id_list,
    call_options,
    check_direction,
    forwards,
)
from kg_adapters.budgets import check_count
from kg_adapters.errors import BackendError, CacheMiss, InvalidTermError
from kg_adapters.profiles import Profile
from kg_adapters.records import (
    Edge,
    EdgeList,
    Entity,
    Node,
    PathResult,
    edge_from_json,
    edge_list_from_json,
    edge_list_to_json,
    edge_to_json,
    entity_from_json,
    entity_to_json,
    node_to_json,
    path_result_from_json,
    path_result_to_json,
    term_from_json,
)
from kg_adapters.sparql_terms import check_langs, check_text
from kg_adapters.sqlite_lru import CacheMode as CacheMode  # re-exported: the cache's modes and store
from kg_adapters.sqlite_lru import ResultCache as ResultCache
from kg_adapters.url import redact_url
from kg_adapters.wrappers.base import DelegatingGraph

CACHE_FORMAT = "kga-cache/2"
"""Part of every key: bump it when the value encoding changes, and old entries are never read. Values are
encoded with the one JSON codec for records (:mod:`kg_adapters.records`; version 2 switched to it)."""

_K = TypeVar("_K")
_V = TypeVar("_V")
_T = TypeVar("_T")
_A = TypeVar("_A", PathResult, EdgeList)


# -- answers that know where they came from ------------------------------------------------------


class CachedDict(dict[_K, _V]):
    """A dict answer; ``from_cache`` is True only when every entity was a cache hit."""

    def __init__(self, data: Mapping[_K, _V] | None = None, *, from_cache: bool = False) -> None:
        super().__init__(data or {})
        self.from_cache = from_cache


class CachedList(list[_T]):
    """A list answer (``search``, ``query``); ``from_cache`` is True when it was a cache hit."""

    def __init__(self, items: Iterable[_T] | None = None, *, from_cache: bool = False) -> None:
        super().__init__(items or [])
        self.from_cache = from_cache


@dataclass(frozen=True)
class CacheStats:
    """Per-entity lookups of one :class:`CachedKG`: ``hits`` answered from the cache, ``misses``
    fetched from the wrapped KG (or, in replay mode, refused)."""

    hits: int
    misses: int

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0


_NOT_FOUND = object()


def _copy(value: Any) -> Any:
    """A fresh list for each answer, so a caller changing it cannot change what is remembered."""
    return list(value) if isinstance(value, list) else value


def _hashable(parts: tuple[object, ...]) -> tuple[object, ...]:
    """A key tuple with its lists turned into tuples, for an in-memory dict."""
    return tuple(tuple(part) if isinstance(part, list) else part for part in parts)


_WALK_CODECS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], PathResult | EdgeList]]] = {
    "paths": (path_result_to_json, path_result_from_json),
    "shortest_paths": (path_result_to_json, path_result_from_json),
    "subgraph": (edge_list_to_json, edge_list_from_json),
}
"""How each walk's whole answer is written to the cache file and read back."""


def _frozen(value: object) -> object:
    """``value`` (JSON-like: lists, dicts, scalars) as a hashable value, for an in-memory dict."""
    if isinstance(value, list):
        return tuple(_frozen(item) for item in value)
    if isinstance(value, dict):
        return tuple((key, _frozen(item)) for key, item in value.items())
    return value


_STRING = (
    r'"""(?:[^"\\]|\\.|"(?!""))*"""'
    r"|'''(?:[^'\\]|\\.|'(?!''))*'''"
    r'|"(?:[^"\\\n\r]|\\.)*"'
    r"|'(?:[^'\\\n\r]|\\.)*'"
)
_SPARQL_TOKEN = re.compile(
    rf"(?P<string>{_STRING})"
    r'|(?P<iri><[^<>"{}|^`\\\x00-\x20]*>)'
    r"|(?P<gap>(?:\s|#[^\n\r]*)+)"
    r"|(?P<other>[^\"'<#\s]+|.)",
    re.S,
)


def normalize_sparql(query: str) -> str:
    """The query with comments dropped and whitespace runs collapsed to one space, except inside
    string literals and IRIs: two spellings of one query share a cache entry, two queries never do."""
    parts: list[str] = []
    for match in _SPARQL_TOKEN.finditer(query):
        if match.lastgroup == "gap":
            if parts and parts[-1] != " ":
                parts.append(" ")
        else:
            parts.append(match.group())
    if parts and parts[-1] == " ":
        parts.pop()
    return "".join(parts)


def cache_namespace(location: str, profile: str | Profile | None = None) -> str:
    """A namespace for the store or endpoint at ``location`` (a URL, or a path made absolute)
    and a profile, so that different KGs never share cache entries."""
    if "://" not in location and location:
        location = str(Path(location).expanduser().absolute())
    name = profile.name if isinstance(profile, Profile) else profile
    return f"{location}#profile={name}" if name else location


# -- the KnowledgeGraph wrapper ------------------------------------------------------------------------


class _Tracker:
    """Whether every lookup of one composite operation was a hit."""

    def __init__(self) -> None:
        self.all_hit = True


_ABSENT = {"absent": True}
"""Stored for an id without a label, so it is not fetched again."""


class CachedKG(DelegatingGraph):
    """A :class:`KnowledgeGraph` answering from ``cache`` and asking ``inner`` only for misses.

    Built on :class:`~kg_adapters.wrappers.base.DelegatingGraph`: it keeps the inner graph's optional
    abilities (raw ``query`` and the embedded store's ``sparql_rows``, cached here by the
    whitespace-normalised query text; ``sparql_write``, ``detect_profile``,
    ``use_relation_filter``, writing and native walks, forwarded). The profile is read from ``inner``
    on every call, so keys follow a profile the backend switches later. ``inner``, ``cache`` and
    ``namespace`` are exposed for callers that need them. ``close()`` closes ``inner`` (and the cache
    when ``close_cache``). Picklable when ``inner`` is: the copy has its own handle on the cache (the
    same file, or a copy of a memory cache's entries) and remembers no decoded answers.
    """

    def __init__(
        self,
        inner: KnowledgeGraph,
        *,
        cache: ResultCache,
        namespace: str,
        close_cache: bool = False,
    ) -> None:
        if not isinstance(namespace, str) or not namespace:
            raise InvalidTermError("namespace must be a non-empty string naming the endpoint or store")
        super().__init__(inner)
        self.cache = cache
        self.namespace = redact_url(namespace)
        """The namespace without credentials (they never reach a key, a message or a repr): the same
        endpoint answers the same whoever logs in."""
        self.close_cache = close_cache
        self._hits = 0
        self._misses = 0
        self._closed = False
        self._native = isinstance(inner, NativeWalks)
        """Whether whole walks are cached (the inner graph walks natively) rather than walked over the cache."""
        self._fresh_state()

    def _fresh_state(self) -> None:
        """What a new (or unpickled) wrapper starts with: its locks and an empty decoded memo."""
        self._lock = threading.Lock()
        self._local = threading.local()
        # Decoded answers under plain tuple keys, in front of the cache: a warm beam search then pays
        # neither key hashing (JSON + SHA-256) nor decoding on every hop.
        self._decoded: OrderedDict[tuple[object, ...], Any] = OrderedDict()
        self._decoded_generation = self.cache.generation

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        for name in ("_lock", "_local", "_decoded", "_decoded_generation"):
            del state[name]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._fresh_state()

    # -- KnowledgeGraph ------------------------------------------------------------------------
    @forwards(KnowledgeGraph.neighbors)
    def neighbors(self, ids: Ids, **options: Any) -> dict[str, list[Edge]]:
        self._check_open()
        settings = call_options(KnowledgeGraph.neighbors, options)
        direction = check_direction(settings["direction"])
        limit = settings["limit_per_entity"] = check_count(settings["limit_per_entity"], "limit_per_entity")
        relations = settings["relations"]
        if relations is not None and not isinstance(relations, str):
            relations = settings["relations"] = list(relations)
        algorithms.check_relations(self, relations)
        relation_key = self._relation_key(relations)
        for name in ("literals", "expand_cvt", "qualifiers"):
            settings[name] = bool(settings[name])
        flags = (settings["literals"], settings["expand_cvt"], settings["qualifiers"])

        def fetch(missing: list[str]) -> dict[str, Any]:
            answer = self.inner.neighbors(missing, **settings)
            return {node: [edge_to_json(edge) for edge in answer.get(node, [])] for node in missing}

        return self._per_entity(
            ids,
            lambda node: ("neighbors", node, direction, relation_key, limit, *flags),
            fetch,
            lambda stored: [edge_from_json(item) for item in stored],
        )

    def relations(self, ids: Ids, *, direction: Direction = "out", expand_cvt: bool = False) -> dict[str, list[str]]:
        self._check_open()
        check_direction(direction)
        cvt = bool(expand_cvt)

        def fetch(missing: list[str]) -> dict[str, Any]:
            answer = self.inner.relations(missing, direction=direction, expand_cvt=cvt)
            return {node: list(answer.get(node, [])) for node in missing}

        return self._per_entity(
            ids, lambda node: ("relations", node, direction, cvt), fetch, lambda stored: [str(r) for r in stored]
        )

    def labels(self, ids: Ids, *, lang: Langs = "en") -> dict[str, str]:
        self._check_open()
        tags = check_langs(lang)

        def fetch(missing: list[str]) -> dict[str, Any]:
            answer = self.inner.labels(missing, lang=tags)
            return {node: answer.get(node, _ABSENT) for node in missing}

        found = self._per_entity(ids, lambda node: ("labels", node, tags), fetch, lambda stored: stored)
        return CachedDict(
            {node: label for node, label in found.items() if isinstance(label, str)}, from_cache=found.from_cache
        )

    def describe(self, ids: Ids, *, lang: Langs = "en") -> dict[str, Entity]:
        self._check_open()
        tags = check_langs(lang)

        def fetch(missing: list[str]) -> dict[str, Any]:
            answer = self.inner.describe(missing, lang=tags)
            return {node: entity_to_json(answer.get(node, Entity(id=node))) for node in missing}

        return self._per_entity(ids, lambda node: ("describe", node, tags), fetch, entity_from_json)

    def search(self, text: str, *, limit: int = 10) -> list[Entity]:
        return self._cached_search("search", self.inner.search, text, limit)

    def search_relations(self, text: str, *, limit: int = 10) -> list[Entity]:
        return self._cached_search("search_relations", self.inner.search_relations, text, limit)

    def _cached_search(
        self, operation: str, ask: Callable[..., list[Entity]], text: str, limit: int
    ) -> CachedList[Entity]:
        self._check_open()
        check_text(text, "search text")
        check_count(limit, "limit", required=True)
        key = self._key(self.profile, operation, text, limit)
        stored = self.cache.lookup([key])
        if 0 in stored:
            self._count(hits=1)
            return CachedList([entity_from_json(item) for item in stored[0]], from_cache=True)
        self._count(misses=1)
        self._refuse_in_replay(operation, [repr(text)])
        answer = ask(text, limit=limit)
        self.cache.put(key, [entity_to_json(entity) for entity in answer])
        return CachedList(answer, from_cache=False)

    def _query(self, sparql: str) -> list[dict[str, Node | bool]]:
        """``query`` (for an inner graph that answers raw SPARQL), cached by the whitespace-normalised
        query text (:func:`normalize_sparql`)."""
        self._check_open()
        if not isinstance(sparql, str):
            raise InvalidTermError("the query must be a string")
        key = self._key(self.profile, "query", normalize_sparql(sparql))
        stored = self.cache.lookup([key])
        if 0 in stored:
            self._count(hits=1)
            rows = [{name: term_from_json(value) for name, value in row.items()} for row in stored[0]]
            return CachedList(rows, from_cache=True)
        self._count(misses=1)
        self._refuse_in_replay("query", [repr(sparql[:200])])
        answer = super()._query(sparql)
        self.cache.put(key, [{name: node_to_json(value) for name, value in row.items()} for row in answer])
        return CachedList(answer, from_cache=False)

    @forwards(EmbeddedSparql.sparql_rows)
    def _sparql_rows(self, sparql: str, **options: Any) -> list[dict[str, Node | bool]]:
        """The embedded store's server-side queries (:class:`~kg_adapters.base.EmbeddedSparql`): rows cached
        as ``query`` answers are (under the row budget asked for)."""
        self._check_open()
        if not isinstance(sparql, str):
            raise InvalidTermError("the query must be a string")
        max_rows = call_options(EmbeddedSparql.sparql_rows, options)["max_rows"]
        key = self._key(self.profile, "query_rows", max_rows, normalize_sparql(sparql))
        stored = self.cache.lookup([key])
        if 0 in stored:
            self._count(hits=1)
            return CachedList([{n: term_from_json(v) for n, v in row.items()} for row in stored[0]], from_cache=True)
        self._count(misses=1)
        self._refuse_in_replay("query", [repr(sparql[:200])])
        answer = super()._sparql_rows(sparql, **options)
        self.cache.put(key, [{name: node_to_json(value) for name, value in row.items()} for row in answer])
        return CachedList(answer, from_cache=False)

    @forwards(EmbeddedSparql.sparql_write)
    def _sparql_write(self, sparql: str, output: IO[bytes], **options: Any) -> None:
        """A serialized answer of the embedded store, written by the store each time (its bytes are not
        kept), and refused in replay mode like any miss."""
        self._check_open()
        self._refuse_in_replay("query", [repr(str(sparql)[:200])])
        super()._sparql_write(sparql, output, **options)

    @forwards(KnowledgeGraph.paths)
    def paths(self, starts: Ids, relation_path: Sequence[str], **options: Any) -> PathResult:
        self._check_open()
        if not self._native:
            return self._hop_by_hop(algorithms.constrained_paths, starts, relation_path, **options)
        if not isinstance(relation_path, (str, Sequence)):
            relation_path = list(relation_path)  # read once: for the key and for the inner graph
        settings = call_options(KnowledgeGraph.paths, options)
        _, dirs, limit = algorithms.path_arguments(
            self, starts, relation_path, settings["directions"], settings["max_paths"]
        )
        settings.update(directions=dirs, max_paths=limit, simple=bool(settings["simple"]))
        settings["expand_cvt"] = bool(settings["expand_cvt"])
        return self._whole_walk(PathResult, "paths", (starts, relation_path), options, list(relation_path), settings)

    @forwards(KnowledgeGraph.shortest_paths)
    def shortest_paths(self, sources: Ids, targets: Ids, **options: Any) -> PathResult:
        self._check_open()
        if not self._native:
            return self._hop_by_hop(algorithms.all_shortest_paths, sources, targets, **options)
        settings = call_options(KnowledgeGraph.shortest_paths, options)
        _, _, hops, limit = algorithms.shortest_path_arguments(
            self, sources, targets, settings["max_hops"], settings["direction"], settings["max_paths"]
        )
        settings.update(max_hops=hops, max_paths=limit)
        return self._whole_walk(
            PathResult, "shortest_paths", (sources, targets), options, as_id_list(targets), settings
        )

    @forwards(KnowledgeGraph.subgraph)
    def subgraph(self, seeds: Ids, **options: Any) -> EdgeList:
        self._check_open()
        if not self._native:
            return self._hop_by_hop(algorithms.k_hop_subgraph, seeds, **options)
        settings = call_options(KnowledgeGraph.subgraph, options)
        relations = settings["relations"]
        if relations is not None and not isinstance(relations, (str, Sequence)):
            relations = options["relations"] = list(relations)  # read once: for the key and for the inner graph
        _, depth, limit = algorithms.subgraph_arguments(
            self, seeds, settings["hops"], settings["direction"], relations, settings["max_edges"]
        )
        settings.update(hops=depth, max_edges=limit, relations=None if relations is None else list(relations))
        return self._whole_walk(EdgeList, "subgraph", (seeds,), options, settings)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.inner.close()
        finally:
            if self.close_cache:
                self.cache.close()

    # -- cache bookkeeping ---------------------------------------------------------------------
    def cache_stats(self) -> CacheStats:
        """Per-entity hits and misses of this wrapper since it was made."""
        with self._lock:
            return CacheStats(hits=self._hits, misses=self._misses)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r}, namespace={self.namespace!r}, cache={self.cache!r})"

    def _key(self, profile: Profile, operation: object, *parts: object) -> tuple[object, ...]:
        return (CACHE_FORMAT, self.namespace, profile.key, operation, *parts)

    def _relation_key(self, relations: Sequence[str] | None) -> list[str] | None:
        if relations is None:
            return None
        profile = self.profile
        return sorted({profile.relation_id(profile.relation_iri(relation)) for relation in relations})

    def _per_entity(
        self,
        ids: Ids,
        key_parts: Callable[[str], tuple[object, ...]],
        fetch: Callable[[list[str]], dict[str, Any]],
        decode: Callable[[Any], _V],
    ) -> CachedDict[str, _V]:
        """Looks each id up under its own key, fetches only the misses (one call), stores them."""
        profile = self.profile  # one profile for the whole call, read live
        canonical_id = profile.canonical_id
        spellings = as_id_list(ids)
        canonical = {spelling: canonical_id(spelling) for spelling in spellings}
        nodes = list(dict.fromkeys(canonical.values()))
        memo_keys = {node: _hashable((profile.key, *key_parts(node))) for node in nodes}
        decoded = self._recall(memo_keys)
        pending = [node for node in nodes if node not in decoded]
        keys = [self._key(profile, *key_parts(node)) for node in pending]
        stored = self.cache.lookup(keys) if pending else {}
        values: dict[str, Any] = {pending[position]: value for position, value in stored.items()}
        missing = [node for node in pending if node not in values]
        self._count(hits=len(decoded) + len(values), misses=len(missing))
        if missing:
            tracker: _Tracker | None = getattr(self._local, "tracker", None)
            if tracker is not None:
                tracker.all_hit = False
            self._refuse_in_replay(key_parts(missing[0])[0], missing)
            fetched = fetch(missing)
            self.cache.put_many((self._key(profile, *key_parts(node)), fetched[node]) for node in missing)
            values.update(fetched)
        fresh = {node: decode(value) for node, value in values.items()}
        self._memorize({memo_keys[node]: value for node, value in fresh.items()})
        decoded.update(fresh)
        return CachedDict(
            {spelling: _copy(decoded[canonical[spelling]]) for spelling in spellings}, from_cache=not missing
        )

    def _hop_by_hop(self, walk: Callable[..., _A], *arguments: Any, **options: Any) -> _A:
        """``walk`` (an algorithm of :mod:`kg_adapters.algorithms`) over this wrapper, so every hop goes
        through the cache; ``from_cache`` when every hop was a hit."""
        with self._tracking() as tracker:
            result = walk(self, *arguments, **options)
        result.from_cache = tracker.all_hit
        return result

    def _whole_walk(
        self, kind: type[_A], operation: str, arguments: tuple[Any, ...], options: dict[str, Any], *checked: object
    ) -> _A:
        """The whole answer of the native walk ``operation(*arguments, **options)``, under one key of every
        argument, ``checked`` (the first argument's ids, the other arguments and the options as checked):
        remembered decoded, else from the cache file, else walked by the inner graph (refused in replay
        mode). A cache without a file keeps whole walks only decoded (bounded like the rest of its
        memory): a JSON copy nobody reads back would cost more than the native walk it saves."""
        encode, decode = _WALK_CODECS[operation]
        key_parts: tuple[object, ...] = (operation, as_id_list(arguments[0]), *checked)
        profile = self.profile
        memo_key = (profile.key, *(_frozen(part) for part in key_parts))
        answer: _A | None = self._recall({"": memo_key}).get("")
        from_cache = answer is not None
        if answer is None:
            key = self._key(profile, *key_parts)
            on_disk = self.cache.path is not None
            stored = self.cache.lookup([key]) if on_disk else {}
            from_cache = 0 in stored
            if from_cache:
                answer = cast(_A, decode(stored[0]))
            else:
                self._count(misses=1)
                ids = key_parts[1]
                self._refuse_in_replay(str(key_parts[0]), ids if isinstance(ids, list) else [repr(ids)])
                answer = cast(_A, getattr(self.inner, operation)(*arguments, **options))
                if on_disk:
                    self.cache.put(key, encode(answer))
            self._memorize({memo_key: answer})
        if from_cache:
            self._count(hits=1)
        return kind(list(answer), truncated=answer.truncated, from_cache=from_cache)

    def _recall(self, memo_keys: dict[str, tuple[object, ...]]) -> dict[str, Any]:
        """Decoded answers remembered in this process (dropped when the cache was cleared)."""
        found: dict[str, Any] = {}
        with self._lock:
            if self._decoded_generation != self.cache.generation:
                self._decoded.clear()
                self._decoded_generation = self.cache.generation
            for node, key in memo_keys.items():
                value = self._decoded.get(key, _NOT_FOUND)
                if value is not _NOT_FOUND:
                    self._decoded.move_to_end(key)
                    found[node] = value
        return found

    def _memorize(self, entries: dict[tuple[object, ...], Any]) -> None:
        if self.cache.mode == "off" or self.cache.memory_entries <= 0:
            return
        with self._lock:
            self._decoded.update(entries)
            while len(self._decoded) > self.cache.memory_entries:
                self._decoded.popitem(last=False)

    def _refuse_in_replay(self, operation: object, missing: Sequence[str]) -> None:
        if self.cache.mode == "replay":
            shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
            raise CacheMiss(
                f"replay cache has no {operation} answer for {shown} (namespace {self.namespace!r}, "
                f"profile {self.profile.name}); the wrapped KG is not asked in replay mode"
            )

    def _count(self, *, hits: int = 0, misses: int = 0) -> None:
        with self._lock:
            self._hits += hits
            self._misses += misses

    @contextmanager
    def _tracking(self) -> Iterator[_Tracker]:
        outer: _Tracker | None = getattr(self._local, "tracker", None)
        tracker = _Tracker()
        self._local.tracker = tracker
        try:
            yield tracker
        finally:
            self._local.tracker = outer
            if outer is not None and not tracker.all_hit:
                outer.all_hit = False

    def _check_open(self) -> None:
        if self._closed:
            raise BackendError(f"{type(self).__name__} is closed")


def cached(
    inner: KnowledgeGraph,
    *,
    cache: ResultCache,
    namespace: str,
    close_cache: bool = False,
) -> KnowledgeGraph:
    """``inner`` behind ``cache``: a :class:`CachedKG`, which answers (and caches) ``query`` when
    ``inner`` answers SPARQL."""
    return CachedKG(inner, cache=cache, namespace=namespace, close_cache=close_cache)
