"""The files of a traversal index: their names, the format version, which arrays a reader maps, and
the narrowest integer type each array is written in.

The format itself (what each file holds) is described in :mod:`kg_adapters.index`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from kg_adapters import store_layout

INDEX_DIR = store_layout.TRAVERSAL
META = "meta.json"
FORMAT_NAME = "kga-traversal"
FORMAT_VERSION = 5
"""5: relation columns (``*_rel.npy``) instead of ``node * R + relation`` keys, narrow integer types,
entity ids without their namespaces, extra-end arrays only with blank nodes (half the size);
4: per-node start arrays (``*_start.npy``). An index of another version is treated as absent (the
store answers through Oxigraph) and the hint says to rebuild it (:func:`add_hint`)."""

COLUMNS = {
    "out_rel": "out_start",
    "in_rel": "in_start",
    "literal_rel": "literal_start",
    "out_extra_rel": "out_extra_start",
    "in_extra_rel": "in_extra_start",
}
"""Each per-node relation column and the array of where each node's rows start in it."""
STARTS = {
    "out_key": "out_start",
    "in_key": "in_start",
    "out_extra": "out_extra_start",
    "in_extra": "in_extra_start",
    "literal_key": "literal_start",
}
"""The sorted keys ``node * R + relation`` a build computes (``emit.emit_index`` writes each as the
relation column ``KEY_COLUMNS[key]``) and the start array of each."""
KEY_COLUMNS = {
    "out_key": "out_rel",
    "in_key": "in_rel",
    "out_extra": "out_extra_rel",
    "in_extra": "in_extra_rel",
    "literal_key": "literal_rel",
}
MAX_ENTITIES = 2**31 - 1
"""Distinct entities an index holds at most: the arrays' other ends (``out_other``, ``in_other``) are int32."""
MAX_NAMESPACES = 4096
"""Namespaces an index strips from its entity ids at most (meta.json lists them); ids of further
namespaces are stored whole."""
BLANK_ONLY = frozenset({"out_extra_rel", "in_extra_rel", "out_extra_start", "in_extra_start"})
"""Arrays written only when the index has blank-node edges (they are read only then)."""
ARRAYS = (
    "entity_offsets",
    "out_rel",
    "out_other",
    "in_rel",
    "in_other",
    "literal_rel",
    "literal_tag",
    "literal_offsets",
    "out_start",
    "in_start",
    "literal_start",
    "out_extra_rel",
    "in_extra_rel",
    "out_extra_start",
    "in_extra_start",
    "namespace_starts",
    "namespace_ids",
)
DTYPES = frozenset({"|u1", "<u2", "<u4", "<i4", "<i8"})
"""The ``.npy`` element types a reader accepts (little-endian integers)."""


def arrays(blank_edges: int) -> tuple[str, ...]:
    """The arrays an index with ``blank_edges`` blank-node edges holds."""
    return ARRAYS if blank_edges else tuple(name for name in ARRAYS if name not in BLANK_ONLY)


def relation_dtype(relations: int) -> str:
    """The type of a relation column: the narrowest unsigned type numbering ``relations`` relations."""
    return _narrowest(relations)


def tag_dtype(tags: int) -> str:
    """The type of ``literal_tag``: the narrowest unsigned type numbering ``tags`` tags."""
    return _narrowest(tags)


def offset_dtype(total_bytes: int) -> str:
    """The type of the offsets into a blob of ``total_bytes`` (``entities.bin``, ``literals.bin``)."""
    return "<u4" if total_bytes < 1 << 32 else "<i8"


def start_dtype(rows: int) -> str:
    """The type of a start array over a column of ``rows`` rows."""
    return "<i4" if rows < 1 << 31 else "<i8"


def _narrowest(count: int) -> str:
    if count <= 1 << 8:
        return "|u1"
    return "<u2" if count <= 1 << 16 else "<i4"


def index_dir(version_dir: str | os.PathLike[str]) -> Path:
    return Path(version_dir) / INDEX_DIR


def has_index(version_dir: str | os.PathLike[str]) -> bool:
    return (index_dir(version_dir) / META).is_file()


def found_version(version_dir: str | os.PathLike[str]) -> object:
    """The format version a store version's index says it has (None when it has no readable meta.json)."""
    try:
        meta = json.loads((index_dir(version_dir) / META).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return meta.get("version") if isinstance(meta, dict) else None


def add_hint(store: str | os.PathLike[str], version_dir: str | os.PathLike[str] | None = None) -> str:
    """The one line telling a user how to give a store an index (or replace one of another format)."""
    found = found_version(version_dir) if version_dir is not None else None
    if found is not None and found != FORMAT_VERSION:
        return (
            f"kga: hint: this store's traversal index has format {found}, this kga reads format {FORMAT_VERSION} "
            f"(walks run on Oxigraph); rebuild it with: kga index --store {store}"
        )
    return (
        f"kga: hint: this store has no traversal index (walks run on Oxigraph); add one with: kga index --store {store}"
    )
