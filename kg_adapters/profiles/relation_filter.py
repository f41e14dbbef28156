"""Relations hidden from reasoning unless the caller names them: a profile's relation filter.

Big KGs carry plumbing next to their facts (Freebase: ``type.object.type`` to every type of an
entity, keys, ``common.topic.*`` web pages and images, editorial ``freebase.*`` metadata). A
reasoner that lists an entity's relations or walks its neighbourhood should not see those, so
each profile holds a :class:`RelationFilter` that ``neighbors`` and ``relations`` apply whenever
the caller did not name the relations (``relations=None``); ``shortest_paths`` and ``subgraph``
walk through ``neighbors`` and inherit it. A relation named explicitly (``neighbors(...,
relations=[...])``, a ``paths`` relation path, ``subgraph(..., relations=[...])``) is never
filtered. ``connect(url, relation_filter=None)`` (or ``?relation_filter=none``) turns it off;
``relation_filter=RelationFilter(...)`` replaces it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from kg_adapters.errors import InvalidTermError


def _strings(values: Iterable[str], name: str) -> list[str]:
    items = list(values)
    for item in items:
        if not isinstance(item, str) or not item:
            raise InvalidTermError(f"{name} must hold non-empty strings, got {item!r:.100}")
    return items


@dataclass(frozen=True, kw_only=True)
class RelationFilter:
    """Drops relations whose id (as answers spell it: compact in the profile, else the full IRI)
    is in ``drop`` or starts with one of ``drop_prefixes``."""

    drop: frozenset[str] = field(default_factory=frozenset)
    drop_prefixes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.drop, str) or isinstance(self.drop_prefixes, str):
            raise InvalidTermError("drop and drop_prefixes take collections of relation ids, not one string")
        object.__setattr__(self, "drop", frozenset(_strings(self.drop, "drop")))
        object.__setattr__(self, "drop_prefixes", tuple(dict.fromkeys(_strings(self.drop_prefixes, "drop_prefixes"))))

    @property
    def empty(self) -> bool:
        return not self.drop and not self.drop_prefixes

    def keeps(self, relation: str) -> bool:
        """Whether ``relation`` (a relation id as answers spell it) stays visible."""
        return relation not in self.drop and not relation.startswith(self.drop_prefixes)

    @property
    def key(self) -> str:
        """A short stable fingerprint (part of cache keys, so two filters never share answers)."""
        import hashlib  # ~3 MiB of OpenSSL: only when a key is asked for

        text = "\n".join(["drop", *sorted(self.drop), "prefixes", *sorted(self.drop_prefixes)])
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


NO_FILTER = RelationFilter()
"""Keeps every relation."""
