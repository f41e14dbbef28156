"""The files of a traversal index: their names, the format version, which arrays a reader maps.

The format itself (what each file holds) is described in :mod:`kg_adapters.index`.
"""

from __future__ import annotations

import os
from pathlib import Path

from kg_adapters import store_layout

INDEX_DIR = store_layout.TRAVERSAL
META = "meta.json"
FORMAT_NAME = "kga-traversal"
FORMAT_VERSION = 4
"""4: per-node start arrays (``*_start.npy``); an index of another version is treated as absent."""

ARRAYS = (
    "entity_offsets",
    "out_key",
    "out_other",
    "in_key",
    "in_other",
    "out_extra",
    "in_extra",
    "literal_key",
    "literal_tag",
    "literal_offsets",
    "out_start",
    "in_start",
    "out_extra_start",
    "in_extra_start",
    "literal_start",
)
STARTS = {
    "out_key": "out_start",
    "in_key": "in_start",
    "out_extra": "out_extra_start",
    "in_extra": "in_extra_start",
    "literal_key": "literal_start",
}
"""Each node-keyed array and the array of where each node's keys start in it."""


def index_dir(version_dir: str | os.PathLike[str]) -> Path:
    return Path(version_dir) / INDEX_DIR


def has_index(version_dir: str | os.PathLike[str]) -> bool:
    return (index_dir(version_dir) / META).is_file()


def add_hint(store: str | os.PathLike[str]) -> str:
    """The one line telling a user how to give a store an index."""
    return (
        f"kga: hint: this store has no traversal index (walks run on Oxigraph); add one with: kga index --store {store}"
    )
