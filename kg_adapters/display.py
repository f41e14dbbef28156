"""Records as text for people and prompts: RoG's ``e0 -> r1 -> e1`` path text, shared by ``kga paths``
and the reasoners (which import it from here, so the core never imports them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kg_adapters.records import Literal, Node, Path


def node_text(node: Node, names: Mapping[str, str]) -> str:
    """A node's name where known, else its id; a literal's value."""
    if isinstance(node, Literal):
        return node.value
    return names.get(node, node)


def format_path(path: Path, names: Mapping[str, str]) -> str:
    """RoG's reasoning-path text: ``e0 -> r1 -> e1 -> ...`` with names (of entities, and of
    relations given there) where known.
    A hop walked against the edge's direction reads ``e1 <- r2 <- e2`` (e2 --r2--> e1 in the KG)."""
    text = node_text(path.start, names)
    current: Node = path.start
    for edge in path.edges:
        forward = edge.head == current
        current = edge.tail if forward else edge.head
        arrow = "->" if forward else "<-"
        text += f" {arrow} {names.get(edge.relation, edge.relation)} {arrow} {node_text(current, names)}"
    return text


def path_entities(paths: Sequence[Path]) -> list[str]:
    """Every entity id on the paths, once, for one batched label lookup."""
    seen: dict[str, None] = {}
    for path in paths:
        for node in path.entities:
            if isinstance(node, str):
                seen[node] = None
    return list(seen)
