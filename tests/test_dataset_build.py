"""``kga dataset build`` against real stores, a real ``kga serve`` process and a real Virtuoso.

Oracles written here, independent of the code under test: RoG's ``get_truth_paths`` as its repository
writes it (networkx, an ``nx.Graph`` per row) and the same over an ``nx.MultiGraph`` (every relation of
a pair), a personalised PageRank by plain dictionaries, and a small graph whose rows are written out by
hand. Questions over the bundled FB15k-237 sample come from :mod:`loaders.testing.questions` (seeded).
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
import json
import re
import signal
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.servers import free_port, running

from kg_adapters import connect
from kg_adapters.errors import InvalidTermError, LoadError, MissingDependency
from kg_adapters.testing import rog_original
from kg_adapters.testing.virtuoso import VirtuosoServer, virtuoso_fixture
from loaders import load_files
from loaders.dataset_build import build_dataset, read_output
from loaders.dataset_rows import RESTART, ground_paths, personalized_pagerank
from loaders.errors import (
    BadQuestion,
    DatasetBuildError,
    DatasetStateMismatch,
    DuplicateQuestionId,
    NoTopicEntity,
    UnknownEntity,
)
from loaders.testing.kill import build_killed_at
from loaders.testing.questions import generate_questions
from reasoning.demo import sample_path

FB = "http://rdf.freebase.com/ns/"
NAME = FB + "type.object.name"
XSD_DATE = "http://www.w3.org/2001/XMLSchema#date"
Triple = tuple[str, str, str]

# A Freebase-shaped graph with known rows: a CVT, a literal, two relations between one pair, a hub,
# relations the profile hides, and a node beyond two hops.
TOY = [
    ("m.0t", "film.actor.film", "m.0cvt"),
    ("m.0cvt", "film.performance.film", "m.0f"),
    ("m.0t", "people.person.place_of_birth", "m.0c"),
    ("m.0c", "location.location.containedby", "m.0s"),
    ("m.0d", "people.person.place_of_birth", "m.0c"),
    ("m.0t", "people.person.nationality", "m.0u"),
    ("m.0t", "people.person.places_lived..people.place_lived.location", "m.0u"),
    ("m.0s", "location.location.containedby", "m.0u"),
    ("m.0f", "film.film.country", "m.0far"),  # three hops from Tom: outside
    ("m.0t", "type.object.type", "people.person"),  # hidden by the profile's relation filter
]
TOY_NAMES = {"m.0t": "Tom", "m.0f": "Film", "m.0c": "City", "m.0s": "State", "m.0d": "Dave", "m.0u": "USA"}
TOY_NAMES["m.0far"] = "Far"
TOY_HUB = [(f"m.0fan{n}", "people.person.nationality", "m.0u") for n in range(5)]


def write_toy(path: Path) -> Path:
    lines = [f"<{FB}{h}> <{FB}{r}> <{FB}{t}> ." for h, r, t in [*TOY, *TOY_HUB]]
    lines.append(f'<{FB}m.0t> <{FB}people.person.date_of_birth> "1956-07-09"^^<{XSD_DATE}> .')
    lines.append(f'<{FB}m.0t> <{FB}common.topic.description> "An actor." .')
    lines += [f'<{FB}{node}> <{NAME}> "{name}"@en .' for node, name in TOY_NAMES.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def toy_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    base = tmp_path_factory.mktemp("toy")
    load_files([str(write_toy(base / "toy.nt"))], str(base / "store"), profile="freebase", progress=False)
    return f"oxigraph://{base / 'store'}?profile=freebase"


def write_questions(path: Path, rows: Sequence[Any]) -> Path:
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows), "utf-8")
    return path


def build(url: str, rows: Sequence[Any], tmp: Path, name: str = "out.jsonl", **options: Any) -> list[dict[str, Any]]:
    out = tmp / name
    build_dataset(url, write_questions(tmp / "questions.jsonl", rows), out, progress=False, **options)
    return list(read_output(out))


TOM = {"id": "q1", "question": "where is tom's birthplace?", "q_entity": ["m.0t"], "a_entity": ["m.0s"]}
P = {
    "film": "film.actor.film",
    "perf": "film.performance.film",
    "pob": "people.person.place_of_birth",
    "in": "location.location.containedby",
    "nat": "people.person.nationality",
    "lived": "people.person.places_lived..people.place_lived.location",
    "dob": "people.person.date_of_birth",
}


def test_exact_graph_and_ground_paths_on_a_known_graph(toy_url: str, tmp_path: Path) -> None:
    (row,) = build(toy_url, [TOM], tmp_path, max_nodes=100)
    fans = [[f"m.0fan{n}", P["nat"], "USA"] for n in range(5)]
    assert row == {
        "id": "q1",
        "question": "where is tom's birthplace?",
        "answer": ["State"],
        "q_entity": ["Tom"],
        "a_entity": ["State"],
        "graph": [  # by head, relation, tail id; the CVT and the fans have no name: their ids
            ["City", P["in"], "State"],
            ["m.0cvt", P["perf"], "Film"],
            ["Dave", P["pob"], "City"],
            *fans,
            ["State", P["in"], "USA"],
            ["Tom", P["film"], "m.0cvt"],
            ["Tom", P["dob"], "1956-07-09"],
            ["Tom", P["nat"], "USA"],
            ["Tom", P["pob"], "City"],
            ["Tom", P["lived"], "USA"],
        ],
        "choices": [],
        "ground_paths": sorted([[P["nat"], P["in"]], [P["pob"], P["in"]], [P["lived"], P["in"]]]),
        "truncated": False,
    }


def test_pagerank_keeps_the_nearest_nodes_and_breaks_ties_by_id(toy_url: str, tmp_path: Path) -> None:
    # From Tom: USA (two edges) first, then City (its own neighbours send mass back), then the CVT and
    # the date (one edge each, the CVT fed by Film). Four nodes: Tom, USA, City, the CVT.
    (row,) = build(toy_url, [TOM], tmp_path, max_nodes=4)
    assert row["graph"] == [
        ["Tom", P["film"], "m.0cvt"],
        ["Tom", P["nat"], "USA"],
        ["Tom", P["pob"], "City"],
        ["Tom", P["lived"], "USA"],
    ]
    assert row["a_entity"] == ["State"] and row["ground_paths"] == []  # the answer was pruned away
    # Ties: from a fan, USA then Tom (two edges); the other fans and State hang off USA alike (State's
    # own edges lie beyond two hops): ids decide, m.0fan0 < m.0fan1 < ... < m.0s
    (fans,) = build(toy_url, [{**TOM, "q_entity": ["m.0fan3"], "a_entity": []}], tmp_path, "f.jsonl", max_nodes=5)
    assert {node for h, _, t in fans["graph"] for node in (h, t)} == {"m.0fan3", "USA", "Tom", "m.0fan0", "m.0fan1"}


def test_ids_keeps_ids_everywhere(toy_url: str, tmp_path: Path) -> None:
    (row,) = build(toy_url, [TOM], tmp_path, max_nodes=100, ids=True)
    assert row["q_entity"] == ["m.0t"] and row["a_entity"] == ["m.0s"] and row["answer"] == ["m.0s"]
    assert ["m.0t", P["dob"], "1956-07-09"] in row["graph"] and ["m.0c", P["in"], "m.0s"] in row["graph"]
    assert row["ground_paths"] == sorted([[P["nat"], P["in"]], [P["pob"], P["in"]], [P["lived"], P["in"]]])


def test_a_topic_that_is_also_an_answer_has_the_empty_path(toy_url: str, tmp_path: Path) -> None:
    (row,) = build(toy_url, [{**TOM, "a_entity": ["m.0t", "m.0c"], "answer": ["Tom himself", "x"]}], tmp_path)
    assert row["ground_paths"] == [[], [P["pob"]]]  # as networkx's all_shortest_paths(G, h, h) gives [h]
    assert row["answer"] == ["Tom himself", "x"]  # given answer names pass through


def test_a_hub_is_cut_by_the_budget_and_the_row_marked(toy_url: str, tmp_path: Path) -> None:
    hub = {**TOM, "q_entity": ["m.0u"], "a_entity": []}
    (whole,) = build(toy_url, [hub], tmp_path, "w.jsonl")
    (cut,) = build(toy_url, [hub], tmp_path, "c.jsonl", edges_per_node=3)
    (capped,) = build(toy_url, [hub], tmp_path, "m.jsonl", max_edges=4)
    assert not whole["truncated"] and cut["truncated"] and capped["truncated"]
    assert len(capped["graph"]) == 4 and 0 < len(cut["graph"]) < len(whole["graph"])
    assert {tuple(t) for t in cut["graph"]} < {tuple(t) for t in whole["graph"]}


def test_withholding_answers_changes_no_graph(sample_store_url: str, sample_questions: list[dict[str, Any]]) -> None:
    with_answers = rows_of(sample_store_url, sample_questions)
    without = rows_of(sample_store_url, [{k: v for k, v in q.items() if k != "a_entity"} for q in sample_questions])
    assert [row["graph"] for row in with_answers] == [row["graph"] for row in without]
    assert all(row["a_entity"] == [] and row["ground_paths"] == [] for row in without)


# -- the bundled FB15k-237 sample ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample_questions(sample_store_url: str) -> list[dict[str, Any]]:
    with connect(sample_store_url) as kg:
        questions = generate_questions(kg, 24, hops=(1, 2), seed=5)
    assert len(questions) == 24
    return questions


_built: dict[tuple[str, str], list[dict[str, Any]]] = {}


def rows_of(url: str, questions: list[dict[str, Any]], **options: Any) -> list[dict[str, Any]]:
    """Rows built once per (KG, questions, options) in this module."""
    import tempfile

    key = (url, json.dumps([questions, options], sort_keys=True))
    if key not in _built:
        with tempfile.TemporaryDirectory() as tmp:
            _built[key] = build(url, questions, Path(tmp), max_nodes=60, **options)
    return _built[key]


def rog_truth_relation_paths(graph: list[list[str]], q_entity: list[str], a_entity: list[str]) -> set[tuple[str, ...]]:
    """RoG's build_graph + get_truth_paths (src/utils/graph_utils.py), relation sequences as its
    training data takes them."""
    rog_graph = rog_original.build_graph((h, r, t) for h, r, t in graph)
    return {tuple(r for _, r, _ in path) for path in rog_original.get_truth_paths(q_entity, a_entity, rog_graph)}


def multigraph_relation_paths(graph: list[list[str]], q_entity: list[str], a_entity: list[str]) -> set[tuple[str, ...]]:
    """The same over a MultiGraph: every relation between a pair gives its own sequence."""
    g: nx.MultiGraph[str] = nx.MultiGraph()
    between: dict[frozenset[str], set[str]] = defaultdict(set)
    for h, r, t in graph:
        g.add_edge(h, t)
        between[frozenset((h, t))].add(r)
    found: set[tuple[str, ...]] = set()
    for h, t in itertools.product(q_entity, a_entity):
        if h in g and t in g:
            with contextlib.suppress(nx.NetworkXNoPath):
                for p in nx.all_shortest_paths(g, h, t):
                    steps = [sorted(between[frozenset((p[i], p[i + 1]))]) for i in range(len(p) - 1)]
                    found.update(itertools.product(*steps))
    return found


def test_ground_paths_are_rogs_truth_paths_on_every_row(
    sample_store_url: str, sample_questions: list[dict[str, Any]]
) -> None:
    rows = rows_of(sample_store_url, sample_questions)
    with_paths = 0
    for row in rows:
        ours = {tuple(path) for path in row["ground_paths"]}
        assert len(ours) == len(row["ground_paths"])  # deduplicated
        assert rog_truth_relation_paths(row["graph"], row["q_entity"], row["a_entity"]) <= ours, row["id"]
        assert multigraph_relation_paths(row["graph"], row["q_entity"], row["a_entity"]) == ours, row["id"]
        with_paths += bool(ours)
    assert with_paths >= 15  # 60 nodes prune some answers away; most rows keep one
    # the generating relation path of a 1-hop question is among its ground paths whenever it is shortest
    for question, row in zip(sample_questions, rows, strict=True):
        if question["hops"] == 1 and row["ground_paths"]:
            assert question["relation_path"] in row["ground_paths"]


def oracle_pagerank(edges: Sequence[tuple[str, str, Any]], seeds: Sequence[str]) -> dict[Any, float]:
    """Personalised PageRank by dictionaries: undirected, one step per triple end, converged."""
    neighbours: dict[Any, list[Any]] = defaultdict(list)
    for head, _, tail in edges:
        neighbours[head].append(tail)
        neighbours[tail].append(head)
    nodes = set(neighbours) | set(seeds)
    restart = {node: (1.0 / len(set(seeds)) if node in seeds else 0.0) for node in nodes}
    score = dict(restart)
    for _ in range(60):
        spread = {node: RESTART * restart[node] for node in nodes}
        for node, others in neighbours.items():
            for other in others:
                spread[other] += (1 - RESTART) * score[node] / len(others)
        score = spread
    return score


def test_pruning_keeps_the_top_pagerank_nodes(sample_store_url: str, sample_questions: list[dict[str, Any]]) -> None:
    rows = rows_of(sample_store_url, sample_questions, ids=True)
    with connect(sample_store_url) as kg:
        for question, row in zip(sample_questions, rows, strict=True):
            walked = [edge.as_tuple() for edge in kg.subgraph(question["q_entity"], hops=2, direction="both")]
            score = oracle_pagerank(walked, question["q_entity"])
            kept = {node for h, _, t in row["graph"] for node in (h, t)}
            dropped = set(score) - kept - set(question["q_entity"])
            assert len(kept) <= 60
            if dropped:
                assert len(kept) == 60 or not row["graph"]
                assert min(score[node] for node in kept) >= max(score[node] for node in dropped) - 1e-9, row["id"]
            expected = sorted({(h, r, t) for h, r, t in walked if h in kept and t in kept})
            assert sorted(tuple(t) for t in row["graph"]) == expected, row["id"]
            # and the library's own scores agree with the oracle's
            nodes, scores = personalized_pagerank(kg.subgraph(question["q_entity"], hops=2), question["q_entity"])
            assert all(abs(score[n] - s) < 1e-9 for n, s in zip(nodes, scores, strict=True))


def test_the_default_size_keeps_an_answer_for_most_two_hop_questions(sample_store_url: str, tmp_path: Path) -> None:
    with connect(sample_store_url) as kg:
        questions = generate_questions(kg, 40, hops=(2,), seed=9)
    report = build_dataset(
        sample_store_url, write_questions(tmp_path / "q.jsonl", questions), tmp_path / "o.jsonl", progress=False
    )
    assert report.with_answers == len(questions) >= 30
    assert report.coverage is not None and report.coverage >= 0.9


def test_output_formats_hold_the_same_rows(
    sample_store_url: str, sample_questions: list[dict[str, Any]], tmp_path: Path
) -> None:
    expected = rows_of(sample_store_url, sample_questions)
    for name in ("rows.jsonl.gz", "rows.parquet"):
        assert build(sample_store_url, sample_questions, tmp_path, name, max_nodes=60) == expected
    with gzip.open(tmp_path / "rows.jsonl.gz", "rt", encoding="utf-8") as handle:
        assert [json.loads(line) for line in handle] == expected
    # a Parquet file in RoG's layout (with ids) is input too, and gives the same rows
    with_ids = build(sample_store_url, sample_questions, tmp_path, "ids.parquet", max_nodes=60, ids=True)
    again = tmp_path / "again.jsonl"
    build_dataset(sample_store_url, tmp_path / "ids.parquet", again, max_nodes=60, progress=False, ids=True)
    assert [{**row, "answer": []} for row in read_output(again)] == [{**row, "answer": []} for row in with_ids]


def test_workers_and_grouping_change_nothing(
    sample_store_url: str, sample_questions: list[dict[str, Any]], tmp_path: Path
) -> None:
    questions = write_questions(tmp_path / "q.jsonl", sample_questions)
    outputs = []
    for n, options in enumerate(
        [{}, {"workers": 2}, {"group_size": 1, "batch_size": 1}, {"group_size": 5, "workers": 3, "batch_size": 7}]
    ):
        out = tmp_path / f"out{n}.jsonl"
        build_dataset(sample_store_url, questions, out, max_nodes=60, progress=False, **options)  # type: ignore[arg-type]
        outputs.append(out.read_bytes())
    assert len(set(outputs)) == 1


# -- the same rows from other backends -----------------------------------------------------------------


@pytest.fixture(scope="module")
def served_sample(sample_store_url: str) -> Iterator[str]:
    port = free_port()
    with running(["serve", "--kg", sample_store_url, "--port", str(port)], port):
        yield f"sparql+http://127.0.0.1:{port}/sparql?profile=freebase&dialect=oxigraph&retries=0"


def test_same_rows_through_kga_serve(
    sample_store_url: str, served_sample: str, sample_questions: list[dict[str, Any]], tmp_path: Path
) -> None:
    pytest.importorskip("starlette")
    local, remote = tmp_path / "local.jsonl", tmp_path / "remote.jsonl"
    questions = write_questions(tmp_path / "q.jsonl", sample_questions)
    build_dataset(sample_store_url, questions, local, max_nodes=60, progress=False)
    done = kga("dataset", "build", "--kg", served_sample, "--questions", str(questions), "--out", str(remote),
               "--max-nodes", "60", "--group-size", "7", "--batch-size", "50")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert remote.read_bytes() == local.read_bytes()
    assert b'"truncated": false' in remote.read_bytes()


def test_an_endpoint_that_goes_away_mid_build_resumes_when_it_is_back(
    sample_store_url: str, sample_questions: list[dict[str, Any]], tmp_path: Path
) -> None:
    """The endpoint stops after the first group is committed: the build fails with the backend's
    typed error and keeps its checkpoint; the same call, once the endpoint is back on its port,
    builds only the rest and writes the same bytes as a build that was never interrupted."""
    pytest.importorskip("starlette")
    from kg_adapters.errors import BackendError

    questions, reference, out = (
        write_questions(tmp_path / "q.jsonl", sample_questions),
        tmp_path / "r.jsonl",
        tmp_path / "o.jsonl",
    )
    build_dataset(sample_store_url, questions, reference, max_nodes=60, progress=False)
    port = free_port()
    url = f"sparql+http://127.0.0.1:{port}/sparql?profile=freebase&dialect=oxigraph&retries=0"
    options: dict[str, Any] = {"max_nodes": 60, "group_size": 5, "progress": False}
    with running(["serve", "--kg", sample_store_url, "--port", str(port)], port) as server:

        def stop_the_endpoint(point: str) -> None:
            if point == "commit:1":
                server.terminate()
                server.wait(timeout=60)

        with pytest.raises(BackendError):
            build_dataset(url, questions, out, checkpoint=stop_the_endpoint, **options)
    assert not out.exists() and (tmp_path / ".o.jsonl.kga-build" / "state.sqlite").is_file()
    with running(["serve", "--kg", sample_store_url, "--port", str(port)], port):
        report = build_dataset(url, questions, out, **options)
    assert report.runs == 2 and report.built_now == len(sample_questions) - 5
    assert out.read_bytes() == reference.read_bytes()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["o.jsonl", "q.jsonl", "r.jsonl"]


def test_credentials_in_the_kg_url_stay_out_of_the_checkpoint_and_the_output(
    served_sample: str, sample_questions: list[dict[str, Any]], tmp_path: Path
) -> None:
    pytest.importorskip("starlette")
    url = served_sample.replace("http://", "http://reader:s3cret-pw@", 1)
    questions, out = write_questions(tmp_path / "q.jsonl", sample_questions), tmp_path / "out.jsonl"
    child = build_killed_at("commit:1", kg=url, questions=questions, out=out, max_nodes=60, group_size=5)
    assert child.returncode == -signal.SIGKILL, child.stderr
    work = tmp_path / ".out.jsonl.kga-build"
    assert all(b"s3cret" not in path.read_bytes() for path in work.iterdir())
    done = kga("dataset", "build", "--kg", url, "--questions", str(questions), "--out", str(out), "--max-nodes", "60",
               "--group-size", "5", "--json")  # fmt: skip
    assert done.returncode == 0 and json.loads(done.stdout)["runs"] == 2, done.stderr
    assert "s3cret" not in done.stdout + done.stderr and b"s3cret" not in out.read_bytes()


@pytest.fixture(scope="module")
def virtuoso(tmp_path_factory: pytest.TempPathFactory, request: Any) -> VirtuosoServer:
    return virtuoso_fixture(tmp_path_factory, [sample_path()], request=request)


def test_same_rows_from_virtuoso(
    virtuoso: VirtuosoServer, sample_store_url: str, sample_questions: list[dict[str, Any]], tmp_path: Path
) -> None:
    url = f"sparql+{virtuoso.sparql_url}?profile=freebase&dialect=virtuoso"
    assert build(url, sample_questions, tmp_path, max_nodes=60) == rows_of(sample_store_url, sample_questions)


# -- the output is RoG's: kga load and kga reason read it ------------------------------------------------


def kga(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kg_adapters.cli", *args], capture_output=True, text=True, timeout=600, check=False
    )


@pytest.mark.parametrize("name", ["rows.jsonl", "rows.parquet"])
def test_output_loads_back_and_reason_runs_per_question(
    sample_store_url: str, sample_questions: list[dict[str, Any]], tmp_path: Path, name: str
) -> None:
    questions, out, store = write_questions(tmp_path / "q.jsonl", sample_questions), tmp_path / name, tmp_path / "st"
    done = kga("dataset", "build", "--kg", sample_store_url, "--questions", str(questions), "--out", str(out),
               "--max-nodes", "60", "--progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "questions" in done.stderr and "<" in done.stderr  # the bar with its ETA
    assert "wrote 24 rows" in done.stdout
    assert kga("load", str(out), "--format", "rog-dataset", "--store", str(store)).returncode == 0
    results = tmp_path / "results.jsonl"
    done = kga("reason", "--kg", f"oxigraph://{store}", "--method", "rog", "--input", str(out), "--out", str(results),
               "--scope", "question")  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = {row["id"]: row for row in read_output(out)}
    answered = [json.loads(line) for line in results.read_text("utf-8").splitlines()]
    assert len(answered) == 24
    for line in answered:
        graph = {tuple(t) for t in rows[line["id"]]["graph"]}
        assert all(tuple(step) in graph for path in line["reasoning_paths"] for step in path)
    done = kga("eval", str(results), "--questions", str(out), "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["hits1"] > 0.5


# -- resuming -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("point", ["scanned", "checked", "commit:1", "commit:3", "written"])
def test_kill_9_then_the_same_command_finishes_identically(
    sample_store_url: str, sample_questions: list[dict[str, Any]], tmp_path: Path, point: str
) -> None:
    questions = write_questions(tmp_path / "q.jsonl", sample_questions)
    reference, out = tmp_path / "reference.jsonl", tmp_path / "out.jsonl"
    options = {"max_nodes": 60, "group_size": 5}
    build_dataset(sample_store_url, questions, reference, progress=False, **options)  # type: ignore[arg-type]
    child = build_killed_at(point, kg=sample_store_url, questions=questions, out=out, **options)
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert out.exists() == (point == "written")
    done = kga("dataset", "build", "--kg", sample_store_url, "--questions", str(questions), "--out", str(out),
               "--max-nodes", "60", "--group-size", "5", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == reference.read_bytes()
    assert json.loads(done.stdout)["runs"] == 2
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out.jsonl", "q.jsonl", "reference.jsonl"]


def test_other_arguments_against_an_unfinished_build(
    sample_store_url: str, sample_questions: list[dict[str, Any]], tmp_path: Path
) -> None:
    questions, out = write_questions(tmp_path / "q.jsonl", sample_questions), tmp_path / "out.jsonl"
    child = build_killed_at("commit:1", kg=sample_store_url, questions=questions, out=out, group_size=5)
    assert child.returncode == -signal.SIGKILL, child.stderr
    with pytest.raises(DatasetStateMismatch, match="settings"):
        build_dataset(sample_store_url, questions, out, max_nodes=7, progress=False)
    write_questions(questions, sample_questions[:-1])  # the input changed under the checkpoint
    with pytest.raises(DatasetStateMismatch, match="input"):
        build_dataset(sample_store_url, questions, out, group_size=5, progress=False)
    report = build_dataset(sample_store_url, questions, out, progress=False, restart=True)
    assert report.rows == len(sample_questions) - 1 and report.runs == 1
    # a checkpoint that is not a database (a disk fault) is refused, never read as a fresh start
    work = tmp_path / ".again.jsonl.kga-build"
    work.mkdir()
    (work / "state.sqlite").write_bytes(b"not a database" * 100)
    with pytest.raises(DatasetBuildError, match=r"cannot be read.*--restart"):
        build_dataset(sample_store_url, questions, tmp_path / "again.jsonl", progress=False)
    assert build_dataset(sample_store_url, questions, tmp_path / "again.jsonl", progress=False, restart=True).rows


# -- bad input ------------------------------------------------------------------------------------------

GOOD = {"id": "g", "question": "q?", "q_entity": ["m.0t"], "a_entity": ["m.0s"]}
BAD_ROWS: list[tuple[Any, type[BadQuestion], str]] = [
    ({"id": "a", "question": "q?"}, NoTopicEntity, "no q_entity"),
    ({"id": "a", "question": "q?", "q_entity": []}, NoTopicEntity, "no q_entity"),
    ({"id": "a", "question": "q?", "q_entity": None}, NoTopicEntity, "no q_entity"),
    ({"id": "g", "question": "again?", "q_entity": ["m.0t"]}, DuplicateQuestionId, "repeated (first at"),
    ({"id": "a", "question": "q?", "q_entity": ["m.0nope"]}, UnknownEntity, "no triple for m.0nope"),
    ({"id": "a", "question": "q?", "q_entity": ["m.0t"], "a_entity": ["m.0gone"]}, UnknownEntity, "m.0gone"),
    ({"id": "a", "question": "q?", "q_entity": ["not an id!"]}, BadQuestion, "malformed id"),
    ({"id": "a", "question": "q?", "q_entity": ["_:b1"]}, BadQuestion, "blank node"),
    ({"id": "a", "question": "q?", "q_entity": "m.0t"}, BadQuestion, "list of strings"),
    ({"id": "a", "question": "q?", "q_entity": [7]}, BadQuestion, "must be a string"),
    ({"id": "", "question": "q?", "q_entity": ["m.0t"]}, BadQuestion, "'id'"),
    ({"id": True, "question": "q?", "q_entity": ["m.0t"]}, BadQuestion, "'id'"),
    ({"id": "a", "q_entity": ["m.0t"]}, BadQuestion, "'question'"),
    ({"id": "a", "question": "\ud800", "q_entity": ["m.0t"]}, BadQuestion, "not valid Unicode"),
    ({"id": "a", "question": "q?", "q_entity": ["m.0t"], "answer": "State"}, BadQuestion, "'answer'"),
    (["a", "list"], BadQuestion, "must be an object"),
    ("{not json", BadQuestion, "not a JSON line"),
    ("[" * 100_000 + "]" * 100_000, BadQuestion, "nested too deeply"),
]


@pytest.mark.parametrize(("bad", "error", "reason"), BAD_ROWS, ids=[r for _, _, r in BAD_ROWS])
def test_a_bad_row_is_a_typed_error_naming_file_and_line(
    toy_url: str, tmp_path: Path, bad: Any, error: type[BadQuestion], reason: str
) -> None:
    questions = write_questions(tmp_path / "q.jsonl", [GOOD, bad, {**GOOD, "id": "h"}])
    out = tmp_path / "out.jsonl"
    with pytest.raises(error, match=re.escape(reason)) as raised:
        build_dataset(toy_url, questions, out, progress=False)
    assert raised.value.file == str(questions) and raised.value.line == 2
    assert str(raised.value).startswith(f"{questions}:2: ") and "<input>" not in str(raised.value)
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["q.jsonl"]  # no lock, no checkpoint
    report = build_dataset(toy_url, questions, out, progress=False, lenient=True)
    assert (report.questions, report.rows, report.skipped) == (3, 2, 1)
    assert report.skipped_rows[0].line == 2 and reason in report.skipped_rows[0].reason
    assert [row["id"] for row in read_output(out)] == ["g", "h"]


def test_ids_are_checked_in_batches_even_within_one_row(
    toy_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row naming more ids than one check asks about is checked in several calls, with the same result."""
    import loaders.dataset_build

    many = {**TOM, "q_entity": ["m.0t", "m.0u", "m.0d"], "a_entity": ["m.0s", "m.0c", "m.0f"]}
    expected = build(toy_url, [many, GOOD], tmp_path, "whole.jsonl")
    monkeypatch.setattr(loaders.dataset_build, "CHECK_IDS", 2)
    assert build(toy_url, [many, GOOD], tmp_path, "batched.jsonl") == expected
    with pytest.raises(UnknownEntity, match=r"m\.0gone") as raised:
        build(toy_url, [GOOD, {**many, "a_entity": ["m.0s", "m.0c", "m.0f", "m.0gone"]}], tmp_path, "gone.jsonl")
    assert raised.value.line == 2 and raised.value.ids == ("m.0gone",)


def test_bad_rows_through_the_command_line(toy_url: str, tmp_path: Path) -> None:
    questions = write_questions(tmp_path / "q.jsonl", [GOOD, GOOD])
    out = tmp_path / "out.jsonl"
    done = kga("dataset", "build", "--kg", toy_url, "--questions", str(questions), "--out", str(out))
    assert done.returncode == 1 and f"{questions}:2: question id 'g' repeated" in done.stderr
    done = kga("dataset", "build", "--kg", toy_url, "--questions", str(questions), "--out", str(out), "--lenient")
    assert done.returncode == 0 and "skipped 1 bad row(s)" in done.stdout and f"{questions}:2:" in done.stdout
    done = kga("dataset", "build", "--kg", toy_url, "--questions", str(questions), "--out", str(out))
    assert done.returncode == 1 and "already exists; pass --overwrite" in done.stderr
    for bad in (["--max-nodes", "0"], ["--hops", "-1"], ["--workers", "x"]):
        done = kga("dataset", "build", "--kg", toy_url, "--questions", str(questions), "--out", str(out), *bad)
        assert done.returncode == 2, bad
    done = kga("dataset", "build", "--kg", toy_url, "--questions", str(tmp_path / "none.jsonl"), "--out", "o.jsonl")
    assert done.returncode == 1 and "none.jsonl" in done.stderr
    for json_first in (["dataset", "--json", "build"], ["dataset", "build", "--json"]):  # either place
        done = kga(*json_first, "--kg", toy_url, "--questions", str(questions), "--out", str(out), "--overwrite",
                   "--lenient")  # fmt: skip
        assert done.returncode == 0 and json.loads(done.stdout)["skipped"] == 1, json_first


def test_outputs_and_options_that_cannot_work(toy_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    questions = write_questions(tmp_path / "q.jsonl", [GOOD])
    with pytest.raises(DatasetBuildError, match="must end in"):
        build_dataset(toy_url, questions, tmp_path / "out.csv")
    existing = tmp_path / "existing.jsonl"
    existing.write_text("precious\n", "utf-8")
    with pytest.raises(DatasetBuildError, match="already exists"):
        build_dataset(toy_url, questions, existing, progress=False)
    assert existing.read_text("utf-8") == "precious\n"
    build_dataset(toy_url, questions, existing, progress=False, overwrite=True)
    assert [row["id"] for row in read_output(existing)] == ["g"]
    with pytest.raises(InvalidTermError, match="max_nodes"):
        build_dataset(toy_url, questions, tmp_path / "o.jsonl", max_nodes=0)
    with pytest.raises(DatasetBuildError, match="is the questions file"):
        build_dataset(toy_url, questions, questions, overwrite=True)
    assert questions.read_text("utf-8") == json.dumps(GOOD) + "\n"
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": ["a"], "question": ["q?"]}), tmp_path / "no-topics.parquet")
    with pytest.raises(LoadError, match="no 'q_entity' column"):
        build_dataset(toy_url, tmp_path / "no-topics.parquet", tmp_path / "o.jsonl")
    assert not (tmp_path / ".o.jsonl.kga-build").exists() and not (tmp_path / "o.jsonl").exists()
    with connect(toy_url) as kg, pytest.raises(TypeError, match="URL"):
        build_dataset(kg, questions, tmp_path / "o.jsonl", workers=2)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if the rog extra were not installed
    with pytest.raises(MissingDependency, match=r"pip install .*\[rog\]"):
        build_dataset(toy_url, questions, tmp_path / "o.parquet")


def test_budgets_at_their_largest_end_and_cut_nothing(toy_url: str, tmp_path: Path) -> None:
    """The largest count each budget takes (2**63 - 1) is a budget that cuts nothing, not an overflow
    in a backend's limit nor a walk that counts hops it never reaches."""
    largest = 2**63 - 1
    expected = build(toy_url, [TOM], tmp_path, "default.jsonl", hops=3)
    for name in ("hops", "edges_per_node", "max_edges", "max_nodes", "batch_size", "group_size"):
        options = {"hops": 3, name: largest}
        assert build(toy_url, [TOM], tmp_path, f"{name}.jsonl", **options) == expected, name
    assert ["Film", "film.film.country", "Far"] in expected[0]["graph"]  # three hops reach Far
    assert sorted(path.name for path in tmp_path.iterdir() if path.name.startswith(".")) == []


def test_a_kg_that_cannot_answer_leaves_nothing_behind(toy_url: str, tmp_path: Path) -> None:
    """An endpoint nobody listens on fails the check of the ids, before any row is built: its typed
    error comes through, and neither a checkpoint, a lock nor the output's new directories stay."""
    from kg_adapters.errors import BackendError

    questions, out = write_questions(tmp_path / "q.jsonl", [TOM]), tmp_path / "new" / "dir" / "out.jsonl"
    url = f"sparql+http://127.0.0.1:{free_port()}/sparql?profile=freebase&retries=0"
    with pytest.raises(BackendError, match="connection to"):
        build_dataset(url, questions, out, progress=False)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["q.jsonl"]
    build_dataset(toy_url, questions, out, progress=False)  # a KG that answers: the directories are made
    assert [row["id"] for row in read_output(out)] == ["q1"] and [p.name for p in out.parent.iterdir()] == ["out.jsonl"]


def test_two_builds_of_one_output_never_interleave(toy_url: str, tmp_path: Path) -> None:
    questions, out = write_questions(tmp_path / "q.jsonl", [TOM]), tmp_path / "out.jsonl"
    refused: list[str] = []

    def second_build(point: str) -> None:
        if point == "checked":  # the first build holds the output's lock here
            with pytest.raises(DatasetBuildError, match="another build") as raised:
                build_dataset(toy_url, questions, out, progress=False)
            refused.append(str(raised.value))

    build_dataset(toy_url, questions, out, progress=False, checkpoint=second_build)
    assert len(refused) == 1 and [row["id"] for row in read_output(out)] == ["q1"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out.jsonl", "q.jsonl"]
    build_dataset(toy_url, questions, out, progress=False, overwrite=True)  # the lock is free again


def test_ctrl_c_keeps_the_committed_rows_and_the_same_command_resumes(
    sample_store_url: str, sample_questions: list[dict[str, Any]], tmp_path: Path
) -> None:
    import os
    import sqlite3

    many = [{**q, "id": f"{q['id']}-{n}"} for n in range(10) for q in sample_questions]
    questions, out, reference = (
        write_questions(tmp_path / "q.jsonl", many),
        tmp_path / "out.jsonl",
        tmp_path / "r.jsonl",
    )
    build_dataset(sample_store_url, questions, reference, max_nodes=60, group_size=2, progress=False)
    argv = ["dataset", "build", "--kg", sample_store_url, "--questions", str(questions), "--out", str(out),
            "--max-nodes", "60", "--group-size", "2", "--workers", "2"]  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-m", "kg_adapters.cli", *argv], stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    state = tmp_path / ".out.jsonl.kga-build" / "state.sqlite"
    built = 0
    while built < 4 and process.poll() is None:  # until a few groups are committed
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=0.05)  # the pause between polls doubles as an exit check
        with (
            contextlib.suppress(sqlite3.Error),
            contextlib.closing(sqlite3.connect(f"file:{state}?mode=ro", uri=True)) as db,
        ):
            built = db.execute("SELECT COUNT(*) FROM questions WHERE row IS NOT NULL").fetchone()[0]
    os.killpg(process.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground process group
    _, err = process.communicate(timeout=300)
    assert process.returncode == 130, err
    assert "run the same command again to resume" in err and "Traceback" not in err
    assert not out.exists() and state.is_file()
    done = kga(*argv, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["runs"] == 2 and 0 < report["built_now"] < len(many)
    assert out.read_bytes() == reference.read_bytes()


def test_a_wikidata_graph_opened_as_an_object(tmp_path: Path) -> None:
    """Any KG object (here an in-memory Wikidata-shaped store): names from ``labels``, P-ids as relations."""
    from support.sample_store import open_wikidata_mini

    with open_wikidata_mini(tmp_path) as kg:
        question = {"id": "w", "question": "where was douglas adams born?", "q_entity": ["Q42"], "a_entity": ["Q350"]}
        out = tmp_path / "w.jsonl"
        report = build_dataset(kg, write_questions(tmp_path / "q.jsonl", [question]), out, progress=False)
        (row,) = read_output(out)
    assert report.covered == 1
    assert row["q_entity"] == ["Douglas Adams"] and row["a_entity"] == ["Cambridge"]
    assert sorted(map(tuple, row["graph"])) == [
        ("Cambridge", "P17", "United Kingdom"),
        ("Douglas Adams", "P19", "Cambridge"),
        ("Douglas Adams", "P27", "United Kingdom"),
        ("Douglas Adams", "P31", "human"),
    ]
    assert row["ground_paths"] == [["P19"]]


names = st.sampled_from(["a", "b", "c", "d", "e", "f", "1961"])
relations = st.sampled_from(["r", "s", "t"])


@given(
    graph=st.lists(st.tuples(names, relations, names), max_size=14),
    q_entity=st.lists(names, min_size=1, max_size=2),
    a_entity=st.lists(names, max_size=3),
)
def test_ground_paths_match_networkx_on_any_small_graph(
    graph: list[Triple], q_entity: list[str], a_entity: list[str]
) -> None:
    """Self-loops, repeated triples, a pair joined both ways and by several relations, a topic that is
    an answer, names missing from the graph: RoG's sequences are always among ours, and ours are
    exactly those of every shortest path of the multigraph."""
    paths, cut = ground_paths(graph, q_entity, a_entity)
    ours = set(paths)
    assert not cut and len(ours) == len(paths) and paths == sorted(ours, key=lambda p: (len(p), p))
    rows = [list(triple) for triple in graph]
    assert rog_truth_relation_paths(rows, q_entity, a_entity) <= ours
    assert multigraph_relation_paths(rows, q_entity, a_entity) == ours


def test_same_rows_from_the_rdflib_backend(toy_url: str, tmp_path: Path) -> None:
    toy = write_toy(tmp_path / "toy.nt")
    rows = [TOM, {**TOM, "id": "q2", "q_entity": ["m.0u", "m.0d"]}, {**TOM, "id": "q3", "q_entity": ["m.0cvt"]}]
    for size in (5, 1000):
        store = build(toy_url, rows, tmp_path, f"store-{size}.jsonl", max_nodes=size)
        assert (
            build(f"rdflib://{toy}?profile=freebase", rows, tmp_path, f"rdflib-{size}.jsonl", max_nodes=size) == store
        )
