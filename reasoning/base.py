"""What every reasoner shares: the question/answer records of the RoG dataset format and the
two pluggable judges, an :class:`LLM` and an offline :class:`Scorer`.

A reasoner touches the KG only through :class:`kg_adapters.KnowledgeGraph`, so one method runs
unchanged on the embedded store, Virtuoso, WDQS or the Wikidata API.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict, cast, runtime_checkable

from kg_adapters.base import KnowledgeGraph
from kg_adapters.budgets import check_count, check_flag
from kg_adapters.errors import InvalidTermError
from kg_adapters.records import Edge, edge_to_json
from kg_adapters.sparql_terms import check_text
from reasoning.scorers import default_scorer


class ChatMessage(TypedDict):
    role: str
    content: str


@runtime_checkable
class LLM(Protocol):
    """A chat model: messages in, the reply text out."""

    def chat(
        self, messages: Sequence[ChatMessage], *, temperature: float = 0.0, max_tokens: int | None = None
    ) -> str: ...


@runtime_checkable
class CandidateLLM(Protocol):
    """A chat model that can answer with several candidates for one request (OpenAI's ``n``), by
    beam search where the server has it (RoG's released planner was trained for beam search)."""

    def candidates(
        self,
        messages: Sequence[ChatMessage],
        *,
        n: int,
        beam_search: bool = False,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> list[str]: ...


@runtime_checkable
class Scorer(Protocol):
    """Relevance of each text to a query (higher is more relevant), used in place of LLM judgements
    when running with ``--llm none`` and for pruning with an LLM."""

    def score(self, query: str, texts: Sequence[str]) -> list[float]: ...


@dataclass(frozen=True, kw_only=True)
class Question:
    """One input line of the RoG datasets: ``{"id", "question", "q_entity", "a_entity"}`` plus the
    optional ``"plans"`` (given relation paths, planning skipped) and ``"choices"``."""

    id: str
    question: str
    q_entity: tuple[str, ...]
    a_entity: tuple[str, ...] = ()
    plans: tuple[tuple[str, ...], ...] | None = None
    choices: tuple[str, ...] | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Question:
        """Validates one decoded JSON line; raises InvalidTermError naming the bad field."""
        if not isinstance(data, Mapping):
            raise InvalidTermError(f"a question must be a JSON object, got {type(data).__name__}")
        qid, text = data.get("id"), data.get("question")
        if not isinstance(qid, (str, int)) or isinstance(qid, bool) or qid == "":
            raise InvalidTermError(f"question id must be a non-empty string, got {qid!r:.80}")
        check_text(str(qid), "question id", max_length=None)  # a lone surrogate fails every write later
        if not isinstance(text, str):
            raise InvalidTermError(f"question {qid}: 'question' must be a string")
        plans = data.get("plans")
        choices = data.get("choices")
        return cls(
            id=str(qid),
            question=text,
            q_entity=_strings(data.get("q_entity", []), f"question {qid}: q_entity"),
            a_entity=_strings(data.get("a_entity", []), f"question {qid}: a_entity"),
            plans=None
            if plans is None
            else tuple(_strings(plan, f"question {qid}: plans") for plan in _list(plans, f"question {qid}: plans")),
            choices=None if choices is None else _strings(choices, f"question {qid}: choices"),
        )


@dataclass(frozen=True, kw_only=True)
class Answer:
    """A reasoner's answer: ``prediction`` holds compact KG ids for entity answers and literal values
    otherwise, best first; ``reasoning_paths`` the exact KG triples it rests on (one list per path)."""

    prediction: tuple[str, ...]
    reasoning_paths: tuple[tuple[Edge, ...], ...] = ()
    answer_text: str = ""
    kg_calls: int = 0
    llm_calls: int = 0
    seconds: float = 0.0
    details: Mapping[str, Any] = field(default_factory=dict)
    """Method-specific facts worth reporting (plan validity, verdicts, ...), JSON-serialisable."""

    def to_json(self, question_id: str) -> dict[str, Any]:
        """The output line: ``{"id", "prediction", "reasoning_paths", "answer_text", "kg_calls",
        "llm_calls", "seconds"}`` (plus ``details`` when there are any); a reasoning path is a list of
        edges in the records codec's shape (:func:`kg_adapters.records.edge_to_json`): RoG's
        ``[head, relation, tail]``, a literal tail as ``{"value", "datatype", "lang"}``."""
        out: dict[str, Any] = {
            "id": question_id,
            "prediction": list(self.prediction),
            "reasoning_paths": [[edge_to_json(edge) for edge in path] for path in self.reasoning_paths],
            "answer_text": self.answer_text,
            "kg_calls": self.kg_calls,
            "llm_calls": self.llm_calls,
            "seconds": round(self.seconds, 6),
        }
        if self.details:
            out["details"] = dict(self.details)
        return out


@runtime_checkable
class Reasoner(Protocol):
    """One KGQA method. Built as ``Method(kg, llm=..., scorer=..., **options)`` (``llm=None`` runs the
    method offline, with ``scorer`` in place of LLM judgements); unknown options raise TypeError."""

    name: str

    def answer(self, question: Question) -> Answer:
        """Answers one question, touching the KG only through the KnowledgeGraph interface."""
        ...


@dataclass(frozen=True)
class Option:
    """One option of a method, declared once on its class (``beam_width: int = budget(4)``): its default
    and the check that turns a given value into the kept one (InvalidTermError when it is bad)."""

    default: Any
    check: Callable[[Any, str], Any]


def _positive(value: Any, name: str) -> int:
    return cast(int, check_count(value, name, minimum=1, required=True))


def _count(value: Any, name: str) -> int:
    return cast(int, check_count(value, name, required=True))


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidTermError(f"{name} must be a finite number, got {value!r:.60}")
    return float(value)


def _fraction(value: Any, name: str) -> float:
    number = _number(value, name)
    if not 0.0 <= number <= 1.0:
        raise InvalidTermError(f"{name} must lie in [0, 1], got {value!r:.60}")
    return number


def budget(default: int) -> Any:
    """A budget option: a count of at least 1 (it bounds the work)."""
    return Option(default, _positive)


def count(default: int) -> Any:
    """A count option that may be 0."""
    return Option(default, _count)


def number(default: float) -> Any:
    """A finite number (a weight, a threshold)."""
    return Option(default, _number)


def fraction(default: float) -> Any:
    """A number in [0, 1]."""
    return Option(default, _fraction)


def flag(default: bool) -> Any:
    """True or false."""
    return Option(default, check_flag)


def choice(default: str, allowed: Sequence[str]) -> Any:
    """One of ``allowed``."""

    def check(value: Any, name: str) -> str:
        if value not in allowed:
            raise InvalidTermError(f"{name} must be one of {', '.join(allowed)}; got {value!r:.80}")
        return cast(str, value)

    return Option(default, check)


def given(default: Any = None) -> Any:
    """An option kept as given (another graph, a user id)."""
    return Option(default, lambda value, _name: value)


class KGReasoner:
    """What every method's constructor does, once: keep the KG it reads, the LLM that judges (``None``:
    offline, the scorer judges instead) and the scorer (unless given, :func:`reasoning.scorers.default_scorer`:
    the hybrid of MiniLM and BM25 where the embeddings extra is installed, else BM25 -- the same default as
    ``kga reason --scorer auto``), and take its options.

    A method declares each option once, as a class attribute with its default and its check
    (``beam_width: int = budget(4)``, ``alpha: float = fraction(0.6)``: :func:`budget`, :func:`count`,
    :func:`number`, :func:`fraction`, :func:`flag`, :func:`choice`, :func:`given`); the constructor takes
    them as keywords, checks every one before anything runs (InvalidTermError), refuses unknown ones
    (TypeError) and sets them on the instance. :meth:`options` lists them."""

    name: str

    def __init__(self, kg: KnowledgeGraph, *, llm: LLM | None = None, scorer: Scorer | None = None, **options: Any):
        declared = self.options()
        unknown = sorted(options.keys() - declared.keys())
        if unknown:
            raise TypeError(
                f"{type(self).__name__} has no option(s) {', '.join(unknown)}; its options: {', '.join(declared)}"
            )
        for name, option in declared.items():
            setattr(self, name, option.check(options.get(name, option.default), name))
        self.kg = kg
        self.llm = llm
        self.scorer: Scorer = scorer if scorer is not None else default_scorer()

    @classmethod
    def options(cls) -> dict[str, Option]:
        """The method's options by name, in declaration order, with their defaults and checks."""
        found: dict[str, Option] = {}
        for klass in reversed(cls.__mro__):
            found.update((name, value) for name, value in vars(klass).items() if isinstance(value, Option))
        return found


def _list(value: object, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidTermError(f"{what} must be a list, got {type(value).__name__}")
    return value


def _strings(value: object, what: str) -> tuple[str, ...]:
    items = _list(value, what)
    for item in items:
        if not isinstance(item, str):
            raise InvalidTermError(f"{what} must hold strings, got {item!r:.80}")
    return tuple(items)
