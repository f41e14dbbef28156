"""A small hand-written Freebase graph with CVT (mediator) nodes, for the CVT conformance mixin.

Films, performances and a marriage, shaped as the Freebase dump stores them (every CVT edge in
both directions, type/name/key plumbing beside the facts)::

    portman --film.actor.film--> perf1 (CVT) --film.performance.film--> starwars
                                          \\--film.performance.character--> padme
    portman --film.actor.film--> perf2 (CVT) --film.performance.film--> heat
                                          \\--film.performance.character--> lauren
    pacino  --film.actor.film--> perf3 (CVT) --film.performance.film--> heat
                                          \\--film.performance.character--> hanna
    deniro  --film.actor.film..film.performance.film--> heat          (FB15k-237's collapsed spelling)
    portman --people.person.spouse_s--> mar1 (CVT) <--people.person.spouse_s-- millepied
    mar1 --people.marriage.from--> "2012-08-04"^^xsd:date

Each CVT also points back at its actor/spouses (``film.performance.actor``, ``people.marriage.spouse``)
and films point at their performances (``film.film.starring``). Plumbing the default relation filter
hides: ``type.object.type`` (portman, pacino, millepied -> people.person; mar1 -> people.marriage),
``type.object.name``, ``common.topic.alias``, a ``key:wikipedia.en`` key and an ``owl:sameAs`` link.
"""

from __future__ import annotations

from pathlib import Path

NS = "http://rdf.freebase.com/ns/"
KEY_WIKIPEDIA = "http://rdf.freebase.com/key/wikipedia.en"
OWL_SAME_AS = "http://www.w3.org/2002/07/owl#sameAs"
XSD_DATE = "http://www.w3.org/2001/XMLSchema#date"

NAMES = {
    "m.portman": "Natalie Portman",
    "m.pacino": "Al Pacino",
    "m.deniro": "Robert De Niro",
    "m.millepied": "Benjamin Millepied",
    "m.starwars": "Star Wars",
    "m.heat": "Heat",
    "m.padme": "Padmé Amidala",
    "m.lauren": "Lauren Gustafson",
    "m.hanna": "Vincent Hanna",
    "people.person": "Person",
    "people.marriage": "Marriage",
}

PERFORMANCES = {  # cvt: (actor, film, character)
    "m.perf1": ("m.portman", "m.starwars", "m.padme"),
    "m.perf2": ("m.portman", "m.heat", "m.lauren"),
    "m.perf3": ("m.pacino", "m.heat", "m.hanna"),
}


def _triples() -> list[tuple[str, str, str]]:
    """(subject, predicate, object) as N-Triples terms."""

    def ns(local: str) -> str:
        return f"<{NS}{local}>"

    rows: list[tuple[str, str, str]] = []
    for node, name in NAMES.items():
        rows.append((ns(node), ns("type.object.name"), f'"{name}"@en'))
    for cvt, (actor, film, character) in PERFORMANCES.items():
        rows += [
            (ns(actor), ns("film.actor.film"), ns(cvt)),
            (ns(cvt), ns("film.performance.actor"), ns(actor)),
            (ns(cvt), ns("film.performance.film"), ns(film)),
            (ns(cvt), ns("film.performance.character"), ns(character)),
            (ns(film), ns("film.film.starring"), ns(cvt)),
        ]
    rows += [
        (ns("m.deniro"), ns("film.actor.film..film.performance.film"), ns("m.heat")),
        (ns("m.portman"), ns("people.person.spouse_s"), ns("m.mar1")),
        (ns("m.millepied"), ns("people.person.spouse_s"), ns("m.mar1")),
        (ns("m.mar1"), ns("people.marriage.spouse"), ns("m.portman")),
        (ns("m.mar1"), ns("people.marriage.spouse"), ns("m.millepied")),
        (ns("m.mar1"), ns("people.marriage.from"), f'"2012-08-04"^^<{XSD_DATE}>'),
        (ns("m.mar1"), ns("type.object.type"), ns("people.marriage")),
        (ns("m.portman"), ns("type.object.type"), ns("people.person")),
        (ns("m.pacino"), ns("type.object.type"), ns("people.person")),
        (ns("m.millepied"), ns("type.object.type"), ns("people.person")),
        (ns("m.portman"), ns("common.topic.alias"), '"Natalie Hershlag"@en'),
        (ns("m.portman"), f"<{KEY_WIKIPEDIA}>", '"Natalie_Portman"'),
        (ns("m.portman"), f"<{OWL_SAME_AS}>", "<http://dbpedia.org/resource/Natalie_Portman>"),
    ]
    return rows


FREEBASE_CVT_NTRIPLES = "".join(f"{s} {p} {o} .\n" for s, p, o in _triples())


def write_freebase_cvt_graph(directory: Path, name: str = "freebase-cvt.nt") -> Path:
    path = Path(directory) / name
    path.write_text(FREEBASE_CVT_NTRIPLES, encoding="utf-8")
    return path
