"""Lenient loads stream their input into one Oxigraph bulk load, as strict ones do: the lines Oxigraph would
refuse are found first and skipped (each named by file and line in the report), wherever they lie. Each
test compares the lenient load of a hostile file with a strict load of the same file without its bad lines:
the same triples, traversal index files, name and relation index rows and counts, so the indexes hold
exactly what the store holds."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest
from test_load_resume import NS, freebase_lines, killed_load, store_answers

import loaders.rdf
from loaders import load_files
from loaders.freebase import DumpFilter
from loaders.report import MAX_SKIPPED_KEPT, LoadReport

BLOCK_BYTES = 4000
"""Bytes per N-Triples block in these loads: a few dozen lines, so bad lines fall on block boundaries."""


def without_sources(answers: dict[str, Any]) -> dict[str, Any]:
    """A store's answers without the manifest's record of its input files (their names differ)."""
    manifest = {key: value for key, value in answers["manifest"].items() if key != "sources"}
    return {**answers, "manifest": manifest}


def write(path: Path, lines: list[str], *, newline: str = "\n", last_newline: bool = True) -> Path:
    data = (newline.join(lines) + (newline if last_newline else "")).encode("utf-8", "surrogateescape")
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


def hostile(lines: list[str], bad: dict[int, str]) -> list[str]:
    """``lines`` with line ``i`` (0-based) replaced by ``bad[i]``."""
    return [bad.get(i, line) for i, line in enumerate(lines)]


def refused(i: int) -> str:
    """A line Oxigraph refuses, of one of several kinds."""
    kinds = [
        "this line is not a triple",
        f"<{NS}m.bad{i}> <{NS}r.t.p1> oops .",
        f"<{NS}m.bad {i}> <{NS}r.t.p1> <{NS}m.00001> .",
        f'<{NS}m.bad{i}> <{NS}r.t.p1> "never closed .',
        f"<{NS}m.bad\x00{i}> <{NS}r.t.p1> <{NS}m.00001> .",
        f"<{NS}m.bad{i}> <{NS}r.t.p1> <{NS}m.00001>",
        f"\x00<{NS}m.bad{i}> <{NS}r.t.p1> <{NS}m.00001> .",
    ]
    return kinds[i % len(kinds)]


def good_and_bad(count: int, bad_at: list[int]) -> tuple[list[str], list[str], dict[int, str]]:
    """(the good lines, the hostile file's lines, the bad lines by 0-based index)."""
    lines = [*freebase_lines(count), f'<{NS}m.0nul> <{NS}type.object.name> "NUL\x00inside"@en .']
    bad = {i: refused(i) for i in bad_at if i < len(lines)}
    good = [line for i, line in enumerate(lines) if i not in bad]
    return good, hostile(lines, bad), bad


FREEBASE_REFUSED = [
    "this line is not a triple",
    "ns:m.0bad{i}\tns:r.t.p1\t<relative/iri/{i}>\t.",
    "<rel{i}>\tns:r.t.p1\tns:m.0001\t.",
    "ns:m.0bad{i}\tns:r.t.p1\t<http://a/b#c#{i}>\t.",
    'ns:m.0bad{i}\tns:r.t.p1\t"x"^^<rel{i}>\t.',
]
"""Freebase dump lines a lenient load skips: some its converter refuses, some Oxigraph refuses once converted."""


def assert_skipped(report: LoadReport, dump: Path, bad: dict[int, str]) -> None:
    """The report counts every bad line and names the first ones (file, line, the parser's reason); lines the
    converter and the parser refuse in one piece are reported in that order, hence sorted here when all fit."""
    assert report.lines_skipped == len(bad)
    expected = [(str(dump), i + 1) for i in sorted(bad)]
    named = [(s.file, s.line) for s in report.skipped]
    if len(bad) <= MAX_SKIPPED_KEPT:
        assert sorted(named) == expected
    else:
        assert named == expected[:MAX_SKIPPED_KEPT]
    assert all(s.reason for s in report.skipped)


def check_lenient_equals_strict(
    tmp_path: Path,
    good: list[str],
    lines: list[str],
    bad: dict[int, str],
    *,
    suffix: str = ".nt",
    newline: str = "\n",
    last_newline: bool = True,
    **options: Any,
) -> None:
    dump = write(tmp_path / f"hostile{suffix}", lines, newline=newline, last_newline=last_newline)
    expected = write(tmp_path / f"good{suffix}", good, newline=newline, last_newline=last_newline)
    report = load_files([str(dump)], str(tmp_path / "lenient"), lenient=True, progress=False, **options)
    strict = load_files([str(expected)], str(tmp_path / "strict"), progress=False, **options)
    assert_skipped(report, dump, bad)
    assert report.statements_read == strict.statements_read
    assert report.store_triples == strict.store_triples
    lenient_answers = without_sources(store_answers(tmp_path / "lenient"))
    assert lenient_answers == without_sources(store_answers(tmp_path / "strict"))
    assert lenient_answers["traversal"] and lenient_answers["labels.sqlite"]


@pytest.mark.parametrize(
    "case",
    [
        "first line",
        "last line without a newline",
        "on both sides of block boundaries",
        "a whole block",
        "CRLF line ends",
        "NUL bytes",
        "gzip",
    ],
)
def test_a_lenient_stream_skips_refused_lines_anywhere_and_its_indexes_hold_what_the_store_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    monkeypatch.setattr(loaders.rdf, "CHUNK_BYTES", BLOCK_BYTES)
    count = 1500
    options: dict[str, Any] = {"profile": "freebase"}
    if case == "first line":
        bad_at = [0, 1, 700]
    elif case == "last line without a newline":
        bad_at, options["last_newline"] = [3, count], False  # the last line is the NUL-literal one, here refused
    elif case == "on both sides of block boundaries":
        bad_at = [i for i in range(count) if i % 31 in (0, 1, 30)]
    elif case == "a whole block":
        bad_at = list(range(200, 400))  # ~40 lines per block: whole blocks refused, boundaries inside
    elif case == "CRLF line ends":
        bad_at, options["newline"] = [0, 77, 78, 1000, count], "\r\n"
    elif case == "NUL bytes":
        bad_at = [i for i in range(4, count, 7 * 13)]  # refused(i) for i % 7 == 4 puts a NUL inside an IRI
    else:
        bad_at, options["suffix"] = [5, 600, 601, count - 1], ".nt.gz"
    good, lines, bad = good_and_bad(count, bad_at)
    check_lenient_equals_strict(tmp_path, good, lines, bad, **options)


def test_a_lenient_stream_numbered_in_the_worker_process_holds_what_the_store_holds(tmp_path: Path) -> None:
    """An input of more than a MiB is numbered in the index worker process."""
    good, lines, bad = good_and_bad(16_000, list(range(0, 16_000, 997)) + list(range(5000, 5100)))
    check_lenient_equals_strict(tmp_path, good, lines, bad, profile="freebase")
    assert (tmp_path / "hostile.nt").stat().st_size > 1 << 20


def test_a_lenient_freebase_stream_keeps_its_repairs_and_filters_and_skips_refused_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--format freebase --lenient --languages en --drop-namespaces``: the repairs (prefixed names, tabs)
    and filters work as in a strict load of the good lines, and each refused line is reported."""
    monkeypatch.setattr(loaders.rdf, "CHUNK_LINES", 150)
    lines = ["@prefix ns: <http://rdf.freebase.com/ns/> ."]
    bad_at: list[int] = []
    for i in range(3000):
        lines.append(f"ns:m.0{i % 300:03d}\tns:r.t.p{i % 7}\tns:m.0{(i * 3) % 301:03d}\t.")
        if i % 10 == 0:
            lines.append(f'ns:m.0{i % 300:03d}\tns:type.object.name\t"N{i}"@{"en" if i % 20 else "de"}\t.')
        if i % 11 == 0:
            lines.append(f"ns:m.0{i % 300:03d}\tns:common.topic.notable\tns:m.0{i % 13:03d}\t.")
        if i % 149 == 0 or 1200 <= i < 1260:  # refused by the converter, or by Oxigraph once converted
            bad_at.append(len(lines))
            lines.append(FREEBASE_REFUSED[i % len(FREEBASE_REFUSED)].format(i=i))
    bad = {i: lines[i] for i in bad_at}
    good = [line for i, line in enumerate(lines) if i not in bad]
    dump_filter = DumpFilter(languages=("en",), drop_namespaces=("common.",))
    dump = tmp_path / "freebase-rdf-hostile.gz"
    expected = tmp_path / "freebase-rdf-good.gz"
    write(dump, lines)
    write(expected, good)
    options: dict[str, Any] = {"format": "freebase", "profile": "freebase", "dump_filter": dump_filter}
    report = load_files([str(dump)], str(tmp_path / "lenient"), lenient=True, progress=False, **options)
    strict = load_files([str(expected)], str(tmp_path / "strict"), progress=False, **options)
    assert_skipped(report, dump, bad)
    assert (report.statements_read, report.lines_filtered) == (strict.statements_read, strict.lines_filtered)
    # the converter counts a line it rewrote before Oxigraph refuses it (as loads chunk by chunk did)
    assert report.lines_repaired >= strict.lines_repaired
    assert report.lines_filtered > 0 and report.lines_repaired > 0
    assert without_sources(store_answers(tmp_path / "lenient")) == without_sources(store_answers(tmp_path / "strict"))


@pytest.mark.parametrize("point", ["checkpoint:3", "checkpoint:9", "parsed"])
def test_a_killed_lenient_stream_with_refused_lines_resumes_to_the_same_store_and_report(
    tmp_path: Path, point: str
) -> None:
    """kill -9 at a checkpoint of a lenient N-Triples stream with refused lines (some on block boundaries),
    then the same load: the store, its indexes and the skip report equal an uninterrupted load's."""
    good, lines, bad = good_and_bad(6000, [0, *range(250, 330), *range(1000, 6000, 173), 6000])
    dump = write(tmp_path / "hostile.nt.gz", lines)
    reference = tmp_path / "reference"
    expected = load_files([str(dump)], str(reference), lenient=True, profile="freebase", progress=False)
    store = tmp_path / "store"
    killed_load(point, [str(dump)], store, lenient=True)
    report = load_files([str(dump)], str(store), lenient=True, profile="freebase", progress=False)
    assert report.resumed
    assert report.skipped == expected.skipped
    assert_skipped(report, dump, bad)
    assert (report.statements_read, report.store_triples) == (expected.statements_read, expected.store_triples)
    assert store_answers(store) == store_answers(reference)
    assert len(good) == len(lines) - len(bad)


def test_a_lenient_stream_loads_a_token_over_the_parser_buffer_on_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A literal longer than Oxigraph's parser buffer fails a stream (and a strict load), but a lenient load takes
    it as it always did: its piece is bulk loaded on its own, between streams, and the refused lines around it
    are skipped with their lines."""
    monkeypatch.setattr(loaders.rdf, "CHUNK_BYTES", 1 << 20)
    _good, lines, bad = good_and_bad(30_000, [3, 24_999, 25_001, 29_000])
    lines[25_000] = f'<{NS}m.0long> <{NS}type.object.name> "{"x" * (17 << 20)}"@en .'
    dump = write(tmp_path / "long.nt", lines)
    report = load_files([str(dump)], str(tmp_path / "lenient"), lenient=True, progress=False, profile="freebase")
    assert_skipped(report, dump, bad)
    others = [line for i, line in enumerate(lines) if i not in bad and i != 25_000]
    strict = load_files([str(write(tmp_path / "others.nt", others))], str(tmp_path / "strict"), progress=False)
    assert report.statements_read == strict.statements_read + 1
    lenient, expected = (
        set(store_answers(tmp_path / "lenient")["triples"]),
        set(store_answers(tmp_path / "strict")["triples"]),
    )
    assert expected < lenient and [len(t) > 17 << 20 for t in lenient - expected] == [True]
