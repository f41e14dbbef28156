"""RDF files that would take the loading process down: entity expansion in RDF/XML ("billion laughs",
quadratic blow-up, parameter and external entities) and tokens longer than Oxigraph's 16 MiB parser
buffer. Each is a LoadError naming file:line -- from ``kga load`` (a real process, whose memory stays
small), ``load_files``, a writable store's ``load`` and the rdflib backend -- and an existing store
is left as it was."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kg_adapters import connect
from kg_adapters.errors import LoadError
from kg_adapters.rdf_guard import DOCUMENT_LIMIT, ENTITY_LIMIT
from loaders import load_files
from loaders.testing.huge_rows import peak_memory

RDF = 'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/"'


def rdf_xml(declarations: str, value: str) -> str:
    return (
        f'<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n{declarations}]>\n<rdf:RDF {RDF}>\n'
        f'  <rdf:Description rdf:about="http://example.org/s"><ex:p>{value}</ex:p></rdf:Description>\n</rdf:RDF>\n'
    )


LAUGHS = rdf_xml(
    ' <!ENTITY lol0 "lol">\n' + "".join(f' <!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">\n' for i in range(1, 10)),
    "&lol9;",
)
WIDE_ENTITY = "x" * (ENTITY_LIMIT - 10)
QUADRATIC = rdf_xml(f' <!ENTITY big "{WIDE_ENTITY}">\n', "&big;" * (DOCUMENT_LIMIT // len(WIDE_ENTITY) + 2))
BIG_LITERAL = "a" * (17 << 20)


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        (LAUGHS, 8, "expands to more than"),
        (QUADRATIC, 6, "references expand"),
        (rdf_xml(' <!ENTITY % p "x">\n', "x"), 3, "parameter entities"),
        (rdf_xml(' <!ENTITY secret SYSTEM "file:///etc/passwd">\n', "&secret;"), 3, "external entity"),
        (rdf_xml(' <!ENTITY a "&b;">\n <!ENTITY b "&a;">\n', "&a;"), 3, "expands to more than"),
    ],
    ids=["billion laughs", "quadratic", "parameter", "external", "cycle"],
)
def test_entity_expansion_is_refused_naming_the_line(tmp_path: Path, text: str, line: int, reason: str) -> None:
    source = tmp_path / "hostile.rdf"
    source.write_text(text, encoding="utf-8")
    with pytest.raises(LoadError, match=reason) as raised:
        load_files([str(source)], str(tmp_path / "store"), progress=False)
    assert (raised.value.file, raised.value.line) == (str(source), line)
    with connect("oxigraph://", write=True) as kg, pytest.raises(LoadError, match=reason):
        kg.load(str(source))  # type: ignore[attr-defined]


def test_kga_load_refuses_billion_laughs_quickly_and_keeps_the_store(tmp_path: Path) -> None:
    good, hostile = tmp_path / "good.nt", tmp_path / "laughs.rdf"
    good.write_text("<http://example.org/a> <http://example.org/b> <http://example.org/c> .\n", encoding="utf-8")
    hostile.write_text(LAUGHS, encoding="utf-8")
    store = tmp_path / "store"
    load_files([str(good)], str(store), progress=False)
    status, peak, error = peak_memory(
        [sys.executable, "-m", "kg_adapters.cli", "load", str(hostile), "--store", str(store)]
    )
    assert status == 1 and f"{hostile}:8:" in error and "entity" in error and "Traceback" not in error, error
    assert peak < 300 << 20  # it aborted after ~1.5 GB
    with connect(f"oxigraph://{store}") as kg:
        assert kg.query("SELECT (COUNT(*) AS ?n) { ?s ?p ?o }")[0]["n"].value == "1"  # type: ignore[attr-defined]


def test_the_rdflib_backend_refuses_it_too(tmp_path: Path) -> None:
    source = tmp_path / "laughs.rdf"
    source.write_text(LAUGHS, encoding="utf-8")
    with pytest.raises(LoadError) as raised:
        connect(f"rdflib://{source}")
    assert raised.value.file == str(source)


def test_flat_namespace_entities_as_ontology_editors_write_them_load(tmp_path: Path) -> None:
    source = tmp_path / "onto.owl"
    source.write_text(
        rdf_xml(' <!ENTITY ex "http://example.org/" >\n <!-- a comment -->\n', "&ex;value &amp; more"),
        encoding="utf-8",
    )
    load_files([str(source)], str(tmp_path / "store"), progress=False)
    with connect(f"oxigraph://{tmp_path / 'store'}") as kg:
        assert [str(edge.tail.value) for edge in kg.neighbors("http://example.org/s")["http://example.org/s"]] == [  # type: ignore[union-attr]
            "http://example.org/value & more"
        ]


@pytest.mark.parametrize("suffix", ["ttl", "trig"])
def test_a_token_over_the_parser_buffer_is_a_load_error_with_its_line(tmp_path: Path, suffix: str) -> None:
    source = tmp_path / f"big.{suffix}"
    source.write_text(
        f'@prefix ex: <http://example.org/> .\nex:s ex:p ex:o .\nex:s ex:q "{BIG_LITERAL}" .\n', encoding="utf-8"
    )
    with pytest.raises(LoadError, match="16 MiB") as raised:
        load_files([str(source)], str(tmp_path / "store"), progress=False)
    assert (raised.value.file, raised.value.line) == (str(source), 3)
    assert not (tmp_path / "store").exists()
    with connect("oxigraph://", write=True) as kg, pytest.raises(LoadError, match="16 MiB") as loaded:
        kg.load(str(source))  # type: ignore[attr-defined]
    assert loaded.value.line == 3


def test_a_literal_over_the_parser_buffer_in_rdf_xml_loads_and_is_indexed(tmp_path: Path) -> None:
    """RDF/XML's parser has no 16 MiB buffer, so such a literal is data like any other: the traversal
    index's worker (input over a megabyte) gets it although its N-Quads parser could not read it."""
    from loaders.indexing import WORKER_MIN_BYTES

    filler = "".join(
        f'  <rdf:Description rdf:about="http://example.org/n{n}"><ex:q rdf:resource="http://example.org/m{n}"/>'
        "</rdf:Description>\n"
        for n in range(WORKER_MIN_BYTES // 90)
    )
    source = tmp_path / "big.rdf"
    source.write_text(
        f'<?xml version="1.0"?>\n<rdf:RDF {RDF}>\n{filler}'
        f'  <rdf:Description rdf:about="http://example.org/s"><ex:p>{BIG_LITERAL}</ex:p></rdf:Description>\n'
        "</rdf:RDF>\n",
        encoding="utf-8",
    )
    assert source.stat().st_size > WORKER_MIN_BYTES
    load_files([str(source)], str(tmp_path / "store"), progress=False)
    with connect(f"oxigraph://{tmp_path / 'store'}") as kg:
        edges = kg.neighbors("http://example.org/s")["http://example.org/s"]
        assert [(edge.relation, len(edge.tail.value)) for edge in edges] == [  # type: ignore[union-attr]
            ("http://example.org/p", len(BIG_LITERAL))
        ]
        assert [edge.tail for edge in kg.neighbors("http://example.org/n7")["http://example.org/n7"]] == [
            "http://example.org/m7"
        ]
