"""Naturally worded two-hop questions on the bundled sample (a real store on disk): every offline method
with the default (semantic) scorer answers a question that names neither relation by its label, and what
the path scoring and the lookahead must see for that.

What makes them answerable is the path alignment of :class:`reasoning.relevance.Judge`: a relation
states every word of the span it matches best ("political system"), and explaining every word of the
question weighs more than stating one word exactly ("produced by" for "the nation that produced X"), while
a relation that restates what another one states, or is walked twice, never raises a path's score."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest

from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph
from kg_adapters.encoder import minilm_installed
from reasoning.base import Question
from reasoning.lookahead import REACHED, Hop, lookahead_scores
from reasoning.registry import METHODS, make_scorer, method_class
from reasoning.relevance import Judge
from reasoning.scorers import BM25Scorer, default_scorer
from reasoning.text import RelationNames

needs_minilm = pytest.mark.skipif(not minilm_installed(), reason="needs the embeddings extra (make test installs it)")

LINCOLN = "m.0gmgwnv"  # the 2012 film; film.film.country -> United States
JAWS = "m.0jyb4"
WASHINGTON = ["m.0rh6k"]
REPUBLIC = ["m.01d9r3", "m.06cx9"]  # the United States' forms of government in the sample

QUESTIONS = [
    (LINCOLN, WASHINGTON, "What is the main city of the nation that produced Lincoln?"),
    (LINCOLN, WASHINGTON, "Which is the main city of the nation Lincoln comes from?"),
    (JAWS, REPUBLIC, "What political system does the nation that produced Jaws have?"),
]


@pytest.fixture(scope="module")
def sample_kg(sample_store_url: str) -> Iterator[KnowledgeGraph]:
    with connect(sample_store_url) as kg:
        yield kg


def test_a_hop_looks_ahead_as_far_among_many_as_alone(sample_kg: KnowledgeGraph) -> None:
    """An entity with many edges (an actor's films) asked for all its relations at once must not hide the
    one edge of another relation (his nationality): each hop scores what it scores on its own."""
    tom_hanks = "m.0bxtg"
    relations = sorted(sample_kg.relations([tom_hanks], direction="out")[tom_hanks])
    edges = sample_kg.neighbors([tom_hanks], direction="out", relations=relations)[tom_hanks]
    assert len(edges) > REACHED * 5 and "people.person.nationality" in relations
    judge = Judge(BM25Scorer(), "What is the films of the nationality of Tom Hanks?", ["Tom Hanks"])
    names = RelationNames(sample_kg)
    hops = [Hop(prefix=(), relation=r, direction="out", nodes=(tom_hanks,)) for r in relations]
    together = dict(zip(relations, lookahead_scores(sample_kg, judge, names, hops), strict=True))
    alone = lookahead_scores(sample_kg, judge, names, [hops[relations.index("people.person.nationality")]])
    assert together["people.person.nationality"] == pytest.approx(alone[0]) and alone[0] > 0.9
    assert max(together, key=together.__getitem__) == "people.person.nationality"


@needs_minilm
@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize(("topic", "answers", "text"), QUESTIONS)
def test_every_method_answers_a_naturally_worded_two_hop_question(
    sample_kg: KnowledgeGraph, method: str, topic: str, answers: list[str], text: str
) -> None:
    reasoner = method_class(method)(sample_kg, llm=None, scorer=default_scorer())
    answer = reasoner.answer(Question.from_json({"id": "q", "question": text, "q_entity": [topic]}))
    assert answer.prediction and answer.prediction[0] in answers
    assert answer.reasoning_paths and answer.reasoning_paths[0][-1].tail == answer.prediction[0]


@needs_minilm
def test_a_reworded_second_relation_beats_stopping_after_the_first(sample_kg: KnowledgeGraph) -> None:
    """ "What political system does the nation that produced X have?": "country" states "nation" and
    "produced by" states "produced" exactly, but only "country, form of government" explains "political
    system" too (a phrase whose words alone say little)."""
    names = RelationNames(sample_kg)
    paths = [
        ["film.film.produced_by"],
        ["film.film.country"],
        ["film.film.country", "location.country.form_of_government"],
        ["film.film.country", "location.country.capital"],
    ]
    phrases = names.phrases(r for path in paths for r in path)
    judge = Judge(make_scorer("hybrid"), "What political system does the nation that produced Jaws have?", ["Jaws"])
    for whole in (True, False):
        scores = judge.path_scores([[phrases[r] for r in path] for path in paths], whole=whole)
        assert scores[2] > max(scores[0], scores[1], scores[3]) + 0.05


@pytest.mark.parametrize("scorer", ["bm25", pytest.param("hybrid", marks=needs_minilm)])
def test_a_hop_adding_nothing_to_its_path_scores_nothing(sample_kg: KnowledgeGraph, scorer: str) -> None:
    """After "place of birth" for "In which country is the place of birth of Tom Hanks?", the relations of
    Concord that state no word of the question (a semantic scorer relates each a little) score 0 in the
    lookahead, so a beam does not keep them beside "country"; nor does a relation walked again (it states
    nothing new). Where no hop states the question better than its prefix, the method's stop rule decides."""
    concord, pob = "m.0qymv", "people.person.place_of_birth"
    relations = sorted(sample_kg.relations([concord], direction="out")[concord])
    assert "base.biblioness.bibs_location.country" in relations
    judge = Judge(make_scorer(scorer), "In which country is the place of birth of Tom Hanks?", ["Tom Hanks"])
    names = RelationNames(sample_kg)
    hops = [Hop(prefix=(pob,), relation=r, direction="out", nodes=(concord,)) for r in [*relations, pob]]
    scores = lookahead_scores(sample_kg, judge, names, hops)
    by_relation = dict(zip(relations, scores, strict=False))
    assert by_relation["base.biblioness.bibs_location.country"] > 0
    unrelated = [r for r in relations if not {"country", "place", "birth"} & set(names.words([r])[r].split())]
    assert unrelated and all(by_relation[r] == 0 for r in unrelated)
    assert scores[-1] == 0  # place of birth again
    alone = [hop for hop in hops if hop.relation in unrelated]
    assert any(score > 0 for score in lookahead_scores(sample_kg, judge, names, alone))


@pytest.mark.parametrize("scorer", ["bm25", pytest.param("hybrid", marks=needs_minilm)])
def test_a_relation_walked_twice_states_nothing_new(sample_kg: KnowledgeGraph, scorer: str) -> None:
    """A path walking one relation again (there and back through a CVT, or twice over) scores below the
    path without the repeat: the second walk states no word of the question."""
    names = RelationNames(sample_kg)
    pob, country = "people.person.place_of_birth", "base.biblioness.bibs_location.country"
    paths = [[pob, country], [pob, pob, country], [pob, country, country]]
    phrases = names.phrases(r for path in paths for r in path)
    judge = Judge(make_scorer(scorer), "In which country is the place of birth of Tom Hanks?", ["Tom Hanks"])
    for whole in (True, False):
        scores = judge.path_scores([[phrases[r] for r in path] for path in paths], whole=whole)
        assert scores[0] > max(scores[1:])


def test_the_path_ranking_benchmark_ranks_every_path_the_methods_could_walk(
    sample_kg: KnowledgeGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``benchmarks.path_ranking`` (the scorer's ceiling) must rank the gold path among its candidates, one and
    two hops both ways and the gold path's continuations, never straight back along the relation just
    walked; BM25 ranks the gold path of a label-worded question first, and a prefix of it counts as short."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1]))  # benchmarks/ runs from the repository
    from benchmarks.path_ranking import candidate_paths, failure, rank
    from reasoning.text import schema_relations

    gold = ("film.film.country", "location.country.capital")
    paths = candidate_paths(sample_kg, LINCOLN, gold, schema_relations(sample_kg))
    assert tuple((relation, True) for relation in gold) in paths
    assert (("film.film.country", True),) in paths
    assert any(len(path) == 3 and path[:2] == tuple((r, True) for r in gold) for path in paths)
    assert all(not (a == b and fa != fb) for path in paths for (a, fa), (b, fb) in pairwise(path))
    assert {len(path) for path in paths} == {1, 2, 3}
    question = "What is the capital of the country of Lincoln?"
    assert rank(BM25Scorer(), question, ["Lincoln"], paths, RelationNames(sample_kg)) == gold
    assert failure(gold[:1], gold) == "short"
    assert failure((*gold, "location.location.contains"), gold) == "long"
    assert failure((gold[0], "location.country.form_of_government"), gold) == "last hop"
