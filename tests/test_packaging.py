"""What the installed distribution declares: an SPDX license (no setuptools deprecation warning on
install), runtime dependencies that shipped code actually imports, and a ``make test`` that enforces
the formatter."""

from __future__ import annotations

import ast
import re
import subprocess
from importlib.metadata import metadata, packages_distributions, requires
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ("kg_adapters", "loaders", "reasoning")


def test_the_license_is_an_spdx_expression() -> None:
    declared = metadata("kg-adapters")
    assert declared["License-Expression"] == "Apache-2.0"
    assert declared["License"] is None  # the deprecated TOML-table form wrote a License field


def shipped_imports() -> set[str]:
    """Top-level names imported anywhere in the shipped packages (lazy imports included)."""
    names: set[str] = set()
    for package in SHIPPED:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.Import):
                    names.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names.add(node.module.split(".")[0])
    return names


def requirement_name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].lower()


def test_every_runtime_dependency_is_imported_by_shipped_code() -> None:
    runtime = {requirement_name(r) for r in requires("kg-adapters") or [] if "extra ==" not in r}
    distributions_of = packages_distributions()
    imported = {dist.lower() for name in shipped_imports() for dist in distributions_of.get(name, [])}
    assert runtime and runtime <= imported, f"declared but never imported: {sorted(runtime - imported)}"


def test_sparqlwrapper_is_a_benchmark_extra() -> None:
    extras = [r for r in requires("kg-adapters") or [] if requirement_name(r) == "sparqlwrapper"]
    # never a runtime dependency: the benchmarks' baseline client, and the tests' Think-on-Graph client of kga serve
    assert sorted(extras) == ['SPARQLWrapper>=2.0; extra == "bench"', 'SPARQLWrapper>=2.0; extra == "dev"']
    assert "SPARQLWrapper" not in shipped_imports()


def test_make_test_checks_the_formatting() -> None:
    planned = subprocess.run(["make", "-n", "test"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "ruff format --check ." in planned
