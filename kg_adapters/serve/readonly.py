"""What a read-only surface lets through: one query of an allowed form, no update, no ``LOAD``,
no ``SERVICE`` (a query that makes the server fetch from the network is not read-only either).

The checks look at the query's keywords with strings, IRIs and comments blanked out, so a literal
that happens to contain "INSERT" is no reason to refuse."""

from __future__ import annotations

import re

from kg_adapters.errors import QueryError
from kg_adapters.sparql_terms import SKIPPED_SPANS

_SKIPPED = SKIPPED_SPANS
_PROLOGUE = re.compile(r"\s*(?:(?:PREFIX\s+[^\s:]*:\s*<>|BASE\s*<>)\s*)*", re.I)
_FORM = re.compile(r"(SELECT|ASK|CONSTRUCT|DESCRIBE)\b", re.I)
_UPDATE = re.compile(r"\b(INSERT|DELETE|LOAD|CLEAR|DROP|CREATE|ADD|MOVE|COPY|WITH)\b", re.I)
_TOKEN = re.compile(r"[?$]\w+|(?:[A-Za-z_][\w.\-]*)?:(?:[\w\-:%\\]|\.(?=[\w\-:%\\]))*|[A-Za-z_]\w*")
"""Variables, prefixed names (``ex:service``, ``_:b``; a local name never ends with ``.``) and bare
words, so that only a bare word counts as a keyword."""


def _keywords(bare: str) -> set[str]:
    return {token.upper() for token in _TOKEN.findall(bare) if token[0] not in "?$" and ":" not in token}


class ReadOnlyViolation(QueryError):
    """A request to change the graph, or to reach beyond it, on a read-only surface."""


def blank_out(sparql: str) -> str:
    """The query with every string, IRI and comment replaced by an empty token of its kind."""

    def blank(match: re.Match[str]) -> str:
        text = match.group(0)
        return "<>" if text.startswith("<") else (" " if text.startswith("#") else '""')

    return _SKIPPED.sub(blank, sparql)


def query_form(sparql: str, allowed: tuple[str, ...] = ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE")) -> str:
    """The form of a read-only query (``SELECT``, ``ASK``, ...), upper case.

    Raises:
        ReadOnlyViolation: an update (``INSERT``, ``DELETE``, ``LOAD``, ...), a ``SERVICE`` call,
            or a form outside ``allowed``.
        QueryError: not a query at all.
    """
    if not isinstance(sparql, str):
        raise QueryError("the query must be a string")
    bare = blank_out(sparql)
    prologue = _PROLOGUE.match(bare)
    rest = bare[prologue.end() if prologue else 0 :]
    form = _FORM.match(rest)
    if form is None:
        update = _UPDATE.match(rest)
        if update is not None:
            raise ReadOnlyViolation(f"this endpoint is read-only: {update.group(1).upper()} is refused")
        raise QueryError("not a SPARQL query (expected SELECT, ASK, CONSTRUCT or DESCRIBE after the prologue)")
    name = form.group(1).upper()
    if "SERVICE" in _keywords(rest):
        raise ReadOnlyViolation("SERVICE (federated query) is refused: this endpoint answers from its own graph")
    if name not in allowed:
        raise ReadOnlyViolation(f"{name} queries are refused here; allowed: {', '.join(allowed)}")
    return name
