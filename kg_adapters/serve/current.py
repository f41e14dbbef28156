"""The graph a long-running server answers from, following ``kga load``.

A server opened on an on-disk store keeps serving while ``kga load`` appends to the store and swaps
a new version in (see :mod:`kg_adapters.store_layout`): every request asks for the current graph,
which reopens the store when its manifest names another version. Requests already running finish on
the version they started with, which stays open (and keeps its reader lock, so the load cannot
delete it) until the last of them is done."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kg_adapters.base import KnowledgeGraph
from kg_adapters.registry import connect
from kg_adapters.store_layout import MANIFEST
from kg_adapters.url import local_path, parse_url


class CurrentGraph:
    """``connect(url, **options)`` once, and again whenever the store's manifest changes."""

    def __init__(self, url: str, *, opener: Callable[[], KnowledgeGraph] | None = None, **options: Any) -> None:
        parsed = parse_url(url)
        self._open = opener or (lambda: connect(url, **options))
        path = local_path(parsed) if parsed.scheme == "oxigraph" else ""
        self._manifest = Path(path) / MANIFEST if path else None
        self._lock = threading.Lock()
        self._stamp = self._manifest_stamp()
        self._graph = self._open()
        self._users: dict[int, int] = {id(self._graph): 0}
        self._retired: dict[int, KnowledgeGraph] = {}
        self._closed = False

    def _manifest_stamp(self) -> tuple[int, int, int] | None:
        if self._manifest is None:
            return None
        try:
            stat = os.stat(self._manifest)
        except OSError:
            return None
        return (stat.st_ino, stat.st_mtime_ns, stat.st_size)

    @contextmanager
    def use(self) -> Iterator[KnowledgeGraph]:
        """The current graph, held open for the block."""
        with self._lock:
            if self._closed:
                from kg_adapters.errors import BackendError

                raise BackendError("the server is shutting down")
            stamp = self._manifest_stamp()
            if stamp != self._stamp:  # a load swapped a version in (the manifest is replaced by rename)
                fresh = self._open()
                old = self._graph
                self._graph, self._stamp = fresh, stamp
                self._users[id(fresh)] = 0
                self._retire(old)
            graph = self._graph
            self._users[id(graph)] += 1
        try:
            yield graph
        finally:
            with self._lock:
                self._users[id(graph)] -= 1
                if id(graph) in self._retired:
                    self._retire(graph)

    @property
    def graph(self) -> KnowledgeGraph:
        """The graph opened last (for what does not need to follow loads, such as its profile)."""
        return self._graph

    def _retire(self, graph: KnowledgeGraph) -> None:
        """Closes ``graph`` once nobody uses it (called with the lock held)."""
        if self._users.get(id(graph), 0) > 0:
            self._retired[id(graph)] = graph
            return
        self._retired.pop(id(graph), None)
        self._users.pop(id(graph), None)
        graph.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._retire(self._graph)
