"""The README's Python example runs as written, against the demo store."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from reasoning.demo import ensure_store

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs(tmp_path: Path) -> None:
    store = tmp_path / "demo-store"
    ensure_store(store, io.StringIO())
    block = re.search(r"```python\n(.*?)```", README.read_text("utf-8"), re.S)
    assert block is not None
    code = block.group(1).replace("/abs/path/.kga/demo-store", str(store))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {})
    lines = out.getvalue().splitlines()
    # Concord is the birthplace of two people in the sample; walks may return to the start (RoG semantics)
    assert lines == ["Tom Hanks -> Concord -> Dave Brubeck False", "Tom Hanks -> Concord -> Tom Hanks False"]


GRAPH_COMMANDS = {"search", "neighbors", "relations", "paths", "shortest", "subgraph", "labels", "query"}
"""The README's command-line examples that read a graph (the others need dumps, endpoints or an LLM)."""


def test_readme_command_line_examples_answer_on_the_sample(tmp_path: Path) -> None:
    """Each graph command of the "Command line" block, run as written against the demo store (its
    ``$KGA_KG``), and the CVT example against the sample with CVT nodes, which it loads itself."""
    import os
    import shlex
    import subprocess
    import sys

    text = README.read_text("utf-8")
    section = text[text.index("## Command line") :]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    store = tmp_path / "demo-store"
    ensure_store(store, io.StringIO())
    environment = {**os.environ, "KGA_KG": f"oxigraph://{store}?profile=freebase"}
    repo = README.parent
    answers: dict[str, str] = {}
    for line in block.group(1).splitlines():
        argv = [arg.replace("$PWD", str(tmp_path)) for arg in shlex.split(line, comments=True)]
        if not argv or argv[0] != "kga":
            continue
        loads_a_bundled_file = argv[1] == "load" and argv[2].startswith("kg_adapters/data/")
        if argv[1] not in GRAPH_COMMANDS and not loads_a_bundled_file:
            continue
        argv = [str(repo / arg) if arg.startswith("kg_adapters/data/") else arg for arg in argv]
        done = subprocess.run(
            [sys.executable, "-m", "kg_adapters.cli", *argv[1:]],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=environment,
            timeout=300,
        )
        assert done.returncode == 0 and done.stdout.strip(), (line, done.stderr)
        answers[line] = done.stdout
    expanded = next(out for line, out in answers.items() if "--expand-cvt" in line)
    # every film.actor.film edge reaches a CVT node, whose own edges (the film, ...) are shown under it
    edges = expanded.splitlines()[1:]
    reached = [i for i, line in enumerate(edges) if "-film.actor.film->" in line]
    assert len(reached) > 10 and all(edges[i + 1].startswith("      film.performance: ") for i in reached)
    assert "-film.performance.film-> Apollo 13 [" in expanded
    assert len(answers) >= 10
