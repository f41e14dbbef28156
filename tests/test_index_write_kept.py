"""The index phase written from what the collector holds: the load's last save keeps the collector's buffers
(``CollectorSpool.save(keep=True)``) and the reload reads back only what earlier saves spooled. The index
files and the name and relation indexes must be those of a collector restored from the spool alone (what a
load killed after its last checkpoint resumes from), in memory and spilled; the name rows are those of the
triples themselves (Oxigraph's own reading), distinct and sorted."""

from __future__ import annotations

import gzip
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.index_files import written_indexes

from kg_adapters.index.build import TripleCollector, build_index
from kg_adapters.index.spool import CollectorSpool
from kg_adapters.label_index import _COMPACT_SCHEMA, LabelIndex, normalize
from kg_adapters.profiles import get_profile
from kg_adapters.relation_index import ALIAS_PREDICATES
from kg_adapters.store_build import write_label_indexes
from kg_adapters.terms import INDEXED_LABEL_PREDICATES

FB15K = Path(__file__).resolve().parents[2] / "shared" / "data" / "fb15k237-freebase.nt.gz"
needs_fb15k = pytest.mark.skipif(not FB15K.exists(), reason="needs ../shared/data/fb15k237-freebase.nt.gz")


def _chunks(limit: int) -> list[bytes]:
    with gzip.open(FB15K, "rb") as handle:
        lines = handle.read().splitlines(keepends=True)[:limit]
    return [b"".join(lines[start : start + 20_000]) for start in range(0, len(lines), 20_000)]


def _kept_and_resumed(tmp_path: Path, chunks: list[bytes], memory: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The indexes of a collector that saved midway then kept its buffers at the last save, and of one
    restored from that last save's state alone."""
    kept = TripleCollector()
    spool = CollectorSpool(tmp_path / "spool", memory=memory)
    spool.restore(kept, None)
    middle = len(chunks) // 2
    for chunk in chunks[:middle]:
        kept.add_rdf(chunk, ox.RdfFormat.N_TRIPLES)
    spool.save(kept)  # a checkpoint of the parse: these rows are read back from the files
    for chunk in [*chunks[middle:], chunks[0]]:  # a chunk again: its triples are in the files and in memory
        kept.add_rdf(chunk, ox.RdfFormat.N_TRIPLES)
    state = spool.save(kept, keep=True)
    spool.reload(kept)
    from_memory = written_indexes(kept, tmp_path / "kept")

    resumed = TripleCollector()
    again = CollectorSpool(tmp_path / "spool", memory=memory)
    again.restore(resumed, state)
    again.reload(resumed)
    return from_memory, written_indexes(resumed, tmp_path / "resumed")


@needs_fb15k
def test_fb15k237_written_from_kept_buffers_is_what_a_resumed_load_writes(tmp_path: Path) -> None:
    from_memory, resumed = _kept_and_resumed(tmp_path, _chunks(10**9), 1 << 32)
    assert from_memory == resumed
    assert from_memory["names"] > 14_000 and len(from_memory["labels.sqlite/label_rows"]) == from_memory["names"]


@needs_fb15k
def test_fb15k237_kept_buffers_past_the_budget_are_written_spilled_as_a_resumed_load_does(tmp_path: Path) -> None:
    """A budget too small for the in-memory write: the kept buffers, already on disk, are not spooled twice."""
    chunks = _chunks(120_000)
    from_memory, resumed = _kept_and_resumed(tmp_path, chunks, 1 << 20)
    assert from_memory == resumed
    whole = TripleCollector()
    for chunk in chunks:
        whole.add_rdf(chunk, ox.RdfFormat.N_TRIPLES)
    assert written_indexes(whole, tmp_path / "unspooled") == from_memory  # and both are the unspilled write's


_SUBJECTS = [f"http://example.org/{name}" for name in ("a", "a/b", "ab", "b#c", "z", "\u00e9", "\u4e2d", "a%20")]
_PREDICATES = [*INDEXED_LABEL_PREDICATES[:2], *ALIAS_PREDICATES, "http://example.org/other"]
_VALUES = st.lists(
    st.sampled_from(["a", "A", "z", " ", "\u00e9", "e\u0301", "\u4e2d", "\U0001f600", '"', "\\"]), max_size=4
).map("".join)
_TAGS = st.sampled_from(["", "@en", "@en-gb", "@fr", "^^<http://www.w3.org/2001/XMLSchema#string>"])


def _literal(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(st.sampled_from(_SUBJECTS), st.sampled_from(_PREDICATES), _VALUES, _TAGS), min_size=1, max_size=60
    ),
    st.integers(min_value=1, max_value=5),
)
def test_name_rows_are_the_triples_names_distinct_and_sorted(
    triples: list[tuple[str, str, str, str]], pieces: int
) -> None:
    """Names under two predicates, repeated, in several languages, escaped and outside ASCII: the rows are
    those Oxigraph reads from the same text, each once, in (IRI, label, language) order."""
    lines = [f"<{s}> <{p}> {_literal(value)}{tag} .\n".encode() for s, p, value, tag in triples]
    collector = TripleCollector()
    size = -(-len(lines) // pieces)
    for start in range(0, len(lines), size):
        collector.add_rdf(b"".join(lines[start : start + size]), ox.RdfFormat.N_TRIPLES)
    quads = list(ox.parse(b"".join(lines), ox.RdfFormat.N_TRIPLES))
    for predicates in (INDEXED_LABEL_PREDICATES, ALIAS_PREDICATES):
        expected = sorted(
            {
                (quad.subject.value, quad.object.value, quad.object.language or "")
                for quad in quads
                if quad.predicate.value in predicates and isinstance(quad.object, ox.Literal)
            }
        )
        assert list(collector.label_rows(predicates)) == expected


@needs_fb15k
def test_fb15k237_index_read_back_from_a_store_matches_the_collected_one(tmp_path: Path) -> None:
    """The collected write (kept buffers, rows in first-seen order) gives the files ``kga index`` writes
    from the store read back (a distinct collector, rows in the store's order)."""
    chunks = _chunks(60_000)
    collector = TripleCollector()
    spool = CollectorSpool(tmp_path / "spool")
    spool.restore(collector, None)
    store = ox.Store()
    for chunk in chunks:
        collector.add_rdf(chunk, ox.RdfFormat.N_TRIPLES)
        store.bulk_load(chunk, ox.RdfFormat.N_TRIPLES)
    spool.save(collector, keep=True)
    spool.reload(collector)
    (tmp_path / "collected").mkdir()
    (tmp_path / "read").mkdir()
    build_index(None, tmp_path / "collected", get_profile("freebase"), collected=collector)
    build_index(store, tmp_path / "read", get_profile("freebase"))
    for item in sorted((tmp_path / "read" / "traversal").iterdir()):
        assert (tmp_path / "collected" / "traversal" / item.name).read_bytes() == item.read_bytes(), item.name


@given(st.lists(st.text(max_size=12) | _VALUES, max_size=30))
def test_the_name_index_stores_a_normalized_copy_only_where_sqlite_lower_is_not_it(labels: list[str]) -> None:
    """The compact layout's ``norm`` column: NULL exactly where SQLite's ``lower`` (ASCII letters only) of
    the name is its normalized form, which the index's view reads instead."""
    index = LabelIndex()
    rows = [(f"http://example.org/{number}", label, "") for number, label in enumerate(labels)]
    index.insert(rows)  # the rows as written
    written = index._db.execute("SELECT label, norm, coalesce(norm, lower(label)) FROM label_rows ORDER BY rowid")
    for (_iri, label, _lang), (stored, norm, lowered) in zip(rows, written.fetchall(), strict=True):
        assert stored == label
        assert norm == (None if label.isascii() and normalize(label) == label.lower() else normalize(label))
        assert lowered == normalize(label)


def _names(count: int) -> list[tuple[str, str, str]]:
    words = ["Marze", "Velkaju", "Barnor", "Kellomi", "directed", "director", "Émile", "Zola", "of", "the"]
    return [  # of 3 to 6 words: BM25 ranks a shorter name holding the words first
        (
            f"http://example.org/e{number}",
            " ".join(
                [
                    words[number % 10],
                    *words[number % 7 : number % 7 + number % 4],
                    words[number * 7 % 10],
                    str(number % 13),
                ]
            ),
            "en",
        )
        for number in range(count)
    ]


QUERIES = ["marze", "marze velkaju", "velkaju marze", "emile", "direct", "director of", "the zola", "bar", "kellomi 12"]


def test_a_name_index_is_replaced_whole_or_not_at_all(tmp_path: Path) -> None:
    """A build writes beside the index and renames over it once complete: a build failing midway leaves
    the index written before answering as it did and nothing beside it; a file left by a killed build
    is written again."""
    path = tmp_path / "labels.sqlite"
    assert write_label_indexes(_names(500), [], str(path)) == 500
    index = LabelIndex(str(path), read_only=True)
    before = {query: index.ranked(query, 10) for query in QUERIES}
    index.close()

    def failing() -> Iterator[tuple[str, str, str]]:
        yield from _names(300)
        raise OSError("the rows' source failed")

    with pytest.raises(OSError, match="source failed"):
        write_label_indexes(failing(), [], str(path))
    assert sorted(item.name for item in tmp_path.iterdir()) == ["labels.sqlite", "relations.sqlite"]
    index = LabelIndex(str(path), read_only=True)
    assert {query: index.ranked(query, 10) for query in QUERIES} == before
    index.close()
    (tmp_path / "labels.sqlite.building").write_bytes(b"half of an index")
    assert write_label_indexes(_names(40), [], str(path)) == 40
    assert sorted(item.name for item in tmp_path.iterdir()) == ["labels.sqlite", "relations.sqlite"]
    assert LabelIndex(str(path), read_only=True).ranked("marze", 100)


def test_an_index_written_with_the_names_lengths_stored_answers_the_same(tmp_path: Path) -> None:
    """Indexes written before keep FTS5's table of each name's length (``columnsize=1``); BM25 ranks the
    same without it."""
    rows = _names(2000)
    old = tmp_path / "old.sqlite"
    connection = sqlite3.connect(old)
    connection.executescript(_COMPACT_SCHEMA.replace("columnsize=0", "columnsize=1"))
    connection.close()
    kept = LabelIndex(str(old))
    kept.add(rows)
    kept.close()
    write_label_indexes(rows, [], str(tmp_path / "new.sqlite"))
    answers = []
    for path in (old, tmp_path / "new.sqlite"):
        index = LabelIndex(str(path), read_only=True)
        answers.append({query: index.ranked(query, 25) for query in QUERIES})
        index.close()
    assert answers[0] == answers[1]
    assert sum(len(found) for found in answers[0].values()) > 100
