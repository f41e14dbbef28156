"""kg-adapters is not on a package index: ``make wheel`` builds the wheel another project installs
(query page included), and every "install the extra" hint names where this installation came from."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from kg_adapters.extras import install_command

REPO = Path(__file__).resolve().parents[1]
VENV = Path(sys.executable).parent.parent


def test_make_wheel_builds_an_installable_wheel_whose_hints_name_it(tmp_path: Path) -> None:
    source = tmp_path / "clone"  # a copy, so the build leaves nothing in the checkout
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(".*", "build", "dist", "*.egg-info", "__pycache__"))
    # this test's environment stands in for the clone's .venv (-o: never rebuild it from the copy)
    made = subprocess.run(
        ["make", "-C", str(source), "wheel", f"VENV={VENV}", "-o", f"{VENV}/.installed"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert made.returncode == 0, made.stderr
    (wheel,) = (source / "dist").glob("kg_adapters-*.whl")  # tagged for this Python: it carries a C extension
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "kg_adapters/index/_numbering.pyi" in names
    assert any(name.startswith("kg_adapters/index/_numbering.") and name.endswith((".so", ".pyd")) for name in names)
    assert {
        "kg_adapters/serve/static/index.html",
        "kg_adapters/serve/static/page.js",
        "kg_adapters/serve/static/yasgui/yasgui.min.js",
        "kg_adapters/serve/static/yasgui/yasgui.min.css",
        "kg_adapters/serve/static/yasgui/VENDORED.json",
        "kg_adapters/serve/static/yasgui/LICENSE",
    } <= names
    target = tmp_path / "site"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert installed.returncode == 0, installed.stderr
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import kg_adapters.extras as extras; assert extras.__file__.startswith(sys.argv[1]), extras.__file__;"
        "print(extras.install_command('serve'))"
    )
    hint = subprocess.run([sys.executable, "-c", probe, str(target)], capture_output=True, text=True, check=True)
    assert hint.stdout.strip() == f"{sys.executable} -m pip install '{wheel}[serve]'"


def test_the_hint_of_an_editable_install_names_the_clone() -> None:
    """This test environment is an editable install of the checkout (``make test``'s ``pip install -e``)."""
    assert install_command("serve") == f"{sys.executable} -m pip install -e '{REPO}[serve]'"
