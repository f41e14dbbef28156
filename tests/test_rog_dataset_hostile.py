"""Hostile RoG dataset files: ``kga load --format rog-dataset`` gives a typed error naming the file
and row (or, with ``--lenient``, skips the row) and never leaves a half-loaded store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.rog_files import ROWS, write_jsonl, write_parquet

from kg_adapters import connect
from kg_adapters.backends.oxigraph import OxigraphGraph
from kg_adapters.errors import LoadError
from loaders import load_files


def test_a_line_that_is_not_json_is_a_bad_row(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    good = [json.dumps(row, ensure_ascii=False).encode() for row in ROWS]
    path.write_bytes(b"\n".join([good[0], b"not json {", b'{"id": "x", "graph": [["\xff\xfe", "r", "t"]]}', *good[1:]]))
    with pytest.raises(LoadError) as caught:
        load_files([str(path)], str(tmp_path / "strict"), format="rog-dataset")
    assert caught.value.line == 2 and "not a JSON line" in str(caught.value)
    assert not (tmp_path / "strict").exists()
    report = load_files([str(path)], str(tmp_path / "lenient"), format="rog-dataset", lenient=True)
    assert [skipped.line for skipped in report.skipped] == [2, 3]
    assert report.statements_read == 8


def test_a_row_without_a_graph_is_bad(tmp_path: Path) -> None:
    """A questions-only file loaded as a dataset would silently add nothing."""
    path = write_jsonl(tmp_path / "rows.jsonl", [{k: v for k, v in row.items() if k != "graph"} for row in ROWS])
    with pytest.raises(LoadError, match="no 'graph'") as caught:
        load_files([str(path)], str(tmp_path / "store"), format="rog-dataset")
    assert caught.value.line == 1
    nulls = write_jsonl(tmp_path / "nulls.jsonl", [{**ROWS[0], "graph": None}])  # null: a question with no subgraph
    assert load_files([str(nulls)], str(tmp_path / "nulls-store"), format="rog-dataset").statements_read == 0


@pytest.mark.parametrize("column", ["graph", "id"])
def test_parquet_without_a_required_column_is_refused(tmp_path: Path, column: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{k: v for k, v in row.items() if k != column} for row in ROWS]
    path = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    with pytest.raises(LoadError, match=f"no '{column}' column") as caught:
        load_files([str(path)], str(tmp_path / "store"))
    assert caught.value.file == str(path)
    assert not (tmp_path / "store").exists()


def test_parquet_with_extra_columns_in_another_order(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"extra": 1, **dict(reversed(list(row.items())))} for row in ROWS]
    path = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    assert load_files([str(path)], str(tmp_path / "store")).statements_read == 8


def test_a_second_file_appends_and_a_bad_one_changes_nothing(tmp_path: Path) -> None:
    store = tmp_path / "store"
    load_files([str(write_jsonl(tmp_path / "a.jsonl", ROWS[:1]))], str(store), format="rog-dataset")
    load_files([str(write_parquet(tmp_path / "b.parquet", ROWS[1:]))], str(store))
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"id": "new", "graph": [["Passaic", "r", "x"]]}, {"id": "q"}])
    with pytest.raises(LoadError):
        load_files([str(bad)], str(store), format="rog-dataset")
    with connect(f"oxigraph://{store}") as kg:
        relations = kg.relations(["Passaic"], direction="both")["Passaic"]
        assert sorted(relations) == ["location.location.containedby", "people.person.place_of_birth"]
        assert [e.as_tuple() for e in kg.neighbors("New Jersey", direction="out")["New Jersey"]] == [
            ("New Jersey", "location.location.containedby", "United States of America")
        ]


@pytest.mark.parametrize(
    "args",
    [
        ["eval", "{missing}.jsonl"],
        ["eval", "{results}", "--questions", "{missing}.jsonl"],
        ["eval", "{results}", "--questions", "{corrupt}"],
        ["reason", "--kg", "oxigraph://{store}", "--method", "rog", "--input", "{missing}.jsonl", "--out", "{results}"],
    ],
)
def test_missing_or_corrupt_input_files_are_typed_errors(tmp_path: Path, args: list[str]) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text('{"id": "WebQTest-1", "prediction": []}\n', "utf-8")
    corrupt = tmp_path / "rows.jsonl.gz"
    corrupt.write_bytes(b"not gzip")
    load_files([str(write_jsonl(tmp_path / "rows.jsonl"))], str(tmp_path / "store"), format="rog-dataset")
    where = {"missing": tmp_path / "missing", "results": results, "corrupt": corrupt, "store": tmp_path / "store"}
    argv = [arg.format(**where) for arg in args]
    done = subprocess.run([sys.executable, "-m", "kg_adapters.cli", *argv], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert done.stderr.startswith("kga: error: ") and "Traceback" not in done.stderr, done.stderr


def test_compressed_jsonl_loads_as_the_plain_file(tmp_path: Path) -> None:
    import gzip

    plain = write_jsonl(tmp_path / "rows.jsonl")
    packed = tmp_path / "rows.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert load_files([str(packed)], str(tmp_path / "store"), format="rog-dataset").statements_read == 8
    with connect(f"oxigraph://{tmp_path / 'store'}") as kg:
        assert kg.labels(["Zoë Saldaña"]) == {"Zoë Saldaña": "Zoë Saldaña"}


def test_a_repeated_question_id_is_a_bad_row_as_kga_reason_says(tmp_path: Path) -> None:
    """RoG's files have unique ids; a repeat is a mistake, refused by ``kga load`` as by ``kga reason``
    (merging it would give the first question the other's triples under ``--scope question``)."""
    from kg_adapters.profiles.names import question_graph_iri

    repeat = {**ROWS[1], "id": ROWS[0]["id"], "graph": [["Elsewhere", "people.person.place_of_birth", "Nowhere"]]}
    path = write_jsonl(tmp_path / "rows.jsonl", [*ROWS, repeat])
    with pytest.raises(LoadError, match=r"question id 'WebQTest-1' repeated \(first at .*rows.jsonl:1\)") as caught:
        load_files([str(path)], str(tmp_path / "strict"), format="rog-dataset")
    assert (caught.value.file, caught.value.line) == (str(path), 4)
    assert not (tmp_path / "strict").exists()
    reason = ["reason", "--kg", "oxigraph://", "--method", "rog", "--input", str(path), "--out", str(tmp_path / "o")]
    done = subprocess.run(
        [sys.executable, "-m", "kg_adapters.cli", *reason],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0 and "'WebQTest-1' repeated" in done.stderr and f"{path}:4" in done.stderr

    report = load_files([str(path)], str(tmp_path / "lenient"), format="rog-dataset", lenient=True)
    assert [(skipped.line, "repeated" in skipped.reason) for skipped in report.skipped] == [(4, True)]
    load_files([str(write_jsonl(tmp_path / "clean.jsonl", ROWS))], str(tmp_path / "clean"), format="rog-dataset")
    first = (
        f"SELECT ?s ?p ?o WHERE {{ GRAPH <{question_graph_iri(str(ROWS[0]['id']))}> {{ ?s ?p ?o }} }} ORDER BY ?s ?p ?o"
    )
    answers = []
    for store in ("lenient", "clean"):
        with connect(f"oxigraph://{tmp_path / store}") as kg:
            assert isinstance(kg, OxigraphGraph)
            answers.append(kg.query(first))
            assert kg.search("Elsewhere") == []
    assert answers[0] == answers[1] != []  # the first question's subgraph, nothing of the repeat

    # in a later load into the same store too
    with pytest.raises(LoadError, match="'WebQTest-1' is already in the store") as caught:
        load_files(
            [str(write_jsonl(tmp_path / "later.jsonl", [repeat]))], str(tmp_path / "clean"), format="rog-dataset"
        )
    assert caught.value.line == 1

    # across the files of one load too: the same id in a second shard
    shard = write_jsonl(tmp_path / "shard2.jsonl", [repeat])
    with pytest.raises(LoadError, match="repeated") as caught:
        load_files(
            [str(write_jsonl(tmp_path / "shard1.jsonl", ROWS)), str(shard)], str(tmp_path / "two"), format="rog-dataset"
        )
    assert (caught.value.file, caught.value.line) == (str(shard), 1)


# -- a row of any size is read in bounded memory ---------------------------------------------------------
MILLION = 1_000_000
PEAK_BOUND = 700 << 20
"""Generous: reading the row whole took 1.57 GB for a million triples (and aborted at three million)."""


@pytest.mark.parametrize("kind", ["parquet", "jsonl.gz"])
def test_a_million_triple_row_loads_in_bounded_memory(tmp_path: Path, kind: str) -> None:
    from loaders.testing.huge_rows import TRIPLE, peak_memory, write_jsonl_row, write_parquet_row

    source = tmp_path / f"huge.{kind}"
    (write_parquet_row if kind == "parquet" else write_jsonl_row)(source, MILLION)
    store = tmp_path / "store"
    status, peak, error = peak_memory(
        [sys.executable, "-m", "kg_adapters.cli", "load", str(source), "--format", "rog-dataset", "--store", str(store)]
    )
    assert status == 0, error
    assert peak < PEAK_BOUND, f"peak resident memory {peak >> 20} MiB"
    with connect(f"oxigraph://{store}") as kg:
        head, relation, tail = TRIPLE
        assert [edge.tail for edge in kg.neighbors(head, relations=[relation])[head]] == [tail]


def test_a_huge_row_with_one_bad_triple_adds_nothing(tmp_path: Path) -> None:
    """Checked whole before any of it is stored, although it is held partly on disk (past SPILL_TRIPLES)."""
    from loaders.rog_dataset_rows import SPILL_TRIPLES
    from loaders.testing.huge_rows import write_jsonl_row

    source = tmp_path / "rows.jsonl.gz"
    write_jsonl_row(source, SPILL_TRIPLES + 5_000, bad_last=True)
    good = tmp_path / "good.jsonl"
    write_jsonl(good, ROWS[:1])
    report = load_files([str(source), str(good)], str(tmp_path / "store"), format="rog-dataset", lenient=True)
    assert [(skipped.file, skipped.line) for skipped in report.skipped] == [(str(source), 1)]
    assert "graph[" in report.skipped[0].reason
    with connect(f"oxigraph://{tmp_path / 'store'}") as kg:
        assert kg.search("Barack Obama", limit=1) == []  # nothing of the huge row, not even its names
        assert kg.neighbors("Zoë Saldaña", relations=["people.person.place_of_birth"])["Zoë Saldaña"]


def test_a_parquet_row_too_large_to_decode_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loaders import rog_dataset_rows
    from loaders.testing.huge_rows import write_parquet_row

    monkeypatch.setattr(rog_dataset_rows, "MAX_DECODED_VALUES", 3_000)  # a small budget stands for a huge row
    source = tmp_path / "huge.parquet"
    write_parquet_row(source, 2_000)
    with pytest.raises(LoadError, match="more than a load decodes at once") as raised:
        load_files([str(source)], str(tmp_path / "store"), format="rog-dataset")
    assert (raised.value.file, raised.value.line) == (str(source), 1)
    assert not (tmp_path / "store").exists()
