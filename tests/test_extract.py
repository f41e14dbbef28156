"""``kga extract`` / ``extract_subgraph`` on real stores: from the embedded store (the conformance
graph and FB15k-237) and from a real Virtuoso; the output store answers like the source for the
seeds; deduplication; resume after a real ``kill -9`` of a ``kga extract`` process; typed errors."""

from __future__ import annotations

import gzip
import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest

import kg_adapters
from kg_adapters import connect, store_layout
from kg_adapters.base import Ids, KnowledgeGraph, forwards
from kg_adapters.cli import main
from kg_adapters.errors import InvalidTermError, StoreNotFound, UnknownBackendError
from kg_adapters.index.layout import index_dir
from kg_adapters.records import Edge, Literal
from kg_adapters.testing.graph import AGE, BORN, R1, R2, R3, A, B, C, D, S, X, write_graph
from kg_adapters.testing.virtuoso import VirtuosoServer, virtuoso_fixture
from kg_adapters.testing.wikidata_graph import write_wikidata_graph
from kg_adapters.wrappers.counting import CountingKG
from loaders import load_files
from loaders.errors import ExtractError, ExtractStateMismatch, UnknownSeeds
from loaders.extract import extract_subgraph, store_snapshot
from loaders.indexing import index_store
from loaders.testing.kill import extract_killed_at
from loaders.testing.malformed_dumps import debris
from loaders.work_state import STATE_FILE

REPO_ROOT = Path(__file__).resolve().parents[1]
FB_SEEDS = ["m.0bxtg", "m.06pj8"]  # Tom Hanks, Steven Spielberg


def url(store: Path, profile: str | None = None) -> str:
    return f"oxigraph://{store}" + (f"?profile={profile}" if profile else "")


@pytest.fixture(scope="module")
def conformance_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("extract-conformance")
    store = directory / "source"
    load_files([str(write_graph(directory))], str(store), progress=False)
    return store


@pytest.fixture(scope="module")
def fb_store(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    store = tmp_path_factory.mktemp("extract-fb15k") / "source"
    load_files([str(shared_data / "fb15k237-freebase.nt.gz")], str(store), profile="freebase", progress=False)
    return store


def same_answers(
    source: KnowledgeGraph, output: KnowledgeGraph, seeds: list[str], hops: int, direction: str, *, every: int = 1
) -> list[Edge]:
    """The output store answers the source's k-hop questions about the seeds identically (names
    compared for every ``every``-th reached entity: labels() of 10,000 ids takes seconds)."""
    sub = source.subgraph(seeds, hops=hops, direction=direction)  # type: ignore[arg-type]
    assert output.subgraph(seeds, hops=hops, direction=direction) == sub  # type: ignore[arg-type]
    if hops >= 1:
        assert output.neighbors(seeds, direction=direction) == source.neighbors(seeds, direction=direction)  # type: ignore[arg-type]
    entities = sorted({*seeds, *(e.head for e in sub), *(e.tail for e in sub if isinstance(e.tail, str))})[::every]
    assert output.labels(entities) == source.labels(entities)
    assert output.describe(entities) == source.describe(entities)
    return sub


# -- the conformance graph ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hops", "direction"), [(0, "both"), (1, "both"), (2, "out"), (2, "in"), (2, "both"), (3, "both")]
)
def test_conformance_graph_answers_like_the_source(
    conformance_store: Path, tmp_path: Path, hops: int, direction: str
) -> None:
    out = tmp_path / "out"
    report = extract_subgraph(
        url(conformance_store), [A], hops=hops, direction=direction, store=out, batch_size=1, progress=False
    )
    with connect(url(conformance_store)) as source, connect(url(out)) as output:
        same_answers(source, output, [A], hops, direction)
        assert report.edges == len(source.subgraph([A], hops=hops, direction=direction))  # type: ignore[arg-type]
        assert output.search("Alpha")[0].id == A
    assert not (tmp_path / ".out.kga-extract").exists(), "the work directory goes once the store is in place"


def test_paths_and_shortest_paths_within_the_hops(conformance_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    extract_subgraph(url(conformance_store), [A], hops=2, store=out, progress=False)
    with connect(url(conformance_store)) as source, connect(url(out)) as output:
        for relation_path, directions in [([R1, R1], ["out", "out"]), ([R2, R3], ["out", "in"]), ([R3, R1], None)]:
            assert output.paths(A, relation_path, directions=directions) == source.paths(  # type: ignore[arg-type]
                A,
                relation_path,
                directions=directions,  # type: ignore[arg-type]
            )
        assert output.shortest_paths(A, [C, D], max_hops=2) == source.shortest_paths(A, [C, D], max_hops=2)


def test_multigraph_kept_and_edges_reached_from_both_ends_written_once(conformance_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = extract_subgraph(url(conformance_store), [A, B], hops=1, store=out, batch_size=1, progress=False)
    with connect(url(out)) as output:
        between = [e for e in output.neighbors(A, direction="both")[A] if B in (e.head, e.tail)]
    assert sorted(e.as_tuple() for e in between) == [(A, R1, B), (A, R2, B), (A, R3, B), (B, R3, A)]
    # a->b edges are answered for a (out) and for b (in): one row each in the store and in the count
    snap = store_snapshot(out)
    assert len(snap["triples"]) == len(set(snap["triples"])) == report.triples
    with connect(url(conformance_store)) as source:
        assert report.edges == len(source.subgraph([A, B], hops=1))


def test_literals_keep_datatype_and_language(conformance_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    extract_subgraph(url(conformance_store), [A], hops=1, store=out, progress=False)
    with connect(url(out)) as output:
        edges = output.neighbors(A, relations=[AGE, BORN, "http://www.w3.org/2000/01/rdf-schema#label"])[A]
    tails = {e.tail for e in edges if isinstance(e.tail, Literal)}
    xsd = "http://www.w3.org/2001/XMLSchema#"
    assert Literal(value="42", datatype=xsd + "integer") in tails
    assert Literal(value="2000-01-02", datatype=xsd + "date") in tails
    names = {Literal(value="Alpha (UK)", lang="en-gb"), Literal(value="Alpha plain"), Literal(value="Alphe", lang="fr")}
    assert names < tails
    source_data = store_layout.data_dir(conformance_store, store_layout.read_manifest(conformance_store))
    source_triples = {str(q.triple) for q in ox.Store.read_only(str(source_data))}
    assert set(store_snapshot(out)["triples"]) <= source_triples, "every output triple is a source triple, alike"
    written = _traversal_files(out)  # numbered as the triples went in: the same as read back from the store
    index_store(str(out))
    assert _traversal_files(out) == written


def _traversal_files(store: Path) -> dict[str, bytes]:
    version = store_layout.open_version(store)
    try:
        return {path.name: path.read_bytes() for path in sorted(index_dir(version.directory).iterdir())}
    finally:
        version.close()


def test_boundary_entities_get_their_names(conformance_store: Path, tmp_path: Path) -> None:
    """x is two hops from a (a -> b -> d <- x): outside hops=1, and d is the boundary at hops=1."""
    out = tmp_path / "out"
    report = extract_subgraph(url(conformance_store), [B], hops=1, direction="out", store=out, progress=False)
    with connect(url(out)) as output:
        assert output.labels([A, C]) == {A: "Alpha", C: "Charlie plain"}  # names of boundary entities
        assert output.neighbors(C, relations=[R1]) == {C: []}, "edges beyond the hops stay out"
        assert X not in output.labels([X])
    assert report.names == 6 and report.entities == 4  # b, and a, c, d one hop out


def test_relation_filter_and_max_edges_cut_like_subgraph(conformance_store: Path, tmp_path: Path) -> None:
    with connect(url(conformance_store)) as source:
        filtered = source.subgraph([A], hops=2, relations=[R1, R2])
        capped = source.subgraph([A], hops=3, max_edges=5)
        assert capped.truncated
    out = tmp_path / "filtered"
    extract_subgraph(url(conformance_store), [A], hops=2, relations=[R1, R2], store=out, progress=False)
    with connect(url(out)) as output:
        assert output.subgraph([A], hops=2, relations=[R1, R2]) == filtered
        assert {e.relation for e in output.subgraph([A], hops=2)} - {R1, R2} <= {
            "http://www.w3.org/2000/01/rdf-schema#label"
        }, "apart from names, only the chosen relations are copied"
    out = tmp_path / "capped"
    report = extract_subgraph(url(conformance_store), [A], hops=3, max_edges=5, store=out, batch_size=1, progress=False)
    assert report.truncated and report.edges == 5
    with connect(url(out)) as output:
        kept = {e.as_tuple() for e in output.subgraph([A], hops=3)}
    assert {e.as_tuple() for e in capped} <= kept


def test_manifest_records_the_run_without_credentials(conformance_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    secret_url = "sparql+http://alice:hunter2@127.0.0.1:9/sparql?profile=generic&api_key=k3y"
    with connect(url(conformance_store)) as source:
        report = extract_subgraph(
            source, [A], hops=2, relations=[R1], direction="out", store=out, progress=False, source_url=secret_url
        )
    text = (out / "kga-store.json").read_text("utf-8")
    assert "hunter2" not in text and "k3y" not in text
    record = json.loads(text)["extraction"]
    assert record["source"] == "sparql+http://127.0.0.1:9/sparql?profile=generic"
    assert record["profile"] == "generic" and record["seeds"] == [A] and record["hops"] == 2
    assert record["direction"] == "out" and record["relations"] == [R1] and record["max_edges"] is None
    assert record["tool"] == {"name": "kg-adapters", "version": kg_adapters.__version__}
    assert record["started"] <= record["finished"]
    assert record["counts"] == {
        "entities": report.entities,
        "edges": report.edges,
        "names": report.names,
        "literals": report.literals,
        "triples": report.triples,
        "batches": report.batches,
        "source_calls": report.source_calls,
        "runs": 1,
    }
    assert (report.entities, report.edges) == (3, 2)  # a -r1-> b -r1-> c


def test_a_finished_run_repeated_changes_nothing(conformance_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = extract_subgraph(url(conformance_store), [A], hops=2, store=out, progress=False)
    before = store_snapshot(out)
    again = extract_subgraph(url(conformance_store), [A], hops=2, store=out, progress=False)
    assert store_snapshot(out) == before and again.finished == first.finished
    with pytest.raises(ExtractError, match="already holds a store"):
        extract_subgraph(url(conformance_store), [A], hops=1, store=out, progress=False)


def test_wikidata_truthy_edges_names_and_descriptions(tmp_path: Path) -> None:
    """From a Wikidata-shaped store: the truthy edges and every language's names come along, the
    statement layer (p:/ps:/pq:, statement nodes) does not, as neighbors() hides it."""
    source_store, out = tmp_path / "source", tmp_path / "out"
    load_files([str(write_wikidata_graph(tmp_path))], str(source_store), profile="wikidata", progress=False)
    report = extract_subgraph(url(source_store), ["Q42"], hops=2, store=out, progress=False)
    with connect(url(source_store)) as source, connect(url(out)) as output:
        assert output.profile.name == "wikidata"
        same_answers(source, output, ["Q42"], 2, "both")
        entities = ["Q42", "Q5", "Q145", "Q350", "Q691283"]
        for lang in ("en", "de", ("fr", "en")):
            assert output.labels(entities, lang=lang) == source.labels(entities, lang=lang)
            assert output.describe(entities, lang=lang) == source.describe(entities, lang=lang)
    triples = store_snapshot(out)["triples"]
    assert report.edges == 27 and not [t for t in triples if "/entity/statement/" in t or "/prop/qualifier/" in t]


# -- bad input ------------------------------------------------------------------------------------


def test_unknown_seeds_are_refused_before_anything_is_written(conformance_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(UnknownSeeds) as caught:
        extract_subgraph(url(conformance_store), [A, "http://example.org/nope"], hops=1, store=out, progress=False)
    assert caught.value.seeds == ("http://example.org/nope",)
    assert not out.exists() and not (tmp_path / ".out.kga-extract").exists()


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"hops": -1}, InvalidTermError),
        ({"hops": 1, "direction": "sideways"}, InvalidTermError),
        ({"hops": 1, "batch_size": 0}, InvalidTermError),
        ({"hops": 1, "max_edges": -3}, InvalidTermError),
        ({"hops": 1, "relations": ["not an iri"]}, InvalidTermError),
        ({"hops": 1, "relations": R1}, InvalidTermError),
    ],
)
def test_bad_arguments_raise_typed_errors(
    conformance_store: Path, tmp_path: Path, options: dict[str, Any], error: type[Exception]
) -> None:
    with pytest.raises(error):
        extract_subgraph(url(conformance_store), [A], store=tmp_path / "out", progress=False, **options)
    assert list(tmp_path.iterdir()) == []


def test_malformed_seed_and_unknown_backend(conformance_store: Path, tmp_path: Path) -> None:
    with pytest.raises(InvalidTermError):
        extract_subgraph(url(conformance_store), ["<bad>"], hops=1, store=tmp_path / "out", progress=False)
    with pytest.raises(InvalidTermError):
        extract_subgraph(url(conformance_store), [], hops=1, store=tmp_path / "out", progress=False)
    with pytest.raises(UnknownBackendError):
        extract_subgraph("nosuch:///x", [A], hops=1, store=tmp_path / "out", progress=False)
    with pytest.raises(StoreNotFound):
        extract_subgraph(url(tmp_path / "missing"), [A], hops=1, store=tmp_path / "out", progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_unwritable_or_occupied_store_paths(conformance_store: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", "utf-8")
    with pytest.raises(ExtractError, match="cannot write"):
        extract_subgraph(url(conformance_store), [A], hops=1, store=blocker / "store", progress=False)
    with pytest.raises(ExtractError, match="not a directory"):
        extract_subgraph(url(conformance_store), [A], hops=1, store=blocker, progress=False)
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "keep.txt").write_text("mine", "utf-8")
    with pytest.raises(ExtractError, match="non-empty"):
        extract_subgraph(url(conformance_store), [A], hops=1, store=occupied, progress=False)
    assert (occupied / "keep.txt").read_text("utf-8") == "mine"
    with pytest.raises(ExtractError, match="already holds a store"):
        extract_subgraph(url(conformance_store), [A], hops=1, store=conformance_store, progress=False)


# -- resume after kill -9 -------------------------------------------------------------------------


def kga_extract(argv: list[str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "kg_adapters.cli", "extract", *argv]
    return subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, check=False)


def killed_at(point: str, **arguments: Any) -> int:
    """Exit status of ``extract_subgraph(**arguments)`` in a child process the test's checkpoint
    callback SIGKILLs at ``point`` (the fault is injected from here, not by the extraction code)."""
    child = extract_killed_at(point, timeout=300, **arguments)
    assert child.returncode in (0, -signal.SIGKILL), child.stderr
    return child.returncode


@pytest.fixture(scope="module")
def reference(conformance_store: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An uninterrupted run of the arguments the kill tests use."""
    out = tmp_path_factory.mktemp("reference") / "out"
    extract_subgraph(url(conformance_store), [A, S], hops=3, store=out, batch_size=1, progress=False)
    return store_snapshot(out)


KILL_POINTS = ["fetched:1", "commit:1", "fetched:4", "commit:5", "fetched:8", "commit:11", "built", "swapped"]
"""Batches 1-5 walk the graph, 6-11 fetch names: kills in both phases, in and between transactions."""


@pytest.mark.parametrize("kill_at", KILL_POINTS)
def test_kill_9_then_the_same_command_finishes_identically(
    conformance_store: Path, tmp_path: Path, reference: dict[str, Any], kill_at: str
) -> None:
    out = tmp_path / "out"
    argv = ["--kg", url(conformance_store), "--seeds", A, S, "--hops", "3", "--batch-size", "1", "--store", str(out)]
    same = {"source": url(conformance_store), "seeds": [A, S], "hops": 3, "batch_size": 1, "store": out}
    assert killed_at(kill_at, **same) == -signal.SIGKILL
    if kill_at != "swapped":
        with pytest.raises(StoreNotFound):
            connect(url(out))
    finished = kga_extract(argv)
    assert finished.returncode == 0, finished.stderr
    assert store_snapshot(out) == reference
    assert not (tmp_path / ".out.kga-extract").exists()
    assert debris(tmp_path) == []


def test_killed_twice_and_resumed_with_another_batch_size(
    conformance_store: Path, tmp_path: Path, reference: dict[str, Any]
) -> None:
    out = tmp_path / "out"
    same = {"source": url(conformance_store), "seeds": [A, S], "hops": 3, "store": out}
    assert killed_at("commit:3", batch_size=1, **same) == -signal.SIGKILL
    state = tmp_path / ".out.kga-extract" / STATE_FILE
    with sqlite3.connect(state) as db:
        progress = json.loads(db.execute("SELECT value FROM meta WHERE key = 'progress'").fetchone()[0])
    assert progress["batches"] == 3 and progress["phase"] == "walk"
    assert killed_at("fetched:5", batch_size=2, **same) == -signal.SIGKILL
    report = extract_subgraph(url(conformance_store), [A, S], hops=3, store=out, batch_size=3, progress=False)
    assert report.runs == 3
    assert store_snapshot(out) == reference


class InterruptedKG(CountingKG):
    """The real store, with Ctrl-C arriving during its ``calls``-th operation."""

    def __init__(self, inner: KnowledgeGraph, calls: int) -> None:
        super().__init__(inner)
        self.interrupt_at = calls

    @forwards(KnowledgeGraph.neighbors)
    def neighbors(self, ids: Ids, **options: Any) -> dict[str, list[Edge]]:
        if len(self.calls) + 1 == self.interrupt_at:
            raise KeyboardInterrupt
        return super().neighbors(ids, **options)


@pytest.mark.parametrize("calls", [3, 9])
def test_ctrl_c_then_the_same_call_finishes_identically(
    conformance_store: Path, tmp_path: Path, reference: dict[str, Any], calls: int
) -> None:
    out = tmp_path / "out"
    options: dict[str, Any] = {"hops": 3, "store": out, "batch_size": 1, "progress": False}
    with connect(url(conformance_store)) as source:
        with pytest.raises(KeyboardInterrupt):
            extract_subgraph(InterruptedKG(source, calls), [A, S], source_url=url(conformance_store), **options)
        assert not out.exists() and (tmp_path / ".out.kga-extract" / STATE_FILE).is_file()
        report = extract_subgraph(source, [A, S], source_url=url(conformance_store), **options)
    assert report.runs == 2
    assert store_snapshot(out) == reference


def test_a_state_file_killed_before_its_first_commit_is_started_afresh(
    conformance_store: Path, tmp_path: Path, reference: dict[str, Any]
) -> None:
    work = tmp_path / ".out.kga-extract"
    work.mkdir()
    sqlite3.connect(work / STATE_FILE).close()  # what a kill between creating the file and the first commit leaves
    out = tmp_path / "out"
    report = extract_subgraph(url(conformance_store), [A, S], hops=3, store=out, batch_size=1, progress=False)
    assert report.runs == 1
    assert store_snapshot(out) == reference


def test_a_chosen_work_dir_is_used_and_its_other_files_kept(
    conformance_store: Path, tmp_path: Path, reference: dict[str, Any]
) -> None:
    work = tmp_path / "scratch"
    work.mkdir()
    (work / "keep.txt").write_text("mine", "utf-8")
    out = tmp_path / "out"
    argv = [
        "--kg",
        url(conformance_store),
        "--seeds",
        A,
        S,
        "--hops",
        "3",
        "--batch-size",
        "1",
        "--store",
        str(out),
        "--work-dir",
        str(work),
    ]
    same = {"source": url(conformance_store), "seeds": [A, S], "hops": 3, "batch_size": 1, "store": out}
    assert killed_at("commit:2", work_dir=work, **same) == -signal.SIGKILL
    assert (work / STATE_FILE).is_file() and not (tmp_path / ".out.kga-extract").exists()
    assert kga_extract(argv).returncode == 0
    assert store_snapshot(out) == reference
    assert sorted(p.name for p in work.iterdir()) == ["keep.txt"]


def test_other_arguments_against_an_unfinished_run(conformance_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    same = {"source": url(conformance_store), "seeds": [A], "hops": 2, "batch_size": 1, "store": out}
    assert killed_at("commit:2", **same) == -signal.SIGKILL
    with pytest.raises(ExtractStateMismatch, match="hops"):
        extract_subgraph(url(conformance_store), [A], hops=3, store=out, progress=False)
    with pytest.raises(ExtractStateMismatch, match="direction, seeds"):
        extract_subgraph(url(conformance_store), [B], hops=2, direction="out", store=out, progress=False)
    report = extract_subgraph(url(conformance_store), [A], hops=3, store=out, restart=True, progress=False)
    assert report.runs == 1 and report.hops == 3
    with connect(url(conformance_store)) as source, connect(url(out)) as output:
        same_answers(source, output, [A], 3, "both")


# -- FB15k-237 --------------------------------------------------------------------------------------


def test_fb15k237_two_hops(fb_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = extract_subgraph(url(fb_store, "freebase"), FB_SEEDS, hops=2, store=out, batch_size=100, progress=False)
    with connect(url(fb_store, "freebase")) as source, connect(url(out)) as output:
        assert output.profile.name == "freebase", "the store reopens with the profile it was extracted with"
        sub = same_answers(source, output, FB_SEEDS, 2, "both", every=20)
        assert report.edges == len(sub) and report.entities > 1000
        assert report.batches >= report.entities // 100
        births = ["people.person.place_of_birth", "people.person.place_of_birth"]
        assert output.paths("m.0bxtg", births, directions=["out", "in"]) == source.paths(
            "m.0bxtg", births, directions=["out", "in"]
        )
        assert output.shortest_paths(*FB_SEEDS, max_hops=2) == source.shortest_paths(*FB_SEEDS, max_hops=2)
        assert output.search("Tom Hanks", limit=1)[0].id == "m.0bxtg"


def test_fb15k237_out_with_relations_killed_and_resumed(fb_store: Path, tmp_path: Path) -> None:
    relations = ["film.director.film", "film.film.genre", "film.film.country", "type.object.name"]
    args: dict[str, Any] = {"hops": 2, "direction": "out", "relations": relations}
    reference = tmp_path / "reference"
    extract_subgraph(url(fb_store, "freebase"), FB_SEEDS, store=reference, batch_size=7, progress=False, **args)
    out = tmp_path / "out"
    argv = [
        "--kg",
        url(fb_store, "freebase"),
        "--seeds",
        *FB_SEEDS,
        "--hops",
        "2",
        "--direction",
        "out",
        "--relations",
        ",".join(relations),
        "--batch-size",
        "7",
        "--store",
        str(out),
    ]
    same = {"source": url(fb_store, "freebase"), "seeds": FB_SEEDS, "batch_size": 7, "store": out, **args}
    assert killed_at("fetched:4", **same) == -signal.SIGKILL
    assert kga_extract(argv).returncode == 0
    assert store_snapshot(out) == store_snapshot(reference)
    with connect(url(fb_store, "freebase")) as source, connect(url(out)) as output:
        assert output.subgraph(FB_SEEDS, **args) == source.subgraph(FB_SEEDS, **args)


# -- Virtuoso -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fb_slice(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    """The first 20,000 FB15k-237 edges and every name: a Freebase-shaped graph small enough to load fast."""
    path = tmp_path_factory.mktemp("fb-slice") / "fb-slice.nt"
    with (
        gzip.open(shared_data / "fb15k237-freebase.nt.gz", "rt", encoding="utf-8") as source,
        open(path, "w", encoding="utf-8") as target,
    ):
        for number, line in enumerate(source):
            if number < 20_000 or "/ns/type.object.name>" in line:
                target.write(line)
    return path


@pytest.fixture(scope="module")
def virtuoso(tmp_path_factory: pytest.TempPathFactory, request: Any, fb_slice: Path) -> VirtuosoServer:
    graph = write_graph(tmp_path_factory.mktemp("extract-virtuoso-graph"))
    return virtuoso_fixture(tmp_path_factory, [fb_slice, graph], request=request)


@pytest.fixture(scope="module")
def slice_store(tmp_path_factory: pytest.TempPathFactory, fb_slice: Path) -> Path:
    store = tmp_path_factory.mktemp("extract-slice") / "source"
    load_files([str(fb_slice)], str(store), profile="freebase", progress=False)
    return store


def virtuoso_url(server: VirtuosoServer, profile: str) -> str:
    return f"sparql+{server.sparql_url}?profile={profile}&dialect=virtuoso"


def test_from_virtuoso_equals_from_the_embedded_store(
    virtuoso: VirtuosoServer, slice_store: Path, tmp_path: Path
) -> None:
    seeds = ["m.027rn", "m.0dfw0"]
    remote, local = tmp_path / "remote", tmp_path / "local"
    report = extract_subgraph(
        virtuoso_url(virtuoso, "freebase"), seeds, hops=2, store=remote, batch_size=50, progress=False
    )
    extract_subgraph(url(slice_store, "freebase"), seeds, hops=2, store=local, batch_size=500, progress=False)
    remote_snap, local_snap = store_snapshot(remote), store_snapshot(local)
    assert remote_snap["extraction"]["source"].startswith("sparql+http://127.0.0.1:")
    for snap in (remote_snap, local_snap):
        snap["extraction"].pop("source")
    assert remote_snap == local_snap
    assert report.edges > 500 and report.source_calls == report.batches + 1
    with connect(virtuoso_url(virtuoso, "freebase")) as source, connect(url(remote)) as output:
        same_answers(source, output, seeds, 2, "both", every=5)


def test_from_virtuoso_keeps_literals_and_multi_edges(
    virtuoso: VirtuosoServer, conformance_store: Path, tmp_path: Path
) -> None:
    out, local = tmp_path / "out", tmp_path / "local"
    extract_subgraph(virtuoso_url(virtuoso, "generic"), [A, X], hops=2, store=out, batch_size=2, progress=False)
    extract_subgraph(url(conformance_store), [A, X], hops=2, store=local, batch_size=2, progress=False)
    assert store_snapshot(out)["triples"] == store_snapshot(local)["triples"]
    with connect(virtuoso_url(virtuoso, "generic")) as source, connect(url(out)) as output:
        same_answers(source, output, [A, X], 2, "both")
        assert output.neighbors(A, relations=[R1, R2, R3])[A] == [
            Edge(head=A, relation=R1, tail=B),
            Edge(head=A, relation=R2, tail=B),
            Edge(head=A, relation=R3, tail=B),
        ]


# -- command line -----------------------------------------------------------------------------------


def test_cli_reads_seed_files_and_prints_json(
    conformance_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(f"# question entities\n{A}\n\n{S}\n", "utf-8")
    out = tmp_path / "out"
    argv = ["extract", "--kg", url(conformance_store), "--seeds", str(seeds), X, "--hops", "1", "--store", str(out)]
    assert main([*argv, "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["seeds"] == [A, S, X] and row["hops"] == 1 and row["store"] == str(out)
    assert main(argv) == 0
    assert "extracted" in capsys.readouterr().out


def test_cli_errors(conformance_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "out")
    assert main(["extract", "--kg", url(conformance_store), "--seeds", A, "--hops", "-1", "--store", out]) == 2
    assert "hops" in capsys.readouterr().err  # a bad budget on the command line is a usage error
    assert main(["extract", "--kg", url(conformance_store), "--seeds", EX_NOPE, "--hops", "1", "--store", out]) == 1
    assert "no triple for seed" in capsys.readouterr().err
    bogus = url(conformance_store) + "?bogus=1"
    assert main(["extract", "--kg", bogus, "--seeds", A, "--hops", "1", "--store", out]) == 2
    assert main(["extract", "--kg", "nosuch:///x", "--seeds", A, "--hops", "1", "--store", out]) == 1
    assert "nosuch" in capsys.readouterr().err


EX_NOPE = "http://example.org/nope"
