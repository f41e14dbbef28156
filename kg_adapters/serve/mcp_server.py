"""``kga mcp``: the graph as Model Context Protocol tools for LLM agents (official MCP Python SDK).

Tools mirror the Python API with its names and argument names (``search``, ``search_relations``,
``describe``, ``neighbors``, ``relations``, ``paths``, ``shortest_paths``, ``subgraph``, ``sparql``), plus
``schema`` (the graph's relations with counts, examples and the types of their ends, for planning).
Every parameter is described with its default, the server's caps are the schema's ``maximum``, and every
answer has an output schema (:mod:`kg_adapters.serve.mcp_schema`). Answers are sized for a context
window (:mod:`kg_adapters.serve.answers`): compact JSON, entity labels once per answer in ``labels``,
whole items cut at ``--max-chars`` with ``truncated``, ``next_cursor`` and a ``more`` line saying how to
get the rest. An unknown entity or relation is a tool error naming it with the closest matches. Every
call is bounded by ``timeout``; bad arguments and backend failures come back as tool errors
(``isError``) with a one-line message, and the server keeps serving.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from kg_adapters._version import __version__
from kg_adapters.base import EmbeddedSparql, GraphCatalog, SparqlQueryable, check_direction
from kg_adapters.errors import InvalidTermError, KGError
from kg_adapters.records import Edge, Entity, Path, PathResult
from kg_adapters.serve import check_limits, require_extra
from kg_adapters.serve.answers import (
    DEFAULT_MAX_CHARS,
    MIN_MAX_CHARS,
    Cursors,
    Item,
    Shaper,
    edge_ids,
    grouped,
    page,
    shortened,
)
from kg_adapters.serve.mcp_notes import (
    dead_end,
    entity_text,
    no_entity_note,
    no_relation_note,
    not_connected,
    one_line,
    other_way_note,
)
from kg_adapters.serve.readonly import query_form

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from kg_adapters.base import KnowledgeGraph
    from kg_adapters.serve.current import CurrentGraph
    from kg_adapters.serve.workers import WorkerPool

NOT_AN_ID = "not an entity id of this graph"
Direction = Literal["out", "in", "both"]
_T = TypeVar("_T")

INSTRUCTIONS = (
    "Tools over one knowledge graph for knowledge-graph question answering. Typical flow: find the topic "
    "entity of the question with `search` and the relations you need with `search_relations` (it understands "
    "paraphrases: 'where was he born'), see which relations an entity has, by direction, with `relations`, "
    "follow a relation path with `paths` (out: head to tail, the default; in: tail to head), connect two "
    "entities with `shortest_paths`, fetch a small `subgraph`, or plan with `schema` (relations with counts, "
    "examples and the types of their heads and tails). Ids are the graph's own (Freebase m.0d05w3, Wikidata "
    "Q42); edges are [head, relation, tail] in the graph's direction and `labels` names their entities once. "
    "Answers are bounded: `truncated: true` means more exists, and `more` says how to get it (a narrower "
    "call, or the same call with cursor=next_cursor). An empty answer may carry a `note` saying why (a relation "
    "walked the wrong way) and what to call instead."
)


def require_mcp() -> None:
    from kg_adapters.extras import install_command

    require_extra(("mcp.server.mcpserver",), "kga mcp needs the MCP Python SDK", install_command("mcp"))


@dataclass(frozen=True, kw_only=True)
class ToolBudgets:
    max_rows: int = 500
    """Most entities, edges, paths or rows in one answer."""
    max_hops: int = 3
    """Most hops for ``shortest_paths`` and ``subgraph``."""
    timeout: float = 30.0
    """Seconds one tool call may take."""
    max_chars: int = DEFAULT_MAX_CHARS
    """Characters of one answer's JSON (about 4 per token); longer answers are cut into pages."""

    def __post_init__(self) -> None:
        check_limits(self, counts=("max_rows", "max_hops", "max_chars"), seconds=("timeout",))
        if self.max_chars < MIN_MAX_CHARS:
            raise InvalidTermError(f"max_chars must be at least {MIN_MAX_CHARS}, got {self.max_chars}")


def _ids(value: str | list[str], name: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not value:
        raise InvalidTermError(f"{name} must be an id or a non-empty list of ids")
    return list(dict.fromkeys(value))


def _relation_text(relation: str) -> str:
    """The words of a relation id someone typed, to search for what they meant."""
    from kg_adapters.relation_index import id_words

    words = id_words(relation)
    return words[-1] if words and "." in relation and len(words) > 1 else (words[0] if words else relation)


class GraphTools:
    """The tools' logic, over a graph that follows store reloads; no MCP types here. Calls run
    concurrently, each in its own thread; ``sparql`` on the embedded store runs in ``workers`` (worker
    processes, stopped at the call's deadline), so a runaway query never holds anything another call needs."""

    def __init__(self, graphs: CurrentGraph, budgets: ToolBudgets, workers: WorkerPool | None = None) -> None:
        self.graphs = graphs
        self.budgets = budgets
        self.workers = workers
        self.cursors = Cursors()
        self.shape = Shaper(text_limit=max(200, budgets.max_chars // 8))
        self._relation_memo: tuple[KnowledgeGraph, frozenset[str]] | None = None

    def _run(self, work: Callable[[KnowledgeGraph], _T]) -> _T:
        with self.graphs.use() as kg:
            return work(kg)

    def _ids(self, value: str | list[str], name: str) -> list[str]:
        """One id or a list of them, at most ``max_rows`` (the budget bounds the work, not only the answer)."""
        wanted = _ids(value, name)
        if len(wanted) > self.budgets.max_rows:
            raise InvalidTermError(f"at most {self.budgets.max_rows} {name} per call (--max-rows), got {len(wanted)}")
        return wanted

    def _cap(self, value: int | None, name: str, minimum: int = 0) -> int:
        if value is None:
            return self.budgets.max_rows
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise InvalidTermError(f"{name} must be an integer >= {minimum}, got {value!r}")
        return min(value, self.budgets.max_rows)

    def _hops(self, value: int, name: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidTermError(f"{name} must be an integer >= 0, got {value!r}")
        if value > self.budgets.max_hops:
            raise InvalidTermError(f"{name} must be at most {self.budgets.max_hops} (--max-hops), got {value}")
        return value

    # -- answers -------------------------------------------------------------------------------------
    def _page(
        self,
        tool: str,
        arguments: dict[str, Any],
        cursor: str | None,
        items: Sequence[Item],
        assemble: Callable[[list[Item], dict[str, str]], dict[str, Any]],
        labels: dict[str, str] | None = None,
        *,
        more_exists: str | None = None,
    ) -> dict[str, Any]:
        """The page of ``items`` ``cursor`` asks for, cut at ``--max-chars``."""
        offset = self.cursors.offset(tool, arguments, cursor)
        return page(
            items,
            offset=offset,
            max_chars=self.budgets.max_chars,
            assemble=assemble,
            labels=self._shortened(labels or {}),
            cursor=lambda at: self.cursors.issue(tool, arguments, at),
            more_exists=more_exists,
        )

    def _shortened(self, labels: dict[str, str]) -> dict[str, str]:
        """Labels as an answer shows them: a very long one shortened like any text (a page keeps its size)."""
        return {node: shortened(label, self.shape.text_limit) for node, label in labels.items()}

    def _labels(self, kg: KnowledgeGraph, ids: Sequence[str], relations: Sequence[str] = ()) -> dict[str, str]:
        """Labels of entity ids, and of relation ids where the graph labels them as entities (Wikidata's
        ``P19`` is ``wd:P19``); ids no label can be asked for are skipped."""
        asked = [
            node for node in dict.fromkeys([*ids, *relations]) if not node.startswith("_:") and kg.profile.spells(node)
        ]
        return kg.labels(asked) if asked else {}

    # -- unknown ids -----------------------------------------------------------------------------------
    def _well_formed(self, kg: KnowledgeGraph, ids: Sequence[str]) -> None:
        """Raises a message naming the ids that are no id of this graph's profile at all (most likely
        names), with the entities ``search`` finds for them."""
        malformed = [node for node in ids if not kg.profile.spells(node)]
        if malformed:
            raise InvalidTermError(self._unknown_entity(kg, malformed, NOT_AN_ID))

    def _entities_exist(self, kg: KnowledgeGraph, ids: Sequence[str], answered: Collection[str] = ()) -> None:
        """Raises a message naming the ids this graph does not hold; ``answered``: ids an answer already
        showed to have edges (not asked again). Graphs that cannot tell (no :class:`GraphCatalog`) pass."""
        unanswered = [node for node in ids if node not in answered]
        if unanswered and isinstance(kg, GraphCatalog):
            known = kg.known_entities(unanswered)
            missing = [node for node in unanswered if node not in known]
            if missing:
                raise InvalidTermError(self._unknown_entity(kg, missing, "no such entity in this graph"))

    def _unknown_entity(self, kg: KnowledgeGraph, ids: list[str], why: str) -> str:
        """The message for ids the graph does not hold. Text that is no id at all is most likely a name
        (an agent passing 'Tom Hanks'): the entities search finds for it are suggested."""
        search = (lambda: kg.search(ids[0], limit=5)) if why == NOT_AN_ID else None
        return _unknown("entity", ids, why, search, "closest by name", "find entity ids by name with search")

    def _relations_exist(self, kg: KnowledgeGraph, relations: Sequence[str]) -> None:
        """Raises a message naming the relations this graph does not have, with the closest ones."""
        if not isinstance(kg, GraphCatalog):
            return
        memo = self._relation_memo
        if memo is None or memo[0] is not kg:
            memo = self._relation_memo = (kg, frozenset(kg.relation_ids()))
        profile, known = kg.profile, memo[1]
        unknown = []
        for relation in relations:
            try:
                canonical = profile.relation_id(profile.relation_iri(relation))
            except InvalidTermError:
                canonical = None
            if canonical not in known:
                unknown.append(relation)
        if not unknown:
            return
        search = lambda: kg.search_relations(_relation_text(unknown[0]), limit=5)  # noqa: E731
        message = _unknown(
            "relation", unknown, "not in this graph", search, "closest", "find relations with search_relations"
        )
        raise InvalidTermError(message)

    # -- the tools -------------------------------------------------------------------------------------
    def search(self, text: str, limit: int = 10, cursor: str | None = None) -> dict[str, Any]:
        return self._hits("search", "entities", text, limit, cursor, "say more of the name")

    def search_relations(self, text: str, limit: int = 10, cursor: str | None = None) -> dict[str, Any]:
        return self._hits("search_relations", "relations", text, limit, cursor, "be more specific")

    def _hits(self, tool: str, key: str, text: str, limit: int, cursor: str | None, narrower: str) -> dict[str, Any]:
        """The answer of ``search`` or ``search_relations`` (the Python API's method of the same name)."""
        cap = self._cap(limit, "limit")

        def work(kg: KnowledgeGraph) -> tuple[list[Entity], str | None]:
            found: list[Entity] = getattr(kg, tool)(text, limit=cap + 1)
            if found or not cap:
                return found, None
            return found, (no_entity_note(kg, text) if tool == "search" else no_relation_note(text))

        found, note = self._run(work)
        items = [Item(value=_hit(entity, self.shape)) for entity in found[:cap]]
        more = f"limit={cap} reached: raise limit (at most {self.budgets.max_rows}) or {narrower}"
        told = {"note": note} if note else {}
        return self._page(
            tool,
            {"text": text, "limit": limit},
            cursor,
            items,
            lambda kept, _: {key: [item.value for item in kept], **told},
            more_exists=more if len(found) > cap else None,
        )

    def describe(self, ids: str | list[str], lang: str = "en", cursor: str | None = None) -> dict[str, Any]:
        wanted = self._ids(ids, "ids")

        def work(kg: KnowledgeGraph) -> dict[str, Entity]:
            self._well_formed(kg, wanted)
            found = kg.describe(wanted, lang=lang)
            unnamed = [node for node in wanted if found[node].label is None and found[node].description is None]
            if unnamed:
                self._entities_exist(kg, unnamed)
            return found

        found = self._run(work)
        items = [Item(value=_described(found[node], self.shape)) for node in wanted]
        return self._page(
            "describe",
            {"ids": wanted, "lang": lang},
            cursor,
            items,
            lambda kept, _: {"entities": [item.value for item in kept]},
        )

    def neighbors(
        self,
        ids: str | list[str],
        direction: Direction = "out",
        relations: list[str] | None = None,
        limit_per_entity: int = 50,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        wanted = self._ids(ids, "ids")
        check_direction(direction)
        cap = self._cap(limit_per_entity, "limit_per_entity")

        def work(kg: KnowledgeGraph) -> tuple[dict[str, list[Edge]], bool, dict[str, str], str | None]:
            self._well_formed(kg, wanted)
            if relations:
                self._relations_exist(kg, relations)
            found = kg.neighbors(wanted, direction=direction, relations=relations, limit_per_entity=cap + 1)
            truncated, budget, kept = False, self.budgets.max_rows, {}
            for node in wanted:
                edges = found[node]
                if len(edges) > cap:
                    edges, truncated = edges[:cap], True
                if len(edges) > budget:
                    edges, truncated = edges[:budget], True
                budget -= len(edges)
                kept[node] = edges
            self._entities_exist(kg, wanted, answered={node for node, edges in kept.items() if edges})
            every = [edge for edges in kept.values() for edge in edges]
            note = other_way_note(kg, [node for node in wanted if not kept[node]], direction, relations)
            labels = self._labels(kg, wanted + edge_ids(every), [edge.relation for edge in every])
            return kept, truncated, labels, note

        kept, truncated, labels, note = self._run(work)
        items = [  # in the order asked; an entity without edges is listed with none
            Item(value=self.shape.edge(edge) if edge else None, ids=[node, *_edge_names(edge)], group=node)
            for node, edges in kept.items()
            for edge in (edges or _NOTHING)
        ]

        def assemble(page_items: list[Item], names: dict[str, str]) -> dict[str, Any]:
            found = {"direction": direction, "neighbors": grouped(page_items, "edges"), "labels": names}
            return {**found, "note": note} if note else found

        more = (
            f"more edges exist than limit_per_entity={cap} (or {self.budgets.max_rows} per call, --max-rows): ask "
            "for some relations (relations=[...]), one direction, or fewer entities"
        )
        return self._page(
            "neighbors",
            {"ids": wanted, "direction": direction, "relations": relations, "limit_per_entity": limit_per_entity},
            cursor,
            items,
            assemble,
            labels,
            more_exists=more if truncated else None,
        )

    def relations(
        self, ids: str | list[str], direction: Direction = "both", cursor: str | None = None
    ) -> dict[str, Any]:
        wanted = self._ids(ids, "ids")
        check_direction(direction)
        sides: tuple[Direction, ...] = ("out", "in") if direction == "both" else (direction,)

        def work(kg: KnowledgeGraph) -> tuple[dict[str, dict[str, list[str]]], dict[str, str]]:
            self._well_formed(kg, wanted)
            found = {side: kg.relations(wanted, direction=side) for side in sides}
            by_entity: dict[str, dict[str, list[str]]] = {
                node: {side: found[side][node] for side in sides} for node in wanted
            }
            self._entities_exist(kg, wanted, answered={n for n, lists in by_entity.items() if any(lists.values())})
            every = sorted({r for lists in by_entity.values() for names in lists.values() for r in names})
            return by_entity, self._labels(kg, wanted, every)

        by_entity, labels = self._run(work)
        items = [  # in the order asked; an entity without relations is listed with empty lists
            Item(value=pair, ids=(node, pair[1]) if pair else (node,), group=node)
            for node, lists in by_entity.items()
            for pair in ([(side, relation) for side in sides for relation in lists[side]] or _NOTHING)
        ]

        def assemble(page_items: list[Item], names: dict[str, str]) -> dict[str, Any]:
            listed: dict[str, dict[str, Any]] = {}
            for item in page_items:
                entry = listed.setdefault(item.group or "", {"id": item.group, **{side: [] for side in sides}})
                if item.value is not None:
                    side, relation = item.value
                    entry[side].append(relation)
            return {"relations": list(listed.values()), "labels": names}

        budget = self.budgets.max_rows
        shown = items[:budget] if len(items) > budget else items
        more = f"more than {budget} relations (--max-rows): ask about fewer entities or one direction"
        return self._page(
            "relations",
            {"ids": wanted, "direction": direction},
            cursor,
            shown,
            assemble,
            labels,
            more_exists=more if len(items) > budget else None,
        )

    def _walks(
        self,
        tool: str,
        arguments: dict[str, Any],
        cursor: str | None,
        ends: list[str],
        walk: Callable[[KnowledgeGraph], PathResult],
        cap: int,
        fields: dict[str, Any],
        explain: Callable[[KnowledgeGraph], str | None],
    ) -> dict[str, Any]:
        """The answer of ``paths`` or ``shortest_paths``: ``walk`` from the ``ends`` (checked first), at most
        ``cap`` paths; no path at all asks whether the ends exist, then ``explain`` says why none was found."""

        def work(kg: KnowledgeGraph) -> tuple[list[Path], bool, dict[str, str], str | None]:
            self._well_formed(kg, ends)
            result = walk(kg)
            shown = list(result)[:cap]
            note = None
            if not shown:
                self._entities_exist(kg, ends)
                note = explain(kg)
            edges = [edge for path in shown for edge in path.edges]
            labels = self._labels(kg, [path.start for path in shown] + edge_ids(edges), [e.relation for e in edges])
            return shown, result.truncated or len(result) > cap, labels, note

        paths, truncated, labels, note = self._run(work)
        told = {"note": note} if note else {}
        items = [
            Item(value=self.shape.path(path), ids=[path.start, *edge_ids(path.edges), *path.relations])
            for path in paths
        ]
        more = (
            f"more paths exist than max_paths={cap} (at most {self.budgets.max_rows}): ask for fewer starts or a "
            "narrower path"
        )
        return self._page(
            tool,
            arguments,
            cursor,
            items,
            lambda kept, names: {**fields, "paths": [item.value for item in kept], "labels": names, **told},
            labels,
            more_exists=more if truncated else None,
        )

    def paths(
        self,
        starts: str | list[str],
        relation_path: list[str],
        directions: list[Direction] | None = None,
        max_paths: int = 100,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        wanted = self._ids(starts, "starts")
        cap = self._cap(max_paths, "max_paths")
        if isinstance(relation_path, str) or not relation_path:
            raise InvalidTermError("relation_path must be a non-empty list of relation ids, one per hop")
        walked: list[Direction] = list(directions) if directions is not None else ["out"] * len(relation_path)
        if len(walked) != len(relation_path):
            raise InvalidTermError(
                f"directions must have one entry per hop of relation_path ({len(relation_path)}), got {len(walked)}"
            )
        for step in walked:
            check_direction(step)

        def walk(kg: KnowledgeGraph) -> PathResult:
            self._relations_exist(kg, relation_path)
            return kg.paths(wanted, relation_path, directions=walked, max_paths=cap)

        def explain(kg: KnowledgeGraph) -> str | None:
            return dead_end(kg, wanted, relation_path, walked, cap)

        arguments = {"starts": wanted, "relation_path": relation_path, "directions": walked, "max_paths": max_paths}
        return self._walks("paths", arguments, cursor, wanted, walk, cap, {"directions": walked}, explain)

    def shortest_paths(
        self,
        sources: str | list[str],
        targets: str | list[str],
        max_hops: int = 3,
        max_paths: int = 50,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        from_ids, to_ids = self._ids(sources, "sources"), self._ids(targets, "targets")
        cap = self._cap(max_paths, "max_paths")
        hops = self._hops(max_hops, "max_hops")
        arguments = {"sources": from_ids, "targets": to_ids, "max_hops": max_hops, "max_paths": max_paths}
        return self._walks(
            "shortest_paths",
            arguments,
            cursor,
            from_ids + to_ids,
            lambda kg: kg.shortest_paths(from_ids, to_ids, max_hops=hops, max_paths=cap),
            cap,
            {},
            lambda kg: not_connected(hops, self.budgets.max_hops),
        )

    def subgraph(
        self, seeds: str | list[str], hops: int = 1, max_edges: int = 500, cursor: str | None = None
    ) -> dict[str, Any]:
        wanted = self._ids(seeds, "seeds")
        cap = self._cap(max_edges, "max_edges")
        depth = self._hops(hops, "hops")

        def work(kg: KnowledgeGraph) -> tuple[list[Edge], bool, dict[str, str]]:
            self._well_formed(kg, wanted)
            edges = kg.subgraph(wanted, hops=depth, max_edges=cap)
            if not edges:
                self._entities_exist(kg, wanted)
            return list(edges), edges.truncated, self._labels(kg, edge_ids(edges), [e.relation for e in edges])

        edges, truncated, labels = self._run(work)
        items = [Item(value=self.shape.edge(edge), ids=_edge_names(edge)) for edge in edges]
        more = f"more edges exist than max_edges={cap} (at most {self.budgets.max_rows}): fewer hops or seeds"
        return self._page(
            "subgraph",
            {"seeds": wanted, "hops": hops, "max_edges": max_edges},
            cursor,
            items,
            lambda kept, names: {"edges": [item.value for item in kept], "labels": names},
            labels,
            more_exists=more if truncated else None,
        )

    def sparql(self, query: str, cursor: str | None = None) -> dict[str, Any]:
        deadline = time.monotonic() + self.budgets.timeout
        form = query_form(query, allowed=("SELECT", "ASK"))
        cap = self.budgets.max_rows

        def work(kg: KnowledgeGraph) -> tuple[list[dict[str, Any]], dict[str, str]]:
            if isinstance(kg, EmbeddedSparql):
                # in a worker process stopped at the deadline; it stops reading at the budget, too
                runner = self.workers.runner(deadline) if self.workers is not None else None
                rows = kg.sparql_rows(query, max_rows=cap + 1, runner=runner)
            elif isinstance(kg, SparqlQueryable):  # a remote endpoint: its own deadline is the call's
                rows = kg.query(query)
            else:
                raise InvalidTermError("this graph does not answer SPARQL")
            return rows, ({} if form == "ASK" else _iri_labels(kg, [_row_iris(row) for row in rows[:cap]]))

        rows, labels = self._run(work)
        if form == "ASK":
            return {"boolean": bool(rows[0]["boolean"]) if rows else False, "truncated": False}
        items = [
            Item(value={name: self.shape.node(value) for name, value in row.items()}, ids=_row_iris(row))
            for row in rows[:cap]
        ]
        more = f"more than {cap} rows (--max-rows): add LIMIT, ORDER BY or filters for the rows you want"
        return self._page(
            "sparql",
            {"query": query},
            cursor,
            items,
            lambda kept, names: {"rows": [item.value for item in kept], "labels": names},
            labels,
            more_exists=more if len(rows) > cap else None,
        )

    def schema(self, relations: list[str] | None = None, limit: int = 20, cursor: str | None = None) -> dict[str, Any]:
        cap = self._cap(limit, "limit", minimum=1)
        arguments = {"relations": relations, "limit": limit}
        offset = self.cursors.offset("schema", arguments, cursor)
        deadline = time.monotonic() + self.budgets.timeout * 0.6

        def work(kg: KnowledgeGraph) -> tuple[list[str], list[Any], dict[str, str]]:
            if not isinstance(kg, GraphCatalog):
                raise InvalidTermError("this graph cannot list its relations (it keeps no relation index)")
            if relations is not None:
                if isinstance(relations, str):
                    raise InvalidTermError("relations must be a list of relation ids")
                self._relations_exist(kg, relations)
                listed = list(dict.fromkeys(relations))
            else:
                listed = _planned_relations(kg)
            summaries = kg.relation_summaries(listed[offset : offset + cap], deadline=deadline)
            entity_ids = [node for s in summaries for node in edge_ids(s.examples)]
            types = [kind for s in summaries for kind, _ in (*s.head_types, *s.tail_types)]
            return listed, summaries, self._labels(kg, entity_ids + types, [s.id for s in summaries])

        listed, summaries, labels = self._run(work)
        items = [
            Item(value=_relation_schema(summary, self.shape), ids=_summary_names(summary)) for summary in summaries
        ]
        reached = offset + len(summaries)
        answer = page(
            items,
            offset=0,
            max_chars=self.budgets.max_chars,
            assemble=lambda kept, names: {
                "relation_count": len(listed),
                "relations": [item.value for item in kept],
                "labels": names,
            },
            labels=self._shortened(labels),
            cursor=lambda at: self.cursors.issue("schema", arguments, offset + at),
            more_after=(
                f"relations {offset + 1}-{reached} of {len(listed)}: call again with cursor=next_cursor for more"
                if reached < len(listed)
                else None
            ),
        )
        return answer


def _row_iris(row: dict[str, Any]) -> list[str]:
    """The IRIs a SPARQL row binds (blank nodes and literals left out)."""
    return [value for value in row.values() if isinstance(value, str) and not value.startswith("_:")]


def _iri_labels(kg: KnowledgeGraph, rows: Sequence[Sequence[str]]) -> dict[str, str]:
    """The labels of the entity IRIs in SPARQL rows, keyed by the IRI as the rows spell it (one
    ``labels`` call for them all): an agent reads who ``http://rdf.freebase.com/ns/m.0qymv`` is without
    asking again."""
    profile = kg.profile
    compact = {iri: profile.entity_id(iri) for iris in rows for iri in iris}
    asked = [node for node in dict.fromkeys(compact.values()) if profile.spells(node)]
    found = kg.labels(asked) if asked else {}
    return {iri: found[node] for iri, node in compact.items() if node in found}


_NOTHING: list[None] = [None]
"""The one item of an entity with nothing to show (it is still listed)."""


def _hit(entity: Entity, shape: Shaper) -> dict[str, Any]:
    return {"id": entity.id, "label": shape.text(entity.label)} if entity.label is not None else {"id": entity.id}


def _described(entity: Entity, shape: Shaper) -> dict[str, Any]:
    found: dict[str, Any] = {"id": entity.id}
    if entity.label is not None:
        found["label"] = shape.text(entity.label)
    if entity.description is not None:
        found["description"] = shape.text(entity.description)
    return found


def _unknown(
    what: str, names: Sequence[str], why: str, closest: Callable[[], list[Entity]] | None, label: str, fallback: str
) -> str:
    """One line naming the first unknown ``what`` (and how many more), why, and the closest matches
    ``closest`` finds (else what to do)."""
    others = f" (and {len(names) - 1} more: {', '.join(map(repr, names[1:4]))})" if len(names) > 1 else ""
    found: list[Entity] = []
    if closest is not None:
        try:
            found = closest()
        except KGError:
            found = []
    hint = f"; {label}: " + ", ".join(entity_text(entity) for entity in found) if found else f"; {fallback}"
    return f"unknown {what} {names[0]!r:.160}{others}: {why}{hint}"


def _edge_names(edge: Edge | None) -> list[str]:
    if edge is None:
        return []
    return [edge.head, edge.relation] + ([edge.tail] if isinstance(edge.tail, str) else [])


def _summary_names(summary: Any) -> list[str]:
    return [
        summary.id,
        *edge_ids(summary.examples),
        *(kind for kind, _ in (*summary.head_types, *summary.tail_types)),
    ]


def _relation_schema(summary: Any, shape: Shaper) -> dict[str, Any]:
    found: dict[str, Any] = {"id": summary.id}
    if summary.label is not None:
        found["label"] = shape.text(summary.label)
    found["count"] = summary.count
    if summary.count_is_lower_bound:
        found["count_is_lower_bound"] = True
    found["examples"] = [shape.edge(edge) for edge in summary.examples]
    found["head_types"] = [{"id": kind, "count": count} for kind, count in summary.head_types]
    found["tail_types"] = [{"id": kind, "count": count} for kind, count in summary.tail_types]
    return found


def _planned_relations(kg: KnowledgeGraph) -> list[str]:
    """The relations a planner walks: the relation filter's hidden ones and a statement model's plumbing
    left out, most edges first when an index counts them (else by id)."""
    from kg_adapters.backends.sparql_catalog import indexed_counts

    assert isinstance(kg, GraphCatalog)
    profile = kg.profile
    model = profile.statements
    keeps = profile.relation_filter.keeps

    def shown(relation: str) -> bool:
        if not keeps(relation):
            return False
        if model is None:
            return True
        full = profile.relation_iri(relation)
        return not full.startswith(model.namespace) or full.startswith(model.truthy_namespace)

    listed = [relation for relation in kg.relation_ids() if shown(relation)]
    counts, _ = indexed_counts(kg)
    if counts:
        size = {profile.relation_id(full): count or 0 for full, count in counts.items()}
        listed.sort(key=lambda relation: (-size.get(relation, 0), relation))
    return listed


DESCRIPTIONS = {
    "search": "Find entities by name: the topic entity of a question ('Tom Hanks' -> m.0bxtg). Exact names first, "
    "then prefixes, then names holding every word (stemmed, any order), then any of them, re-ranked by meaning. "
    "Start here when the question names something; pass the ids to the other tools. Nothing found: `note` names the "
    "words no name holds and what the others find.",
    "search_relations": "Find relations by what they mean, in your own words ('where was he born', 'married to', "
    "'directed by' -> the graph's relation ids), or by words of their ids. Use it to choose the relations of a "
    "path without listing every relation.",
    "describe": "Label and description of one or more entity ids, to check that a candidate entity is the right "
    "one. An id the graph does not hold is an error naming the closest entities.",
    "neighbors": "The 1-hop edges of entities, [head, relation, tail] in the graph's direction: direction out "
    "(default) gives edges where the entity is the head, in where it is the tail, both all; optionally only the "
    "given relations; at most limit_per_entity edges per entity. Labels of the ends come once, in `labels`.",
    "relations": "The distinct relations on the edges of entities, listed by direction: `out` (the entity is the "
    "head: walk them with direction out) and `in` (the entity is the tail: walk them with direction in). Use it "
    "to pick the next step of a path.",
    "paths": "Follow a relation path from start entities, e.g. relation_path [people.person.place_of_birth, "
    "location.location.containedby]; each hop walks out (head to tail) unless `directions` says in or both. "
    "The far ends of the walks are the candidate answers; no path at all comes with a `note` naming the hop that "
    "found nothing and, when it is walked the wrong way, the directions that walk it.",
    "shortest_paths": "All shortest paths (at most max_hops edges, walked in either direction) between source and "
    "target entities, to explain how two entities of a question are connected.",
    "subgraph": "Every edge within `hops` of the seed entities (a small evidence subgraph), at most max_edges.",
    "sparql": "A read-only SPARQL SELECT or ASK query on the graph (full IRIs); updates, LOAD and SERVICE are "
    "refused. Rows keep the full IRIs; `labels` names the entities among them. Use the other tools first; this "
    "is the escape hatch.",
    "schema": "The graph's relations for planning: per relation its number of edges, a few example edges and the "
    "most frequent types of its heads and tails; most used relations first where counted, paged with a cursor. "
    "Pass `relations` to describe only those.",
}


def warm_up(graphs: CurrentGraph) -> threading.Thread:
    """Starts preparing what the first searches need (the search indexes, the encoder, the relation vectors:
    seconds, once per store version) in a background thread, so the agent's first ``search_relations``
    does not spend its time budget on it (``kga mcp`` does it for embedded stores, not for remote endpoints,
    which are asked only what the agent asks). Failures are left for the calls to report."""

    def prepare() -> None:
        try:
            with graphs.use() as kg:
                kg.search_relations("warm up", limit=1)
                kg.search("warm up", limit=1)
        except Exception:  # the tool calls report the same failure, with its message
            pass

    thread = threading.Thread(target=prepare, name="kga-mcp-warm-up", daemon=True)
    thread.start()
    return thread


def build_server(
    graphs: CurrentGraph, budgets: ToolBudgets | None = None, workers: WorkerPool | None = None
) -> MCPServer:
    """An MCP server with the graph's tools, answering over ``graphs`` (``sparql`` on the embedded
    store in ``workers``; without them, in this process, where a query cannot be stopped)."""
    require_mcp()
    from typing import Annotated

    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import CallToolResult, ToolAnnotations

    from kg_adapters.serve import mcp_schema

    tools = GraphTools(graphs, budgets or ToolBudgets(), workers)

    class GraphServer(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            """Every failure becomes a one-line tool error."""
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                raise ToolError(_tool_message(exc)) from None

    server = GraphServer(
        "kg-adapters",
        title="kg-adapters knowledge graph tools",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
    )
    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    for name, description in DESCRIPTIONS.items():
        stoppable = name == "sparql" and workers is not None  # in this process a query cannot be stopped
        guarded = _guarded(getattr(tools, name), tools.budgets.timeout, ends_by_itself=stoppable)
        tool = _answering(guarded, name)
        tool.__signature__ = mcp_schema.signature(  # type: ignore[attr-defined]
            name, tools.budgets, Annotated[CallToolResult, mcp_schema.ANSWERS[name]]
        )
        server.add_tool(tool, name=name, description=description, annotations=read_only)
    return server


def _answering(tool: Callable[..., Awaitable[dict[str, Any]]], name: str) -> Callable[..., Awaitable[Any]]:
    """The tool as the SDK calls it: its answer as structured content and, in the text content, the same
    answer as compact JSON (:func:`kg_adapters.serve.answers.compact`)."""
    from mcp.types import CallToolResult, TextContent

    from kg_adapters.serve.answers import compact

    async def answer(**arguments: Any) -> CallToolResult:
        found = await tool(**arguments)
        return CallToolResult(content=[TextContent(type="text", text=compact(found))], structured_content=found)

    answer.__name__ = answer.__qualname__ = name
    return answer


def _guarded(
    method: Callable[..., dict[str, Any]], timeout: float, *, ends_by_itself: bool = False
) -> Callable[..., Awaitable[dict[str, Any]]]:
    """The tool function: runs ``method`` in a thread of its own and answers by the time budget (a call
    past it is abandoned to finish on its own; a SPARQL query's worker process is stopped); our errors
    become ToolError with a one-line message. ``ends_by_itself``: the work stops at ``timeout`` on its own
    (a worker process killed and replaced): it gets a moment more to do so, and is answered then."""
    import functools

    import anyio
    from mcp.server.mcpserver.exceptions import ToolError

    from kg_adapters.serve.workers import DEADLINE_GRACE, DeadlinePassed

    past_budget = f"the call ran past the time budget of {timeout:g} s (--timeout)"
    limit = timeout + DEADLINE_GRACE if ends_by_itself else timeout

    @functools.wraps(method)
    async def tool(**arguments: Any) -> dict[str, Any]:
        try:
            with anyio.fail_after(limit):
                work = functools.partial(method, **arguments)
                return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
        except (TimeoutError, DeadlinePassed):
            raise ToolError(past_budget) from None
        except KGError as exc:
            raise ToolError(f"{type(exc).__name__}: {one_line(str(exc))}") from None

    return tool


def _tool_message(exc: Exception) -> str:
    """One line: argument validation errors as ``argument: problem``, others as their text."""
    from pydantic import ValidationError

    cause = exc.__cause__
    if isinstance(cause, ValidationError):
        problems = [
            f"{'.'.join(str(part) for part in error['loc']) or 'arguments'}: {error['msg']}" for error in cause.errors()
        ]
        return one_line("invalid arguments: " + "; ".join(problems))
    text = str(exc)
    if text.startswith("Error executing tool ") and ": " in text:  # the SDK's wrapper around our own message
        text = text.split(": ", 1)[1]
    return one_line(text)


def run(
    server: MCPServer,
    *,
    transport: str,
    host: str,
    port: int,
    announce: Callable[[str], None] | None = None,
    on_exit: Callable[[], None] | None = None,
) -> None:
    """Serves until the client disconnects (stdio) or the process is interrupted (http: on a socket
    bound before anything is announced, so a bad address or a busy port is a ``ListenError``;
    ``on_exit`` runs as soon as the stop is asked for)."""
    if transport == "stdio":
        server.run("stdio")
        return
    from kg_adapters.serve.listen import http_url, listening_socket, run_uvicorn

    sock = listening_socket(host, port)
    if announce is not None:
        announce(f"kga mcp: MCP endpoint at {http_url(host, port, '/mcp')}")
    app = server.streamable_http_app(streamable_http_path="/mcp", host=host)  # as the SDK's own run() builds it
    run_uvicorn(app, sock, log_level=server.settings.log_level.lower(), on_exit=on_exit)
