"""What a new user of ``kga`` meets first: every option of every command explains itself and its
default, ``$KGA_KG`` stands in for ``--kg``, a usage error names the command once, a ``--limit`` that
cuts an answer says so, ``kga query`` says it only reads, and literals print as people read them."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from kg_adapters.cli import build_parser, main
from kg_adapters.display import literal_text
from kg_adapters.records import Literal
from reasoning.demo import sample_path

XSD = "http://www.w3.org/2001/XMLSchema#"


@pytest.fixture(scope="module")
def kg_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("polish") / "store"
    assert main(["load", str(sample_path()), "--store", str(path), "--profile", "freebase"]) == 0
    return f"oxigraph://{path}?profile=freebase"


def commands() -> dict[str, argparse.ArgumentParser]:
    (sub,) = (a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_option_of_every_command_has_help_and_shows_its_default() -> None:
    missing, undefaulted = [], []
    for name, parser in commands().items():
        formatter = parser._get_formatter()
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            where = f"kga {name} {'/'.join(action.option_strings) or action.dest}"
            if not action.help:
                missing.append(where)
            shown = formatter._get_help_string(action) or ""
            takes_value = action.nargs != 0 and not isinstance(action, argparse.BooleanOptionalAction)
            if action.option_strings and takes_value and not action.required and "default" not in shown.lower():
                undefaulted.append(f"{where} ({action.default!r})")  # unset ones too: what happens without it
            if action.help and len(action.help.removeprefix("default:").split()) < 2:
                missing.append(f"{where}: {action.help!r} explains nothing")
    assert missing == [] and undefaulted == []
    assert "neighbors" in commands() and "serve" in commands() and "load" in commands()  # contributed ones too


def test_json_is_offered_where_it_prints_json() -> None:
    """``--json`` prints one JSON object per line; the servers print no records, so they do not offer it."""
    for name, parser in commands().items():
        offered = any("--json" in action.option_strings for action in parser._actions)
        assert offered is (name not in ("serve", "mcp")), name
    assert main(["serve", "--kg", "oxigraph://", "--json"]) == 2


def test_kga_kg_is_optional_in_usage_and_required_in_effect(
    kg_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("KGA_KG", raising=False)
    usage = commands()["neighbors"].format_usage()
    assert "[--kg URL]" in usage
    assert main(["neighbors", "--id", "m.0bxtg"]) == 2
    assert capsys.readouterr().err == "kga: error: neighbors: give --kg URL or set KGA_KG (see kga neighbors --help)\n"
    monkeypatch.setenv("KGA_KG", "")  # an empty variable (export KGA_KG=) is as good as none
    assert main(["neighbors", "--id", "m.0bxtg"]) == 2
    assert capsys.readouterr().err == "kga: error: neighbors: give --kg URL or set KGA_KG (see kga neighbors --help)\n"
    assert "not set now" in commands()["neighbors"].format_help()
    monkeypatch.setenv("KGA_KG", kg_url)
    assert main(["labels", "--id", "m.0bxtg"]) == 0
    assert capsys.readouterr().out == "m.0bxtg\tTom Hanks\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve", "--kg", "oxigraph://", "--port", "0"], "kga: error: serve: argument --port: expected a TCP port"),
        (["neighbors", "--kg", "oxigraph://"], "kga: error: neighbors: the following arguments are required: --id"),
        (["nonsense"], "kga: error: argument COMMAND: invalid choice"),
    ],
)
def test_a_usage_error_names_the_command_once(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert error.startswith(message) and error.count("kga") == 2 and error.endswith("--help)\n"), error


def test_neighbors_says_when_limit_cut_it(kg_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["neighbors", "--kg", kg_url, "--id", "m.0bxtg", "--id", "m.0qymv", "--limit", "2", "--json"]) == 0
    captured = capsys.readouterr()
    answers = [json.loads(line) for line in captured.out.splitlines()]
    assert [len(a["edges"]) for a in answers] == [2, 2]
    assert "kga: warning: 2 entities (m.0bxtg, m.0qymv) have more than 2 edges: cut at --limit 2" in captured.err
    assert main(["neighbors", "--kg", kg_url, "--id", "m.0bxtg", "--limit", "2"]) == 0
    assert "kga: warning: 1 entity (m.0bxtg) has more than 2 edges: cut at --limit 2" in capsys.readouterr().err
    assert main(["neighbors", "--kg", kg_url, "--id", "m.0bxtg", "--limit", "100000"]) == 0
    captured = capsys.readouterr()
    assert "warning" not in captured.err
    everything = int(captured.out.splitlines()[0].split(": ")[1].split()[0])
    assert main(["neighbors", "--kg", kg_url, "--id", "m.0bxtg", "--limit", str(everything)]) == 0
    assert "warning" not in capsys.readouterr().err  # exactly as many as the limit: nothing was cut


def test_search_says_when_limit_cut_it(kg_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--kg", kg_url, "Tom", "--limit", "1"]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 1
    assert "kga: warning: more than 1 match: cut at --limit 1" in captured.err
    assert main(["search", "--kg", kg_url, "Tom Hanks", "--limit", "1"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "m.0bxtg\tTom Hanks\n" and captured.err == ""


@pytest.mark.parametrize(
    "update",
    [
        "INSERT DATA { <http://a.example/s> <http://a.example/p> <http://a.example/o> }",
        "PREFIX ex: <http://a.example/> DELETE WHERE { ?s ?p ?o }",
        "LOAD <http://a.example/data.nt>",
        "CLEAR ALL",
    ],
)
def test_kga_query_says_it_only_reads(kg_url: str, update: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["query", "--kg", kg_url, update]) == 2
    error = capsys.readouterr().err
    assert error.startswith("kga: error: kga query only reads the graph") and "kga load" in error, error
    assert "read-only" in error and "endpoint" not in error, error  # the store, not a server
    assert main(["query", "--kg", kg_url, "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"]) == 0
    assert capsys.readouterr().out == "n=2085\n"  # nothing was written, and the count reads as a number


def test_kga_query_says_service_is_refused_without_advising_a_load(
    kg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["query", "--kg", kg_url, "SELECT * WHERE { SERVICE <http://a.example/sparql> { ?s ?p ?o } }"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("kga: error: kga query only reads the graph") and "SERVICE" in error, error
    assert "kga load" not in error and "endpoint" not in error, error


def test_query_output_reads_like_turtle(kg_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    query = (
        'SELECT (2085 AS ?n) (1.5 AS ?d) (true AS ?b) ("x" AS ?s) ("Tom Hanks"@en AS ?l) '
        '("1956-07-09"^^<http://www.w3.org/2001/XMLSchema#date> AS ?t) ("a"^^<http://a.example/t> AS ?o) '
        '("12 apples"^^<http://www.w3.org/2001/XMLSchema#integer> AS ?bad) WHERE {}'
    )
    assert main(["query", "--kg", kg_url, query]) == 0
    assert capsys.readouterr().out == (
        'n=2085\td=1.5\tb=true\ts="x"\tl="Tom Hanks"@en\tt="1956-07-09"^^xsd:date\to="a"^^<http://a.example/t>'
        '\tbad="12 apples"^^xsd:integer\n'
    )
    assert main(["query", "--kg", kg_url, "ASK { ?s ?p ?o }"]) == 0
    assert capsys.readouterr().out == "boolean=true\n"


@pytest.mark.parametrize(
    ("literal", "text"),
    [
        (Literal(value="2085", datatype=XSD + "integer"), "2085"),
        (Literal(value="-0.5e3", datatype=XSD + "double"), "-0.5e3"),
        (Literal(value="false", datatype=XSD + "boolean"), "false"),
        (Literal(value="say \"hi\"\n", datatype=None), '"say \\"hi\\"\\n"'),
        (Literal(value="Zürich", lang="de"), '"Zürich"@de'),
        (Literal(value="x", datatype=XSD + "string"), '"x"'),
        (Literal(value="2001", datatype=XSD + "gYear"), '"2001"^^xsd:gYear'),
        (Literal(value="POINT(1 2)", datatype="http://www.opengis.net/ont/geosparql#wktLiteral"),
         '"POINT(1 2)"^^<http://www.opengis.net/ont/geosparql#wktLiteral>'),
        (Literal(value="+5", datatype=XSD + "decimal"), "+5"),
        (Literal(value="7", datatype=XSD + "int"), "7"),
        (Literal(value="1000", datatype=XSD + "double"), "1000"),
        # a value its datatype does not allow (dumps hold them) is never printed as if it were a number
        (Literal(value="12 apples", datatype=XSD + "integer"), '"12 apples"^^xsd:integer'),
        (Literal(value="a\tb", datatype=XSD + "integer"), '"a\\tb"^^xsd:integer'),
        (Literal(value="", datatype=XSD + "integer"), '""^^xsd:integer'),
        (Literal(value="1.5", datatype=XSD + "integer"), '"1.5"^^xsd:integer'),
        (Literal(value="١٢", datatype=XSD + "integer"), '"١٢"^^xsd:integer'),
        (Literal(value="NaN", datatype=XSD + "double"), '"NaN"^^xsd:double'),
        (Literal(value="INF", datatype=XSD + "float"), '"INF"^^xsd:float'),
        (Literal(value="1", datatype=XSD + "boolean"), '"1"^^xsd:boolean'),
        (Literal(value="yes", datatype=XSD + "boolean"), '"yes"^^xsd:boolean'),
    ],
)  # fmt: skip
def test_literal_text(literal: Literal, text: str) -> None:
    assert literal_text(literal) == text


def test_help_of_a_budget_says_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["shortest", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--max-hops MAX_HOPS longest path, in edges (default: 4)" in text
    assert "--max-paths MAX_PATHS most paths; a cut prints a warning (default: no cap)" in text
