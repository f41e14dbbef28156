"""Stores and caches on shared disks: one lock per real store (however it is named), typed errors
and an intact old store when the disk fills in any load phase, read-only media for writers and for
replay caches, and cache readers that never wait for another process's write lock.

Disk full is simulated with RLIMIT_FSIZE in a child process (SIGXFSZ ignored, so a write past the
limit fails with EFBIG, as a full disk fails with ENOSPC): it needs no mount and no root, and the
limit picks the phase (the name index is the largest file of a load of long names). Read-only
media is a read-only bind mount as root (chmod does not stop root), see support.read_only."""

from __future__ import annotations

import random
import sqlite3
import string
from pathlib import Path

import pytest

from kg_adapters import connect
from kg_adapters.errors import LoadError, StoreReadOnly
from kg_adapters.records import Edge
from kg_adapters.store_layout import exclusive_load_lock
from kg_adapters.wrappers.cache import ResultCache
from loaders import load_files
from loaders.testing.full_disk import EXTRACT, LOAD, run_with_file_size_limit
from loaders.testing.read_only import read_only

EX = "http://example.org/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"


def _names(path: Path, count: int, length: int = 300) -> Path:
    rng = random.Random(7)
    with open(path, "w", encoding="utf-8") as handle:
        for n in range(count):
            text = "".join(rng.choice(string.ascii_letters + " ") for _ in range(length))
            handle.write(f'<{EX}n{n}> <{LABEL}> "{text}"@en .\n')
    return path


def _small(path: Path) -> Path:
    path.write_text("".join(f"<{EX}a{n}> <{EX}r> <{EX}a{n + 1}> .\n" for n in range(10)))
    return path


@pytest.mark.parametrize(
    ("limit", "phase"),
    [(3_000_000, "name index"), (60_000, "data")],
)
def test_a_full_disk_in_any_load_phase_is_a_load_error_and_keeps_the_old_store(
    tmp_path: Path, limit: int, phase: str
) -> None:
    store = tmp_path / "store"
    load_files([str(_small(tmp_path / "small.nt"))], str(store), progress=False)
    names = _names(tmp_path / "names.nt", 4000)
    failed = run_with_file_size_limit(LOAD, limit, str(names), str(store))
    assert failed["error"] == "kg_adapters.errors.LoadError", failed
    with connect(f"oxigraph://{store}") as kg:
        assert kg.neighbors(f"{EX}a0") == {f"{EX}a0": [Edge(head=f"{EX}a0", relation=f"{EX}r", tail=f"{EX}a1")]}
        assert kg.labels([f"{EX}n1"]) == {}
    assert not [path for path in tmp_path.iterdir() if ".kga-tmp-" in path.name]
    assert run_with_file_size_limit(LOAD, 100_000_000, str(names), str(store))["error"] is None


def test_a_load_through_a_symlink_takes_the_lock_of_the_real_store(tmp_path: Path) -> None:
    real = tmp_path / "real"
    load_files([str(_small(tmp_path / "small.nt"))], str(real), progress=False)
    (tmp_path / "elsewhere").mkdir()
    link = tmp_path / "elsewhere" / "link"
    link.symlink_to(real)
    with exclusive_load_lock(real), pytest.raises(LoadError, match="another load"):
        load_files([str(_names(tmp_path / "names.nt", 5))], str(link), progress=False)
    with exclusive_load_lock(link), pytest.raises(LoadError, match="another load"):
        load_files([str(_names(tmp_path / "names.nt", 5))], str(real), progress=False)
    report = load_files([str(tmp_path / "names.nt")], str(link), progress=False)
    assert report.store == str(real) and report.store_triples == 15
    assert link.is_symlink()


def test_connect_for_writing_on_read_only_media_says_so(tmp_path: Path) -> None:
    store = tmp_path / "media" / "store"
    load_files([str(_small(tmp_path / "small.nt"))], str(store), progress=False)
    with read_only(tmp_path / "media"):
        with pytest.raises(StoreReadOnly, match="read-only"):
            connect(f"oxigraph://{store}", write=True)
        with connect(f"oxigraph://{store}") as kg:  # reading still works
            assert kg.relations(f"{EX}a0") == {f"{EX}a0": [f"{EX}r"]}


def test_a_replay_cache_works_from_read_only_media(tmp_path: Path) -> None:
    media = tmp_path / "media"
    path = media / "cache.sqlite"
    with ResultCache(path) as cache:
        cache.put_many([(["k", n], {"n": n}) for n in range(100)])
    with read_only(media), ResultCache(path, mode="replay", memory_entries=0) as replay:
        assert replay.lookup([["k", 3], ["k", 99], ["k", 100]]) == {0: {"n": 3}, 1: {"n": 99}}


def test_cache_readers_never_wait_for_another_process_write_lock(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    keys = [["k", n] for n in range(5000)]
    with ResultCache(path) as cache:
        cache.put_many([(key, {"n": n}) for n, key in enumerate(keys)])
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("DELETE FROM entries WHERE key = 'none'")  # another process mid-write
    try:
        reader = ResultCache(path, memory_entries=0)
        found = reader.lookup(keys)  # enough hits to flush last-used times: skipped while locked
        assert len(found) == 5000 and found[4999] == {"n": 4999}
        reader.close()
        with ResultCache(path, mode="replay") as replay:
            assert replay.get(["k", 7]) == {"n": 7}
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@pytest.mark.parametrize("limit", [30_000, 60_000, 150_000])
def test_a_full_disk_during_an_extraction_is_an_extract_error(
    sample_store_url: str, tmp_path: Path, limit: int
) -> None:
    store = tmp_path / "extracted"
    failed = run_with_file_size_limit(EXTRACT, limit, sample_store_url, str(store), "m.0bxtg")
    assert failed["error"] == "loaders.errors.ExtractError", failed
    assert not store.exists()
