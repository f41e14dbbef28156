"""Shared test settings: a Hypothesis profile that keeps property tests fast and deterministic
enough for CI, and the location of the shared benchmark data (``../shared/data``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

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
    """The directory of shared datasets beside the repository; skips when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def sample_store_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """KG URL of the bundled FB15k-237 sample loaded into an on-disk store (freebase profile)."""
    from support.sample_store import build_sample_store

    return build_sample_store(tmp_path_factory.mktemp("sample") / "store")
