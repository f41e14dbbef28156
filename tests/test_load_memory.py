"""A load's memory budget covers Oxigraph's bulk loader too: ``kga load --memory`` is split between it and
the traversal index's collector (:func:`kg_adapters.budgets.load_memory`), and a stream of N-Triples is
cut into bulk loads that hold at most Oxigraph's share (``loaders.rdf._Segment``), with the same store,
and the same resume after kill -9, as one long bulk load. The collector's entity numbers, counted once
per spilled run, are int64 on disk (they pass 2**31 on full Freebase); the index's own int32 numbers are
guarded by :class:`~kg_adapters.errors.IndexTooLarge`, raised before any index file is written."""

from __future__ import annotations

import resource
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyoxigraph as ox
import pytest
from test_load_resume import build_dir, freebase_lines, store_answers, write_dump

from kg_adapters import store_layout
from kg_adapters.budgets import (
    BULK_LOAD_CEILING,
    DEFAULT_MEMORY,
    LOADER_RESERVE,
    MIN_MEMORY,
    MIN_STORE_FILES,
    STORE_FILE_BYTES,
    WORKER_RESERVE,
    IndexMemory,
    LoadMemory,
    index_memory,
    load_memory,
    memory_bytes,
)
from kg_adapters.errors import IndexTooLarge, InvalidTermError
from kg_adapters.index.build import TripleCollector, build_index
from kg_adapters.index.literal_spool import literal_rows
from kg_adapters.index.spool import (
    EDGES,
    FILES,
    OUT_EXTRA,
    WRITE_EDGE_BYTES,
    WRITE_ENTITY_BYTES,
    WRITE_LITERAL_BYTES,
    CollectorSpool,
    NumberLimits,
    edge_dtype,
    extra_dtype,
)
from kg_adapters.profiles import get_profile
from loaders import load_files, rdf
from loaders.core import segment_bytes
from loaders.report import SkipLog
from loaders.store_files import OXIGRAPH_FD_RESERVE, max_open_files
from loaders.testing.kill import load_killed_at

NS = "http://rdf.freebase.com/ns/"


def test_a_load_budget_is_split_between_the_loader_and_the_index() -> None:
    """Half to the loading process, which holds the reserve beside Oxigraph's bulk loads; the rest to the
    index. The parts and the reserve never add up to more than the budget (once it can hold the reserve)."""
    loader = BULK_LOAD_CEILING + LOADER_RESERVE
    files = loader // 16 // STORE_FILE_BYTES  # the database's open files: a sixteenth of the loader's half
    assert files == 124
    assert load_memory(DEFAULT_MEMORY) == LoadMemory(
        bulk_load=BULK_LOAD_CEILING, index=DEFAULT_MEMORY - loader, store_files=files
    )
    assert load_memory("1G") == LoadMemory(
        bulk_load=(512 << 20) - LOADER_RESERVE, index=512 << 20, store_files=MIN_STORE_FILES
    )
    assert load_memory("16G") == LoadMemory(bulk_load=BULK_LOAD_CEILING, index=(16 << 30) - loader, store_files=files)
    assert load_memory(MIN_MEMORY) == LoadMemory(
        bulk_load=MIN_MEMORY // 8, index=MIN_MEMORY // 2, store_files=MIN_STORE_FILES
    )
    for size in ("512M", "1G", "3G", "4G", "5632M", "64G"):
        split = load_memory(size)
        assert split.bulk_load + LOADER_RESERVE + split.index == memory_bytes(size)
    with pytest.raises(InvalidTermError, match="memory must be a size"):
        load_memory("1.5G")


def test_the_index_workers_budget_is_split_beside_its_reserve() -> None:
    """The worker's own (interpreter, the text handed over, one block's rows) comes first; the entity table and
    the buffers held while parsing share what is left, and the index write takes all of it. A budget too
    small for the reserve (tests force spilling with 1M) keeps an eighth."""
    index = load_memory("1G").index
    assert index_memory(index) == IndexMemory(
        total=index,
        held=index - WORKER_RESERVE,
        iris=(index - WORKER_RESERVE) // 2,
        buffers=(index - WORKER_RESERVE) // 8,
        write=index - WORKER_RESERVE,
    )
    for size in ("512M", "1G", "4G", "5632M", "64G"):
        shares = index_memory(load_memory(size).index)
        assert shares.iris + shares.buffers < shares.held == shares.write <= shares.total - WORKER_RESERVE
    tiny = index_memory(load_memory(MIN_MEMORY).index)
    assert tiny.held == MIN_MEMORY // 2 // 8 and tiny.iris > 0 and tiny.buffers > 0
    for bad in (0, True, "1G", 1.5):
        with pytest.raises(InvalidTermError, match="index memory"):
            index_memory(bad)


def test_the_index_is_written_in_memory_only_when_its_estimate_fits_beside_the_worker_reserve(tmp_path: Path) -> None:
    """The in-memory write's estimate (per edge, literal row and entity: ``kg_adapters.index.spool``, and the
    literal values' bytes) is held
    against what the worker's reserve leaves of its budget: a budget that holds it only with the reserve
    counted in writes from the files."""
    collector = TripleCollector()
    CollectorSpool(tmp_path / "spool", memory=DEFAULT_MEMORY).restore(collector, None)
    lines = freebase_lines(300_000)  # an estimate past a seventh of the reserve: the reserve is taken whole
    collector.add_rdf("\n".join(lines).encode() + b"\n", ox.RdfFormat.N_TRIPLES)
    collector._add_typed()
    assert collector._flushed_rows == 0 and len(collector._literals) > 0  # all of it held, nothing spooled
    estimate = (
        len(collector.edges()[0]) * WRITE_EDGE_BYTES
        + len(collector._literals) * WRITE_LITERAL_BYTES
        + len(collector._literals.values)
        + len(collector._entity) * WRITE_ENTITY_BYTES
    )
    assert CollectorSpool(tmp_path / "spool", memory=DEFAULT_MEMORY).write_estimate(collector) == estimate
    assert estimate > WORKER_RESERVE // 7  # (a budget keeps an eighth at least)

    def fits(memory: int) -> bool:
        probe = CollectorSpool(tmp_path / f"probe-{memory}", memory=memory)
        for name in FILES:  # an empty spool: everything is in the collector
            (probe.directory / name).touch()
        return probe.fits(collector)

    assert fits(WORKER_RESERVE + estimate)
    assert not fits(WORKER_RESERVE + estimate - 1)
    assert not fits(estimate * 4 // 3)  # the whole estimate and more, but not beside the reserve


def test_the_write_estimate_counts_spooled_literal_rows_as_held_ones(tmp_path: Path) -> None:
    """Literal rows appended to the spool are counted one by one (their bytes vary too much to count them by):
    the values' bytes are counted held as spooled, so the estimate after an append differs from the one
    before by the appended file's own bytes beside the values alone, and a spool restored from a
    checkpoint's state counts them the same. Long values (descriptions) count as much as they take."""
    collector = TripleCollector()
    spool = CollectorSpool(tmp_path / "spool", memory=DEFAULT_MEMORY)
    spool.restore(collector, None)
    lines = freebase_lines(20_000) + [
        f'<{NS}m.0d{i}> <{NS}common.topic.description> "{"x" * 2000}{i}" .' for i in range(500)
    ]
    collector.add_rdf("\n".join(lines).encode() + b"\n", ox.RdfFormat.N_TRIPLES)
    collector._add_typed()
    values = len(collector._literals.values)
    held = spool.write_estimate(collector)
    assert values > 500 * 2000 and held > values
    state = spool.save(collector)
    appended = (spool.directory / "literals.bin").stat().st_size
    assert appended > values and spool.literal_rows > 0
    assert spool.write_estimate(collector) == held - values + appended
    restored = TripleCollector()
    again = CollectorSpool(tmp_path / "spool", memory=DEFAULT_MEMORY)
    again.restore(restored, state)
    assert again.write_estimate(restored) == held - values + appended


def test_a_segment_is_capped_only_below_oxigraphs_own_ceiling() -> None:
    """Inputs read at once share Oxigraph's part; at its own ceiling or more a segment is not cut."""
    assert segment_bytes(load_memory(DEFAULT_MEMORY), 1) is None
    assert segment_bytes(load_memory("1G"), 1) == (512 << 20) - LOADER_RESERVE
    assert segment_bytes(load_memory("1G"), 2) == ((512 << 20) - LOADER_RESERVE) // 2
    assert segment_bytes(load_memory(DEFAULT_MEMORY), 2) == BULK_LOAD_CEILING // 2


class CountedStore:
    """A real store that also records the statements of each bulk load it is handed (one stream each)."""

    def __init__(self) -> None:
        self.store = ox.Store()
        self.loads: list[tuple[int, int]] = []
        """(statements, bytes of text) of each bulk load."""

    def bulk_load_pieces(self, texts: Iterator[bytes]) -> None:
        pieces: list[bytes] = []

        def seen() -> Iterator[bytes]:
            for text in texts:
                pieces.append(text)
                yield text

        self.store.bulk_load(rdf.PieceStream(seen()), ox.RdfFormat.N_TRIPLES)  # type: ignore[arg-type]
        text = b"".join(pieces)
        self.loads.append((text.count(b"\n"), len(text)))

    def bulk_load(self, input: bytes, format: ox.RdfFormat) -> None:
        self.store.bulk_load(input, format)

    def bulk_extend(self, quads: Any) -> None:
        self.store.bulk_extend(quads)

    def contains_named_graph(self, graph_name: ox.NamedNode) -> bool:
        return self.store.contains_named_graph(graph_name)


def iri_lines(count: int) -> list[str]:
    """Entity edges and names only (no blank node: blank-node pieces end a stream on their own)."""
    return [
        f'<{NS}m.0{i % 700}> <{NS}type.object.name> "n {i}"@en .'
        if i % 5 == 0
        else f"<{NS}m.0{i % 700}> <{NS}r.p{i % 9}> <{NS}m.0{(i * 7) % 701}> ."
        for i in range(count)
    ]


def test_a_capped_stream_is_cut_into_bulk_loads_that_fit_and_stores_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_dump(tmp_path / "in.nt", iri_lines(6000))
    monkeypatch.setattr(rdf, "CHUNK_BYTES", 8000)  # pieces of about a hundred lines
    outcomes = {}
    for cap in (None, 200_000):
        sink = CountedStore()
        read = rdf.load_file(
            sink,
            str(path),
            "nt",
            log=SkipLog(lenient=False),
            converter=None,
            progress=lambda _: None,
            segment_bytes=cap,
        )
        outcomes[cap] = (read, sorted(map(str, sink.store)), sink.loads)
    uncapped, capped = outcomes[None], outcomes[200_000]
    assert [lines for lines, _bytes in uncapped[2]] == [6000]  # one stream: one bulk load
    assert capped[0] == uncapped[0] == 6000 and capped[1] == uncapped[1]
    assert len(capped[2]) > 5 and sum(lines for lines, _bytes in capped[2]) == 6000
    piece = rdf.bulk_load_bytes(120, 8200)  # one piece (about 8000 bytes of whole lines), at most
    assert all(rdf.bulk_load_bytes(lines, size) <= 200_000 + piece for lines, size in capped[2])


@pytest.mark.parametrize("point", ["read:4", "read:25", "checkpoint:3"])
def test_a_load_cut_to_a_small_budget_killed_then_resumed_gives_the_same_store(tmp_path: Path, point: str) -> None:
    """Under a budget that cuts each input into many bulk loads, a load killed between two checkpoints
    (in mid-stream, or at one) resumes from the last checkpoint to the store an uninterrupted load gives."""
    directory = tmp_path / "inputs"
    directory.mkdir()
    paths = [
        str(write_dump(directory / "part-1.nt.gz", iri_lines(5000))),
        str(write_dump(directory / "part-2.nt", freebase_lines(2500, seed=3))),
    ]
    reference = tmp_path / "reference"
    load_files(paths, str(reference), profile="freebase", progress=False)
    store = tmp_path / "store"
    killed = load_killed_at(
        point,
        chunk_bytes=20_000,
        checkpoint_seconds=0 if point.startswith("checkpoint") else 3600,
        paths=paths,
        store=store,
        profile="freebase",
        memory="1M",
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not store.exists() and build_dir(store).exists()
    load_files(paths, str(store), profile="freebase", progress=False, memory="1M")
    assert store_answers(store) == store_answers(reference)
    assert_open_files_capped(store, load_memory("1M").store_files)  # the resumed load's database too


def assert_open_files_capped(store: Path, files: int) -> None:
    """The store's database was last opened for writing keeping at most ``files`` data files open, beside
    the descriptors the loading process held (RocksDB records the figure in its OPTIONS file), where it
    keeps all of them open uncapped (the soft descriptor limit less Oxigraph's reserve)."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    recorded = max_open_files(store_layout.data_dir(store, store_layout.read_manifest(store)))
    assert recorded is not None
    assert files <= recorded < files + 200  # (this process's own descriptors: pytest's, the test's)
    if soft != resource.RLIM_INFINITY:
        assert recorded < soft - OXIGRAPH_FD_RESERVE


def test_a_loads_database_keeps_only_its_budgeted_files_open(tmp_path: Path) -> None:
    """RocksDB keeps the index and filter blocks of every data file it has open in memory, so a load caps
    its open files from the budget (``LoadMemory.store_files``), for a new store and for an append, and
    leaves the process's own descriptor limit as it was."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft - OXIGRAPH_FD_RESERVE <= 400:
        pytest.skip(f"a descriptor limit of {soft} leaves RocksDB too few files to tell a cap")
    store = tmp_path / "store"
    first = write_dump(tmp_path / "first.nt", iri_lines(3000))
    load_files([str(first)], str(store), profile="freebase", progress=False, memory="1G")
    assert_open_files_capped(store, load_memory("1G").store_files)
    second = write_dump(tmp_path / "second.nt", freebase_lines(2000, seed=5))
    load_files([str(second)], str(store), profile="freebase", progress=False, memory="4G")
    assert_open_files_capped(store, load_memory("4G").store_files)
    assert resource.getrlimit(resource.RLIMIT_NOFILE) == (soft, hard)
    reference = tmp_path / "reference"
    load_files([str(first), str(second)], str(reference), profile="freebase", progress=False)
    assert len(ox.Store.read_only(str(store_layout.data_dir(store, store_layout.read_manifest(store))))) == len(
        ox.Store.read_only(str(store_layout.data_dir(reference, store_layout.read_manifest(reference))))
    )


def numbered_text(entities: int, start: int = 0) -> bytes:
    lines = []
    for i in range(start, start + entities):
        lines.append(f"<{NS}m.{i}> <{NS}r.p{i % 3}> <{NS}m.{(i * 7) % entities}> .")
        lines.append(f'<{NS}m.{i}> <{NS}type.object.name> "name {i}"@en .')
        lines.append(f"<{NS}m.{i}> <{NS}r.b> _:b{i} .")
    return ("\n".join(lines) + "\n").encode()


def test_entity_numbers_past_2_31_are_written_exactly(tmp_path: Path) -> None:
    """A collector whose run starts past 2**31 (IRIs counted again in every run: full Freebase gets there)
    numbers in int32 from 0, and the spool writes each number as the load's own, in int64."""
    base = 2**31 + 7
    spool = CollectorSpool(tmp_path / "spool")
    collector = TripleCollector()
    spool.restore(collector, {"entity_base": base, "entity_base_offset": 0})
    collector.add_rdf(numbered_text(50), ox.RdfFormat.N_TRIPLES)
    spool.flush(collector)
    iris = (tmp_path / "spool" / "entities.log").read_bytes().split(b"\n")[:-1]

    def iri(number: int) -> str:
        assert number >= base
        return iris[number - base].decode()

    edges = np.fromfile(tmp_path / "spool" / EDGES, dtype=edge_dtype())
    assert len(edges) == 50
    assert {(iri(int(row["head"])), iri(int(row["tail"]))) for row in edges} == {
        (f"{NS}m.{i}", f"{NS}m.{(i * 7) % 50}") for i in range(50)
    }
    extras = np.fromfile(tmp_path / "spool" / OUT_EXTRA, dtype=extra_dtype())
    assert sorted(iri(int(node)) for node in extras["node"]) == sorted(2 * [f"{NS}m.{i}" for i in range(50)])
    names = literal_rows((tmp_path / "spool" / "literals.bin").read_bytes())
    assert {(iri(entity), value) for entity, _relation, value, _tag in names} == {
        (f"{NS}m.{i}", f"name {i}".encode()) for i in range(50)
    }


def collected(tmp_path: Path, text: bytes, *, memory: int, limits: NumberLimits) -> TripleCollector:
    """A collector fed ``text`` in chunks, with its spool (reloaded: ready to write)."""
    spool = CollectorSpool(tmp_path / "spool", memory=memory, limits=limits)
    collector = TripleCollector()
    spool.restore(collector, None)
    lines = text.split(b"\n")
    for start in range(0, len(lines), 60):
        collector.add_rdf(b"\n".join(lines[start : start + 60]), ox.RdfFormat.N_TRIPLES)
    spool.reload(collector)
    return collector


def traversal_files(version: Path) -> dict[str, bytes]:
    return {item.name: item.read_bytes() for item in sorted((version / "traversal").iterdir())}


def test_runs_written_at_the_run_number_limit_give_the_same_index(tmp_path: Path) -> None:
    """The entity dict is written out as a run at its number limit (int32 in memory), whatever the
    budget; the index is the one written in memory."""
    text = numbered_text(400)
    profile = get_profile("freebase")
    versions = {}
    for name, limits in (("memory", NumberLimits()), ("runs", NumberLimits(run=90))):
        work = tmp_path / name
        work.mkdir()
        collector = collected(work, text, memory=DEFAULT_MEMORY, limits=limits)
        if name == "runs":
            assert collector._spool is not None and collector._spool.runs >= 4
            assert collector._entity_base > 400  # IRIs met again in later runs: counted again
        versions[name] = work / "version"
        versions[name].mkdir()
        build_index(None, versions[name], profile, collected=collector)
    assert traversal_files(versions["runs"]) == traversal_files(versions["memory"])


def test_more_entities_than_the_index_numbers_are_refused_before_any_file(tmp_path: Path) -> None:
    limits = NumberLimits(run=90, entities=299)  # runs: the index is written from them
    collector = collected(tmp_path, numbered_text(300), memory=MIN_MEMORY, limits=limits)
    version = tmp_path / "version"
    version.mkdir()
    with pytest.raises(IndexTooLarge, match="more than 299 distinct entities"):
        build_index(None, version, get_profile("freebase"), collected=collector)
    assert list(version.iterdir()) == []  # nothing written, not even a temporary directory


def test_more_relations_than_the_index_numbers_are_refused_as_they_come(tmp_path: Path) -> None:
    spool = CollectorSpool(tmp_path / "spool", limits=NumberLimits(relations=10))
    collector = TripleCollector()
    spool.restore(collector, None)
    text = "".join(f"<{NS}m.{i}> <{NS}r.p{i}> <{NS}m.{i + 1}> .\n" for i in range(12)).encode()
    with pytest.raises(IndexTooLarge, match="more than 10 distinct relations"):
        collector.add_rdf(text, ox.RdfFormat.N_TRIPLES)


def test_kga_index_takes_a_memory_budget_and_writes_the_same_index(tmp_path: Path) -> None:
    """``kga index --memory``: parsed and checked as ``kga load --memory``; under a tiny budget the store
    read back spills (20,000 triples take more than 1M to write in memory), and the files are those the
    load wrote."""
    import subprocess
    import sys

    from kg_adapters import store_layout

    store = tmp_path / "store"
    load_files([str(write_dump(tmp_path / "in.nt", freebase_lines(20_000)))], str(store), profile="freebase")
    version = store_layout.version_dir(store, store_layout.read_manifest(store))
    written = traversal_files(version)
    kga = [sys.executable, "-m", "kg_adapters.cli", "index", "--store", str(store)]
    refused = subprocess.run([*kga, "--memory", "1.5G"], capture_output=True, text=True, timeout=300)
    assert refused.returncode != 0 and "memory must be a size" in refused.stderr
    assert traversal_files(version) == written
    shown = subprocess.run([*kga, "--help"], capture_output=True, text=True, timeout=300, check=True).stdout
    assert "--memory" in shown and "spill to disk" in shown
    subprocess.run([*kga, "--memory", "1M"], capture_output=True, text=True, timeout=300, check=True)
    assert traversal_files(version) == written
