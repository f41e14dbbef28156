"""``kga demo``: load the bundled FB15k-237 slice into a local store and run RoG-style retrieval."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from kg_adapters import connect
from kg_adapters.base import Direction
from kg_adapters.display import format_path, path_entities
from kg_adapters.errors import StoreNotFound
from kg_adapters.records import Node, PathResult, node_to_json, path_to_json
from reasoning.rog import Plan, retrieve, vote

SAMPLE_NAME = "fb15k237-sample.nt.gz"


@dataclass(frozen=True, kw_only=True)
class DemoQuestion:
    question: str
    topic: str
    relation_path: tuple[str, ...]
    directions: tuple[Direction, ...] | None = None


DEMO_QUESTIONS: tuple[DemoQuestion, ...] = (
    DemoQuestion(
        question="Where was Tom Hanks born?", topic="m.0bxtg", relation_path=("people.person.place_of_birth",)
    ),
    DemoQuestion(
        question="In which country is Tom Hanks's birthplace?",
        topic="m.0bxtg",
        relation_path=("people.person.place_of_birth", "base.biblioness.bibs_location.country"),
    ),
    DemoQuestion(
        question="Who was born in the same place as Tom Hanks?",
        topic="m.0bxtg",
        relation_path=("people.person.place_of_birth", "people.person.place_of_birth"),
        directions=("out", "in"),
    ),
    DemoQuestion(
        question="Who influenced Albert Einstein?",
        topic="m.0jcx",
        relation_path=("influence.influence_node.influenced_by",),
    ),
    DemoQuestion(
        question="What genres are the films Steven Spielberg directed?",
        topic="m.06pj8",
        relation_path=("film.director.film", "film.film.genre"),
    ),
)


def sample_path() -> Path:
    """The bundled sample shipped inside the package."""
    return Path(str(resources.files("kg_adapters") / "data" / SAMPLE_NAME))


def ensure_store(store: Path, out: TextIO) -> None:
    """Loads the sample into ``store`` unless a complete store is already there."""
    try:
        connect(f"oxigraph://{store.absolute()}").close()
        return
    except StoreNotFound:
        pass
    from loaders import load_files

    report = load_files([str(sample_path())], str(store), profile="freebase")
    print(
        f"loaded {report.store_triples} triples from the bundled FB15k-237 sample into {store} "
        f"({report.seconds:.2f} s)",
        file=out,
    )


def run_demo(
    store: Path,
    *,
    out: TextIO = sys.stdout,
    as_json: bool = False,
    notes: TextIO | None = None,
    paths_per_answer: int = 2,
    answers: int = 5,
) -> None:
    """Answers the demo questions by retrieval (RoG's Algorithm 1) and vote, printing the paths
    (``as_json``: one JSON object per question), then the next step: pointing ``kga`` at the store.
    The topic entity itself is not offered as an answer (a walk may return to it). ``notes`` (default
    ``out``; stderr for JSON) gets the lines that are not answers."""
    notes = notes if notes is not None else (sys.stderr if as_json else out)
    ensure_store(store, notes)
    with connect(f"oxigraph://{store.absolute()}?profile=freebase") as kg:
        for item in DEMO_QUESTIONS:
            plan = Plan(relations=item.relation_path, directions=item.directions)
            found = retrieve(kg, [item.topic], [plan])
            names = kg.labels(path_entities(found))
            ranked = [(node, support) for node, support in vote(found) if node != item.topic][:answers]
            if as_json:
                print(
                    json.dumps(_answer_record(item, found, ranked, names, paths_per_answer), ensure_ascii=False),
                    file=out,
                )
                continue
            print(f"\nQ: {item.question}", file=out)
            print(f"   plan: {' -> '.join(item.relation_path)}  ({len(found)} paths)", file=out)
            for node, support in ranked:
                name = names.get(node, str(node)) if isinstance(node, str) else str(node)
                print(f"   A: {name}  [{node}]  supported by {support} path(s)", file=out)
                for path in [p for p in found if p.end == node][:paths_per_answer]:
                    print(f"      {format_path(path, names)}", file=out)
            if found.truncated:
                print("   (retrieval was truncated by max_paths)", file=out)
    print(next_step(store), file=notes)


def _answer_record(
    item: DemoQuestion, found: PathResult, ranked: list[tuple[Node, int]], names: dict[str, str], paths_per_answer: int
) -> dict[str, Any]:
    """One question's answer as ``kga demo --json`` prints it."""
    return {
        "question": item.question,
        "topic": item.topic,
        "plan": {
            "relations": list(item.relation_path),
            "directions": list(item.directions or ["out"] * len(item.relation_path)),
        },
        "paths": len(found),
        "truncated": found.truncated,
        "answers": [
            {
                "id": node_to_json(node),
                "name": names.get(node) if isinstance(node, str) else None,
                "support": support,
                "paths": [path_to_json(path) for path in [p for p in found if p.end == node][:paths_per_answer]],
            }
            for node, support in ranked
        ],
    }


def next_step(store: Path) -> str:
    """What to type next, in the user's shell: ``kga`` put on PATH where it is not (``make demo`` runs
    the venv's ``kga`` by its path), the store as ``$KGA_KG`` for every other command, and the serve
    extra's install command where it is missing."""
    url = f"oxigraph://{store.absolute()}?profile=freebase"
    lines = ["", "next: point the other commands at this store, then try them:"]
    lines += [f"  {line}" for line in _put_kga_on_path()]
    lines += [
        f"  export KGA_KG={shlex.quote(url)}",
        "  kga search 'Tom Hanks'",
        "  kga neighbors --id m.0bxtg --limit 5",
    ]
    if not _has_serve_extra():
        from kg_adapters.extras import install_command

        lines.append(f"  {install_command('serve')}        # kga serve needs the serve extra")
    lines.append("  kga serve        # SPARQL endpoint with a query page at http://127.0.0.1:8890/")
    return "\n".join(lines)


def _put_kga_on_path() -> list[str]:
    """The line that puts this installation's ``kga`` on PATH, none when the shell finds it already."""
    scripts = Path(sys.executable).parent
    found = shutil.which("kga")
    if found is not None and Path(found).resolve() == (scripts / "kga").resolve():
        return []
    if (scripts / "activate").is_file():
        return [f". {shlex.quote(str(scripts / 'activate'))}        # puts kga on PATH"]
    return [f'export PATH={shlex.quote(str(scripts))}:"$PATH"']


def _has_serve_extra() -> bool:
    from kg_adapters.errors import BackendError
    from kg_adapters.serve.sparql_endpoint import require_serve_extra

    try:
        require_serve_extra()
    except BackendError:
        return False
    return True
