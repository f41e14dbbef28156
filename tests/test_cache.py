"""The per-entity result cache (kg_adapters.wrappers.cache) over a real on-disk Oxigraph store.

The wrapped KG is a real backend. ``CountingKG`` is a test instrument around it -- it implements
the protocol by delegation and records which ids each call asked for -- so the tests can see
that a warm cache sends only the misses (or nothing) to the backend. The thing under test, the
cache, is never replaced by a stand-in.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import loaders
from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph, NativeWalks, RelationFilterable, SparqlQueryable
from kg_adapters.errors import BackendError, CacheMiss, InvalidTermError
from kg_adapters.records import (
    Edge,
    EdgeList,
    Entity,
    Literal,
    PathResult,
    edge_from_json,
    edge_to_json,
    entity_from_json,
    entity_to_json,
    node_to_json,
    term_from_json,
)
from kg_adapters.testing.graph import (
    ALL_ENTITIES,
    NOTE,
    R1,
    R2,
    R3,
    A,
    B,
    C,
    D,
    F,
    S,
    X,
    write_freebase_graph,
    write_graph,
)
from kg_adapters.wrappers import (
    CachedDict,
    CachedKG,
    ResultCache,
    cache_namespace,
    cached,
)
from kg_adapters.wrappers.cache import (
    normalize_sparql,
)
from kg_adapters.wrappers.counting import CountingKG

FB = "http://rdf.freebase.com/ns/"


# -- fixtures ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_graph(tmp_path_factory.mktemp("cache-graph")).resolve()


@pytest.fixture(scope="module")
def store_dir(graph_file: Path) -> Path:
    store = graph_file.parent / "store"
    loaders.load_files([str(graph_file)], str(store), progress=False)
    return store.resolve()


@pytest.fixture(scope="module")
def plain(store_dir: Path) -> Iterator[KnowledgeGraph]:
    """The uncached reference answers."""
    with connect(f"oxigraph://{store_dir}") as kg:
        yield kg


@pytest.fixture
def counting(store_dir: Path) -> Iterator[CountingKG]:
    kg = CountingKG(connect(f"oxigraph://{store_dir}"))
    yield kg
    kg.close()


@pytest.fixture
def namespace(store_dir: Path) -> str:
    return cache_namespace(str(store_dir), "generic")


@pytest.fixture
def cache_file(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "results.sqlite"


@pytest.fixture
def kg(counting: CountingKG, cache_file: Path, namespace: str) -> Iterator[CachedKG]:
    wrapper = cached(counting, cache=ResultCache(cache_file), namespace=namespace, close_cache=True)
    assert isinstance(wrapper, CachedKG)
    yield wrapper
    wrapper.close()


# -- same answers, and from the cache the second time --------------------------------------------

NEIGHBOR_CASES: list[dict[str, Any]] = [
    {},
    {"direction": "in"},
    {"direction": "both"},
    {"relations": [R1, R2]},
    {"relations": [R2, R1], "direction": "both"},
    {"relations": []},
    {"limit_per_entity": 2, "direction": "both"},
    {"literals": False},
]


@pytest.mark.parametrize("options", NEIGHBOR_CASES)
def test_neighbors_equal_uncached_then_come_from_cache(
    kg: CachedKG, counting: CountingKG, plain: KnowledgeGraph, options: dict[str, Any]
) -> None:
    ids = list(ALL_ENTITIES)
    expected = plain.neighbors(ids, **options)
    first = kg.neighbors(ids, **options)
    assert first == expected
    assert list(first) == list(expected)
    assert isinstance(first, CachedDict) and first.from_cache is False
    assert counting.asked("neighbors") == [ids]
    second = kg.neighbors(ids, **options)
    assert second == expected
    assert second.from_cache is True  # type: ignore[attr-defined]
    assert counting.asked("neighbors") == [ids]  # nothing new reached the backend


def test_only_the_misses_are_fetched_in_one_batch(kg: CachedKG, counting: CountingKG) -> None:
    kg.neighbors([A, B])
    answer = kg.neighbors([C, A, D, B])
    assert counting.asked("neighbors") == [[A, B], [C, D]]
    assert answer.from_cache is False  # type: ignore[attr-defined]
    assert list(answer) == [C, A, D, B]  # the caller's order
    assert kg.neighbors([D, C, B, A]).from_cache is True  # type: ignore[attr-defined]
    assert len(counting.calls) == 2
    stats = kg.cache_stats()
    assert (stats.hits, stats.misses) == (2 + 4, 2 + 2)


def test_every_argument_is_part_of_the_key(kg: CachedKG, counting: CountingKG) -> None:
    kg.neighbors(A)
    for options in NEIGHBOR_CASES[1:]:
        assert kg.neighbors(A, **options).from_cache is False  # type: ignore[attr-defined]
    assert len(counting.asked("neighbors")) == len(NEIGHBOR_CASES)
    # relation order and duplicates do not matter
    assert kg.neighbors(A, relations=[R2, R1, R2]).from_cache is True  # type: ignore[attr-defined]


def test_relations_labels_search(kg: CachedKG, counting: CountingKG, plain: KnowledgeGraph) -> None:
    ids = list(ALL_ENTITIES)
    for direction in ("out", "in", "both"):
        assert kg.relations(ids, direction=direction) == plain.relations(ids, direction=direction)
        assert kg.relations(ids, direction=direction).from_cache is True  # type: ignore[attr-defined]
    for lang in ("en", "fr", "en-GB", "ja"):
        assert kg.labels(ids, lang=lang) == plain.labels(ids, lang=lang)
        again = kg.labels(ids, lang=lang)
        assert again == plain.labels(ids, lang=lang)
        assert again.from_cache is True  # type: ignore[attr-defined]
    for text, limit in (("alpha", 10), ("alpha", 1), ("big alpha", 5), ("nothing like it", 10)):
        assert kg.search(text, limit=limit) == plain.search(text, limit=limit)
        assert kg.search(text, limit=limit).from_cache is True  # type: ignore[attr-defined]
    assert len(counting.asked("relations")) == 3
    assert len(counting.asked("labels")) == 4
    assert len(counting.asked("search")) == 4


def test_ids_without_a_label_are_remembered_as_absent(kg: CachedKG, counting: CountingKG) -> None:
    assert kg.labels([D, A]) == {A: "Alpha"}
    again = kg.labels([D])
    assert again == {}
    assert again.from_cache is True  # type: ignore[attr-defined]
    assert counting.asked("labels") == [[D, A]]


WALKS: list[tuple[str, Callable[[KnowledgeGraph], PathResult | EdgeList]]] = [
    ("paths", lambda g: g.paths([A, B], [R1, R1])),
    ("paths", lambda g: g.paths(A, [R1, R3], directions=["out", "in"], simple=True)),
    ("paths", lambda g: g.paths(A, [R1, R1, R1], max_paths=1)),
    ("shortest_paths", lambda g: g.shortest_paths([A, S], [D, X], max_hops=3)),
    ("shortest_paths", lambda g: g.shortest_paths(A, C, direction="out")),
    ("subgraph", lambda g: g.subgraph(A, hops=2)),
    ("subgraph", lambda g: g.subgraph([B, X], hops=1, direction="in", relations=[R2, R3], max_edges=2)),
]


def check_walks_cached(kg: CachedKG, counting: CountingKG, plain: KnowledgeGraph) -> None:
    """Every walk answers as ``plain`` does, and the second time from the cache without asking the backend."""
    for _name, run in WALKS:
        expected, first = run(plain), run(kg)
        assert first == expected
        assert first.truncated == expected.truncated
        calls = len(counting.calls)
        second = run(kg)
        assert second == expected
        assert second.truncated == expected.truncated
        assert second.from_cache is True
        assert len(counting.calls) == calls


@pytest.fixture
def rdflib_counting(graph_file: Path) -> Iterator[CountingKG]:
    """A real backend that has no native walks (rdflib: walks are the shared algorithms)."""
    kg = CountingKG(connect(f"rdflib://{graph_file}"))
    yield kg
    kg.close()


def test_walks_over_a_graph_without_native_walks_go_through_the_cache_hop_by_hop(
    rdflib_counting: CountingKG, graph_file: Path
) -> None:
    assert not isinstance(rdflib_counting, NativeWalks)
    with (
        connect(f"rdflib://{graph_file}") as plain,
        CachedKG(rdflib_counting, cache=ResultCache(), namespace="memory:rdflib") as kg,
    ):
        check_walks_cached(kg, rdflib_counting, plain)
    # the wrapped KG was only ever asked for single hops
    assert {name for name, _ids in rdflib_counting.calls} == {"neighbors"}


def test_a_walk_over_the_cache_is_from_cache_only_when_every_hop_was(rdflib_counting: CountingKG) -> None:
    with CachedKG(rdflib_counting, cache=ResultCache(), namespace="memory:rdflib") as kg:
        kg.neighbors([A], relations=[R1])  # warms the first hop only
        result = kg.paths(A, [R1, R1])
        assert result.from_cache is False
        assert kg.paths(A, [R1, R1]).from_cache is True


def test_native_walks_are_cached_whole(kg: CachedKG, counting: CountingKG, plain: KnowledgeGraph) -> None:
    """Over a graph that walks natively (the embedded store), a walk reaches it once, whole: never
    as hops over the cache, so its own walks (the traversal index) answer every miss."""
    assert isinstance(counting, NativeWalks) and isinstance(kg, NativeWalks)
    check_walks_cached(kg, counting, plain)
    assert [name for name, _ids in counting.calls] == [name for name, _run in WALKS]


def test_a_native_walk_is_keyed_by_every_argument(kg: CachedKG, counting: CountingKG, plain: KnowledgeGraph) -> None:
    variants: list[Callable[[KnowledgeGraph], PathResult | EdgeList]] = [
        lambda g: g.paths(A, [R1, R1]),
        lambda g: g.paths(A, [R1, R1], directions=["out", "both"]),
        lambda g: g.paths(A, [R1, R1], max_paths=1),
        lambda g: g.paths(A, [R1, R1], simple=True),
        lambda g: g.paths(A, [R1, R1], expand_cvt=True),
        lambda g: g.paths([A, B], [R1, R1]),
        lambda g: g.paths(A, [R1, R3]),
        lambda g: g.shortest_paths(A, D),
        lambda g: g.shortest_paths(A, D, max_hops=1),
        lambda g: g.shortest_paths(A, D, direction="out"),
        lambda g: g.shortest_paths(A, D, max_paths=1),
        lambda g: g.shortest_paths(D, A),
        lambda g: g.subgraph(A),
        lambda g: g.subgraph(A, hops=1),
        lambda g: g.subgraph(A, direction="in"),
        lambda g: g.subgraph(A, relations=[R1]),
        lambda g: g.subgraph(A, max_edges=1),
        lambda g: g.subgraph([A, B]),
    ]
    for run in variants:
        first = run(kg)
        assert first == run(plain) and first.from_cache is False  # no other call's entry answered it
        assert run(kg).from_cache is True
    assert len(counting.calls) == len(variants)
    # spelled differently, the same question is asked again rather than answered for another one
    assert kg.paths(A, (R1, R1), directions=None).from_cache is True
    with pytest.raises(TypeError, match="sideways"):
        kg.subgraph(A, sideways=True)  # type: ignore[call-arg]
    with pytest.raises(InvalidTermError):
        kg.paths(A, [R1], directions=["up"])  # type: ignore[list-item]
    with pytest.raises(InvalidTermError):
        kg.shortest_paths(A, D, max_hops=-1)
    with pytest.raises(InvalidTermError):
        kg.subgraph(A, relations=R1)
    assert len(counting.calls) == len(variants)


def test_a_native_walk_is_keyed_by_the_profile_and_its_relation_filter(tmp_path: Path) -> None:
    graph = write_freebase_graph(tmp_path)
    inner = connect("oxigraph://", profile="freebase")
    inner.load(str(graph))  # type: ignore[attr-defined]
    counting = CountingKG(inner)
    born = "people.person.place_of_birth"
    with CachedKG(counting, cache=ResultCache(), namespace="memory:freebase-mini") as kg:
        assert isinstance(kg, RelationFilterable)
        filtered = kg.subgraph("m.01", hops=1)
        assert filtered == inner.subgraph("m.01", hops=1)
        kg.use_relation_filter("none")  # names become visible: the filtered answer must not be reused
        unfiltered = kg.subgraph("m.01", hops=1)
        assert unfiltered.from_cache is False and unfiltered == inner.subgraph("m.01", hops=1)
        assert len(unfiltered) > len(filtered)
        assert kg.paths("m.01", [born]).from_cache is False
        assert kg.paths("m.01", [born]).from_cache is True
        assert [name for name, _ in counting.calls] == ["subgraph", "subgraph", "paths"]


def test_native_walks_in_replay_answer_what_was_recorded_and_refuse_the_rest(
    kg: CachedKG, store_dir: Path, cache_file: Path, namespace: str, plain: KnowledgeGraph
) -> None:
    recorded: list[Callable[[KnowledgeGraph], PathResult | EdgeList]] = [
        lambda g: g.paths(A, [R1, R1]),
        lambda g: g.shortest_paths(A, D, max_hops=3),
        lambda g: g.subgraph([B, X], hops=1, direction="in"),
    ]
    for run in recorded:
        run(kg)
    kg.close()
    counting = CountingKG(connect(f"oxigraph://{store_dir}"))
    with CachedKG(counting, cache=ResultCache(cache_file, mode="replay"), namespace=namespace) as replay:
        for run in recorded:
            answer = run(replay)
            assert answer == run(plain) and answer.from_cache is True
        with pytest.raises(CacheMiss, match="paths"):
            replay.paths(A, [R1, R1], max_paths=1)  # not recorded with this budget
        with pytest.raises(CacheMiss, match="shortest_paths"):
            replay.shortest_paths(A, D, max_hops=2)
        with pytest.raises(CacheMiss, match="subgraph"):
            replay.subgraph(B, hops=1, direction="in")
        assert counting.calls == []


def test_query_is_cached_by_normalised_text(kg: CachedKG, counting: CountingKG, plain: KnowledgeGraph) -> None:
    assert isinstance(plain, SparqlQueryable) and isinstance(kg, SparqlQueryable)
    query = f"SELECT ?o WHERE {{ <{A}> ?p ?o }} ORDER BY ?o"
    expected = plain.query(query)
    assert kg.query(query) == expected
    respaced = f"""
        # the same query, laid out differently
        SELECT   ?o
        WHERE {{  <{A}>   ?p ?o }}
        ORDER BY ?o
    """
    again = kg.query(respaced)
    assert again == expected
    assert again.from_cache is True  # type: ignore[attr-defined]
    assert kg.query(f"ASK {{ <{A}> <{R1}> <{B}> }}") == [{"boolean": True}]
    assert kg.query(f"ASK {{ <{A}> <{R1}> <{B}> }}") == [{"boolean": True}]
    assert len(counting.asked("query")) == 2


def test_spellings_of_one_id_share_entries(tmp_path: Path) -> None:
    graph = write_freebase_graph(tmp_path)
    inner = connect("oxigraph://", profile="freebase")
    inner.load(str(graph))  # type: ignore[attr-defined]
    counting = CountingKG(inner)
    with CachedKG(counting, cache=ResultCache(), namespace="memory:freebase-mini") as kg:
        compact = kg.neighbors(["m.01"])
        full = kg.neighbors([FB + "m.01"])
        assert list(full) == [FB + "m.01"]
        assert full[FB + "m.01"] == compact["m.01"] == inner.neighbors(FB + "m.01")[FB + "m.01"]
        assert full.from_cache is True  # type: ignore[attr-defined]
        assert counting.asked("neighbors") == [["m.01"]]


# -- persistence, replay, bounds ---------------------------------------------------------------------


def test_answers_survive_reopening_the_file(
    kg: CachedKG, store_dir: Path, cache_file: Path, namespace: str, plain: KnowledgeGraph
) -> None:
    ids = list(ALL_ENTITIES)
    kg.neighbors(ids, direction="both")
    kg.labels(ids)
    kg.shortest_paths(A, D)
    kg.close()

    counting = CountingKG(connect(f"oxigraph://{store_dir}"))
    with CachedKG(counting, cache=ResultCache(cache_file), namespace=namespace, close_cache=True) as reopened:
        assert reopened.neighbors(ids, direction="both") == plain.neighbors(ids, direction="both")
        assert reopened.labels(ids) == plain.labels(ids)
        assert reopened.shortest_paths(A, D) == plain.shortest_paths(A, D)
        assert counting.calls == []


def test_replay_in_a_fresh_process_touches_no_backend(
    kg: CachedKG, cache_file: Path, namespace: str, plain: KnowledgeGraph
) -> None:
    """A new interpreter opens the cache read-only over an EMPTY store and still answers."""
    ids = [A, B, C, D]
    kg.neighbors(ids)
    kg.paths(A, [R1, R1])
    kg.close()
    script = f"""
import json, sys
from kg_adapters import connect
from kg_adapters.errors import CacheMiss
from kg_adapters.wrappers import ResultCache, CachedKG
empty = connect("oxigraph://")
with CachedKG(empty, cache=ResultCache({str(cache_file)!r}, mode="replay"), namespace={namespace!r}) as kg:
    edges = kg.neighbors({ids!r})
    paths = kg.paths({A!r}, [{R1!r}, {R1!r}])
    try:
        kg.neighbors({F!r})
        missed = False
    except CacheMiss:
        missed = True
print(json.dumps({{
    "edges": {{k: [[e.head, e.relation, str(e.tail)] for e in v] for k, v in edges.items()}},
    "paths": [[list(e.as_tuple()) for e in p.edges] for p in paths],
    "from_cache": [edges.from_cache, paths.from_cache],
    "missed": missed,
}}))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    import json

    answer = json.loads(done.stdout)
    expected = plain.neighbors(ids)
    assert answer["edges"] == {k: [[e.head, e.relation, str(e.tail)] for e in v] for k, v in expected.items()}
    assert answer["paths"] == [[list(e.as_tuple()) for e in p.edges] for p in plain.paths(A, [R1, R1])]
    assert answer["from_cache"] == [True, True]
    assert answer["missed"] is True


def test_replay_mode_raises_cache_miss_and_never_calls_the_backend(
    kg: CachedKG, store_dir: Path, cache_file: Path, namespace: str
) -> None:
    kg.neighbors([A, B])
    kg.search("alpha")
    kg.close()
    size_before = os.path.getsize(cache_file)
    counting = CountingKG(connect(f"oxigraph://{store_dir}"))
    replay = cached(counting, cache=ResultCache(cache_file, mode="replay"), namespace=namespace, close_cache=True)
    assert isinstance(replay, CachedKG)
    with replay:
        assert isinstance(replay, SparqlQueryable)
        assert replay.neighbors([B, A]).from_cache is True  # type: ignore[attr-defined]
        assert replay.search("alpha")
        with pytest.raises(CacheMiss, match="neighbors"):
            replay.neighbors([A, C])  # one miss is enough: nothing is fetched
        with pytest.raises(CacheMiss):
            replay.labels(A)
        with pytest.raises(CacheMiss):
            replay.search("bravo")
        with pytest.raises(CacheMiss):
            replay.query("ASK { ?s ?p ?o }")
        with pytest.raises(CacheMiss):
            replay.subgraph(A)
        with pytest.raises(BackendError):
            replay.cache.clear()
        assert counting.calls == []
    assert os.path.getsize(cache_file) == size_before


def test_replay_of_a_missing_file_is_a_cache_miss(tmp_path: Path) -> None:
    with pytest.raises(CacheMiss):
        ResultCache(tmp_path / "nothing.sqlite", mode="replay")
    assert not (tmp_path / "nothing.sqlite").exists()


def test_off_mode_stores_nothing(counting: CountingKG, namespace: str, cache_file: Path) -> None:
    with CachedKG(counting, cache=ResultCache(cache_file, mode="off"), namespace=namespace) as kg:
        kg.neighbors(A)
        assert kg.neighbors(A).from_cache is False  # type: ignore[attr-defined]
        assert len(counting.asked("neighbors")) == 2
    assert not cache_file.exists()


def test_disk_size_is_bounded_least_recently_used_first(tmp_path: Path) -> None:
    path = tmp_path / "bounded.sqlite"
    value = [f"edge number {i} of a long list" for i in range(40)]
    with ResultCache(path, memory_entries=0) as probe:
        probe.put(("probe",), value)
        entry = probe.disk_bytes()
    limit = entry * 10 + entry // 2  # room for ten entries
    with ResultCache(path, memory_entries=0, max_disk_bytes=limit) as cache:
        cache.clear()
        for i in range(10):
            cache.put(("k", i), [*value, i])
        assert cache.get(("k", 0)) is not None  # k0 is now the most recently used
        for i in range(10, 19):  # nine more: k1..k9 go, the recently read k0 stays
            cache.put(("k", i), [*value, i])
            assert cache.disk_bytes() <= limit
        assert cache.evicted == 9
        assert cache.get(("k", 0)) == [*value, 0]
        assert [cache.get(("k", i)) for i in range(1, 10)] == [None] * 9
        assert cache.get(("k", 18)) == [*value, 18]
        assert len(cache) == 10
        for i in range(19, 60):
            cache.put(("k", i), [*value, i])
        assert cache.disk_bytes() <= limit
        assert len(cache) == 10
        assert cache.get(("k", 0)) is None
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT SUM(size) FROM entries").fetchone()[0] <= limit
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_memory_layer_is_a_bounded_lru() -> None:
    cache = ResultCache(memory_entries=3)
    for i in range(3):
        cache.put(("k", i), i)
    assert cache.get(("k", 0)) == 0
    cache.put(("k", 3), 3)
    assert cache.get(("k", 1)) is None
    assert [cache.get(("k", i)) for i in (0, 2, 3)] == [0, 2, 3]


def test_clear_forgets_everything(kg: CachedKG, counting: CountingKG, cache_file: Path) -> None:
    kg.neighbors([A, B])
    kg.cache.clear()
    assert len(kg.cache) == 0
    assert kg.neighbors([A, B]).from_cache is False  # type: ignore[attr-defined]
    assert counting.asked("neighbors") == [[A, B], [A, B]]


def test_namespaces_and_profiles_never_share_entries(counting: CountingKG, store_dir: Path) -> None:
    shared = ResultCache()
    first = CachedKG(counting, cache=shared, namespace=cache_namespace(str(store_dir), "generic"))
    other_store = CachedKG(counting, cache=shared, namespace=cache_namespace("https://example.org/sparql"))
    first.neighbors(A)
    assert other_store.neighbors(A).from_cache is False  # type: ignore[attr-defined]
    assert len(counting.asked("neighbors")) == 2


def test_one_class_keeps_exactly_the_abilities_of_the_inner_graph(
    counting: CountingKG, store_dir: Path, namespace: str
) -> None:
    with_sparql = cached(counting, cache=ResultCache(), namespace=namespace)
    assert type(with_sparql) is CachedKG
    assert isinstance(with_sparql, KnowledgeGraph) and isinstance(with_sparql, SparqlQueryable)
    assert with_sparql.query(f"ASK {{ <{A}> <{R1}> <{B}> }}") == [{"boolean": True}]
    no_sparql = connect("wikidata+api:", base_url="http://127.0.0.1:9/w/api.php", user_agent="t/1 (t@example.org)")
    without = cached(no_sparql, cache=ResultCache(), namespace=namespace)
    assert type(without) is CachedKG
    assert isinstance(without, KnowledgeGraph) and not isinstance(without, SparqlQueryable)
    assert not hasattr(without, "query")
    without.close()


def test_bad_arguments_fail_like_the_backend_even_when_warm(kg: CachedKG, counting: CountingKG) -> None:
    kg.neighbors(A)
    with pytest.raises(InvalidTermError):
        kg.neighbors(A, direction="sideways")  # type: ignore[arg-type]
    with pytest.raises(InvalidTermError):
        kg.neighbors(A, limit_per_entity=-1)
    with pytest.raises(InvalidTermError):
        kg.neighbors(A, relations=R1)
    with pytest.raises(InvalidTermError):
        kg.neighbors("not an iri")
    with pytest.raises(InvalidTermError):
        kg.labels(A, lang="not a tag!")
    with pytest.raises(InvalidTermError):
        ResultCache(mode="sometimes")  # type: ignore[arg-type]
    with pytest.raises(InvalidTermError):
        CachedKG(counting, cache=ResultCache(), namespace="")
    assert len(counting.calls) == 1


def test_closed_wrapper_refuses(counting: CountingKG, namespace: str) -> None:
    kg = CachedKG(counting, cache=ResultCache(), namespace=namespace)
    kg.neighbors(A)
    kg.close()
    with pytest.raises(BackendError):
        kg.neighbors(A)


def test_threads_share_one_cache(kg: CachedKG, plain: KnowledgeGraph) -> None:
    ids = list(ALL_ENTITIES)
    expected = plain.neighbors(ids, direction="both")
    failures: list[str] = []

    def work(offset: int) -> None:
        for round_ in range(20):
            chosen = ids[(offset + round_) % len(ids) :] + ids[: (offset + round_) % len(ids)]
            answer = kg.neighbors(chosen, direction="both")
            if any(answer[node] != expected[node] for node in chosen):
                failures.append(f"thread {offset} round {round_}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert failures == []
    assert kg.neighbors(ids, direction="both").from_cache is True  # type: ignore[attr-defined]


# -- the encoding --------------------------------------------------------------------------------------

_text = st.text(max_size=30)
_iri = st.text(min_size=1, max_size=20).map(lambda s: "http://example.org/" + s)
_literal = st.builds(
    Literal,
    value=_text,
    datatype=st.none() | st.sampled_from(["http://www.w3.org/2001/XMLSchema#integer", "http://x/dt"]),
    lang=st.none() | st.sampled_from(["en", "en-gb", "zh-hant"]),
)
_edge = st.builds(Edge, head=_iri | st.just("_:b0"), relation=_iri, tail=_iri | _literal)


@pytest.fixture(scope="module")
def disk_only(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ResultCache]:
    """A cache without a memory layer, so every read decodes what was written to SQLite."""
    with ResultCache(tmp_path_factory.mktemp("codec") / "codec.sqlite", memory_entries=0) as cache:
        yield cache


@given(st.lists(_edge, max_size=8), st.lists(st.builds(Entity, id=_iri, label=st.none() | _text), max_size=3))
def test_records_round_trip_exactly_through_disk(
    disk_only: ResultCache, edges: list[Edge], entities: list[Entity]
) -> None:
    key = ("round trip", repr(edges), repr(entities))
    disk_only.put(
        key, {"edges": [edge_to_json(edge) for edge in edges], "entities": [entity_to_json(e) for e in entities]}
    )
    stored = disk_only.get(key)
    assert [edge_from_json(item) for item in stored["edges"]] == edges
    assert [entity_from_json(item) for item in stored["entities"]] == entities
    for edge in edges:
        assert term_from_json(node_to_json(edge.tail)) == edge.tail


def test_round_trip_through_the_sqlite_file(tmp_path: Path) -> None:
    edges = [
        Edge(head=A, relation=NOTE, tail=Literal(value='two\nlines "quoted" \U0001f680 \ud7ff')),
        Edge(head=A, relation=R1, tail=Literal(value="42", datatype="http://www.w3.org/2001/XMLSchema#integer")),
        Edge(head=A, relation=R1, tail=Literal(value="Zoë", lang="fr-ca")),
        Edge(head="_:b1", relation=R2, tail=B),
        Edge(head=B, relation=R3, tail=A),  # walked "in" from A: the KG's own direction is kept
    ]
    path = tmp_path / "codec.sqlite"
    with ResultCache(path) as cache:
        cache.put(("edges",), [edge_to_json(edge) for edge in edges])
        cache.put(("bools",), [{"boolean": node_to_json(True)}])
    with ResultCache(path, mode="replay", memory_entries=0) as cache:
        assert [edge_from_json(item) for item in cache.get(("edges",))] == edges
        assert term_from_json(cache.get(("bools",))[0]["boolean"]) is True


def test_normalize_sparql_keeps_literals_and_iris() -> None:
    assert normalize_sparql("SELECT  ?x\n\tWHERE { ?x ?p ?o }  ") == "SELECT ?x WHERE { ?x ?p ?o }"
    assert normalize_sparql('SELECT * { ?x ?p "a  b" }') != normalize_sparql('SELECT * { ?x ?p "a b" }')
    assert normalize_sparql("SELECT * { <http://e/#x> ?p ?o } # note") == "SELECT * { <http://e/#x> ?p ?o }"
    assert normalize_sparql("SELECT * { ?x ?p '''a\n  # not a comment''' }").endswith("# not a comment''' }")
    assert normalize_sparql("ASK { FILTER(1 < 2 && 3 > 2) }") == "ASK { FILTER(1 < 2 && 3 > 2) }"


@pytest.mark.parametrize("bad", [None, -1, 1.5, True])
def test_result_cache_budgets_are_checked_when_it_opens(bad: object) -> None:
    """``memory_entries=None`` used to open, then fail on the first put with a TypeError."""
    with pytest.raises(InvalidTermError, match="memory_entries must be an integer"):
        ResultCache(None, memory_entries=bad)  # type: ignore[arg-type]
