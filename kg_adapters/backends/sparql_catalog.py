""":class:`~kg_adapters.base.GraphCatalog` for the SPARQL backends: what a graph holds, in bounded queries
(``SparqlGraph``'s catalog methods call these functions).

Relations are listed from the relation index (``relations.sqlite``; a remote endpoint's list is fetched once
per connection). Whether an entity exists is one ``FILTER EXISTS`` query per chunk of ids, which stops at
the first edge of each. A relation's summary costs at most four small queries, each bounded by ``LIMIT``:
its count up to :data:`COUNT_CAP` (exact from an index where the backend has one), a few example edges,
and the types of a sample of :data:`TYPE_SAMPLE` heads and tails; a deadline ends the work between
relations, so a summary of a huge graph answers on time with the relations it reached.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kg_adapters.base import CountsRelations, Ids, as_id_list
from kg_adapters.profiles.base import is_blank_node
from kg_adapters.records import Edge, Literal, Node, RelationSummary
from kg_adapters.sparql_terms import iri, values_block

if TYPE_CHECKING:
    from kg_adapters.backends.sparql_graph import SparqlGraph

COUNT_CAP = 100_000
"""Edges counted per relation, at most, where no index counts them (more is reported as a lower bound)."""
EVERY_RELATION = 1 << 30
"""``max_relations`` asking for every relation's count."""
TYPE_SAMPLE = 200
"""Heads (and tails) of a relation whose types are counted."""


def relation_ids(graph: SparqlGraph) -> list[str]:
    """Every relation (profile ids, sorted), from the relation index."""
    graph._check_open()
    relation_id = graph._profile.relation_id
    return sorted({relation_id(found) for found in graph._relations().relation_iris()})


def known_entities(graph: SparqlGraph, ids: Ids) -> set[str]:
    """The ids (as given) that are the subject or object of some triple; blank node ids count as known."""
    graph._check_open()
    graph._resolve(ids)  # validates every id first
    found: set[str] = set()
    spelled: dict[str, list[str]] = {}
    for spelling in as_id_list(ids):
        if is_blank_node(spelling):
            found.add(spelling)
        else:
            spelled.setdefault(graph._profile.entity_iri(spelling), []).append(spelling)

    def build(chunk: Sequence[str]) -> str:
        exists = "FILTER(EXISTS { ?x ?p ?o } || EXISTS { ?s ?q ?x })"
        return f"SELECT ?x WHERE {{ {values_block('x', chunk)} {exists} }}"

    for x, *_ in graph._select_chunked(build, list(spelled)):
        if isinstance(x, str):
            found.update(spelled.get(x, ()))
    return found


def relation_summaries(
    graph: SparqlGraph,
    relations: Sequence[str],
    *,
    examples: int = 3,
    types: int = 3,
    deadline: float | None = None,
) -> list[RelationSummary]:
    """See :class:`~kg_adapters.base.GraphCatalog`."""
    graph._check_open()
    profile = graph._profile
    wanted = [profile.relation_id(profile.relation_iri(relation)) for relation in relations]
    counts, complete = indexed_counts(graph)
    labels = graph._relations().relation_labels([profile.relation_iri(r) for r in wanted], profile.label_langs("en"))
    summaries = []
    for relation in wanted:
        if deadline is not None and time.monotonic() >= deadline:
            break
        full = profile.relation_iri(relation)
        known = counts.get(full)
        if known is not None:
            count, lower_bound = known, False
        elif complete and full not in counts:  # every relation of the default graph is listed: none here
            count, lower_bound = 0, False
        else:
            count, lower_bound = _bounded_count(graph, full)
        summaries.append(
            RelationSummary(
                id=relation,
                label=labels.get(full),
                count=count,
                count_is_lower_bound=lower_bound,
                examples=tuple(_example_edges(graph, full, relation, examples)),
                head_types=_types(graph, f"?x {iri(full)} ?o", types),
                tail_types=_types(graph, f"?s {iri(full)} ?x FILTER(isIRI(?x))", types),
            )
        )
    return summaries


def indexed_counts(graph: object) -> tuple[dict[str, int | None], bool]:
    """(relation IRI -> its triples where known, whether every relation is listed) from what the graph
    knows without a scan (:class:`~kg_adapters.base.CountsRelations`: the traversal index's counts);
    nothing when it knows nothing."""
    if not isinstance(graph, CountsRelations):
        return {}, False
    found = graph.relation_counts(max_relations=EVERY_RELATION)
    listed = dict(found.per_relation)
    return listed, found.relations is not None and len(listed) == found.relations


def _bounded_count(graph: SparqlGraph, full: str) -> tuple[int, bool]:
    query = f"SELECT (COUNT(*) AS ?n) WHERE {{ SELECT ?s WHERE {{ ?s {iri(full)} ?o }} LIMIT {COUNT_CAP + 1} }}"
    rows = graph._select(query)
    value = rows[0][0] if rows else None
    count = int(value.value) if isinstance(value, Literal) and value.value.isdigit() else 0
    return min(count, COUNT_CAP), count > COUNT_CAP


def _example_edges(graph: SparqlGraph, full: str, relation: str, count: int) -> list[Edge]:
    if count <= 0:
        return []
    entity_id = graph._profile.entity_id
    found = []
    for head, tail, *_ in graph._select(f"SELECT ?s ?o WHERE {{ ?s {iri(full)} ?o }} LIMIT {count}"):
        if isinstance(head, str) and tail is not None:
            node: Node = entity_id(tail) if isinstance(tail, str) and not is_blank_node(tail) else tail
            start = head if is_blank_node(head) else entity_id(head)
            found.append(Edge(head=start, relation=relation, tail=node))
    return found


def _types(graph: SparqlGraph, pattern: str, count: int) -> tuple[tuple[str, int], ...]:
    """The ``count`` most frequent types of ``?x`` over a sample of the entities ``pattern`` binds."""
    predicates = graph._profile.type_predicates
    if count <= 0 or not predicates:
        return ()
    sample = f"{{ SELECT DISTINCT ?x WHERE {{ {pattern} }} LIMIT {TYPE_SAMPLE} }}"
    query = (
        f"SELECT ?t (COUNT(*) AS ?n) WHERE {{ {sample} {values_block('tp', predicates)} ?x ?tp ?t "
        f"FILTER(isIRI(?t)) }} GROUP BY ?t ORDER BY DESC(?n) ?t LIMIT {count}"
    )
    entity_id = graph._profile.entity_id
    found = []
    for kind, number, *_ in graph._select(query):
        if isinstance(kind, str) and isinstance(number, Literal) and number.value.isdigit():
            found.append((entity_id(kind), int(number.value)))
    return tuple(found)
