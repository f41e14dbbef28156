"""RoG dataset rows in the published schema (``rmanluo/RoG-webqsp``), written as JSONL and Parquet."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loaders.dataset_build import rog_parquet_fields

CVT = "m.0cvt_q1"
ROWS: list[dict[str, Any]] = [
    {
        "id": "WebQTest-1",
        "question": "where was zoë saldaña born",
        "answer": ["Passaic"],
        "q_entity": ["Zoë Saldaña"],
        "a_entity": ["Passaic"],
        "graph": [
            ["Zoë Saldaña", "people.person.place_of_birth", "Passaic"],
            ["Passaic", "location.location.containedby", "New Jersey"],
            ["Zoë Saldaña", "film.actor.film", CVT],
            [CVT, "film.performance.film", 'Avatar: "The Way of Water"'],
            ["Zoë Saldaña", "people.person.nationality", "United States of America"],
        ],
        "choices": [],
    },
    {
        "id": "WebQTest-2",
        "question": "what country is new jersey in",
        "answer": ["United States of America"],
        "q_entity": ["New Jersey"],
        "a_entity": ["United States of America"],
        "graph": [
            ["Passaic", "location.location.containedby", "New Jersey"],  # also in WebQTest-1
            ["New Jersey", "location.location.containedby", "United States of America"],
            ['Dwayne "The Rock" Johnson', "people.person.nationality", "United States of America"],
        ],
        "choices": [],
    },
    {
        "id": "WebQTest-3",
        "question": "who is nobody",
        "answer": [],
        "q_entity": ["Nobody"],
        "a_entity": [],
        "graph": [],
        "choices": [],
    },
]


def write_jsonl(path: Path, rows: Sequence[dict[str, Any]] = ROWS) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8")
    return path


def write_parquet(path: Path, rows: Sequence[dict[str, Any]] = ROWS, *, row_group_size: int = 2) -> Path:
    """``rows`` in RoG's Parquet schema (:func:`loaders.dataset_build.rog_parquet_fields`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(list(rows), schema=pa.schema(rog_parquet_fields(pa)))
    pq.write_table(table, path, row_group_size=row_group_size)
    return path
