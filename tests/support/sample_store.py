"""The bundled FB15k-237 sample (2,085 triples) as an on-disk Oxigraph store, for reasoner tests."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

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
