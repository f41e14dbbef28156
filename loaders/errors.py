"""Errors of the loaders package, in the one tree rooted at :class:`kg_adapters.errors.KGError`::

    KGError
    ├── LoadError (kg_adapters.errors)  a dump could not be loaded (carries file and line)
    │   └── BadQuestion                 a row of ``kga dataset build``'s questions file is unusable (file:row)
    │       ├── NoTopicEntity           the row has no q_entity
    │       ├── DuplicateQuestionId     an earlier row has its id (carries first, its file:row)
    │       └── UnknownEntity           ids the KG has no triple for (carries ids)
    ├── ExtractError                    a subgraph extraction cannot start, continue or be written
    │   ├── ExtractStateMismatch        the work directory holds an unfinished run with other arguments
    │   └── UnknownSeeds                seed ids the source graph has no triple for (carries seeds)
    └── DatasetBuildError               a dataset build cannot start, continue or write its output
        └── DatasetStateMismatch        the checkpoint holds an unfinished build with other arguments or input

``LoadError`` stays in the core because a writable backend's ``load`` raises it too; it is re-exported
here so loader code and its callers import every loader error from one place.
"""

from __future__ import annotations

from kg_adapters.errors import KGError, LoadError

__all__ = [
    "BadQuestion",
    "DatasetBuildError",
    "DatasetStateMismatch",
    "DuplicateQuestionId",
    "ExtractError",
    "ExtractStateMismatch",
    "LoadError",
    "NoTopicEntity",
    "UnknownEntity",
    "UnknownSeeds",
]


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


class BadQuestion(LoadError):
    """A row of a questions file that ``kga dataset build`` cannot use; ``file`` and ``line`` (the
    JSONL line, or the Parquet row, 1-based) say where, ``reason`` why."""


class NoTopicEntity(BadQuestion):
    """A question row without ``q_entity`` (or with an empty one): there is nothing to cut a subgraph around."""


class DuplicateQuestionId(BadQuestion):
    """A question row whose ``id`` an earlier row has; ``first`` is that row's ``file:row``."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None, first: str = "") -> None:
        super().__init__(message, file=file, line=line)
        self.first = first


class UnknownEntity(BadQuestion):
    """A question row naming ids (topic or answer) that the KG holds no triple for; ``ids`` lists them."""

    def __init__(
        self, message: str, *, file: str | None = None, line: int | None = None, ids: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message, file=file, line=line)
        self.ids = ids


class DatasetBuildError(KGError):
    """A dataset build cannot start, continue or write its output (``kga dataset build``)."""


class DatasetStateMismatch(DatasetBuildError):
    """The checkpoint holds an unfinished build of the same output with other arguments or another input;
    finish it with the same ones, or start over with ``restart=True`` (``--restart``)."""
