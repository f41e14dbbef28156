"""A deterministic generator of Freebase-shaped graphs, for the scale benchmark.

``generate(triples, path, seed)`` writes a gzipped N-Triples dump of about ``triples`` triples (exactly,
up to a few dozen) in the Freebase namespace, shaped like the parts of Freebase that KGQA reasoners walk:

* entities ``m.0xxxxx`` (Freebase's mid alphabet) in ~300 types grouped into ~40 domains, with an
  English ``type.object.name`` each;
* ~3,000 dotted relations ``domain.type.property`` whose frequencies follow a Zipf law;
* power-law degrees: heads are drawn with mild skew, tails with strong skew, so each type has hub
  entities (think countries, genders, languages) whose in-degree grows with the graph;
* nameless CVT (mediator) nodes: ``entity --d.t.p--> cvt --d.cvt.q--> entity`` with 2-3 outgoing edges;
* literal-valued relations (dates, integers, English strings), ~5% of the relation triples.

The average degree is the same at every size, so a typical entity's neighbourhood does not grow with the
graph; only the hubs do. Everything is drawn from one ``numpy`` generator seeded by ``seed``: the same
arguments give the same bytes. The entity-to-entity edges are also returned as arrays (heads, relations,
tails) so query sets can be sampled without parsing the file back.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

NS = "http://rdf.freebase.com/ns/"
MID_ALPHABET = "0123456789bcdfghjklmnpqrstvwxyz_"
XSD = "http://www.w3.org/2001/XMLSchema#"
DOMAINS = [
    "people",
    "film",
    "music",
    "location",
    "sports",
    "book",
    "tv",
    "education",
    "organization",
    "business",
    "government",
    "award",
    "media_common",
    "sports_team",
    "military",
    "religion",
    "language",
    "medicine",
    "biology",
    "chemistry",
    "astronomy",
    "architecture",
    "aviation",
    "automotive",
    "boats",
    "comic_books",
    "computer",
    "cvg",
    "fictional_universe",
    "food",
    "games",
    "geography",
    "law",
    "olympics",
    "periodicals",
    "projects",
    "royalty",
    "soccer",
    "theater",
    "time",
    "travel",
    "visual_art",
]
SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "sa",
    "to",
    "vi",
    "ze",
    "bar",
    "den",
    "fel",
    "gor",
    "han",
    "jin",
    "kel",
    "mar",
    "nor",
    "pel",
    "quin",
    "ros",
    "tal",
    "ur",
    "vel",
    "wen",
    "yor",
    "zan",
    "al",
    "be",
    "co",
    "da",
    "el",
    "fi",
    "ga",
    "hi",
    "io",
    "ju",
]

TYPES = 300
RELATIONS = 3_000
CVT_TYPES = 100
NAMED_PER_TRIPLE = 1 / 12  # named entities per triple: ~11 edges per entity, name included
CVT_PER_TRIPLE = 1 / 40
LITERAL_SHARE = 0.05
HEAD_SKEW = 1.6  # rank = floor(size * u**skew): larger is more skewed
TAIL_SKEW = 3.0
CHUNK = 500_000
"""Lines (or words) spelled at a time: memory holds the drawn arrays and one chunk's text."""


@dataclass(frozen=True)
class Graph:
    """What the generator wrote, for sampling queries: entity-to-entity edges as parallel arrays
    (indices into ``entities`` and ``relations``) and which entities are CVT nodes."""

    entities: list[str]
    relations: list[str]
    heads: NDArray[np.int32]
    rels: NDArray[np.int32]
    tails: NDArray[np.int32]
    is_cvt: NDArray[np.bool_]
    triples: int


def _mids(count: int, rng: np.random.Generator) -> list[str]:
    """``count`` distinct Freebase-style mids (``m.0`` + 5 mid characters), in random order."""
    import numpy as np

    numbers = rng.permutation(32**5)[:count] if count > 32**4 else rng.choice(32**5, size=count, replace=False)
    alphabet = MID_ALPHABET
    mids: list[str] = []
    for lo in range(0, count, CHUNK):  # spelled a chunk at a time: no per-character objects for all at once
        part = numbers[lo : lo + CHUNK]
        digits = np.stack([(part >> (5 * k)) & 31 for k in range(4, -1, -1)], axis=1).tolist()
        mids += ["m.0" + "".join([alphabet[d] for d in row]) for row in digits]
    return mids


@dataclass(frozen=True)
class Words:
    """Drawn words, spelled on demand: ``lengths[i]`` syllables of row ``picks[i]`` (small integers),
    so a hundred million words cost bytes, not Python strings, until they are written."""

    lengths: NDArray[np.int64]
    picks: NDArray[np.uint8]

    def spell(self, lo: int, hi: int) -> list[str]:
        syllables = SYLLABLES
        rows = self.picks[lo:hi].tolist()
        return [
            "".join([syllables[k] for k in row[:n]]) for row, n in zip(rows, self.lengths[lo:hi].tolist(), strict=True)
        ]


def _draw_words(rng: np.random.Generator, count: int, low: int, high: int) -> Words:
    import numpy as np

    lengths = rng.integers(low, high + 1, size=count)
    picks = rng.integers(0, len(SYLLABLES), size=(count, high)).astype(np.uint8)
    return Words(lengths=lengths, picks=picks)


def _words(rng: np.random.Generator, count: int, low: int, high: int) -> list[str]:
    words = _draw_words(rng, count, low, high)
    return [w for lo in range(0, count, CHUNK) for w in words.spell(lo, lo + CHUNK)]


def _zipf_weights(count: int, exponent: float, offset: float) -> NDArray[np.float64]:
    import numpy as np

    weights = 1.0 / (np.arange(count) + offset) ** exponent
    return np.asarray(weights / weights.sum(), dtype=np.float64)


def _skewed(
    rng: np.random.Generator, starts: NDArray[np.int64], sizes: NDArray[np.int64], skew: float
) -> NDArray[np.int64]:
    """One entity per (start, size) range, rank drawn as floor(size * u**skew): rank 0 is the hub
    (computed in place: a 100M-edge draw holds two arrays of it, not seven)."""
    import numpy as np

    drawn = rng.random(len(sizes))
    drawn **= skew
    drawn *= sizes
    np.floor(drawn, out=drawn)
    ranks = drawn.astype(np.int64)
    del drawn
    last = sizes - 1
    np.minimum(ranks, last, out=ranks)
    del last
    ranks += starts
    return ranks


def generate(triples: int, path: Path, seed: int = 1) -> Graph:
    """Writes about ``triples`` triples to ``path`` (gzipped N-Triples) and returns the entity graph."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n_named = max(int(triples * NAMED_PER_TRIPLE), TYPES * 2)
    n_cvt = max(int(triples * CVT_PER_TRIPLE), CVT_TYPES)

    # -- schema: types (entity ranges), relations, CVT types ------------------------------------
    type_domain = rng.integers(0, len(DOMAINS), size=TYPES)
    type_names = [f"{DOMAINS[d]}.{w}" for d, w in zip(type_domain.tolist(), _words(rng, TYPES, 2, 3), strict=True)]
    type_sizes = np.maximum((_zipf_weights(TYPES, 1.0, 8) * n_named).astype(np.int64), 2)
    type_sizes[0] += n_named - type_sizes.sum()
    type_starts = np.concatenate([[0], np.cumsum(type_sizes)[:-1]]).astype(np.int64)
    type_weights = type_sizes / type_sizes.sum()

    rel_head = rng.choice(TYPES, size=RELATIONS, p=type_weights)
    rel_tail = rng.choice(TYPES, size=RELATIONS, p=type_weights)
    rel_kind = rng.choice(3, size=RELATIONS, p=[1 - 3 * LITERAL_SHARE, 2 * LITERAL_SHARE, LITERAL_SHARE])
    # kind 0: entity tail; 1: literal tail (date / integer / string by relation); 2: literal too
    rel_kind = np.where(rel_kind > 0, 1 + rng.integers(0, 3, size=RELATIONS), 0)  # 1 date, 2 integer, 3 string
    props = _words(rng, RELATIONS + CVT_TYPES * 4, 2, 4)
    relations = [f"{type_names[h]}.{props[i]}" for i, h in enumerate(rel_head.tolist())]
    relations = list(dict.fromkeys(relations))
    while len(relations) < RELATIONS:  # a collision of generated names: extend deterministically
        relations.append(f"{relations[len(relations) % 7]}_{len(relations)}")
    rel_weights = _zipf_weights(RELATIONS, 1.1, 10)

    cvt_head = rng.choice(TYPES, size=CVT_TYPES, p=type_weights)
    cvt_names = [
        f"{DOMAINS[d]}.{w}" for d, w in zip(type_domain[cvt_head].tolist(), _words(rng, CVT_TYPES, 3, 4), strict=True)
    ]
    cvt_in = [f"{type_names[h]}.{props[RELATIONS + c]}" for c, h in enumerate(cvt_head.tolist())]
    cvt_out = [[f"{cvt_names[c]}.{props[RELATIONS + CVT_TYPES * k + c]}" for k in (1, 2, 3)] for c in range(CVT_TYPES)]
    cvt_out_type = rng.choice(TYPES, size=(CVT_TYPES, 3), p=type_weights)
    all_relations = ["type.object.name", *relations, *cvt_in, *(r for rs in cvt_out for r in rs)]
    rel_index = {name: i for i, name in enumerate(all_relations)}

    # -- entities ----------------------------------------------------------------------------------
    mids = _mids(n_named + n_cvt, rng)
    is_cvt = np.zeros(n_named + n_cvt, dtype=bool)
    is_cvt[n_named:] = True

    # -- CVT edges: head -> cvt, cvt -> 2 or 3 entities ---------------------------------------------
    cvt_type = rng.choice(CVT_TYPES, size=n_cvt, p=_zipf_weights(CVT_TYPES, 1.0, 3))
    cvt_ids = np.arange(n_named, n_named + n_cvt, dtype=np.int64)
    h_type = cvt_head[cvt_type]
    cvt_heads = _skewed(rng, type_starts[h_type], type_sizes[h_type], HEAD_SKEW)
    in_rel = np.array([rel_index[r] for r in cvt_in], dtype=np.int64)[cvt_type]
    out_h, out_r, out_t = [], [], []
    out_rel_table = np.array([[rel_index[r] for r in rs] for rs in cvt_out], dtype=np.int64)
    third = rng.random(n_cvt) < 0.5
    for k in range(3):
        keep = np.ones(n_cvt, dtype=bool) if k < 2 else third
        t_type = cvt_out_type[cvt_type[keep], k]
        out_h.append(cvt_ids[keep])
        out_r.append(out_rel_table[cvt_type[keep], k])
        out_t.append(_skewed(rng, type_starts[t_type], type_sizes[t_type], TAIL_SKEW))

    # -- plain relation edges: the rest of the budget --------------------------------------------------
    used = n_named + n_cvt + int(sum(len(x) for x in out_h))
    n_plain = max(triples - used, 0)
    rel_pick = rng.choice(RELATIONS, size=n_plain, p=rel_weights)
    plain_heads = _skewed(rng, type_starts[rel_head[rel_pick]], type_sizes[rel_head[rel_pick]], HEAD_SKEW)
    plain_tails = _skewed(rng, type_starts[rel_tail[rel_pick]], type_sizes[rel_tail[rel_pick]], TAIL_SKEW)
    plain_rel = np.array([rel_index[r] for r in relations], dtype=np.int32)[rel_pick]
    kind = rel_kind[rel_pick].astype(np.int8)
    del rel_pick
    entity_edge = (kind == 0) & (plain_heads != plain_tails)
    literal_edge = kind > 0

    def joined(parts: list[NDArray[np.int64]]) -> NDArray[np.int32]:
        return np.concatenate([part.astype(np.int32) for part in parts])

    heads = joined([cvt_heads, *out_h, plain_heads[entity_edge]])
    tails = joined([cvt_ids, *out_t, plain_tails[entity_edge]])
    del plain_tails
    rels = joined([in_rel, *out_r, plain_rel[entity_edge]])
    del entity_edge

    # -- literals: drawn as arrays here, spelled chunk by chunk as they are written -------------------------
    names = (_draw_words(rng, n_named, 2, 3), _draw_words(rng, n_named, 2, 4))
    lit_heads = plain_heads[literal_edge].astype(np.int32)
    del plain_heads
    lit_rels = plain_rel[literal_edge]
    del plain_rel
    lit_kind = kind[literal_edge]
    del kind, literal_edge
    days = rng.integers(0, 365 * 200, size=len(lit_heads))
    numbers = rng.integers(0, 10**6, size=len(lit_heads))
    texts = _draw_words(rng, len(lit_heads), 2, 5)
    literals = _Literals(kinds=lit_kind, days=days, numbers=numbers, texts=texts)

    written = _write(path, mids, all_relations, names, heads, rels, tails, lit_heads, lit_rels, literals)
    return Graph(
        entities=mids, relations=all_relations, heads=heads, rels=rels, tails=tails, is_cvt=is_cvt, triples=written
    )


@dataclass(frozen=True)
class _Literals:
    """The literal tails as drawn (kind 1 date, 2 integer, 3 English string), spelled per chunk."""

    kinds: NDArray[np.int8]
    days: NDArray[np.int64]
    numbers: NDArray[np.int64]
    texts: Words

    def spell(self, lo: int, hi: int) -> list[str]:
        days = self.days[lo:hi]
        years, rest = (1850 + days // 365).tolist(), (days % 365).tolist()
        numbers = self.numbers[lo:hi].tolist()
        texts = self.texts.spell(lo, hi)
        spell = {
            1: lambda i: f'"{years[i]:04d}-{1 + rest[i] // 31 % 12:02d}-{1 + rest[i] % 28:02d}"^^<{XSD}date>',
            2: lambda i: f'"{numbers[i]}"^^<{XSD}integer>',
            3: lambda i: f'"{texts[i].capitalize()}"@en',
        }
        return [spell[kind](i) for i, kind in enumerate(self.kinds[lo:hi].tolist())]


def _write(
    path: Path,
    mids: list[str],
    relations: list[str],
    names: tuple[Words, Words],
    heads: NDArray[np.int32],
    rels: NDArray[np.int32],
    tails: NDArray[np.int32],
    lit_heads: NDArray[np.int32],
    lit_rels: NDArray[np.int32],
    literals: _Literals,
) -> int:
    """Writes the dump (entities with their names, then edges, then literals); returns the line count.
    Everything is spelled a chunk at a time, so memory holds the arrays and one chunk's text."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ns = NS
    rel = [f"<{ns}{r}>" for r in relations]
    name_rel = rel[0]
    tmp = path.with_name(path.name + ".part")
    count = 0
    with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=1) as out:
        first, second = names
        for lo in range(0, len(first.lengths), CHUNK):
            pairs = zip(first.spell(lo, lo + CHUNK), second.spell(lo, lo + CHUNK), strict=True)
            spelled = [f"{a.capitalize()} {b.capitalize()}" for a, b in pairs]
            out.write("".join([f'<{ns}{mids[lo + i]}> {name_rel} "{n}"@en .\n' for i, n in enumerate(spelled)]))
            count += len(spelled)
        for lo in range(0, len(heads), CHUNK):
            hs, rs, ts = (a[lo : lo + CHUNK].tolist() for a in (heads, rels, tails))
            out.write(
                "".join([f"<{ns}{mids[h]}> {rel[r]} <{ns}{mids[t]}> .\n" for h, r, t in zip(hs, rs, ts, strict=True)])
            )
        count += len(heads)
        for lo in range(0, len(lit_heads), CHUNK):
            hs, rs = (a[lo : lo + CHUNK].tolist() for a in (lit_heads, lit_rels))
            vs = literals.spell(lo, lo + CHUNK)
            out.write("".join([f"<{ns}{mids[h]}> {rel[r]} {v} .\n" for h, r, v in zip(hs, rs, vs, strict=True)]))
        count += len(lit_heads)
    tmp.rename(path)
    return count
