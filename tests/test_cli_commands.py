"""The kga command registry: packages contribute commands through the ``kg_adapters.commands``
entry-point group (a third-party one here, installed as a real distribution on PYTHONPATH), help is
plain text, ``--version`` exists, and every command prints edges in the one codec shape."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points, version
from pathlib import Path

import pytest

import kg_adapters
from kg_adapters.cli import CORE_COMMANDS, build_parser, main
from kg_adapters.commands import Command
from kg_adapters.errors import KGError
from reasoning.demo import sample_path

KGA = Path(sys.executable).with_name("kga")


def kga(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(KGA), *argv], capture_output=True, text=True, env=env, check=False)


def test_version_prints_the_installed_version() -> None:
    done = kga("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"kga (kg-adapters) {kg_adapters.__version__}"
    assert kg_adapters.__version__ == version("kg-adapters")


def test_help_is_plain_text_for_kga_and_every_command() -> None:
    names = [command.name for command in CORE_COMMANDS] + ["load", "extract", "demo", "reason", "eval"]
    for argv in [["--help"], *([name, "--help"] for name in names)]:
        done = kga(*argv)
        assert done.returncode == 0, done.stderr
        for markup in ("``", ":class:", ":func:", ":mod:"):
            assert markup not in done.stdout, f"kga {' '.join(argv)} prints reST markup {markup!r}"
    listing = kga("--help").stdout
    assert all(name in listing for name in names)


def test_loaders_and_reasoning_contribute_their_commands_through_the_entry_point_group() -> None:
    contributed = {entry.name: entry.value for entry in entry_points(group="kg_adapters.commands")}
    assert contributed == {"loaders": "loaders.cli:COMMANDS", "reasoning": "reasoning.cli:COMMANDS"}
    core = build_parser(CORE_COMMANDS)
    with pytest.raises(SystemExit):
        core.parse_args(["load", "x.nt", "--store", "s"])  # the core alone has no load command


def write_distribution(site: Path, name: str, module_source: str, entry: str) -> None:
    """A real (if minimal) installed distribution: a module and its dist-info with entry points."""
    (site / f"{name}.py").write_text(module_source, "utf-8")
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", "utf-8")
    (info / "entry_points.txt").write_text(f"[kg_adapters.commands]\n{name} = {entry}\n", "utf-8")


THIRD_PARTY = """
from kg_adapters.commands import Command, emit, opens_kg


def count_relations(kg, args):
    relations = kg.relations(args.id)[args.id]
    emit({"id": args.id, "relations": len(relations)}) if args.json else print(len(relations))
    return 0


def arguments(parser):
    parser.add_argument("--id", required=True)


COMMANDS = [Command(name="count-relations", help="how many relations an entity has", arguments=arguments,
                    run=opens_kg(count_relations))]
"""


def test_a_third_party_package_adds_a_command(tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert main(["load", str(sample_path()), "--store", str(store)]) == 0
    site = tmp_path / "site"
    site.mkdir()
    write_distribution(site, "kga_counting", THIRD_PARTY, "kga_counting:COMMANDS")
    env = {**os.environ, "PYTHONPATH": str(site)}
    assert "count-relations" in kga("--help", env=env).stdout
    done = kga("count-relations", "--kg", f"oxigraph://{store}?profile=freebase", "--id", "m.0bxtg", "--json", env=env)
    assert done.returncode == 0, done.stderr
    row = json.loads(done.stdout)
    assert row["id"] == "m.0bxtg" and row["relations"] > 3


def test_a_broken_contribution_is_a_clear_error_naming_it(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    write_distribution(site, "kga_broken", "COMMANDS = 'not commands'\n", "kga_broken:COMMANDS")
    done = kga("--help", env={**os.environ, "PYTHONPATH": str(site)})
    assert done.returncode == 1
    assert "kga: error:" in done.stderr and "kga_broken:COMMANDS" in done.stderr
    assert "Traceback" not in done.stderr


def test_two_commands_with_one_name_are_refused() -> None:
    clash = Command(name="labels", help="another labels", arguments=lambda parser: None, run=lambda args: 0)
    with pytest.raises(KGError, match="two kga commands are named 'labels'"):
        build_parser([*CORE_COMMANDS, clash])


def test_neighbors_and_subgraph_print_one_edge_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    assert main(["load", str(sample_path()), "--store", str(store)]) == 0
    capsys.readouterr()
    url = f"oxigraph://{store}?profile=freebase"
    assert main(["neighbors", "--kg", url, "--id", "m.0bxtg", "--json"]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert main(["subgraph", "--kg", url, "--seed", "m.0bxtg", "--hops", "1", "--direction", "out", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert row["edges"] and sorted(map(json.dumps, row["edges"])) == sorted(json.dumps(line["edge"]) for line in lines)
    assert ["m.0bxtg", "people.person.place_of_birth", "m.0qymv"] in row["edges"]
