"""kill -9 at a chosen point of an extraction, a dataset build or a load, injected from the test side.

:func:`extract_killed_at` runs ``extract_subgraph(**arguments)`` in a child Python process whose
``checkpoint`` callback SIGKILLs that process when it reaches ``point`` (``fetched:K``, ``commit:K``,
``built``, ``swapped``: see :data:`loaders.extract.Checkpoint`); :func:`build_killed_at` does the same
for ``build_dataset`` (:data:`loaders.dataset_build.Checkpoint`), :func:`load_killed_at` for
``load_files`` (``checkpoint:K``, ``parsed``, ``indexed``, ``labelled``, ``built``: see
:func:`loaders.core.load_files`). The code under test holds no fault injection; the same arguments given
to ``kga extract`` / ``kga dataset build`` / ``kga load`` resume the killed run.
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
    return _killed_at("extract", point, timeout, arguments)


def build_killed_at(point: str, *, timeout: float = 900, **arguments: Any) -> subprocess.CompletedProcess[str]:
    """As :func:`extract_killed_at`, for :func:`~loaders.dataset_build.build_dataset` (``kg``,
    ``questions`` and ``out`` among the ``arguments``)."""
    return _killed_at("build", point, timeout, arguments)


def load_killed_at(
    point: str,
    *,
    chunk_lines: int | None = None,
    chunk_bytes: int | None = None,
    checkpoint_seconds: float | None = None,
    timeout: float = 900,
    **arguments: Any,
) -> subprocess.CompletedProcess[str]:
    """As :func:`extract_killed_at`, for :func:`~loaders.core.load_files` (``paths``, ``store`` and the
    options among the ``arguments``). ``chunk_lines``, ``chunk_bytes`` and ``checkpoint_seconds`` set
    :data:`loaders.rdf.CHUNK_LINES` (and :data:`loaders.wikidata_json.CHUNK_ENTITIES`),
    :data:`loaders.rdf.CHUNK_BYTES` and :data:`loaders.core.CHECKPOINT_SECONDS` in the child, so that small
    inputs pass many checkpoints."""
    tuning = {"chunk_lines": chunk_lines, "chunk_bytes": chunk_bytes, "checkpoint_seconds": checkpoint_seconds}
    return _killed_at("load", point, timeout, {**arguments, "tuning": tuning})


def _killed_at(kind: str, point: str, timeout: float, arguments: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    payload = json.dumps({key: str(value) if isinstance(value, Path) else value for key, value in arguments.items()})
    return subprocess.run(
        [sys.executable, "-m", "loaders.testing.kill", point, payload, kind],
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
    point, payload, kind = argv
    arguments = json.loads(payload)
    if kind == "load":
        return _load(point, arguments)
    if kind == "build":
        from loaders.dataset_build import build_dataset

        build_dataset(arguments.pop("kg"), arguments.pop("questions"), arguments.pop("out"), progress=False,
                      checkpoint=_kill_at(point), **arguments)  # fmt: skip
        return 0
    from loaders.extract import extract_subgraph

    source = arguments.pop("source")
    seeds = arguments.pop("seeds")
    extract_subgraph(source, seeds, progress=False, checkpoint=_kill_at(point), **arguments)
    return 0


def _load(point: str, payload: dict[str, Any]) -> int:
    import loaders.core
    import loaders.rdf
    import loaders.wikidata_json

    tuning = payload.pop("tuning")
    if tuning["chunk_lines"] is not None:
        loaders.rdf.CHUNK_LINES = tuning["chunk_lines"]
        loaders.wikidata_json.CHUNK_ENTITIES = tuning["chunk_lines"]
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
