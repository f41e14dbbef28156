"""Wikidata JSON dumps into a real on-disk Oxigraph store (``kga load --format wikidata-json``), and the
loaded store answering exactly like the ``wikidata+api:`` backend serving the same entities."""

from __future__ import annotations

import bz2
import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from support.wikidata_api import WikidataApiServer

import loaders
from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph, SparqlQueryable
from kg_adapters.cli import main
from kg_adapters.errors import LoadError
from kg_adapters.records import Edge, Literal
from kg_adapters.store_layout import read_manifest
from kg_adapters.testing.fault_server import FakeClock
from kg_adapters.testing.wikidata_graph import RECORDED

DATA = RECORDED
UA = "kg-adapters-tests/0.1 (kga-tests@example.org)"
PROPERTY = re.compile(r"P[1-9][0-9]*")
IDS = ["Q42", "Q350", "Q145", "Q5", "Q691283", "Q4961791", "Q159288", "Q3107329", "Q25169", "P69", "P580"]


@pytest.fixture(scope="module")
def entities(shared_data: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((DATA / "neighbours.json").read_text("utf-8"))["entities"]
    found.update(json.loads((shared_data / "wikidata-Q42.json").read_text("utf-8"))["entities"])
    return found


def dump_text(entities: dict[str, Any], *, bad: dict[int, str] | None = None) -> str:
    """A dump as Wikidata writes one: ``[``, one entity per line with trailing commas, ``]``;
    ``bad`` replaces the entity lines at those (1-based file) line numbers."""
    lines = [json.dumps(entity, ensure_ascii=False) for entity in entities.values()]
    for number, text in (bad or {}).items():
        lines.insert(number - 2, text)
    return "[\n" + ",\n".join(lines) + "\n]\n"


@pytest.fixture(scope="module")
def gz_dump(entities: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("dumps") / "wikidata-20251201-all.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(dump_text(entities))
    return path


@pytest.fixture(scope="module")
def store(gz_dump: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The gz dump loaded by the command line with statements (English and German terms)."""
    path = tmp_path_factory.mktemp("stores") / "wikidata"
    assert main(["load", str(gz_dump), "--store", str(path), "--languages", "en,de", "--qualifiers"]) == 0
    return path


@pytest.fixture
def api(entities: dict[str, Any]) -> Iterator[KnowledgeGraph]:
    clock = FakeClock()
    with (
        WikidataApiServer(entities) as server,
        connect("wikidata+api:", base_url=server.url, user_agent=UA, sleep=clock.sleep, clock=clock) as kg,
    ):
        yield kg


@pytest.fixture
def local(store: Path) -> Iterator[KnowledgeGraph]:
    with connect(f"oxigraph://{store}?profile=wikidata") as kg:
        yield kg


def properties_only(answer: dict[str, list[Edge]]) -> dict[str, list[Edge]]:
    """The Wikidata-property edges of a store's answer (it also holds labels and statement plumbing)."""
    return {node: [e for e in edges if PROPERTY.fullmatch(e.relation)] for node, edges in answer.items()}


def test_the_cli_load_reports_and_records_the_profile(store: Path, entities: dict[str, Any]) -> None:
    manifest = read_manifest(store)
    assert manifest["profile"] == "wikidata"
    assert [source["format"] for source in manifest["sources"]] == ["wikidata-json"]
    assert manifest["sources"][0]["statements"] == manifest["triples"]
    assert (manifest["sources"][0]["languages"], manifest["sources"][0]["qualifiers"]) == (["en", "de"], True)


def test_loaded_store_answers_like_the_api(local: KnowledgeGraph, api: KnowledgeGraph) -> None:
    for direction in ("out", "in"):
        expected = api.neighbors(IDS, direction=direction, limit_per_entity=None)
        assert properties_only(local.neighbors(IDS, direction=direction)) == expected
    assert len(api.neighbors("Q42")["Q42"]) == 326
    relations = {node: [r for r in found if PROPERTY.fullmatch(r)] for node, found in local.relations(IDS).items()}
    assert relations == api.relations(IDS)
    assert list(local.paths("Q42", ["P69", "P17"])) == list(api.paths("Q42", ["P69", "P17"]))


@pytest.mark.parametrize("lang", ["en", "de", ("de-ch", "en")])
def test_loaded_store_names_like_the_api(local: KnowledgeGraph, api: KnowledgeGraph, lang: Any) -> None:
    ids = ["Q42", "Q350", "Q145", "Q5", "Q691283", "Q4961791", "Q3107329", "P69", "P580"]
    assert local.labels(ids, lang=lang) == api.labels(ids, lang=lang)
    assert local.describe(ids, lang=lang) == api.describe(ids, lang=lang)
    assert api.labels("Q42", lang=lang) == {"Q42": "Douglas Adams"}


def test_loaded_statements_match_the_api(local: KnowledgeGraph, api: KnowledgeGraph) -> None:
    answer = api.neighbors(["Q42", "Q350"], relations=["P69", "P1082", "P18"], qualifiers=True)
    assert local.neighbors(["Q42", "Q350"], relations=["P69", "P1082", "P18"], qualifiers=True) == answer


def test_statements_are_stored_in_the_wdqs_shape(local: KnowledgeGraph) -> None:
    assert isinstance(local, SparqlQueryable)
    rows = local.query(
        """PREFIX wd: <http://www.wikidata.org/entity/> PREFIX p: <http://www.wikidata.org/prop/>
        PREFIX ps: <http://www.wikidata.org/prop/statement/> PREFIX pq: <http://www.wikidata.org/prop/qualifier/>
        PREFIX wikibase: <http://wikiba.se/ontology#>
        SELECT ?population ?when ?rank WHERE {
          wd:Q350 p:P1082 ?st . ?st ps:P1082 ?population ; pq:P585 ?when ; wikibase:rank ?rank }
        ORDER BY ?when"""
    )
    assert [(cast(Literal, r["population"]).value, cast(Literal, r["when"]).value, r["rank"]) for r in rows] == [
        ("123867", "2011-03-27T00:00:00Z", "http://wikiba.se/ontology#NormalRank"),
        ("145700", "2021-03-21T00:00:00Z", "http://wikiba.se/ontology#PreferredRank"),
    ]  # the deprecated statement has no P585 qualifier


def test_search_finds_loaded_labels(local: KnowledgeGraph) -> None:
    assert [e.id for e in local.search("Douglas Adams", limit=1)] == ["Q42"]
    assert [e.id for e in local.search("Vereinigtes Königreich", limit=1)] == ["Q145"]


def test_bz2_dump_without_statements_and_all_languages(entities: dict[str, Any], tmp_path: Path) -> None:
    dump = tmp_path / "slice.json.bz2"
    with bz2.open(dump, "wt", encoding="utf-8") as handle:
        handle.write(dump_text(entities))
    report = loaders.load_files([str(dump)], str(tmp_path / "store"), progress=False)
    assert report.lines_skipped == 0
    with connect(f"oxigraph://{tmp_path / 'store'}?profile=wikidata") as kg:
        assert kg.labels("Q42", lang="ar") == {"Q42": "دوغلاس آدمز"}
        assert kg.labels("Q159288") == {"Q159288": "Santa Barbara"}
        assert isinstance(kg, SparqlQueryable)
        no_statements = kg.query("ASK { ?s <http://www.wikidata.org/prop/P69> ?st }")
        assert no_statements == [{"boolean": False}]  # not without --qualifiers


def test_an_entity_data_download_loads_too(shared_data: Path, tmp_path: Path) -> None:
    report = loaders.load_files([str(shared_data / "wikidata-Q42.json")], str(tmp_path / "q42"), progress=False)
    assert report.statements_read == report.store_triples
    with connect(f"oxigraph://{tmp_path / 'q42'}?profile=wikidata") as kg:
        assert [e.tail for e in kg.neighbors("Q42", relations=["P69"])["Q42"]] == ["Q4961791", "Q691283"]


def test_strict_load_names_the_bad_line_and_leaves_no_store(entities: dict[str, Any], tmp_path: Path) -> None:
    dump = tmp_path / "bad.json"
    dump.write_text(dump_text(entities, bad={4: '{"id": "Q1", "type": "item", "claims": {'}), "utf-8")
    with pytest.raises(LoadError) as caught:
        loaders.load_files([str(dump)], str(tmp_path / "store"), progress=False)
    assert (caught.value.file, caught.value.line) == (str(dump), 4)
    assert "not a JSON entity" in str(caught.value)
    assert not (tmp_path / "store").exists()


def test_lenient_load_counts_bad_lines(entities: dict[str, Any], tmp_path: Path) -> None:
    dump = tmp_path / "bad.json.gz"
    broken_entity = json.dumps({"id": "Q2", "type": "item", "claims": {"P31": [{"rank": "normal"}]}})
    with gzip.open(dump, "wt", encoding="utf-8") as handle:
        handle.write(dump_text(entities, bad={3: "not json", 6: broken_entity}))
    report = loaders.load_files([str(dump)], str(tmp_path / "store"), lenient=True, languages=["de"], progress=False)
    assert report.lines_skipped == 2
    reasons = [(s.line, s.reason.split(":")[0]) for s in report.skipped]
    assert reasons == [(3, "not a JSON entity"), (6, "malformed entity Q2")]
    with connect(f"oxigraph://{tmp_path / 'store'}?profile=wikidata") as kg:
        assert kg.labels(["Q42", "Q350"], lang="de") == {"Q42": "Douglas Adams", "Q350": "Cambridge"}


def test_wikidata_options_are_checked_first(tmp_path: Path, entities: dict[str, Any]) -> None:
    dump = tmp_path / "d.json"
    dump.write_text(dump_text(entities), "utf-8")
    nt = tmp_path / "x.nt"
    nt.write_text("<http://a> <http://b> <http://c> .\n", "utf-8")
    with pytest.raises(LoadError, match="bad language"):
        loaders.load_files([str(dump)], str(tmp_path / "s"), languages=["not a tag"], progress=False)
    with pytest.raises(LoadError, match="Wikidata JSON dumps"):
        loaders.load_files([str(nt)], str(tmp_path / "s"), qualifiers=True, progress=False)
    assert not (tmp_path / "s").exists()


def test_progress_is_shown_in_triples(
    entities: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = tmp_path / "d.json"
    dump.write_text(dump_text(entities), "utf-8")
    loaders.load_files([str(dump)], str(tmp_path / "s"), progress=True)
    assert "triples" in capsys.readouterr().err
