"""A load's count of the triples in its store (the report's ``store_triples`` and the manifest's
``triples``) equals the store's own count, whether it was read from the traversal index (a new store
of triple-format inputs without blank nodes) or counted from the store (blank nodes, quad formats,
appends, ``--no-index``)."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest

from kg_adapters import store_layout
from loaders import load_files
from loaders.load_indexes import index_counts_store

XSD = "http://www.w3.org/2001/XMLSchema#"

# duplicates (the same triple spelled alike and otherwise), typed values Oxigraph stores canonically,
# language tags in two cases, escapes in IRIs and literals, non-ASCII text, an empty string
TRICKY_LINES = [
    '<http://a/x> <http://a/p> "v"@EN .',
    '<http://a/x> <http://a/p> "v"@en .',
    f'<http://a/x> <http://a/q> "01"^^<{XSD}integer> .',
    f'<http://a/x> <http://a/q> "1"^^<{XSD}integer> .',
    f'<http://a/x> <http://a/q> "+1"^^<{XSD}integer> .',
    f'<http://a/x> <http://a/d> "1999-01-01"^^<{XSD}date> .',
    f'<http://a/x> <http://a/r> "ab"^^<{XSD}string> .',
    '<http://a/x> <http://a/r> "a\\u0062" .',
    '<http://a/x> <http://a/r> "ab" .',
    '<http://a/x> <http://a/r> "" .',
    '<http://a/x> <http://a/r> "Zürich \\"quoted\\"\\n" .',
    "<http://a/x> <http://a/\\u0073> <http://a/y> .",
    "<http://a/x> <http://a/s> <http://a/y> .",
    "<http://a/x> <http://a/s> <http://a/y> .",
    "<http://a/y> <http://a/s> <http://a/x> .",
]


def store_count(store: Path) -> int:
    """The triples the store holds, counted by Oxigraph."""
    manifest = store_layout.read_manifest(store)
    return len(ox.Store.read_only(str(store_layout.data_dir(store, manifest))))


def load_and_compare(files: list[Path], store: Path, **options: object) -> int:
    report = load_files([str(path) for path in files], str(store), progress=False, **options)  # type: ignore[arg-type]
    counted = store_count(store)
    assert report.store_triples == counted
    assert store_layout.read_manifest(store)["triples"] == counted
    return counted


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_index_counts_a_new_store_of_tricky_literals(tmp_path: Path) -> None:
    source = write(tmp_path / "tricky.nt", TRICKY_LINES)
    assert index_counts_store([(str(source), "nt")], None)
    # one language tag (Oxigraph lowercases it), one integer, one date, three strings ("ab" thrice, "",
    # the quoted one), two edges (the escaped IRI is the plain one)
    assert load_and_compare([source], tmp_path / "store") == 8


def test_duplicates_across_many_chunks_are_counted_once(tmp_path: Path) -> None:
    lines = [f'<http://a/e{i % 500}> <http://a/p{i % 7}> "{i % 300}" .' for i in range(20_000)]
    lines += [f"<http://a/e{i % 500}> <http://a/q{i % 5}> <http://a/e{(i * 7) % 500}> ." for i in range(20_000)]
    first = write(tmp_path / "one.nt", lines)
    second = write(tmp_path / "two.nt", list(reversed(lines)))
    assert load_and_compare([first, second], tmp_path / "store") == len(set(lines))


@pytest.mark.parametrize(
    ("name", "lines", "indexed", "triples"),
    [
        # the same blank label twice in one file is one node: one blank triple and one plain
        (
            "blank.nt",
            ["_:b <http://a/p> <http://a/x> .", "_:b <http://a/p> <http://a/x> .", '<http://a/x> <http://a/p> "v" .'],
            True,
            2,
        ),
        # the same triple in a named graph and in the default graph: a load drops the graph, one triple
        (
            "graphs.nq",
            ["<http://a/x> <http://a/p> <http://a/y> <http://a/g> .", "<http://a/x> <http://a/p> <http://a/y> ."],
            False,
            1,
        ),
    ],
)
def test_what_the_index_does_not_hold_is_counted_by_the_store(
    tmp_path: Path, name: str, lines: list[str], indexed: bool, triples: int
) -> None:
    source = write(tmp_path / name, lines)
    assert index_counts_store([(str(source), name.split(".")[1])], None) is indexed
    assert load_and_compare([source], tmp_path / "store") == triples


def test_an_append_and_a_load_without_index_are_counted_by_the_store(tmp_path: Path) -> None:
    store = tmp_path / "store"
    # a language-tagged value, an integer in three spellings and a date; then the rest of the lines
    assert load_and_compare([write(tmp_path / "one.nt", TRICKY_LINES[:6])], store) == 3
    assert not index_counts_store([("two.nt", "nt")], store_layout.read_manifest(store))
    assert load_and_compare([write(tmp_path / "two.nt", TRICKY_LINES[4:])], store) == 8
    assert load_and_compare([write(tmp_path / "three.nt", TRICKY_LINES)], tmp_path / "plain", index=False) == 8


def test_turtle_and_tsv_inputs(tmp_path: Path) -> None:
    turtle = write(tmp_path / "a.ttl", ["@prefix a: <http://a/> .", 'a:x a:p a:y, a:z ; a:n "x"@en, "x"@en .'])
    assert load_and_compare([turtle], tmp_path / "ttl") == 3  # two edges; the repeated name once
    tsv = write(tmp_path / "a.tsv", ["e1\tr\te2", "e1\tr\te2", "e2\tr\te1"])
    assert load_and_compare([tsv], tmp_path / "tsv") == 4  # two edges; each entity's name from its id
