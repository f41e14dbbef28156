"""The wrappers run the generic conformance suite like any backend, and keep exactly the optional
abilities of the graph they wrap (one class each, on ``DelegatingGraph``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kg_adapters import connect
from kg_adapters.base import (
    KnowledgeGraph,
    ProfileDetecting,
    RelationFilterable,
    SparqlQueryable,
    WritableGraph,
)
from kg_adapters.records import Edge, Literal
from kg_adapters.testing.graph import A, write_freebase_graph, write_graph
from kg_adapters.testing.suite import A_OUT, KGConformance
from kg_adapters.wrappers import CachedKG, CountingKG, ResultCache
from kg_adapters.wrappers.base import DelegatingGraph, ForwardsQuery

ABILITIES = (SparqlQueryable, ProfileDetecting, RelationFilterable, WritableGraph)


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
    @pytest.fixture(scope="class")
    @classmethod
    def make_kg(cls, graph_file: Path) -> Callable[[], KnowledgeGraph]:
        return lambda: loaded(cached(connect("oxigraph://")), graph_file)

    def test_answers_come_from_the_cache_the_second_time(self, make_kg: Callable[[], KnowledgeGraph]) -> None:
        with make_kg() as kg:
            assert kg.neighbors(A) == {A: A_OUT}
            again = kg.neighbors(A)
            assert again == {A: A_OUT} and again.from_cache is True  # type: ignore[attr-defined]


class TestCountingKG(KGConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def make_kg(cls, graph_file: Path) -> Callable[[], KnowledgeGraph]:
        return lambda: loaded(CountingKG(connect("oxigraph://")), graph_file)


class TestCountingOverCachedKG(KGConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def make_kg(cls, graph_file: Path) -> Callable[[], KnowledgeGraph]:
        return lambda: loaded(CountingKG(cached(connect("oxigraph://"))), graph_file)


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
    if url_kind == "wikidata+api":
        assert expected == [False, False, True, False]
    wrappers = [cached(inner), CountingKG(inner), CountingKG(cached(inner)), cached(CountingKG(inner))]
    for wrapper in wrappers:
        assert isinstance(wrapper, KnowledgeGraph)
        assert [isinstance(wrapper, ability) for ability in ABILITIES] == expected, wrapper
        assert isinstance(wrapper, DelegatingGraph)
        assert type(wrapper).__name__ in ("CachedKG", "CountingKG")
    inner.close()


def test_a_wrapper_cannot_claim_an_ability_on_its_class() -> None:
    with pytest.raises(TypeError, match="capability_mixins"):

        class Claims(DelegatingGraph):  # query on the class would claim SPARQL for every inner graph
            def query(self, sparql: str) -> list[dict[str, object]]:
                return []

    class Overrides(DelegatingGraph):
        capability_mixins = {SparqlQueryable: ForwardsQuery}  # noqa: RUF012

    assert not isinstance(Overrides(wikidata_api()), SparqlQueryable)


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
