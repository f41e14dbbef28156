"""Malformed dump files and exactly what loading each one must do, shared by
``tests/test_malformed_dumps.py`` and ``benchmarks/hostile_inputs.py`` (which writes the table).

Every :class:`Case` is a file name (its extension picks the format) and its bytes, with the
expected outcome written out by hand:

* ``bad``: the 1-based lines a lenient load skips, exactly; a strict load fails at the first.
* ``good``: the statements a lenient load keeps (all distinct, so also the store's size).
* ``fatal``: the file cannot be loaded in either mode (a truncated or corrupt compressed stream,
  an over-long line, a syntax error in a format that is not line-based); ``fatal_line`` is the
  line the error names (None: the parser reports no position, as for RDF/XML). A truncated
  stream fails in lenient mode too: how many lines were lost is unknown, so they cannot be counted.
* ``lenient`` is False for formats that cannot be loaded leniently (Turtle, RDF/XML, TriG).
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import loaders.line_reading
import loaders.rdf
from kg_adapters import connect
from kg_adapters.base import SparqlQueryable
from kg_adapters.records import Literal

EX = "http://example.org/"
CHUNK = loaders.rdf.CHUNK_LINES
LINE_LIMIT = 1 << 20
"""The line-length limit the cases run under (the real one is 256 MiB, too big for a test)."""


@dataclass(frozen=True, kw_only=True)
class Case:
    name: str
    file: str
    data: bytes
    what: str
    good: int = 0
    bad: tuple[int, ...] = ()
    fatal: bool = False
    fatal_line: int | None = None
    fatal_match: str = ""
    line_exact: bool = True
    """False: where a damaged compressed stream fails depends on the decompressor's block sizes,
    so the error must name one of the ``total_lines`` lines of the file, not a given one."""
    total_lines: int = 0
    lenient: bool = True


def triple(i: int) -> str:
    return f"<{EX}e{i}> <{EX}next> <{EX}e{i + 1}> ."


def numbered(count: int) -> list[str]:
    return [triple(i) for i in range(count)]


def with_bad(total: int, bad: dict[int, str], *, eol: str = "\n") -> bytes:
    """``total`` distinct good lines, with the lines numbered in ``bad`` replaced."""
    lines = numbered(total)
    for number, text in bad.items():
        lines[number - 1] = text
    return (eol.join(lines) + eol).encode("utf-8")


def garbage_lines(count: int, seed: int = 7) -> bytes:
    """``count`` lines of random bytes, none blank and none starting a comment."""
    rng = random.Random(seed)
    allowed = bytes(b for b in range(256) if b not in b"\n\r# \t")
    return b"\n".join(bytes(rng.choice(allowed) for _ in range(rng.randint(1, 200))) for _ in range(count)) + b"\n"


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def _cut(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _flip(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes(b ^ 0xFF for b in data[middle : middle + 64]) + data[middle + 64 :]


BIG = with_bad(CHUNK + 5000, {})
MIXED_EOL = (
    (triple(0) + "\r\n" + triple(1) + "\n" + triple(2) + "\r" + "not a triple\r\n" + triple(4) + "\r").encode()
    + b"\n\r\n"
    + (triple(5) + "\n").encode()
)
TURTLE = f"@prefix ex: <{EX}> .\nex:a ex:p ex:b ;\n    ex:q ex:c .\n".encode()

TSV = b"<x:a>\t<x:r>\t<x:b>\n<x:a>\t<x:r>\n<x:c>\t\t<x:d>\n<x:e>\t<x:r>\t<x:f>\t<x:g>\n<x:h>\t<x:r>\t<x:i>\n"


def _damaged_big(**case: Any) -> Case:
    """``BIG`` compressed, then damaged inside the stream (``case`` names it and its bytes): the load
    fails at one of its lines, which one depending on the decompressor's block sizes."""
    return Case(**case, fatal=True, line_exact=False, total_lines=CHUNK + 5000)


CASES: tuple[Case, ...] = (
    # -- compression -------------------------------------------------------------------------
    _damaged_big(
        name="truncated-gzip", file="cut.nt.gz", data=_cut(_gzip(BIG)), what="gzip cut in half", fatal_match="truncated"
    ),
    _damaged_big(
        name="truncated-bz2",
        file="cut.nt.bz2",
        data=_cut(bz2.compress(BIG)),
        what="bz2 cut in half",
        fatal_match="truncated",
    ),
    _damaged_big(
        name="corrupt-gzip", file="flipped.nt.gz", data=_flip(_gzip(BIG)), what="64 bytes flipped inside gzip"
    ),
    Case(
        name="not-gzip",
        file="plain.nt.gz",
        data=BIG[:1000],
        what="plain text named .gz",
        fatal=True,
        fatal_line=1,
        fatal_match="gzip",
    ),
    Case(name="empty-gzip", file="empty.nt.gz", data=_gzip(b""), what="gzip of nothing"),
    Case(name="zero-byte-gzip", file="zero.nt.gz", data=b"", what="0-byte .gz (read as empty)"),
    Case(
        name="zero-byte-bz2",
        file="zero.nt.bz2",
        data=b"",
        what="0-byte .bz2 (no stream header)",
        fatal=True,
        fatal_line=1,
        fatal_match="truncated",
    ),
    # -- bad terms -----------------------------------------------------------------------------
    Case(
        name="bad-iris",
        file="iris.nt.gz",
        data=_gzip(
            with_bad(
                CHUNK + 500,
                {
                    3: f"<{EX}a b> <{EX}p> <{EX}o> .",
                    40: f"<relative> <{EX}p> <{EX}o> .",
                    CHUNK: f"<{EX}unclosed <{EX}p> <{EX}o> .",
                    CHUNK + 1: f"<{EX}a\x00> <{EX}p> <{EX}o> .",
                    CHUNK + 2: f'<{EX}a> <{EX}p> "x"^^<not an iri> .',
                    CHUNK + 500: f"<{EX}a> <{EX}p{{}}> <{EX}o> .",
                },
            )
        ),
        what="space, relative, unclosed, NUL, bad datatype, braces (across a chunk boundary)",
        good=CHUNK + 494,
        bad=(3, 40, CHUNK, CHUNK + 1, CHUNK + 2, CHUNK + 500),
    ),
    Case(
        name="broken-escapes",
        file="escapes.nt",
        data=with_bad(
            30,
            {
                2: f'<{EX}a> <{EX}p> "x\\u12" .',
                5: f'<{EX}a> <{EX}p> "x\\q" .',
                7: f'<{EX}a> <{EX}p> "x\\uD800" .',
                11: f'<{EX}a> <{EX}p> "x\\U00110000" .',
                13: f'<{EX}a> <{EX}p> "unterminated .',
                17: f'<{EX}a\\u0020b> <{EX}p> "x" .',
                19: f'<{EX}a> <{EX}p> "x"@-en .',
            },
        ),
        what="\\u12, \\q, \\uD800, \\U00110000, unterminated string, escaped space in IRI, bad language tag",
        good=23,
        bad=(2, 5, 7, 11, 13, 17, 19),
    ),
    Case(
        name="bad-structure",
        file="structure.nt",
        data=with_bad(
            12,
            {
                1: '"literal" <http://example.org/p> <http://example.org/o> .',
                4: f"<{EX}a> <{EX}p> <{EX}b>",
                6: f"{triple(100)} {triple(101)}",
                9: f"<{EX}a> <{EX}p> <{EX}b> <{EX}graph> .",
            },
        ),
        what="literal subject, missing dot, two triples on a line, a quad in N-Triples",
        good=8,
        bad=(1, 4, 6, 9),
    ),
    Case(
        name="invalid-utf8",
        file="latin1.nt",
        data=with_bad(5, {}) + f'<{EX}a> <{EX}p> "caf\xe9" .\n'.encode("latin-1") + (triple(6) + "\n").encode(),
        what="a Latin-1 byte in a literal",
        good=6,
        bad=(6,),
    ),
    Case(
        name="nul-in-literal",
        file="nul.nt",
        data=f'<{EX}a> <{EX}p> "x\x00y" .\n'.encode(),
        what="raw NUL inside a literal (allowed by N-Triples)",
        good=1,
    ),
    # -- wrong format --------------------------------------------------------------------------
    Case(name="turtle-as-nt", file="turtle.nt", data=TURTLE, what="Turtle named .nt", bad=(1, 2, 3)),
    Case(
        name="rdfxml-as-nt",
        file="xml.nt",
        data=b"<?xml version='1.0'?>\n<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'/>\n",
        what="RDF/XML named .nt",
        bad=(1, 2),
    ),
    Case(
        name="nt-as-rdfxml",
        file="nt.rdf",
        data=BIG[:1000],
        what="N-Triples named .rdf",
        fatal=True,
        fatal_line=None,
        lenient=False,
    ),
    Case(
        name="json-as-turtle",
        file="data.ttl",
        data=b'{"a": [1, 2]}\n',
        what="JSON named .ttl",
        fatal=True,
        fatal_line=1,
        lenient=False,
    ),
    Case(
        name="turtle-error",
        file="broken.ttl",
        data=TURTLE + b"ex:a ex:p .\n",
        what="Turtle, line 4 broken",
        fatal=True,
        fatal_line=4,
        lenient=False,
    ),
    Case(
        name="binary-garbage",
        file="garbage.nt",
        data=garbage_lines(40),
        what="40 lines of random bytes",
        bad=tuple(range(1, 41)),
    ),
    Case(
        name="tsv-fields",
        file="kb.tsv",
        data=TSV,
        what="TSV: 2 fields, an empty field, 4 fields",
        good=2,
        bad=(2, 3, 4),
    ),
    # -- empty and odd files -------------------------------------------------------------------
    Case(name="empty", file="empty.nt", data=b"", what="0 bytes"),
    Case(name="blank-and-comments", file="blank.nt", data=b"  \n\t\n# only a comment\n\r\n", what="only blanks"),
    Case(
        name="huge-valid-line",
        file="huge.nt",
        data=f'<{EX}a> <{EX}p> "{"x" * (LINE_LIMIT - 100)}" .\n'.encode(),
        what=f"one {LINE_LIMIT >> 20} MiB literal (under the limit)",
        good=1,
    ),
    Case(
        name="huge-line",
        file="huge.nt",
        data=with_bad(10, {}) + b"x" * (2 * LINE_LIMIT) + b"\n",
        what="a line over the limit",
        fatal=True,
        fatal_line=11,
        fatal_match="longer than",
    ),
    # -- encodings and line endings -------------------------------------------------------------
    Case(name="bom", file="bom.nt", data=b"\xef\xbb\xbf" + with_bad(5, {}), what="UTF-8 BOM at the start", good=5),
    Case(
        name="bom-gzip", file="bom.nt.gz", data=_gzip(b"\xef\xbb\xbf" + with_bad(5, {})), what="BOM inside gzip", good=5
    ),
    Case(
        name="bom-turtle",
        file="bom.ttl",
        data=b"\xef\xbb\xbf" + TURTLE,
        what="BOM before Turtle",
        good=2,
        lenient=False,
    ),
    Case(
        name="bom-mid-file",
        file="bom2.nt",
        data=with_bad(3, {}) + b"\xef\xbb\xbf" + with_bad(1, {}).replace(b"e0>", b"e9>"),
        what="BOM at the start of line 4 (concatenated files)",
        good=3,
        bad=(4,),
    ),
    Case(name="mixed-eol", file="eol.nt", data=MIXED_EOL, what="CRLF, LF and lone CR; bad line 4", good=5, bad=(4,)),
    Case(
        name="crlf-chunks",
        file="crlf.nt.bz2",
        data=bz2.compress(with_bad(CHUNK + 10, {CHUNK + 3: "oops"}, eol="\r\n")),
        what="CRLF across a chunk boundary",
        good=CHUNK + 9,
        bad=(CHUNK + 3,),
    ),
)


@contextlib.contextmanager
def line_limit(limit: int = LINE_LIMIT) -> Iterator[None]:
    """Runs loads with a smaller line-length limit (so an over-long line costs megabytes, not 256 MiB)."""
    saved = loaders.line_reading.MAX_LINE_BYTES
    loaders.line_reading.MAX_LINE_BYTES = limit
    try:
        yield
    finally:
        loaders.line_reading.MAX_LINE_BYTES = saved


def store_size(store: Path, *, profile: str = "generic") -> int:
    """The number of triples in the complete store at ``store`` (raises StoreNotFound otherwise)."""
    with connect(f"oxigraph://{store}?profile={profile}") as kg:
        assert isinstance(kg, SparqlQueryable)
        count = kg.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")[0]["n"]
        assert isinstance(count, Literal)
        return int(count.value)


def debris(directory: Path) -> list[str]:
    """What loads left behind in ``directory``: temporary (or resumable build) directories beside the stores, and
    versions inside a store other than the current one (no reader holds any in these tests)."""
    from kg_adapters.store_layout import MANIFEST, VERSION_PREFIX, read_manifest

    left = [p.name for p in directory.iterdir() if ".kga-tmp-" in p.name or p.name.endswith(".kga-build")]
    for store in directory.iterdir():
        if store.is_dir() and (store / MANIFEST).exists():
            current = read_manifest(store).get("data")
            left += [
                f"{store.name}/{version.name}"
                for version in store.iterdir()
                if version.name.startswith(VERSION_PREFIX) and version.name != current
            ]
    return sorted(left)
