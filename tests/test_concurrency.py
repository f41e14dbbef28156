"""Many reader processes on one on-disk store while loads append to it or to another store.

Real processes on real Oxigraph stores, synchronised with pipes (a reader answers one command per line
on stdin): no sleeps, no timing thresholds. What must hold (see ``kg_adapters/store_layout.py``):
a reader keeps the complete snapshot it opened, however many loads swap in new versions meanwhile; a
reader opening during a load sees the old complete store; loads never wait for readers; an old version
is deleted only once no reader holds it, including readers killed with SIGKILL.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg_adapters import store_layout
from kg_adapters.errors import StoreNotFound
from kg_adapters.testing.lifecycle import killed_on_exit
from loaders import load_files

REPO_ROOT = Path(__file__).resolve().parents[1]
EX = "http://example.org/"
READERS = 4

_READER = """
import json, sys
import kg_adapters
from kg_adapters import store_layout

url = "oxigraph://" + sys.argv[1]
kg = None

def answer(**fields):
    print(json.dumps(fields), flush=True)

for line in sys.stdin:
    command = line.strip()
    try:
        if command == "open":
            kg = kg_adapters.connect(url)
            answer(version=str(kg._version.data.parent))
        elif command == "read":
            rows = kg.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
            last = kg.neighbors([sys.argv[2]], direction="in")[sys.argv[2]]
            walk = kg.paths(sys.argv[3], ["%snext" % sys.argv[4]] * 3)
            named = [e.id for e in kg.search(sys.argv[5])]
            answer(count=int(rows[0]["n"].value), last_in=len(last), walk=len(walk), named=len(named))
        elif command == "close":
            kg.close()
            answer(closed=True)
    except Exception as exc:
        answer(error=f"{type(exc).__name__}: {exc}")
"""


def chain(tmp_path: Path, name: str, start: int, count: int) -> Path:
    """``count`` triples e{start} -> e{start+1} -> ... and a name "chain {start}" for e{start}: every
    prefix is a different, checkable graph (``count + 1`` triples)."""
    path = tmp_path / name
    lines = [f"<{EX}e{i}> <{EX}next> <{EX}e{i + 1}> .\n" for i in range(start, start + count)]
    lines.append(f'<{EX}e{start}> <http://www.w3.org/2000/01/rdf-schema#label> "chain {start}" .\n')
    path.write_text("".join(lines), encoding="utf-8")
    return path


class Reader:
    """A reader process on ``store``; each call sends one command and returns its JSON answer."""

    def __init__(self, store: Path, last: int) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _READER, str(store), f"{EX}e{last}", f"{EX}e0", EX, "chain 3000"],
            cwd=REPO_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def ask(self, command: str) -> dict[str, object]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        reply: dict[str, object] = json.loads(self.proc.stdout.readline())
        assert "error" not in reply, reply
        return reply

    def stop(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=60)


@contextlib.contextmanager
def readers(store: Path, last: int, count: int = READERS) -> Iterator[list[Reader]]:
    started = [Reader(store, last) for _ in range(count)]
    try:
        yield started
    finally:
        for reader in started:
            if reader.proc.poll() is None:
                reader.proc.kill()
            reader.proc.wait(timeout=60)


def snapshot(triples: int, *, named: int) -> dict[str, int]:
    """What a reader's ``read`` returns on a store of ``triples`` triples, ``named`` of them "chain 3000"."""
    return {"count": triples, "last_in": 1, "walk": 1, "named": named}


def versions(store: Path) -> list[str]:
    return sorted(p.name for p in store.iterdir() if p.name.startswith(store_layout.VERSION_PREFIX))


def current(store: Path) -> str:
    return str(store_layout.read_manifest(store)["data"])


def test_readers_keep_their_snapshot_while_loads_swap_in_new_versions(tmp_path: Path) -> None:
    """Readers open version 1, two appends swap in versions 2 and 3, and only then do the readers run
    their first queries: each still sees exactly version 1, name index included (it is opened at the
    first search, long after the swap). Old versions go once their last reader has closed."""
    store = tmp_path / "store"
    load_files([str(chain(tmp_path, "a.nt", 0, 3000))], str(store), progress=False)
    first = current(store)
    with readers(store, last=3000) as group:
        opened = {reader.ask("open")["version"] for reader in group}
        assert opened == {str(store / first)}

        load_files([str(chain(tmp_path, "b.nt", 3000, 2000))], str(store), progress=False)
        second = current(store)
        late = Reader(store, last=5000)
        assert late.ask("open")["version"] == str(store / second)
        load_files([str(chain(tmp_path, "c.nt", 5000, 1000))], str(store), progress=False)
        third = current(store)
        assert versions(store) == sorted([first, second, third])  # every version still has a reader

        for reader in group:
            assert reader.ask("read") == snapshot(3_001, named=0)
        assert late.ask("read") == snapshot(5_002, named=1)
        late.ask("close")
        late.stop()
        for reader in group:
            reader.ask("close")
            reader.ask("open")
            assert reader.ask("read") == snapshot(6_003, named=1)
            reader.ask("close")
    assert store_layout.collect_garbage(store) == sorted([first, second])
    assert versions(store) == [third]


def test_a_load_into_another_store_leaves_readers_alone(tmp_path: Path) -> None:
    store, other = tmp_path / "store", tmp_path / "other"
    load_files([str(chain(tmp_path, "a.nt", 0, 3000))], str(store), progress=False)
    with readers(store, last=3000) as group:
        for reader in group:
            reader.ask("open")
        load_files([str(chain(tmp_path, "b.nt", 0, 4000))], str(other), progress=False)
        load_files([str(chain(tmp_path, "c.nt", 4000, 500))], str(other), progress=False)
        for reader in group:
            assert reader.ask("read") == snapshot(3_001, named=0)
    assert load_files([str(chain(tmp_path, "d.nt", 3000, 1))], str(store), progress=False).store_triples == 3003


_LOADER = """
import sys
from loaders import load_files
load_files([sys.argv[1]], sys.argv[2], format="nt", progress=False)
"""


def test_readers_opening_during_a_load_see_the_old_complete_store(tmp_path: Path) -> None:
    """The loader reads from a pipe the test holds open, so it is provably mid-load while readers open."""
    store = tmp_path / "store"
    load_files([str(chain(tmp_path, "a.nt", 0, 3000))], str(store), progress=False)
    fifo = tmp_path / "more.nt"
    os.mkfifo(fifo)
    with killed_on_exit(
        subprocess.Popen([sys.executable, "-c", _LOADER, str(fifo), str(store)], cwd=REPO_ROOT)
    ) as loader:
        with open(fifo, "w", encoding="utf-8") as pipe:  # returns once the loader opened its input
            pipe.write(chain(tmp_path, "b.nt", 3000, 50_000).read_text("utf-8"))
            pipe.flush()
            with readers(store, last=3000) as group:
                for reader in group:
                    reader.ask("open")
                    assert reader.ask("read") == snapshot(3_001, named=0)
                    reader.ask("close")
        assert loader.wait(timeout=300) == 0
    with readers(store, last=53_000, count=1) as (reader,):
        reader.ask("open")
        assert reader.ask("read") == snapshot(53_002, named=1)


def test_a_reader_killed_with_sigkill_releases_its_version(tmp_path: Path) -> None:
    store = tmp_path / "store"
    load_files([str(chain(tmp_path, "a.nt", 0, 100))], str(store), progress=False)
    first = current(store)
    with readers(store, last=100, count=1) as (reader,):
        reader.ask("open")
        load_files([str(chain(tmp_path, "b.nt", 100, 10))], str(store), progress=False)
        assert first in versions(store)
        reader.proc.send_signal(signal.SIGKILL)
        assert reader.proc.wait(timeout=60) == -signal.SIGKILL
    load_files([str(chain(tmp_path, "c.nt", 110, 10))], str(store), progress=False)
    assert versions(store) == [current(store)]


def test_opening_never_waits_for_a_collector(tmp_path: Path) -> None:
    """A version being deleted holds its lock exclusively; a reader that read the manifest just before
    retries instead of waiting, and gives up with a typed error if the store never settles."""
    store = tmp_path / "store"
    load_files([str(chain(tmp_path, "a.nt", 0, 10))], str(store), progress=False)
    lock = store / current(store) / store_layout.READERS
    with open(lock, "rb") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        with pytest.raises(StoreNotFound, match="kept changing"):
            store_layout.open_version(store)
    version = store_layout.open_version(store)
    assert version.data == store / current(store) / "oxigraph"
    version.close()


def test_a_store_written_before_versions_is_read_and_appended_to(tmp_path: Path) -> None:
    """Version-1 stores keep their data in the store directory; an append moves it into a version."""
    store = tmp_path / "store"
    load_files([str(chain(tmp_path, "a.nt", 0, 10))], str(store), progress=False, index=False)  # as then
    version = store / current(store)
    os.rename(version / "oxigraph", store / "oxigraph")
    os.rename(version / "labels.sqlite", store / "labels.sqlite")
    manifest = json.loads((store / store_layout.MANIFEST).read_text("utf-8"))
    del manifest["data"]
    store_layout.write_manifest(store, {**manifest, "version": 1})
    for item in version.iterdir():
        item.unlink()
    version.rmdir()
    with readers(store, last=10, count=1) as (reader,):
        assert reader.ask("open")["version"] == str(store)
        assert reader.ask("read") == snapshot(11, named=0)
        load_files([str(chain(tmp_path, "b.nt", 10, 5))], str(store), progress=False)
        assert (store / "oxigraph").is_dir()  # still read
        assert reader.ask("read") == snapshot(11, named=0)
    load_files([str(chain(tmp_path, "c.nt", 15, 5))], str(store), progress=False)
    assert not (store / "oxigraph").exists() and versions(store) == [current(store)]
    with readers(store, last=20, count=1) as (reader,):
        reader.ask("open")
        assert reader.ask("read") == snapshot(23, named=0)
