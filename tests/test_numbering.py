"""The collector's C numbering (kg_adapters/index/_numbering*.c) against its Python path (dicts and the numpy
split of kg_adapters/index/iri_lines.py): the same lines split, the same numbers in the same order, the same
lines left for the literal and parser paths, the same spool and the same index files, on generated hostile
chunks and on FB15k-237; and the Python path itself (where no C compiler built the extension) still works."""

from __future__ import annotations

import gzip
import itertools
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_iri_lines import TEXTS

from kg_adapters.index import numbering
from kg_adapters.index.build import TripleCollector, build_index
from kg_adapters.index.iri_lines import WIDEST_IRI, split_iri_lines
from kg_adapters.index.numbering import PyNumbering, new_numbering
from kg_adapters.index.spool import CollectorSpool
from kg_adapters.profiles import get_profile

FB15K = Path(__file__).resolve().parents[2] / "shared" / "data" / "fb15k237-freebase.nt.gz"
compiled_only = pytest.mark.skipif(not numbering.COMPILED, reason="the C extension was not built (no C compiler)")


def _state(collector: TripleCollector) -> dict[str, Any]:
    """Everything the collector numbered, as plain values."""
    heads, rels, tails = collector.edges()
    (out_nodes, out_rels), (in_nodes, in_rels) = collector.extras()
    return {
        "entities": list(collector._entity.items()),
        "relations": list(collector._relation.items()),
        "edges": [heads.tolist(), rels.tolist(), tails.tolist()],
        "extras": [out_nodes.tolist(), out_rels.tolist(), in_nodes.tolist(), in_rels.tolist()],
        "literals": sorted(collector.literal_rows()),
        "blanks": collector.blank_edges(),
        "rows": collector.rows,
        "unreadable": collector.unreadable,
    }


def _both(chunks: list[bytes], distinct: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    found = []
    for compiled in (True, False):
        collector = TripleCollector(compiled=compiled, distinct=distinct)
        for chunk in chunks:
            collector.add_rdf(chunk, ox.RdfFormat.N_TRIPLES)
        found.append(_state(collector))
    return found[0], found[1]


# -- the table ---------------------------------------------------------------------------------------------
@compiled_only
@given(st.lists(st.binary(max_size=40) | st.sampled_from([b"", b"a", b"a\x00", b"\xff" * 200]), max_size=300))
def test_the_c_table_numbers_as_the_dict_does(keys: list[bytes]) -> None:
    table, reference = new_numbering(True), PyNumbering()
    assert type(table) is not PyNumbering
    assert [table[key] for key in keys] == [reference[key] for key in keys]
    assert len(table) == len(reference)
    assert list(table) == list(reference) and list(table.items()) == list(reference.items())
    assert table.keys_from(3) == reference.keys_from(3) and table.keys_from(10**6) == []
    assert list(table.sorted_items()) == list(reference.sorted_items())  # a spilled run's order
    looked_up = [*keys, b"never seen \x00"]

    assert [table.get(key) for key in looked_up] == [reference.get(key) for key in looked_up]
    assert len(table) == len(reference)  # get numbers nothing
    assert table.nbytes() >= sum(map(len, reference))
    try:
        expected: list[str] | type[UnicodeDecodeError] = reference.strings()
    except UnicodeDecodeError:
        expected = UnicodeDecodeError
    if expected is UnicodeDecodeError:
        with pytest.raises(UnicodeDecodeError):
            table.strings()
    else:
        assert table.strings() == expected


@compiled_only
def test_the_c_table_grows_past_many_keys_and_refuses_other_keys() -> None:
    table = new_numbering(True)
    keys = [b"http://rdf.freebase.com/ns/m.0%d" % i for i in range(200_000)]
    assert [table[key] for key in keys] == list(range(len(keys)))
    assert [table[key] for key in reversed(keys)] == list(reversed(range(len(keys))))
    assert table.keys_from(199_998) == keys[-2:]
    long_keys = [b"http://e/" + bytes([65 + i % 26]) * (300_000 + i) for i in range(8)]  # past a block's quarter
    assert [table[key] for key in long_keys] == list(range(len(keys), len(keys) + 8))
    assert table.keys_from(len(keys)) == long_keys and table[keys[5]] == 5
    with pytest.raises(TypeError, match="keyed by bytes"):
        table["a str"]  # type: ignore[index]
    with pytest.raises(TypeError):
        table.get("a str")  # type: ignore[arg-type]


@compiled_only
def test_keys_built_to_collide_under_an_unkeyed_hash_spread_over_the_table() -> None:
    """13 bits flipped in every 16-byte segment (bits 63, 98 and 127 of each: the same value under a multiply-xorshift
    hash whatever its seed) give 8,192 keys; the keyed SipHash spreads them: no long run of slots to probe."""
    from kg_adapters.index._numbering import Numbering

    keys = []
    for bits in range(8192):
        key = bytearray(b"http://e/abcdefg" + b"b" * 16 * 13)  # segments aligned on the hash's 8-byte words
        for segment in range(13):
            if bits >> segment & 1:
                for at, flip in ((7, 0x80), (12, 0x04), (15, 0x80)):
                    key[16 + 16 * segment + at] ^= flip
        keys.append(bytes(key))
    table = Numbering()
    assert [table[key] for key in keys] == list(range(8192))
    assert table.longest_run() < 200


def test_the_python_table_is_the_fallback_and_estimates_its_memory() -> None:
    table = new_numbering(False)
    assert type(table) is PyNumbering
    assert [table[key] for key in (b"b", b"a", b"b")] == [0, 1, 0]
    assert table.keys_from(1) == [b"a"] and table.nbytes() == 2 * (numbering.IRI_ENTRY_BYTES + 1)
    collector = TripleCollector(compiled=False)
    assert numbering.compiled_split(collector._entity, collector._relation) is None


# -- the chunks --------------------------------------------------------------------------------------------
IRI_BYTES = st.binary(min_size=0, max_size=12).map(lambda b: b.translate(None, b"\x00\n<>\\ "))
"""Bytes of an IRI (non-UTF-8 too; NUL left out: see ``test_a_nul_in_an_iri``)."""
IRI_PART = IRI_BYTES | st.sampled_from([b"http://e/a", b"http://e/b", b"x" * (WIDEST_IRI - 5), b"y" * (WIDEST_IRI + 3)])


def _iri(part: bytes) -> bytes:
    return b"<" + part + b">"


XSD = b"http://www.w3.org/2001/XMLSchema#"
SUFFIXES = [
    *(b"", b"@en", b"@EN-us", b"@en-", b"@", b"@e1", b"@zh-Hant-TW", b"^^http://e/dt", b"^<x>"),
    *(b"^^<%s>" % iri for iri in (XSD + b"string", XSD + b"integer", XSD + b"date", XSD + b"boolean")),
    *(b"^^<%s>" % iri for iri in (XSD + b"decimal", b"http://e/dt", b"a<b")),
]
LITERAL_VALUES = st.binary(max_size=10) | st.sampled_from(
    [b"01", b"1", b"-0", b"0", b"true", b"1999-02-30", b'x"y', b"a\rb", b"a> <b", b"\xc3\xa9", b"\\u0041"]
)


SEPARATORS = st.sampled_from([b" ", b" ", b"\t"])
"""What separates a line's terms: a space, or a tab (the Freebase dump's layout), each on its own."""


@st.composite
def literal_lines(draw: st.DrawFn) -> bytes:
    """``<s> <p> "value"suffix .`` with values and suffixes the simple-literal split takes or leaves."""
    s, p = (_iri(draw(IRI_PART)) for _ in range(2))
    a, b, c = (draw(SEPARATORS) for _ in range(3))
    value, suffix = draw(LITERAL_VALUES).replace(b"\n", b""), draw(st.sampled_from(SUFFIXES))
    line = b'%s%s%s%s"%s"%s%s.' % (s, a, p, b, value, suffix, c)
    return line if draw(st.integers(0, 9)) else line.replace(b" .", draw(st.sampled_from([b".", b"  .", b" .\r"])))


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    """One line: mostly IRI-to-IRI lines (short and long, repeated names), and hostile ones."""
    s, p, o = (_iri(draw(IRI_PART)) for _ in range(3))
    kind = draw(st.integers(0, 14))
    if kind <= 5:
        a, b, c = (draw(SEPARATORS) for _ in range(3))
        return b"%s%s%s%s%s%s." % (s, a, p, b, o, c)
    if kind <= 8:
        return draw(literal_lines())
    return draw(
        st.sampled_from(
            [
                b'%s %s "a> <b" .' % (s, p),  # '>' inside a literal
                b'%s %s "v"@en .' % (s, p),
                b'%s %s "01"^^<http://www.w3.org/2001/XMLSchema#integer> .' % (s, p),
                b"%s\t%s\t%s ." % (s, p, o),
                b"%s\t\t%s\t%s\t." % (s, p, o),  # two tabs: left to the parser
                b'%s\t%s\t"v"@en\t.' % (s, p),
                b"%s %s %s .\r" % (s, p, o),  # CRLF
                b"%s  %s %s ." % (s, p, o),
                b"%s %s %s . # comment" % (s, p, o),
                b"# %s %s %s ." % (s, p, o),
                b"_:b1 %s %s ." % (p, o),
                b"%s %s _:b2 ." % (s, p),
                b"<a\\u0041> %s %s ." % (p, o),  # an escape
                b"%s %s %s." % (s, p, o),
                b"<aaaaaaaa>>>",
                b"<a> <b> <c> .",
                b"",
                b"\xff\xfe <> <> .",
            ]
        )
    )


@st.composite
def chunks(draw: st.DrawFn) -> list[bytes]:
    """Chunks of lines, each with or without its last line break (the same IRIs across chunks)."""
    found = []
    for _ in range(draw(st.integers(0, 4))):
        text = b"\n".join(draw(st.lists(lines(), max_size=25)))
        found.append(text + b"\n" if draw(st.booleans()) else text)
    return found


def _split(text: bytes) -> tuple[int, bytes, bytes, bytes, bytes]:
    from kg_adapters.index._numbering import Numbering, split_numbered

    return split_numbered(text, Numbering(), Numbering())


@compiled_only
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunks(), st.booleans())
def test_the_c_split_numbers_what_the_python_path_numbers(texts: list[bytes], distinct: bool) -> None:
    """The same lines split, the same numbers in the same order, the same rows and the same rest for the parser
    (its error, if any, the same)."""
    compiled, python = _both(texts, distinct)
    assert compiled == python
    for text in texts:  # the rest handed on is the Python path's, byte for byte
        count, heads, _rels, _tails, rest = _split(text)
        split = split_iri_lines(text)
        if split is None:  # two IRIs of the chunk hashed alike (rare): the regular expression's split
            continue
        expected_rest = b"\n" * split.long.count(b"\n") + split.rest
        assert (count, rest) == (split.count + split.long.count(b"\n"), expected_rest)
        assert len(heads) == 4 * count


@compiled_only
@pytest.mark.parametrize("name", sorted(TEXTS))
def test_the_c_split_on_the_collectors_examples(name: str) -> None:
    compiled, python = _both([TEXTS[name]])
    assert compiled == python


def _tab_layout(text: bytes) -> bytes:
    return text.replace(b"> <", b">\t<").replace(b'> "', b'>\t"').replace(b" .\n", b"\t.\n")


@compiled_only
def test_tab_separated_lines_are_split_in_c_as_space_separated_ones() -> None:
    """The Freebase dump's ``s<TAB>p<TAB>o<TAB>.`` lines (a block the converter could not respace: some line
    repaired or filtered) are numbered by the splits, not parsed quad by quad: the same state as the spaced
    text, and nothing left for the parser."""
    spaced = b"".join(
        b'<http://e/s%d> <http://e/p%d> <http://e/o%d> .\n<http://e/s%d> <http://e/name> "n%d"@en .\n'
        % (i, i % 3, i, i, i)
        for i in range(50)
    )
    tabbed = _tab_layout(spaced)
    assert b" " not in tabbed
    for compiled in (True, False):
        found = [TripleCollector(compiled=compiled) for _ in range(2)]
        found[0].add_rdf(spaced, ox.RdfFormat.N_TRIPLES)
        found[1].add_rdf(tabbed, ox.RdfFormat.N_TRIPLES)
        assert _state(found[0]) == _state(found[1]) and found[1].rows == 100
    count, _heads, _rels, _tails, rest = _split(tabbed)
    assert count == 50 and rest.strip(b"\n").count(b"\n") == 49  # the literal lines, for the literal split
    from kg_adapters.index._numbering import Numbering, split_literals

    nodes, _relations, tags, _lengths, values, rest = split_literals(
        rest, Numbering(), Numbering(), lambda suffix: (7, None)
    )
    assert len(nodes) == 4 * 50 and tags == (7).to_bytes(4, sys.byteorder) * 50 and not rest.strip()
    assert values == b"".join(b"n%d" % i for i in range(50))


@compiled_only
def test_runs_of_one_subject_across_chunks_and_a_growing_table() -> None:
    """Subjects repeated on consecutive lines (a dump grouped by subject: numbered without a lookup), runs that
    cross a chunk's end, and chunks of thousands of new IRIs (the table grows while lookups are under way):
    the C path numbers as the Python path does."""
    lines = [
        b"<http://e/s%d> <http://e/p%d> <http://e/o%d> .\n" % (i // run, i % 7, i * 7919 % 5003)
        for run in (1, 2, 3, 17, 40)
        for i in range(2000)
    ]
    text = b"".join(lines)
    cuts = [0, 1, 17, 18, 5000, 5001, 9999, len(lines)]
    texts = [b"".join(lines[start:end]) for start, end in itertools.pairwise(cuts)]
    texts += [_tab_layout(text[: len(text) // 2]), text[len(text) // 2 :]]
    compiled, python = _both(texts)
    assert compiled == python


def test_a_line_ending_in_its_third_angle_bracket_is_left_to_the_parser() -> None:
    """``<aaaaaaaa>>>`` with no line break after it: the numpy split indexed past the text (IndexError)."""
    for compiled in (True, False):
        collector = TripleCollector(compiled=compiled)
        collector.add_rdf(b"<http://e/a> <http://e/p> <http://e/b> .\n<aaaaaaaa>>>", ox.RdfFormat.N_TRIPLES)
        assert collector.rows == 1 and collector.unreadable is not None


@compiled_only
def test_a_nul_in_an_iri() -> None:
    """An IRI ending in NUL (which Oxigraph refuses: the load fails) is numbered whole by the C table; the
    numpy split's fixed-width rows read it without its NULs. Either way a valid line is numbered alike."""
    from kg_adapters.index._numbering import Numbering, split_numbered

    entities = Numbering()
    split_numbered(b"<a\x00> <p> <a> .\n", entities, Numbering())
    assert list(entities) == [b"a\x00", b"a"]


# -- whole loads: the same spool and the same index files ------------------------------------------------------
def _fb15k_chunks(limit: int) -> list[bytes]:
    with gzip.open(FB15K, "rb") as handle:
        text = handle.read()
    lines = text.splitlines(keepends=True)[:limit]
    return [b"".join(lines[start : start + 20_000]) for start in range(0, len(lines), 20_000)]


def _index_files(chunks: list[bytes], tmp_path: Path, compiled: bool, memory: int | None) -> dict[str, bytes]:
    name = f"{'c' if compiled else 'py'}-{memory}"
    collector = TripleCollector(compiled=compiled)
    if memory is not None:
        spool = CollectorSpool(tmp_path / f"spool-{name}", memory=memory)
        spool.restore(collector, None)
    for chunk in chunks:
        collector.add_rdf(chunk, ox.RdfFormat.N_TRIPLES)
    if memory is not None:
        spool.save(collector)
        spool.reload(collector)
    version = tmp_path / name
    version.mkdir()
    build_index(None, version, get_profile("freebase"), collected=collector)
    files = {item.name: item.read_bytes() for item in sorted((version / "traversal").iterdir())}
    if memory is not None:
        spool_files = sorted(path for path in (tmp_path / f"spool-{name}").rglob("*") if path.is_file())
        files.update({f"spool/{path.name}": path.read_bytes() for path in spool_files if path.suffix != ".json"})
    return files


@pytest.mark.skipif(not FB15K.exists(), reason="needs ../shared/data/fb15k237-freebase.nt.gz")
@pytest.mark.parametrize("memory", [None, 1 << 20])
def test_fb15k237_indexed_with_and_without_the_extension_gives_the_same_files(tmp_path: Path, memory: int) -> None:
    """FB15k-237 (with its names) numbered in C and in Python: byte-identical index files; under a tiny budget
    the spills land at other points (the C table is smaller) yet give the same index."""
    chunks = _fb15k_chunks(120_000 if memory else 10**9)
    python = _index_files(chunks, tmp_path, False, memory)
    if not numbering.COMPILED:
        assert python["meta.json"]
        return
    compiled = _index_files(chunks, tmp_path, True, memory)
    traversal = {name for name in python if not name.startswith("spool/")}
    assert {name: compiled[name] for name in traversal} == {name: python[name] for name in traversal}
    if memory:
        assert any(name.startswith("spool/entities-") for name in python)  # the Python path spilled runs
        assert any(name.startswith("spool/entities-") for name in compiled)  # and so did the C table's


@compiled_only
def test_the_spill_sees_the_c_tables_memory(tmp_path: Path) -> None:
    """The spool's budget check reads the C table's own size: past its share the entity IRIs go to runs."""
    collector = TripleCollector()
    spool = CollectorSpool(tmp_path / "spool", memory=1 << 20)
    spool.restore(collector, None)
    held = []
    line = b"<http://e/m.%dx%d> <http://e/p> <http://e/m.%dx%d> .\n"
    for chunk in range(40):
        text = b"".join(line % (chunk, i, chunk, i + 1) for i in range(500))
        collector.add_rdf(text, ox.RdfFormat.N_TRIPLES)
        held.append(collector._entity.nbytes())
    assert spool.runs > 1
    assert max(held) <= 2 * spool.iri_share  # bounded: checked after each chunk
    assert collector._entity_base > 0 and type(collector._entity) is type(new_numbering(True))


def test_numbers_of_both_paths_fit_int32() -> None:
    """The chunks' numbers come back as int32 arrays the spool writes as they are."""
    for compiled in (True, False):
        collector = TripleCollector(compiled=compiled)
        collector.add_rdf(TEXTS["repeats"], ox.RdfFormat.N_TRIPLES)
        for column in collector._edge_chunks[0]:
            assert column.dtype == np.int32
        assert list(itertools.chain(*collector._edge_chunks[0][0:1]))[:3] == [0, 0, 0]


@pytest.mark.parametrize("compiled", [True, False])
def test_rows_of_numbers_decoded_and_the_spool_lines_without_an_object_per_iri(compiled: bool) -> None:
    """``strings_at`` decodes only the numbers asked for (a name row's entity), ``lines_from`` joins the IRIs
    numbered since a point (the spool's log), both as the keys themselves read; bad numbers are refused."""
    from array import array

    table = new_numbering(compiled)
    keys = [b"http://e/%d" % i for i in range(300)] + ["http://e/\u00e9".encode(), b""]
    for key in keys:
        table[key]
    wanted = array("i", [5, 300, 5, 0, 301])
    assert table.strings_at(wanted) == [keys[n].decode() for n in wanted]
    assert table.strings_at(np.array([299, 1], dtype=np.int32)) == ["http://e/299", "http://e/1"]
    assert table.strings_at(array("i")) == []
    assert table.lines_from(298) == b"http://e/298\nhttp://e/299\n" + "http://e/\u00e9".encode() + b"\n\n"
    assert table.lines_from(0) == b"".join(key + b"\n" for key in keys) and table.lines_from(10**6) == b""
    for bad in (array("i", [302]), array("i", [-1])):
        with pytest.raises(IndexError):
            table.strings_at(bad)
    assert table.strings_at(wanted.tobytes()) == table.strings_at(wanted)  # int32 numbers written out
    every_other = np.arange(6, dtype=np.int32)[::2]
    for wrong in (
        np.array([1, 2], dtype=np.int64),
        array("h", [1, 1]),
        np.array([1], dtype=">i4"),
        b"abc",
        every_other,
    ):
        with pytest.raises(TypeError, match="native int32"):
            table.strings_at(wrong)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        table.lines_from(-1)
    with pytest.raises(TypeError):
        table.lines_from(1.5)  # type: ignore[arg-type]
    with pytest.raises(OverflowError):
        table.lines_from(2**70)
    table[b"\xff"]
    with pytest.raises(UnicodeDecodeError):
        table.strings_at(array("i", [302]))


@compiled_only
def test_chunks_longer_than_a_numbering_window() -> None:
    """A chunk of more IRI lines and more literal lines than the C splits number at once (65,536: their buffers
    stay that size): numbered as the Python path numbers, across the windows' edges."""
    lines = []
    for i in range(70_000):
        lines.append(b"<http://e/s%d> <http://e/p%d> <http://e/o%d> .\n" % (i // 3, i % 5, i * 7 % 65_537))
        lines.append(b'<http://e/t%d> <http://e/q%d> "v%d"@en .\n' % (i * 11 % 70_001, i % 3, i % 10))
    compiled, python = _both([b"".join(lines)])
    assert compiled == python and compiled["rows"] == 140_000


@compiled_only
def test_a_check_that_raises_numbers_no_literal_line_of_its_window() -> None:
    """``check`` raising after thousands of accepted lines: the error comes out, the lines held for numbering are
    released, and neither table numbered any of them."""
    from kg_adapters.index._numbering import Numbering, split_literals

    text = b"".join(b'<http://e/s%d> <http://e/p> "%d" .\n' % (i, i) for i in range(6000))
    seen = []

    def check(value: bytes) -> bool:
        seen.append(value)
        if len(seen) > 5000:
            raise RuntimeError("refused by check")
        return True

    entities, relations = Numbering(), Numbering()
    with pytest.raises(RuntimeError, match="refused by check"):
        split_literals(text, entities, relations, lambda suffix: (0, check))
    assert len(entities) == 0 and len(relations) == 0
