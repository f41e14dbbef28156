"""A seeded mixed workload of KG operations over a Freebase-shaped N-Triples file, for the fault
tests (``tests/test_remote_faults.py``) and the fault benchmark (``benchmarks/faults.py``).

:func:`build_workload` samples operations from the file itself (so each one has a non-trivial
answer of bounded size: entities of at most ``max_degree`` edges, 2-hop relation paths that
exist, targets 1-2 hops away, real names); :func:`run_op` runs one against a graph and returns its
answer in a comparable form (path answers as sorted texts, raw query rows sorted).
"""

from __future__ import annotations

import gzip
import random
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FB = "http://rdf.freebase.com/ns/"
NAME = FB + "type.object.name"
FAULT_KINDS = ("429", "500", "502", "503", "reset", "truncate") * 3 + ("stall", "drip")
"""Every fault kind: those a retry recovers from at once weigh 3, stalls and slow drips 1 (each costs
a real client timeout)."""
QUICK_FAULT_KINDS = ("429", "500", "502", "503", "reset", "truncate")
"""The fault kinds that cost no real time."""
KINDS = ("neighbors", "relations", "paths", "shortest_paths", "subgraph", "labels", "search", "query")
WEIGHTS = (20, 15, 15, 10, 10, 10, 10, 10)
_TRIPLE = re.compile(r'<([^>]*)> <([^>]*)> (?:<([^>]*)>|"((?:[^"\\]|\\.)*)"(?:@[\w-]+)?)')


@dataclass(frozen=True)
class Op:
    kind: str
    args: tuple[Any, ...]


class LocalGraph:
    """The file's entity edges and names, in compact Freebase ids."""

    def __init__(self, path: Path) -> None:
        self.out: dict[str, list[tuple[str, str]]] = defaultdict(list)
        self.into: dict[str, list[tuple[str, str]]] = defaultdict(list)
        self.names: dict[str, str] = {}
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                match = _TRIPLE.match(line)
                if match is None or not match[1].startswith(FB) or not match[2].startswith(FB):
                    continue
                head, relation = match[1][len(FB) :], match[2][len(FB) :]
                if match[3] is not None and match[3].startswith(FB):
                    tail = match[3][len(FB) :]
                    self.out[head].append((relation, tail))
                    self.into[tail].append((relation, head))
                elif match[2] == NAME and match[4] is not None and "\\" not in match[4]:
                    self.names[head] = match[4]

    def degree(self, node: str) -> int:
        return len(self.out.get(node, ())) + len(self.into.get(node, ()))


def build_workload(path: Path, count: int, *, seed: int = 0, max_degree: int = 60) -> list[Op]:
    """``count`` operations, mixed by :data:`WEIGHTS`, deterministic for a given file and seed."""
    graph = LocalGraph(path)
    rng = random.Random(seed)
    small = sorted(node for node in set(graph.out) | set(graph.into) if 0 < graph.degree(node) <= max_degree)
    walkable = [node for node in small if any(graph.degree(t) <= max_degree for _, t in graph.out.get(node, ()))]
    named = sorted(graph.names)
    ops: list[Op] = []
    while len(ops) < count:
        kind = rng.choices(KINDS, WEIGHTS)[0]
        node = rng.choice(small)
        if kind == "neighbors":
            ops.append(Op(kind, (node, rng.choice(("out", "in", "both")))))
        elif kind == "relations":
            ops.append(Op(kind, (tuple(rng.sample(small, 5)),)))
        elif kind == "labels":
            ops.append(Op(kind, (tuple(rng.sample(named, 10)),)))
        elif kind == "search":
            name = graph.names[rng.choice(named)]
            ops.append(Op(kind, (name if rng.random() < 0.7 else max(name.split(), key=len),)))
        elif kind == "query":
            ops.append(Op(kind, (f"SELECT ?r ?o WHERE {{ <{FB}{node}> ?r ?o FILTER(isIRI(?o)) }}",)))
        elif kind == "subgraph":
            ops.append(Op(kind, (node,)))
        else:
            start = rng.choice(walkable)
            relation, middle = rng.choice([(r, t) for r, t in graph.out[start] if graph.degree(t) <= max_degree])
            if kind == "shortest_paths":
                ops.append(Op(kind, (start, middle)))
                continue
            steps = graph.out.get(middle) or [(relation, start)]
            second, _ = rng.choice(steps)
            direction = "out" if graph.out.get(middle) else "in"
            ops.append(Op(kind, (start, (relation, second), ("out", direction))))
    return ops


def run_op(kg: Any, op: Op) -> object:
    """The answer of ``op`` on ``kg``, in a form that compares equal across runs."""
    args = op.args
    if op.kind == "neighbors":
        return kg.neighbors(args[0], direction=args[1])
    if op.kind == "relations":
        return kg.relations(list(args[0]), direction="both")
    if op.kind == "labels":
        return kg.labels(list(args[0]))
    if op.kind == "search":
        return kg.search(args[0], limit=5)
    if op.kind == "query":
        return sorted(repr(sorted(row.items())) for row in kg.query(args[0]))
    if op.kind == "subgraph":
        return _texts(kg.subgraph(args[0], hops=1))
    if op.kind == "shortest_paths":
        return _texts(kg.shortest_paths(args[0], args[1], max_hops=2))
    return _texts(kg.paths(args[0], list(args[1]), directions=list(args[2]), max_paths=500))


def _texts(result: Sequence[object]) -> tuple[list[str], bool]:
    return sorted(repr(item) for item in result), bool(getattr(result, "truncated", False))
