"""A SQLite index over entity names, so ``search`` never scans labels with a FILTER.

Tiers, best first: exact (case- and accent-insensitive) name, name prefix, then every token of
the text, the last one as a prefix (FTS5, ranked by BM25). On-disk stores keep the index beside
the data; in-memory graphs build it on first use.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections.abc import Iterable

from kg_adapters.errors import BackendError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS labels (iri TEXT NOT NULL, label TEXT NOT NULL, lang TEXT NOT NULL, norm TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS labels_norm ON labels (norm);
CREATE VIRTUAL TABLE IF NOT EXISTS labels_fts USING fts5(
    norm, content='labels', content_rowid='rowid', tokenize='unicode61 remove_diacritics 0', detail=none
);
"""
_TOKEN = re.compile(r"[^\W_]+")  # the token characters of FTS5's unicode61 tokenizer
_PREFIX_END = "\U0010ffff"


def normalize(text: str) -> str:
    """Case-folded, NFKC, accents removed, whitespace collapsed."""
    if text.isascii():  # most names: the same result, ~10x faster (a load normalizes every name)
        return " ".join(text.lower().split())
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(unicodedata.normalize("NFKC", stripped).split())


class LabelIndex:
    """Names of entities by full IRI. ``path=None`` keeps the index in memory."""

    def __init__(self, path: str | None = None, *, read_only: bool = False) -> None:
        try:
            if path is None:
                self._db = sqlite3.connect(":memory:", check_same_thread=False)
            elif read_only:
                self._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            else:
                self._db = sqlite3.connect(path, check_same_thread=False)
            if not read_only:
                self._db.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise BackendError(f"cannot open the label index {path}: {exc}") from exc

    def add(self, rows: Iterable[tuple[str, str, str]]) -> int:
        """Adds (iri, label, lang) rows; returns how many. SQLite failures (a full disk) raise BackendError."""
        try:
            return self._add(rows)
        except sqlite3.Error as exc:
            raise BackendError(f"cannot write the label index: {exc}") from exc

    def _add(self, rows: Iterable[tuple[str, str, str]]) -> int:
        count = 0
        with self._db:
            cursor = self._db.cursor()
            batch: list[tuple[str, str, str, str]] = []
            for iri, label, lang in rows:
                batch.append((iri, label, lang, normalize(label)))
                if len(batch) >= 10_000:
                    cursor.executemany("INSERT INTO labels VALUES (?, ?, ?, ?)", batch)
                    count += len(batch)
                    batch.clear()
            cursor.executemany("INSERT INTO labels VALUES (?, ?, ?, ?)", batch)
            count += len(batch)
            cursor.execute("INSERT INTO labels_fts(labels_fts) VALUES ('rebuild')")
        return count

    def clear(self) -> None:
        try:
            with self._db:
                self._db.execute("DELETE FROM labels")
                self._db.execute("INSERT INTO labels_fts(labels_fts) VALUES ('rebuild')")
        except sqlite3.Error as exc:
            raise BackendError(f"cannot write the label index: {exc}") from exc

    def search(self, text: str, limit: int) -> list[tuple[str, str]]:
        """(iri, label) pairs, best first, each IRI once."""
        norm = normalize(text)
        if not norm or limit <= 0:
            return []
        found: dict[str, str] = {}

        def take(sql: str, params: tuple[object, ...]) -> None:
            try:
                rows = self._db.execute(sql, (*params, limit + len(found))).fetchall()
            except sqlite3.Error as exc:
                raise BackendError(f"the label index failed on {text!r}: {exc}") from exc
            for iri, label in rows:
                if iri not in found:
                    found[iri] = label
                if len(found) >= limit:
                    return

        order = "ORDER BY length(label), lang != 'en', iri LIMIT ?"
        take(f"SELECT iri, label FROM labels WHERE norm = ? {order}", (norm,))
        if len(found) < limit:
            take(
                f"SELECT iri, label FROM labels WHERE norm > ? AND norm < ? {order}",
                (norm, norm + _PREFIX_END),
            )
        tokens = _TOKEN.findall(norm)
        if len(found) < limit and tokens:
            quoted = ['"' + token.replace('"', '""') + '"' for token in tokens]
            quoted[-1] += "*"  # the last token may be unfinished, as typed
            match = " AND ".join(quoted)
            take(
                "SELECT l.iri, l.label FROM labels_fts f JOIN labels l ON l.rowid = f.rowid "
                "WHERE labels_fts MATCH ? ORDER BY f.rank, length(l.label), l.iri LIMIT ?",
                (match,),
            )
        return list(found.items())[:limit]

    def close(self) -> None:
        self._db.close()
