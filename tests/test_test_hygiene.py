"""Guards on how the tests and benchmarks are wired (each found broken once, issue 13)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OURS = ("kg_adapters", "loaders", "reasoning", "benchmarks")


def python_files(*folders: str) -> list[Path]:
    return sorted(path for folder in folders for path in (REPO / folder).rglob("*.py"))


def test_our_own_packages_are_never_import_skipped() -> None:
    """``pytest.importorskip("loaders")`` turned a broken import into a silent skip."""
    pattern = re.compile(r"importorskip\(\s*[\"'](" + "|".join(OURS) + r")\b")
    files = [path for path in python_files("tests") if path != Path(__file__).resolve()]
    offenders = [str(path.relative_to(REPO)) for path in files if pattern.search(path.read_text())]
    assert offenders == []


def test_benchmarks_do_not_depend_on_the_tests_directory() -> None:
    """Benchmarks import the shipped kits (``kg_adapters.testing``, ``loaders.testing``), not ``tests/``."""
    offenders = []
    for path in python_files("benchmarks"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("support", "tests"):
                offenders.append(f"{path.name}: from {node.module} import ...")
            if isinstance(node, ast.Constant) and node.value == "tests":
                offenders.append(f"{path.name}:{node.lineno}: a path into tests/")
            if isinstance(node, ast.Attribute) and node.attr == "path" and getattr(node.value, "id", "") == "sys":
                offenders.append(f"{path.name}:{node.lineno}: sys.path")
    assert offenders == []


def test_shipped_code_reads_no_test_seam_from_the_environment() -> None:
    """Extraction used to SIGKILL itself when ``$KGA_EXTRACT_KILL_AT`` named a point."""
    offenders = [
        str(path.relative_to(REPO))
        for path in python_files("kg_adapters", "loaders", "reasoning")
        if "KGA_EXTRACT_KILL_AT" in path.read_text()
        or (re.search(r"os\.kill\(os\.getpid\(\)", path.read_text()) and "testing" not in path.parts)
    ]
    assert offenders == []
