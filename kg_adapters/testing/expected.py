"""The conformance suite's expected answers, written out by hand from the picture in ``graph.py``: each
entity's 1-hop edges in the documented order (head, relation, tail; entities before literals), its relations,
its English names, and the malformed ids every operation must refuse.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kg_adapters.base import KnowledgeGraph
from kg_adapters.records import Edge

from .graph import (
    AGE,
    BACKSLASH_LABEL,
    BORN,
    EMOJI_LABEL,
    ISO,
    NEWLINE_LABEL,
    NOTE,
    Q1,
    Q2,
    Q3,
    Q4,
    QUOTE_LABEL,
    R1,
    R2,
    R3,
    R4,
    RDFS_LABEL,
    TOKYO_LABEL,
    UNKNOWN,
    XSD_DATE,
    XSD_INTEGER,
    ZOE_LABEL,
    A,
    B,
    C,
    D,
    F,
    G,
    S,
    X,
    e,
    lit,
)

# --------------------------------------------------------------------------------------------
# Expected 1-hop edges, in the documented order (head, relation, tail; entities before literals).
# --------------------------------------------------------------------------------------------
A_OUT = [
    e(A, AGE, lit("42", datatype=XSD_INTEGER)),
    e(A, BORN, lit("2000-01-02", datatype=XSD_DATE)),
    e(A, NOTE, lit("shared note")),
    e(A, R1, B),
    e(A, R2, B),
    e(A, R3, B),
    e(A, RDFS_LABEL, lit("Alpha", lang="en")),
    e(A, RDFS_LABEL, lit("Alpha (UK)", lang="en-gb")),
    e(A, RDFS_LABEL, lit("Alpha plain")),
    e(A, RDFS_LABEL, lit("Alphe", lang="fr")),
]
A_IN = [e(B, R3, A), e(C, R1, A)]
A_BOTH = A_OUT + A_IN

B_OUT = [
    e(B, R1, C),
    e(B, R2, D),
    e(B, R3, A),
    e(B, RDFS_LABEL, lit("Bravo", lang="fr")),
    e(B, RDFS_LABEL, lit("Bravo (UK)", lang="en-gb")),
    e(B, RDFS_LABEL, lit("Bravo plain")),
]
B_IN = [e(A, R1, B), e(A, R2, B), e(A, R3, B)]
B_BOTH = B_IN + B_OUT

C_OUT = [
    e(C, R1, A),
    e(C, R2, D),
    e(C, RDFS_LABEL, lit("Charlie", lang="fr")),
    e(C, RDFS_LABEL, lit("Charlie plain")),
]
C_IN = [e(B, R1, C)]
C_BOTH = C_IN + C_OUT

D_OUT: list[Edge] = []
D_IN = [e(B, R2, D), e(C, R2, D), e(X, R3, D)]
D_BOTH = D_IN

S_OUT = [e(S, NOTE, lit("shared note")), e(S, R4, S), e(S, RDFS_LABEL, lit(ZOE_LABEL, lang="en"))]
S_IN = [e(S, R4, S)]
S_BOTH = S_OUT  # the self-loop appears once

X_OUT = [e(X, R3, D), e(X, RDFS_LABEL, lit("Xavier", lang="fr"))]
X_IN: list[Edge] = []

ISO_OUT = [e(ISO, RDFS_LABEL, lit(TOKYO_LABEL, lang="ja"))]
ISO_IN: list[Edge] = []

NEIGHBORS = {
    (A, "out"): A_OUT,
    (A, "in"): A_IN,
    (A, "both"): A_BOTH,
    (B, "out"): B_OUT,
    (B, "in"): B_IN,
    (B, "both"): B_BOTH,
    (C, "out"): C_OUT,
    (C, "in"): C_IN,
    (C, "both"): C_BOTH,
    (D, "out"): D_OUT,
    (D, "in"): D_IN,
    (D, "both"): D_BOTH,
    (S, "out"): S_OUT,
    (S, "in"): S_IN,
    (S, "both"): S_BOTH,
    (X, "out"): X_OUT,
    (X, "in"): X_IN,
    (X, "both"): X_OUT,
    (ISO, "out"): ISO_OUT,
    (ISO, "in"): ISO_IN,
    (ISO, "both"): ISO_OUT,
    (UNKNOWN, "out"): [],
    (UNKNOWN, "in"): [],
    (UNKNOWN, "both"): [],
}

RELATIONS = {
    (A, "out"): [AGE, BORN, NOTE, R1, R2, R3, RDFS_LABEL],
    (A, "in"): [R1, R3],
    (A, "both"): [AGE, BORN, NOTE, R1, R2, R3, RDFS_LABEL],
    (B, "out"): [R1, R2, R3, RDFS_LABEL],
    (B, "in"): [R1, R2, R3],
    (B, "both"): [R1, R2, R3, RDFS_LABEL],
    (C, "out"): [R1, R2, RDFS_LABEL],
    (C, "in"): [R1],
    (C, "both"): [R1, R2, RDFS_LABEL],
    (D, "out"): [],
    (D, "in"): [R2, R3],
    (D, "both"): [R2, R3],
    (S, "out"): [NOTE, R4, RDFS_LABEL],
    (S, "in"): [R4],
    (S, "both"): [NOTE, R4, RDFS_LABEL],
    (ISO, "out"): [RDFS_LABEL],
    (ISO, "in"): [],
    (ISO, "both"): [RDFS_LABEL],
    (UNKNOWN, "out"): [],
    (UNKNOWN, "in"): [],
    (UNKNOWN, "both"): [],
}

LABELS_EN = {
    A: "Alpha",  # exact language
    B: "Bravo (UK)",  # a regional variant of en beats untagged and other languages
    C: "Charlie plain",  # untagged beats another language
    S: ZOE_LABEL,
    X: "Xavier",  # only another language: still a name
    ISO: TOKYO_LABEL,
    F: "Alpha Centauri",
    G: "Big Alpha",
    Q1: QUOTE_LABEL,
    Q2: BACKSLASH_LABEL,
    Q3: NEWLINE_LABEL,
    Q4: EMOJI_LABEL,
}  # D has no name: omitted

# Malformed ids/relations: every operation must raise InvalidTermError for each.
MALFORMED = [
    "http://x> <y",
    "no scheme",
    "",
    "_:",  # blank node ids are addressable (``_:label``), but this one has no label
    "_:a b",
    "http://example.org/a b",
    "http://example.org/{x}",
    'http://example.org/"q"',
    "http://example.org/a\nb",
    "http://example.org/a\\u003E",
    "relative/path",
    "http://example.org/" + "x" * 5000,
]
NON_STRINGS: list[Any] = [42, None, 3.5, b"http://example.org/a", object()]

# ``op(kg, bad)`` puts ``bad`` where an id or a relation goes.
OPERATIONS: dict[str, Callable[[KnowledgeGraph, Any], object]] = {
    "neighbors": lambda kg, bad: kg.neighbors(bad),
    "neighbors-batch": lambda kg, bad: kg.neighbors([A, bad]),
    "neighbors-relation": lambda kg, bad: kg.neighbors(A, relations=[bad]),
    "neighbors-in": lambda kg, bad: kg.neighbors(bad, direction="in"),
    "relations": lambda kg, bad: kg.relations(bad),
    "relations-batch": lambda kg, bad: kg.relations([A, bad], direction="both"),
    "paths-start": lambda kg, bad: kg.paths(bad, [R1]),
    "paths-relation": lambda kg, bad: kg.paths(A, [bad]),
    "paths-second-relation": lambda kg, bad: kg.paths(A, [R1, bad]),
    "shortest-source": lambda kg, bad: kg.shortest_paths(bad, D),
    "shortest-target": lambda kg, bad: kg.shortest_paths(A, bad),
    "subgraph-seed": lambda kg, bad: kg.subgraph(bad),
    "subgraph-relation": lambda kg, bad: kg.subgraph(A, relations=[bad]),
    "labels": lambda kg, bad: kg.labels(bad),
    "labels-batch": lambda kg, bad: kg.labels([A, bad]),
}
