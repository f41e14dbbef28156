"""The README's Python example runs as written, against the demo store."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from reasoning.demo import ensure_store

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs(tmp_path: Path) -> None:
    store = tmp_path / "demo-store"
    ensure_store(store, io.StringIO())
    block = re.search(r"```python\n(.*?)```", README.read_text("utf-8"), re.S)
    assert block is not None
    code = block.group(1).replace("/abs/path/.kga/demo-store", str(store))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {})
    lines = out.getvalue().splitlines()
    # Concord is the birthplace of two people in the sample; walks may return to the start (RoG semantics)
    assert lines == ["Tom Hanks -> Concord -> Dave Brubeck False", "Tom Hanks -> Concord -> Tom Hanks False"]
