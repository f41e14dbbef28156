"""RoG (Reasoning on Graphs) retrieval: relation-path plans grounded with constrained BFS.

RoG plans relation paths for a question, retrieves every KG walk that follows a plan from the
topic entities (``KnowledgeGraph.paths``, RoG's Algorithm 1) and reasons over the walks, which it
shows to the LLM as ``e0 -> r1 -> e1 -> ...``. Without an LLM, ``vote`` ranks the walks' end
entities by how many walks reach them (RoG's retrieval-only baseline).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kg_adapters.base import Direction, KnowledgeGraph
from kg_adapters.records import Literal, Node, Path, PathResult


@dataclass(frozen=True, kw_only=True)
class Plan:
    """One relation path to follow from the topic entities, with a direction per hop."""

    relations: tuple[str, ...]
    directions: tuple[Direction, ...] | None = None


def retrieve(
    kg: KnowledgeGraph, topic_entities: Sequence[str], plans: Sequence[Plan], *, max_paths: int = 1000
) -> PathResult:
    """Every walk that follows one of the plans from a topic entity (one batched BFS per plan)."""
    found = PathResult()
    for plan in plans:
        result = kg.paths(topic_entities, plan.relations, directions=plan.directions, max_paths=max_paths)
        found.extend(result)
        found.truncated = found.truncated or result.truncated
    return found


def vote(paths: Sequence[Path]) -> list[tuple[Node, int]]:
    """End entities ranked by how many retrieved walks reach them (ties by id)."""
    counts = Counter(path.end for path in paths)
    return sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))


def node_text(node: Node, names: Mapping[str, str]) -> str:
    if isinstance(node, Literal):
        return node.value
    return names.get(node, node)


def format_path(path: Path, names: Mapping[str, str]) -> str:
    """RoG's reasoning-path text: ``e0 -> r1 -> e1 -> ...`` with names where known.
    A hop walked against the edge's direction reads ``e1 <- r2 <- e2`` (e2 --r2--> e1 in the KG)."""
    text = node_text(path.start, names)
    current: Node = path.start
    for edge in path.edges:
        forward = edge.head == current
        current = edge.tail if forward else edge.head
        arrow = "->" if forward else "<-"
        text += f" {arrow} {edge.relation} {arrow} {node_text(current, names)}"
    return text


def path_entities(paths: Sequence[Path]) -> list[str]:
    """Every entity id on the paths, once, for one batched label lookup."""
    seen: dict[str, None] = {}
    for path in paths:
        for node in path.entities:
            if isinstance(node, str):
                seen[node] = None
    return list(seen)
