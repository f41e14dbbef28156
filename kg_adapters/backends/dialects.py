"""What differs between SPARQL engines, in one place.

Figures for Virtuoso 7.2 were measured on a real server (see kg_adapters/testing/virtuoso.py):
``ResultSetMaxRows`` caps every answer (flagged only by the ``X-SPARQL-MaxRows`` header),
``MaxSortedTopRows`` (10,000) makes ORDER BY with OFFSET + LIMIT above it fail (SR353),
a VALUES block of more than 4,094 terms fails (SP030), GET request lines over about 10 kB are cut,
and its TSV output is not W3C TSV (IRIs quoted like strings, language tags dropped), so JSON is
the cheapest correct format there.
"""

from __future__ import annotations

from dataclasses import dataclass

from kg_adapters.errors import InvalidTermError


@dataclass(frozen=True, kw_only=True)
class Dialect:
    name: str
    row_cap: int | None
    """Rows the engine returns at most per answer by default (None: no cap)."""
    max_sorted_rows: int | None
    """OFFSET + LIMIT ceiling for ORDER BY queries (None: none)."""
    values_chunk: int
    """Ids per VALUES block, well under the engine's limit."""
    method: str = "POST"
    blank_node_prefix: str | None = None
    """IRI prefix by which the engine lets queries name a blank node (Virtuoso: nodeID://)."""
    parallel_requests: int = 1
    """Most requests one ``neighbors`` call has in flight (its id chunk split into that many parts,
    ``parallel_requests=N`` to change): an engine with idle cores answers the parts side by side.
    One by default: on a busy machine (client and Virtuoso sharing two loaded cores) the parts
    measured no faster than one request and cost more round trips."""
    grouped_edges: bool = False
    """Whether ``neighbors`` asks for the IRI ends of a node's edges grouped per relation
    (``GROUP_CONCAT``, one row per node and relation): on Virtuoso writing a result row costs far
    more than evaluating it, so the grouped answer comes about 3x faster and rarely meets the row cap."""


DIALECTS: dict[str, Dialect] = {
    "virtuoso": Dialect(
        name="virtuoso",
        row_cap=10_000,
        max_sorted_rows=10_000,
        values_chunk=1_000,
        blank_node_prefix="nodeID://",
        grouped_edges=True,
    ),
    "wdqs": Dialect(name="wdqs", row_cap=None, max_sorted_rows=None, values_chunk=200),
    "blazegraph": Dialect(name="blazegraph", row_cap=None, max_sorted_rows=None, values_chunk=500),
    "qlever": Dialect(name="qlever", row_cap=None, max_sorted_rows=None, values_chunk=1_000),
    "oxigraph": Dialect(name="oxigraph", row_cap=None, max_sorted_rows=None, values_chunk=2_000),
    "fuseki": Dialect(name="fuseki", row_cap=None, max_sorted_rows=None, values_chunk=1_000),
    "generic": Dialect(name="generic", row_cap=None, max_sorted_rows=None, values_chunk=500),
}


def get_dialect(name: str) -> Dialect:
    try:
        return DIALECTS[name.lower()]
    except KeyError:
        known = ", ".join(sorted(DIALECTS))
        raise InvalidTermError(f"unknown SPARQL dialect {name!r}; known: {known}") from None
