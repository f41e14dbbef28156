"""Every operation written once as batched SPARQL, for backends that evaluate SPARQL.

A backend subclass supplies ``_select`` (run a SELECT, give rows of converted terms) and the
label rows for the search index; everything else, including the query text, lives here, so all
SPARQL backends answer identically. IRIs come back as ``str``, blank nodes as ``"_:id"`` and
literals as :class:`Literal`.
"""

from __future__ import annotations

import abc
import threading
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from kg_adapters import algorithms
from kg_adapters.algorithms import other_end
from kg_adapters.backends import sparql_catalog
from kg_adapters.base import ClosesOnExit, Direction, HoldsConnection, Ids, Langs, as_id_list, check_direction
from kg_adapters.budgets import check_count
from kg_adapters.errors import BackendError, InvalidTermError, ResultMismatch, ResultTooLarge
from kg_adapters.profiles import Profile
from kg_adapters.profiles.base import is_blank_node
from kg_adapters.profiles.detect import SAMPLE_QUERY, choose_profile
from kg_adapters.records import (
    Edge,
    Entity,
    Literal,
    Node,
    Qualifiers,
    RelationSummary,
    best_label,
    edge_sort_key,
    node_sort_key,
    statement_sort_key,
)
from kg_adapters.sparql_terms import check_text, exclude_relations, iri, string_literal, values_block
from kg_adapters.terms import INDEXED_LABEL_PREDICATES, Term

if TYPE_CHECKING:
    from pathlib import Path

    from kg_adapters.label_index import LabelIndex
    from kg_adapters.relation_index import RelationIndex
    from kg_adapters.semantic_search import RelationVectors, SearchMode

Row = tuple[Term | None, ...]
_V = TypeVar("_V")


CVT_DESCRIPTION_PARTS = 8
"""Most neighbour names in the label of a CVT node."""


def chunks(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for offset in range(0, len(items), size):
        yield items[offset : offset + size]


class SparqlGraph(algorithms.WalksOverNeighbors, HoldsConnection, ClosesOnExit, abc.ABC):
    """Shared implementation of :class:`KnowledgeGraph` on top of a SELECT evaluator."""

    values_chunk = 1000
    """Most ids in one VALUES block."""
    relation_alias_predicates: tuple[str, ...] = ("http://www.w3.org/2004/02/skos/core#altLabel",)
    """Read with the relations' labels into the relation index (``relation_index.ALIAS_PREDICATES``)."""

    def __init__(self, profile: Profile) -> None:
        self._profile = profile
        self._index: LabelIndex | None = None
        self._relation_index: RelationIndex | None = None
        self._closed = False
        self._pushed_filters: dict[str, str] = {}
        self._search_mode: SearchMode = "auto"
        self._relation_vectors: RelationVectors | None = None
        self._index_lock, self._relation_lock, self._vectors_lock = threading.Lock(), threading.Lock(), threading.Lock()
        """Each builds one of the name index, the relation index and the relation vectors once, whichever
        thread asks first (apart: a search for a name never waits for the relations to be embedded)."""

    # -- what a backend supplies -------------------------------------------------------------
    @abc.abstractmethod
    def _select(self, query: str) -> list[Row]:
        """Rows of a SELECT, terms converted, in projection order."""

    @abc.abstractmethod
    def _open_label_index(self) -> LabelIndex:
        """The label index for ``search`` (built on first use when the backend keeps none)."""

    # -- KnowledgeGraph --------------------------------------------------------------------------
    @property
    def profile(self) -> Profile:
        return self._profile

    def _neighbors(self, ids: Ids, asked: algorithms.NeighborOptions) -> dict[str, list[Edge]]:
        """``neighbors`` (:class:`~kg_adapters.algorithms.WalksOverNeighbors` checked the options)."""
        direction, limit, literals = asked.direction, asked.limit_per_entity, asked.literals
        nodes = self._resolve(ids)
        relation_iris = self._relation_iris(asked.relations)
        if self._profile.statements is not None and (asked.qualifiers or relation_iris is None):
            return self._statement_neighbors(
                nodes, direction, relation_iris, limit, literals, statements=asked.qualifiers
            )
        found: dict[str, list[Edge]] = {canonical: [] for canonical in nodes.canonical.values()}
        if relation_iris != []:
            walk: tuple[Direction, ...] = ("out", "in") if direction == "both" else (direction,)
            for side in walk:
                if nodes.iris:
                    self._collect_edges(side, list(nodes.iris), relation_iris, literals, nodes.iris, found)
                if nodes.blanks:
                    self._collect_blank_edges(side, nodes.blanks, relation_iris, literals, found)
        if relation_iris is None:
            self._drop_filtered_edges(found)
        # One relation walked one way: a node's edges share the relation and one end, so ordering
        # by the other end alone gives edge_sort_key's order for a fraction of the work.
        key: Callable[[Edge], Any]
        if relation_iris is not None and len(relation_iris) == 1 and direction != "both":
            key = _tail_key if direction == "out" else _head_key
        else:
            key = edge_sort_key
        for canonical, edges in found.items():
            if len(edges) > 1:  # an answer is a set of edges, however often a server repeats one
                edges = list(dict.fromkeys(edges))
                edges.sort(key=key)
            found[canonical] = edges[:limit] if limit is not None else edges
        if asked.expand_cvt and self._profile.has_cvt_nodes:
            self._attach_cvts(found, literals=literals)
        return {spelling: list(found[canonical]) for spelling, canonical in nodes.canonical.items()}

    def relations(self, ids: Ids, *, direction: Direction = "out", expand_cvt: bool = False) -> dict[str, list[str]]:
        self._check_open()
        check_direction(direction)
        nodes = self._resolve(ids)
        found: dict[str, set[str]] = {canonical: set() for canonical in nodes.canonical.values()}
        relation_id = self._profile.relation_id
        walk: tuple[Direction, ...] = ("out", "in") if direction == "both" else (direction,)
        for side in walk:
            for x, relation in self._relation_pairs(side, list(nodes.iris)):
                found[nodes.iris[x]].add(relation)
            for blank, relation, _other in self._blank_node_edges(nodes.blanks, side, None):
                found[blank].add(relation_id(relation))
        if self._profile.statements is not None:
            layer = {name for names in found.values() for name in names if self._in_statement_layer(name)}
            found = {node: names - layer for node, names in found.items()}
        relation_filter = self._profile.relation_filter
        if not relation_filter.empty:
            found = {node: set(filter(relation_filter.keeps, names)) for node, names in found.items()}
        if expand_cvt and self._profile.has_cvt_nodes:
            for canonical, collapsed in self._cvt_relations(list(found), direction).items():
                found[canonical].update(collapsed)
        return {spelling: sorted(found[canonical]) for spelling, canonical in nodes.canonical.items()}

    def _hidden_relations_filter(self) -> str:
        """The profile's relation filter as a FILTER on ``?r`` (see ``Profile.hidden_relations``)."""
        key = f"{self._profile.name};{self._profile.relation_filter.key}"
        cached = self._pushed_filters.get(key)
        if cached is None:
            cached = self._pushed_filters[key] = exclude_relations("r", *self._profile.hidden_relations())
        return cached

    def _relation_pairs(self, side: Direction, iris: list[str]) -> Iterator[tuple[str, str]]:
        """(IRI, relation id) for every distinct relation on the ``side`` edges of each IRI."""
        pattern = ("?x ?r ?o" if side == "out" else "?o ?r ?x") + " " + self._hidden_relations_filter()

        def build(chunk: Sequence[str]) -> str:
            return f"SELECT DISTINCT ?x ?r WHERE {{ {values_block('x', chunk)} {pattern} }}"

        relation_id = self._profile.relation_id
        asked = dict.fromkeys(iris, True)
        for x, r, *_ in self._select_chunked(build, iris):
            self._asked(x, asked)
            yield str(x), relation_id(self._relation_of(r))

    def labels(self, ids: Ids, *, lang: Langs = "en") -> dict[str, str]:
        self._check_open()
        wanted = self._profile.label_langs(lang)
        nodes = self._resolve(ids)
        candidates = self._literals_of(nodes, self._profile.label_predicates)
        found = {canonical: best_label(labels, wanted) for canonical, labels in candidates.items()}
        if self._profile.has_cvt_nodes:
            found.update(self._cvt_descriptions(nodes, found, wanted))
        return {spelling: found[canonical] for spelling, canonical in nodes.canonical.items() if canonical in found}

    def describe(self, ids: Ids, *, lang: Langs = "en") -> dict[str, Entity]:
        self._check_open()
        wanted = self._profile.label_langs(lang)
        nodes = self._resolve(ids)
        names = self._literals_of(nodes, self._profile.label_predicates)
        descriptions = self._literals_of(nodes, self._profile.description_predicates)
        cvts = self._cvt_descriptions(nodes, names, wanted) if self._profile.has_cvt_nodes else {}
        found: dict[str, Entity] = {}
        for spelling, canonical in nodes.canonical.items():
            name = names.get(canonical)
            description = descriptions.get(canonical)
            found[spelling] = Entity(
                id=canonical,
                label=best_label(name, wanted) if name else cvts.get(canonical),
                description=best_label(description, wanted) if description else None,
            )
        return found

    def _literals_of(self, nodes: _Resolved, predicates: Sequence[str]) -> dict[str, list[Literal]]:
        """Literal values of ``predicates`` on each resolved node (canonical id -> literals), in
        the order of ``predicates``, then by language tag and text, so picks are deterministic."""
        found: dict[str, list[tuple[int, Literal]]] = {}
        if not predicates or not nodes.iris:
            return {}
        for position, x, value in self._predicate_literals(list(nodes.iris), list(dict.fromkeys(predicates))):
            found.setdefault(nodes.iris[x], []).append((position, value))
        return {
            node: [value for _, value in sorted(pairs, key=lambda pair: (pair[0], pair[1].lang or "", pair[1].value))]
            for node, pairs in found.items()
        }

    def _predicate_literals(self, iris: list[str], predicates: list[str]) -> Iterator[tuple[int, str, Literal]]:
        """(position of the predicate, subject IRI, literal) for every literal of ``predicates`` on
        ``iris``, in one query per id chunk."""
        position = {predicate: index for index, predicate in enumerate(predicates)}
        if len(predicates) == 1:
            pattern, projection = f"?x {iri(predicates[0])} ?l", "?x ?l"
        else:
            pattern, projection = f"{values_block('p', predicates)} ?x ?p ?l", "?x ?l ?p"

        def build(chunk: Sequence[str]) -> str:
            return f"SELECT {projection} WHERE {{ {values_block('x', chunk)} {pattern} FILTER(isLiteral(?l)) }}"

        asked = dict.fromkeys(iris, True)
        for row in self._select_chunked(build, iris):
            x, value = row[0], row[1]
            predicate = row[2] if len(predicates) > 1 else predicates[0]
            self._asked(x, asked)
            if not isinstance(value, Literal):
                raise self._mismatch("a value that is not a literal where the query asks for literals", value)
            where = self._asked(predicate, position)
            yield where, str(x), value

    def search(self, text: str, *, limit: int = 10) -> list[Entity]:
        """Entities by name: exact, prefix, every word (stemmed, any order), then every content word; the
        candidates of that last tier re-ranked by meaning when the encoder is installed
        (:mod:`kg_adapters.semantic_search`)."""
        from kg_adapters.semantic_search import ENTITY_POOL, rerank_entities, search_encoder

        self._check_open()
        check_text(text, "search text")
        check_count(limit, "limit", required=True)
        encoder = search_encoder(self._search_mode)
        hits = self._entity_hits(text, max(limit, ENTITY_POOL) if encoder is not None and limit else limit)
        entity_id = self._profile.entity_id
        ranked = rerank_entities(encoder, text, hits, limit)
        return [Entity(id=entity_id(found), label=label) for found, label in ranked]

    def _entity_hits(self, text: str, limit: int) -> list[tuple[str, str, int]]:
        """(iri, label, tier) lexical candidates, best first (:meth:`LabelIndex.ranked`)."""
        with self._index_lock:
            if self._index is None:
                self._index = self._open_label_index()
        return self._index.ranked(text, limit)

    def search_relations(self, text: str, *, limit: int = 10) -> list[Entity]:
        """Relations whose label, or the words of whose id, match ``text`` lexically or by meaning
        (see :mod:`kg_adapters.relation_index` and :mod:`kg_adapters.semantic_search`); relations
        the profile's filter hides are left out."""
        from kg_adapters.label_index import PREFIX
        from kg_adapters.semantic_search import RELATION_POOL, fuse, search_encoder

        self._check_open()
        check_text(text, "search text")
        if check_count(limit, "limit") is None:
            raise InvalidTermError("limit must be an integer >= 0, got None")
        if limit == 0:
            return []
        encoder = search_encoder(self._search_mode)
        index = self._relations()
        relation_id = self._profile.relation_id
        keeps = self._profile.relation_filter.keeps

        def shown(iri: str) -> bool:
            return keeps(relation_id(iri)) and not self._in_statement_layer(relation_id(iri))

        asked = max(limit, RELATION_POOL)
        while True:
            hits = index.ranked(text, asked)
            lexical = [(iri, tier) for iri, _, tier in hits if shown(iri)]
            if len(lexical) >= limit or len(hits) < asked:
                break
            asked *= 4
        semantic: list[str] = []
        if encoder is not None:
            from kg_adapters.semantic_search import embed

            vectors = self._relation_vectors_for(encoder, index)
            semantic = [iri for iri, _ in vectors.ranked(embed(encoder, [text])[0]) if shown(iri)]
        kept = fuse(lexical, semantic, pinned=PREFIX)[:limit]
        names = index.relation_labels(kept, self._profile.label_langs("en"))
        return [Entity(id=relation_id(found), label=names.get(found)) for found in kept]

    def __getstate__(self) -> dict[str, Any]:
        """A copy (pickling) carries no lock: it makes its own."""
        locks = ("_index_lock", "_relation_lock", "_vectors_lock")
        return {name: value for name, value in self.__dict__.items() if name not in locks}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._index_lock, self._relation_lock, self._vectors_lock = threading.Lock(), threading.Lock(), threading.Lock()

    # -- GraphCatalog (kg_adapters/backends/sparql_catalog.py) ------------------------------------
    def relation_ids(self) -> list[str]:
        return sparql_catalog.relation_ids(self)

    def known_entities(self, ids: Ids) -> set[str]:
        return sparql_catalog.known_entities(self, ids)

    def relation_summaries(
        self, relations: Sequence[str], *, examples: int = 3, types: int = 3, deadline: float | None = None
    ) -> list[RelationSummary]:
        return sparql_catalog.relation_summaries(self, relations, examples=examples, types=types, deadline=deadline)

    def _relations(self) -> RelationIndex:
        """The relation index, opened (or built) once."""
        with self._relation_lock:
            if self._relation_index is None:
                self._relation_index = self._open_relation_index()
            return self._relation_index

    def _relation_vectors_for(self, encoder: Any, index: RelationIndex) -> RelationVectors:
        """The relations' vectors, embedded once per connection (and cached by stores on disk)."""
        from kg_adapters.semantic_search import relation_texts, relation_vectors

        with self._vectors_lock:
            if self._relation_vectors is None:
                texts = relation_texts(index.rows(), self._profile.label_langs("en"))
                self._relation_vectors = relation_vectors(encoder, texts, self._relation_vectors_cache())
            return self._relation_vectors

    def _relation_vectors_cache(self) -> Path | None:
        """Where the relation vectors are cached (stores on disk), or None (kept in memory)."""
        return None

    def use_search(self, mode: object) -> None:
        """``search=auto|semantic|lexical`` (see :mod:`kg_adapters.semantic_search`)."""
        from kg_adapters.semantic_search import check_search_mode, search_encoder

        checked = check_search_mode(mode)
        search_encoder(checked)  # semantic without the extra fails here, at connect time
        self._search_mode = checked

    def _open_relation_index(self) -> RelationIndex:
        """The relation index, built from the graph on first use (stores keep one on disk)."""
        from kg_adapters.relation_index import RelationIndex, alias_tag, grouped_labels, label_subjects, relation_rows

        relations = self._all_relations()
        subjects = sorted({subject for relation in relations for subject in label_subjects(relation)})
        named_by = list(self._profile.label_predicates)
        labels = [
            (x, value.value, value.lang or "" if position < len(named_by) else alias_tag(value.lang or ""))
            for position, x, value in self._predicate_literals(
                subjects, named_by + list(self.relation_alias_predicates)
            )
        ]
        index = RelationIndex()
        index.add(relation_rows(relations, grouped_labels(labels)))
        return index

    def _all_relations(self) -> list[str]:
        """Every predicate IRI of the graph."""
        rows = self._select("SELECT DISTINCT ?p WHERE { ?s ?p ?o }")
        return sorted({self._relation_of(p) for p, *_ in rows})

    def close(self) -> None:
        self._drop_search_indexes()
        self._closed = True

    def _drop_search_indexes(self) -> None:
        """Closes the name and relation indexes and forgets the relation vectors (after a write, or
        at close): the next search opens or builds them again."""
        with self._index_lock, self._relation_lock, self._vectors_lock:
            for index in (self._index, self._relation_index):
                if index is not None:
                    index.close()
            self._index = self._relation_index = None
            self._relation_vectors = None

    def use_relation_filter(self, relation_filter: object) -> None:
        """Replaces the profile's relation filter (``connect(..., relation_filter=...)``)."""
        self._profile = self._profile.with_relation_filter(relation_filter)

    # -- relation filter and CVT (mediator) nodes ----------------------------------------------
    def _drop_filtered_edges(self, found: dict[str, list[Edge]]) -> None:
        """Removes the edges whose relation the profile's filter hides (relations not named)."""
        relation_filter = self._profile.relation_filter
        if relation_filter.empty:
            return
        keeps = relation_filter.keeps
        for node, edges in found.items():
            found[node] = [edge for edge in edges if keeps(edge.relation)]

    def _nameless(self, ids: Sequence[str]) -> list[str]:
        """The CVT nodes among ``ids``: CVT candidates of the profile with no name at all (one
        batched label query)."""
        candidates = [node for node in ids if self._profile.is_cvt_candidate(node)]
        if not candidates:
            return []
        named = self._literals_of(self._resolve(candidates), self._profile.label_predicates)
        return [node for node in candidates if node not in named]

    def _attach_cvts(self, found: dict[str, list[Edge]], *, literals: bool) -> None:
        """Gives every edge whose far end is a CVT node that CVT's other edges (``Edge.cvt``, true
        direction, sorted). The edges linking the CVT back to the node the edge belongs to are left
        out: they repeat the edge itself (Freebase stores each CVT edge in both directions). One
        label query detects the CVTs, one ``neighbors`` call per direction fetches all their edges."""
        far: dict[str, None] = {}
        for node, edges in found.items():
            for edge in edges:
                other = other_end(edge, node)
                if isinstance(other, str) and other != node:
                    far[other] = None
        cvts = self._nameless(list(far))
        if not cvts:
            return
        inner = self.neighbors(cvts, direction="both", literals=literals)
        for node, edges in found.items():
            expanded: list[Edge] = []
            for edge in edges:
                other = other_end(edge, node)
                if isinstance(other, str) and other != node and (mediated := inner.get(other)):
                    kept = tuple(e for e in mediated if other_end(e, other) != node)
                    edge = replace(edge, cvt=kept)
                expanded.append(edge)
            found[node] = expanded

    def _cvt_relations(self, ids: list[str], direction: Direction) -> dict[str, set[str]]:
        """``r1..r2`` for each id: ``r1`` reaches a CVT and ``r2`` leaves it (``out``), or ``r1``
        reaches the CVT from elsewhere and ``r2`` leads from it to the id (``in``), spelled in the
        KG's direction as FB15k-237 spells collapsed CVT relations."""
        collapsed: dict[str, set[str]] = {node: set() for node in ids}
        found = self.neighbors(ids, direction=direction, literals=False)
        self._attach_cvts(found, literals=True)  # one CVT lookup for both directions
        for node, edges in found.items():
            for edge in edges:
                outgoing = edge.head == node
                for inner in edge.cvt:
                    if outgoing and inner.head == edge.tail:
                        collapsed[node].add(f"{edge.relation}..{inner.relation}")
                    elif not outgoing and inner.tail == edge.head:
                        collapsed[node].add(f"{inner.relation}..{edge.relation}")
        return collapsed

    def _cvt_descriptions(self, nodes: _Resolved, named: Collection[str], langs: Sequence[str]) -> dict[str, str]:
        """A label for each nameless CVT among ``nodes``: its type (the prefix shared by most of its
        outgoing relations) and the names or values of its neighbours, outgoing edges first, in
        edge order, each once, at most :data:`CVT_DESCRIPTION_PARTS` of them:
        ``"film.performance: Natalie Portman; Padmé Amidala; Star Wars"``."""
        cvts = [c for c in dict.fromkeys(nodes.canonical.values()) if c not in named]
        cvts = [c for c in cvts if self._profile.is_cvt_candidate(c)]
        if not cvts:
            return {}
        edges = self.neighbors(cvts, direction="both")
        neighbours = {other for cvt in cvts for edge in edges[cvt] if isinstance(other := other_end(edge, cvt), str)}
        names = self._literals_of(self._resolve(sorted(neighbours)), self._profile.label_predicates)
        described: dict[str, str] = {}
        for cvt in cvts:
            outgoing = [edge for edge in edges[cvt] if edge.head == cvt]
            incoming = [edge for edge in edges[cvt] if edge.head != cvt]
            parts: dict[str, None] = {}
            for edge in outgoing + incoming:
                other = other_end(edge, cvt)
                if isinstance(other, Literal):
                    parts[other.value] = None
                elif other in names:
                    parts[best_label(names[other], langs)] = None
            if not parts:
                continue
            texts = list(parts)
            shown = "; ".join(texts[:CVT_DESCRIPTION_PARTS]) + ("; …" if len(texts) > CVT_DESCRIPTION_PARTS else "")
            kinds = Counter(edge.relation.rsplit(".", 1)[0] for edge in outgoing if "." in edge.relation)
            kind = min(kinds, key=lambda k: (-kinds[k], k)) if kinds else ""
            described[cvt] = f"{kind}: {shown}" if kind else shown
        return described

    def detect_profile(self) -> Profile:
        """Switches to the profile the data is written in, judged from one bounded sample
        (``profiles.detect``); ``profile.detection`` says why."""
        self._check_open()
        self._profile = choose_profile(self._sample(SAMPLE_QUERY))
        return self._profile

    def _sample(self, query: str) -> list[Row]:
        """Rows of a sampling query that carries its own LIMIT."""
        return self._select(query)

    # -- helpers -------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise BackendError(f"{type(self).__name__} is closed")

    def _resolve(self, ids: Ids) -> _Resolved:
        """Validates the caller's ids and maps each to its canonical id and full IRI."""
        profile = self._profile
        resolved = _Resolved()
        for spelling in as_id_list(ids):
            if is_blank_node(spelling):
                canonical = profile.canonical_id(spelling)
                resolved.blanks.append(canonical)
            else:
                full = profile.entity_iri(spelling)
                canonical = profile.entity_id(full)
                resolved.iris[full] = canonical
            resolved.canonical[spelling] = canonical
        resolved.blanks = list(dict.fromkeys(resolved.blanks))
        return resolved

    def _relation_iris(self, relations: Sequence[str] | None) -> list[str] | None:
        if relations is None:
            return None
        if isinstance(relations, str) or not isinstance(relations, Iterable):
            raise InvalidTermError("relations must be a list of relation ids, not one string")
        return list(dict.fromkeys(self._profile.relation_iri(r) for r in relations))

    def _blank_node_edges(
        self, blanks: Sequence[str], side: Direction, relation_iris: Sequence[str] | None
    ) -> Iterable[tuple[str, str, Term]]:
        """(blank node, relation IRI, other end) for edges of blank nodes, which SPARQL text cannot
        name. Backends that can reach blank nodes directly override this; by default they are dead ends."""
        return ()

    def _collect_blank_edges(
        self,
        side: Direction,
        blanks: Sequence[str],
        relation_iris: list[str] | None,
        literals: bool,
        found: dict[str, list[Edge]],
    ) -> None:
        entity_id, relation_id = self._profile.entity_id, self._profile.relation_id
        for blank, relation, other in self._blank_node_edges(blanks, side, relation_iris):
            if isinstance(other, Literal):
                if side == "out" and literals:
                    found[blank].append(Edge(head=blank, relation=relation_id(relation), tail=other))
                continue
            other_node = other if is_blank_node(other) else entity_id(other)
            if side == "out":
                found[blank].append(Edge(head=blank, relation=relation_id(relation), tail=other_node))
            else:
                found[blank].append(Edge(head=other_node, relation=relation_id(relation), tail=blank))

    def _collect_edges(
        self,
        side: Direction,
        iris: list[str],
        relation_iris: list[str] | None,
        literals: bool,
        canonical_of: dict[str, str],
        result: dict[str, list[Edge]],
    ) -> None:
        profile = self._profile
        entity_id, relation_id = profile.entity_id, profile.relation_id
        single = relation_iris[0] if relation_iris is not None and len(relation_iris) == 1 else None
        predicate = iri(single) if single is not None else "?r"
        relation_values = values_block("r", relation_iris) if relation_iris and single is None else ""
        pattern = f"?x {predicate} ?o" if side == "out" else f"?o {predicate} ?x"
        literal_filter = "FILTER(!isLiteral(?o))" if side == "out" and not literals else ""
        if relation_iris is None:  # the caller drops what the filter hides: keep it off the wire
            literal_filter += " " + self._hidden_relations_filter()
        projection = "?x ?o" if single is not None else "?x ?o ?r"

        def build(chunk: Sequence[str]) -> str:
            return (
                f"SELECT {projection} WHERE {{ {values_block('x', chunk)} {relation_values} "
                f"{pattern} {literal_filter} }}"
            )

        fixed_relation = relation_id(single) if single is not None else ""
        compact_other: dict[str, str] = {}  # entity_id of each IRI, computed once per call
        for row in self._select_chunked(build, iris):
            x, other = row[0], row[1]
            node = self._asked(x, canonical_of)
            if other is None:
                raise self._mismatch("an edge without its other end", row)
            relation = fixed_relation if single is not None else relation_id(self._relation_of(row[2]))
            if isinstance(other, Literal) and (side == "in" or not literals):
                raise self._mismatch("a literal where the query asks for a node", other)
            other_node: Node
            if isinstance(other, str) and not other.startswith("_:"):
                known = compact_other.get(other)
                if known is None:
                    known = compact_other[other] = entity_id(other)
                other_node = known
            else:
                other_node = other
            if side == "out":
                result[node].append(Edge(head=node, relation=relation, tail=other_node))
            else:
                result[node].append(Edge(head=str(other_node), relation=relation, tail=node))

    # -- full statements: neighbors(..., qualifiers=True) on a profile with a StatementModel ------
    def _statement_neighbors(
        self,
        nodes: _Resolved,
        direction: Direction,
        relation_iris: list[str] | None,
        limit: int | None,
        literals: bool,
        *,
        statements: bool,
    ) -> dict[str, list[Edge]]:
        """Answers of a profile with a statement layer (``Profile.statements``). The layer's
        plumbing (claims, statement values, qualifiers, ...) is never an edge: without
        ``statements`` the truthy edges stand for it; with ``statements`` the statements (with
        qualifiers and rank, deprecated ones left out) replace the truthy edges too. Every other
        edge as usual. Per direction: one ordinary and one statement query per id chunk. A
        statement is one edge, even when reached from both of its ends (``both`` on a self-loop)."""
        model = self._profile.statements
        assert model is not None
        properties: list[str] | None = None
        others: list[str] | None = None
        if relation_iris is not None:
            claimed = (
                model.property_of(r, model.truthy_namespace) or model.property_of(r, model.claim_namespace)
                for r in relation_iris
            )
            properties = list(dict.fromkeys(p for p in claimed if p is not None))
            others = [r for r in relation_iris if not r.startswith(model.namespace)]
        found: dict[str, dict[object, Edge]] = {canonical: {} for canonical in nodes.canonical.values()}
        hidden: dict[str, bool] = {}
        walk: tuple[Direction, ...] = ("out", "in") if direction == "both" else (direction,)
        for side in walk:
            plain: dict[str, list[Edge]] = {canonical: [] for canonical in found}
            if others != []:
                if nodes.iris:
                    self._collect_edges(side, list(nodes.iris), others, literals, nodes.iris, plain)
                if nodes.blanks:
                    self._collect_blank_edges(side, nodes.blanks, others, literals, plain)
            for canonical, edges in plain.items():
                for edge in edges:
                    hide = hidden.get(edge.relation)
                    if hide is None:
                        hide = hidden[edge.relation] = self._in_statement_layer(edge.relation, truthy=statements)
                    if not hide:
                        found[canonical][edge] = edge
            if statements and properties != [] and nodes.iris:
                for canonical, key, edge in self._statements(side, nodes, properties, literals):
                    found[canonical][key] = edge
        answer = {canonical: sorted(keyed.values(), key=statement_sort_key) for canonical, keyed in found.items()}
        if relation_iris is None:
            self._drop_filtered_edges(answer)
        if limit is not None:
            answer = {canonical: edges[:limit] for canonical, edges in answer.items()}
        return {spelling: list(answer[canonical]) for spelling, canonical in nodes.canonical.items()}

    def _in_statement_layer(self, relation: str, *, truthy: bool = False) -> bool:
        return in_statement_layer(self._profile, relation, truthy=truthy)

    def _statements(
        self, side: Direction, nodes: _Resolved, properties: list[str] | None, literals: bool
    ) -> Iterator[tuple[str, tuple[Term, str, Node], Edge]]:
        """(canonical id, statement key, edge) of the non-deprecated statements whose subject
        (``out``) or main value (``in``) is an id. The statement's main value, qualifiers and rank
        come back as one row per statement triple, grouped here."""
        model = self._profile.statements
        assert model is not None
        profile = self._profile
        kept = (
            f"FILTER(STRSTARTS(STR(?sp), {string_literal(model.value_namespace)}) || "
            f"STRSTARTS(STR(?sp), {string_literal(model.qualifier_namespace)}))"
        )
        statement = f"?st {iri(model.rank_predicate)} ?rank . {values_block('rank', model.ranks)} ?st ?sp ?v . {kept}"
        if side == "out":
            claims = values_block("p", [model.claim_namespace + p for p in properties]) if properties else ""
            pattern = f"{claims} ?x ?p ?st . {statement}"
            projection = "?x ?st ?p ?rank ?sp ?v"
        else:
            if properties:
                values = values_block("ps", [model.value_namespace + p for p in properties])
            else:
                values = f"FILTER(STRSTARTS(STR(?ps), {string_literal(model.value_namespace)}))"
            pattern = f"?st ?ps ?x . {values} ?s ?p ?st . {statement}"
            projection = "?x ?st ?p ?rank ?sp ?v ?s"

        def build(chunk: Sequence[str]) -> str:
            return f"SELECT {projection} WHERE {{ {values_block('x', chunk)} {pattern} }}"

        grouped: dict[tuple[str, Term], _Statement] = {}
        for row in self._select_chunked(build, list(nodes.iris)):
            asked, st, claim, rank, sp, value = row[:6]
            self._asked(asked, nodes.iris)
            x = str(asked)
            subject = row[6] if side == "in" else x
            claim, sp = self._relation_of(claim), self._relation_of(sp)
            rank_name = self._asked(rank, model.ranks)
            if not isinstance(subject, str) or st is None or value is None:
                raise self._mismatch("a statement row without its subject, statement or value", row)
            prop = model.property_of(claim, model.claim_namespace)
            if prop is None:
                continue
            found = grouped.setdefault((x, st), _Statement(subject=subject, prop=prop, rank=rank_name))
            if sp == model.value_namespace + prop:
                found.values.append(value)
            else:
                qualifier = model.property_of(sp, model.qualifier_namespace)
                if qualifier is not None:
                    found.qualifiers.append((profile.relation_id(model.truthy_namespace + qualifier), value))
        entity_id = profile.entity_id

        def node_of(term: Term) -> Node:
            return entity_id(term) if isinstance(term, str) and not is_blank_node(term) else term

        for (x, st), found in grouped.items():
            canonical = nodes.iris[x]
            relation = profile.relation_id(model.truthy_namespace + found.prop)
            qualifiers = Qualifiers((relation_, [node_of(v)]) for relation_, v in found.qualifiers)
            for value in dict.fromkeys(found.values):
                if side == "in" and value != x:
                    continue
                if isinstance(value, Literal) and not literals:
                    continue
                head = canonical if side == "out" else node_of(found.subject)
                tail = node_of(value) if side == "out" else canonical
                if not isinstance(head, str):
                    continue
                edge = Edge(head=head, relation=relation, tail=tail, qualifiers=qualifiers, rank=found.rank)
                yield canonical, (st, head, tail), edge

    # -- answers checked against their questions -----------------------------------------------------
    def _answerer(self) -> str:
        """Who answered, for messages (an endpoint names its URL)."""
        return type(self).__name__

    def _mismatch(self, what: str, value: object) -> ResultMismatch:
        """The error for an answer that does not fit the query it answers: never dropped, never guessed at."""
        return ResultMismatch(f"{self._answerer()} answered {what}: {value!r:.100}")

    def _asked(self, value: object, asked: Mapping[str, _V]) -> _V:
        """What ``asked`` holds for ``value``, a term the query bound to one of its keys (a VALUES list)."""
        if isinstance(value, str):
            found = asked.get(value)
            if found is not None:
                return found
        raise self._mismatch("a row about something the query did not ask about", value)

    def _relation_of(self, term: object) -> str:
        """``term``, a predicate: an IRI (never a literal, a blank node or unbound)."""
        if isinstance(term, str) and not is_blank_node(term):
            return term
        raise self._mismatch("a relation that is not an IRI", term)

    def _select_chunked(self, build: Callable[[Sequence[str]], str], iris: list[str]) -> Iterator[Row]:
        """Rows of ``build(chunk)`` for every VALUES-sized chunk of ``iris``. A chunk whose answer is
        too large for the endpoint to page through is split in half until it fits."""
        for chunk in chunks(iris, self.values_chunk):
            yield from self._select_split(build, chunk)

    def _select_split(self, build: Callable[[Sequence[str]], str], chunk: Sequence[str]) -> list[Row]:
        try:
            return self._select(build(chunk))
        except ResultTooLarge:
            if len(chunk) == 1:
                raise
            middle = len(chunk) // 2
            return self._select_split(build, chunk[:middle]) + self._select_split(build, chunk[middle:])

    def _all_label_rows(self) -> Iterable[tuple[str, str, str]]:
        return self._named(self._select(LABEL_ROWS))

    def _named(self, rows: Iterable[Row]) -> Iterator[tuple[str, str, str]]:
        """(iri, label, lang) of rows that bind ``?x`` to an IRI and ``?l`` to a literal (as the query
        filters them); any other row is a ResultMismatch."""
        for x, label, *_ in rows:
            if not isinstance(x, str) or is_blank_node(x):
                raise self._mismatch("a name of something that is not an IRI", x)
            if not isinstance(label, Literal):
                raise self._mismatch("a name that is not a literal", label)
            yield x, label.value, label.lang or ""


def in_statement_layer(profile: Profile, relation: str, *, truthy: bool = False) -> bool:
    """Whether ``relation`` (an id of ``profile``) is statement plumbing (truthy edges count only
    with ``truthy``)."""
    model = profile.statements
    if model is None:
        return False
    full = profile.relation_iri(relation)
    return full.startswith(model.namespace) and (truthy or not full.startswith(model.truthy_namespace))


LABEL_ROWS = (
    f"SELECT ?x ?l WHERE {{ {values_block('p', INDEXED_LABEL_PREDICATES)} ?x ?p ?l "
    "FILTER(isIRI(?x) && isLiteral(?l)) }"
)
"""Every literal of a known label predicate, to fill the name index."""


@dataclass
class _Resolved:
    iris: dict[str, str] = field(default_factory=dict)
    """full IRI -> canonical id"""
    blanks: list[str] = field(default_factory=list)
    canonical: dict[str, str] = field(default_factory=dict)
    """the caller's spelling -> canonical id, in the caller's order"""


@dataclass
class _Statement:
    """One statement's rows, gathered (see ``SparqlGraph._statements``)."""

    subject: str
    prop: str
    rank: str
    values: list[Term] = field(default_factory=list)
    qualifiers: list[tuple[str, Term]] = field(default_factory=list)


def _tail_key(edge: Edge) -> tuple[int, str, str, str]:
    return node_sort_key(edge.tail)


def _head_key(edge: Edge) -> str:
    return edge.head
