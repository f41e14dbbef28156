"""The shared conformance graph: N-Triples text, the ids it uses, and a helper to write it.

Every backend loads exactly this graph and must give exactly the answers that ``suite.py``
writes out by hand. Its shape (generic profile, full IRIs under ``http://example.org/``)::

    a --r1--> b      a --r2--> b      a --r3--> b      (three edges between one pair)
    b --r3--> a                                         (inverse edges a r1 b / b r3 a)
    a --r1--> b --r1--> c --r1--> a                     (a cycle)
    b --r2--> d      c --r2--> d      x --r3--> d       (d has only incoming edges, no name)
    s --r4--> s                                         (a self-loop)
    a: age 42 (xsd:integer), born 2000-01-02 (xsd:date), note "shared note"
    s: note "shared note"                               (only a literal links a and s)
    iso, f, g, q1..q4: names only (iso is the designated isolated named node)

Names (rdfs:label) exercise the language preference (en > en-GB > untagged > other), unicode
("Zoë", "東京", an emoji) and quote/backslash/newline characters.
"""

from __future__ import annotations

from pathlib import Path

from kg_adapters.records import Edge, Literal

EX = "http://example.org/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_INTEGER = XSD + "integer"
XSD_DATE = XSD + "date"

# Entities.
A = EX + "a"
B = EX + "b"
C = EX + "c"
D = EX + "d"
S = EX + "s"
X = EX + "x"
ISO = EX + "iso"
F = EX + "f"
G = EX + "g"
Q1 = EX + "q1"
Q2 = EX + "q2"
Q3 = EX + "q3"
Q4 = EX + "q4"
UNKNOWN = EX + "no-such-entity"

# Relations.
R1 = EX + "r1"
R2 = EX + "r2"
R3 = EX + "r3"
R4 = EX + "r4"
AGE = EX + "age"
BORN = EX + "born"
NOTE = EX + "note"
UNKNOWN_RELATION = EX + "no-such-relation"

ALL_ENTITIES = (A, B, C, D, S, X, ISO, F, G, Q1, Q2, Q3, Q4)

# The label values exactly as Python strings (what the N-Triples below must decode to).
QUOTE_LABEL = 'O"Brien'
BACKSLASH_LABEL = "back\\slash"
NEWLINE_LABEL = "two\nlines"
EMOJI_LABEL = "Rocket \U0001f680"
ZOE_LABEL = "Zo\u00eb"
TOKYO_LABEL = "\u6771\u4eac"

NTRIPLES = r"""# kg-adapters conformance graph
<http://example.org/a> <http://example.org/r1> <http://example.org/b> .
<http://example.org/a> <http://example.org/r2> <http://example.org/b> .
<http://example.org/a> <http://example.org/r3> <http://example.org/b> .
<http://example.org/b> <http://example.org/r3> <http://example.org/a> .
<http://example.org/b> <http://example.org/r1> <http://example.org/c> .
<http://example.org/c> <http://example.org/r1> <http://example.org/a> .
<http://example.org/b> <http://example.org/r2> <http://example.org/d> .
<http://example.org/c> <http://example.org/r2> <http://example.org/d> .
<http://example.org/x> <http://example.org/r3> <http://example.org/d> .
<http://example.org/s> <http://example.org/r4> <http://example.org/s> .
<http://example.org/a> <http://example.org/age> "42"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://example.org/a> <http://example.org/born> "2000-01-02"^^<http://www.w3.org/2001/XMLSchema#date> .
<http://example.org/a> <http://example.org/note> "shared note" .
<http://example.org/s> <http://example.org/note> "shared note" .
<http://example.org/a> <http://www.w3.org/2000/01/rdf-schema#label> "Alpha"@en .
<http://example.org/a> <http://www.w3.org/2000/01/rdf-schema#label> "Alpha (UK)"@en-GB .
<http://example.org/a> <http://www.w3.org/2000/01/rdf-schema#label> "Alpha plain" .
<http://example.org/a> <http://www.w3.org/2000/01/rdf-schema#label> "Alphe"@fr .
<http://example.org/b> <http://www.w3.org/2000/01/rdf-schema#label> "Bravo (UK)"@en-GB .
<http://example.org/b> <http://www.w3.org/2000/01/rdf-schema#label> "Bravo plain" .
<http://example.org/b> <http://www.w3.org/2000/01/rdf-schema#label> "Bravo"@fr .
<http://example.org/c> <http://www.w3.org/2000/01/rdf-schema#label> "Charlie plain" .
<http://example.org/c> <http://www.w3.org/2000/01/rdf-schema#label> "Charlie"@fr .
<http://example.org/x> <http://www.w3.org/2000/01/rdf-schema#label> "Xavier"@fr .
<http://example.org/s> <http://www.w3.org/2000/01/rdf-schema#label> "Zoë"@en .
<http://example.org/iso> <http://www.w3.org/2000/01/rdf-schema#label> "東京"@ja .
<http://example.org/f> <http://www.w3.org/2000/01/rdf-schema#label> "Alpha Centauri"@en .
<http://example.org/g> <http://www.w3.org/2000/01/rdf-schema#label> "Big Alpha"@en .
<http://example.org/q1> <http://www.w3.org/2000/01/rdf-schema#label> "O\"Brien" .
<http://example.org/q2> <http://www.w3.org/2000/01/rdf-schema#label> "back\\slash" .
<http://example.org/q3> <http://www.w3.org/2000/01/rdf-schema#label> "two\nlines" .
<http://example.org/q4> <http://www.w3.org/2000/01/rdf-schema#label> "Rocket 🚀"@en .
"""

TRIPLE_COUNT = sum(1 for line in NTRIPLES.splitlines() if line and not line.startswith("#"))


def e(head: str, relation: str, tail: str | Literal) -> Edge:
    """Shorthand for an expected edge."""
    return Edge(head=head, relation=relation, tail=tail)


def lit(value: str, *, datatype: str | None = None, lang: str | None = None) -> Literal:
    return Literal(value=value, datatype=datatype, lang=lang)


def write_graph(directory: Path, name: str = "conformance.nt") -> Path:
    """Writes the shared graph as UTF-8 N-Triples into ``directory``; returns the file."""
    path = Path(directory) / name
    path.write_text(NTRIPLES, encoding="utf-8")
    return path


# A small Freebase-shaped graph for the ``profile=freebase`` compact-id tests.
FB = "http://rdf.freebase.com/ns/"
_FB_TRIPLES = [
    ("m.01", "people.person.place_of_birth", "<{fb}m.02>"),
    ("m.02", "location.location.containedby", "<{fb}m.03>"),
    ("m.03", "film.film.release_date_s..film.film_regional_release_date.film_release_region", "<{fb}m.01>"),
    ("m.01", "type.object.name", '"Ada Lovelace"@en'),
    ("m.02", "type.object.name", '"London"@en'),
    ("m.03", "type.object.name", '"England"@en'),
]
FREEBASE_NTRIPLES = (
    "".join(f"<{FB}{head}> <{FB}{relation}> {tail.format(fb=FB)} .\n" for head, relation, tail in _FB_TRIPLES)
    + f"<{FB}m.02> <http://example.org/sameAs> <http://example.org/london> .\n"
)


def write_freebase_graph(directory: Path, name: str = "freebase-mini.nt") -> Path:
    path = Path(directory) / name
    path.write_text(FREEBASE_NTRIPLES, encoding="utf-8")
    return path


# A graph whose walks pass through a blank node (blank node ids differ between backends).
BLANK_NTRIPLES = """<http://example.org/bn/a> <http://example.org/bn/r> _:b1 .
_:b1 <http://example.org/bn/r2> <http://example.org/bn/c> .
<http://example.org/bn/a> <http://example.org/bn/r3> <http://example.org/bn/c> .
"""


def write_blank_graph(directory: Path, name: str = "blank.nt") -> Path:
    path = Path(directory) / name
    path.write_text(BLANK_NTRIPLES, encoding="utf-8")
    return path
