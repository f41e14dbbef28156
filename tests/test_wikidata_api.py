"""``wikidata+api:`` against a real loopback Wikibase API that answers from recorded entity JSON (Q42 as
Wikidata serves it, and small recorded-style entities around it), with scripted 429, maxlag and reset
faults. Sleeping and the clock are injected: nothing here waits."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import requests
from support.wikidata_api import Q42_SCHOOLS, WikidataApiServer, date

from kg_adapters import connect
from kg_adapters.backends.wikidata_api import WikibaseApiTransport, WikidataApiGraph
from kg_adapters.base import KnowledgeGraph
from kg_adapters.cli import main
from kg_adapters.errors import (
    BackendError,
    InvalidTermError,
    QueryError,
    ResultMismatch,
    ResultTooLarge,
    RetriesExhausted,
)
from kg_adapters.profiles import RelationFilter
from kg_adapters.records import Edge, Entity, Literal, Qualifiers
from kg_adapters.records import Path as KGPath
from kg_adapters.testing.fault_server import FakeClock, FaultPlan
from kg_adapters.testing.wikidata_graph import RECORDED
from kg_adapters.wikidata_json import XSD_DECIMAL
from kg_adapters.wrappers.rate_limit import RateLimitedTransport
from kg_adapters.wrappers.retry import RetryingTransport

DATA = RECORDED
UA = "kg-adapters-tests/0.1 (kga-tests@example.org)"


@pytest.fixture(scope="module")
def entities(shared_data: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((DATA / "neighbours.json").read_text("utf-8"))["entities"]
    found.update(json.loads((shared_data / "wikidata-Q42.json").read_text("utf-8"))["entities"])
    return found


@pytest.fixture(scope="module")
def searches() -> dict[str, Any]:
    recorded: dict[str, Any] = json.loads((DATA / "searches.json").read_text("utf-8"))
    return recorded


@pytest.fixture
def server(entities: dict[str, Any], searches: dict[str, Any]) -> Iterator[WikidataApiServer]:
    with WikidataApiServer(entities, searches=searches) as running:
        yield running


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def open_api(server: WikidataApiServer, clock: FakeClock, **options: Any) -> KnowledgeGraph:
    return connect("wikidata+api:", base_url=server.url, user_agent=UA, sleep=clock.sleep, clock=clock, **options)


@pytest.fixture
def kg(server: WikidataApiServer, clock: FakeClock) -> Iterator[KnowledgeGraph]:
    with open_api(server, clock) as graph:
        yield graph


# -- policy ----------------------------------------------------------------------------------------


class ClosingSession(requests.Session):
    """A real session that remembers being closed (the instrument; the backend is under test)."""

    closed = False

    def close(self) -> None:
        self.closed = True
        super().close()


@pytest.mark.parametrize("bad", [{"dialect": "wdqs"}, {"retries": "many"}])
def test_a_refused_option_closes_the_session_already_opened(server: WikidataApiServer, bad: dict[str, Any]) -> None:
    session = ClosingSession()
    with pytest.raises((TypeError, InvalidTermError)):
        connect("wikidata+api:", base_url=server.url, user_agent=UA, session=session, **bad)
    assert session.closed
    assert server.request_count == 0


def test_a_descriptive_user_agent_with_contact_is_required(server: WikidataApiServer) -> None:
    for agent in (None, "", "my-script/1.0"):
        with pytest.raises(InvalidTermError, match="User-Agent"):
            connect("wikidata+api:", base_url=server.url, **({} if agent is None else {"user_agent": agent}))
    with pytest.raises(TypeError, match="unknown option"):
        connect("wikidata+api:", base_url=server.url, user_agent=UA, dialect="wdqs")
    with pytest.raises(InvalidTermError, match="wikidata profile"):
        connect("wikidata+api:", base_url=server.url, user_agent=UA, profile="freebase")
    with pytest.raises(TypeError, match="base_url"):
        connect("wikidata+api://test.wikidata.org/w/api.php", base_url=server.url, user_agent=UA)
    assert server.request_count == 0
    with connect("wikidata+api://test.wikidata.org/w/api.php", user_agent=UA) as other:  # sends nothing yet
        assert isinstance(other, WikidataApiGraph) and other.endpoint == "https://test.wikidata.org/w/api.php"
    with connect("wikidata+api:", user_agent=UA) as default:
        assert isinstance(default, WikidataApiGraph) and default.endpoint == "https://www.wikidata.org/w/api.php"


def test_every_request_sends_maxlag_format_and_the_user_agent(kg: KnowledgeGraph, server: WikidataApiServer) -> None:
    kg.neighbors("Q42")
    kg.labels("Q42")
    kg.search("Douglas Adams")
    assert server.request_count == 3
    for call in server.calls():
        assert (call["maxlag"], call["format"], call["formatversion"]) == ("5", "json", "2")
    assert {request.user_agent for request in server.requests} == {UA}


def test_one_request_at_a_time_by_default(server: WikidataApiServer, clock: FakeClock) -> None:
    with open_api(server, clock) as kg:
        assert isinstance(kg, WikidataApiGraph)
        assert isinstance(kg.transport, RetryingTransport)
        assert isinstance(kg.transport.inner, RateLimitedTransport)
        assert kg.transport.inner.concurrency == 1
        ids = ["Q42", "Q350", "Q145", "Q5", "Q691283", "Q4961791", "Q3107329", "Q25169"]
        with ThreadPoolExecutor(max_workers=4) as pool:
            answers = list(pool.map(lambda entity: kg.labels(entity), ids))
    assert [answer[entity] for answer, entity in zip(answers, ids, strict=True)][:3] == [
        "Douglas Adams",
        "Cambridge",
        "United Kingdom",
    ]
    assert server.request_count == len(ids)
    assert server.max_in_flight == 1


# -- neighbors ---------------------------------------------------------------------------------------


def test_q42_truthy_neighbors(kg: KnowledgeGraph, server: WikidataApiServer) -> None:
    edges = kg.neighbors("Q42")["Q42"]
    assert len(edges) == 326
    assert [e for e in edges if e.relation == "P69"] == [
        Edge(head="Q42", relation="P69", tail="Q4961791"),
        Edge(head="Q42", relation="P69", tail="Q691283"),
    ]
    assert Edge(head="Q42", relation="P569", tail=date("1952-03-11T00:00:00Z")) in edges
    assert Edge(head="Q42", relation="P2048", tail=Literal(value="1.96", datatype=XSD_DECIMAL)) in edges
    assert [e.tail for e in edges if e.relation == "P998"] == [
        Literal(value="Arts/Literature/Authors/A/Adams,_Douglas/")
    ]
    assert [call["props"] for call in server.calls()] == ["claims"]
    assert server.calls()[0]["ids"] == "Q42"


def test_a_relation_filter_hides_unnamed_relations(server: WikidataApiServer, clock: FakeClock) -> None:
    hide = RelationFilter(drop=frozenset({"P31"}), drop_prefixes=("P10",))
    with open_api(server, clock) as plain, open_api(server, clock, relation_filter=hide) as filtered:
        everything = plain.neighbors("Q42")["Q42"]
        shown = filtered.neighbors("Q42")["Q42"]
        assert shown == [e for e in everything if e.relation != "P31" and not e.relation.startswith("P10")]
        assert len(shown) < len(everything) and any(e.relation == "P31" for e in everything)
        assert "P31" not in filtered.relations("Q42")["Q42"]
        assert filtered.neighbors("Q42", relations=["P31"])["Q42"] == [e for e in everything if e.relation == "P31"]
    with pytest.raises(InvalidTermError, match="relation_filter"):
        open_api(server, clock, relation_filter="some")


def test_q42_statements_with_qualifiers_and_ranks(kg: KnowledgeGraph) -> None:
    answer = kg.neighbors(["Q42", "Q350"], relations=["P69", "P1082"], qualifiers=True)
    assert answer["Q42"] == Q42_SCHOOLS
    population = [(e.tail, e.rank, e.qualifiers) for e in answer["Q350"]]
    assert population == [
        (Literal(value="123867", datatype=XSD_DECIMAL), "normal", Qualifiers({"P585": [date("2011-03-27T00:00:00Z")]})),
        (
            Literal(value="145700", datatype=XSD_DECIMAL),
            "preferred",
            Qualifiers({"P585": [date("2021-03-21T00:00:00Z")]}),
        ),
    ]  # the deprecated 999999 is left out
    truthy = kg.neighbors("Q350", relations=["P1082"])["Q350"]
    assert truthy == [Edge(head="Q350", relation="P1082", tail=Literal(value="145700", datatype=XSD_DECIMAL))]


def test_relations_literals_and_limits(kg: KnowledgeGraph) -> None:
    assert kg.relations("Q350")["Q350"] == ["P1082", "P17", "P31", "P625", "P793"]
    assert kg.neighbors("Q350", literals=False)["Q350"] == [
        Edge(head="Q350", relation="P17", tail="Q145"),
        Edge(head="Q350", relation="P31", tail="Q515"),
        Edge(head="Q350", relation="P793", tail="Q1190554"),
    ]
    assert len(kg.neighbors("Q42", limit_per_entity=3)["Q42"]) == 3
    assert kg.neighbors("Q42", relations=[])["Q42"] == []
    assert kg.neighbors("Q42", relations=["http://www.w3.org/2000/01/rdf-schema#label"])["Q42"] == []
    with pytest.raises(InvalidTermError):
        kg.neighbors("Q42", relations="P31")


def test_ids_are_batched_fifty_per_request(kg: KnowledgeGraph, server: WikidataApiServer) -> None:
    unknown = [f"Q{900000 + n}" for n in range(117)]
    ids = ["Q42", "Q350", *unknown, "http://www.wikidata.org/entity/Q145"]
    answer = kg.neighbors(ids, relations=["P17"])
    assert [len(call["ids"].split("|")) for call in server.calls()] == [50, 50, 20]
    assert answer["http://www.wikidata.org/entity/Q145"] == []  # the UK is in no country: no P17 edge
    assert answer["Q350"] == [Edge(head="Q350", relation="P17", tail="Q145")]
    assert all(answer[entity] == [] for entity in unknown)
    server.reset_counters()
    names = kg.labels(ids)
    assert [len(call["ids"].split("|")) for call in server.calls()] == [50, 50, 20]
    assert names == {
        "Q42": "Douglas Adams",
        "Q350": "Cambridge",
        "http://www.wikidata.org/entity/Q145": "United Kingdom",
    }


def test_ids_outside_wikidata_cost_nothing(kg: KnowledgeGraph, server: WikidataApiServer) -> None:
    image = "http://commons.wikimedia.org/wiki/Special:FilePath/Douglas%20adams%20portrait.jpg"
    assert kg.neighbors(image, direction="both") == {image: []}
    assert kg.labels(image) == {}
    assert server.request_count == 0
    with pytest.raises(InvalidTermError):
        kg.neighbors("not an id")


# -- incoming edges ----------------------------------------------------------------------------------------


def test_incoming_edges_from_backlinks(kg: KnowledgeGraph, server: WikidataApiServer) -> None:
    assert kg.neighbors("Q42", direction="in")["Q42"] == [
        Edge(head="Q25169", relation="P170", tail="Q42"),
        Edge(head="Q3107329", relation="P50", tail="Q42"),
    ]  # Q350 only names Q42 in a qualifier; Q25169's P50 statement is deprecated
    calls = server.calls()
    assert (calls[0]["list"], calls[0]["bltitle"]) == ("backlinks", "Q42")
    assert calls[1]["ids"] == "Q25169|Q3107329|Q350"
    assert len(calls) == 2


def test_incoming_edges_from_the_statement_index(kg: KnowledgeGraph, server: WikidataApiServer) -> None:
    answer = kg.neighbors("Q42", direction="in", relations=["P50", "P170"], qualifiers=True)
    assert answer["Q42"] == [
        Edge(
            head="Q25169",
            relation="P170",
            tail="Q42",
            rank="normal",
            qualifiers=Qualifiers({"P580": [date("1978-03-08T00:00:00Z")]}),
        ),
        Edge(head="Q3107329", relation="P50", tail="Q42", rank="normal"),
    ]
    assert server.calls()[0]["srsearch"] == "haswbstatement:P170=Q42|P50=Q42"
    assert kg.relations("Q42", direction="in")["Q42"] == ["P170", "P50"]
    sent = server.request_count
    label = "http://www.w3.org/2000/01/rdf-schema#label"  # not a Wikidata property: nothing to search for
    assert kg.neighbors("Q42", direction="in", relations=[label]) == {"Q42": []}
    assert server.request_count == sent


def test_incoming_edges_are_bounded(server: WikidataApiServer, clock: FakeClock) -> None:
    with open_api(server, clock, max_incoming=2) as kg:
        with pytest.raises(ResultTooLarge, match="more than 2 candidate"):
            kg.neighbors("Q42", direction="in")
        server.reset_counters()
        cut = kg.neighbors("Q42", direction="in", limit_per_entity=5)["Q42"]
        assert cut == [
            Edge(head="Q25169", relation="P170", tail="Q42"),
            Edge(head="Q3107329", relation="P50", tail="Q42"),
        ]
        assert server.calls()[0]["bllimit"] == "2"


def test_both_directions(kg: KnowledgeGraph) -> None:
    edges = kg.neighbors("Q3107329", direction="both")["Q3107329"]
    assert edges == [
        Edge(head="Q25169", relation="P527", tail="Q3107329"),
        Edge(head="Q3107329", relation="P31", tail="Q7725634"),
        Edge(head="Q3107329", relation="P407", tail="Q1860"),
        Edge(head="Q3107329", relation="P50", tail="Q42"),
        Edge(head="Q3107329", relation="P577", tail=date("1979-10-12T00:00:00Z")),
    ]


# -- algorithms over neighbors ----------------------------------------------------------------------------


def test_paths_walk_one_batch_per_hop(kg: KnowledgeGraph, server: WikidataApiServer) -> None:
    walks = kg.paths("Q42", ["P69", "P17"])
    assert list(walks) == [
        KGPath(
            start="Q42",
            edges=(
                Edge(head="Q42", relation="P69", tail="Q4961791"),
                Edge(head="Q4961791", relation="P17", tail="Q145"),
            ),
        ),
        KGPath(
            start="Q42",
            edges=(Edge(head="Q42", relation="P69", tail="Q691283"), Edge(head="Q691283", relation="P17", tail="Q145")),
        ),
    ]
    assert [call["ids"] for call in server.calls()] == ["Q42", "Q4961791|Q691283"]


def test_shortest_paths_and_subgraph(kg: KnowledgeGraph) -> None:
    shortest = kg.shortest_paths("Q691283", "Q145", max_hops=3, direction="out")
    assert list(shortest) == [KGPath(start="Q691283", edges=(Edge(head="Q691283", relation="P17", tail="Q145"),))]
    two_hops = kg.shortest_paths("Q691283", "Q515", max_hops=3, direction="out")
    assert [p.relations for p in two_hops] == [("P131", "P31")]
    sub = kg.subgraph("Q691283", hops=2, direction="out", relations=["P131", "P17"])
    assert list(sub) == [
        Edge(head="Q691283", relation="P131", tail="Q350"),
        Edge(head="Q691283", relation="P17", tail="Q145"),
        Edge(head="Q350", relation="P17", tail="Q145"),
    ]


# -- labels, descriptions, search ---------------------------------------------------------------------------


def test_labels_with_language_fallbacks(kg: KnowledgeGraph, server: WikidataApiServer) -> None:
    ids = ["Q42", "Q350", "Q145", "Q159288", "P69"]
    assert kg.labels(ids) == {
        "Q42": "Douglas Adams",  # Q42 has no English label: its mul label stands for every language
        "Q350": "Cambridge",
        "Q145": "United Kingdom",
        "Q159288": "Santa Barbara",  # en-us, found when every language is asked for
        "P69": "educated at",
    }
    calls = server.calls()
    assert [(call["ids"], call.get("languages"), call.get("languagefallback")) for call in calls] == [
        ("Q42|Q350|Q145|Q159288|P69", "en|mul", "1"),
        ("Q159288", None, None),
    ]
    assert kg.labels(ids, lang=["de-ch", "fr"]) == {
        "Q42": "Douglas Adams",
        "Q350": "Cambridge",
        "Q145": "Vereinigtes Königreich",  # de, the base of de-ch, comes before fr
        "Q159288": "Santa Barbara",  # fr
        "P69": "besuchte Bildungseinrichtung",
    }
    assert server.calls()[2]["languages"] == "de-ch|fr|mul|de"


def test_describe_gives_label_and_description(kg: KnowledgeGraph) -> None:
    assert kg.describe(["Q42", "Q159288", "Q9999999"], lang="en") == {
        "Q42": Entity(
            id="Q42", label="Douglas Adams", description="British science fiction writer and humorist (1952–2001)"
        ),
        "Q159288": Entity(id="Q159288", label="Santa Barbara", description="ciudad de California"),
        "Q9999999": Entity(id="Q9999999"),
    }
    assert kg.describe("Q350", lang="de")["Q350"] == Entity(
        id="Q350", label="Cambridge", description="Stadt in England"
    )


def test_search_links_entities(kg: KnowledgeGraph, server: WikidataApiServer, searches: dict[str, Any]) -> None:
    assert kg.search("Douglas Adams", limit=3) == [
        Entity(id="Q42", label="Douglas Adams", description="British science fiction writer and humorist (1952–2001)"),
        Entity(id="Q28421831", label="Douglas Adams", description="American environmental engineer"),
        Entity(id="Q21252414", label="Douglas Adams", description="American Episcopal bishop"),
    ]
    assert [e.id for e in kg.search("douglas adams")] == [hit["id"] for hit in searches["douglas adams"]]
    assert kg.search("   ") == [] and kg.search("Douglas Adams", limit=0) == []
    calls = server.calls()
    assert [(c["action"], c["search"], c["language"], c["type"], c["limit"]) for c in calls] == [
        ("wbsearchentities", "Douglas Adams", "en", "item", "3"),
        ("wbsearchentities", "douglas adams", "en", "item", "10"),
    ]


def test_search_pages_past_fifty(entities: dict[str, Any], clock: FakeClock) -> None:
    hits = [{"id": f"Q{n}", "label": f"thing {n}"} for n in range(1, 61)]
    with WikidataApiServer(entities, searches={"thing": hits}) as server, open_api(server, clock) as kg:
        found = kg.search("thing", limit=55)
        assert [e.id for e in found] == [f"Q{n}" for n in range(1, 56)]
        assert [(c["limit"], c["continue"]) for c in server.calls()] == [("50", "0"), ("5", "50")]


@pytest.mark.parametrize(
    "hit",
    [{"label": "no id"}, {"id": 42, "label": "x"}, {"id": "Q1", "label": ["x"]}, "Q1", {"id": "Q1", "description": 7}],
)
def test_a_malformed_search_hit_is_a_typed_error(entities: dict[str, Any], clock: FakeClock, hit: Any) -> None:
    with (
        WikidataApiServer(entities, searches={"thing": [hit]}) as server,
        open_api(server, clock) as kg,
        pytest.raises(ResultMismatch),
    ):
        kg.search("thing")


# -- faults ---------------------------------------------------------------------------------------------


def test_429_maxlag_and_resets_are_retried_after_retry_after(
    entities: dict[str, Any], searches: dict[str, Any], clock: FakeClock
) -> None:
    plan = FaultPlan(["429:3", "maxlag:7", "reset"])
    with WikidataApiServer(entities, searches=searches, plan=plan) as server, open_api(server, clock) as kg:
        edges = kg.neighbors("Q42", relations=["P69"])["Q42"]
        assert [e.tail for e in edges] == ["Q4961791", "Q691283"]
        assert plan.history == ["429:3", "maxlag:7", "reset", "ok"]
        assert clock.sleeps[:2] == [3.0, 7.0]  # the Retry-After of the 429, then of the maxlag answer
        assert len(clock.sleeps) == 3 and clock.sleeps[2] > 0  # backoff after the reset
        assert server.request_count == 4


def test_persistent_maxlag_ends_in_retries_exhausted(entities: dict[str, Any], clock: FakeClock) -> None:
    plan = FaultPlan.constant("maxlag:5")
    with WikidataApiServer(entities, plan=plan) as server, open_api(server, clock, retries=2) as kg:
        with pytest.raises(RetriesExhausted) as caught:
            kg.labels("Q42")
        assert caught.value.attempts == 3
        assert clock.sleeps == [5.0, 5.0]
        assert server.request_count == 3


def test_a_retry_after_beyond_the_budget_gives_up_at_once(entities: dict[str, Any], clock: FakeClock) -> None:
    plan = FaultPlan(["429:600"])
    with WikidataApiServer(entities, plan=plan) as server, open_api(server, clock, retry_seconds=60) as kg:
        with pytest.raises(RetriesExhausted, match="Retry-After"):
            kg.labels("Q42")
        assert clock.sleeps == [] and server.request_count == 1


def test_api_errors_are_typed(entities: dict[str, Any], server: WikidataApiServer, clock: FakeClock) -> None:
    transport = WikibaseApiTransport(server.url, user_agent=UA)
    with pytest.raises(QueryError, match="badvalue"):
        transport.execute({"action": "no-such-action"})
    transport.close()
    broken = {"Q1": {"type": "item", "id": "Q1", "claims": {"P31": [{"mainsnak": {"snaktype": "value"}}]}}}
    with WikidataApiServer(broken) as bad, open_api(bad, clock) as kg, pytest.raises(BackendError, match="Q1"):
        kg.neighbors("Q1")


# -- the cache wrapper ------------------------------------------------------------------------------------


def test_works_under_the_cache(server: WikidataApiServer, clock: FakeClock, tmp_path: Path) -> None:
    cache = str(tmp_path / "wikidata-api.sqlite")
    with open_api(server, clock, cache=cache) as kg:
        first = kg.neighbors(["Q42", "Q350"], relations=["P69", "P17"])
        names = kg.labels(["Q42", "Q350"])
        walks = kg.paths("Q42", ["P69", "P17"])
        sent = server.request_count
        assert kg.neighbors(["Q42", "Q350"], relations=["P69", "P17"]) == first
        assert kg.labels(["Q42", "Q350"]) == names
        assert list(kg.paths("Q42", ["P69", "P17"])) == list(walks)
        assert server.request_count == sent
    with open_api(server, clock, cache=cache, cache_mode="replay") as offline:
        assert offline.neighbors(["Q42", "Q350"], relations=["P69", "P17"]) == first
        assert offline.labels(["Q42", "Q350"]) == {"Q42": "Douglas Adams", "Q350": "Cambridge"}
    assert server.request_count == sent


def test_the_command_line_reaches_the_api(server: WikidataApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"wikidata+api:?user_agent={quote(UA)}&base_url={quote(server.url)}"
    assert main(["labels", "--kg", url, "--id", "Q42", "--id", "Q350", "--lang", "de", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows == [{"id": "Q42", "label": "Douglas Adams"}, {"id": "Q350", "label": "Cambridge"}]
    assert main(["search", "Douglas Adams", "--kg", url, "--limit", "1", "--json"]) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == [  # the entity codec's shape
        {
            "id": "Q42",
            "label": "Douglas Adams",
            "description": "British science fiction writer and humorist (1952–2001)",
        }
    ]
    assert {request.user_agent for request in server.requests} == {UA}


def test_each_operation_logs_its_request_count_at_debug(
    entities: dict[str, Any], clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    with (
        WikidataApiServer(entities) as server,
        open_api(server, clock) as kg,
        caplog.at_level(logging.DEBUG, logger="kg_adapters"),
    ):
        kg.labels(["Q42"])
        kg.paths("Q42", ["P69"])
        sent = server.request_count
    counts = [record.getMessage() for record in caplog.records if record.levelno == logging.DEBUG]
    assert [message.split(" on ")[0] for message in counts] == ["labels", "paths"]
    assert sum(int(message.rsplit(": ", 1)[1].split()[0]) for message in counts) == sent


class _HostileBacklinks(WikidataApiServer):
    """Answers every backlinks request with one scripted document (the rest as recorded)."""

    def __init__(self, entities: dict[str, Any], answer: Any) -> None:
        super().__init__(entities)
        self.answer = answer

    def _backlinks(self, params: Any) -> Any:
        return self.answer


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        # the same continuation forever, with nothing new: would page until the process is killed
        ({"query": {"backlinks": []}, "continue": {"blcontinue": "0|1", "continue": "-||"}}, "no new"),
        ({"query": {"backlinks": [{"title": "Q1"}]}, "continue": {"blcontinue": "0|1", "continue": "-||"}}, "no new"),
        ({"query": []}, "not an object"),
        ({"query": {"backlinks": {"title": "Q1"}}}, "not a list"),
        ({"query": {"backlinks": ["Q1"]}}, "not a list of page objects"),
        ({"query": {"backlinks": []}, "continue": ["blcontinue"]}, "not an object"),
    ],
)
def test_a_misbehaving_backlinks_answer_is_a_typed_error(
    entities: dict[str, Any], clock: FakeClock, answer: Any, problem: str
) -> None:
    with (
        _HostileBacklinks(entities, answer) as server,
        open_api(server, clock) as kg,
        pytest.raises(ResultMismatch, match=problem),
    ):
        kg.neighbors("Q42", direction="in")
    assert server.request_count <= 3  # one backlinks page (two for a repeat), nothing more
