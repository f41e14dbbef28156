"""``search_relations`` on natural phrasings: recall@1/@5 with the MiniLM encoder and without it.

Run: ``.venv/bin/python -m benchmarks.relation_search [--store DIR]``. Three phrasing sets
(``benchmarks/data``), each against the relations of a graph of its shape:

* FB15k-237 (``../shared/data/fb15k237-freebase.nt.gz`` loaded with the freebase profile): 237 relations
  without labels, found by the words of their ids; 116 phrasings ("where was he born", "married to",
  "alma mater", "capital city", ...), each with the relations that answer it (either direction).
* Wikidata-shaped: 120 properties with their English labels (``wdt:P19`` labelled by ``wd:P19``), wikidata
  profile; 65 phrasings.
* DBpedia-shaped: 100 ontology relations (``dbo:birthPlace``) without labels; 50 phrasings.

Modes: ``semantic`` (the encoder fused with the lexical ranking), ``lexical`` (the fallback without the
encoder: exact, prefix, every word, any word, stemmed) and ``every word`` (the rule before this change:
only relations holding every word of the phrase; measured on the same index, so with stems).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import REPO_ROOT, fmt_seconds, machine_info, markdown_table, median, write_results
from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph
from kg_adapters.label_index import ALL_WORDS

DATA = Path(__file__).resolve().parent / "data"
FB15K = REPO_ROOT.parent / "shared" / "data" / "fb15k237-freebase.nt.gz"
WD, WDT = "http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/direct/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
DBO, DBR = "http://dbpedia.org/ontology/", "http://dbpedia.org/resource/"


def phrasings_fb15k() -> list[dict[str, Any]]:
    with open(DATA / "relation_paraphrases_fb15k237.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def other_sets() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "relation_paraphrases_other.json").read_text("utf-8"))
    return data


def wikidata_graph(labels: dict[str, str]) -> str:
    lines = []
    for number, (prop, label) in enumerate(sorted(labels.items())):
        lines.append(f"<{WD}Q{number + 1}> <{WDT}{prop}> <{WD}Q{number + 1000}> .")
        lines.append(f'<{WD}{prop}> <{RDFS_LABEL}> "{label}"@en .')
    return "\n".join(lines) + "\n"


def dbpedia_graph(relations: list[str]) -> str:
    return "\n".join(f"<{DBR}S{n}> <{DBO}{name}> <{DBR}O{n}> ." for n, name in enumerate(relations)) + "\n"


def every_word(kg: KnowledgeGraph) -> Callable[[str, int], list[str]]:
    """The rule before this change: relations holding every word of the phrase (the tiers up to
    ``ALL_WORDS`` of the same index), the profile's filter applied as ``search_relations`` does."""
    index = kg._relations()  # type: ignore[attr-defined]
    relation_id = kg.profile.relation_id
    keeps = kg.profile.relation_filter.keeps

    def find(text: str, limit: int) -> list[str]:
        hits = [relation_id(iri) for iri, _, tier in index.ranked(text, 200) if tier <= ALL_WORDS]
        return [hit for hit in hits if keeps(hit)][:limit]

    return find


def score(find: Callable[[str, int], list[str]], phrasings: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """recall@1, recall@5, the median latency of a warm call, and the phrasings missed at 5."""
    at1 = at5 = 0
    timings, missed = [], []
    for item in phrasings:
        started = time.perf_counter()
        found = find(item["text"], 5)
        timings.append(time.perf_counter() - started)
        gold = set(item["relations"])
        at1 += bool(found) and found[0] in gold
        hit = any(relation in gold for relation in found)
        at5 += hit
        if not hit:
            missed.append({"text": item["text"], "top": found[:3]})
    count = len(phrasings)
    return {
        "phrasings": count,
        "recall_at_1": at1 / count,
        "recall_at_5": at5 / count,
        "median_seconds": median(timings),
        "missed_at_5": missed,
    }


def measure(kg: KnowledgeGraph, url_note: str, phrasings: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Every mode on one graph; the semantic mode's first call (embedding the relations) is timed apart."""
    results: dict[str, Any] = {"graph": url_note}
    started = time.perf_counter()
    kg.search_relations("warm up", limit=1)
    results["first_call_seconds"] = time.perf_counter() - started
    results["semantic"] = score(lambda text, k: [e.id for e in kg.search_relations(text, limit=k)], phrasings)
    kg.use_search("lexical")  # type: ignore[attr-defined]
    results["lexical"] = score(lambda text, k: [e.id for e in kg.search_relations(text, limit=k)], phrasings)
    results["every_word"] = score(every_word(kg), phrasings)
    for mode in ("lexical", "every_word"):  # their misses are most phrasings: counted, not listed
        results[mode]["missed_at_5"] = len(results[mode]["missed_at_5"])
    return results


def fb15k_store(directory: Path) -> Path:
    from loaders import load_files

    store = directory / "fb15k237"
    if not (store / "kga-store.json").is_file():
        load_files([str(FB15K)], str(store), profile="freebase", progress=False)
    for cached in store.glob("v-*/relations.minilm.npz"):
        cached.unlink()  # the first call embeds the relations: timed
    return store


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", help="work directory for the FB15k-237 store (default: a temporary one)")
    args = parser.parse_args()
    load_before = os.getloadavg()
    sets = other_sets()
    with tempfile.TemporaryDirectory(prefix="kga-relsearch-") as tmp:
        work = Path(args.store) if args.store else Path(tmp)
        store = fb15k_store(work)
        runs: dict[str, Any] = {}
        with connect(f"oxigraph://{store.resolve()}", profile="freebase", search="semantic") as kg:
            runs["fb15k237"] = measure(kg, "FB15k-237, freebase profile, no relation labels", phrasings_fb15k())
        wd_file = Path(tmp) / "wikidata.nt"
        wd_file.write_text(wikidata_graph(sets["wikidata"]["labels"]), encoding="utf-8")
        with connect("oxigraph://", profile="wikidata", search="semantic") as kg:
            kg.load(str(wd_file))  # type: ignore[attr-defined]
            runs["wikidata"] = measure(kg, "Wikidata-shaped, property labels", sets["wikidata"]["phrasings"])
        db_file = Path(tmp) / "dbpedia.nt"
        db_file.write_text(dbpedia_graph(sets["dbpedia"]["relations"]), encoding="utf-8")
        with connect("oxigraph://", profile="dbpedia", search="semantic") as kg:
            kg.load(str(db_file))  # type: ignore[attr-defined]
            runs["dbpedia"] = measure(kg, "DBpedia-shaped, ontology names, no labels", sets["dbpedia"]["phrasings"])
    load_after = os.getloadavg()
    rows = []
    for name, run in runs.items():
        for mode in ("semantic", "lexical", "every_word"):
            result = run[mode]
            rows.append(
                [
                    f"{name} ({result['phrasings']})",
                    mode.replace("_", " "),
                    f"{result['recall_at_1']:.3f}",
                    f"{result['recall_at_5']:.3f}",
                    fmt_seconds(result["median_seconds"]),
                ]
            )
    markdown = "\n".join(
        [
            "# search_relations on natural phrasings",
            "",
            f"1-minute load average {load_before[0]:.1f} at the start, {load_after[0]:.1f} at the end. "
            "First call (embedding every relation, then cached): "
            + ", ".join(f"{name} {fmt_seconds(run['first_call_seconds'])}" for name, run in runs.items())
            + ".",
            "",
            markdown_table(["phrasing set", "mode", "recall@1", "recall@5", "median latency"], rows),
            "",
            "Missed at 5 (semantic): "
            + "; ".join(
                f"{name}: " + ", ".join(repr(m["text"]) for m in run["semantic"]["missed_at_5"])
                for name, run in runs.items()
            ),
        ]
    )
    print(markdown)
    write_results(
        "relation_search",
        {"runs": runs, "load_average": load_before, "load_average_end": load_after, "machine": machine_info()},
        markdown,
    )


if __name__ == "__main__":
    main()
