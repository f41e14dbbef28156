"""Oxigraph's bulk load fed through a FIFO (loaders.piped), on real stores, whatever the machine's cores."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox
import pytest

from loaders import load_files
from loaders.piped import PIPE_BYTES, FifoUnavailable, bulk_load_piped

EX = "http://example.org/"


def lines(count: int, start: int = 0) -> list[bytes]:
    return [f"<{EX}s{n}> <{EX}p> <{EX}o{n}> .".encode() for n in range(start, start + count)]


def test_a_tiny_input_is_loaded_whole() -> None:
    store = ox.Store()
    bulk_load_piped(store, iter([lines(1)[0]]), ox.RdfFormat.N_TRIPLES)
    assert len(store) == 1


def test_many_texts_larger_than_the_pipe_are_loaded_in_order(tmp_path: Path) -> None:
    store = ox.Store(str(tmp_path / "db"))
    texts = [b"\n".join(lines(5000, start=n * 5000)) + b"\n" for n in range(40)]
    assert sum(map(len, texts)) > 4 * PIPE_BYTES
    bulk_load_piped(store, iter(texts), ox.RdfFormat.N_TRIPLES)
    assert len(store) == 200_000
    assert ox.Quad(ox.NamedNode(f"{EX}s199999"), ox.NamedNode(f"{EX}p"), ox.NamedNode(f"{EX}o199999")) in store


def test_a_refused_line_raises_the_parsers_error_at_its_line() -> None:
    store = ox.Store()
    texts = [b"\n".join(lines(3)) + b"\n", b"not a triple\n", b"\n".join(lines(100_000, start=3)) + b"\n"]
    with pytest.raises(SyntaxError) as info:
        bulk_load_piped(store, iter(texts), ox.RdfFormat.N_TRIPLES)
    assert info.value.lineno == 4
    assert info.value.filename is None  # the FIFO's path is nobody's business


def test_a_failing_producer_raises_its_own_error() -> None:
    def failing() -> Iterator[bytes]:
        yield b"\n".join(lines(10)) + b"\n"
        raise OSError("the disk went away")

    with pytest.raises(OSError, match="the disk went away"):
        bulk_load_piped(ox.Store(), failing(), ox.RdfFormat.N_TRIPLES)


def test_nothing_given_loads_nothing() -> None:
    store = ox.Store()
    bulk_load_piped(store, iter([]), ox.RdfFormat.N_TRIPLES)
    assert len(store) == 0


def test_no_fifo_here_is_said_before_any_text_is_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))  # no temporary directory can be made
    taken: list[bytes] = []

    def texts() -> Iterator[bytes]:
        for text in lines(3):
            taken.append(text)
            yield text + b"\n"

    with pytest.raises(FifoUnavailable):
        bulk_load_piped(ox.Store(), texts(), ox.RdfFormat.N_TRIPLES)
    assert taken == []


def test_a_load_where_no_fifo_can_be_made_goes_as_a_stream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "data.nt"
    source.write_bytes(b"\n".join(lines(1000)) + b"\n")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    report = load_files([str(source)], str(tmp_path / "store"), progress=False)
    assert (report.statements_read, report.store_triples) == (1000, 1000)
