"""The bundled FB15k-237 sample (2,085 triples) as an on-disk Oxigraph store, for reasoner tests."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph, WritableGraph
from loaders import load_files
from reasoning.demo import sample_path


def build_sample_store(directory: Path) -> str:
    """Loads the sample into a new store at ``directory`` and returns its KG URL (freebase profile)."""
    load_files([str(sample_path())], str(directory), profile="freebase")
    return f"oxigraph://{directory.absolute()}?profile=freebase"


_NS = "http://rdf.freebase.com/ns/"
_LINE = re.compile(r'<([^>]+)> <([^>]+)> (?:<([^>]+)>|"((?:[^"\\]|\\.)*)"\S*) \.')


def sample_facts() -> tuple[list[tuple[str, str, str]], dict[str, str]]:
    """An independent oracle: the sample's entity-to-entity triples in compact ids, and the names."""
    triples: list[tuple[str, str, str]] = []
    names: dict[str, str] = {}
    with gzip.open(sample_path(), "rt", encoding="utf-8") as handle:
        for line in handle:
            match = _LINE.match(line)
            assert match, line
            head, relation, tail, literal = match.groups()
            head, relation = head.removeprefix(_NS), relation.removeprefix(_NS)
            if tail is not None:
                triples.append((head, relation, tail.removeprefix(_NS)))
            elif relation == "type.object.name":
                names[head] = literal
    return triples, names


def follow(
    triples: list[tuple[str, str, str]], starts: list[str], relations: list[str], directions: list[str] | None = None
) -> list[list[tuple[str, str, str]]]:
    """Every walk from ``starts`` along ``relations`` (directions ``out``/``in``), by brute force."""
    walks: list[tuple[str, list[tuple[str, str, str]]]] = [(start, []) for start in starts]
    for index, relation in enumerate(relations):
        forward = (directions or ["out"] * len(relations))[index] == "out"
        walks = [
            (tail if forward else head, [*walk, (head, rel, tail)])
            for node, walk in walks
            for head, rel, tail in triples
            if rel == relation and (head if forward else tail) == node
        ]
    return [walk for _, walk in walks]


WIKIDATA_TTL = """@prefix wd: <http://www.wikidata.org/entity/> .
@prefix wdt: <http://www.wikidata.org/prop/direct/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
wd:Q42 rdfs:label "Douglas Adams"@en ; wdt:P31 wd:Q5 ; wdt:P27 wd:Q145 ; wdt:P19 wd:Q350 .
wd:Q350 rdfs:label "Cambridge"@en ; wdt:P17 wd:Q145 .
wd:Q145 rdfs:label "United Kingdom"@en .
wd:Q5 rdfs:label "human"@en .
wd:P19 rdfs:label "place of birth"@en .
wd:P27 rdfs:label "country of citizenship"@en .
wd:P31 rdfs:label "instance of"@en .
wd:P17 rdfs:label "country"@en .
"""


def open_wikidata_mini(directory: Path) -> KnowledgeGraph:
    """A tiny in-memory Wikidata-shaped KG: relations are opaque P-ids, named by the properties' labels."""
    source = directory / "wikidata-mini.ttl"
    source.write_text(WIKIDATA_TTL, encoding="utf-8")
    graph = connect("oxigraph://?profile=wikidata")
    assert isinstance(graph, WritableGraph)
    graph.load(str(source))
    return graph
