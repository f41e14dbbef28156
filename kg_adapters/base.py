"""The narrow interface every backend implements, and optional abilities as separate Protocols.

Reasoners depend only on :class:`KnowledgeGraph`. Every operation takes one id or a list of ids
and answers the whole batch with a bounded number of backend queries.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import IO, Any, Concatenate, ParamSpec, Protocol, SupportsIndex, TypeVar, runtime_checkable
from typing import Literal as TypingLiteral

from kg_adapters.profiles import Profile
from kg_adapters.records import Edge, EdgeList, Entity, GraphCounts, Node, PathResult, RelationSummary

Direction = TypingLiteral["out", "in", "both"]
DIRECTIONS: tuple[Direction, ...] = ("out", "in", "both")
Ids = str | Sequence[str]
Langs = str | Sequence[str]
"""One language tag or tags in order of preference (``("de", "en")``)."""


@runtime_checkable
class KnowledgeGraph(Protocol):
    """Read access to a knowledge graph, in the ids of its profile."""

    @property
    def profile(self) -> Profile: ...

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
        """1-hop edges of each id (``out``: id is the head; ``in``: id is the tail).

        ``expand_cvt``: an edge reaching a CVT (mediator) node carries the mediator's other edges
        in ``Edge.cvt``. ``qualifiers``: full statements (``Edge.qualifiers``, ``Edge.rank``) where
        the profile has them (Wikidata), instead of truthy edges; profiles without statements
        (generic, Freebase, DBpedia) answer with their ordinary edges."""
        ...

    def relations(self, ids: Ids, *, direction: Direction = "out", expand_cvt: bool = False) -> dict[str, list[str]]:
        """Distinct relations on each id's edges in ``direction``, sorted. ``expand_cvt`` adds
        ``r1..r2`` for each relation ``r2`` seen through a CVT reached by ``r1``."""
        ...

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
        """Constrained BFS (RoG Algorithm 1): every walk from a start that follows ``relation_path``.
        ``expand_cvt``: a step ``r1..r2`` walks ``r1`` into a CVT node and ``r2`` out of it."""
        ...

    def shortest_paths(
        self,
        sources: Ids,
        targets: Ids,
        *,
        max_hops: int = 4,
        direction: Direction = "both",
        max_paths: int | None = None,
    ) -> PathResult:
        """All shortest paths of at most ``max_hops`` edges for every (source, target) pair."""
        ...

    def subgraph(
        self,
        seeds: Ids,
        *,
        hops: int = 2,
        direction: Direction = "both",
        relations: Sequence[str] | None = None,
        max_edges: int | None = None,
    ) -> EdgeList:
        """Every distinct edge within ``hops`` of the seeds."""
        ...

    def labels(self, ids: Ids, *, lang: Langs = "en") -> dict[str, str]:
        """Names of the ids that have one (preferring the ``lang`` tags in order, then untagged,
        then any). CVT nodes of profiles that have them are described from their named neighbours."""
        ...

    def describe(self, ids: Ids, *, lang: Langs = "en") -> dict[str, Entity]:
        """Label and description (the profile's description predicates) of every id, with the same
        language fallbacks as ``labels``; ids with neither get ``Entity(id=...)``."""
        ...

    def search(self, text: str, *, limit: int = 10) -> list[Entity]:
        """Entities whose name matches ``text``: exact first, then prefix, then all tokens."""
        ...

    def search_relations(self, text: str, *, limit: int = 10) -> list[Entity]:
        """Relations whose label (where the graph labels its relations, e.g. Wikidata properties) or
        id words (``people.person.place_of_birth``: "people person place of birth") match ``text``,
        ranked as ``search``; ``Entity.id`` is the relation id, ``label`` its label if it has one."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> KnowledgeGraph: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


@runtime_checkable
class SparqlQueryable(Protocol):
    """The raw SPARQL escape hatch, for backends that speak SPARQL."""

    def query(self, sparql: str) -> list[dict[str, Node | bool]]:
        """SELECT rows as {variable: value}; full IRIs (no compaction), Literal for literals.
        ASK answers ``[{"boolean": bool}]``; CONSTRUCT/DESCRIBE answer subject/predicate/object rows."""
        ...


class SparqlRunner(Protocol):
    """Where an :class:`EmbeddedSparql` graph runs a query when its caller says so: a server's worker
    process, which it kills at the query's deadline (:mod:`kg_adapters.serve.workers`)."""

    def __call__(self, reader_url: str, method: str, arguments: dict[str, Any], output: IO[bytes] | None) -> Any:
        """``connect(reader_url).method(**arguments)`` (with ``output=`` when given, its bytes copied into
        ``output``) in the runner's place, and its answer.

        Raises:
            BackendTimeout: the deadline passed first (the run was stopped).
            KGError: what the method raised there.
        """
        ...


@runtime_checkable
class EmbeddedSparql(Protocol):
    """SPARQL evaluated by an engine inside this process (the embedded store): it writes answers in the
    standard serializations itself, and another process can open the same data read-only. Servers run a
    query someone else wrote through a ``runner`` that evaluates it in such a process, where a query past
    its deadline is stopped for real; without a runner (or without a ``reader_url``) it runs here.
    Wrappers forward this ability, so what they add (counting, a cache) applies to these queries too."""

    def reader_url(self) -> str | None:
        """A URL whose ``connect()`` in another process reads the same data read-only and follows later
        loads; None when the data lives only in this process (an in-memory store)."""
        ...

    def sparql_rows(
        self, sparql: str, *, max_rows: int | None = None, runner: SparqlRunner | None = None
    ) -> list[dict[str, Node | bool]]:
        """As :meth:`SparqlQueryable.query`, reading at most ``max_rows`` solutions."""
        ...

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
        """Writes the answer to ``output`` as the engine produces it, in ``format`` (a
        ``pyoxigraph.QueryResultsFormat`` name such as ``JSON`` for SELECT and ASK, an ``RdfFormat`` name
        such as ``N_TRIPLES`` for CONSTRUCT and DESCRIBE); ``default_graphs``/``named_graphs``: the
        SPARQL Protocol's dataset (absolute IRIs).

        Raises:
            QueryError: the engine rejected the query, or ``format`` does not fit its form.
        """
        ...


@runtime_checkable
class ProfileDetecting(Protocol):
    """Graphs that can tell their profile from their data (``?profile=auto``)."""

    def detect_profile(self) -> Profile:
        """Switches to the detected profile and returns it (``profile.detection`` says why)."""
        ...


@runtime_checkable
class WritableGraph(Protocol):
    """Adding data to a graph opened for writing."""

    def add(self, edges: Iterable[Edge]) -> int:
        """Adds the edges (ids in the profile); returns how many were given."""
        ...

    def load(self, path: str, *, format: str | None = None) -> None:
        """Adds the triples of an RDF file."""
        ...


@runtime_checkable
class NativeWalks(Protocol):
    """A graph whose ``paths``, ``shortest_paths`` and ``subgraph`` are walks of its own (an index, an
    engine feature), far faster than the generic algorithms over its ``neighbors``. A wrapper that would
    otherwise walk over itself (the result cache) keeps whole answers of such a graph instead. A backend
    declares it with one class attribute: ``native_walks: TypingLiteral[True] = True``."""

    native_walks: TypingLiteral[True]


@runtime_checkable
class RelationFilterable(Protocol):
    """A backend whose profile's relation filter can be replaced (``connect(..., relation_filter=)``)."""

    def use_relation_filter(self, relation_filter: object) -> None:
        """Replaces the relation filter: a ``RelationFilter``, ``None``/``"none"`` or ``"default"``.

        Raises:
            InvalidTermError: any other value.
        """
        ...


_P = ParamSpec("_P")
_R = TypeVar("_R")


def forwards(
    operation: Callable[Concatenate[Any, _P], _R],
) -> Callable[[Callable[..., _R]], Callable[Concatenate[Any, _P], _R]]:
    """Gives a forwarder the signature of ``operation`` (a :class:`KnowledgeGraph` method), so each
    operation's options are written once, in the Protocol: the forwarder names its leading arguments
    and passes ``**options`` on, while type checkers and :func:`inspect.signature` see the interface's
    parameters and defaults (an unknown option is a TypeError from the graph it reaches)::

        @forwards(KnowledgeGraph.neighbors)
        def neighbors(self, ids: Ids, **options: Any) -> dict[str, list[Edge]]:
            return self.inner.neighbors(ids, **options)
    """
    signature = inspect.signature(operation)

    def adopt(forwarder: Callable[..., _R]) -> Callable[Concatenate[Any, _P], _R]:
        forwarder.__signature__ = signature  # type: ignore[attr-defined]
        return forwarder

    return adopt


@functools.cache
def _keyword_defaults(operation: Callable[..., Any]) -> Mapping[str, Any]:
    parameters = inspect.signature(operation).parameters.values()
    return {p.name: p.default for p in parameters if p.kind is p.KEYWORD_ONLY}


def call_options(operation: Callable[..., Any], options: Mapping[str, Any]) -> dict[str, Any]:
    """Every keyword option of ``operation`` (a Protocol method), the given ``options`` over the defaults
    the Protocol declares: for an implementation that takes ``**options`` (:func:`forwards`) and needs
    their values. An unknown option is a TypeError, as a call with it would be."""
    defaults = _keyword_defaults(operation)
    unknown = sorted(options.keys() - defaults.keys())
    if unknown:
        raise TypeError(f"{operation.__name__}() got unexpected keyword argument(s): {', '.join(unknown)}")
    missing = [name for name, default in defaults.items() if default is inspect.Parameter.empty and name not in options]
    if missing:
        raise TypeError(f"{operation.__name__}() missing keyword argument(s): {', '.join(missing)}")
    return {**defaults, **options}


class HoldsConnection:
    """For graphs that hold an open store or connection, which another process cannot share: pickling
    one is refused with a clear TypeError (the other process connects to the same URL instead), not a
    pickle error about some lock or handle deep inside it."""

    def __reduce_ex__(self, protocol: SupportsIndex) -> str | tuple[Any, ...]:
        raise TypeError(
            f"a {type(self).__name__} holds an open store or connection and cannot be pickled; "
            "give the other process its URL and connect() there"
        )


@runtime_checkable
class CountsRelations(Protocol):
    """A graph that knows its size without scanning it (from an index, or because it is small): the
    statistics a SPARQL service description gives (``kga serve``)."""

    def relation_counts(self, *, max_relations: int = 1000) -> GraphCounts:
        """Triples of the default graph, its number of relations and the triples of the
        ``max_relations`` largest (full IRIs); what is not known cheaply is left out, never counted
        by a scan of a large graph."""
        ...


@runtime_checkable
class GraphCatalog(Protocol):
    """What a graph holds, read from its indexes: so a tool can tell an id or relation the graph does not
    have from one without edges here, and describe the graph's relations to a planner."""

    def relation_ids(self) -> list[str]:
        """Every relation of the graph (profile ids, sorted), those the relation filter hides included."""
        ...

    def known_entities(self, ids: Ids) -> set[str]:
        """The ids (as given) that occur in some triple, as subject or object.

        Raises:
            InvalidTermError: an id that is not an id of the profile.
        """
        ...

    def relation_summaries(
        self, relations: Sequence[str], *, examples: int = 3, types: int = 3, deadline: float | None = None
    ) -> list[RelationSummary]:
        """Counts, ``examples`` edges and the ``types`` most frequent types of heads and tails (the profile's
        type predicates, over a bounded sample) of each relation, in order; relations not reached by
        ``deadline`` (``time.monotonic()``) are left out, so the answer may be shorter than asked."""
        ...


@runtime_checkable
class SearchConfigurable(Protocol):
    """A backend whose ``search``/``search_relations`` can be chosen (``connect(..., search=...)``)."""

    def use_search(self, mode: object) -> None:
        """``"auto"`` (by meaning when the embeddings extra is installed, else by words), ``"semantic"``
        or ``"lexical"`` (see :mod:`kg_adapters.semantic_search`).

        Raises:
            InvalidTermError: any other value.
            MissingDependency: ``"semantic"`` without the embeddings extra.
        """
        ...


class _Closable(Protocol):
    def close(self) -> None: ...


_C = TypeVar("_C", bound=_Closable)


class ClosesOnExit:
    """``with`` support for anything with ``close()``: leaving the block closes it."""

    def __enter__(self: _C) -> _C:
        return self

    def __exit__(
        self: _Closable,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def as_id_list(ids: Ids) -> list[str]:
    """One id or many, as a de-duplicated list in the caller's order; anything else is refused."""
    from kg_adapters.errors import InvalidTermError

    if isinstance(ids, str):
        return [ids]
    if isinstance(ids, (bytes, bytearray, Mapping)) or not isinstance(ids, Iterable):
        raise InvalidTermError(f"ids must be a string or a list of strings, got {type(ids).__name__}")
    items = list(ids)
    for item in items:
        if not isinstance(item, str):
            raise InvalidTermError(f"ids must be strings, got {type(item).__name__}: {item!r:.100}")
    return list(dict.fromkeys(items))


def check_direction(direction: str) -> Direction:
    from kg_adapters.errors import InvalidTermError

    if direction not in DIRECTIONS:
        raise InvalidTermError(f"direction must be one of out, in, both; got {direction!r}")
    return direction
