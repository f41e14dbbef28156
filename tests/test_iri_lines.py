"""The numpy split of N-Triples IRI-to-IRI lines (kg_adapters/index/iri_lines.py) against Oxigraph's
own parser: the collector numbers exactly the triples Oxigraph reads, whatever the lines look like."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox
import pytest

from kg_adapters.index.build import TripleCollector
from kg_adapters.index.iri_lines import WIDEST_IRI, split_iri_lines

LONG = "http://example.org/" + "x" * (WIDEST_IRI + 40)
TEXTS = {
    "plain": b"<http://e/a> <http://e/p> <http://e/b> .\n<http://e/a> <http://e/q> <http://e/c> .\n",
    "no final line break": b"<http://e/a> <http://e/p> <http://e/b> .\n<http://e/b> <http://e/p> <http://e/a> .",
    "literals among them": (
        b'<http://e/a> <http://e/name> "A> <b" .\n<http://e/a> <http://e/p> <http://e/b> .\n'
        b'<http://e/a> <http://e/n> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
        b'<http://e/a> <http://e/n> "01"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
        b'<http://e/b> <http://e/name> "x> <y"@en .\n'
    ),
    "escapes": b"<http://e/a\\u0041> <http://e/p> <http://e/b> .\n<http://e/a> <http://e/p> <http://e/b\\u00E9> .\n",
    "blank nodes and comments": (
        b"# a comment\n_:x <http://e/p> <http://e/b> .\n<http://e/a> <http://e/p> _:x .\n"
        b"<http://e/a> <http://e/p> <http://e/b> . # trailing\n\n"
    ),
    "odd spacing and CRLF": (
        b"<http://e/a>  <http://e/p> <http://e/b> .\n<http://e/a>\t<http://e/p>\t<http://e/c> .\n"
        b"<http://e/a> <http://e/p> <http://e/d> .\r\n<http://e/a> <http://e/p> <http://e/e>.\n"
    ),
    "an IRI wider than the rows": (
        f"<{LONG}> <http://e/p> <http://e/b> .\n<http://e/b> <http://e/p> <{LONG}> .\n"
        "<http://e/b> <http://e/p> <http://e/c> .\n"
    ).encode(),
    "non-ASCII IRIs": (
        "<http://e/é> <http://e/p> <http://e/日本> .\n<http://e/日本> <http://e/p> <http://e/é> .\n"
    ).encode(),
    "repeats": b"".join(
        b"<http://e/s%d> <http://e/p%d> <http://e/o%d> .\n" % (i // 3, i % 2, i % 5) for i in range(300)
    ),
    "only literals": b'<http://e/a> <http://e/name> "A" .\n<http://e/b> <http://e/name> "B"@en .\n',
    "empty": b"",
}


def _collected(text: bytes) -> tuple[set[tuple[str, str, str]], set[tuple[str, str, str, bytes]], int]:
    collector = TripleCollector()
    collector.add_rdf(text, ox.RdfFormat.N_TRIPLES)
    collector.check()
    entities, relations = collector.iris()
    heads, rels, tails = collector.edges()
    edges = {
        (entities[h], relations[r], entities[t])
        for h, r, t in zip(heads.tolist(), rels.tolist(), tails.tolist(), strict=True)
    }
    literals = {(entities[e], relations[r], value.decode(), tag) for e, r, value, tag in collector.literal_rows()}
    return edges, literals, collector.blank_edges()


@pytest.mark.parametrize("name", list(TEXTS))
def test_the_collector_numbers_what_oxigraph_reads(name: str) -> None:
    text = TEXTS[name]
    store = ox.Store()
    store.load(text, ox.RdfFormat.N_TRIPLES)
    expected_edges = {
        (q.subject.value, q.predicate.value, q.object.value)
        for q in store
        if type(q.subject) is ox.NamedNode and type(q.object) is ox.NamedNode
    }
    edges, literals, blanks = _collected(text)
    assert edges == expected_edges
    assert {(s, p, v) for s, p, v, _ in literals} == {
        (q.subject.value, q.predicate.value, q.object.value)
        for q in store
        if type(q.subject) is ox.NamedNode and type(q.object) is ox.Literal
    }
    assert blanks == sum(1 for q in store if type(q.subject) is ox.BlankNode or type(q.object) is ox.BlankNode)


def test_only_simple_lines_are_split_and_each_chunk_names_an_iri_once() -> None:
    text = TEXTS["repeats"] + TEXTS["literals among them"] + TEXTS["escapes"] + TEXTS["an IRI wider than the rows"]
    lines = split_iri_lines(text)
    assert lines is not None
    assert lines.count == 300 + 1 + 1  # the repeats, one plain line among the literals, the short long-file line
    assert len(lines.entities.values) == len(set(lines.entities.values))
    assert len(lines.relations.values) == len(set(lines.relations.values))
    assert lines.entities.which.size == 2 * lines.count
    assert lines.long.count(b"\n") == 2  # the two lines with the wide IRI, split the old way
    assert b"\\u0041" in lines.rest and b'"A> <b"' in lines.rest  # escapes and literals: left to the others


def test_chunks_number_an_iri_seen_before_the_same() -> None:
    collector = TripleCollector()
    collector.add_rdf(b"<http://e/a> <http://e/p> <http://e/b> .\n", ox.RdfFormat.N_TRIPLES)
    collector.add_rdf(b"<http://e/b> <http://e/p> <http://e/a> .\n", ox.RdfFormat.N_TRIPLES)
    entities, _ = collector.iris()
    heads, _, tails = collector.edges()
    assert entities == ["http://e/a", "http://e/b"]
    assert heads.tolist() == [0, 1] and tails.tolist() == [1, 0]


def test_two_iris_with_one_id_are_refused_and_literals_keep_their_answer_order(tmp_path: Path) -> None:
    """The index numbers entities by id: a profile that spells two IRIs alike cannot be indexed (a clear
    error, no index); several literals of one entity and relation are stored in text, then tag order."""
    from kg_adapters.errors import BackendError
    from kg_adapters.index.build import build_index
    from kg_adapters.index.layout import INDEX_DIR
    from kg_adapters.profiles import get_profile

    class Folding(type(get_profile("generic"))):  # type: ignore[misc]
        def entity_id(self, iri: str) -> str:
            return iri.lower()

    text = (
        b'<http://x/A> <http://x/p> "b"@en .\n<http://x/A> <http://x/p> "a" .\n'
        b'<http://x/A> <http://x/p> "b" .\n<http://x/A> <http://x/p> "a"@de .\n'
        b"<http://x/A> <http://x/q> <http://x/a> .\n"
    )
    collector = TripleCollector()
    collector.add_rdf(text, ox.RdfFormat.N_TRIPLES)
    with pytest.raises(BackendError, match="share the id 'http://x/a'"):
        build_index(None, tmp_path, Folding(), collected=collector)
    assert not (tmp_path / INDEX_DIR).exists()
    distinct = TripleCollector()
    distinct.add_rdf(text.replace(b"<http://x/a>", b"<http://x/B>"), ox.RdfFormat.N_TRIPLES)
    build_index(None, tmp_path, get_profile("generic"), collected=distinct)
    values = (tmp_path / INDEX_DIR / "literals.bin").read_bytes()
    assert values == b"aabb"
    tags = json.loads((tmp_path / INDEX_DIR / "meta.json").read_text())["literal_tags"]
    assert tags == ["", "@de", "@en"]
