"""The bundled FB15k-237 sample (2,085 triples) as an on-disk Oxigraph store, for reasoner tests."""

from __future__ import annotations

from pathlib import Path

from loaders import load_files
from reasoning.demo import sample_path


def build_sample_store(directory: Path) -> str:
    """Loads the sample into a new store at ``directory`` and returns its KG URL (freebase profile)."""
    load_files([str(sample_path())], str(directory), profile="freebase")
    return f"oxigraph://{directory.absolute()}?profile=freebase"
