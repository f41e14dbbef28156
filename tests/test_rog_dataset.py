"""``kga load --format rog-dataset``: RoG's dataset files (Parquet and JSONL, written here in the
published schema) into a real on-disk store, driven through the real ``kga`` process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.rog_files import CVT, ROWS, write_jsonl, write_parquet

from kg_adapters import connect
from kg_adapters.base import SparqlQueryable
from kg_adapters.errors import LoadError
from kg_adapters.extras import install_command
from kg_adapters.profiles.names import question_graph_iri
from loaders import load_files


def kga(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kg_adapters.cli", *args], capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture(params=["jsonl", "parquet"])
def dataset(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    if request.param == "jsonl":
        return write_jsonl(tmp_path / "test.jsonl")
    return write_parquet(tmp_path / "test-00000-of-00001.parquet")


def every_triple() -> set[tuple[str, str, str]]:
    return {tuple(t) for row in ROWS for t in row["graph"]}


def test_load_keeps_names_and_questions(dataset: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    fmt = [] if dataset.suffix == ".parquet" else ["--format", "rog-dataset"]  # .parquet is recognised
    done = kga("load", str(dataset), *fmt, "--store", str(store), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["statements_read"] == sum(len(row["graph"]) for row in ROWS) == 8
    with connect(f"oxigraph://{store}") as kg:  # the manifest says: names profile
        assert kg.profile.name == "names"
        # the default graph: every distinct triple once, in the file's own strings
        union = kg.subgraph(["Zoë Saldaña", "New Jersey", "Nobody"], hops=3)
        assert {edge.as_tuple() for edge in union} == every_triple()
        edges = kg.neighbors('Avatar: "The Way of Water"', direction="in")['Avatar: "The Way of Water"']
        assert [edge.as_tuple() for edge in edges] == [(CVT, "film.performance.film", 'Avatar: "The Way of Water"')]
        # names are labels (search finds them); the CVT id is not a name, so it is described instead
        assert [entity.id for entity in kg.search('Dwayne "The Rock" Johnson')] == ['Dwayne "The Rock" Johnson']
        assert kg.search(CVT) == []
        assert kg.labels(["Passaic"]) == {"Passaic": "Passaic"}
        # each question's own triples in its named graph; the shared triple in both
        assert isinstance(kg, SparqlQueryable)
        for row in ROWS:
            rows = kg.query(
                "SELECT ?s ?p ?o WHERE { GRAPH <"
                + question_graph_iri(str(row["id"]))
                + "> { ?s ?p ?o FILTER(isIRI(?o)) } }"
            )
            found = {
                (
                    kg.profile.entity_id(str(r["s"])),
                    kg.profile.relation_id(str(r["p"])),
                    kg.profile.entity_id(str(r["o"])),
                )
                for r in rows
            }
            assert found == {tuple(t) for t in row["graph"]}, row["id"]


def test_bad_rows(tmp_path: Path) -> None:
    rows = [*ROWS[:1], {"id": "bad", "graph": [["only", "two"]]}, {"id": "", "graph": []}, *ROWS[1:]]
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(LoadError) as caught:
        load_files([str(path)], str(tmp_path / "strict"), format="rog-dataset")
    assert caught.value.line == 2 and "graph[0]" in str(caught.value)
    assert not (tmp_path / "strict").exists()  # nothing half-loaded
    report = load_files([str(path)], str(tmp_path / "lenient"), format="rog-dataset", lenient=True)
    assert report.lines_skipped == 2 and [s.line for s in report.skipped] == [2, 3]
    assert report.statements_read == 8
    parquet = write_parquet(tmp_path / "p.parquet", [{**ROWS[0], "graph": [["a", "", "b"]]}])
    with pytest.raises(LoadError, match="non-empty"):
        load_files([str(parquet)], str(tmp_path / "p"))
    with pytest.raises(LoadError, match="names profile"):
        load_files([str(parquet)], str(tmp_path / "p"), profile="freebase")
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(LoadError, match="Parquet"):
        load_files([str(tmp_path / "broken.parquet")], str(tmp_path / "b"))


def test_parquet_without_pyarrow_names_the_install_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parquet = write_parquet(tmp_path / "p.parquet")
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # as if the rog extra were not installed
    with pytest.raises(LoadError, match=re.escape(install_command("rog"))):  # this installation's source
        load_files([str(parquet)], str(tmp_path / "store"))
    assert not (tmp_path / "store").exists()
    jsonl = write_jsonl(tmp_path / "rows.jsonl")  # JSONL needs no extra
    assert load_files([str(jsonl)], str(tmp_path / "store"), format="rog-dataset").statements_read == 8


def test_name_index_holds_each_name_once(tmp_path: Path) -> None:
    """A name in several questions' subgraphs is one row of the name index, not one per question."""
    from kg_adapters import store_layout

    path = write_jsonl(tmp_path / "rows.jsonl")
    load_files([str(path)], str(tmp_path / "store"), format="rog-dataset")
    manifest = store_layout.read_manifest(tmp_path / "store")
    names = {name for row in ROWS for h, _, t in row["graph"] for name in (h, t) if not name.startswith("m.")}
    assert manifest["labels"] == len(names) == 6  # was 15: every question's copy indexed again
