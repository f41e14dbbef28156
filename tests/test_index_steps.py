"""kill -9 inside each step of a load's index phase (after its parse), then the same load again: it goes
on after the last step recorded, doing none of the finished ones again, and the store equals an
uninterrupted load's (triples, traversal files, name and relation rows, manifest counts); the
progress names the index phase's steps and gives an ETA during them.

Real processes and a real store: ``loaders.testing.kill.load_killed_at`` runs the load in a child that
SIGKILLs itself at the point ``index:STEP:written`` (the step's files written, not yet recorded) or
``index:STEP`` (recorded). Which steps the resumed load does is what it reports (``index:STEP:started``),
which steps were finished is the step record the killed load left (``spool/steps.json``)."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path
from typing import Any

import pytest
from test_index_spill import TINY, spill_lines
from test_load_resume import build_dir, store_answers, write_dump

from kg_adapters import store_layout
from kg_adapters.errors import StoreNotFound
from kg_adapters.index.steps import STEPS_FILE
from loaders import load_files
from loaders.indexing import WORKER_MIN_BYTES
from loaders.testing.kill import load_killed_at

SPILLED_STEPS = ["names", "iris", "ids", "edges", "out-extra", "in-extra", "literals", "starts"]
"""The steps of a spilled collection's index phase (external sorts), then some of its files."""
FILE_STEPS = ["file:entities", "file:out_other", "file:in_start", "file:relations", "traversal"]


@pytest.fixture(scope="module")
def dumps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A small input (numbered on a thread) and a large one (in the worker process), with the answers of
    their uninterrupted loads."""
    directory = tmp_path_factory.mktemp("steps")
    small = write_dump(directory / "small.nt", spill_lines(9_000))
    large = write_dump(directory / "large.nt", spill_lines(40_000, seed=1))
    assert small.stat().st_size < WORKER_MIN_BYTES < large.stat().st_size
    found: dict[str, Any] = {}
    for name, path in (("small", small), ("large", large)):
        reference = directory / f"reference-{name}"
        load_files([str(path)], str(reference), profile="freebase", progress=False)
        found[name] = {"path": str(path), "answers": store_answers(reference)}
    return found


def killed_at(point: str, dump: str, store: Path, memory: str) -> list[str]:
    """Kills the load of ``dump`` at ``point`` and returns the steps its record holds as finished."""
    killed = load_killed_at(
        point, chunk_bytes=60_000, checkpoint_seconds=0, paths=[dump], store=store, profile="freebase", memory=memory
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not store.exists()  # readers see no store until the swap
    with pytest.raises(StoreNotFound):
        store_layout.read_manifest(store)
    assert json.loads((build_dir(store) / "progress.json").read_text())["phase"] == "index"
    record = build_dir(store) / "spool" / STEPS_FILE
    return list(json.loads(record.read_text())["done"]) if record.exists() else []  # none finished yet


def resumed(dump: str, store: Path, memory: str) -> set[str]:
    """Resumes the load and returns the steps it did (it reports each as it starts it)."""
    points: list[str] = []
    report = load_files([dump], str(store), profile="freebase", progress=False, memory=memory, checkpoint=points.append)
    assert report.resumed
    assert not build_dir(store).exists()
    return {point.removeprefix("index:").removesuffix(":started") for point in points if point.endswith(":started")}


def traversal_times(directory: Path) -> dict[str, int]:
    return {item.name: item.stat().st_mtime_ns for item in directory.iterdir()} if directory.is_dir() else {}


@pytest.mark.parametrize(
    ("memory", "step"),
    [(TINY, step) for step in SPILLED_STEPS + FILE_STEPS] + [("4G", step) for step in ["names", *FILE_STEPS]],
)
def test_a_load_killed_inside_a_step_of_its_index_phase_redoes_that_step_alone(
    dumps: dict[str, Any], tmp_path: Path, memory: str, step: str
) -> None:
    """Killed once a step's files are written but before it is recorded: the resumed load does that step
    and the unfinished ones again, none of those recorded, and the traversal files written before the
    kill are the store's (their modification times unchanged)."""
    store, dump = tmp_path / "store", dumps["small"]["path"]
    finished = killed_at(f"index:{step}:written", dump, store, memory)
    assert step not in finished
    assert finished or step in ("names", "iris", "file:entities")  # the first to finish: nothing before
    version = build_dir(store) / "version"
    kept = traversal_times(version / ".traversal-tmp-resumable") or traversal_times(version / "traversal")
    done = resumed(dump, store, memory)
    assert step in done
    assert not done & set(finished)
    assert store_answers(store) == dumps["small"]["answers"]
    final = traversal_times(store_layout.version_dir(store, store_layout.read_manifest(store)) / "traversal")
    written_before = {"file:entities": ["entities.bin", "entity_offsets.npy"], "file:out_other": ["out_other.npy"]}
    for name in (file for recorded in finished for file in written_before.get(recorded, [])):
        assert final[name] == kept[name], name


@pytest.mark.parametrize("step", ["names", "edges", "literals", "file:relations", "file:meta", "traversal"])
def test_a_load_killed_after_a_step_is_recorded_does_not_do_it_again(
    dumps: dict[str, Any], tmp_path: Path, step: str
) -> None:
    store, dump = tmp_path / "store", dumps["small"]["path"]
    finished = killed_at(f"index:{step}", dump, store, TINY)
    assert step in finished
    done = resumed(dump, store, TINY)
    assert step not in done and not done & set(finished)
    assert store_answers(store) == dumps["small"]["answers"]


@pytest.mark.parametrize(("point", "memory"), [("index:edges", TINY), ("index:file:in_rel", "4G")])
def test_a_load_numbered_in_the_worker_process_resumes_inside_its_index_phase(
    dumps: dict[str, Any], tmp_path: Path, point: str, memory: str
) -> None:
    """The worker process records its steps and reports them to the load (which is killed when the
    report reaches it: the worker may have finished more steps by then, which the record holds)."""
    store, dump = tmp_path / "store", dumps["large"]["path"]
    finished = killed_at(point, dump, store, memory)
    assert point.removeprefix("index:") in finished
    done = resumed(dump, store, memory)
    assert not done & set(finished)
    assert store_answers(store) == dumps["large"]["answers"]


def test_progress_names_the_index_steps_and_gives_their_eta(
    dumps: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    load_files([dumps["small"]["path"]], str(tmp_path / "store"), profile="freebase", progress=True, memory=TINY)
    shown = capsys.readouterr().err.replace("\r", "\n")
    for step in ("labels: name and relation indexes", "index: sorting the edges", "index: writing out_rel"):
        assert step in shown
    # the bar counts the index phase's steps, with the time left (a known ETA, not "?") while they run
    eta = re.compile(r"^index: [^|]+\|[^|]*\| (\d+)/(\d+) \[\d\d:\d\d<\d\d:\d\d, ", re.MULTILINE)
    counts = [(int(done), int(total)) for done, total in eta.findall(shown)]
    assert any(0 < done < total for done, total in counts), shown[-2000:]
    assert counts[-1][0] == counts[-1][1], shown[-2000:]  # every step planned is one the load did


def test_a_load_resumed_in_its_index_phase_counts_its_steps(
    dumps: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A load killed after its parse shows the index phase's steps when it is resumed (its inputs were
    all read before the kill)."""
    store, dump = tmp_path / "store", dumps["small"]["path"]
    killed_at("index:names", dump, store, TINY)
    load_files([dump], str(store), profile="freebase", progress=True, memory=TINY)
    shown = capsys.readouterr().err.replace("\r", "\n")
    assert "index: sorting the edges" in shown, shown[-2000:]
    assert re.search(r"^index: [^|]+\|[^|]*\| \d+/\d+ \[", shown, re.MULTILINE), shown[-2000:]
