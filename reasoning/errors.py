"""Errors of the reasoning package, in the one tree rooted at :class:`kg_adapters.errors.KGError`::

    KGError
    ├── BackendError (kg_adapters.errors)
    │   └── LLMError            an LLM endpoint refused a request or answered no usable reply
    └── UnknownMethodError      no reasoner or scorer registered under a name, or its module cannot be imported

An LLM endpoint's transient failures raise the core's :class:`~kg_adapters.errors.TransientError`
family like any backend's, and :class:`~kg_adapters.errors.RetriesExhausted` once retrying gives up.
"""

from __future__ import annotations

from kg_adapters.errors import BackendError, KGError

__all__ = ["LLMError", "UnknownMethodError"]


class LLMError(BackendError):
    """An LLM endpoint refused a request (HTTP 400/401/403/404...) or answered something that is not
    a chat completion. Its transient failures raise :class:`TransientError` and its subclasses like
    any backend's, and :class:`RetriesExhausted` once retrying gives up."""


class UnknownMethodError(KGError):
    """No reasoning method or scorer is registered under a name, or its module cannot be imported."""
