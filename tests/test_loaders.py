"""Loader tests on real Oxigraph stores in tmp_path: formats, errors, atomicity, appends."""

from __future__ import annotations

import bz2
import contextlib
import fcntl
import gzip
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import kg_adapters
import loaders.rdf
from kg_adapters.base import KnowledgeGraph
from kg_adapters.errors import LoadError, StoreNotFound
from kg_adapters.records import Edge, Literal
from loaders import CHUNK_BYTES, CHUNK_LINES, LOCAL_ENTITY_NS, LOCAL_RELATION_NS, load_files
from loaders.testing.malformed_dumps import debris

EX = "http://example.org/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
FB = "http://rdf.freebase.com/ns/"
REPO_ROOT = Path(__file__).resolve().parents[1]
FB15K = Path(__file__).resolve().parents[2] / "shared" / "data" / "fb15k237-freebase.nt.gz"

SMALL_NT = f"""\
# a comment line, then a blank line

<{EX}alice> <{EX}knows> <{EX}bob> .
<{EX}alice> <{LABEL}> "Alice Liddell"@en .
<{EX}bob> <{LABEL}> "Bob Builder" .
<{EX}bob> <{EX}age> "42"^^<http://www.w3.org/2001/XMLSchema#integer> .
<{EX}bob> <{EX}knows> <{EX}carol> .
"""
SMALL_COUNT = 5


def write(path: Path, text: str | bytes) -> Path:
    """Writes ``text``, gzip/bz2-compressed when the name says so."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    if path.name.endswith(".gz"):
        with gzip.open(path, "wb") as handle:
            handle.write(data)
    elif path.name.endswith(".bz2"):
        with bz2.open(path, "wb") as handle:
            handle.write(data)
    else:
        path.write_bytes(data)
    return path


@contextlib.contextmanager
def opened(store: Path, **options: str) -> Iterator[KnowledgeGraph]:
    kg = kg_adapters.connect("oxigraph://" + str(store), **options)
    try:
        yield kg
    finally:
        kg.close()


def numbered_nt(count: int, *, start: int = 0) -> list[str]:
    return [f"<{EX}e{i}> <{EX}next> <{EX}e{i + 1}> ." for i in range(start, start + count)]


def open_files_under(directory: Path) -> list[str]:
    """Files this process holds open below ``directory`` (an open database shows up here)."""
    found = []
    for fd in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith(str(directory)):
                found.append(target)
    return found


# -- formats -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["small.nt", "small.nt.gz", "small.nt.bz2"])
def test_load_ntriples_plain_and_compressed(tmp_path: Path, name: str) -> None:
    source = write(tmp_path / name, SMALL_NT)
    store = tmp_path / "store"
    report = load_files([str(source)], str(store), progress=False)
    assert report.store == str(store)
    assert report.files == (str(source),)
    assert report.statements_read == SMALL_COUNT
    assert report.store_triples == SMALL_COUNT
    assert (report.lines_skipped, report.skipped, report.appended) == (0, (), False)
    assert report.seconds > 0 and report.triples_per_second > 0
    with opened(store) as kg:
        out = kg.neighbors([EX + "alice"], literals=False)
        assert out[EX + "alice"] == [Edge(head=EX + "alice", relation=EX + "knows", tail=EX + "bob")]
        assert kg.labels([EX + "alice", EX + "bob"]) == {EX + "alice": "Alice Liddell", EX + "bob": "Bob Builder"}
        assert [e.id for e in kg.search("bob builder")] == [EX + "bob"]
        assert [e.id for e in kg.search("Alice")] == [EX + "alice"]
    manifest = json.loads((store / "kga-store.json").read_text())
    assert manifest["triples"] == SMALL_COUNT and manifest["profile"] == "generic"
    assert [s["statements"] for s in manifest["sources"]] == [SMALL_COUNT]
    assert manifest["sources"][0]["format"] == "nt"
    assert debris(tmp_path) == []


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_store_is_closed_after_load(tmp_path: Path) -> None:
    """The loader releases the database: the same process can open it for writing at once."""
    store = tmp_path / "store"
    load_files([str(write(tmp_path / "a.nt", SMALL_NT))], str(store), progress=False)
    assert open_files_under(tmp_path) == []
    with opened(store, write="true") as kg:
        assert kg.neighbors([EX + "bob"])[EX + "bob"]


def test_turtle(tmp_path: Path) -> None:
    source = write(
        tmp_path / "small.ttl",
        f"""@prefix ex: <{EX}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:alice ex:knows ex:bob , ex:carol ;
    rdfs:label "Alice"@en .
ex:bob ex:knows [ rdfs:label "Someone" ] .
<relative> ex:knows ex:alice .
""",
    )
    store = tmp_path / "store"
    report = load_files([str(source)], str(store), progress=False)
    assert report.statements_read == 6 and report.store_triples == 6
    with opened(store) as kg:
        assert {e.tail for e in kg.neighbors([EX + "alice"], literals=False)[EX + "alice"]} == {
            EX + "bob",
            EX + "carol",
        }
        relative = source.absolute().parent.as_uri() + "/relative"
        assert [e.head for e in kg.neighbors([EX + "alice"], direction="in")[EX + "alice"]] == [relative]
        assert kg.labels([EX + "alice"]) == {EX + "alice": "Alice"}


def test_rdf_xml(tmp_path: Path) -> None:
    source = write(
        tmp_path / "small.rdf.gz",
        f"""<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
         xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#" xmlns:ex="{EX}">
  <rdf:Description rdf:about="{EX}alice">
    <ex:knows rdf:resource="{EX}bob"/>
    <rdfs:label>Alice</rdfs:label>
  </rdf:Description>
</rdf:RDF>
""",
    )
    store = tmp_path / "store"
    report = load_files([str(source)], str(store), progress=False)
    assert (report.statements_read, report.store_triples) == (2, 2)
    with opened(store) as kg:
        assert kg.labels([EX + "alice"]) == {EX + "alice": "Alice"}
        assert [e.tail for e in kg.neighbors([EX + "alice"], literals=False)[EX + "alice"]] == [EX + "bob"]


def test_nquads_and_trig_land_in_the_default_graph(tmp_path: Path) -> None:
    nq = write(
        tmp_path / "small.nq",
        f'<{EX}a> <{EX}p> <{EX}b> <{EX}g1> .\n<{EX}a> <{EX}p> <{EX}c> .\n<{EX}a> <{LABEL}> "Anna" <{EX}g2> .\n',
    )
    trig = write(tmp_path / "small.trig", f"@prefix ex: <{EX}> .\nex:g3 {{ ex:a ex:p ex:d . }}\n")
    store = tmp_path / "store"
    report = load_files([str(nq), str(trig)], str(store), progress=False)
    assert (report.statements_read, report.store_triples) == (4, 4)
    with opened(store) as kg:
        tails = {e.tail for e in kg.neighbors([EX + "a"], literals=False)[EX + "a"]}
        assert tails == {EX + "b", EX + "c", EX + "d"}
        assert [e.id for e in kg.search("anna")] == [EX + "a"]
    manifest = json.loads((store / "kga-store.json").read_text())
    assert [(s["format"], s["statements"]) for s in manifest["sources"]] == [("nq", 3), ("trig", 1)]


def test_blank_nodes_are_one_per_file_across_chunks(tmp_path: Path) -> None:
    """``_:x`` is one node throughout a file, even across chunks, and another node in another file."""
    lines = [f"_:x <{EX}p> <{EX}first> .", *numbered_nt(CHUNK_LINES + 10), f"_:x <{EX}p> <{EX}last> ."]
    one = write(tmp_path / "one.nt", "\n".join(lines) + "\n")
    two = write(tmp_path / "two.nt", f"_:x <{EX}p> <{EX}other> .\n")
    store = tmp_path / "store"
    load_files([str(one), str(two)], str(store), progress=False)
    with opened(store) as kg:
        assert isinstance(kg, kg_adapters.SparqlQueryable)
        rows = kg.query(f"SELECT ?s (COUNT(*) AS ?n) WHERE {{ ?s <{EX}p> ?o }} GROUP BY ?s")
    counts = sorted(int(str(row["n"].value)) for row in rows if isinstance(row["n"], Literal))
    assert counts == [1, 2]


def test_empty_file(tmp_path: Path) -> None:
    store = tmp_path / "store"
    report = load_files([str(write(tmp_path / "empty.nt.gz", b""))], str(store), progress=False)
    assert (report.statements_read, report.store_triples, report.lines_skipped) == (0, 0, 0)
    with opened(store) as kg:
        assert kg.neighbors([EX + "a"]) == {EX + "a": []}
        assert kg.search("anything") == []


# -- TSV and MetaQA ------------------------------------------------------------------------------


def test_tsv_generic_mints_iris_and_labels(tmp_path: Path) -> None:
    source = write(
        tmp_path / "kb.tsv",
        "William Dieterle\tdirected\tKismet\n"
        "\n"
        f"<{EX}x>\t{EX}rel\tAlien: Resurrection\n"
        "Kismet\tdirected_by\tWilliam Dieterle\n",
    )
    store = tmp_path / "store"
    report = load_files([str(source)], str(store), progress=False)
    william = LOCAL_ENTITY_NS + "William%20Dieterle"
    kismet = LOCAL_ENTITY_NS + "Kismet"
    alien = LOCAL_ENTITY_NS + "Alien%3A%20Resurrection"
    assert report.statements_read == 3
    assert report.store_triples == 3 + 3  # three data triples, three minted labels
    with opened(store) as kg:
        assert kg.neighbors([william], literals=False)[william] == [
            Edge(head=william, relation=LOCAL_RELATION_NS + "directed", tail=kismet)
        ]
        assert kg.neighbors([EX + "x"])[EX + "x"] == [Edge(head=EX + "x", relation=EX + "rel", tail=alien)]
        assert [(e.id, e.label) for e in kg.search("william dieterle")] == [(william, "William Dieterle")]
        assert kg.labels([alien]) == {alien: "Alien: Resurrection"}


def test_tsv_bad_line_does_not_lose_a_name(tmp_path: Path) -> None:
    source = write(
        tmp_path / "kb.tsv", "William Dieterle\tdirected\t<not an iri>\nWilliam Dieterle\tdirected\tKismet\n"
    )
    report = load_files([str(source)], str(tmp_path / "store"), lenient=True, progress=False)
    assert [s.line for s in report.skipped] == [1]
    assert report.statements_read == 1
    with opened(tmp_path / "store") as kg:
        assert [e.label for e in kg.search("William Dieterle")] == ["William Dieterle"]


def test_metaqa_txt_is_detected(tmp_path: Path) -> None:
    source = write(
        tmp_path / "kb.txt",
        "Kismet|directed_by|William Dieterle\nKismet|written_by|Edward Knoblock\nKismet|release_year|1944\n",
    )
    store = tmp_path / "store"
    report = load_files([str(source)], str(store), progress=False)
    assert report.statements_read == 3
    manifest = json.loads((store / "kga-store.json").read_text())
    assert manifest["sources"][0]["format"] == "metaqa"
    with opened(store) as kg:
        kismet = kg.search("Kismet")[0].id
        assert kismet == LOCAL_ENTITY_NS + "Kismet"
        relations = kg.relations([kismet])[kismet]
        minted = [LOCAL_RELATION_NS + r for r in ("directed_by", "written_by", "release_year")]
        assert relations == sorted([*minted, LABEL])
        year = kg.neighbors([kismet], relations=[LOCAL_RELATION_NS + "release_year"])[kismet][0].tail
        assert year == LOCAL_ENTITY_NS + "1944"  # a tail is always an entity


def test_tsv_freebase_profile(tmp_path: Path) -> None:
    source = write(
        tmp_path / "fb.tsv.gz",
        "m.0abc\tpeople.person.profession\tm.0def\n"
        "/m/0abc\t/people/person/nationality\t/m/09c7w0\n"
        f"<{FB}m.0def>\tpeople.profession.people_with_this_profession\t{FB}m.0abc\n",
    )
    store = tmp_path / "store"
    report = load_files([str(source)], str(store), profile="freebase", progress=False)
    assert (report.statements_read, report.store_triples) == (3, 3)
    with opened(store, profile="freebase") as kg:
        assert kg.neighbors(["m.0abc"])["m.0abc"] == [
            Edge(head="m.0abc", relation="people.person.nationality", tail="m.09c7w0"),
            Edge(head="m.0abc", relation="people.person.profession", tail="m.0def"),
        ]
        assert kg.relations(["m.0def"])["m.0def"] == ["people.profession.people_with_this_profession"]


def test_tsv_freebase_rejects_names(tmp_path: Path) -> None:
    source = write(tmp_path / "fb.tsv", "m.0abc\tpeople.person.profession\tm.0def\nWilliam Dieterle\tdirected\tm.0x\n")
    store = tmp_path / "store"
    with pytest.raises(LoadError) as info:
        load_files([str(source)], str(store), profile="freebase", progress=False)
    assert (info.value.file, info.value.line) == (str(source), 2)
    assert "William Dieterle" in str(info.value)
    assert not store.exists()
    report = load_files([str(source)], str(store), profile="freebase", lenient=True, progress=False)
    assert report.statements_read == 1 and [s.line for s in report.skipped] == [2]


def test_tsv_wikidata_profile_and_bad_field_count(tmp_path: Path) -> None:
    source = write(tmp_path / "wd.tsv", "Q42\tP31\tQ5\nQ42\tP31\n\nQ42\tnot a property\tQ5\n")
    store = tmp_path / "store"
    report = load_files([str(source)], str(store), profile="wikidata", lenient=True, progress=False)
    assert report.statements_read == 1
    assert [(s.line, "3" in s.reason) for s in report.skipped] == [(2, True), (4, False)]
    with opened(store, profile="wikidata") as kg:
        assert kg.neighbors(["Q42"])["Q42"] == [Edge(head="Q42", relation="P31", tail="Q5")]


# -- bad input: strict and lenient ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "chunk_bytes", "count", "bad_line", "bad"),
    [
        ("bad.nt", None, CHUNK_LINES + 100, CHUNK_LINES + 42, f"<{EX}broken iri> <{EX}p> <{EX}o> ."),
        # a strict N-Triples load hands its blocks to Oxigraph as one stream: here ~60 blocks, one bulk load
        ("bad.nt.gz", 4096, 5000, 4321, f'<{EX}x> <{EX}p> "unterminated .'),
    ],
)
def test_strict_bad_line_leaves_no_store(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    chunk_bytes: int | None,
    count: int,
    bad_line: int,
    bad: str,
) -> None:
    if chunk_bytes is not None:
        monkeypatch.setattr(loaders.rdf, "CHUNK_BYTES", chunk_bytes)
    lines = numbered_nt(count)
    lines[bad_line - 1] = bad
    source = write(tmp_path / name, "\n".join(lines) + "\n")
    store = tmp_path / "store"
    with pytest.raises(LoadError) as info:
        load_files([str(source)], str(store), progress=False)
    assert (info.value.file, info.value.line) == (str(source), bad_line)
    assert f"{name}:{bad_line}:" in str(info.value)
    assert f"line {count}" not in str(info.value)  # the line's own error, not the stream's lines
    assert not store.exists()
    assert debris(tmp_path) == []
    with pytest.raises(StoreNotFound):
        kg_adapters.connect("oxigraph://" + str(store))


def test_a_token_over_the_parser_buffer_in_a_stream_is_a_load_error_with_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A literal longer than Oxigraph's parser buffer, in a later block of a strict N-Triples stream (the
    index numbered in its worker: the input is over a megabyte), fails the load at its line."""
    monkeypatch.setattr(loaders.rdf, "CHUNK_BYTES", 1 << 20)
    lines = numbered_nt(30_000)
    lines[25_000] = f'<{EX}s> <{EX}q> "{"x" * (17 << 20)}" .'
    source = write(tmp_path / "big.nt", "\n".join(lines) + "\n")
    store = tmp_path / "store"
    with pytest.raises(LoadError, match="16 MiB") as raised:
        load_files([str(source)], str(store), progress=False)
    assert (raised.value.file, raised.value.line) == (str(source), 25_001)
    assert not store.exists()
    assert debris(tmp_path) == []


@pytest.mark.parametrize("index", [True, False])
def test_streamed_blocks_and_blank_nodes_between_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: bool
) -> None:
    """Blocks streamed to Oxigraph as one bulk load, with blocks holding blank nodes between them (those go
    through the parser): every triple is stored once, ``_:x`` stays one node across the file, and the
    traversal index answers as the store does."""
    monkeypatch.setattr(loaders.rdf, "CHUNK_BYTES", 2048)
    chain = numbered_nt(3000)
    lines = [*chain[:1000], f"_:x <{EX}p> <{EX}e5> .", *chain[1000:2000], f"_:x <{EX}p> <{EX}e7> .", *chain[2000:]]
    source = write(tmp_path / "mixed.nt", "\n".join(lines) + "\n")
    store = tmp_path / "store"
    report = load_files([str(source)], str(store), progress=False, index=index)
    assert report.statements_read == report.store_triples == 3002
    with opened(store) as kg:
        assert isinstance(kg, kg_adapters.SparqlQueryable)
        rows = kg.query(f"SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE {{ ?s <{EX}p> ?o }}")
        assert [str(row["n"].value) for row in rows if isinstance(row["n"], Literal)] == ["1"]
        for number in (0, 999, 1000, 1999, 2000, 2999):
            assert kg.neighbors([f"{EX}e{number}"])[f"{EX}e{number}"] == [
                Edge(head=f"{EX}e{number}", relation=f"{EX}next", tail=f"{EX}e{number + 1}")
            ]


def test_strict_bad_line_in_append_keeps_previous_store(tmp_path: Path) -> None:
    store = tmp_path / "store"
    load_files([str(write(tmp_path / "good.nt", SMALL_NT))], str(store), progress=False)
    before = (store / "kga-store.json").read_text()
    bad = write(tmp_path / "bad.nt.gz", f"<{EX}dave> <{EX}knows> <{EX}erin> .\nnot a triple\n")
    with pytest.raises(LoadError) as info:
        load_files([str(bad)], str(store), progress=False)
    assert (info.value.file, info.value.line) == (str(bad), 2)
    assert (store / "kga-store.json").read_text() == before
    assert debris(tmp_path) == []
    if Path("/proc/self/fd").is_dir():  # the temp database was closed, not just deleted
        assert open_files_under(tmp_path) == []
    with opened(store) as kg:
        assert kg.neighbors([EX + "dave"]) == {EX + "dave": []}
        assert [e.tail for e in kg.neighbors([EX + "alice"], literals=False)[EX + "alice"]] == [EX + "bob"]
        assert [e.id for e in kg.search("Bob Builder")] == [EX + "bob"]


def test_lenient_skips_exactly_the_bad_lines(tmp_path: Path) -> None:
    total = 2 * CHUNK_LINES + 500
    lines = numbered_nt(total)
    bad = {
        1: "garbage",
        CHUNK_LINES: f'<{EX}x> <{EX}p> "unterminated .',
        CHUNK_LINES + 1: f"<{EX}x> <{EX}p> .",
        total: "<a>",
    }
    for number, text in bad.items():
        lines[number - 1] = text
    lines.insert(10, "# a comment is not a statement")  # shifts later line numbers by one
    lines.insert(11, "")
    expected = sorted(n if n < 11 else n + 2 for n in bad)
    source = write(tmp_path / "dirty.nt.bz2", "\n".join(lines))  # no final newline
    store = tmp_path / "store"
    report = load_files([str(source)], str(store), lenient=True, progress=False)
    assert report.lines_skipped == len(bad)
    assert [s.line for s in report.skipped] == expected
    assert {s.file for s in report.skipped} == {str(source)}
    assert all(s.reason for s in report.skipped)
    assert report.statements_read == total - len(bad)
    assert report.store_triples == total - len(bad)
    manifest = json.loads((store / "kga-store.json").read_text())
    assert manifest["sources"][0]["skipped"] == len(bad)
    with opened(store) as kg:
        assert kg.neighbors([EX + "e2"])[EX + "e2"] == [Edge(head=EX + "e2", relation=EX + "next", tail=EX + "e3")]


def test_lenient_keeps_first_hundred_reasons_and_counts_all(tmp_path: Path) -> None:
    lines = [f"<{EX}e{i}> <{EX}p> <{EX}o> ." if i % 2 else f"bad {i}" for i in range(1, 301)]
    source = write(tmp_path / "half.nt", "\n".join(lines) + "\n")
    report = load_files([str(source)], str(tmp_path / "store"), lenient=True, progress=False)
    assert report.lines_skipped == 150
    assert len(report.skipped) == 100
    assert [s.line for s in report.skipped] == list(range(2, 202, 2))
    assert report.statements_read == report.store_triples == 150


def test_lenient_needs_a_line_format(tmp_path: Path) -> None:
    source = write(tmp_path / "small.ttl", f"<{EX}a> <{EX}p> <{EX}b> .\n")
    store = tmp_path / "store"
    with pytest.raises(LoadError, match="line-based format"):
        load_files([str(source)], str(store), lenient=True, progress=False)
    assert not store.exists()


@pytest.mark.parametrize(
    ("name", "content", "line"),
    [
        ("broken.ttl", f"@prefix ex: <{EX}> .\n\nex:a ex:p ex:b .\nex:a ex:p .\n", 4),
        ("turtle-named.nt", f"@prefix ex: <{EX}> .\nex:a ex:p ex:b .\n", 1),
        ("binary.nt", b"\x00\xff\xfe garbage\n", 1),
        ("latin1.nt", f'<{EX}a> <{EX}p> <{EX}b> .\n<{EX}a> <{EX}p> "caf\xe9" .\n'.encode("latin-1"), 2),
        ("broken.rdf", b"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'><oops></rdf:RDF>", None),
    ],
)
def test_syntax_errors_become_load_errors(tmp_path: Path, name: str, content: str | bytes, line: int | None) -> None:
    source = write(tmp_path / name, content)
    store = tmp_path / "store"
    with pytest.raises(LoadError) as info:
        load_files([str(source)], str(store), progress=False)
    assert info.value.file == str(source)
    if line is not None:
        assert info.value.line == line
    assert not store.exists()


def test_truncated_gzip(tmp_path: Path) -> None:
    whole = gzip.compress(("\n".join(numbered_nt(5000)) + "\n").encode())
    source = tmp_path / "cut.nt.gz"
    source.write_bytes(whole[: len(whole) // 2])
    store = tmp_path / "store"
    for lenient in (False, True):
        with pytest.raises(LoadError, match="truncated") as info:
            load_files([str(source)], str(store), lenient=lenient, progress=False)
        assert info.value.file == str(source)
    assert not store.exists()


@pytest.mark.parametrize(("damage", "reason"), [("deflate", "is corrupt"), ("crc", "gzip")])
def test_a_damaged_gzip_is_a_typed_error_naming_the_file(tmp_path: Path, damage: str, reason: str) -> None:
    whole = bytearray(gzip.compress(("\n".join(numbered_nt(5000)) + "\n").encode()))
    if damage == "deflate":
        whole[10] ^= 0x5A  # the first deflate block's header: no valid block type
    else:
        whole[-8] ^= 0xFF  # the member's CRC-32
    source = tmp_path / "damaged.nt.gz"
    source.write_bytes(bytes(whole))
    store = tmp_path / "store"
    for lenient in (False, True):
        with pytest.raises(LoadError, match=reason) as info:
            load_files([str(source)], str(store), lenient=lenient, progress=False)
        assert info.value.file == str(source)
    assert not store.exists()


def test_not_really_gzip(tmp_path: Path) -> None:
    source = tmp_path / "plain.nt.gz"
    source.write_text(SMALL_NT)
    with pytest.raises(LoadError, match="gzip") as info:
        load_files([str(source)], str(tmp_path / "store"), progress=False)
    assert info.value.file == str(source)


def test_missing_input_and_unknown_format_touch_nothing(tmp_path: Path) -> None:
    store = tmp_path / "store"
    good = write(tmp_path / "good.nt", SMALL_NT)
    with pytest.raises(LoadError, match="does not exist") as info:
        load_files([str(good), str(tmp_path / "missing.nt")], str(store), progress=False)
    assert info.value.file == str(tmp_path / "missing.nt")
    with pytest.raises(LoadError, match="format"):
        load_files([str(write(tmp_path / "data.csv", "a,b,c\n"))], str(store), progress=False)
    with pytest.raises(LoadError, match="unknown format"):
        load_files([str(good)], str(store), format="json", progress=False)
    with pytest.raises(LoadError, match="profile"):
        load_files([str(good)], str(store), profile="nosuch", progress=False)
    assert not store.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "good.nt"]


def test_explicit_format_overrides_extension(tmp_path: Path) -> None:
    source = write(tmp_path / "data.dump", f"<{EX}a> <{EX}p> <{EX}b> .\n")
    report = load_files([str(source)], str(tmp_path / "store"), format="ntriples", progress=False)
    assert report.statements_read == 1


def test_statement_counts_with_crlf_comments_and_indentation(tmp_path: Path) -> None:
    text = (
        f"<{EX}a> <{EX}p> <{EX}b> .\r\n"
        "\r\n"
        f"  \t<{EX}a> <{EX}p> <{EX}c> . # trailing comment\r\n"
        "\t# indented comment\r\n"
        "   \r\n"
        f"<{EX}a> <{EX}p> <{EX}d> .\r\n"
    )
    report = load_files([str(write(tmp_path / "crlf.nt", text))], str(tmp_path / "store"), progress=False)
    assert (report.statements_read, report.store_triples) == (3, 3)


def test_lenient_nquads(tmp_path: Path) -> None:
    source = write(
        tmp_path / "dirty.nq.gz",
        f"<{EX}a> <{EX}p> <{EX}b> <{EX}g> .\n<{EX}a> <{EX}p> <{EX}c> <{EX}g> <{EX}extra> .\n_:n <{EX}p> <{EX}d> .\n",
    )
    report = load_files([str(source)], str(tmp_path / "store"), lenient=True, progress=False)
    assert (report.statements_read, report.store_triples) == (2, 2)
    assert [s.line for s in report.skipped] == [2]


def test_progress_bar_reports_triples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    load_files([str(write(tmp_path / "a.nt", SMALL_NT))], str(tmp_path / "store"), progress=True)
    assert "triples" in capsys.readouterr().err


# -- the target directory ------------------------------------------------------------------------


def test_refuses_a_non_store_directory_but_accepts_an_empty_one(tmp_path: Path) -> None:
    source = write(tmp_path / "good.nt", SMALL_NT)
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "precious.txt").write_text("keep me")
    with pytest.raises(LoadError, match="not a complete store"):
        load_files([str(source)], str(occupied), progress=False)
    assert (occupied / "precious.txt").read_text() == "keep me"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert load_files([str(source)], str(empty), progress=False).store_triples == SMALL_COUNT


def test_a_concurrent_load_into_the_same_store_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with open(tmp_path / ".store.kga-lock", "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        with pytest.raises(LoadError, match="another load"):
            load_files([str(write(tmp_path / "a.nt", SMALL_NT))], str(store), progress=False)
    assert not store.exists()


# -- appending -----------------------------------------------------------------------------------


def test_append_keeps_old_triples_and_updates_names(tmp_path: Path) -> None:
    store = tmp_path / "store"
    first = load_files([str(write(tmp_path / "a.nt", SMALL_NT))], str(store), progress=False)
    created = json.loads((store / "kga-store.json").read_text())["created"]
    more = write(
        tmp_path / "b.nt.gz",
        f'<{EX}carol> <{LABEL}> "Carol Danvers" .\n<{EX}carol> <{EX}knows> <{EX}alice> .\n'
        f"<{EX}alice> <{EX}knows> <{EX}bob> .\n",  # already in the store
    )
    report = load_files([str(more)], str(store), progress=False)
    assert first.appended is False and report.appended is True
    assert report.statements_read == 3
    assert report.store_triples == SMALL_COUNT + 2
    with opened(store) as kg:
        assert [e.id for e in kg.search("carol danvers")] == [EX + "carol"]
        assert [e.id for e in kg.search("Alice Liddell")] == [EX + "alice"]
        assert {e.head for e in kg.neighbors([EX + "alice"], direction="in")[EX + "alice"]} == {EX + "carol"}
        assert {e.tail for e in kg.neighbors([EX + "bob"], literals=False)[EX + "bob"]} == {EX + "carol"}
    manifest = json.loads((store / "kga-store.json").read_text())
    assert manifest["created"] == created
    assert [Path(s["file"]).name for s in manifest["sources"]] == ["a.nt", "b.nt.gz"]
    assert manifest["triples"] == SMALL_COUNT + 2
    assert debris(tmp_path) == []


def test_append_sees_writes_made_through_the_graph_api(tmp_path: Path) -> None:
    """Triples added with ``add()`` may sit in Oxigraph's write-ahead log; the append keeps them."""
    store = tmp_path / "store"
    load_files([str(write(tmp_path / "a.nt", SMALL_NT))], str(store), progress=False)
    with opened(store, write="true") as kg:
        assert isinstance(kg, kg_adapters.WritableGraph)
        kg.add([Edge(head=EX + "zed", relation=EX + "knows", tail=EX + "alice")])
    report = load_files(
        [str(write(tmp_path / "b.nt", f"<{EX}yan> <{EX}knows> <{EX}bob> .\n"))], str(store), progress=False
    )
    assert report.store_triples == SMALL_COUNT + 2
    with opened(store) as kg:
        assert {e.head for e in kg.neighbors([EX + "alice"], direction="in")[EX + "alice"]} == {EX + "zed"}


def test_append_with_another_profile_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "store"
    load_files([str(write(tmp_path / "a.tsv", "m.0a\tr.s.t\tm.0b\n"))], str(store), profile="freebase", progress=False)
    with pytest.raises(LoadError, match="profile 'freebase'"):
        load_files([str(write(tmp_path / "b.nt", SMALL_NT))], str(store), progress=False)


# -- interrupted loads ---------------------------------------------------------------------------

_CHILD = """
import signal, sys
from loaders import load_files
signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C works even if the parent ignores it
load_files([sys.argv[1]], sys.argv[2], progress=False)
"""


@contextlib.contextmanager
def loading_from_pipe(tmp_path: Path, store: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """A child process mid-load: it has read 60k lines from a named pipe and waits for more.

    The test keeps the pipe open, so the child cannot finish: no timing assumptions.
    """
    fifo = tmp_path / "big.nt"
    os.mkfifo(fifo)
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(fifo), str(store)], cwd=REPO_ROOT, stderr=subprocess.PIPE
    )
    writer = -1
    try:
        deadline = time.monotonic() + 60
        while writer < 0:  # the child opens the pipe once its temp store exists
            assert child.poll() is None, "the loader exited early"
            assert time.monotonic() < deadline, "the loader never opened its input"
            try:
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                time.sleep(0.01)
        os.set_blocking(writer, True)
        os.write(writer, ("\n".join(numbered_nt(3 * CHUNK_LINES)) + "\n").encode())  # returns once read
        builds = [p for p in tmp_path.iterdir() if p.name.endswith(".kga-build")]
        assert len(builds) == 1 and (builds[0] / "version" / "oxigraph").is_dir()
        yield child, writer
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if writer >= 0:
            os.close(writer)
        fifo.unlink()


def test_killed_load_leaves_no_store_and_the_next_load_cleans_up(tmp_path: Path) -> None:
    """kill -9 in the middle of a load: no store appears, and the next load removes the debris."""
    store = tmp_path / "store"
    with loading_from_pipe(tmp_path, store) as (child, _):
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=60) == -signal.SIGKILL
    assert not store.exists()
    with pytest.raises(StoreNotFound):
        kg_adapters.connect("oxigraph://" + str(store))
    assert len(debris(tmp_path)) == 1
    report = load_files([str(write(tmp_path / "small.nt", SMALL_NT))], str(store), progress=False)
    assert report.store_triples == SMALL_COUNT and report.appended is False
    assert debris(tmp_path) == []


def test_ctrl_c_removes_the_temp_store_and_keeps_the_old_one(tmp_path: Path) -> None:
    store = tmp_path / "store"
    load_files([str(write(tmp_path / "small.nt", SMALL_NT))], str(store), progress=False)
    with loading_from_pipe(tmp_path, store) as (child, writer):
        child.send_signal(signal.SIGINT)
        # The signal may be handled by another thread (RocksDB's); the main thread notices it when
        # its blocked read returns, so keep feeding lines (never EOF) until the child is gone.
        # Reads are buffered 1 MiB at a time, so feed whole pipe-fulls.
        more = ("\n".join(numbered_nt(1500, start=10**6)) + "\n").encode()
        os.set_blocking(writer, False)
        deadline = time.monotonic() + 60
        sent = 0
        while child.poll() is None:
            assert time.monotonic() < deadline, "the loader ignored Ctrl-C"
            with contextlib.suppress(BlockingIOError, BrokenPipeError):
                sent += os.write(writer, more[sent % len(more) :])  # whole lines, never a cut one
            time.sleep(0.005)
        _, stderr = child.communicate(timeout=60)
        assert child.returncode != 0
        assert b"KeyboardInterrupt" in stderr
    assert debris(tmp_path) == []
    with opened(store) as kg:
        assert kg.neighbors([EX + "e1"]) == {EX + "e1": []}
        assert [e.id for e in kg.search("Bob Builder")] == [EX + "bob"]


def _index_worker_of(pid: int) -> int:
    """The process id of the traversal index worker started by the load in process ``pid``."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                arguments = (entry / "cmdline").read_bytes().split(b"\0")
                if b"loaders.index_worker" in arguments:
                    after = arguments[arguments.index(b"loaders.index_worker") + 1 :]
                    if after[:1] == [str(pid).encode()]:
                        return int(entry.name)
    raise AssertionError(f"process {pid} has no index worker")


def _exited(pid: int, timeout: float) -> bool:
    """Whether process ``pid`` (not a child of this one) ends within ``timeout`` seconds."""
    import select

    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([handle], [], [], timeout)[0])
    finally:
        os.close(handle)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the worker through /proc")
def test_a_killed_index_worker_fails_the_load_and_leaves_no_store(tmp_path: Path) -> None:
    """A new store's load of unknown size (a pipe) numbers its triples in a worker process; kill -9
    that worker and the load fails with a clear error, leaving no store and no debris."""
    store = tmp_path / "store"
    with loading_from_pipe(tmp_path, store) as (child, writer):
        worker = _index_worker_of(child.pid)
        os.kill(worker, signal.SIGKILL)
        assert _exited(worker, timeout=60)
        with contextlib.suppress(BrokenPipeError):  # the load may fail before it reads this
            block = "\n".join(numbered_nt(CHUNK_BYTES // 40, start=10**6)) + "\n"  # a block to hand over
            os.write(writer, block.encode())
        _, stderr = child.communicate(timeout=120)
        assert child.returncode != 0
        assert b"traversal index worker stopped without an answer" in stderr
    assert not store.exists()
    assert debris(tmp_path) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the worker through /proc")
def test_a_killed_load_takes_its_index_worker_with_it(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with loading_from_pipe(tmp_path, store) as (child, _):
        worker = _index_worker_of(child.pid)
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=60) == -signal.SIGKILL
        assert _exited(worker, timeout=60)
    assert not store.exists()


def test_an_index_worker_that_cannot_write_says_why(tmp_path: Path) -> None:
    """The worker's own failure (here: the index directory is a file) comes back as a typed error."""
    import pyoxigraph as ox

    from kg_adapters.budgets import DEFAULT_MEMORY
    from kg_adapters.errors import BackendError
    from kg_adapters.profiles import get_profile
    from loaders.indexing import WorkerIndexingSink

    not_a_directory = write(tmp_path / "file", "")
    sink = WorkerIndexingSink(
        ox.Store(), not_a_directory, get_profile("generic"), tmp_path / "spool", None, DEFAULT_MEMORY
    )
    try:
        sink.bulk_load(SMALL_NT.encode(), ox.RdfFormat.N_TRIPLES)
        sink.start_index()
        with pytest.raises(BackendError, match=r"traversal index worker failed: (NotADirectoryError|FileExistsError)"):
            sink.indexes_written()
    finally:
        sink.abandon()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="PYTHONSAFEPATH is Python 3.11's")
def test_the_index_worker_runs_this_code_even_from_another_checkouts_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``python -m`` puts the working directory first on the path: a load started from a directory that
    holds another ``loaders`` package (another checkout) must still start its own worker."""
    import pyoxigraph as ox

    from kg_adapters.budgets import DEFAULT_MEMORY
    from kg_adapters.profiles import get_profile
    from loaders.indexing import WorkerIndexingSink

    decoy = tmp_path / "checkout" / "loaders"
    decoy.mkdir(parents=True)
    write(decoy / "__init__.py", "")
    write(decoy / "index_worker.py", "raise SystemExit('the decoy worker ran')\n")
    monkeypatch.chdir(decoy.parent)
    version = tmp_path / "version"
    version.mkdir()
    sink = WorkerIndexingSink(ox.Store(), version, get_profile("generic"), tmp_path / "spool", None, DEFAULT_MEMORY)
    try:
        sink.bulk_load(SMALL_NT.encode(), ox.RdfFormat.N_TRIPLES)
        sink.start_index()
        _names, stats = sink.indexes_written()
    finally:
        sink.abandon()
    assert stats.edges > 0


# -- the real graph ------------------------------------------------------------------------------


@pytest.mark.skipif(not FB15K.is_file(), reason=f"{FB15K} is not available")
def test_fb15k237(tmp_path: Path) -> None:
    store = tmp_path / "fb15k237"
    report = load_files([str(FB15K)], str(store), profile="freebase", progress=False)
    assert report.statements_read == 299113
    assert report.store_triples == 299113
    assert report.lines_skipped == 0
    with opened(store, profile="freebase") as kg:
        edges = kg.neighbors(["m.027rn"], relations=["location.country.form_of_government"])["m.027rn"]
        assert Edge(head="m.027rn", relation="location.country.form_of_government", tail="m.06cx9") in edges
