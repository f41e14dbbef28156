"""What an RDF file must not do to the process that loads it, checked before or while Oxigraph parses it.

* **Entity expansion** (RDF/XML). Oxigraph expands the entities a document's DTD declares without a
  limit: ten nested ``<!ENTITY>`` declarations in 1 KB ("billion laughs") make one literal of
  gigabytes, and the loading process aborts. :func:`check_xml_entities` reads the DTD first and refuses,
  with a LoadError naming file:line, parameter and external entities, an entity that expands to more
  than :data:`ENTITY_LIMIT` bytes, and a document whose entity references expand to more than
  :data:`DOCUMENT_LIMIT` bytes in all. Flat namespace entities (``<!ENTITY owl "http://...#">``, as
  ontology editors write them) pass.
* **Tokens longer than the parser's buffer**. Oxigraph's Turtle, N-Triples, N-Quads, TriG, N3 and
  JSON-LD parsers stop at a token over 16 MiB with ``MemoryError``; :func:`token_too_long` makes that a
  LoadError naming the file and the line being read (:class:`LineCounter`).
"""

from __future__ import annotations

import re
from typing import IO, cast

from kg_adapters.errors import LoadError

PARSER_BUFFER = 16 << 20
"""Oxigraph's parser buffer: the longest token (an IRI, a literal) it reads."""
ENTITY_LIMIT = 64 << 10
"""Most bytes one declared entity may expand to (namespace IRIs are tens of bytes)."""
DOCUMENT_LIMIT = 64 << 20
"""Most bytes all the entity references of a document may expand to together."""
PROLOG_LIMIT = 1 << 20
"""Where the DTD must end (the prolog comes before any data)."""
_CHUNK = 1 << 20

_DECLARATION = re.compile(
    rb"""\s+|<!--.*?-->|<\?.*?\?>|%[^;\s]*;|\]
    |<!ENTITY\s+(?P<parameter>%\s+)?(?P<name>[^\s%"'>]+)\s+(?:(?P<value>"[^"]*"|'[^']*')|(?P<external>[^>]*))\s*>
    |<!(?:ELEMENT|ATTLIST|NOTATION)(?:"[^"]*"|'[^']*'|[^>"'])*>""",
    re.S | re.X,
)
_REFERENCE = re.compile(rb"&([^\s&;#]+);")
_PREDEFINED = {b"lt", b"gt", b"amp", b"apos", b"quot"}


class LineCounter:
    """Reads a binary stream through, counting the lines read so far (the parser's position); give the
    parser :meth:`stream_for_parser`."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.line = 1
        """The line the last read started on."""
        self._newlines = 0

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        self.line = self._newlines + 1
        self._newlines += data.count(b"\n")
        return data

    def readinto(self, buffer: bytearray | memoryview) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def readable(self) -> bool:
        return True

    def stream_for_parser(self) -> IO[bytes]:
        """This reader, typed as the binary stream pyoxigraph's parsers take (they call ``read``)."""
        return cast(IO[bytes], self)


def is_buffer_overflow(exc: BaseException) -> bool:
    """Whether ``exc`` is Oxigraph saying a token outgrew its buffer (not the process out of memory)."""
    return isinstance(exc, MemoryError) and "buffer maximal size" in str(exc)


def token_too_long(path: str, line: int | None) -> LoadError:
    return LoadError(
        f"a token (an IRI or a literal) longer than the parser's {PARSER_BUFFER >> 20} MiB buffer", file=path, line=line
    )


def check_xml_entities(path: str, stream: IO[bytes]) -> None:
    """Reads RDF/XML ``stream`` (the file ``path``, decompressed) to its end and raises LoadError when its
    entities would expand beyond the limits above. Returns at once when the document declares none."""
    head = stream.read(PROLOG_LIMIT)
    doctype = head.find(b"<!DOCTYPE")
    first_element = re.search(rb"<[^?!]", head)
    if doctype < 0 or (first_element is not None and first_element.start() < doctype):
        return
    opening = head.find(b"[", doctype)
    closing = head.find(b">", doctype)
    if opening < 0 or (0 <= closing < opening):
        return  # no internal subset: nothing declared here (Oxigraph fetches no external DTD)
    entities: dict[bytes, bytes] = {}
    lines: dict[bytes, int] = {}
    position = opening + 1
    while True:
        found = _DECLARATION.match(head, position)
        if found is None:
            raise LoadError(
                "a DTD this loader cannot read (or longer than 1 MiB)", file=path, line=_line(head, position)
            )
        position = found.end()
        if found.group(0) == b"]":
            break
        name = found.group("name")
        if name is None:
            continue
        where = _line(head, found.start())
        if found.group("parameter") is not None:
            raise LoadError("DTD parameter entities are refused", file=path, line=where)
        if found.group("value") is None:
            raise LoadError(f"the external entity {name.decode(errors='replace')!r} is refused", file=path, line=where)
        entities.setdefault(name, found.group("value")[1:-1])
        lines.setdefault(name, where)
    sizes: dict[bytes, int] = {}
    for name in entities:
        size = _expanded(name, entities, sizes, ())
        if size > ENTITY_LIMIT:
            raise LoadError(
                f"the entity {name.decode(errors='replace')!r} expands to more than {ENTITY_LIMIT:,} bytes "
                "(nested entities: refused)",
                file=path,
                line=lines[name],
            )
    if entities:
        _check_references(path, head, position, stream, sizes)


def _expanded(name: bytes, entities: dict[bytes, bytes], sizes: dict[bytes, int], stack: tuple[bytes, ...]) -> int:
    """The length of entity ``name`` with every reference in it expanded (ENTITY_LIMIT + 1 once over it)."""
    if name in sizes:
        return sizes[name]
    if name in stack:
        return ENTITY_LIMIT + 1  # a cycle: XML forbids it, and it never ends
    value = entities[name]
    size = len(value)
    for reference in _REFERENCE.finditer(value):
        inner = reference.group(1)
        if inner in entities:
            size += _expanded(inner, entities, sizes, (*stack, name)) - len(reference.group(0))
        if size > ENTITY_LIMIT:
            size = ENTITY_LIMIT + 1
            break
    sizes[name] = size
    return size


def _check_references(path: str, head: bytes, start: int, stream: IO[bytes], sizes: dict[bytes, int]) -> None:
    """Adds up what the document's references to declared entities expand to, reading it to its end."""
    total = 0
    lines_before = 0
    text = head[start:]
    lines_before = head[:start].count(b"\n")
    longest = max(len(name) for name in sizes) + 2
    while True:
        more = stream.read(_CHUNK)
        # a reference cut by the end of this piece is counted with the next one
        end = len(text) if not more else max(0, len(text) - longest)
        scanned, text = text[:end], text[end:]
        for reference in _REFERENCE.finditer(scanned):
            total += sizes.get(reference.group(1), 0)
            if total > DOCUMENT_LIMIT:
                raise LoadError(
                    f"the document's entity references expand to more than {DOCUMENT_LIMIT >> 20} MiB",
                    file=path,
                    line=lines_before + scanned.count(b"\n", 0, reference.start()) + 1,
                )
        lines_before += scanned.count(b"\n")
        if not more:
            return
        text += more


def _line(text: bytes, position: int) -> int:
    return text.count(b"\n", 0, position) + 1
