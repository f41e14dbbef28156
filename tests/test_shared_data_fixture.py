"""The ``shared_data`` fixture: a missing data directory skips on a developer machine, fails under CI."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import require_shared_data


def test_missing_data_fails_under_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="required under CI"):
        require_shared_data(tmp_path / "absent")


@pytest.mark.parametrize("value", ["", "0", "false"])
def test_missing_data_skips_outside_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.skip.Exception):
        require_shared_data(tmp_path / "absent")


def test_present_data_is_returned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert require_shared_data(tmp_path) == tmp_path
