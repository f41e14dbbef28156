"""The Freebase conformance mixin: CVT expansion and the relation filter, exact answers.

A backend's test class subclasses :class:`FreebaseConformance` and supplies ``make_fb_kg``: a
callable ``make_fb_kg(**options)`` opening the graph of ``freebase_graph.py`` under the freebase
profile with extra ``connect`` options (``relation_filter=...``). Every expectation is written out
by hand from the picture in ``freebase_graph.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kg_adapters.base import KnowledgeGraph
from kg_adapters.errors import InvalidTermError
from kg_adapters.profiles import RelationFilter
from kg_adapters.records import Edge, Entity, Literal, edge_sort_key

from .freebase_graph import KEY_WIKIPEDIA, OWL_SAME_AS, XSD_DATE

MakeKG = Callable[..., KnowledgeGraph]


def e(head: str, relation: str, tail: str | Literal, *cvt: Edge) -> Edge:
    return Edge(head=head, relation=relation, tail=tail, cvt=tuple(cvt))


MARRIED = Literal(value="2012-08-04", datatype=XSD_DATE)

PERF1 = (  # perf1's edges seen from portman: not the two linking it back to portman
    e("m.perf1", "film.performance.character", "m.padme"),
    e("m.perf1", "film.performance.film", "m.starwars"),
    e("m.starwars", "film.film.starring", "m.perf1"),
)
PERF2 = (
    e("m.heat", "film.film.starring", "m.perf2"),
    e("m.perf2", "film.performance.character", "m.lauren"),
    e("m.perf2", "film.performance.film", "m.heat"),
)
MAR1_FROM_PORTMAN = (  # type.object.type people.marriage is hidden by the default filter
    e("m.mar1", "people.marriage.from", MARRIED),
    e("m.mar1", "people.marriage.spouse", "m.millepied"),
    e("m.millepied", "people.person.spouse_s", "m.mar1"),
)
PORTMAN_FACTS = [
    e("m.portman", "film.actor.film", "m.perf1"),
    e("m.portman", "film.actor.film", "m.perf2"),
    e("m.portman", "people.person.spouse_s", "m.mar1"),
]
PORTMAN_PLUMBING = [
    e("m.portman", "common.topic.alias", Literal(value="Natalie Hershlag", lang="en")),
    e("m.portman", "type.object.name", Literal(value="Natalie Portman", lang="en")),
    e("m.portman", "type.object.type", "people.person"),
    e("m.portman", KEY_WIKIPEDIA, Literal(value="Natalie_Portman")),
    e("m.portman", OWL_SAME_AS, "http://dbpedia.org/resource/Natalie_Portman"),
]


def walk(path: Any) -> list[tuple[str, str, object]]:
    return [edge.as_tuple() for edge in path.edges]


class FreebaseConformance:
    @pytest.fixture(scope="class")
    @classmethod
    def fb_kg(cls, make_fb_kg: MakeKG) -> Iterator[KnowledgeGraph]:
        kg = make_fb_kg()
        yield kg
        kg.close()

    @pytest.fixture(scope="class")
    @classmethod
    def unfiltered(cls, make_fb_kg: MakeKG) -> Iterator[KnowledgeGraph]:
        kg = make_fb_kg(relation_filter=None)
        yield kg
        kg.close()

    # -- neighbors ---------------------------------------------------------------------------
    def test_neighbors_expand_cvt(self, fb_kg: KnowledgeGraph) -> None:
        assert fb_kg.neighbors("m.portman", expand_cvt=True) == {
            "m.portman": [
                e("m.portman", "film.actor.film", "m.perf1", *PERF1),
                e("m.portman", "film.actor.film", "m.perf2", *PERF2),
                e("m.portman", "people.person.spouse_s", "m.mar1", *MAR1_FROM_PORTMAN),
            ]
        }

    def test_neighbors_without_expand_cvt_carry_nothing(self, fb_kg: KnowledgeGraph) -> None:
        assert fb_kg.neighbors("m.portman") == {"m.portman": PORTMAN_FACTS}

    def test_neighbors_expand_cvt_incoming_and_named_relations(self, fb_kg: KnowledgeGraph) -> None:
        """An edge coming in from a CVT carries it too; named far ends carry nothing."""
        answer = fb_kg.neighbors(
            ["m.heat", "m.deniro"], direction="in", relations=["film.performance.film"], expand_cvt=True
        )
        assert answer == {
            "m.heat": [
                e(
                    "m.perf2",
                    "film.performance.film",
                    "m.heat",
                    e("m.perf2", "film.performance.actor", "m.portman"),
                    e("m.perf2", "film.performance.character", "m.lauren"),
                    e("m.portman", "film.actor.film", "m.perf2"),
                ),
                e(
                    "m.perf3",
                    "film.performance.film",
                    "m.heat",
                    e("m.pacino", "film.actor.film", "m.perf3"),
                    e("m.perf3", "film.performance.actor", "m.pacino"),
                    e("m.perf3", "film.performance.character", "m.hanna"),
                ),
            ],
            "m.deniro": [],
        }
        direct = fb_kg.neighbors("m.deniro", expand_cvt=True)
        assert direct == {"m.deniro": [e("m.deniro", "film.actor.film..film.performance.film", "m.heat")]}

    def test_neighbors_of_a_cvt_both_ways(self, fb_kg: KnowledgeGraph) -> None:
        assert fb_kg.neighbors("m.mar1", direction="both", expand_cvt=True) == {
            "m.mar1": [
                e("m.mar1", "people.marriage.from", MARRIED),
                e("m.mar1", "people.marriage.spouse", "m.millepied"),
                e("m.mar1", "people.marriage.spouse", "m.portman"),
                e("m.millepied", "people.person.spouse_s", "m.mar1"),
                e("m.portman", "people.person.spouse_s", "m.mar1"),
            ]
        }

    def test_expand_cvt_literals_false(self, fb_kg: KnowledgeGraph) -> None:
        answer = fb_kg.neighbors("m.portman", relations=["people.person.spouse_s"], literals=False, expand_cvt=True)
        assert answer == {"m.portman": [e("m.portman", "people.person.spouse_s", "m.mar1", *MAR1_FROM_PORTMAN[1:])]}

    # -- relations ----------------------------------------------------------------------------
    def test_relations_expand_cvt(self, fb_kg: KnowledgeGraph) -> None:
        assert fb_kg.relations(["m.portman", "m.heat"], expand_cvt=True) == {
            "m.portman": [
                "film.actor.film",
                "film.actor.film..film.performance.character",
                "film.actor.film..film.performance.film",
                "people.person.spouse_s",
                "people.person.spouse_s..people.marriage.from",
                "people.person.spouse_s..people.marriage.spouse",
            ],
            "m.heat": [
                "film.film.starring",
                "film.film.starring..film.performance.actor",
                "film.film.starring..film.performance.character",
            ],
        }
        assert fb_kg.relations("m.portman") == {"m.portman": ["film.actor.film", "people.person.spouse_s"]}

    def test_relations_expand_cvt_incoming(self, fb_kg: KnowledgeGraph) -> None:
        """Incoming collapsed relations are spelled in the KG's direction, as FB15k-237 does."""
        assert fb_kg.relations("m.heat", direction="in", expand_cvt=True) == {
            "m.heat": ["film.actor.film..film.performance.film", "film.performance.film"]
        }
        both = fb_kg.relations("m.padme", direction="both", expand_cvt=True)
        assert both == {
            "m.padme": [
                "film.actor.film..film.performance.character",
                "film.film.starring..film.performance.character",
                "film.performance.character",
            ]
        }

    # -- labels -----------------------------------------------------------------------------
    def test_labels_describe_cvts(self, fb_kg: KnowledgeGraph) -> None:
        assert fb_kg.labels(["m.perf1", "m.mar1", "m.portman", "m.nothing", "people.marriage"]) == {
            "m.perf1": "film.performance: Natalie Portman; Padmé Amidala; Star Wars",
            "m.mar1": "people.marriage: 2012-08-04; Benjamin Millepied; Natalie Portman",
            "m.portman": "Natalie Portman",
            "people.marriage": "Marriage",
        }

    def test_describe_labels_cvts_too(self, fb_kg: KnowledgeGraph) -> None:
        assert fb_kg.describe(["m.perf3", "m.heat"]) == {
            "m.perf3": Entity(id="m.perf3", label="film.performance: Al Pacino; Vincent Hanna; Heat"),
            "m.heat": Entity(id="m.heat", label="Heat"),
        }

    # -- paths ------------------------------------------------------------------------------
    def test_plain_two_hop_paths_through_cvts(self, fb_kg: KnowledgeGraph) -> None:
        """WebQSP-style inferential chains walk through CVTs without any flag."""
        result = fb_kg.paths("m.portman", ["film.actor.film", "film.performance.character"])
        assert [walk(path) for path in result] == [
            [("m.portman", "film.actor.film", "m.perf1"), ("m.perf1", "film.performance.character", "m.padme")],
            [("m.portman", "film.actor.film", "m.perf2"), ("m.perf2", "film.performance.character", "m.lauren")],
        ]

    def test_paths_expand_cvt_collapsed_step(self, fb_kg: KnowledgeGraph) -> None:
        result = fb_kg.paths("m.portman", ["film.actor.film..film.performance.film"], expand_cvt=True)
        assert [walk(path) for path in result] == [
            [("m.portman", "film.actor.film", "m.perf2"), ("m.perf2", "film.performance.film", "m.heat")],
            [("m.portman", "film.actor.film", "m.perf1"), ("m.perf1", "film.performance.film", "m.starwars")],
        ]
        assert [path.end for path in result] == ["m.heat", "m.starwars"]
        assert result.truncated is False
        without = fb_kg.paths("m.portman", ["film.actor.film..film.performance.film"])
        assert list(without) == []

    def test_paths_expand_cvt_backwards_and_direct_triples(self, fb_kg: KnowledgeGraph) -> None:
        """Walking a collapsed step ``in`` finds the FB15k-237-style triple and the CVT walks."""
        result = fb_kg.paths("m.heat", ["film.actor.film..film.performance.film"], directions=["in"], expand_cvt=True)
        assert [walk(path) for path in result] == [
            [("m.deniro", "film.actor.film..film.performance.film", "m.heat")],
            [("m.pacino", "film.actor.film", "m.perf3"), ("m.perf3", "film.performance.film", "m.heat")],
            [("m.portman", "film.actor.film", "m.perf2"), ("m.perf2", "film.performance.film", "m.heat")],
        ]
        plain = fb_kg.paths("m.heat", ["film.actor.film..film.performance.film"], directions=["in"])
        assert [walk(path) for path in plain] == [[("m.deniro", "film.actor.film..film.performance.film", "m.heat")]]

    def test_paths_expand_cvt_two_collapsed_steps(self, fb_kg: KnowledgeGraph) -> None:
        rule = ["film.actor.film..film.performance.film", "film.film.starring..film.performance.actor"]
        result = fb_kg.paths("m.portman", rule, expand_cvt=True)
        assert [path.entities for path in result] == [
            ("m.portman", "m.perf2", "m.heat", "m.perf3", "m.pacino"),
            ("m.portman", "m.perf2", "m.heat", "m.perf2", "m.portman"),
            ("m.portman", "m.perf1", "m.starwars", "m.perf1", "m.portman"),
        ]
        simple = fb_kg.paths("m.portman", rule, expand_cvt=True, simple=True)
        assert [path.entities for path in simple] == [("m.portman", "m.perf2", "m.heat", "m.perf3", "m.pacino")]
        cut = fb_kg.paths("m.portman", rule, expand_cvt=True, max_paths=1)
        assert len(cut) == 1 and cut.truncated is True

    def test_paths_expand_cvt_both_directions(self, fb_kg: KnowledgeGraph) -> None:
        result = fb_kg.paths(
            "m.millepied", ["people.person.spouse_s..people.marriage.spouse"], directions=["both"], expand_cvt=True
        )
        assert [walk(path) for path in result] == [
            [("m.millepied", "people.person.spouse_s", "m.mar1"), ("m.mar1", "people.marriage.spouse", "m.portman")],
            [("m.portman", "people.person.spouse_s", "m.mar1"), ("m.mar1", "people.marriage.spouse", "m.millepied")],
        ]

    # -- the relation filter -----------------------------------------------------------------
    def test_default_filter_hides_plumbing_unless_named(self, fb_kg: KnowledgeGraph) -> None:
        assert fb_kg.profile.relation_filter == type(fb_kg.profile).relation_filter
        named = fb_kg.neighbors("m.portman", relations=["type.object.type", KEY_WIKIPEDIA])
        assert named == {"m.portman": [PORTMAN_PLUMBING[3], PORTMAN_PLUMBING[2]]}
        assert fb_kg.subgraph("m.pacino", hops=1) == [
            e("m.pacino", "film.actor.film", "m.perf3"),
            e("m.perf3", "film.performance.actor", "m.pacino"),
        ]
        typed = fb_kg.subgraph("m.pacino", hops=1, relations=["type.object.type"])
        assert typed == [e("m.pacino", "type.object.type", "people.person")]

    def test_filter_off(self, unfiltered: KnowledgeGraph) -> None:
        everything = sorted(PORTMAN_FACTS + PORTMAN_PLUMBING, key=edge_sort_key)
        assert unfiltered.neighbors("m.portman") == {"m.portman": everything}
        assert unfiltered.relations("m.pacino") == {
            "m.pacino": ["film.actor.film", "type.object.name", "type.object.type"]
        }
        assert unfiltered.labels("m.perf3") == {"m.perf3": "film.performance: Al Pacino; Vincent Hanna; Heat"}

    def test_shortest_paths_respect_the_filter(self, fb_kg: KnowledgeGraph, unfiltered: KnowledgeGraph) -> None:
        """Unfiltered, two people meet through their type; filtered, only through facts."""
        through_type = unfiltered.shortest_paths("m.pacino", "m.portman", max_hops=2)
        assert [path.entities for path in through_type] == [("m.pacino", "people.person", "m.portman")]
        assert list(fb_kg.shortest_paths("m.pacino", "m.portman", max_hops=2)) == []
        facts = fb_kg.shortest_paths("m.pacino", "m.portman", max_hops=4)
        # Every hop has two edges (Freebase keeps CVT edges both ways): 2**4 walks over one route.
        assert {path.entities for path in facts} == {("m.pacino", "m.perf3", "m.heat", "m.perf2", "m.portman")}
        assert len(facts) == 16

    def test_custom_filter(self, make_fb_kg: MakeKG) -> None:
        with make_fb_kg(
            relation_filter=RelationFilter(drop=frozenset({"film.actor.film"}), drop_prefixes=("type.",))
        ) as kg:
            assert kg.relations("m.portman") == {
                "m.portman": sorted(["common.topic.alias", "people.person.spouse_s", KEY_WIKIPEDIA, OWL_SAME_AS])
            }
            assert kg.profile.key != "freebase"
        with make_fb_kg(relation_filter="default") as kg:
            assert kg.relations("m.portman") == {"m.portman": ["film.actor.film", "people.person.spouse_s"]}
            assert kg.profile.key == "freebase"

    def test_unknown_filter_value_is_a_typed_error(self, make_fb_kg: MakeKG) -> None:
        with pytest.raises(InvalidTermError):
            make_fb_kg(relation_filter="all")
        with pytest.raises(InvalidTermError):
            make_fb_kg(relation_filter=["common."])
