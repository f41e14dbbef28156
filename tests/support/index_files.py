"""What an index write leaves, to compare two writes: the traversal files byte for byte and every table
of the name and relation indexes."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from kg_adapters.index.build import TripleCollector
from kg_adapters.profiles import get_profile
from loaders.indexing import write_indexes


def written_indexes(collector: TripleCollector, version: Path) -> dict[str, Any]:
    """Writes the indexes of ``collector`` (the freebase profile) into the new directory ``version`` and
    returns the traversal files, byte for byte, and every table of the name and relation indexes."""
    version.mkdir()
    names, _stats = write_indexes(collector, version, get_profile("freebase"))
    found: dict[str, Any] = {"names": names}
    found.update({item.name: item.read_bytes() for item in sorted((version / "traversal").iterdir())})
    for database in ("labels.sqlite", "relations.sqlite"):
        connection = sqlite3.connect(version / database)
        try:
            tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            for table in sorted(tables):
                found[f"{database}/{table}"] = connection.execute(f"SELECT * FROM {table}").fetchall()
        finally:
            connection.close()
    return found
