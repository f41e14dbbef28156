"""An append (``kga load`` into an existing store: a dump split into parts, loaded part by part) writes its
traversal, name and relation indexes from the previous version's traversal index plus what the load saw,
never by reading the store back, and they equal those of one load of every part into a new store: the
files byte for byte and every answer (neighbors, relations, names, search, counts), with triples repeated
across parts, new names for old entities, new relations, blank nodes, several languages and aliases.
When the previous version's index cannot stand for its triples, the append reads the store back and says
why. Real stores on disk, real loads (in a killed child process for the resume)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest
from test_index_spill import TINY, spill_lines
from test_load_resume import BLANK_SCOPE, build_dir, freebase_lines, killed_load, store_answers, write_dump

import loaders.indexing
from kg_adapters import connect, store_layout
from kg_adapters.backends.oxigraph import OxigraphGraph
from kg_adapters.index.layout import META, index_dir
from kg_adapters.records import Edge
from loaders import load_files
from loaders.load_indexes import FROM_PREVIOUS_INDEX, READ_BACK

EX = "http://example.org/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
ALT = "http://www.w3.org/2004/02/skos/core#altLabel"
WD, WDT = "http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/direct/"
XSD = "http://www.w3.org/2001/XMLSchema#"

GENERIC_PARTS = [
    [
        f"<{EX}alice> <{EX}knows> <{EX}bob> .",
        f"<{EX}bob> <{EX}knows> <{EX}carol> .",
        f"<{EX}alice> <{EX}knows> <{EX}alice> .",
        f'<{EX}alice> <{RDFS_LABEL}> "Alice"@en .',
        f'<{EX}alice> <{RDFS_LABEL}> "Alicia"@es .',
        f'<{EX}bob> <{RDFS_LABEL}> "Bob" .',
        f'<{EX}alice> <{EX}age> "042"^^<{XSD}integer> .',
        f'<{EX}alice> <{EX}height> "1.50"^^<{XSD}decimal> .',
        f'<{EX}alice> <{EX}note> "says \\"hi\\"\\nthen \\\\ leaves" .',
        f"<{EX}alice> <{EX}address> _:home .",
        f"_:home <{EX}city> <{EX}paris> .",
        f'_:home <{EX}street> "Main" .',
        f"_:x <{EX}only_blank> _:y .",
        f'<{EX}knows> <{RDFS_LABEL}> "knows"@en .',
        f'<{EX}knows> <{ALT}> "is a friend of"@en .',
    ],
    [
        f"<{EX}alice> <{EX}knows> <{EX}bob> .",  # repeated from the first part
        f'<{EX}alice> <{RDFS_LABEL}> "Alice"@en .',
        f'<{EX}alice> <{EX}age> "42"^^<{XSD}integer> .',  # the same value, spelled otherwise
        f'<{EX}alice> <{EX}height> "1.5"^^<{XSD}decimal> .',
        f'<{EX}alice> <{EX}note> "says \\"hi\\"\\nthen \\\\ leaves" .',
        f'<{EX}bob> <{RDFS_LABEL}> "Bobby"@en .',  # a new name of an old entity
        f'<{EX}carol> <{RDFS_LABEL}> "Carol"@EN-gb .',
        f"<{EX}carol> <{EX}mentors> <{EX}dave> .",  # a new relation, with its name and alias
        f'<{EX}mentors> <{RDFS_LABEL}> "mentors"@en .',
        f'<{EX}mentors> <{ALT}> "guides"@en .',
        f'<{EX}knows> <{ALT}> "acquainted with" .',
        f"<{EX}dave> <{EX}address> _:home .",  # another file's _:home: a new blank node
        f"_:home <{EX}city> <{EX}paris> .",
    ],
    [
        f"<{EX}dave> <{EX}knows> <{EX}alice> .",
        f'<{EX}dave> <{RDFS_LABEL}> "Dave"@de .',
        f"<{EX}bob> <{EX}knows> <{EX}carol> .",
        f'<{EX}erin> <{EX}mentors> "nobody" .',
    ],
]
WIKIDATA_PARTS = [
    [
        f"<{WD}Q42> <{WDT}P19> <{WD}Q350> .",
        f'<{WD}Q42> <{RDFS_LABEL}> "Douglas Adams"@en .',
        f'<{WD}Q42> <{RDFS_LABEL}> "Douglas Adams"@fr .',
        f'<{WD}P19> <{RDFS_LABEL}> "place of birth"@en .',
        f'<{WD}P19> <{ALT}> "born in"@en .',
        f'<{WD}Q42> <{ALT}> "DNA"@en .',
    ],
    [
        f"<{WD}Q42> <{WDT}P19> <{WD}Q350> .",
        f"<{WD}Q42> <{WDT}P69> <{WD}Q691283> .",
        f'<{WD}P69> <{RDFS_LABEL}> "educated at"@en .',
        f'<{WD}P69> <{ALT}> "alma mater"@en .',
        f'<{WD}Q350> <{RDFS_LABEL}> "Cambridge"@en .',
        f'<{WD}P19> <{ALT}> "birthplace"@en .',
    ],
]


def answers(store: Path, ids: list[str], texts: list[str]) -> dict[str, str]:
    """What readers get from the store, through the package's own reads (the traversal index's walks, the
    name and relation indexes), blank nodes named without their file's random scope."""
    with connect(f"oxigraph://{store}") as kg:
        assert isinstance(kg, OxigraphGraph) and kg.traversal_index is not None
        found = {
            "neighbors": kg.neighbors(ids, direction="both"),
            "relations out": kg.relations(ids),
            "relations in": kg.relations(ids, direction="in"),
            "names": [kg.labels(ids, lang=lang) for lang in ("en", "es", "de", "en-gb")],
            "search": [kg.search(text, limit=20) for text in texts],
            "relation search": [kg.search_relations(text, limit=20) for text in texts],
            "counts": kg.relation_counts(),
        }
    return {key: BLANK_SCOPE.sub("_:", repr(value)) for key, value in found.items()}


def load_in_parts(tmp_path: Path, parts: list[list[str]], profile: str) -> tuple[Path, Path, list[Any]]:
    """The parts appended one by one to one store, and loaded at once into another: (appended, at once,
    the appends' reports)."""
    paths = [str(write_dump(tmp_path / f"part-{n}.nt", lines)) for n, lines in enumerate(parts)]
    appended, at_once = tmp_path / "appended", tmp_path / "at-once"
    reports = [load_files([path], str(appended), profile=profile, progress=False) for path in paths]
    load_files(paths, str(at_once), profile=profile, progress=False)
    return appended, at_once, reports[1:]


@pytest.mark.parametrize("collector", ["thread", "worker"])
def test_appended_parts_index_as_one_load_of_every_part(
    collector: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loaders.indexing, "WORKER_MIN_BYTES", 0 if collector == "worker" else 1 << 62)
    appended, at_once, reports = load_in_parts(tmp_path, GENERIC_PARTS, "generic")
    assert [report.index_source for report in reports] == [FROM_PREVIOUS_INDEX] * 2
    assert store_answers(appended) == store_answers(at_once)  # triples, index files, name and relation rows
    ids = [EX + name for name in ("alice", "bob", "carol", "dave", "erin", "paris")]
    texts = ["alice", "bob", "carol", "knows", "friend", "acquainted", "guides", "mentors", "dave"]
    found = answers(appended, ids, texts)
    assert found == answers(at_once, ids, texts)
    with connect(f"oxigraph://{appended}") as kg:
        assert kg.labels([EX + "carol"], lang="en-gb") == {EX + "carol": "Carol"}
        assert [entity.id for entity in kg.search_relations("guides")] == [EX + "mentors"]
        assert [entity.id for entity in kg.search_relations("acquainted")] == [EX + "knows"]


def test_a_wikidata_append_names_its_properties_from_both_versions(tmp_path: Path) -> None:
    appended, at_once, reports = load_in_parts(tmp_path, WIKIDATA_PARTS, "wikidata")
    assert reports[0].index_source == FROM_PREVIOUS_INDEX
    assert store_answers(appended) == store_answers(at_once)
    texts = ["born in", "birthplace", "alma mater", "douglas", "cambridge", "DNA"]
    assert answers(appended, ["Q42", "Q350"], texts) == answers(at_once, ["Q42", "Q350"], texts)
    with connect(f"oxigraph://{appended}") as kg:
        assert [entity.id for entity in kg.search_relations("birthplace")] == ["P19"]
        assert [entity.id for entity in kg.search_relations("alma mater")] == ["P69"]


def test_appended_freebase_parts_with_repeats_index_as_one_load(tmp_path: Path) -> None:
    """Freebase-shaped parts (names, typed and tagged literals, blank nodes, CVT-like nameless nodes)
    that repeat each other's triples, through the worker process (parts of more than a mebibyte)."""
    first, second = freebase_lines(16_000), freebase_lines(16_000, seed=3)
    parts = [first, second[:12_000] + first[5_000:9_000]]
    appended, at_once, reports = load_in_parts(tmp_path, parts, "freebase")
    assert all(Path(path).stat().st_size >= loaders.indexing.WORKER_MIN_BYTES for path in reports[0].files)
    assert reports[0].index_source == FROM_PREVIOUS_INDEX
    assert store_answers(appended) == store_answers(at_once)
    ids = [f"m.0{n:04d}" for n in range(0, 997, 37)]
    assert answers(appended, ids, ["name m.0001", "r t p3"]) == answers(at_once, ids, ["name m.0001", "r t p3"])


def test_an_append_does_not_read_the_store_back(tmp_path: Path) -> None:
    """Triples taken out of the previous version's Oxigraph data behind the package's back (its index
    still has them: an edge, a name) are in the appended version's traversal and name indexes: they were
    written from the index files. An append that read the store back would have lost them."""
    first = write_dump(tmp_path / "first.nt", [line for line in GENERIC_PARTS[0] if "_:" not in line])
    second = write_dump(tmp_path / "second.nt", GENERIC_PARTS[2])
    store = tmp_path / "store"
    load_files([str(first)], str(store), progress=False)
    data = store_layout.data_dir(store, store_layout.read_manifest(store))
    hidden = ox.Quad(ox.NamedNode(EX + "bob"), ox.NamedNode(EX + "knows"), ox.NamedNode(EX + "carol"))
    name = ox.Quad(ox.NamedNode(EX + "bob"), ox.NamedNode(RDFS_LABEL), ox.Literal("Bob"))
    writable = ox.Store(str(data))
    writable.remove(hidden)
    writable.remove(name)
    del writable
    report = load_files([str(second)], str(store), progress=False)
    assert report.index_source == FROM_PREVIOUS_INDEX
    with connect(f"oxigraph://{store}") as kg:
        assert isinstance(kg, OxigraphGraph) and kg.traversal_index is not None
        assert Edge(head=EX + "bob", relation=EX + "knows", tail=EX + "carol") in kg.neighbors(EX + "bob")[EX + "bob"]
        assert EX + "bob" in [entity.id for entity in kg.search("bob")]  # the name index
        assert (
            Edge(head=EX + "dave", relation=EX + "knows", tail=EX + "alice") in kg.neighbors(EX + "dave")[EX + "dave"]
        )


@pytest.mark.parametrize("previous", ["no index", "older format"])
def test_an_append_without_a_usable_previous_index_reads_the_store_back(previous: str, tmp_path: Path) -> None:
    first = write_dump(tmp_path / "first.nt", GENERIC_PARTS[0])
    second = write_dump(tmp_path / "second.nt", GENERIC_PARTS[1])
    store, at_once = tmp_path / "store", tmp_path / "at-once"
    load_files([str(first)], str(store), progress=False, index=previous != "no index")
    if previous == "older format":
        meta_path = index_dir(store_layout.version_dir(store, store_layout.read_manifest(store))) / META
        meta_path.write_text(json.dumps({**json.loads(meta_path.read_text()), "version": 4}))
    report = load_files([str(second)], str(store), progress=False)
    why = "has no traversal index" if previous == "no index" else "has format 4, not 5"
    assert report.index_source.startswith(READ_BACK) and why in report.index_source
    load_files([str(first), str(second)], str(at_once), progress=False)
    read_back, loaded = store_answers(store), store_answers(at_once)
    for rows in ("labels.sqlite", "relations.sqlite"):  # the store's order, not the load's
        assert sorted(read_back.pop(rows)) == sorted(loaded.pop(rows))
    assert read_back == loaded
    ids, texts = [EX + "alice", EX + "carol"], ["alice", "guides", "acquainted"]
    assert answers(store, ids, texts) == answers(at_once, ids, texts)


@pytest.mark.parametrize("point", ["read:1", "checkpoint:1", "checkpoint:2", "parsed", "indexed", "labelled"])
def test_an_append_killed_in_its_index_phase_resumes_to_the_same_indexes(point: str, tmp_path: Path) -> None:
    """kill -9 of an append before its first checkpoint (the replay is done again), after one (the replay
    is in the checkpoint), and in the index phase: the previous version stays whole and readable, and the
    same command resumes to the indexes one load of both parts writes."""
    first = write_dump(tmp_path / "first.nt", freebase_lines(3000))
    second = write_dump(tmp_path / "second.nt.gz", freebase_lines(2000, seed=5) + freebase_lines(3000)[:800])
    store, at_once = tmp_path / "store", tmp_path / "at-once"
    load_files([str(first)], str(store), profile="freebase", progress=False)
    before = store_answers(store)
    killed_load(point, [str(second)], store)
    assert build_dir(store).is_dir()
    assert store_answers(store) == before
    report = load_files([str(second)], str(store), profile="freebase", progress=False)
    assert report.appended and report.index_source == FROM_PREVIOUS_INDEX
    assert report.resumed == (point != "read:1")
    load_files([str(first), str(second)], str(at_once), profile="freebase", progress=False)
    assert store_answers(store) == store_answers(at_once)


@pytest.mark.parametrize("collector", ["thread", "worker"])
def test_an_append_over_its_memory_budget_replays_into_spilled_runs(
    collector: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a tiny ``--memory`` the previous index replayed spills with the part's triples (sorted runs,
    external sorts): the indexes are still those of one load of both parts under the default budget."""
    monkeypatch.setattr(loaders.indexing, "WORKER_MIN_BYTES", 0 if collector == "worker" else 1 << 62)
    first, second = spill_lines(12_000), spill_lines(8_000, seed=4)
    paths = [
        str(write_dump(tmp_path / "first.nt", first)),
        str(write_dump(tmp_path / "second.nt", second + first[:2000])),
    ]
    store, at_once = tmp_path / "store", tmp_path / "at-once"
    load_files(paths[:1], str(store), profile="freebase", progress=False)
    report = load_files(paths[1:], str(store), profile="freebase", progress=False, memory=TINY)
    assert report.index_source == FROM_PREVIOUS_INDEX
    load_files(paths, str(at_once), profile="freebase", progress=False)
    assert store_answers(store) == store_answers(at_once)


NAMED = "http://kg-adapters.local/entity/"
"""The names profile's entity namespace: ``%41`` there is the id ``A``, which spells back into ``.../A``."""


@pytest.mark.parametrize("collector", ["thread", "worker"])
def test_an_index_whose_ids_do_not_spell_back_makes_an_append_read_the_store_back(
    collector: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build checks each entity id against the IRI it came from and the index's meta says so; an
    append whose previous index has an id that spells another IRI (the names profile's ``.../%41`` is
    ``A``, spelled ``.../A``: a replay would write triples the store does not hold) reads the store back,
    says which id, and ends as one load of both parts does."""
    monkeypatch.setattr(loaders.indexing, "WORKER_MIN_BYTES", 0 if collector == "worker" else 1 << 62)
    first = write_dump(
        tmp_path / "first.nt",
        [f"<{NAMED}%41> <{EX}knows> <{NAMED}b> .", f'<{NAMED}b> <{RDFS_LABEL}> "Bee" .'],
    )
    second = write_dump(tmp_path / "second.nt", [f"<{NAMED}b> <{EX}knows> <{NAMED}c> ."])
    store, at_once = tmp_path / "store", tmp_path / "at-once"
    load_files([str(first)], str(store), profile="names", progress=False)
    meta = json.loads(
        (index_dir(store_layout.version_dir(store, store_layout.read_manifest(store))) / META).read_text()
    )
    assert (meta["entity_ids_spell_back"], meta["unspelled_entity_id"]) == (False, "A")
    report = load_files([str(second)], str(store), profile="names", progress=False)
    assert report.index_source == f"{READ_BACK} (the entity id 'A' does not spell back into its IRI)"
    load_files([str(first), str(second)], str(at_once), profile="names", progress=False)
    read_back, loaded = store_answers(store), store_answers(at_once)
    for rows in ("labels.sqlite", "relations.sqlite"):  # the store's order, not the load's
        assert sorted(read_back.pop(rows)) == sorted(loaded.pop(rows))
    assert read_back == loaded


def test_the_replay_refusal_takes_the_ids_answer_from_the_index_meta(tmp_path: Path) -> None:
    """The refusal (run under the load lock, before the load starts) reads no entity id when the index's
    meta answers for them: a meta edited to say that the ``%41`` index's ids spell back is believed. An
    index whose meta does not say (written before the build checked) has its ids spelled, and appends
    replay it as before."""
    from kg_adapters.index.replay import replay_refusal
    from kg_adapters.profiles import get_profile

    first = write_dump(tmp_path / "first.nt", [f"<{NAMED}%41> <{EX}knows> <{NAMED}b> ."])
    store = tmp_path / "store"
    load_files([str(first)], str(store), profile="names", progress=False)
    version = store_layout.version_dir(store, store_layout.read_manifest(store))
    meta_path = index_dir(version) / META
    meta = json.loads(meta_path.read_text())
    assert replay_refusal(version, get_profile("names")) is not None
    meta_path.write_text(json.dumps({**meta, "entity_ids_spell_back": True}))
    assert replay_refusal(version, get_profile("names")) is None
    parts = [write_dump(tmp_path / f"part-{n}.nt", lines) for n, lines in enumerate(GENERIC_PARTS[:2])]
    older, at_once = tmp_path / "older", tmp_path / "at-once"
    load_files([str(parts[0])], str(older), progress=False)
    meta_path = index_dir(store_layout.version_dir(older, store_layout.read_manifest(older))) / META
    meta = json.loads(meta_path.read_text())
    assert meta.pop("entity_ids_spell_back") is True and "unspelled_entity_id" not in meta
    meta_path.write_text(json.dumps(meta))
    report = load_files([str(parts[1])], str(older), progress=False)
    assert report.index_source == FROM_PREVIOUS_INDEX
    load_files([str(path) for path in parts], str(at_once), progress=False)
    assert store_answers(older) == store_answers(at_once)
