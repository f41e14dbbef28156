"""A full disk without a mount: the work runs in a child process whose RLIMIT_FSIZE is ``limit``
bytes, with SIGXFSZ ignored, so a write past the limit fails with EFBIG as a write to a full disk
fails with ENOSPC. The limit picks the phase that fails (the largest file written is the first to
hit it). Needs no root and no mount, so it runs the same in CI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_PRELUDE = """
import json, resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
{work}
    print(json.dumps({{"error": None}}))
except BaseException as exc:
    print(json.dumps({{"error": type(exc).__module__ + "." + type(exc).__name__, "message": str(exc)}}))
"""
LOAD = "    from loaders import load_files\n    load_files([sys.argv[2]], sys.argv[3], progress=False)"
EXTRACT = (
    "    from loaders.extract import extract_subgraph\n"
    "    extract_subgraph(sys.argv[2], sys.argv[4].split(','), hops=2, store=sys.argv[3], progress=False)"
)


def run_with_file_size_limit(work: str, limit: int, *args: str, cwd: Path | None = None) -> dict[str, str | None]:
    """Runs ``work`` (LOAD or EXTRACT, reading ``sys.argv[2:]`` = ``args``) under the limit; answers
    ``{"error": "module.Class" or None, "message": ...}``."""
    done = subprocess.run(
        [sys.executable, "-c", _PRELUDE.format(work=work), str(limit), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        cwd=cwd,
    )
    result: dict[str, str | None] = json.loads(done.stdout.strip().splitlines()[-1])
    return result
