"""The traversal index answers exactly as Oxigraph does, and is built atomically.

A random Freebase-shaped multigraph (parallel edges, self-loops, hubs, nameless CVT-like nodes,
literals of several kinds, relations the profile's filter hides) is loaded twice, with and without
the index; every operation is asked the same random questions of both and must give the same
answer, order and ``truncated`` flag included. Then the index is killed mid-build (a real
subprocess SIGKILLing itself at a chosen row) and the store must open with its previous answers.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.stores import version_dir

import loaders.indexing
from kg_adapters import connect
from kg_adapters.backends.oxigraph import OxigraphGraph
from kg_adapters.base import Direction, KnowledgeGraph
from kg_adapters.index import read, tuning
from kg_adapters.index.build import BUILD_FILES
from kg_adapters.index.layout import COLUMNS, FORMAT_VERSION, INDEX_DIR, has_index
from kg_adapters.records import Edge
from loaders import load_files
from loaders.indexing import index_store

FB = "http://rdf.freebase.com/ns/"
SEED = 1234
NODES = 160
RELATIONS = [
    "film.film.director",
    "film.film.starring",
    "people.person.nationality",
    "location.location.contains",
    "common.topic.notable_for",  # hidden by the freebase profile's filter
    "type.object.type",  # hidden
]
DIRECTIONS: list[Direction] = ["out", "in", "both"]


def _random_graph(seed: int, nodes: int, edges: int) -> str:
    rng = random.Random(seed)
    ids = [f"m.{i:04x}" for i in range(nodes)]
    hubs = ids[:3]
    lines = set()
    for _ in range(edges):
        head = rng.choice(hubs) if rng.random() < 0.15 else rng.choice(ids)
        tail = rng.choice(hubs) if rng.random() < 0.15 else rng.choice(ids)
        if rng.random() < 0.03:
            tail = head  # self-loop
        lines.add(f"<{FB}{head}> <{FB}{rng.choice(RELATIONS)}> <{FB}{tail}> .")
    for node in ids:
        if rng.random() < 0.8:  # the rest are nameless: CVT nodes to the freebase profile
            lines.add(f'<{FB}{node}> <{FB}type.object.name> "Name of {node}"@en .')
        if rng.random() < 0.2:
            lines.add(f'<{FB}{node}> <{FB}film.film.director> "a literal director" .')
        if rng.random() < 0.1:
            height = f'"1.{rng.randint(10, 99)}"^^<http://www.w3.org/2001/XMLSchema#decimal>'
            lines.add(f"<{FB}{node}> <{FB}people.person.height> {height} .")
    return "\n".join(sorted(lines)) + "\n"


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("random-graph") / "graph.nt"
    path.write_text(_random_graph(SEED, NODES, 1400), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def stores(graph_file: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("stores")
    indexed, plain = base / "indexed", base / "plain"
    load_files([str(graph_file)], str(indexed), profile="freebase", progress=False)
    load_files([str(graph_file)], str(plain), profile="freebase", progress=False, index=False)
    return indexed, plain


@pytest.fixture(
    scope="module",
    params=[
        ("default", "node by node"),
        ("none", "node by node"),
        ("default", "vectorised"),
        ("none", "vectorised"),
        ("default", "hub lookups"),
        ("none", "hub lookups"),
        ("default", "mixed join"),
        ("none", "mixed join"),
        ("default", "ids by numpy"),
        ("default", "tiny caches"),
    ],
    ids=lambda param: "-".join(param),
)
def pair(request: pytest.FixtureRequest, stores: tuple[Path, Path]) -> Iterator[tuple[KnowledgeGraph, KnowledgeGraph]]:
    """(indexed, Oxigraph-only) graphs, with the profile's relation filter or none; the indexed
    walks expand frontiers node by node (this small graph's frontiers stay below the limit) or, with
    the limit at 0, every frontier through the vectorised numpy hop; with ``hub lookups`` every node
    counts as a hub on a shortest-path search's last round (its edges looked up, never read), with
    ``mixed join`` the nodes of higher degree do (the others scanned, on either side); with
    ``ids by numpy`` every list of ids is decoded by the numpy gather long lists get; with ``tiny
    caches`` the index's caches of decoded ids and literals hold 3 and 2 entries (emptied all the time)."""
    indexed, plain = stores
    relation_filter, frontier = request.param
    query = f"?relation_filter={relation_filter}"
    with pytest.MonkeyPatch.context() as patch:
        if frontier == "vectorised":
            patch.setattr(tuning, "SMALL_FRONTIER", 0)
        if frontier in ("hub lookups", "mixed join"):
            patch.setattr(tuning, "PAIR_COST", 0 if frontier == "hub lookups" else 6)
            patch.setattr(tuning, "HUB_COST", 0)
            patch.setattr(tuning, "NODE_COST", 0)
        if frontier == "ids by numpy":
            import numpy  # noqa: F401 (ids are gathered by numpy only where it is loaded already)

            patch.setattr(tuning, "NAMES_BY_NUMPY", 1)
        if frontier == "tiny caches":
            patch.setattr(read, "NAME_CACHE_CAP", 3)
            patch.setattr(read, "LITERAL_CACHE_CAP", 2)
        with connect(f"oxigraph://{indexed}{query}") as fast, connect(f"oxigraph://{plain}{query}") as slow:
            assert isinstance(fast, OxigraphGraph) and fast.traversal_index is not None
            assert isinstance(slow, OxigraphGraph) and slow.traversal_index is None
            yield fast, slow


def _same(pair: tuple[KnowledgeGraph, KnowledgeGraph], operation: str, *args: Any, **options: Any) -> Any:
    """The answer of both graphs to one call, which must be the same (order and flags included)."""
    fast, slow = pair
    expected = getattr(slow, operation)(*args, **options)
    answer = getattr(fast, operation)(*args, **options)
    assert answer == expected
    assert getattr(answer, "truncated", None) == getattr(expected, "truncated", None)
    return answer


def _ids(rng: random.Random, count: int) -> list[str]:
    return [f"m.{rng.randrange(NODES + 5):04x}" for _ in range(count)]  # a few ids the graph lacks


def test_neighbors_and_relations(pair: tuple[KnowledgeGraph, KnowledgeGraph]) -> None:
    rng = random.Random(1)
    nonempty = 0
    for _ in range(60):
        ids = _ids(rng, rng.randint(1, 4))
        direction = rng.choice(DIRECTIONS)
        relations = rng.choice([None, [rng.choice(RELATIONS)], rng.sample(RELATIONS, 2), ["type.object.name"]])
        limit = rng.choice([None, None, 0, 1, 3])
        literals = rng.random() < 0.7
        expand = rng.random() < 0.3
        answer = _same(
            pair,
            "neighbors",
            ids,
            direction=direction,
            relations=relations,
            limit_per_entity=limit,
            literals=literals,
            expand_cvt=expand,
        )
        nonempty += sum(1 for edges in answer.values() if edges)
        _same(pair, "relations", ids, direction=direction, expand_cvt=expand)
    assert nonempty > 50


@pytest.mark.parametrize("hub_cut", [False, True], ids=["small-nodes-sliced", "every-node-merged"])
def test_neighbors_cut_at_every_limit(
    pair: tuple[KnowledgeGraph, KnowledgeGraph], hub_cut: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``limit_per_entity`` cuts the index's ends before any record is made: at every cut (inside the
    in-edges before the node, inside its out-edges and their literals, inside the in-edges after
    it) the answer is the first edges of Oxigraph's; with ``hub_cut`` every node's first edges are
    found as a hub's are (its relations' runs merged, the rest not read)."""
    if hub_cut:
        monkeypatch.setattr(tuning, "SCAN", -1000)
    for node in ["m.0000", "m.0001", "m.0002", "m.0049", "m.006e", "m.0090", "m.009f"]:  # hubs, self-loops
        for direction in DIRECTIONS:
            full = _same(pair, "neighbors", node, direction=direction)[node]
            for limit in sorted({*range(len(full) + 2), 0}) if len(full) < 40 else [0, 1, 2, 5, 17, 39, len(full)]:
                for relations in (None, ["film.film.director", "film.film.starring", "type.object.name"]):
                    cut = _same(
                        pair, "neighbors", node, direction=direction, limit_per_entity=limit, relations=relations
                    )
                    everything = _same(pair, "neighbors", node, direction=direction, relations=relations)
                    assert cut[node] == everything[node][:limit]
            assert full


def test_paths(pair: tuple[KnowledgeGraph, KnowledgeGraph]) -> None:
    rng = random.Random(2)
    found = truncated = 0
    for _ in range(80):
        hops = rng.randint(1, 3)
        path = [rng.choice([*RELATIONS, "type.object.name"]) for _ in range(hops)]
        directions = [rng.choice(DIRECTIONS) for _ in range(hops)]
        max_paths = rng.choice([None, None, 1, 5])
        simple = rng.random() < 0.3
        starts = _ids(rng, rng.randint(1, 3))
        answer = _same(pair, "paths", starts, path, directions=directions, max_paths=max_paths, simple=simple)
        found += len(answer)
        truncated += answer.truncated
    assert found > 100 and truncated > 3


def test_paths_with_remembered_ids_answer_as_checked_ones(pair: tuple[KnowledgeGraph, KnowledgeGraph]) -> None:
    """A call with the default directions, limit and simplicity that an earlier call checked is
    remembered whole (``IndexIds.checked_paths``): its answers stay Oxigraph's, for relation paths
    given as lists or tuples, ending on literals or not."""
    rng = random.Random(5)
    found = 0
    for _ in range(60):
        path = [rng.choice([*RELATIONS, "type.object.name"]) for _ in range(rng.randint(1, 3))]
        start = _ids(rng, 1)[0]
        first = _same(pair, "paths", start, path)
        assert _same(pair, "paths", start, tuple(path)) == _same(pair, "paths", start, path) == first
        found += len(first)
    assert found > 50


def test_a_closed_indexed_graph_refuses_remembered_paths(stores: tuple[Path, Path]) -> None:
    indexed, _ = stores
    kg = connect(f"oxigraph://{indexed}")
    answer = kg.paths("m.0001", ["film.film.director"])
    assert kg.paths("m.0001", ["film.film.director"]) == answer
    kg.close()
    with pytest.raises(Exception, match="closed"):
        kg.paths("m.0001", ["film.film.director"])


def test_shortest_paths(pair: tuple[KnowledgeGraph, KnowledgeGraph]) -> None:
    rng = random.Random(3)
    found = truncated = 0
    for _ in range(60):
        sources, targets = _ids(rng, rng.randint(1, 2)), _ids(rng, rng.randint(1, 2))
        max_hops = rng.randint(0, 4)
        direction = rng.choice(DIRECTIONS)
        max_paths = rng.choice([None, None, 2])
        answer = _same(
            pair, "shortest_paths", sources, targets, max_hops=max_hops, direction=direction, max_paths=max_paths
        )
        found += len(answer)
        truncated += answer.truncated
    assert found > 50 and truncated > 1


def test_subgraph(pair: tuple[KnowledgeGraph, KnowledgeGraph]) -> None:
    rng = random.Random(4)
    found = truncated = 0
    for _ in range(40):
        seeds = _ids(rng, rng.randint(1, 3))
        hops = rng.randint(0, 2)
        direction = rng.choice(DIRECTIONS)
        relations = rng.choice([None, None, rng.sample(RELATIONS, 2)])
        max_edges = rng.choice([None, None, 10])
        answer = _same(
            pair, "subgraph", seeds, hops=hops, direction=direction, relations=relations, max_edges=max_edges
        )
        found += len(answer)
        truncated += answer.truncated
    assert found > 200 and truncated > 1


def test_bad_input_is_refused_alike(pair: tuple[KnowledgeGraph, KnowledgeGraph]) -> None:
    for kg in pair:
        with pytest.raises(Exception) as raised:
            kg.paths("m.0001", ["bad relation"])
        assert type(raised.value).__name__ == "InvalidTermError"
        with pytest.raises(Exception) as raised:
            kg.shortest_paths("m.0001", "bad id", max_hops=2)
        assert type(raised.value).__name__ == "InvalidTermError"
        with pytest.raises(Exception) as raised:
            kg.subgraph("m.0001", hops=-1)
        assert type(raised.value).__name__ == "InvalidTermError"
        with pytest.raises(Exception) as raised:
            kg.shortest_paths("m.0001", "m.0002", max_hops=None)  # type: ignore[arg-type]
        assert type(raised.value).__name__ == "InvalidTermError"
        with pytest.raises(Exception) as raised:
            kg.subgraph("m.0001", hops=None)  # type: ignore[arg-type]
        assert type(raised.value).__name__ == "InvalidTermError"


BAD_CALLS: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("neighbors", ("bad id",), {}),
    ("neighbors", ("m.0001",), {"relations": "film.film.director"}),
    ("neighbors", ("m.0001",), {"relations": ["bad relation"]}),
    ("neighbors", ("m.0001",), {"relations": [7]}),
    ("neighbors", ("m.0001",), {"direction": "sideways"}),
    ("neighbors", ("m.0001",), {"limit_per_entity": -1}),
    ("neighbors", (["m.0001", 5],), {}),
    ("neighbors", (b"m.0001",), {}),
    ("relations", ("bad id",), {}),
    ("relations", ("m.0001",), {"direction": "up"}),
    ("relations", (["m.0001", None],), {}),
    ("paths", ("bad id", ["film.film.director"]), {}),
    ("paths", ("m.0001", ["film.film.director", "bad relation"]), {}),
    ("paths", ("m.0001", [["film.film.director"]]), {}),
    ("paths", ("m.0001", "film.film.director"), {}),
    ("paths", ("m.0001", []), {}),
    ("paths", ("m.0001", ["film.film.director"]), {"directions": ["out", "in"]}),
    ("paths", ("m.0001", ["film.film.director"]), {"directions": ["down"]}),
    ("paths", ("m.0001", ["film.film.director"]), {"max_paths": -2}),
]


def test_every_bad_call_gets_the_same_error_on_both_paths_every_time(
    pair: tuple[KnowledgeGraph, KnowledgeGraph],
) -> None:
    """The indexed path remembers the ids it converted; a bad one is never remembered, so it is
    refused with the Oxigraph path's error on every call, also after good calls with the same ids."""
    fast, slow = pair
    for operation, args, options in BAD_CALLS:
        errors = []
        for kg in (slow, fast, fast):
            kg.neighbors("m.0001", relations=["film.film.director"])  # the good ids, converted and remembered
            kg.paths("m.0001", ["film.film.director"])
            with pytest.raises(Exception) as raised:
                getattr(kg, operation)(*args, **options)
            errors.append((type(raised.value).__name__, str(raised.value)))
        assert errors[0][0] == "InvalidTermError", (operation, args, options, errors[0])
        assert errors[1] == errors[2] == errors[0], (operation, args, options)


def test_small_walks_on_the_index_do_not_import_numpy(stores: tuple[Path, Path]) -> None:
    """Opening an indexed store and answering small walks maps the index without numpy (its import
    would cost a serving process more time and memory than opening the store)."""
    indexed, _ = stores
    script = textwrap.dedent(
        f"""
        import sys
        from kg_adapters import connect
        with connect("oxigraph://{indexed}") as kg:
            assert kg.traversal_index is not None
            answers = [
                kg.neighbors("m.0001", direction="both"),
                kg.relations("m.0001"),
                kg.paths("m.0001", ["film.film.director", "film.film.director"], directions=["out", "in"]),
                kg.shortest_paths("m.0001", "m.0002", max_hops=3),
                kg.subgraph("m.0001", hops=1),
            ]
        print(repr(sum(map(len, answers))), "numpy" in sys.modules)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    count, numpy_imported = done.stdout.split()
    assert int(count) > 0 and numpy_imported == "False"


def test_a_profile_other_than_the_index_falls_back(stores: tuple[Path, Path]) -> None:
    """The index numbers ids as the store's profile spells them; another profile uses Oxigraph."""
    indexed, plain = stores
    with (
        connect(f"oxigraph://{indexed}?profile=generic") as fast,
        connect(f"oxigraph://{plain}?profile=generic") as slow,
    ):
        node = FB + "m.0001"
        assert fast.neighbors(node, direction="both") == slow.neighbors(node, direction="both")
        assert fast.subgraph(node, hops=2) == slow.subgraph(node, hops=2)


# --------------------------------------------------------------------------- building the index
def _answers(store: Path) -> dict[str, Any]:
    with connect(f"oxigraph://{store}") as kg:
        return {
            "neighbors": kg.neighbors(["m.0001", "m.0002"], direction="both"),
            "paths": list(kg.paths("m.0001", ["film.film.director", "film.film.starring"], directions=["both", "in"])),
            "shortest": list(kg.shortest_paths("m.0001", ["m.0042", "m.0077"], max_hops=4)),
            "subgraph": list(kg.subgraph("m.0003", hops=2)),
        }


_KILLING_BUILD = textwrap.dedent(
    """
    import os, signal, sys
    from kg_adapters.index import build as traversal_index

    def killer(rows):
        if rows >= int(sys.argv[3]):
            os.kill(os.getpid(), signal.SIGKILL)

    mode, store = sys.argv[1], sys.argv[2]
    if mode == "index":
        from loaders.indexing import index_store
        index_store(store, progress=killer, every=100)
    else:  # an append whose index build is killed: the build function, called with the killer
        real = traversal_index.build_index
        traversal_index.build_index = lambda *args, **kw: real(*args, **{**kw, "progress": killer, "every": 100})
        from loaders import load_files
        load_files([sys.argv[4]], store, profile="freebase", progress=False)
    print("not killed")
    """
)


def _run_killed(tmp_path: Path, *args: str) -> None:
    script = tmp_path / "killing_build.py"
    script.write_text(_KILLING_BUILD, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == -9, done.stderr
    assert "not killed" not in done.stdout


@pytest.mark.parametrize("kill_at", ["reading", "writing", "renaming"])
def test_kill_during_kga_index_leaves_the_store_answering(graph_file: Path, tmp_path: Path, kill_at: str) -> None:
    """Killed while reading the store, after 3 of its files are written, or with every file written
    but before the rename: no index appears, answers stay, and the next build cleans up."""
    store = tmp_path / "store"
    load_files([str(graph_file)], str(store), profile="freebase", progress=False, index=False)
    before = _answers(store)
    rows = len(graph_file.read_text("utf-8").splitlines())
    assert rows % 100 > 20  # so the reading reports (every 100 rows) never reach rows + 1
    point = {"reading": 700, "writing": rows + 3, "renaming": rows + BUILD_FILES}[kill_at]
    _run_killed(tmp_path, "index", str(store), str(point))
    version = version_dir(store)
    assert not has_index(version)
    assert [p.name for p in version.iterdir() if p.name.startswith(".traversal-tmp-")]  # the killed build's files
    with connect(f"oxigraph://{store}") as kg:
        assert isinstance(kg, OxigraphGraph) and kg.traversal_index is None
    assert _answers(store) == before
    stats = index_store(str(store))
    assert stats.edges > 1000
    assert has_index(version)
    assert not [p.name for p in version.iterdir() if p.name.startswith(".traversal-")]  # cleaned up
    with connect(f"oxigraph://{store}") as kg:
        assert isinstance(kg, OxigraphGraph) and kg.traversal_index is not None
    assert _answers(store) == before


def test_kill_during_an_appends_index_build_keeps_the_previous_version(graph_file: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    load_files([str(graph_file)], str(store), profile="freebase", progress=False)
    before = _answers(store)
    version = version_dir(store)
    extra = tmp_path / "extra.nt"
    extra.write_text(f"<{FB}m.0001> <{FB}film.film.director> <{FB}m.0999> .\n", encoding="utf-8")
    _run_killed(tmp_path, "load", str(store), "700", str(extra))
    assert version_dir(store) == version and has_index(version)
    assert _answers(store) == before
    load_files([str(extra)], str(store), profile="freebase", progress=False)  # the next load finishes it
    assert has_index(version_dir(store))
    with connect(f"oxigraph://{store}") as kg:
        assert Edge(head="m.0001", relation="film.film.director", tail="m.0999") in kg.neighbors("m.0001")["m.0001"]


def test_writes_rebuild_the_index(graph_file: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    load_files([str(graph_file)], str(store), profile="freebase", progress=False)
    new = Edge(head="m.0001", relation="film.film.starring", tail="m.0abc")
    with connect(f"oxigraph://{store}?write=true") as kg:
        assert isinstance(kg, OxigraphGraph) and kg.traversal_index is not None
        kg.add([new])
        assert kg.traversal_index is not None
        assert [path.edges for path in kg.paths("m.0abc", ["film.film.starring"], directions=["in"])] == [(new,)]
    with connect(f"oxigraph://{store}") as kg:
        assert isinstance(kg, OxigraphGraph) and kg.traversal_index is not None
        assert new in kg.neighbors("m.0abc", direction="in")["m.0abc"]


def test_kga_index_command_and_hint(graph_file: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    load = [sys.executable, "-m", "kg_adapters.cli", "load", str(graph_file), "--store", str(store)]
    subprocess.run([*load, "--profile", "freebase", "--no-index"], check=True, capture_output=True, timeout=300)
    ask = [sys.executable, "-m", "kg_adapters.cli", "relations", "--kg", f"oxigraph://{store}", "--id", "m.0001"]
    without = subprocess.run(ask, check=True, capture_output=True, text=True, timeout=300)
    assert f"kga index --store {store}" in without.stderr
    assert len([line for line in without.stderr.splitlines() if "hint" in line]) == 1
    built = subprocess.run(
        [sys.executable, "-m", "kg_adapters.cli", "index", "--store", str(store), "--json"],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert json.loads(built.stdout)["edges"] > 1000
    assert (version_dir(store) / INDEX_DIR).is_dir()
    with_index = subprocess.run(ask, check=True, capture_output=True, text=True, timeout=300)
    assert "hint" not in with_index.stderr
    assert with_index.stdout == without.stdout


def test_an_index_of_an_older_format_is_treated_as_absent(
    graph_file: Path, stores: tuple[Path, Path], tmp_path: Path
) -> None:
    """A format-3 index (no start arrays) is not read: the store answers through Oxigraph, exactly as
    without an index, ``kga`` says how to add one, and ``kga index`` replaces it."""
    _, plain = stores
    store = tmp_path / "store"
    load_files([str(graph_file)], str(store), profile="freebase", progress=False)
    directory = version_dir(store) / INDEX_DIR
    meta = json.loads((directory / "meta.json").read_text("utf-8"))
    assert meta["version"] == FORMAT_VERSION
    for start in COLUMNS.values():
        (directory / f"{start}.npy").unlink(missing_ok=True)
    (directory / "meta.json").write_text(json.dumps({**meta, "version": 3}), encoding="utf-8")
    with connect(f"oxigraph://{store}") as old, connect(f"oxigraph://{plain}") as slow:
        assert isinstance(old, OxigraphGraph) and old.traversal_index is None
        assert old.index_hint() is not None
        for direction in DIRECTIONS:
            ids = [f"m.{n:04x}" for n in range(12)]
            assert old.neighbors(ids, direction=direction) == slow.neighbors(ids, direction=direction)
        rule = ["film.film.director", "film.film.starring"]
        assert old.paths("m.0001", rule, directions=["in", "out"]) == slow.paths(
            "m.0001", rule, directions=["in", "out"]
        )
    kga = [sys.executable, "-m", "kg_adapters.cli"]
    ask = [*kga, "relations", "--kg", f"oxigraph://{store}", "--id", "m.0001"]
    asked = subprocess.run(ask, check=True, capture_output=True, text=True, timeout=300)
    assert f"kga index --store {store}" in asked.stderr
    subprocess.run([*kga, "index", "--store", str(store)], check=True, capture_output=True, timeout=300)
    with connect(f"oxigraph://{store}") as rebuilt:
        assert isinstance(rebuilt, OxigraphGraph) and rebuilt.traversal_index is not None
    again = subprocess.run(ask, check=True, capture_output=True, text=True, timeout=300)
    assert "hint" not in again.stderr and again.stdout == asked.stdout


@pytest.mark.parametrize("damage", ["short", "wrong end", "not first at zero"])
def test_an_index_with_damaged_start_arrays_is_not_read(graph_file: Path, tmp_path: Path, damage: str) -> None:
    """Start arrays that do not cover their keys (a truncated or edited file) leave the store
    answering through Oxigraph, never from wrong ranges."""
    import numpy as np

    store = tmp_path / "store"
    load_files([str(graph_file)], str(store), profile="freebase", progress=False)
    path = version_dir(store) / INDEX_DIR / "out_start.npy"
    starts = np.load(path)
    if damage == "short":
        starts = starts[:-1]
    elif damage == "wrong end":
        starts[-1] -= 1
    else:
        starts[0] = 1
    np.save(path, starts)
    with connect(f"oxigraph://{store}") as kg, connect(f"oxigraph://{store}?index=false") as slow:
        assert isinstance(kg, OxigraphGraph) and kg.traversal_index is None
        assert kg.neighbors("m.0001", direction="both") == slow.neighbors("m.0001", direction="both")


# --------------------------------------------------------------------------- the index a load writes
EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
_HOSTILE_NT = "\n".join(
    [
        "# a comment line, then an empty one",
        "",
        f"<{EX}a> <{EX}p> <{EX}b> .",
        f"<{EX}a> <{EX}p> <{EX}b> .",  # twice: the store holds it once
        f"<{EX}a>\t<{EX}p>  <{EX}c> .",  # tabs and two spaces
        f"<{EX}a> <{EX}p> <{EX}d>.",  # no space before the dot
        f"<{EX}a> <{EX}q> <{EX}b> . # a comment > <{EX}x> .",
        f"<{EX}b> <{EX}q> <{EX}page#top> .",
        f"<{EX}\\u0041bc> <{EX}p> <{EX}a> .",  # an escaped IRI: the store holds <{EX}Abc>
        f"<{EX}Abc> <{EX}p> <{EX}b> .",
        f'<{EX}a> <{EX}n> "01"^^<{XSD}integer> .',  # the store keeps the value: "1"
        f'<{EX}a> <{EX}n> "+1"^^<{XSD}integer> .',  # the same value again
        f'<{EX}a> <{EX}n> "1.50"^^<{XSD}decimal> .',
        f'<{EX}a> <{EX}n> "1"^^<{XSD}boolean> .',
        f'<{EX}a> <{EX}n> "2020-01-01T00:00:00.000Z"^^<{XSD}dateTime> .',
        f'<{EX}a> <{EX}n> "07"^^<{XSD}int> .',
        f'<{EX}a> <{EX}label> "Hello"@EN-gb .',
        f'<{EX}a> <{EX}label> "x"^^<{XSD}string> .',
        f'<{EX}a> <{EX}label> "x" .',  # the same term as the line before
        f'<{EX}a> <{EX}label> "a > <{EX}b> . \\"q\\" \\u00e9\\n" .',
        f'<{EX}b> <{EX}label> "Hello"@en-GB .',  # the same term as "Hello"@EN-gb above, on another node
        f"<{EX}b> <{EX}label> \"Grüße, 'x' > <y>\"@DE .",
        f'<{EX}b> <{EX}n> "12"^^<{XSD}integer> .',  # stored as written (the regex path) ...
        f'<{EX}b> <{EX}n> "012"^^<{XSD}integer> .',  # ... and the same value through Oxigraph: one triple
        f'<{EX}b> <{EX}n> "-0"^^<{XSD}integer> .',
        f'<{EX}b> <{EX}n> "99999999999999999999999"^^<{XSD}integer> .',
        f'<{EX}b> <{EX}n> "true"^^<{XSD}boolean> .',
        f'<{EX}b> <{EX}n> "1999-02-30"^^<{XSD}date> .',  # ill-typed: kept as written
        f'<{EX}b> <{EX}n> "2000-02-29"^^<{XSD}date> .',
        f'<{EX}b> <{EX}n> "2000-02-29Z"^^<{XSD}date> .',
        f'<{EX}b> <{EX}n> "" .',
        f'<{EX}b> <{EX}n> ""@en .',
        f'<{EX}b>  <{EX}n> "spaced" .',
        f'<{EX}b> <{EX}n> "x"^^<{EX}custom> .',
        f"_:n1 <{EX}p> <{EX}a> .",
        f"<{EX}c> <{EX}p> _:n1 .",
        f"_:n1 <{EX}p> _:n2 .",
        f"<{EX}a> <{EX}p> <{EX}b> .",
    ]
)
_HOSTILE_TTL = f"""@prefix ex: <{EX}> .
ex:a ex:p ex:e , ex:b ; ex:n "2"^^<{XSD}integer> , "002"^^<{XSD}integer> .
ex:e ex:q [ ex:p ex:a ] .
"""
_HOSTILE_NQ = f"""<{EX}f> <{EX}p> <{EX}a> <{EX}graph> .
<{EX}f> <{EX}p> "in a named graph"@en <{EX}graph> .
"""


def _index_files(store: Path) -> dict[str, bytes]:
    directory = version_dir(store) / INDEX_DIR
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


@pytest.mark.parametrize("collector", ["thread", "worker"])
@pytest.mark.parametrize("lenient", [False, True])
def test_the_index_a_load_writes_equals_the_one_read_back_from_the_store(
    tmp_path: Path, lenient: bool, collector: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The load numbers triples as they go into the store, on a thread or in a worker process; the
    index it writes must be, byte for byte, the one read back from the finished store (escapes,
    duplicates, typed literals Oxigraph stores canonically, blank nodes, comments, other formats,
    named graphs moved to the default one), and answer as Oxigraph does."""
    monkeypatch.setattr(loaders.indexing, "WORKER_MIN_BYTES", 0 if collector == "worker" else 1 << 62)
    nt, ttl, nq = tmp_path / "hostile.nt", tmp_path / "hostile.ttl", tmp_path / "hostile.nq"
    text = _HOSTILE_NT + (f'\n<{EX}a> <{EX}p> "unterminated .' if lenient else "")
    nt.write_text(text + "\n", encoding="utf-8")
    ttl.write_text(_HOSTILE_TTL, encoding="utf-8")
    nq.write_text(_HOSTILE_NQ, encoding="utf-8")
    files = [str(nt), str(nq)] if lenient else [str(nt), str(ttl), str(nq)]  # lenient: line formats only
    store = tmp_path / "store"
    report = load_files(files, str(store), progress=False, lenient=lenient)
    assert report.index_seconds > 0
    assert report.lines_skipped == (1 if lenient else 0)
    written = _index_files(store)
    index_store(str(store))
    assert _index_files(store) == written
    meta = json.loads(written["meta.json"])
    # "01", "+1": one triple; "12", "012": one
    assert (meta["blank_edges"], meta["literal_edges"]) == ((3, 22) if lenient else (5, 23))
    nodes = [f"{EX}{name}" for name in ("a", "b", "c", "d", "e", "f", "Abc", "page#top")]
    with connect(f"oxigraph://{store}") as fast, connect(f"oxigraph://{store}?index=false") as slow:
        assert isinstance(fast, OxigraphGraph) and fast.traversal_index is not None
        assert isinstance(slow, OxigraphGraph) and slow.traversal_index is None
        for direction in DIRECTIONS:
            assert fast.neighbors(nodes, direction=direction) == slow.neighbors(nodes, direction=direction)
        assert list(fast.subgraph(f"{EX}a", hops=2)) == list(slow.subgraph(f"{EX}a", hops=2))


def test_an_index_collected_over_many_chunks_equals_the_one_read_back(tmp_path: Path) -> None:
    """A load numbers each chunk on a worker thread while Oxigraph takes the next: over chunks that
    fail (a bad line, loaded leniently), repeat earlier ones and mix edges, literals and blank nodes,
    the index is the one read back from the store."""
    from loaders.rdf import CHUNK_LINES

    lines = []
    for number in range(CHUNK_LINES * 2 + 500):
        kind = number % 10
        if kind == 7:
            lines.append(f'<{EX}e{number % 5000}> <{EX}name> "n{number % 3000}"@en .')
        elif kind == 8:
            lines.append(f'<{EX}e{number % 5000}> <{EX}n> "{number % 100:02}"^^<{XSD}integer> .')
        elif kind == 9 and number % 1000 == 9:
            lines.append(f"_:b{number % 7} <{EX}r{number % 3}> <{EX}e{number % 50}> .")
        else:
            lines.append(f"<{EX}e{number % 5000}> <{EX}r{number % 13}> <{EX}e{(number * 7) % 6000}> .")
    lines[CHUNK_LINES + 42] = f"<{EX}broken iri> <{EX}p> <{EX}o> ."
    source = tmp_path / "many.nt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    store = tmp_path / "store"
    report = load_files([str(source)], str(store), progress=False, lenient=True)
    assert report.lines_skipped == 1
    written = _index_files(store)
    index_store(str(store))
    assert _index_files(store) == written
    meta = json.loads(written["meta.json"])
    assert meta["literal_edges"] > 0 and meta["blank_edges"] > 0 and meta["edges"] > 0


def _literal_forms() -> list[str]:
    """Literal objects of many spellings: the ones the collector reads without Oxigraph and their
    neighbours that Oxigraph stores in another form."""
    integers = ["0", "-0", "+0", "00", "1", "01", "+1", "-1", "-01", "10", "1234567890", "9223372036854775807"]
    integers += ["9223372036854775808", "-9223372036854775808", "-9223372036854775809", "1" + "0" * 30, " 1", "1.0"]
    integers += ["abc", ""]
    dates = [
        f"{y}-{m:02}-{d:02}"
        for y in ("0000", "0001", "1900", "1999", "2000", "2024", "9999")
        for m in range(14)
        for d in range(0, 33, 1 if y in ("1900", "2000") else 7)
    ]
    dates += ["1999-01-01Z", "1999-01-01+02:00", "-1999-01-01", "19999-01-01", "1999-1-01", "1999-01-01T00:00:00"]
    booleans = ["true", "false", "1", "0", "TRUE", "True", ""]
    forms = [f'"{v}"^^<{XSD}integer>' for v in integers] + [f'"{v}"^^<{XSD}date>' for v in dates]
    forms += [f'"{v}"^^<{XSD}boolean>' for v in booleans]
    forms += [
        f'"{v}"^^<{XSD}{t}>' for t in ("decimal", "double", "int", "gYear", "dateTime") for v in ("1", "01", "1.0")
    ]
    forms += ['"plain"', '""', f'"typed"^^<{XSD}string>', '"x"@en', '"x"@EN', '"x"@en-US', '"x"@zh-Hant-TW', '"ü"@de']
    forms += ['"1"', '"1"@en', f'"1"^^<{EX}custom>', '"\\u0041"', '"a\\"b"', '"tab\\tx"@en']
    return forms


def test_literal_lines_read_without_oxigraph_are_the_literals_oxigraph_stores(tmp_path: Path) -> None:
    """The collector reads plain, language-tagged and canonical typed literal lines itself: each
    must be, value and tag, what Oxigraph's store holds (read back), and only the other lines may
    go to Oxigraph's parser."""
    import pyoxigraph as ox

    from kg_adapters.index.build import TripleCollector

    forms = _literal_forms()
    text = "\n".join(f"<{EX}s{number % 7}> <{EX}p> {form} ." for number, form in enumerate(forms))
    data = text.encode()
    loaded = TripleCollector()
    loaded.add_rdf(data, ox.RdfFormat.N_TRIPLES)
    store = ox.Store(str(tmp_path / "store"))
    store.bulk_load(data, ox.RdfFormat.N_TRIPLES)
    read_back = TripleCollector(distinct=True)
    read_back.add_quads(store.quads_for_pattern(None, None, None, graph_name=ox.DefaultGraph()))

    def rows(collector: TripleCollector) -> set[tuple[str, str, bytes, bytes]]:
        entities, relations = collector.iris()
        return {(entities[s], relations[r], value, tag) for s, r, value, tag in collector.literal_rows()}

    assert rows(loaded) == rows(read_back)
    assert len(rows(loaded)) == len(store)
    left = TripleCollector()._add_literal_lines(data).decode()
    for form in forms:
        escaped = "\\" in form
        canonical = form in (
            f'"{v}"^^<{XSD}{t}>' for t, v in (("integer", "1"), ("integer", "-1"), ("date", "2000-02-29"))
        )
        if canonical or form in ('"plain"', '"x"@EN', '"x"@en-US', f'"typed"^^<{XSD}string>'):
            assert form not in left  # read by the regex
        if escaped or form in (f'"01"^^<{XSD}integer>', f'"1"^^<{XSD}boolean>', f'"1"^^<{XSD}decimal>'):
            assert form in left  # left for Oxigraph


def test_relations_of_a_store_with_blank_nodes_come_from_its_index_as_from_oxigraph(tmp_path: Path) -> None:
    """Blank nodes keep whole walks off the index, but ``relations`` still reads each IRI's relation
    numbers from it (literal and blank-node edges included); the answer is Oxigraph's."""
    ns = "http://rdf.freebase.com/ns/"
    data = tmp_path / "blank.nt"
    data.write_text(
        f"<{ns}m.a> <{ns}r.one> <{ns}m.b> .\n"
        f"<{ns}m.a> <{ns}r.two> _:x .\n"
        f'<{ns}m.a> <{ns}r.three> "text" .\n'
        f"_:x <{ns}r.four> <{ns}m.a> .\n"
        f"<{ns}m.b> <{ns}r.one> <{ns}m.a> .\n",
        encoding="utf-8",
    )
    store = tmp_path / "store"
    load_files([str(data)], str(store), profile="freebase", progress=False)
    assert has_index(version_dir(store))
    indexed = connect(f"oxigraph://{store.resolve()}?profile=freebase")
    plain = connect(f"oxigraph://{store.resolve()}?profile=freebase&index=false")
    for direction in DIRECTIONS:
        answer = indexed.relations(["m.a", "m.b", "m.none"], direction=direction)
        assert answer == plain.relations(["m.a", "m.b", "m.none"], direction=direction)
    assert indexed.relations("m.a", direction="out") == {"m.a": ["r.one", "r.three", "r.two"]}
    assert indexed.relations("m.a", direction="in") == {"m.a": ["r.four", "r.one"]}


def test_ids_gathered_by_numpy_and_literal_records_are_those_of_the_plain_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Long id lists are decoded by one numpy gather: multi-byte UTF-8 ids, empty-looking and long
    ones, in any order and repeated, must come back as the one-by-one decoding gives them, and the
    answers built from them (literal objects included) must be Oxigraph's, as real frozen records."""
    import pickle

    import numpy  # noqa: F401 (the gather is used only where numpy is loaded already)

    from kg_adapters.records import Literal

    spellings = ["a", "é", "日本", "x" * 300, "%0A", "𝔘", "page#top", "b\u00a0c", "z"]
    lines = [f"<{EX}{a}> <{EX}p> <{EX}{b}> ." for a in spellings for b in spellings if (len(a) + len(b)) % 3]
    lines += [f'<{EX}{a}> <{EX}label> "{a} ü"@de-CH .' for a in spellings]
    lines += [f'<{EX}{a}> <{EX}label> "{a}" .' for a in spellings[::2]]
    lines += [f'<{EX}{a}> <{EX}size> "{len(a)}"^^<{XSD}integer> .' for a in spellings[1::2]]
    data = tmp_path / "unicode.nt"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    store = tmp_path / "store"
    load_files([str(data)], str(store), progress=False)
    monkeypatch.setattr(tuning, "NAMES_BY_NUMPY", 1)
    nodes = [f"{EX}{spelling}" for spelling in spellings]
    with connect(f"oxigraph://{store}") as fast, connect(f"oxigraph://{store}?index=false") as slow:
        assert isinstance(fast, OxigraphGraph)
        index = fast.traversal_index
        assert index is not None
        numbers = [n for n in range(index.entity_count) for _ in range(2)][::-1]
        one_by_one = [index.name(n) for n in numbers]
        assert index._gathered_names(numbers) == one_by_one  # the gather itself, not its fallback
        assert index.names_of(numbers) == one_by_one and index.names_of([]) == []
        assert sorted(set(one_by_one)) == sorted(nodes)
        assert index.names(numbers) == dict(zip(numbers, one_by_one, strict=True))
        for direction in DIRECTIONS:
            answer = fast.neighbors(nodes, direction=direction)
            assert answer == slow.neighbors(nodes, direction=direction)
            assert list(fast.subgraph(nodes, hops=2, direction=direction)) == list(
                slow.subgraph(nodes, hops=2, direction=direction)
            )
        literals = [edge.tail for edges in answer.values() for edge in edges if not isinstance(edge.tail, str)]
        assert {literal.lang for literal in literals} == {None, "de-ch"} and any(lit.datatype for lit in literals)
        for literal in literals:
            assert type(literal) is Literal
            made = Literal(value=literal.value, datatype=literal.datatype, lang=literal.lang)
            assert literal == made and hash(literal) == hash(made) and pickle.loads(pickle.dumps(literal)) == made
            with pytest.raises(AttributeError):
                literal.value = "changed"  # type: ignore[misc]


def test_decoded_caches_stay_under_their_caps_and_answer_alike(stores: tuple[Path, Path]) -> None:
    """The index keeps decoded ids and literal records across calls, never more than its caps: a
    cache at its cap is emptied before it takes the next entry, and answers stay Oxigraph's."""
    indexed, plain = stores
    with connect(f"oxigraph://{indexed}") as fast, connect(f"oxigraph://{plain}") as slow:
        assert isinstance(fast, OxigraphGraph)
        index = fast.traversal_index
        assert index is not None
        index.name_cache.cap, index.literal_cache.cap = 5, 2
        rng = random.Random(9)
        largest = [0, 0]
        for _ in range(40):
            node = _ids(rng, 1)[0]
            assert fast.neighbors(node, direction="both") == slow.neighbors(node, direction="both")
            assert list(fast.subgraph(node, hops=2, direction="out")) == list(
                slow.subgraph(node, hops=2, direction="out")
            )
            largest = [max(largest[0], len(index.name_cache)), max(largest[1], len(index.literal_cache))]
        assert largest == [5, 2]  # filled to the caps, never past them
        first = index.name_cache[0]
        assert index.name_cache[0] is first  # a kept id is the same object on the next call
        fast.close()
        assert len(index.name_cache) == 0 and len(index.literal_cache) == 0


@pytest.mark.parametrize("direction", ["out", "in"])
def test_subgraph_cut_at_every_budget_names_only_what_it_keeps(stores: tuple[Path, Path], direction: Direction) -> None:
    """``subgraph(max_edges=k)`` walking one way is the first ``k`` edges of Oxigraph's answer at every
    ``k`` (inside a node's entity edges, inside its literal edges, between nodes), and a hub cut
    after a few edges names only those: its other ends are cut as integers, before any id is decoded."""
    indexed, plain = stores
    hub = "m.0000"  # _random_graph sends ~15% of all edge ends to the three hubs
    with connect(f"oxigraph://{indexed}") as fast, connect(f"oxigraph://{plain}") as slow:
        assert isinstance(fast, OxigraphGraph)
        index = fast.traversal_index
        assert index is not None
        whole = slow.subgraph(hub, hops=2, direction=direction)
        assert len(whole) > 100 and any(not isinstance(edge.tail, str) for edge in slow.subgraph(hub, hops=2))
        for budget in range(len(whole) + 2):
            expected = slow.subgraph(hub, hops=2, direction=direction, max_edges=budget)
            index.name_cache.clear()
            answer = fast.subgraph(hub, hops=2, direction=direction, max_edges=budget)
            assert list(answer) == list(expected) and answer.truncated == expected.truncated
            assert answer.truncated == (budget < len(whole))
            if budget <= 2:
                assert len(index.name_cache) <= budget + 1  # the hub and the ends kept, nothing else


def test_decoded_caches_stay_under_their_byte_budgets(tmp_path: Path) -> None:
    """The caches count bytes as well as entries: long literals fill the literal cache's budget, a
    literal larger than the whole budget is answered but not kept, and the estimate never passes it."""
    text = "long literal " * 400  # ~5 KB each
    lines = [f'<{FB}m.{n:04x}> <{FB}film.film.tagline> "{text}{n}" .' for n in range(40)]
    lines += [f"<{FB}m.{n:04x}> <{FB}film.film.starring> <{FB}m.{n + 1:04x}> ." for n in range(40)]
    data = tmp_path / "long.nt"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    store = tmp_path / "store"
    load_files([str(data)], str(store), profile="freebase", progress=False)
    with connect(f"oxigraph://{store}") as fast, connect(f"oxigraph://{store}?index=false") as slow:
        assert isinstance(fast, OxigraphGraph)
        index = fast.traversal_index
        assert index is not None
        cache = index.literal_cache
        cache.budget = 3 * len(text.encode()) + 3 * 200  # room for three literals, not four
        peak = 0
        for n in range(40):
            node = f"m.{n:04x}"
            assert fast.neighbors(node) == slow.neighbors(node)
            peak = max(peak, cache.bytes)
            assert cache.bytes <= cache.budget and len(cache) <= 3
        assert peak > 2 * len(text)
        cache.clear()
        cache.budget = 100  # smaller than any one literal: answered, never kept
        assert fast.neighbors("m.0001") == slow.neighbors("m.0001")
        assert len(cache) == 0 and cache.bytes == 0
