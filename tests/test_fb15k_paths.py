"""Path answers on real data (FB15k-237 as Freebase N-Triples) against an independent oracle.

The store is built with ``loaders.load_files`` and opened through ``connect``; the oracle parses
the same file with ``gzip`` and a regular expression (never through kg-adapters) and answers with
straightforward breadth-first searches written here: RoG's ``bfs_with_rule`` for relation paths,
a plain level BFS for all shortest paths, and adjacency look-ups for 1-hop subgraphs.
"""

from __future__ import annotations

import gzip
import random
import re
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph
from kg_adapters.records import Edge, Literal

FILE_NAME = "fb15k237-freebase.nt.gz"
NS = "http://rdf.freebase.com/ns/"
SEED = 20240229
RELATION_PATH_SAMPLES = 300
SHORTEST_PAIRS = 30
SUBGRAPH_SEEDS = 30
MAX_ORACLE_PATHS = 5000  # samples whose answer would be larger are redrawn (keeps the test fast)

Triple = tuple[str, str, object]  # (head, relation, tail); a literal tail is ("literal", value, lang)

_LINE = re.compile(
    r"^<(?P<s>[^>]*)> <(?P<p>[^>]*)> "
    r'(?:<(?P<o>[^>]*)>|"(?P<lit>(?:[^"\\]|\\.)*)"(?:@(?P<lang>[A-Za-z0-9-]+))?)\s*\.\s*$'
)
_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))")
_SIMPLE_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def _unescape(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = match.group(1) or match.group(2)
        return chr(int(code, 16)) if code else _SIMPLE_ESCAPES[match.group(3)]

    return _ESCAPE.sub(one, text)


def _local(iri: str) -> str:
    assert iri.startswith(NS), iri
    return iri[len(NS) :]


@dataclass
class Oracle:
    """The graph as plain dicts: entity edges by direction and relation, plus every triple."""

    out: dict[str, dict[str, list[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    into: dict[str, dict[str, list[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    by_node: dict[str, set[Triple]] = field(default_factory=lambda: defaultdict(set))
    entities: list[str] = field(default_factory=list)
    triples: int = 0

    @classmethod
    def parse(cls, path: Path) -> Oracle:
        oracle = cls()
        nodes: set[str] = set()
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                if not line.strip() or line.startswith("#"):
                    continue
                match = _LINE.match(line)
                assert match is not None, line
                head, relation = _local(match["s"]), _local(match["p"])
                oracle.triples += 1
                nodes.add(head)
                if match["o"] is not None:
                    tail = _local(match["o"])
                    nodes.add(tail)
                    oracle.out[head][relation].append(tail)
                    oracle.into[tail][relation].append(head)
                    oracle.by_node[head].add((head, relation, tail))
                    oracle.by_node[tail].add((head, relation, tail))
                else:
                    value = ("literal", _unescape(match["lit"]), (match["lang"] or "").lower())
                    oracle.by_node[head].add((head, relation, value))
        oracle.entities = sorted(nodes)
        return oracle

    def filtered(self, keep: Callable[[str], bool]) -> Oracle:
        """The same graph without the triples whose relation ``keep`` refuses."""
        oracle = Oracle(entities=self.entities)
        for table, into in ((self.out, oracle.out), (self.into, oracle.into)):
            for node, by_relation in table.items():
                for relation, others in by_relation.items():
                    if keep(relation):
                        into[node][relation] = list(others)
        for node, triples in self.by_node.items():
            oracle.by_node[node] = {triple for triple in triples if keep(triple[1])}
        oracle.triples = sum(1 for node in self.by_node for triple in oracle.by_node[node] if triple[0] == node)
        return oracle

    # -- RoG Algorithm 1 (bfs_with_rule), with a direction per hop --------------------------
    def bfs_with_rule(self, start: str, rule: list[str], dirs: list[str]) -> list[tuple[Triple, ...]]:
        results: list[tuple[Triple, ...]] = []
        queue: deque[tuple[str, tuple[Triple, ...]]] = deque([(start, ())])
        while queue:
            node, path = queue.popleft()
            if len(path) == len(rule):
                results.append(path)
                continue
            relation, direction = rule[len(path)], dirs[len(path)]
            if direction == "out":
                for tail in self.out[node].get(relation, ()):
                    queue.append((tail, (*path, (node, relation, tail))))
            else:
                for head in self.into[node].get(relation, ()):
                    queue.append((head, (*path, (head, relation, node))))
        return results

    def count_rule_paths(self, start: str, rule: list[str], dirs: list[str]) -> int:
        """How many paths bfs_with_rule would return (cheap: counts per node, no enumeration)."""
        counts = {start: 1}
        for relation, direction in zip(rule, dirs, strict=True):
            step: dict[str, int] = defaultdict(int)
            table = self.out if direction == "out" else self.into
            for node, n in counts.items():
                for nxt in table[node].get(relation, ()):
                    step[nxt] += n
            counts = step
        return sum(counts.values())

    # -- undirected entity adjacency (direction "both"), self-loops skipped -----------------
    def undirected(self, node: str) -> Iterator[tuple[Triple, str]]:
        for relation, tails in self.out[node].items():
            for tail in tails:
                if tail != node:
                    yield (node, relation, tail), tail
        for relation, heads in self.into[node].items():
            for head in heads:
                if head != node:
                    yield (head, relation, node), head

    def shortest_steps(self, source: str, target: str, max_hops: int) -> Iterator[tuple[str, Triple, str]]:
        """Level BFS from the source (walking edges either way) up to the level that reaches the target:
        every step ``(node, edge, other)`` that ends one level further out than it starts, level by level."""
        dist = {source: 0}
        layer = [source]
        depth = 0
        while layer and depth < max_hops and target not in dist:
            depth += 1
            nxt_layer: list[str] = []
            for node in layer:
                for edge, other in self.undirected(node):
                    if other not in dist:
                        dist[other] = depth
                        nxt_layer.append(other)
                    if dist[other] == depth:
                        yield node, edge, other
            layer = nxt_layer

    def all_shortest_paths(self, source: str, target: str, max_hops: int) -> list[tuple[Triple, ...]]:
        """Every shortest chain back from the target over the level BFS's steps."""
        if source == target:
            return [()]
        parents: dict[str, list[tuple[str, Triple]]] = defaultdict(list)
        for node, edge, other in self.shortest_steps(source, target, max_hops):
            parents[other].append((node, edge))
        if target not in parents:
            return []

        def chains(node: str) -> Iterator[tuple[Triple, ...]]:
            if node == source:
                yield ()
                return
            for prev, edge in parents[node]:
                for rest in chains(prev):
                    yield (*rest, edge)

        return list(chains(target))

    def count_shortest(self, source: str, target: str, max_hops: int) -> int:
        """The number of shortest paths, by counting over the level BFS (to reject pairs with huge answers)."""
        ways = {source: 1}
        for node, _edge, other in self.shortest_steps(source, target, max_hops):
            ways[other] = ways.get(other, 0) + ways[node]
        return ways.get(target, 0)


def as_triples(edges: Iterable[Edge]) -> tuple[Triple, ...]:
    return tuple(
        (edge.head, edge.relation, ("literal", edge.tail.value, edge.tail.lang or ""))
        if isinstance(edge.tail, Literal)
        else (edge.head, edge.relation, edge.tail)
        for edge in edges
    )


# ----------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="session")
def fb15k_file(shared_data: Path) -> Path:
    path = shared_data / FILE_NAME
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    return path


@pytest.fixture(scope="session")
def oracle(fb15k_file: Path) -> Oracle:
    return Oracle.parse(fb15k_file)


@pytest.fixture(scope="session", params=["indexed", "oxigraph-only"])
def fb15k_store(request: pytest.FixtureRequest, fb15k_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store with its traversal index (walks on integers) and without (walks on Oxigraph):
    every test below holds both to the oracle."""
    import loaders

    indexed = request.param == "indexed"
    store = tmp_path_factory.mktemp("fb15k") / "store"
    report = loaders.load_files([str(fb15k_file)], str(store), profile="freebase", progress=False, index=indexed)
    assert report.lines_skipped == 0
    with connect(f"oxigraph://{store.resolve()}") as kg:
        assert (getattr(kg, "traversal_index", None) is not None) is indexed
    return store.resolve()


@pytest.fixture(scope="session")
def fb15k(fb15k_store: Path) -> Iterator[KnowledgeGraph]:
    kg = connect(f"oxigraph://{fb15k_store}?profile=freebase&relation_filter=none")  # the oracle filters nothing
    yield kg
    kg.close()


def test_store_matches_the_file(fb15k: KnowledgeGraph, oracle: Oracle) -> None:
    assert oracle.triples == 299113
    assert fb15k.profile.name == "freebase"
    assert fb15k.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }") == [  # type: ignore[attr-defined]
        {"n": Literal(value=str(oracle.triples), datatype="http://www.w3.org/2001/XMLSchema#integer")}
    ]


# ------------------------------------------------------------------------ relation paths
def _sample_rule(oracle: Oracle, rng: random.Random) -> tuple[str, list[str], list[str]]:
    """A real relation path: a random walk of 1-3 hops from a random entity, some hops backwards."""
    while True:
        start = rng.choice(oracle.entities)
        hops = rng.choice((1, 2, 2, 3, 3))
        node, rule, dirs = start, [], []
        for _ in range(hops):
            direction = "in" if rng.random() < 0.35 else "out"
            table = oracle.out if direction == "out" else oracle.into
            if not table[node]:
                direction = "out" if direction == "in" else "in"
                table = oracle.out if direction == "out" else oracle.into
            if not table[node]:
                break
            relation = rng.choice(sorted(table[node]))
            rule.append(relation)
            dirs.append(direction)
            node = rng.choice(table[node][relation])
        if len(rule) == hops and oracle.count_rule_paths(start, rule, dirs) <= MAX_ORACLE_PATHS:
            return start, rule, dirs


def test_relation_paths_match_independent_bfs(fb15k: KnowledgeGraph, oracle: Oracle) -> None:
    rng = random.Random(SEED)
    directions_seen: set[str] = set()
    hops_seen: set[int] = set()
    nonempty = 0
    for sample in range(RELATION_PATH_SAMPLES):
        start, rule, dirs = _sample_rule(oracle, rng)
        starts = [start]
        if sample % 10 == 0:  # now and then several starts at once, incl. one that matches nothing
            starts += [rng.choice(oracle.entities), "m.not_an_entity"]
        wanted = {(s, path) for s in dict.fromkeys(starts) for path in oracle.bfs_with_rule(s, rule, dirs)}
        result = fb15k.paths(starts, rule, directions=dirs)  # type: ignore[arg-type]
        got = [(path.start, as_triples(path.edges)) for path in result]
        assert result.truncated is False
        assert len(got) == len(set(got)), f"duplicate paths for {starts} {rule} {dirs}"
        assert set(got) == wanted, f"paths differ for starts={starts} rule={rule} dirs={dirs}"
        for path in result:
            assert path.relations == tuple(rule)
        nonempty += bool(wanted)
        directions_seen.update(dirs)
        hops_seen.add(len(rule))
    assert directions_seen == {"out", "in"}
    assert hops_seen == {1, 2, 3}
    assert nonempty == RELATION_PATH_SAMPLES  # every sampled rule is a real walk from its start


def test_relation_paths_simple_match_independent_bfs(fb15k: KnowledgeGraph, oracle: Oracle) -> None:
    """simple=True keeps exactly the oracle's paths that never revisit a node."""
    rng = random.Random(SEED + 1)
    for _ in range(60):
        start, rule, dirs = _sample_rule(oracle, rng)
        wanted = set()
        for path in oracle.bfs_with_rule(start, rule, dirs):
            nodes: list[object] = [start]
            for head, _relation, tail in path:
                nodes.append(tail if head == nodes[-1] else head)
            if len(set(nodes)) == len(nodes):
                wanted.add(path)
        result = fb15k.paths(start, rule, directions=dirs, simple=True)  # type: ignore[arg-type]
        assert {as_triples(path.edges) for path in result} == wanted


# ------------------------------------------------------------------------ shortest paths
def _sample_pair(oracle: Oracle, rng: random.Random) -> tuple[str, str]:
    """A source and a target 1-4 undirected steps apart (sometimes unreachable within 3)."""
    while True:
        source = rng.choice(oracle.entities)
        node = source
        for _ in range(rng.choice((1, 2, 3, 3, 4))):
            steps = list(oracle.undirected(node))
            if not steps:
                break
            node = rng.choice(steps)[1]
        if node != source and oracle.count_shortest(source, node, 3) <= MAX_ORACLE_PATHS:
            return source, node


def test_shortest_paths_match_independent_bfs(fb15k: KnowledgeGraph, oracle: Oracle) -> None:
    rng = random.Random(SEED + 2)
    lengths: set[int] = set()
    for _ in range(SHORTEST_PAIRS):
        source, target = _sample_pair(oracle, rng)
        wanted = set(oracle.all_shortest_paths(source, target, 3))
        result = fb15k.shortest_paths(source, target, max_hops=3, direction="both")
        got = [as_triples(path.edges) for path in result]
        assert result.truncated is False
        assert len(got) == len(set(got)), f"duplicate shortest paths {source} -> {target}"
        assert set(got) == wanted, f"shortest paths differ for {source} -> {target}"
        assert all(path.start == source and path.end == target for path in result)
        lengths.update(len(path) for path in wanted)
    assert {1, 2, 3} <= lengths


def test_shortest_paths_source_is_target(fb15k: KnowledgeGraph, oracle: Oracle) -> None:
    entity = oracle.entities[len(oracle.entities) // 2]
    assert oracle.all_shortest_paths(entity, entity, 3) == [()]
    assert [path.edges for path in fb15k.shortest_paths(entity, entity, max_hops=3)] == [()]


# ------------------------------------------------------------------------------ subgraph
def test_one_hop_subgraph_matches_adjacency(fb15k: KnowledgeGraph, oracle: Oracle) -> None:
    rng = random.Random(SEED + 3)
    seeds = rng.sample(oracle.entities, SUBGRAPH_SEEDS)
    total = 0
    for seed in seeds:
        result = fb15k.subgraph(seed, hops=1)
        got = as_triples(result)
        assert result.truncated is False
        assert len(got) == len(set(got)), f"duplicate edges around {seed}"
        assert set(got) == oracle.by_node[seed], f"1-hop subgraph differs around {seed}"
        total += len(got)
    together = fb15k.subgraph(seeds[:5], hops=1)
    assert set(as_triples(together)) == set().union(*(oracle.by_node[seed] for seed in seeds[:5]))
    assert total > SUBGRAPH_SEEDS


# -------------------------------------------- the freebase profile as a reasoner sees it
# FB15k-237 under the freebase profile's defaults: the relation filter hides names
# (type.object.name) and common.* plumbing; CVTs are already collapsed into ``a..b`` relations and
# every entity has a name, so expand_cvt must change nothing. The oracle applies the same filter.


@pytest.fixture(scope="session")
def fb15k_reasoner(fb15k_store: Path) -> Iterator[KnowledgeGraph]:
    kg = connect(f"oxigraph://{fb15k_store}?profile=freebase")
    yield kg
    kg.close()


FREEBASE_PLUMBING = ("type.", "common.", "freebase.", "kg.", "dataworld.", "http://")


def reasoning_relation(relation: str) -> bool:
    """The freebase profile's default filter written out independently (FB15k-237 has compact ids only)."""
    return not relation.startswith(FREEBASE_PLUMBING)


@pytest.fixture(scope="session")
def filtered_oracle(oracle: Oracle) -> Oracle:
    return oracle.filtered(reasoning_relation)


def test_the_profile_filter_agrees_with_the_independent_one(oracle: Oracle, fb15k_reasoner: KnowledgeGraph) -> None:
    relations = {triple[1] for triples in oracle.by_node.values() for triple in triples}
    keeps = fb15k_reasoner.profile.relation_filter.keeps
    assert "type.object.name" in relations and "people.person.place_of_birth" in relations
    assert {r for r in relations if keeps(r)} == {r for r in relations if reasoning_relation(r)}


TOM_HANKS, GREEN_MILE, CONCORD = "m.0bxtg", "m.03s9kp", "m.0qymv"
COLLAPSED_FILM = "film.actor.film..film.performance.film"


def test_freebase_profile_hand_checked_answers(fb15k_reasoner: KnowledgeGraph) -> None:
    kg = fb15k_reasoner
    assert kg.labels([TOM_HANKS, GREEN_MILE, CONCORD]) == {
        TOM_HANKS: "Tom Hanks",
        GREEN_MILE: "The Green Mile",
        CONCORD: "Concord",
    }
    relations = kg.relations(TOM_HANKS)[TOM_HANKS]
    assert COLLAPSED_FILM in relations and "people.person.place_of_birth" in relations
    assert "type.object.name" not in relations
    assert kg.relations(TOM_HANKS, expand_cvt=True) == {TOM_HANKS: relations}
    films = kg.paths(TOM_HANKS, [COLLAPSED_FILM], expand_cvt=True)
    assert len(films) == 24 and GREEN_MILE in {path.end for path in films}
    assert [path.edges for path in films] == [path.edges for path in kg.paths(TOM_HANKS, [COLLAPSED_FILM])]
    union = "people.person.spouse_s..people.marriage.type_of_union"
    assert kg.neighbors(TOM_HANKS, relations=[union], expand_cvt=True) == {
        TOM_HANKS: [Edge(head=TOM_HANKS, relation=union, tail="m.04ztj")]
    }
    born = kg.paths(TOM_HANKS, ["people.person.place_of_birth"])
    assert [path.end for path in born] == [CONCORD]


def test_freebase_profile_expand_cvt_changes_nothing_on_fb15k(
    fb15k_reasoner: KnowledgeGraph, filtered_oracle: Oracle
) -> None:
    seeds = random.Random(SEED + 4).sample(filtered_oracle.entities, 20)
    assert fb15k_reasoner.neighbors(seeds, direction="both", expand_cvt=True) == fb15k_reasoner.neighbors(
        seeds, direction="both"
    )
    assert fb15k_reasoner.relations(seeds, direction="both", expand_cvt=True) == fb15k_reasoner.relations(
        seeds, direction="both"
    )


def test_freebase_profile_relations_and_subgraph_match_filtered_oracle(
    fb15k_reasoner: KnowledgeGraph, filtered_oracle: Oracle
) -> None:
    seeds = random.Random(SEED + 5).sample(filtered_oracle.entities, SUBGRAPH_SEEDS)
    hidden = 0
    for seed in seeds:
        got = as_triples(fb15k_reasoner.subgraph(seed, hops=1))
        assert set(got) == filtered_oracle.by_node[seed], f"filtered 1-hop subgraph differs around {seed}"
        out = sorted({relation for _h, relation, _t in filtered_oracle.by_node[seed] if _h == seed})
        assert fb15k_reasoner.relations(seed) == {seed: out}
        hidden += not any(triple[1] == "type.object.name" for triple in got)
    assert hidden == SUBGRAPH_SEEDS  # names never show, though every entity has one


def test_freebase_profile_shortest_paths_match_filtered_oracle(
    fb15k_reasoner: KnowledgeGraph, filtered_oracle: Oracle
) -> None:
    rng = random.Random(SEED + 6)
    for _ in range(10):
        source, target = _sample_pair(filtered_oracle, rng)
        wanted = set(filtered_oracle.all_shortest_paths(source, target, 3))
        result = fb15k_reasoner.shortest_paths(source, target, max_hops=3)
        assert {as_triples(path.edges) for path in result} == wanted
