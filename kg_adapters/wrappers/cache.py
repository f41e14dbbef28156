"""A per-entity result cache in front of any :class:`KnowledgeGraph`, persistent in SQLite.

``cached(kg, cache=ResultCache("cache.sqlite"), namespace="https://query.wikidata.org/sparql")``
answers ``neighbors``/``relations``/``labels`` entity by entity: each id is looked up under its
own key and only the misses are fetched from the wrapped KG, in one batched call. Composite
operations (``paths``, ``shortest_paths``, ``subgraph``) run the shared algorithms over the
wrapper itself, so every hop goes through the cache and a beam search that expands the same
entities again pays nothing for them. Answers say whether they came from the cache
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
from typing import IO, Any, ClassVar, TypeVar

from kg_adapters import algorithms
from kg_adapters.base import (
    Direction,
    EmbeddedSparql,
    Ids,
    KnowledgeGraph,
    Langs,
    SparqlQueryable,
    SparqlRunner,
    as_id_list,
    check_budget,
    check_direction,
)
from kg_adapters.errors import BackendError, CacheMiss, InvalidTermError
from kg_adapters.profiles import Profile
from kg_adapters.records import (
    Edge,
    EdgeList,
    Entity,
    Node,
    PathResult,
    edge_from_json,
    edge_to_json,
    entity_from_json,
    entity_to_json,
    node_to_json,
    term_from_json,
)
from kg_adapters.sparql_terms import check_langs, check_text
from kg_adapters.sqlite_lru import CacheMode, ResultCache
from kg_adapters.wrappers.base import DelegatingGraph, ForwardingMixin, ForwardsEmbeddedSparql, ForwardsQuery

__all__ = [
    "CacheMode",
    "CacheStats",
    "CachedDict",
    "CachedKG",
    "CachedList",
    "CachedSparqlKG",
    "ResultCache",
    "cache_namespace",
    "cached",
    "normalize_sparql",
]

CACHE_FORMAT = "kga-cache/2"
"""Part of every key: bump it when the value encoding changes, and old entries are never read. Values are
encoded with the one JSON codec for records (:mod:`kg_adapters.records`; version 2 switched to it)."""

_K = TypeVar("_K")
_V = TypeVar("_V")
_T = TypeVar("_T")


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


class _CachesQueries(ForwardsQuery):
    """``query`` answers cached by the whitespace-normalised query text (:func:`normalize_sparql`),
    for an inner graph that answers raw SPARQL."""

    def query(self, sparql: str) -> list[dict[str, Node | bool]]:
        assert isinstance(self, CachedKG)
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
        answer = super().query(sparql)
        self.cache.put(key, [{name: node_to_json(value) for name, value in row.items()} for row in answer])
        return CachedList(answer, from_cache=False)


class _CachesEmbeddedQueries(ForwardsEmbeddedSparql):
    """The embedded store's server-side queries: rows cached as ``query`` answers are (under the row
    budget asked for); a serialized answer is written by the store each time (its bytes are not kept),
    and refused in replay mode like any miss."""

    def sparql_rows(
        self, sparql: str, *, max_rows: int | None = None, runner: SparqlRunner | None = None
    ) -> list[dict[str, Node | bool]]:
        assert isinstance(self, CachedKG)
        self._check_open()
        if not isinstance(sparql, str):
            raise InvalidTermError("the query must be a string")
        key = self._key(self.profile, "query_rows", max_rows, normalize_sparql(sparql))
        stored = self.cache.lookup([key])
        if 0 in stored:
            self._count(hits=1)
            return CachedList([{n: term_from_json(v) for n, v in row.items()} for row in stored[0]], from_cache=True)
        self._count(misses=1)
        self._refuse_in_replay("query", [repr(sparql[:200])])
        answer = super().sparql_rows(sparql, max_rows=max_rows, runner=runner)
        self.cache.put(key, [{name: node_to_json(value) for name, value in row.items()} for row in answer])
        return CachedList(answer, from_cache=False)

    def sparql_write(
        self,
        sparql: str,
        output: IO[bytes],
        *,
        format: str,
        default_graphs: Sequence[str] = (),
        named_graphs: Sequence[str] = (),
        runner: SparqlRunner | None = None,
    ) -> None:
        assert isinstance(self, CachedKG)
        self._check_open()
        self._refuse_in_replay("query", [repr(str(sparql)[:200])])
        super().sparql_write(
            sparql, output, format=format, default_graphs=default_graphs, named_graphs=named_graphs, runner=runner
        )


class CachedKG(DelegatingGraph):
    """A :class:`KnowledgeGraph` answering from ``cache`` and asking ``inner`` only for misses.

    Built on :class:`~kg_adapters.wrappers.base.DelegatingGraph`: it keeps the inner graph's optional
    abilities (raw ``query``, cached here; ``detect_profile``, ``use_relation_filter``, writing,
    forwarded). The profile is read from ``inner`` on every call, so keys follow a profile the
    backend switches later. ``inner``, ``cache`` and ``namespace`` are exposed for callers that need
    them. ``close()`` closes ``inner`` (and the cache when ``close_cache``).
    """

    capability_mixins: ClassVar[dict[type, type[ForwardingMixin]]] = {
        SparqlQueryable: _CachesQueries,
        EmbeddedSparql: _CachesEmbeddedQueries,
    }

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
        self.namespace = namespace
        self.close_cache = close_cache
        self._lock = threading.Lock()
        self._local = threading.local()
        self._hits = 0
        self._misses = 0
        self._closed = False
        # Decoded per-entity answers under plain tuple keys, in front of the cache: a warm beam
        # search then pays neither key hashing (JSON + SHA-256) nor decoding on every hop.
        self._decoded: OrderedDict[tuple[object, ...], Any] = OrderedDict()
        self._decoded_generation = cache.generation

    # -- KnowledgeGraph ------------------------------------------------------------------------
    def neighbors(
        self,
        ids: Ids,
        *,
        direction: Direction = "out",
        relations: Sequence[str] | None = None,
        limit_per_entity: int | None = None,
        literals: bool = True,
        expand_cvt: bool = False,
        qualifiers: bool = False,
    ) -> dict[str, list[Edge]]:
        self._check_open()
        check_direction(direction)
        limit = check_budget(limit_per_entity, "limit_per_entity")
        if relations is not None and not isinstance(relations, str):
            relations = list(relations)
        algorithms.check_relations(self, relations)
        relation_key = self._relation_key(relations)
        flag = bool(literals)
        cvt, statements = bool(expand_cvt), bool(qualifiers)

        def fetch(missing: list[str]) -> dict[str, Any]:
            answer = self.inner.neighbors(
                missing,
                direction=direction,
                relations=relations,
                limit_per_entity=limit,
                literals=flag,
                expand_cvt=cvt,
                qualifiers=statements,
            )
            return {node: [edge_to_json(edge) for edge in answer.get(node, [])] for node in missing}

        return self._per_entity(
            ids,
            lambda node: ("neighbors", node, direction, relation_key, limit, flag, cvt, statements),
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
        check_budget(limit, "limit", required=True)
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

    def paths(
        self,
        starts: Ids,
        relation_path: Sequence[str],
        *,
        directions: Sequence[Direction] | None = None,
        max_paths: int | None = None,
        simple: bool = False,
        expand_cvt: bool = False,
    ) -> PathResult:
        self._check_open()
        with self._tracking() as tracker:
            result = algorithms.constrained_paths(
                self,
                starts,
                relation_path,
                directions=directions,
                max_paths=max_paths,
                simple=simple,
                expand_cvt=expand_cvt,
            )
        result.from_cache = tracker.all_hit
        return result

    def shortest_paths(
        self,
        sources: Ids,
        targets: Ids,
        *,
        max_hops: int = 4,
        direction: Direction = "both",
        max_paths: int | None = None,
    ) -> PathResult:
        self._check_open()
        with self._tracking() as tracker:
            result = algorithms.all_shortest_paths(
                self, sources, targets, max_hops=max_hops, direction=direction, max_paths=max_paths
            )
        result.from_cache = tracker.all_hit
        return result

    def subgraph(
        self,
        seeds: Ids,
        *,
        hops: int = 2,
        direction: Direction = "both",
        relations: Sequence[str] | None = None,
        max_edges: int | None = None,
    ) -> EdgeList:
        self._check_open()
        with self._tracking() as tracker:
            result = algorithms.k_hop_subgraph(
                self, seeds, hops=hops, direction=direction, relations=relations, max_edges=max_edges
            )
        result.from_cache = tracker.all_hit
        return result

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


CachedSparqlKG = CachedKG
"""The old name of :class:`CachedKG` over a graph that answers SPARQL (one class does both now)."""


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
