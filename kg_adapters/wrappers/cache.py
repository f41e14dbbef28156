"""A per-entity result cache in front of any :class:`KnowledgeGraph`, persistent in SQLite.

``cached(kg, cache=ResultCache("cache.sqlite"), namespace="https://query.wikidata.org/sparql")``
answers ``neighbors``/``relations``/``labels`` entity by entity: each id is looked up under its
own key and only the misses are fetched from the wrapped KG, in one batched call. Composite
operations (``paths``, ``shortest_paths``, ``subgraph``) run the shared algorithms over the
wrapper itself, so every hop goes through the cache and a beam search that expands the same
entities again pays nothing for them. Answers say whether they came from the cache
(``from_cache`` on :class:`CachedDict`, :class:`CachedList`, ``PathResult`` and ``EdgeList``).

:class:`ResultCache` is an in-memory LRU in front of an optional SQLite file (WAL mode, one
table ``entries(key, value, size, last_used)``, values zlib-compressed JSON, least recently
used rows evicted past ``max_disk_bytes``). ``mode="replay"`` opens it read-only and makes a
miss raise :class:`CacheMiss` without touching the wrapped KG, so a run can prove it needs no
network; ``mode="off"`` stores nothing.

Keys are the SHA-256 of a canonical JSON of ``(format version, namespace, profile key,
operation, arguments...)``. The namespace must identify the endpoint or store (URL, absolute
path) -- use :func:`cache_namespace` -- so two KGs never share entries; the profile key (its
name, plus its relation filter's fingerprint when that is not the default) is added automatically.
Blank-node ids are cached like any id, so the namespace must name a store whose blank-node ids
are stable (on-disk stores and SPARQL endpoints; not a file re-loaded into memory).
The cache does not see writes to the wrapped KG: clear it after changing the data.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from typing import Literal as TypingLiteral

from kg_adapters import algorithms
from kg_adapters.base import (
    ClosesOnExit,
    Direction,
    Ids,
    KnowledgeGraph,
    Langs,
    SparqlQueryable,
    as_id_list,
    check_budget,
    check_direction,
)
from kg_adapters.errors import BackendError, CacheMiss, InvalidTermError
from kg_adapters.profiles import Profile
from kg_adapters.records import Edge, EdgeList, Entity, Literal, Node, PathResult, Qualifiers
from kg_adapters.sparql_terms import check_langs, check_text

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
    "decode_edge",
    "decode_entity",
    "decode_node",
    "encode_edge",
    "encode_entity",
    "encode_node",
    "normalize_sparql",
]

CacheMode = TypingLiteral["readwrite", "replay", "off"]
CACHE_FORMAT = "kga-cache/1"
"""Part of every key: bump it when the value encoding changes, and old entries are never read."""

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


# -- a stable JSON encoding of records ---------------------------------------------------------------


def encode_node(node: Node | bool) -> Any:
    """An entity id as itself, a literal as ``{"v": value[, "dt": datatype][, "lang": tag]}``,
    a boolean (ASK answers) as itself."""
    if isinstance(node, (str, bool)):
        return node
    if isinstance(node, Literal):
        out = {"v": node.value}
        if node.datatype is not None:
            out["dt"] = node.datatype
        if node.lang is not None:
            out["lang"] = node.lang
        return out
    raise TypeError(f"cannot encode {type(node).__name__} as a node")


def decode_node(data: Any) -> Node | bool:
    if isinstance(data, (str, bool)):
        return data
    if isinstance(data, dict) and isinstance(data.get("v"), str):
        return Literal(value=data["v"], datatype=data.get("dt"), lang=data.get("lang"))
    raise ValueError(f"not an encoded node: {data!r:.200}")


def _decode_graph_node(data: Any) -> Node:
    node = decode_node(data)
    if isinstance(node, bool):
        raise ValueError(f"not an encoded entity or literal: {data!r:.200}")
    return node


def encode_edge(edge: Edge) -> list[Any]:
    """``[head, relation, tail]`` in the KG's own direction, the tail encoded by :func:`encode_node`;
    a statement adds ``{"rank": ..., "q": [[qualifier, [value, ...]], ...]}``, an edge that carries a CVT's
    edges ``{"cvt": [edge, ...]}``."""
    encoded = [edge.head, edge.relation, encode_node(edge.tail)]
    extra: dict[str, Any] = {}
    if edge.rank is not None or edge.qualifiers:
        extra["rank"] = edge.rank
        if edge.qualifiers:
            extra["q"] = [[relation, [encode_node(v) for v in values]] for relation, values in edge.qualifiers.items()]
    if edge.cvt:
        extra["cvt"] = [encode_edge(inner) for inner in edge.cvt]
    if extra:
        encoded.append(extra)
    return encoded


def decode_edge(data: Any) -> Edge:
    head, relation, tail, *rest = data
    if not isinstance(head, str) or not isinstance(relation, str) or len(rest) > 1:
        raise ValueError(f"not an encoded edge: {data!r:.200}")
    if not rest:
        return Edge(head=head, relation=relation, tail=_decode_graph_node(tail))
    extra = rest[0]
    qualifiers = Qualifiers((q, [_decode_graph_node(v) for v in values]) for q, values in extra.get("q", ()))
    return Edge(
        head=head,
        relation=relation,
        tail=_decode_graph_node(tail),
        qualifiers=qualifiers,
        rank=extra.get("rank"),
        cvt=tuple(decode_edge(inner) for inner in extra.get("cvt", ())),
    )


def encode_entity(entity: Entity) -> dict[str, str]:
    out = {"id": entity.id}
    if entity.label is not None:
        out["label"] = entity.label
    if entity.description is not None:
        out["description"] = entity.description
    return out


def decode_entity(data: Any) -> Entity:
    return Entity(id=data["id"], label=data.get("label"), description=data.get("description"))


_NOT_FOUND = object()


def _copy(value: Any) -> Any:
    """A fresh list for each answer, so a caller changing it cannot change what is remembered."""
    return list(value) if isinstance(value, list) else value


def _hashable(parts: tuple[object, ...]) -> tuple[object, ...]:
    """A key tuple with its lists turned into tuples, for an in-memory dict."""
    return tuple(tuple(part) if isinstance(part, list) else part for part in parts)


def _key_digest(key: Sequence[object]) -> str:
    text = json.dumps(list(key), ensure_ascii=True, separators=(",", ":"), sort_keys=True, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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


# -- the store: memory LRU + SQLite --------------------------------------------------------------------

_MODES: tuple[str, ...] = ("readwrite", "replay", "off")
_SQL_CHUNK = 500
_TOUCH_FLUSH = 4096


class ResultCache(ClosesOnExit):
    """Key -> JSON value store: an in-memory LRU of ``memory_entries`` in front of an optional
    SQLite file at ``path``. Thread-safe (one lock); several processes may share a file (WAL),
    though the ``max_disk_bytes`` accounting only counts what this process wrote since opening.

    Keys are sequences of JSON scalars/lists (hashed with SHA-256); values are any JSON value.
    ``max_disk_bytes`` bounds the stored bytes (key + compressed value per row): past it the least
    recently used rows are deleted and their pages freed (incremental vacuum). Reads refresh
    ``last_used`` lazily (flushed with the next write, every few thousand reads and on close).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        memory_entries: int = 100_000,
        max_disk_bytes: int | None = None,
        mode: CacheMode = "readwrite",
    ) -> None:
        if mode not in _MODES:
            raise InvalidTermError(f"mode must be one of readwrite, replay, off; got {mode!r}")
        check_budget(memory_entries, "memory_entries")
        check_budget(max_disk_bytes, "max_disk_bytes")
        self.mode: CacheMode = mode
        self.path = str(Path(path).expanduser().absolute()) if path is not None else None
        self.memory_entries = memory_entries
        self.max_disk_bytes = max_disk_bytes
        self._lock = threading.RLock()
        self._memory: OrderedDict[str, Any] = OrderedDict()
        self.generation = 0
        """Bumped by clear(), so wrappers drop what they remember from before."""
        self._touched: dict[str, int] = {}
        self._tick = 0
        self._disk_bytes = 0
        self._closed = False
        self.memory_hits = 0
        self.disk_hits = 0
        self.misses = 0
        self.evicted = 0
        self._conn: sqlite3.Connection | None = None
        if self.path is not None and mode != "off":
            self._conn = self._open(self.path)

    # -- public API -------------------------------------------------------------------------------
    @property
    def writable(self) -> bool:
        return self.mode == "readwrite"

    def get(self, key: Sequence[object], default: Any = None) -> Any:
        """The value stored under ``key``, or ``default``."""
        found = self.lookup([key])
        return found.get(0, default)

    def lookup(self, keys: Sequence[Sequence[object]]) -> dict[int, Any]:
        """The stored values of the keys that are present, by position in ``keys``."""
        digests = [_key_digest(key) for key in keys]
        found: dict[int, Any] = {}
        with self._lock:
            self._check_open()
            if self.mode == "off":
                self.misses += len(digests)
                return found
            pending: dict[str, list[int]] = {}
            for position, digest in enumerate(digests):
                if digest in self._memory:
                    self._memory.move_to_end(digest)
                    found[position] = self._memory[digest]
                    self.memory_hits += 1
                    self._touch(digest)
                else:
                    pending.setdefault(digest, []).append(position)
            if pending and self._conn is not None:
                for digest, value in self._read_disk(list(pending)):
                    for position in pending.pop(digest):
                        found[position] = value
                        self.disk_hits += 1
                    self._remember(digest, value)
                    self._touch(digest)
            self.misses += sum(len(positions) for positions in pending.values())
            if len(self._touched) >= _TOUCH_FLUSH and self.writable and self._conn is not None:
                self._flush_touches()
        return found

    def put(self, key: Sequence[object], value: Any) -> None:
        self.put_many([(key, value)])

    def put_many(self, items: Iterable[tuple[Sequence[object], Any]]) -> None:
        """Stores every (key, value); ignored in ``replay`` and ``off`` mode."""
        rows: list[tuple[str, Any]] = [(_key_digest(key), value) for key, value in items]
        with self._lock:
            self._check_open()
            if not self.writable:
                return
            for digest, value in rows:
                self._remember(digest, value)
            if self._conn is not None:
                self._write_disk(rows)

    def clear(self) -> None:
        """Deletes every entry, in memory and on disk."""
        with self._lock:
            self._check_open()
            if self.mode == "replay":
                raise BackendError("a replay-mode cache is read-only and cannot be cleared")
            self._memory.clear()
            self.generation += 1
            self._touched.clear()
            if self._conn is not None:
                try:
                    self._conn.execute("DELETE FROM entries")
                    self._conn.execute("PRAGMA incremental_vacuum")
                except sqlite3.Error as exc:
                    raise BackendError(f"cannot clear the cache {self.path}: {exc}") from exc
            self._disk_bytes = 0

    def disk_bytes(self) -> int:
        """Bytes stored on disk (keys plus compressed values), as this process accounts them."""
        with self._lock:
            return self._disk_bytes

    def __len__(self) -> int:
        with self._lock:
            self._check_open()
            if self._conn is None:
                return len(self._memory)
            row = self._conn.execute("SELECT COUNT(*) FROM entries").fetchone()
            return int(row[0])

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {
                "memory_hits": self.memory_hits,
                "disk_hits": self.disk_hits,
                "misses": self.misses,
                "memory_entries": len(self._memory),
                "disk_bytes": self._disk_bytes,
                "evicted": self.evicted,
            }

    def close(self) -> None:
        """Flushes pending ``last_used`` updates and closes the file; idempotent."""
        with self._lock:
            if self._closed:
                return
            if self._conn is not None:
                try:
                    if self.writable and self._touched:
                        self._flush_touches()
                finally:
                    self._conn.close()
                    self._conn = None
            self._memory.clear()
            self._closed = True

    def __repr__(self) -> str:
        return f"ResultCache({self.path!r}, mode={self.mode!r})"

    # -- internals --------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise BackendError("the result cache is closed")

    def _open(self, path: str) -> sqlite3.Connection:
        """Opens the file; only creating it takes the write lock, so a process that only reads (or
        finds another process mid-write) never waits for one. Replay mode opens it read-only, and
        on read-only media (where SQLite cannot make its ``-shm`` file) as an immutable file."""
        try:
            if self.mode == "replay":
                if not os.path.isfile(path):
                    raise CacheMiss(f"replay cache {path} does not exist")
                writable = os.access(os.path.dirname(path), os.W_OK) and os.access(path, os.W_OK)
                conn = sqlite3.connect(
                    Path(path).as_uri() + ("?mode=ro" if writable else "?immutable=1"),
                    uri=True,
                    check_same_thread=False,
                    timeout=30.0,
                )
            else:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(path, check_same_thread=False, timeout=30.0, isolation_level=None)
                conn.execute("PRAGMA synchronous=NORMAL")
                if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'entries'").fetchone():
                    conn.execute("PRAGMA auto_vacuum=INCREMENTAL")  # takes effect only on a new file
                    conn.execute("PRAGMA journal_mode=WAL")
                    conn.execute(
                        "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value BLOB NOT NULL, "
                        "size INTEGER NOT NULL, last_used INTEGER NOT NULL)"
                    )
                    conn.execute("CREATE INDEX IF NOT EXISTS entries_last_used ON entries (last_used)")
            total, newest = conn.execute(
                "SELECT COALESCE(SUM(size), 0), COALESCE(MAX(last_used), 0) FROM entries"
            ).fetchone()
        except sqlite3.Error as exc:
            raise BackendError(f"cannot open the result cache {path}: {exc}") from exc
        self._disk_bytes = int(total)
        self._tick = int(newest)
        return conn

    def _flush_touches(self) -> None:
        """Writes pending ``last_used`` times if the write lock is free at once; they are a hint for
        eviction, so a reader never waits on (or fails because of) another process's write."""
        conn = self._conn
        assert conn is not None
        try:
            conn.execute("PRAGMA busy_timeout = 0")
            try:
                self._write_disk([])
            finally:
                conn.execute("PRAGMA busy_timeout = 30000")
        except (BackendError, sqlite3.Error):
            if len(self._touched) > 4 * _TOUCH_FLUSH:
                self._touched.clear()

    def _next_tick(self) -> int:
        self._tick = max(time.time_ns(), self._tick + 1)
        return self._tick

    def _touch(self, digest: str) -> None:
        if self._conn is not None and self.writable:
            self._touched[digest] = self._next_tick()

    def _remember(self, digest: str, value: Any) -> None:
        if self.memory_entries <= 0:
            return
        self._memory[digest] = value
        self._memory.move_to_end(digest)
        while len(self._memory) > self.memory_entries:
            self._memory.popitem(last=False)

    def _read_disk(self, digests: list[str]) -> Iterator[tuple[str, Any]]:
        assert self._conn is not None
        for offset in range(0, len(digests), _SQL_CHUNK):
            chunk = digests[offset : offset + _SQL_CHUNK]
            marks = ",".join("?" * len(chunk))
            try:
                rows = self._conn.execute(f"SELECT key, value FROM entries WHERE key IN ({marks})", chunk).fetchall()
            except sqlite3.Error as exc:
                raise BackendError(f"cannot read the result cache {self.path}: {exc}") from exc
            for digest, blob in rows:
                try:
                    value = json.loads(zlib.decompress(blob))
                except (zlib.error, ValueError):
                    continue  # a damaged row reads as a miss and is overwritten by the next put
                yield str(digest), value

    def _write_disk(self, rows: list[tuple[str, Any]]) -> None:
        """One transaction: store ``rows``, flush touched ``last_used`` values, evict past the bound."""
        conn = self._conn
        assert conn is not None
        encoded: list[tuple[str, bytes, int, int]] = []
        for digest, value in rows:
            blob = zlib.compress(
                json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("utf-8")
            )
            encoded.append((digest, blob, len(digest) + len(blob), self._next_tick()))
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for digest, blob, size, tick in encoded:
                    old = conn.execute("SELECT size FROM entries WHERE key = ?", (digest,)).fetchone()
                    if old is not None:
                        self._disk_bytes -= int(old[0])
                    conn.execute(
                        "INSERT OR REPLACE INTO entries (key, value, size, last_used) VALUES (?, ?, ?, ?)",
                        (digest, blob, size, tick),
                    )
                    self._disk_bytes += size
                    self._touched.pop(digest, None)
                if self._touched:
                    conn.executemany(
                        "UPDATE entries SET last_used = ? WHERE key = ?",
                        [(tick, digest) for digest, tick in self._touched.items()],
                    )
                    self._touched.clear()
                evicted = self._evict(conn)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            if evicted:
                conn.execute("PRAGMA incremental_vacuum")
        except sqlite3.Error as exc:
            self._disk_bytes = int(conn.execute("SELECT COALESCE(SUM(size), 0) FROM entries").fetchone()[0])
            raise BackendError(f"cannot write the result cache {self.path}: {exc}") from exc

    def _evict(self, conn: sqlite3.Connection) -> int:
        limit = self.max_disk_bytes
        if limit is None or self._disk_bytes <= limit:
            return 0
        excess = self._disk_bytes - limit
        victims: list[tuple[str]] = []
        freed = 0
        for digest, size in conn.execute("SELECT key, size FROM entries ORDER BY last_used, key"):
            if freed >= excess:
                break
            victims.append((digest,))
            freed += int(size)
        conn.executemany("DELETE FROM entries WHERE key = ?", victims)
        self._disk_bytes -= freed
        self.evicted += len(victims)
        return len(victims)


# -- the KnowledgeGraph wrapper ------------------------------------------------------------------------


class _Tracker:
    """Whether every lookup of one composite operation was a hit."""

    def __init__(self) -> None:
        self.all_hit = True


_ABSENT = {"absent": True}
"""Stored for an id without a label, so it is not fetched again."""


class CachedKG(ClosesOnExit):
    """A :class:`KnowledgeGraph` answering from ``cache`` and asking ``inner`` only for misses.

    Every method is delegated explicitly; ``inner``, ``cache`` and ``namespace`` are exposed for
    callers that need them. ``close()`` closes ``inner`` (and the cache when ``close_cache``).
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
        self.inner = inner
        self.cache = cache
        self.namespace = namespace
        self.close_cache = close_cache
        self._profile = inner.profile
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
    @property
    def profile(self) -> Profile:
        return self._profile

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
            return {node: [encode_edge(edge) for edge in answer.get(node, [])] for node in missing}

        return self._per_entity(
            ids,
            lambda node: ("neighbors", node, direction, relation_key, limit, flag, cvt, statements),
            fetch,
            lambda stored: [decode_edge(item) for item in stored],
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
            return {node: encode_entity(answer.get(node, Entity(id=node))) for node in missing}

        return self._per_entity(ids, lambda node: ("describe", node, tags), fetch, decode_entity)

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
        key = self._key(operation, text, limit)
        stored = self.cache.lookup([key])
        if 0 in stored:
            self._count(hits=1)
            return CachedList([decode_entity(item) for item in stored[0]], from_cache=True)
        self._count(misses=1)
        self._refuse_in_replay(operation, [repr(text)])
        answer = ask(text, limit=limit)
        self.cache.put(key, [encode_entity(entity) for entity in answer])
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

    def _key(self, operation: object, *parts: object) -> tuple[object, ...]:
        return (CACHE_FORMAT, self.namespace, self._profile.key, operation, *parts)

    def _relation_key(self, relations: Sequence[str] | None) -> list[str] | None:
        if relations is None:
            return None
        profile = self._profile
        return sorted({profile.relation_id(profile.relation_iri(relation)) for relation in relations})

    def _per_entity(
        self,
        ids: Ids,
        key_parts: Callable[[str], tuple[object, ...]],
        fetch: Callable[[list[str]], dict[str, Any]],
        decode: Callable[[Any], _V],
    ) -> CachedDict[str, _V]:
        """Looks each id up under its own key, fetches only the misses (one call), stores them."""
        canonical_id = self._profile.canonical_id
        spellings = as_id_list(ids)
        canonical = {spelling: canonical_id(spelling) for spelling in spellings}
        nodes = list(dict.fromkeys(canonical.values()))
        memo_keys = {node: _hashable(key_parts(node)) for node in nodes}
        decoded = self._recall(memo_keys)
        pending = [node for node in nodes if node not in decoded]
        keys = [self._key(*key_parts(node)) for node in pending]
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
            self.cache.put_many((self._key(*key_parts(node)), fetched[node]) for node in missing)
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
                f"profile {self._profile.name}); the wrapped KG is not asked in replay mode"
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


class CachedSparqlKG(CachedKG):
    """A :class:`CachedKG` over a KG that also answers raw SPARQL; ``query`` answers are cached
    by the whitespace-normalised query text (see :func:`normalize_sparql`)."""

    def __init__(
        self,
        inner: KnowledgeGraph,
        *,
        cache: ResultCache,
        namespace: str,
        close_cache: bool = False,
    ) -> None:
        if not isinstance(inner, SparqlQueryable):
            raise TypeError(f"{type(inner).__name__} does not answer SPARQL queries; use CachedKG")
        super().__init__(inner, cache=cache, namespace=namespace, close_cache=close_cache)
        self._sparql: SparqlQueryable = inner

    def query(self, sparql: str) -> list[dict[str, Node | bool]]:
        self._check_open()
        if not isinstance(sparql, str):
            raise InvalidTermError("the query must be a string")
        key = self._key("query", normalize_sparql(sparql))
        stored = self.cache.lookup([key])
        if 0 in stored:
            self._count(hits=1)
            rows = [{name: decode_node(value) for name, value in row.items()} for row in stored[0]]
            return CachedList(rows, from_cache=True)
        self._count(misses=1)
        self._refuse_in_replay("query", [repr(sparql[:200])])
        answer = self._sparql.query(sparql)
        self.cache.put(key, [{name: encode_node(value) for name, value in row.items()} for row in answer])
        return CachedList(answer, from_cache=False)


def cached(
    inner: KnowledgeGraph,
    *,
    cache: ResultCache,
    namespace: str,
    close_cache: bool = False,
) -> KnowledgeGraph:
    """``inner`` behind ``cache``: a :class:`CachedSparqlKG` when ``inner`` answers SPARQL
    (``isinstance(inner, SparqlQueryable)``), else a :class:`CachedKG`."""
    if isinstance(inner, SparqlQueryable):
        return CachedSparqlKG(inner, cache=cache, namespace=namespace, close_cache=close_cache)
    return CachedKG(inner, cache=cache, namespace=namespace, close_cache=close_cache)
