"""How a relation path was walked, as every search method reads it: each hop's relation and whether it
was walked along its edge (head to tail), how many hops went against their edge (each costs
:data:`reasoning.relevance.INVERSE_COST`), and the one step no search takes: straight back along the
relation just walked (Paris -country-> France <-country- Lyon: another place of the same country, not a
fact about Paris's). Also what every method charges a path for its length and directions
(:func:`net_level`, :func:`added_cost`) and the two directions it asks about one at a time (:data:`SIDES`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kg_adapters.base import Direction
from kg_adapters.records import Edge, Node
from reasoning.relevance import path_cost

SIDES: tuple[Direction, Direction] = ("out", "in")
"""Both directions, each asked on its own (with ``both`` a busy relation's edges one way would hide its edges
the other way)."""

Step = tuple[str, bool]
"""A hop as walked: its relation, and True when it was walked along its edge (head to tail)."""


def walked_steps(start: Node, edges: Sequence[Edge]) -> tuple[Step, ...]:
    """The hops of ``edges`` walked from ``start``, in order ("influenced by" and "influenced", the same
    relation walked backwards, are different steps)."""
    node = start
    steps = []
    for edge in edges:
        forward = edge.head == node
        steps.append((edge.relation, forward))
        node = edge.tail if forward else edge.head
    return tuple(steps)


def arrival(edge: Edge, node: Node) -> Step:
    """``edge`` as the step that reached ``node``."""
    return (edge.relation, edge.tail == node)


def backward(steps: Iterable[Step]) -> int:
    """How many of the steps were walked against their edge's direction."""
    return sum(not forward for _, forward in steps)


def turns_back(last: Step | None, relation: str, forward: bool) -> bool:
    """Whether walking ``relation`` (along its edge when ``forward``) right after ``last`` goes straight
    back where ``last`` came from: the same relation, the other way."""
    return last is not None and last[0] == relation and last[1] != forward


def net_level(score: float, hops: int, inverse: int = 0) -> float:
    """A relation path's score less its :func:`path_cost` (``hops`` long, ``inverse`` of them walked against
    their edge): the level every method compares paths of different lengths and directions by."""
    return score - path_cost(hops, inverse)


def added_cost(steps: Sequence[Step], prefix: int) -> float:
    """What the hops after the first ``prefix`` of a walked path add to its :func:`path_cost` (the prefix's
    own cost is common to every path that grows from it)."""
    return path_cost(len(steps), backward(steps[prefix:])) - path_cost(prefix)
