"""Making a directory read-only in a way every process respects, root included.

``chmod`` does not stop root, so as root the directory is bind-mounted onto itself and the bind
remounted read-only (writes then fail with EROFS, as on read-only media); as any other user
``chmod a-w`` is enough. Where neither works (root without CAP_SYS_ADMIN, e.g. an unprivileged
container) the test is skipped with the reason.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def read_only(directory: Path) -> Iterator[Path]:
    """``directory`` (and everything under it) read-only inside the block."""
    if os.geteuid() != 0:
        modes = {path: path.stat().st_mode for path in [directory, *directory.rglob("*")]}
        for path, mode in modes.items():
            path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        try:
            yield directory
        finally:
            for path, mode in modes.items():
                path.chmod(mode)
        return
    mounted = subprocess.run(["mount", "--bind", str(directory), str(directory)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot make a read-only bind mount here: {mounted.stderr.strip()}")
    try:
        remounted = subprocess.run(["mount", "-o", "remount,bind,ro", str(directory)], capture_output=True, text=True)
        if remounted.returncode != 0:
            pytest.skip(f"cannot remount read-only here: {remounted.stderr.strip()}")
        yield directory
    finally:
        if subprocess.run(["umount", str(directory)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(directory)], check=True)  # a file left open: detach lazily
