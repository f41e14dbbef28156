"""Surfaces that open a graph to other programs: ``kga mcp`` (LLM agents over the Model Context
Protocol) and ``kga serve`` (SPARQL 1.1 Protocol clients). They translate a protocol onto the
:class:`~kg_adapters.base.KnowledgeGraph` interface and own nothing else; their HTTP and MCP
dependencies are extras (``kg-adapters[serve]``, ``kg-adapters[mcp]``), imported only here."""

from __future__ import annotations

import importlib

from kg_adapters.base import check_budget
from kg_adapters.errors import BackendError, InvalidTermError


def require_extra(modules: tuple[str, ...], needs: str, install: str) -> None:
    """Imports ``modules`` or raises BackendError naming the command that installs them."""
    try:
        for module in modules:
            importlib.import_module(module)
    except ImportError as exc:
        raise BackendError(f"{needs}: {install}") from exc


def check_limits(settings: object, *, counts: tuple[str, ...], seconds: tuple[str, ...]) -> None:
    """A server's budgets, validated in one place: counts are integers >= 1, seconds positive numbers."""
    for name in counts:
        check_budget(getattr(settings, name), name, minimum=1)
    for name in seconds:
        value = getattr(settings, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise InvalidTermError(f"{name} must be a positive number of seconds, got {value!r}")
