"""The command that adds an optional extra (``serve``, ``mcp``, ``rog``...) to this installation.

kg-adapters is installed from a clone (``pip install -e .``) or from a wheel built by ``make wheel``,
not from a package index, so ``pip install 'kg-adapters[serve]'`` would not find it. pip records
where each distribution came from (PEP 610 ``direct_url.json``); the command names that source, and
this interpreter's pip, so it installs into the environment that runs ``kga``.
"""

from __future__ import annotations

import json
import shlex
import sys
from urllib.parse import unquote, urlsplit

DISTRIBUTION = "kg-adapters"


def install_command(extra: str | None = None, *, reinstall: bool = False) -> str:
    """``python -m pip install ...`` adding ``extra``: ``-e CLONE[extra]`` for an editable install,
    ``CLONE[extra]`` or ``FILE.whl[extra]`` for one from a directory or a wheel, else the index name.
    Without ``extra``, kg-adapters itself (``reinstall``: ``--force-reinstall``, which repairs an
    installation whose dependencies are missing or broken)."""
    source, editable = _installed_from()
    target = shlex.quote(f"{source or DISTRIBUTION}{f'[{extra}]' if extra else ''}")
    options = ("--force-reinstall " if reinstall else "") + ("-e " if editable else "")
    return f"{shlex.quote(sys.executable)} -m pip install {options}{target}"


def _installed_from() -> tuple[str | None, bool]:
    """(local path the distribution was installed from, editable), or (None, False) when pip recorded
    none (an index, or not installed at all)."""
    from importlib.metadata import distributions

    # the first record pip wrote (a source tree on sys.path may hold build metadata without one)
    found = (dist.read_text("direct_url.json") for dist in distributions(name=DISTRIBUTION))
    recorded = next((text for text in found if text), None)
    try:
        origin = json.loads(recorded) if recorded else {}
    except ValueError:
        return None, False
    url = urlsplit(str(origin.get("url", "")))
    if url.scheme != "file" or not url.path:
        return None, False
    editable = bool((origin.get("dir_info") or {}).get("editable"))
    return unquote(url.path), editable
