"""The import graph runs one way: kg_adapters <- loaders <- reasoning <- benchmarks.

Every module's imports are read with ``ast`` (function-level and ``TYPE_CHECKING`` imports too, and
``importlib.import_module("...")`` with a literal name), so a lazy import cannot hide an upward arrow.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("kg_adapters", "loaders", "reasoning")
BACKEND_MODULES = {
    "kg_adapters.backends.oxigraph",
    "kg_adapters.backends.rdflib_backend",
    "kg_adapters.backends.sparql_http",
    "kg_adapters.backends.wikidata_api",
}
"""The modules the registry maps URL schemes to (BACKENDS); the rest of kg_adapters.backends is shared
machinery (the SPARQL base, the HTTP transport, dialects)."""


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    found = {module_name(path): path for package in PACKAGES for path in (ROOT / package).rglob("*.py")}
    assert len(found) > 60, "the walk must see the whole tree"
    return found


def imports_of(name: str, path: Path) -> set[str]:
    """Every module ``name`` imports: absolute names, relative imports resolved, and for
    ``from package import x`` both ``package`` and ``package.x`` (x may be a submodule)."""
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add(node.args[0].value)
    return found


def within(imported: str, package: str) -> bool:
    return imported == package or imported.startswith(package + ".")


def violations(source_prefix: str, forbidden: tuple[str, ...]) -> list[str]:
    return sorted(
        f"{name} imports {imported}"
        for name, path in modules().items()
        if within(name, source_prefix)
        for imported in imports_of(name, path)
        if any(within(imported, package) for package in forbidden)
    )


def test_the_walk_sees_function_level_and_relative_imports(tmp_path: Path) -> None:
    source = tmp_path / "kg_adapters" / "sub" / "mod.py"
    source.parent.mkdir(parents=True)
    source.write_text(
        "from . import sibling\n"
        "def f():\n    from reasoning.rog import x\n    import importlib\n    importlib.import_module('loaders.cli')\n",
        "utf-8",
    )
    found = imports_of("kg_adapters.sub.mod", source)
    assert {"kg_adapters.sub.sibling", "reasoning.rog", "loaders.cli"} <= found


def test_core_imports_neither_loaders_nor_reasoning() -> None:
    assert violations("kg_adapters", ("loaders", "reasoning", "benchmarks", "tests", "support")) == []


def test_loaders_never_import_reasoning() -> None:
    assert violations("loaders", ("reasoning", "benchmarks", "tests", "support")) == []


def test_reasoning_imports_neither_benchmarks_nor_tests() -> None:
    assert violations("reasoning", ("benchmarks", "tests", "support")) == []


@pytest.mark.parametrize("backend", sorted(BACKEND_MODULES))
def test_backends_import_neither_the_registry_nor_each_other(backend: str) -> None:
    shared = [name for name in modules() if within(name, "kg_adapters.backends") and name not in BACKEND_MODULES]
    for name in [backend, *shared]:
        imported = imports_of(name, modules()[name])
        # names the package root re-exports (connect, __version__) come from the registry's side of the tree
        from_root = {i for i in imported if i.count(".") == 1 and within(i, "kg_adapters") and i not in modules()}
        assert not from_root, f"{name} imports {sorted(from_root)} from the package root, not from its module"
        assert "kg_adapters.registry" not in imported, f"{name} imports the registry"
        others = (imported & BACKEND_MODULES) - {name}
        assert not others, f"{name} imports another backend: {sorted(others)}"


def test_the_registry_still_lists_exactly_these_backend_modules() -> None:
    from kg_adapters.registry import BACKENDS

    assert {spec.target.partition(":")[0] for spec in BACKENDS.values()} == BACKEND_MODULES


def test_importing_every_core_module_loads_no_upper_package() -> None:
    core = sorted(name for name in modules() if within(name, "kg_adapters"))
    script = (
        "import importlib, sys\n"
        f"for name in {core!r}:\n    importlib.import_module(name)\n"
        "from kg_adapters.cli import build_parser, CORE_COMMANDS\n"
        "build_parser(CORE_COMMANDS)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('loaders', 'reasoning', 'benchmarks')))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.strip() == "[]"


CORE_BELOW_BACKENDS = ("kg_adapters.wrappers", "kg_adapters.profiles")
"""Besides the modules directly in kg_adapters/ (but the registry, which maps schemes to backends)."""


def test_the_core_below_the_backends_imports_none_of_them() -> None:
    """Backends build on the records, terms, transports and wrappers; none of those reaches back up."""
    below = [
        name
        for name in modules()
        if name != "kg_adapters.registry"
        and (
            (name.count(".") == 1 and within(name, "kg_adapters")) or any(within(name, p) for p in CORE_BELOW_BACKENDS)
        )
    ]
    assert "kg_adapters.rdf_io" in below and "kg_adapters.http_exchange" in below
    upward = sorted(
        f"{name} imports {imported}"
        for name in below
        for imported in imports_of(name, modules()[name])
        if within(imported, "kg_adapters.backends")
    )
    assert upward == []


def test_the_upper_packages_use_no_backend_machinery() -> None:
    """reasoning/ reaches HTTP through the public exchange (kg_adapters.http_exchange), not through the
    shared machinery of the backends (kg_adapters.backends.http_transport and its kin)."""
    machinery = {
        name
        for name in modules()
        if within(name, "kg_adapters.backends") and name not in {*BACKEND_MODULES, "kg_adapters.backends"}
    }
    assert "kg_adapters.backends.http_transport" in machinery
    found = {
        f"{name} imports {imported}"
        for name in modules()
        if within(name, "reasoning")
        for imported in imports_of(name, modules()[name])
        if imported in machinery
    }
    assert found == set()
