"""kill -9 at a chosen point of an extraction or a load, injected from the test side.

:func:`extract_killed_at` runs ``extract_subgraph(**arguments)`` in a child Python process whose
``checkpoint`` callback SIGKILLs that process when it reaches ``point`` (``fetched:K``, ``commit:K``,
``built``, ``swapped``: see :data:`loaders.extract.Checkpoint`). :func:`load_killed_at` does the same
for ``load_files`` (``checkpoint:K``, ``parsed``, ``indexed``, ``labelled``, ``built``: see
:func:`loaders.core.load_files`). The loaders themselves hold no fault injection; the same arguments
given to them afterwards resume the killed run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any


def extract_killed_at(point: str, *, timeout: float = 900, **arguments: Any) -> subprocess.CompletedProcess[str]:
    """The finished child process (``returncode == -SIGKILL`` when it reached ``point``).
    ``arguments`` are :func:`~loaders.extract.extract_subgraph`'s, JSON-serialisable (paths as str)."""
    payload = json.dumps({key: str(value) if isinstance(value, Path) else value for key, value in arguments.items()})
    return subprocess.run(
        [sys.executable, "-m", "loaders.testing.kill", point, payload],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def load_killed_at(
    point: str,
    *,
    chunk_lines: int | None = None,
    chunk_bytes: int | None = None,
    checkpoint_seconds: float | None = None,
    timeout: float = 900,
    **arguments: Any,
) -> subprocess.CompletedProcess[str]:
    """The finished child process that ran ``load_files(**arguments)`` (``paths``, ``store`` and the
    options, JSON-serialisable) until ``point`` (``returncode == -SIGKILL`` when it got there).
    ``chunk_lines``, ``chunk_bytes`` and ``checkpoint_seconds`` set :data:`loaders.rdf.CHUNK_LINES`,
    :data:`loaders.rdf.CHUNK_BYTES` and :data:`loaders.core.CHECKPOINT_SECONDS` in the child, so that
    small inputs pass many checkpoints."""
    payload = {key: str(value) if isinstance(value, Path) else value for key, value in arguments.items()}
    tuning = {"chunk_lines": chunk_lines, "chunk_bytes": chunk_bytes, "checkpoint_seconds": checkpoint_seconds}
    return subprocess.run(
        [sys.executable, "-m", "loaders.testing.kill", "--load", point, json.dumps(payload), json.dumps(tuning)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _kill_at(point: str) -> Any:
    def checkpoint(reached: str) -> None:
        if reached == point:
            os.kill(os.getpid(), signal.SIGKILL)

    return checkpoint


def _main(argv: list[str]) -> int:
    if argv[0] == "--load":
        return _load(argv[1:])
    from loaders.extract import extract_subgraph

    point, payload = argv
    arguments = json.loads(payload)
    source = arguments.pop("source")
    seeds = arguments.pop("seeds")
    extract_subgraph(source, seeds, progress=False, checkpoint=_kill_at(point), **arguments)
    return 0


def _load(argv: list[str]) -> int:
    import loaders.core
    import loaders.rdf

    point, payload, tuning = argv[0], json.loads(argv[1]), json.loads(argv[2])
    if tuning["chunk_lines"] is not None:
        loaders.rdf.CHUNK_LINES = tuning["chunk_lines"]
    if tuning["chunk_bytes"] is not None:
        loaders.rdf.CHUNK_BYTES = tuning["chunk_bytes"]
    if tuning["checkpoint_seconds"] is not None:
        loaders.core.CHECKPOINT_SECONDS = tuning["checkpoint_seconds"]
    paths, store = payload.pop("paths"), payload.pop("store")
    if payload.get("dump_filter") is not None:  # DumpFilter's fields, as a JSON object
        from loaders.freebase import DumpFilter

        payload["dump_filter"] = DumpFilter(**payload["dump_filter"])
    loaders.core.load_files(paths, store, progress=False, checkpoint=_kill_at(point), **payload)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
