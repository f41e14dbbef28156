"""Helpers for tests that build or look inside a store on disk."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kg_adapters.store_layout import open_version


def version_dir(store: Path) -> Path:
    """The directory of the store's current version (its data, name and traversal indexes)."""
    version = open_version(store)
    try:
        return version.directory
    finally:
        version.close()


def lines_store(directory: Path, lines: Sequence[str], profile: str) -> str:
    """N-Triples ``lines`` written to ``directory`` and loaded into a store there (``kga load``'s path); the
    store's KG URL."""
    from loaders import load_files

    source = directory / "graph.nt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    load_files([str(source)], str(directory / "store"), profile=profile, progress=False)
    return f"oxigraph://{directory / 'store'}?profile={profile}"
