"""A wrapper that counts the operations reaching a KG (``kg_calls`` of a reasoner run, and the
test instrument that proves a cache answered without asking the backend)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from kg_adapters.base import ClosesOnExit, Direction, Ids, KnowledgeGraph, Langs, SparqlQueryable, as_id_list
from kg_adapters.profiles import Profile
from kg_adapters.records import Edge, EdgeList, Entity, Node, PathResult


class CountingKG(ClosesOnExit):
    """Delegates every call to ``inner`` and records ``(operation, ids asked for)`` in ``calls``."""

    def __init__(self, inner: KnowledgeGraph) -> None:
        self.inner = inner
        self.calls: list[tuple[str, list[str]]] = []
        self._lock = threading.Lock()

    def _note(self, operation: str, ids: Ids | None = None) -> None:
        with self._lock:
            self.calls.append((operation, as_id_list(ids) if ids is not None else []))

    def asked(self, operation: str) -> list[list[str]]:
        """The id lists of every call to ``operation``, in call order."""
        return [ids for name, ids in self.calls if name == operation]

    @property
    def profile(self) -> Profile:
        return self.inner.profile

    def neighbors(
        self,
        ids: Ids,
        *,
        direction: Direction = "out",
        relations: Sequence[str] | None = None,
        limit_per_entity: int | None = None,
        literals: bool = True,
        expand_cvt: bool = False,
        qualifiers: bool = False,
    ) -> dict[str, list[Edge]]:
        self._note("neighbors", ids)
        return self.inner.neighbors(
            ids,
            direction=direction,
            relations=relations,
            limit_per_entity=limit_per_entity,
            literals=literals,
            expand_cvt=expand_cvt,
            qualifiers=qualifiers,
        )

    def relations(self, ids: Ids, *, direction: Direction = "out", expand_cvt: bool = False) -> dict[str, list[str]]:
        self._note("relations", ids)
        return self.inner.relations(ids, direction=direction, expand_cvt=expand_cvt)

    def paths(
        self,
        starts: Ids,
        relation_path: Sequence[str],
        *,
        directions: Sequence[Direction] | None = None,
        max_paths: int | None = None,
        simple: bool = False,
        expand_cvt: bool = False,
    ) -> PathResult:
        self._note("paths", starts)
        return self.inner.paths(
            starts, relation_path, directions=directions, max_paths=max_paths, simple=simple, expand_cvt=expand_cvt
        )

    def shortest_paths(
        self,
        sources: Ids,
        targets: Ids,
        *,
        max_hops: int = 4,
        direction: Direction = "both",
        max_paths: int | None = None,
    ) -> PathResult:
        self._note("shortest_paths", sources)
        return self.inner.shortest_paths(sources, targets, max_hops=max_hops, direction=direction, max_paths=max_paths)

    def subgraph(
        self,
        seeds: Ids,
        *,
        hops: int = 2,
        direction: Direction = "both",
        relations: Sequence[str] | None = None,
        max_edges: int | None = None,
    ) -> EdgeList:
        self._note("subgraph", seeds)
        return self.inner.subgraph(seeds, hops=hops, direction=direction, relations=relations, max_edges=max_edges)

    def labels(self, ids: Ids, *, lang: Langs = "en") -> dict[str, str]:
        self._note("labels", ids)
        return self.inner.labels(ids, lang=lang)

    def describe(self, ids: Ids, *, lang: Langs = "en") -> dict[str, Entity]:
        self._note("describe", ids)
        return self.inner.describe(ids, lang=lang)

    def search(self, text: str, *, limit: int = 10) -> list[Entity]:
        self._note("search", [text])
        return self.inner.search(text, limit=limit)

    def search_relations(self, text: str, *, limit: int = 10) -> list[Entity]:
        self._note("search_relations", [text])
        return self.inner.search_relations(text, limit=limit)

    def close(self) -> None:
        self.inner.close()


class CountingSparqlKG(CountingKG):
    """The same counter for a KG that also answers raw SPARQL."""

    def query(self, sparql: str) -> list[dict[str, Node | bool]]:
        self._note("query", [sparql])
        if not isinstance(self.inner, SparqlQueryable):
            raise TypeError(f"{type(self.inner).__name__} does not answer raw SPARQL")
        return self.inner.query(sparql)
