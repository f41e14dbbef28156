"""One delegation base for every wrapper around a :class:`~kg_adapters.base.KnowledgeGraph`.

:class:`DelegatingGraph` forwards each operation of the interface to ``inner``, and a wrapper
overrides only what it changes. Its forwarders take their signatures from the Protocol
(:func:`~kg_adapters.base.forwards`), so an operation's options are written once, in ``base.py``.

The optional abilities (:data:`ABILITIES`: ``query``, the embedded store's ``reader_url``/``sparql_rows``/
``sparql_write``, ``detect_profile``, ``use_relation_filter``, ``add``/``load``, ``native_walks``,
``relation_counts``, the catalog's ``relation_ids``/``known_entities``/``relation_summaries``) are
forwarded too, but only when ``inner`` has them:
``isinstance(wrapper, SparqlQueryable)`` must answer what ``isinstance(inner, SparqlQueryable)``
answers, and the runtime-checkable Protocols look only at which attributes exist. So a wrapper puts
the forwarder of each ability ``inner`` has on the instance when it is made (the bound method in its
``__dict__``, where ``hasattr`` and, from Python 3.12, ``inspect.getattr_static`` find it): the class
stays the wrapper's own (``type(CountingKG(kg)) is CountingKG``) and pickles by name. A wrapper changes
an ability by overriding its private forwarder (``_query``: the cache answers queries from its store);
defining the public name on the class is refused, as it would claim the ability for every inner graph.
No ``__getattr__``: every forwarded method is written out once, here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import IO, Any, cast

from kg_adapters.base import (
    ClosesOnExit,
    CountsRelations,
    EmbeddedSparql,
    GraphCatalog,
    Ids,
    KnowledgeGraph,
    NativeWalks,
    ProfileDetecting,
    RelationFilterable,
    SparqlQueryable,
    WritableGraph,
    forwards,
)
from kg_adapters.profiles import Profile
from kg_adapters.records import Edge, EdgeList, Entity, GraphCounts, Node, PathResult, RelationSummary

__all__ = ["ABILITIES", "DelegatingGraph", "abilities_of"]

ABILITIES: tuple[tuple[type, tuple[str, ...]], ...] = (
    (SparqlQueryable, ("query",)),
    (EmbeddedSparql, ("reader_url", "sparql_rows", "sparql_write")),
    (ProfileDetecting, ("detect_profile",)),
    (RelationFilterable, ("use_relation_filter",)),
    (WritableGraph, ("add", "load")),
    (NativeWalks, ("native_walks",)),
    (CountsRelations, ("relation_counts",)),
    (GraphCatalog, ("relation_ids", "known_entities", "relation_summaries")),
)
"""Each optional ability (a runtime-checkable Protocol) and the attributes that make it up."""

_ABILITY_NAMES = frozenset(name for _, names in ABILITIES for name in names)


def abilities_of(graph: object) -> list[type]:
    """The optional abilities (Protocols of :data:`ABILITIES`) ``graph`` has."""
    return [protocol for protocol, _ in ABILITIES if isinstance(graph, protocol)]


class DelegatingGraph(ClosesOnExit):
    """A :class:`KnowledgeGraph` that forwards everything to ``inner``, including the optional
    abilities ``inner`` has (and only those). ``close()`` closes ``inner``.

    Subclasses override the operations they change, and an ability through its private forwarder
    (``_query``, ``_detect_profile``, ``_use_relation_filter``, ``_add``, ``_load``). A wrapper is
    picklable when ``inner`` is (subclasses drop and remake what cannot be pickled, such as locks, in
    ``__getstate__``/``__setstate__``).
    """

    inner: KnowledgeGraph

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        claimed = sorted(_ABILITY_NAMES & vars(cls).keys())
        if claimed:
            raise TypeError(
                f"{cls.__name__} defines {', '.join(claimed)} on the class, which would claim an ability the inner "
                f"graph may lack; override the private forwarder instead ({', '.join('_' + c for c in claimed)})"
            )

    def __init__(self, inner: KnowledgeGraph) -> None:
        self.inner = inner
        self._adopt_abilities()

    def _adopt_abilities(self) -> None:
        """Puts on this instance the forwarders of exactly the abilities ``inner`` has."""
        for protocol in abilities_of(self.inner):
            for name in dict(ABILITIES)[protocol]:
                if name == "native_walks":  # a declaration, not a method
                    self.__dict__[name] = True
                else:
                    self.__dict__[name] = getattr(self, "_" + name)

    def __getstate__(self) -> dict[str, Any]:
        return {name: value for name, value in self.__dict__.items() if name not in _ABILITY_NAMES}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._adopt_abilities()

    def _calling(self, operation: str, ids: Ids) -> None:
        """Called by every forwarded read operation just before it reaches ``inner``, with what it asks
        about (the ids; the text of ``search``, the query of ``query``). Nothing here: the one seam for a
        wrapper that only observes calls (:class:`~kg_adapters.wrappers.counting.CountingKG`)."""

    @property
    def profile(self) -> Profile:
        """The inner graph's profile, read live (a backend may switch it: ``detect_profile``)."""
        return self.inner.profile

    @forwards(KnowledgeGraph.neighbors)
    def neighbors(self, ids: Ids, **options: Any) -> dict[str, list[Edge]]:
        self._calling("neighbors", ids)
        return self.inner.neighbors(ids, **options)

    @forwards(KnowledgeGraph.relations)
    def relations(self, ids: Ids, **options: Any) -> dict[str, list[str]]:
        self._calling("relations", ids)
        return self.inner.relations(ids, **options)

    @forwards(KnowledgeGraph.paths)
    def paths(self, starts: Ids, relation_path: Sequence[str], **options: Any) -> PathResult:
        self._calling("paths", starts)
        return self.inner.paths(starts, relation_path, **options)

    @forwards(KnowledgeGraph.shortest_paths)
    def shortest_paths(self, sources: Ids, targets: Ids, **options: Any) -> PathResult:
        self._calling("shortest_paths", sources)
        return self.inner.shortest_paths(sources, targets, **options)

    @forwards(KnowledgeGraph.subgraph)
    def subgraph(self, seeds: Ids, **options: Any) -> EdgeList:
        self._calling("subgraph", seeds)
        return self.inner.subgraph(seeds, **options)

    @forwards(KnowledgeGraph.labels)
    def labels(self, ids: Ids, **options: Any) -> dict[str, str]:
        self._calling("labels", ids)
        return self.inner.labels(ids, **options)

    @forwards(KnowledgeGraph.describe)
    def describe(self, ids: Ids, **options: Any) -> dict[str, Entity]:
        self._calling("describe", ids)
        return self.inner.describe(ids, **options)

    @forwards(KnowledgeGraph.search)
    def search(self, text: str, **options: Any) -> list[Entity]:
        self._calling("search", [text])
        return self.inner.search(text, **options)

    @forwards(KnowledgeGraph.search_relations)
    def search_relations(self, text: str, **options: Any) -> list[Entity]:
        self._calling("search_relations", [text])
        return self.inner.search_relations(text, **options)

    def close(self) -> None:
        self.inner.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"

    # -- the optional abilities' forwarders (put on the instance only when ``inner`` has the ability) --
    def _query(self, sparql: str) -> list[dict[str, Node | bool]]:
        """:class:`SparqlQueryable`, forwarded."""
        self._calling("query", [sparql])
        return cast(SparqlQueryable, self.inner).query(sparql)

    def _reader_url(self) -> str | None:
        """:class:`EmbeddedSparql`, forwarded."""
        return cast(EmbeddedSparql, self.inner).reader_url()

    @forwards(EmbeddedSparql.sparql_rows)
    def _sparql_rows(self, sparql: str, **options: Any) -> list[dict[str, Node | bool]]:
        """:class:`EmbeddedSparql`, forwarded; the query is seen by :meth:`_calling` as ``query``."""
        self._calling("query", [sparql])
        return cast(EmbeddedSparql, self.inner).sparql_rows(sparql, **options)

    @forwards(EmbeddedSparql.sparql_write)
    def _sparql_write(self, sparql: str, output: IO[bytes], **options: Any) -> None:
        """:class:`EmbeddedSparql`, forwarded; the query is seen by :meth:`_calling` as ``query``."""
        self._calling("query", [sparql])
        cast(EmbeddedSparql, self.inner).sparql_write(sparql, output, **options)

    def _relation_counts(self, *, max_relations: int = 1000) -> GraphCounts:
        """:class:`CountsRelations`, forwarded."""
        return cast(CountsRelations, self.inner).relation_counts(max_relations=max_relations)

    def _relation_ids(self) -> list[str]:
        """:class:`GraphCatalog`, forwarded."""
        return cast(GraphCatalog, self.inner).relation_ids()

    def _known_entities(self, ids: Ids) -> set[str]:
        """:class:`GraphCatalog`, forwarded."""
        self._calling("known_entities", ids)
        return cast(GraphCatalog, self.inner).known_entities(ids)

    @forwards(GraphCatalog.relation_summaries)
    def _relation_summaries(self, relations: Sequence[str], **options: Any) -> list[RelationSummary]:
        """:class:`GraphCatalog`, forwarded."""
        return cast(GraphCatalog, self.inner).relation_summaries(relations, **options)

    def _detect_profile(self) -> Profile:
        """:class:`ProfileDetecting`, forwarded (the wrapper reads the inner profile live, so it follows)."""
        return cast(ProfileDetecting, self.inner).detect_profile()

    def _use_relation_filter(self, relation_filter: object) -> None:
        """:class:`RelationFilterable`, forwarded."""
        cast(RelationFilterable, self.inner).use_relation_filter(relation_filter)

    def _add(self, edges: Iterable[Edge]) -> int:
        """:class:`WritableGraph`, forwarded."""
        return cast(WritableGraph, self.inner).add(edges)

    def _load(self, path: str, *, format: str | None = None) -> None:
        """:class:`WritableGraph`, forwarded."""
        cast(WritableGraph, self.inner).load(path, format=format)
