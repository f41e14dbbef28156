"""Surfaces that open a graph to other programs: ``kga mcp`` (LLM agents over the Model Context
Protocol) and ``kga serve`` (SPARQL 1.1 Protocol clients). They translate a protocol onto the
:class:`~kg_adapters.base.KnowledgeGraph` interface and own nothing else; their HTTP and MCP
dependencies are extras (``kg-adapters[serve]``, ``kg-adapters[mcp]``), imported only here."""

from __future__ import annotations

import importlib

from kg_adapters.budgets import check_count, check_seconds
from kg_adapters.errors import BackendError


def require_extra(modules: tuple[str, ...], needs: str, install: str) -> None:
    """Imports ``modules`` or raises BackendError naming the command that installs them."""
    try:
        for module in modules:
            importlib.import_module(module)
    except ImportError as exc:
        raise BackendError(f"{needs}: {install}") from exc


def check_limits(settings: object, *, counts: tuple[str, ...], seconds: tuple[str, ...]) -> None:
    """A server's budgets, validated as every budget is (:mod:`kg_adapters.budgets`): counts are
    integers >= 1, seconds finite and positive (``inf`` would overflow a lock's or a timer's wait)."""
    for name in counts:
        check_count(getattr(settings, name), name, minimum=1, required=True)
    for name in seconds:
        check_seconds(getattr(settings, name), name, positive=True, required=True)
