"""The wrappers run the generic conformance suite like any backend, and keep exactly the optional
abilities of the graph they wrap (one class each, on ``DelegatingGraph``)."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from pathlib import Path

import pytest

from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph, ProfileDetecting, RelationFilterable, SparqlQueryable, WritableGraph
from kg_adapters.records import Edge, Literal, Node
from kg_adapters.testing.graph import A, write_freebase_graph, write_graph
from kg_adapters.testing.suite import A_OUT, KGConformance, graph_fixture
from kg_adapters.wrappers import CachedKG, CountingKG, ResultCache
from kg_adapters.wrappers import base as wrapper_base
from kg_adapters.wrappers.base import DelegatingGraph

ABILITIES = [protocol for protocol, _attributes in wrapper_base.ABILITIES]
"""Every optional ability a wrapper forwards when, and only when, the inner graph has it."""


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_graph(tmp_path_factory.mktemp("wrapped-graph"))


def wikidata_api() -> KnowledgeGraph:
    """A ``wikidata+api:`` graph (no raw query, no profile detection); never asked anything here."""
    return connect("wikidata+api:", base_url="http://127.0.0.1:9/w/api.php", user_agent="kga-tests/1 (t@example.org)")


def cached(inner: KnowledgeGraph) -> CachedKG:
    return CachedKG(inner, cache=ResultCache(), namespace="memory:conformance", close_cache=True)


def loaded(wrapper: KnowledgeGraph, graph_file: Path) -> KnowledgeGraph:
    assert isinstance(wrapper, WritableGraph)  # forwarded: the in-memory store takes writes
    wrapper.load(str(graph_file))
    return wrapper


class TestCachedKG(KGConformance):
    make_kg = graph_fixture(lambda path: loaded(cached(connect("oxigraph://")), path), "graph_file")

    def test_answers_come_from_the_cache_the_second_time(self, make_kg: Callable[[], KnowledgeGraph]) -> None:
        with make_kg() as kg:
            assert kg.neighbors(A) == {A: A_OUT}
            again = kg.neighbors(A)
            assert again == {A: A_OUT} and again.from_cache is True  # type: ignore[attr-defined]


class TestCountingKG(KGConformance):
    make_kg = graph_fixture(lambda path: loaded(CountingKG(connect("oxigraph://")), path), "graph_file")


class TestCountingOverCachedKG(KGConformance):
    make_kg = graph_fixture(lambda path: loaded(CountingKG(cached(connect("oxigraph://"))), path), "graph_file")


@pytest.mark.parametrize("url_kind", ["memory", "disk", "rdflib", "wikidata+api"])
def test_wrappers_claim_exactly_the_abilities_of_the_inner_graph(
    url_kind: str, graph_file: Path, tmp_path: Path
) -> None:
    if url_kind == "memory":
        inner = connect("oxigraph://")
    elif url_kind == "disk":
        import loaders

        loaders.load_files([str(graph_file)], str(tmp_path / "store"), progress=False)
        inner = connect(f"oxigraph://{tmp_path / 'store'}")
    elif url_kind == "rdflib":
        inner = connect(f"rdflib://{graph_file.resolve()}")
    else:
        inner = wikidata_api()
    expected = [isinstance(inner, ability) for ability in ABILITIES]
    held = {ability.__name__ for ability in wrapper_base.abilities_of(inner)}
    if url_kind == "wikidata+api":
        assert held == {"RelationFilterable"}
    if url_kind in ("memory", "disk"):
        assert {"NativeWalks", "EmbeddedSparql"} <= held, "the embedded store walks natively and runs SPARQL itself"
    wrappers = [cached(inner), CountingKG(inner), CountingKG(cached(inner)), cached(CountingKG(inner))]
    for wrapper in wrappers:
        assert isinstance(wrapper, KnowledgeGraph)
        assert [isinstance(wrapper, ability) for ability in ABILITIES] == expected, wrapper
        assert type(wrapper) in (CachedKG, CountingKG)  # the wrapper's own class, whatever it wraps
    inner.close()


def test_a_wrapper_cannot_claim_an_ability_on_its_class(graph_file: Path) -> None:
    with pytest.raises(TypeError, match="_query"):

        class Claims(DelegatingGraph):  # query on the class would claim SPARQL for every inner graph
            def query(self, sparql: str) -> list[dict[str, object]]:
                return []

    class Overrides(DelegatingGraph):
        """Changes the ability through its private forwarder: claimed only where the inner graph has it."""

        def _query(self, sparql: str) -> list[dict[str, Node | bool]]:
            return [{"answered": "by the wrapper"}]

    assert not isinstance(Overrides(wikidata_api()), SparqlQueryable)
    with Overrides(connect(f"rdflib://{graph_file.resolve()}")) as wrapper:
        assert isinstance(wrapper, SparqlQueryable)
        assert wrapper.query("ASK { ?s ?p ?o }") == [{"answered": "by the wrapper"}]


def test_cache_follows_a_profile_the_backend_switches_later(tmp_path: Path) -> None:
    """``?profile=auto`` and relation filters replace the backend's profile after the wrapper exists;
    the cache reads it live, so keys (and answers) follow instead of answering for the old profile."""
    path = write_freebase_graph(tmp_path)
    with cached(connect(f"rdflib://{path}?profile=freebase")) as kg:
        born = "people.person.place_of_birth"
        name = Edge(head="m.01", relation="type.object.name", tail=Literal(value="Ada Lovelace", lang="en"))
        filtered = kg.neighbors("m.01")  # the default relation filter hides names
        assert name not in filtered["m.01"]
        assert Edge(head="m.01", relation=born, tail="m.02") in filtered["m.01"]
        assert isinstance(kg, RelationFilterable)
        kg.use_relation_filter("none")  # forwarded: the backend's profile is replaced
        assert kg.profile.relation_filter.empty
        unfiltered = kg.neighbors("m.01")
        assert unfiltered.from_cache is False  # type: ignore[attr-defined]
        assert name in unfiltered["m.01"]
    with cached(connect(f"rdflib://{path}")) as kg:
        assert kg.profile.name == "generic"
        full = "http://rdf.freebase.com/ns/m.01"
        assert kg.neighbors(full)[full]
        assert isinstance(kg, ProfileDetecting)
        assert kg.detect_profile().name == "freebase"  # forwarded
        assert kg.profile.name == "freebase"
        assert Edge(head="m.01", relation=born, tail="m.02") in kg.neighbors("m.01")["m.01"]


def test_wrappers_pickle_when_the_inner_graph_does(graph_file: Path, tmp_path: Path) -> None:
    """An in-memory rdflib graph pickles; so do wrappers around it, as their own classes and with exactly
    its abilities. A memory cache's entries travel with the copy; a file cache's copy opens the same file."""
    inner = connect(f"rdflib://{graph_file.resolve()}")
    assert isinstance(inner, SparqlQueryable)
    ask = "ASK { ?s ?p ?o }"
    file_cache = ResultCache(tmp_path / "cache.sqlite")
    wrappers: list[DelegatingGraph] = [
        CountingKG(inner),
        cached(inner),
        CachedKG(CountingKG(inner), cache=file_cache, namespace="memory:pickled"),
        CountingKG(cached(inner)),
    ]
    for wrapper in wrappers:
        expected = wrapper.neighbors(A)
        assert isinstance(wrapper, SparqlQueryable)
        assert wrapper.query(ask) == [{"boolean": True}]
        copy = pickle.loads(pickle.dumps(wrapper))
        assert type(copy) is type(wrapper) and type(copy.inner) is type(wrapper.inner)
        assert [isinstance(copy, ability) for ability in ABILITIES] == [isinstance(inner, a) for a in ABILITIES]
        assert copy.neighbors(A) == expected == {A: A_OUT}
        assert copy.query(ask) == [{"boolean": True}]
        if isinstance(copy, CachedKG):
            assert copy.neighbors(A).from_cache is True
    counted = pickle.loads(pickle.dumps(wrappers[0]))
    assert isinstance(counted, CountingKG)
    calls = list(counted.calls)
    counted.labels(A)
    assert counted.calls == [*calls, ("labels", [A])]  # it counts on, with a lock of its own
    file_cache.close()


def test_pickling_a_wrapper_of_an_open_store_is_a_clear_type_error() -> None:
    with connect("oxigraph://") as store:
        for wrapper in (CountingKG(store), cached(store), CountingKG(cached(store))):
            with pytest.raises(TypeError, match=r"OxigraphGraph holds an open store or connection.*connect"):
                pickle.dumps(wrapper)
    with pytest.raises(TypeError, match="WikidataApiGraph holds an open store or connection"):
        pickle.dumps(CountingKG(wikidata_api()))
