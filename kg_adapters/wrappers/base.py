"""One delegation base for every wrapper around a :class:`~kg_adapters.base.KnowledgeGraph`.

:class:`DelegatingGraph` forwards each operation of the interface to ``inner``, and a wrapper
overrides only what it changes. The optional abilities (``query``, the embedded store's
``sparql_rows``/``sparql_write``, ``detect_profile``, ``use_relation_filter``, ``add``/``load``) are
forwarded too, but only when ``inner`` has them: ``isinstance(wrapper, SparqlQueryable)`` must
answer what ``isinstance(inner, SparqlQueryable)`` answers, and the runtime-checkable Protocols only
look at which methods exist. So the class of a wrapper instance is composed when it is made: the
wrapper's own class plus one forwarding mixin per ability of ``inner`` (:data:`CAPABILITIES`), built
once per combination and cached. A wrapper changes an ability by naming its own mixin in
``capability_mixins`` (the cache answers ``query`` from its store). No ``__getattr__``: every
forwarded method is written out once, here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import IO, Any, ClassVar, TypeVar, cast

from kg_adapters.base import (
    ClosesOnExit,
    Direction,
    EmbeddedSparql,
    Ids,
    KnowledgeGraph,
    Langs,
    ProfileDetecting,
    RelationFilterable,
    SparqlQueryable,
    SparqlRunner,
    WritableGraph,
)
from kg_adapters.profiles import Profile
from kg_adapters.records import Edge, EdgeList, Entity, Node, PathResult

__all__ = [
    "CAPABILITIES",
    "DelegatingGraph",
    "ForwardingMixin",
    "ForwardsEmbeddedSparql",
    "ForwardsProfileDetection",
    "ForwardsQuery",
    "ForwardsRelationFilter",
    "ForwardsWriting",
]


class ForwardingMixin:
    """A forwarding mixin: its methods reach ``self.inner``."""

    inner: KnowledgeGraph

    def _calling(self, operation: str, ids: Ids) -> None:
        """See :meth:`DelegatingGraph._calling`."""


class ForwardsQuery(ForwardingMixin):
    """:class:`SparqlQueryable`, forwarded."""

    def query(self, sparql: str) -> list[dict[str, Node | bool]]:
        self._calling("query", [sparql])
        return cast(SparqlQueryable, self.inner).query(sparql)


class ForwardsEmbeddedSparql(ForwardingMixin):
    """:class:`EmbeddedSparql`, forwarded; each query is seen by :meth:`_calling` as ``query``."""

    def reader_url(self) -> str | None:
        return cast(EmbeddedSparql, self.inner).reader_url()

    def sparql_rows(
        self, sparql: str, *, max_rows: int | None = None, runner: SparqlRunner | None = None
    ) -> list[dict[str, Node | bool]]:
        self._calling("query", [sparql])
        return cast(EmbeddedSparql, self.inner).sparql_rows(sparql, max_rows=max_rows, runner=runner)

    def sparql_write(
        self,
        sparql: str,
        output: IO[bytes],
        *,
        format: str,
        default_graphs: Sequence[str] = (),
        named_graphs: Sequence[str] = (),
        runner: SparqlRunner | None = None,
    ) -> None:
        self._calling("query", [sparql])
        cast(EmbeddedSparql, self.inner).sparql_write(
            sparql, output, format=format, default_graphs=default_graphs, named_graphs=named_graphs, runner=runner
        )


class ForwardsProfileDetection(ForwardingMixin):
    """:class:`ProfileDetecting`, forwarded (the wrapper reads the inner profile live, so it follows)."""

    def detect_profile(self) -> Profile:
        return cast(ProfileDetecting, self.inner).detect_profile()


class ForwardsRelationFilter(ForwardingMixin):
    """:class:`RelationFilterable`, forwarded."""

    def use_relation_filter(self, relation_filter: object) -> None:
        cast(RelationFilterable, self.inner).use_relation_filter(relation_filter)


class ForwardsWriting(ForwardingMixin):
    """:class:`WritableGraph`, forwarded."""

    def add(self, edges: Iterable[Edge]) -> int:
        return cast(WritableGraph, self.inner).add(edges)

    def load(self, path: str, *, format: str | None = None) -> None:
        cast(WritableGraph, self.inner).load(path, format=format)


CAPABILITIES: tuple[tuple[type, type[ForwardingMixin]], ...] = (
    (SparqlQueryable, ForwardsQuery),
    (EmbeddedSparql, ForwardsEmbeddedSparql),
    (ProfileDetecting, ForwardsProfileDetection),
    (RelationFilterable, ForwardsRelationFilter),
    (WritableGraph, ForwardsWriting),
)
"""Each optional ability (a runtime-checkable Protocol) and the mixin that forwards it."""

_CAPABILITY_METHODS = frozenset(
    name for _, mixin in CAPABILITIES for name, value in vars(mixin).items() if callable(value)
)

_D = TypeVar("_D", bound="DelegatingGraph")
_composed: dict[tuple[type, tuple[type, ...]], type] = {}
_composed_lock = threading.Lock()


def _compose(cls: type[_D], inner: object) -> type[_D]:
    """``cls`` plus the mixins of the abilities ``inner`` has (``cls`` itself when it has none)."""
    overrides = cls.capability_mixins
    abilities = [(protocol, default) for protocol, default in CAPABILITIES if isinstance(inner, protocol)]
    mixins = tuple(overrides.get(protocol, default) for protocol, default in abilities)
    if not mixins:
        return cls
    with _composed_lock:
        composed = _composed.get((cls, mixins))
        if composed is None:
            namespace = {"__module__": cls.__module__, "__qualname__": cls.__qualname__, "__doc__": cls.__doc__}
            composed = type(cls.__name__, (cls, *mixins), namespace)
            _composed[(cls, mixins)] = composed
    return cast(type[_D], composed)


class DelegatingGraph(ClosesOnExit):
    """A :class:`KnowledgeGraph` that forwards everything to ``inner``, including the optional
    abilities ``inner`` has (and only those). ``close()`` closes ``inner``.

    Subclasses override the operations they change and name their own mixin for an optional ability
    in ``capability_mixins`` (never a method such as ``query`` on the class itself: that would claim
    the ability for every inner graph, and :meth:`__init_subclass__` refuses it).
    """

    capability_mixins: ClassVar[dict[type, type[ForwardingMixin]]] = {}
    """Protocol -> the mixin this wrapper uses instead of the plain forwarding one."""

    inner: KnowledgeGraph

    def __new__(cls: type[_D], inner: KnowledgeGraph, *args: Any, **kwargs: Any) -> _D:
        return object.__new__(_compose(cls, inner))

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if any(issubclass(cls, mixin) for _, mixin in CAPABILITIES):
            return  # a composed class
        claimed = sorted(_CAPABILITY_METHODS & vars(cls).keys())
        if claimed:
            raise TypeError(
                f"{cls.__name__} defines {', '.join(claimed)} on the class, which would claim an ability the "
                "inner graph may lack; put it in a mixin named in capability_mixins"
            )
        for protocol, mixin in cls.capability_mixins.items():
            default = dict(CAPABILITIES).get(protocol)
            if default is None or not issubclass(mixin, default):
                raise TypeError(f"{cls.__name__}.capability_mixins: {mixin.__name__} must extend the forwarding mixin")

    def __init__(self, inner: KnowledgeGraph) -> None:
        self.inner = inner

    def _calling(self, operation: str, ids: Ids) -> None:
        """Called by every forwarded read operation just before it reaches ``inner``, with what it asks
        about (the ids; the text of ``search``, the query of ``query``). Nothing here: the one seam for a
        wrapper that only observes calls (:class:`~kg_adapters.wrappers.counting.CountingKG`)."""

    @property
    def profile(self) -> Profile:
        """The inner graph's profile, read live (a backend may switch it: ``detect_profile``)."""
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
        self._calling("neighbors", ids)
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
        self._calling("relations", ids)
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
        self._calling("paths", starts)
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
        self._calling("shortest_paths", sources)
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
        self._calling("subgraph", seeds)
        return self.inner.subgraph(seeds, hops=hops, direction=direction, relations=relations, max_edges=max_edges)

    def labels(self, ids: Ids, *, lang: Langs = "en") -> dict[str, str]:
        self._calling("labels", ids)
        return self.inner.labels(ids, lang=lang)

    def describe(self, ids: Ids, *, lang: Langs = "en") -> dict[str, Entity]:
        self._calling("describe", ids)
        return self.inner.describe(ids, lang=lang)

    def search(self, text: str, *, limit: int = 10) -> list[Entity]:
        self._calling("search", [text])
        return self.inner.search(text, limit=limit)

    def search_relations(self, text: str, *, limit: int = 10) -> list[Entity]:
        self._calling("search_relations", [text])
        return self.inner.search_relations(text, limit=limit)

    def close(self) -> None:
        self.inner.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"
