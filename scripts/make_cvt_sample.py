"""Regenerates kg_adapters/data/fb15k237-sample-cvt.nt.gz: the demo sample in full Freebase's shape.

FB15k-237 collapses each CVT (mediator) node into one relation ``a.b.c..d.e.f`` from the node before
it to the node after it. Full Freebase keeps the CVT: ``h a.b.c cvt`` and ``cvt d.e.f t``. This file
is the bundled demo sample with every collapsed triple written back that way, through an unnamed
``m.`` node of its own (``m.0cvt`` + 8 hex digits of a hash of the triple: synthetic ids, since
FB15k-237 no longer knows the real ones, nor which collapsed triples shared one CVT); every other
triple is kept as it is. ``neighbors(..., expand_cvt=True)``, ``relations(..., expand_cvt=True)`` and
``paths(..., expand_cvt=True)`` have real CVT nodes to work on here, and a collapsed relation path
answers the same on both samples. Run from the repo root:
    .venv/bin/python scripts/make_cvt_sample.py
"""

from __future__ import annotations

import gzip
import hashlib
import re
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "kg_adapters" / "data"
SOURCE = DATA / "fb15k237-sample.nt.gz"
OUT = DATA / "fb15k237-sample-cvt.nt.gz"
NS = "http://rdf.freebase.com/ns/"
COLLAPSED = re.compile(rf"^<({re.escape(NS)}[^>]+)> <{re.escape(NS)}([^>]+)\.\.([^>]+)> <({re.escape(NS)}[^>]+)> \.$")


def main() -> None:
    lines: set[str] = set()
    cvts = 0
    with gzip.open(SOURCE, "rt", encoding="utf-8") as source:
        for line in source:
            line = line.rstrip("\n")
            match = COLLAPSED.match(line)
            if match is None:
                lines.add(line + "\n")
                continue
            head, first, second, tail = match.groups()
            cvt = f"{NS}m.0cvt{hashlib.sha1(line.encode()).hexdigest()[:8]}"
            lines.add(f"<{head}> <{NS}{first}> <{cvt}> .\n")
            lines.add(f"<{cvt}> <{NS}{second}> <{tail}> .\n")
            cvts += 1
    with gzip.GzipFile(OUT, "wb", mtime=0) as handle:
        handle.write("".join(sorted(lines)).encode("utf-8"))
    print(f"wrote {len(lines)} triples ({cvts} collapsed triples as CVT nodes) to {OUT}")


if __name__ == "__main__":
    main()
