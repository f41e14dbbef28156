"""A load's name and relation indexes and its triple count are the same whether they come from what the
load saw (the default) or from the store read back (``--no-index``, where the predicates are listed and
the store counted on threads of their own while the name index is written): on a real file with
duplicate triples (one of them spelled with an escape), languages, literals that are not names, relation
labels and aliases, and a Wikidata property named through its entity."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from loaders import load_files

EX = "http://example.org/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
ALT = "http://www.w3.org/2004/02/skos/core#altLabel"
WDT, WD = "http://www.wikidata.org/prop/direct/", "http://www.wikidata.org/entity/"

LINES = [
    f'<{EX}paris> <{RDFS_LABEL}> "Paris"@en .',
    f'<{EX}paris> <{RDFS_LABEL}> "Paris"@en .',  # the same triple twice: one triple, one name
    f'<{EX}paris> <{RDFS_LABEL}> "Paris"@FR .',
    f'<{EX}cafe> <{RDFS_LABEL}> "Caf\\u00E9 de Flore" .',
    f'<{EX}cafe> <{RDFS_LABEL}> "Café de Flore" .',  # the line above, spelled without the escape
    f'<{EX}cafe> <{RDFS_LABEL}> "Café de Flore"^^<http://www.w3.org/2001/XMLSchema#string> .',
    f'<{EX}cafe> <http://schema.org/name> "Les Deux Magots"@fr .',
    f'<{EX}cafe> <{EX}seats> "120"^^<http://www.w3.org/2001/XMLSchema#integer> .',
    f"<{EX}cafe> <{EX}in> <{EX}paris> .",
    f"<{EX}cafe> <{EX}in> <{EX}paris> .",
    f'<{EX}in> <{RDFS_LABEL}> "located in"@en .',
    f'<{EX}in> <{ALT}> "situated in"@en .',
    f'<{EX}seats> <{ALT}> "capacity" .',
    f'<{EX}paris> <{ALT}> "City of Light"@en .',  # an alias of an entity: not a relation\'s
    f"<{EX}paris> <{WDT}P17> <{EX}france> .",
    f'<{WD}P17> <{RDFS_LABEL}> "country"@en .',
    f'<{WD}P17> <{ALT}> "sovereign state"@en .',
    f'_:b1 <{RDFS_LABEL}> "a blank node\'s label" .',
    f'<{EX}france> <{EX}motto> "Liberté, égalité, fraternité"@fr .',
]


def _rows(database: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(database) as db:
        return sorted(db.execute("SELECT iri, label, lang FROM labels"))


def test_names_relations_and_count_from_the_load_equal_those_read_back(tmp_path: Path) -> None:
    source = tmp_path / "names.nt"
    source.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    seen = load_files([str(source)], str(tmp_path / "seen"), progress=False)
    read_back = load_files([str(source)], str(tmp_path / "read-back"), progress=False, index=False)
    distinct = len(set(LINES)) - 2  # the escaped café and its xsd:string spelling are one triple
    assert seen.store_triples == read_back.store_triples == distinct
    versions = [next(store.glob("v-*")) for store in (tmp_path / "seen", tmp_path / "read-back")]
    names = [_rows(version / "labels.sqlite") for version in versions]
    relations = [_rows(version / "relations.sqlite") for version in versions]
    assert names[0] == names[1]
    assert (f"{EX}cafe", "Café de Flore", "") in names[0]
    assert (f"{EX}paris", "Paris", "fr") in names[0]  # language tags as Oxigraph stores them
    assert not any(iri.startswith("_:") or "blank" in label for iri, label, _lang in names[0])
    assert len(names[0]) == len(set(names[0])) == 6
    assert relations[0] == relations[1]
    assert {(iri, label) for iri, label, _lang in relations[0]} >= {
        (f"{EX}in", "located in"),
        (f"{EX}in", "situated in"),
        (f"{EX}seats", "capacity"),
        (f"{WDT}P17", "country"),
        (f"{WDT}P17", "sovereign state"),
    }
    assert not any(label == "City of Light" for _iri, label, _lang in relations[0])
