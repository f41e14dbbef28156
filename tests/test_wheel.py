"""The shipped test kit is in the built wheel and importable from it (not only from this checkout)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KIT = ["__init__", "suite", "graph", "fuzz", "freebase_suite", "wikidata_suite", "fault_server", "virtuoso"]


def test_the_test_kit_ships_in_the_wheel(tmp_path: Path) -> None:
    source = tmp_path / "source"  # a copy, so the build leaves nothing in the checkout
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(".*", "build", "dist", "*.egg-info", "__pycache__"))
    command = [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "-q"]
    build = subprocess.run([*command, "-w", str(tmp_path)], capture_output=True, text=True, cwd=tmp_path)
    assert build.returncode == 0, build.stderr
    (wheel,) = tmp_path.glob("kg_adapters-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"kg_adapters/testing/{module}.py" for module in KIT} <= names
    assert "kg_adapters/testing/data/wikidata/neighbours.json" in names
    assert not any(name.startswith(("tests/", "benchmarks/")) for name in names)
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import kg_adapters, kg_adapters.testing.suite as suite, kg_adapters.testing.fault_server as fault;"
        "assert suite.__file__.startswith(sys.argv[1]) and fault.__file__.startswith(sys.argv[1]), suite.__file__;"
        "print(suite.KGConformance.__name__, fault.FaultServer.__name__)"
    )
    imported = subprocess.run([sys.executable, "-c", probe, str(wheel)], capture_output=True, text=True, cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.split() == ["KGConformance", "FaultServer"]


def test_importing_the_package_does_not_import_pytest() -> None:
    probe = (
        "import sys, kg_adapters, kg_adapters.testing; from kg_adapters import connect; print('pytest' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
