"""``search()`` on a store with 1M names: the SQLite/FTS5 label index vs a SPARQL FILTER scan.

Run: ``.venv/bin/python -m benchmarks.search_labels [--labels N] [--queries Q]``. The names are
generated deterministically (two or three pseudo-words each), loaded into an in-memory Oxigraph
store; our ``search`` builds its index once (build time reported), the baseline is the
case-insensitive ``FILTER(LCASE(STR(?label)) = ...)`` scan that research code typically uses.

Query kinds: an exact name, a prefix, one word, the words in another order, and a name among stop words
("who is the ..."): no name holds every word, so the content words find the candidates, which the
semantic mode re-ranks with the MiniLM encoder. Both search modes are timed: ``lexical`` and ``semantic``
(the default when the encoder is installed).
"""

from __future__ import annotations

import argparse
import os
import random
import time

import pyoxigraph as ox

from benchmarks.common import fmt_seconds, machine_info, markdown_table, median, ratio, write_results
from kg_adapters import connect
from kg_adapters.backends.oxigraph import OxigraphGraph

SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "bar", "den", "fel", "gor", "han", "jin", "kel"]
RDFS_LABEL = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label")


def make_names(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)

    def word() -> str:
        return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))).capitalize()

    return [" ".join(word() for _ in range(rng.randint(2, 3))) for _ in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--labels", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--baseline-queries", type=int, default=5)
    args = parser.parse_args()

    load_before = os.getloadavg()
    names = make_names(args.labels)
    kg = connect("oxigraph://")
    assert isinstance(kg, OxigraphGraph)
    kg.store.bulk_extend(
        ox.Quad(ox.NamedNode(f"http://example.org/e{i}"), RDFS_LABEL, ox.Literal(name, language="en"))
        for i, name in enumerate(names)
    )
    rng = random.Random(11)
    picks = [names[rng.randrange(len(names))] for _ in range(args.queries)]
    kinds = {
        "exact": picks,
        "prefix": [name[: max(3, len(name) // 2)] for name in picks],
        "token": [name.split()[-1].lower() for name in picks],
        "words in another order": [" ".join(reversed(name.split())) for name in picks],
        "name among stop words": [f"who is the {name.lower()}" for name in picks],
    }

    kg.use_search("lexical")
    started = time.perf_counter()
    kg.search("warm-up builds the index", limit=1)
    build_seconds = time.perf_counter() - started

    modes: dict[str, dict[str, float]] = {}
    for mode in ("lexical", "semantic"):
        kg.use_search(mode)
        kg.search("warm-up loads the encoder", limit=1)
        ours: dict[str, float] = {}
        for kind, texts in kinds.items():
            timings = []
            for text in texts:
                started = time.perf_counter()
                found = kg.search(text, limit=10)
                timings.append(time.perf_counter() - started)
                assert found, f"{kind} search found nothing for {text!r}"
            ours[kind] = median(timings)
        modes[mode] = ours

    baseline_timings = []
    for text in kinds["exact"][: args.baseline_queries]:
        query = (
            "SELECT ?e ?l WHERE { ?e <http://www.w3.org/2000/01/rdf-schema#label> ?l "
            f'FILTER(LCASE(STR(?l)) = "{text.lower()}") }} LIMIT 10'
        )
        started = time.perf_counter()
        kg.query(query)  # type: ignore[attr-defined]
        baseline_timings.append(time.perf_counter() - started)
    baseline = median(baseline_timings)

    rows = [
        [
            kind,
            mode,
            fmt_seconds(ours[kind]),
            f"{ratio(ours[kind], baseline):.4f}x ({ratio(baseline, ours[kind]):,.0f}x faster)",
        ]
        for kind in kinds
        for mode, ours in modes.items()
    ]
    markdown = "\n".join(
        [
            f"# search() over {args.labels:,} names",
            "",
            f"Index build (once, from the store): {fmt_seconds(build_seconds)}. "
            "Baseline FILTER(LCASE(STR(?l)) = text) scan (exact names), "
            f"median of {len(baseline_timings)}: {fmt_seconds(baseline)}. 1-minute load average "
            f"{load_before[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end.",
            "",
            markdown_table(["query kind", "mode", "median latency (ours)", "ours / FILTER scan"], rows),
        ]
    )
    print(markdown)
    write_results(
        "search_labels",
        {
            "labels": args.labels,
            "queries_per_kind": args.queries,
            "index_build_seconds": build_seconds,
            "median_seconds": modes,
            "baseline_filter_scan_median_seconds": baseline,
            "ratios_vs_filter_scan": {
                mode: {kind: ratio(value, baseline) for kind, value in ours.items()} for mode, ours in modes.items()
            },
            "load_average": load_before,
            "machine": machine_info(),
        },
        markdown,
    )


if __name__ == "__main__":
    main()
