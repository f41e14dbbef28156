"""One resumable k-hop walk (``algorithms.k_hop_walk``) behind both ``subgraph`` and ``kga extract``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kg_adapters import connect
from kg_adapters.algorithms import MemoryLedger, k_hop_walk
from kg_adapters.base import KnowledgeGraph
from kg_adapters.records import Edge
from kg_adapters.testing.graph import A, S, write_graph
from kg_adapters.wrappers import CountingKG


@pytest.fixture(scope="module")
def kg(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeGraph:
    return connect(f"rdflib://{write_graph(tmp_path_factory.mktemp('walk')).resolve()}")


@pytest.mark.parametrize("max_edges", [None, 0, 1, 5, 9, 14])
@pytest.mark.parametrize("batch_size", [None, 1, 2, 3])
def test_any_batch_size_walks_the_edges_subgraph_answers(
    kg: KnowledgeGraph, batch_size: int | None, max_edges: int | None
) -> None:
    expected = kg.subgraph([A, S], hops=3, max_edges=max_edges)
    ledger = MemoryLedger([A, S])
    batches = list(k_hop_walk(kg, ledger, hops=3, max_edges=max_edges, batch_size=batch_size))
    assert [edge for batch in batches for edge in batch.edges] == list(expected)
    assert any(batch.truncated for batch in batches) == expected.truncated
    assert all(len(batch.nodes) <= (batch_size or len(batch.nodes)) for batch in batches)


@pytest.mark.parametrize("max_edges", [None, 20])
def test_a_walk_stopped_anywhere_resumes_from_its_ledger_identically(kg: KnowledgeGraph, max_edges: int | None) -> None:
    expected = list(kg.subgraph([A, S], hops=3, max_edges=max_edges))
    total = len(list(k_hop_walk(kg, MemoryLedger([A, S]), hops=3, max_edges=max_edges, batch_size=1)))
    assert total >= 2
    for stop_after in range(1, total):
        check_resumed(kg, expected, stop_after, max_edges)


def check_resumed(kg: KnowledgeGraph, expected: list[Edge], stop_after: int, max_edges: int | None) -> None:
    ledger = MemoryLedger([A, S])
    first = k_hop_walk(kg, ledger, hops=3, max_edges=max_edges, batch_size=1)
    done = [next(first) for _ in range(stop_after)]
    first.close()  # the walk is abandoned; the ledger holds what was recorded
    counted = CountingKG(kg)
    resumed = list(k_hop_walk(counted, ledger, hops=3, max_edges=max_edges, batch_size=2, start_hop=done[-1].hop))
    assert [edge for batch in [*done, *resumed] for edge in batch.edges] == expected
    assert list(ledger.edges) == expected
    expanded = [node for ids in counted.asked("neighbors") for node in ids]
    assert not set(expanded) & {node for batch in done for node in batch.nodes}  # nothing asked twice


def test_the_extraction_holds_no_kill_switch(tmp_path: Path) -> None:
    """``$KGA_EXTRACT_KILL_AT`` used to make ``kga extract`` SIGKILL itself: shipped code must ignore it."""
    graph = write_graph(tmp_path)
    command = [sys.executable, "-m", "kg_adapters.cli", "extract", "--kg", f"rdflib://{graph.resolve()}"]
    command += ["--seeds", A, "--hops", "1", "--batch-size", "1", "--store", str(tmp_path / "out")]
    env = {**os.environ, "KGA_EXTRACT_KILL_AT": "commit:1"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode != -signal.SIGKILL
    assert done.returncode == 0, done.stderr
