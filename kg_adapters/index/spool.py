"""A load's :class:`~kg_adapters.index.build.TripleCollector` kept on disk, so that a load killed midway
resumes with exactly the numbers it had at its last checkpoint.

:meth:`CollectorSpool.save` appends what the collector gathered since the previous save to files in
the spool directory and empties those buffers (only the two dicts that number IRIs stay in memory),
syncs the files and returns the spool's state: the length of every file and the counters. Files are
only ever appended to, so a state names a prefix of each. :meth:`CollectorSpool.restore` truncates the
files to a state (dropping what a killed load appended after it) and rebuilds the collector from them;
:meth:`CollectorSpool.reload` moves everything back into the collector before the index is written.

Files: ``entities.log`` and ``relations.log`` (the IRIs in number order, one a line: an IRI holds no
line break), ``edges.i32`` (head, relation, tail), ``out_extra.i32`` and ``in_extra.i32`` (node,
relation), ``literals.bin`` (per row: entity, relation, value length, tag length as ``<iiII``, then
the value and the tag), ``blanks.nq`` (the blank-node triples, N-Quads, one a line).
"""

from __future__ import annotations

import itertools
import os
import struct
from array import array
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyoxigraph as ox

if TYPE_CHECKING:
    from kg_adapters.index.build import LiteralRow, TripleCollector

FILES = ("entities.log", "relations.log", "edges.i32", "out_extra.i32", "in_extra.i32", "literals.bin", "blanks.nq")
_LITERAL_HEAD = struct.Struct("<iiII")


class CollectorSpool:
    """The spool directory of one load's collector (see the module docstring)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._logged = {"entities.log": 0, "relations.log": 0}
        """IRIs of each dict already in the log."""

    def save(self, collector: TripleCollector) -> dict[str, Any]:
        """Appends the collector's new data to the files, empties its buffers and returns the state."""
        import numpy as np

        collector._add_typed()
        self._append_iris("entities.log", collector._entity)
        self._append_iris("relations.log", collector._relation)
        chunks: list[tuple[Any, Any, Any]] = [*collector._edge_chunks]
        if len(collector._heads):
            columns = [np.frombuffer(a, dtype=np.int32) for a in (collector._heads, collector._rels, collector._tails)]
            chunks.append((columns[0], columns[1], columns[2]))
        with open(self.directory / "edges.i32", "ab") as handle:
            for heads, rels, tails in chunks:
                np.stack((heads, rels, tails), axis=1).astype(np.int32).tofile(handle)
            _sync(handle)
        collector._edge_chunks.clear()
        collector._heads, collector._rels, collector._tails = array("i"), array("i"), array("i")
        for name, nodes, rels in (
            ("out_extra.i32", collector._out_extra_nodes, collector._out_extra_rels),
            ("in_extra.i32", collector._in_extra_nodes, collector._in_extra_rels),
        ):
            with open(self.directory / name, "ab") as handle:
                pairs = np.stack((np.frombuffer(nodes, dtype=np.int32), np.frombuffer(rels, dtype=np.int32)), axis=1)
                pairs.tofile(handle)
                _sync(handle)
        collector._out_extra_nodes, collector._out_extra_rels = array("i"), array("i")
        collector._in_extra_nodes, collector._in_extra_rels = array("i"), array("i")
        with open(self.directory / "literals.bin", "ab") as handle:
            rows = collector._literal_list if collector._distinct else collector._literal_set
            handle.write(b"".join(_LITERAL_HEAD.pack(e, r, len(v), len(t)) + v + t for e, r, v, t in rows))
            _sync(handle)
        collector._literal_list.clear()
        collector._literal_set.clear()
        with open(self.directory / "blanks.nq", "ab") as handle:
            if collector._blank_set:
                handle.write(ox.serialize(collector._blank_set, format=ox.RdfFormat.N_QUADS) or b"")
            _sync(handle)
        collector._blank_set.clear()
        return {
            "rows": collector.rows,
            "blank_count": collector._blank_count,
            "sizes": {name: (self.directory / name).stat().st_size for name in FILES},
        }

    def _append_iris(self, name: str, numbered: dict[bytes, int]) -> None:
        """Logs the IRIs numbered since the last save (a dict keeps the order they were numbered in)."""
        new = list(itertools.islice(numbered, self._logged[name], None))
        with open(self.directory / name, "ab") as handle:
            if new:
                handle.write(b"\n".join(new) + b"\n")
            _sync(handle)
        self._logged[name] = len(numbered)

    def restore(self, collector: TripleCollector, state: dict[str, Any] | None) -> None:
        """Cuts the files back to ``state`` (None: empties them) and numbers ``collector``'s IRIs as
        they were then; the rest stays in the files until :meth:`reload`."""
        sizes = (state or {}).get("sizes", {})
        for name in FILES:
            path = self.directory / name
            with open(path, "ab") as handle:
                handle.truncate(int(sizes.get(name, 0)))
                _sync(handle)
        for name, numbers in (("entities.log", collector._entity), ("relations.log", collector._relation)):
            iris = (self.directory / name).read_bytes().split(b"\n")
            iris.pop()  # after the last line break
            for iri in iris:
                numbers[iri]  # numbered in log order
            if len(numbers) != len(iris):
                raise ValueError(f"{name} repeats an IRI: the spool is damaged")
            self._logged[name] = len(iris)
        collector.rows = int((state or {}).get("rows", 0))
        collector._blank_count = int((state or {}).get("blank_count", 0))

    def reload(self, collector: TripleCollector) -> None:
        """Moves the spooled edges, extras, literal rows and blank triples back into ``collector``
        (what :func:`~kg_adapters.index.build.build_index` reads)."""
        import numpy as np

        edges = np.fromfile(self.directory / "edges.i32", dtype=np.int32).reshape(-1, 3)
        if len(edges):
            collector._edge_chunks.insert(0, (edges[:, 0].copy(), edges[:, 1].copy(), edges[:, 2].copy()))
        del edges
        for name, nodes, rels in (
            ("out_extra.i32", collector._out_extra_nodes, collector._out_extra_rels),
            ("in_extra.i32", collector._in_extra_nodes, collector._in_extra_rels),
        ):
            pairs = np.fromfile(self.directory / name, dtype=np.int32).reshape(-1, 2)
            nodes.extend(pairs[:, 0].tolist())
            rels.extend(pairs[:, 1].tolist())
        rows = _literal_rows((self.directory / "literals.bin").read_bytes())
        if collector._distinct:
            collector._literal_list.extend(rows)
        else:
            collector._literal_set.update(rows)
        blanks = (self.directory / "blanks.nq").read_bytes()
        if blanks:
            collector._blank_set.update(ox.parse(blanks, ox.RdfFormat.N_QUADS))


def _literal_rows(data: bytes) -> list[LiteralRow]:
    rows: list[LiteralRow] = []
    view = memoryview(data)
    position, end, head = 0, len(data), _LITERAL_HEAD.size
    unpack = _LITERAL_HEAD.unpack_from
    while position < end:
        entity, relation, value_length, tag_length = unpack(view, position)
        position += head
        value = data[position : position + value_length]
        position += value_length
        rows.append((entity, relation, value, data[position : position + tag_length]))
        position += tag_length
    return rows


def _sync(handle: Any) -> None:
    handle.flush()
    os.fsync(handle.fileno())
