"""Think-on-Graph's retrieval calls as its ``freebase_func.py`` makes them vs ``kg_adapters.compat.tog``.

Run from the repository root::

    .venv/bin/python -m benchmarks.tog_compat [--questions N] [--repeats R]

One throwaway Virtuoso 7 (``kg_adapters/testing/virtuoso.py``) loaded with FB15k-237 (Freebase ids); both
sides do one ToG search step for the same "questions" (``--width`` topic entities each, drawn with a
seed) in the same process, over HTTP on loopback:

1. the relations of every topic entity as head and as tail, ToG's ``abandon_rels`` filter applied;
2. ``entity_search`` over the first ``--width`` relations of each (a deterministic stand-in for
   ToG's LLM pruning), both ways;
3. ``id2entity_name_or_type`` of every candidate (ToG's ``entity_score``; like ToG with LLM
   pruning, a relation with 20 or more candidates keeps 5 -- here the first 5, not a random 5).

* ToG: its pattern reimplemented from its source -- one SPARQL request per entity and query kind,
  each with a fresh ``SPARQLWrapper`` (GET, JSON, no connection reuse) as its ``execurte_sparql``:
  ``sparql_head_relations``/``sparql_tail_relations``, ``sparql_tail_entities_extract``, and
  ``sparql_id``. For ``head=False`` the slots are filled in the right order (ToG's own order asks
  ``?e ns:<entity> ns:<relation>`` and answers nothing), so both sides can be compared; the number
  of requests is the same either way.
* ours: ``compat.tog.relation_search_batch``, ``entity_search_batch``, ``id2entity_name_or_type_batch``
  per question, on ``connect("sparql+http://...", dialect="virtuoso", profile="freebase",
  relation_filter=None, retries=0)`` (no relation filter: ToG's lists exactly).

Both sides must give the same relations, candidates and names for every question (checked on every
repeat). Figures: HTTP requests per entity and seconds per entity (median over repeats of the
whole pass; the sides alternate which goes first), with the machine's load average.
"""

from __future__ import annotations

import gzip
import os
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, cast

from benchmarks import common
from benchmarks.remote_bfs import DEFAULT_DATA, FREEBASE_NS, TogClient, instrument, open_ours

NAME = "tog_compat"
MODULE = "benchmarks.tog_compat"
TARGET_REQUEST_RATIO = 2.0  # ToG requests / ours, at least
UNNAMED = "UnName_Entity"

# ToG's query texts (ToG/freebase_func.py), the head=False slot order corrected.
TOG_HEAD_RELATIONS = "\nPREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT ?relation\nWHERE {\n  ns:%s ?relation ?x .\n}"
TOG_TAIL_RELATIONS = "\nPREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT ?relation\nWHERE {\n  ?x ?relation ns:%s .\n}"
TOG_TAIL_ENTITIES = (
    "PREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT ?tailEntity\nWHERE {\nns:%s ns:%s ?tailEntity .\n}"
)
TOG_HEAD_ENTITIES = (
    "PREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT ?tailEntity\nWHERE {\n?tailEntity ns:%s ns:%s  .\n}"
)
TOG_NAME = (
    "PREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT DISTINCT ?tailEntity\nWHERE {\n  {\n    ?entity "
    "ns:type.object.name ?tailEntity .\n    FILTER(?entity = ns:%s)\n  }\n  UNION\n  {\n    ?entity "
    "<http://www.w3.org/2002/07/owl#sameAs> ?tailEntity .\n    FILTER(?entity = ns:%s)\n  }\n}"
)

log = common.log
Step = dict[str, Any]


def abandon(relation: str) -> bool:
    return (
        relation in ("type.object.type", "type.object.name")
        or relation.startswith(("common.", "freebase."))
        or "sameAs" in relation
    )


def strip(bindings: list[dict[str, Any]], key: str) -> list[str]:
    return [b[key]["value"].replace(FREEBASE_NS, "") for b in bindings]


def tog_step(client: TogClient, entities: Sequence[str], width: int) -> Step:
    """One ToG search step, request by request as ToG sends them."""
    relations: dict[str, tuple[list[str], list[str]]] = {}
    for entity in entities:
        head = {r for r in strip(client.execute(TOG_HEAD_RELATIONS % entity), "relation") if not abandon(r)}
        tail = {r for r in strip(client.execute(TOG_TAIL_RELATIONS % entity), "relation") if not abandon(r)}
        relations[entity] = (sorted(head), sorted(tail))
    candidates: dict[tuple[str, str, bool], list[str]] = {}
    for entity, request in kept_requests(relations, width):
        _, relation, forward = request
        query = (TOG_TAIL_ENTITIES if forward else TOG_HEAD_ENTITIES) % (
            (entity, relation) if forward else (relation, entity)
        )
        found = [e for e in strip(client.execute(query), "tailEntity") if e.startswith("m.")]
        candidates[request] = sorted(dict.fromkeys(found))
    names: dict[str, str] = {}
    for entity in named(candidates):
        bindings = client.execute(TOG_NAME % (entity, entity))
        names[entity] = bindings[0]["tailEntity"]["value"] if bindings else UNNAMED
    return {"relations": relations, "candidates": candidates, "names": names}


def ours_step(kg: Any, entities: Sequence[str], width: int) -> Step:
    """The same step through kg_adapters.compat.tog's batched functions."""
    from kg_adapters.compat import tog

    relations = tog.relation_search_batch(entities, kg=kg)
    requests = [request for _, request in kept_requests(relations, width)]
    found = tog.entity_search_batch(requests, kg=kg)
    candidates = dict(zip(requests, found, strict=True))
    names = tog.id2entity_name_or_type_batch(named(candidates), kg=kg)
    return {"relations": relations, "candidates": candidates, "names": names}


def kept_requests(
    relations: dict[str, tuple[list[str], list[str]]], width: int
) -> list[tuple[str, tuple[str, str, bool]]]:
    """The first ``width`` relations of each entity (head side first), as entity_search requests."""
    kept = []
    for entity, (head, tail) in relations.items():
        both = [(r, True) for r in head] + [(r, False) for r in tail]
        kept.extend((entity, (entity, relation, forward)) for relation, forward in both[:width])
    return kept


def named(candidates: dict[tuple[str, str, bool], list[str]]) -> list[str]:
    """The candidates ToG names: all, or the first 5 of a relation with 20 or more."""
    chosen: dict[str, None] = {}
    for found in candidates.values():
        chosen.update(dict.fromkeys(found[:5] if len(found) >= 20 else found))
    return list(chosen)


def sample_questions(path: Path, count: int, width: int, seed: int) -> list[list[str]]:
    """``count`` groups of ``width`` distinct MIDs that head at least one triple."""
    import pyoxigraph as ox

    heads: set[str] = set()
    with cast(IO[bytes], gzip.open(path, "rb")) as handle:
        for quad in ox.parse(handle, format=ox.RdfFormat.N_TRIPLES):
            local = quad.subject.value.replace(FREEBASE_NS, "")
            if local.startswith("m."):
                heads.add(local)
    rng = random.Random(seed)
    pool = rng.sample(sorted(heads), count * width)
    return [pool[i * width : (i + 1) * width] for i in range(count)]


def main(argv: list[str] | None = None) -> int:
    parser = common.argument_parser(
        MODULE, __doc__, data=DEFAULT_DATA, data_help="N-Triples file (.nt.gz), Freebase ids"
    )
    parser.add_argument("--questions", type=int, default=20, help="questions (default 20)")
    parser.add_argument("--width", type=int, default=3, help="topic entities per question and relations kept (3)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20241125)
    parser.add_argument("--no-write", action="store_true", help="do not write benchmarks/results/")
    args = parser.parse_args(argv)
    from kg_adapters.testing.virtuoso import VirtuosoServer, virtuoso_version

    began = time.perf_counter()
    data = Path(args.data).resolve()
    questions = sample_questions(data, args.questions, args.width, args.seed)
    entities = sum(len(q) for q in questions)
    import shutil

    workdir = Path(tempfile.mkdtemp(prefix="kga-tog-compat-"))
    try:
        with VirtuosoServer(workdir, data_dirs=[data.parent]) as virtuoso:
            log(f"Virtuoso up on {virtuoso.sparql_url}; loading {data.name}")
            loaded = virtuoso.load([data])
            ours = open_ours(virtuoso.sparql_url)
            counts = instrument(ours)
            tog = TogClient(virtuoso.sparql_url)
            seconds: dict[str, list[float]] = {"tog": [], "ours": []}
            requests: dict[str, list[int]] = {"tog": [], "ours": []}
            mismatches = 0
            for repeat in range(args.repeats):
                order = ("tog", "ours") if repeat % 2 == 0 else ("ours", "tog")
                answers: dict[str, list[Step]] = {}
                for side in order:
                    sent = tog.requests_sent if side == "tog" else counts.requests_sent
                    started = time.perf_counter()
                    answers[side] = [
                        tog_step(tog, q, args.width) if side == "tog" else ours_step(ours, q, args.width)
                        for q in questions
                    ]
                    seconds[side].append(time.perf_counter() - started)
                    now = tog.requests_sent if side == "tog" else counts.requests_sent
                    requests[side].append(now - sent)
                mismatches += sum(a != b for a, b in zip(answers["tog"], answers["ours"], strict=True))
                log(f"repeat {repeat + 1}: requests {requests['tog'][-1]} vs {requests['ours'][-1]}")
            ours.close()
        load = os.getloadavg()
        per_entity = {
            side: {
                "requests": common.median([float(n) for n in requests[side]]) / entities,
                "seconds": common.median(seconds[side]) / entities,
            }
            for side in ("tog", "ours")
        }
        request_ratio = common.ratio(per_entity["tog"]["requests"], per_entity["ours"]["requests"])
        time_ratio = common.ratio(per_entity["tog"]["seconds"], per_entity["ours"]["seconds"])
        candidates = sum(len(c) for s in answers["ours"] for c in s["candidates"].values())
        results = {
            "benchmark": NAME,
            "machine": common.machine_info(("kg-adapters", "SPARQLWrapper", "requests", "pyoxigraph")),
            "load_average_1_5_15": [round(x, 2) for x in load],
            "config": {
                "data": str(data),
                "virtuoso_loaded_triples": loaded,
                "virtuoso_version": virtuoso_version() or "unknown",
                "questions": len(questions),
                "width": args.width,
                "entities": entities,
                "repeats": args.repeats,
                "seed": args.seed,
                "candidates_found_per_pass": candidates,
            },
            "targets": {"request_ratio_at_least": TARGET_REQUEST_RATIO},
            "per_entity": per_entity,
            "request_ratio": request_ratio,
            "time_ratio": time_ratio,
            "mismatched_steps": mismatches,
            "raw": {"seconds": seconds, "requests": requests},
            "run_seconds": time.perf_counter() - began,
        }
        rows = [
            [
                side,
                f"{per_entity[side]['requests']:.1f}",
                common.fmt_seconds(per_entity[side]["seconds"]),
            ]
            for side in ("tog", "ours")
        ]
        headers = ["side", "HTTP requests / entity", "time / entity (median)"]
        print(common.text_table(headers, rows))
        verdict = "met" if request_ratio >= TARGET_REQUEST_RATIO else "NOT met"
        summary = (
            f"ToG/ours: {request_ratio:.1f}x requests (target >= {TARGET_REQUEST_RATIO:g}x: {verdict}), "
            f"{time_ratio:.1f}x time; mismatched steps: {mismatches}; "
            f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
        )
        print(summary)
        if mismatches:
            raise AssertionError(f"{mismatches} steps answered differently")
        markdown = "\n".join(
            [
                "# ToG's retrieval calls vs kg_adapters.compat.tog (Virtuoso, FB15k-237)",
                "",
                f"{len(questions)} questions x {args.width} topic entities ({entities} entities), one ToG search "
                f"step each (relations both ways, entity_search over {args.width} relations, names of the "
                f"candidates: {candidates} candidates per pass); {args.repeats} repeats, median. "
                f"Virtuoso {results['config']['virtuoso_version']} with {loaded:,} triples on loopback.",
                "",
                common.markdown_table(headers, rows),
                "",
                summary + ".",
                "",
                f"Machine: {results['machine']['cpu_model']}, {results['machine']['cpu_usable']} usable cores; "
                f"{results['machine']['date_utc']}.",
            ]
        )
        if not args.no_write:
            common.save_report(NAME, results, markdown)
        return 0
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
