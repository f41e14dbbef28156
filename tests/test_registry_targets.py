"""Backend targets that cannot work fail as UnknownBackendError naming the target, never as a bare
AttributeError; bundled backends' hints never ask to install what kg-adapters already depends on."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import requires

import pytest

from kg_adapters.errors import UnknownBackendError
from kg_adapters.extras import install_command
from kg_adapters.registry import BACKENDS, connect, register


@pytest.fixture
def scheme() -> Iterator[str]:
    yield "kga-test-target"
    BACKENDS.pop("kga-test-target", None)


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("kg_adapters.backends.oxigraph:NoSuchGraph", "has no NoSuchGraph"),
        ("kg_adapters.backends.oxigraph:rdf_format", "rdf_format has no from_url"),  # a function, not a backend
        ("kg_adapters.backends.oxigraph", "not 'module:Class'"),
        ("kg_adapters.backends.oxigraph:", "not 'module:Class'"),
        (":OxigraphGraph", "not 'module:Class'"),
        ("kg_adapters.backends.oxigraph:Oxigraph Graph", "not 'module:Class'"),
    ],
)
def test_a_bad_target_is_an_unknown_backend_error(scheme: str, target: str, message: str) -> None:
    register(scheme, target)
    with pytest.raises(UnknownBackendError, match=re.escape(message)) as info:
        connect(f"{scheme}://")
    assert scheme in str(info.value)


def hard_dependencies() -> set[str]:
    """The distribution names kg-adapters requires unconditionally (its installed metadata)."""
    names = set()
    for requirement in requires("kg-adapters") or []:
        if "extra ==" not in requirement:
            names.add(re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].lower())
    return names


def test_bundled_backends_name_no_hard_dependency_to_install() -> None:
    dependencies = hard_dependencies()
    assert {"pyoxigraph", "rdflib", "requests", "tenacity"} <= dependencies
    for scheme, spec in BACKENDS.items():
        if spec.target.startswith("kg_adapters."):
            assert spec.bundled, scheme
            mentioned = {word.lower() for word in re.findall(r"[\w.-]+", spec.install_hint)}
            assert not mentioned & dependencies, f"{scheme}'s hint names a hard dependency: {spec.install_hint}"


def test_a_bundled_backend_whose_dependency_is_missing_says_to_repair_the_install() -> None:
    # a fresh interpreter in which requests cannot be imported (None in sys.modules blocks the import)
    script = (
        "import sys\n"
        "sys.modules['requests'] = None\n"
        "from kg_adapters import connect\n"
        "from kg_adapters.errors import UnknownBackendError\n"
        "try:\n    connect('wikidata+api://')\n"
        "except UnknownBackendError as exc:\n    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert "'wikidata+api' backend cannot be imported" in done.stdout
    assert f"repair with: {install_command(reinstall=True)}" in done.stdout  # names this installation's source
    assert "-m pip install --force-reinstall" in done.stdout
    assert "pip install requests" not in done.stdout
