"""Per-question scope (``kga reason --scope question``): each question answered on its own subgraph.

RoG, GNN-RAG and SubgraphRAG reason over the subgraph their dataset ships with each question, not
over the union of all of them: an answer reachable only through another question's triples is not
theirs to find. A store loaded with ``kga load --format rog-dataset`` keeps each question's triples
in a named graph (:func:`kg_adapters.profiles.names.question_graph_iri`); :func:`question_graph`
reads it with one SPARQL query and answers with an in-memory graph of just those triples, in the
KG's own profile (ids, labels and relation filter as the store has them).
"""

from __future__ import annotations

from collections.abc import Sequence

import pyoxigraph as ox

from kg_adapters.backends.oxigraph import OxigraphGraph
from kg_adapters.base import KnowledgeGraph, SparqlQueryable
from kg_adapters.errors import InvalidTermError
from kg_adapters.profiles.names import question_graph_iri
from kg_adapters.records import Literal, Node
from kg_adapters.sparql_terms import iri


def _sparql(kg: KnowledgeGraph) -> SparqlQueryable:
    if not isinstance(kg, SparqlQueryable):
        raise InvalidTermError(
            "--scope question reads each question's named graph with SPARQL; this KG does not answer SPARQL "
            "(use a store loaded with kga load --format rog-dataset)"
        )
    return kg


def check_question_graphs(kg: KnowledgeGraph) -> None:
    """Refuses a KG without per-question graphs, before any question is answered on nothing."""
    answer = _sparql(kg).query("ASK { GRAPH ?g { ?s ?p ?o } }")
    if not answer or answer[0].get("boolean") is not True:
        raise InvalidTermError(
            "--scope question needs a store that keeps each question's subgraph (load the dataset with "
            "kga load FILE --format rog-dataset); this KG has no named graphs"
        )


def questions_without_graph(kg: KnowledgeGraph, question_ids: Sequence[str]) -> list[str]:
    """The ids among ``question_ids`` that have no subgraph in the store (one query listing the
    named graphs): an empty ``graph`` in the file, or questions of a file that was not loaded."""
    found = _sparql(kg).query("SELECT ?g WHERE { GRAPH ?g { } }")
    graphs = {str(row.get("g")) for row in found}
    return [qid for qid in question_ids if question_graph_iri(qid) not in graphs]


def _term(node: Node | bool) -> ox.NamedNode | ox.BlankNode | ox.Literal:
    if isinstance(node, Literal):
        if node.lang:
            return ox.Literal(node.value, language=node.lang)
        if node.datatype:
            return ox.Literal(node.value, datatype=ox.NamedNode(node.datatype))
        return ox.Literal(node.value)
    if isinstance(node, str) and node.startswith("_:"):
        return ox.BlankNode(node[2:])
    if isinstance(node, str):
        return ox.NamedNode(node)
    raise InvalidTermError(f"not an RDF term: {node!r}")


def question_graph(kg: KnowledgeGraph, question_id: str) -> OxigraphGraph:
    """The subgraph of question ``question_id`` as an in-memory graph (empty when it has none)."""
    rows = _sparql(kg).query(f"SELECT ?s ?p ?o WHERE {{ GRAPH {iri(question_graph_iri(question_id))} {{ ?s ?p ?o }} }}")
    graph = OxigraphGraph(None, profile=kg.profile)
    try:
        subject_kinds = (ox.NamedNode, ox.BlankNode)
        quads = []
        for row in rows:
            subject, predicate, obj = _term(row["s"]), _term(row["p"]), _term(row["o"])
            if not isinstance(subject, subject_kinds) or not isinstance(predicate, ox.NamedNode):
                raise InvalidTermError(f"the endpoint answered a malformed triple for question {question_id!r}")
            quads.append(ox.Quad(subject, predicate, obj))
        graph.store.extend(quads)
    except BaseException:
        graph.close()
        raise
    return graph
