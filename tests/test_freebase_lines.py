"""The Freebase converter's block scan (``FreebaseConverter.convert``) against its line-by-line reference
(``convert_line``): on clean dump lines and on hostile ones (every character a repair or a refusal
depends on, put into every part of a line, both layouts, odd separators, invalid UTF-8, NUL bytes,
filters on clean lines), the units, the kept count, the repaired/filtered counts and the skip log
(file:line and reason) are the same. Then real loads: filters and repairs of lines the scan keeps."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest

from kg_adapters import connect
from kg_adapters.records import Literal
from loaders import DumpFilter, load_files
from loaders.freebase import BadLine, FreebaseConverter
from loaders.rdf import CHUNK_LINES
from loaders.report import SkipLog

NS = "http://rdf.freebase.com/ns/"
XSD = "http://www.w3.org/2001/XMLSchema#"

CLEAN = [
    f'<{NS}m.0abc>\t<{NS}type.object.name>\t"Foo"@en\t.',
    f'<{NS}m.0abc>\t<{NS}type.object.name>\t"Foo GB"@en-GB\t.',
    f'<{NS}m.0abc>\t<{NS}type.object.name>\t"Fou"@fr\t.',
    f"<{NS}m.0abc>\t<{NS}people.person.gender>\t<{NS}m.05zppz>\t.",
    f'<{NS}m.0abc>\t<{NS}common.topic.alias>\t"say \\"hi\\" \\\\ \\u00e9\\n"@en\t.',
    f'<{NS}m.0abc>\t<{NS}measurement.date>\t"2001-02"^^<{XSD}gYearMonth>\t.',
    f"<{NS}m.0abc>\t<{NS}common.topic.official_website>\t<http://example.com/a%20b\\u00e9>\t.",
    f'<{NS}m.0abc>\t<{NS}film.film.runtime>\t"tab\there"\t.',
    f'<{NS}m.0abc>\t<http://rdf.freebase.com/key/wikipedia.en>\t"Foo_$0028bar$0029"\t.',
    f'<{NS}m.0abc> <{NS}type.object.name> "Föö, spaced"@de .',
    f"<{NS}m.0abc> <{NS}freebase.valuenotation.is_reviewed> <{NS}people.person.gender> .",
    '<http://example.org/é> <http://example.org/p> "x" .',
]
SPECIAL = [
    " ",
    "\t",
    "  ",
    "\t\t",
    "<",
    ">",
    '"',
    "{",
    "}",
    "|",
    "^",
    "`",
    "\\",
    "\\u12",
    "\\U0001F600",
    "%",
    "%2",
    "%41",
    "@",
    "@en",
    "_",
    ":",
    ".",
    " .",
    "\t.",
    "#",
    "\x00",
    "\x0b",
    "\x0c",
    "\x7f",
    "\xff",
    "é",
    "ns:",
    "^^",
    "\\n",
]
FILTERS = [
    DumpFilter(),
    DumpFilter(languages=("en", "zh-hant")),
    DumpFilter(languages=("de",), drop_namespaces=("common.", "http://example.org/"), drop_predicates=frozenset({"x"})),
    DumpFilter(drop_predicates=frozenset({"type.object.name", f"{NS}people.person.gender"})),
    DumpFilter(drop_namespaces=("",)),
]


def hostile_lines(seed: int, count: int) -> list[bytes]:
    """Clean lines with one special text put at a random place, or two, or the layout changed."""
    chooser = random.Random(seed)
    lines = [line.encode("utf-8") for line in CLEAN]
    for _ in range(count):
        line = chooser.choice(CLEAN).encode("utf-8")
        for _edit in range(chooser.choice((1, 1, 2))):
            at = chooser.randrange(len(line) + 1)
            special = chooser.choice(SPECIAL)
            text = special.encode("latin-1") if special in ("\xff", "\x7f") else special.encode("utf-8")
            line = line[:at] + text + line[at + chooser.choice((0, 0, 1)) :]
        lines.append(line)
    lines += [b"", b"   ", b"# comment", b"@prefix ex: <http://example.org/> .", b"ex:a\tex:b\tex:c\t.", b"\xff\xfe"]
    lines += [b" " + lines[0], lines[0] + b" ", lines[0].replace(b"\t", b"  "), lines[0].replace(b"\t.", b".")]
    lines += [lines[0].replace(b"\t", b" ", 1), b"<a>\t<b>\t<c>\t.\t.", b"<>\t<b>\t<c>\t.", b"<a> <b> <c> . # c"]
    return lines


def reference(converter: FreebaseConverter, lines: list[bytes], path: str) -> tuple[list[bytes], int, SkipLog]:
    """What converting ``lines`` one by one with ``convert_line`` gives (the behaviour the scan keeps)."""
    log = SkipLog(lenient=True)
    units: list[bytes] = []
    for offset, raw in enumerate(lines):
        try:
            units.append(converter.convert_line(raw))
        except BadLine as exc:
            log.bad(path, 10 + offset, str(exc))
            units.append(b"")
    return units, sum(map(bool, units)), log


@pytest.mark.parametrize("chosen", FILTERS, ids=lambda f: repr(f)[:60])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_block_scan_converts_every_line_as_the_line_by_line_reference(chosen: DumpFilter, seed: int) -> None:
    lines = hostile_lines(seed, 1500)
    expected, kept, expected_log = reference(ref := FreebaseConverter(chosen), lines, "dump.gz")
    converter = FreebaseConverter(chosen)
    log = SkipLog(lenient=True)
    units, good = converter.convert(lines, 10, "dump.gz", log)
    for line, unit, wanted in zip(lines, units, expected, strict=True):
        assert unit == wanted, line
    assert good == kept
    assert (converter.repaired, converter.filtered) == (ref.repaired, ref.filtered)
    assert [(s.line, s.reason) for s in log.kept] == [(s.line, s.reason) for s in expected_log.kept]
    assert converter.prefixes == ref.prefixes
    for order in (lines, lines[::-1], [*lines[:5], *lines[-4:]], [*lines[-3:], *lines[:40]], lines[:8]):
        check_blocks(chosen, order)


def check_blocks(chosen: DumpFilter, lines: list[bytes]) -> None:
    """``convert_block`` on the lines' text (as loads call it) gives the reference's units and counts."""
    expected, kept, expected_log = reference(ref := FreebaseConverter(chosen), lines, "dump.gz")
    converter = FreebaseConverter(chosen)
    log = SkipLog(lenient=True)
    text = b"\n".join(lines)
    data, units, good = converter.convert_block(text, len(lines), 10, "dump.gz", log)
    if units is None:  # every line kept as it is (tabs that only separate terms may become spaces)
        assert expected == lines
        assert data == text or (data == text.replace(b"\t", b" ") and all(line.count(b"\t") == 3 for line in lines))
    else:
        assert (units, data) == (expected, b"\n".join(expected))
    assert good == kept
    assert (converter.repaired, converter.filtered) == (ref.repaired, ref.filtered)
    assert [(s.line, s.reason) for s in log.kept] == [(s.line, s.reason) for s in expected_log.kept]


def test_a_block_of_clean_lines_is_handed_on_as_it_is() -> None:
    """No line of the block needs anything: the text is the input's, with no list of lines made."""
    lines = [line.encode() for line in CLEAN] * 50
    text = b"\n".join(lines)
    data, units, good = FreebaseConverter().convert_block(text, len(lines), 1, "dump", SkipLog(lenient=False))
    assert (data, units, good) == (text, None, len(lines))
    data, units, good = FreebaseConverter().convert_block(
        text + b"\n", len(lines) + 1, 1, "dump", SkipLog(lenient=False)
    )
    assert (data, units, good) == (text + b"\n", [*lines, b""], len(lines))
    assert FreebaseConverter().convert_block(b"", 1, 1, "dump", SkipLog(lenient=False)) == (b"", [b""], 0)


def test_a_block_of_clean_tab_separated_lines_gets_spaces_between_its_terms() -> None:
    """The dump's layout, every tab a separator: the same triples with N-Triples' spacing (what the index
    worker reads fastest); a literal holding a tab keeps the block as it is."""
    lines = [line.encode() for line in CLEAN[:7]] * 20
    text = b"\n".join(lines)
    data, units, good = FreebaseConverter().convert_block(text, len(lines), 1, "dump", SkipLog(lenient=False))
    assert (data, units, good) == (text.replace(b"\t", b" "), None, len(lines))
    assert b'"say \\"hi\\" \\\\ \\u00e9\\n"@en .' in data
    with_tab = [*lines, CLEAN[7].encode()]
    text = b"\n".join(with_tab)
    data, units, good = FreebaseConverter().convert_block(text, len(with_tab), 1, "dump", SkipLog(lenient=False))
    assert (data, units, good) == (text, None, len(with_tab))


def test_the_scan_keeps_state_in_line_order_across_chunks() -> None:
    """A prefix declared between clean lines applies from its own line on, in this chunk and the next."""
    converter = FreebaseConverter()
    first = [CLEAN[3].encode(), b"@prefix ns: <http://example.org/>", b"ns:a\tns:b\tns:c\t.", CLEAN[0].encode()]
    units, good = converter.convert(first, 1, "dump", SkipLog(lenient=False))
    assert units[2] == b"<http://example.org/a> <http://example.org/b> <http://example.org/c> ."
    assert (units[0], units[3], good) == (first[0], first[3], 3)
    units, good = converter.convert([b"ns:x\t<p:q>\t1\t."], 5, "dump", SkipLog(lenient=False))
    assert units == [b'<http://example.org/x> <p:q> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .']


def test_a_strict_scan_stops_at_the_first_bad_line_after_clean_ones() -> None:
    from kg_adapters.errors import LoadError

    lines = [line.encode() for line in CLEAN] * 3 + [b"<a>\tzz:b\t<c>\t.", b"<a>\t<b>\t."]
    with pytest.raises(LoadError) as failure:
        FreebaseConverter().convert(lines, 7, "dump.gz", SkipLog(lenient=False))
    assert (failure.value.file, failure.value.line) == ("dump.gz", 7 + len(CLEAN) * 3)
    assert "unknown prefix in predicate" in failure.value.reason


def test_a_line_of_many_escapes_is_scanned_in_linear_time() -> None:
    """Hostile lines (long runs of escapes, an unclosed literal, a megabyte IRI) end the scan's match
    without backtracking blow-ups and get the reference's answer."""
    start = f"<{NS}a>\t<{NS}b>\t".encode()
    lines = [
        start + b'"' + b"\\" * 200_001 + b"\t.",
        start + b'"' + b"\\u0041" * 100_000 + b'"\t.',
        b"<" + b"a" * 1_000_000 + b">\t<b:c>\t<d:e>\t.",
        b"<" + b"%41" * 300_000 + b"%4>\t<b:c>\t<d:e>\t.",
    ]
    expected, kept, _log = reference(FreebaseConverter(), lines, "dump")
    units, good = FreebaseConverter().convert(lines, 10, "dump", SkipLog(lenient=True))
    assert (units, good) == (expected, kept)


def write_dump(path: Path, lines: list[str]) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return path


def test_filters_and_repairs_hold_on_clean_lines_across_chunks(tmp_path: Path) -> None:
    """A dump of clean lines (the scan's case) over two chunks, with repaired and bad lines between:
    --languages keeps en/en-GB and untagged literals, drops the rest; --drop-namespaces drops clean
    lines by predicate; a lenient load reports the bad line with its own number."""
    lines = []
    for i in range(CHUNK_LINES + 300):
        kind, subject = "nfglr"[i % 5], f"<{NS}m.{i:07d}>"
        lines.append(
            {
                "n": f'{subject}\t<{NS}type.object.name>\t"Name {i}"@en\t.',
                "f": f'{subject}\t<{NS}type.object.name>\t"Nom {i}"@fr\t.',
                "g": f'{subject}\t<{NS}type.object.name>\t"Name GB {i}"@en-GB\t.',
                "l": f"{subject}\t<{NS}common.topic.notable_for>\t<{NS}g.{i}>\t.",
                "r": f"{subject} <{NS}people.person.height_meters> 1.{i % 10} .",
            }[kind]
        )
    bad_at = CHUNK_LINES + 7
    lines[bad_at - 1] = f'<{NS}m.x>\t<{NS}type.object.name>\t"unclosed\t.'
    dump = write_dump(tmp_path / "freebase-rdf-clean.gz", lines)
    store = tmp_path / "store"
    chosen = DumpFilter(languages=("en",), drop_namespaces=("common.",))
    report = load_files(
        [str(dump)], str(store), format="freebase", profile="freebase", dump_filter=chosen, lenient=True, progress=False
    )
    counts = {kind: sum(1 for i in range(len(lines)) if "nfglr"[i % 5] == kind) for kind in "nfglr"}
    counts["nfglr"[(bad_at - 1) % 5]] -= 1
    assert [s.line for s in report.skipped] == [bad_at]
    assert report.lines_filtered == counts["f"] + counts["l"]
    assert report.statements_read == counts["n"] + counts["g"] + counts["r"]
    assert report.lines_repaired == counts["r"]
    with connect(f"oxigraph://{store.resolve()}?profile=freebase&relation_filter=none") as kg:
        edges = kg.neighbors("m.0000007")["m.0000007"]
        assert [e.tail for e in edges] == [Literal(value="Name GB 7", lang="en-gb")]
        edges = kg.neighbors("m.0000009")["m.0000009"]
        assert [e.tail for e in edges] == [Literal(value="1.9", datatype=XSD + "decimal")]
        assert kg.neighbors("m.0000001") == {"m.0000001": []}
