"""The README's "Switching existing code" examples run as written (the KG URLs and dataset paths
swapped for the bundled sample and fixture files in the published schema)."""

from __future__ import annotations

import ast
import contextlib
import io
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from support.rog_files import ROWS, write_parquet

README = Path(__file__).resolve().parents[1] / "README.md"
OBAMA = [
    ["Barack Obama", "people.person.place_of_birth", "Honolulu"],
    ["Honolulu", "location.location.containedby", "Hawaii"],
]


def section() -> str:
    text = README.read_text("utf-8")
    start = text.index("## Switching existing code")
    return text[start : text.index("\n## ", start + 1)]


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", section(), re.S)


def test_rog_example_answers_as_its_comment_says() -> None:
    code = next(block for block in blocks("python") if "compat.rog" in block)
    expected = ast.literal_eval(re.search(r"^# (\[\[.*\]\])", code, re.M).group(1))  # type: ignore[union-attr]
    namespace: dict[str, object] = {"sample": {"graph": OBAMA, "q_entity": ["Barack Obama"], "a_entity": ["Hawaii"]}}
    exec(compile(code, str(README), "exec"), namespace)
    assert namespace["paths"] == expected
    assert namespace["truth"] == [
        [
            ("Barack Obama", "people.person.place_of_birth", "Honolulu"),
            ("Honolulu", "location.location.containedby", "Hawaii"),
        ]
    ]


def test_tog_example_runs(sample_store_url: str) -> None:
    code = next(block for block in blocks("python") if "compat.tog" in block)
    url = re.search(r'connect\("([^"]+)"\)', code).group(1)  # type: ignore[union-attr]
    code = code.replace(url, sample_store_url)
    namespace: dict[str, object] = {}  # the snippet defines everything it uses
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, str(README), "exec"), namespace)
    from kg_adapters.compat import tog

    try:
        assert namespace["head_relations"] and isinstance(namespace["tail_relations"], list)
        assert tog.id2entity_name_or_type("m.02mjmr") == "Barack Obama"
        assert tog.entity_search("m.02mjmr", "people.person.place_of_birth", head=True)
    finally:
        tog.use(None)


def test_dataset_commands_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = next(block for block in blocks("sh") if "kga load" in block)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    write_parquet(tmp_path / "data" / "test-00000-of-00002.parquet")
    second = [{**row, "id": f"{row['id']}-shard2"} for row in ROWS]  # a split's shards hold other questions
    write_parquet(tmp_path / "data" / "test-00001-of-00002.parquet", second)
    commands = script.replace("\\\n", " ").replace("$PWD", str(tmp_path)).splitlines()
    for command in filter(str.strip, commands):
        argv = shlex.split(command, comments=True)
        assert argv[0] == "kga"
        done = subprocess.run(
            [sys.executable, "-m", "kg_adapters.cli", *argv[1:]],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, (command, done.stderr)
    assert (tmp_path / "rog.jsonl").read_text("utf-8").count("\n") == 3
    assert "Hits@1" in done.stdout
