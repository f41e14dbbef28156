"""A SQLite index over entity names, so ``search`` never scans labels with a FILTER.

Tiers, best first: exact (case- and accent-insensitive) name, name prefix, every word of the text
(the last one as a prefix), in any order; and only when none of those finds anything, every content
word of the text (stop words such as "where", "was", "by" left out; words of four letters or more as
prefixes), and for relations (:class:`~kg_adapters.relation_index.RelationIndex`) then any of them.
Words are stemmed by FTS5's Porter tokenizer ("married" finds "marriage", "directed" finds
"director"); the word tiers rank by BM25. On-disk stores keep the index beside the data; in-memory
graphs build it on first use. An index written before stemming (``unicode61`` alone) is read as it
is: the same tiers, without stems.

Stored compactly (:data:`_COMPACT_SCHEMA`): each IRI as a namespace number and its local part, and
the normalized name only where SQLite's ``lower`` of the name is not it; the view ``labels``
(rowid, iri, label, lang, norm) reads them as one table, the shape every reader queries (and the one
table of indexes written before, still read and written as they are).
"""

from __future__ import annotations

import itertools
import os
import re
import sqlite3
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path

from kg_adapters.errors import BackendError
from kg_adapters.store_layout import fsync_dir

_FTS = """
CREATE VIRTUAL TABLE IF NOT EXISTS labels_fts USING fts5(
    norm, content='labels', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 0', detail=none,
    columnsize=0
);
"""
"""The full-text index of the normalized names. ``columnsize=0``: no table of each name's length in tokens
(a row written per name, 40% of the index's build); BM25 counts the tokens of the names it ranks instead,
the same numbers (indexes written before keep their table, read as they are)."""
_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS labels (iri TEXT NOT NULL, label TEXT NOT NULL, lang TEXT NOT NULL, norm TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS labels_norm ON labels (norm);
"""
    + _FTS
)
"""One row per name (the layout of indexes written before the compact one, and of the relation index)."""
_COMPACT_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS label_namespaces (id INTEGER PRIMARY KEY, namespace TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS label_rows (
    namespace INTEGER NOT NULL, local TEXT NOT NULL, label TEXT NOT NULL, lang TEXT NOT NULL, norm TEXT
);
CREATE VIEW IF NOT EXISTS labels (rowid, iri, label, lang, norm) AS
    SELECT r.rowid, n.namespace || r.local, r.label, r.lang, coalesce(r.norm, lower(r.label))
    FROM label_rows r JOIN label_namespaces n ON n.id = r.namespace;
"""
    + _FTS
)
"""Each IRI as (namespace number, local part), ``norm`` NULL where ``lower(label)`` is the normalized
name; the index on the normalized name (``label_rows_norm``) is made after the rows are written."""
_NORM_IS_LOWER = " "
"""What the rows given to :data:`_COMPACT_INSERT` hold for a NULL ``norm`` (never a normalized name, which
starts with no space): a None bound costs SQLite's adapter lookup, ~0.6 us a row, a third of the insert."""
_COMPACT_INSERT = f"INSERT INTO label_rows VALUES (?, ?, ?, ?, nullif(?, '{_NORM_IS_LOWER}'))"
_SET_FTS = "INSERT INTO labels_fts(labels_fts, rank) VALUES (?, ?)"
_FTS_AUTOMERGE, _FTS_CRISIS_MERGE = 4, 16
"""FTS5's defaults for merging the segments of its index."""
_BUILD_CRISIS_MERGE = 256
"""Segments of one level the full-text index's build lets pile up before it merges them (FTS5 writes a
segment per MiB of names; merged once by the 'optimize' after the build: about half the CPU of merging
every 4 as they come)."""
_FREE_PAGES_KEPT = 32
"""A written index is vacuumed when more than 1/32 of its pages are free."""
_BUILDING_PRAGMAS = (
    "PRAGMA journal_mode = OFF",
    "PRAGMA synchronous = OFF",
    "PRAGMA locking_mode = EXCLUSIVE",
)
"""For a file written whole and then synced and renamed into place (:class:`IndexBuild`): no journal and
no syncs, since a half-written file is never read (a killed build leaves it aside and writes it again)."""
_COMPACT_NORM_INDEX = "CREATE INDEX IF NOT EXISTS label_rows_norm ON label_rows (coalesce(norm, lower(label)))"
_TOKEN = re.compile(r"[^\W_]+")  # the token characters of FTS5's unicode61 tokenizer
_PREFIX_END = "\U0010ffff"
EXACT, PREFIX, ALL_WORDS, CONTENT_WORDS, ANY_WORD = range(5)
"""The tiers of a hit, best first (:meth:`LabelIndex.ranked`)."""
STOP_WORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "being",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "that",
        "the",
        "their",
        "them",
        "they",
        "this",
        "those",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "why",
        "with",
        "you",
        "your",
    }
)
"""Function words left out of the any-word tier ("where was he born" is asked by "born") and out of
the offline scorers' tokens (``reasoning.scorers``)."""
_STEMMED_PREFIX_MIN = 4
"""Words at least this long match as prefixes of stems in the any-word tier ("direct*": "director")."""


def word_tokens(normalized: str) -> list[str]:
    """The words of a :func:`normalize`-d text, as the FTS5 index splits names."""
    return _TOKEN.findall(normalized)


def content_words(tokens: list[str]) -> list[str]:
    """``tokens`` without stop words (all of them when every one is a stop word)."""
    kept = [token for token in tokens if token not in STOP_WORDS]
    return kept or tokens


def fts_content_words(tokens: list[str], operator: str) -> str:
    """An FTS5 query joining the content words of ``tokens`` with ``operator`` (AND, OR), words of
    four letters or more as prefixes of stems."""
    terms = []
    for token in dict.fromkeys(content_words(tokens)):
        term = '"' + token.replace('"', '""') + '"'
        terms.append(term + "*" if len(token) >= _STEMMED_PREFIX_MIN else term)
    return f" {operator} ".join(terms)


def normalize(text: str) -> str:
    """Case-folded, NFKC, accents removed, whitespace collapsed."""
    if text.isascii():  # most names: the same result, ~10x faster (a load normalizes every name)
        return " ".join(text.lower().split())
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(unicodedata.normalize("NFKC", stripped).split())


class LabelIndex:
    """Names of entities by full IRI. ``path=None`` keeps the index in memory."""

    any_word_fallback = False
    """Whether a text no name holds every content word of finds names holding any of them. Not for
    entities: linking "chain 3000" to "chain 0" would be a wrong answer, not a weaker one."""

    compact = True
    """Whether a new index is written in the compact layout (:data:`_COMPACT_SCHEMA`)."""

    def __init__(self, path: str | None = None, *, read_only: bool = False, building: bool = False) -> None:
        try:
            if path is None:
                self._db = sqlite3.connect(":memory:", check_same_thread=False)
            elif read_only:
                self._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            else:
                self._db = sqlite3.connect(path, check_same_thread=False)
            if building:  # a new file no one reads until it is complete, synced and renamed (IndexBuild)
                for pragma in _BUILDING_PRAGMAS:
                    self._db.execute(pragma)
            if not read_only:
                found = self._db.execute("SELECT type FROM sqlite_master WHERE name = 'labels'").fetchone()
                self.compact = found[0] == "view" if found else self.compact
                self._db.executescript(_COMPACT_SCHEMA if self.compact else _SCHEMA)
        except sqlite3.Error as exc:
            raise BackendError(f"cannot open the label index {path}: {exc}") from exc

    def add(self, rows: Iterable[tuple[str, str, str]]) -> int:
        """Adds (iri, label, lang) rows; returns how many. SQLite failures (a full disk) raise BackendError."""
        count = self.insert(rows)
        self.index_rows()
        return count

    def insert(self, rows: Iterable[tuple[str, str, str]]) -> int:
        """The first half of :meth:`add`: writes the rows, not yet found by a search until
        :meth:`index_rows` (which holds no row in Python: it may run while other work holds the rows'
        source, see :class:`IndexBuild`); returns how many."""
        try:
            return self._insert(rows)
        except sqlite3.Error as exc:
            raise BackendError(f"cannot write the label index: {exc}") from exc

    def index_rows(self) -> None:
        """The second half of :meth:`add`: the full-text index and the index on names of the rows
        written (all of it inside SQLite, which lets go of the GIL)."""
        try:
            self._index_rows()
        except sqlite3.Error as exc:
            raise BackendError(f"cannot write the label index: {exc}") from exc

    def _insert(self, rows: Iterable[tuple[str, str, str]]) -> int:
        count = 0
        with self._db:
            cursor = self._db.cursor()
            shaped: Iterator[tuple[object, ...]]
            if self.compact:  # the index on names is made after the rows (sorted once: full pages)
                cursor.execute("DROP INDEX IF EXISTS label_rows_norm")
                shaped = self._compact_rows(cursor, rows)
                insert = _COMPACT_INSERT
            else:
                shaped = ((iri, label, lang, normalize(label)) for iri, label, lang in rows)
                insert = "INSERT INTO labels VALUES (?, ?, ?, ?)"
            for batch in iter(lambda: list(itertools.islice(shaped, 10_000)), []):
                cursor.executemany(insert, batch)
                count += len(batch)
        return count

    def _index_rows(self) -> None:
        with self._db:
            cursor = self._db.cursor()
            # one pass of merges: segments are left to pile up while the rows are read, then merged once
            cursor.execute(_SET_FTS, ("automerge", 0))
            cursor.execute(_SET_FTS, ("crisismerge", _BUILD_CRISIS_MERGE))
            cursor.execute("INSERT INTO labels_fts(labels_fts) VALUES ('rebuild')")
            cursor.execute("INSERT INTO labels_fts(labels_fts) VALUES ('optimize')")  # one segment: smaller
            cursor.execute(_SET_FTS, ("automerge", _FTS_AUTOMERGE))  # FTS5's own, for any later write
            cursor.execute(_SET_FTS, ("crisismerge", _FTS_CRISIS_MERGE))
            if self.compact:  # after the merges: its pages take those they freed
                cursor.execute(_COMPACT_NORM_INDEX)
        free, pages = (self._db.execute(f"PRAGMA {name}").fetchone()[0] for name in ("freelist_count", "page_count"))
        if self.compact and free * _FREE_PAGES_KEPT > pages:
            self._db.execute("VACUUM")  # the pages the merges left free (most often none: see above)

    def split_iri(self, iri: str) -> tuple[int | None, str]:
        """(namespace number, local part) of ``iri`` as the compact layout stores it (None: a
        namespace no row has)."""
        cut = max(iri.rfind("/"), iri.rfind("#")) + 1
        found = self._db.execute("SELECT id FROM label_namespaces WHERE namespace = ?", (iri[:cut],)).fetchone()
        return (found[0] if found else None), iri[cut:]

    @staticmethod
    def _compact_rows(
        cursor: sqlite3.Cursor, rows: Iterable[tuple[str, str, str]]
    ) -> Iterator[tuple[int, str, str, str, str]]:
        """``rows`` as :data:`_COMPACT_INSERT` writes them, new namespaces written as they appear."""
        numbers = {
            namespace: number for number, namespace in cursor.execute("SELECT id, namespace FROM label_namespaces")
        }
        for iri, label, lang in rows:
            cut = max(iri.rfind("/"), iri.rfind("#")) + 1  # (split_iri, inlined: once per row)
            namespace = iri[:cut]
            number = numbers.get(namespace)
            if number is None:
                number = numbers[namespace] = len(numbers)
                cursor.execute("INSERT INTO label_namespaces VALUES (?, ?)", (number, namespace))
            norm = normalize(label)
            # lower() of SQLite folds ASCII letters only: a name it normalizes stores no copy
            yield number, iri[cut:], label, lang, _NORM_IS_LOWER if label.isascii() and norm == label.lower() else norm

    def clear(self) -> None:
        try:
            with self._db:
                self._db.execute("DELETE FROM label_rows" if self.compact else "DELETE FROM labels")
                self._db.execute("INSERT INTO labels_fts(labels_fts) VALUES ('rebuild')")
        except sqlite3.Error as exc:
            raise BackendError(f"cannot write the label index: {exc}") from exc

    def search(self, text: str, limit: int) -> list[tuple[str, str]]:
        """(iri, label) pairs, best first, each IRI once."""
        return [(iri, label) for iri, label, _ in self.ranked(text, limit)]

    def ranked(self, text: str, limit: int) -> list[tuple[str, str, int]]:
        """(iri, label, tier) triples, best first, each IRI once (see the module docstring)."""
        norm = normalize(text)
        if not norm or limit <= 0:
            return []
        found: dict[str, tuple[str, int]] = {}

        def take(tier: int, sql: str, params: tuple[object, ...]) -> None:
            try:
                rows = self._db.execute(sql, (*params, limit + len(found))).fetchall()
            except sqlite3.Error as exc:
                raise BackendError(f"the label index failed on {text!r:.200}: {exc}") from exc
            for iri, label in rows:
                if iri not in found:
                    found[iri] = (label, tier)
                if len(found) >= limit:
                    return

        order = "ORDER BY length(label), lang != 'en', iri LIMIT ?"
        take(EXACT, f"SELECT iri, label FROM labels WHERE norm = ? {order}", (norm,))
        if len(found) < limit:
            prefix = f"SELECT iri, label FROM labels WHERE norm > ? AND norm < ? {order}"
            take(PREFIX, prefix, (norm, norm + _PREFIX_END))
        tokens = word_tokens(norm)
        fts = (
            "SELECT l.iri, l.label FROM labels_fts f JOIN labels l ON l.rowid = f.rowid "
            "WHERE labels_fts MATCH ? ORDER BY f.rank, length(l.label), l.iri LIMIT ?"
        )
        if len(found) < limit and tokens:
            quoted = ['"' + token.replace('"', '""') + '"' for token in tokens]
            quoted[-1] += "*"  # the last token may be unfinished, as typed
            take(ALL_WORDS, fts, (" AND ".join(quoted),))
        # fallbacks, only when nothing holds every word (such names are never diluted): every content
        # word ("directed by": "direct*" finds "director"), then any of them
        if not found and tokens:
            take(CONTENT_WORDS, fts, (fts_content_words(tokens, "AND"),))
        if not found and tokens and self.any_word_fallback:
            take(ANY_WORD, fts, (fts_content_words(tokens, "OR"),))
        return [(iri, label, tier) for iri, (label, tier) in list(found.items())[:limit]]

    def close(self) -> None:
        self._db.close()


class IndexBuild:
    """A new name index (or relation index, ``kind``) for ``path``, written into a file beside it
    (``<path>.building``, without a journal or syncs: :data:`_BUILDING_PRAGMAS`) and, once complete,
    synced and renamed over ``path`` (:meth:`finish`): a reader, or a load resumed after a kill, never
    finds half an index at ``path``; a build killed midway leaves its file aside, and the next one starts
    it again. :meth:`insert` then :meth:`finish` is :meth:`LabelIndex.add` on a new file; ``finish`` holds
    no row in Python, so it may run on a thread beside other work once the rows are in."""

    def __init__(self, path: str, kind: type[LabelIndex] = LabelIndex) -> None:
        self.path = Path(path)
        self.building = self.path.with_name(self.path.name + ".building")
        self.building.unlink(missing_ok=True)  # left by a killed build
        self._index = kind(str(self.building), building=True)

    def insert(self, rows: Iterable[tuple[str, str, str]]) -> int:
        """Writes (iri, label, lang) rows; returns how many (:meth:`LabelIndex.insert`)."""
        try:
            return self._index.insert(rows)
        except BaseException:
            self.abandon()
            raise

    def finish(self) -> None:
        """Indexes the rows written, syncs the file and renames it to ``path``."""
        try:
            self._index.index_rows()
            self._index.close()
            fsync_dir(self.building)  # a file too: opened read-only and synced
            os.replace(self.building, self.path)
            fsync_dir(self.path.parent)
        except OSError as exc:  # pragma: no cover - a full disk, a lost directory
            self.abandon()
            raise BackendError(f"cannot write the label index {self.path}: {exc}") from exc
        except BaseException:
            self.abandon()
            raise

    def abandon(self) -> None:
        """Closes and removes the file being written (a failed build's)."""
        self._index.close()
        self.building.unlink(missing_ok=True)
