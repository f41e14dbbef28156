"""Queries that would make a read-only SPARQL surface reach the network or change its graph, spelled
every way the pass against ``kga serve`` and ``kga mcp`` could think of: SERVICE after a comment that
ends at a carriage return, glued to the previous term (``trueSERVICE``), hidden in a prefix name,
named through a prefix or a relative IRI, nested in subqueries, EXISTS, OPTIONAL and UNION, behind
odd whitespace, escapes and BOMs; LOAD and every update form. Shared by the tests and
``benchmarks/hostile_inputs.py`` so the report counts what the tests check.

``live`` spellings are executed by Oxigraph 0.5 itself as a federated call: run on a bare store
(:func:`probe_store`) they reach the URL. The others are read that way by other engines (``\\u``
escapes expanded over the whole query, the specification's IRI lexing) or are rejected by Oxigraph's
parser; all are refused the same.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import pyoxigraph as ox

from kg_adapters.testing.lifecycle import serving


@dataclass(frozen=True)
class Spelling:
    name: str
    template: str
    """The query with ``{url}`` for the listener's ``http://HOST:PORT/sparql`` and ``{base}`` for
    ``http://HOST:PORT/``."""
    live: bool = True
    """Oxigraph 0.5 runs it as a request to ``{url}`` (proven by the tests on :func:`probe_store`)."""

    def query(self, url: str) -> str:
        return self.template.replace("{url}", url).replace("{base}", url.rsplit("/", 1)[0] + "/")


_INNER = "{ ?a ?b ?c }"

SERVICE_SPELLINGS: tuple[Spelling, ...] = (
    Spelling(name="plain", template="SELECT * WHERE { SERVICE <{url}> " + _INNER + " }"),
    Spelling(name="comment ended by CR", template="SELECT * WHERE { # x\rSERVICE <{url}> " + _INNER + " }"),
    Spelling(name="comment ended by CRLF", template="SELECT * WHERE { # x\r\nSERVICE <{url}> " + _INNER + " }"),
    Spelling(name="comment before the IRI", template="SELECT * { SERVICE # c\r<{url}> " + _INNER + " }"),
    Spelling(name="lower case", template="select * where { service <{url}> " + _INNER + " }"),
    Spelling(name="mixed case", template="SeLeCt * { sErViCe <{url}> " + _INNER + " }"),
    Spelling(name="SILENT", template="SELECT * { SERVICE SILENT <{url}> " + _INNER + " }"),
    Spelling(name="no spaces", template="SELECT*{SERVICE<{url}>{?a ?b ?c}}"),
    Spelling(name="glued to a boolean", template="SELECT * { ?s ?p trueSERVICE<{url}>" + _INNER + " }"),
    Spelling(name="glued to a number", template="SELECT * { ?s ?p 1SERVICE<{url}>" + _INNER + " }"),
    Spelling(name="SERVICESILENT glued", template="SELECT * { ?s ?p trueSeRvIcEsIlEnT<{url}>" + _INNER + " }"),
    Spelling(
        name="prefix name spelling service",
        template="PREFIX : <{url}#> PREFIX service: <http://e/> SELECT * { ?s ?p true service:x " + _INNER + " }",
    ),
    Spelling(name="endpoint as a prefixed name", template="PREFIX ep: <{url}> SELECT * { SERVICE ep: " + _INNER + " }"),
    Spelling(name="endpoint relative to BASE", template="BASE <{base}> SELECT * { SERVICE <sparql> " + _INNER + " }"),
    Spelling(name="escaped IRI", template="SELECT * { SERVICE <{url}\\u003Fx=1> " + _INNER + " }"),
    Spelling(name="in a subquery", template="SELECT * { { SELECT * { SERVICE SILENT <{url}> " + _INNER + " } } }"),
    Spelling(name="in FILTER EXISTS", template="SELECT * { FILTER EXISTS { SERVICE <{url}> " + _INNER + " } }"),
    Spelling(name="in OPTIONAL", template="SELECT * { OPTIONAL { SERVICE <{url}> " + _INNER + " } }"),
    Spelling(name="in UNION", template="SELECT * { { ?s ?p ?o } UNION { SERVICE <{url}> " + _INNER + " } }"),
    Spelling(name="after VALUES", template="SELECT * { VALUES ?v { 1 } SERVICE <{url}> " + _INNER + " }"),
    Spelling(name="ASK", template="ASK { SERVICE <{url}> " + _INNER + " }"),
    Spelling(name="CONSTRUCT", template="CONSTRUCT { ?a ?b ?c } WHERE { SERVICE <{url}> " + _INNER + " }"),
    Spelling(name="DESCRIBE", template="DESCRIBE ?a WHERE { SERVICE <{url}> " + _INNER + " }"),
    Spelling(
        name="odd whitespace after prefixes",
        template="PREFIX\tex:\r<http://e/>\r\nSELECT * {\tSERVICE\r<{url}>\n" + _INNER + " }",
    ),
    Spelling(name="after an escaped quote", template='SELECT * { ?s ?p "a\\"b" SERVICE <{url}> ' + _INNER + " }"),
    Spelling(name="after a long string", template="SELECT * { ?s ?p '''a''b''' SERVICE <{url}> " + _INNER + " }"),
    Spelling(
        name="after comparisons that look like an IRI",
        template="SELECT * { ?s ?p ?o FILTER(?o < 2) SERVICE <{url}> " + _INNER + " FILTER(?o > 0) }",
    ),
    Spelling(
        name="after a dotted name",
        template="PREFIX ex: <http://a/> SELECT * { ?s ?p ex:p.q.SERVICE<{url}>" + _INNER + " }",
    ),
    Spelling(
        name="variable endpoint", template="SELECT * { BIND(<{url}> AS ?e) SERVICE ?e " + _INNER + " }", live=False
    ),
    Spelling(name="escaped keyword", template="SELECT * { \\u0053ERVICE <{url}> " + _INNER + " }", live=False),
    Spelling(name="escaped +keyword", template="SELECT * { \\u+053ERVICE <{url}> " + _INNER + " }", live=False),
    Spelling(name="escaped brace", template="SELECT * \\u007B SERVICE <{url}> " + _INNER + " }", live=False),
    Spelling(
        name="relative IRI hiding a comment",
        template="SELECT * { ?s ?p ?o . <#a> SERVICE <{url}> " + _INNER + " }",
        live=False,
    ),
    Spelling(name="byte order mark", template="\ufeffSELECT * { SERVICE <{url}> " + _INNER + " }", live=False),
)

UPDATE_SPELLINGS: tuple[Spelling, ...] = (
    Spelling(name="LOAD", template="LOAD <{url}>", live=False),
    Spelling(name="load silent into", template="load silent <{url}> into graph <http://g/>", live=False),
    Spelling(name="LOAD after a CR comment", template="# x\rLOAD <{url}>", live=False),
    Spelling(name="LOAD after a prefix", template="PREFIX ex: <http://e/>\tLoAd <{url}>", live=False),
    Spelling(name="escaped LOAD", template="\\u004cOAD <{url}>", live=False),
    Spelling(name="LOAD after a query", template="SELECT * {} ; LOAD <{url}>", live=False),
    Spelling(name="INSERT DATA", template="INSERT DATA { <http://a/b> <http://a/b> <{url}> }", live=False),
    Spelling(name="DELETE WHERE", template="DELETE WHERE { ?s ?p ?o }", live=False),
    Spelling(name="WITH", template="WITH <http://g/> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }", live=False),
    Spelling(name="CLEAR", template="clear all", live=False),
    Spelling(name="DROP", template="DROP SILENT GRAPH <http://g/>", live=False),
    Spelling(name="CREATE", template="CREATE GRAPH <http://g/>", live=False),
    Spelling(name="ADD", template="ADD DEFAULT TO <http://g/>", live=False),
    Spelling(name="MOVE", template="MOVE <http://g/> TO DEFAULT", live=False),
    Spelling(name="COPY", template="COPY DEFAULT TO <http://g/>", live=False),
)


RUNAWAY_QUERIES: dict[str, str] = {
    "cross product": "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }",
    "path closures": "SELECT (COUNT(*) AS ?n) WHERE { ?a (<http://x/p>|!<http://x/p>)* ?b . "
    "?c (<http://x/p>|!<http://x/p>)* ?d }",
    "deduplicated CONSTRUCT": "CONSTRUCT { <http://x/a> <http://x/b> <http://x/c> } "
    "WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }",
}
"""Queries that run for hours on a graph of a few thousand triples: an aggregate over a cross product
(writes nothing until it ends), property-path closures joined, and a CONSTRUCT whose output is
deduplicated to one triple (written once, then never again)."""


# -- the pieces generated spellings are made of (tests draw them with Hypothesis, benchmarks with a seed) --
GAPS = ("", " ", "\t", "\n", "\r", "\r\n", "# c\r", "# c\n", " # SERVICE <x>\r", "#\r\n ")
"""What may separate two tokens: whitespace, and comments ended by CR, LF or CRLF."""
BEFORE = (
    *("", "?s ?p ?o .", "?s ?p true", "?s ?p 1", "?s ?p ?o", "VALUES ?v { 1 }", "OPTIONAL { ?s ?p ?o }"),
    *("FILTER(?o != 0)", "BIND(1 AS ?z)", '?s ?p "a\\"b"', "?s ?p ?o FILTER(?o < 2)", "?s ?p ex:p.q."),
)
"""What comes before the SERVICE keyword in its group (``true`` and ``1`` glue to it)."""
ENDPOINTS = ("<{url}>", "ep:", ":", ":x", "<sparql>", "<{url}\\u003Fq=1>", "<spar\\u0071l>")
"""How the endpoint is named (the prologue declares ``ep:``, ``:`` and a BASE for these)."""
SILENT = ("", "SILENT", "silent", "sIlEnT")
WRAPS = ("%s", "{ SELECT * { %s } }", "FILTER EXISTS { %s }", "OPTIONAL { %s }", "{ } UNION { %s }")
FORMS = ("SELECT * WHERE", "select*", "ASK", "CONSTRUCT { ?a ?b ?c } WHERE", "DESCRIBE ?a WHERE")
PROLOGUE = ("PREFIX{gap}ep:{gap}<{url}>", "PREFIX : <{url}#>", "BASE <{base}>", "PREFIX ex: <http://a/>")


def compose(choose: Callable[[Sequence[str]], str], shuffle: Callable[[list[str]], list[str]]) -> str:
    """One generated spelling (a template, as :attr:`Spelling.template`): ``choose`` picks one piece of a
    sequence, ``shuffle`` orders the prologue; SERVICE's letters are cased one by one."""

    def gap() -> str:
        return choose(GAPS)

    prologue = [part.replace("{gap}", gap() or " ") for part in shuffle(list(PROLOGUE))]
    keyword = "".join(choose((letter, letter.upper())) for letter in "service") + gap() + choose(SILENT)
    call = choose(BEFORE) + gap() + keyword + gap() + choose(ENDPOINTS) + gap() + "{ ?a ?b ?c }"
    body = choose(WRAPS) % call
    return gap().join(prologue) + gap() + choose(FORMS) + gap() + "{" + gap() + body + gap() + "}"


def probe_store() -> ox.Store:
    """An in-memory store whose triples let every live spelling reach its SERVICE clause."""
    store = ox.Store()
    subject, predicate = ox.NamedNode("http://a/s"), ox.NamedNode("http://a/p")
    for value in (ox.Literal(True), ox.Literal(1), ox.Literal('a"b'), ox.Literal("a''b")):
        store.add(ox.Quad(subject, predicate, value))
    store.add(ox.Quad(subject, predicate, ox.NamedNode("http://a/p.q")))
    return store


def run_raw(store: ox.Store, query: str) -> None:
    """Runs ``query`` on ``store`` as Oxigraph would with no check before it (reading every answer)."""
    try:
        answer = store.query(query)
        if not isinstance(answer, ox.QueryBoolean):
            for _ in answer:
                pass
    except (SyntaxError, OSError, ValueError, RuntimeError):
        pass


# -- the target a federated query would reach ----------------------------------------------------------
EMPTY_RESULT = b'{"head":{"vars":[]},"results":{"bindings":[{}]}}'


class RequestLog:
    def __init__(self, url: str) -> None:
        self.url = url
        """``http://127.0.0.1:PORT/sparql``"""
        self.requests: list[str] = []
        self.lock = threading.Lock()

    def count(self) -> int:
        with self.lock:
            return len(self.requests)


@contextmanager
def request_listener() -> Iterator[RequestLog]:
    """A listening server on a free loopback port, stopped on exit."""
    log: RequestLog

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            self._answer()

        def _answer(self) -> None:
            with log.lock:
                log.requests.append(f"{self.command} {self.path}")
            length = int(self.headers.get("content-length") or 0)
            self.rfile.read(min(length, 1 << 20))
            self.send_response(200)
            self.send_header("Content-Type", "application/sparql-results+json")
            self.send_header("Content-Length", str(len(EMPTY_RESULT)))
            self.end_headers()
            self.wfile.write(EMPTY_RESULT)

        def log_message(self, format: str, *args: object) -> None:
            pass

    with serving(Handler) as server:
        log = RequestLog(f"http://127.0.0.1:{server.server_address[1]}/sparql")
        yield log
