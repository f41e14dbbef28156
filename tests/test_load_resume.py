"""kill -9 during each phase of ``kga load``, then the same load again: it resumes from its last
checkpoint and the store answers exactly as an uninterrupted load's (its triples, traversal index
files, name and relation indexes, manifest counts), while readers never see a half-built store and
an appended store keeps its previous version until the swap.

Real processes: ``loaders.testing.kill.load_killed_at`` runs the load in a child that SIGKILLs
itself when the load reaches a point by its own progress (a checkpoint, the end of a phase)."""

from __future__ import annotations

import gzip
import json
import re
import signal
import sqlite3
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest

from kg_adapters import store_layout
from kg_adapters.errors import StoreNotFound
from loaders import load_files
from loaders.testing.kill import load_killed_at

NS = "http://rdf.freebase.com/ns/"
BLANK_SCOPE = re.compile(r"_:f[0-9a-f]{12}_")
CHUNK = 500
"""Lines per chunk (of converted formats) in the killed children: every chunk is a checkpoint."""
CHUNK_BYTES = 30_000
"""Bytes per block of N-Triples in the killed children (a few hundred lines)."""


def freebase_lines(count: int, seed: int = 0) -> list[str]:
    """Freebase-shaped N-Triples: entity edges, names, typed and tagged literals, blank nodes."""
    lines = []
    for i in range(count):
        head, tail, relation = f"m.0{(i * 7 + seed) % 997:04d}", f"m.0{(i * 13 + 5) % 991:04d}", f"r.t.p{i % 23}"
        kind = i % 10
        if kind == 0:
            lines.append(f'<{NS}{head}> <{NS}type.object.name> "Name {head} {i % 5}"@en .')
        elif kind == 1:
            lines.append(f'<{NS}{head}> <{NS}{relation}> "{i % 50:02d}"^^<http://www.w3.org/2001/XMLSchema#integer> .')
        elif kind == 2:
            lines.append(f"<{NS}{head}> <{NS}{relation}> _:b{i % 40} .")
        elif kind == 3:
            lines.append(f'<{NS}{head}> <http://www.w3.org/2000/01/rdf-schema#label> "label \\"{i}\\"" .')
        else:
            lines.append(f"<{NS}{head}> <{NS}{relation}> <{NS}{tail}> .")
    return lines


def write_dump(path: Path, lines: list[str]) -> Path:
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


def store_answers(store: Path) -> dict[str, Any]:
    """Everything a reader of the store gets: its triples, the traversal index files, the name and
    relation index rows, the manifest's counts."""
    manifest = store_layout.read_manifest(store)
    version = store_layout.version_dir(store, manifest)
    data = ox.Store.read_only(str(version / store_layout.DATA_DIR))
    triples = sorted(BLANK_SCOPE.sub("_:", str(quad)) for quad in data)  # blank nodes: per-file random prefix
    del data
    answers: dict[str, Any] = {"triples": triples}
    traversal = version / store_layout.TRAVERSAL
    if traversal.is_dir():
        answers["traversal"] = {item.name: item.read_bytes() for item in sorted(traversal.iterdir())}
    for name in ("labels.sqlite", "relations.sqlite"):
        with sqlite3.connect(f"file:{version / name}?mode=ro", uri=True) as db:
            answers[name] = db.execute("SELECT iri, label, lang, norm FROM labels ORDER BY rowid").fetchall()
    answers["manifest"] = {
        "triples": manifest["triples"],
        "labels": manifest["labels"],
        "sources": [{k: v for k, v in s.items() if k != "loaded_at"} for s in manifest["sources"]],
    }
    return answers


def killed_load(point: str, paths: list[str], store: Path, **options: Any) -> None:
    """Runs the load in a child until ``point`` (small blocks, a checkpoint after each) and checks it died there."""
    killed = load_killed_at(
        point,
        chunk_lines=CHUNK,
        chunk_bytes=CHUNK_BYTES,
        checkpoint_seconds=0,
        paths=paths,
        store=store,
        **{"profile": "freebase", **options},
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr


def build_dir(store: Path) -> Path:
    return store.parent / f".{store.name}.kga-build"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two inputs (one gzipped) and the answers of their uninterrupted load."""
    directory = tmp_path_factory.mktemp("resume")
    first = write_dump(directory / "part-1.nt.gz", freebase_lines(4000))
    second = write_dump(directory / "part-2.nt", freebase_lines(2500, seed=3))
    reference = directory / "reference"
    load_files([str(first), str(second)], str(reference), profile="freebase", progress=False)
    return {"paths": [str(first), str(second)], "answers": store_answers(reference), "directory": directory}


@pytest.mark.parametrize("point", ["checkpoint:1", "checkpoint:9", "parsed", "indexed", "labelled", "built"])
def test_a_load_killed_in_each_phase_resumes_to_the_same_store(
    inputs: dict[str, Any], tmp_path: Path, point: str
) -> None:
    store = tmp_path / "store"
    killed_load(point, inputs["paths"], store)
    assert not store.exists()  # readers see no store until the swap
    with pytest.raises(StoreNotFound):
        store_layout.read_manifest(store)
    progress = json.loads((build_dir(store) / "progress.json").read_text())
    assert progress["phase"] == ("parse" if point.startswith("checkpoint") else "index")
    report = load_files(inputs["paths"], str(store), profile="freebase", progress=False)
    assert report.resumed
    assert store_answers(store) == inputs["answers"]
    assert not build_dir(store).exists()


@pytest.mark.parametrize("point", ["read:3", "read:20"])
def test_a_load_killed_in_mid_stream_resumes_to_the_same_store(
    inputs: dict[str, Any], tmp_path: Path, point: str
) -> None:
    """Without a checkpoint due, each input's blocks go to Oxigraph as one stream (one bulk load): killed
    while Oxigraph reads it, the load resumes from the last checkpoint (an input's end, or none) to the
    store an uninterrupted load gives."""
    store = tmp_path / "store"
    killed = load_killed_at(
        point, chunk_bytes=CHUNK_BYTES, checkpoint_seconds=3600, paths=inputs["paths"], store=store, profile="freebase"
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not store.exists()
    load_files(inputs["paths"], str(store), profile="freebase", progress=False)
    assert store_answers(store) == inputs["answers"]
    assert not build_dir(store).exists()


def test_a_resumed_load_redoes_only_what_followed_its_checkpoint(inputs: dict[str, Any], tmp_path: Path) -> None:
    """The two inputs are read at once; at each checkpoint both readers have stored one more block, and
    the checkpoint names each one's next line: the lines before it are not loaded again."""
    store = tmp_path / "store"
    positions = []
    for point in ("checkpoint:3", "checkpoint:5"):
        killed_load(point, inputs["paths"], store)
        progress = json.loads((build_dir(store) / "progress.json").read_text())
        assert progress["checkpoints"] == int(point.split(":")[1])
        positions.append([(i["done"], i["line"], i["statements"]) for i in progress["inputs"]])
    (first_3, second_3), (first_5, second_5) = positions
    for done, line, statements in (first_3, second_3, first_5, second_5):
        assert not done and statements == line - 1  # every line a statement, read up to its next line
    assert first_3[1] > 1 and second_3[1] > 1  # both read at once
    assert first_5[1] > first_3[1] and second_5[1] > second_3[1]  # the second run went on from the first


def test_a_killed_append_keeps_the_previous_version_and_resumes(inputs: dict[str, Any], tmp_path: Path) -> None:
    base = write_dump(tmp_path / "base.nt", [f"<{NS}m.base> <{NS}r.t.base> <{NS}m.0001> ."])
    store, expected = tmp_path / "store", tmp_path / "expected"
    for target in (store, expected):
        load_files([str(base)], str(target), profile="freebase", progress=False)
    before = store_answers(store)
    load_files(inputs["paths"], str(expected), profile="freebase", progress=False)
    for point in ("checkpoint:3", "parsed", "built"):
        killed_load(point, inputs["paths"], store)
        assert store_answers(store) == before  # the previous version, untouched
    report = load_files(inputs["paths"], str(store), profile="freebase", progress=False)
    assert report.resumed and report.appended
    assert store_answers(store) == store_answers(expected)


def test_a_changed_input_starts_the_load_over(inputs: dict[str, Any], tmp_path: Path) -> None:
    """A build directory left for other inputs (here: one of them rewritten) is not resumed."""
    first = write_dump(tmp_path / "a.nt", freebase_lines(3000))
    store = tmp_path / "store"
    killed_load("checkpoint:2", [str(first)], store)
    write_dump(first, freebase_lines(3000, seed=11))
    report = load_files([str(first)], str(store), profile="freebase", progress=False)
    assert not report.resumed
    reference = tmp_path / "reference"
    load_files([str(first)], str(reference), profile="freebase", progress=False)
    assert store_answers(store) == store_answers(reference)


def test_a_lenient_freebase_load_resumes_with_its_repairs_and_skips(tmp_path: Path) -> None:
    """--format freebase --lenient: prefixes declared before the checkpoint, the repair and filter
    counts and the skipped lines carry over to the resumed load."""
    lines = ["@prefix ns: <http://rdf.freebase.com/ns/> ."]
    for i in range(3000):
        lines.append(f"ns:m.0{i % 300:03d}\tns:r.t.p{i % 7}\tns:m.0{(i * 3) % 301:03d}\t.")
        if i % 400 == 0:
            lines.append("this line is not a triple")
        if i % 10 == 0:
            lines.append(f'ns:m.0{i % 300:03d}\tns:type.object.name\t"N{i}"@{"en" if i % 20 else "de"}\t.')
    dump = write_dump(tmp_path / "freebase-rdf-part.gz", lines)
    options: dict[str, Any] = {"format": "freebase", "lenient": True, "profile": "freebase"}
    reference = tmp_path / "reference"
    from loaders.freebase import DumpFilter

    expected_report = load_files(
        [str(dump)], str(reference), progress=False, dump_filter=DumpFilter(languages=("en",)), **options
    )
    store = tmp_path / "store"
    killed_load("checkpoint:4", [str(dump)], store, dump_filter={"languages": ["en"]}, **options)
    report = load_files([str(dump)], str(store), progress=False, dump_filter=DumpFilter(languages=("en",)), **options)
    assert report.resumed
    assert store_answers(store) == store_answers(reference)
    assert (report.statements_read, report.lines_skipped, report.lines_filtered, report.lines_repaired) == (
        expected_report.statements_read,
        expected_report.lines_skipped,
        expected_report.lines_filtered,
        expected_report.lines_repaired,
    )
    assert report.skipped == expected_report.skipped


def test_a_load_numbered_in_the_worker_process_resumes_to_the_same_store(tmp_path: Path) -> None:
    """An input of more than a MiB numbers its triples in the index worker process: its spool is
    checkpointed there, and a resumed load's worker starts from it."""
    dump = write_dump(tmp_path / "big.nt", freebase_lines(16_000))
    assert dump.stat().st_size > 1 << 20
    reference = tmp_path / "reference"
    load_files([str(dump)], str(reference), profile="freebase", progress=False)
    for point in ("checkpoint:7", "parsed"):
        store = tmp_path / f"store-{point.replace(':', '-')}"
        killed = load_killed_at(
            point, chunk_bytes=200_000, checkpoint_seconds=0, paths=[str(dump)], store=store, profile="freebase"
        )
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        assert (build_dir(store) / "spool" / "edges.bin").stat().st_size > 0
        report = load_files([str(dump)], str(store), profile="freebase", progress=False)
        assert report.resumed
        assert store_answers(store) == store_answers(reference)


def test_the_name_and_relation_indexes_from_the_load_equal_a_read_of_the_store(tmp_path: Path) -> None:
    """The name and relation indexes are written from what the load saw; a load without the traversal
    index (which reads them back from the store) holds the same rows."""
    extra = [
        f'<{NS}m.0x> <http://www.w3.org/2000/01/rdf-schema#label> "Zed"@EN-gb .',
        f'<{NS}m.0x> <http://www.w3.org/2000/01/rdf-schema#label> "007"^^<http://www.w3.org/2001/XMLSchema#integer> .',
        f'<{NS}m.0x> <http://www.w3.org/2000/01/rdf-schema#label> "esc\\u00e9 \\t"@fr .',
        f'<{NS}r.t.p3> <http://www.w3.org/2000/01/rdf-schema#label> "relation three"@en .',
        '_:anon <http://www.w3.org/2000/01/rdf-schema#label> "no subject IRI" .',
        f'<{NS}m.0x> <{NS}type.object.name> "Zed" .',
        f'<{NS}m.0x> <{NS}type.object.name> "Zed" .',
    ]
    dump = write_dump(tmp_path / "names.nt", freebase_lines(3000) + extra)
    rows: dict[bool, dict[str, list[Any]]] = {}
    for index in (True, False):
        store = tmp_path / f"store-{index}"
        load_files([str(dump)], str(store), profile="freebase", progress=False, index=index)
        version = store_layout.version_dir(store, store_layout.read_manifest(store))
        rows[index] = {}
        for name in ("labels.sqlite", "relations.sqlite"):
            with sqlite3.connect(f"file:{version / name}?mode=ro", uri=True) as db:
                rows[index][name] = sorted(db.execute("SELECT iri, label, lang, norm FROM labels").fetchall())
    assert rows[True] == rows[False]
    assert ("http://rdf.freebase.com/ns/r.t.p3", "relation three", "en", "relation three") in rows[True][
        "relations.sqlite"
    ]


def test_inputs_read_at_once_still_fail_at_the_first_bad_line_with_its_file_and_line(tmp_path: Path) -> None:
    from kg_adapters.errors import LoadError
    from loaders.testing.malformed_dumps import debris

    good = write_dump(tmp_path / "good.nt", freebase_lines(5000))
    lines = freebase_lines(3000, seed=5)
    lines[2222] = "<http://example.org/a> <http://example.org/b> oops ."
    bad = write_dump(tmp_path / "bad.nt.gz", lines)
    store = tmp_path / "store"
    with pytest.raises(LoadError) as failure:
        load_files([str(good), str(bad)], str(store), profile="freebase", progress=False)
    assert (failure.value.file, failure.value.line) == (str(bad), 2223)
    assert not store.exists() and debris(tmp_path) == []


def test_progress_shows_the_phase_the_bytes_read_of_the_total_and_the_rate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = write_dump(tmp_path / "dump.nt.gz", freebase_lines(3000))
    load_files([str(dump)], str(tmp_path / "store"), profile="freebase", progress=True)
    shown = capsys.readouterr().err
    from tqdm import tqdm

    assert "parse dump.nt.gz" in shown and "labels: name and relation indexes" in shown  # then the index steps
    total = tqdm.format_sizeof(dump.stat().st_size, divisor=1024)  # the compressed size on disk
    assert f"{total}/{total}" in shown  # all of it read
    assert "triples/s" in shown


@pytest.fixture(scope="module")
def wikidata_dump(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Wikidata JSON dump as Wikidata writes one (``[``, one entity a line, ``]``) of the recorded
    entities ten times over: 122 lines, 3.4 MB."""
    from kg_adapters.testing.wikidata_graph import RECORDED

    found: dict[str, Any] = json.loads((RECORDED / "neighbours.json").read_text("utf-8"))["entities"]
    found.update(json.loads((shared_data / "wikidata-Q42.json").read_text("utf-8"))["entities"])
    lines = [json.dumps(entity, ensure_ascii=False) for entity in found.values()] * 10
    path = tmp_path_factory.mktemp("wikidata") / "dump.json"
    path.write_text("[\n" + ",\n".join(lines) + "\n]\n", encoding="utf-8")
    return path


def test_a_wikidata_dump_killed_inside_the_file_resumes_from_its_checkpoint(
    wikidata_dump: Path, tmp_path: Path
) -> None:
    """A Wikidata JSON dump is one file of many hours: its load records checkpoints inside it, and a load
    killed there reads on from the checkpoint's line to the store an uninterrupted load gives."""
    reference = tmp_path / "reference"
    load_files([str(wikidata_dump)], str(reference), progress=False)
    store = tmp_path / "store"
    killed = load_killed_at(
        "checkpoint:4", chunk_lines=10, checkpoint_seconds=0, paths=[str(wikidata_dump)], store=store
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not store.exists()
    (state,) = json.loads((build_dir(store) / "progress.json").read_text())["inputs"]
    assert not state["done"] and state["line"] == 41  # four chunks of ten lines stored
    report = load_files([str(wikidata_dump)], str(store), progress=False)
    assert report.resumed
    assert store_answers(store) == store_answers(reference)


@pytest.mark.parametrize("kind", ["wikidata-json", "ttl"])
def test_progress_shows_the_bytes_read_of_a_wikidata_or_turtle_input_as_it_is_read(
    kind: str,
    wikidata_dump: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The bytes read of the total (what the ETA is computed from) move while such an input is read, not
    only when it ends."""
    from tqdm import tqdm

    import loaders.wikidata_json

    dump = wikidata_dump
    if kind == "ttl":
        dump = tmp_path / "dump.ttl"
        triples = (f"ns:m.0{i} ns:r.t.p{i % 23} ns:m.1{i % 997} .\n" for i in range(30_000))
        dump.write_text(f"@prefix ns: <{NS}> .\n" + "".join(triples), encoding="utf-8")
    else:
        monkeypatch.setattr(loaders.wikidata_json, "CHUNK_ENTITIES", 10)  # a dozen chunks
    load_files([str(dump)], str(tmp_path / "store"), progress=True)
    shown = capsys.readouterr().err
    total = tqdm.format_sizeof(dump.stat().st_size, divisor=1024)
    read = set(re.findall(rf"([0-9.]+[kMG]?)/{re.escape(total)} ", shown))
    assert total in read  # all of it read
    assert read - {"0.00", total}  # and part of it before


def test_progress_names_the_inputs_being_read_and_how_many_are_done(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dump split into parts is read several parts at once: the progress names the parts being read,
    not only the last one started, and counts the parts done."""
    paths = [str(write_dump(tmp_path / f"part-{n}.nt", freebase_lines(3000, seed=n))) for n in range(3)]
    load_files(paths, str(tmp_path / "store"), profile="freebase", progress=True)
    shown = capsys.readouterr().err
    described = re.findall(r"parse ((?:part-\d\.nt(?:, )?)*) ?\((\d)/3 inputs done\)", shown)
    named = {name for names, _done in described for name in names.split(", ") if name}
    assert named == {"part-0.nt", "part-1.nt", "part-2.nt"}
    assert {done for _names, done in described} >= {"0", "3"}  # from none done to all of them
