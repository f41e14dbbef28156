"""The progress a load shows on standard error: its phase (parse, then the index and label steps), the
bytes of its inputs read of their total, the statements read and their rate, and an ETA for each phase."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from tqdm import tqdm

from loaders.checkpoints import input_identity

if TYPE_CHECKING:
    from kg_adapters.index.steps import StepEvent

STEP_NAMES = {
    "names": "name and relation indexes",
    "iris": "merging the IRI runs",
    "ids": "sorting the entity ids",
    "edges": "sorting the edges",
    "out-extra": "sorting the nodes with outgoing literal or blank-node edges",
    "in-extra": "sorting the nodes with incoming blank-node edges",
    "literals": "sorting the literals",
    "starts": "entity starts",
    "traversal": "traversal index",
}
"""How the progress names the index phase's steps (:mod:`kg_adapters.index.steps`); ``file:NAME`` is a
traversal file written (``writing NAME``)."""


class LoadProgress:
    """The progress a multi-hour load shows on standard error (when ``show``): the phase, the inputs
    being read (and, of several, how many are done), bytes of the inputs read of their total (compressed
    sizes on disk: what the ETA is computed from), the statements read and their rate."""

    def __init__(self, show: bool, total_bytes: int | None, inputs: int = 1) -> None:
        self._bar = tqdm(
            total=total_bytes,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            disable=not show,
            file=sys.stderr,
            leave=False,
            dynamic_ncols=True,
        )
        self._statements = 0
        self._started = time.monotonic()
        self._read: dict[str, int] = {}
        self._phase = "parse"
        self._indexing = False
        self._step: StepEvent | None = None
        self._step_named = "index"
        self._running: list[str] = []
        self._inputs, self._done = inputs, 0
        self._reading: list[str] = []
        self._lock = threading.Lock()  # inputs are read on several threads

    def __enter__(self) -> LoadProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.close()

    def phase(self, name: str) -> None:
        """Names the phase (until the index phase's steps name theirs)."""
        with self._lock:
            if not self._indexing:
                self._phase = name
                self._bar.set_description(name)
            self._show()

    def skip(self, done: list[tuple[str, str]]) -> None:
        """Counts inputs a resumed load read before its checkpoint as read."""
        with self._lock:
            for path, _fmt in done:
                self._bar.update(input_size(path))
            self._done += len(done)
            if self._done >= self._inputs:  # (a load resumed in its index phase: the steps take the bar)
                self._show_step()

    def start_file(self, path: str) -> None:
        with self._lock:
            self._reading.append(Path(path).name)
            self._describe_inputs()

    def read(self, path: str, read: int | None) -> None:
        with self._lock:
            before = self._read.get(path, 0)
            if read is not None and read > before and not self._indexing:  # (the bar counts steps now)
                self._bar.update(read - before)
                self._read[path] = read

    def end_file(self, path: str) -> None:
        self.read(path, input_size(path))
        with self._lock:
            self._reading.remove(Path(path).name)
            self._done += 1
            self._describe_inputs()
            if self._done >= self._inputs:  # the index phase's steps, if they started, take the bar
                self._show_step()

    def _describe_inputs(self) -> None:
        """The phase, the inputs being read and, of several, how many are done (the lock is held)."""
        done = f" ({self._done}/{self._inputs} inputs done)" if self._inputs > 1 else ""
        self._bar.set_description(" ".join([self._phase, *filter(None, [", ".join(self._reading)])]) + done)

    def step(self, event: StepEvent) -> None:
        """A step of the index phase started or finished: once every input is read (the index may start
        while the last is still stored), the bar counts the index phase's steps finished of those planned
        (a resumed load's already finished ones included, not counted in the rate), its ETA theirs; the
        phase (``index``, or ``labels`` for the name and relation indexes) and the step are named."""
        with self._lock:
            if event.event == "started":
                self._running.append(event.step)
            elif event.event == "done" and event.step in self._running:
                self._running.remove(event.step)
            shown = self._running[-1] if self._running else event.step  # the innermost step under way
            named = STEP_NAMES.get(shown) or f"writing {shown.removeprefix('file:')}"
            self._step_named = f"{'labels' if shown == 'names' else 'index'}: {named}"
            self._step = event
            if self._done >= self._inputs:
                self._show_step()

    def _show_step(self) -> None:
        """Shows the last step (the lock is held)."""
        event, bar = self._step, self._bar
        if event is None:
            return
        if not self._indexing:
            self._indexing, self._phase = True, "index"
            bar.unit, bar.unit_scale, bar.initial = " steps", False, event.done
            bar.set_description(self._step_named, refresh=False)
            bar.reset(total=max(event.total, 1))
        bar.set_description(self._step_named, refresh=False)
        bar.total = max(event.total, event.done, 1)
        bar.n = event.done
        bar.refresh()

    def triples(self, count: int) -> None:
        with self._lock:
            self._statements += count
            self._show()

    def _show(self) -> None:
        seconds = max(time.monotonic() - self._started, 1e-9)
        self._bar.set_postfix_str(f"{self._statements:,} triples, {self._statements / seconds:,.0f} triples/s")


def input_size(path: str) -> int:
    """An input's size on disk (0 for a pipe)."""
    found = input_identity(path)
    return int(found["size"]) if found else 0
