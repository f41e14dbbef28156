"""The traversal index's file format (``kg_adapters.index``, format 5): relation columns in the
narrowest type the relation count allows, entity ids stored without their namespaces, extra-end
arrays only with blank nodes. Each is checked on a real store against the same store answered by
Oxigraph alone, on graphs whose relations need 1, 2 and 4 bytes and whose ids interleave namespaces."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from support.stores import version_dir

from kg_adapters import connect
from kg_adapters.backends.oxigraph import OxigraphGraph
from kg_adapters.base import Direction
from kg_adapters.index import read, tuning
from kg_adapters.index.layout import FORMAT_VERSION, INDEX_DIR
from kg_adapters.index.read import TraversalIndex
from loaders import load_files

NAMESPACES = [
    "http://ex.org/a/",
    "http://ex.org/",  # its ids sort between and after those of http://ex.org/a/: several runs
    "https://b.net/vocab#",
    "urn:isbn:",  # no / or #: stored whole
    "http://ex.org/é/",
]
DIRECTIONS: list[Direction] = ["out", "in", "both"]


def _entity(rng: random.Random, nodes: int) -> str:
    number = rng.randrange(nodes)
    namespace = NAMESPACES[number % len(NAMESPACES)]
    if namespace == "http://ex.org/":  # ids of http://ex.org/a/3/ sort among those of http://ex.org/a/
        return f"{namespace}{'a' if number % 3 else 'b/'}{number}ü" if number % 4 else f"{namespace}a/3/{number}"
    return f"{namespace}{number}"


def _graph(relations: int, *, blanks: bool, seed: int = 5) -> str:
    """N-Triples over ``relations`` predicates (each used at least once), entities spread over
    :data:`NAMESPACES`, literals with languages and datatypes, and blank nodes when asked."""
    rng = random.Random(seed)
    nodes = 400
    lines = set()
    predicates = [f"http://ex.org/rel/p{j}" for j in range(relations)]
    hubs = [_entity(rng, nodes) for _ in range(3)]
    for j in range(relations + 2500):  # each relation once, then most edges over 40 of them
        predicate = predicates[j] if j < relations else rng.choice(predicates[:40])
        head = rng.choice(hubs) if rng.random() < 0.1 else _entity(rng, nodes)
        tail = rng.choice(hubs) if rng.random() < 0.1 else _entity(rng, nodes)
        lines.add(f"<{head}> <{predicate}> <{tail}> .")
    for _ in range(600):
        subject, predicate = _entity(rng, nodes), rng.choice(predicates[:30])
        obj = rng.choice(
            [
                f'"name {rng.randrange(50)}"@en',
                f'"nom {rng.randrange(50)}"@fr',
                f'"{rng.randrange(1000)}"^^<http://www.w3.org/2001/XMLSchema#integer>',
                f'"plain {rng.randrange(9)}"',
            ]
        )
        lines.add(f"<{subject}> <{predicate}> {obj} .")
    if blanks:
        for k in range(20):
            lines.add(f"_:b{k} <{rng.choice(predicates[:5])}> <{_entity(rng, nodes)}> .")
            lines.add(f"<{_entity(rng, nodes)}> <{rng.choice(predicates[:5])}> _:c{k} .")
    return "\n".join(sorted(lines)) + "\n"


def _same(answer: object, expected: object) -> bool:
    """Whether two answers are equal, blank nodes aside (each load names them afresh)."""
    return re.sub(r"_:\w+", "_:", repr(answer)) == re.sub(r"_:\w+", "_:", repr(expected))


@pytest.fixture(
    scope="module",
    params=[(30, False, "|u1"), (300, True, "<u2"), (70_000, False, "<i4")],
    ids=["1-byte relations", "2-byte relations, blank nodes", "4-byte relations"],
)
def stores(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str, bool]:
    relations, blanks, dtype = request.param
    base = tmp_path_factory.mktemp("format")
    source = base / "graph.nt"
    source.write_text(_graph(relations, blanks=blanks), encoding="utf-8")
    indexed, plain = base / "indexed", base / "plain"
    load_files([str(source)], str(indexed), progress=False)
    load_files([str(source)], str(plain), progress=False, index=False)
    return indexed, plain, dtype, blanks


@pytest.fixture
def pair(stores: tuple[Path, Path, str, bool]) -> Iterator[tuple[OxigraphGraph, OxigraphGraph]]:
    indexed, plain, _, _ = stores
    with connect(f"oxigraph://{indexed}") as fast, connect(f"oxigraph://{plain}") as slow:
        assert isinstance(fast, OxigraphGraph) and fast.traversal_index is not None
        assert isinstance(slow, OxigraphGraph) and slow.traversal_index is None
        yield fast, slow


def _index(kg: OxigraphGraph) -> TraversalIndex:
    assert kg.traversal_index is not None
    return kg.traversal_index


def _entities(kg: OxigraphGraph) -> list[str]:
    index = _index(kg)
    return [index.name(number) for number in range(index.entity_count)]


def test_the_files_use_the_narrowest_types(stores: tuple[Path, Path, str, bool]) -> None:
    indexed, _, dtype, blanks = stores
    directory = version_dir(indexed) / INDEX_DIR
    meta = json.loads((directory / "meta.json").read_text("utf-8"))
    assert meta["version"] == FORMAT_VERSION
    for column in ("out_rel", "in_rel", "literal_rel"):
        assert np.load(directory / f"{column}.npy").dtype.str == dtype
    assert np.load(directory / "out_other.npy").dtype.str == "<i4"
    assert np.load(directory / "entity_offsets.npy").dtype.str == "<u4"
    assert np.load(directory / "literal_offsets.npy").dtype.str == "<u4"
    assert np.load(directory / "literal_tag.npy").dtype.str == "|u1"
    extras = {"out_extra_rel.npy", "in_extra_rel.npy", "out_extra_start.npy", "in_extra_start.npy"}
    present = {path.name for path in directory.iterdir()}
    assert extras <= present if blanks else not extras & present
    assert set(meta["namespaces"]) == {*NAMESPACES, "http://ex.org/b/", "http://ex.org/a/3/"} - {"urn:isbn:"} | {""}
    assert len(np.load(directory / "namespace_starts.npy")) > len(meta["namespaces"])  # interleaved runs
    assert b"http://ex.org/" not in (directory / "entities.bin").read_bytes()


def test_every_id_decodes_and_numbers_back(
    pair: tuple[OxigraphGraph, OxigraphGraph], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Entity number -> id -> number for every entity, one id at a time and gathered by numpy, in
    the order of the ids (the order answers are sorted in); ids the index lacks number to None."""
    index = _index(pair[0])
    names = [index.name_from_file(number) for number in range(index.entity_count)]
    assert names == sorted(names) and len(set(names)) == len(names)
    assert [index.number(name) for name in names] == list(range(len(names)))
    for missing in ("http://ex.org/", "http://ex.org/a/", "urn:isbn:x", "http://ex.org/zzz", "", "http://nowhere/1"):
        assert index.number(missing) is None
    monkeypatch.setattr(tuning, "NAMES_BY_NUMPY", 1)
    index.name_cache.clear()
    assert index.names_of(list(range(len(names)))[::-1]) == names[::-1]


@pytest.mark.parametrize("way", ["node by node", "filtered hop", "searched hop"])
def test_walks_answer_as_oxigraph_does(
    pair: tuple[OxigraphGraph, OxigraphGraph], way: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """neighbors, relations, paths, shortest paths and subgraphs, as Oxigraph answers them: node
    by node, and by the vectorised hop that filters a frontier's rows or searches each node's rows
    for a relation."""
    if way != "node by node":
        monkeypatch.setattr(tuning, "SMALL_FRONTIER", 0)
        monkeypatch.setattr(tuning, "FILTER_ROWS", 1 << 30 if way == "filtered hop" else 0)
    fast, slow = pair
    ids = _entities(fast)
    rng = random.Random(3)
    some = rng.sample(ids, 120)
    for direction in DIRECTIONS:
        assert _same(fast.neighbors(some, direction=direction), slow.neighbors(some, direction=direction))
        assert fast.relations(some, direction=direction) == slow.relations(some, direction=direction)
    relations = [f"http://ex.org/rel/p{j}" for j in range(40)]  # the ones most edges have
    walked = 0
    for _ in range(40):
        starts = rng.sample(ids, 30)
        path = [rng.choice(relations) for _ in range(rng.randint(1, 3))]
        directions: list[Direction] = [rng.choice(["out", "in"]) for _ in path]
        found = fast.paths(starts, path, directions=directions)
        assert _same(found, slow.paths(starts, path, directions=directions))
        walked += len(found)
    assert walked > 20
    for _ in range(5):
        sources, targets = rng.sample(ids, 3), rng.sample(ids, 3)
        assert _same(
            fast.shortest_paths(sources, targets, max_hops=3), slow.shortest_paths(sources, targets, max_hops=3)
        )
        seeds = rng.sample(ids, 2)
        assert _same(fast.subgraph(seeds, hops=2, max_edges=400), slow.subgraph(seeds, hops=2, max_edges=400))


def test_relation_counts_come_from_the_columns(pair: tuple[OxigraphGraph, OxigraphGraph]) -> None:
    fast, slow = pair
    counted, queried = fast.relation_counts(max_relations=100_000), slow.relation_counts(max_relations=100_000)
    assert counted.triples == queried.triples
    exact = {relation: count for relation, count in counted.per_relation if count is not None}
    expected = dict(queried.per_relation)
    assert exact and {relation: expected[relation] for relation in exact} == exact
    assert {relation for relation, _ in counted.per_relation} == expected.keys()


def test_a_format_4_index_is_refused_with_a_rebuild_hint(tmp_path: Path) -> None:
    """An index written by the previous format (int64 keys) is not read: the store answers through
    Oxigraph, kga says which format it found and how to rebuild, and ``kga index`` does."""
    source = tmp_path / "graph.nt"
    source.write_text(_graph(30, blanks=False), encoding="utf-8")
    store, plain = tmp_path / "store", tmp_path / "plain"
    load_files([str(source)], str(store), progress=False)
    load_files([str(source)], str(plain), progress=False, index=False)
    directory = version_dir(store) / INDEX_DIR
    meta = json.loads((directory / "meta.json").read_text("utf-8"))
    for name in ("out_rel", "in_rel", "literal_rel"):  # as format 4 named and typed them
        keys = np.load(directory / f"{name}.npy").astype(np.int64)
        np.save(directory / f"{name.replace('_rel', '_key')}.npy", keys)
        (directory / f"{name}.npy").unlink()
    (directory / "meta.json").write_text(json.dumps({**meta, "version": 4}), encoding="utf-8")
    with connect(f"oxigraph://{store}") as old, connect(f"oxigraph://{plain}") as slow:
        assert isinstance(old, OxigraphGraph) and old.traversal_index is None
        hint = old.index_hint()
        assert hint is not None and "format 4" in hint and f"format {FORMAT_VERSION}" in hint
        assert f"kga index --store {store}" in hint
        some = ["http://ex.org/a/5", "urn:isbn:3"]
        assert old.neighbors(some, direction="both") == slow.neighbors(some, direction="both")
    kga = [sys.executable, "-m", "kg_adapters.cli"]
    asked = subprocess.run(
        [*kga, "relations", "--kg", f"oxigraph://{store}", "--id", "urn:isbn:3"],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "format 4" in asked.stderr and "rebuild" in asked.stderr
    subprocess.run([*kga, "index", "--store", str(store)], check=True, capture_output=True, timeout=300)
    with connect(f"oxigraph://{store}") as rebuilt:
        assert isinstance(rebuilt, OxigraphGraph) and rebuilt.traversal_index is not None
        assert rebuilt.index_hint() is None


def test_a_namespace_table_that_disagrees_is_not_read(stores: tuple[Path, Path, str, bool], tmp_path: Path) -> None:
    """A damaged namespace table (runs not starting at the first entity, a namespace number past
    the list) leaves the store answering through Oxigraph, never with wrong ids."""
    import shutil

    indexed, _, _, _ = stores
    store = tmp_path / "copy"
    shutil.copytree(indexed, store)
    directory = version_dir(store) / INDEX_DIR
    ids = np.load(directory / "namespace_ids.npy")
    ids[-1] = 250
    np.save(directory / "namespace_ids.npy", ids)
    assert read.open_index(version_dir(store)) is None
