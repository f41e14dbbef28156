"""One RoG-style dataset row per question, from any :class:`KnowledgeGraph` (what ``kga dataset build`` runs).

For a group of questions at a time:

1. **Walk** (:func:`kg_adapters.algorithms.k_hop_walk`, the walk ``subgraph`` runs): every edge within
   ``hops`` of the topic entities, both directions, under the profile's default relation filter. The
   questions of a group advance in lockstep, and the frontier ids of all of them are asked in one
   batched ``neighbors`` call per ``batch_size`` ids (:class:`NeighborTable`), so a remote endpoint
   answers a group's hop in a few requests, not one per question. Budgets: a node contributes at most
   ``edges_per_node`` edges (the first ones in the backend's edge order, the same on every backend)
   and a question's walk stops at ``max_edges`` edges; a row either budget cut is marked
   ``truncated``. A hub is therefore walked partly, never unboundedly.
   Left out of the walk: the profile's name and description predicates (they say how a node is
   written and what it is, not how it relates to other nodes),
   blank nodes (not addressable, and spelled differently by every backend) and literals that cannot
   be written as a RoG string (empty, or longer than the names profile takes).
2. **Prune** to ``max_nodes`` nodes by personalised PageRank from the topic entities (GraftNet's
   retrieval, which NSM's and RoG's WebQSP/CWQ subgraphs come from; :func:`personalized_pagerank`),
   keeping every edge between kept nodes. The answers are never looked at, so a model trained on the
   rows cannot learn a shortcut, and withholding ``a_entity`` changes no graph.
3. **Write** each node as RoG's files do (an entity's name where the KG has one, else its id; a
   literal as its text) or, with ``ids``, as its id; identical written triples are written once.
4. **Ground paths** (:func:`ground_paths`): the distinct relation sequences of every shortest path
   from a topic entity to an answer in the written graph, undirected, nodes being the written strings:
   RoG's ``get_truth_paths`` over the row's graph, as its training data takes them (``ground_paths``),
   except that a node pair joined by several relations gives a sequence per relation (RoG's
   ``nx.Graph`` keeps the last one), so RoG's own function finds a subset of them on every row.

Everything is ordered canonically (edges by head, relation, tail; nodes by id; PageRank ties by id),
so the same KG gives the same rows whichever backend serves it, whatever the grouping or workers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from kg_adapters.algorithms import HopBatch, MemoryLedger, k_hop_walk
from kg_adapters.base import Ids, KnowledgeGraph, as_id_list, call_options, forwards
from kg_adapters.budgets import MAX_COUNT
from kg_adapters.errors import InvalidTermError
from kg_adapters.profiles.base import is_blank_node
from kg_adapters.profiles.names import NamesProfile
from kg_adapters.records import Edge, Literal, Node, best_label, edge_sort_key, node_sort_key
from kg_adapters.wrappers import DelegatingGraph

DEFAULT_HOPS = 2
DEFAULT_MAX_NODES = 1000
"""Nodes kept per question: chosen from the coverage-vs-size curve in ``benchmarks/results/dataset_build.md``
(an answer inside the graph for at least 90% of generated 2-hop questions on FB15k-237 and the sample);
GraftNet keeps 500 entities, with question-weighted relations that this build does not have."""
DEFAULT_EDGES_PER_NODE = 1000
DEFAULT_MAX_EDGES = 100_000
DEFAULT_BATCH_SIZE = 500
"""Most ids per ``neighbors`` call (as ``kga extract``)."""
NODES_PER_STEP = 256
"""Frontier nodes one question expands per lockstep step: with ``edges_per_node`` this bounds what a
step fetches for it."""
PREFETCH_NODES = 2048
"""Most frontier ids fetched ahead per step for a whole group (the rest are fetched when asked)."""
RESTART = 0.8
"""GraftNet's restart probability: the walk returns to the topic entities 80% of the time, so the
scores fall off with distance and a hub's many neighbours share a small score."""
PAGERANK_ITERATIONS = 100
PAGERANK_TOLERANCE = 1e-13
MAX_GROUND_PATHS = 10_000
"""Relation sequences kept per node and per row: a budget for pathological graphs (the row is marked)."""


@dataclass(frozen=True, kw_only=True)
class Settings:
    """What decides a row besides the KG and the question (checked once, by the caller)."""

    hops: int = DEFAULT_HOPS
    max_nodes: int = DEFAULT_MAX_NODES
    ids: bool = False
    edges_per_node: int = DEFAULT_EDGES_PER_NODE
    max_edges: int = DEFAULT_MAX_EDGES
    batch_size: int = DEFAULT_BATCH_SIZE


@dataclass(frozen=True, kw_only=True)
class QuestionInput:
    """One question as the build takes it: ids canonical in the KG's profile, ``answer`` None when the
    input gave none (it is then written from ``a_entity``)."""

    id: str
    question: str
    q_entity: tuple[str, ...]
    a_entity: tuple[str, ...] = ()
    answer: tuple[str, ...] | None = None
    choices: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "question": self.question,
            "q_entity": list(self.q_entity),
            "a_entity": list(self.a_entity),
            "answer": None if self.answer is None else list(self.answer),
            "choices": list(self.choices),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> QuestionInput:
        answer = data["answer"]
        return cls(
            id=data["id"],
            question=data["question"],
            q_entity=tuple(data["q_entity"]),
            a_entity=tuple(data["a_entity"]),
            answer=None if answer is None else tuple(answer),
            choices=tuple(data["choices"]),
        )


@dataclass(frozen=True, kw_only=True)
class BuiltRow:
    """A written row and what the build's report counts of it."""

    row: dict[str, Any]
    walked_edges: int
    nodes: int
    covered: bool | None
    """Whether an answer is a node of the written graph (None for a question without answers)."""


_NAMES = NamesProfile()


def writable(text: str) -> bool:
    """Whether ``text`` can be a node or relation of a RoG row that ``kga load --format rog-dataset``
    reads back (non-empty, valid Unicode, not a blank node label, within the term length)."""
    try:
        _NAMES.entity_iri(text)
    except InvalidTermError:
        return False
    return True


class NeighborTable(DelegatingGraph):
    """The walk's ``neighbors(ids, direction="both")`` answered from a table filled ``batch_size`` ids
    per call of the graph underneath (:meth:`prefetch` fills it for many questions at once; an id not
    there yet is fetched when asked). Each node keeps its first ``edges_per_node`` edges (``cut``
    lists the nodes that had more), then the edges ``keep`` keeps of them."""

    def __init__(self, inner: KnowledgeGraph, *, edges_per_node: int, batch_size: int, keep: EdgeFilter) -> None:
        super().__init__(inner)
        self.edges_per_node = edges_per_node
        self.asked = min(edges_per_node + 1, MAX_COUNT)
        """One edge more than a node may add, so that a cut is seen (the largest budget cuts nothing)."""
        self.batch_size = batch_size
        self.keep = keep
        self.table: dict[str, list[Edge]] = {}
        self.cut: set[str] = set()

    def prefetch(self, nodes: Iterable[str]) -> None:
        missing = [node for node in dict.fromkeys(nodes) if node not in self.table]
        for start in range(0, len(missing), self.batch_size):
            chunk = missing[start : start + self.batch_size]
            answer = self.inner.neighbors(chunk, direction="both", limit_per_entity=self.asked)
            for node in chunk:
                edges = answer.get(node, [])
                if len(edges) > self.edges_per_node:
                    self.cut.add(node)
                    edges = edges[: self.edges_per_node]
                self.table[node] = self.keep(edges)

    @forwards(KnowledgeGraph.neighbors)
    def neighbors(self, ids: Ids, **options: Any) -> dict[str, list[Edge]]:
        if call_options(KnowledgeGraph.neighbors, options) != _WALK_CALL:
            raise TypeError("the neighbour table answers the walk's call only: direction='both', nothing else")
        nodes = as_id_list(ids)
        self.prefetch(nodes)
        return {node: self.table[node] for node in nodes}

    def clear(self) -> None:
        """Forgets the table (kept one lockstep step, so memory stays bounded by a step's fetch)."""
        self.table.clear()


_WALK_CALL = call_options(KnowledgeGraph.neighbors, {"direction": "both"})
"""The options of the one ``neighbors`` call the walk makes (every other option at its default)."""


EdgeFilter = Callable[[list[Edge]], list[Edge]]


def walk_filter(kg: KnowledgeGraph) -> EdgeFilter:
    """The edges of a list that a row may hold (see the module docstring, step 1). Which strings are
    writable is memoised (a bounded cache): the loop runs for every edge a walk reads."""
    profile = kg.profile
    hidden = {profile.relation_id(p) for p in (*profile.label_predicates, *profile.description_predicates)}
    relations: dict[str, bool] = {}
    texts: dict[str, bool] = {}

    def learn(memo: dict[str, bool], text: str, visible: bool = True) -> bool:
        if len(memo) >= 1_000_000:
            memo.clear()
        memo[text] = fits = visible and writable(text) and not is_blank_node(text)
        return fits

    def keep(edges: list[Edge]) -> list[Edge]:
        kept = []
        for edge in edges:
            relation, head, tail = edge.relation, edge.head, edge.tail
            fits = relations.get(relation)
            if not (learn(relations, relation, relation not in hidden) if fits is None else fits):
                continue
            fits = texts.get(head)
            if not (learn(texts, head) if fits is None else fits):
                continue
            text = tail.value if isinstance(tail, Literal) else tail
            fits = texts.get(text)
            if learn(texts, text) if fits is None else fits:
                kept.append(edge)
        return kept

    return keep


@dataclass(frozen=True)
class WalkedQuestion:
    """A question's walk: every edge it holds, in walk order, and whether a budget cut it."""

    question: QuestionInput
    edges: list[Edge]
    truncated: bool


@dataclass
class _Walk:
    question: QuestionInput
    ledger: MemoryLedger
    steps: Iterator[HopBatch]
    truncated: bool = False


def walk_questions(
    kg: KnowledgeGraph, questions: Sequence[QuestionInput], settings: Settings
) -> Iterator[WalkedQuestion]:
    """The walk of each question (step 1 of the module docstring), all of them in lockstep, each
    yielded as soon as it ends (so its edges can be pruned and dropped while the others go on)."""
    table = NeighborTable(
        kg, edges_per_node=settings.edges_per_node, batch_size=settings.batch_size, keep=walk_filter(kg)
    )
    active = [_start_walk(table, question, settings) for question in questions]
    while active:
        wanted: list[str] = []
        for walk in active:
            wanted.extend(_next_frontier(walk.ledger, settings.hops))
            if len(wanted) >= PREFETCH_NODES:
                break
        table.prefetch(wanted)
        going = []
        for walk in active:
            batch = next(walk.steps, None)
            if batch is not None:
                walk.truncated |= batch.truncated or any(node in table.cut for node in batch.nodes)
            if batch is None or batch.truncated:
                yield WalkedQuestion(walk.question, walk.ledger.edges, walk.truncated)
            else:
                going.append(walk)
        active = going
        table.clear()


def build_rows(kg: KnowledgeGraph, questions: Sequence[QuestionInput], settings: Settings) -> list[BuiltRow]:
    """The rows of ``questions`` (every id known to ``kg``, checked by the caller), in their order."""
    kept: dict[str, tuple[list[Edge], int, int, bool]] = {}
    for walked in walk_questions(kg, questions, settings):
        edges, reached = prune(walked.edges, walked.question.q_entity, settings.max_nodes)
        kept[walked.question.id] = (edges, len(walked.edges), reached, walked.truncated)
    graphs = (edges for edges, *_ in kept.values())
    names = {} if settings.ids else entity_names(kg, _entities(questions, graphs), settings.batch_size)
    rows = []
    for question in questions:
        edges, walked_edges, reached, truncated = kept[question.id]
        row, covered, cut_paths = render_row(question, edges, names)
        row["truncated"] = truncated or cut_paths
        rows.append(BuiltRow(row=row, walked_edges=walked_edges, nodes=reached, covered=covered))
    return rows


def _start_walk(table: NeighborTable, question: QuestionInput, settings: Settings) -> _Walk:
    ledger = MemoryLedger(question.q_entity)
    steps = k_hop_walk(
        table,
        ledger,
        hops=settings.hops,
        direction="both",
        max_edges=settings.max_edges,
        batch_size=NODES_PER_STEP,
    )
    return _Walk(question=question, ledger=ledger, steps=steps)


def _next_frontier(ledger: MemoryLedger, hops: int) -> list[str]:
    """The nodes the walk expands next: the first unexpanded ones of the nearest hop that has any (the
    walk expands hops in order), so the prefetch asks exactly what the walk will."""
    for hop in range(min(hops, len(ledger.levels))):  # the levels reached so far, however large ``hops``
        nodes = ledger.frontier(hop, NODES_PER_STEP)
        if nodes:
            return nodes
    return []


def _entities(questions: Sequence[QuestionInput], graphs: Iterable[list[Edge]]) -> list[str]:
    found: dict[str, None] = {}
    for question in questions:
        found.update(dict.fromkeys(question.q_entity))
        found.update(dict.fromkeys(question.a_entity))
    for edges in graphs:
        for edge in edges:
            found[edge.head] = None
            if isinstance(edge.tail, str):
                found[edge.tail] = None
    return list(found)


# -- pruning ------------------------------------------------------------------------------------------


def personalized_pagerank(edges: Sequence[Edge], seeds: Sequence[str]) -> tuple[list[Node], Any]:
    """Personalised PageRank of every node of ``edges`` from ``seeds``, as GraftNet retrieves subgraphs:
    the graph undirected, each triple one edge in each direction (two relations between a pair are two
    edges: a multigraph is never collapsed), transition probabilities ``1 / degree``, restart
    :data:`RESTART` to the seeds, uniformly (GraftNet weights seeds by entity-linking rank; our topic
    entities are given, not ranked), power iteration until the scores move less than
    :data:`PAGERANK_TOLERANCE` (L1) or :data:`PAGERANK_ITERATIONS` rounds. GraftNet also weights each
    relation by its similarity to the question; not here: no encoder is needed and a row depends on the
    KG alone. Nodes in canonical order and sums in the order of ``edges`` (the walk's, the same on every
    backend), so equal inputs give bit-equal scores.

    Returns:
        The nodes (entities by id, then literals; :func:`~kg_adapters.records.node_sort_key` order) and
        their scores (a numpy array), in the same order.
    """
    import numpy as np

    ends = {node for edge in edges for node in (edge.head, edge.tail)}
    ends.update(seeds)
    entities = sorted(node for node in ends if isinstance(node, str))  # node_sort_key's order, sorted faster
    nodes: list[Node] = [*entities, *sorted((node for node in ends if isinstance(node, Literal)), key=node_sort_key)]
    position = {node: index for index, node in enumerate(nodes)}
    count = len(edges)
    heads = np.fromiter((position[edge.head] for edge in edges), dtype=np.int64, count=count)
    tails = np.fromiter((position[edge.tail] for edge in edges), dtype=np.int64, count=count)
    sources, targets = np.concatenate([heads, tails]), np.concatenate([tails, heads])
    size = len(nodes)
    degree = np.bincount(sources, minlength=size).astype(np.float64)
    weight = 1.0 / degree[sources]
    restart = np.zeros(size)
    restart[sorted({position[seed] for seed in seeds})] = 1.0 / len(set(seeds))
    scores = restart.copy()
    for _ in range(PAGERANK_ITERATIONS):
        spread = np.bincount(targets, weights=scores[sources] * weight, minlength=size)
        updated = RESTART * restart + (1.0 - RESTART) * spread
        moved = float(np.abs(updated - scores).sum())
        scores = updated
        if moved < PAGERANK_TOLERANCE:
            break
    return nodes, scores


def prune(edges: Sequence[Edge], seeds: Sequence[str], max_nodes: int) -> tuple[list[Edge], int]:
    """The edges between the ``max_nodes`` nodes of highest personalised PageRank (topic entities
    always kept; ties by canonical node order; scores compared to 12 decimals so that rounding noise
    never decides), in canonical edge order, and how many nodes the walk reached."""
    import numpy as np

    nodes, scores = personalized_pagerank(edges, seeds)
    topic = set(seeds)
    not_topic = np.fromiter((node not in topic for node in nodes), dtype=bool, count=len(nodes))
    ranked = np.lexsort((np.arange(len(nodes)), -np.round(scores, 12), not_topic))
    chosen = {nodes[index] for index in ranked[: max(max_nodes, len(topic))].tolist()}
    kept = sorted((edge for edge in edges if edge.head in chosen and edge.tail in chosen), key=edge_sort_key)
    return kept, len(nodes)


# -- writing ------------------------------------------------------------------------------------------


def entity_names(kg: KnowledgeGraph, ids: Sequence[str], batch_size: int) -> dict[str, str]:
    """The name of each id that has a usable one, read from the profile's name predicates: RoG writes a
    nameless node (a Freebase CVT) as its id, where ``labels`` would describe it from its neighbours."""
    profile = kg.profile
    predicates = [profile.relation_id(predicate) for predicate in profile.label_predicates]
    langs = profile.label_langs("en")
    names: dict[str, str] = {}
    for start in range(0, len(ids), batch_size):
        chunk = list(ids[start : start + batch_size])
        if profile.has_cvt_nodes:
            answer = kg.neighbors(chunk, direction="out", relations=predicates)
            found = {
                node: best_label(literals, langs)
                for node in chunk
                if (literals := [edge.tail for edge in answer.get(node, ()) if isinstance(edge.tail, Literal)])
            }
        else:
            found = kg.labels(chunk, lang=langs)
        names.update((node, name) for node, name in found.items() if writable(name))
    return names


def render_row(
    question: QuestionInput, edges: Sequence[Edge], names: dict[str, str]
) -> tuple[dict[str, Any], bool | None, bool]:
    """The row of ``question`` over its pruned ``edges`` (names empty: ids everywhere), ready for
    ``json.dumps`` (``graph`` and ``ground_paths`` as tuples), whether an answer is in its graph, and
    whether the ground-path budget cut it."""
    graph: dict[tuple[str, str, str], None] = {}
    present: set[str] = set()
    for edge in edges:  # the loop runs for every triple of every row: kept free of calls
        head, tail = names.get(edge.head, edge.head), edge.tail
        tail = tail.value if isinstance(tail, Literal) else names.get(tail, tail)
        graph[(head, edge.relation, tail)] = None
        present.add(head)
        present.add(tail)
    triples = list(graph)
    q_entity = list(dict.fromkeys(names.get(node, node) for node in question.q_entity))
    a_entity = list(dict.fromkeys(names.get(node, node) for node in question.a_entity))
    paths, cut = ground_paths(triples, q_entity, a_entity)
    row = {
        "id": question.id,
        "question": question.question,
        "answer": list(question.answer) if question.answer is not None else a_entity,
        "q_entity": q_entity,
        "a_entity": a_entity,
        "graph": triples,
        "choices": list(question.choices),
        "ground_paths": paths,
    }
    return row, any(answer in present for answer in a_entity) if a_entity else None, cut


def ground_paths(
    triples: Sequence[tuple[str, str, str]], sources: Sequence[str], targets: Sequence[str]
) -> tuple[list[tuple[str, ...]], bool]:
    """The distinct relation sequences of every shortest path (edges walked either way) from each
    source to each target in ``triples``, nodes being the strings themselves: RoG's
    ``get_truth_paths`` as its training data uses it (``h == t`` gives the empty sequence, as there).
    Sequences are propagated along each source's breadth-first layers, on the nodes that lie on a
    shortest path to a target only, so the work is bounded by the graph and the distinct sequences,
    never by the number of paths. Sorted by length, then text; True when :data:`MAX_GROUND_PATHS` cut it."""
    adjacency: dict[str, list[tuple[str, str]]] = {}
    for head, relation, tail in triples:
        adjacency.setdefault(head, []).append((relation, tail))
        adjacency.setdefault(tail, []).append((relation, head))
    wanted = [target for target in dict.fromkeys(targets) if target in adjacency]
    found: set[tuple[str, ...]] = set()
    cut = False
    for source in dict.fromkeys(sources):
        if source not in adjacency or not wanted:
            continue
        distance = _distances(adjacency, source, set(wanted))
        sequences, source_cut = _sequences(adjacency, distance, [t for t in wanted if t in distance])
        cut |= source_cut
        for target in wanted:
            found.update(sequences.get(target, ()))
    ordered = sorted(found, key=lambda path: (len(path), path))
    if len(ordered) > MAX_GROUND_PATHS:
        return ordered[:MAX_GROUND_PATHS], True
    return ordered, cut


def _distances(adjacency: dict[str, list[tuple[str, str]]], source: str, targets: set[str]) -> dict[str, int]:
    """Breadth-first distances from ``source``, up to the layer where the last reachable target is."""
    distance = {source: 0}
    frontier = [source]
    remaining = targets - {source}
    while frontier and remaining:
        reached: list[str] = []
        for node in frontier:
            for _, other in adjacency[node]:
                if other not in distance:
                    distance[other] = distance[node] + 1
                    reached.append(other)
                    remaining.discard(other)
        frontier = reached
    return distance


def _sequences(
    adjacency: dict[str, list[tuple[str, str]]], distance: dict[str, int], reached: list[str]
) -> tuple[dict[str, set[tuple[str, ...]]], bool]:
    """Relation sequences of the shortest paths to each reached target, over the nodes on such paths."""
    on_path = set(reached)
    frontier = list(reached)
    while frontier:  # backwards from the targets: the nodes one step nearer the source
        nearer: list[str] = []
        for node in frontier:
            for _, other in adjacency[node]:
                if distance.get(other) == distance[node] - 1 and other not in on_path:
                    on_path.add(other)
                    nearer.append(other)
        frontier = nearer
    by_distance = sorted(on_path, key=lambda node: distance[node])
    sequences: dict[str, set[tuple[str, ...]]] = {}
    cut = False
    for node in by_distance:
        here = distance[node]
        if here == 0:
            sequences[node] = {()}
            continue
        grown: set[tuple[str, ...]] = set()
        for relation, other in adjacency[node]:
            if distance.get(other) == here - 1 and other in on_path:
                grown.update((*path, relation) for path in sequences[other])
        if len(grown) > MAX_GROUND_PATHS:
            grown = set(sorted(grown)[:MAX_GROUND_PATHS])
            cut = True
        sequences[node] = grown
    return sequences, cut
