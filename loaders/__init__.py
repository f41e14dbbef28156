"""Loaders that build on-disk kg-adapters stores from RDF and TSV dumps (``kga load``).

>>> from loaders import load_files
>>> report = load_files(["fb15k237.nt.gz"], "/data/fb15k", profile="freebase")  # doctest: +SKIP
>>> report.store_triples, round(report.triples_per_second)  # doctest: +SKIP

Formats: N-Triples (``nt``), N-Quads (``nq``), Turtle (``ttl``), RDF/XML (``rdf``), TriG
(``trig``), TSV triple files (``tsv``: ``h<TAB>r<TAB>t``; ``metaqa``: ``h|r|t``) and Freebase
dumps (``freebase``: quirks repaired, optional language/predicate filters; see
:mod:`loaders.freebase`), RoG's dataset files (``rog-dataset``: Parquet or JSONL rows, each
question's subgraph; see :mod:`loaders.rog_dataset`), each
optionally ``.gz`` or ``.bz2`` (decompressed on the fly). Loads are atomic: readers see the old
store or the new one, never a partial one (see :mod:`loaders.core`). ``extract_subgraph``
copies the k-hop neighbourhood of seed entities out of any KG into a new store (``kga extract``,
see :mod:`loaders.extract`); ``build_dataset`` writes RoG-style per-question subgraphs and truth paths
for a questions file (``kga dataset build``, see :mod:`loaders.dataset_build`).
"""

from __future__ import annotations

from loaders.core import load_files
from loaders.dataset_build import BuildReport, build_dataset
from loaders.extract import ExtractReport, extract_subgraph
from loaders.freebase import DumpFilter, FreebaseConverter
from loaders.rdf import CHUNK_BYTES, CHUNK_LINES, FORMAT_NAMES, LINE_FORMATS, resolve_format
from loaders.report import LoadReport, SkippedLine
from loaders.tsv import LOCAL_ENTITY_NS, LOCAL_RELATION_NS

__all__ = [
    "CHUNK_BYTES",
    "CHUNK_LINES",
    "FORMAT_NAMES",
    "LINE_FORMATS",
    "LOCAL_ENTITY_NS",
    "LOCAL_RELATION_NS",
    "BuildReport",
    "DumpFilter",
    "ExtractReport",
    "FreebaseConverter",
    "LoadReport",
    "SkippedLine",
    "build_dataset",
    "extract_subgraph",
    "load_files",
    "resolve_format",
]
