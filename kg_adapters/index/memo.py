"""The one bounded memo every cache of the index package is made of (see the table in
:mod:`kg_adapters.index`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

_Key = TypeVar("_Key", bound=Hashable)
_Value = TypeVar("_Value")


def _no_size(value: object) -> int:
    return 0


class BoundedMemo(dict[_Key, _Value]):
    """``key -> compute(key)``, each computed on its first use (``memo[key]``) and kept across calls
    (a memo without ``compute`` holds what its owner computed and kept with :meth:`remember`).

    Bounded twice: at ``cap`` entries, or once the values' estimated size (``overhead + size(value)``
    each) would pass ``budget`` bytes, the memo is emptied before it takes more, so memory stays
    bounded whatever the callers ask; a value larger than the whole budget is handed back, not kept.
    A key whose ``compute`` raises is not kept (a bad id is refused again, with the same error, on
    every call). Reads are single dict operations (``get`` and ``in`` never compute); fills take a
    lock, since threads may share a graph. ``compute`` must not hold the object that owns the memo
    (a reference cycle would keep it, and the files it maps, alive until the cyclic collector runs)."""

    def __init__(
        self,
        compute: Callable[[_Key], _Value] | None,
        *,
        cap: int,
        budget: int | None = None,
        size: Callable[[_Value], int] = _no_size,
        overhead: int = 0,
    ) -> None:
        super().__init__()
        self._compute = compute
        self.cap = cap
        self.budget = budget
        self._size = size
        self._overhead = overhead
        self.bytes = 0
        """The estimated size of the values kept (0 without a ``budget``)."""
        self._lock = threading.Lock()

    def __missing__(self, key: _Key) -> _Value:
        if self._compute is None:  # a memo filled by its owner (``remember``)
            raise KeyError(key)
        value = self._compute(key)
        budget = self.budget
        added = 0 if budget is None else self._overhead + self._size(value)
        with self._lock:
            if len(self) >= self.cap or (budget is not None and self.bytes + added > budget):
                self.clear()
                if budget is not None and added > budget:
                    return value  # larger than the whole memo: answered, not kept
            self[key] = value
            self.bytes += added
        return value

    def remember(self, keys: Sequence[_Key], values: Sequence[_Value]) -> None:
        """Keeps ``values`` for ``keys`` (computed together by the caller), as far as they fit."""
        budget = self.budget
        added = 0 if budget is None else self._overhead * len(values) + sum(map(self._size, values))
        if len(keys) > self.cap or (budget is not None and added > budget):
            return  # more than the whole memo: each is kept, or not, on its next miss
        with self._lock:
            if len(self) + len(keys) > self.cap or (budget is not None and self.bytes + added > budget):
                self.clear()
            self.update(zip(keys, values))  # noqa: B905 (as many values as keys: the caller's)
            self.bytes += added

    def clear(self) -> None:
        super().clear()
        self.bytes = 0
