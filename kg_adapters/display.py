"""Records as text for people and prompts: RoG's ``e0 -> r1 -> e1`` path text, shared by ``kga paths``
and the reasoners (which import it from here, so the core never imports them)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from kg_adapters.records import Literal, Node, Path

XSD = "http://www.w3.org/2001/XMLSchema#"
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)")
_DOUBLE = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_BOOLEAN = re.compile(r"true|false")
_BARE = {
    **{
        XSD + name: _INTEGER
        for name in (
            *("integer", "int", "long", "short", "byte"),
            *("nonNegativeInteger", "positiveInteger", "nonPositiveInteger", "negativeInteger"),
            *("unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte"),
        )
    },
    XSD + "decimal": _DECIMAL,
    XSD + "double": _DOUBLE,
    XSD + "float": _DOUBLE,
    XSD + "boolean": _BOOLEAN,
}
"""Datatypes whose values read unambiguously without quotes (numbers and booleans, as Turtle writes
them), with the spelling a value must have to be written so: anything else (``"12 apples"`` typed as
an integer, ``NaN``, a boolean ``1``) keeps its quotes and datatype."""


def node_text(node: Node, names: Mapping[str, str]) -> str:
    """A node's name where known, else its id; a literal's value."""
    if isinstance(node, Literal):
        return node.value
    return names.get(node, node)


def literal_text(literal: Literal) -> str:
    """A literal as people read it, in Turtle's spelling: numbers and booleans bare (``2085``,
    ``true``), text quoted (``"Tom Hanks"@en``), other datatypes compacted (``"1956-07-09"^^xsd:date``)."""
    bare = _BARE.get(literal.datatype or "")
    if bare is not None and bare.fullmatch(literal.value):
        return literal.value
    text = json.dumps(literal.value, ensure_ascii=False)
    if literal.lang:
        return f"{text}@{literal.lang}"
    if literal.datatype and literal.datatype != XSD + "string":
        datatype = literal.datatype
        return f"{text}^^xsd:{datatype[len(XSD) :]}" if datatype.startswith(XSD) else f"{text}^^<{datatype}>"
    return text


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
