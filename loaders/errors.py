"""Errors of the loaders package, in the one tree rooted at :class:`kg_adapters.errors.KGError`::

    KGError
    ├── LoadError (kg_adapters.errors)  a dump could not be loaded (carries file and line)
    └── ExtractError                    a subgraph extraction cannot start, continue or be written
        ├── ExtractStateMismatch        the work directory holds an unfinished run with other arguments
        └── UnknownSeeds                seed ids the source graph has no triple for (carries seeds)

``LoadError`` stays in the core because a writable backend's ``load`` raises it too; it is re-exported
here so loader code and its callers import every loader error from one place.
"""

from __future__ import annotations

from kg_adapters.errors import KGError, LoadError

__all__ = ["ExtractError", "ExtractStateMismatch", "LoadError", "UnknownSeeds"]


class ExtractError(KGError):
    """A subgraph extraction cannot start, continue or write its store (``kga extract``)."""


class ExtractStateMismatch(ExtractError):
    """The work directory holds an unfinished extraction with other arguments; finish it with the
    same arguments, or start over with ``restart=True`` (``--restart``)."""


class UnknownSeeds(ExtractError):
    """Seed ids that the source graph holds no triple for; ``seeds`` lists them."""

    def __init__(self, message: str, *, seeds: tuple[str, ...]) -> None:
        super().__init__(message)
        self.seeds = seeds
