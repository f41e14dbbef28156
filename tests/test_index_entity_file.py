"""The traversal index's entity file (``entities.bin`` and its offsets): each id without its namespace, the
runs of one namespace, whether a block of ids has namespaces (IRIs kept whole by the generic profile) or
none (Freebase's and Wikidata's ids, written as they are, without a look at each id)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np

from kg_adapters.index.emit import _write_entities

BLOCK = 65536  # ids the writer takes at a time


def _written(tmp: Path, names: list[str], chunk: int) -> tuple[list[bytes], list[str], list[int], list[int]]:
    encoded = [name.encode() for name in names]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(name) for name in encoded], out=offsets[1:])
    blob = b"".join(encoded)
    chunks = [blob[start : start + chunk] for start in range(0, len(blob), chunk)]
    namespaces, starts, ids = _write_entities(tmp, chunks, offsets)
    local = np.load(tmp / "entity_offsets.npy")
    data = (tmp / "entities.bin").read_bytes()
    parts = [data[int(lo) : int(hi)] for lo, hi in itertools.pairwise(local.tolist())]
    return parts, namespaces, starts.tolist(), ids.tolist()


def _namespace_of(name: str) -> str:
    return name[: max(name.rfind("/"), name.rfind("#")) + 1]


def test_ids_with_and_without_namespaces_are_written_in_runs(tmp_path: Path) -> None:
    bare = [f"m.{number:07x}" for number in range(BLOCK + 10)]  # a whole block and more without a namespace
    iris = [f"http://example.org/{kind}/e{number}" for kind in ("a", "b") for number in range(700)]
    iris += [f"http://example.org/v#x{number}" for number in range(30)]
    tail = ["m.zz1", "m.zz2"]  # no namespace again, in a block that has some
    names = bare + iris + tail
    parts, namespaces, starts, ids = _written(tmp_path, names, chunk=1 << 16)
    assert [part.decode() for part in parts] == [name[len(_namespace_of(name)) :] for name in names]
    assert namespaces == ["", "http://example.org/a/", "http://example.org/b/", "http://example.org/v#"]
    run_starts = [0, len(bare), len(bare) + 700, len(bare) + 1400, len(bare) + 1430]
    assert starts == run_starts
    assert ids == [0, 1, 2, 3, 0]
    for start, number, end in zip(starts, ids, [*starts[1:], len(names)], strict=True):
        assert {_namespace_of(name) for name in names[start:end]} == {namespaces[number]}


def test_a_file_of_bare_ids_only_is_one_run(tmp_path: Path) -> None:
    names = [f"Q{number}" for number in range(1, 2 * BLOCK + 5)]
    parts, namespaces, starts, ids = _written(tmp_path, names, chunk=12345)
    assert [part.decode() for part in parts] == names
    assert (namespaces, starts, ids) == ([""], [0], [0])
