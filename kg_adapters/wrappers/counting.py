"""A wrapper that counts the operations reaching a KG (``kg_calls`` of a reasoner run, and the
test instrument that proves a cache answered without asking the backend)."""

from __future__ import annotations

import threading
from typing import Any

from kg_adapters.base import Ids, KnowledgeGraph, as_id_list
from kg_adapters.wrappers.base import DelegatingGraph


class CountingKG(DelegatingGraph):
    """Delegates every call to ``inner`` and records ``(operation, ids asked for)`` in ``calls``
    (``query`` too when ``inner`` answers raw SPARQL). It changes nothing but the
    :meth:`~kg_adapters.wrappers.base.DelegatingGraph._calling` seam."""

    def __init__(self, inner: KnowledgeGraph) -> None:
        super().__init__(inner)
        self.calls: list[tuple[str, list[str]]] = []
        self._lock = threading.Lock()

    def _calling(self, operation: str, ids: Ids) -> None:
        noted = as_id_list(ids)
        with self._lock:
            self.calls.append((operation, noted))

    def asked(self, operation: str) -> list[list[str]]:
        """The id lists of every call to ``operation``, in call order."""
        return [ids for name, ids in self.calls if name == operation]

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._lock = threading.Lock()
