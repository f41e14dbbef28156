"""Shared test settings: a Hypothesis profile that keeps property tests fast and deterministic
enough for CI, and the location of the shared benchmark data (``../shared/data``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

from kg_adapters.testing.virtuoso import VirtuosoServer, in_ci, virtuoso_fixture
from loaders import load_files

pytest_plugins = ("support.toy_kg",)
"""The toy graphs' fixtures (``toy_kg``, ``sample_kg``, ``wikidata_toy_kg``) for every test module."""

if TYPE_CHECKING:
    from kg_adapters.backends.oxigraph import OxigraphGraph

settings.register_profile(
    "kga",
    max_examples=150,
    deadline=None,
    database=None,  # no example database: every run draws the same examples
    derandomize=True,  # deterministic in CI; failures reproduce exactly
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile("kga")

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The directory of shared datasets beside the repository. Absent, the test skips on a developer's
    machine but fails under CI (``$CI`` set, as CI services set it), where a silent skip would hide it."""
    return require_shared_data(SHARED_DATA)


def require_shared_data(directory: Path) -> Path:
    if not directory.is_dir():
        message = f"shared data not found at {directory}"
        if in_ci():
            pytest.fail(f"{message} -- required under CI={os.environ.get('CI')}", pytrace=False)
        pytest.skip(message)
    return directory


@pytest.fixture(scope="session")
def sample_store_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """KG URL of the bundled FB15k-237 sample loaded into an on-disk store (freebase profile)."""
    from support.sample_store import build_sample_store

    return build_sample_store(tmp_path_factory.mktemp("sample") / "store")


@pytest.fixture(scope="module")
def disk_store(graph_file: Path, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """The module's ``graph_file`` loaded into an on-disk store, with the module's ``STORE_OPTIONS`` (a
    profile...) when it has them."""
    store = tmp_path_factory.mktemp("store") / "store"
    load_files([str(graph_file)], str(store), progress=False, **getattr(request.module, "STORE_OPTIONS", {}))
    return store.resolve()


@pytest.fixture(scope="module")
def virtuoso(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest, graph_file: Path
) -> VirtuosoServer:
    """A throwaway Virtuoso on loopback holding the module's ``graph_file``."""
    return virtuoso_fixture(tmp_path_factory, [graph_file], request=request)


@pytest.fixture(scope="module")
def capped_virtuoso(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest, graph_file: Path
) -> VirtuosoServer:
    """A second Virtuoso holding the module's ``graph_file`` with small row caps, so that answers come
    in pages: the module's ``VIRTUOSO_CAPS`` (``VirtuosoServer`` settings) when it has them, else
    pages of 3 rows (ResultSetMaxRows) and at most 12 rows sorted per query (MaxSortedTopRows)."""
    caps = getattr(request.module, "VIRTUOSO_CAPS", {"result_set_max_rows": 3, "max_sorted_top_rows": 12})
    return virtuoso_fixture(tmp_path_factory, [graph_file], request=request, **caps)


@pytest.fixture(scope="module")
def sample_store(sample_store_url: str) -> Iterator[OxigraphGraph]:
    """The sample store opened directly: the oracle for a server answering from it."""
    from kg_adapters import connect
    from kg_adapters.backends.oxigraph import OxigraphGraph

    with connect(sample_store_url) as kg:
        assert isinstance(kg, OxigraphGraph)
        yield kg


@pytest.fixture(scope="module")
def sample_endpoint(sample_store_url: str) -> Iterator[str]:
    """A real ``kga serve`` process on the sample store (one per test module); its ``/sparql`` URL."""
    from support.servers import free_port, running

    port = free_port()
    with running(["serve", "--kg", sample_store_url, "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/sparql"
