"""The Freebase conformance mixin (CVT nodes, relation filter) on every backend: Oxigraph in
memory and on disk, rdflib, a real Virtuoso, and the result cache in front of the on-disk store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.virtuoso import VirtuosoServer, virtuoso_fixture

from kg_adapters import connect
from kg_adapters.backends.oxigraph import OxigraphGraph
from kg_adapters.base import KnowledgeGraph
from kg_adapters.wrappers import CachedKG

from .freebase_graph import write_freebase_cvt_graph
from .freebase_suite import FreebaseConformance

loaders = pytest.importorskip("loaders")


@pytest.fixture(scope="module")
def fb_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_freebase_cvt_graph(tmp_path_factory.mktemp("freebase-cvt"))


@pytest.fixture(scope="module")
def fb_store(fb_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("freebase-cvt-store") / "store"
    loaders.load_files([str(fb_file)], str(store), profile="freebase", progress=False)
    return store.resolve()


class TestOxigraphInMemory(FreebaseConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def make_fb_kg(cls, fb_file: Path) -> Callable[..., KnowledgeGraph]:
        def make(**options: Any) -> KnowledgeGraph:
            kg = connect("oxigraph://?profile=freebase", **options)
            assert isinstance(kg, OxigraphGraph)
            kg.load(str(fb_file))
            return kg

        return make


class TestOxigraphOnDisk(FreebaseConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def make_fb_kg(cls, fb_store: Path) -> Callable[..., KnowledgeGraph]:
        def make(**options: Any) -> KnowledgeGraph:
            return connect(f"oxigraph://{fb_store}?profile=freebase", **options)

        return make

    def test_url_option(self, fb_store: Path) -> None:
        with connect(f"oxigraph://{fb_store}?profile=freebase&relation_filter=none") as kg:
            assert "type.object.type" in kg.relations("m.pacino")["m.pacino"]
        with pytest.raises(TypeError):
            connect(f"oxigraph://{fb_store}?profile=freebase&relation_filter=none", relation_filter="default")


class TestRdflib(FreebaseConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def make_fb_kg(cls, fb_file: Path) -> Callable[..., KnowledgeGraph]:
        def make(**options: Any) -> KnowledgeGraph:
            return connect(f"rdflib://{fb_file.resolve()}?profile=freebase", **options)

        return make


class TestCachedOnDisk(FreebaseConformance):
    """The cache keeps ``Edge.cvt`` and keys answers by the relation filter too."""

    @pytest.fixture(scope="class")
    @classmethod
    def make_fb_kg(cls, fb_store: Path) -> Callable[..., KnowledgeGraph]:
        def make(**options: Any) -> KnowledgeGraph:
            kg = connect(f"oxigraph://{fb_store}?profile=freebase", cache="memory", **options)
            assert isinstance(kg, CachedKG)
            return kg

        return make

    def test_cached_cvt_answers_come_back_whole(self, make_fb_kg: Callable[..., KnowledgeGraph]) -> None:
        with make_fb_kg() as kg:
            assert isinstance(kg, CachedKG)
            first = kg.neighbors("m.portman", expand_cvt=True)
            again = kg.neighbors("m.portman", expand_cvt=True)
            assert again == first and getattr(again, "from_cache", False) is True
            assert all(edge.cvt for edge in again["m.portman"])


@pytest.fixture(scope="module")
def virtuoso(tmp_path_factory: pytest.TempPathFactory, request: Any, fb_file: Path) -> VirtuosoServer:
    return virtuoso_fixture(tmp_path_factory, [fb_file], request=request)


class TestVirtuoso(FreebaseConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def make_fb_kg(cls, virtuoso: VirtuosoServer) -> Callable[..., KnowledgeGraph]:
        def make(**options: Any) -> KnowledgeGraph:
            url = "sparql+" + virtuoso.sparql_url
            return connect(url, profile="freebase", dialect="virtuoso", timeout=30, retries=0, **options)

        return make
