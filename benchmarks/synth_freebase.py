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


@dataclass(frozen=True)
class Graph:
    """What the generator wrote, for sampling queries: entity-to-entity edges as parallel arrays
    (indices into ``entities`` and ``relations``) and which entities are CVT nodes."""

    entities: list[str]
    relations: list[str]
    heads: NDArray[np.int64]
    rels: NDArray[np.int64]
    tails: NDArray[np.int64]
    is_cvt: NDArray[np.bool_]
    triples: int


def _mids(count: int, rng: np.random.Generator) -> list[str]:
    """``count`` distinct Freebase-style mids (``m.0`` + 5 mid characters), in random order."""
    import numpy as np

    numbers = rng.permutation(32**5)[:count] if count > 32**4 else rng.choice(32**5, size=count, replace=False)
    digits = np.stack([(numbers >> (5 * k)) & 31 for k in range(4, -1, -1)], axis=1)
    alphabet = np.array(list(MID_ALPHABET))
    chars = alphabet[digits]
    return ["m.0" + "".join(row) for row in chars.tolist()]


def _words(rng: np.random.Generator, count: int, low: int, high: int) -> list[str]:
    import numpy as np

    syllables = np.array(SYLLABLES)
    lengths = rng.integers(low, high + 1, size=count)
    picks = syllables[rng.integers(0, len(SYLLABLES), size=(count, high))].tolist()
    return ["".join(row[:n]) for row, n in zip(picks, lengths.tolist(), strict=True)]


def _zipf_weights(count: int, exponent: float, offset: float) -> NDArray[np.float64]:
    import numpy as np

    weights = 1.0 / (np.arange(count) + offset) ** exponent
    return np.asarray(weights / weights.sum(), dtype=np.float64)


def _skewed(
    rng: np.random.Generator, starts: NDArray[np.int64], sizes: NDArray[np.int64], skew: float
) -> NDArray[np.int64]:
    """One entity per (start, size) range, rank drawn as floor(size * u**skew): rank 0 is the hub."""
    import numpy as np

    ranks = np.floor(sizes * rng.random(len(sizes)) ** skew).astype(np.int64)
    return np.asarray(starts + np.minimum(ranks, sizes - 1), dtype=np.int64)


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
    plain_rel = np.array([rel_index[r] for r in relations], dtype=np.int64)[rel_pick]
    kind = rel_kind[rel_pick]
    no_self = plain_heads != plain_tails
    entity_edge = (kind == 0) & no_self
    literal_edge = kind > 0

    heads = np.concatenate([cvt_heads, *out_h, plain_heads[entity_edge]])
    rels = np.concatenate([in_rel, *out_r, plain_rel[entity_edge]])
    tails = np.concatenate([cvt_ids, *out_t, plain_tails[entity_edge]])

    # -- literals ----------------------------------------------------------------------------------------
    names = [
        " ".join(w.capitalize() for w in pair)
        for pair in zip(_words(rng, n_named, 2, 3), _words(rng, n_named, 2, 4), strict=True)
    ]
    lit_heads = plain_heads[literal_edge]
    lit_rels = plain_rel[literal_edge]
    lit_kind = kind[literal_edge]
    days = rng.integers(0, 365 * 200, size=len(lit_heads))
    years, rest = 1850 + days // 365, days % 365
    dates = [
        f'"{y:04d}-{1 + r // 31 % 12:02d}-{1 + r % 28:02d}"^^<{XSD}date>'
        for y, r in zip(years.tolist(), rest.tolist(), strict=True)
    ]
    ints = [f'"{n}"^^<{XSD}integer>' for n in rng.integers(0, 10**6, size=len(lit_heads)).tolist()]
    texts = [f'"{w.capitalize()}"@en' for w in _words(rng, len(lit_heads), 2, 5)]
    lit_values = [dates[i] if k == 1 else ints[i] if k == 2 else texts[i] for i, k in enumerate(lit_kind.tolist())]

    written = _write(path, mids, all_relations, names, heads, rels, tails, lit_heads, lit_rels, lit_values)
    return Graph(
        entities=mids, relations=all_relations, heads=heads, rels=rels, tails=tails, is_cvt=is_cvt, triples=written
    )


def _write(
    path: Path,
    mids: list[str],
    relations: list[str],
    names: list[str],
    heads: NDArray[np.int64],
    rels: NDArray[np.int64],
    tails: NDArray[np.int64],
    lit_heads: NDArray[np.int64],
    lit_rels: NDArray[np.int64],
    lit_values: list[str],
) -> int:
    """Writes the dump (entities with their names, then edges, then literals); returns the line count."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ent = [f"<{NS}{m}>" for m in mids]
    rel = [f"<{NS}{r}>" for r in relations]
    name_rel = rel[0]
    tmp = path.with_name(path.name + ".part")
    chunk = 500_000
    count = 0
    with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=1) as out:
        for i, name in enumerate(names):
            out.write(f'{ent[i]} {name_rel} "{name}"@en .\n')
        count += len(names)
        for lo in range(0, len(heads), chunk):
            hs, rs, ts = (a[lo : lo + chunk].tolist() for a in (heads, rels, tails))
            out.write("".join([f"{ent[h]} {rel[r]} {ent[t]} .\n" for h, r, t in zip(hs, rs, ts, strict=True)]))
        count += len(heads)
        for lo in range(0, len(lit_heads), chunk):
            hs, rs = (a[lo : lo + chunk].tolist() for a in (lit_heads, lit_rels))
            vs = lit_values[lo : lo + chunk]
            out.write("".join([f"{ent[h]} {rel[r]} {v} .\n" for h, r, v in zip(hs, rs, vs, strict=True)]))
        count += len(lit_heads)
    tmp.rename(path)
    return count
