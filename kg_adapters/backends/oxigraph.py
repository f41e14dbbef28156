"""The embedded Oxigraph store: on disk (``oxigraph:///abs/dir``) or in memory (``oxigraph://``).

On-disk stores open read-only unless ``write=True``; a missing or incomplete store raises
:class:`StoreNotFound` and is never opened empty. pyoxigraph errors are translated here.
"""

from __future__ import annotations

import errno
import itertools
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from typing import Literal as TypingLiteral
from urllib.parse import quote

import pyoxigraph as ox

from kg_adapters import store_layout
from kg_adapters.algorithms import shortest_path_arguments, subgraph_arguments
from kg_adapters.backends.sparql_graph import Row, SparqlGraph
from kg_adapters.base import DIRECTIONS, Direction, Ids, SparqlRunner, as_id_list, check_direction
from kg_adapters.budgets import check_count
from kg_adapters.errors import BackendError, InvalidTermError, QueryError, StoreNotFound, StoreReadOnly
from kg_adapters.profiles import Profile, get_profile
from kg_adapters.rdf_io import convert_term, open_maybe_compressed, rdf_format, to_oxigraph_term
from kg_adapters.records import Edge, EdgeList, GraphCounts, Literal, Node, PathResult
from kg_adapters.sparql_terms import expand_dotted_prefixed_names
from kg_adapters.store_build import rebuild_label_index, store_label_rows, store_relation_rows
from kg_adapters.terms import Term
from kg_adapters.url import KGUrl, local_path

if TYPE_CHECKING:
    from kg_adapters.index.backend import IndexBackend
    from kg_adapters.index.read import TraversalIndex
    from kg_adapters.label_index import LabelIndex
    from kg_adapters.relation_index import RelationIndex

_NamedNode = ox.NamedNode
_Literal = ox.Literal
_BlankNode = ox.BlankNode


def _flag(value: object, name: str) -> bool:
    """A boolean option, given as a bool or as URL text (1/true/yes, 0/false/no); anything else is
    refused rather than read as false."""
    if isinstance(value, str) and value.lower() in _FLAGS:
        return _FLAGS[value.lower()]
    if not isinstance(value, bool):
        raise InvalidTermError(f"option {name} must be true or false, got {value!r:.40}")
    return value


def select_rows(store: ox.Store, query: str) -> list[Row]:
    """Rows of a SELECT on ``store``, terms converted; pyoxigraph errors translated."""
    try:
        solutions = store.query(query)
    except SyntaxError as exc:
        raise QueryError(f"Oxigraph rejected the query: {exc}") from exc
    except OSError as exc:
        raise BackendError(f"Oxigraph failed: {exc}") from exc
    if not isinstance(solutions, ox.QuerySolutions):
        raise QueryError("expected a SELECT query")
    width = len(solutions.variables)
    convert = convert_term
    try:
        if width == 2:
            return [(convert(s[0]), convert(s[1])) for s in solutions]
        return [tuple(convert(s[i]) for i in range(width)) for s in solutions]
    except OSError as exc:
        raise BackendError(f"Oxigraph failed while reading results: {exc}") from exc
    finally:
        del solutions  # dropped by the thread that made it, never by one that handles the error later


_FLAGS = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}


SMALL_STORE = 200_000
"""Triples up to which a store without a traversal index counts its relations by a query."""


class OxigraphGraph(SparqlGraph):
    """A pyoxigraph Store behind the :class:`KnowledgeGraph` interface."""

    native_walks: TypingLiteral[True] = True  # NativeWalks: paths, shortest_paths, subgraph walk the traversal index

    values_chunk = 2000
    direct_lookup_max = 64
    """Expansions with at most this many (entity, relation) lookups skip SPARQL (see _collect_edges)."""

    def __init__(
        self, path: str | None = None, *, profile: str | Profile | None = None, write: bool = False, index: bool = True
    ) -> None:
        """``profile``: default the one the store's manifest records (``generic`` in memory).
        ``index=False`` leaves the store's traversal index unused (every answer through Oxigraph)."""
        self.path = path
        self.write = write or path is None
        self.manifest: dict[str, Any] = {}
        self._version: store_layout.OpenVersion | None = None
        self._traversal: TraversalIndex | None = None
        self._use_index = index
        self._relation_full: dict[str, str] = {}
        self._backend: IndexBackend | None = None
        self._relation_counts: tuple[int, list[tuple[str, int | None]]] | None = None
        self._oxigraph: ox.Store | None = None
        self._oxigraph_lock = threading.Lock()
        if path is not None:
            self._version = store_layout.open_version(path)  # held until close(): a load cannot delete it
            self.manifest = self._version.manifest
        try:
            super().__init__(get_profile(profile if profile is not None else self.manifest.get("profile", "generic")))
        except BaseException:
            self.close_version()
            raise
        if self._version is None:
            self._store = ox.Store()
            return
        data = str(self._version.data)
        if write and not os.access(data, os.W_OK):  # EROFS answers here even for root
            self.close_version()
            raise StoreReadOnly(
                f"cannot open the store at {path} for writing: its directory or file system is read-only "
                "(connect without write=True to read it)"
            )
        if index and not write:
            self._open_traversal_index()
            if self._traversal is not None:
                return  # Oxigraph opens on first use (_store): answers from the index never need it
        try:
            self._oxigraph = ox.Store(data) if write else ox.Store.read_only(data)
        except OSError as exc:
            self.close_version()
            if write and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise StoreReadOnly(f"cannot open the store at {path} for writing: {exc}") from exc
            raise StoreNotFound(f"cannot open the Oxigraph store at {path}: {exc}") from exc
        if index and write:
            self._open_traversal_index()

    @property
    def _store(self) -> ox.Store:
        """The Oxigraph store; a read-only one with a traversal index is opened here, on first use:
        opening RocksDB costs time and memory (``benchmarks.bfs_vs_networkx``'s time to first answer
        and peak RSS count them) that a process answering from the index never needs."""
        store = self._oxigraph
        if store is None:
            with self._oxigraph_lock:
                store = self._oxigraph
                if store is None:
                    store = self._oxigraph = self._open_read_only()
        return store

    @_store.setter
    def _store(self, store: ox.Store) -> None:
        self._oxigraph = store

    def _open_read_only(self) -> ox.Store:
        assert self._version is not None  # only on-disk stores defer opening
        try:
            return ox.Store.read_only(str(self._version.data))
        except OSError as exc:
            raise StoreNotFound(f"cannot open the Oxigraph store at {self.path}: {exc}") from exc

    # -- the traversal index (kg_adapters.index) ---------------------------------------------------
    def _open_traversal_index(self) -> None:
        if self._version is None or not (self._version.directory / store_layout.TRAVERSAL).is_dir():
            return
        from kg_adapters.index.read import open_index  # (memory-mapped files: only for indexed stores)

        self._traversal = open_index(self._version.directory)

    @property
    def traversal_index(self) -> TraversalIndex | None:
        """The store version's traversal index, None when it has none (walks then run on Oxigraph)."""
        return self._traversal

    def index_hint(self) -> str | None:
        """The line telling how to add a traversal index, for an on-disk store without one."""
        if self.path is None or self._traversal is not None or not self._use_index:
            return None
        from kg_adapters.index.layout import add_hint

        return add_hint(self.path, self._version.directory if self._version is not None else None)

    def _index_backend(self) -> IndexBackend | None:
        """The index as the backend of this graph's operations (:mod:`kg_adapters.index.backend`), made
        for the current profile (a new one once it changes); None when the store has no index, or one
        numbering ids as another profile spells them, and once the graph is closed (so the generic
        code refuses the call)."""
        backend = self._backend
        if backend is not None and backend.profile is self._profile:
            return backend
        index = self._traversal
        if index is None or index.profile_name != self._profile.name:
            return None
        from kg_adapters.index.backend import IndexBackend

        backend = self._backend = IndexBackend(index, self._profile)
        return backend

    # -- operations: arguments checked once, then answered by the index when it can ----------------
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
        """From the traversal index when it can answer (``IndexBackend.can_answer``); else through
        ``SparqlGraph.neighbors``, whose edges are still read from the index (``_collect_edges``)."""
        backend = self._index_backend()
        if backend is not None:
            # the checks and their order are SparqlGraph.neighbors' (a closed graph has no backend)
            if direction not in DIRECTIONS:
                check_direction(direction)
            limit = None if limit_per_entity is None else check_count(limit_per_entity, "limit_per_entity")
            spellings = [ids] if type(ids) is str else as_id_list(ids)
            if backend.can_answer("neighbors", ids=spellings, expand_cvt=expand_cvt):
                return backend.neighbors(spellings, direction, relations, limit, literals)
        return super().neighbors(
            ids,
            direction=direction,
            relations=relations,
            limit_per_entity=limit_per_entity,
            literals=literals,
            expand_cvt=expand_cvt,
            qualifiers=qualifiers,
        )

    def relations(self, ids: Ids, *, direction: Direction = "out", expand_cvt: bool = False) -> dict[str, list[str]]:
        """From the traversal index when it can answer; else through ``SparqlGraph.relations``, whose
        relations are still read from the index (``_relation_pairs``)."""
        backend = self._index_backend()
        if backend is not None:
            # the checks and their order are SparqlGraph.relations' (a closed graph has no backend)
            if direction not in DIRECTIONS:
                check_direction(direction)
            spellings = [ids] if type(ids) is str else as_id_list(ids)
            if backend.can_answer("relations", ids=spellings, expand_cvt=expand_cvt):
                return backend.relations(spellings, direction)
        return super().relations(ids, direction=direction, expand_cvt=expand_cvt)

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
        backend = self._index_backend()
        if backend is not None and backend.can_answer("paths", expand_cvt=expand_cvt):
            checked = backend.ids.checked_paths(self, starts, relation_path, directions, max_paths)
            return backend.paths(checked, simple)
        return super().paths(
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
        backend = self._index_backend()
        if backend is not None and backend.can_answer("shortest_paths"):
            source_ids, target_ids, hops, limit = shortest_path_arguments(
                self, sources, targets, max_hops, direction, max_paths
            )
            return backend.shortest_paths(source_ids, target_ids, hops, direction, limit)
        return super().shortest_paths(sources, targets, max_hops=max_hops, direction=direction, max_paths=max_paths)

    def subgraph(
        self,
        seeds: Ids,
        *,
        hops: int = 2,
        direction: Direction = "both",
        relations: Sequence[str] | None = None,
        max_edges: int | None = None,
    ) -> EdgeList:
        backend = self._index_backend()
        if backend is not None and backend.can_answer("subgraph"):
            seed_ids, depth, limit = subgraph_arguments(
                self, seeds, hops, direction, relations, max_edges, canonical=backend.ids.canonical_id
            )
            return backend.subgraph(seed_ids, depth, direction, relations, limit)
        return super().subgraph(seeds, hops=hops, direction=direction, relations=relations, max_edges=max_edges)

    # -- SparqlGraph's parts, from the index when the store has one -------------------------------------
    def _relation_pairs(self, side: Direction, iris: list[str]) -> Iterator[tuple[str, str]]:
        backend = self._index_backend()
        if backend is None or not backend.can_answer("relation_pairs"):
            yield from super()._relation_pairs(side, iris)
            return
        entity_id = self._profile.entity_id
        yield from backend.relation_pairs(side, ((full, entity_id(full)) for full in iris))

    def _blank_ends(self, node: str, relation: str, side: Direction) -> Iterator[Edge]:
        """The edges of entity ``node`` on ``side`` over ``relation`` whose other end is a blank node
        (read from Oxigraph: the traversal index holds no blank node)."""
        term = _NamedNode(self._profile.entity_iri(node))
        predicate = _NamedNode(self._relation_full_iri(relation))
        out = side == "out"
        try:
            if out:
                quads = self._store.quads_for_pattern(term, predicate, None, graph_name=ox.DefaultGraph())
            else:
                quads = self._store.quads_for_pattern(None, predicate, term, graph_name=ox.DefaultGraph())
            for quad in quads:
                other = quad.object if out else quad.subject
                if isinstance(other, _BlankNode):
                    blank = "_:" + other.value
                    yield (
                        Edge(head=node, relation=relation, tail=blank)
                        if out
                        else Edge(head=blank, relation=relation, tail=node)
                    )
        except OSError as exc:
            raise BackendError(f"Oxigraph failed: {exc}") from exc

    def _relation_full_iri(self, relation: str) -> str:
        full = self._relation_full.get(relation)
        if full is None:
            full = self._relation_full[relation] = self._profile.relation_iri(relation)
        return full

    @classmethod
    def from_url(cls, url: KGUrl, **options: Any) -> OxigraphGraph:
        profile = options.pop("profile", None)
        write = _flag(options.pop("write", False), "write")
        index = _flag(options.pop("index", True), "index")
        if options:
            raise TypeError(f"unknown option(s) for oxigraph: {', '.join(sorted(options))}")
        return cls(local_path(url) or None, profile=profile, write=write, index=index)

    @property
    def store(self) -> ox.Store:
        """The underlying pyoxigraph Store, for callers that need it directly."""
        return self._store

    def _select(self, query: str) -> list[Row]:
        return select_rows(self._store, query)

    def _predicate_literals(self, iris: list[str], predicates: list[str]) -> Iterator[tuple[int, str, Literal]]:
        """One query per predicate: Oxigraph joins a VALUES list of predicates by scanning every edge
        of each id, while a fixed predicate is one index lookup per id."""
        for position, predicate in enumerate(predicates):
            for _, x, value in super()._predicate_literals(iris, [predicate]):
                yield position, x, value

    def _collect_edges(
        self,
        side: Direction,
        iris: list[str],
        relation_iris: list[str] | None,
        literals: bool,
        canonical_of: dict[str, str],
        result: dict[str, list[Edge]],
    ) -> None:
        """From the traversal index when the store has one. Else small expansions read the store's
        indexes directly (``quads_for_pattern``: no SPARQL query to parse and plan); large ones go
        through one VALUES query."""
        backend = self._index_backend()
        if backend is not None and backend.can_answer("edges"):
            relation_id = self._profile.relation_id
            relation_ids = None if relation_iris is None else [relation_id(full) for full in relation_iris]
            nodes = [canonical_of[full] for full in iris]
            backend.edges(side, nodes, relation_ids, literals, result, self._blank_ends)
            return
        lookups = len(iris) * (len(relation_iris) if relation_iris else 1)
        if lookups > self.direct_lookup_max:
            # Oxigraph joins a VALUES list of predicates by scanning every edge of each id, so one
            # query per predicate is cheaper; neighbors() sorts the merged lists afterwards.
            for relation_group in [[r] for r in relation_iris] if relation_iris else [None]:
                super()._collect_edges(side, iris, relation_group, literals, canonical_of, result)
            return
        entity_id, relation_id = self._profile.entity_id, self._profile.relation_id
        predicates = [_NamedNode(r) for r in relation_iris] if relation_iris else [None]
        fixed = relation_id(relation_iris[0]) if relation_iris and len(relation_iris) == 1 else None
        store, default_graph, out = self._store, ox.DefaultGraph(), side == "out"
        try:
            for full in iris:
                node = canonical_of[full]
                term = _NamedNode(full)
                edges = result[node]
                for predicate in predicates:
                    if out:
                        quads = store.quads_for_pattern(term, predicate, None, graph_name=default_graph)
                    else:
                        quads = store.quads_for_pattern(None, predicate, term, graph_name=default_graph)
                    for quad in quads:
                        other = quad.object if out else quad.subject
                        other_node: Node
                        if isinstance(other, _NamedNode):
                            other_node = entity_id(other.value)
                        elif isinstance(other, _BlankNode):
                            other_node = "_:" + other.value
                        else:
                            if not literals:
                                continue
                            converted = convert_term(other)
                            if converted is None:
                                continue
                            other_node = converted
                        relation = fixed if fixed is not None else relation_id(quad.predicate.value)
                        if out:
                            edges.append(Edge(head=node, relation=relation, tail=other_node))
                        else:
                            edges.append(Edge(head=str(other_node), relation=relation, tail=node))
        except OSError as exc:
            raise BackendError(f"Oxigraph failed: {exc}") from exc

    def _blank_node_edges(
        self, blanks: Sequence[str], side: Direction, relation_iris: Sequence[str] | None
    ) -> Iterator[tuple[str, str, Term]]:
        predicates = [_NamedNode(r) for r in relation_iris] if relation_iris is not None else [None]
        try:
            for blank in blanks:
                node = _BlankNode(blank[2:])
                for predicate in predicates:
                    subject, obj = (node, None) if side == "out" else (None, node)
                    for quad in self._store.quads_for_pattern(subject, predicate, obj, graph_name=ox.DefaultGraph()):
                        other = convert_term(quad.object if side == "out" else quad.subject)
                        if other is not None:
                            yield blank, str(quad.predicate.value), other
        except (OSError, ValueError) as exc:
            raise BackendError(f"Oxigraph failed reading blank node edges: {exc}") from exc

    def query(self, sparql: str, *, max_rows: int | None = None) -> list[dict[str, Node | bool]]:
        """``max_rows``: stop reading solutions after that many (a bounded answer for a server)."""
        self._check_open()
        if not isinstance(sparql, str):
            raise InvalidTermError("the query must be a string")
        if max_rows is not None and (isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 0):
            raise InvalidTermError(f"max_rows must be an integer >= 0, got {max_rows!r}")
        answer: Any = None
        try:
            answer = self._store.query(expand_dotted_prefixed_names(sparql))
            if isinstance(answer, ox.QueryBoolean):
                return [{"boolean": bool(answer)}]
            if isinstance(answer, ox.QuerySolutions):
                names = [v.value for v in answer.variables]
                rows: list[dict[str, Node | bool]] = []
                for solution in itertools.islice(answer, max_rows):
                    row: dict[str, Node | bool] = {}
                    for i, name in enumerate(names):
                        value = convert_term(solution[i])
                        if value is not None:
                            row[name] = value
                    rows.append(row)
                return rows
            triples: list[dict[str, Node | bool]] = []
            for triple in itertools.islice(answer, max_rows):
                s, p, o = convert_term(triple.subject), convert_term(triple.predicate), convert_term(triple.object)
                if s is not None and p is not None and o is not None:
                    triples.append({"subject": s, "predicate": p, "object": o})
            return triples
        except SyntaxError as exc:
            raise QueryError(f"Oxigraph rejected the query: {exc}") from exc
        except OSError as exc:
            raise BackendError(f"Oxigraph failed: {exc}") from exc
        finally:
            del answer  # pyoxigraph's answers are dropped by the thread that made them, never by another

    # -- EmbeddedSparql: a server runs others' queries in a worker process it can stop ---------------
    def reader_url(self) -> str | None:
        """The store's URL for a reader in another process (its traversal index unused: SPARQL only)."""
        if self.path is None or self.write:
            return None
        return "oxigraph://" + quote(str(Path(self.path).absolute())) + "?index=false"

    def sparql_rows(
        self, sparql: str, *, max_rows: int | None = None, runner: SparqlRunner | None = None
    ) -> list[dict[str, Node | bool]]:
        source = self.reader_url() if runner is not None else None
        if runner is not None and source is not None:
            rows: list[dict[str, Node | bool]] = runner(
                source, "sparql_rows", {"sparql": sparql, "max_rows": max_rows}, None
            )
            return rows
        return self.query(sparql, max_rows=max_rows)

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
        source = self.reader_url() if runner is not None else None
        if runner is not None and source is not None:
            arguments = {
                "sparql": sparql,
                "format": format,
                "default_graphs": tuple(default_graphs),
                "named_graphs": tuple(named_graphs),
            }
            runner(source, "sparql_write", arguments, output)
            return
        self._check_open()
        if not isinstance(sparql, str):
            raise InvalidTermError("the query must be a string")
        options: dict[str, Any] = {}
        try:
            if default_graphs:
                options["default_graph"] = [_NamedNode(graph) for graph in default_graphs]
            if named_graphs:
                options["named_graphs"] = [_NamedNode(graph) for graph in named_graphs]
        except (TypeError, ValueError) as exc:
            raise InvalidTermError(f"dataset graphs must be absolute IRIs: {exc}") from exc
        answer: Any = None
        try:
            answer = self._store.query(expand_dotted_prefixed_names(sparql), **options)
            kind = ox.RdfFormat if isinstance(answer, ox.QueryTriples) else ox.QueryResultsFormat
            written = getattr(kind, format, None) if format.isupper() else None
            if not isinstance(written, kind):
                form = "CONSTRUCT/DESCRIBE" if kind is ox.RdfFormat else "SELECT/ASK"
                raise QueryError(f"{format!r} is no format for a {form} answer")
            answer.serialize(output, written)
        except (SyntaxError, ValueError) as exc:
            raise QueryError(f"Oxigraph rejected the query: {exc}") from exc
        except OSError as exc:
            raise BackendError(f"Oxigraph failed: {exc}") from exc
        finally:
            del answer  # pyoxigraph's answers are dropped by the thread that made them, never by another

    def _open_label_index(self) -> LabelIndex:
        from kg_adapters.label_index import LabelIndex  # sqlite3: only when search() needs it

        if self._version is not None:
            labels = self._version.labels
            if labels.is_file():
                return LabelIndex(str(labels), read_only=not self.write)
        index = LabelIndex()
        index.add(store_label_rows(self._store))
        return index

    def _relation_vectors_cache(self) -> Path | None:
        from kg_adapters.semantic_search import VECTORS_FILE

        return self._version.labels.with_name(VECTORS_FILE) if self._version is not None else None

    def _open_relation_index(self) -> RelationIndex:
        from kg_adapters.relation_index import RELATIONS_FILE, RelationIndex

        if self._version is not None:
            relations = self._version.labels.with_name(RELATIONS_FILE)
            if relations.is_file():
                return RelationIndex(str(relations), read_only=not self.write)
        index = RelationIndex()
        index.add(store_relation_rows(self._store, self._profile.label_predicates))
        return index

    # -- WritableGraph ---------------------------------------------------------------------------
    def add(self, edges: Iterable[Edge]) -> int:
        """Adds edges in one transaction (on disk only with ``write=True``)."""
        self._check_writable()
        quads = [
            ox.Quad(
                to_oxigraph_term(edge.head, self._profile),
                to_oxigraph_term(edge.relation, self._profile, relation=True),
                to_oxigraph_term(edge.tail, self._profile),
            )
            for edge in edges
        ]
        try:
            self._store.extend(quads)
        except OSError as exc:
            raise BackendError(f"Oxigraph failed to add triples: {exc}") from exc
        self._invalidate_index()
        return len(quads)

    def load(self, path: str, *, format: str | None = None) -> None:
        """Adds an RDF file (``.gz``/``.bz2`` read on the fly) in one transaction."""
        from kg_adapters.errors import LoadError
        from kg_adapters.rdf_guard import LineCounter, check_xml_entities, is_buffer_overflow, token_too_long

        self._check_writable()
        fmt = rdf_format(path, format)
        reader: LineCounter | None = None
        try:
            if fmt == ox.RdfFormat.RDF_XML:
                with open_maybe_compressed(path) as handle:
                    check_xml_entities(path, handle)
            with open_maybe_compressed(path) as handle:
                reader = LineCounter(handle)
                self._store.load(reader.stream_for_parser(), format=fmt)
        except SyntaxError as exc:
            raise LoadError(str(exc), file=path, line=getattr(exc, "lineno", None)) from exc
        except MemoryError as exc:
            if not is_buffer_overflow(exc):
                raise
            raise token_too_long(path, reader.line if reader is not None else None) from exc
        except OSError as exc:
            raise BackendError(f"Oxigraph failed to load {path}: {exc}") from exc
        self._invalidate_index()

    def _invalidate_index(self) -> None:
        """Writes change names and edges: drop the in-memory name and relation indexes, or rebuild the
        on-disk one, and rebuild the traversal index if the store has one."""
        self._backend = None
        self._drop_search_indexes()
        if self._version is not None:
            rebuild_label_index(self._store, str(self._version.labels))
            if self._traversal is not None:
                from kg_adapters.index.build import build_index

                self._traversal.close()
                self._traversal = None
                build_index(self._store, self._version.directory, get_profile(self.manifest.get("profile", "generic")))
                self._open_traversal_index()

    def relation_counts(self, *, max_relations: int = 1000) -> GraphCounts:
        """The default graph's size from the traversal index (one pass over its arrays, kept for the
        life of this read-only graph: a store version never changes); without an index, by one
        ``GROUP BY`` query when the store holds at most SMALL_STORE triples, else nothing."""
        from kg_adapters.budgets import check_count

        check_count(max_relations, "max_relations", required=True)
        self._check_open()
        counted = self._relation_counts
        if counted is None:
            if self._traversal is not None:
                from kg_adapters.index.counts import relation_counts

                counted = relation_counts(self._traversal)
            else:
                counted = self._relation_counts_by_query()
            if not self.write:
                self._relation_counts = counted
        if counted is None:
            return GraphCounts()
        triples, per_relation = counted
        return GraphCounts(
            triples=triples, relations=len(per_relation), per_relation=tuple(per_relation[:max_relations])
        )

    def _relation_counts_by_query(self) -> tuple[int, list[tuple[str, int | None]]] | None:
        size = self.manifest.get("triples") if self._version is not None else len(self._store)
        if not isinstance(size, int) or size > SMALL_STORE:
            return None
        try:
            solutions = self._store.query("SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p")
            assert isinstance(solutions, ox.QuerySolutions)
            rows: list[tuple[str, int | None]] = [(str(row["p"].value), int(row["n"].value)) for row in solutions]
        except OSError as exc:
            raise BackendError(f"Oxigraph failed counting relations: {exc}") from exc
        rows.sort(key=lambda row: (-(row[1] or 0), row[0]))
        return sum(n or 0 for _, n in rows), rows

    def _check_writable(self) -> None:
        self._check_open()
        if not self.write:
            raise BackendError("this store is open read-only; connect with write=True to add data")

    def close(self) -> None:
        super().close()
        self._backend = None
        if self._traversal is not None:
            self._traversal.close()
            self._traversal = None
        self._store = ox.Store()  # releases the on-disk database
        self.close_version()

    def close_version(self) -> None:
        """Releases the reader lock: only now may a load delete the version this graph read."""
        if self._version is not None:
            self._version.close()
