"""Every ``kga`` failure is one ``kga: error:`` line on stderr and a non-zero status: missing and
undecodable files, bad budgets, usage errors, credentials in URLs, and Ctrl-C during ``kga reason``
(a real ``kga`` process, interrupted while a real loopback endpoint holds one of its requests)."""

from __future__ import annotations

import gzip
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kg_adapters import store_layout
from kg_adapters.cli import main
from kg_adapters.testing.fault_server import FaultPlan, FaultServer
from kg_adapters.testing.lifecycle import killed_on_exit
from reasoning.demo import sample_path

HANKS, CONCORD, USA = "m.0bxtg", "m.0qymv", "m.09c7w0"
POB, COUNTRY = "people.person.place_of_birth", "base.biblioness.bibs_location.country"


def _questions(path: Path, count: int = 2) -> Path:
    lines = []
    for n in range(count):
        lines.append(
            {
                "id": f"q{n}",
                "question": "Which country is the place of birth of Tom Hanks in?",
                "q_entity": [HANKS],
                "a_entity": [USA],
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kga: error: "), err
    assert "Traceback" not in err
    return lines[0]


def test_missing_and_undecodable_inputs(
    sample_store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    reason = ["reason", "--method", "refkg", "--kg", sample_store_url, "--out", str(out)]
    assert main([*reason, "--input", str(tmp_path / "missing.jsonl")]) == 1
    assert "missing.jsonl" in _one_error_line(capsys)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"id": "q0", "question": "caf\xe9"}\n')
    assert main([*reason, "--input", str(bad)]) == 1
    assert "utf-8" in _one_error_line(capsys).lower()
    assert main(["eval", str(tmp_path / "missing.jsonl")]) == 1
    _one_error_line(capsys)
    assert main(["eval", str(bad)]) == 1
    _one_error_line(capsys)
    assert main(["query", "--kg", sample_store_url, "--file", str(tmp_path / "missing.rq")]) == 2
    assert "missing.rq" in _one_error_line(capsys)
    bad_query = tmp_path / "bad.rq"
    bad_query.write_bytes(b"SELECT * WHERE { ?s ?p \xff }")
    assert main(["query", "--kg", sample_store_url, "--file", str(bad_query)]) == 2
    assert "UTF-8" in _one_error_line(capsys)
    store = tmp_path / "extracted"
    extract = ["extract", "--kg", sample_store_url, "--hops", "1", "--store", str(store)]
    assert main([*extract, "--seeds", str(tmp_path / "seeds.txt")]) == 2
    assert "seeds.txt" in _one_error_line(capsys)
    assert not out.exists() and not store.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["reason", "--method", "refkg", "--limit", "-1"],
        ["reason", "--method", "refkg", "--workers", "0"],
        ["subgraph", "--seed", HANKS, "--hops", "-2"],
        ["search", "tom", "--limit", "99999999999999999999999999999"],
        ["neighbors", "--id", HANKS, "--limit", "many"],
        ["neighbors"],
    ],
)
def test_bad_budgets_and_usage_are_one_line(
    argv: list[str], sample_store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = _questions(tmp_path / "questions.jsonl", 5)
    extra = ["--input", str(questions), "--out", str(tmp_path / "out.jsonl")] if argv[0] == "reason" else []
    assert main([*argv, "--kg", sample_store_url, *extra]) == 2
    _one_error_line(capsys)
    assert not (tmp_path / "out.jsonl").exists(), "no question was answered"


def test_credentials_never_reach_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    url = "sparql+http://alice:hunter2@127.0.0.1:9/sparql?retries=0"
    assert main(["labels", "--kg", url, "--id", HANKS]) == 1
    line = _one_error_line(capsys)
    assert "hunter2" not in line


def test_ctrl_c_during_kga_reason_says_what_was_saved_and_how_to_resume(tmp_path: Path) -> None:
    data = gzip.decompress(sample_path().read_bytes())
    questions, out = _questions(tmp_path / "questions.jsonl", 3), tmp_path / "out.jsonl"
    kga = [sys.executable, "-m", "kg_adapters.cli"]

    def reason(url: str) -> list[str]:
        kg = f"sparql+{url}?profile=freebase&dialect=virtuoso&retries=0"  # a dropped request fails its question
        argv = ["reason", "--method", "refkg", "--kg", kg]
        return [*kga, *argv, "--input", str(questions), "--out", str(out), "--no-progress"]

    first = tmp_path / "first.jsonl"
    first.write_text(questions.read_text().splitlines()[0] + "\n")
    with FaultServer(data=data) as counting:  # how many requests one question takes
        argv = reason(counting.url)
        argv[argv.index(str(questions))] = str(first)
        subprocess.run(argv, check=True, capture_output=True, timeout=300)
        per_question = counting.request_count
    out.unlink()
    plan = FaultPlan(["ok"] * per_question + ["stall"])
    with FaultServer(data=data, plan=plan) as server:
        popen = subprocess.Popen(reason(server.url), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        with killed_on_exit(popen) as process:
            # the first answer is saved before the second question starts (its worker writes it)
            assert server.wait_for(stalled=1, timeout=300), "the second question reached the endpoint"
            process.send_signal(signal.SIGINT)
            server.stop()  # drops the stalled request: the running question fails, and is not saved
            _stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 130, stderr
    assert stderr.splitlines() == [
        f"kga: error: interrupted; 1 answered question(s) are saved in {out}; run the same command again to "
        "resume (answered questions are skipped)"
    ], stderr
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["q0"]
    with FaultServer(data=data) as server:
        resumed = subprocess.run(reason(server.url), check=True, capture_output=True, text=True, timeout=300)
    summary = json.loads(resumed.stdout)
    assert (summary["skipped"], summary["answered"]) == (1, 2)


def test_ctrl_c_during_kga_load_leaves_the_store_unchanged(tmp_path: Path) -> None:
    import os

    store = tmp_path / "store"
    first = tmp_path / "first.nt"
    first.write_text("<http://example.org/a> <http://example.org/r> <http://example.org/b> .\n")
    subprocess.run([sys.executable, "-m", "kg_adapters.cli", "load", str(first), "--store", str(store)], check=True)
    manifest = (store / store_layout.MANIFEST).read_bytes()
    fifo = tmp_path / "dump.nt"
    os.mkfifo(fifo)
    argv = [sys.executable, "-m", "kg_adapters.cli", "load", str(fifo), "--format", "nt", "--store", str(store)]
    with killed_on_exit(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)) as process:
        with open(fifo, "w") as feed:  # returns once kga has opened the dump: it is mid-load
            feed.write("<http://example.org/c> <http://example.org/r> <http://example.org/d> .\n" * 1000)
            feed.flush()
            process.send_signal(signal.SIGINT)
        # the end of the dump lets a parser blocked in native code return, and Python raise KeyboardInterrupt
        _stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert stderr.splitlines() == [
        f"kga: error: interrupted; the store at {store} is unchanged (the partial load was discarded)"
    ], stderr
    assert (store / store_layout.MANIFEST).read_bytes() == manifest
    assert not [path for path in tmp_path.iterdir() if ".kga-tmp-" in path.name]
