"""RoG dataset files whose one row holds a huge subgraph (one triple repeated), and the peak memory of
a ``kga`` command that reads them: the hostile-data kit of ``tests/test_rog_dataset_hostile.py`` and
``benchmarks/hostile_inputs.py``. A Parquet file compresses a million repeated triples into ~1.4 KB."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

TRIPLE = ["Barack Obama", "people.person.place_of_birth", "Honolulu"]


def write_parquet_row(path: Path, triples: int, *, question: str = "huge") -> None:
    """A Parquet file with one row (``id``, ``question``, ``graph``) whose graph repeats :data:`TRIPLE`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    one = pa.array([TRIPLE], type=pa.list_(pa.string()))
    repeated = one.take(pa.array([0] * triples, type=pa.int32()))
    graph = pa.ListArray.from_arrays(pa.array([0, triples], type=pa.int32()), repeated)
    table = pa.table({"id": [question], "question": ["?"], "graph": graph})
    pq.write_table(table, path, use_dictionary=True, compression="zstd")


def write_jsonl_row(path: Path, triples: int, *, question: str = "huge", bad_last: bool = False) -> None:
    """A gzip JSONL file with one such row (written as a stream); ``bad_last``: its last triple malformed."""
    part = json.dumps(TRIPLE).encode()
    with gzip.open(path, "wb", compresslevel=1) as handle:
        handle.write(b'{"id": ' + json.dumps(question).encode() + b', "question": "?", "graph": [')
        for number in range(triples):
            handle.write(
                (b", " if number else b"") + (b'["only two", "parts"]' if bad_last and number == triples - 1 else part)
            )
        handle.write(b"]}\n")


PEAK = (
    "import resource, subprocess, sys; done = subprocess.run(sys.argv[1:], capture_output=True); "
    "sys.stdout.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) + '\\n'); "
    "sys.stderr.write(done.stderr.decode(errors='replace')); sys.exit(done.returncode)"
)


def peak_memory(command: list[str], *, timeout: float = 1800) -> tuple[int, int, str]:
    """(exit status, peak resident memory in bytes, stderr) of ``command``, measured by a fresh process
    that runs it alone (the kernel's high-water mark of its one child)."""
    done = subprocess.run([sys.executable, "-c", PEAK, *command], capture_output=True, timeout=timeout)
    kilobytes = int(done.stdout.decode().strip() or 0)
    return done.returncode, kilobytes * 1024, done.stderr.decode(errors="replace")
