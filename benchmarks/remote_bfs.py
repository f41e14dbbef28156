"""Batched remote BFS (``paths()``, ``subgraph()``) against a real Virtuoso vs Think-on-Graph's
one-query-per-entity pattern, plus the warm-cache speed-up.

Run from the repository root::

    .venv/bin/python -m benchmarks.remote_bfs [--queries N] [--repeats R]

A throwaway Virtuoso 7 (``kg_adapters/testing/virtuoso.py``: loopback ports, its own config, stock
``ResultSetMaxRows`` = ``MaxSortedTopRows`` = 10,000) is loaded with FB15k-237 (Freebase ids) and
both sides answer the same queries in the same process, over HTTP on loopback:

* ours: ``connect("sparql+http://127.0.0.1:PORT/sparql", dialect="virtuoso", profile="freebase",
  retries=0)``; ``kg.paths(start, [r1, r2])`` and ``kg.subgraph(seed, hops=2)`` (both directions).
  Each hop is one batched VALUES query per direction (ids chunked, answers paged or split when
  Virtuoso caps them).
* ToG: Think-on-Graph's access pattern (``freebase_func.py``) reimplemented from its description:
  one SPARQL query per frontier entity, sent one at a time, each with a fresh ``SPARQLWrapper``
  object (GET, JSON; urllib opens a new connection per query), exactly like ToG's
  ``execurte_sparql``. Paths: ToG's ``sparql_tail_entities_extract`` text
  (``SELECT ?tailEntity WHERE { ns:E ns:R ?tailEntity }``) per entity, hop by hop over the
  relation path. Subgraph: per entity one query for its out-edges and one for its in-edges.
  Deviation from ToG, so the answers can be compared: literal tails are kept (ToG drops ids that
  do not start with ``m.``), and terms keep their datatype/language.

Both sides must return the same path multiset / edge set for every query (checked on every
repeat; mismatches are counted and fail the run). Queries come from seeded random walks over a
local copy of the file, keeping those whose hop-1 frontier has at least 10 entities.

Figures: HTTP round trips per query, per-query latency (median over repeats, then median and p90
over queries; sides rotate which goes first), and the warm-cache speed-up of ours with
``connect(..., cache="memory")``: every query run cold (cache cleared just before it), then
again warm.
"""

from __future__ import annotations

import gc
import gzip
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, cast

from benchmarks import common
from kg_adapters.records import Literal

NAME = "remote_bfs"
MODULE = "benchmarks.remote_bfs"
FREEBASE_NS = "http://rdf.freebase.com/ns/"
XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
DEFAULT_DATA = common.REPO_ROOT.parent / "shared" / "data" / "fb15k237-freebase.nt.gz"

MIN_FRONTIER = 10
TARGET_ROUND_TRIP_RATIO = 5.0  # ToG round trips / ours, at least
TARGET_LATENCY_RATIO = 3.0  # ToG latency / ours, at least
TARGET_WARM_RATIO = 0.05  # warm / cold latency of ours with the cache, at most

# ToG's query texts (freebase_func.py), plus the two per-entity edge queries of its style.
TOG_TAIL_ENTITIES = (
    "PREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT ?tailEntity\nWHERE {\nns:%s ns:%s ?tailEntity .\n}"
)
TOG_OUT_EDGES = (
    "PREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT ?relation ?tailEntity\nWHERE {\nns:%s ?relation ?tailEntity .\n}"
)
TOG_IN_EDGES = (
    "PREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT ?headEntity ?relation\nWHERE {\n?headEntity ?relation ns:%s .\n}"
)

PathQuery = tuple[str, tuple[str, ...]]
EdgeKey = tuple[str, str, Any]
OPS = ("paths", "subgraph")


log = common.log


# ================================================================================================
# the local copy of the graph (only to sample queries)
# ================================================================================================
class LocalGraph:
    """Entity adjacency of the file, ids compacted like the freebase profile; literal tails kept
    as a marker (they end walks)."""

    def __init__(self, path: Path) -> None:
        import pyoxigraph as ox

        self.out: dict[str, list[tuple[str, str | None]]] = {}
        self.inn: dict[str, list[tuple[str, str]]] = {}
        self.triples = 0
        named = ox.NamedNode
        cut = len(FREEBASE_NS)
        with cast(IO[bytes], gzip.open(path, "rb")) as handle:
            for quad in ox.parse(handle, format=ox.RdfFormat.N_TRIPLES):
                self.triples += 1
                head, relation, obj = quad.subject.value[cut:], quad.predicate.value[cut:], quad.object
                if type(obj) is named:
                    tail = obj.value[cut:]
                    self.out.setdefault(head, []).append((relation, tail))
                    self.inn.setdefault(tail, []).append((relation, head))
                else:
                    self.out.setdefault(head, []).append((relation, None))
        self.entities = sorted(set(self.out) | set(self.inn))

    def tails(self, node: str, relation: str) -> list[str]:
        return list(dict.fromkeys(t for r, t in self.out.get(node, ()) if r == relation and t is not None))

    def neighbours(self, node: str) -> set[str]:
        found = {t for _, t in self.out.get(node, ()) if t is not None}
        found.update(h for _, h in self.inn.get(node, ()))
        found.discard(node)
        return found


def sample_path_queries(graph: LocalGraph, count: int, seed: int) -> list[PathQuery]:
    """(start, [r1, r2]) from seeded random walks over out-edges, kept when the entities reached
    over r1 (the hop-1 frontier) number at least MIN_FRONTIER."""
    rng = random.Random(f"{seed}/paths")
    starts = sorted(node for node, edges in graph.out.items() if edges)
    queries: list[PathQuery] = []
    seen: set[PathQuery] = set()
    for _ in range(10_000 * count):
        if len(queries) >= count:
            return queries
        start = node = rng.choice(starts)
        rule: list[str] = []
        for step in range(2):
            options = sorted(
                (relation, tail or "")
                for relation, tail in graph.out.get(node, ())
                if step == 1 or (tail is not None and graph.out.get(tail))
            )
            if not options:
                break
            relation, node = rng.choice(options)
            rule.append(relation)
        query = (start, tuple(rule))
        if len(rule) == 2 and query not in seen and len(graph.tails(start, rule[0])) >= MIN_FRONTIER:
            seen.add(query)
            queries.append(query)
    raise RuntimeError(f"could not sample {count} path queries")


def sample_subgraph_seeds(graph: LocalGraph, count: int, seed: int) -> list[str]:
    """Seeds drawn uniformly from the entities with at least MIN_FRONTIER distinct neighbours."""
    rng = random.Random(f"{seed}/subgraph")
    eligible = [node for node in graph.entities if len(graph.neighbours(node)) >= MIN_FRONTIER]
    return rng.sample(eligible, count)


# ================================================================================================
# Think-on-Graph's access pattern
# ================================================================================================
class TogClient:
    """ToG's ``execurte_sparql``: a new SPARQLWrapper per query (GET, JSON, no connection reuse).
    With ``client="requests"``: one plain ``requests.post`` per query (no Session, so no reuse).
    Counts round trips, and answers Virtuoso capped (X-SPARQL-MaxRows; ToG never checks)."""

    def __init__(self, endpoint: str, client: str = "sparqlwrapper") -> None:
        self.endpoint = endpoint
        self.client = client
        self.requests_sent = 0
        self.capped_answers = 0

    def execute(self, query: str) -> list[dict[str, Any]]:
        self.requests_sent += 1
        if self.client == "requests":
            import requests

            response = requests.post(
                self.endpoint, data={"query": query}, headers={"Accept": "application/sparql-results+json"}
            )
            response.raise_for_status()
            if "X-SPARQL-MaxRows" in response.headers:
                self.capped_answers += 1
            bindings: list[dict[str, Any]] = response.json()["results"]["bindings"]
            return bindings
        from SPARQLWrapper import JSON, SPARQLWrapper

        sparql = SPARQLWrapper(self.endpoint)
        sparql.setQuery(query)
        sparql.setReturnFormat(JSON)
        answer = sparql.query()
        if answer.info().get("x-sparql-maxrows") is not None:
            self.capped_answers += 1
        results: Any = answer.convert()
        return cast(list[dict[str, Any]], results["results"]["bindings"])


def tog_term(term: dict[str, Any]) -> Any:
    """A SPARQL-JSON term in our spelling: compact ids (ToG's replace_entities_prefix), and
    literals as kg_adapters Literal (ToG keeps only the value and later drops non-``m.`` ids)."""
    kind, value = term["type"], term["value"]
    if kind == "uri":
        return value[len(FREEBASE_NS) :] if value.startswith(FREEBASE_NS) else value
    if kind == "bnode":
        return "_:" + value.removeprefix("nodeID://")
    lang = term.get("xml:lang")
    if lang:
        return Literal(value=value, lang=lang.lower())
    datatype = term.get("datatype")
    return Literal(value=value, datatype=None if datatype in (None, XSD_STRING) else datatype)


def tog_paths(client: TogClient, start: str, rule: Sequence[str]) -> list[tuple[EdgeKey, ...]]:
    """Hop by hop: for every entity of the frontier, one query for its tails over that hop's relation."""
    layers: list[dict[str, list[Any]]] = []
    frontier = [start]
    for relation in rule:
        adjacency: dict[str, list[Any]] = {}
        for entity in frontier:
            bindings = client.execute(TOG_TAIL_ENTITIES % (entity, relation))
            adjacency[entity] = [tog_term(b["tailEntity"]) for b in bindings]
        layers.append(adjacency)
        frontier = list(dict.fromkeys(t for tails in adjacency.values() for t in tails if isinstance(t, str)))
    paths: list[tuple[EdgeKey, ...]] = []

    def walk(node: str, depth: int, prefix: tuple[EdgeKey, ...]) -> None:
        for tail in layers[depth].get(node, ()):
            edge = (node, rule[depth], tail)
            if depth == len(rule) - 1:
                paths.append((*prefix, edge))
            elif isinstance(tail, str):
                walk(tail, depth + 1, (*prefix, edge))

    walk(start, 0, ())
    return paths


def tog_subgraph(client: TogClient, seed: str, hops: int = 2) -> set[EdgeKey]:
    """Hop by hop: for every entity of the frontier, one query for its out-edges, one for its in-edges."""
    seen = {seed}
    edges: set[EdgeKey] = set()
    frontier = [seed]
    for _ in range(hops):
        following: list[str] = []
        for entity in frontier:
            for b in client.execute(TOG_OUT_EDGES % entity):
                tail = tog_term(b["tailEntity"])
                edges.add((entity, tog_term(b["relation"]), tail))
                if isinstance(tail, str) and tail not in seen:
                    seen.add(tail)
                    following.append(tail)
            for b in client.execute(TOG_IN_EDGES % entity):
                head = tog_term(b["headEntity"])
                edges.add((head, tog_term(b["relation"]), entity))
                if head not in seen:
                    seen.add(head)
                    following.append(head)
        frontier = following
    return edges


# ================================================================================================
# our side
# ================================================================================================
class CountingTransport:
    """Wraps our HTTP transport to count capped answers and rows received (a SparqlTransport)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.capped_answers = 0
        self.rows_received = 0

    @property
    def endpoint(self) -> str:
        return str(self.inner.endpoint)

    @property
    def requests_sent(self) -> int:
        return int(self.inner.requests_sent)

    def execute(self, query: str) -> Any:
        result = self.inner.execute(query)
        self.capped_answers += bool(result.capped)
        self.rows_received += len(result.rows)
        return result

    def close(self) -> None:
        self.inner.close()


def open_ours(sparql_url: str, **options: Any) -> Any:
    from kg_adapters import connect

    # No relation filter: ToG's client sees every edge, and both sides must answer alike.
    return connect(
        "sparql+" + sparql_url, dialect="virtuoso", profile="freebase", retries=0, relation_filter=None, **options
    )


def http_transport(kg: Any) -> Any:
    """The HTTP transport under ``kg`` (through the cache wrapper, if any)."""
    inner = getattr(kg, "inner", kg)
    transport = inner.transport
    if not hasattr(transport, "requests_sent"):
        raise RuntimeError(f"expected the HTTP transport (retries=0), got {type(transport).__name__}")
    return transport


def instrument(kg: Any) -> CountingTransport:
    inner = getattr(kg, "inner", kg)
    counting = CountingTransport(http_transport(kg))
    inner.transport = counting
    return counting


def path_key(result: Any) -> Counter[tuple[EdgeKey, ...]]:
    return Counter(tuple(edge.as_tuple() for edge in path.edges) for path in result)


def edge_key(result: Any) -> set[EdgeKey]:
    return {edge.as_tuple() for edge in result}


# ================================================================================================
# measurement
# ================================================================================================
class Side:
    """One way of answering the queries of one operation: ``run(query)`` returns an answer,
    ``key(answer)`` a comparable form, ``requests()`` the round trips sent so far."""

    def __init__(
        self, name: str, run: Callable[[Any], Any], key: Callable[[Any], Any], requests: Callable[[], int]
    ) -> None:
        self.name = name
        self.run = run
        self.key = key
        self.requests = requests


def measure(
    op: str, queries: Sequence[Any], sides: Sequence[Side], repeats: int, reference: str = "tog"
) -> dict[str, Any]:
    """Every query on every side, ``repeats`` times (the side that goes first rotates per repeat);
    per query: latencies, round trips, answer size, and whether each side matched ``reference``."""
    perf = time.perf_counter
    n = len(queries)
    times: dict[str, list[list[float]]] = {s.name: [[] for _ in range(n)] for s in sides}
    trips: dict[str, list[set[int]]] = {s.name: [set() for _ in range(n)] for s in sides}
    sizes: list[int] = [0] * n
    mismatched: dict[str, set[int]] = {s.name: set() for s in sides}
    began = perf()
    orders: list[list[str]] = []
    for rep in range(repeats):
        gc.collect()
        order = list(sides[rep % len(sides) :]) + list(sides[: rep % len(sides)])
        orders.append([side.name for side in order])
        for i, query in enumerate(queries):
            answers: dict[str, Any] = {}
            for side in order:
                before = side.requests()
                t0 = perf()
                answer = side.run(query)
                elapsed = perf() - t0
                times[side.name][i].append(elapsed)
                trips[side.name][i].add(side.requests() - before)
                answers[side.name] = side.key(answer)
                del answer
            ref = answers[reference]
            sizes[i] = sum(ref.values()) if isinstance(ref, Counter) else len(ref)
            for name, got in answers.items():
                if got != ref or not ref:
                    mismatched[name].add(i)
        log(f"  {op}: repeat {rep + 1}/{repeats} done ({perf() - began:.0f} s)")
    out: dict[str, Any] = {"queries": n, "repeats": repeats, "answer_sizes": sizes, "order": orders}
    for side in sides:
        variable = [i for i, t in enumerate(trips[side.name]) if len(t) != 1]
        out[side.name] = {
            "per_query_median_s": [common.median(t) for t in times[side.name]],
            "per_query_times_s": times[side.name],
            "per_query_round_trips": [max(t) for t in trips[side.name]],
            "queries_with_varying_round_trips": len(variable),
            "mismatches": len(mismatched[side.name]) if side.name != reference else 0,
            "mismatched_queries": sorted(mismatched[side.name])[:10] if side.name != reference else [],
        }
    out["empty_reference_answers"] = len(mismatched[reference])
    return out


def measure_cache(
    op: str,
    queries: Sequence[Any],
    kg: Any,
    run: Callable[[Any, Any], Any],
    key: Callable[[Any], Any],
    expected: Sequence[Any],
    repeats: int,
) -> dict[str, Any]:
    """Per repeat and query: cache cleared, the query run cold, then run again warm. (Clearing per
    query keeps every cold figure really cold: in one cold pass over the set, later queries would
    reuse the hub entities that earlier ones fetched.)"""
    perf = time.perf_counter
    transport = http_transport(kg)
    n = len(queries)
    cold: list[list[float]] = [[] for _ in range(n)]
    warm: list[list[float]] = [[] for _ in range(n)]
    warm_trips = 0
    cold_trips = 0
    not_from_cache = 0
    mismatches: set[int] = set()
    for rep in range(repeats):
        gc.collect()
        for i, query in enumerate(queries):
            kg.cache.clear()
            before = transport.requests_sent
            t0 = perf()
            answer = run(kg, query)
            cold[i].append(perf() - t0)
            cold_trips += transport.requests_sent - before
            if key(answer) != expected[i]:
                mismatches.add(i)
            del answer
            before = transport.requests_sent
            t0 = perf()
            answer = run(kg, query)
            warm[i].append(perf() - t0)
            warm_trips += transport.requests_sent - before
            not_from_cache += not getattr(answer, "from_cache", False)
            if key(answer) != expected[i]:
                mismatches.add(i)
            del answer
        log(f"  {op} cache: repeat {rep + 1}/{repeats} done")
    cold_med = [common.median(t) for t in cold]
    warm_med = [common.median(t) for t in warm]
    c, w = common.median(cold_med), common.median(warm_med)
    per_query = [common.ratio(b, a) for a, b in zip(cold_med, warm_med, strict=True)]
    return {
        "queries": n,
        "repeats": repeats,
        "cold_median_s": c,
        "warm_median_s": w,
        "ratio_warm_cold": common.ratio(w, c),
        "cold_p90_s": common.percentile(cold_med, 90),
        "warm_p90_s": common.percentile(warm_med, 90),
        "median_of_per_query_ratios": common.median(per_query),
        "p90_of_per_query_ratios": common.percentile(per_query, 90),
        "queries_meeting_target": sum(1 for r in per_query if r <= TARGET_WARM_RATIO),
        "cold_round_trips_per_pass": cold_trips / repeats,
        "warm_round_trips_total": warm_trips,
        "warm_answers_not_from_cache": not_from_cache,
        "mismatches": len(mismatches),
        "target": TARGET_WARM_RATIO,
        "target_met": common.ratio(w, c) <= TARGET_WARM_RATIO,
        "per_query_cold_median_s": cold_med,
        "per_query_warm_median_s": warm_med,
    }


def summarise(raw: dict[str, Any], ours: str = "ours", tog: str = "tog") -> dict[str, Any]:
    """Round-trip and latency figures (ratios are ToG / ours: higher is better for ours)."""
    a, b = raw[ours], raw[tog]
    a_t, b_t = a["per_query_median_s"], b["per_query_median_s"]
    a_r, b_r = a["per_query_round_trips"], b["per_query_round_trips"]
    trip_ratios = [common.ratio(y, x) for x, y in zip(a_r, b_r, strict=True)]
    lat_ratios = [common.ratio(y, x) for x, y in zip(a_t, b_t, strict=True)]
    out = {
        "round_trips": {
            "ours_median": common.median(a_r),
            "tog_median": common.median(b_r),
            "ratio_median": common.ratio(common.median(b_r), common.median(a_r)),
            "ours_p90": common.percentile(a_r, 90),
            "tog_p90": common.percentile(b_r, 90),
            "ours_total": sum(a_r),
            "tog_total": sum(b_r),
            "ratio_total": common.ratio(sum(b_r), sum(a_r)),
            "min_per_query_ratio": min(trip_ratios),
            "queries_meeting_target": sum(1 for r in trip_ratios if r >= TARGET_ROUND_TRIP_RATIO),
            "target": TARGET_ROUND_TRIP_RATIO,
        },
        "latency": {
            "ours_median_s": common.median(a_t),
            "tog_median_s": common.median(b_t),
            "ratio_median": common.ratio(common.median(b_t), common.median(a_t)),
            "ours_p90_s": common.percentile(a_t, 90),
            "tog_p90_s": common.percentile(b_t, 90),
            "ratio_p90": common.ratio(common.percentile(b_t, 90), common.percentile(a_t, 90)),
            "ours_total_s": sum(a_t),
            "tog_total_s": sum(b_t),
            "ratio_total": common.ratio(sum(b_t), sum(a_t)),
            "median_of_per_query_ratios": common.median(lat_ratios),
            "queries_meeting_target": sum(1 for r in lat_ratios if r >= TARGET_LATENCY_RATIO),
            "target": TARGET_LATENCY_RATIO,
        },
    }
    # Repeat r: median over queries of that repeat's latencies (the side going first rotates, and
    # in repeat 1 every query text is new to Virtuoso; later repeats re-send texts it has seen).
    repeats = len(a["per_query_times_s"][0]) if a["per_query_times_s"] else 0
    out["latency"]["per_repeat"] = [
        {
            "first_side": raw.get("order", [])[r][0] if raw.get("order") else None,
            "ours_median_s": common.median([t[r] for t in a["per_query_times_s"]]),
            "tog_median_s": common.median([t[r] for t in b["per_query_times_s"]]),
        }
        for r in range(repeats)
    ]
    for item in out["latency"]["per_repeat"]:
        item["ratio_median"] = common.ratio(item["tog_median_s"], item["ours_median_s"])
    out["round_trips"]["target_met"] = out["round_trips"]["ratio_median"] >= TARGET_ROUND_TRIP_RATIO
    out["latency"]["target_met"] = out["latency"]["ratio_median"] >= TARGET_LATENCY_RATIO
    return out


# ================================================================================================
# report
# ================================================================================================
def verdict(met: bool) -> str:
    return "MET" if met else "NOT MET"


HEADERS = ["measure", "ours", "ToG", "ToG/ours", "target"]
CACHE_HEADERS = ["measure", "cold", "warm", "warm/cold", "target"]


def summary_rows(results: dict[str, Any]) -> list[list[str]]:
    row, f_r = common.comparison_row, common.fmt_ratio
    rows = []
    for op in OPS:
        s = results["summary"][op]
        rt, lat, queries = s["round_trips"], s["latency"], results["raw"][op]["queries"]
        label = "paths() 2-hop" if op == "paths" else "subgraph(hops=2)"
        trips_target = f">= {TARGET_ROUND_TRIP_RATIO:.0f}x: {verdict(rt['target_met'])}"
        latency_target = f">= {TARGET_LATENCY_RATIO:.0f}x: {verdict(lat['target_met'])}"
        met = f"({lat['queries_meeting_target']}/{queries} queries >= {TARGET_LATENCY_RATIO:.0f}x)"
        rows += [
            row(
                f"{label}: HTTP round trips / query, median",
                rt["ours_median"],
                rt["tog_median"],
                rt["ratio_median"],
                trips_target,
                fmt="{:.0f}".format,
            ),
            row(
                f"{label}: HTTP round trips, total",
                rt["ours_total"],
                rt["tog_total"],
                rt["ratio_total"],
                f"(worst query {f_r(rt['min_per_query_ratio'])})",
                fmt="{:,}".format,
            ),
            row(
                f"{label}: latency / query, median",
                lat["ours_median_s"],
                lat["tog_median_s"],
                lat["ratio_median"],
                latency_target,
            ),
            row(f"{label}: latency / query, p90", lat["ours_p90_s"], lat["tog_p90_s"], lat["ratio_p90"]),
            row(
                f"{label}: latency, total over {queries} queries",
                lat["ours_total_s"],
                lat["tog_total_s"],
                lat["ratio_total"],
                met,
            ),
        ]
    return rows


def cache_rows(results: dict[str, Any]) -> list[list[str]]:
    f_s = common.fmt_seconds
    rows = []
    for op in OPS:
        c = results["cache"][op]
        label = "paths() 2-hop" if op == "paths" else "subgraph(hops=2)"
        ratios = {"median": c["ratio_warm_cold"], "p90": common.ratio(c["warm_p90_s"], c["cold_p90_s"])}
        targets = {
            "median": f"<= {TARGET_WARM_RATIO}: {verdict(c['target_met'])}",
            "p90": f"({c['queries_meeting_target']}/{c['queries']} queries <= {TARGET_WARM_RATIO})",
        }
        rows.extend(
            [
                f"{label}: latency / query, {stat}",
                f_s(c[f"cold_{stat}_s"]),
                f_s(c[f"warm_{stat}_s"]),
                f"{ratio:.4f}",
                targets[stat],
            ]
            for stat, ratio in ratios.items()
        )
    return rows


def render_markdown(results: dict[str, Any]) -> str:
    m, cfg = results["machine"], results["config"]
    lines = [
        "# Remote BFS on Virtuoso: batched `paths()`/`subgraph()` vs Think-on-Graph's per-entity queries",
        "",
        f"Generated by `python -m {MODULE}` on {m['date_utc']} (library commit {cfg.get('library_commit')}"
        f"{', kg_adapters/ modified' if cfg.get('library_dirty') else ''}): {m['cpu_usable']} usable CPU(s) "
        f"({m['cpu_model']}), Python {m['python']}, {cfg['virtuoso_version']}, SPARQLWrapper "
        f"{m['versions'].get('SPARQLWrapper')}, requests {m['versions'].get('requests')}. Small, noisy, "
        "shared machine (client and server on the same 2 cores): medians and ratios only.",
        "",
        "## Targets",
        "",
    ]
    for op in OPS:
        s = results["summary"][op]
        rt, lat, c = s["round_trips"], s["latency"], results["cache"][op]
        name = "2-hop `paths()`" if op == "paths" else "`subgraph(hops=2)`"
        lines.append(
            f"- {name}: **{common.fmt_ratio(rt['ratio_median'])} fewer HTTP round trips** per query "
            f"(median {rt['ours_median']:.0f} vs {rt['tog_median']:.0f}; target >= {TARGET_ROUND_TRIP_RATIO:.0f}x: "
            f"**{verdict(rt['target_met'])}**)"
        )
        lines.append(
            f"- {name}: **latency ratio ToG/ours {common.fmt_ratio(lat['ratio_median'])}** per query "
            f"({'ours faster' if lat['ratio_median'] >= 1 else 'ours slower'}; "
            f"median {common.fmt_seconds(lat['ours_median_s'])} vs {common.fmt_seconds(lat['tog_median_s'])}; "
            f"target >= {TARGET_LATENCY_RATIO:.0f}x: **{verdict(lat['target_met'])}**)"
        )
        lines.append(
            f"- {name}, warm cache: **warm/cold = {c['ratio_warm_cold']:.4f}** "
            f"({common.fmt_seconds(c['warm_median_s'])} vs {common.fmt_seconds(c['cold_median_s'])}; "
            f"target <= {TARGET_WARM_RATIO}: **{verdict(c['target_met'])}**)"
        )
    lines += [
        "",
        "## Ours vs ToG (ratios are ToG / ours: higher is better for ours)",
        "",
        common.markdown_table(HEADERS, summary_rows(results)),
        "",
    ]
    for op in OPS:
        per = results["summary"][op]["latency"]["per_repeat"]
        lines.append(
            f"- {op}: latency ratio (ToG/ours, median over queries) per repeat: "
            + ", ".join(
                f"repeat {i + 1} ({item['first_side']} first) {common.fmt_ratio(item['ratio_median'])}"
                for i, item in enumerate(per)
            )
            + "."
        )
    lines += [
        "",
        "Whichever side sends a query first pays Virtuoso's warm-up for it (compiling a query text it has not "
        "seen, first rendering of the IRIs involved); in repeat 1 every query text is new to Virtuoso and ours "
        "goes first, later repeats re-send texts it has seen. The per-query median over repeats therefore leans "
        "towards the steady state.",
        "",
    ]
    lines += [
        '## Warm cache (ours with `cache="memory"`)',
        "",
        common.markdown_table(CACHE_HEADERS, cache_rows(results)),
        "",
    ]
    ours_counts = results["ours_counters"]
    lines += [
        "## Setup",
        "",
        f"- Data: `{Path(cfg['data']).name}`, {cfg['triples']:,} triples loaded into a throwaway Virtuoso "
        f"({cfg['virtuoso_version']}; `ResultSetMaxRows` {cfg['result_set_max_rows']:,}, `MaxSortedTopRows` "
        f"{cfg['max_sorted_top_rows']:,}) on loopback (start {cfg['virtuoso_start_s']:.1f} s, load "
        f"{cfg['virtuoso_load_s']:.1f} s).",
        f"- Ours: `{cfg['ours_url']}`; each hop is one batched VALUES query per direction (on Virtuoso the "
        "IRI ends come grouped per node and relation, `GROUP_CONCAT` checked against `COUNT`), chunked and "
        "split by the library.",
        f"- ToG: {cfg['tog_client_description']}",
        f"- Queries: {cfg['path_queries']} 2-hop `paths()` queries (start, [r1, r2]) from seeded random walks "
        f"(seed {cfg['seed']}) whose hop-1 frontier has >= {MIN_FRONTIER} entities (median "
        f"{cfg['path_frontier']['median']:.0f}, max {cfg['path_frontier']['max']}; paths per answer median "
        f"{cfg['path_answer_sizes']['median']:.0f}, max {cfg['path_answer_sizes']['max']}); "
        f"{cfg['subgraph_queries']} `subgraph(seed, hops=2)` seeds drawn uniformly from entities with >= "
        f"{MIN_FRONTIER} neighbours (hop-1 frontier median {cfg['subgraph_frontier']['median']:.0f}, max "
        f"{cfg['subgraph_frontier']['max']}; edges per answer median {cfg['subgraph_answer_sizes']['median']:,.0f}, "
        f"max {cfg['subgraph_answer_sizes']['max']:,}).",
        f"- Correctness: both sides returned the same path multiset / edge set for every query on every repeat "
        f"(mismatches: paths {results['raw']['paths']['ours']['mismatches']}, subgraph "
        f"{results['raw']['subgraph']['ours']['mismatches']}; warm-cache answers: paths "
        f"{results['cache']['paths']['mismatches']}, subgraph {results['cache']['subgraph']['mismatches']}). "
        f"ToG answers Virtuoso capped at its row limit: {results['tog_capped_answers']}.",
        f"- Latency: {cfg['repeats']} repeats in one process, the side that goes first rotating per repeat; "
        "median per query over repeats, then median / p90 over queries; total = sum of per-query medians. "
        "Round trips = HTTP requests sent (ours: the transport's `requests_sent`).",
        f"- Our capped answers (a chunk's answer hit Virtuoso's 10,000-row cap, was discarded and the chunk "
        f"split): paths {ours_counts['paths']['capped_answers']}, subgraph "
        f"{ours_counts['subgraph']['capped_answers']} over all repeats; rows received per subgraph pass "
        f"{ours_counts['subgraph']['rows_received_per_pass']:,.0f} for "
        f"{sum(results['raw']['subgraph']['answer_sizes']):,} answer edges.",
        '- Warm cache: `connect(..., cache="memory")`; per repeat and query: cache cleared, the query run cold, '
        "then run again warm (the cache is cleared per query so that every cold figure is really cold: in one "
        "cold pass over the set, later queries would reuse the hub entities earlier ones fetched). HTTP "
        f"requests in warm runs: {sum(results['cache'][op]['warm_round_trips_total'] for op in OPS)}; warm "
        f"answers not flagged from_cache: {sum(results['cache'][op]['warm_answers_not_from_cache'] for op in OPS)}"
        ". Medians per query over repeats, then over queries.",
        "- Client and server share one loopback interface, where a round trip costs a few milliseconds at most; "
        "on a real network every extra round trip also pays the network's RTT (ToG sends "
        + ", ".join(
            f"{op} {trips['tog_median'] - trips['ours_median']:.0f}"
            for op, trips in ((op, results["summary"][op]["round_trips"]) for op in OPS)
        )
        + " more per query, median), which this benchmark does not show.",
        f"- Whole run: {results['run_seconds']:.0f} s. Load average (1/5/15 min) at the start "
        + "/".join(f"{x:.1f}" for x in results["load_average_start"])
        + ", after paths "
        + "/".join(f"{x:.1f}" for x in results["load_average_after"]["paths"])
        + ", after subgraph "
        + "/".join(f"{x:.1f}" for x in results["load_average_after"]["subgraph"])
        + ", at the end "
        + "/".join(f"{x:.1f}" for x in results["load_average_end"])
        + " (2 cores shared with other jobs: above 2 the sides wait for CPU as much as for each other).",
    ]
    prev = results.get("previous_run")
    if prev:
        lines += [
            "",
            "## Previous run (same configuration)",
            "",
            f"{prev['date_utc']} (library {prev.get('library_commit') or 'commit not recorded'}"
            f"{', modified' if prev.get('library_dirty') else ''}): "
            + "; ".join(
                f"{op}: round trips {common.fmt_ratio(v['round_trip_ratio'])}, latency "
                f"{common.fmt_ratio(v['latency_ratio'])}, warm/cold {v['warm_cold']:.4f}"
                for op, v in prev["figures"].items()
            )
            + ".",
        ]
    return "\n".join(lines) + "\n"


def headline(results: dict[str, Any]) -> dict[str, Any]:
    return {
        "date_utc": results["machine"]["date_utc"],
        "library_commit": results["config"].get("library_commit"),
        "library_dirty": results["config"].get("library_dirty"),
        "figures": {
            op: {
                "round_trip_ratio": results["summary"][op]["round_trips"]["ratio_median"],
                "latency_ratio": results["summary"][op]["latency"]["ratio_median"],
                "warm_cold": results["cache"][op]["ratio_warm_cold"],
            }
            for op in OPS
        },
    }


def previous_headline(config: dict[str, Any]) -> dict[str, Any] | None:
    """The headline figures of the last written run, when it had the same configuration."""
    path = common.RESULTS_DIR / f"{NAME}.json"
    try:
        old = json.loads(path.read_text("utf-8"))
        same = all(
            old["config"].get(k) == config.get(k)
            for k in ("path_queries", "subgraph_queries", "repeats", "seed", "tog_client")
        )
        return headline(old) if same else None
    except (OSError, ValueError, KeyError):
        return None


def git_state() -> tuple[str | None, bool | None]:
    """(HEAD commit, whether kg_adapters/ differs from it) of the checkout being measured."""
    import subprocess

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=common.REPO_ROOT, capture_output=True, text=True, timeout=30)
        except OSError:
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    head = git("rev-parse", "--short", "HEAD")
    status = git("status", "--porcelain", "--", "kg_adapters")
    return head, (bool(status) if status is not None else None)


def stats(values: Sequence[int]) -> dict[str, Any]:
    return {"median": common.median(values), "p90": common.percentile(values, 90), "max": max(values)}


# ================================================================================================
# main
# ================================================================================================
def main(argv: list[str] | None = None) -> int:
    parser = common.argument_parser(MODULE, __doc__, data=DEFAULT_DATA)
    parser.add_argument("--queries", type=int, default=60, help="2-hop paths() queries (default 60)")
    parser.add_argument(
        "--subgraph-queries", type=int, default=None, help="subgraph(hops=2) seeds (default: --queries / 3)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats of each measurement (default 3)")
    parser.add_argument("--seed", type=int, default=20240607)
    parser.add_argument(
        "--tog-client",
        choices=("sparqlwrapper", "requests"),
        default="sparqlwrapper",
        help="ToG side: a new SPARQLWrapper per query (as ToG) or a plain requests.post per query",
    )
    parser.add_argument("--no-write", action="store_true", help="do not write benchmarks/results/")
    parser.add_argument("--allow-mismatch", action="store_true", help="write results even if answers differ")
    args = parser.parse_args(argv)
    sub_count = args.subgraph_queries if args.subgraph_queries is not None else max(1, args.queries // 3)

    from kg_adapters.testing.virtuoso import VirtuosoServer, virtuoso_version

    began = time.perf_counter()
    load_start = os.getloadavg()
    load_after: dict[str, tuple[float, float, float]] = {}
    data = Path(args.data).resolve()
    log("local copy of the graph (for sampling queries)")
    graph = LocalGraph(data)
    path_queries = sample_path_queries(graph, args.queries, args.seed)
    seeds = sample_subgraph_seeds(graph, sub_count, args.seed)
    path_frontier = [len(graph.tails(s, r[0])) for s, r in path_queries]
    sub_frontier = [len(graph.neighbours(s)) for s in seeds]
    triples = graph.triples
    del graph
    gc.collect()

    with tempfile.TemporaryDirectory(prefix="kga-remote-bfs-", ignore_cleanup_errors=True) as tmp:
        workdir = Path(tmp)
        server = VirtuosoServer(workdir, data_dirs=[data.parent])
        with server as virtuoso:
            log(f"Virtuoso up on {virtuoso.sparql_url} in {virtuoso.startup_seconds:.1f} s; loading {data.name}")
            t0 = time.perf_counter()
            loaded = virtuoso.load([data])
            load_s = time.perf_counter() - t0
            log(f"  {loaded:,} triples in {load_s:.1f} s")
            url = virtuoso.sparql_url

            ours = open_ours(url)
            ours_counts = instrument(ours)
            tog = TogClient(url, args.tog_client)

            raw: dict[str, Any] = {}
            counters: dict[str, Any] = {}
            for op in OPS:
                queries: Sequence[Any] = path_queries if op == "paths" else seeds
                if op == "paths":
                    sides = [
                        Side("ours", lambda q: ours.paths(q[0], q[1]), path_key, lambda: ours_counts.requests_sent),
                        Side("tog", lambda q: tog_paths(tog, q[0], q[1]), Counter, lambda: tog.requests_sent),
                    ]
                else:
                    sides = [
                        Side("ours", lambda q: ours.subgraph(q, hops=2), edge_key, lambda: ours_counts.requests_sent),
                        Side("tog", lambda q: tog_subgraph(tog, q, 2), lambda a: a, lambda: tog.requests_sent),
                    ]
                log(f"{op}: {len(queries)} queries x {args.repeats} repeats, sides {[s.name for s in sides]}")
                capped0, rows0 = ours_counts.capped_answers, ours_counts.rows_received
                raw[op] = measure(op, queries, sides, args.repeats)
                counters[op] = {
                    "capped_answers": ours_counts.capped_answers - capped0,
                    "rows_received_per_pass": (ours_counts.rows_received - rows0) / args.repeats,
                }
                summary = summarise(raw[op])
                load_after[op] = os.getloadavg()
                log(
                    f"  round trips ToG/ours {common.fmt_ratio(summary['round_trips']['ratio_median'])}, "
                    f"latency ToG/ours {common.fmt_ratio(summary['latency']['ratio_median'])} "
                    f"(ours {common.fmt_seconds(summary['latency']['ours_median_s'])}, "
                    f"ToG {common.fmt_seconds(summary['latency']['tog_median_s'])})"
                )
            ours.close()

            log("warm cache: connect(..., cache='memory')")
            cached_kg = open_ours(url, cache="memory")
            cache: dict[str, Any] = {}
            # Reference answers for the cached side: the ToG-verified answers of our uncached side.
            ref = open_ours(url)
            expected_paths = [path_key(ref.paths(s, r)) for s, r in path_queries]
            expected_edges = [edge_key(ref.subgraph(s, hops=2)) for s in seeds]
            ref.close()
            cache["paths"] = measure_cache(
                "paths",
                path_queries,
                cached_kg,
                lambda kg, q: kg.paths(q[0], q[1]),
                path_key,
                expected_paths,
                args.repeats,
            )
            cache["subgraph"] = measure_cache(
                "subgraph",
                seeds,
                cached_kg,
                lambda kg, q: kg.subgraph(q, hops=2),
                edge_key,
                expected_edges,
                args.repeats,
            )
            cached_kg.close()
            for op in OPS:
                log(f"  {op}: warm/cold {cache[op]['ratio_warm_cold']:.4f}")

        summary_all = {op: summarise(raw[op]) for op in OPS}
        tog_desc = (
            (
                "a new `SPARQLWrapper` (GET, JSON; urllib, no connection reuse) per query, as ToG's `execurte_sparql`"
                if args.tog_client == "sparqlwrapper"
                else "a plain `requests.post` per query (no Session, so no connection reuse)"
            )
            + "; queries sent one at a time, one per frontier entity (paths: per relation hop; subgraph: "
            "out-edges and in-edges)."
        )
        config = {
            "library_commit": git_state()[0],
            "library_dirty": git_state()[1],
            "data": str(data),
            "triples": triples,
            "virtuoso_loaded_triples": loaded,
            "virtuoso_version": virtuoso_version() or "Virtuoso (version unknown)",
            "virtuoso_start_s": server.startup_seconds,
            "virtuoso_load_s": load_s,
            "result_set_max_rows": server.result_set_max_rows,
            "max_sorted_top_rows": server.max_sorted_top_rows,
            "ours_url": "sparql+http://127.0.0.1:<port>/sparql, dialect=virtuoso, profile=freebase, retries=0",
            "tog_client": args.tog_client,
            "tog_client_description": tog_desc,
            "path_queries": len(path_queries),
            "subgraph_queries": len(seeds),
            "repeats": args.repeats,
            "seed": args.seed,
            "min_frontier": MIN_FRONTIER,
            "path_frontier": stats(path_frontier),
            "subgraph_frontier": stats(sub_frontier),
            "path_answer_sizes": stats(raw["paths"]["answer_sizes"]),
            "subgraph_answer_sizes": stats(raw["subgraph"]["answer_sizes"]),
        }
        results: dict[str, Any] = {
            "benchmark": NAME,
            "machine": common.machine_info(("kg-adapters", "requests", "SPARQLWrapper", "urllib3", "pyoxigraph")),
            "config": config,
            "targets": {
                "round_trip_ratio_at_least": TARGET_ROUND_TRIP_RATIO,
                "latency_ratio_at_least": TARGET_LATENCY_RATIO,
                "warm_cold_ratio_at_most": TARGET_WARM_RATIO,
            },
            "summary": summary_all,
            "cache": cache,
            "ours_counters": counters,
            "tog_capped_answers": tog.capped_answers,
            "raw": raw,
            "queries": {
                "paths": [[s, list(r)] for s, r in path_queries],
                "path_frontiers": path_frontier,
                "subgraph": seeds,
                "subgraph_frontiers": sub_frontier,
            },
        }
        results["run_seconds"] = time.perf_counter() - began
        results["load_average_start"] = load_start
        results["load_average_after"] = load_after
        results["load_average_end"] = os.getloadavg()
        prev = previous_headline(config)
        if prev is not None:
            results["previous_run"] = prev

        mismatches = sum(raw[op]["ours"]["mismatches"] for op in OPS)
        mismatches += sum(cache[op]["mismatches"] for op in OPS)
        empty = sum(raw[op]["empty_reference_answers"] for op in OPS)
        print()
        print(common.text_table(HEADERS, summary_rows(results)))
        print()
        print(common.text_table(CACHE_HEADERS, cache_rows(results)))
        print(
            f"\n(mismatches: {mismatches}; empty answers: {empty}; ToG capped answers: {tog.capped_answers}; "
            f"run took {results['run_seconds']:.0f} s; load average at the start {load_start[0]:.1f}, "
            f"after paths {load_after['paths'][0]:.1f}, after subgraph {load_after['subgraph'][0]:.1f})"
        )
        if (mismatches or empty) and not args.allow_mismatch:
            print(
                json.dumps(
                    {
                        op: {
                            s: raw[op][s]["mismatched_queries"]
                            for s in raw[op]
                            if isinstance(raw[op][s], dict) and "mismatched_queries" in raw[op][s]
                        }
                        for op in OPS
                    }
                ),
                file=sys.stderr,
            )
            raise AssertionError(f"{mismatches} mismatched answers, {empty} empty answers (see above)")
        if not args.no_write:
            common.save_report(NAME, results, render_markdown(results))
        return 0


if __name__ == "__main__":
    sys.exit(main())
