"""RDF input and term conversion shared by the Oxigraph and rdflib backends and ``loaders``: the RDF
formats by name or file extension, compressed files read on the fly, and pyoxigraph terms to and from
our records (IRI strings, ``"_:id"`` blank nodes, :class:`Literal`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, cast

import pyoxigraph as ox

from kg_adapters.errors import InvalidTermError
from kg_adapters.profiles import Profile
from kg_adapters.records import Literal, Node
from kg_adapters.sparql_terms import check_literal
from kg_adapters.terms import Term, plain_literal

_NamedNode = ox.NamedNode
_Literal = ox.Literal
_BlankNode = ox.BlankNode

RDF_FORMATS: dict[str, ox.RdfFormat] = {
    "nt": ox.RdfFormat.N_TRIPLES,
    "ntriples": ox.RdfFormat.N_TRIPLES,
    "n-triples": ox.RdfFormat.N_TRIPLES,
    "nq": ox.RdfFormat.N_QUADS,
    "nquads": ox.RdfFormat.N_QUADS,
    "n-quads": ox.RdfFormat.N_QUADS,
    "ttl": ox.RdfFormat.TURTLE,
    "turtle": ox.RdfFormat.TURTLE,
    "rdf": ox.RdfFormat.RDF_XML,
    "owl": ox.RdfFormat.RDF_XML,
    "xml": ox.RdfFormat.RDF_XML,
    "rdfxml": ox.RdfFormat.RDF_XML,
    "rdf-xml": ox.RdfFormat.RDF_XML,
    "trig": ox.RdfFormat.TRIG,
}


def rdf_format(path: str, name: str | None = None) -> ox.RdfFormat:
    """The RDF format named ``name``, or guessed from the file extension (after .gz/.bz2)."""
    if name is not None:
        try:
            return RDF_FORMATS[name.lower()]
        except KeyError:
            raise InvalidTermError(f"unknown RDF format {name!r}; known: {', '.join(sorted(RDF_FORMATS))}") from None
    suffixes = [s.lstrip(".").lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in ("gz", "bz2"):
        suffixes.pop()
    if suffixes and suffixes[-1] in RDF_FORMATS:
        return RDF_FORMATS[suffixes[-1]]
    raise InvalidTermError(f"cannot tell the RDF format of {path}; pass format= (e.g. nt, ttl, nq, rdf)")


@contextmanager
def open_maybe_compressed(path: str) -> Iterator[IO[bytes]]:
    """The file's bytes, decompressed on the fly for .gz and .bz2."""
    lower = path.lower()
    handle: IO[bytes]
    if lower.endswith(".gz"):
        import gzip  # only when reading such a file

        handle = cast(IO[bytes], gzip.open(path, "rb"))  # noqa: SIM115 - closed below
    elif lower.endswith(".bz2"):
        import bz2

        handle = cast(IO[bytes], bz2.open(path, "rb"))  # noqa: SIM115
    else:
        handle = open(path, "rb")  # noqa: SIM115
    try:
        yield handle
    finally:
        handle.close()


def convert_term(term: Any) -> Term | None:
    """A pyoxigraph term as our term (IRI str, "_:id" blank node, Literal)."""
    kind = type(term)
    if kind is _NamedNode:
        return str(term.value)
    if kind is _Literal:
        return plain_literal(str(term.value), str(term.datatype.value), term.language)
    if kind is _BlankNode:
        return "_:" + str(term.value)
    return None


def to_oxigraph_term(node: Node, profile: Profile, *, relation: bool = False) -> Any:
    if isinstance(node, Literal):
        text, lang, datatype = check_literal(node)
        if lang is not None:
            return _Literal(text, language=lang)
        if datatype is not None:
            return _Literal(text, datatype=_NamedNode(datatype))
        return _Literal(text)
    full = profile.relation_iri(node) if relation else profile.entity_iri(node)
    return _NamedNode(full)
