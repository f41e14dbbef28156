"""What a load reports back, and the log that decides whether a bad line is fatal.

Strict loads (the default) stop at the first bad line with a :class:`LoadError` that names the
file and the 1-based line. Lenient loads skip bad lines, count them all and keep the first
:data:`MAX_SKIPPED_KEPT` with their reasons, so a report stays small for a very dirty dump.
"""

from __future__ import annotations

from dataclasses import dataclass

from kg_adapters.errors import LoadError

MAX_SKIPPED_KEPT = 100


@dataclass(frozen=True, kw_only=True)
class SkippedLine:
    """One input line a lenient load left out, and why."""

    file: str
    line: int
    reason: str


@dataclass(frozen=True, kw_only=True)
class LoadReport:
    """The outcome of :func:`loaders.load_files`.

    ``statements_read`` counts the good statements parsed from the inputs (duplicates included);
    ``store_triples`` is the size of the store after the load (duplicates collapse, and the
    ``rdfs:label`` triples minted for TSV names are included). Freebase dumps also count the lines
    their filters dropped (``lines_filtered``) and the lines repaired into valid N-Triples
    (``lines_repaired``).
    """

    store: str
    files: tuple[str, ...]
    statements_read: int
    lines_skipped: int
    skipped: tuple[SkippedLine, ...]
    seconds: float
    store_triples: int
    appended: bool
    lines_filtered: int = 0
    lines_repaired: int = 0
    index_seconds: float = 0.0
    """The part of ``seconds`` the load waited for the traversal index: for a new store, numbered beside
    the load (a worker process, or a thread for small inputs) and written while the label index is
    built, its waits; for an append, the same when the previous version's index is replayed
    (``index_source``), else the whole build from the store read back."""
    resumed: bool = False
    """Whether the load went on from the checkpoint of a killed one (see :mod:`loaders.checkpoints`)."""
    index_source: str = "the load"
    """What the traversal, name and relation indexes were written from: the load (a new store), the previous
    version's traversal index and the load (an append), or the store read back, and why
    (:mod:`loaders.load_indexes`)."""

    @property
    def triples_per_second(self) -> float:
        """Statements read per second of wall time (0 when nothing was timed)."""
        return self.statements_read / self.seconds if self.seconds > 0 else 0.0


class SkipLog:
    """Collects bad lines: raises at the first one unless ``lenient``."""

    def __init__(self, *, lenient: bool) -> None:
        self.lenient = lenient
        self.count = 0
        self.kept: list[SkippedLine] = []

    def bad(self, file: str, line: int, reason: str) -> None:
        """Records a bad line, or raises :class:`LoadError` for it in strict mode."""
        if not self.lenient:
            raise LoadError(f"{reason} (use --lenient / lenient=True to skip bad lines)", file=file, line=line)
        self.count += 1
        if len(self.kept) < MAX_SKIPPED_KEPT:
            self.kept.append(SkippedLine(file=file, line=line, reason=reason))
