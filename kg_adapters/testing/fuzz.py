"""The hostile-input suite: one mixin every backend (and the cache wrapper) runs unchanged.

A backend's test module subclasses :class:`InjectionFuzz` and supplies one class-scoped fixture,
``fuzz_kg``: a :class:`KnowledgeGraph` opened on :data:`NTRIPLES` (write it with
:func:`write_fuzz_graph`). The graph holds a planted sentinel triple on a node without a name,
and entities named with nasty text. Hypothesis throws nasty strings (quotes, ``>``, ``}``,
newlines, ``#``, ``\\u`` escapes, NUL and control characters, lone surrogates, very long and empty
text, SPARQL keywords and injection payloads) into every id, relation, language-tag and
search-text slot of every operation. Each call must either answer correctly (nothing, for text
that names nothing in the graph) or raise :class:`InvalidTermError`; the sentinel never comes
back; the graph is unchanged afterwards.

Examples are drawn deterministically (the ``kga`` Hypothesis profile in ``tests/conftest.py``);
a backend whose calls are slow lowers ``fuzz_examples``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path as FilePath

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from kg_adapters.base import KnowledgeGraph, SparqlQueryable
from kg_adapters.errors import InvalidTermError, KGError
from kg_adapters.records import Edge, Entity, Literal, Path
from kg_adapters.sparql_terms import MAX_TERM_LENGTH

EX = "http://example.org/"
SECRET = EX + "secret"
HAS_SECRET = EX + "hasSecret"
SENTINEL = "SENTINEL-7f3a9c"
PERSON = EX + "person"
CITY = EX + "city"
BORN_IN = EX + "bornIn"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
RDFS_COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"

# Names made of the characters and keywords an injection would use; each must come back exactly.
NASTY_LABELS = (
    'O"Brien } UNION { ?s ?p ?o } #',
    "> } ; DROP ALL ; SELECT * WHERE { ?s ?p ?o } #",
    "back\\slash \\u0022 \\U0000003E",
    "two\nlines\r\tand a tab",
    "'; DROP TABLE labels; --",
    "NEAR(alpha beta) OR gamma*",
    "#hash @en ^^<x:y>",
    "Zo\u00eb \u6771\u4eac \U0001f680 \u2028",
)
NASTY_NAMED = tuple(f"{EX}nasty{i}" for i in range(len(NASTY_LABELS)))


def _nt_string(text: str) -> str:
    """``text`` as an N-Triples string literal (written here by hand, independent of the library)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return '"' + escaped.replace("\t", "\\t").replace("\u2028", "\\u2028") + '"'


NTRIPLES = (
    f'<{SECRET}> <{HAS_SECRET}> "{SENTINEL}" .\n'
    f"<{SECRET}> <{BORN_IN}> <{SECRET}> .\n"
    f"<{PERSON}> <{BORN_IN}> <{CITY}> .\n"
    f'<{PERSON}> <{RDFS_LABEL}> "Person" .\n'
    f'<{PERSON}> <{RDFS_LABEL}> "Personne"@fr .\n'
    f'<{PERSON}> <{RDFS_COMMENT}> "A person"@en .\n'
    f'<{CITY}> <{RDFS_LABEL}> "City"@en .\n'
    + "".join(
        f"<{node}> <{RDFS_LABEL}> {_nt_string(label)} .\n"
        for node, label in zip(NASTY_NAMED, NASTY_LABELS, strict=True)
    )
)
TRIPLE_COUNT = NTRIPLES.count("\n")
KNOWN_IRIS = {SECRET, HAS_SECRET, PERSON, CITY, BORN_IN, RDFS_LABEL, RDFS_COMMENT, *NASTY_NAMED}
LABELED = {PERSON, CITY, *NASTY_NAMED}
PERSON_LABELS = {"Person", "Personne"}


def write_fuzz_graph(directory: FilePath, name: str = "fuzz.nt") -> FilePath:
    """Writes the fuzz graph as UTF-8 N-Triples into ``directory``; returns the file."""
    path = FilePath(directory) / name
    path.write_text(NTRIPLES, encoding="utf-8")
    return path


# ---------------------------------------------------------------------------- strategies
PIECES = [
    '"',
    "'",
    '"""',
    ">",
    "<",
    "}",
    "{",
    "\n",
    "\r",
    "\t",
    "#",
    "\\",
    "\\u003E",
    "\\U0000003E",
    "\\u0022",
    "\\u005C",
    "%3E",
    "%",
    " ",
    ".",
    ";",
    ",",
    "^^",
    "@en",
    "?s",
    "?x",
    "*",
    "} UNION { ?s ?p ?o }",
    "} UNION { ?s ?p ?o",
    " . ?s ?p ?o . ",
    '" } UNION { ?s ?p ?o } #',
    "> } UNION { ?s ?p ?o } #",
    "> } ; DROP ALL ; SELECT * WHERE { ?s ?p ?o } #",
    ") } SELECT * WHERE { ?s ?p ?o",
    "FILTER(true)",
    "OPTIONAL",
    "VALUES",
    "DROP ALL",
    "INSERT DATA { <a:b> <a:b> <a:b> }",
    "http://example.org/",
    SECRET,
    "<" + SECRET + ">",
    "_:b0",
    "\x00",
    "\x01",
    "\x1b",
    "\x7f",
    "\ud800",
    "\udfff",
    "\u2028",
    "\ufeff",
    "\U0001f680",
    "Zo\u00eb",
    "\u6771\u4eac",
    "'; DROP TABLE labels; --",
    '" OR "1"="1',
    "NEAR(",
    "en",
]

pieces = st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=8).map("".join)
storable_pieces = pieces.filter(lambda text: not any("\ud800" <= char <= "\udfff" for char in text))
"""Pieces a store can hold as a literal (no lone surrogates)."""
# Text that is a well-formed IRI tail (RFC 3987 unreserved, sub-delims, ':', '@', '/', '?',
# valid percent-encodings, non-ASCII letters; no fragment): it passes validation and reaches the query.
_IRI_CHAR = st.sampled_from([*"abcXYZ019-._~!$&'()*+,;=:@/?", "%3E", "%22", "%7B", "\u00eb", "\u6771"])
_IRI_WORD = st.sampled_from(["DROP", "ALL", "SELECT", "UNION", "FILTER", "'", "';", "(", ")", "?s", "*"])
valid_iris = st.lists(_IRI_CHAR | _IRI_WORD, max_size=30).map(lambda parts: "http://example.org/" + "".join(parts))
"""Valid IRIs made of the characters and words an injection would use."""
nasty = st.one_of(
    pieces,
    valid_iris,
    pieces.map(lambda text: "http://example.org/" + text),
    pieces.map(lambda text: "a:" + text),
    st.text(max_size=40),
    st.just(""),
    st.integers(min_value=MAX_TERM_LENGTH - 30, max_value=MAX_TERM_LENGTH + 200).map(
        lambda n: "http://example.org/" + "x" * n
    ),
)
"""Text for an id, relation or language-tag slot."""


def _person_both() -> list[Edge]:
    return [
        Edge(head=PERSON, relation=BORN_IN, tail=CITY),
        Edge(head=PERSON, relation=RDFS_COMMENT, tail=Literal(value="A person", lang="en")),
        Edge(head=PERSON, relation=RDFS_LABEL, tail=Literal(value="Person")),
        Edge(head=PERSON, relation=RDFS_LABEL, tail=Literal(value="Personne", lang="fr")),
    ]


def calls_with(kg: KnowledgeGraph, bad: str) -> dict[str, tuple[Callable[[], object], object]]:
    """Each operation with ``bad`` in an id, relation or language slot, and its correct answer
    when ``bad`` names nothing in the graph."""
    return {
        "neighbors": (lambda: kg.neighbors(bad), {bad: []}),
        "neighbors-both": (lambda: kg.neighbors([PERSON, bad], direction="both"), {PERSON: _person_both(), bad: []}),
        "neighbors-relation": (lambda: kg.neighbors(PERSON, relations=[bad]), {PERSON: []}),
        "neighbors-relation-in": (
            lambda: kg.neighbors(CITY, direction="in", relations=[bad, BORN_IN]),
            {CITY: [Edge(head=PERSON, relation=BORN_IN, tail=CITY)]},
        ),
        "relations": (lambda: kg.relations(bad, direction="both"), {bad: []}),
        "labels": (lambda: kg.labels(bad), {}),
        "labels-lang": (lambda: kg.labels(PERSON, lang=bad), "person-label"),
        "labels-lang-list": (lambda: kg.labels(CITY, lang=[bad, "en"]), {CITY: "City"}),
        "describe": (lambda: kg.describe(bad), {bad: Entity(id=bad)}),
        "describe-lang": (lambda: kg.describe(PERSON, lang=bad), "person-entity"),
        "paths-start": (lambda: list(kg.paths(bad, [BORN_IN])), []),
        "paths-relation": (lambda: list(kg.paths(PERSON, [bad])), []),
        "paths-relation-both": (lambda: list(kg.paths(CITY, [bad], directions=["both"])), []),
        "shortest-source": (lambda: list(kg.shortest_paths(bad, CITY)), []),
        "shortest-target": (lambda: list(kg.shortest_paths(PERSON, bad)), []),
        "subgraph-seed": (lambda: list(kg.subgraph(bad, hops=1)), []),
        "subgraph-relation": (lambda: list(kg.subgraph(PERSON, hops=2, relations=[bad])), []),
    }


def leaves(value: object) -> list[object]:
    """Every id, relation and literal text inside an answer."""
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in (*leaves(key), *leaves(item))]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in leaves(item)]
    if isinstance(value, Edge):
        return [value.head, value.relation, *leaves(value.tail)]
    if isinstance(value, Path):
        return [value.start, *leaves(value.edges)]
    if isinstance(value, Entity):
        return [value.id, value.label, value.description]
    if isinstance(value, Literal):
        return [value.value]
    return [value]


def check_answer(name: str, answer: object, wanted: object, bad: str) -> None:
    """``answer`` is the correct one and reveals nothing of the secret node."""
    found = leaves(answer)
    assert SENTINEL not in found and HAS_SECRET not in found, f"{name} revealed the sentinel for {bad!r}"
    assert SECRET not in found, f"{name} revealed the secret node for {bad!r}"
    if wanted == "person-label":
        assert isinstance(answer, dict) and set(answer) == {PERSON} and answer[PERSON] in PERSON_LABELS, name
    elif wanted == "person-entity":
        assert isinstance(answer, dict) and set(answer) == {PERSON}, name
        entity = answer[PERSON]
        assert isinstance(entity, Entity) and entity.label in PERSON_LABELS and entity.description == "A person", name
    else:
        assert answer == wanted, f"{name}({bad!r})"


WELL_FORMED_UNKNOWN = "http://example.org/nobody"
"""A valid IRI the graph does not hold: every id or relation slot must answer it (with nothing)."""


def run_calls(kg: KnowledgeGraph, bad: str) -> Counter[str]:
    """The contract: every call answers correctly or raises InvalidTermError (no other error).
    Returns how many calls were ``answered`` and ``refused``."""
    outcomes: Counter[str] = Counter()
    for name, (call, wanted) in calls_with(kg, bad).items():
        try:
            answer = call()
        except InvalidTermError:
            outcomes["refused"] += 1
            continue
        except KGError as exc:
            raise AssertionError(f"{name}({bad!r}) raised {type(exc).__name__}, not InvalidTermError: {exc}") from exc
        check_answer(name, answer, wanted, bad)
        outcomes["answered"] += 1
    return outcomes


def check_search(kg: KnowledgeGraph, text: str) -> str:
    """Search text is only ever matched: named entities come back (never the unnamed secret), or
    InvalidTermError. Returns ``answered`` or ``refused``."""
    try:
        answer = kg.search(text)
    except InvalidTermError:
        return "refused"
    assert isinstance(answer, list)
    assert all(isinstance(found, Entity) and found.id in LABELED for found in answer), answer
    assert SENTINEL not in leaves(answer)
    if text.strip().lower() == "person":
        assert answer == [Entity(id=PERSON, label="Person")]
    return "answered"


def triple_count(kg: KnowledgeGraph) -> int | None:
    """The graph's size through the raw escape hatch (None when the backend has none)."""
    if not isinstance(kg, SparqlQueryable):
        return None
    (row,) = kg.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
    value = row["n"]
    assert isinstance(value, Literal)
    return int(value.value)


class InjectionFuzz:
    """Mix into a test class that provides a class-scoped ``fuzz_kg`` fixture on :data:`NTRIPLES`."""

    fuzz_examples = 150
    """Examples per property test; lowered for backends where each call is an HTTP round trip."""

    def test_fuzz_graph_is_loaded(self, fuzz_kg: KnowledgeGraph) -> None:
        assert fuzz_kg.neighbors(SECRET, relations=[HAS_SECRET]) == {
            SECRET: [Edge(head=SECRET, relation=HAS_SECRET, tail=Literal(value=SENTINEL))]
        }
        assert triple_count(fuzz_kg) in (None, TRIPLE_COUNT)

    def test_every_call_answers_or_raises_invalid_term_error(self, fuzz_kg: KnowledgeGraph) -> None:
        @settings(max_examples=self.fuzz_examples)
        @given(bad=nasty)
        @example(bad="http://example.org/x> } UNION { ?s ?p ?o } #")
        @example(bad="http://example.org/x> } ; DROP ALL ; SELECT * WHERE { ?s ?p ?o } #")
        @example(bad='x" } UNION { ?s ?p ?o } #')
        @example(bad="http://example.org/x\\u003E } UNION { ?s ?p ?o")
        @example(bad="http://example.org/a#} UNION {")
        @example(bad="http://example.org/\ud800")
        @example(bad="http://example.org/a\x00b")
        @example(bad="en\x00")
        @example(bad="")
        @example(bad="_:b0")
        @example(bad=WELL_FORMED_UNKNOWN)
        @example(bad="http://example.org/" + "x" * 5000)
        def run(bad: str) -> None:
            assume(bad not in KNOWN_IRIS)
            outcomes = run_calls(fuzz_kg, bad)
            if bad == WELL_FORMED_UNKNOWN:  # a backend refusing everything fails here
                assert outcomes["answered"] > 0, outcomes

        run()
        assert triple_count(fuzz_kg) in (None, TRIPLE_COUNT), "the graph changed"

    def test_search_text_is_only_ever_matched(self, fuzz_kg: KnowledgeGraph) -> None:
        @settings(max_examples=self.fuzz_examples)
        @given(text=nasty)
        @example(text="person")
        @example(text="0_0")
        @example(text='" OR "1"="1')
        @example(text="NEAR(person city)")
        @example(text="person*")
        @example(text="\ud800person")
        @example(text="\x00")
        @example(text="x" * 100_000)
        def run(text: str) -> None:
            outcome = check_search(fuzz_kg, text)
            if text == "person":
                assert outcome == "answered"

        run()

    def test_nasty_names_come_back_exactly(self, fuzz_kg: KnowledgeGraph) -> None:
        assert fuzz_kg.labels(list(NASTY_NAMED)) == dict(zip(NASTY_NAMED, NASTY_LABELS, strict=True))
        described = fuzz_kg.describe(list(NASTY_NAMED))
        assert {node: entity.label for node, entity in described.items()} == dict(
            zip(NASTY_NAMED, NASTY_LABELS, strict=True)
        )
        for node, label in zip(NASTY_NAMED, NASTY_LABELS, strict=True):
            assert fuzz_kg.search(label)[:1] == [Entity(id=node, label=label)], label
