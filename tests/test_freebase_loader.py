"""The Freebase dump reader (``kga load --format freebase``) on a crafted dump with the real dump's
quirks: tab-separated lines ending in a tab and a dot, ``ns:`` prefixed names and ``@prefix`` lines,
bare Turtle numbers and booleans, IRIs with characters N-Triples forbids, unescaped quotes and stray
backslashes in literals, ``_`` in language tags, prefixed datatypes, ill-typed literals (kept as
they are), and lines no repair can save.
Each load builds a real on-disk Oxigraph store; answers are read back through ``connect``."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from kg_adapters import connect
from kg_adapters.errors import InvalidTermError, LoadError
from kg_adapters.records import Edge, Literal
from kg_adapters.store_layout import MANIFEST
from loaders import DumpFilter, load_files
from loaders.rdf import CHUNK_LINES, resolve_format

NS = "http://rdf.freebase.com/ns/"
KEY = "http://rdf.freebase.com/key/wikipedia.en"
XSD = "http://www.w3.org/2001/XMLSchema#"

GOOD = [
    f'<{NS}m.0abc>\t<{NS}type.object.name>\t"Foo"@en\t.',  # 1: valid as it is
    f'<{NS}m.0abc>\t<{NS}type.object.name>\t"Foo (fr)"@fr\t.',
    f'<{NS}m.0abc>\t<{NS}type.object.name>\t"Foo GB"@en-GB\t.',
    f'<{NS}m.0abc>\t<{NS}type.object.name>\t"Foo Hant"@zh_Hant\t.',  # 4: repaired tag
    "ns:m.0abc\tns:people.person.place_of_birth\tns:m.0xyz\t.",  # 5: prefixed names
    "@prefix ex: <http://example.org/> .",  # 6: a declaration, not a triple
    "ns:m.0xyz\tex:rel\tex:thing\t.",  # 7
    f"<{NS}g.11vjz1ynm>\t<{NS}measurement_unit.dated_percentage.rate>\t4.5\t.",  # 8: bare decimal
    f"<{NS}m.0abc>\t<{NS}film.film.runtime>\t120\t.",  # 9: bare integer
    f"<{NS}m.0abc>\t<{NS}base.x.flag>\ttrue\t.",  # 10: bare boolean
    f"<{NS}m.0abc>\t<{NS}common.topic.official_website>\t<http://example.com/a b|c%zz>\t.",  # 11: bad IRI
    f'<{NS}m.0abc>\t<{NS}common.topic.alias>\t"He said "hi" \\ back"@en\t.',  # 12: bad literal
    f'<{NS}m.0abc>\t<{KEY}>\t"Foo_$0028bar$0029"\t.',  # 13
    f'<{NS}m.0abc>\t<{NS}measurement.date>\t"2001-02"^^xsd:gYearMonth\t.',  # 14: prefixed datatype
    f"<{NS}m.0abc> <{NS}people.person.gender> <{NS}m.05zppz> .",  # 15: spaces, not tabs
    f"<{NS}m.0abc>\t<{NS}freebase.valuenotation.is_reviewed>\t<{NS}people.person.gender>\t.",  # 16
    f'<{NS}m.0abc>\t<{NS}people.person.date_of_birth>\t"1999-13-45"^^<{XSD}date>\t.',  # 17: ill-typed, kept
    "",  # 18: blank
    "# a comment",  # 19
]
BAD = [
    f"<{NS}m.0abc>\t<{NS}x.y>\t.",  # 20: two fields
    f"<{NS}m.0abc>\tzz:foo\t<{NS}m.0x>\t.",  # 21: unknown prefix
    f"<{NS}m.0abc>\t<{NS}x.y>\t<no-scheme>\t.",  # 22: relative IRI (Oxigraph refuses it)
]
REPAIRED_LINES = 9  # 4, 5, 7, 8, 9, 10, 11, 12, 14

ILL_TYPED = Literal(value="1999-13-45", datatype=XSD + "date")
ALL_M0ABC = [
    Edge(head="m.0abc", relation="base.x.flag", tail=Literal(value="true", datatype=XSD + "boolean")),
    Edge(head="m.0abc", relation="common.topic.alias", tail=Literal(value='He said "hi" \\ back', lang="en")),
    Edge(head="m.0abc", relation="common.topic.official_website", tail="http://example.com/a%20b%7Cc%25zz"),
    Edge(head="m.0abc", relation="film.film.runtime", tail=Literal(value="120", datatype=XSD + "integer")),
    Edge(head="m.0abc", relation="freebase.valuenotation.is_reviewed", tail="people.person.gender"),
    Edge(head="m.0abc", relation=KEY, tail=Literal(value="Foo_$0028bar$0029")),
    Edge(head="m.0abc", relation="measurement.date", tail=Literal(value="2001-02", datatype=XSD + "gYearMonth")),
    Edge(head="m.0abc", relation="people.person.date_of_birth", tail=ILL_TYPED),
    Edge(head="m.0abc", relation="people.person.gender", tail="m.05zppz"),
    Edge(head="m.0abc", relation="people.person.place_of_birth", tail="m.0xyz"),
    Edge(head="m.0abc", relation="type.object.name", tail=Literal(value="Foo", lang="en")),
    Edge(head="m.0abc", relation="type.object.name", tail=Literal(value="Foo (fr)", lang="fr")),
    Edge(head="m.0abc", relation="type.object.name", tail=Literal(value="Foo GB", lang="en-gb")),
    Edge(head="m.0abc", relation="type.object.name", tail=Literal(value="Foo Hant", lang="zh-hant")),
]


def write_dump(directory: Path, lines: list[str], name: str = "freebase-rdf-latest.gz") -> Path:
    path = directory / name
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return path


def m0abc(store: Path) -> list[Edge]:
    with connect(f"oxigraph://{store}?profile=freebase&relation_filter=none") as kg:
        return kg.neighbors("m.0abc")["m.0abc"]


def test_the_format_is_known_by_name_and_by_file_name(tmp_path: Path) -> None:
    dump = write_dump(tmp_path, GOOD)
    assert resolve_format(str(dump), None) == "freebase"
    assert resolve_format(str(tmp_path / "x.nt.gz"), "freebase") == "freebase"


def test_strict_load_stops_at_the_first_bad_line(tmp_path: Path) -> None:
    dump = write_dump(tmp_path, GOOD + BAD)
    store = tmp_path / "store"
    with pytest.raises(LoadError) as failure:
        load_files([str(dump)], str(store), format="freebase", profile="freebase", progress=False)
    assert failure.value.file == str(dump) and failure.value.line == len(GOOD) + 1
    assert "expected: subject predicate object" in failure.value.reason
    assert not store.exists()


def test_strict_load_reports_a_line_oxigraph_refuses(tmp_path: Path) -> None:
    dump = write_dump(tmp_path, GOOD + BAD[2:])
    with pytest.raises(LoadError) as failure:
        load_files([str(dump)], str(tmp_path / "store"), format="freebase", profile="freebase", progress=False)
    assert failure.value.line == len(GOOD) + 1
    assert "scheme" in failure.value.reason


def test_lenient_load_repairs_counts_and_skips(tmp_path: Path) -> None:
    dump = write_dump(tmp_path, GOOD + BAD)
    store = tmp_path / "store"
    report = load_files([str(dump)], str(store), format="freebase", profile="freebase", lenient=True, progress=False)
    assert report.statements_read == 16
    assert report.lines_skipped == 3
    assert [(s.line, s.reason.split(":")[0]) for s in report.skipped] == [
        (20, "expected"),
        (21, "unknown prefix in predicate"),
        (22, "Parser error between columns 70 and 81"),
    ]
    assert report.lines_repaired == REPAIRED_LINES
    assert report.lines_filtered == 0
    assert report.store_triples == 16
    assert m0abc(store.resolve()) == ALL_M0ABC
    with connect(f"oxigraph://{store.resolve()}?profile=freebase") as kg:
        assert kg.neighbors("m.0xyz") == {
            "m.0xyz": [Edge(head="m.0xyz", relation="http://example.org/rel", tail="http://example.org/thing")]
        }
        rate = kg.neighbors("g.11vjz1ynm")["g.11vjz1ynm"]
        assert [edge.tail for edge in rate] == [Literal(value="4.5", datatype=XSD + "decimal")]
        assert kg.labels("m.0abc") == {"m.0abc": "Foo"}
        assert kg.search("foo gb")[0].id == "m.0abc"
    manifest = json.loads((store / MANIFEST).read_text("utf-8"))
    assert manifest["profile"] == "freebase"
    assert manifest["sources"][0]["format"] == "freebase"
    assert manifest["sources"][0]["repaired"] == REPAIRED_LINES


def test_filters_drop_languages_predicates_and_namespaces(tmp_path: Path) -> None:
    dump = write_dump(tmp_path, GOOD)
    store = tmp_path / "store"
    chosen = DumpFilter(languages=("en",), drop_predicates=frozenset({KEY}), drop_namespaces=("common.", "freebase."))
    report = load_files(
        [str(dump)], str(store), format="freebase", profile="freebase", dump_filter=chosen, progress=False
    )
    # Dropped: the fr and zh-Hant names, the key, both common.* lines and the freebase.* line.
    assert report.lines_filtered == 6
    assert report.statements_read == 10
    kept = {edge for edge in ALL_M0ABC if edge.relation not in (KEY, "freebase.valuenotation.is_reviewed")}
    kept = {edge for edge in kept if not edge.relation.startswith("common.")}
    kept -= {edge for edge in ALL_M0ABC if isinstance(edge.tail, Literal) and edge.tail.lang in ("fr", "zh-hant")}
    assert m0abc(store.resolve()) == sorted(kept, key=ALL_M0ABC.index)


def test_filters_need_the_freebase_format(tmp_path: Path) -> None:
    nt = tmp_path / "x.nt"
    nt.write_text(f"<{NS}a> <{NS}b> <{NS}c> .\n", encoding="utf-8")
    with pytest.raises(LoadError):
        load_files([str(nt)], str(tmp_path / "store"), dump_filter=DumpFilter(languages=("en",)), progress=False)
    with pytest.raises(InvalidTermError):
        DumpFilter(languages=("not a tag",))


def test_a_dump_longer_than_one_chunk_keeps_line_numbers(tmp_path: Path) -> None:
    """A bad line far into the file is reported with its own line number (chunks are re-parsed)."""
    lines = [f"ns:m.{i:07d}\tns:people.person.height_meters\t1.{i % 10}\t." for i in range(CHUNK_LINES + 5)]
    lines[CHUNK_LINES + 2] = f"<{NS}m.0abc>\t<{NS}x.y>\t<no-scheme>\t."
    dump = write_dump(tmp_path, lines)
    report = load_files(
        [str(dump)], str(tmp_path / "store"), format="freebase", profile="freebase", lenient=True, progress=False
    )
    assert [s.line for s in report.skipped] == [CHUNK_LINES + 3]
    assert report.statements_read == CHUNK_LINES + 4
    assert report.lines_repaired == CHUNK_LINES + 4


def test_cli_load_with_filters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kg_adapters.cli import main

    dump = write_dump(tmp_path, GOOD + BAD)
    store = tmp_path / "store"
    argv = [
        "load",
        str(dump),
        "--store",
        str(store),
        "--format",
        "freebase",
        "--lenient",
        "--json",
        "--languages",
        "en",
        "--drop-namespaces",
        "common.,freebase.",
        "--drop-predicates",
        KEY,
    ]
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["statements_read"], summary["lines_filtered"], summary["lines_skipped"]) == (10, 6, 3)
    assert json.loads((store / MANIFEST).read_text("utf-8"))["profile"] == "freebase"
    assert main(["load", str(dump), "--store", str(tmp_path / "strict"), "--format", "freebase"]) == 1
    assert f"{dump}:20:" in capsys.readouterr().err
