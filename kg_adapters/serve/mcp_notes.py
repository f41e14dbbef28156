"""What ``kga mcp`` says when an answer is empty or a name is unknown: why, and what to call instead.

An agent that walks a relation the wrong way, misspells a name or asks for more hops than connect two
entities gets an empty answer; a one-line ``note`` naming the cause (and the call that would work) saves
it from guessing. Each explanation costs a few graph calls, made only when the answer is empty.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from kg_adapters.records import Entity

if TYPE_CHECKING:
    from kg_adapters.base import KnowledgeGraph

Direction = Literal["out", "in", "both"]


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line, at most ``limit`` characters (an ellipsis marks a cut)."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def entity_text(entity: Entity) -> str:
    """An entity as an agent reads it in a message: its id, and its label when it has one."""
    return f"{entity.id} ({one_line(entity.label, 60)})" if entity.label else entity.id


def _other_way(direction: Direction) -> Direction:
    return "in" if direction == "out" else "out"


_ROLE = {"out": "head", "in": "tail"}


def other_way_note(
    kg: KnowledgeGraph, empty: Sequence[str], direction: Direction, relations: Sequence[str] | None
) -> str | None:
    """Why entities of a ``neighbors`` call have no edges when they have some walked the other way (an
    agent walking a relation backwards gets nothing, and should hear why); None otherwise."""
    if not empty or direction == "both" or (relations is not None and not relations):
        return None
    other = _other_way(direction)
    back = kg.neighbors(list(empty), direction=other, relations=relations, limit_per_entity=1)
    turned = [node for node in empty if back.get(node)]
    if not turned:
        return None
    edge = f"{', '.join(relations)} edge" if relations else "edge"
    others = f" (and {len(turned) - 1} more)" if len(turned) > 1 else ""
    return (
        f"{turned[0]}{others} has no {edge} walked {direction} (as its {_ROLE[direction]}) but has some walked "
        f"{other} (as its {_ROLE[other]}): call again with direction={other!r} or 'both'"
    )


def dead_end(
    kg: KnowledgeGraph, starts: Sequence[str], relation_path: Sequence[str], directions: Sequence[Direction], cap: int
) -> str | None:
    """Why ``paths`` found no path: the first hop that finds no edge from the entities the hops before it
    reach, and, when they have that relation walked the other way, the ``directions`` that walk it.
    Costs one walk per hop (each at most ``cap`` paths), only when the answer is empty."""
    frontier: list[str] = list(starts)
    for hop, (relation, direction) in enumerate(zip(relation_path, directions, strict=True)):
        if hop:
            reached = kg.paths(starts, relation_path[:hop], directions=directions[:hop], max_paths=cap)
            frontier = list(dict.fromkeys(path.end for path in reached if isinstance(path.end, str)))
            if not frontier:
                return f"no path: hop {hop} reaches only literals (values), which have no edges to walk from"
        step = kg.neighbors(frontier, direction=direction, relations=[relation], limit_per_entity=1)
        if any(step.get(node) for node in frontier):
            continue
        one = len(frontier) == 1
        if hop == 0:
            source = f"start {frontier[0]}" if one else f"the {len(frontier)} starts"
        else:
            source = f"the {'entity' if one else f'{len(frontier)} entities'} hop {hop} reaches"
        which = "which is" if one else "which are"
        if direction == "both":
            return f"no path: hop {hop + 1} walks {relation} both ways from {source}, {which} on no such edge"
        role = _ROLE[direction]
        why = f"no path: hop {hop + 1} walks {relation} {direction} from {source}, {which} the {role} of no such edge"
        other = _other_way(direction)
        back = kg.neighbors(frontier, direction=other, relations=[relation], limit_per_entity=1)
        if not any(back.get(node) for node in frontier):
            return why
        turned = [*directions[:hop], other, *directions[hop + 1 :]]
        return f"{why} but the {_ROLE[other]} of some: walk that hop {other}, directions={json.dumps(turned)}"
    return None


NOTE_WORDS = 8
"""Most words of a search text tried one by one to explain why it found nothing."""


def no_entity_note(kg: KnowledgeGraph, text: str) -> str:
    """Why ``search`` found no entity: a name must hold every content word of the text. The words no name
    holds are named (a typo), and what the text finds without them -- or, when every word is in some
    name, without one of them (a word such as 'actor' that is no part of the name) -- is suggested.
    Costs a few searches (at most two per word), only when the answer is empty."""
    from kg_adapters.label_index import content_words, normalize, word_tokens

    words = list(dict.fromkeys(content_words(word_tokens(normalize(text)))))[:NOTE_WORDS]
    advice = "check the spelling, or search for the name alone, as the graph spells it"
    if len(words) < 2:
        return f"no entity's name holds {text!r:.100}: {advice}"
    absent = [word for word in words if not kg.search(word, limit=1)]
    held = ", ".join(map(repr, absent)) if absent else f"every word of {text!r:.100}"
    why = f"no entity's name holds {held}"
    if absent:
        shorter = [[word for word in words if word not in absent]] if len(absent) < len(words) else []
    else:
        shorter = [[word for word in words if word != left_out] for left_out in words]
    for kept in shorter:
        found = kg.search(" ".join(kept), limit=3)
        if found:
            suggested = ", ".join(map(entity_text, found))
            return f"{why}; {' '.join(kept)!r:.100} finds {suggested}: {advice}"
    return f"{why}: {advice}"


def no_relation_note(text: str) -> str:
    return (
        f"no relation matches {text!r:.100} by its words or meaning: try other words, list an entity's relations "
        "with relations, or the graph's with schema"
    )


def not_connected(hops: int, max_hops: int) -> str:
    """Why ``shortest_paths`` found nothing: no path of at most ``hops`` edges, in either direction."""
    wider = f"; raise max_hops (at most {max_hops}, --max-hops)" if hops < max_hops else ""
    edges = "1 edge" if hops == 1 else f"{hops} edges"
    return f"no path of at most {edges} (walked either way) connects the sources to the targets{wider}"
