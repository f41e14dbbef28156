"""kg-adapters: one fast, reliable interface from LLM+KG reasoners to knowledge graphs.

>>> from kg_adapters import connect
>>> kg = connect("oxigraph://")            # in-memory store; "oxigraph:///abs/dir" for one on disk
"""

from __future__ import annotations

from kg_adapters._version import __version__
from kg_adapters.base import Direction, KnowledgeGraph, SparqlQueryable, WritableGraph
from kg_adapters.errors import KGError
from kg_adapters.profiles import RelationFilter
from kg_adapters.records import Edge, EdgeList, Entity, Literal, Path, PathResult
from kg_adapters.registry import connect, register

__all__ = [
    "Direction",
    "Edge",
    "EdgeList",
    "Entity",
    "KGError",
    "KnowledgeGraph",
    "Literal",
    "Path",
    "PathResult",
    "RelationFilter",
    "SparqlQueryable",
    "WritableGraph",
    "__version__",
    "connect",
    "register",
]
