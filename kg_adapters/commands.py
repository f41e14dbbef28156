"""The ``kga`` command registry: each package contributes its own subcommands.

A command is a :class:`Command`: its name, one line of help, a function adding its arguments to an
``argparse`` parser, and a function running it. The core's commands live in :mod:`kg_adapters.cli`;
other packages contribute theirs through the ``kg_adapters.commands`` entry-point group (as backends
come through ``kg_adapters.backends``), so the core never imports the packages above it. An entry
point names a :class:`Command` or a sequence of them::

    # pyproject.toml
    [project.entry-points."kg_adapters.commands"]
    loaders = "loaders.cli:COMMANDS"

    # loaders/cli.py: import only argparse and this module at the top; the machinery inside run
    COMMANDS = [Command(name="load", help="...", arguments=add_load_arguments, run=run_load, kg=False)]

``kg=True`` gives the command a ``--kg URL`` option (default ``$KGA_KG``); wrap a function of
``(kg, args)`` in :func:`opens_kg` to have the graph opened, its detected profile reported and the
graph closed around it. A command gets ``--json`` unless ``json=False``; :func:`emit` prints one JSON
object per line.
A run function returns the exit status and raises :class:`~kg_adapters.errors.KGError` for a typed
error (exit 1); a ``TypeError`` from ``connect`` (an unknown option) is a usage error (exit 2).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from kg_adapters.base import KnowledgeGraph
from kg_adapters.errors import KGError

ENTRY_POINT_GROUP = "kg_adapters.commands"

Run = Callable[[argparse.Namespace], int]
RunWithGraph = Callable[[KnowledgeGraph, argparse.Namespace], int]


class UsageError(KGError):
    """A command was given arguments it cannot use; ``kga`` prints it and exits with status 2."""


@dataclass(frozen=True, kw_only=True)
class Command:
    """One ``kga`` subcommand."""

    name: str
    help: str
    """One line, plain text (argparse prints it as is)."""
    arguments: Callable[[argparse.ArgumentParser], None]
    """Adds the command's own arguments (``--kg`` and ``--json`` are added for it, where it takes them)."""
    run: Run
    kg: bool = True
    """Whether the command takes ``--kg URL``."""
    json: bool = True
    """Whether the command takes ``--json`` (its records as one JSON object per line); the servers,
    which print no records, do not."""


def opens_kg(run: RunWithGraph) -> Run:
    """A run function that opens ``args.kg``, reports a detected profile on stderr, calls ``run(kg,
    args)`` and closes the graph; an option the backend does not know is a usage error."""

    def run_on_graph(args: argparse.Namespace) -> int:
        from kg_adapters.registry import connect

        try:
            kg = connect(args.kg)
        except TypeError as exc:  # an option the backend does not know
            raise UsageError(str(exc)) from exc
        with kg:
            hint = getattr(kg, "index_hint", None)  # an on-disk store without its traversal index
            if callable(hint) and (text := hint()):
                print(text, file=sys.stderr)
            if kg.profile.detection is not None:
                print(f"kga: detected profile: {kg.profile.name} ({kg.profile.detection})", file=sys.stderr)
            return run(kg, args)

    return run_on_graph


def count(minimum: int = 0) -> Callable[[str], int]:
    """An argparse ``type=`` for a count option (``--limit``, ``--hops``...), validated like every
    budget (:func:`kg_adapters.budgets.check_count`): ``--limit -1`` is refused, not sliced."""

    def parse(text: str) -> int:
        from kg_adapters.budgets import check_count

        try:
            value = int(text)
            check_count(value, "the value", minimum=minimum)
        except (ValueError, KGError):
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {text!r}") from None
        return value

    parse.__name__ = "count"
    return parse


def read_text_file(path: str, what: str) -> str:
    """The UTF-8 text of a file named on the command line; a missing, unreadable or non-UTF-8 file
    is a :class:`UsageError` naming it."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise UsageError(f"cannot read the {what} {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise UsageError(f"the {what} {path} is not valid UTF-8 (byte {exc.start})") from exc


def contributed_commands() -> Iterator[Command]:
    """The commands other packages register under the ``kg_adapters.commands`` entry-point group,
    in entry-point name order; an entry point that is not a Command (or a sequence of them) is a
    packaging error, reported as a KGError naming it."""
    from importlib.metadata import entry_points

    for entry in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            loaded = entry.load()
        except (ImportError, AttributeError) as exc:
            raise KGError(f"the {entry.name!r} commands ({entry.value}) cannot be loaded: {exc}") from exc
        yield from _as_commands(loaded, entry.value)


def _as_commands(loaded: Any, where: str) -> Iterable[Command]:
    items = [loaded] if isinstance(loaded, Command) else loaded
    if not isinstance(items, (list, tuple)) or not all(isinstance(item, Command) for item in items):
        raise KGError(f"{where} is not a kga Command or a list of them")
    return items


def emit(obj: Any) -> None:
    """Prints one JSON object on its own line (``--json`` output)."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")


def csv_list(text: str | None) -> list[str] | None:
    """A comma-separated option as a list (blank items dropped); None when not given."""
    return [part.strip() for part in text.split(",") if part.strip()] if text else None
