"""``kga``: the command line over the same API. The core's graph commands are defined here; other
packages add theirs through the ``kg_adapters.commands`` entry-point group (see
:mod:`kg_adapters.commands`): ``loaders`` adds load and extract, ``reasoning`` demo, reason and eval."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import NoReturn

from kg_adapters._version import __version__
from kg_adapters.base import KnowledgeGraph, SparqlQueryable
from kg_adapters.commands import (
    Command,
    RunWithGraph,
    UsageError,
    contributed_commands,
    count,
    csv_list,
    emit,
    opens_kg,
    read_text_file,
)
from kg_adapters.display import format_path, literal_text, path_entities
from kg_adapters.errors import KGError
from kg_adapters.records import Literal, Node, PathResult, edge_to_json, entity_to_json, node_to_json, path_to_json
from kg_adapters.serve.commands import SERVE_COMMANDS
from kg_adapters.url import redact_url


def _names(kg: KnowledgeGraph, ids: Sequence[str]) -> dict[str, str]:
    return kg.labels(list(ids)) if ids else {}


def _show(node: Node, names: dict[str, str]) -> str:
    if isinstance(node, Literal):
        return literal_text(node)
    name = names.get(node)
    return f"{name} [{node}]" if name else node


def _warn(message: str) -> None:
    """A ``kga: warning:`` line on stderr (after the answer, which stays on stdout)."""
    sys.stdout.flush()
    print(f"kga: warning: {message}", file=sys.stderr)


def _count(number: int, one: str, many: str) -> str:
    return f"{number} {one if number == 1 else many}"


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
        _warn(f"result truncated at {len(result)} paths (raise --max-paths)")


def cmd_neighbors(kg: KnowledgeGraph, args: argparse.Namespace) -> int:
    result = kg.neighbors(
        args.id,
        direction=args.direction,
        relations=csv_list(args.relations),
        limit_per_entity=None if args.limit is None else args.limit + 1,  # one more: tells whether --limit cut
        expand_cvt=args.expand_cvt,
    )
    if args.limit is not None:
        cut = [entity for entity, edges in result.items() if len(edges) > args.limit]
        result = {entity: edges[: args.limit] for entity, edges in result.items()}
        if cut:
            _warn(
                f"{_count(len(cut), 'entity', 'entities')} ({', '.join(cut[:3])}{', ...' if len(cut) > 3 else ''}) "
                f"{'has' if len(cut) == 1 else 'have'} more than {args.limit} edges: cut at --limit {args.limit} "
                "(raise it, or name --relations)"
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
        _warn(f"subgraph truncated at {len(edges)} edges (raise --max-edges)")
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
    found = find(args.text, limit=args.limit + 1)  # one more: tells whether --limit cut the list
    for entity in found[: args.limit]:
        if args.json:
            emit(entity_to_json(entity))
        else:
            print(f"{entity.id}\t{entity.label or ''}")
    if len(found) > args.limit:
        more = _count(args.limit, "match", "matches")
        _warn(f"more than {more}: cut at --limit {args.limit} (raise it, or search a longer text)")
    return 0


def cmd_query(kg: KnowledgeGraph, args: argparse.Namespace) -> int:
    if not isinstance(kg, SparqlQueryable):
        raise KGError("this backend does not answer raw SPARQL")
    sparql = read_text_file(args.file, "query file") if args.file else args.sparql
    if not sparql:
        raise KGError("give a query, or --file FILE")
    from kg_adapters.serve.readonly import ReadOnlyViolation, query_form  # (its lexer takes ~0.3 s to import)

    try:
        query_form(sparql)  # an update fails here, saying so, not as a syntax error of the engine's
    except ReadOnlyViolation as exc:
        if exc.refused == "SERVICE":
            raise UsageError(
                "kga query only reads the graph: SERVICE (federated query) is refused, a query answers from this "
                "graph alone"
            ) from exc
        raise UsageError(
            f"kga query only reads the graph: it is read-only here, so {exc.refused} is refused; add data to a "
            "store with kga load FILE --store DIR"
        ) from exc
    for row in kg.query(sparql):
        if args.json:
            emit({key: node_to_json(value) for key, value in row.items()})
        else:
            cells = (
                f"{key}={str(value).lower() if isinstance(value, bool) else _show(value, {})}"
                for key, value in row.items()
            )
            print("\t".join(cells))
    return 0


DIRECTIONS = ["out", "in", "both"]


def neighbors_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--id", action="append", required=True, help="entity id (repeatable: one batch)")
    command.add_argument(
        "--direction", default="out", choices=DIRECTIONS, help="out: edges from the entity, in: to it, both"
    )
    command.add_argument(
        "--relations", help="comma-separated relations to keep (default: all the profile's relation filter shows)"
    )
    command.add_argument("--limit", type=count(), help="most edges per entity; a cut prints a warning (default: all)")
    command.add_argument("--expand-cvt", action="store_true", help="show the edges of CVT (mediator) nodes reached")


def relations_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--id", action="append", required=True, help="entity id (repeatable: one batch)")
    command.add_argument(
        "--direction",
        default="out",
        choices=DIRECTIONS,
        help="out: relations of edges from the entity, in: to it, both: either",
    )
    command.add_argument("--expand-cvt", action="store_true", help="add r1..r2 for relations through CVT nodes")


def paths_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--start", action="append", required=True, help="start entity id (repeatable)")
    command.add_argument("--path", required=True, help="comma-separated relations, e.g. r1,r2")
    command.add_argument("--dir", help="comma-separated direction per hop: out, in, both (default: out for every hop)")
    command.add_argument("--max-paths", type=count(), help="most paths; a cut prints a warning (default: no cap)")
    command.add_argument("--simple", action="store_true", help="no node twice on a path")
    command.add_argument("--expand-cvt", action="store_true", help="a step r1..r2 walks r1 into a CVT node, r2 out")


def shortest_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--source", action="append", required=True, help="source entity id (repeatable)")
    command.add_argument("--target", action="append", required=True, help="target entity id (repeatable)")
    command.add_argument("--max-hops", type=count(), default=4, help="longest path, in edges")
    command.add_argument("--direction", default="both", choices=DIRECTIONS, help="which way edges may be walked")
    command.add_argument("--max-paths", type=count(), help="most paths; a cut prints a warning (default: no cap)")


def subgraph_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--seed", action="append", required=True, help="seed entity id (repeatable)")
    command.add_argument("--hops", type=count(), default=2, help="edges within this many hops of a seed")
    command.add_argument("--direction", default="both", choices=DIRECTIONS, help="which way edges may be walked")
    command.add_argument(
        "--relations", help="comma-separated relations to follow (default: all the profile's relation filter shows)"
    )
    command.add_argument("--max-edges", type=count(), help="most edges; a cut prints a warning (default: no cap)")


def labels_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--id", action="append", required=True, help="entity id (repeatable)")
    command.add_argument("--lang", default="en", help="preferred language tag, then untagged, then any")


def search_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("text", help="words of the name (or of the relation, with --relations)")
    command.add_argument("--relations", action="store_true", help="search relations (by label or id words)")
    command.add_argument("--limit", type=count(), default=10, help="most matches; a cut prints a warning")


def query_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("sparql", nargs="?", help="a read-only query: SELECT, ASK, CONSTRUCT or DESCRIBE")
    command.add_argument("--file", help="read the query from a file (default: the query argument)")


def _graph_command(
    name: str, help: str, arguments: Callable[[argparse.ArgumentParser], None], run: RunWithGraph
) -> Command:
    """A command over the graph ``--kg`` names: opened for ``run``, closed after (:func:`opens_kg`)."""
    return Command(name=name, help=help, arguments=arguments, run=opens_kg(run))


CORE_COMMANDS: tuple[Command, ...] = (
    _graph_command("neighbors", "1-hop edges of entities", neighbors_arguments, cmd_neighbors),
    _graph_command("relations", "distinct relations of entities", relations_arguments, cmd_relations),
    _graph_command("paths", "walks that follow a relation path (RoG's constrained BFS)", paths_arguments, cmd_paths),
    _graph_command("shortest", "all shortest paths between entity sets", shortest_arguments, cmd_shortest),
    _graph_command("subgraph", "edges within k hops of seed entities", subgraph_arguments, cmd_subgraph),
    _graph_command("labels", "names of entities", labels_arguments, cmd_labels),
    _graph_command(
        "search", "find entities by name (--relations: relations by label or id words)", search_arguments, cmd_search
    ),
    _graph_command("query", "raw SPARQL", query_arguments, cmd_query),
    *SERVE_COMMANDS,
)
"""The core's commands; other packages contribute theirs (see :mod:`kg_adapters.commands`)."""

DESCRIPTION = (
    "kga: the command line over the kg-adapters API. Give --kg URL (or set KGA_KG) to the graph commands; "
    "--json prints one JSON object per line."
)


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error reported as one ``kga: error:`` line like every other failure
    (naming the subcommand: ``kga: error: serve: argument --port: ...``)."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("kga").strip()
        self.exit(2, f"kga: error: {command + ': ' if command else ''}{message} (see {self.prog} --help)\n")


class _HelpFormatter(argparse.HelpFormatter):
    """Every option's help says its default, where it has one and the text does not say it already."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            action.option_strings
            and default not in (None, False, argparse.SUPPRESS, [])
            and "default" not in text.lower()
            and not isinstance(action, (argparse._HelpAction, argparse._VersionAction))
        ):
            text += " (default: %(default)s)"
        return text


def build_parser(commands: Iterable[Command] | None = None) -> argparse.ArgumentParser:
    """The ``kga`` parser over ``commands`` (default: the core's, then every contributed one)."""
    parser = _Parser(prog="kga", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"kga (kg-adapters) {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    kg_default = os.environ.get("KGA_KG", "").strip() or None  # an empty one (export KGA_KG=) names no graph
    seen: dict[str, Command] = {}
    for command in (*CORE_COMMANDS, *contributed_commands()) if commands is None else commands:
        if command.name in seen:
            raise KGError(f"two kga commands are named {command.name!r}")
        seen[command.name] = command
        parsed = sub.add_parser(
            command.name, help=command.help, description=command.help, formatter_class=_HelpFormatter
        )
        if command.kg:
            parsed.add_argument(
                "--kg",
                metavar="URL",
                default=kg_default,
                help="KG URL, e.g. oxigraph:///abs/dir?profile=freebase (&relation_filter=none shows every relation); "
                "required unless $KGA_KG is set (default: $KGA_KG, "
                + ("now set)" if kg_default is not None else "not set now)"),
            )
        if command.json:
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
    if getattr(args, "kg", "") is None:  # a graph command with neither --kg nor $KGA_KG
        return _fail(f"{args.command}: give --kg URL or set KGA_KG (see kga {args.command} --help)", 2)
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
