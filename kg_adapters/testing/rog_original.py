"""RoG's ``graph_utils`` (src/utils/graph_utils.py of RoG) as published, over networkx: the reference
that tests and benchmarks hold :mod:`kg_adapters.compat.rog` and ``kga dataset build`` against.

RoG's graph is an undirected ``nx.Graph``: one relation per node pair, a later triple overwriting the
pair's relation (the loss :mod:`kg_adapters.compat.rog` does not copy). Needs networkx (the ``bench``
extra, or the dev install)."""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from typing import cast

import networkx as nx

Triple = tuple[str, str, str]


def build_graph(triples: Iterable[Triple]) -> nx.Graph[str]:
    """RoG's ``build_graph``: relation names stripped, the last triple of a node pair kept."""
    graph: nx.Graph[str] = nx.Graph()
    for h, r, t in triples:
        graph.add_edge(h, t, relation=r.strip())
    return graph


def bfs_with_rule(graph: nx.Graph[str], start: str, rule: Sequence[str]) -> list[list[Triple]]:
    """RoG's ``bfs_with_rule``: every walk from ``start`` whose relations spell ``rule``."""
    result: list[list[Triple]] = []
    queue: deque[tuple[str, list[Triple]]] = deque([(start, [])])
    while queue:
        node, path = queue.popleft()
        if len(path) == len(rule):
            result.append(path)
        if len(path) < len(rule):
            if node not in graph:
                continue
            for neighbor in graph.neighbors(node):
                rel = graph[node][neighbor]["relation"]
                if rel != rule[len(path)]:
                    continue
                queue.append((neighbor, [*path, (node, rel, neighbor)]))
    return result


def _pairs_in(graph: nx.Graph[str], q_entity: Sequence[str], a_entity: Sequence[str]) -> Iterator[tuple[str, str]]:
    """RoG's double loop: each (question entity, answer entity) pair whose both ends are in ``graph``."""
    for h in q_entity:
        if h not in graph:
            continue
        for t in a_entity:
            if t in graph:
                yield h, t


def get_truth_paths(q_entity: Sequence[str], a_entity: Sequence[str], graph: nx.Graph[str]) -> list[list[Triple]]:
    """RoG's ``get_truth_paths``: every shortest path between each question and answer entity."""
    paths: list[list[str]] = []
    for h, t in _pairs_in(graph, q_entity, a_entity):
        with contextlib.suppress(nx.NetworkXNoPath):
            paths.extend(nx.all_shortest_paths(graph, h, t))
    return [[(p[i], graph[p[i]][p[i + 1]]["relation"], p[i + 1]) for i in range(len(p) - 1)] for p in paths]


def get_simple_paths(
    q_entity: Sequence[str], a_entity: Sequence[str], graph: nx.Graph[str], hop: int = 2
) -> list[list[Triple]]:
    """RoG's ``get_simple_paths``: every simple path of at most ``hop`` edges between the two sets."""
    paths: list[list[tuple[str, str]]] = []
    for h, t in _pairs_in(graph, q_entity, a_entity):
        paths.extend(cast(list[tuple[str, str]], p) for p in nx.all_simple_edge_paths(graph, h, t, cutoff=hop))
    return [[(u, graph[u][v]["relation"], v) for u, v in p] for p in paths]
