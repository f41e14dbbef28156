"""R3 and RefKG offline follow the relation path a question names, on a small Wikidata-profile store on
disk: an entity reached by two relations continues after the one asked for (both methods); in R3, a
second one-hop path whose continuation states the question is looked past before stopping, a hub's busy
relation hides nothing, and no chain walks straight back along the relation it just walked. Each case
with BM25 and with the semantic default (MiniLM fused with BM25) where the embeddings extra is
installed."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph
from loaders import load_files
from reasoning.base import Question, Scorer
from reasoning.r3 import R3
from reasoning.refkg import RefKG

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
PROPERTIES = {
    "P57": "director",
    "P162": "producer",
    "P1411": "nominated for",
    "P27": "country of citizenship",
    "P737": "influenced by",
    "P36": "capital",
    "P150": "contains the administrative territorial entity",
    "P166": "award received",
}
NAMES = {
    "Q1": "Night Train",
    "Q2": "Ann Lee",
    "Q3": "Best Director",
    "Q4": "Best Picture",
    "Q10": "Emil Berg",
    "Q11": "Freedonia",
    "Q12": "Sylvania",
    "Q13": "Karl Roth",
    "Q14": "Hans Weber",
    "Q15": "Ruritania",
    "Q16": "Strelsau",
    "Q17": "Zenda",
}
FACTS = [
    ("Q1", "P57", "Q2"),  # Night Train's director is also its producer
    ("Q1", "P162", "Q2"),
    ("Q2", "P1411", "Q3"),
    ("Q2", "P166", "Q4"),
    ("Q10", "P27", "Q11"),  # Emil Berg: two citizenships, and influenced by two people
    ("Q10", "P27", "Q12"),
    ("Q10", "P737", "Q13"),
    ("Q10", "P737", "Q14"),
    ("Q13", "P27", "Q15"),
    ("Q14", "P27", "Q15"),
    ("Q15", "P36", "Q16"),  # Ruritania: a hub of provinces, and a capital
    *(("Q15", "P150", f"Q{n}") for n in range(100, 140)),
    ("Q17", "P27", "Q15"),
]


@pytest.fixture(scope="module")
def kg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeGraph]:
    directory = tmp_path_factory.mktemp("r3-paths")
    lines = [f"<{WD}{s}> <{WDT}{p}> <{WD}{o}> ." for s, p, o in FACTS]
    lines += [f'<{WD}{node}> <{LABEL}> "{name}"@en .' for node, name in {**NAMES, **PROPERTIES}.items()]
    lines += [f'<{WD}Q{n}> <{LABEL}> "Province {n}"@en .' for n in range(100, 140)]
    source = directory / "graph.nt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    load_files([str(source)], str(directory / "store"), profile="wikidata", progress=False)
    with connect(f"oxigraph://{directory / 'store'}?profile=wikidata") as graph:
        yield graph


@pytest.mark.parametrize("method", [R3, RefKG])
def test_an_entity_reached_by_two_relations_continues_after_the_one_asked_for(
    kg: KnowledgeGraph, scorer: Scorer, method: type[R3] | type[RefKG]
) -> None:
    answer = method(kg, scorer=scorer).answer(
        Question(id="q", question="What is the nominated for of the director of Night Train?", q_entity=("Q1",))
    )
    assert answer.prediction == ("Q3",)
    assert {tuple(edge.relation for edge in path) for path in answer.reasoning_paths} == {("P57", "P1411")}


def test_a_second_path_whose_continuation_states_the_question_is_looked_past(
    kg: KnowledgeGraph, scorer: Scorer
) -> None:
    """Both ends of the best one-hop path (two citizenships) are expanded first, and lead nowhere; the
    influences' citizenship is what is asked, so the search does not stop at Emil Berg's own."""
    answer = R3(kg, scorer=scorer).answer(
        Question(
            id="q", question="What is the country of citizenship of the influenced by of Emil Berg?", q_entity=("Q10",)
        )
    )
    assert answer.prediction == ("Q15",)
    assert {tuple(edge.relation for edge in path) for path in answer.reasoning_paths} == {("P737", "P27")}


def test_a_hubs_busy_relation_hides_nothing(kg: KnowledgeGraph, scorer: Scorer) -> None:
    """Ruritania has more province edges than ``neighbors_per_entity``; its capital is still found."""
    answer = R3(kg, scorer=scorer, neighbors_per_entity=20).answer(
        Question(id="q", question="What is the capital of the country of citizenship of Zenda?", q_entity=("Q17",))
    )
    assert answer.prediction == ("Q16",)
    assert {tuple(edge.relation for edge in path) for path in answer.reasoning_paths} == {("P27", "P36")}


def test_no_chain_walks_straight_back(kg: KnowledgeGraph, scorer: Scorer) -> None:
    """Zenda's country is everyone's country: no chain goes Zenda -> Ruritania <- Karl Roth."""
    answer = R3(kg, scorer=scorer).answer(
        Question(id="q", question="Who else has the country of citizenship of Zenda?", q_entity=("Q17",))
    )
    assert answer.reasoning_paths
    for path in answer.reasoning_paths:
        relations = [edge.relation for edge in path]
        assert all(a != b for a, b in itertools.pairwise(relations)), relations
