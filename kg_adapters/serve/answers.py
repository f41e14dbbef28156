"""Tool answers sized for an LLM's context window: compact JSON, names once, pages by size, signed cursors.

An answer is a list of whole items (entities, edges, paths, rows, relations) with its fields. It is cut by
*size*: :func:`page` keeps the longest run of items from the cursor's offset whose compact JSON stays within
``max_chars`` (at least one item, so a page always moves on), sets ``truncated`` and, when it cut, a
``next_cursor`` to call again with and a ``more`` line saying so. A cut by *count* (a limit reached) sets
``truncated`` and a ``more`` line saying how to ask for less. The text content of a tool result is the
compact JSON of its structured content (no indentation: 35-65% smaller), so both always agree.

Entities appear as their ids; their labels are given once per answer in a ``labels`` map (id -> label), not
on every edge. Literals are ``{"value", "datatype", "lang"}`` with only the keys that are set, and a value
longer than a page's eighth is shortened, saying by how much.

Cursors are opaque: base64url of the tool, a digest of its other arguments and the offset, signed with a key
of this server process (HMAC-SHA256). A cursor from another call, another server or an edited one is refused
with a message, never read as something else.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kg_adapters.errors import InvalidTermError
from kg_adapters.records import Edge, Literal, Node, Path

DEFAULT_MAX_CHARS = 24_000
"""Characters of one tool answer by default (about 6,000 tokens)."""
MIN_MAX_CHARS = 2_000
"""The smallest ``--max-chars``: room for a few items and the answer's own fields."""


def compact(answer: Any) -> str:
    """The answer as JSON without spaces or indentation (what the text content holds)."""
    return json.dumps(answer, ensure_ascii=False, separators=(",", ":"))


def shortened(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` characters and how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


@dataclass(frozen=True, kw_only=True)
class Shaper:
    """Records as answer JSON, long texts shortened to ``text_limit`` characters."""

    text_limit: int

    def node(self, node: Node | bool) -> Any:
        """An entity id as itself, a literal as ``{"value", "datatype"?, "lang"?}``, a boolean as itself."""
        if isinstance(node, Literal):
            found: dict[str, Any] = {"value": shortened(node.value, self.text_limit)}
            if node.datatype is not None:
                found["datatype"] = node.datatype
            if node.lang is not None:
                found["lang"] = node.lang
            return found
        return node

    def edge(self, edge: Edge) -> list[Any]:
        """``[head, relation, tail]`` in the graph's own direction."""
        return [edge.head, edge.relation, self.node(edge.tail)]

    def path(self, path: Path) -> dict[str, Any]:
        return {"start": path.start, "edges": [self.edge(edge) for edge in path.edges]}

    def text(self, text: str | None) -> str | None:
        return None if text is None else shortened(text, self.text_limit)


def edge_ids(edges: Iterable[Edge]) -> list[str]:
    """The entity ids on ``edges`` (heads, entity tails), each once, in order."""
    found: dict[str, None] = {}
    for edge in edges:
        found[edge.head] = None
        if isinstance(edge.tail, str):
            found[edge.tail] = None
    return list(found)


class Cursors:
    """Signed page cursors of one server process (see the module docstring)."""

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key or secrets.token_bytes(32)

    def _digest(self, tool: str, arguments: Mapping[str, Any]) -> str:
        canonical = json.dumps([tool, arguments], sort_keys=True, default=str, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    def _sign(self, body: bytes) -> bytes:
        return hmac.new(self._key, body, hashlib.sha256).digest()[:16]

    def issue(self, tool: str, arguments: Mapping[str, Any], offset: int) -> str:
        """The cursor of ``tool`` called with ``arguments`` (without the cursor) at item ``offset``."""
        body = compact([tool, self._digest(tool, arguments), offset]).encode()
        return base64.urlsafe_b64encode(body + self._sign(body)).decode().rstrip("=")

    def offset(self, tool: str, arguments: Mapping[str, Any], cursor: str | None) -> int:
        """Where the page ``cursor`` asks for starts (0 without one).

        Raises:
            InvalidTermError: a cursor not issued by this server for this tool and these arguments.
        """
        if cursor is None or cursor == "":
            return 0
        if not isinstance(cursor, str) or len(cursor) > 512:
            raise InvalidTermError("cursor must be a next_cursor string from an earlier answer")
        try:
            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        except ValueError:
            raw = b""
        body, signature = raw[:-16], raw[-16:]
        if len(raw) <= 16 or not hmac.compare_digest(signature, self._sign(body)):
            raise InvalidTermError(
                "cursor is not one this server issued (it may be from before a restart): repeat the call without it"
            )
        name, digest, offset = json.loads(body)
        if name != tool or digest != self._digest(tool, arguments):
            raise InvalidTermError(
                f"cursor belongs to another call ({name}); pass it with the same tool and arguments as the "
                "answer that gave it"
            )
        return int(offset)


@dataclass(frozen=True, kw_only=True)
class Item:
    """One thing an answer lists: its JSON, and the entity ids whose labels it needs."""

    value: Any
    ids: Sequence[str] = ()
    group: str | None = None
    """Items of one group are listed together (the edges of one entity)."""


def page(
    items: Sequence[Item],
    *,
    offset: int,
    max_chars: int,
    assemble: Callable[[list[Item], dict[str, str]], dict[str, Any]],
    labels: Mapping[str, str],
    cursor: Callable[[int], str],
    more_exists: str | None = None,
    more_after: str | None = None,
) -> dict[str, Any]:
    """The answer holding the most items from ``offset`` on whose compact JSON fits in ``max_chars``
    (always one at least). ``assemble(items, labels)`` builds the answer's fields from the kept items and
    the labels of their ids. ``more_exists`` is the hint when a count limit already cut the items (the
    answer is then truncated even when it is the last page); ``more_after`` the hint when more items
    follow ``items`` that a cursor at their end fetches (the next slice of a listing)."""
    remaining = list(items[offset:])

    def build(count: int) -> dict[str, Any]:
        kept = remaining[:count]
        named = {node: labels[node] for item in kept for node in item.ids if node in labels}
        answer = assemble(kept, named)
        if count < len(remaining):
            answer["truncated"] = True
            answer["next_cursor"] = cursor(offset + count)
            answer["more"] = (
                f"cut at {max_chars:,} characters (--max-chars) after {offset + count} of {len(items)} items: call "
                "again with the same arguments and cursor=next_cursor for the rest, or ask for less"
            )
        elif more_after is not None:
            answer["truncated"] = True
            answer["next_cursor"] = cursor(offset + count)
            answer["more"] = more_after
        else:
            answer["truncated"] = more_exists is not None
            if more_exists is not None:
                answer["more"] = more_exists
        return answer

    if len(compact(full := build(len(remaining)))) <= max_chars or len(remaining) <= 1:
        return full
    low, high = 1, len(remaining) - 1  # the most items that fit is in [low, high] (low always kept)
    while low < high:
        middle = (low + high + 1) // 2
        if len(compact(build(middle))) <= max_chars:
            low = middle
        else:
            high = middle - 1
    return build(low)


def grouped(items: Sequence[Item], key: str) -> list[dict[str, Any]]:
    """Items listed under their groups, in order: ``[{"id": group, key: [values...]}, ...]``; an item
    whose value is None only lists its group (an entity with nothing to show)."""
    groups: dict[str, list[Any]] = {}
    for item in items:
        values = groups.setdefault(item.group or "", [])
        if item.value is not None:
            values.append(item.value)
    return [{"id": group, key: values} for group, values in groups.items()]
