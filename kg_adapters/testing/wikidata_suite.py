"""The Wikidata-profile conformance suite: hand-written answers on ``wikidata_graph.py``.

A backend's test class mixes in :class:`WikidataConformance` and supplies ``make_kg`` (a callable
opening the Wikidata test graph with ``profile=wikidata``).
"""

from __future__ import annotations

import pytest

from kg_adapters.base import KnowledgeGraph
from kg_adapters.errors import InvalidTermError
from kg_adapters.records import Edge, Entity, Literal, Node, Qualifiers

from .suite import OneGraphPerClass
from .wikidata_graph import BORN, GEO_WKT, HEIGHT, NATIVE_NAME, VIAF, time

WD = "http://www.wikidata.org/entity/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
DESCRIPTION = "http://schema.org/description"
ALT_LABEL = "http://www.w3.org/2004/02/skos/core#altLabel"


def edge(head: str, relation: str, tail: Node) -> Edge:
    return Edge(head=head, relation=relation, tail=tail)


def statement(head: str, relation: str, tail: Node, rank: str = "normal", **qualifiers: Node) -> Edge:
    return Edge(
        head=head,
        relation=relation,
        tail=tail,
        rank=rank,
        qualifiers=Qualifiers({q: [v] for q, v in qualifiers.items()}),
    )


def text(value: str, lang: str) -> Literal:
    return Literal(value=value, lang=lang)


Q42_TRUTHY_ENTITIES = [edge("Q42", "P27", "Q145"), edge("Q42", "P31", "Q5"), edge("Q42", "P69", "Q691283")]
Q42_TRUTHY_LITERALS = [
    edge("Q42", "P1559", NATIVE_NAME),
    edge("Q42", "P2048", HEIGHT),
    edge("Q42", "P214", VIAF),
    edge("Q42", "P569", BORN),
]
Q42_EDUCATED = [
    statement(
        "Q42", "P69", "Q691283", P512="Q1765120", P580=time("1971-01-01T00:00:00Z"), P582=time("1974-01-01T00:00:00Z")
    ),
    statement("Q42", "P69", "Q691283", P580=time("1980-01-01T00:00:00Z")),
]
Q42_CITIZEN = [
    statement("Q42", "P27", "Q145", "preferred", P580=time("1952-03-11T00:00:00Z")),
    statement("Q42", "P27", "Q174193"),
]
Q42_NAMES = [
    edge("Q42", DESCRIPTION, text("English writer and humorist", "en")),
    edge("Q42", DESCRIPTION, text("britischer Schriftsteller", "de")),
    edge("Q42", DESCRIPTION, text("écrivain anglais", "fr")),
    edge("Q42", RDFS_LABEL, text("Douglas Adams", "en")),
    edge("Q42", RDFS_LABEL, text("Douglas Adams (UK)", "en-gb")),
    edge("Q42", RDFS_LABEL, text("Дуглас Адамс", "ru")),
    edge("Q42", RDFS_LABEL, text("ダグラス・アダムズ", "ja")),
    edge("Q42", ALT_LABEL, text("DNA", "de")),
    edge("Q42", ALT_LABEL, text("Douglas Noël Adams", "en")),
]
Q42_STATEMENTS = [
    statement("Q42", "P1559", NATIVE_NAME),
    statement("Q42", "P2048", HEIGHT),
    statement("Q42", "P214", VIAF),
    *Q42_CITIZEN,
    statement("Q42", "P31", "Q5"),
    statement("Q42", "P569", BORN),
    *Q42_EDUCATED,
    *Q42_NAMES,
]
Q145_IN_STATEMENTS = [statement("Q350", "P17", "Q145"), Q42_CITIZEN[0]]
Q350_BOTH_ENTITY_STATEMENTS = [
    statement("Q350", "P138", "Q350"),  # a self-loop statement: one edge
    statement("Q350", "P17", "Q145"),
    statement("Q691283", "P131", "Q350"),  # the deprecated Q691283 P131 Q145 never shows
]

ALL = ["Q42", "Q5", "Q145", "Q174193", "Q350", "Q691283", "Q1765120", "Q999"]
LABELS = {
    "en": {
        "Q42": "Douglas Adams",
        "Q5": "human",
        "Q145": "United Kingdom",
        "Q174193": "United Kingdom of Great Britain and Ireland",  # en-gb: a regional variant of en
        "Q350": "Cambridge",  # mul
        "Q691283": "Colegio de San Juan",  # only a Spanish label: the English alias is no label
    },  # Q1765120 has only an alias, Q999 nothing: no label
    ("de", "en"): {
        "Q42": "Douglas Adams",
        "Q5": "Mensch",
        "Q145": "Vereinigtes Königreich",
        "Q174193": "Vereinigtes Königreich Großbritannien und Irland",
        "Q350": "Cambridge",
        "Q691283": "Colegio de San Juan",
    },
    ("fr", "en"): {
        "Q42": "Douglas Adams",
        "Q5": "human",
        "Q145": "Royaume-Uni",
        "Q174193": "United Kingdom of Great Britain and Ireland",
        "Q350": "Cambridge",
        "Q691283": "Colegio de San Juan",
    },
    "en-GB": {
        "Q42": "Douglas Adams (UK)",
        "Q5": "human",  # en is the base language of en-gb
        "Q145": "United Kingdom",
        "Q174193": "United Kingdom of Great Britain and Ireland",
        "Q350": "Cambridge",
        "Q691283": "Colegio de San Juan",
    },
    "ru": {
        "Q42": "Дуглас Адамс",
        "Q5": "Mensch",  # no ru, no mul: any language, smallest tag (de) first
        "Q145": "Vereinigtes Königreich",
        "Q174193": "Vereinigtes Königreich Großbritannien und Irland",
        "Q350": "Кембридж",  # the exact language beats mul
        "Q691283": "Colegio de San Juan",
    },
    ("ja", "ru"): {
        "Q42": "ダグラス・アダムズ",
        "Q5": "Mensch",
        "Q145": "Vereinigtes Königreich",
        "Q174193": "Vereinigtes Königreich Großbritannien und Irland",
        "Q350": "Кембридж",  # the second choice beats mul
        "Q691283": "Colegio de San Juan",
    },
}


NAME_RELATIONS = (RDFS_LABEL, DESCRIPTION, ALT_LABEL)


class WikidataConformance(OneGraphPerClass):
    """Mix into a test class that provides ``make_kg`` (the Wikidata graph, profile wikidata)."""

    wkt_point = "Point(0.1218 52.2053)"
    """Virtuoso stores WKT as geometry and writes it back upper-cased."""

    name_edges = True
    """Whether ``neighbors`` answers names, descriptions and aliases as edges (``rdfs:label``, ...). An
    entity-API backend answers Wikidata properties only (names come from ``labels``/``describe``); it
    declares False and is then held to the same answers without those edges."""

    statement_layer_relations = True
    """Whether the statement layer is addressable (``p:P31`` edges to statement nodes). A backend without
    statement nodes declares False: such relations then match nothing."""

    def names(self, edges: list[Edge]) -> list[Edge]:
        """``edges`` as this backend answers them: without the name edges when it declares none."""
        return edges if self.name_edges else [e for e in edges if e.relation not in NAME_RELATIONS]

    # ------------------------------------------------------------------------ truthy edges
    def test_profile(self, kg: KnowledgeGraph) -> None:
        assert kg.profile.name == "wikidata"

    def test_truthy_edges_by_default(self, kg: KnowledgeGraph) -> None:
        entities = ["P27", "P31", "P69"]
        assert kg.neighbors("Q42", relations=entities) == {"Q42": Q42_TRUTHY_ENTITIES}
        assert kg.neighbors("Q42", relations=["P569", "P2048", "P1559", "P214"]) == {"Q42": Q42_TRUTHY_LITERALS}
        # Only the best rank is truthy: Q174193 (normal beside a preferred) and Q999 (deprecated) are not.
        assert kg.neighbors("Q42", relations=["P27"]) == {"Q42": [edge("Q42", "P27", "Q145")]}
        answer = kg.neighbors(["Q42", "Q350"], direction="both", literals=False)
        assert all(e.rank is None and not e.qualifiers for edges in answer.values() for e in edges)
        assert set(Q42_TRUTHY_ENTITIES) <= set(answer["Q42"])

    def test_truthy_in_edges(self, kg: KnowledgeGraph) -> None:
        expected = [edge("Q350", "P17", "Q145"), edge("Q42", "P27", "Q145")]
        assert kg.neighbors("Q145", direction="in", relations=["P17", "P27", "P131"]) == {"Q145": expected}
        # The statement layer (ps:P27 from a statement node, the deprecated ps:P131) is no edge.
        assert kg.neighbors("Q145", direction="in") == {"Q145": expected}
        assert kg.neighbors("Q1765120", direction="in") == {"Q1765120": []}  # only a qualifier value

    def test_default_answers_hide_the_statement_layer(self, kg: KnowledgeGraph) -> None:
        truthy = sorted([*Q42_TRUTHY_ENTITIES, *Q42_TRUTHY_LITERALS], key=lambda e: e.relation)
        assert kg.neighbors("Q42", direction="both") == {"Q42": [*truthy, *self.names(Q42_NAMES)]}
        names = [DESCRIPTION, RDFS_LABEL, ALT_LABEL] if self.name_edges else []
        assert kg.relations(["Q42", "Q145"], direction="both") == {
            "Q42": ["P1559", "P2048", "P214", "P27", "P31", "P569", "P69", *names],
            "Q145": ["P17", "P27", *names[:2]],
        }
        # Named explicitly, a statement-layer relation is answered, in full IRIs.
        claim = "http://www.wikidata.org/prop/P31"
        layer = [edge("Q42", claim, WD + "statement/Q42-s1")] if self.statement_layer_relations else []
        assert kg.neighbors("Q42", relations=[claim]) == {"Q42": layer}

    def test_literal_types(self, kg: KnowledgeGraph) -> None:
        assert kg.neighbors("Q350", relations=["P625"]) == {
            "Q350": [edge("Q350", "P625", Literal(value=self.wkt_point, datatype=GEO_WKT))]
        }
        tails = [e.tail for e in kg.neighbors("Q42", relations=["P569", "P2048", "P1559", "P214"])["Q42"]]
        assert [type(t) for t in tails] == [Literal] * 4

    # ----------------------------------------------------------------------- statements
    def test_statements_out_exact(self, kg: KnowledgeGraph) -> None:
        assert kg.neighbors("Q42", qualifiers=True) == {"Q42": self.names(Q42_STATEMENTS)}

    def test_same_triple_other_qualifiers_are_two_edges(self, kg: KnowledgeGraph) -> None:
        answer = kg.neighbors("Q42", relations=["P69"], qualifiers=True)["Q42"]
        assert answer == Q42_EDUCATED
        assert answer[0].as_tuple() == answer[1].as_tuple()
        assert answer[0].qualifiers["P580"] == (time("1971-01-01T00:00:00Z"),)
        assert answer[0].qualifiers["P512"] == ("Q1765120",)

    def test_ranks_and_deprecated(self, kg: KnowledgeGraph) -> None:
        citizen = kg.neighbors("Q42", relations=["P27"], qualifiers=True)["Q42"]
        assert citizen == Q42_CITIZEN
        assert [e.rank for e in citizen] == ["preferred", "normal"]
        assert kg.neighbors("Q999", direction="in", qualifiers=True) == {"Q999": []}
        assert kg.neighbors("Q691283", qualifiers=True, literals=False) == {
            "Q691283": [statement("Q691283", "P131", "Q350")]
        }

    def test_statements_in(self, kg: KnowledgeGraph) -> None:
        answer = kg.neighbors(["Q145", "Q999", "Q42", "Q5"], direction="in", qualifiers=True)
        assert answer == {
            "Q145": Q145_IN_STATEMENTS,
            "Q999": [],
            "Q42": [],
            "Q5": [statement("Q42", "P31", "Q5")],
        }
        assert list(answer) == ["Q145", "Q999", "Q42", "Q5"]
        # A qualifier value is not a statement's value: nothing points at Q1765120.
        assert kg.neighbors("Q1765120", direction="in", qualifiers=True) == {"Q1765120": []}

    def test_statements_both_self_loop_once(self, kg: KnowledgeGraph) -> None:
        assert kg.neighbors("Q350", direction="both", qualifiers=True, literals=False) == {
            "Q350": Q350_BOTH_ENTITY_STATEMENTS
        }
        full = kg.neighbors("Q350", direction="both", qualifiers=True)["Q350"]
        assert full == self.names(
            [
                *Q350_BOTH_ENTITY_STATEMENTS[:2],
                statement("Q350", "P625", Literal(value=self.wkt_point, datatype=GEO_WKT)),
                edge("Q350", DESCRIPTION, text("city in Cambridgeshire, England", "en")),
                edge("Q350", RDFS_LABEL, text("Cambridge", "mul")),
                edge("Q350", RDFS_LABEL, text("Кембридж", "ru")),
                Q350_BOTH_ENTITY_STATEMENTS[2],
            ]
        )

    def test_statement_relation_filters(self, kg: KnowledgeGraph) -> None:
        assert kg.neighbors("Q42", relations=["P69"], qualifiers=True) == {"Q42": Q42_EDUCATED}
        claim = "http://www.wikidata.org/prop/P69"
        truthy = "http://www.wikidata.org/prop/direct/P69"
        layer = Q42_EDUCATED if self.statement_layer_relations else []
        assert kg.neighbors("Q42", relations=[claim], qualifiers=True) == {"Q42": layer}
        assert kg.neighbors("Q42", relations=[truthy, "P69"], qualifiers=True) == {"Q42": Q42_EDUCATED}
        assert kg.neighbors("Q42", relations=["P31", RDFS_LABEL], qualifiers=True) == {
            "Q42": [statement("Q42", "P31", "Q5"), *self.names(Q42_NAMES[3:7])]
        }
        assert kg.neighbors("Q350", direction="in", relations=["P131"], qualifiers=True) == {
            "Q350": [statement("Q691283", "P131", "Q350")]
        }
        assert kg.neighbors(["Q42", "Q350"], relations=[], qualifiers=True) == {"Q42": [], "Q350": []}
        assert kg.neighbors("Q42", relations=["P999"], qualifiers=True) == {"Q42": []}

    def test_statement_limits_and_literals(self, kg: KnowledgeGraph) -> None:
        assert kg.neighbors("Q42", qualifiers=True, limit_per_entity=5) == {"Q42": Q42_STATEMENTS[:5]}
        assert kg.neighbors("Q42", qualifiers=True, literals=False) == {
            "Q42": [*Q42_CITIZEN, statement("Q42", "P31", "Q5"), *Q42_EDUCATED]
        }

    def test_statements_large_batch(self, kg: KnowledgeGraph) -> None:
        ids = [f"Q{n}" for n in range(100_000, 102_100)]
        ids[1000:1000] = ["Q42"]
        ids.append("Q145")
        answer = kg.neighbors(ids, direction="both", qualifiers=True, literals=False)
        assert list(answer) == ids
        assert answer["Q42"] == [*Q42_CITIZEN, statement("Q42", "P31", "Q5"), *Q42_EDUCATED]
        assert answer["Q145"] == Q145_IN_STATEMENTS
        assert sum(map(len, answer.values())) == 7

    def test_statement_ids_validated(self, kg: KnowledgeGraph) -> None:
        with pytest.raises(InvalidTermError):
            kg.neighbors("Q42 x", qualifiers=True)
        with pytest.raises(InvalidTermError):
            kg.neighbors("Q42", relations=["P 69"], qualifiers=True)

    # ------------------------------------------------------------- labels, descriptions
    @pytest.mark.parametrize("lang", list(LABELS), ids=str)
    def test_label_fallbacks(self, kg: KnowledgeGraph, lang: str | tuple[str, ...]) -> None:
        assert kg.labels(ALL, lang=lang) == LABELS[lang]

    def test_label_language_list_and_case(self, kg: KnowledgeGraph) -> None:
        assert kg.labels("Q42", lang=["zh", "RU", "en"]) == {"Q42": "Дуглас Адамс"}
        assert kg.labels(["Q42", WD + "Q42"], lang="EN") == {"Q42": "Douglas Adams", WD + "Q42": "Douglas Adams"}
        with pytest.raises(InvalidTermError):
            kg.labels("Q42", lang=[])
        with pytest.raises(InvalidTermError):
            kg.labels("Q42", lang="not a tag")

    def test_describe(self, kg: KnowledgeGraph) -> None:
        assert kg.describe(["Q42", "Q145", "Q350", "Q1765120"], lang="en") == {
            "Q42": Entity(id="Q42", label="Douglas Adams", description="English writer and humorist"),
            "Q145": Entity(id="Q145", label="United Kingdom", description="Staat in Westeuropa"),
            "Q350": Entity(id="Q350", label="Cambridge", description="city in Cambridgeshire, England"),
            "Q1765120": Entity(id="Q1765120"),
        }
        assert kg.describe("Q42", lang=("fr", "en")) == {
            "Q42": Entity(id="Q42", label="Douglas Adams", description="écrivain anglais")
        }
        # No German label: any language, smallest tag first; the German description exists.
        assert kg.describe("Q42", lang="de") == {
            "Q42": Entity(id="Q42", label="Douglas Adams", description="britischer Schriftsteller")
        }
        assert kg.describe([WD + "Q5", "Q5"], lang=("ru", "de")) == {
            WD + "Q5": Entity(id="Q5", label="Mensch", description="common name of Homo sapiens"),
            "Q5": Entity(id="Q5", label="Mensch", description="common name of Homo sapiens"),
        }
        assert kg.describe([]) == {}

    # ------------------------------------------------------------------ walks over wdt:
    def test_paths_over_truthy_edges(self, kg: KnowledgeGraph) -> None:
        result = kg.paths("Q42", ["P69", "P131", "P17"])
        assert [path.entities for path in result] == [("Q42", "Q691283", "Q350", "Q145")]
        assert result[0].edges == (
            edge("Q42", "P69", "Q691283"),
            edge("Q691283", "P131", "Q350"),
            edge("Q350", "P17", "Q145"),
        )
        assert [p.entities for p in kg.paths("Q145", ["P27"], directions=["in"])] == [("Q145", "Q42")]
        # The deprecated Q691283 P131 Q145 has no truthy edge.
        assert [p.entities for p in kg.paths("Q691283", ["P131"])] == [("Q691283", "Q350")]

    def test_shortest_paths_and_subgraph(self, kg: KnowledgeGraph) -> None:
        shortest = kg.shortest_paths("Q42", "Q350", max_hops=3)
        assert sorted(p.entities for p in shortest) == [("Q42", "Q145", "Q350"), ("Q42", "Q691283", "Q350")]
        sub = kg.subgraph("Q42", hops=2, direction="out", relations=["P69", "P131", "P31"])
        assert sorted(e.as_tuple() for e in sub) == [
            ("Q42", "P31", "Q5"),
            ("Q42", "P69", "Q691283"),
            ("Q691283", "P131", "Q350"),
        ]
        assert sub.truncated is False
        whole = kg.subgraph("Q42", hops=2)
        assert sorted(e.as_tuple() for e in whole if isinstance(e.tail, str)) == [
            ("Q350", "P17", "Q145"),
            ("Q42", "P27", "Q145"),
            ("Q42", "P31", "Q5"),
            ("Q42", "P69", "Q691283"),
            ("Q691283", "P131", "Q350"),
        ]
        # Names and values of Q42 (13) and of its neighbours Q145 (4), Q5 (3) and Q691283 (2); without
        # name edges, Q42's four values only.
        assert sum(isinstance(e.tail, Literal) for e in whole) == (22 if self.name_edges else 4)
