"""Method name -> reasoner class, and scorer name -> scorer, through lazily imported ``"module:Class"``
strings (as :mod:`kg_adapters.registry` does for backends): a method's module is imported only when
it is asked for, so one missing or broken method never stops the others."""

from __future__ import annotations

import importlib
from typing import Any, Protocol

from kg_adapters.base import KnowledgeGraph
from reasoning.base import LLM, Reasoner, Scorer
from reasoning.errors import UnknownMethodError

METHODS: dict[str, str] = {
    "rog": "reasoning.rog:RoG",
    "r3": "reasoning.r3:R3",
    "refkg": "reasoning.refkg:RefKG",
    "fidelis": "reasoning.fidelis:FiDeLiS",
    "tog": "reasoning.tog:ThinkOnGraph",
}

AUTO = "auto"
"""The scorer name that picks :func:`default_scorer_name`: what a user gets without asking."""

SCORERS: dict[str, str] = {
    "bm25": "reasoning.scorers:BM25Scorer",
    "minilm": "reasoning.scorers:MiniLMScorer",
    "hybrid": "reasoning.scorers:HybridScorer",
}


class MethodFactory(Protocol):
    """A reasoner class: ``Method(kg, llm=..., scorer=..., **options)``."""

    def __call__(
        self, kg: KnowledgeGraph, *, llm: LLM | None = None, scorer: Scorer | None = None, **options: Any
    ) -> Reasoner: ...


def register(name: str, target: str) -> None:
    """Registers (or replaces) the ``"module:Class"`` of a method."""
    METHODS[name] = target


def _import(target: str, what: str) -> Any:
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UnknownMethodError(f"{what} cannot be imported ({exc})") from exc
    try:
        return getattr(module, attribute)
    except AttributeError as exc:
        raise UnknownMethodError(f"{what}: {module_name} has no {attribute}") from exc


def method_class(name: str) -> MethodFactory:
    """The reasoner class registered as ``name``; UnknownMethodError when there is none or its
    module cannot be imported."""
    if name not in METHODS:
        raise UnknownMethodError(f"no reasoning method {name!r}; known: {', '.join(sorted(METHODS))}")
    factory: MethodFactory = _import(METHODS[name], f"method {name!r}")
    return factory


def default_scorer_name() -> str:
    """``hybrid`` (MiniLM fused with BM25) where the embeddings extra is installed: it understands a
    reworded question and keeps BM25's exact matches; else ``bm25``."""
    from kg_adapters.encoder import minilm_installed

    return "hybrid" if minilm_installed() else "bm25"


def make_scorer(name: str = AUTO, **options: Any) -> Scorer:
    """A scorer by name (``bm25``, ``minilm``, or ``auto``: :func:`default_scorer_name`); unknown options
    raise TypeError, a missing extra UnknownMethodError with its install hint."""
    if name == AUTO:
        name = default_scorer_name()
    if name not in SCORERS:
        raise UnknownMethodError(f"no scorer {name!r}; known: {AUTO}, {', '.join(sorted(SCORERS))}")
    scorer: Scorer = _import(SCORERS[name], f"scorer {name!r}")(**options)
    return scorer
