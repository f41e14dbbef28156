"""What a read-only surface lets through: one query of an allowed form, no update, no ``LOAD``, no
``SERVICE`` (a query that makes the server fetch from the network is not read-only either).

Decided on the query as the engines that run it read it (:mod:`kg_adapters.sparql_lexer`), never on
text patterns: every reading (Oxigraph's PEG parser and the specification's lexer, with and without
``\\u`` escapes expanded, on the text as sent and as the embedded store runs it) must find an allowed
form and no ``SERVICE`` anywhere in its code. Oxigraph matches keywords inside longer words
(``trueSERVICE``), so ``SERVICE`` is refused wherever it could be read as one, even inside a prefix
name (``service:x``); strings, IRIs, comments, variables and one-name local parts (``ex:service``) are
never code, so a literal that happens to contain "SERVICE" is no reason to refuse."""

from __future__ import annotations

from functools import lru_cache

from kg_adapters.errors import QueryError
from kg_adapters.sparql_lexer import LexError, Reading, readings
from kg_adapters.sparql_terms import names_expanded

READ_FORMS = ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE")
UPDATE_KEYWORDS = ("INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH")
"""The SPARQL 1.1 Update operations' keywords (and WITH, which starts a DELETE/INSERT)."""


class ReadOnlyViolation(QueryError):
    """A request to change the graph, or to reach beyond it, on a read-only surface."""

    def __init__(self, message: str, *, refused: str = "") -> None:
        super().__init__(message)
        self.refused = refused
        """What was refused: ``SERVICE``, an update keyword (``INSERT``, ``LOAD``...) or a query form."""


def query_form(sparql: str, allowed: tuple[str, ...] = READ_FORMS) -> str:
    """The form of a read-only query (``SELECT``, ``ASK``, ...), upper case.

    Raises:
        ReadOnlyViolation: an update (``INSERT``, ``DELETE``, ``LOAD``, ...), a ``SERVICE`` call,
            or a form outside ``allowed``.
        QueryError: not a query at all.
    """
    if not isinstance(sparql, str):
        raise QueryError("the query must be a string")
    name = _read_form(sparql)
    if name not in allowed:
        raise ReadOnlyViolation(f"{name} queries are refused here; allowed: {', '.join(allowed)}", refused=name)
    return name


@lru_cache(maxsize=16)
def _read_form(sparql: str) -> str:
    """The form every reading of ``sparql`` agrees on (a server asks twice: to log the request, and in the
    thread that runs it; a refusal is not kept, it is cheap to find again)."""
    try:
        every = readings(sparql)  # what a remote engine runs
        spec = next(reading for reading in every if reading.mode == "spec" and reading.text is sparql)
        expanded = names_expanded(spec) if "." in sparql else sparql
        if expanded != sparql:  # what the embedded store runs
            every += readings(expanded, ("oxigraph",))
    except LexError as exc:
        raise QueryError(f"not a SPARQL query: {exc}") from exc
    forms: set[str | None] = set()
    for reading in every:
        form = _form(reading)
        if reading.code_contains("SERVICE"):
            raise ReadOnlyViolation(
                "SERVICE (federated query) is refused: this endpoint answers from its own graph", refused="SERVICE"
            )
        update = next((word for word in reading.code_words() if word in UPDATE_KEYWORDS), None)
        if update is not None:
            raise ReadOnlyViolation(f"this endpoint is read-only: {update} is refused", refused=update)
        forms.add(form)
    name = forms.pop() if len(forms) == 1 else None
    if name is None:  # no form, or readings that disagree on it: refused rather than guessed
        raise QueryError("not a SPARQL query (expected SELECT, ASK, CONSTRUCT or DESCRIBE after the prologue)")
    return name


def _form(reading: Reading) -> str | None:
    """The query form the reading starts with (matched as Oxigraph matches keywords: as a prefix)."""
    word = reading.first_word()
    for form in READ_FORMS:
        if word.startswith(form):
            return form
    for update in UPDATE_KEYWORDS:
        if word.startswith(update):
            raise ReadOnlyViolation(f"this endpoint is read-only: {update} is refused", refused=update)
    return None
