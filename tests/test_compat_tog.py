"""kg_adapters.compat.tog against answers derived independently from the raw triples.

Two graphs: the bundled FB15k-237 sample (on-disk store, Freebase profile) with an oracle over the
parsed file, and a small hand-written Freebase graph with what ToG's filter is about (``common.*``,
``type.object.*``, ``owl:sameAs``, literals, a CVT, a ``g.`` id, ``kg.*``). ToG's own query text
for ``entity_search(..., head=False)`` is run too, to show it answers nothing.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pyoxigraph as ox
import pytest
from support.sample_store import sample_facts

from kg_adapters import connect
from kg_adapters.backends.oxigraph import OxigraphGraph
from kg_adapters.base import KnowledgeGraph, SparqlQueryable
from kg_adapters.compat import tog
from kg_adapters.errors import InvalidTermError

NS = "http://rdf.freebase.com/ns/"
SMALL = f"""
<{NS}m.obama> <{NS}type.object.name> "Barack Obama"@en .
<{NS}m.obama> <{NS}type.object.name> "Barack Obama (de)"@de .
<{NS}m.obama> <{NS}type.object.type> <{NS}people.person> .
<{NS}m.obama> <{NS}common.topic.alias> "Barry"@en .
<{NS}m.obama> <http://www.w3.org/2002/07/owl#sameAs> <http://dbpedia.org/resource/Barack_Obama> .
<{NS}m.obama> <{NS}kg.object_profile.prominent_type> <{NS}people.person> .
<{NS}m.obama> <{NS}people.person.date_of_birth> "1961-08-04" .
<{NS}m.obama> <{NS}people.person.place_of_birth> <{NS}m.honolulu> .
<{NS}m.obama> <{NS}government.politician.government_positions_held> <{NS}m.cvt1> .
<{NS}m.cvt1> <{NS}government.government_position_held.office_holder> <{NS}m.obama> .
<{NS}m.cvt1> <{NS}government.government_position_held.basic_title> <{NS}m.president> .
<{NS}m.honolulu> <{NS}type.object.name> "Honolulu"@en .
<{NS}m.honolulu> <{NS}location.location.contains> <{NS}g.11bc> .
<{NS}m.michelle> <{NS}people.person.spouse_s> <{NS}m.obama> .
<{NS}m.michelle> <{NS}type.object.name> "Michelle Obama"@en .
<{NS}m.president> <{NS}type.object.name> "President"@en .
"""


@pytest.fixture
def small() -> Iterator[KnowledgeGraph]:
    kg = connect("oxigraph://?profile=freebase&relation_filter=none")
    assert isinstance(kg, OxigraphGraph)
    kg.store.load(SMALL.encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
    with kg:
        yield kg


def test_relation_search_with_tog_filter(small: KnowledgeGraph) -> None:
    head, tail = tog.relation_search("m.obama", kg=small)
    assert head == [
        "government.politician.government_positions_held",
        "kg.object_profile.prominent_type",  # ToG keeps kg.*; the default Freebase filter would not
        "people.person.date_of_birth",
        "people.person.place_of_birth",
    ]
    assert tail == ["government.government_position_held.office_holder", "people.person.spouse_s"]
    # the previous step's relations leave the tail side when pre_head is truthy (ToG's -1 included)
    assert tog.relation_search("m.obama", ["people.person.spouse_s"], -1, kg=small)[1] == [
        "government.government_position_held.office_holder"
    ]
    assert (
        "people.person.place_of_birth"
        not in tog.relation_search("m.obama", ["people.person.place_of_birth"], False, kg=small)[0]
    )
    every = tog.relation_search("m.obama", remove_unnecessary_rel=False, kg=small)[0]
    assert {"type.object.name", "type.object.type", "common.topic.alias"} <= set(every)
    assert "http://www.w3.org/2002/07/owl#sameAs" in every


def test_entity_search_both_ways_and_tog_head_false_bug(small: KnowledgeGraph) -> None:
    tog.use(small)
    try:
        assert tog.entity_search("m.obama", "people.person.place_of_birth") == ["m.honolulu"]
        assert tog.entity_search("m.obama", "people.person.spouse_s", head=False) == ["m.michelle"]
        assert tog.entity_search("m.obama", "people.person.date_of_birth") == []  # a literal: dropped as ToG
        assert tog.entity_search("m.honolulu", "location.location.contains") == []  # g. ids dropped as ToG
        assert tog.id2entity_name_or_type("m.obama") == "Barack Obama"
        assert tog.id2entity_name_or_type("m.cvt1") == "UnName_Entity"  # labels() would describe the CVT
        assert tog.id2entity_name_or_type_batch(["m.president", "m.nobody"]) == {
            "m.president": "President",
            "m.nobody": "UnName_Entity",
        }
        assert tog.entity_search_batch(
            [("m.obama", "people.person.place_of_birth", True), ("m.obama", "people.person.spouse_s", False)]
        ) == [["m.honolulu"], ["m.michelle"]]
    finally:
        tog.use(None)
    # ToG's head=False query puts the entity in the predicate slot: it can answer nothing
    assert isinstance(small, SparqlQueryable)
    original = f"SELECT ?tailEntity WHERE {{ ?tailEntity <{NS}m.obama> <{NS}people.person.spouse_s> . }}"
    assert small.query(original) == []


def tog_keeps(relation: str) -> bool:
    """ToG's filter, written again from its description: names/types, common.*, freebase.*, sameAs."""
    first = relation.split(".")[0]
    return (
        relation not in {"type.object.type", "type.object.name"}
        and first not in {"common", "freebase"}
        and ("sameAs" not in relation)
    )


def test_against_the_sample_oracle(sample_store_url: str) -> None:
    triples, names = sample_facts()
    entities = sorted({h for h, _, _ in triples} | {t for _, _, t in triples})
    rng = random.Random(5)
    chosen = rng.sample(entities, 40)
    with connect(sample_store_url + "&relation_filter=none") as kg:
        batch = tog.relation_search_batch(chosen, kg=kg)
        names_found = tog.id2entity_name_or_type_batch(chosen, kg=kg)
        for entity in chosen:
            out = sorted({r for h, r, _ in triples if h == entity and tog_keeps(r)})  # names: abandoned by ToG
            into = sorted({r for _, r, t in triples if t == entity and tog_keeps(r)})
            assert batch[entity] == (out, into) == tog.relation_search(entity, kg=kg)
            assert names_found[entity] == names.get(entity, "UnName_Entity")
            requests = [(entity, r, True) for r in out] + [(entity, r, False) for r in into]
            expected = [
                sorted({t if forward else h for h, r2, t in triples if r2 == r and (h if forward else t) == entity})
                for _, r, forward in requests
            ]
            assert tog.entity_search_batch(requests, kg=kg) == expected
            if requests:
                assert tog.entity_search(*requests[-1], kg=kg) == expected[-1]


def test_bad_use() -> None:
    with pytest.raises(InvalidTermError, match="no graph"):
        tog.entity_search("m.obama", "people.person.place_of_birth")
    with pytest.raises(InvalidTermError, match="KnowledgeGraph"):
        tog.use("http://localhost:8890/sparql")  # type: ignore[arg-type]
    assert tog.abandon_rels("common.topic.alias") and not tog.abandon_rels("kg.object_profile.prominent_type")
