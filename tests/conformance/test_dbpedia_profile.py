"""The DBpedia profile: compact ids (FactKG spellings), names, descriptions and walks, on Oxigraph
(on disk) and rdflib; id round-trips for the awkward resource names."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import loaders
from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph
from kg_adapters.errors import InvalidTermError
from kg_adapters.profiles import DBpediaProfile
from kg_adapters.records import Edge, Entity, Literal

from .dbpedia_graph import write_dbpedia_graph

DBR = "http://dbpedia.org/resource/"
CATEGORY = "Category:Presidents_of_the_United_States"


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dbpedia_graph(tmp_path_factory.mktemp("dbpedia"))


@pytest.fixture(scope="module", params=["oxigraph", "rdflib"])
def kg(
    request: pytest.FixtureRequest, graph_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KnowledgeGraph]:
    if request.param == "oxigraph":
        store = tmp_path_factory.mktemp("dbpedia-store") / "store"
        loaders.load_files([str(graph_file)], str(store), progress=False)
        graph = connect(f"oxigraph://{store.resolve()}?profile=dbpedia")
    else:
        graph = connect(f"rdflib://{graph_file}?profile=dbpedia")
    with graph:
        yield graph


def test_neighbors_in_factkg_spelling(kg: KnowledgeGraph) -> None:
    assert kg.profile.name == "dbpedia"
    assert kg.neighbors("Barack_Obama", literals=False) == {
        "Barack_Obama": [
            Edge(head="Barack_Obama", relation="birthPlace", tail="Honolulu"),
            Edge(head="Barack_Obama", relation="http://purl.org/dc/terms/subject", tail=CATEGORY),
            Edge(
                head="Barack_Obama",
                relation="http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
                tail="http://dbpedia.org/ontology/Person",
            ),
            Edge(
                head="Barack_Obama",
                relation="http://www.w3.org/2002/07/owl#sameAs",
                tail="http://www.wikidata.org/entity/Q76",
            ),
            Edge(head="Barack_Obama", relation="spouse", tail="Michelle_Obama"),  # relations sort as text
        ]
    }
    assert kg.neighbors("Barack_Obama", relations=["dbp:birthPlace", "birthDate"]) == {
        "Barack_Obama": [
            Edge(
                head="Barack_Obama",
                relation="birthDate",
                tail=Literal(value="1961-08-04", datatype="http://www.w3.org/2001/XMLSchema#date"),
            ),
            Edge(head="Barack_Obama", relation="dbp:birthPlace", tail=Literal(value="Honolulu, Hawaii", lang="en")),
        ]
    }


def test_prefixed_and_full_spellings_are_the_same_entity(kg: KnowledgeGraph) -> None:
    spellings = ["Chicago", "dbr:Chicago", DBR + "Chicago"]
    answer = kg.neighbors(spellings, direction="in", relations=["dbo:birthPlace"])
    assert answer == {s: [Edge(head="Michelle_Obama", relation="birthPlace", tail="Chicago")] for s in spellings}
    assert kg.relations("United_States", direction="in") == {"United_States": ["country"]}


def test_awkward_names(kg: KnowledgeGraph) -> None:
    assert kg.neighbors("AC/DC", relations=["hometown"]) == {
        "AC/DC": [Edge(head="AC/DC", relation="hometown", tail="Sydney")]
    }
    assert kg.neighbors("France", direction="in") == {
        "France": [Edge(head="Saint-Étienne", relation="country", tail="France")]
    }
    assert kg.labels([CATEGORY, "Saint-Étienne"]) == {
        CATEGORY: "Presidents of the United States",
        "Saint-Étienne": "Saint-Étienne",
    }


def test_factkg_walks(kg: KnowledgeGraph) -> None:
    paths = kg.paths("Barack_Obama", ["spouse", "birthPlace"])
    assert [p.entities for p in paths] == [("Barack_Obama", "Michelle_Obama", "Chicago")]
    shortest = kg.shortest_paths("Barack_Obama", "United_States", max_hops=3)
    assert sorted(p.entities for p in shortest) == [("Barack_Obama", "Honolulu", "United_States")]
    assert kg.search("michelle obama") == [Entity(id="Michelle_Obama", label="Michelle Obama")]


def test_labels_and_descriptions(kg: KnowledgeGraph) -> None:
    assert kg.labels(["Barack_Obama", "Honolulu", "Sydney"], lang="de") == {
        "Barack_Obama": "Barack Obama",
        "Honolulu": "Honolulu",
    }
    # rdfs:comment (short) is preferred to dbo:abstract in the same language; the abstract serves
    # a language that has no comment.
    assert kg.describe(["Barack_Obama", "Chicago", "Sydney"], lang="en") == {
        "Barack_Obama": Entity(
            id="Barack_Obama", label="Barack Obama", description="Barack Obama is an American politician."
        ),
        "Chicago": Entity(id="Chicago", label="Chicago"),
        "Sydney": Entity(id="Sydney"),
    }
    assert kg.describe("Barack_Obama", lang="de")["Barack_Obama"].description == (
        "Barack Obama ist ein US-amerikanischer Politiker."
    )


@pytest.mark.parametrize(
    ("spelling", "iri"),
    [
        ("Barack_Obama", DBR + "Barack_Obama"),
        ("dbr:Barack_Obama", DBR + "Barack_Obama"),
        (CATEGORY, DBR + CATEGORY),
        ("AC/DC", DBR + "AC/DC"),
        ("Paris_(band)", DBR + "Paris_(band)"),
        ("Saint-Étienne", DBR + "Saint-Étienne"),
        ("http://www.wikidata.org/entity/Q76", "http://www.wikidata.org/entity/Q76"),
        ("urn:isbn:0451450523", "urn:isbn:0451450523"),
    ],
)
def test_entity_ids_round_trip(spelling: str, iri: str) -> None:
    profile = DBpediaProfile()
    assert profile.entity_iri(spelling) == iri
    assert profile.entity_iri(profile.entity_id(iri)) == iri
    assert profile.canonical_id(spelling) == spelling.removeprefix("dbr:")


@pytest.mark.parametrize(
    ("spelling", "iri", "canonical"),
    [
        ("birthPlace", "http://dbpedia.org/ontology/birthPlace", "birthPlace"),
        ("dbo:birthPlace", "http://dbpedia.org/ontology/birthPlace", "birthPlace"),
        ("dbp:birthPlace", "http://dbpedia.org/property/birthPlace", "dbp:birthPlace"),
        ("http://purl.org/dc/terms/subject", "http://purl.org/dc/terms/subject", "http://purl.org/dc/terms/subject"),
    ],
)
def test_relation_ids_round_trip(spelling: str, iri: str, canonical: str) -> None:
    profile = DBpediaProfile()
    assert profile.relation_iri(spelling) == iri
    assert profile.relation_id(iri) == canonical


@pytest.mark.parametrize("bad", ["Barack Obama", "", "dbr:", "a<b", "x\ny", "_:b1"])
def test_malformed_entity_ids(bad: str) -> None:
    with pytest.raises(InvalidTermError):
        DBpediaProfile().entity_iri(bad)


@pytest.mark.parametrize("bad", ["birth place", "rdf:type", "dbp:", "", 42])
def test_malformed_relations(bad: object) -> None:
    with pytest.raises(InvalidTermError):
        DBpediaProfile().relation_iri(bad)  # type: ignore[arg-type]
