"""The five methods share one constructor (``reasoning.base.KGReasoner``): the same defaults and the same
budget checks, before the KG is asked anything."""

from __future__ import annotations

from typing import Any

import pytest

from kg_adapters import connect
from kg_adapters.errors import InvalidTermError
from kg_adapters.testing.graph import write_graph
from kg_adapters.wrappers import CountingKG
from reasoning.base import KGReasoner, Reasoner
from reasoning.fidelis import FiDeLiS
from reasoning.r3 import R3
from reasoning.refkg import RefKG
from reasoning.rog import RoG
from reasoning.scorers import BM25Scorer, default_scorer
from reasoning.tog import ThinkOnGraph

BUDGETS: dict[type[Any], list[str]] = {
    RoG: ["top_k", "max_hops", "beam_width", "max_paths", "max_frontier", "prompt_paths", "paths_per_answer"],
    R3: ["top_k", "max_depth", "breadth", "max_axioms", "neighbors_per_entity"],
    RefKG: ["top_k", "max_hops", "entities_per_hop", "edges_per_entity"],
    FiDeLiS: ["beam_width", "max_depth", "retrieve_top", "candidates", "edges_per_entity"],
    ThinkOnGraph: ["width", "depth", "max_entities"],
}


@pytest.fixture(scope="module")
def kg(tmp_path_factory: pytest.TempPathFactory) -> CountingKG:
    return CountingKG(connect(f"rdflib://{write_graph(tmp_path_factory.mktemp('reasoners')).resolve()}"))


@pytest.mark.parametrize("method", list(BUDGETS))
def test_one_constructor(method: type[Any], kg: CountingKG) -> None:
    reasoner = method(kg)
    assert isinstance(reasoner, KGReasoner) and isinstance(reasoner, Reasoner)
    assert reasoner.kg is kg and reasoner.llm is None and reasoner.scorer is default_scorer()
    scorer = BM25Scorer()
    assert method(kg, scorer=scorer).scorer is scorer


@pytest.mark.parametrize(("method", "budget"), [(m, b) for m, budgets in BUDGETS.items() for b in budgets])
@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "3"])
def test_every_budget_is_checked_before_the_kg_is_asked(
    method: type[Any], budget: str, bad: Any, kg: CountingKG
) -> None:
    asked = len(kg.calls)
    with pytest.raises(InvalidTermError, match=budget):
        method(kg, **{budget: bad})
    assert len(kg.calls) == asked


def test_r3_llm_candidates_may_be_zero(kg: CountingKG) -> None:
    assert R3(kg, llm_candidates=0).llm_candidates == 0
    with pytest.raises(InvalidTermError, match="llm_candidates"):
        R3(kg, llm_candidates=-1)


@pytest.mark.parametrize("method", list(BUDGETS))
def test_options_are_declared_once_with_their_defaults(method: type[Any], kg: CountingKG) -> None:
    declared = method.options()
    assert set(BUDGETS[method]) <= set(declared)
    reasoner = method(kg)
    for name, option in declared.items():
        if name != "candidates":  # FiDeLiS keeps at least beam_width candidates
            assert getattr(reasoner, name) == option.default, name
    with pytest.raises(TypeError, match=f"no option.*nonsense.*{BUDGETS[method][0]}"):
        method(kg, nonsense=1)


def test_weights_and_choices_are_checked_too(kg: CountingKG) -> None:
    for bad in (1.5, -0.1, "0.5", float("nan"), True):
        with pytest.raises(InvalidTermError, match="alpha"):
            RefKG(kg, alpha=bad)
    with pytest.raises(InvalidTermError, match="alpha"):
        FiDeLiS(kg, alpha="high")
    # FiDeLiS's verification is the LLM's verdict, offline a comparison of path scores: no threshold of
    # its own, so none is accepted (an option that did nothing would hide a user's mistake)
    with pytest.raises(TypeError, match=r"no option.*verify_threshold"):
        FiDeLiS(kg, verify_threshold=0.9)
    with pytest.raises(InvalidTermError, match="prompts must be one of"):
        RoG(kg, prompts="florid")
    with pytest.raises(InvalidTermError, match="repair"):
        RoG(kg, repair="yes")
    assert FiDeLiS(kg, beam_width=20, candidates=3).candidates == 20
    assert RefKG(kg, alpha=1).alpha == 1.0
