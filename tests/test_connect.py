"""URL parsing and ``connect``: schemes, paths, profiles, options from the URL and as keywords."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_adapters import connect, register
from kg_adapters.backends.oxigraph import OxigraphGraph
from kg_adapters.backends.rdflib_backend import RdflibGraph
from kg_adapters.errors import InvalidTermError, KGError, StoreNotFound, UnknownBackendError
from kg_adapters.profiles import FreebaseProfile, GenericProfile, WikidataProfile
from kg_adapters.registry import BACKENDS, KGUrl, parse_url

NT = "<http://example.org/a> <http://example.org/r> <http://example.org/b> .\n"


@pytest.fixture
def nt_file(tmp_path: Path) -> Path:
    path = tmp_path / "small graph.nt"
    path.write_text(NT, encoding="utf-8")
    return path


@pytest.fixture
def store(tmp_path: Path, nt_file: Path) -> Path:
    import loaders

    target = tmp_path / "store"
    loaders.load_files([str(nt_file)], str(target), progress=False)
    return target.resolve()


# ----------------------------------------------------------------------------- parse_url
def test_parse_on_disk_url_with_profile() -> None:
    assert parse_url("oxigraph:///abs/dir?profile=freebase") == KGUrl(
        scheme="oxigraph",
        host="",
        path="/abs/dir",
        options={"profile": "freebase"},
        raw="oxigraph:///abs/dir?profile=freebase",
    )


def test_parse_in_memory_url() -> None:
    parsed = parse_url("oxigraph://")
    assert (parsed.scheme, parsed.host, parsed.path, parsed.options) == ("oxigraph", "", "", {})


def test_parse_several_options_and_blank_values() -> None:
    parsed = parse_url("oxigraph:///d?profile=wikidata&write=true&flag=")
    assert parsed.options == {"profile": "wikidata", "write": "true", "flag": ""}


def test_parse_scheme_is_lower_cased_and_path_unquoted() -> None:
    parsed = parse_url("OxiGraph:///tmp/a%20b/c%3Fd")
    assert parsed.scheme == "oxigraph"
    assert parsed.path == "/tmp/a b/c?d"


def test_parse_host() -> None:
    parsed = parse_url("sparql://example.org:8890/sparql?timeout=5")
    assert (parsed.host, parsed.path, parsed.options) == ("example.org:8890", "/sparql", {"timeout": "5"})


@pytest.mark.parametrize("bad", ["", "no-colon", "/abs/path", "://x", None, 42])
def test_parse_rejects_non_urls(bad: object) -> None:
    with pytest.raises(InvalidTermError):
        parse_url(bad)  # type: ignore[arg-type]


def test_parse_rejects_repeated_option() -> None:
    with pytest.raises(InvalidTermError):
        parse_url("oxigraph://?profile=generic&profile=freebase")


# ------------------------------------------------------------------------------ connect
def test_in_memory() -> None:
    with connect("oxigraph://") as kg:
        assert isinstance(kg, OxigraphGraph)
        assert kg.path is None and kg.write is True
        assert isinstance(kg.profile, GenericProfile)


def test_profile_from_url_or_keyword() -> None:
    with connect("oxigraph://?profile=freebase") as kg:
        assert isinstance(kg.profile, FreebaseProfile)
    with connect("oxigraph://", profile="wikidata") as kg:
        assert isinstance(kg.profile, WikidataProfile)
    with connect("oxigraph://", profile=FreebaseProfile()) as kg:
        assert isinstance(kg.profile, FreebaseProfile)


def test_same_option_in_url_and_keyword_agreeing() -> None:
    with connect("oxigraph://?profile=freebase", profile="freebase") as kg:
        assert kg.profile.name == "freebase"


def test_conflicting_options_are_type_error() -> None:
    with pytest.raises(TypeError):
        connect("oxigraph://?profile=freebase", profile="generic")


def test_unknown_options_are_type_error(nt_file: Path) -> None:
    with pytest.raises(TypeError):
        connect("oxigraph://", foo=1)
    with pytest.raises(TypeError):
        connect("oxigraph://?foo=1")
    with pytest.raises(TypeError):
        connect(f"rdflib://{nt_file}", write=True)


def test_unknown_profile() -> None:
    with pytest.raises(InvalidTermError):
        connect("oxigraph://?profile=nosuch")


def test_host_is_refused_for_local_backends(nt_file: Path) -> None:
    with pytest.raises(InvalidTermError):
        connect("oxigraph://host/some/dir")
    with pytest.raises(InvalidTermError):
        connect(f"rdflib://localhost{nt_file}")
    with pytest.raises(InvalidTermError):
        connect("oxigraph://relative-dir")  # two slashes: "relative-dir" is read as a host


def test_unknown_scheme() -> None:
    with pytest.raises(UnknownBackendError) as info:
        connect("nosuchscheme:///x")
    assert "nosuchscheme" in str(info.value)
    assert isinstance(info.value, KGError)


def test_registered_backend_that_cannot_be_imported() -> None:
    register("kga-test-missing", "kg_adapters_no_such_module:Backend", install_hint="pip install kga-test-missing")
    try:
        with pytest.raises(UnknownBackendError) as info:
            connect("kga-test-missing://")
        assert "pip install kga-test-missing" in str(info.value)
    finally:
        del BACKENDS["kga-test-missing"]


def test_register_another_scheme() -> None:
    register("kga-test-ox", "kg_adapters.backends.oxigraph:OxigraphGraph")
    try:
        with connect("kga-test-ox://?profile=freebase") as kg:
            assert isinstance(kg, OxigraphGraph)
            assert kg.profile.name == "freebase"
    finally:
        del BACKENDS["kga-test-ox"]


def test_rdflib_file_with_quoted_path(nt_file: Path) -> None:
    quoted = str(nt_file).replace(" ", "%20")
    with connect(f"rdflib://{quoted}") as kg:
        assert isinstance(kg, RdflibGraph)
        assert kg.relations("http://example.org/a") == {"http://example.org/a": ["http://example.org/r"]}


def test_rdflib_missing_file(tmp_path: Path) -> None:
    with pytest.raises(StoreNotFound):
        connect(f"rdflib://{tmp_path / 'nope.nt'}")


def test_on_disk_store_read_only_by_default(store: Path) -> None:
    with connect(f"oxigraph://{store}") as kg:
        assert isinstance(kg, OxigraphGraph)
        assert kg.write is False
        assert kg.path == str(store)
        assert kg.relations("http://example.org/a") == {"http://example.org/a": ["http://example.org/r"]}


@pytest.mark.parametrize(("value", "writable"), [("true", True), ("1", True), ("yes", True), ("false", False)])
def test_write_option_from_url(store: Path, value: str, writable: bool) -> None:
    with connect(f"oxigraph://{store}?write={value}") as kg:
        assert isinstance(kg, OxigraphGraph)
        assert kg.write is writable


def test_write_option_as_keyword(store: Path) -> None:
    with connect(f"oxigraph://{store}", write=True) as kg:
        assert isinstance(kg, OxigraphGraph)
        assert kg.write is True


def test_missing_store(tmp_path: Path) -> None:
    with pytest.raises(StoreNotFound):
        connect(f"oxigraph://{tmp_path / 'absent'}")
    assert not (tmp_path / "absent").exists()


@pytest.mark.parametrize("value", ["maybe", "", "2"])
def test_a_write_option_that_is_not_a_flag_is_refused(store: Path, value: str) -> None:
    with pytest.raises(InvalidTermError, match="write"):
        connect(f"oxigraph://{store}?write={value}")
    with pytest.raises(InvalidTermError, match="write"):
        connect(f"oxigraph://{store}", write=1)


SECRETS = ("s3cret", "XYZ", "T0K")


def shown(value: object) -> str:
    return f"{value!r} {value!s} {value}"


def test_a_parsed_url_never_shows_its_credentials() -> None:
    url = parse_url("sparql+http://alice:s3cret@h/sparql?api_key=XYZ&Token=T0K&timeout=5")
    assert url.host == "alice:s3cret@h" and url.options["api_key"] == "XYZ"  # the fields keep them to connect
    text = shown(url)
    assert not any(secret in text for secret in SECRETS), text
    assert "alice:***@h" in text and "'timeout': '5'" in text and "'Token': '***'" in text
    assert "s3cret" not in shown(parse_url("sparql+http://:s3cret@h/sparql"))
    assert "bob@h" in shown(parse_url("sparql+http://bob@h/sparql"))  # a user without a password is kept


def test_no_repr_of_a_url_holder_shows_credentials(tmp_path: Path) -> None:
    """Every object that holds a URL with credentials shows it without them: the remote graph, its
    transports, wrappers, a cache keyed by the URL (and its replay misses), the LLM client."""
    from kg_adapters.errors import CacheMiss
    from kg_adapters.wrappers import CachedKG, CountingKG, ResultCache
    from reasoning.llm import OpenAIChat

    url = "sparql+http://alice:s3cret@127.0.0.1:9/sparql"
    remote = connect(url, retries=2)
    holders: list[object] = [remote, CountingKG(remote), connect(url + "?cache=memory")]
    transport = vars(remote)["transport"]
    holders += [transport, transport.inner]
    replay_file = tmp_path / "replay.sqlite"
    ResultCache(replay_file).close()
    keyed = CachedKG(remote, cache=ResultCache(replay_file, mode="replay"), namespace=url + "?api_key=XYZ")
    holders.append(keyed)
    with pytest.raises(CacheMiss) as missed:
        keyed.neighbors("http://example.org/a")
    holders.append(missed.value)
    holders.append(OpenAIChat("m", base_url="https://bob:s3cret@127.0.0.1:9/v1"))
    for holder in holders:
        text = shown(holder)
        assert not any(secret in text for secret in SECRETS), text
