"""What opening a store costs: ``import kg_adapters``, ``connect()`` to an indexed store and a walk
load only what the answer needs, and Oxigraph's database opens on first use.

A fresh interpreter's ``sys.modules`` is the contract (each module below costs a serving process
milliseconds or megabytes it does not need for the answer); timing is measured in
``benchmarks/bfs_vs_networkx.py``, never here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from kg_adapters import connect
from kg_adapters.base import SparqlQueryable
from kg_adapters.errors import StoreNotFound
from kg_adapters.store_layout import open_version
from loaders import load_files

FB = "http://rdf.freebase.com/ns/"
NAME = FB + "type.object.name"

NOT_ON_THE_READ_PATH = {
    "numpy": "walks over large frontiers and index builds only",
    "sqlite3": "the name and relation indexes (search) only",
    "importlib.metadata": "entry points are scanned only for a scheme no bundled backend serves",
    "hashlib": "~3 MiB of OpenSSL, for cache keys only",
    "logging": "profile=auto and the remote wrappers only",
    "ssl": "remote backends only",
    "socket": "remote backends only",
    "http.client": "remote backends only",
    "urllib.request": "remote backends only",
    "rdflib": "the rdflib backend only",
    "shutil": "writes and garbage collection only",
    "uuid": "writes only",
    "gzip": "reading compressed dumps only",
    "kg_adapters.sparql_lexer": "~0.1-0.3 s of Unicode patterns compiled on import, for SPARQL text only",
    "loaders": "a package above the core",
    "reasoning": "a package above the core",
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small Freebase-shaped store with its traversal index: entities, parallel edges, names."""
    base = tmp_path_factory.mktemp("diet")
    lines = []
    for n in range(40):
        head, tail = f"<{FB}m.{n:04d}>", f"<{FB}m.{(n * 7 + 3) % 40:04d}>"
        lines.append(f"{head} <{FB}film.film.director> {tail} .")
        lines.append(f"{head} <{FB}film.film.starring> <{FB}m.{(n + 1) % 40:04d}> .")
        lines.append(f'{head} <{NAME}> "node {n}"@en .')
    source = base / "graph.nt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = base / "store"
    load_files([str(source)], str(path), profile="freebase", progress=False)
    return path


def _fresh(code: str) -> list[str]:
    """Runs ``code`` in a fresh interpreter; returns the lines it printed."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _data_dir(store: Path) -> Path:
    """The Oxigraph database directory of the store's current version."""
    version = open_version(store)
    version.close()
    return version.data


def _unneeded_imports(loaded: list[str]) -> dict[str, str]:
    return {name: why for name, why in NOT_ON_THE_READ_PATH.items() if name in loaded}


def test_importing_the_package_loads_nothing_the_read_path_does_not_need() -> None:
    loaded = _fresh("import sys, kg_adapters, kg_adapters.backends.oxigraph\nprint(*sorted(sys.modules), sep='\\n')")
    assert "kg_adapters.backends.oxigraph" in loaded
    assert _unneeded_imports(loaded) == {}


def test_a_walk_on_an_indexed_store_loads_nothing_more_and_leaves_oxigraph_closed(store: Path) -> None:
    """``paths()`` answers from the traversal index: no module above, and no file of the Oxigraph
    database open, until something asks Oxigraph (a SPARQL query here)."""
    data = _data_dir(store)
    lines = _fresh(
        f"""
        import os, sys
        from kg_adapters import connect

        def open_files():
            found = []
            for fd in os.listdir("/proc/self/fd"):
                try:
                    found.append(os.readlink(f"/proc/self/fd/{{fd}}"))
                except OSError:  # the directory listing's own descriptor, closed by now
                    pass
            return found

        with connect("oxigraph://{store}?profile=freebase") as kg:
            answer = kg.paths("m.0001", ["film.film.director", "film.film.starring"])
            print(len(answer), sum(f.startswith("{data}/") for f in open_files()))
            print(*sorted(sys.modules), sep="\\n")
            print(kg.query("SELECT (COUNT(*) AS ?n) WHERE {{ ?s ?p ?o }}")[0]["n"])
            print(sum(f.startswith("{data}/") for f in open_files()) > 0)
        """
    )
    paths, oxigraph_files = (int(n) for n in lines[0].split())
    assert paths == 1 and oxigraph_files == 0
    assert _unneeded_imports(lines[1:-2]) == {}
    assert lines[-2] == "120" and lines[-1] == "True"  # opened on first use, every triple there


def test_concurrent_first_uses_open_oxigraph_once_and_answer_alike(store: Path) -> None:
    query = f"SELECT ?o WHERE {{ <{FB}m.0005> <{NAME}> ?o }}"
    with connect(f"oxigraph://{store}?profile=freebase") as kg:
        assert isinstance(kg, SparqlQueryable)
        barrier, answers = threading.Barrier(8), []

        def first_use() -> None:
            barrier.wait()
            answers.append(kg.query(query))

        threads = [threading.Thread(target=first_use) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(answers) == 8 and all(answer == answers[0] for answer in answers)
        assert str(answers[0][0]["o"]) == "node 5"


def test_a_broken_oxigraph_database_raises_store_not_found_when_first_needed(store: Path, tmp_path: Path) -> None:
    """Without an index the error comes from ``connect()``; with one, ``connect()`` and the index's
    answers work, and the first operation that needs Oxigraph raises the same error."""
    broken = tmp_path / "broken"
    shutil.copytree(store, broken)
    os.remove(_data_dir(broken) / "CURRENT")
    with pytest.raises(StoreNotFound, match=f"cannot open the Oxigraph store at {broken}"):
        connect(f"oxigraph://{broken}?profile=freebase&index=false")
    with connect(f"oxigraph://{broken}?profile=freebase") as kg:
        assert isinstance(kg, SparqlQueryable)
        assert len(kg.paths("m.0001", ["film.film.director"])) == 1
        with pytest.raises(StoreNotFound, match=f"cannot open the Oxigraph store at {broken}"):
            kg.query("ASK { ?s ?p ?o }")
