"""The traversal index's collector as a worker process beside a load (``python -m loaders.index_worker``).

Numbering a load's triples is Python work (a regular expression and a dict lookup per IRI); on a
thread it holds the GIL that the load's own Python (reading and splitting the input, handing chunks to
Oxigraph) needs, and a load of 1M triples took ~30% longer with the index than without it while the
machine's cores were not busy. In a process of its own the numbering runs beside the load, and the
indexes are written while Oxigraph still stores the last of the load.
:class:`loaders.indexing.WorkerIndexingSink` starts this program and talks to it over its standard input
and output.

The protocol: frames on standard input, each a header (``HEADER``: kind, length of a text, length of
the data) then the text and the data: ``RDF`` (text: the RDF format's media type, data: what
``Store.bulk_load`` took), ``QUADS`` (data: N-Quads of what ``Store.bulk_extend`` took), ``OBJECTS``
(data: the same, pickled, for a chunk with a statement longer than the N-Quads parser's buffer: a 17 MiB
literal in RDF/XML, whose parser has no such limit), ``CHECKPOINT`` (save the collector to its spool,
:class:`kg_adapters.index.spool.CollectorSpool`, and answer ``{"state": ...}``), ``WRITE`` (text: JSON
``{"directory", "profile", "save"}``: when ``save``, save the spool and answer ``{"state": ...}`` first;
then write the traversal, name and relation indexes into the version ``directory``
(:func:`loaders.indexing.write_indexes`), answering ``{"step": StepEvent fields}`` as each step starts, is
written and is recorded (:mod:`kg_adapters.index.steps`: recorded in the spool's ``steps.json`` when
``save``, so that a worker resumed from the same state goes on after them), and answer ``{"stats":
IndexStats fields, "labels": names}``, the last answer). Every failure is answered ``{"error": {"type",
"message"}}`` (also when numbering a chunk fails) before the worker exits. End of input without ``WRITE``
(the load failed or was abandoned) ends the worker without writing anything.

Arguments: the parent's process id, then optionally the spool directory, a file holding the JSON
state to resume from (a load resumed after a crash: see :mod:`loaders.core`), the memory budget in
bytes (past it the collector spills to the spool: :mod:`kg_adapters.index.spill`) and, for an append,
the previous version's directory and the profile's name: a collector that resumes from nothing is given
that version's traversal index first (:mod:`kg_adapters.index.replay`).
"""

from __future__ import annotations

import gc
import json
import os
import pickle
import signal
import struct
import sys
import threading
from dataclasses import asdict
from typing import BinaryIO

HEADER = struct.Struct("<cIQ")
"""Frame header: kind (one byte), text length, data length."""
RDF, QUADS, OBJECTS, WRITE, CHECKPOINT = b"R", b"Q", b"O", b"W", b"C"


def main(argv: list[str]) -> int:
    """Runs the worker. ``argv``: the parent's process id (the worker stops when its parent dies), then
    optionally the spool directory and the path of the state to resume from."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the load's to handle: it stops the worker
        _die_with_parent(int(argv[0]) if argv else None)
        import pyoxigraph as ox

        from kg_adapters.budgets import DEFAULT_MEMORY
        from kg_adapters.index import build as index_build
        from kg_adapters.index.spool import CollectorSpool
        from kg_adapters.index.steps import STEPS_FILE, BuildSteps
        from kg_adapters.profiles import get_profile

        collector = index_build.TripleCollector()
        memory = int(argv[3]) if len(argv) > 3 else DEFAULT_MEMORY
        spool = CollectorSpool(argv[1], memory=memory) if len(argv) > 1 else None
        if spool is not None:
            state = json.loads(open(argv[2], "rb").read()) if len(argv) > 2 else None  # noqa: SIM115
            spool.restore(collector, state)
            if len(argv) > 5 and state is None:  # an append: the previous version's index first
                from kg_adapters.index.replay import replay_into

                replay_into(collector, argv[4], get_profile(argv[5]))
        while True:
            frame = _read_frame(stdin)
            if frame is None:
                return 0  # the load stopped before asking for the index: nothing to write
            kind, text, data = frame
            if kind == RDF:
                format = ox.RdfFormat.from_media_type(text.decode())
                if format is None:
                    raise ValueError(f"unknown RDF media type {text!r}")
                collector.add_rdf(data, format)
            elif kind == QUADS:
                collector.add_quads(ox.parse(data, ox.RdfFormat.N_QUADS))
            elif kind == OBJECTS:  # from the load that started this worker, over its own pipe
                collector.add_quads(pickle.loads(data))
            elif kind == CHECKPOINT:
                if spool is None:
                    raise ValueError("a checkpoint needs a spool directory")
                _answer(stdout, {"state": spool.save(collector)})
            elif kind == WRITE:
                # the writing makes millions of tuples that live to its end (the name rows, the ids): the
                # cycle collector would walk them again and again (~0.7 CPU-s at 4M triples) and find no
                # cycle; the worker exits once the indexes are written
                gc.disable()
                request = json.loads(text)
                steps = None
                if spool is not None:
                    state = None
                    if request.get("save"):  # the load's last checkpoint: everything handed over
                        state = spool.save(collector, keep=True)  # reload reads back only what was saved before
                        _answer(stdout, {"state": state})
                    record = spool.directory / STEPS_FILE if state is not None else None
                    steps = BuildSteps(record, state, lambda event: _answer(stdout, {"step": asdict(event)}))
                    spool.reload(collector, steps)
                from loaders.indexing import write_indexes

                profile = get_profile(request["profile"])
                names, stats = write_indexes(collector, request["directory"], profile, steps)
                _answer(stdout, {"stats": asdict(stats), "labels": names})
                return 0
            else:
                raise ValueError(f"unknown frame kind {kind!r}")
    except BaseException as exc:  # every failure is the answer: the parent raises it in the load
        _answer(stdout, {"error": {"type": type(exc).__name__, "message": str(exc)}})
        return 1


def _read_frame(stream: BinaryIO) -> tuple[bytes, bytes, bytes] | None:
    header = stream.read(HEADER.size)
    if not header:
        return None
    if len(header) != HEADER.size:
        raise EOFError("the load's frame header was cut short")
    kind, text_size, data_size = HEADER.unpack(header)
    text, data = stream.read(text_size), stream.read(data_size)
    if len(text) != text_size or len(data) != data_size:
        raise EOFError("the load's frame was cut short")
    return kind, text, data


_ANSWERING = threading.Lock()
"""Held while an answer line is written (the name index's steps are reported from a thread of their own)."""


def _answer(stream: BinaryIO, message: dict[str, object]) -> None:
    try:
        with _ANSWERING:
            stream.write(json.dumps(message).encode() + b"\n")
            stream.flush()
    except OSError:
        pass  # the load is gone: nobody to tell


def _die_with_parent(parent: int | None) -> None:
    """On Linux, asks the kernel to kill this process when the load's process dies (a killed load
    must not leave a worker writing into its abandoned directory); elsewhere end of input stops it."""
    if parent is None or not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_pdeathsig = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
