"""``?profile=auto``: the profile is read off one bounded sample of the data, on the embedded store
(on disk), rdflib and a real Virtuoso, for Freebase, Wikidata, DBpedia and generic data."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

import loaders
from kg_adapters import connect, register
from kg_adapters.backends.oxigraph import OxigraphGraph
from kg_adapters.backends.sparql_http import RemoteSparqlGraph
from kg_adapters.cli import main
from kg_adapters.errors import InvalidTermError
from kg_adapters.profiles.detect import SAMPLE_SIZE, choose_profile
from kg_adapters.records import Edge
from kg_adapters.registry import BACKENDS, KGUrl
from kg_adapters.testing.graph import write_graph
from kg_adapters.testing.virtuoso import VirtuosoServer, virtuoso_fixture
from kg_adapters.testing.wikidata_graph import write_wikidata_graph
from kg_adapters.wrappers.counting import CountingKG
from reasoning.demo import sample_path

from .dbpedia_graph import write_dbpedia_graph

# (profile, an id that only resolves in that profile, its name)
PROBES = {
    "freebase": ("m.0113sg", "Nikolai Gogol"),
    "wikidata": ("Q42", "Douglas Adams"),
    "dbpedia": ("Barack_Obama", "Barack Obama"),
    "generic": ("http://example.org/a", "Alpha"),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("auto")
    return {
        "freebase": sample_path(),
        "wikidata": write_wikidata_graph(directory),
        "dbpedia": write_dbpedia_graph(directory),
        "generic": write_graph(directory),
    }


@pytest.fixture(scope="module")
def stores(files: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    built = {}
    for name, file in files.items():
        target = tmp_path_factory.mktemp("auto-store") / name
        loaders.load_files([str(file)], str(target), progress=False)
        built[name] = target.resolve()
    return built


@pytest.mark.parametrize("expected", sorted(PROBES))
def test_embedded_store(stores: dict[str, Path], expected: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="kg_adapters"):
        kg = connect(f"oxigraph://{stores[expected]}?profile=auto")
    with kg:
        assert isinstance(kg, OxigraphGraph)
        assert kg.profile.name == expected
        assert kg.profile.detection is not None
        assert f"detected profile: {expected} ({kg.profile.detection})" in caplog.messages
        probe, name = PROBES[expected]
        assert kg.labels(probe) == {probe: name}


@pytest.mark.parametrize("expected", ["wikidata", "dbpedia", "generic"])
def test_rdflib(files: dict[str, Path], expected: str) -> None:
    with connect(f"rdflib://{files[expected]}", profile="auto") as kg:
        assert kg.profile.name == expected
        probe, name = PROBES[expected]
        assert kg.labels(probe) == {probe: name}


def test_detection_reasons(stores: dict[str, Path]) -> None:
    with connect(f"oxigraph://{stores['freebase']}?profile=auto") as kg:
        assert kg.profile.detection == f"{SAMPLE_SIZE} of {SAMPLE_SIZE} sampled triples use http://rdf.freebase.com/ns/"
    with connect(f"oxigraph://{stores['generic']}?profile=auto") as kg:
        assert kg.profile.detection == "no known profile namespace in 32 sampled triples"
    with connect("oxigraph://?profile=auto") as kg:
        assert (kg.profile.name, kg.profile.detection) == ("generic", "the graph is empty")


def test_full_freebase_dump(shared_data: Path, tmp_path: Path) -> None:
    """FB15k-237 with Freebase ids: the sample is bounded, whatever the store's size."""
    store = tmp_path / "fb15k"
    loaders.load_files([str(shared_data / "fb15k237-freebase.nt.gz")], str(store), progress=False)
    with connect(f"oxigraph://{store.resolve()}?profile=auto") as kg:
        assert kg.profile.name == "freebase"
        assert kg.profile.detection == f"{SAMPLE_SIZE} of {SAMPLE_SIZE} sampled triples use http://rdf.freebase.com/ns/"


def test_a_named_profile_is_not_detected(stores: dict[str, Path]) -> None:
    with connect(f"oxigraph://{stores['wikidata']}") as kg:
        assert (kg.profile.name, kg.profile.detection) == ("generic", None)
    with connect(f"oxigraph://{stores['wikidata']}?profile=freebase") as kg:
        assert (kg.profile.name, kg.profile.detection) == ("freebase", None)


def test_a_minority_namespace_stays_generic() -> None:
    rows = [("http://www.wikidata.org/entity/Q1", "http://www.wikidata.org/prop/direct/P31")] * 40 + [
        ("http://example.org/a", "http://example.org/r")
    ] * 60
    profile = choose_profile(rows)
    assert profile.name == "generic"
    assert profile.detection == "only 40 of 100 sampled triples use wikidata namespaces (http://www.wikidata.org/)"
    assert choose_profile(rows[:60]).name == "wikidata"


def test_cli_reports_the_choice(stores: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["labels", "--kg", f"oxigraph://{stores['freebase']}?profile=auto", "--id", "m.0113sg"]) == 0
    captured = capsys.readouterr()
    assert "Nikolai Gogol" in captured.out
    assert captured.err.startswith("kga: detected profile: freebase (")


class PlainBackend:
    """A backend that cannot sample its data: the entity-API graph (no detect_profile), counted (a wrapper
    keeps exactly the abilities of what it wraps), never asked anything here."""

    @classmethod
    def from_url(cls, url: KGUrl, **options: Any) -> CountingKG:
        options.pop("profile")  # the entity API serves the wikidata profile whatever was asked
        agent = "kga-tests/1 (t@example.org)"
        return CountingKG(connect("wikidata+api:", base_url="http://127.0.0.1:9/w/api.php", user_agent=agent))


def test_a_backend_that_cannot_sample_refuses_auto() -> None:
    register("kga-test-plain", f"{__name__}:PlainBackend")
    try:
        with pytest.raises(InvalidTermError, match="profile=auto"):
            connect("kga-test-plain://?profile=auto")
        with connect("kga-test-plain://?profile=wikidata") as kg:
            assert kg.profile.name == "wikidata"
    finally:
        del BACKENDS["kga-test-plain"]


# ---------------------------------------------------------------------------------- Virtuoso
def graph_iri(name: str) -> str:
    return f"http://kg-adapters.test/auto/{name}"


@pytest.fixture(scope="module")
def virtuoso(tmp_path_factory: pytest.TempPathFactory, request: Any, files: dict[str, Path]) -> VirtuosoServer:
    """One server, each data set in its own graph (chosen per connection with default_graph)."""
    server = virtuoso_fixture(tmp_path_factory, [], request=request, data_dirs=[f.parent for f in files.values()])
    for name, file in files.items():
        server.load([file], graph=graph_iri(name))
    return server


@pytest.mark.parametrize("expected", sorted(PROBES))
def test_virtuoso(virtuoso: VirtuosoServer, expected: str) -> None:
    kg = connect(
        "sparql+" + virtuoso.sparql_url,
        profile="auto",
        dialect="virtuoso",
        default_graph=graph_iri(expected),
        retries=0,
    )
    with kg:
        assert isinstance(kg, RemoteSparqlGraph)
        assert kg.queries_sent == 1, "one sampling query"
        assert kg.profile.name == expected
        probe, name = PROBES[expected]
        assert kg.labels(probe) == {probe: name}
        if expected == "wikidata":
            assert kg.neighbors("Q42", relations=["P31"], qualifiers=True)["Q42"] == [
                Edge(head="Q42", relation="P31", tail="Q5", rank="normal")
            ]
