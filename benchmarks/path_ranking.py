"""How well a scorer alone ranks relation paths: the ceiling of every offline method's choice of path.

For each generated question (:mod:`reasoning.synthetic`, the same questions as ``benchmarks.kgqa_synthetic``
with the same arguments) every relation path of one and two hops around the topic entity (both directions,
never straight back) and every one-relation continuation of the gold path is ranked as the methods rank
paths once they have walked them: :meth:`reasoning.relevance.Judge.path_scores` less
:func:`reasoning.relevance.path_cost`, the shorter path first on a tie. Reports, per scorer and wording,
how often the gold path ranks first and how the others fail: ``short`` (a prefix of the gold path won: the
question's other relation is not stated well enough), ``long`` (a continuation of it won: a detour),
``last hop`` / ``first hop`` (a two-hop path with the other hop wrong), ``other``.

A scorer named ``NAME+types`` (default ``hybrid+types``) also adds the answer-type evidence of
:mod:`reasoning.answer_types` (:data:`reasoning.answer_types.ANSWER_WEIGHT` times how well the path's first
ends are of the kind the question asks for), read from the ends each path reaches.

A method cannot choose better than its scorer ranks (unless by luck), so this separates what the scorer
cannot say from what a method's search misses. No timings: run it niced, without the benchmark lock.

    python -m benchmarks.path_ranking --hops 2 --per-hop 40 --label 2hop
    python -m benchmarks.path_ranking --graph fb15k237 --hops 2 --per-hop 40 --label fb15k237_2hop
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.common import log, machine_info, markdown_table, source_fingerprint, write_results
from benchmarks.kgqa_synthetic import WORDINGS, generated, open_graph, question_arguments
from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph
from kg_adapters.records import Node
from reasoning.answer_types import ANSWER_WEIGHT, ENDS, AnswerFit, EntityKinds
from reasoning.base import Scorer
from reasoning.registry import make_scorer
from reasoning.relevance import Judge
from reasoning.text import RelationNames, schema_relations
from reasoning.walks import SIDES, Step, backward, net_level, turns_back

AROUND = 20
"""Entities per first hop whose relations give the second hops (as the methods' lookahead reads them)."""
CLASSES = ("short", "long", "last hop", "first hop", "other")


def candidate_paths(
    kg: KnowledgeGraph, topic: str, gold: tuple[str, ...], skip: frozenset[str]
) -> dict[tuple[Step, ...], list[Node]]:
    """Every one- and two-hop relation path around ``topic`` and every continuation of the gold path, each
    with the first :data:`reasoning.answer_types.ENDS` nodes it reaches (what a method sees once it walks it)."""
    paths: dict[tuple[Step, ...], list[Node]] = {}
    ends: dict[Step, list[str]] = {}
    for side in SIDES:
        for relation in kg.relations([topic], direction=side).get(topic, ()):
            if relation in skip:
                continue
            step = (relation, side == "out")
            found = kg.neighbors([topic], direction=side, relations=[relation], limit_per_entity=AROUND)
            first = [edge.tail if side == "out" else edge.head for edge in found.get(topic, ())]
            paths[(step,)] = first[:ENDS]
            ends[step] = [node for node in first if isinstance(node, str)][:AROUND]
    nodes = [topic]
    for relation in gold:
        walked = kg.neighbors(nodes, direction="out", relations=[relation], limit_per_entity=AROUND)
        tails = (edge.tail for node in nodes for edge in walked.get(node, ()))
        nodes = list(dict.fromkeys(node for node in tails if isinstance(node, str)))[:AROUND]
    gold_steps = tuple((relation, True) for relation in gold)
    for prefix, at in [*(((step,), reached) for step, reached in ends.items()), (gold_steps, nodes)]:
        if not at:
            continue
        for side in SIDES:
            around = kg.neighbors(at, direction=side)
            by_relation: dict[str, list[Node]] = {}
            for node in at:
                for edge in around.get(node, ()):
                    by_relation.setdefault(edge.relation, []).append(edge.tail if side == "out" else edge.head)
            for relation in sorted(by_relation):
                if relation not in skip and not turns_back(prefix[-1], relation, side == "out"):
                    path = (*prefix, (relation, side == "out"))
                    paths[path] = list(dict.fromkeys(by_relation[relation]))[:ENDS]
    return dict(sorted(paths.items()))


def failure(best: tuple[str, ...], gold: tuple[str, ...]) -> str:
    """How the top path differs from the gold one (one of :data:`CLASSES`)."""
    if best == gold[: len(best)]:
        return "short"
    if best[: len(gold)] == gold:
        return "long"
    if len(best) == len(gold) == 2:
        return "last hop" if best[0] == gold[0] else "first hop" if best[1] == gold[1] else "other"
    return "other"


def rank(
    scorer: Scorer,
    question: str,
    names: list[str],
    paths: dict[tuple[Step, ...], list[Node]],
    words: RelationNames,
    kinds: EntityKinds | None = None,
) -> tuple[str, ...]:
    """The relations of the path the scorer ranks first (with ``kinds``, the answer-type evidence added)."""
    judge = Judge(scorer, question, names)
    listed = list(paths)
    phrases = words.phrases(relation for path in listed for relation, _ in path)
    scores = judge.path_scores([[phrases[relation] for relation, _ in path] for path in listed])
    top = max(scores, default=0.0) or 1.0
    values = [net_level(score / top, len(path), backward(path)) for score, path in zip(scores, listed, strict=True)]
    if kinds is not None:
        fits = AnswerFit(judge, kinds).levels([(path[-1][0], paths[path]) for path in listed])
        values = [value + ANSWER_WEIGHT * fit for value, fit in zip(values, fits, strict=True)]
    best = min(range(len(listed)), key=lambda i: (-values[i], len(listed[i]), i))
    return tuple(relation for relation, _ in listed[best])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    question_arguments(parser, per_hop=40, hops="2")
    parser.add_argument("--scorers", default="bm25,hybrid,hybrid+types")
    parser.add_argument("--label", help="suffix of the result files (default: the graph's name; none for sample)")
    args = parser.parse_args()
    label = args.label if args.label is not None else ("" if args.graph == "sample" else args.graph)
    load_start = os.getloadavg()
    rows: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="path-ranking-") as tmp, connect(open_graph(args.graph, Path(tmp))) as kg:
        questions = generated(kg, args)
        skip = schema_relations(kg)
        words = RelationNames(kg)
        found = [candidate_paths(kg, q["q_entity"][0], tuple(q["gold_paths"][0]), skip) for q in questions]
        names = [list(kg.labels(q["q_entity"]).values()) for q in questions]
        log(f"{len(questions)} questions, {sum(map(len, found)) / max(len(found), 1):.0f} paths each")
        kinds = EntityKinds(kg, words)
        for scorer_name in [s for s in args.scorers.split(",") if s]:
            scorer = make_scorer(scorer_name.removesuffix("+types"))
            typed = kinds if scorer_name.endswith("+types") else None
            for wording, key in WORDINGS.items():
                classes: Counter[str] = Counter()
                for q, paths, topic in zip(questions, found, names, strict=True):
                    gold = tuple(q["gold_paths"][0])
                    best = rank(scorer, q[key], topic, paths, words, typed)
                    classes["gold first" if best == gold else failure(best, gold)] += 1
                rows[f"{scorer_name}|{wording}"] = {"questions": len(questions), **classes}
    headers = ["scorer", "wording", "gold first", *CLASSES]
    table = [
        [key.split("|")[0], key.split("|")[1], *(f"{row.get(c, 0) / row['questions']:.2f}" for c in headers[2:])]
        for key, row in rows.items()
    ]
    load = (load_start, os.getloadavg())
    markdown = "\n".join(
        [
            f"# How each scorer alone ranks relation paths ({args.graph}, hops {args.hops}, seed {args.seed})",
            "",
            f"{len(questions)} generated questions, as benchmarks.kgqa_synthetic makes them with these arguments; "
            "shares of the questions (gold path first, else how the top path fails). "
            f"Load average {load[0][0]:.1f} at the start, {load[1][0]:.1f} at the end.",
            "",
            markdown_table(headers, table),
        ]
    )
    print(markdown)
    suffix = f"_{label}" if label else ""
    write_results(
        f"path_ranking{suffix}",
        {
            "graph": args.graph,
            "seed": args.seed,
            "rows": rows,
            "load_average": {"start": load[0], "end": load[1]},
            "source": source_fingerprint("kg_adapters", "reasoning"),
            "machine": machine_info(),
        },
        markdown,
    )


if __name__ == "__main__":
    main()
