"""The kga command line end to end, on the bundled sample loaded into a real on-disk store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kg_adapters.cli import main
from reasoning.demo import run_demo, sample_path


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "store"
    assert main(["load", str(sample_path()), "--store", str(path)]) == 0
    return path


def kg_url(store: Path) -> str:
    return f"oxigraph://{store}?profile=freebase"


def run_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> list[dict[str, Any]]:
    assert main([*argv, "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_paths_json_lines_follow_the_documented_shape(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = run_json(
        capsys,
        [
            "paths",
            "--kg",
            kg_url(store),
            "--start",
            "m.0bxtg",
            "--path",
            "people.person.place_of_birth,people.person.place_of_birth",
            "--dir",
            "out,in",
        ],
    )
    assert rows, "Tom Hanks shares a birthplace with somebody in the sample"
    for row in rows:
        assert row["start"] == "m.0bxtg"
        edges = row["edges"]
        assert isinstance(edges, list) and len(edges) == 2
        first, second = edges
        assert first[0] == "m.0bxtg" and first[1] == "people.person.place_of_birth"
        # the second hop is walked backwards: the birthplace is the tail of the true edge
        assert second[2] == first[2] and second[1] == "people.person.place_of_birth"
    assert {
        "start": "m.0bxtg",
        "edges": [
            ["m.0bxtg", "people.person.place_of_birth", rows[0]["edges"][0][2]],
            ["m.0bxtg", "people.person.place_of_birth", rows[0]["edges"][0][2]],
        ],
    } in rows


def test_truncated_paths_warn_on_stderr(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "paths",
        "--kg",
        kg_url(store),
        "--start",
        "m.06pj8",
        "--path",
        "film.director.film,film.film.genre",
        "--max-paths",
        "3",
        "--json",
    ]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 3
    assert "truncated" in captured.err


def test_literal_tails_are_objects_in_json(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = run_json(capsys, ["neighbors", "--kg", kg_url(store), "--id", "m.0bxtg", "--relations", "type.object.name"])
    assert rows == [
        {
            "id": "m.0bxtg",
            "edges": [["m.0bxtg", "type.object.name", {"value": "Tom Hanks", "datatype": None, "lang": "en"}]],
        }
    ]


def test_search_labels_relations_query_and_subgraph(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = kg_url(store)
    assert run_json(capsys, ["search", "--kg", url, "tom hanks", "--limit", "1"]) == [
        {"id": "m.0bxtg", "label": "Tom Hanks", "description": None}
    ]
    assert run_json(capsys, ["labels", "--kg", url, "--id", "m.06pj8", "--id", "m.0nonexistent"]) == [
        {"id": "m.06pj8", "label": "Steven Spielberg"},
        {"id": "m.0nonexistent", "label": None},
    ]
    relations = run_json(capsys, ["relations", "--kg", url, "--id", "m.0bxtg"])[0]["relations"]
    assert isinstance(relations, list) and "people.person.place_of_birth" in relations
    assert relations == sorted(relations)
    count = run_json(capsys, ["query", "--kg", url, "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"])
    assert count == [{"n": {"value": "2085", "datatype": "http://www.w3.org/2001/XMLSchema#integer", "lang": None}}]
    edges = run_json(capsys, ["subgraph", "--kg", url, "--seed", "m.0bxtg", "--hops", "1"])
    # one edge shape everywhere (records.edge_to_json): subgraph prints {"edge": [head, relation, tail]}
    name = {"edge": ["m.0bxtg", "type.object.name", {"value": "Tom Hanks", "datatype": None, "lang": "en"}]}
    assert name not in edges  # the freebase relation filter hides names (labels() has them)
    assert {"edge": ["m.0bxtg", "people.person.place_of_birth", "m.0qymv"]} in edges
    unfiltered = run_json(
        capsys, ["subgraph", "--kg", url + "&relation_filter=none", "--seed", "m.0bxtg", "--hops", "1"]
    )
    assert name in unfiltered


def test_errors_are_typed_messages_not_tracebacks(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["neighbors", "--kg", kg_url(store), "--id", "m.0bxtg> <x"]) == 1
    assert "kga: error:" in capsys.readouterr().err
    assert main(["labels", "--kg", f"oxigraph://{store.parent / 'missing'}", "--id", "m.0bxtg"]) == 1
    assert "no store at" in capsys.readouterr().err
    assert main(["labels", "--kg", f"oxigraph://{store}?colour=blue", "--id", "m.0bxtg"]) == 2
    assert "colour" in capsys.readouterr().err


def test_console_script_runs_as_a_separate_process(store: Path) -> None:
    kga = Path(sys.executable).with_name("kga")
    done = subprocess.run(
        [
            str(kga),
            "shortest",
            "--kg",
            kg_url(store),
            "--source",
            "m.0bxtg",
            "--target",
            "m.06pj8",
            "--max-hops",
            "3",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    paths = [json.loads(line) for line in done.stdout.splitlines()]
    assert paths and all(p["start"] == "m.0bxtg" for p in paths)
    assert len({len(p["edges"]) for p in paths}) == 1, "all shortest paths have the same length"


def test_demo_answers_its_questions(tmp_path: Path) -> None:
    from io import StringIO

    out = StringIO()
    run_demo(tmp_path / "demo-store", out=out)
    text = out.getvalue()
    assert "loaded 2085 triples" in text
    assert "A: Concord  [m.0qymv]" in text
    assert "Tom Hanks -> people.person.place_of_birth -> Concord" in text
    assert "Isaac Newton" in text  # influenced Albert Einstein
    second = StringIO()
    run_demo(tmp_path / "demo-store", out=second)  # the store is reused, not reloaded
    assert "loaded" not in second.getvalue()
    # it ends with the next step: the store as $KGA_KG for the other commands
    url = f"oxigraph://{(tmp_path / 'demo-store').absolute()}?profile=freebase"
    assert f"  export KGA_KG='{url}'" in text.splitlines()[-5:]


def test_demo_json_prints_one_json_object_per_question(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kg_adapters.cli", "demo", "--json", "--store", str(tmp_path / "store")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers[0]["question"] == "Where was Tom Hanks born?" and len(answers) == 5
    first = answers[0]["answers"][0]
    assert (first["id"], first["name"], first["support"]) == ("m.0qymv", "Concord", 1)
    assert first["paths"] == [{"start": "m.0bxtg", "edges": [["m.0bxtg", "people.person.place_of_birth", "m.0qymv"]]}]
    assert "loaded 2085 triples" in done.stderr and "export KGA_KG=" in done.stderr  # notes stay off stdout


def demo_next_step(store: Path, environment: dict[str, str]) -> tuple[list[str], str]:
    """The command lines ``kga demo`` (run as ``make demo`` runs it: the venv's kga by its path) ends
    with, and its stderr; ``environment`` is the user's shell's."""
    kga = str(Path(sys.executable).parent / "kga")
    done = subprocess.run(
        [kga, "demo", "--store", str(store)], capture_output=True, text=True, timeout=300, env=environment
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    return [
        line.strip()
        for line in lines[lines.index("next: point the other commands at this store, then try them:") + 1 :]
    ], done.stderr


def test_the_demos_next_step_runs_as_printed_in_a_shell_without_the_venv(tmp_path: Path) -> None:
    """After ``make demo`` the user's shell has no ``.venv/bin`` on PATH: the printed lines still work."""
    shell = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    steps, _ = demo_next_step(tmp_path / "store", shell)
    runnable = [step.split("  #")[0] for step in steps if not step.startswith("kga serve")]  # serve would not end
    assert any(step.startswith("kga search") for step in runnable), steps
    done = subprocess.run(
        ["bash", "-e", "-c", "\n".join(runnable)], capture_output=True, text=True, env=shell, timeout=300
    )
    assert done.returncode == 0, (steps, done.stderr)
    assert "m.0bxtg\tTom Hanks" in done.stdout and "Tom Hanks [m.0bxtg]: 5 edge(s)" in done.stdout


def test_the_demos_next_step_says_how_to_add_the_serve_extra_when_it_is_missing(tmp_path: Path) -> None:
    """``make demo`` installs no extras; ``kga serve`` needs Starlette and uvicorn."""
    from kg_adapters.extras import install_command

    shadow = tmp_path / "shadow" / "starlette"  # a package that fails to import hides the installed one
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise ImportError("No module named starlette")\n', encoding="utf-8")
    steps, _ = demo_next_step(
        tmp_path / "store", {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path / "shadow")}
    )
    assert install_command("serve") in "\n".join(steps), steps
    with_extra, _ = demo_next_step(tmp_path / "store", {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert install_command("serve") not in "\n".join(with_extra) and any(s.startswith("kga serve") for s in with_extra)
