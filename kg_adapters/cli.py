"""``kga``: the command line over the same API. The core's graph commands are defined here; other
packages add theirs through the ``kg_adapters.commands`` entry-point group (see
:mod:`kg_adapters.commands`): ``loaders`` adds load and extract, ``reasoning`` demo, reason and eval."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Sequence
from typing import NoReturn

from kg_adapters._version import __version__
from kg_adapters.base import KnowledgeGraph, SparqlQueryable
from kg_adapters.commands import (
    Command,
    UsageError,
    contributed_commands,
    count,
    csv_list,
    emit,
    opens_kg,
    read_text_file,
)
from kg_adapters.display import format_path, path_entities
from kg_adapters.errors import KGError
from kg_adapters.records import Literal, Node, PathResult, edge_to_json, entity_to_json, node_to_json, path_to_json
from kg_adapters.serve.commands import SERVE_COMMANDS
from kg_adapters.url import redact_url


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
            emit(path_to_json(path))
    else:
        names = _names(kg, path_entities(result))
        for path in result:
            print(format_path(path, names))
        print(f"{len(result)} path(s)")
    if result.truncated:
        print(f"kga: warning: result truncated at {len(result)} paths (raise --max-paths)", file=sys.stderr)


def cmd_neighbors(kg: KnowledgeGraph, args: argparse.Namespace) -> int:
    result = kg.neighbors(
        args.id,
        direction=args.direction,
        relations=csv_list(args.relations),
        limit_per_entity=args.limit,
        expand_cvt=args.expand_cvt,
    )
    if args.json:
        for entity, edges in result.items():
            emit({"id": entity, "edges": [edge_to_json(edge) for edge in edges]})
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
            emit({"id": entity, "relations": relations})
        else:
            print(f"{entity}:")
            for relation in relations:
                print(f"  {relation}")
    return 0


def cmd_paths(kg: KnowledgeGraph, args: argparse.Namespace) -> int:
    relation_path = csv_list(args.path) or []
    directions = csv_list(args.dir)
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
        args.seed,
        hops=args.hops,
        direction=args.direction,
        relations=csv_list(args.relations),
        max_edges=args.max_edges,
    )
    for edge in edges:
        if args.json:
            emit({"edge": edge_to_json(edge)})
        else:
            print(f"{edge.head}\t{edge.relation}\t{_show(edge.tail, {})}")
    if not args.json:
        print(f"{len(edges)} edge(s)")
    if edges.truncated:
        print(f"kga: warning: subgraph truncated at {len(edges)} edges (raise --max-edges)", file=sys.stderr)
    return 0


def cmd_labels(kg: KnowledgeGraph, args: argparse.Namespace) -> int:
    found = kg.labels(args.id, lang=args.lang)
    for entity in args.id:
        if args.json:
            emit({"id": entity, "label": found.get(entity)})
        else:
            print(f"{entity}\t{found.get(entity, '')}")
    return 0


def cmd_search(kg: KnowledgeGraph, args: argparse.Namespace) -> int:
    find = kg.search_relations if args.relations else kg.search
    for entity in find(args.text, limit=args.limit):
        if args.json:
            emit(entity_to_json(entity))
        else:
            print(f"{entity.id}\t{entity.label or ''}")
    return 0


def cmd_query(kg: KnowledgeGraph, args: argparse.Namespace) -> int:
    if not isinstance(kg, SparqlQueryable):
        raise KGError("this backend does not answer raw SPARQL")
    sparql = read_text_file(args.file, "query file") if args.file else args.sparql
    if not sparql:
        raise KGError("give a query, or --file FILE")
    for row in kg.query(sparql):
        if args.json:
            emit({key: node_to_json(value) for key, value in row.items()})
        else:
            cells = (f"{key}={value if isinstance(value, bool) else _show(value, {})}" for key, value in row.items())
            print("\t".join(cells))
    return 0


def neighbors_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--id", action="append", required=True)
    command.add_argument("--direction", default="out", choices=["out", "in", "both"])
    command.add_argument("--relations", help="comma-separated relations to keep")
    command.add_argument("--limit", type=count(), help="most edges per entity")
    command.add_argument("--expand-cvt", action="store_true", help="show the edges of CVT (mediator) nodes reached")


def relations_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--id", action="append", required=True)
    command.add_argument("--direction", default="out", choices=["out", "in", "both"])
    command.add_argument("--expand-cvt", action="store_true", help="add r1..r2 for relations through CVT nodes")


def paths_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--start", action="append", required=True)
    command.add_argument("--path", required=True, help="comma-separated relations, e.g. r1,r2")
    command.add_argument("--dir", help="comma-separated direction per hop: out, in, both (default out)")
    command.add_argument("--max-paths", type=count())
    command.add_argument("--simple", action="store_true", help="no node twice on a path")
    command.add_argument("--expand-cvt", action="store_true", help="a step r1..r2 walks r1 into a CVT node, r2 out")


def shortest_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--source", action="append", required=True)
    command.add_argument("--target", action="append", required=True)
    command.add_argument("--max-hops", type=count(), default=4)
    command.add_argument("--direction", default="both", choices=["out", "in", "both"])
    command.add_argument("--max-paths", type=count())


def subgraph_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--seed", action="append", required=True)
    command.add_argument("--hops", type=count(), default=2)
    command.add_argument("--direction", default="both", choices=["out", "in", "both"])
    command.add_argument("--relations", help="comma-separated relations to follow")
    command.add_argument("--max-edges", type=count())


def labels_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--id", action="append", required=True)
    command.add_argument("--lang", default="en")


def search_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("text")
    command.add_argument("--relations", action="store_true", help="search relations (by label or id words)")
    command.add_argument("--limit", type=count(), default=10)


def query_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("sparql", nargs="?")
    command.add_argument("--file", help="read the query from a file")


CORE_COMMANDS: tuple[Command, ...] = (
    Command(
        name="neighbors", help="1-hop edges of entities", arguments=neighbors_arguments, run=opens_kg(cmd_neighbors)
    ),
    Command(
        name="relations",
        help="distinct relations of entities",
        arguments=relations_arguments,
        run=opens_kg(cmd_relations),
    ),
    Command(
        name="paths",
        help="walks that follow a relation path (RoG's constrained BFS)",
        arguments=paths_arguments,
        run=opens_kg(cmd_paths),
    ),
    Command(
        name="shortest",
        help="all shortest paths between entity sets",
        arguments=shortest_arguments,
        run=opens_kg(cmd_shortest),
    ),
    Command(
        name="subgraph",
        help="edges within k hops of seed entities",
        arguments=subgraph_arguments,
        run=opens_kg(cmd_subgraph),
    ),
    Command(name="labels", help="names of entities", arguments=labels_arguments, run=opens_kg(cmd_labels)),
    Command(
        name="search",
        help="find entities by name (--relations: relations by label or id words)",
        arguments=search_arguments,
        run=opens_kg(cmd_search),
    ),
    Command(name="query", help="raw SPARQL", arguments=query_arguments, run=opens_kg(cmd_query)),
    *SERVE_COMMANDS,
)
"""The core's commands; other packages contribute theirs (see :mod:`kg_adapters.commands`)."""

DESCRIPTION = (
    "kga: the command line over the kg-adapters API. Give --kg URL (or set KGA_KG) to the graph commands; "
    "--json prints one JSON object per line."
)


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error reported as one ``kga: error:`` line like every other failure."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"kga: error: {self.prog}: {message} (see {self.prog} --help)\n")


def build_parser(commands: Iterable[Command] | None = None) -> argparse.ArgumentParser:
    """The ``kga`` parser over ``commands`` (default: the core's, then every contributed one)."""
    parser = _Parser(prog="kga", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"kga (kg-adapters) {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    kg_default = os.environ.get("KGA_KG")
    seen: dict[str, Command] = {}
    for command in (*CORE_COMMANDS, *contributed_commands()) if commands is None else commands:
        if command.name in seen:
            raise KGError(f"two kga commands are named {command.name!r}")
        seen[command.name] = command
        parsed = sub.add_parser(command.name, help=command.help, description=command.help)
        if command.kg:
            parsed.add_argument(
                "--kg",
                default=kg_default,
                required=kg_default is None,
                help="KG URL, e.g. oxigraph:///abs/dir?profile=freebase (&relation_filter=none shows every relation; "
                "default: $KGA_KG)",
            )
        parsed.add_argument("--json", action="store_true", help="one JSON object per line")
        command.arguments(parsed)
        parsed.set_defaults(run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs one command. Every failure is one ``kga: error:`` line on stderr (credentials redacted)
    and a non-zero status: 2 for usage errors, 130 for Ctrl-C, 1 for everything else."""
    try:
        parser = build_parser()
    except KGError as exc:  # a broken command contribution: say which, rather than a traceback
        return _fail(str(exc), 1)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # a usage error (already printed as one line), --help or --version
        return exc.code if isinstance(exc.code, int) else 2
    _strict_output()
    try:
        status: int = args.run(args)
        return status
    except UsageError as exc:
        return _fail(str(exc), 2)
    except KGError as exc:
        return _fail(str(exc), 1)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except UnicodeDecodeError as exc:
        return _fail(f"input is not valid UTF-8 (byte {exc.start}): {exc.reason}", 1)
    except UnicodeEncodeError as exc:  # text no UTF-8 can carry: never written in any form
        return _fail(f"the answer holds text that is not valid Unicode ({exc.reason}); nothing more is written", 1)
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename is not None else ""
        return _fail(f"{exc.strerror or exc}{where}", 1)
    except Exception as exc:  # a bug: still one line, naming the exception
        return _fail(f"unexpected {type(exc).__name__}: {exc}", 1)


def _strict_output() -> None:
    """Standard output encodes strictly: text that is not valid Unicode (a lone surrogate) is an error,
    never written as invalid UTF-8 (Python's default under a C locale is ``surrogateescape``)."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="strict")


def _fail(message: str, status: int) -> int:
    print(f"kga: error: {redact_url(message)}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
