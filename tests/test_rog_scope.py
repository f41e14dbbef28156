"""RoG dataset files end to end through real ``kga`` processes: load, ``reason --scope question|union``
on the same file, ``eval`` against it; and RoG's forward-first ranking of walk ends."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.rog_files import ROWS, write_jsonl, write_parquet

from kg_adapters.records import Edge
from kg_adapters.records import Path as KGPath
from reasoning.base import Question
from reasoning.rog import RoG, follows_edges, vote

PASSAIC_ROW: dict[str, Any] = {
    "id": "WebQTest-4",
    "question": "who was born in passaic",
    "answer": [],
    "q_entity": ["Passaic"],
    "a_entity": ["Zoë Saldaña"],
    "graph": [["Passaic", "location.location.containedby", "New Jersey"]],
    "choices": [],
}


def kga(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kg_adapters.cli", *args], capture_output=True, text=True, timeout=300, check=False
    )


def results(path: Path) -> dict[str, dict[str, Any]]:
    return {line["id"]: line for line in map(json.loads, path.read_text("utf-8").splitlines())}


def test_scope_question_answers_on_each_questions_own_subgraph(tmp_path: Path) -> None:
    rows = [*ROWS, {**PASSAIC_ROW, "plans": [["people.person.place_of_birth"]]}]
    dataset = write_jsonl(tmp_path / "test.jsonl", rows)
    store = tmp_path / "store"
    assert kga("load", str(dataset), "--format", "rog-dataset", "--store", str(store)).returncode == 0
    url = f"oxigraph://{store}"
    runs = {}
    for scope in ("union", "question"):
        out = tmp_path / f"{scope}.jsonl"
        done = kga(
            "reason", "--kg", url, "--method", "rog", "--input", str(dataset), "--out", str(out), "--scope", scope
        )
        assert done.returncode == 0, done.stderr
        runs[scope] = results(out)
    # Zoë Saldaña was born in Passaic only according to another question's subgraph
    assert runs["union"]["WebQTest-4"]["prediction"] == ["Zoë Saldaña"]
    # its own subgraph has no place_of_birth: the plan is repaired to the one relation it has
    assert runs["question"]["WebQTest-4"]["prediction"] == ["New Jersey"]
    graphs = {row["id"]: {tuple(t) for t in row["graph"]} for row in rows}
    for qid, line in runs["question"].items():
        for path in line["reasoning_paths"]:
            assert {tuple(t) for t in path} <= graphs[qid], qid  # every cited triple is the question's own
    # predictions and paths are the file's strings: the eval scores against a_entity
    done = kga("eval", str(tmp_path / "union.jsonl"), "--questions", str(dataset), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["questions"] == 4


def test_parquet_file_is_input_for_reason_and_eval(tmp_path: Path) -> None:
    dataset = write_parquet(tmp_path / "test-00000-of-00001.parquet")
    store, out = tmp_path / "store", tmp_path / "out.jsonl"
    assert kga("load", str(dataset), "--store", str(store)).returncode == 0
    done = kga("reason", "--kg", f"oxigraph://{store}", "--method", "rog", "--input", str(dataset), "--out", str(out))
    assert done.returncode == 0, done.stderr
    answered = results(out)
    assert set(answered) == {str(row["id"]) for row in ROWS}
    names = {name for row in ROWS for triple in row["graph"] for name in triple}
    assert all(p in names for line in answered.values() for p in line["prediction"])
    assert answered["WebQTest-1"]["ground_truth"] == ["Passaic"]
    done = kga("eval", str(out), "--questions", str(dataset), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["questions"] == 3


def test_scope_question_refuses_a_kg_without_question_graphs(sample_store_url: str, tmp_path: Path) -> None:
    questions = write_jsonl(tmp_path / "q.jsonl", ROWS[:1])
    done = kga(
        "reason",
        "--kg",
        sample_store_url,
        "--method",
        "rog",
        "--input",
        str(questions),
        "--out",
        str(tmp_path / "o.jsonl"),
        "--scope",
        "question",
    )
    assert done.returncode == 1 and "rog-dataset" in done.stderr
    assert not (tmp_path / "o.jsonl").exists()


def test_walks_along_edges_rank_first() -> None:
    forward = KGPath(start="New Jersey", edges=(Edge(head="New Jersey", relation="r", tail="USA"),))
    backward = [KGPath(start="New Jersey", edges=(Edge(head="Passaic", relation="r", tail="New Jersey"),))] * 2
    assert follows_edges(forward) and not follows_edges(backward[0])
    assert vote([*backward, forward]) == [("USA", 1), ("Passaic", 2)]  # the backward end has more votes


def test_rog_ranks_the_forward_end_first(tmp_path: Path) -> None:
    """A plan walked both ways from New Jersey: forwards it reaches the country, backwards the
    town it contains; the country ranks first although "Passaic" sorts before it."""
    from kg_adapters.compat.rog import build_graph

    with build_graph([tuple(t) for row in ROWS for t in row["graph"]]) as kg:
        question = Question(
            id="q",
            question="what country is new jersey in",
            q_entity=("New Jersey",),
            plans=(("location.location.containedby",),),
        )
        answer = RoG(kg).answer(question)
    assert answer.prediction == ("United States of America", "Passaic")


@pytest.mark.parametrize("bad", ["both", ""])
def test_scope_option_is_checked(bad: str, tmp_path: Path) -> None:
    done = kga("reason", "--kg", "oxigraph://", "--method", "rog", "--input", "x", "--out", "y", "--scope", bad)
    assert done.returncode == 2 and "--scope" in done.stderr


def test_scope_question_names_questions_without_a_subgraph(tmp_path: Path) -> None:
    """An input whose questions the store never loaded would silently answer nothing."""
    store = tmp_path / "store"
    assert (
        kga(
            "load", str(write_jsonl(tmp_path / "test.jsonl")), "--format", "rog-dataset", "--store", str(store)
        ).returncode
        == 0
    )
    other = write_jsonl(tmp_path / "train.jsonl", [{**row, "id": "WebQTrn-" + str(row["id"])} for row in ROWS])
    out = tmp_path / "out.jsonl"
    url = f"oxigraph://{store}"
    done = kga(
        "reason", "--kg", url, "--method", "rog", "--input", str(other), "--out", str(out), "--scope", "question"
    )
    assert done.returncode == 2 and "none of the 3 questions" in done.stderr and not out.exists()
    done = kga(
        "reason",
        "--kg",
        url,
        "--method",
        "rog",
        "--input",
        str(tmp_path / "test.jsonl"),
        "--out",
        str(out),
        "--scope",
        "question",
    )
    assert done.returncode == 0, done.stderr
    assert "1 of 3 questions have no subgraph" in done.stderr and "WebQTest-3" in done.stderr  # its graph is empty
    assert len(results(out)) == 3
