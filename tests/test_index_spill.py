"""``kga load --memory``: past its memory budget the traversal index's collector spills sorted runs and
buffers to disk and writes the index by external sorts (:mod:`kg_adapters.index.spill`). A load under
a tiny budget must give the store an unbounded load gives, byte for byte (the traversal index files,
the name and relation index rows, the triples), on the thread and the worker-process collectors, and
after kill -9 while spilled runs exist."""

from __future__ import annotations

import json
import random
import signal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_load_resume import build_dir, store_answers, write_dump

from kg_adapters.budgets import DEFAULT_MEMORY, MIN_MEMORY, load_memory, memory_bytes
from kg_adapters.errors import InvalidTermError, LoadError
from kg_adapters.index.spill import sorted_arrays, sorted_items
from loaders import load_files
from loaders.indexing import WORKER_MIN_BYTES
from loaders.testing.kill import load_killed_at

NS = "http://rdf.freebase.com/ns/"
XSD = "http://www.w3.org/2001/XMLSchema#"
TINY = "1M"
"""The smallest budget: a few thousand IRIs per run, so these inputs spill many runs."""


def spill_lines(count: int, seed: int = 0) -> list[str]:
    """Freebase-shaped N-Triples over thousands of entities (more than a tiny budget's run holds): entity
    edges, names, labels with escapes, typed literals in non-canonical spellings, language tags, blank
    nodes, and lines repeated (a store keeps each triple once)."""
    rng = random.Random(seed)
    lines = []
    for i in range(count):
        head, tail = f"m.0{rng.randrange(12_000):05d}", f"m.0{rng.randrange(12_000):05d}"
        relation = f"r.t.p{rng.randrange(37)}"
        kind = i % 12
        if kind == 0:
            lines.append(f'<{NS}{head}> <{NS}type.object.name> "Name {head} {i % 3}"@en .')
        elif kind == 1:
            number = rng.choice(["01", "+7", "7", "-0", "12"])  # Oxigraph stores them canonically
            lines.append(f'<{NS}{head}> <{NS}{relation}> "{number}"^^<{XSD}integer> .')
        elif kind == 2:
            lines.append(f'<{NS}{head}> <{NS}{relation}> "19{i % 90:02d}-01-02"^^<{XSD}date> .')
        elif kind == 3:
            lines.append(f'<{NS}{head}> <http://www.w3.org/2000/01/rdf-schema#label> "label \\"{i % 7}\\" é" .')
        elif kind == 4:
            lines.append(f'<{NS}{head}> <{NS}{relation}> "texte {i % 5}"@fr-CA .')
        elif kind == 5:
            lines.append(f"<{NS}{head}> <{NS}{relation}> _:b{i % 50} .")
        elif kind == 6 and lines:
            lines.append(lines[rng.randrange(len(lines))])  # a repeat
        else:
            lines.append(f"<{NS}{head}> <{NS}{relation}> <{NS}{tail}> .")
    return lines


@pytest.fixture(scope="module")
def dumps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A small input (numbered on a thread) and a large one (in the worker process), each with the
    answers of its load under the default budget (which holds them in memory)."""
    directory = tmp_path_factory.mktemp("spill")
    small = write_dump(directory / "small.nt", spill_lines(9_000))
    large = write_dump(directory / "large.nt", spill_lines(40_000, seed=1))
    assert small.stat().st_size < WORKER_MIN_BYTES < large.stat().st_size
    found: dict[str, Any] = {"directory": directory}
    for name, path in (("small", small), ("large", large)):
        reference = directory / f"reference-{name}"
        load_files([str(path)], str(reference), profile="freebase", progress=False)
        found[name] = {"path": str(path), "answers": store_answers(reference)}
    return found


@pytest.mark.parametrize("size", ["small", "large"])
def test_a_load_over_its_memory_budget_gives_the_same_store(dumps: dict[str, Any], tmp_path: Path, size: str) -> None:
    store = tmp_path / "store"
    report = load_files([dumps[size]["path"]], str(store), profile="freebase", progress=False, memory=TINY)
    assert store_answers(store) == dumps[size]["answers"]
    assert report.store_triples == dumps[size]["answers"]["manifest"]["triples"]


@pytest.mark.parametrize(("point", "resumed_with"), [("checkpoint:6", TINY), ("parsed", TINY), ("parsed", "4G")])
def test_a_spilled_load_killed_then_resumed_gives_the_same_store(
    dumps: dict[str, Any], tmp_path: Path, point: str, resumed_with: str
) -> None:
    """Killed while sorted runs are on disk (the runs and the files a checkpoint names are kept, later
    ones dropped); the resumed load, under the same budget or another, writes the same store."""
    store = tmp_path / "store"
    killed = load_killed_at(
        point,
        chunk_bytes=60_000,
        checkpoint_seconds=0,
        paths=[dumps["large"]["path"]],
        store=store,
        profile="freebase",
        memory=TINY,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    runs = list((build_dir(store) / "spool" / "runs").iterdir())
    assert len(runs) >= 2, "the killed load spilled no runs: the budget is not what these inputs need"
    report = load_files([dumps["large"]["path"]], str(store), profile="freebase", progress=False, memory=resumed_with)
    assert report.resumed
    assert store_answers(store) == dumps["large"]["answers"]


def test_a_spilled_load_on_a_thread_killed_mid_parse_resumes(dumps: dict[str, Any], tmp_path: Path) -> None:
    store = tmp_path / "store"
    killed = load_killed_at(
        "checkpoint:4",
        chunk_bytes=40_000,
        checkpoint_seconds=0,
        paths=[dumps["small"]["path"]],
        store=store,
        profile="freebase",
        memory=TINY,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert list((build_dir(store) / "spool" / "runs").iterdir())
    load_files([dumps["small"]["path"]], str(store), profile="freebase", progress=False, memory=TINY)
    assert store_answers(store) == dumps["small"]["answers"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4G", 4 << 30),
        ("512M", 512 << 20),
        ("2GiB", 2 << 30),
        ("1048576", 1 << 20),
        (" 3 gb ", 3 << 30),
        (5 << 20, 5 << 20),
    ],
)
def test_memory_budgets_read_as_sizes(text: object, expected: int) -> None:
    assert memory_bytes(text) == expected
    assert DEFAULT_MEMORY == 11 << 29 and memory_bytes(MIN_MEMORY) == MIN_MEMORY


@pytest.mark.parametrize("bad", ["", "lots", "-1G", "1.5G", "4X", "1K", "0", 0, 1024, True, 2.5, None, "9" * 40])
def test_a_bad_memory_budget_is_refused_with_its_value(bad: object) -> None:
    with pytest.raises(InvalidTermError, match="memory must be a size"):
        memory_bytes(bad)


def test_a_load_with_a_bad_memory_budget_fails_before_it_starts(dumps: dict[str, Any], tmp_path: Path) -> None:
    store = tmp_path / "store"
    with pytest.raises(LoadError, match="memory must be a size"):
        load_files([dumps["small"]["path"]], str(store), progress=False, memory="half")
    assert not store.exists()


@pytest.mark.parametrize("records", [False, True])
def test_an_external_sort_of_arrays_equals_a_sort_in_memory(tmp_path: Path, records: bool) -> None:
    """Blocks sorted into runs and merged block-wise (int64 keys, or (key, other) records when keys
    do not fit one int64): every value once, in order, whatever the read size."""
    rng = np.random.default_rng(7)
    pair = np.dtype([("key", "<i8"), ("other", "<i8")])
    blocks = []
    for size in (0, 1, 5000, 13, 20000, 7000):
        keys = rng.integers(-50, 3000, size)
        if records:
            block = np.empty(size, dtype=pair)
            block["key"], block["other"] = keys, rng.integers(0, 4, size)
            blocks.append(block)
        else:
            blocks.append(keys.astype(np.int64))
    expected = np.unique(np.concatenate(blocks))
    for merge_items in (1, 5000, 10**6):
        merged = np.concatenate(list(sorted_arrays(iter(blocks), tmp_path, f"t{merge_items}", merge_items)))
        assert merged.dtype == expected.dtype and np.array_equal(merged, expected)


def test_an_external_sort_of_items_merges_runs_in_rounds(tmp_path: Path) -> None:
    """More runs than a merge reads at once are merged in rounds; duplicates are kept."""
    rng = random.Random(3)
    items = [(rng.randrange(100), rng.randbytes(rng.randrange(4))) for _ in range(5000)]
    assert list(sorted_items(iter(items), 97, tmp_path, "items", fan_in=3)) == sorted(items)
    assert list(sorted_items(iter(items), 10**6, tmp_path, "memory", fan_in=3)) == sorted(items)
    assert not list(tmp_path.glob("memory-*"))  # one block: sorted in memory, nothing written


def test_an_index_read_back_from_a_store_under_a_tiny_budget_equals_the_loads(
    dumps: dict[str, Any], tmp_path: Path
) -> None:
    """``kga index`` (and an append) reads the store back into a collector: it spills alike, and
    writes the files the load wrote from what it saw."""
    import pyoxigraph as ox

    from kg_adapters import store_layout
    from kg_adapters.index.build import build_index
    from kg_adapters.profiles import get_profile

    store = dumps["directory"] / "reference-large"
    version = store_layout.version_dir(store, store_layout.read_manifest(store))
    data = ox.Store.read_only(str(version / store_layout.DATA_DIR))
    target = tmp_path / "version"
    target.mkdir()
    build_index(data, target, get_profile("freebase"), memory=memory_bytes(TINY))
    del data
    written = {item.name: item.read_bytes() for item in sorted((target / store_layout.TRAVERSAL).iterdir())}
    assert written == dumps["large"]["answers"]["traversal"]
    assert [item.name for item in target.iterdir()] == [store_layout.TRAVERSAL]  # its spool is gone


def test_a_number_map_larger_than_its_window_is_written_and_read_a_window_at_a_time(tmp_path: Path) -> None:
    """The maps of a number per IRI that a spilled write renumbers through (tens of millions of numbers at
    Freebase scale) hold at most their window, whatever their size: written from pairs in any order, a
    window at a time, and looked up a window at a time, with the answers of an array in memory."""
    from kg_adapters.index.number_map import NumberMap, NumberMapWriter

    rng = np.random.default_rng(5)
    size = 50_000
    expected = rng.permutation(size).astype(np.int32)
    looked_up = rng.integers(0, size, 10_000)
    for window, windows in ((4096, 49), (size * 4, 0)):  # 1,024 values a window; then the whole map
        path = tmp_path / f"map-{window}"
        writer = NumberMapWriter(path, size, window)
        for chunk in np.array_split(rng.permutation(size), 7):
            writer.put(chunk, expected[chunk])
        writer.close()
        assert writer.windows_written == windows
        numbers = NumberMap(path, window)
        assert np.array_equal(numbers[looked_up], expected[looked_up])
        assert numbers.most_held == (1024 if windows else size)
        assert np.array_equal(np.concatenate([values for _first, values in numbers.blocks(999)]), expected)
        assert [item.name for item in tmp_path.iterdir() if item.suffix == ".pairs"] == []


def test_a_collection_over_its_budget_writes_the_index_through_windows_of_its_maps(
    dumps: dict[str, Any], tmp_path: Path
) -> None:
    """Under a tiny budget the numbers of the IRI runs outgrow the maps' share: the index is written
    renumbering a window at a time (what used to be memory maps read at random, resident in full), and
    its files are those of the load under the default budget."""
    import pyoxigraph as ox

    from kg_adapters.index.build import TripleCollector, build_index
    from kg_adapters.index.spool import CollectorSpool
    from kg_adapters.profiles import get_profile

    collector = TripleCollector()
    spool = CollectorSpool(tmp_path / "spool", memory=load_memory(TINY).index)  # a load's share
    spool.restore(collector, None)
    lines = Path(dumps["large"]["path"]).read_bytes().splitlines(keepends=True)
    for start in range(0, len(lines), 1000):  # handed over in chunks, as a load does
        collector.add_rdf(b"".join(lines[start : start + 1000]), ox.RdfFormat.N_TRIPLES)
    spool.save(collector)
    spool.reload(collector)
    spilled = collector._spilled
    assert spilled is not None and spool.runs > 1
    target = tmp_path / "version"
    target.mkdir()
    build_index(None, target, get_profile("freebase"), collected=collector)
    assert spilled.windows_written > 0
    assert len(spilled._numbered().read_bytes()) > spilled.map_bytes  # the map did not fit its share
    written = {item.name: item.read_bytes() for item in sorted((target / "traversal").iterdir())}
    expected = dict(dumps["large"]["answers"]["traversal"])
    meta, expected_meta = (json.loads(files.pop("meta.json")) for files in (written, expected))
    assert written == expected
    for counted in ("blank_edges", "rows"):  # blank nodes are renamed per chunk: other chunks, other nodes
        del meta[counted], expected_meta[counted]
    assert meta == expected_meta


def test_a_graph_of_many_relations_spills_its_entity_iris_sooner(tmp_path: Path) -> None:
    """The relation dict is never written as runs (every edge uses a relation's number): what it holds
    comes out of the entity dict's share, so past it the entity IRIs go to runs at every check instead
    of both dicts growing past the budget."""
    import pyoxigraph as ox

    from kg_adapters.index.build import TripleCollector
    from kg_adapters.index.spool import CollectorSpool

    found = {}
    for relations in (5, 3000):
        collector = TripleCollector()
        # a share the few relations' table leaves room in (TINY's leaves none beside the worker's reserve)
        spool = CollectorSpool(tmp_path / f"spool-{relations}", memory=load_memory("4M").index)
        spool.restore(collector, None)
        held = []  # entity IRIs the dict holds after each chunk, once every relation has been seen
        for chunk in range(24):
            lines = (
                f"<{NS}m.{chunk}x{i}> <{NS}r.p{(chunk * 400 + i) % relations}> <{NS}m.{chunk}x{i + 1}> .\n"
                for i in range(400)
            )
            collector.add_rdf("".join(lines).encode(), ox.RdfFormat.N_TRIPLES)
            if chunk >= 8:
                held.append(len(collector._entity))
        assert len(collector._relation) == relations
        found[relations] = (max(held), spool.runs)
    assert found[3000][0] == 0 < found[5][0]  # the relations took the share: nothing left for entities
    assert found[3000][1] > found[5][1]
