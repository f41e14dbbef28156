"""The collector's literal rows held column-wise (:mod:`kg_adapters.index.literals`), their spool blocks
(:mod:`kg_adapters.index.literal_spool`) and the literal table sorted by numpy
(:mod:`kg_adapters.index.literal_table`): duplicates dropped when the table is written, values ordered as
their bytes, and the index files and name indexes those of the same triples stated once, read back from a
store, collected by the C split or the Python path, and resumed from a save."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.index_files import written_indexes

from kg_adapters.index import literal_names, literal_table, numbering
from kg_adapters.index.build import TripleCollector, build_index
from kg_adapters.index.literal_spool import add_blocks, file_blocks, literal_rows, write_block
from kg_adapters.index.literal_table import value_ranks
from kg_adapters.index.literals import LiteralColumns
from kg_adapters.index.spool import CollectorSpool
from kg_adapters.profiles import get_profile
from kg_adapters.relation_index import ALIAS_PREDICATES
from kg_adapters.terms import INDEXED_LABEL_PREDICATES

NS = "http://rdf.freebase.com/ns/"
XSD = "http://www.w3.org/2001/XMLSchema#"
NAME, LABEL, ALIAS = f"{NS}type.object.name", "http://www.w3.org/2000/01/rdf-schema#label", ALIAS_PREDICATES[0]
OBJECTS = [
    '""',
    '""@en',
    '"x"',
    '"x"@en',
    '"x"@fr',
    '"x"@EN-gb',
    f'"x"^^<{XSD}string>',
    '"x"^^<http://e/dt>',
    f'"01"^^<{XSD}integer>',  # Oxigraph stores "1": one triple with the next two
    f'"+1"^^<{XSD}integer>',
    f'"1"^^<{XSD}integer>',
    f'"1.0"^^<{XSD}decimal>',
    f'"1"^^<{XSD}boolean>',
    f'"true"^^<{XSD}boolean>',
    f'"2020-01-01"^^<{XSD}date>',
    '"\u00e9t\u00e9"',
    '"\u65e5\u672c"@ja',
    '"\U0001f600"',
    '"a\\"b"',
    '"\\u00e9"',
    '"\x7f\x01\u0080\u07ff"',  # bytes that look binary, valid UTF-8, no NUL
    '"\\u0001"',
    '"abcdefghijklmnopq1"',  # values tied on their first 8 and 16 bytes
    '"abcdefghijklmnopq2"',
    '"abcdefgh"',
    '"abcdefghi"',
    '"abcdefgh\\u0000"',
    '"abcdefghijklmnopq"@en',
    '"Zed"',
    '"zed"',
]
PREDICATES = [NAME, LABEL, ALIAS, f"{NS}r.lit", f"{NS}r.other"]


def _lines(count: int, seed: int = 3) -> list[bytes]:
    import random

    rng = random.Random(seed)
    lines = []
    for i in range(count):
        subject = f"<{NS}m.0{rng.randrange(60)}>"
        lines.append(f"{subject} <{rng.choice(PREDICATES)}> {rng.choice(OBJECTS)} .\n".encode())
        if i % 4 == 0:
            lines.append(f"{subject} <{NS}r.edge> <{NS}m.0{rng.randrange(60)}> .\n".encode())
    return lines


def _chunks(lines: list[bytes], size: int) -> list[bytes]:
    return [b"".join(lines[start : start + size]) for start in range(0, len(lines), size)]


def _collected(chunks: list[bytes], *, compiled: bool = True) -> TripleCollector:
    collector = TripleCollector(compiled=compiled)
    for chunk in chunks:
        collector.add_rdf(chunk, ox.RdfFormat.N_TRIPLES)
    return collector


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=30) | st.sampled_from([b"", b"\x00", b"abcdefgh", b"abcdefgh\x00"]), max_size=80))
def test_value_ranks_order_values_as_their_bytes(values: list[bytes]) -> None:
    """Values laid out in a shuffled blob: ranks order them as ``bytes`` compare, equal values share one."""
    order = sorted(range(len(values)), key=lambda i: (len(values[i]) * 7919 + i) % 101)
    blob, starts = b"", [0] * len(values)
    for i in order:
        starts[i] = len(blob)
        blob += values[i]
    ranks = value_ranks(bytearray(blob), np.array(starts, dtype=np.int64), np.array(list(map(len, values)), np.int64))
    for i, first in enumerate(values):
        for j, second in enumerate(values):
            assert (first < second) == (ranks[i] < ranks[j]) and (first == second) == (ranks[i] == ranks[j])


def test_literals_stated_twice_across_chunks_index_as_stated_once(tmp_path: Path) -> None:
    """Repeated triples (across chunks, and the same value under other tags and spellings) write the files and
    name indexes of the text stated once, and of the store read back (Oxigraph's canonical typed values)."""
    lines = _lines(1500)
    once = written_indexes(_collected(_chunks(lines, 300)), tmp_path / "once")
    twice = written_indexes(_collected(_chunks([*lines, *lines[::-1]], 400)), tmp_path / "twice")
    assert twice == once
    store = ox.Store()
    store.bulk_load(b"".join(lines), ox.RdfFormat.N_TRIPLES)
    (tmp_path / "store").mkdir()
    build_index(store, tmp_path / "store", get_profile("freebase"))
    from_store = {item.name: item.read_bytes() for item in sorted((tmp_path / "store" / "traversal").iterdir())}
    assert from_store == {name: value for name, value in once.items() if name in from_store}
    meta = once["meta.json"].decode()
    distinct = {(q.subject, q.predicate, q.object) for q in store if isinstance(q.object, ox.Literal)}
    assert f'"literal_edges": {len(distinct)}' in meta


@pytest.mark.skipif(not numbering.COMPILED, reason="the C extension was not built (no C compiler)")
def test_the_c_split_and_the_python_path_write_the_same_files(tmp_path: Path) -> None:
    chunks = _chunks(_lines(1200, seed=5) * 2, 250)
    compiled, python = _collected(chunks), _collected(chunks, compiled=False)
    assert list(compiled.literal_columns().rows()) == list(python.literal_columns().rows())
    assert written_indexes(compiled, tmp_path / "c") == written_indexes(python, tmp_path / "py")


@pytest.mark.parametrize("memory", [1 << 32, 1 << 16])
def test_a_collector_resumed_after_a_save_writes_the_same_files(tmp_path: Path, memory: int) -> None:
    """Rows spooled by a save (blocks of columns) and read back by a collector restored from that save: the
    files of the collector that never stopped, in memory and spilled."""
    chunks = _chunks(_lines(2000, seed=9) * 2, 300)
    whole = written_indexes(_collected(chunks), tmp_path / "whole")
    collector = TripleCollector()
    spool = CollectorSpool(tmp_path / "spool", memory=memory)
    spool.restore(collector, None)
    for chunk in chunks[:5]:
        collector.add_rdf(chunk, ox.RdfFormat.N_TRIPLES)
    state = spool.save(collector)
    for chunk in chunks[5:9]:  # collected after the save: dropped by the restore, then collected again
        collector.add_rdf(chunk, ox.RdfFormat.N_TRIPLES)
    spool.flush(collector)
    resumed = TripleCollector()
    again = CollectorSpool(tmp_path / "spool", memory=memory)
    again.restore(resumed, state)
    rows = literal_rows((tmp_path / "spool" / "literals.bin").read_bytes())
    assert rows and all(isinstance(value, bytes) and isinstance(tag, bytes) for _e, _r, value, tag in rows)
    for chunk in chunks[5:]:
        resumed.add_rdf(chunk, ox.RdfFormat.N_TRIPLES)
    again.save(resumed, keep=True)
    again.reload(resumed)
    assert written_indexes(resumed, tmp_path / "resumed") == whole


def test_a_damaged_literal_file_is_refused(tmp_path: Path) -> None:
    collector = TripleCollector()
    spool = CollectorSpool(tmp_path / "spool")
    spool.restore(collector, None)
    collector.add_rdf(b'<http://e/s> <http://e/p> "v" .\n', ox.RdfFormat.N_TRIPLES)
    spool.flush(collector)
    data = (tmp_path / "spool" / "literals.bin").read_bytes()
    assert literal_rows(data)
    with pytest.raises(ValueError, match="damaged"):
        literal_rows(data[:-1])
    with pytest.raises(ValueError, match="damaged"):
        literal_rows(b"XXXX" + data[4:])


def test_spooled_entity_numbers_past_int32_are_refused_not_wrapped(tmp_path: Path) -> None:
    """Reloading a spool into int32 columns refuses a number it cannot hold instead of wrapping it."""
    columns = LiteralColumns()
    columns.append(7, 0, b"v", b"")
    path = tmp_path / "literals.bin"
    for base, fits in ((0, True), ((1 << 31) - 8, True), ((1 << 31) - 7, False)):
        with open(path, "wb") as handle:
            write_block(handle, columns, base)
        into = LiteralColumns()
        if fits:
            add_blocks(into, file_blocks(path))
            assert list(into.rows()) == [(base + 7, 0, b"v", b"")]
        else:
            with pytest.raises(ValueError, match="out of range"):
                add_blocks(into, file_blocks(path))
            assert len(into) == 0


@pytest.mark.parametrize("row_bytes", [0, 10**9])
def test_a_spilled_collection_writes_its_literal_table_and_name_rows_in_memory_or_sorted_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, row_bytes: int
) -> None:
    """Past its budget the collection is written from the spool: its literal table and name rows, sorted by
    numpy when they fit their share (row_bytes 0) or on disk, are those of the collection that never spilled."""
    monkeypatch.setattr(literal_names, "_NAME_ROW_BYTES", row_bytes)
    monkeypatch.setattr(literal_table, "TABLE_ROW_BYTES", row_bytes)
    chunks = _chunks(_lines(600, seed=11) * 2, 150)
    whole = _collected(chunks)
    collector = TripleCollector()
    spool = CollectorSpool(tmp_path / "spool", memory=1 << 18)
    spool.restore(collector, None)
    for chunk in chunks:
        collector.add_rdf(chunk, ox.RdfFormat.N_TRIPLES)
    spool.reload(collector)
    assert collector._spilled is not None
    for predicates in (INDEXED_LABEL_PREDICATES, ALIAS_PREDICATES):
        expected = whole.label_rows(predicates)
        assert expected and list(collector.label_rows(predicates)) == expected
    assert written_indexes(collector, tmp_path / "spilled") == written_indexes(whole, tmp_path / "whole")


@pytest.mark.parametrize("step", [1 << 21, 5, 1])
def test_gather_copies_values_a_few_bytes_at_a_time_and_long_ones_alone(
    monkeypatch: pytest.MonkeyPatch, step: int
) -> None:
    from kg_adapters.index import literals

    monkeypatch.setattr(literals, "_GATHER_BYTES", step)
    values = [b"", b"a", b"long value " * 9, b"", "\u00e9\u4e2d".encode(), b"xy" * 3, b""]
    blob = b"".join(values[::-1])
    starts = [len(b"".join(values[::-1][: len(values) - 1 - i])) for i in range(len(values))]
    order = [2, 0, 5, 1, 6, 4, 3]
    found = literals.gather(
        bytearray(blob),
        np.array([starts[i] for i in order], dtype=np.int64),
        np.array([len(values[i]) for i in order], dtype=np.int64),
    )
    assert found == b"".join(values[i] for i in order)
