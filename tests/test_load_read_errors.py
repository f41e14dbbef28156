"""Where a load says reading its input failed: the first line that could not be read, counted by the
reader that was given the lines (no pass over the text counts them for this alone)."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import pytest

from kg_adapters.errors import LoadError
from loaders import load_files

EX = "http://example.org/"
_READ = 1 << 20  # what the reader asks the decompressor for at a time


def _lines_before_failure(path: Path) -> int:
    """The line breaks of the text a reader reading ``path`` 1 MiB at a time gets before it fails."""
    breaks = 0
    with gzip.open(path) as handle:
        try:
            while text := handle.read(_READ):
                breaks += text.count(b"\n")
        except (EOFError, zlib.error, OSError):
            return breaks
    raise AssertionError("the file reads to its end")


def _cut_gzip(path: Path, lines: list[str]) -> Path:
    whole = gzip.compress(("\n".join(lines) + "\n").encode(), compresslevel=1)
    path.write_bytes(whole[: len(whole) * 3 // 5])
    return path


@pytest.mark.parametrize(
    ("name", "line"),
    [
        ("cut.nt.gz", "<{EX}e{i}> <{EX}next> <{EX}e{j}> ."),
        ("cut.tsv.gz", "e{i}\tnext\te{j}"),
    ],
)
@pytest.mark.parametrize("lenient", [False, True])
def test_a_truncated_input_names_the_first_line_it_could_not_read(
    tmp_path: Path, name: str, line: str, lenient: bool
) -> None:
    lines = [line.format(EX=EX, i=i, j=i + 1) for i in range(150_000)]
    source = _cut_gzip(tmp_path / name, lines)
    expected = _lines_before_failure(source) + 1
    assert expected > 1000  # several blocks were read before the cut
    store = tmp_path / "store"
    with pytest.raises(LoadError, match="truncated") as info:
        load_files([str(source)], str(store), lenient=lenient, progress=False, index=False)
    assert (info.value.file, info.value.line) == (str(source), expected)
    assert not store.exists()
