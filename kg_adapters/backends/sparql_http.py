"""Any SPARQL 1.1 endpoint over HTTP (``sparql+http://host:port/path``, ``sparql+https://...``)
and the Wikidata Query Service (``wikidata:``).

Every operation is answered with batched VALUES queries (ids chunked to the dialect's limit) and
every answer that can exceed the endpoint's row cap is paged (stable ORDER BY + LIMIT/OFFSET);
an answer the endpoint will not page through makes the id chunk split in half, and a single id
still too large raises ResultTooLarge rather than coming back silently incomplete. Each query
goes through a SparqlTransport: HTTP, wrapped by retry and rate-limit transports.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import replace
from typing import Any, TypeVar

from kg_adapters.backends.dialects import Dialect, get_dialect
from kg_adapters.backends.query_log import count_query, logs_query_counts, take_count
from kg_adapters.backends.sparql_graph import Row, SparqlGraph, chunks
from kg_adapters.base import Direction
from kg_adapters.budgets import ascii_integer, check_count, option_count, option_seconds
from kg_adapters.errors import InvalidTermError, QueryError, ResponseTooLarge, ResultMismatch, ResultTooLarge
from kg_adapters.label_index import LabelIndex
from kg_adapters.profiles import Profile, get_profile
from kg_adapters.records import Edge, Literal, Node
from kg_adapters.sparql_terms import check_iri, iri, string_literal, values_block
from kg_adapters.terms import Term
from kg_adapters.transport import SparqlResult, SparqlTransport
from kg_adapters.url import KGUrl

TRIPLE_VARIABLES = ("subject", "predicate", "object")

WDQS_ENDPOINT = "https://query.wikidata.org/sparql"
_PROJECTION = re.compile(r"\s*SELECT\s+(?:DISTINCT\s+)?((?:\?\w+\s+)+)WHERE", re.I)
_SEARCH_CANDIDATES = 2_000
_PER_ID_PROJECTION = re.compile(r"\s*SELECT\s+(?:DISTINCT\s+)?\?x\b(?:\s+\?\w+)*\s+WHERE\b")
_COUNT_PROJECTION = "SELECT ?x (COUNT(*) AS ?n) WHERE"
_PROLOGUE = re.compile(r"\s*(?:(?:PREFIX\s+[^\s:]*:\s*<[^>]*>|BASE\s*<[^>]*>)\s*)*", re.I)
_QUERY_FORM = re.compile(r"\s*(CONSTRUCT|DESCRIBE)\b", re.I)
_ORDER_BY = re.compile(r"\bORDER\s+BY\b", re.I)
MIN_PART = 8
"""Fewest ids in a part of an id chunk sent on its own (``parallel_requests``)."""
_T = TypeVar("_T")
_LIMIT_OR_OFFSET = re.compile(r"\b(LIMIT|OFFSET)\s+\d+\s*$", re.I)


def _total_order(variables: Iterable[str]) -> str:
    """`` ORDER BY`` the text, language and datatype of every variable: a total order. Virtuoso orders
    mixed literal types inconsistently between pages when asked for ORDER BY ?o, so pages overlapped."""
    return " ORDER BY " + " ".join(f"STR({var}) LANG({var}) STR(DATATYPE({var}))" for var in variables)


def _order_of(query: str) -> str:
    """The total order of one of our own SELECT queries, from its projection."""
    match = _PROJECTION.match(query)
    if match is None:
        raise QueryError("only SELECT queries with an explicit projection can be paged")
    return _total_order(match.group(1).split())


_VIRTUOSO_TRIPLE_VARIABLES = ("s", "p", "o")
_FORM = re.compile(r"\s*(SELECT|ASK|CONSTRUCT|DESCRIBE)\b", re.I)
_PROJECTION_END = re.compile(r"\b(WHERE|FROM)\b|\{", re.I)


def projection(query: str) -> tuple[str, ...] | None:
    """The variable names a SELECT projects, in order (``?x``, ``$x`` and ``(... AS ?x)``); None for
    ``SELECT *`` or text this reading cannot follow."""
    _prologue, body = _split_prologue(query)
    match = re.match(r"\s*SELECT\s+(?:(?:DISTINCT|REDUCED)\s+)?", body, re.I)
    if match is None:
        return None
    names: list[str] = []
    depth = 0
    text = body[match.end() :]
    position = 0
    while position < len(text):
        char = text[position]
        if depth == 0 and (end := _PROJECTION_END.match(text, position)) is not None and end.start() == position:
            return tuple(names) if names else None
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "*" and depth == 0:
            return None
        elif char in "?$":
            word = re.match(r"[?$](\w+)", text[position:])
            if word is not None:
                preceded = re.search(r"\bAS\s*$", text[:position], re.I)
                if depth == 0 or (depth == 1 and preceded):
                    names.append(word.group(1))
                position += word.end()
                continue
        position += 1
    return None


def fit_result(
    query: str, result: SparqlResult, endpoint: str, *, variables: Sequence[str] | None = None
) -> SparqlResult:
    """``result`` checked against what ``query`` asks, its rows in the query's own variable order.

    An ASK must be answered true or false; a SELECT with rows binding exactly its projected
    variables (matched by name, in any order the server lists them); a CONSTRUCT/DESCRIBE with
    triples. Anything else -- a boolean for a SELECT, a variable missing or extra, N-Triples (or an
    empty ``text/plain`` body) for a SELECT -- raises ResultMismatch, never a plausible wrong answer."""
    form_match = _FORM.match(_split_prologue(query)[1])
    form = form_match.group(1).upper() if form_match else ""
    if form == "ASK":
        if result.boolean is None:
            raise ResultMismatch(f"{endpoint} answered an ASK query without a true/false answer")
        return result
    if result.boolean is not None and form in ("SELECT", "CONSTRUCT", "DESCRIBE"):
        raise ResultMismatch(f"{endpoint} answered a {form} query with a boolean")
    if form in ("CONSTRUCT", "DESCRIBE"):
        if result.variables == TRIPLE_VARIABLES:
            return result
        if sorted(result.variables) == sorted(_VIRTUOSO_TRIPLE_VARIABLES):  # Virtuoso's s/p/o JSON bindings
            return _reorder(result, _VIRTUOSO_TRIPLE_VARIABLES, rename=TRIPLE_VARIABLES)
        raise ResultMismatch(f"{endpoint} answered a {form} query with variables {list(result.variables)!r:.100}")
    if form != "SELECT":
        return result
    wanted = tuple(variables) if variables is not None else projection(query)
    if wanted is None:  # SELECT *: the names are the server's to list
        return result
    if sorted(result.variables) != sorted(wanted):
        missing = sorted(set(wanted) - set(result.variables))
        extra = sorted(set(result.variables) - set(wanted))
        raise ResultMismatch(
            f"{endpoint} answered variables {list(result.variables)!r:.100} to a query for {list(wanted)!r:.100}"
            f" (missing {missing!r:.60}, unasked {extra!r:.60})"
        )
    return _reorder(result, wanted)


def _reorder(result: SparqlResult, names: Sequence[str], *, rename: Sequence[str] | None = None) -> SparqlResult:
    """``result`` with its columns in the order of ``names`` (optionally renamed)."""
    target = tuple(rename or names)
    if tuple(result.variables) == tuple(names):
        return result if rename is None else replace(result, variables=target)
    positions = [result.variables.index(name) for name in names]
    rows = [tuple(row[i] for i in positions) for row in result.rows]
    return replace(result, variables=target, rows=rows)


def _count_of(value: object, endpoint: str) -> int:
    """A ``COUNT(*)`` cell as an int; anything else is a ResultMismatch."""
    count = ascii_integer(value.value) if isinstance(value, Literal) else None
    if count is None:
        raise ResultMismatch(f"{endpoint} answered a count that is not a non-negative integer: {value!r:.60}")
    return count


def _split_prologue(sparql: str) -> tuple[str, str]:
    """(PREFIX/BASE declarations, the rest) of a query."""
    match = _PROLOGUE.match(sparql)
    end = match.end() if match else 0
    return sparql[:end], sparql[end:]


@logs_query_counts
class RemoteSparqlGraph(SparqlGraph):
    """A SPARQL endpoint behind :class:`KnowledgeGraph`, reached through ``transport``."""

    relation_alias_predicates: tuple[str, ...] = ()
    """No aliases from an endpoint: every alias of every property in every language (WDQS holds some 10^5)
    would multiply what the one-time relation fetch asks a public server for."""

    def __init__(
        self,
        transport: SparqlTransport,
        *,
        profile: str | Profile = "generic",
        dialect: str | Dialect = "generic",
        max_rows: int | None = None,
        values_chunk: int | None = None,
        max_answer_bytes: int | None = None,
        parallel_requests: int | None = None,
    ) -> None:
        super().__init__(get_profile(profile))
        self.dialect = dialect if isinstance(dialect, Dialect) else get_dialect(dialect)
        self.transport = transport
        self.values_chunk = values_chunk or self.dialect.values_chunk
        self.page_size = max_rows or self.dialect.row_cap
        self.explicit_pages = max_rows is not None
        """With ``max_rows`` every query is paged at that size (bounded answers per request)."""
        self.queries_sent = 0
        self.max_answer_bytes = max_answer_bytes
        """Most bytes read for one raw :meth:`query`, all of its pages together (``max_response_bytes``
        bounds each page; without this an answer paged past the endpoint's row cap would grow unbounded)."""
        self.parallel_requests = check_count(parallel_requests, "parallel_requests", minimum=1) or (
            self.dialect.parallel_requests
        )
        """Most requests one ``neighbors`` call has in flight (see ``Dialect.parallel_requests``)."""
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        """The endpoint URL, without credentials."""
        return self.transport.endpoint

    def _answerer(self) -> str:
        return self.endpoint

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.endpoint!r}, profile={self._profile.name!r}, dialect={self.dialect.name!r})"
        )

    # -- querying --------------------------------------------------------------------------------
    def _execute(self, query: str, *, variables: Sequence[str] | None = None) -> SparqlResult:
        """One query, its answer checked against what the query asks (see :func:`fit_result`);
        ``variables`` names the projection of a ``SELECT *`` whose variables the caller knows."""
        with self._pool_lock:
            self.queries_sent += 1
        count_query()
        return fit_result(query, self.transport.execute(query), self.endpoint, variables=variables)

    def _only_asked(self, rows: list[Row], chunk: Collection[str]) -> list[Row]:
        """``rows`` of a per-id query (``?x`` first, ``VALUES ?x`` the chunk), refusing a row about
        an id the query did not ask for: a misbehaving endpoint must not add answers."""
        asked = chunk if isinstance(chunk, (set, frozenset, dict)) else set(chunk)
        prefix = self.dialect.blank_node_prefix
        for row in rows:
            x = row[0] if row else None
            if x in asked:
                continue
            if prefix and isinstance(x, str) and x.startswith("_:") and prefix + x[2:] in asked:
                continue
            raise ResultMismatch(f"{self.endpoint} answered a row about {x!r:.80}, which the query did not ask about")
        return rows

    def _select_split(self, build: Callable[[Sequence[str]], str], chunk: Sequence[str]) -> list[Row]:
        return self._only_asked(super()._select_split(build, chunk), chunk)

    def _select(self, query: str) -> list[Row]:
        """Asks once without ORDER BY (sorting costs the engine dearly); only an answer that hit the
        row cap (flagged by the engine, or as long as the cap) is fetched again in ordered pages."""
        if self.explicit_pages:
            return self._paged(query, self.page_size or 1)
        result = self._execute(query)
        cap = self.dialect.row_cap
        got = len(result.rows)
        if not result.capped and (cap is None or got < cap):
            return result.rows
        ceiling = self.dialect.max_sorted_rows
        if ceiling is not None and got >= ceiling:
            # Ordered paging could never reach a second page (Virtuoso: cap == sort ceiling):
            # let the caller split the id chunk instead of fetching the same rows again.
            raise ResultTooLarge(f"an answer from {self.endpoint} exceeds {ceiling} rows")
        return self._paged(query, max(1, min(got, self.page_size or got)))

    def _sample(self, query: str) -> list[Row]:
        """One request: an answer the endpoint capped is still a sample."""
        return self._execute(query).rows

    def _select_chunked(self, build: Callable[[Sequence[str]], str], iris: list[str]) -> Iterator[Row]:
        """Per-id queries without sorting: each chunk is asked once; when the endpoint caps the
        answer, one ``COUNT(*) ... GROUP BY ?x`` says how many rows each id has, the rows of ids
        already complete are kept and the others are packed into chunks that fit under the cap.
        (Sorted paging would throw capped answers away, and Virtuoso's sort ceiling equals its cap.)"""
        if self.explicit_pages:
            yield from super()._select_chunked(build, iris)
            return
        for chunk in chunks(iris, self.values_chunk):
            query = build(chunk)
            first = self._execute(query)
            self._only_asked(first.rows, chunk)
            cap = len(first.rows)
            if not first.capped and (self.dialect.row_cap is None or cap < self.dialect.row_cap):
                yield from first.rows
                continue
            if not _PER_ID_PROJECTION.match(query) or cap == 0:
                yield from self._select_split(build, chunk)
                continue
            counted = self._execute(_PER_ID_PROJECTION.sub(_COUNT_PROJECTION, query, count=1) + " GROUP BY ?x")
            if counted.capped and len(counted.rows) >= cap:  # even the counts were cut: split the chunk
                yield from self._select_split(build, chunk)
                continue
            counts: dict[Term | None, int] = {}
            for counted_id, counted_rows, *_ in self._only_asked(counted.rows, chunk):
                counts[counted_id] = _count_of(counted_rows, self.endpoint)
            held = Counter(row[0] for row in first.rows)
            complete = {x for x, rows_held in held.items() if counts.get(x) == rows_held}
            yield from (row for row in first.rows if row[0] in complete)
            batch: list[str] = []
            size = 0
            for member in chunk:
                expected = counts.get(member, 0)
                if expected == 0 or member in complete:
                    continue
                if expected >= cap:  # one id alone fills the cap: ordered paging (or ResultTooLarge) for it
                    yield from self._select_split(build, [member])
                    continue
                if size + expected >= cap:
                    yield from self._unordered(build, batch)
                    batch, size = [], 0
                batch.append(member)
                size += expected
            if batch:
                yield from self._unordered(build, batch)

    def _collect_edges(
        self,
        side: Direction,
        iris: list[str],
        relation_iris: list[str] | None,
        literals: bool,
        canonical_of: dict[str, str],
        result: dict[str, list[Edge]],
    ) -> None:
        """With a dialect of ``grouped_edges`` (and no ``max_rows``), one query per id chunk brings
        the IRI ends of each id's edges as one row per (id, relation) -- ``GROUP_CONCAT`` of the IRIs
        and their ``COUNT`` -- and the other ends (literals, blank nodes) as plain rows. IRIs hold no
        spaces, so a concatenation splits back exactly; a group whose parts do not number its count
        (an engine that cut a long string, an IRI with a space) has its chunk asked again row by row.
        A chunk whose answer meets the row cap is halved; one id alone is asked row by row."""
        if not self.dialect.grouped_edges or self.explicit_pages:
            super()._collect_edges(side, iris, relation_iris, literals, canonical_of, result)
            return
        build = self._grouped_edge_query(side, relation_iris, literals)
        fixed = relation_iris[0] if relation_iris is not None and len(relation_iris) == 1 else None
        parts = [part for chunk in chunks(iris, self.values_chunk) for part in self._parts(chunk)]
        for answers in self._side_by_side(lambda part: list(self._grouped_answers(build, part)), parts):
            for asked, rows in answers:
                edges = None if rows is None else self._grouped_edges(side, rows, fixed, canonical_of)
                if edges is None:
                    super()._collect_edges(side, list(asked), relation_iris, literals, canonical_of, result)
                    continue
                for node, found in edges:
                    result[node].extend(found)

    def _parts(self, chunk: Sequence[str]) -> list[Sequence[str]]:
        """``chunk`` cut into at most ``parallel_requests`` parts of at least ``MIN_PART`` ids."""
        count = min(self.parallel_requests, len(chunk) // MIN_PART) or 1
        size = -(-len(chunk) // count)
        return list(chunks(chunk, size))

    def _side_by_side(self, ask: Callable[[Sequence[str]], _T], parts: list[Sequence[str]]) -> list[_T]:
        """``ask(part)`` for every part, at most ``parallel_requests`` at once, answers in the parts'
        order. Every part is finished (or failed) before this returns or raises the first part's
        error, so nothing is left running; the workers' requests count toward this operation."""
        if self.parallel_requests == 1 or len(parts) == 1:
            return [ask(part) for part in parts]
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.parallel_requests, thread_name_prefix="kga-sparql")
            pool = self._pool

        sent: list[int] = []

        def counted(part: Sequence[str]) -> _T:
            take_count()
            try:
                return ask(part)
            finally:
                sent.append(take_count())

        futures = [pool.submit(counted, part) for part in parts]
        wait(futures)
        count_query(sum(sent))
        return [future.result() for future in futures]

    def _grouped_edge_query(
        self, side: Direction, relation_iris: list[str] | None, literals: bool
    ) -> Callable[[Sequence[str]], str]:
        """The query text of :meth:`_collect_edges` for an id chunk: projection ``?x [?r] ?o ?os ?n``."""
        single = relation_iris[0] if relation_iris is not None and len(relation_iris) == 1 else None
        predicate = iri(single) if single is not None else "?r"
        keys = "?x" if single is not None else "?x ?r"
        relation_values = values_block("r", relation_iris) if relation_iris and single is None else ""
        hidden = self._hidden_relations_filter() if relation_iris is None else ""
        grouped = f"?x {predicate} ?t" if side == "out" else f"?t {predicate} ?x"
        plain = f"?x {predicate} ?o" if side == "out" else f"?o {predicate} ?x"
        others = "!isIRI(?o) || isBlank(?o)" if side == "out" and literals else "isBlank(?o)"
        # A subject is an IRI or a blank node; Virtuoso plans ``isIRI`` on it as a scan (10x slower).
        named = "isIRI(?t) && !isBlank(?t)" if side == "out" else "!isBlank(?t)"
        concat = f"(GROUP_CONCAT(STR(?t); separator={string_literal(' ')}) AS ?os) (COUNT(?t) AS ?n)"

        def build(chunk: Sequence[str]) -> str:
            ids = values_block("x", chunk)
            return (
                f"SELECT {keys} ?o ?os ?n WHERE {{ {{ SELECT {keys} {concat} WHERE {{ {ids} {relation_values} "
                f"{grouped} FILTER({named}) {hidden} }} GROUP BY {keys} }} UNION "
                f"{{ {ids} {relation_values} {plain} FILTER({others}) {hidden} }} }}"
            )

        return build

    def _grouped_answers(
        self, build: Callable[[Sequence[str]], str], chunk: Sequence[str]
    ) -> Iterator[tuple[Sequence[str], list[Row] | None]]:
        """(ids, rows) for ``chunk``, halved while the answer meets the row cap; rows None for one
        id whose answer alone meets it (the caller asks it row by row)."""
        result = self._execute(build(chunk))
        rows = self._only_asked(result.rows, chunk)
        cap = self.dialect.row_cap
        if not result.capped and (cap is None or len(rows) < cap):
            yield chunk, rows
        elif len(chunk) == 1:
            yield chunk, None
        else:
            middle = len(chunk) // 2
            yield from self._grouped_answers(build, chunk[:middle])
            yield from self._grouped_answers(build, chunk[middle:])

    def _grouped_edges(
        self, side: Direction, rows: list[Row], fixed: str | None, canonical_of: dict[str, str]
    ) -> list[tuple[str, list[Edge]]] | None:
        """(canonical id, its edges) for the groups and rows of one grouped answer; None when a
        group's parts do not number its count (checked for every group before any edge is built)."""
        entity_id, relation_id = self._profile.entity_id, self._profile.relation_id
        groups: list[tuple[str, str, list[str] | None, Term | None]] = []
        for row in rows:
            asked, other, joined, count = row[0], row[-3], row[-2], row[-1]
            self._asked(asked, canonical_of)
            x = str(asked)
            relation = fixed if fixed is not None else self._relation_of(row[1])
            if joined is None:
                groups.append((x, relation, None, other))
                continue
            if not isinstance(joined, Literal):
                raise ResultMismatch(f"{self.endpoint} answered a concatenation that is not a literal")
            parts = joined.value.split(" ")
            if len(parts) != _count_of(count, self.endpoint):
                return None
            groups.append((x, relation, parts, None))
        relation_ids: dict[str, str] = {}
        compact: dict[str, str] = {}
        found: list[tuple[str, list[Edge]]] = []
        for x, relation_iri, named, other in groups:
            known = relation_ids.get(relation_iri)
            if known is not None:
                relation = known
            else:
                relation = relation_ids[relation_iri] = relation_id(relation_iri)
            node = canonical_of[x]
            ends: list[Node]
            if named is not None:  # IRIs only (the query keeps blank nodes out of the groups)
                ends = [compact.get(part) or compact.setdefault(part, entity_id(part)) for part in named]
            elif other is not None:
                ends = [other]
            else:
                raise self._mismatch("an edge without its other end", (x, relation_iri))
            if side == "out":
                found.append((node, [Edge(head=node, relation=relation, tail=end) for end in ends]))
            else:
                if any(isinstance(end, Literal) for end in ends):  # a literal is never a subject
                    raise self._mismatch("a literal where the query asks for a subject", ends)
                found.append((node, [Edge(head=str(head), relation=relation, tail=node) for head in ends]))
        return found

    def _unordered(self, build: Callable[[Sequence[str]], str], batch: list[str]) -> list[Row]:
        result = self._execute(build(batch))
        return self._select_split(build, batch) if result.capped else result.rows

    def _select_at_most(self, query: str, limit: int) -> list[Row]:
        """At most ``limit`` rows of ``query``, any of them (for candidate lists)."""
        if self.page_size is None:
            result = self._execute(f"{query} LIMIT {limit}")
            if not result.capped:
                return result.rows
            page = max(1, len(result.rows))
        else:
            page = self.page_size
        return self._pages(query, _order_of(query), page, at_most=limit)

    def _paged(self, query: str, page: int) -> list[Row]:
        """Every row of ``query``, by stable ORDER BY + LIMIT/OFFSET pages."""
        return self._pages(query, _order_of(query), page)

    def _pages(
        self,
        query: str,
        order: str,
        page: int,
        *,
        at_most: int | None = None,
        distinct_rows: bool = True,
        variables: Sequence[str] | None = None,
        max_bytes: int | None = None,
    ) -> list[Row]:
        """Pages of ``query`` in ``order`` until exhausted (or ``at_most`` rows). Every page must bring
        something new (a server that ignores OFFSET would otherwise be paged forever): with
        ``distinct_rows`` (our own queries, whose rows are distinct) a full page of rows already seen
        is a ResultMismatch; otherwise (raw queries, whose rows may repeat) a page equal to the one
        before it with more than one distinct row is. With ``max_bytes`` the pages' bodies together
        may not exceed that many bytes (ResponseTooLarge)."""
        ceiling = self.dialect.max_sorted_rows
        rows: list[Row] = []
        seen: set[Row] = set()
        previous: list[Row] | None = None
        offset = 0
        while True:
            if at_most is not None:
                if offset >= at_most:
                    return rows[:at_most]
                page = min(page, at_most - offset)
            size = page if ceiling is None else min(page, ceiling - offset)
            if size <= 0:
                raise ResultTooLarge(
                    f"an answer from {self.endpoint} has more than {ceiling} rows, the most "
                    f"{self.dialect.name} lets a client page through; narrow the request"
                )
            result = self._execute(f"{query}{order} LIMIT {size} OFFSET {offset}", variables=variables)
            if max_bytes is not None:
                max_bytes -= result.size
                if max_bytes < 0:
                    raise ResponseTooLarge(
                        f"an answer from {self.endpoint} paged past max_response_bytes={self.max_answer_bytes} "
                        "bytes; narrow the query, or raise the option if such answers are expected"
                    )
            got = len(result.rows)
            if got > size:
                raise ResultMismatch(f"{self.endpoint} answered {got} rows to a query with LIMIT {size}")
            if got and offset:
                stale = (
                    seen.issuperset(result.rows)
                    if distinct_rows
                    else result.rows == previous and len(set(result.rows)) > 1
                )
                if stale:
                    raise ResultMismatch(
                        f"{self.endpoint} answered the page at OFFSET {offset} with rows it had already sent: "
                        "the endpoint ignores OFFSET, so the answer cannot be paged"
                    )
            if distinct_rows:
                seen.update(result.rows)
            previous = result.rows
            rows.extend(result.rows)
            if result.capped and 0 < got < size:
                page = got  # the server's cap is below our page size: keep paging at its size
            elif got < size:
                return rows
            offset += got

    def query(self, sparql: str) -> list[dict[str, Node | bool]]:
        """Raw SPARQL (SELECT or ASK), sent as written; a capped answer raises ResultTooLarge."""
        self._check_open()
        if not isinstance(sparql, str):
            raise InvalidTermError("the query must be a string")
        result = self._execute(sparql)
        if result.boolean is not None:
            return [{"boolean": result.boolean}]
        prologue, body = _split_prologue(sparql)
        rows = result.rows
        if result.capped:
            budget = None if self.max_answer_bytes is None else self.max_answer_bytes - result.size
            rows = self._page_raw(prologue, body, result.variables, max(1, len(rows)), max_bytes=budget)
        names = result.variables
        if _QUERY_FORM.match(body):
            names = TRIPLE_VARIABLES  # fit_result put CONSTRUCT rows in subject, predicate, object order
        return [{name: value for name, value in zip(names, row, strict=True) if value is not None} for row in rows]

    def _page_raw(
        self, prologue: str, body: str, variables: Sequence[str], page: int, *, max_bytes: int | None = None
    ) -> list[Row]:
        """Pages a raw SELECT the endpoint capped: in the query's own ORDER BY when it has one,
        otherwise wrapped in a sub-select under a total order of its variables."""
        if _LIMIT_OR_OFFSET.search(body):
            raise ResultTooLarge(f"{self.endpoint} capped an answer to a query that has its own LIMIT/OFFSET")
        if _ORDER_BY.search(body):
            return self._pages(
                f"{prologue}{body}", "", page, distinct_rows=False, variables=variables, max_bytes=max_bytes
            )
        order = _total_order(f"?{v}" for v in variables)
        wrapped = f"{prologue}SELECT * WHERE {{ {body} }}"
        return self._pages(wrapped, order, page, distinct_rows=False, variables=variables, max_bytes=max_bytes)

    def _blank_node_edges(
        self, blanks: Sequence[str], side: Direction, relation_iris: Sequence[str] | None
    ) -> Iterator[tuple[str, str, Term]]:
        prefix = self.dialect.blank_node_prefix
        if prefix is None or not blanks:
            return
        by_iri = {check_iri(prefix + blank[2:]): blank for blank in blanks}
        relation_values = values_block("r", relation_iris) if relation_iris else ""
        pattern = "?x ?r ?o" if side == "out" else "?o ?r ?x"

        def build(chunk: Sequence[str]) -> str:
            return f"SELECT ?x ?o ?r WHERE {{ {values_block('x', chunk)} {relation_values} {pattern} }}"

        for x, other, relation, *_ in self._select_chunked(build, list(by_iri)):
            if other is None:
                raise self._mismatch("an edge without its other end", (x, relation))
            yield (
                (x if isinstance(x, str) and x.startswith("_:") else self._asked(x, by_iri)),
                self._relation_of(relation),
                other,
            )

    # -- search ------------------------------------------------------------------------------------
    def _entity_hits(self, text: str, limit: int) -> list[tuple[str, str, int]]:
        """Fetches names containing the query's longest content word from the endpoint (stop words
        such as "where" or "the" left out), then ranks them with the tiers of the local index (exact,
        prefix, every word, every content word). Matching at the endpoint is case-insensitive but not
        accent-insensitive."""
        from kg_adapters.label_index import content_words

        tokens = re.findall(r"[^\W_]+", unicodedata.normalize("NFC", text.casefold()))
        if not tokens or limit <= 0:
            return []
        token = max(content_words(tokens), key=len)
        predicates = values_block("p", self._profile.label_predicates)
        spaced = " ".join(text.split())
        exact_forms = dict.fromkeys([spaced, spaced.title(), spaced.lower()])
        exact = " ".join(f"{string_literal(form)} {string_literal(form)}@en" for form in exact_forms if form)
        # Exact names first (answered from the engine's object index), then a bounded scan for the token.
        queries = [
            f"SELECT ?x ?l WHERE {{ {predicates} VALUES ?l {{ {exact} }} ?x ?p ?l FILTER(isIRI(?x)) }}",
            f"SELECT ?x ?l WHERE {{ {predicates} ?x ?p ?l FILTER(isIRI(?x) && isLiteral(?l) && "
            f"CONTAINS(LCASE(STR(?l)), {string_literal(token)})) }}",
        ]
        candidates = [row for query in queries for row in self._named(self._select_at_most(query, _SEARCH_CANDIDATES))]
        index = LabelIndex()
        try:
            index.add(candidates)
            return index.ranked(text, limit)
        finally:
            index.close()

    relation_list_cap = 100_000
    """Most distinct relations fetched for ``search_relations`` (once per connection, then indexed
    locally); a graph with more raises ResultTooLarge rather than searching an incomplete list."""

    def _all_relations(self) -> list[str]:
        """The endpoint's relations, fetched once: Wikidata's direct-claim properties where the graph
        describes them (``wikibase:directClaim``; listing the predicates of every triple would time out
        on WDQS), otherwise ``SELECT DISTINCT ?p`` over the graph, at most ``relation_list_cap``."""
        queries = ["SELECT DISTINCT ?p WHERE { ?s ?p ?o }"]
        if self._profile.statements is not None:
            queries.insert(0, "SELECT DISTINCT ?p WHERE { ?property <http://wikiba.se/ontology#directClaim> ?p }")
        for query in queries:
            rows = self._select_at_most(query, self.relation_list_cap + 1)
            if len(rows) > self.relation_list_cap:
                raise ResultTooLarge(
                    f"{self.endpoint} has more than {self.relation_list_cap} relations; search_relations "
                    "indexes at most that many (raise RemoteSparqlGraph.relation_list_cap)"
                )
            found = sorted({self._relation_of(p) for p, *_ in rows})
            if found:
                return found
        return []

    def _open_label_index(self) -> LabelIndex:  # pragma: no cover - search is overridden
        raise NotImplementedError

    def close(self) -> None:
        super().close()
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)
        self.transport.close()


# -- construction from URLs ---------------------------------------------------------------------------
def build_remote(
    endpoint: str,
    options: dict[str, Any],
    *,
    default_dialect: str,
    default_profile: str,
    default_concurrency: int | None,
) -> RemoteSparqlGraph:
    """A remote graph with the transport stack the options ask for (HTTP, rate limit, retry)."""
    from kg_adapters.backends.http_transport import HttpSparqlTransport, credentials_from_options
    from kg_adapters.http_exchange import DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_USER_AGENT
    from kg_adapters.wrappers.stack import WRAPPER_OPTIONS, guarded

    profile = options.pop("profile", default_profile)
    dialect = get_dialect(str(options.pop("dialect", default_dialect)))
    timeout = option_seconds(options, "timeout", positive=True)
    max_rows = option_count(options, "max_rows", minimum=1)
    max_sorted_rows = option_count(options, "max_sorted_rows", minimum=1)
    if max_sorted_rows is not None:
        dialect = replace(dialect, max_sorted_rows=max_sorted_rows)
    values_chunk = option_count(options, "values_chunk", minimum=1)
    parallel_requests = option_count(options, "parallel_requests", minimum=1)
    max_response_bytes = option_count(options, "max_response_bytes", minimum=1)
    endpoint, auth = credentials_from_options(endpoint, options)
    wrapper_options = {name: options.pop(name) for name in WRAPPER_OPTIONS if name in options}
    user_agent = options.pop("user_agent", DEFAULT_USER_AGENT)
    method = str(options.pop("method", dialect.method)).upper()
    default_graph = options.pop("default_graph", None)
    session = options.pop("session", None)
    if options:
        raise TypeError(f"unknown option(s) for a SPARQL endpoint: {', '.join(sorted(options))}")
    if method not in ("GET", "POST"):
        raise InvalidTermError(f"method must be GET or POST, got {method!r}")
    if default_graph is not None:
        check_iri(default_graph)
        endpoint += ("&" if "?" in endpoint else "?") + "default-graph-uri=" + _quote(str(default_graph))
    transport: SparqlTransport = HttpSparqlTransport(
        endpoint,
        timeout=timeout if timeout is not None else 60.0,
        user_agent=user_agent,
        method=method,
        session=session,
        max_response_bytes=max_response_bytes or DEFAULT_MAX_RESPONSE_BYTES,
        auth=auth,
    )
    transport = guarded(transport, wrapper_options, default_concurrency=default_concurrency)
    return RemoteSparqlGraph(
        transport,
        profile=profile,
        dialect=dialect,
        max_rows=max_rows,
        values_chunk=values_chunk,
        max_answer_bytes=max_response_bytes or DEFAULT_MAX_RESPONSE_BYTES,
        parallel_requests=parallel_requests,
    )


def _quote(value: str) -> str:
    from urllib.parse import quote

    return quote(value, safe="")


class SparqlEndpoint:
    """Registry factory for ``sparql+http://`` and ``sparql+https://`` URLs."""

    @staticmethod
    def endpoint_url(scheme: str, host: str, path: str) -> str:
        if not host:
            raise InvalidTermError(f"a SPARQL endpoint URL needs a host: {scheme}://host:port/path")
        return f"{scheme.removeprefix('sparql+')}://{host}{path}"

    @classmethod
    def from_url(cls, url: KGUrl, **options: Any) -> RemoteSparqlGraph:
        return build_remote(
            cls.endpoint_url(url.scheme, url.host, url.path),
            dict(options),
            default_dialect="generic",
            default_profile="generic",
            default_concurrency=None,
        )


class WikidataQueryService:
    """Registry factory for ``wikidata:``: WDQS with the wikidata profile, one query at a time,
    and a descriptive User-Agent with contact information, as the Wikimedia policy requires."""

    @classmethod
    def from_url(cls, url: KGUrl, **options: Any) -> RemoteSparqlGraph:
        from kg_adapters.backends.http_transport import wikimedia_user_agent

        settings = dict(options)
        endpoint = str(settings.pop("base_url", WDQS_ENDPOINT))
        wikimedia_user_agent(settings.get("user_agent"), service="the Wikidata Query Service", scheme="wikidata:")
        return build_remote(
            endpoint, settings, default_dialect="wdqs", default_profile="wikidata", default_concurrency=1
        )
