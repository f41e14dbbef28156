"""Think-on-Graph's SPARQL templates on ``kga serve`` against Virtuoso 7.2, on FB15k-237.

What ToG users do today: load Freebase into Virtuoso and point ``freebase_func.py`` (SPARQLWrapper,
JSON) at ``http://localhost:8890/sparql``. What this measures, in one process, on the same file:

* load time: ``kga load FILE --store DIR --profile freebase`` (the whole command) against Virtuoso's
  bulk loader (``ld_add`` + ``rdf_loader_run`` + ``checkpoint``, on a server already started; its
  start-up is reported apart);
* per-template latency: ToG's five pre-defined queries (head/tail relations, tail/head entity
  extraction, id -> name) sent exactly as ToG sends them (a new SPARQLWrapper per query, JSON), to
  both servers in alternation, for topic entities drawn at random; medians and 90th percentiles;
* the answers: every query's bindings must be equal on both servers (as multisets of values).

The machine is shared: the load average is printed beside the figures. Run:
``python -m benchmarks.tog_serve [--entities 40]``.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks import common
from kg_adapters.testing.server_processes import free_port, wait_for_port

KGA = str(Path(sys.executable).parent / "kga")
FB = "http://rdf.freebase.com/ns/"
DEFAULT_DATA = common.REPO_ROOT.parent.parent / "shared" / "data" / "fb15k237-freebase.nt.gz"

# ToG/freebase_func.py's pre-defined queries, as ToG writes them.
TEMPLATES = {
    "head_relations": """\nPREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT ?relation\nWHERE {\n  ns:%s ?relation ?x .\n}""",  # noqa: E501
    "tail_relations": """\nPREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT ?relation\nWHERE {\n  ?x ?relation ns:%s .\n}""",  # noqa: E501
    "tail_entities_extract": (
        """PREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT ?tailEntity\nWHERE {\nns:%s ns:%s ?tailEntity .\n}"""
    ),
    "head_entities_extract": (
        """PREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT ?tailEntity\nWHERE {\n?tailEntity ns:%s ns:%s  .\n}"""
    ),
    "id_to_name": (
        """PREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT DISTINCT ?tailEntity\nWHERE {\n  {\n"""
        """    ?entity ns:type.object.name ?tailEntity .\n    FILTER(?entity = ns:%s)\n  }\n  UNION\n  {\n"""
        """    ?entity <http://www.w3.org/2002/07/owl#sameAs> ?tailEntity .\n    FILTER(?entity = ns:%s)\n  }\n}"""
    ),
}


def execute_sparql(endpoint: str, sparql_txt: str) -> list[dict[str, Any]]:
    """ToG's execurte_sparql."""
    from SPARQLWrapper import JSON, SPARQLWrapper

    sparql = SPARQLWrapper(endpoint)
    sparql.setQuery(sparql_txt)
    sparql.setReturnFormat(JSON)
    results = sparql.query().convert()
    return results["results"]["bindings"]  # type: ignore[no-any-return,index,call-overload]


def answer_key(bindings: list[dict[str, Any]]) -> Counter[tuple[tuple[str, str], ...]]:
    """The answer as a multiset of rows of (variable, value)."""
    return Counter(tuple(sorted((name, term["value"]) for name, term in row.items())) for row in bindings)


def kga_load(data: Path, store: Path) -> float:
    began = time.perf_counter()
    subprocess.run(
        [KGA, "load", str(data), "--store", str(store), "--profile", "freebase"], check=True, capture_output=True
    )
    return time.perf_counter() - began


def dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def pick_queries(store_url: str, entities: int, seed: int, cap: int) -> list[tuple[str, str]]:
    """(template, query) for ``entities`` random named entities, five templates each, in a shuffled
    order; entities whose answers exceed ``cap`` rows (Virtuoso's ResultSetMaxRows) are skipped."""
    from kg_adapters import connect

    rng = random.Random(seed)
    queries: list[tuple[str, str]] = []
    with connect(store_url, relation_filter="none") as kg:
        rows = kg.query(f"SELECT DISTINCT ?e WHERE {{ ?e <{FB}type.object.name> ?n }}")  # type: ignore[attr-defined]
        candidates = sorted(str(row["e"]).removeprefix(FB) for row in rows)
        rng.shuffle(candidates)
        chosen = 0
        for entity in candidates:
            if chosen >= entities:
                break
            out = kg.neighbors(entity, literals=False)[entity]
            incoming = kg.neighbors(entity, direction="in")[entity]
            if not out or not incoming or len(out) >= cap or len(incoming) >= cap:
                continue
            out_relation = rng.choice(sorted({edge.relation for edge in out}))
            in_relation = rng.choice(sorted({edge.relation for edge in incoming}))
            queries += [
                ("head_relations", TEMPLATES["head_relations"] % entity),
                ("tail_relations", TEMPLATES["tail_relations"] % entity),
                ("tail_entities_extract", TEMPLATES["tail_entities_extract"] % (entity, out_relation)),
                ("head_entities_extract", TEMPLATES["head_entities_extract"] % (in_relation, entity)),
                ("id_to_name", TEMPLATES["id_to_name"] % (entity, entity)),
            ]
            chosen += 1
    rng.shuffle(queries)
    return queries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="Freebase N-Triples (default: FB15k-237)")
    parser.add_argument("--entities", type=int, default=40, help="topic entities (5 queries each, per server)")
    parser.add_argument("--loads", type=int, default=2, help="loads of each kind (median reported)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    from kg_adapters.testing.virtuoso import VirtuosoServer, virtuoso_version

    data = Path(args.data).resolve()
    load_before = os.getloadavg()
    common.log(f"load average before: {load_before}")
    with tempfile.TemporaryDirectory(prefix="kga-tog-serve-") as workdir:
        work = Path(workdir)
        kga_seconds, virtuoso_seconds, startup_seconds = [], [], []
        virtuoso: Any = None
        store = work / "store-0"
        try:
            for number in range(args.loads):  # interleaved, each load into a fresh store / database
                target = work / f"store-{number}"
                kga_seconds.append(kga_load(data, target))
                common.log(f"kga load #{number + 1}: {kga_seconds[-1]:.2f} s")
                if virtuoso is not None:
                    virtuoso.stop()
                virtuoso = VirtuosoServer(work / f"virtuoso-{number}", data_dirs=[data.parent])
                began = time.perf_counter()
                virtuoso.start()
                startup_seconds.append(time.perf_counter() - began)
                began = time.perf_counter()
                triples = virtuoso.load([data])
                virtuoso_seconds.append(time.perf_counter() - began)
                common.log(f"Virtuoso load #{number + 1}: {virtuoso_seconds[-1]:.2f} s ({triples} triples)")
                if number:
                    shutil.rmtree(target)
            store_bytes = dir_size(store)
            virtuoso_bytes = dir_size(virtuoso.db_dir)
            store_url = f"oxigraph://{store}?profile=freebase"
            queries = pick_queries(store_url, args.entities, args.seed, cap=virtuoso.result_set_max_rows)
            port = free_port()
            served = subprocess.Popen(
                [KGA, "serve", "--kg", store_url, "--port", str(port)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                wait_for_port(served, port)
                endpoints = {"kga serve": f"http://127.0.0.1:{port}/sparql", "Virtuoso": virtuoso.sparql_url}
                for url in endpoints.values():  # one warm-up query each
                    execute_sparql(url, TEMPLATES["id_to_name"] % ("m.0bxtg", "m.0bxtg"))
                latency: dict[str, dict[str, list[float]]] = {name: {t: [] for t in TEMPLATES} for name in endpoints}
                equal = different = 0
                mismatches: list[str] = []
                for position, (template, query) in enumerate(queries):
                    order = list(endpoints) if position % 2 == 0 else list(reversed(endpoints))
                    answers = {}
                    for name in order:
                        began = time.perf_counter()
                        bindings = execute_sparql(endpoints[name], query)
                        latency[name][template].append(time.perf_counter() - began)
                        answers[name] = answer_key(bindings)
                    if answers["kga serve"] == answers["Virtuoso"]:
                        equal += 1
                    else:
                        different += 1
                        mismatches.append(query)
            finally:
                served.terminate()
                served.wait(timeout=60)
            engine = virtuoso_version()
        finally:
            if virtuoso is not None:
                virtuoso.stop()
    load_after = os.getloadavg()
    common.log(f"load average after: {load_after}")
    if different:
        raise SystemExit(f"{different} of {equal + different} answers differ, e.g. {mismatches[0]!r}")

    per_template = {
        template: {
            name: {
                "median_ms": round(common.median(latency[name][template]) * 1000, 2),
                "p90_ms": round(common.percentile(latency[name][template], 90) * 1000, 2),
                "queries": len(latency[name][template]),
            }
            for name in latency
        }
        for template in TEMPLATES
    }
    kga_load_median, virtuoso_load_median = common.median(kga_seconds), common.median(virtuoso_seconds)
    result = {
        "benchmark": "tog_serve",
        "machine": common.machine_info(("pyoxigraph", "SPARQLWrapper", "starlette", "uvicorn", "kg-adapters")),
        "source": common.source_fingerprint("kg_adapters", "loaders"),
        "engine": engine,
        "data": data.name,
        "triples": triples,
        "load_average_before": load_before,
        "load_average_after": load_after,
        "load_seconds": {"kga load": kga_seconds, "Virtuoso bulk load": virtuoso_seconds},
        "virtuoso_startup_seconds": startup_seconds,
        "load_median_seconds": {"kga load": kga_load_median, "Virtuoso bulk load": virtuoso_load_median},
        "on_disk_bytes": {"kga store": store_bytes, "Virtuoso database": virtuoso_bytes},
        "queries_per_server": len(queries),
        "answers_equal": equal,
        "answers_different": different,
        "latency": per_template,
    }
    rows = []
    for template in TEMPLATES:
        ours, theirs = per_template[template]["kga serve"], per_template[template]["Virtuoso"]
        rows.append(
            [
                template,
                f"{ours['median_ms']:.1f} ms",
                f"{theirs['median_ms']:.1f} ms",
                f"{common.ratio(ours['median_ms'], theirs['median_ms']):.2f}x",
                f"{ours['p90_ms']:.1f} / {theirs['p90_ms']:.1f} ms",
                str(ours["queries"]),
            ]
        )
    markdown = "\n".join(
        [
            f"# Think-on-Graph's query templates: `kga serve` vs Virtuoso ({data.name}, {triples:,} triples)",
            "",
            f"Load average {load_before[0]:.2f} / {load_before[1]:.2f} / {load_before[2]:.2f} before, "
            f"{load_after[0]:.2f} / {load_after[1]:.2f} / {load_after[2]:.2f} after "
            f"({result['machine']['cpu_usable']} usable CPUs, shared machine). Engine: {engine}.",
            "",
            f"## Load (median of {args.loads} each, interleaved)",
            "",
            common.markdown_table(
                ["loader", "median", "runs", "on disk"],
                [
                    [
                        "`kga load --profile freebase` (whole command)",
                        f"{kga_load_median:.2f} s",
                        ", ".join(f"{s:.2f}" for s in kga_seconds),
                        f"{store_bytes / 1e6:.0f} MB",
                    ],
                    [
                        "Virtuoso bulk loader (`ld_add` + `rdf_loader_run` + `checkpoint`)",
                        f"{virtuoso_load_median:.2f} s",
                        ", ".join(f"{s:.2f}" for s in virtuoso_seconds),
                        f"{virtuoso_bytes / 1e6:.0f} MB",
                    ],
                ],
            ),
            "",
            f"Virtuoso's start-up before loading: {common.median(startup_seconds):.2f} s (median); "
            f"`kga load` / Virtuoso load: {common.ratio(kga_load_median, virtuoso_load_median):.2f}x.",
            "",
            f"## Latency per template ({len(queries)} queries per server, {args.entities} topic entities, "
            "SPARQLWrapper + JSON as ToG sends them, servers in alternation)",
            "",
            common.markdown_table(
                [
                    "template",
                    "kga serve median",
                    "Virtuoso median",
                    "kga / Virtuoso",
                    "p90 (kga / Virtuoso)",
                    "queries",
                ],
                rows,
            ),
            "",
            f"Answers equal on both servers: {equal} of {equal + different} queries.",
            "",
        ]
    )
    print(markdown)
    if not args.no_write:
        common.write_results("tog_serve", result, markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
