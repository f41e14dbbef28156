"""FiDeLiS keeps in its beam the entities its promised path can go on from, in a real store on disk: a
director's films all open "director film, genre" by their relation, but only one of them has a genre, and
a dozen others whose names echo the question ("Genre Film 3") must not take its place. Offline with BM25
and with the semantic default where the embeddings extra is installed (a better scorer must not lose what
BM25 finds)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.stores import lines_store

from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph
from reasoning.base import Question, Scorer
from reasoning.fidelis import FiDeLiS

NS = "http://rdf.freebase.com/ns/"
DIRECTED, GENRE, COUNTRY = "film.director.film", "film.film.genre", "film.film.country"
DECOYS = 12


def _facts() -> tuple[list[tuple[str, str, str]], dict[str, str]]:
    names = {"m.dir": "Dana Reyes", "m.norway": "Norway", "m.drama": "Drama", "m.f0": "Quietude"}
    facts = [("m.dir", DIRECTED, "m.f0"), ("m.f0", GENRE, "m.drama"), ("m.f0", COUNTRY, "m.norway")]
    for i in range(1, DECOYS + 1):
        names[f"m.f{i}"] = f"Genre Film {i}"
        facts += [("m.dir", DIRECTED, f"m.f{i}"), (f"m.f{i}", COUNTRY, "m.norway")]
    return facts, names


@pytest.fixture(scope="module")
def films_kg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeGraph]:
    directory = tmp_path_factory.mktemp("films")
    facts, names = _facts()
    lines = [f"<{NS}{s}> <{NS}{p}> <{NS}{o}> ." for s, p, o in facts]
    lines += [f'<{NS}{s}> <{NS}type.object.name> "{name}"@en .' for s, name in names.items()]
    with connect(lines_store(directory, lines, "freebase")) as kg:
        yield kg


def test_the_beam_keeps_the_entity_the_promised_path_goes_on_from(films_kg: KnowledgeGraph, scorer: Scorer) -> None:
    answer = FiDeLiS(films_kg, scorer=scorer).answer(
        Question(id="q", question="What is the genre of the director film of Dana Reyes?", q_entity=("m.dir",))
    )
    assert answer.prediction == ("m.drama",)
    assert [[edge.relation for edge in path] for path in answer.reasoning_paths] == [[DIRECTED, GENRE]]
