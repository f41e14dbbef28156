"""search_relations on every backend: relations found by their labels where the graph has them and by
the words of their ids where it has none, from an index (never a FILTER scan), with the relation
filter applied; ``kga search --relations``; wbsearchentities type=property on ``wikidata+api:``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.wikidata_api import WikidataApiServer

from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph
from kg_adapters.cli import main
from kg_adapters.errors import InvalidTermError
from kg_adapters.records import Entity
from kg_adapters.relation_index import id_words
from kg_adapters.testing.fault_server import FakeClock
from kg_adapters.testing.virtuoso import VirtuosoServer, virtuoso_fixture
from kg_adapters.wrappers.counting import CountingKG
from loaders import load_files

# A Wikidata-shaped graph (labels on wd:P19 name wdt:P19; p:/ps: statement plumbing) and a
# DBpedia-shaped one (labels on the ontology relations themselves), and relations with no label.
LABELLED = """\
<http://www.wikidata.org/entity/Q42> <http://www.wikidata.org/prop/direct/P19> <http://www.wikidata.org/entity/Q350> .
<http://www.wikidata.org/entity/Q42> <http://www.wikidata.org/prop/direct/P20> <http://www.wikidata.org/entity/Q1> .
<http://www.wikidata.org/entity/Q42> <http://www.wikidata.org/prop/P19> <http://example.org/statement/1> .
<http://example.org/statement/1> <http://www.wikidata.org/prop/statement/P19> <http://www.wikidata.org/entity/Q350> .
<http://www.wikidata.org/entity/P19> <http://www.w3.org/2000/01/rdf-schema#label> "place of birth"@en .
<http://www.wikidata.org/entity/P19> <http://www.w3.org/2000/01/rdf-schema#label> "Geburtsort"@de .
<http://www.wikidata.org/entity/P20> <http://www.w3.org/2000/01/rdf-schema#label> "place of death"@en .
<http://dbpedia.org/resource/Obama> <http://dbpedia.org/ontology/birthPlace> <http://dbpedia.org/resource/Hawaii> .
<http://dbpedia.org/ontology/birthPlace> <http://www.w3.org/2000/01/rdf-schema#label> "birth place"@en .
<http://dbpedia.org/resource/Obama> <http://dbpedia.org/property/spouseName> "Michelle" .
<http://www.wikidata.org/entity/P19> <http://wikiba.se/ontology#directClaim> <http://www.wikidata.org/prop/direct/P19> .
"""
WDT = "http://www.wikidata.org/prop/direct/"
P19, P20 = WDT + "P19", WDT + "P20"
BIRTH_PLACE = "http://dbpedia.org/ontology/birthPlace"
SPOUSE_NAME = "http://dbpedia.org/property/spouseName"


def ids(found: list[Entity]) -> list[str]:
    return [entity.id for entity in found]


def check_labelled(kg: KnowledgeGraph) -> None:
    """The generic profile: relations are full IRIs; labels where the graph has them. Relations holding
    every word of the text come first, in the lexical order (exact, prefix, every word), whatever the
    search mode; what follows them depends on the mode."""
    assert kg.search_relations("place of birth")[0] == Entity(id=P19, label="place of birth")
    assert kg.search_relations("geburtsort")[0] == Entity(id=P19, label="place of birth")  # any language finds it
    assert ids(kg.search_relations("place of"))[:2] == [P19, P20]
    assert ids(kg.search_relations("birth place"))[:2] == [BIRTH_PLACE, P19]  # exact first, then every word
    assert kg.search_relations("spouse name")[0] == Entity(id=SPOUSE_NAME)  # no label: found by its id's words
    assert kg.search_relations("spouse")[0] == Entity(id=SPOUSE_NAME)
    assert kg.search_relations("place", limit=1) == [Entity(id=P19, label="place of birth")]  # prefix first
    assert kg.search_relations("place of", limit=0) == []
    assert kg.search_relations("xyzzy qwertz") == []
    # any word, stemmed and in any order: "born" is the only content word, "deaths" finds "death"
    assert ids(kg.search_relations("deaths places"))[0] == P20
    assert {P19, P20} <= set(ids(kg.search_relations("place of passing")))
    with pytest.raises(InvalidTermError):
        kg.search_relations(42)  # type: ignore[arg-type]
    with pytest.raises(InvalidTermError):
        kg.search_relations("place", limit=-1)
    with pytest.raises(InvalidTermError):
        kg.search_relations("place", limit=None)  # type: ignore[arg-type]


def check_labelled_by_meaning(kg: KnowledgeGraph) -> None:
    """With the encoder: phrasings that share no word with the labels."""
    assert ids(kg.search_relations("where was she born", limit=2)) == [P19, BIRTH_PLACE]
    assert ids(kg.search_relations("who is his wife", limit=1)) == [SPOUSE_NAME]
    assert ids(kg.search_relations("where did he die", limit=1)) == [P20]


@pytest.fixture(scope="module")
def labelled_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("labelled") / "labelled.nt"
    path.write_text(LABELLED, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def labelled_store(labelled_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("labelled-store") / "store"
    load_files([str(labelled_file)], str(store), progress=False)
    return store.resolve()


@pytest.fixture(scope="module")
def virtuoso(tmp_path_factory: pytest.TempPathFactory, request: Any, labelled_file: Path) -> VirtuosoServer:
    return virtuoso_fixture(tmp_path_factory, [labelled_file], request=request)


MODES = ["semantic", "lexical"]


def check(kg: KnowledgeGraph, mode: str) -> None:
    check_labelled(kg)
    if mode == "semantic":
        check_labelled_by_meaning(kg)
    else:  # without the encoder a phrasing must share a word with the label
        assert kg.search_relations("where was she born") == []


@pytest.mark.parametrize("mode", MODES)
def test_oxigraph_on_disk_reads_the_index_written_at_load_time(labelled_store: Path, mode: str) -> None:
    version = next(labelled_store.glob("v-*"))
    assert (version / "relations.sqlite").is_file()
    with connect(f"oxigraph://{labelled_store}", search=mode) as kg:
        check(kg, mode)


@pytest.mark.parametrize("mode", MODES)
def test_oxigraph_in_memory(labelled_file: Path, mode: str) -> None:
    with connect("oxigraph://", search=mode) as kg:
        kg.load(str(labelled_file))  # type: ignore[attr-defined]
        check(kg, mode)


@pytest.mark.parametrize("mode", MODES)
def test_rdflib(labelled_file: Path, mode: str) -> None:
    with connect(f"rdflib://{labelled_file}", search=mode) as kg:
        check(kg, mode)


@pytest.mark.parametrize("mode", MODES)
def test_virtuoso(virtuoso: VirtuosoServer, mode: str) -> None:
    with connect("sparql+" + virtuoso.sparql_url, dialect="virtuoso", retries=0, search=mode) as kg:
        check(kg, mode)
        sent = kg.queries_sent  # type: ignore[attr-defined]
        kg.search_relations("birth place")
        kg.search_relations("who is his wife")
        assert kg.queries_sent == sent, "the relation list is fetched once per connection"  # type: ignore[attr-defined]


def test_a_remote_wikidata_graph_lists_its_direct_claim_properties(virtuoso: VirtuosoServer) -> None:
    """WDQS would time out listing every predicate: a Wikidata graph's relations are the properties it
    declares with wikibase:directClaim (here only P19), not a scan of all triples."""
    with connect("sparql+" + virtuoso.sparql_url, dialect="virtuoso", profile="wikidata", retries=0) as kg:
        assert kg.search_relations("place of birth") == [Entity(id="P19", label="place of birth")]
        assert "P20" not in ids(kg.search_relations("place of death"))  # not declared: not listed


def test_wikidata_profile_compacts_and_hides_statement_plumbing(labelled_store: Path) -> None:
    with connect(f"oxigraph://{labelled_store}", profile="wikidata") as kg:
        for text in ("place of birth", "P19", "Geburtsort"):
            found = kg.search_relations(text)
            assert found[0] == Entity(id="P19", label="place of birth")
            assert not any(e.id.startswith("http://www.wikidata.org/prop/") for e in found), found  # p:, ps:
        assert kg.search_relations("P19") == [Entity(id="P19", label="place of birth")]


@pytest.mark.parametrize("mode", MODES)
def test_a_write_rebuilds_the_relation_index(labelled_file: Path, mode: str) -> None:
    """The index and the relation vectors follow writes."""
    from kg_adapters.records import Edge

    nickname = "http://example.org/nickName"
    with connect("oxigraph://", search=mode) as kg:
        kg.load(str(labelled_file))  # type: ignore[attr-defined]
        assert nickname not in ids(kg.search_relations("nick name"))
        kg.add([Edge(head="http://example.org/a", relation=nickname, tail="http://example.org/b")])  # type: ignore[attr-defined]
        assert kg.search_relations("nick name")[0] == Entity(id=nickname)
        if mode == "semantic":  # one word against two: found by meaning
            assert kg.search_relations("nickname")[0] == Entity(id=nickname)
        else:
            assert nickname not in ids(kg.search_relations("nickname"))


# -- the bundled Freebase sample: no relation labels, ids of words ------------------------------------
def test_id_words() -> None:
    assert id_words("http://rdf.freebase.com/ns/people.person.place_of_birth") == [
        "people person place of birth",
        "place of birth",
    ]
    assert id_words("http://dbpedia.org/ontology/birthPlace") == ["birth Place"]
    assert id_words("http://example.org/r1") == ["r1"]
    assert id_words(
        "http://rdf.freebase.com/ns/film.film.release_date_s..film.film_regional_release_date.film_release_region"
    ) == [
        "film film release date s film film regional release date film release region",
        "film release region",
    ]


@pytest.mark.parametrize("backend", ["disk", "memory", "rdflib"])
def test_place_of_birth_ranks_first_on_the_sample(backend: str, sample_store_url: str) -> None:
    from reasoning.demo import sample_path

    opener: dict[str, Callable[[], KnowledgeGraph]] = {
        "disk": lambda: connect(sample_store_url),
        "memory": lambda: connect("oxigraph://?profile=freebase"),
        "rdflib": lambda: connect(f"rdflib://{sample_path()}?profile=freebase"),
    }
    with opener[backend]() as kg:
        if backend == "memory":
            kg.load(str(sample_path()))  # type: ignore[attr-defined]
        found = kg.search_relations("place of birth")
        assert found[0] == Entity(id="people.person.place_of_birth")
        assert [e.id for e in kg.search_relations("nationality", limit=1)] == ["people.person.nationality"]
        # hidden by the Freebase relation filter unless the filter is off
        assert all(not e.id.startswith("type.") for e in kg.search_relations("object name"))


def test_relation_filter_none_shows_plumbing(sample_store_url: str) -> None:
    with connect(sample_store_url, relation_filter="none") as kg:
        assert kg.search_relations("type object name")[0] == Entity(id="type.object.name")


def test_wrappers_pass_search_relations_through(sample_store_url: str, tmp_path: Path) -> None:
    with connect(sample_store_url, cache=str(tmp_path / "cache.sqlite")) as kg:
        first = kg.search_relations("place of birth", limit=3)
        again = kg.search_relations("place of birth", limit=3)
        assert first == again and getattr(again, "from_cache", False)
    with CountingKG(connect(sample_store_url)) as counted:
        assert counted.search_relations("place of birth", limit=1) == [Entity(id="people.person.place_of_birth")]


def test_cli_search_relations(sample_store_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--relations", "place of birth", "--limit", "1", "--kg", sample_store_url]) == 0
    assert capsys.readouterr().out == "people.person.place_of_birth\t\n"
    assert main(["search", "--relations", "place of birth", "--limit", "1", "--json", "--kg", sample_store_url]) == 0
    assert capsys.readouterr().out == '{"id": "people.person.place_of_birth", "label": null, "description": null}\n'


# -- wikidata+api: wbsearchentities type=property --------------------------------------------------------
def _property(pid: str, label: str, aliases: list[str], description: str) -> dict[str, Any]:
    return {
        "type": "property",
        "id": pid,
        "labels": {"en": {"language": "en", "value": label}},
        "aliases": {"en": [{"language": "en", "value": alias} for alias in aliases]},
        "descriptions": {"en": {"language": "en", "value": description}},
    }


@pytest.fixture
def wikidata_api() -> Iterator[WikidataApiServer]:
    properties = {
        "P19": _property("P19", "place of birth", ["birthplace", "born in"], "most specific known birth location"),
        "P20": _property("P20", "place of death", ["deathplace", "died in"], "most specific known death location"),
        "P569": _property("P569", "date of birth", ["born on", "birth date"], "date on which the subject was born"),
    }
    with WikidataApiServer(properties) as server:
        yield server


def test_wikidata_api_searches_properties(wikidata_api: WikidataApiServer) -> None:
    clock = FakeClock()
    ua = "kg-adapters-tests/0.1 (kga-tests@example.org)"
    with connect("wikidata+api:", base_url=wikidata_api.url, user_agent=ua, sleep=clock.sleep, clock=clock) as kg:
        assert kg.search_relations("place of birth") == [
            Entity(id="P19", label="place of birth", description="most specific known birth location")
        ]
        assert [e.id for e in kg.search_relations("born")] == ["P19", "P569"]  # aliases "born in", "born on"
        assert [e.id for e in kg.search_relations("place of", limit=1)] == ["P19"]
        assert kg.search_relations("place", limit=0) == []
        # a phrasing no label starts with: its content words are searched too
        assert [e.id for e in kg.search_relations("where was he born")] == ["P19", "P569"]
        assert kg.search_relations("xyzzy plugh") == []
    calls = [call for call in wikidata_api.calls() if call.get("action") == "wbsearchentities"]
    assert {call["type"] for call in calls} == {"property"}


# -- GraphCatalog: what the graph holds (kga mcp's unknown-id errors and schema tool) ---------------------
def check_catalog(kg: KnowledgeGraph) -> None:
    from kg_adapters.base import GraphCatalog

    assert isinstance(kg, GraphCatalog)
    assert {P19, P20, BIRTH_PLACE, SPOUSE_NAME} <= set(kg.relation_ids())
    assert kg.known_entities(["http://www.wikidata.org/entity/Q42", "http://example.org/nothing"]) == {
        "http://www.wikidata.org/entity/Q42"
    }
    assert kg.known_entities(["http://www.wikidata.org/entity/Q350"]) == {"http://www.wikidata.org/entity/Q350"}
    summary, spouse = kg.relation_summaries([P19, SPOUSE_NAME])
    assert summary.id == P19 and summary.label == "place of birth" and summary.count == 1
    assert [edge.as_tuple() for edge in summary.examples] == [
        ("http://www.wikidata.org/entity/Q42", P19, "http://www.wikidata.org/entity/Q350")
    ]
    assert spouse.count == 1 and spouse.label is None and spouse.examples[0].tail.value == "Michelle"  # type: ignore[union-attr]
    assert kg.relation_summaries([P19], deadline=0.0) == []  # the deadline passed: nothing reached
    with pytest.raises(InvalidTermError):
        kg.known_entities(["not an iri"])


def test_catalog_on_every_backend(labelled_store: Path, labelled_file: Path, virtuoso: VirtuosoServer) -> None:
    with connect(f"oxigraph://{labelled_store}") as kg:
        check_catalog(kg)
    with connect(f"rdflib://{labelled_file}") as kg:
        check_catalog(kg)
    with connect("sparql+" + virtuoso.sparql_url, dialect="virtuoso", retries=0) as kg:
        check_catalog(kg)
