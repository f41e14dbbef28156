"""How many requests each KG operation sends, logged at DEBUG on the ``kg_adapters`` logger, so a
user hitting WDQS 429s, Virtuoso row caps or paging can see the cost of each call as it happens.

A remote backend calls :func:`count_query` for every request it sends and decorates its class with
:func:`logs_query_counts`; only the outermost operation logs (``paths`` counts the queries of the
``neighbors`` calls it makes). Counts are per thread, so concurrent callers do not mix.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

logger = logging.getLogger("kg_adapters")
OPERATIONS = (
    "neighbors",
    "relations",
    "labels",
    "describe",
    "search",
    "paths",
    "shortest_paths",
    "subgraph",
    "query",
    "detect_profile",
)
_OPERATION = threading.local()
_G = TypeVar("_G")


def count_query(requests: int = 1) -> None:
    """Counts ``requests`` requests of the operation running in this thread."""
    _OPERATION.queries = getattr(_OPERATION, "queries", 0) + requests


def take_count() -> int:
    """The requests counted in this thread since the last call (for a worker thread to hand its
    count to the operation that started it)."""
    queries = getattr(_OPERATION, "queries", 0)
    _OPERATION.queries = 0
    return int(queries)


def logs_query_counts(cls: type[_G]) -> type[_G]:
    """Makes each public operation of ``cls`` that it has log its request count at DEBUG."""

    def counted(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def operation(self: Any, *args: Any, **kwargs: Any) -> Any:
            if getattr(_OPERATION, "depth", 0):
                return method(self, *args, **kwargs)
            _OPERATION.depth, _OPERATION.queries = 1, 0
            try:
                return method(self, *args, **kwargs)
            finally:
                _OPERATION.depth = 0
                queries = _OPERATION.queries
                logger.debug("%s on %s: %d quer%s", name, self.endpoint, queries, "y" if queries == 1 else "ies")

        return operation

    for name in OPERATIONS:
        if hasattr(cls, name):
            setattr(cls, name, counted(name, getattr(cls, name)))
    return cls
