"""The profile's relation filter runs inside the remote query: hidden edges neither travel nor count
toward an endpoint's row caps (a real Virtuoso with tiny caps), and answers stay exactly those of
the filter applied afterwards (the embedded store, whose small lookups bypass SPARQL)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kg_adapters import connect
from kg_adapters.backends.sparql_http import RemoteSparqlGraph
from kg_adapters.errors import ResultTooLarge
from kg_adapters.profiles import get_profile
from kg_adapters.records import Edge
from kg_adapters.sparql_terms import exclude_relations
from kg_adapters.testing.virtuoso import VirtuosoServer

FB = "http://rdf.freebase.com/ns/"
HIDDEN_TYPES = 30
ODD = FB + "type.with/slash"  # in the namespace but no compact id: its id is the full IRI, kept by the filter


def _write(directory: Path) -> Path:
    lines = [f"<{FB}m.actor> <{FB}type.object.type> <{FB}t.type{i:02d}> ." for i in range(HIDDEN_TYPES)]
    lines += [
        f'<{FB}m.actor> <{FB}type.object.name> "Actor"@en .',
        f"<{FB}m.actor> <{FB}common.topic.notable_for> <{FB}g.note> .",
        f"<{FB}m.actor> <http://www.w3.org/2000/01/rdf-schema#seeAlso> <{FB}m.elsewhere> .",
        f"<{FB}m.actor> <{FB}film.actor.film> <{FB}m.film1> .",
        f"<{FB}m.actor> <{FB}film.actor.film> <{FB}m.film2> .",
        f"<{FB}m.actor> <{ODD}> <{FB}m.odd> .",
    ]
    path = directory / "pushdown.nt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write(tmp_path_factory.mktemp("pushdown"))


VISIBLE = [
    Edge(head="m.actor", relation="film.actor.film", tail="m.film1"),
    Edge(head="m.actor", relation="film.actor.film", tail="m.film2"),
    Edge(head="m.actor", relation=ODD, tail="m.odd"),
]


def _remote(server: VirtuosoServer, **options: Any) -> RemoteSparqlGraph:
    kg = connect(
        "sparql+" + server.sparql_url, dialect="virtuoso", profile="freebase", max_sorted_rows=12, retries=0, **options
    )
    assert isinstance(kg, RemoteSparqlGraph)
    return kg


def test_hidden_edges_do_not_count_toward_the_row_cap(capped_virtuoso: VirtuosoServer) -> None:
    """36 edges, 3 visible: filtered in the query the answer fits the 12-row ceiling; asked for
    every relation (the filter off), the same entity is too large for it."""
    with _remote(capped_virtuoso) as kg:
        assert kg.neighbors("m.actor", literals=False) == {"m.actor": VISIBLE}
        assert kg.relations("m.actor") == {"m.actor": sorted(["film.actor.film", ODD])}
        assert kg.queries_sent <= 4
    with _remote(capped_virtuoso, relation_filter=None) as everything, pytest.raises(ResultTooLarge):
        everything.neighbors("m.actor", literals=False)


def test_the_pushed_filter_answers_as_the_filter_applied_afterwards(
    capped_virtuoso: VirtuosoServer, graph_file: Path
) -> None:
    with connect("oxigraph://?profile=freebase") as local, _remote(capped_virtuoso) as remote:
        local.load(str(graph_file))  # type: ignore[attr-defined]
        for direction in ("out", "in", "both"):
            for node in ("m.actor", "m.film1", "m.odd", "t.type07"):
                assert remote.neighbors(node, direction=direction) == local.neighbors(node, direction=direction)
                assert remote.relations(node, direction=direction) == local.relations(node, direction=direction)


def test_only_exact_drops_are_pushed() -> None:
    """Compact prefixes go with a local-id guard (the odd IRI above stays), full-IRI prefixes
    only when they cannot cover compact ids; a profile with its own id mapping pushes exact IRIs only."""
    iris, prefixes, local = get_profile("freebase").hidden_relations()
    assert iris == []
    assert "http://www.w3.org/2000/01/rdf-schema#" in prefixes
    assert (FB, "type.", get_profile("freebase").local_id_regex) in local
    text = exclude_relations("r", iris, prefixes, local)
    assert 'STRSTARTS(STR(?r), "http://rdf.freebase.com/ns/type.")' in text and "REGEX" in text
    _iris, dbpedia_prefixes, dbpedia_local = get_profile("dbpedia").hidden_relations()
    assert dbpedia_prefixes == [] and dbpedia_local == []
    assert exclude_relations("r", [], []) == ""
