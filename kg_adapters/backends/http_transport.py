"""SPARQL 1.1 protocol over HTTP with ``requests``: one keep-alive session per endpoint.

Why requests and not SPARQLWrapper: a pooled keep-alive session matters on HTTPS endpoints
(SPARQLWrapper opens a new connection per query), we need the response headers (Virtuoso flags a
capped answer only with ``X-SPARQL-MaxRows``) and a total deadline that a slow-dripping server
cannot stretch, and SPARQLWrapper's default User-Agent is refused by WDQS. The exchange itself (the
deadline, the size cap, credentials, HTTP failures as typed errors) is :mod:`kg_adapters.http_exchange`;
this module speaks SPARQL over it (the protocol's fields, the answers' formats).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from kg_adapters import json_text
from kg_adapters.errors import (
    InvalidTermError,
    ResultMismatch,
    TransientError,
)
from kg_adapters.http_exchange import (
    HttpExchange,
    split_credentials,
)
from kg_adapters.json_text import BadJsonText
from kg_adapters.terms import Term, plain_literal
from kg_adapters.transport import SparqlResult

JSON_RESULTS = "application/sparql-results+json"
ACCEPT = f"{JSON_RESULTS}, application/n-triples;q=0.5"
"""SELECT/ASK answers as SPARQL JSON; CONSTRUCT/DESCRIBE as JSON where the engine can (Virtuoso
gives s/p/o bindings), otherwise as N-Triples."""
TRIPLE_VARIABLES = ("subject", "predicate", "object")
_CONTACT = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+|https?://\S+")


def wikimedia_user_agent(user_agent: object, *, service: str, scheme: str) -> str:
    """``user_agent`` if it is descriptive, with contact information (an e-mail address or a URL),
    as the Wikimedia User-Agent policy requires; else InvalidTermError saying how to connect."""
    if not user_agent or not _CONTACT.search(str(user_agent)):
        raise InvalidTermError(
            f"{service} requires a descriptive User-Agent with contact information: "
            f"connect('{scheme}', user_agent='my-project/1.0 (me@example.org)')"
        )
    return str(user_agent)


CREDENTIAL_OPTIONS = ("username", "password_env", "netrc")


def credentials_from_options(endpoint: str, options: dict[str, Any]) -> tuple[str, tuple[str, str] | None]:
    """Pops the credential options and answers (URL without credentials, (user, password) or None).

    Credentials come, first found first: from ``password_env=VAR`` (the password in environment
    variable VAR; the user from ``username=`` or the URL's ``user@``), from the URL itself
    (``user:password@host``), or from ``netrc=FILE`` (the host's ``machine`` entry). Without any,
    requests consults ``$NETRC`` or ``~/.netrc`` for the host, as curl does."""
    url, from_url = split_credentials(endpoint)
    username = options.pop("username", None)
    password_env = options.pop("password_env", None)
    netrc_file = options.pop("netrc", None)
    user = str(username) if username is not None else (from_url[0] if from_url else None)
    if password_env is not None:
        name = str(password_env)
        if name not in os.environ:
            raise InvalidTermError(f"password_env names the environment variable {name!r}, which is not set")
        if not user:
            raise InvalidTermError("password_env needs a user name: username=NAME or user@ in the URL")
        return url, (user, os.environ[name])
    if from_url is not None:
        return url, (user or "", from_url[1])
    if netrc_file is not None:
        import netrc

        try:
            entry = netrc.netrc(str(netrc_file)).authenticators(urlsplit(url).hostname or "")
        except (OSError, netrc.NetrcParseError) as exc:
            raise InvalidTermError(f"cannot read the netrc file {netrc_file}: {exc}") from None
        if entry is None:
            raise InvalidTermError(f"the netrc file {netrc_file} has no entry for {urlsplit(url).hostname}")
        login, _account, password = entry
        return url, (user or login or "", password or "")
    return url, None


def convert_json_term(term: Any) -> Term | None:
    """A SPARQL-JSON term as our term; Virtuoso's ``nodeID://`` blank nodes become ``_:label``.
    Anything that is not a well-formed term (unknown type, a value that is not text, a datatype or
    language that is not text) raises ResultMismatch: it is never dropped or guessed at."""
    if term is None:
        return None
    if not isinstance(term, dict):
        raise ResultMismatch(f"a SPARQL JSON term is not an object: {term!r:.80}")
    kind = term.get("type")
    value = term.get("value")
    if type(value) is not str:
        raise ResultMismatch(f"a SPARQL JSON {kind!s:.20} term has a value that is not a string: {value!r:.80}")
    if kind == "uri":
        return value
    if kind in ("literal", "typed-literal"):
        datatype = term.get("datatype")
        lang = term.get("xml:lang")
        if (datatype is not None and type(datatype) is not str) or (lang is not None and type(lang) is not str):
            raise ResultMismatch(f"a SPARQL JSON literal has a datatype or language that is not a string: {term!r:.80}")
        return plain_literal(value, datatype, lang)
    if kind == "bnode":
        return "_:" + value.removeprefix("nodeID://")
    raise ResultMismatch(f"a SPARQL JSON term of unknown type {kind!r:.40}")


def remote_json(body: bytes, *, document: str, body_name: str) -> Any:
    """The JSON of a remote answer's ``body``. JSON that parses but cannot be used (too deep, text that
    is not Unicode) is ResultMismatch: asking again brings the same. A body that is not JSON was cut
    short on the way: TransientError. ``document`` and ``body_name`` name what was read in messages."""
    try:
        return json_text.loads(body)
    except BadJsonText as exc:
        raise ResultMismatch(f"{document} that cannot be read: {exc}") from exc
    except ValueError as exc:
        raise TransientError(f"malformed or truncated {body_name} ({len(body)} bytes): {exc}") from exc


def parse_json_results(body: bytes, *, capped: bool = False) -> SparqlResult:
    """Parses SPARQL 1.1 JSON results. A body that is not JSON is treated as cut short
    (TransientError); JSON that is not a result document -- a ``boolean`` that is not true/false,
    variables that are not names, a binding of a variable the head does not list, a malformed
    term -- raises ResultMismatch."""
    data = remote_json(body, document="a SPARQL result document", body_name="SPARQL result body")
    if not isinstance(data, dict):
        raise ResultMismatch(f"a SPARQL result document must be a JSON object, got {type(data).__name__}")
    if "boolean" in data:
        answer = data["boolean"]
        if type(answer) is not bool or "results" in data:
            raise ResultMismatch(f"an ASK answer must be true or false, got {answer!r:.40}")
        return SparqlResult(boolean=answer, size=len(body))
    head, results = data.get("head"), data.get("results")
    names = head.get("vars") if isinstance(head, dict) else None
    bindings = results.get("bindings") if isinstance(results, dict) else None
    if not isinstance(names, list) or not isinstance(bindings, list):
        raise ResultMismatch("a SPARQL result document needs head.vars and results.bindings lists")
    if not all(type(name) is str and name for name in names) or len(set(names)) != len(names):
        raise ResultMismatch(f"head.vars must list distinct variable names, got {names!r:.120}")
    variables = tuple(names)
    rows: list[tuple[Term | None, ...]] = []
    convert = convert_json_term
    for binding in bindings:
        if not isinstance(binding, dict):
            raise ResultMismatch(f"a SPARQL JSON binding is not an object: {binding!r:.80}")
        row: list[Term | None] = []
        bound = 0
        for name in variables:
            term = binding.get(name)
            if term is None:
                row.append(None)
                continue
            bound += 1
            # IRIs are most cells: take them without a call (about 4x faster on big answers)
            if type(term) is dict and term.get("type") == "uri" and type(term.get("value")) is str:
                row.append(term["value"])
            else:
                row.append(convert(term))
        if bound != len(binding):
            extra = sorted(set(binding) - set(variables))
            raise ResultMismatch(f"a binding names variables the head does not list: {extra!r:.80}")
        rows.append(tuple(row))
    return SparqlResult(variables=variables, rows=rows, capped=capped, size=len(body))


def parse_ntriples(body: bytes) -> SparqlResult:
    """A CONSTRUCT/DESCRIBE answer in N-Triples as subject/predicate/object rows."""
    import pyoxigraph as ox

    from kg_adapters.rdf_io import convert_term

    try:
        rows = [
            (convert_term(quad.subject), convert_term(quad.predicate), convert_term(quad.object))
            for quad in ox.parse(body, format=ox.RdfFormat.N_TRIPLES)
        ]
    except SyntaxError as exc:
        raise TransientError(f"malformed or truncated N-Triples body ({len(body)} bytes): {exc}") from exc
    return SparqlResult(variables=TRIPLE_VARIABLES, rows=list(rows), size=len(body))


class HttpSparqlTransport(HttpExchange):
    """Sends SPARQL queries to one endpoint (GET for short queries when ``method="GET"``)."""

    def __init__(
        self,
        endpoint: str,
        *,
        method: str = "POST",
        get_max_bytes: int = 2000,
        headers: Mapping[str, str] | None = None,
        **options: Any,
    ) -> None:
        """``options``: the exchange's (:class:`HttpExchange`: ``timeout``, ``user_agent``, ``session``,
        ``clock``, ``max_response_bytes``, ``auth``); the SPARQL answer formats join ``headers``."""
        if method not in ("GET", "POST"):
            raise InvalidTermError(f"method must be GET or POST, got {method!r}")
        super().__init__(endpoint, headers={"Accept": ACCEPT, **(headers or {})}, **options)
        self.method = method
        self.get_max_bytes = get_max_bytes

    def execute(self, query: str) -> SparqlResult:
        use_get = self.method == "GET" and len(query.encode("utf-8")) <= self.get_max_bytes
        body, headers = self.exchange({"query": query}, use_get=use_get)
        capped = any(name.lower() == "x-sparql-maxrows" for name in headers)
        content_type = headers.get("Content-Type", "").split(";")[0].strip().lower()
        if content_type in ("application/n-triples", "text/plain"):
            return parse_ntriples(body)
        return parse_json_results(body, capped=capped)
