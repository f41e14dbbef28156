"""``kga``: the command line over the same API (load, neighbors, relations, paths, shortest,
subgraph, extract, labels, search, query, demo, reason, eval). ``--json`` prints one JSON object per line."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path as FilePath
from typing import Any

from kg_adapters.base import KnowledgeGraph, SparqlQueryable
from kg_adapters.errors import KGError
from kg_adapters.records import Edge, Literal, Node, Path, PathResult
from kg_adapters.registry import connect

DEFAULT_STORE = ".kga/store"


def node_json(node: Node | bool) -> Any:
    if isinstance(node, Literal):
        return {"value": node.value, "datatype": node.datatype, "lang": node.lang}
    return node


def edge_json(edge: Edge) -> list[Any]:
    """``[head, relation, tail]``, plus ``{"cvt": [edge, ...]}`` when the edge carries a CVT's edges."""
    encoded = [edge.head, edge.relation, node_json(edge.tail)]
    if edge.cvt:
        encoded.append({"cvt": [edge_json(inner) for inner in edge.cvt]})
    return encoded


def path_json(path: Path) -> dict[str, Any]:
    return {"start": path.start, "edges": [edge_json(edge) for edge in path.edges]}


def _emit(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")


def _csv(text: str | None) -> list[str] | None:
    return [part.strip() for part in text.split(",") if part.strip()] if text else None


def _names(kg: KnowledgeGraph, ids: Sequence[str]) -> dict[str, str]:
    return kg.labels(list(ids)) if ids else {}


def _show(node: Node, names: dict[str, str]) -> str:
    if isinstance(node, Literal):
        suffix = f"@{node.lang}" if node.lang else (f"^^{node.datatype}" if node.datatype else "")
        return json.dumps(node.value, ensure_ascii=False) + suffix
    name = names.get(node)
    return f"{name} [{node}]" if name else node


def _print_paths(kg: KnowledgeGraph, result: PathResult, as_json: bool) -> None:
    if as_json:
        for path in result:
            _emit(path_json(path))
    else:
        from reasoning.rog import format_path, path_entities

        names = _names(kg, path_entities(result))
        for path in result:
            print(format_path(path, names))
        print(f"{len(result)} path(s)")
    if result.truncated:
        print(f"kga: warning: result truncated at {len(result)} paths (raise --max-paths)", file=sys.stderr)


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
    report = load_files(
        args.files,
        args.store,
        format=args.format,
        lenient=args.lenient,
        profile=profile,
        progress=None,
        dump_filter=filters,
        languages=languages if wikidata else None,
        qualifiers=args.qualifiers,
        index=not args.no_index,
    )
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
    }
    if args.json:
        summary["skipped"] = [{"file": s.file, "line": s.line, "reason": s.reason} for s in report.skipped]
        _emit(summary)
    else:
        print(
            f"loaded {report.statements_read} statements into {report.store} "
            f"({report.store_triples} triples in the store) in {report.seconds:.2f} s "
            f"({report.triples_per_second:,.0f} triples/s)"
        )
        if report.lines_filtered or report.lines_repaired:
            print(f"filtered out {report.lines_filtered} line(s); repaired {report.lines_repaired} line(s)")
        if report.lines_skipped:
            print(f"skipped {report.lines_skipped} bad line(s):")
            for skipped in report.skipped:
                print(f"  {skipped.file}:{skipped.line}: {skipped.reason}")
    return 0


def cmd_neighbors(kg: KnowledgeGraph, args: argparse.Namespace) -> int:
    result = kg.neighbors(
        args.id,
        direction=args.direction,
        relations=_csv(args.relations),
        limit_per_entity=args.limit,
        expand_cvt=args.expand_cvt,
    )
    if args.json:
        for entity, edges in result.items():
            _emit({"id": entity, "edges": [edge_json(edge) for edge in edges]})
        return 0
    every = [e for es in result.values() for edge in es for e in (edge, *edge.cvt)]
    ids = {e.head for e in every} | {e.tail for e in every if isinstance(e.tail, str)}
    names = _names(kg, sorted(ids))
    for entity, edges in result.items():
        print(f"{_show(entity, names)}: {len(edges)} edge(s)")
        for edge in edges:
            print(f"  {_show(edge.head, names)} -{edge.relation}-> {_show(edge.tail, names)}")
            for inner in edge.cvt:
                print(f"      {_show(inner.head, names)} -{inner.relation}-> {_show(inner.tail, names)}")
    return 0


def cmd_relations(kg: KnowledgeGraph, args: argparse.Namespace) -> int:
    for entity, relations in kg.relations(args.id, direction=args.direction, expand_cvt=args.expand_cvt).items():
        if args.json:
            _emit({"id": entity, "relations": relations})
        else:
            print(f"{entity}:")
            for relation in relations:
                print(f"  {relation}")
    return 0


def cmd_paths(kg: KnowledgeGraph, args: argparse.Namespace) -> int:
    relation_path = _csv(args.path) or []
    directions = _csv(args.dir)
    result = kg.paths(
        args.start,
        relation_path,
        directions=directions,  # type: ignore[arg-type]
        max_paths=args.max_paths,
        simple=args.simple,
        expand_cvt=args.expand_cvt,
    )
    _print_paths(kg, result, args.json)
    return 0


def cmd_shortest(kg: KnowledgeGraph, args: argparse.Namespace) -> int:
    result = kg.shortest_paths(
        args.source, args.target, max_hops=args.max_hops, direction=args.direction, max_paths=args.max_paths
    )
    _print_paths(kg, result, args.json)
    return 0


def cmd_subgraph(kg: KnowledgeGraph, args: argparse.Namespace) -> int:
    edges = kg.subgraph(
        args.seed, hops=args.hops, direction=args.direction, relations=_csv(args.relations), max_edges=args.max_edges
    )
    for edge in edges:
        if args.json:
            _emit({"head": edge.head, "relation": edge.relation, "tail": node_json(edge.tail)})
        else:
            print(f"{edge.head}\t{edge.relation}\t{_show(edge.tail, {})}")
    if not args.json:
        print(f"{len(edges)} edge(s)")
    if edges.truncated:
        print(f"kga: warning: subgraph truncated at {len(edges)} edges (raise --max-edges)", file=sys.stderr)
    return 0


def seed_ids(values: Sequence[str]) -> list[str]:
    """``--seeds`` values: a path to an existing file holds one id per line (blank lines and
    ``#`` comments skipped); anything else is an id."""
    ids: list[str] = []
    for value in values:
        path = FilePath(value)
        if path.is_file():
            lines = (line.strip() for line in path.read_text("utf-8").splitlines())
            ids.extend(line for line in lines if line and not line.startswith("#"))
        else:
            ids.append(value)
    return ids


def cmd_extract(kg: KnowledgeGraph, args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from loaders.extract import extract_subgraph

    report = extract_subgraph(
        kg,
        seed_ids(args.seeds),
        hops=args.hops,
        store=args.store,
        direction=args.direction,
        relations=_csv(args.relations),
        max_edges=args.max_edges,
        batch_size=args.batch_size,
        work_dir=args.work_dir,
        restart=args.restart,
        source_url=args.kg,
    )
    if args.json:
        _emit(asdict(report))
    else:
        print(
            f"extracted {report.edges} edges ({report.triples} triples with names) around {len(report.seeds)} "
            f"seed(s), {report.hops} hop(s), {report.entities} entities into {report.store} "
            f"in {report.seconds:.2f} s ({report.source_calls} source calls, run {report.runs})"
        )
    if report.truncated:
        print(f"kga: warning: extraction truncated at {report.edges} edges (raise --max-edges)", file=sys.stderr)
    return 0


def cmd_labels(kg: KnowledgeGraph, args: argparse.Namespace) -> int:
    found = kg.labels(args.id, lang=args.lang)
    for entity in args.id:
        if args.json:
            _emit({"id": entity, "label": found.get(entity)})
        else:
            print(f"{entity}\t{found.get(entity, '')}")
    return 0


def cmd_search(kg: KnowledgeGraph, args: argparse.Namespace) -> int:
    for entity in kg.search(args.text, limit=args.limit):
        if args.json:
            _emit({"id": entity.id, "label": entity.label})
        else:
            print(f"{entity.id}\t{entity.label or ''}")
    return 0


def cmd_query(kg: KnowledgeGraph, args: argparse.Namespace) -> int:
    if not isinstance(kg, SparqlQueryable):
        raise KGError("this backend does not answer raw SPARQL")
    sparql = FilePath(args.file).read_text("utf-8") if args.file else args.sparql
    if not sparql:
        raise KGError("give a query, or --file FILE")
    for row in kg.query(sparql):
        if args.json:
            _emit({key: node_json(value) for key, value in row.items()})
        else:
            cells = (f"{key}={value if isinstance(value, bool) else _show(value, {})}" for key, value in row.items())
            print("\t".join(cells))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from reasoning.demo import run_demo

    run_demo(FilePath(args.store))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kga", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    kg_default = os.environ.get("KGA_KG")

    def add(name: str, help_text: str, *, kg: bool = True) -> argparse.ArgumentParser:
        command = sub.add_parser(name, help=help_text, description=help_text)
        if kg:
            command.add_argument(
                "--kg",
                default=kg_default,
                required=kg_default is None,
                help="KG URL, e.g. oxigraph:///abs/dir?profile=freebase (&relation_filter=none shows every relation; "
                "default: $KGA_KG)",
            )
        command.add_argument("--json", action="store_true", help="one JSON object per line")
        return command

    load = add("load", "load RDF, TSV, Freebase or Wikidata JSON dumps into a local store (atomic)", kg=False)
    load.add_argument("files", nargs="+", metavar="FILE")
    load.add_argument("--store", required=True, help="store directory (created, or appended to)")
    load.add_argument(
        "--format",
        help="nt, nq, ttl, rdf, trig, tsv, metaqa, freebase (a freebase-rdf-latest dump: prefixes, tabs, bare "
        "numbers and malformed IRIs/literals repaired), wikidata-json (a Wikidata JSON dump, one entity per "
        "line); default: from the extension (.json: wikidata-json)",
    )
    load.add_argument("--lenient", action="store_true", help="skip bad lines and report them")
    load.add_argument(
        "--profile",
        help="id namespace for TSV files (generic, freebase, wikidata); default freebase for --format freebase, "
        "wikidata for Wikidata JSON dumps, else generic",
    )
    load.add_argument(
        "--languages",
        help="freebase: keep language-tagged literals only in these, e.g. en or en,de; wikidata-json: keep labels, "
        "descriptions and aliases only in these (regional variants and mul kept too)",
    )
    load.add_argument(
        "--qualifiers",
        action="store_true",
        help="wikidata-json: also load full statements (p:/ps:/pq:, wikibase:rank) for neighbors(qualifiers=True)",
    )
    load.add_argument("--no-index", action="store_true", help="skip the traversal index (add it later: kga index)")
    load.add_argument("--drop-predicates", help="freebase: comma-separated predicates to leave out")
    load.add_argument(
        "--drop-namespaces", help="freebase: comma-separated predicate prefixes to leave out, e.g. common.,freebase."
    )

    neighbors = add("neighbors", "1-hop edges of entities")
    neighbors.add_argument("--id", action="append", required=True)
    neighbors.add_argument("--direction", default="out", choices=["out", "in", "both"])
    neighbors.add_argument("--relations", help="comma-separated relations to keep")
    neighbors.add_argument("--limit", type=int, help="most edges per entity")
    neighbors.add_argument("--expand-cvt", action="store_true", help="show the edges of CVT (mediator) nodes reached")

    relations = add("relations", "distinct relations of entities")
    relations.add_argument("--id", action="append", required=True)
    relations.add_argument("--direction", default="out", choices=["out", "in", "both"])
    relations.add_argument("--expand-cvt", action="store_true", help="add r1..r2 for relations through CVT nodes")

    paths = add("paths", "walks that follow a relation path (RoG's constrained BFS)")
    paths.add_argument("--start", action="append", required=True)
    paths.add_argument("--path", required=True, help="comma-separated relations, e.g. r1,r2")
    paths.add_argument("--dir", help="comma-separated direction per hop: out, in, both (default out)")
    paths.add_argument("--max-paths", type=int)
    paths.add_argument("--simple", action="store_true", help="no node twice on a path")
    paths.add_argument("--expand-cvt", action="store_true", help="a step r1..r2 walks r1 into a CVT node, r2 out")

    shortest = add("shortest", "all shortest paths between entity sets")
    shortest.add_argument("--source", action="append", required=True)
    shortest.add_argument("--target", action="append", required=True)
    shortest.add_argument("--max-hops", type=int, default=4)
    shortest.add_argument("--direction", default="both", choices=["out", "in", "both"])
    shortest.add_argument("--max-paths", type=int)

    subgraph = add("subgraph", "edges within k hops of seed entities")
    subgraph.add_argument("--seed", action="append", required=True)
    subgraph.add_argument("--hops", type=int, default=2)
    subgraph.add_argument("--direction", default="both", choices=["out", "in", "both"])
    subgraph.add_argument("--relations", help="comma-separated relations to follow")
    subgraph.add_argument("--max-edges", type=int)

    extract = add("extract", "copy the k-hop neighbourhood of seeds into a new local store (resumable)")
    extract.add_argument("--seeds", nargs="+", required=True, metavar="FILE|ID", help="ids, or files of ids")
    extract.add_argument("--hops", type=int, required=True)
    extract.add_argument("--direction", default="both", choices=["out", "in", "both"])
    extract.add_argument("--relations", help="comma-separated relations to follow")
    extract.add_argument("--max-edges", type=int, help="stop after this many edges (as subgraph --max-edges)")
    extract.add_argument("--batch-size", type=int, default=500, help="most ids per source call")
    extract.add_argument("--store", required=True, help="new store directory")
    extract.add_argument("--work-dir", help="checkpoint directory (default: .STORE.kga-extract beside the store)")
    extract.add_argument("--restart", action="store_true", help="discard an unfinished run with other arguments")

    labels = add("labels", "names of entities")
    labels.add_argument("--id", action="append", required=True)
    labels.add_argument("--lang", default="en")

    search = add("search", "find entities by name")
    search.add_argument("text")
    search.add_argument("--limit", type=int, default=10)

    query = add("query", "raw SPARQL")
    query.add_argument("sparql", nargs="?")
    query.add_argument("--file", help="read the query from a file")

    demo = add("demo", "load the bundled FB15k-237 sample and answer questions by retrieval", kg=False)
    demo.add_argument("--store", default=DEFAULT_STORE.replace("store", "demo-store"))

    from loaders.indexing import add_index_parser
    from reasoning.commands import add_parsers

    add_index_parser(add)
    add_parsers(add)
    return parser


KG_COMMANDS = {
    "neighbors": cmd_neighbors,
    "relations": cmd_relations,
    "paths": cmd_paths,
    "shortest": cmd_shortest,
    "subgraph": cmd_subgraph,
    "extract": cmd_extract,
    "labels": cmd_labels,
    "search": cmd_search,
    "query": cmd_query,
}


def _hint_index(kg: KnowledgeGraph) -> None:
    """One line on stderr when an on-disk store has no traversal index (it answers, more slowly)."""
    from kg_adapters.backends.oxigraph import OxigraphGraph

    if isinstance(kg, OxigraphGraph) and kg.path is not None and kg.traversal_index is None:
        from kg_adapters.backends.traversal_index import add_hint

        print(add_hint(kg.path), file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "load":
            return cmd_load(args)
        if args.command == "demo":
            return cmd_demo(args)
        if args.command == "index":
            from loaders.indexing import cmd_index

            return cmd_index(args)
        if args.command in ("reason", "eval"):
            from reasoning import commands

            return int(commands.cmd_reason(args) if args.command == "reason" else commands.cmd_eval(args))
        try:
            kg = connect(args.kg)
        except TypeError as exc:  # an option the backend does not know: a usage error
            print(f"kga: error: {exc}", file=sys.stderr)
            return 2
        with kg:
            _hint_index(kg)
            if kg.profile.detection is not None:
                print(f"kga: detected profile: {kg.profile.name} ({kg.profile.detection})", file=sys.stderr)
            return KG_COMMANDS[args.command](kg, args)
    except KGError as exc:
        print(f"kga: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
