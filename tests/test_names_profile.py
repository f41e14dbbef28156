"""The names profile: any name a dataset file can hold is an id, and comes back unchanged."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kg_adapters.errors import InvalidTermError
from kg_adapters.profiles import get_profile
from kg_adapters.profiles.names import NAMES_ENTITY_NS, question_graph_iri
from kg_adapters.sparql_terms import check_iri

names = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=200).filter(
    lambda text: not text.startswith("_:")
)


@given(names)
def test_every_name_round_trips(name: str) -> None:
    profile = get_profile("names")
    entity, relation = profile.entity_iri(name), profile.relation_iri(name)
    assert check_iri(entity) == entity and check_iri(relation) == relation
    assert profile.entity_id(entity) == name and profile.relation_id(relation) == name
    assert profile.canonical_id(name) == name


def test_awkward_names() -> None:
    profile = get_profile("names")
    for name in ['Dwayne "The Rock" Johnson', "Zoë", "a/b?c#d", "http://example.org/x y", "<b>", "%41", " pad "]:
        assert profile.entity_id(profile.entity_iri(name)) == name
    assert profile.entity_iri("http://dbpedia.org/resource/X") == "http://dbpedia.org/resource/X"  # a real IRI
    assert profile.entity_iri(NAMES_ENTITY_NS + "x").startswith(NAMES_ENTITY_NS + "http")  # minted, not kept
    assert profile.is_cvt_candidate("m.0abc") and not profile.is_cvt_candidate("Barack Obama")
    for bad in ["", "_:b0", "x" * 5000, "\ud800"]:
        with pytest.raises(InvalidTermError):
            profile.entity_iri(bad)
    assert question_graph_iri("WebQTest-1 / ü") == "http://kg-adapters.local/question/WebQTest-1%20%2F%20%C3%BC"
