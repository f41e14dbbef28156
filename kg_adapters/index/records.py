"""Records built fast: :class:`Edge`, :class:`Path` and :class:`Literal` objects made by a plain
``__init__`` (answers are made of thousands of them), each an ordinary frozen record in the end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from kg_adapters.records import NO_QUALIFIERS, Edge, Literal, Node, Path


class _EdgeRecord:
    """Builds an :class:`Edge` without the frozen dataclass's keyword ``__init__`` (one
    ``object.__setattr__`` per field; answers are made of thousands of edges): a class with the same
    slots whose plain ``__init__`` fills them, then hands the object to ``Edge`` (``__class__``
    assignment between classes of one layout). The result is an ordinary frozen ``Edge``: the
    conformance suite compares."""

    __slots__ = ("head", "relation", "tail", "qualifiers", "rank", "cvt")  # noqa: RUF023 (as Edge declares them)

    def __init__(self, head: str, relation: str, tail: Node) -> None:
        self.head = head
        self.relation = relation
        self.tail = tail
        self.qualifiers = NO_QUALIFIERS
        self.rank = None
        self.cvt = ()
        self.__class__ = Edge  # type: ignore[assignment]


class _PathRecord:
    """:class:`Path` built as :class:`_EdgeRecord` builds edges."""

    __slots__ = ("start", "edges")  # noqa: RUF023 (as Path declares them)

    def __init__(self, start: str, edges: tuple[Edge, ...]) -> None:
        self.start = start
        self.edges = edges
        self.__class__ = Path  # type: ignore[assignment]


assert _EdgeRecord.__slots__ == Edge.__slots__ and _PathRecord.__slots__ == Path.__slots__
make_edge = cast(Callable[[str, str, Node], Edge], _EdgeRecord)
"""``Edge(head=, relation=, tail=)``, the other fields at their defaults."""
make_path = cast(Callable[[str, tuple[Edge, ...]], Path], _PathRecord)


class _LiteralRecord:
    """Builds a :class:`Literal` as :class:`_EdgeRecord` builds edges: a class with the same slots
    whose plain ``__init__`` fills them, then hands the object to ``Literal`` (``__class__``
    assignment between classes of one layout). The result is an ordinary frozen ``Literal``."""

    __slots__ = ("value", "datatype", "lang")  # noqa: RUF023 (as Literal declares them)

    def __init__(self, value: str, datatype: str | None, lang: str | None) -> None:
        self.value = value
        self.datatype = datatype
        self.lang = lang
        self.__class__ = Literal  # type: ignore[assignment]


assert _LiteralRecord.__slots__ == Literal.__slots__
make_literal = cast(Callable[[str, str | None, str | None], Literal], _LiteralRecord)
"""``Literal(value=, datatype=, lang=)``."""
