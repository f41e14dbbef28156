"""Helpers for tests that look inside a store on disk."""

from __future__ import annotations

from pathlib import Path

from kg_adapters.store_layout import open_version


def version_dir(store: Path) -> Path:
    """The directory of the store's current version (its data, name and traversal indexes)."""
    version = open_version(store)
    try:
        return version.directory
    finally:
        version.close()
