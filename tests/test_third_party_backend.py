"""A third-party backend proves itself with the shipped kit, as another project's CI would.

``tests/thirdparty`` holds a distribution that is not part of kg-adapters (the ``tinykg`` package and its
``*.dist-info`` with a ``kg_adapters.backends`` entry point). With that directory on ``sys.path`` --
what ``pip install tinykg`` would do -- ``connect("tiny:///...")`` finds the backend through the entry
point alone, and :class:`kg_adapters.testing.suite.KGConformance` holds it to our exact answers.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph, SparqlQueryable
from kg_adapters.registry import BACKENDS
from kg_adapters.testing.graph import write_graph
from kg_adapters.testing.suite import KGConformance, graph_fixture

THIRD_PARTY = Path(__file__).resolve().parent / "thirdparty"


@pytest.fixture(scope="module", autouse=True)
def tinykg_installed() -> Iterator[None]:
    """The ``tinykg`` distribution on ``sys.path`` for this module only (as an installed package is)."""
    sys.path.insert(0, str(THIRD_PARTY))
    try:
        yield
    finally:
        sys.path.remove(str(THIRD_PARTY))
        BACKENDS.pop("tiny", None)


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_graph(tmp_path_factory.mktemp("tiny-graph")).resolve()


class TestThirdPartyBackend(KGConformance):
    answers_sparql = False  # the tiny backend has no raw query: declared, so those tests skip

    make_kg = graph_fixture(lambda path: connect(f"tiny://{path}"), "graph_file")


def test_found_through_the_entry_point_only(graph_file: Path) -> None:
    BACKENDS.pop("tiny", None)
    assert "tiny" not in BACKENDS
    with connect(f"tiny://{graph_file}") as kg:
        assert type(kg).__module__ == "tinykg"
        assert not isinstance(kg, SparqlQueryable)
    assert BACKENDS["tiny"].target == "tinykg:TinyGraph"


def test_unknown_option_is_type_error(graph_file: Path) -> None:
    with pytest.raises(TypeError):
        connect(f"tiny://{graph_file}?colour=blue")


def cached_tiny(graph_file: Path) -> KnowledgeGraph:
    from kg_adapters.wrappers import CachedKG, ResultCache

    inner = connect(f"tiny://{graph_file}")
    return CachedKG(inner, cache=ResultCache(), namespace=f"tiny://{graph_file}", close_cache=True)


class TestCachedThirdPartyBackend(KGConformance):
    """The cache over a graph without raw ``query`` does not claim it either."""

    answers_sparql = False

    make_kg = graph_fixture(cached_tiny, "graph_file")
