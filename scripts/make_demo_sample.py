"""Regenerates kg_adapters/data/fb15k237-sample.nt.gz, the slice of FB15k-237 that `make demo` loads.

The slice: every out-edge of a few well-known seed entities, the 2-hop neighbourhoods along the
demo's relation paths, and the English name of every entity that appears. Run from the repo root:
    .venv/bin/python scripts/make_demo_sample.py ../shared/data/fb15k237-freebase.nt.gz
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

from kg_adapters import Edge, Literal, connect
from reasoning.demo import DEMO_QUESTIONS

NS = "http://rdf.freebase.com/ns/"
EXTRA_SEEDS = ("m.016ywr", "m.0m63c", "m.02mjmr", "m.05qtj")  # Jeremy Irons, The Lion King, Obama, Paris
OUT = Path(__file__).resolve().parents[1] / "kg_adapters" / "data" / "fb15k237-sample.nt.gz"


def nt(edge: Edge) -> str:
    tail = edge.tail
    if isinstance(tail, Literal):
        text = tail.value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        obj = f'"{text}"@{tail.lang}' if tail.lang else f'"{text}"'
    else:
        obj = f"<{NS}{tail}>"
    return f"<{NS}{edge.head}> <{NS}{edge.relation}> {obj} .\n"


def main(source: str) -> None:
    kg = connect("oxigraph://?profile=freebase")
    kg.load(source)  # type: ignore[attr-defined]
    edges: set[Edge] = set()
    seeds = sorted({q.topic for q in DEMO_QUESTIONS} | set(EXTRA_SEEDS))
    for edge_list in kg.neighbors(seeds, direction="out", literals=False).values():
        edges.update(edge_list)
    reached: set[str] = set()
    for question in DEMO_QUESTIONS:
        for path in kg.paths(question.topic, question.relation_path, directions=question.directions):
            edges.update(path.edges)
            reached.update(node for node in path.entities if isinstance(node, str))
    for edge_list in kg.neighbors(sorted(reached), direction="out", literals=False, limit_per_entity=15).values():
        edges.update(edge_list)
    entities = {e.head for e in edges} | {e.tail for e in edges if isinstance(e.tail, str)}
    for edge_list in kg.neighbors(sorted(entities), relations=["type.object.name"]).values():
        edges.update(edge_list)
    lines = sorted(nt(edge) for edge in edges)
    with gzip.GzipFile(OUT, "wb", mtime=0) as handle:
        handle.write("".join(lines).encode("utf-8"))
    print(f"wrote {len(lines)} triples about {len(entities)} entities to {OUT}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/fb15k237-freebase.nt.gz")
