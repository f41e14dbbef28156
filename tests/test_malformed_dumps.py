"""Malformed dumps (``loaders/testing/malformed_dumps.py``): a strict load fails with a LoadError naming
file:line and leaves no store that looks complete (none at all, or the previous one untouched);
a lenient load keeps every good line and counts exactly the bad ones."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import kg_adapters
from kg_adapters.errors import LoadError, StoreNotFound
from loaders import load_files
from loaders.testing.malformed_dumps import CASES, Case, debris, line_limit, store_size

BASE = "<http://example.org/base> <http://example.org/p> <http://example.org/o> .\n"


def source_of(tmp_path: Path, case: Case) -> Path:
    source = tmp_path / case.file
    source.write_bytes(case.data)
    return source


def check_failure(
    info: pytest.ExceptionInfo[LoadError], source: Path, case: Case, line: int | None, match: str
) -> None:
    error = info.value
    assert error.file == str(source), str(error)
    if not case.line_exact:
        assert error.line is not None and 1 <= error.line <= case.total_lines, str(error)
        line = error.line
    assert error.line == line, str(error)
    assert str(error).startswith(f"{source}:{line}: " if line is not None else f"{source}: ")
    assert match in str(error)


@pytest.fixture(scope="module")
def base_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-triple store; each test appends to a copy of it."""
    directory = tmp_path_factory.mktemp("base")
    (directory / "base.nt").write_text(BASE)
    load_files([str(directory / "base.nt")], str(directory / "store"), progress=False)
    return directory / "store"


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_strict(tmp_path: Path, case: Case, base_store: Path) -> None:
    source = source_of(tmp_path, case)
    fresh, appended = tmp_path / "fresh", tmp_path / "appended"
    shutil.copytree(base_store, appended)
    before = (appended / "kga-store.json").read_bytes()
    with line_limit():
        if not case.fatal and not case.bad:
            report = load_files([str(source)], str(fresh), progress=False)
            assert (report.statements_read, report.store_triples, report.lines_skipped) == (case.good, case.good, 0)
            return
        line, match = (case.fatal_line, case.fatal_match) if case.fatal else (case.bad[0], "--lenient")
        for target in (fresh, appended):
            with pytest.raises(LoadError) as info:
                load_files([str(source)], str(target), progress=False)
            check_failure(info, source, case, line, match)
    assert not fresh.exists(), "a failed load left a store behind"
    with pytest.raises(StoreNotFound):
        kg_adapters.connect(f"oxigraph://{fresh}")
    assert (appended / "kga-store.json").read_bytes() == before, "a failed append changed the manifest"
    assert store_size(appended) == 1
    assert debris(tmp_path) == []


@pytest.mark.parametrize("case", [case for case in CASES if case.lenient], ids=lambda case: case.name)
def test_lenient(tmp_path: Path, case: Case) -> None:
    source = source_of(tmp_path, case)
    store = tmp_path / "store"
    with line_limit():
        if case.fatal:
            with pytest.raises(LoadError) as info:
                load_files([str(source)], str(store), lenient=True, progress=False)
            check_failure(info, source, case, case.fatal_line, case.fatal_match)
            assert not store.exists()
            return
        report = load_files([str(source)], str(store), lenient=True, progress=False)
    assert report.lines_skipped == len(case.bad)
    assert [skipped.line for skipped in report.skipped] == list(case.bad)[:100]
    assert report.statements_read == report.store_triples == case.good
    assert store_size(store) == case.good
    assert debris(tmp_path) == []
