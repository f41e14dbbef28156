"""The hostile-input suite (``conformance/fuzz.py``) on every backend: the embedded store on disk,
rdflib, a real Virtuoso over HTTP, and the cache wrapper (SQLite file) in front of the store; and
nasty literals written through ``add()`` on the writable backends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph, WritableGraph
from kg_adapters.errors import InvalidTermError
from kg_adapters.records import Edge, Literal
from kg_adapters.terms import XSD_STRING
from kg_adapters.testing.fuzz import EX, InjectionFuzz, pieces, write_fuzz_graph
from kg_adapters.testing.virtuoso import VirtuosoServer, virtuoso_fixture
from kg_adapters.wrappers.cache import CachedKG


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fuzz_graph(tmp_path_factory.mktemp("fuzz-graph"))


def opened(url: str, **options: Any) -> Iterator[KnowledgeGraph]:
    kg = connect(url, **options)
    yield kg
    kg.close()


class TestOxigraphOnDisk(InjectionFuzz):
    @pytest.fixture(scope="class")
    @classmethod
    def fuzz_kg(cls, disk_store: Path) -> Iterator[KnowledgeGraph]:
        yield from opened(f"oxigraph://{disk_store}")


class TestRdflib(InjectionFuzz):
    fuzz_examples = 100

    @pytest.fixture(scope="class")
    @classmethod
    def fuzz_kg(cls, graph_file: Path) -> Iterator[KnowledgeGraph]:
        yield from opened(f"rdflib://{graph_file}")


class TestCachedStore(InjectionFuzz):
    """The cache wrapper, with its SQLite file, in front of the store: keys are built from the
    caller's text, so they must survive it too."""

    @pytest.fixture(scope="class")
    @classmethod
    def fuzz_kg(cls, disk_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeGraph]:
        cache = tmp_path_factory.mktemp("fuzz-cache") / "cache.sqlite"
        for kg in opened(f"oxigraph://{disk_store}", cache=str(cache)):
            assert isinstance(kg, CachedKG)
            yield kg


class TestVirtuoso(InjectionFuzz):
    """Each call is one or more HTTP round trips: fewer examples, the same strategies."""

    fuzz_examples = 100

    @pytest.fixture(scope="class")
    @classmethod
    def fuzz_kg(
        cls, tmp_path_factory: pytest.TempPathFactory, request: Any, graph_file: Path
    ) -> Iterator[KnowledgeGraph]:
        server: VirtuosoServer = virtuoso_fixture(tmp_path_factory, [graph_file], request=request)
        yield from opened("sparql+" + server.sparql_url, dialect="virtuoso", timeout=30, retries=0)


# ---------------------------------------------------------------------------- writing literals
_LANGS = st.sampled_from([None, "en", "en-GB", "zh-Hant-TW"]) | st.text(max_size=12)
_DATATYPES = st.sampled_from([None, "http://example.org/dt#x", "urn:x-type:1"]) | pieces
nasty_literals = st.builds(
    lambda value, lang, datatype: (value, lang, datatype),
    st.one_of(pieces, st.text(max_size=30)),
    st.none() | _LANGS,
    st.none() | _DATATYPES,
)


@pytest.mark.parametrize("url", ["oxigraph://", "rdflib://"])
def test_nasty_literals_are_stored_exactly_or_refused(url: str) -> None:
    """A literal written through ``add()`` comes back exactly, or ``add`` raises InvalidTermError
    and the graph stays empty: no text can turn into a different triple."""
    subject, note = EX + "s", EX + "note"

    @given(literal=nasty_literals)
    @example(literal=('" } ; DROP ALL ; INSERT DATA { <a:b> <a:b> <a:b> } #', None, None))
    @example(literal=("x\\u0022y", "en", None))
    @example(literal=("nul\x00 and \ud800", None, None))
    @example(literal=("v", "en } UNION {", None))
    @example(literal=("v", None, "http://x/> <y"))
    @example(literal=("v", "en", "http://example.org/dt#x"))
    def run(literal: tuple[str, str | None, str | None]) -> None:
        value, lang, datatype = literal
        with connect(url) as kg:
            assert isinstance(kg, WritableGraph)
            tail = Literal(value=value, lang=lang, datatype=datatype)
            try:
                kg.add([Edge(head=subject, relation=note, tail=tail)])
            except InvalidTermError:
                assert kg.neighbors(subject) == {subject: []}
                return
            (edge,) = kg.neighbors(subject)[subject]
            assert edge.relation == note and isinstance(edge.tail, Literal)
            assert edge.tail.value == value
            assert edge.tail.lang == (lang.lower() if lang else None)
            assert edge.tail.datatype == (None if datatype == XSD_STRING else datatype)

    run()
