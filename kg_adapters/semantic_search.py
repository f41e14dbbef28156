"""Search that understands how people ask: MiniLM embeddings fused with the lexical ranking.

Relations: every relation is embedded once per graph from its labels in the profile's languages
(untagged ones too) and from the words of its id where those say something (Freebase
``people.person.place_of_birth`` -> "people person place of birth"; Wikidata's ``P19`` says nothing and
is left to its label). A query is ranked by cosine similarity to the closest text of each relation,
and that ranking is fused with the lexical one of :mod:`kg_adapters.label_index` by reciprocal rank
(an exact name stays first). The vectors of an on-disk store are cached in its version directory (keyed
by the texts and the model), so the cost -- about 10 ms per relation -- is paid once per store version;
other graphs keep them for the connection.

Entities: a store may hold millions of names (embedding 1M names costs over an hour), so names are not
embedded up front: the lexical tiers (exact, prefix, every word, stemmed, then every content word) choose
at most :data:`ENTITY_POOL` candidates, and those of the last tier -- where the text holds words no name
has, and the lexical order says least -- are re-ranked by fusing their lexical rank with the similarity
of their names to the query. Such a search costs one query embedding and at most ``ENTITY_POOL`` name
embeddings (names are remembered per process), whatever the store's size; the others cost none.

``search="auto"`` (the default) uses the encoder when the ``embeddings`` extra is installed and the
lexical search alone when it is not; ``"semantic"`` requires it (MissingDependency with the install
command otherwise); ``"lexical"`` never uses it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from kg_adapters.errors import InvalidTermError, MissingDependency

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from kg_adapters.encoder import MiniLMEncoder

SearchMode = Literal["auto", "semantic", "lexical"]
SEARCH_MODES: tuple[SearchMode, ...] = ("auto", "semantic", "lexical")
MODEL_NAME = "all-MiniLM-L6-v2"
SEMANTIC_FLOOR = 0.3
"""Cosine similarity below which a relation or name is no semantic match (unrelated texts score
0.1-0.3 with this model; the paraphrases of the benchmark set score 0.35 and up)."""
SEMANTIC_MARGIN = 0.2
"""A semantic match must also score within this much of the query's best one: next to an exact match
(1.0) a relation at 0.4 is noise, next to a best paraphrase at 0.6 it is a candidate. (On the benchmark's
phrasings no relation in the top 5 that answers the phrasing falls outside this margin.)"""
RRF_K = 10
"""Reciprocal-rank fusion constant: a hit's score is the sum of ``weight / (RRF_K + rank)`` over the
rankings it appears in. Small, because only the first few places of either ranking matter to a top-k answer."""
ANY_WORD_WEIGHT = 0.25
"""The fusion weight of a lexical hit that shares only some words with the query ("country" in "citizen of
which country" matches a dozen relations): weak evidence beside the meaning of the whole phrase."""
ENTITY_POOL = 20
"""Most lexical candidates of an entity search re-ranked semantically."""
RELATION_POOL = 50
"""Most lexical hits of a relation search fused with the semantic ranking."""
VECTORS_FILE = "relations.minilm.npz"
"""The cached relation vectors, beside ``relations.sqlite`` in a store's version directory."""
_MEANINGFUL_WORD = re.compile(r"[^\W\d_]{3,}")


def check_search_mode(value: object) -> SearchMode:
    """The ``search`` option: auto, semantic or lexical."""
    for mode in SEARCH_MODES:
        if value == mode:
            return mode
    raise InvalidTermError(f"search must be one of {', '.join(SEARCH_MODES)}; got {value!r:.100}")


# -- the encoder, once per process --------------------------------------------------------------------
_encoder_lock = threading.Lock()
_encoder: MiniLMEncoder | None = None
_encoder_missing: MissingDependency | None = None


def search_encoder(mode: SearchMode) -> MiniLMEncoder | None:
    """The process's MiniLM encoder for ``mode``: None for ``lexical``, and for ``auto`` when the
    embeddings extra is not installed. Raises MissingDependency for ``semantic`` without it."""
    global _encoder, _encoder_missing
    if mode == "lexical":
        return None
    with _encoder_lock:
        if _encoder is None and _encoder_missing is None:
            from kg_adapters.encoder import load_minilm

            try:
                _encoder = load_minilm()
            except MissingDependency as exc:
                _encoder_missing = exc
        if _encoder is None and mode == "semantic":
            assert _encoder_missing is not None
            raise MissingDependency(str(_encoder_missing)) from _encoder_missing
        return _encoder


_blas_lock = threading.Lock()
_blas: object | None = None


def encode(encoder: MiniLMEncoder, texts: Sequence[str]) -> NDArray[np.float32]:
    """``encoder.encode(texts)`` with the BLAS library on one thread (through ``threadpoolctl`` when it
    is installed): the encoder's matrices are small, and on a busy machine OpenBLAS's threads spin
    waiting for each other -- measured 5x slower with two threads than with one at a load of 8 on 2 cores."""
    global _blas
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return encoder.encode(texts)
    with _blas_lock:
        if _blas is None:
            _blas = ThreadpoolController()
    assert isinstance(_blas, ThreadpoolController)
    with _blas.limit(limits=1, user_api="blas"):
        return encoder.encode(texts)


class _VectorMemo:
    """Embeddings of short texts (queries, entity names) remembered per process, least recently used
    first out: agents repeat searches, and a name re-ranked once is likely to be again."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._vectors: OrderedDict[str, NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()

    def encode(self, encoder: MiniLMEncoder, texts: Sequence[str]) -> NDArray[np.float32]:
        import numpy as np

        with self._lock:
            missing = [text for text in dict.fromkeys(texts) if text not in self._vectors]
        fresh = encode(encoder, missing) if missing else None
        with self._lock:
            if fresh is not None:
                for text, vector in zip(missing, fresh, strict=True):
                    self._vectors[text] = vector
            rows = []
            for text in texts:
                vector = self._vectors.get(text)
                if vector is None:  # evicted by another thread meanwhile: encode again below
                    vector = encode(encoder, [text])[0]
                    self._vectors[text] = vector
                self._vectors.move_to_end(text)
                rows.append(vector)
            while len(self._vectors) > self._capacity:
                self._vectors.popitem(last=False)
        return np.stack(rows) if rows else np.zeros((0, 0), dtype=np.float32)


_memo = _VectorMemo(capacity=20_000)


def embed(encoder: MiniLMEncoder, texts: Sequence[str]) -> NDArray[np.float32]:
    """Unit vectors of ``texts`` (remembered per process)."""
    return _memo.encode(encoder, texts)


# -- relations -----------------------------------------------------------------------------------------
def relation_texts(rows: Iterable[tuple[str, str, str]], langs: Sequence[str]) -> dict[str, list[str]]:
    """The texts each relation is embedded from, from the relation index's (iri, text, lang) rows: its
    labels and aliases in ``langs`` or untagged (else its first label in any language), and the phrase of
    its id (:func:`~kg_adapters.relation_index.id_phrase`) when that holds a word of three letters or more
    (``P19`` does not), or when the relation has no label at all."""
    from kg_adapters.relation_index import id_phrase, real_lang

    labels: dict[str, list[str]] = {}
    others: dict[str, str] = {}
    relations: set[str] = set()
    wanted = {lang.split("-")[0] for lang in langs}
    for iri, text, tag in rows:
        relations.add(iri)
        lang = real_lang(tag)
        if lang is None:
            continue
        if not lang or lang.split("-")[0] in wanted:
            labels.setdefault(iri, []).append(text)
        else:
            others.setdefault(iri, text)
    texts: dict[str, list[str]] = {}
    for iri in sorted(relations):
        found = list(labels.get(iri, ())) or ([others[iri]] if iri in others else [])
        phrase = id_phrase(iri)
        if phrase and (not found or _MEANINGFUL_WORD.search(phrase)):
            found.append(phrase)
        cleaned = list(dict.fromkeys(" ".join(text.split()) for text in found if text.strip()))
        if cleaned:
            texts[iri] = cleaned
    return texts


class RelationVectors:
    """One unit vector per relation text; ``owners[i]`` is the relation of row ``i``."""

    def __init__(self, iris: list[str], owners: NDArray[np.int32], vectors: NDArray[np.float32], key: str) -> None:
        self.iris = iris
        self.owners = owners
        self.vectors = vectors
        self.key = key

    @staticmethod
    def key_of(texts: Mapping[str, Sequence[str]]) -> str:
        """What the vectors depend on: the model and every text."""
        digest = hashlib.sha256(MODEL_NAME.encode())
        digest.update(json.dumps(sorted((iri, list(values)) for iri, values in texts.items())).encode())
        return digest.hexdigest()

    @classmethod
    def build(cls, encoder: MiniLMEncoder, texts: Mapping[str, Sequence[str]]) -> RelationVectors:
        import numpy as np

        iris = sorted(texts)
        owners = np.array([i for i, iri in enumerate(iris) for _ in texts[iri]], dtype=np.int32)
        flat = [text for iri in iris for text in texts[iri]]
        vectors = encode(encoder, flat) if flat else np.zeros((0, 384), dtype=np.float32)
        return cls(iris, owners, vectors, cls.key_of(texts))

    @classmethod
    def load(cls, path: Path, key: str) -> RelationVectors | None:
        """The vectors cached at ``path`` when they were made for ``key``; None otherwise (absent,
        stale or unreadable: the caller builds them again)."""
        import numpy as np

        try:
            with np.load(path, allow_pickle=False) as data:
                if str(data["key"]) != key:
                    return None
                iris = [str(iri) for iri in data["iris"]]
                owners = np.asarray(data["owners"], dtype=np.int32)
                vectors = np.asarray(data["vectors"], dtype=np.float32)
        except (OSError, KeyError, ValueError):
            return None
        if len(owners) != len(vectors) or (len(owners) and int(owners.max()) >= len(iris)):
            return None
        return cls(iris, owners, vectors, key)

    def save(self, path: Path) -> None:
        """Writes the cache atomically (a temporary file renamed); a directory we may not write to
        leaves the vectors in memory only."""
        import numpy as np

        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            with open(tmp, "wb") as handle:
                np.savez(
                    handle,
                    key=np.array(self.key),
                    iris=np.array(self.iris, dtype=str),
                    owners=self.owners,
                    vectors=self.vectors.astype(np.float16),
                )
            os.replace(tmp, path)
        except OSError:
            tmp.unlink(missing_ok=True)

    def ranked(self, query: NDArray[np.float32]) -> list[tuple[str, float]]:
        """(relation iri, similarity of its closest text), best first: those at or above
        :data:`SEMANTIC_FLOOR` and within :data:`SEMANTIC_MARGIN` of the best."""
        import numpy as np

        if not len(self.vectors):
            return []
        similarity = self.vectors @ query
        best = np.full(len(self.iris), -1.0, dtype=np.float32)
        np.maximum.at(best, self.owners, similarity)
        order = np.argsort(-best, kind="stable")
        cut = max(SEMANTIC_FLOOR, float(best[order[0]]) - SEMANTIC_MARGIN)
        return [(self.iris[i], float(best[i])) for i in order if best[i] >= cut]


def relation_vectors(encoder: MiniLMEncoder, texts: Mapping[str, Sequence[str]], cache: Path | None) -> RelationVectors:
    """The vectors of ``texts``, from ``cache`` when it holds them, else embedded (and cached there)."""
    key = RelationVectors.key_of(texts)
    if cache is not None:
        found = RelationVectors.load(cache, key)
        if found is not None:
            return found
    vectors = RelationVectors.build(encoder, texts)
    if cache is not None:
        vectors.save(cache)
    return vectors


# -- fusion --------------------------------------------------------------------------------------------
def fuse(lexical: Sequence[tuple[str, int]], semantic: Sequence[str], *, pinned: int) -> list[str]:
    """Ids by reciprocal-rank fusion of ``lexical`` ((id, tier) best first, tiers of
    :mod:`kg_adapters.label_index`) and ``semantic`` (ids best first). Lexical hits of tier ``pinned`` or
    better come first, in their order (a name typed as it is written is found as it always was); the
    rest are fused, hits sharing only some words with the query weighing :data:`ANY_WORD_WEIGHT`."""
    from kg_adapters.label_index import ANY_WORD

    first = [hit for hit, tier in lexical if tier <= pinned]
    score: dict[str, float] = {}
    for rank, (hit, tier) in enumerate(lexical):
        weight = ANY_WORD_WEIGHT if tier == ANY_WORD else 1.0
        score[hit] = score.get(hit, 0.0) + weight / (RRF_K + rank + 1)
    for rank, hit in enumerate(semantic):
        score[hit] = score.get(hit, 0.0) + 1.0 / (RRF_K + rank + 1)
    chosen = set(first)
    rest = sorted((hit for hit in score if hit not in chosen), key=lambda hit: -score[hit])
    return first + rest


def rerank_entities(
    encoder: MiniLMEncoder | None, text: str, hits: Sequence[tuple[str, str, int]], limit: int
) -> list[tuple[str, str]]:
    """The best ``limit`` of (iri, label, tier) lexical ``hits``: names holding every word of ``text``
    in lexical order; names found only by the content words of ``text`` in the order fused from their
    lexical rank and the similarity of their names to ``text`` (lexical order alone without an encoder).
    Only the latter are embedded."""
    from kg_adapters.label_index import ALL_WORDS

    labels = {iri: label for iri, label, _ in hits}
    partial = [(iri, label) for iri, label, tier in hits if tier > ALL_WORDS]
    if encoder is None or len(hits) - len(partial) >= limit or len(partial) <= 1:
        return [(iri, label) for iri, label, _ in hits[:limit]]
    import numpy as np

    query = embed(encoder, [text])[0]
    similarity = embed(encoder, [label for _, label in partial]) @ query
    order = [partial[i][0] for i in np.argsort(-similarity, kind="stable") if similarity[i] >= SEMANTIC_FLOOR]
    fused = fuse([(iri, tier) for iri, _, tier in hits], order, pinned=ALL_WORDS)
    return [(iri, labels[iri]) for iri in fused[:limit]]
