"""Decisions on a scorer's judgements that hold whatever the scorer's scale.

BM25 gives 0 to a text that shares no word with the question and saturates at 1; a cosine similarity
gives every text something (unrelated relation names score 0.1-0.3 against a question, the right one
0.4-0.9) and hardly ever ties. A rule written as ``score > 0`` or ``score >= 0.6`` therefore means
something else on each, so the methods decide only by

* rank: the k best texts;
* relevance (:meth:`Judge.relevance`): where a score lies between the background -- what an unrelated
  text scores: the scorer's declared ``unrelated`` level (BM25: 0, a text sharing no word), else the
  median score of the texts judged together, most of which are unrelated -- and the best score, so 0 is
  "like an unrelated text" and 1 "like the best one" on every scorer (unchanged by any increasing affine
  change of the scores);
* calibrated units (:meth:`Judge.calibrated`) where a rule needs a level that holds across calls (a
  threshold, a product of scores from different calls): a scorer may declare ``unrelated`` and ``stated``
  -- what a text unrelated to the query scores, and one stating what the query asks (BM25: 0 and 1, so
  its scores are already in these units; MiniLM: the cosines measured for relation names against
  questions) -- and a score becomes ``(score - unrelated) / (stated - unrelated)`` clipped to [0, 1]; an
  undeclared scorer's scores are read in relevance units of their own call instead;
* comparisons of texts scored in one call, in those units: a tie band (:data:`TIE_BAND`) stands in
  for BM25's exact ties, and a longer relation path must beat a shorter one by a cost per extra hop
  (:func:`path_cost`, :meth:`Judge.order`), where BM25 relied on an irrelevant relation adding no word.

Everything is scored against :func:`question_focus`, the question without its topic entities' names: a
name is not what the question asks for, and it moves a sentence embedding more than the words that are.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from kg_adapters.label_index import STOP_WORDS
from reasoning.base import Scorer
from reasoning.scorers import stem

T = TypeVar("T")

TIE_BAND = 0.1
"""Scores closer than this, in calibrated units (:meth:`Judge.calibrated`: unrelated 0, stated 1), tie."""
HOP_COST = 0.02
"""What each hop after the first must add, in path-score units (:meth:`Judge.path_scores`: 0 for a path
stating nothing of the question, 1 for one stating all of it; :meth:`Judge.order` applies it on the same
0-1 scale of relevance units): enough to break a near tie in favour of the shorter path, not so much that
a path naming the question's relations loses to a prefix of it that already scores near the top (a
semantic scorer rates "place of birth" close to "place of birth, country" for "Which country is the place
of birth of X in?")."""
COVERAGE_WEIGHT = 2.0
"""How much more an alignment weighs coverage than precision (the beta of their F-measure): a question's
every content word should be explained, while a reworded relation is never stated as exactly as a label
("How is the nation that produced X governed?": "produced by" states "produced" exactly and leaves the rest
unexplained; "country, form of government" states all of it, each word less exactly)."""
INVERSE_COST = 0.2
"""What each hop walked against its edge's direction must add, in the units of :data:`HOP_COST` (a question
usually asks along an edge)."""


def question_focus(question: str, names: Iterable[str]) -> str:
    """The question without the given names (case ignored; a possessive ``'s`` goes with its name):
    "Where was the wife of Tom Hanks born?" -> "Where was the wife of born?". The question itself when
    nothing else would be left."""
    text = question
    for name in sorted({n.strip() for n in names if n and n.strip()}, key=len, reverse=True):
        pattern = re.compile(r"(?<!\w)" + re.escape(name) + r"(?:'s|’s|')?(?!\w)", re.IGNORECASE)
        text = pattern.sub(" ", text)
    focused = " ".join(text.split())
    return focused if re.search(r"[^\W\d_]", focused) else question


class Judge:
    """One question's scorer judgements: texts scored against the question's focus, and decisions on
    those scores in relevance units of the call they came from (a lexical scorer's scores depend on
    the texts scored together -- BM25's idf and length norm -- so only scores of one call compare)."""

    def __init__(
        self, scorer: Scorer, question: str, names: Iterable[str] = (), *, ties_to_earlier: bool = False
    ) -> None:
        """``ties_to_earlier``: in a path's alignment a word two relations state equally well counts for
        the earlier one (Freebase's "country" then "country capital", ``location.country.capital``, both
        count for "What is the capital of the country of X?", while "capital" after "country" still states
        nothing new for "In which country is the place of birth of X?"); by default it counts for
        neither, so both may be detours."""
        self.scorer = scorer
        self.ties_to_earlier = ties_to_earlier
        self.question = question
        self.focus = question_focus(question, names)
        self.words, self.spans = question_spans(self.focus)
        said = _WORD.findall(self.focus.lower())
        self.mentions = tuple(said.count(word) for word in self.words)
        """How often the focus says each content word ("influenced" twice in "Who influenced the people who
        influenced?")."""
        self._cells: dict[str, tuple[float, tuple[float, ...]]] = {}
        self._domains: set[str] = set()
        self._specific: set[str] = set()

    def _unkinded(self) -> str:
        """The focus without its kind words (:meth:`kind_words`), as a path read as one text is scored
        against it: "the people who influenced" must not favour a path through ``people.person.*``."""
        kinds = [word for word, kind in zip(self.words, self.kind_words(), strict=True) if kind]
        if not kinds:
            return self.focus
        pattern = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, kinds)) + r")(?!\w)", re.IGNORECASE)
        text = " ".join(pattern.sub(" ", self.focus).split())
        return text if re.search(r"[^\W\d_]", text) else self.focus

    def kind_words(self) -> tuple[bool, ...]:
        """Per content word, whether it names a kind of thing rather than a relation: the ids of the relations
        judged so far hold it as their domain (an id's first word where its specific words leave it out,
        stemmed: "people" in ``people.person.gender``, whose specific words "person gender" only repeat it and
        add "gender") and none holds it among its specific words beyond that. "Who influenced the people who
        influenced X?" asks for no relation of people: every relation of the domain relates to "people" a
        little, so were the word counted, one of them would be walked as a third hop to state it. A kind word
        counts for no relation's coverage or precision; the question's other words decide."""
        return tuple(stem(word) in self._domains and stem(word) not in self._specific for word in self.words)

    def path_scores(self, paths: Sequence[Sequence[tuple[str, str]]], *, whole: bool = True) -> list[float]:
        """How well each relation path (per relation, in walking order: its words and its most specific
        words, :meth:`reasoning.text.RelationNames.phrases`) states the question, in [0, 1] and comparable
        within the call: the mean of how fully the path's most specific words, read as one text, state the
        question (:meth:`calibrated`), and of an alignment of relations to the question's spans
        (:func:`question_spans`) -- every relation's specific words stated by some span (precision) and
        every content word of the question stated by some relation (coverage), their F-measure weighted to
        coverage by :data:`COVERAGE_WEIGHT` (a Freebase id's domain words, "film" in ``film.film.genre``,
        must not cover a question's "films").
        ``whole=False``: the alignment alone, for many paths at once (reading a path as one text costs a
        sentence encoder one embedding per path; the alignment, one per span and relation).

        A whole two-hop question dilutes each hop ("place of birth" against "Where was the wife of born?"),
        and a one-hop prefix of the right path leaves words of the question unexplained; the alignment
        sees both. Each span is scored against each distinct relation text once per question."""
        self.stated([phrase for path in paths for phrase in path])
        keys = [tuple(path) for path in paths]
        aligned = [self._aligned(key) for key in keys]
        if not whole:
            return aligned
        distinct = list(dict.fromkeys(keys))  # read together: a lexical scorer's scores compare only within a call
        joined = [_joined([tail for _, tail in key]) for key in distinct]
        texts = self.calibrated(self.scorer.score(self._unkinded(), joined) if joined else [])
        read = dict(zip(distinct, texts, strict=True))
        return [(read[key] + level) / 2 for key, level in zip(keys, aligned, strict=True)]

    def stated(self, phrases: Sequence[tuple[str, str]]) -> list[float]:
        """How well some span of the question states each relation's specific words (calibrated units;
        cheap: one score per span and distinct text, kept for the question)."""
        for words, tail in phrases:
            domain = {stem(word) for word in words.split()[:1] if word not in tail.split()}
            self._domains |= domain
            self._specific |= {stem(word) for word in tail.split()} - domain
        missing = list(dict.fromkeys(tail for _, tail in phrases if tail not in self._cells))
        if missing:
            self._score_cells(missing)
        return [self._cells[tail][0] for _, tail in phrases]

    def _score_cells(self, texts: list[str]) -> None:
        """Each relation text's cell: the best level any span states it at, and per content word
        how well the relation states it -- the word alone, or the span the relation states best when that
        span holds the word (a reworded relation is stated by a phrase, "political system" for "form of
        government", whose words alone say little; a span stated best by one relation is no evidence
        that another one states its words, so "capital of the nationality" credits neither)."""
        best = [0.0 for _ in texts]
        best_span = ["" for _ in texts]
        alone: list[list[float]] = [[] for _ in texts]
        for span in self.spans:
            levels = self.calibrated(self.scorer.score(span, texts))
            for i, level in enumerate(levels):
                if level > best[i]:
                    best[i], best_span[i] = level, span
                if span in self.words:
                    alone[i].append(level)
        for i, text in enumerate(texts):
            held = set(_WORD.findall(best_span[i]))
            words = tuple(max(lv, best[i]) if w in held else lv for w, lv in zip(self.words, alone[i], strict=True))
            self._cells[text] = (best[i], words)

    def _aligned(self, path: tuple[tuple[str, str], ...]) -> float:
        """Precision and coverage of the path's relations against the question's spans, their F-measure.

        A relation that states no word of the question better than the others do is a detour ("capital"
        after "country" for "In which country is the place of birth of X?"), and so is a relation walked
        again: it counts as stating nothing, and what it states counts for no word either, so a detour
        never raises a path's score (a semantic scorer relates every relation to every word a little: a
        third relation restating "locations" must not lift "film, featured film locations").

        Unless the question says it again: a word the question says ``n`` times may be stated by ``n``
        relations that state it among their best words, the same relation walked again among them ("Who
        influenced those who influenced X?": "influenced by" twice), and counts as covered by the mean of
        its ``n`` best such statements (one "influenced by" states half of it; a relation that relates to
        the word only a little, as a semantic scorer relates every relation to every word, fills no second
        mention)."""
        if not path:
            return 0.0
        walked: dict[str, int] = {}
        tails = []
        for _, tail in path:
            walked[tail] = walked.get(tail, 0) + 1
            if walked[tail] == 1 or walked[tail] <= self._said(tail):
                tails.append(tail)
        counted = [w for w, kind in enumerate(self.kind_words()) if not kind]
        if not counted:
            return sum(self._cells[text][0] for text in tails) / len(path)
        rows = [tuple(self._cells[text][1][w] for w in counted) for text in tails]
        mentions = [self.mentions[w] for w in counted]
        stating = [
            i
            for i in range(len(tails))
            if len(rows) == 1 or _adds(rows, i, mentions, ties_to_earlier=self.ties_to_earlier)
        ]
        precision = sum(self._cells[tails[i]][0] for i in stating) / len(path)
        covered = []
        for w, said in enumerate(mentions):
            level = max((rows[i][w] for i in stating), default=0.0)
            again = sorted((rows[i][w] for i in stating if _states(rows[i], w)), reverse=True)[1:said]
            covered.append((level + sum(again)) / said)
        coverage = sum(covered) / len(covered)
        if precision + coverage <= 0:
            return 0.0
        weight = COVERAGE_WEIGHT**2
        return (1 + weight) * precision * coverage / (weight * precision + coverage)

    def _said(self, text: str) -> int:
        """How often the question says what a relation text states: the most mentions of a word among
        its best words (:func:`_states`)."""
        levels = self._cells[text][1]
        return max((n for w, n in enumerate(self.mentions) if _states(levels, w)), default=1)

    def scores(self, texts: Sequence[str]) -> list[float]:
        """Scores of ``texts`` against the focus, in one scorer call."""
        return self.scorer.score(self.focus, list(texts)) if texts else []

    def calibrated(self, scores: Sequence[float]) -> list[float]:
        """Scores in the scorer's declared units (see the module docstring), else in relevance units of
        this call: 0 for an unrelated text, 1 for one stating the query."""
        levels = calibration(self.scorer)
        if levels is None:
            return self.relevance(scores)
        unrelated, stated = levels
        return [min(1.0, max(0.0, (score - unrelated) / (stated - unrelated))) for score in scores]

    def floor(self, scores: Sequence[float]) -> float:
        """What an unrelated text scores in this call: the scorer's declared ``unrelated`` level, else
        the median of ``scores`` (most texts a method weighs are unrelated)."""
        declared = getattr(self.scorer, "unrelated", None)
        if isinstance(declared, (int, float)) and not isinstance(declared, bool):
            return float(declared)
        return statistics.median(scores) if scores else 0.0

    def relevance(self, scores: Sequence[float]) -> list[float]:
        """Each score in relevance units: 0 at the floor, 1 at the best (all 0 when none rises above)."""
        floor = self.floor(scores)
        unit = max(scores, default=floor) - floor
        return [max(0.0, (score - floor) / unit) if unit > 0 else 0.0 for score in scores]

    def order(
        self, items: Sequence[T], scores: Sequence[float], cost: Callable[[T], float], *, paths: bool = False
    ) -> list[T]:
        """The items best first by relevance minus ``cost`` (relevance units: :func:`path_cost` for a
        relation path), then by lower cost and higher score: a longer path must earn its extra hops.
        ``paths``: the scores are :meth:`path_scores` (0 already means unrelated)."""
        top = max(scores, default=0.0)
        levels = [s / top if top > 0 else 0.0 for s in scores] if paths else self.relevance(scores)
        keys = [(levels[i] - cost(items[i]), -cost(items[i]), scores[i]) for i in range(len(items))]
        return [items[i] for i in sorted(range(len(items)), key=lambda i: tuple(-k for k in keys[i]))]


_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
SPAN_WORDS = 3
"""The most content words a span of the question holds."""


def question_spans(focus: str) -> tuple[list[str], list[str]]:
    """The content words of a question's focus (stop words out, each once, in order) and its spans: every
    run of up to :data:`SPAN_WORDS` content words, with the function words between them, starting and
    ending on a content word ("provinces", "provinces make", "main city", "place of birth")."""
    words = [w for w in _WORD.findall(focus.lower())]
    content = [w not in STOP_WORDS for w in words]
    spans: list[str] = []
    for i in range(len(words)):
        if not content[i]:
            continue
        held = 0
        for j in range(i, len(words)):
            held += content[j]
            if held > SPAN_WORDS:
                break
            if content[j]:
                spans.append(" ".join(words[i : j + 1]))
    unigrams = list(dict.fromkeys(w for w, c in zip(words, content, strict=True) if c))
    spans = list(dict.fromkeys([*unigrams, *spans]))
    return unigrams, spans


def _adds(rows: Sequence[tuple[float, ...]], i: int, mentions: Sequence[int], *, ties_to_earlier: bool = False) -> bool:
    """Whether relation ``i`` states some word better than every other relation of its path, by more than
    :data:`TIE_BAND` (calibrated units: a semantic scorer relates every relation to every word a little, so
    a detour restating a word a little more closely than the relation that states it adds nothing); for a
    word the question says ``n`` times (``mentions``) that is among the relation's best words
    (:func:`_states`), better than all but ``n - 1`` of them.
    ``ties_to_earlier``: a word stated equally (within the band) by two relations counts for the earlier
    one (see :class:`Judge`)."""
    others = [j for j in range(len(rows)) if j != i]
    said = [n if _states(rows[i], w) else 1 for w, n in enumerate(mentions)]
    if not ties_to_earlier:
        return any(sum(level <= rows[j][w] + TIE_BAND for j in others) < said[w] for w, level in enumerate(rows[i]))
    return any(
        level > TIE_BAND
        and sum(level <= rows[j][w] + TIE_BAND for j in range(i))
        + sum(level < rows[j][w] - TIE_BAND for j in range(i + 1, len(rows)))
        < said[w]
        for w, level in enumerate(rows[i])
    )


def _states(row: Sequence[float], w: int) -> bool:
    """Whether word ``w`` is among the words a relation states best (above :data:`TIE_BAND`, and within it
    of the relation's best word): only such a statement counts for a word the question says again."""
    return row[w] > TIE_BAND and row[w] >= max(row) - TIE_BAND


def _joined(path: Sequence[str]) -> str:
    """A path's words as one text, each word once (a repeated word must not make a path look closer)."""
    return " ".join(dict.fromkeys(word for text in path for word in text.split()))


def calibration(scorer: Scorer) -> tuple[float, float] | None:
    """The scorer's declared ``(unrelated, stated)`` levels, or None when it declares none (or nonsense)."""
    levels = [getattr(scorer, name, None) for name in ("unrelated", "stated")]
    numbers = [float(v) for v in levels if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(numbers) != 2 or not numbers[0] < numbers[1]:
        return None
    return numbers[0], numbers[1]


def path_cost(hops: int, inverse: int = 0) -> float:
    """What a relation path must gain over a one-hop path, in path-score units (see :data:`HOP_COST`):
    :data:`HOP_COST` per hop after the first and :data:`INVERSE_COST` per hop walked against the edge's
    direction (a question usually asks along an edge; a detour back and forth matches a question's words by
    accident)."""
    return HOP_COST * max(hops - 1, 0) + INVERSE_COST * inverse
