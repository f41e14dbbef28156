"""The graph a compat module reads when a call names none (the originals read a module global)."""

from __future__ import annotations

from kg_adapters.base import KnowledgeGraph
from kg_adapters.errors import InvalidTermError


class DefaultGraph:
    """One module's default graph: set with ``use(kg)``, read by ``resolve(given)``."""

    def __init__(self, module: str, hint: str) -> None:
        self.module = module
        self.hint = hint
        self.graph: KnowledgeGraph | None = None

    def use(self, kg: KnowledgeGraph | None) -> None:
        if kg is not None and not isinstance(kg, KnowledgeGraph):
            raise InvalidTermError(f"use() needs a KnowledgeGraph, got {type(kg).__name__}")
        self.graph = kg

    def resolve(self, given: KnowledgeGraph | None) -> KnowledgeGraph:
        """``given``, else the graph set with ``use``; anything else is refused."""
        chosen = given if given is not None else self.graph
        if chosen is None:
            raise InvalidTermError(f"no graph: {self.hint}, or set it with {self.module}.use(kg)")
        if not isinstance(chosen, KnowledgeGraph):
            raise InvalidTermError(f"the graph must be a KnowledgeGraph, got {type(chosen).__name__}")
        return chosen
