"""The index write's sorts in C (kg_adapters/index/_numbering_order.c, through kg_adapters/index/ordering.py)
against the Python path: entity ids in the order Python's ``sorted`` gives their text (multibyte UTF-8, ids that
are prefixes of one another, percent escapes, bytes past the 8 the C sort compares first), the same ranks, id
blob, offsets and spelling verdicts for each profile, the same refusal of two IRIs with one id, and the same edge
columns and starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg_adapters.errors import BackendError
from kg_adapters.index import numbering
from kg_adapters.index.layout import relation_dtype
from kg_adapters.index.numbering import new_numbering
from kg_adapters.index.ordering import edge_columns, ordered_entities
from kg_adapters.profiles import Profile, get_profile

compiled_only = pytest.mark.skipif(not numbering.COMPILED, reason="the C extension was not built (no C compiler)")

FB = "http://rdf.freebase.com/ns/"
TRICKY = [
    FB + "m.0abc",
    FB + "m.0ab",
    FB + "m.0abcdefghijk",
    FB + "m.0abcdefghijj",
    FB + "m.0abcdefghij",
    FB + "g.11b6_x",
    FB + "people.person",
    FB + "caf%C3%A9",
    FB + "caf%C3%A8",
    FB + "café",
    FB + "cafe\u0301",
    FB + "日本",
    FB + "日本語",
    FB + "\U0001f600",
    FB + "\uffff",
    FB + "",
    FB + "a:b",
    FB + "_:b0",
    FB + "x/y",
    "http://rdf.freebase.com/ns",
    "http://rdf.freebase.com/key/wikipedia.en",
    "http://example.org/é",
    "http://example.org/e",
    "http://example.org/%20",
    "http://example.org/ ",
    "urn:x",
    "urn:x\u0080",
    "urn:x\u07ff",
    "urn:x\u0800",
]


class _LooseProfile(Profile):
    """A profile whose local ids may start ``_:`` (such an id does not spell back into its IRI)."""

    name = "loose-test"
    entity_namespace = "http://ex.org/"
    relation_namespace = "http://ex.org/"

    def is_local_id(self, text: str) -> bool:
        return "/" not in text


def _table(iris: list[str]) -> Any:
    table = new_numbering(True)
    for iri in iris:
        table[iri.encode("utf-8")]
    return table


def _both(iris: list[str], profile: Profile) -> tuple[Any, Any]:
    table = _table(iris)
    return ordered_entities(table, profile), ordered_entities(table, profile, compiled=False)


def _same(found: Any, expected: Any) -> None:
    assert found.ids == expected.ids
    assert found.offsets.tolist() == expected.offsets.tolist()
    assert found.rank.tolist() == expected.rank.tolist()
    assert found.spelled_back == expected.spelled_back


@compiled_only
@pytest.mark.parametrize("profile", [get_profile("freebase"), get_profile("generic"), get_profile("wikidata")])
def test_tricky_ids_sort_in_c_as_python_sorts_their_text(profile: Profile) -> None:
    found, expected = _both(TRICKY, profile)
    _same(found, expected)
    names = [profile.entity_id(iri) for iri in TRICKY]
    order = np.argsort(found.rank)
    assert [names[i] for i in order.tolist()] == sorted(names)


@compiled_only
def test_an_id_that_does_not_spell_back_is_found_first_in_number_order() -> None:
    iris = ["http://ex.org/a", "http://ex.org/_:b", "http://ex.org/_:a", "_:c", "http://ex.org/x/y"]
    found, expected = _both(iris, _LooseProfile())
    _same(found, expected)
    assert found.spelled_back == (False, "_:b")


@compiled_only
def test_two_iris_with_one_id_are_refused_alike() -> None:
    iris = [FB + "m.1", "zz", "m.1", FB + "m.0"]
    messages = []
    for compiled in (True, False):
        with pytest.raises(BackendError) as raised:
            ordered_entities(_table(iris), get_profile("freebase"), compiled=compiled)
        messages.append(str(raised.value))
    assert messages[0] == messages[1]
    assert "'m.1'" in messages[0]


@compiled_only
@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.sampled_from(["a", "b", "m", ".", "%", "2", "é", "日", "\U0001f600", "\x7f", "_", ":"])),
        max_size=60,
        unique=True,
    ),
    st.booleans(),
)
def test_generated_ids_sort_in_c_as_in_python(locals_: list[str], namespaced: bool) -> None:
    iris = [(FB if namespaced or i % 2 else "http://x.org/") + local for i, local in enumerate(locals_)]
    if len(set(iris)) != len(iris):
        return
    table = _table(iris)
    try:
        expected = ordered_entities(table, get_profile("freebase"), compiled=False)
    except BackendError as exc:
        with pytest.raises(BackendError) as raised:
            ordered_entities(table, get_profile("freebase"))
        assert str(raised.value) == str(exc)
        return
    _same(ordered_entities(table, get_profile("freebase")), expected)


def _edges(rng: np.random.Generator, count: int, entities: int, relations: int) -> tuple[Any, Any, Any]:
    heads = rng.integers(0, entities, count, dtype=np.int32)
    tails = (rng.zipf(1.3, count) % entities).astype(np.int32)  # a few nodes with many edges
    rels = rng.integers(0, relations, count, dtype=np.int32)
    return heads, rels, tails


@compiled_only
@pytest.mark.parametrize(("count", "entities", "relations"), [(0, 1, 1), (5000, 40, 3), (20000, 3000, 300)])
@pytest.mark.parametrize("extra_relations", [0, 70000])
def test_edge_columns_in_c_equal_the_numpy_path(
    count: int, entities: int, relations: int, extra_relations: int
) -> None:
    rng = np.random.default_rng(count + relations + extra_relations)
    heads, rels, tails = _edges(rng, count, entities, relations)
    if count:  # repeated edges are dropped
        heads, rels, tails = (np.concatenate([column, column[: count // 3]]) for column in (heads, rels, tails))
    width = relations + extra_relations
    entity_rank = rng.permutation(entities).astype(np.int64)
    relation_rank = rng.permutation(width).astype(np.int64)
    found = edge_columns((heads, rels, tails), entity_rank, relation_rank, entities, width)
    expected = edge_columns((heads, rels, tails), entity_rank, relation_rank, entities, width, compiled=False)
    assert found.keys() == expected.keys()
    for name, array in expected.items():
        assert found[name].tolist() == array.tolist(), name
        if name.endswith("_rel"):
            assert found[name].dtype == np.dtype(relation_dtype(width))


@compiled_only
def test_edge_columns_refuse_numbers_out_of_range() -> None:
    from kg_adapters.index._numbering import csr

    ranks = np.arange(4, dtype=np.int64)
    column = np.array([0, 5], dtype=np.int32)
    with pytest.raises(ValueError, match="out of range"):
        csr(column, np.zeros(2, np.int32), np.zeros(2, np.int32), ranks, ranks, 4, 4, 1)
    with pytest.raises(ValueError):
        csr(column, np.zeros(3, np.int32), np.zeros(2, np.int32), ranks, ranks, 4, 4, 1)
    with pytest.raises(ValueError):
        csr(column, np.zeros(2, np.int32), np.zeros(2, np.int32), ranks, ranks, 4, 300, 1)


@compiled_only
@pytest.mark.parametrize(
    "values",
    [
        [],
        [7],
        [3, 3, 3],
        [-1, 2**63 - 1, -(2**63), 0, 1, -256, 255, 256],
        np.random.default_rng(3).integers(0, 1 << 40, 5000).tolist(),
        np.random.default_rng(4).integers(-(1 << 62), 1 << 62, 5000).tolist(),
    ],
)
def test_keys_sorted_in_c_as_numpy_sorts_them(values: list[int]) -> None:
    from kg_adapters.index.ordering import sorted_keys

    array = np.array(values, dtype=np.int64)
    assert sorted_keys(array.copy()).tolist() == np.sort(array).tolist()
    view = np.repeat(np.array(values, dtype=np.int64), 2)[::2]  # not contiguous: numpy sorts a copy
    assert sorted_keys(view).tolist() == sorted(values)


@compiled_only
def test_the_c_sort_refuses_other_buffers() -> None:
    from kg_adapters.index._numbering import sort_int64

    with pytest.raises(TypeError):
        sort_int64(np.zeros(4, dtype=np.int32))
    with pytest.raises(BufferError):
        sort_int64(b"\x00" * 16)  # type: ignore[arg-type] # (not writable)


def _index_files(tmp_path: Path, name: str, text: bytes, memory: int | None) -> dict[str, bytes]:
    """The index files of ``text`` written in memory (``memory`` None) or spilled under ``memory`` bytes."""
    import pyoxigraph as ox

    from kg_adapters.index.build import TripleCollector, build_index
    from kg_adapters.index.spool import CollectorSpool

    collector = TripleCollector()
    spool = None
    if memory is not None:
        spool = CollectorSpool(tmp_path / f"spool-{name}", memory=memory)
        spool.restore(collector, None)
    lines = text.splitlines(keepends=True)
    for start in range(0, len(lines), 500):
        collector.add_rdf(b"".join(lines[start : start + 500]), ox.RdfFormat.N_TRIPLES)
    if spool is not None:
        spool.save(collector)
        spool.reload(collector)
        assert collector._spilled is not None
    target = tmp_path / name
    target.mkdir()
    build_index(None, target, get_profile("freebase"), collected=collector)
    return {item.name: item.read_bytes() for item in sorted((target / "traversal").iterdir())}


@pytest.mark.parametrize("outside", [0, 7])
def test_a_spilled_write_ranks_entities_as_the_write_in_memory(
    tmp_path: Path, outside: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every IRI of the namespace (the spilled write's ids in IRI order, unsorted), or some outside it and some
    whose rest is no local id (the ids sorted on disk): the same files either way."""
    from kg_adapters.budgets import load_memory
    from kg_adapters.index import spilled_ids

    answers: list[object] = []
    unsorted = spilled_ids.namespaced_ids

    def recorded(*args: Any) -> Any:
        answers.append(unsorted(*args))
        return answers[-1]

    monkeypatch.setattr(spilled_ids, "namespaced_ids", recorded)

    lines = []
    for i in range(12_000):
        head = f"{FB}m.0{(i * 7919) % 9000:05d}"
        tail = f"{FB}m.0{(i * 104729) % 9000:05d}" if not outside or i % outside else f"http://x.org/{i % 300}"
        if outside and i % 11 == 0:
            tail = f"{FB}a:{i % 50}"  # in the namespace, not a local id: kept whole
        lines.append(f"<{head}> <{FB}r.p{i % 13}> <{tail}> .\n")
    text = "".join(lines).encode()
    spilled = _index_files(tmp_path, "spilled", text, load_memory("1M").index)
    assert answers == [None if outside else (True, None)]  # sorted on disk only with IRIs kept whole
    assert spilled == _index_files(tmp_path, "memory", text, None)
