"""``kga load``, ``kga extract`` and ``kga dataset build``: the loaders' commands, contributed to the
``kga`` registry through the ``kg_adapters.commands`` entry point. Only argparse and the registry are
imported with the CLI; the loaders themselves are imported when a command runs."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path as FilePath
from typing import Any

from kg_adapters.base import KnowledgeGraph
from kg_adapters.budgets import DEFAULT_MEMORY
from kg_adapters.commands import Command, UsageError, count, csv_list, emit, opens_kg, read_text_file
from kg_adapters.errors import KGError
from loaders.indexing import INDEX_COMMAND, MEMORY_HELP


def cmd_load(args: argparse.Namespace) -> int:
    from loaders import load_files, resolve_format
    from loaders.freebase import dump_filter, parse_list
    from loaders.rdf import WIKIDATA_JSON

    try:
        wikidata = {resolve_format(path, args.format) for path in args.files} == {WIKIDATA_JSON}
    except KGError:  # load_files reports it, after the checks that come first
        wikidata = False
    languages = parse_list(args.languages) if args.languages else None
    profile = args.profile or ("freebase" if (args.format or "").lower() == "freebase" else None)
    filters = dump_filter(
        None if wikidata else languages, parse_list(args.drop_predicates), parse_list(args.drop_namespaces)
    )
    try:
        report = load_files(
            args.files,
            args.store,
            format=args.format,
            lenient=args.lenient,
            profile=profile,
            progress=args.progress,
            dump_filter=filters,
            languages=languages if wikidata else None,
            qualifiers=args.qualifiers,
            index=not args.no_index,
            memory=args.memory,
        )
    except KeyboardInterrupt:
        return _interrupted(f"the store at {args.store} is unchanged (the partial load was discarded)")
    summary = {
        "store": report.store,
        "files": list(report.files),
        "statements_read": report.statements_read,
        "lines_skipped": report.lines_skipped,
        "lines_filtered": report.lines_filtered,
        "lines_repaired": report.lines_repaired,
        "store_triples": report.store_triples,
        "seconds": round(report.seconds, 3),
        "triples_per_second": round(report.triples_per_second),
        "resumed": report.resumed,
        "index_source": report.index_source,
    }
    if args.json:
        summary["skipped"] = [{"file": s.file, "line": s.line, "reason": s.reason} for s in report.skipped]
        emit(summary)
    else:
        print(
            f"loaded {report.statements_read} statements into {report.store} "
            f"({report.store_triples} triples in the store) in {report.seconds:.2f} s "
            f"({report.triples_per_second:,.0f} triples/s)"
        )
        if report.resumed:
            print("resumed from the checkpoint of an interrupted load of the same files")
        if report.appended:
            print(f"indexes written from {report.index_source}")
        if report.lines_filtered or report.lines_repaired:
            print(f"filtered out {report.lines_filtered} line(s); repaired {report.lines_repaired} line(s)")
        if report.lines_skipped:
            print(f"skipped {report.lines_skipped} bad line(s):")
            for skipped in report.skipped:
                print(f"  {skipped.file}:{skipped.line}: {skipped.reason}")
    return 0


def seed_ids(values: Sequence[str]) -> list[str]:
    """``--seeds`` values: a path to an existing file holds one id per line (blank lines and
    ``#`` comments skipped); anything else is an id."""
    ids: list[str] = []
    for value in values:
        path = FilePath(value)
        if path.is_file():
            lines = (line.strip() for line in read_text_file(value, "seeds file").splitlines())
            ids.extend(line for line in lines if line and not line.startswith("#"))
        elif "://" not in value and (os.sep in value or path.suffix in _SEED_FILE_SUFFIXES):
            raise UsageError(f"the seeds file {value} does not exist (or is not a file)")
        else:
            ids.append(value)
    return ids


_SEED_FILE_SUFFIXES = (".txt", ".tsv", ".csv", ".list", ".ids")


def _interrupted(kept: str) -> int:
    """Ctrl-C during a long command: one line saying what was kept, and the shell's status for SIGINT."""
    print(f"kga: error: interrupted; {kept}", file=sys.stderr)
    return 130


def _given(args: argparse.Namespace, *names: str) -> dict[str, Any]:
    """The options ``names`` that the command line set: one left unset (None) takes the library's default."""
    return {name: value for name in names if (value := getattr(args, name)) is not None}


def cmd_extract(kg: KnowledgeGraph, args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from loaders.extract import extract_subgraph

    try:
        given = _given(args, "hops", "store", "direction", "max_edges", "batch_size", "work_dir", "restart")
        report = extract_subgraph(
            kg, seed_ids(args.seeds), relations=csv_list(args.relations), source_url=args.kg, **given
        )
    except KeyboardInterrupt:
        return _interrupted("the progress so far is kept in the work directory: run the same command again to resume")
    if args.json:
        emit(asdict(report))
    else:
        print(
            f"extracted {report.edges} edges ({report.triples} triples with names) around {len(report.seeds)} "
            f"seed(s), {report.hops} hop(s), {report.entities} entities into {report.store} "
            f"in {report.seconds:.2f} s ({report.source_calls} source calls, run {report.runs})"
        )
    if report.truncated:
        print(f"kga: warning: extraction truncated at {report.edges} edges (raise --max-edges)", file=sys.stderr)
    return 0


def cmd_dataset_build(kg: KnowledgeGraph, args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from loaders.dataset_build import build_dataset

    budgets = _given(args, "hops", "max_nodes", "edges_per_node", "max_edges", "batch_size", "group_size")
    choices = _given(args, "ids", "workers", "lenient", "restart", "overwrite", "work_dir", "progress")
    try:
        report = build_dataset(kg, args.questions, args.out, source_url=args.kg, **budgets, **choices)
    except KeyboardInterrupt:
        return _interrupted("the rows built so far are kept beside the output: run the same command again to resume")
    if args.json:
        emit(asdict(report))
        return 0
    coverage = "n/a" if report.coverage is None else f"{report.coverage:.1%}"
    print(
        f"wrote {report.rows} rows to {report.out} ({report.triples_per_row:,.0f} triples per row; an answer inside "
        f"the graph for {coverage} of {report.with_answers} questions with answers; {report.truncated} rows cut by "
        f"a budget) in {report.seconds:.2f} s ({report.questions_per_second:.1f} questions/s, run {report.runs})"
    )
    if report.skipped:
        print(f"skipped {report.skipped} bad row(s):")
        for skipped in report.skipped_rows:
            print(f"  {skipped.file}:{skipped.line}: {skipped.reason}")
    return 0


def cmd_dataset(args: argparse.Namespace) -> int:
    """``kga dataset ACTION``: one action so far, ``build``."""
    return opens_kg(cmd_dataset_build)(args)


def dataset_arguments(dataset: argparse.ArgumentParser) -> None:
    actions = dataset.add_subparsers(
        dest="action", required=True, metavar="ACTION", help="what to do with a dataset: build"
    )
    build = actions.add_parser(
        "build",
        help="per-question subgraphs and truth paths in RoG's format, from any graph (resumable)",
        description="One row per question: the k-hop neighbourhood of its topic entities pruned by personalised "
        "PageRank, RoG's columns (id, question, answer, q_entity, a_entity, graph, choices) plus ground_paths "
        "and truncated. Run the same command again after an interruption to resume.",
    )
    kg_default = os.environ.get("KGA_KG")
    build.add_argument("--kg", default=kg_default, required=kg_default is None, help="KG URL (default: $KGA_KG)")
    build.add_argument(  # SUPPRESS: unset here, the value of `kga dataset --json` stands
        "--json", action="store_true", default=argparse.SUPPRESS, help="print the report as one JSON object"
    )
    build.add_argument(
        "--questions",
        required=True,
        metavar="IN",
        help="JSONL (.gz/.bz2) or RoG Parquet rows: id, question, q_entity (topic ids), optional a_entity (answer "
        "ids), answer (answer names), choices; .parquet needs pip install 'kg-adapters[rog]'",
    )
    build.add_argument(
        "--out", required=True, metavar="OUT", help="output file: .jsonl, .jsonl.gz or .parquet (written atomically)"
    )
    build.add_argument("--hops", type=count(1), help="walk depth around the topic entities (default 2)")
    build.add_argument("--max-nodes", type=count(1), help="nodes kept per question by PageRank (default 1000)")
    build.add_argument("--ids", action="store_true", help="write ids everywhere (default: names where the KG has them)")
    build.add_argument(
        "--workers", type=count(1), default=1, help="processes building questions in parallel (default 1)"
    )
    build.add_argument("--lenient", action="store_true", help="skip bad question rows and report them")
    build.add_argument(
        "--edges-per-node", type=count(1), help="most edges one node adds to a walk (default 1000; cut rows marked)"
    )
    build.add_argument("--max-edges", type=count(1), help="most edges one question's walk holds (default 100000)")
    build.add_argument("--batch-size", type=count(1), help="most ids per neighbors call (default 500)")
    build.add_argument("--group-size", type=count(1), help="questions walked together (default 32)")
    build.add_argument("--work-dir", help="checkpoint directory (default: .OUT.kga-build beside the output)")
    build.add_argument("--restart", action="store_true", help="discard an unfinished build with other arguments")
    build.add_argument("--overwrite", action="store_true", help="replace an existing output file")
    build.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None, help="progress bar (default: on a TTY)"
    )


def load_arguments(load: argparse.ArgumentParser) -> None:
    load.add_argument("files", nargs="+", metavar="FILE", help="dump or dataset files (.gz/.bz2 streamed)")
    load.add_argument("--store", required=True, help="store directory (created, or appended to)")
    load.add_argument(
        "--format",
        help="nt, nq, ttl, rdf, trig, tsv, metaqa, freebase (a freebase-rdf-latest dump: prefixes, tabs, bare "
        "numbers and malformed IRIs/literals repaired), wikidata-json (a Wikidata JSON dump, one entity per "
        "line), rog-dataset (RoG's dataset files from the Hugging Face hub, Parquet or JSONL: each question's "
        "subgraph, ids as the file's names; .parquet needs the rog extra, kg-adapters[rog]); default: from the "
        "extension (.json: wikidata-json, .parquet: rog-dataset)",
    )
    load.add_argument("--lenient", action="store_true", help="skip bad lines (rog-dataset: rows) and report them")
    load.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None, help="progress bar (default: on a TTY)"
    )
    load.add_argument(
        "--profile",
        help="id namespace for TSV files (generic, freebase, wikidata); default freebase for --format freebase, "
        "wikidata for Wikidata JSON dumps, names for rog-dataset, else generic",
    )
    load.add_argument(
        "--languages",
        help="freebase: keep language-tagged literals only in these, e.g. en or en,de; wikidata-json: keep labels, "
        "descriptions and aliases only in these (regional variants and mul kept too); default: every language",
    )
    load.add_argument(
        "--qualifiers",
        action="store_true",
        help="wikidata-json: also load full statements (p:/ps:/pq:, wikibase:rank) for neighbors(qualifiers=True)",
    )
    load.add_argument("--no-index", action="store_true", help="skip the traversal index (add it later: kga index)")
    load.add_argument(
        "--memory",
        help=MEMORY_HELP.format(
            default=f"{DEFAULT_MEMORY >> 20}M, fits a 16 GB machine; Oxigraph's bulk loads get half, at most 1.5G, "
            "cut to fit it"
        ),
    )
    load.add_argument("--drop-predicates", help="freebase: comma-separated predicates to leave out (default: none)")
    load.add_argument(
        "--drop-namespaces",
        help="freebase: comma-separated predicate prefixes to leave out, e.g. common.,freebase. (default: none)",
    )


def extract_arguments(extract: argparse.ArgumentParser) -> None:
    extract.add_argument("--seeds", nargs="+", required=True, metavar="FILE|ID", help="ids, or files of ids")
    extract.add_argument("--hops", type=count(), required=True, help="copy the edges within this many hops of a seed")
    extract.add_argument(
        "--direction", default="both", choices=["out", "in", "both"], help="which way edges may be walked"
    )
    extract.add_argument(
        "--relations", help="comma-separated relations to follow (default: all the profile's relation filter shows)"
    )
    extract.add_argument(
        "--max-edges", type=count(), help="stop after this many edges, as subgraph --max-edges (default: no cap)"
    )
    extract.add_argument("--batch-size", type=count(1), default=500, help="most ids per source call")
    extract.add_argument("--store", required=True, help="new store directory")
    extract.add_argument("--work-dir", help="checkpoint directory (default: .STORE.kga-extract beside the store)")
    extract.add_argument("--restart", action="store_true", help="discard an unfinished run with other arguments")


COMMANDS = [
    Command(
        name="load",
        help="load RDF, TSV, Freebase or Wikidata JSON dumps, or RoG dataset files, into a local store (atomic)",
        arguments=load_arguments,
        run=cmd_load,
        kg=False,
    ),
    Command(
        name="extract",
        help="copy the k-hop neighbourhood of seeds into a new local store (resumable)",
        arguments=extract_arguments,
        run=opens_kg(cmd_extract),
    ),
    INDEX_COMMAND,
    Command(
        name="dataset",
        help="build RoG-style KGQA datasets from any graph (kga dataset build)",
        arguments=dataset_arguments,
        run=cmd_dataset,
        kg=False,
    ),
]
"""Registered as ``loaders`` in the ``kg_adapters.commands`` entry-point group (pyproject.toml)."""
