"""Every implementation of the interface takes its operations exactly as the Protocols declare them.

The Protocols of ``kg_adapters/base.py`` are the one definition of each operation's options. Wrappers
take theirs from it (``forwards``); every class that implements an operation itself -- backends,
wrappers, the algorithm mixin, the shipped testing graphs, third-party backends under
``tests/thirdparty`` and the graphs tests build -- is found by importing every module of the tree and
compared parameter by parameter (name, kind, default, annotation) with the Protocol, so adding an
option in one place and forgetting another fails here.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from kg_adapters import algorithms, connect
from kg_adapters.base import (
    CountsRelations,
    EmbeddedSparql,
    KnowledgeGraph,
    ProfileDetecting,
    RelationFilterable,
    SparqlQueryable,
    WritableGraph,
    forwards,
)
from kg_adapters.records import Entity
from kg_adapters.wrappers.base import DelegatingGraph
from reasoning.base import CandidateLLM

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
OPERATIONS = (
    "neighbors",
    "relations",
    "paths",
    "shortest_paths",
    "subgraph",
    "labels",
    "describe",
    "search",
    "search_relations",
    "close",
)
ABILITIES: dict[str, Callable[..., Any]] = {
    "query": SparqlQueryable.query,
    "relation_counts": CountsRelations.relation_counts,
    "reader_url": EmbeddedSparql.reader_url,
    "sparql_rows": EmbeddedSparql.sparql_rows,
    "sparql_write": EmbeddedSparql.sparql_write,
    "detect_profile": ProfileDetecting.detect_profile,
    "use_relation_filter": RelationFilterable.use_relation_filter,
    "add": WritableGraph.add,
    "load": WritableGraph.load,
}
"""The optional abilities' methods; a wrapper implements them as ``_query``... (see wrappers/base.py)."""
ALGORITHMS: dict[str, Callable[..., Any]] = {
    "paths": algorithms.constrained_paths,
    "shortest_paths": algorithms.all_shortest_paths,
    "subgraph": algorithms.k_hop_subgraph,
}


def module_names() -> Iterator[str]:
    """Every module of the packages, of tests/support, tests/conformance, tests/thirdparty and the test modules."""
    for package in ("kg_adapters", "loaders", "reasoning"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    for path in sorted(TESTS.rglob("*.py")):
        parts = path.relative_to(TESTS).with_suffix("").parts
        if parts[-1] != "conftest":
            yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def implementations() -> list[type]:
    """The classes that claim :class:`KnowledgeGraph`: they have its profile and every operation."""
    sys.path.insert(0, str(TESTS / "thirdparty"))
    try:
        modules = [importlib.import_module(name) for name in module_names()]
    finally:
        sys.path.remove(str(TESTS / "thirdparty"))
    found: dict[str, type] = {}
    for module in modules:
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and value.__module__ == module.__name__
                and value is not KnowledgeGraph
                and all(hasattr(value, name) for name in ("profile", *OPERATIONS))
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


def described(signature: inspect.Signature, *, skip: int) -> list[tuple[str, str, object, object]]:
    """(name, kind, default, annotation) of each parameter after the first ``skip``."""
    return [(p.name, p.kind.name, p.default, p.annotation) for p in list(signature.parameters.values())[skip:]] + [
        ("return", "", None, signature.return_annotation)
    ]


EXTENSIONS = {("OxigraphGraph", "query"): ["max_rows"]}
"""Options a backend adds after the Protocol's (keyword-only, with a default): what kga serve asks of the
embedded store."""


def differences(
    implementation: Callable[..., Any], declared: Callable[..., Any], *, skip: int = 1, extra: Sequence[str] = ()
) -> list[str]:
    signature = inspect.signature(implementation)
    added = [p for p in signature.parameters.values() if p.name in extra]
    assert all(p.kind is p.KEYWORD_ONLY and p.default is not p.empty for p in added), added
    signature = signature.replace(parameters=[p for p in signature.parameters.values() if p.name not in extra])
    found = described(signature, skip=skip)
    wanted = described(inspect.signature(declared), skip=1)
    return [f"{have} != {want}" for have, want in zip(found, wanted, strict=False) if have != want] + (
        [f"{len(found)} parameters, the Protocol has {len(wanted)}"] if len(found) != len(wanted) else []
    )


IMPLEMENTATIONS = implementations()


def test_the_search_finds_every_kind_of_implementation() -> None:
    names = {cls.__name__ for cls in IMPLEMENTATIONS}
    expected = {"OxigraphGraph", "RdflibGraph", "RemoteSparqlGraph", "SparqlGraph", "WikidataApiGraph"}
    assert expected <= names  # backends
    assert {"DelegatingGraph", "CachedKG", "CountingKG", "InterruptedKG"} <= names  # wrappers, and a test's
    assert "TinyGraph" in names  # the third-party backend (tests/thirdparty)


@pytest.mark.parametrize("cls", IMPLEMENTATIONS, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_every_operation_takes_the_protocols_signature(cls: type) -> None:
    wrong = {
        name: found for name in OPERATIONS if (found := differences(getattr(cls, name), getattr(KnowledgeGraph, name)))
    }
    for name, declared in ABILITIES.items():
        for attribute in (name, f"_{name}"):  # a backend's ability, or a wrapper's forwarder of it
            extra = EXTENSIONS.get((cls.__name__, attribute), ())
            if hasattr(cls, attribute) and (found := differences(getattr(cls, attribute), declared, extra=extra)):
                wrong[attribute] = found
    assert wrong == {}


@pytest.mark.parametrize("operation", sorted(ALGORITHMS))
def test_the_algorithms_take_the_protocols_options(operation: str) -> None:
    """``constrained_paths(kg, ...)`` and its kin: the Protocol's parameters after the graph."""
    assert differences(ALGORITHMS[operation], getattr(KnowledgeGraph, operation)) == []


def test_forwarders_report_the_protocols_signature_and_refuse_unknown_options() -> None:
    wrapper_signature = inspect.signature(DelegatingGraph.neighbors)
    assert wrapper_signature == inspect.signature(KnowledgeGraph.neighbors)
    assert "limit_per_entity" in wrapper_signature.parameters

    passed: list[tuple[str, dict[str, Any]]] = []

    @forwards(KnowledgeGraph.search)
    def search(graph: Any, text: str, **options: Any) -> list[Entity]:
        passed.append((text, options))
        return []

    assert list(inspect.signature(search).parameters) == ["self", "text", "limit"]
    assert search(None, "x", limit=3) == [] and passed == [("x", {"limit": 3})]
    with DelegatingGraph(connect("oxigraph://")) as wrapper, pytest.raises(TypeError, match="sideways"):
        wrapper.neighbors("http://example.org/a", sideways=True)  # type: ignore[call-arg]


def test_a_signature_that_drifts_is_caught() -> None:
    class Drifted:
        def neighbors(self, ids: Any, *, direction: str = "in") -> None: ...

    assert differences(Drifted.neighbors, KnowledgeGraph.neighbors)


def test_call_options_fill_the_protocols_defaults_and_refuse_unknown_ones() -> None:
    from kg_adapters.base import call_options

    assert call_options(KnowledgeGraph.subgraph, {"hops": 1}) == {
        "hops": 1,
        "direction": "both",
        "relations": None,
        "max_edges": None,
    }
    with pytest.raises(TypeError, match="sideways"):
        call_options(KnowledgeGraph.subgraph, {"sideways": True})
    with pytest.raises(TypeError, match=r"missing keyword argument.*: n"):
        call_options(CandidateLLM.candidates, {"beam_search": True})  # a required option has no default
