"""The steps of writing a load's indexes after its parse, recorded as they finish so that a load killed
among them (``kill -9``, a power loss) resumes after the last one finished instead of from the parse's end.

A load's collector (:class:`~kg_adapters.index.spool.CollectorSpool`) writes the name and relation indexes
and the traversal index in steps: a spilled collection's external sorts (:mod:`kg_adapters.index.spill`:
the IRI runs merged, the ids ranked, the edges sorted each way, ...), each traversal file written
(:func:`kg_adapters.index.emit.emit_index`), the traversal index swapped in, the name and relation indexes
written. :class:`BuildSteps` records each finished step with what the later steps need of it in
``steps.json`` (replaced atomically and durably, once the step's files are synced), keyed by the spool's
state: a record made from another state (a load killed before its parse ended, then resumed) is
dropped. Each step is also reported (``started``, ``written``: its files written but not yet recorded,
``done``) for the load's progress and its tests' kill points.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from kg_adapters import store_layout

STEPS_FILE = "steps.json"
T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class StepEvent:
    """A step of the index phase reached ``event`` (``started``, ``written`` or ``done``); ``done`` of
    ``total`` steps are finished (``total`` 0 until the plan is known)."""

    step: str
    event: str
    done: int
    total: int


StepReport = Callable[[StepEvent], None]


class BuildSteps:
    """The finished steps of one index phase (see the module docstring), recorded in ``path`` (None:
    nothing is recorded, as for a load that cannot resume) for the spool state ``key``; ``report`` is
    told of every step's events. Steps may finish on two threads at once (the name index beside the
    traversal index)."""

    def __init__(self, path: Path | None, key: Any, report: StepReport | None = None) -> None:
        self.path, self.key, self.report = path, key, report
        self._lock = threading.Lock()
        self._done: dict[str, Any] = {}
        self._planned: list[str] = []
        if path is not None:
            try:
                found = json.loads(path.read_text("utf-8"))
            except (OSError, ValueError):
                found = None
            if isinstance(found, dict) and found.get("key") == key and isinstance(found.get("done"), dict):
                self._done = found["done"]

    def plan(self, steps: Iterable[str]) -> None:
        """Adds ``steps`` to those the progress counts (finished ones included)."""
        with self._lock:
            self._planned.extend(step for step in steps if step not in self._planned)

    def unplan(self, steps: Iterable[str]) -> None:
        """Drops ``steps`` from those the progress counts (files a build turns out not to need)."""
        dropped = set(steps)  # (a generator is read once)
        with self._lock:
            self._planned = [step for step in self._planned if step not in dropped]

    def done(self, step: str) -> Any:
        """What ``step`` recorded when it finished (None: not finished, or nothing recorded)."""
        with self._lock:
            return self._done.get(step)

    def finished(self) -> list[str]:
        with self._lock:
            return list(self._done)

    def start(self, step: str) -> None:
        self._tell(step, "started")

    def record(self, step: str, result: Any = True, *, synced: Iterable[Path] = ()) -> None:
        """Records ``step`` finished with ``result`` (JSON; not None) once the files ``synced`` (and their
        directories) are durable."""
        directories = set()
        for path in synced:
            store_layout.fsync_dir(path)  # a file or a directory: opened read-only and synced
            directories.add(path.parent)
        for directory in directories:
            store_layout.fsync_dir(directory)
        self._tell(step, "written")
        with self._lock:
            self._done[step] = result
            if self.path is not None:
                store_layout.write_json_durably(self.path, {"key": self.key, "done": self._done})
        self._tell(step, "done")

    def _tell(self, step: str, event: str) -> None:
        if self.report is None:
            return
        with self._lock:
            finished = sum(1 for name in self._planned if name in self._done)
            total = len(self._planned)
        self.report(StepEvent(step=step, event=event, done=finished, total=total))


def run_step(steps: BuildSteps | None, step: str, produce: Callable[[], T], outputs: Iterable[Path]) -> T:
    """``produce()``, which writes the files ``outputs``, recorded as ``step`` with what it returns
    (JSON); or, when a killed build recorded the step and its files are there, what it recorded."""
    outputs = list(outputs)
    found = None if steps is None else steps.done(step)
    if found is not None and all(path.exists() for path in outputs):
        return cast(T, found)
    if steps is None:
        return produce()
    steps.start(step)
    result = produce()
    steps.record(step, result, synced=outputs)
    return result
