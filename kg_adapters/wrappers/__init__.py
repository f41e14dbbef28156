"""Wrappers that add behaviour around a backend without changing its interface.

* :class:`RetryingTransport` and :class:`RateLimitedTransport` wrap a
  :class:`~kg_adapters.transport.SparqlTransport` (one HTTP request at a time); stack them as
  ``RetryingTransport(RateLimitedTransport(HttpSparqlTransport(url)))`` so retries are throttled too.
* :class:`~kg_adapters.wrappers.base.DelegatingGraph` is the base of every wrapper around a
  :class:`~kg_adapters.base.KnowledgeGraph`: it forwards all operations and exactly the optional
  abilities the inner graph has; :class:`CountingKG` and :class:`CachedKG` override what they change.
* :func:`cached` wraps a :class:`~kg_adapters.base.KnowledgeGraph` in a per-entity
  :class:`ResultCache` (memory LRU + optional SQLite file; ``mode="replay"`` for offline runs).
"""

from __future__ import annotations

from kg_adapters.wrappers.base import DelegatingGraph
from kg_adapters.wrappers.cache import (
    CachedDict,
    CachedKG,
    CachedList,
    CacheMode,
    CacheStats,
    ResultCache,
    cache_namespace,
    cached,
)
from kg_adapters.wrappers.counting import CountingKG
from kg_adapters.wrappers.rate_limit import RateLimitedTransport
from kg_adapters.wrappers.retry import RetryingTransport

__all__ = [
    "CacheMode",
    "CacheStats",
    "CachedDict",
    "CachedKG",
    "CachedList",
    "CountingKG",
    "DelegatingGraph",
    "RateLimitedTransport",
    "ResultCache",
    "RetryingTransport",
    "cache_namespace",
    "cached",
]
