"""A store version's default graph as its traversal index records it, replayed as N-Triples text into a
:class:`~kg_adapters.index.build.TripleCollector`: an append numbers the previous version's triples from
its index files, not by reading the store back (Oxigraph looks each IRI of each triple up on disk).

The index holds every triple of the default graph that the name, relation and traversal indexes are
written from: its IRI-to-IRI edges, its literal objects (as Oxigraph stores them: canonical values,
lower-case language tags) and, for triples with a blank node, their count and the (node, relation) ends
they give an entity. Those are replayed as blank-node triples with fresh labels, so the collector counts
and keys them as it did: a later load's blank nodes are always new ones (their labels are renamed per
input), so none of them can repeat an old one. Replayed triples the load adds again collapse as any
duplicate does, so the indexes written equal those of a load of every input into a new store.
"""

from __future__ import annotations

import json
import mmap
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg_adapters.errors import InvalidTermError
from kg_adapters.index.layout import FORMAT_NAME, FORMAT_VERSION, META, index_dir
from kg_adapters.profiles import Profile
from kg_adapters.sparql_terms import GEO_WKT_LITERAL

if TYPE_CHECKING:
    from kg_adapters.index.build import TripleCollector
    from kg_adapters.index.read import TraversalIndex

CHUNK_TRIPLES = 50_000
"""Triples replayed per text handed to the collector (its memory budget is checked after each)."""
_NEEDS_ESCAPE = re.compile(rb'[\\"\n\r]')
_ESCAPES = ((b"\\", b"\\\\"), (b'"', b'\\"'), (b"\n", b"\\n"), (b"\r", b"\\r"))


class NotReplayable(Exception):
    """The previous version's index cannot stand for its triples (the message says why)."""


class EntitySpelling:
    """Compacts entity IRIs into the ids an index records (``profile.entity_id``) and checks, as it goes,
    that each id spells back into its own IRI (``profile.entity_iri``), so that a replay of the index
    can write the triples it holds: :attr:`holds` (written into the index's meta as
    ``entity_ids_spell_back``, which :func:`replay_refusal` reads instead of every id) and
    :attr:`first_failure`, the first id that does not. Once one fails, the rest are only compacted."""

    def __init__(self, profile: Profile) -> None:
        self._compact, self._expand = profile.entity_id, profile.entity_iri
        self.holds = True
        self.first_failure: str | None = None

    def id_of(self, iri: str) -> str:
        name = self._compact(iri)
        if self.holds and not _spells_back(self._expand, name, iri):
            self.holds, self.first_failure = False, name[:200]
        return name


def _spells_back(expand: Callable[[str], str], name: str, iri: str) -> bool:
    """Whether the id ``name`` of ``iri`` spells back into it; a blank node never does."""
    return _expanded(expand, name) == iri and not iri.startswith("_:")


def _expanded(expand: Callable[[str], str], name: str) -> str:
    """The IRI of the id ``name`` (an id the profile cannot expand is kept whole: it is the IRI)."""
    try:
        return expand(name)
    except InvalidTermError:
        return name


def replay_refusal(version_dir: str | os.PathLike[str], profile: Profile) -> str | None:
    """Why the traversal index of the store version at ``version_dir`` cannot be replayed for
    ``profile`` (None when it can): no index, one of another format or profile, a literal tag the index
    stores merged with another (Virtuoso's geometry type is kept as ``geo:wktLiteral``), or an id the
    profile does not spell back into the IRI it came from. The entity ids' answer is in the index's meta
    (the build checked each id against its IRI: :class:`EntitySpelling`); only an index written before it
    was has every id read and spelled here (a load runs this under its lock, before it starts)."""
    from kg_adapters.index.read import open_index

    meta_path = index_dir(version_dir) / META
    try:
        meta = json.loads(meta_path.read_text("utf-8"))
    except FileNotFoundError:
        return "the previous version has no traversal index"
    except (OSError, ValueError) as exc:
        return f"the previous version's traversal index is unreadable ({exc})"
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME or meta.get("version") != FORMAT_VERSION:
        found = meta.get("version") if isinstance(meta, dict) else None
        return f"the previous version's traversal index has format {found}, not {FORMAT_VERSION}"
    if meta.get("profile") != profile.name:
        return f"the previous version's traversal index was built for profile {meta.get('profile')!r}"
    if "^" + GEO_WKT_LITERAL in meta.get("literal_tags", []):
        return "the previous version's index merges Virtuoso geometry literals into geo:wktLiteral"
    spelled = meta.get("entity_ids_spell_back")
    if spelled is False:
        failed = meta.get("unspelled_entity_id")
        return f"the entity id {failed!r} does not spell back into its IRI"
    index = open_index(version_dir)
    if index is None:
        return "the previous version's traversal index is unreadable"
    try:
        entity, relation = _spellings(profile)
        if spelled is not True:  # an index that does not say: every id spelled
            for number in range(index.entity_count):
                entity(index.name_from_file(number))
        for name in index.relations:
            relation(name)
    except NotReplayable as exc:
        return str(exc)
    finally:
        index.close()
    return None


def replay_into(collector: TripleCollector, version_dir: str | os.PathLike[str], profile: Profile) -> int:
    """Adds every default-graph triple the index of the store version at ``version_dir`` records to
    ``collector`` (see the module docstring); returns how many. Check :func:`replay_refusal` first."""
    import pyoxigraph as ox

    from kg_adapters.index.read import open_index

    index = open_index(version_dir)
    if index is None:
        raise NotReplayable(f"no readable traversal index in {Path(version_dir)}")
    meta = json.loads((index_dir(version_dir) / META).read_text("utf-8"))
    replayed = 0
    try:
        for text, count in _texts(index, profile, checked=meta.get("entity_ids_spell_back") is True):
            collector.add_rdf(text, ox.RdfFormat.N_TRIPLES)
            replayed += count
    finally:
        index.close()
    collector.check()
    return replayed


def _spellings(profile: Profile, *, checked: bool = False) -> tuple[Callable[[str], bytes], Callable[[str], bytes]]:
    """(entity id -> IRI, relation id -> IRI), as UTF-8; each raises :class:`NotReplayable` for an id
    the profile does not map back to itself (then the IRI it came from is not known). ``checked``: the
    index's build found that every entity id spells back into its IRI (:class:`EntitySpelling`), so entity
    ids are only spelled (a replay spells an entity once per block of triples it is in)."""

    def spelling(
        expand: Callable[[str], str], compact: Callable[[str], str] | None, what: str
    ) -> Callable[[str], bytes]:
        def iri(name: str) -> bytes:
            full = _expanded(expand, name)
            if compact is not None and (compact(full) != name or full.startswith("_:")):
                raise NotReplayable(f"the {what} id {name[:200]!r} does not spell back into its IRI")
            return full.encode("utf-8")

        return iri

    return (
        spelling(profile.entity_iri, None if checked else profile.entity_id, "entity"),
        spelling(profile.relation_iri, profile.relation_id, "relation"),
    )


def _texts(index: TraversalIndex, profile: Profile, *, checked: bool = False) -> Iterator[tuple[bytes, int]]:
    """N-Triples texts of about :data:`CHUNK_TRIPLES` triples each, and how many each holds: the edges,
    then the literals, then the blank-node stand-ins, a block of entities at a time (``checked``: see
    :func:`_spellings`)."""
    entity, relation = _spellings(profile, checked=checked)
    relations = [relation(name) for name in index.relations]
    yield from _edge_texts(index, entity, relations)
    values = _blob(index.directory / "literals.bin")
    try:
        yield from _literal_texts(index, entity, relations, values)
    finally:
        if isinstance(values, mmap.mmap):
            values.close()
    if index.blank_edges:
        yield from _blank_stand_ins(index, relations, entity)


def _edge_texts(
    index: TraversalIndex, entity: Callable[[str], bytes], relations: list[bytes]
) -> Iterator[tuple[bytes, int]]:
    """The IRI-to-IRI triples, a block of subjects at a time (each block's ids spelled once)."""
    import numpy as np

    names = index.name_from_file
    out_start, out_rel, out_other = (index.array(name) for name in ("out_start", "out_rel", "out_other"))
    for first, last in _blocks(out_start):
        lo, hi = int(out_start[first]), int(out_start[last])
        heads = np.repeat(np.arange(first, last, dtype=np.int64), np.diff(out_start[first : last + 1]))
        tails = out_other[lo:hi]
        spelled = {number: entity(names(number)) for number in np.unique(np.concatenate((heads, tails))).tolist()}
        lines = [
            b"<%s> <%s> <%s> .\n" % (spelled[head], relations[rel], spelled[tail])
            for head, rel, tail in zip(heads.tolist(), out_rel[lo:hi].tolist(), tails.tolist(), strict=True)
        ]
        yield b"".join(lines), len(lines)


def _literal_texts(
    index: TraversalIndex, entity: Callable[[str], bytes], relations: list[bytes], values: mmap.mmap | bytes
) -> Iterator[tuple[bytes, int]]:
    """The literal triples, a block of subjects at a time, from the literal table (``values``: its texts)."""
    import numpy as np

    names = index.name_from_file
    suffixes = [_suffix(tag) for tag in index.literal_tags]
    starts, rels, tags, offsets = (
        index.array(name) for name in ("literal_start", "literal_rel", "literal_tag", "literal_offsets")
    )
    for first, last in _blocks(starts):
        lo, hi = int(starts[first]), int(starts[last])
        owners = np.repeat(np.arange(first, last, dtype=np.int64), np.diff(starts[first : last + 1]))
        spelled = {number: entity(names(number)) for number in np.unique(owners).tolist()}
        bounds = offsets[lo : hi + 1].tolist()
        lines = [
            b'<%s> <%s> "%s"%s .\n' % (spelled[owner], relations[rel], _escaped(values[start:end]), suffixes[tag])
            for owner, rel, tag, start, end in zip(
                owners.tolist(), rels[lo:hi].tolist(), tags[lo:hi].tolist(), bounds[:-1], bounds[1:], strict=True
            )
        ]
        yield b"".join(lines), len(lines)


def _blank_stand_ins(
    index: TraversalIndex, relations: list[bytes], entity: Callable[[str], bytes]
) -> Iterator[tuple[bytes, int]]:
    """Triples with fresh blank nodes that give the collector what the old ones gave it: each (entity,
    relation) with a blank-node object that has no literal object of that relation, each one with a
    blank-node subject, every relation no other triple names, then blank-to-blank triples up to the
    recorded count (the index keeps no more of them). A block of entities at a time."""
    import numpy as np

    width = index.width
    used = np.zeros(width, dtype=bool)
    for column in ("out_rel", "literal_rel"):
        rows = index.array(column)
        for lo in range(0, rows.size, 1 << 22):
            used[np.unique(rows[lo : lo + (1 << 22)])] = True
    stand_ins = 0
    for side, pattern in (("out", b"<%s> <%s> _:b%d .\n"), ("in", b"_:b%d <%s> <%s> .\n")):
        starts = index.array(f"{side}_extra_start")
        for first, last in _blocks(starts):
            keys = _block_keys(index, f"{side}_extra", first, last)
            if side == "out":  # those with a literal object of the relation may have no blank one
                keys = keys[~np.isin(keys, _block_keys(index, "literal", first, last))]
            used[keys % width] = True
            spelled = {number: entity(index.name_from_file(number)) for number in np.unique(keys // width).tolist()}
            if side == "out":
                lines = [
                    pattern % (spelled[key // width], relations[key % width], n) for n, key in enumerate(keys.tolist())
                ]
            else:
                lines = [
                    pattern % (n, relations[key % width], spelled[key // width]) for n, key in enumerate(keys.tolist())
                ]
            stand_ins += len(lines)
            yield b"".join(lines), len(lines)
    unused = np.flatnonzero(~used[: len(relations)]).tolist()
    left = max(index.blank_edges - stand_ins, len(unused))
    for lo in range(0, left, CHUNK_TRIPLES):
        lines = [
            b"_:s%d <%s> _:o%d .\n" % (n, relations[unused[n] if n < len(unused) else 0], n)
            for n in range(lo, min(lo + CHUNK_TRIPLES, left))
        ]
        yield b"".join(lines), len(lines)


def _block_keys(index: TraversalIndex, name: str, first: int, last: int) -> Any:
    """``node * width + relation`` of the rows of entities ``[first, last)`` in the per-node relation
    column ``{name}_rel`` (see ``layout.COLUMNS``)."""
    import numpy as np

    starts = index.array(f"{name}_start")
    lo, hi = int(starts[first]), int(starts[last])
    nodes = np.repeat(np.arange(first, last, dtype=np.int64), np.diff(starts[first : last + 1]))
    return nodes * index.width + index.array(f"{name}_rel")[lo:hi].astype(np.int64)


def _blocks(starts: Any) -> Iterator[tuple[int, int]]:
    """Runs of entities ``[first, last)`` whose rows (``starts``: where each entity's begin) number about
    :data:`CHUNK_TRIPLES`; an entity with more rows is a run of its own."""
    import numpy as np

    bounds = np.asarray(starts)
    entities = bounds.size - 1
    first = 0
    while first < entities:
        last = int(np.searchsorted(bounds, bounds[first] + CHUNK_TRIPLES, side="right")) - 1
        last = min(max(last, first + 1), entities)
        if bounds[last] > bounds[first]:
            yield first, last
        first = last


def _blob(path: Path) -> mmap.mmap | bytes:
    """A file's bytes, mapped (an empty file cannot be)."""
    with open(path, "rb") as handle:
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if os.fstat(handle.fileno()).st_size else b""


def _suffix(tag: str) -> bytes:
    """The N-Triples suffix of a literal tag of the index (``""``, ``@lang``, ``^datatype``)."""
    if not tag:
        return b""
    return b"@" + tag[1:].encode() if tag[0] == "@" else b"^^<" + tag[1:].encode() + b">"


def _escaped(value: bytes) -> bytes:
    """A literal's UTF-8 text as an N-Triples string body."""
    if _NEEDS_ESCAPE.search(value) is None:
        return value
    for plain, escape in _ESCAPES:
        value = value.replace(plain, escape)
    return value
