"""Building what a store version holds beside its Oxigraph data, from that data: the name index and
the relation index (:func:`rebuild_label_index`). Loads, extracts and writes to an on-disk store call
it; the traversal index is built by :mod:`kg_adapters.index.build`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import pyoxigraph as ox

from kg_adapters.errors import BackendError
from kg_adapters.terms import INDEXED_LABEL_PREDICATES

_NamedNode = ox.NamedNode
_Literal = ox.Literal


def rebuild_label_index(store: ox.Store, index_path: str) -> int:
    """Rewrites the SQLite name index at ``index_path`` from the store's label triples, and the
    relation index (``relations.sqlite``) beside it."""
    return write_label_indexes(
        store_label_rows(store), store_relation_rows(store, INDEXED_LABEL_PREDICATES), index_path
    )


def write_label_indexes(
    label_rows: Iterable[tuple[str, str, str]], relation_rows: Iterable[tuple[str, str, str]], index_path: str
) -> int:
    """Writes the name index at ``index_path`` from (iri, label, lang) rows and the relation index
    beside it from its rows (:func:`kg_adapters.relation_index.relation_rows`); returns the names."""
    count, finish = begin_label_indexes(label_rows, relation_rows, index_path)
    finish()
    return count


def begin_label_indexes(
    label_rows: Iterable[tuple[str, str, str]], relation_rows: Iterable[tuple[str, str, str]], index_path: str
) -> tuple[int, Callable[[], None]]:
    """:func:`write_label_indexes` in two halves: the rows written now (returns how many names) and the
    rest by the call returned (the full-text and name indexes built inside SQLite, each file synced and
    renamed into place: :class:`~kg_adapters.label_index.IndexBuild`), which holds no row in Python and
    may run on a thread beside other work. Until it returns, neither index is at its path."""
    from kg_adapters.label_index import IndexBuild  # sqlite3: only when a name index is used
    from kg_adapters.relation_index import RELATIONS_FILE, RelationIndex

    names = IndexBuild(index_path)
    relations = IndexBuild(str(Path(index_path).with_name(RELATIONS_FILE)), RelationIndex)
    try:
        count = names.insert(label_rows)
        relations.insert(relation_rows)
    except BaseException:
        names.abandon()
        relations.abandon()
        raise

    def finish() -> None:
        try:
            relations.finish()
        except BaseException:
            names.abandon()
            raise
        names.finish()

    return count, finish


def collected_label_indexes(
    labels: Iterable[tuple[str, str, str]],
    aliases: list[tuple[str, str, str]],
    relations: Sequence[str],
    index_path: str,
) -> int:
    """:func:`write_label_indexes` from what a load saw (see :func:`begin_collected_label_indexes`)."""
    count, finish = begin_collected_label_indexes(labels, aliases, relations, index_path)
    finish()
    return count


def begin_collected_label_indexes(
    labels: Iterable[tuple[str, str, str]],
    aliases: list[tuple[str, str, str]],
    relations: Sequence[str],
    index_path: str,
) -> tuple[int, Callable[[], None]]:
    """:func:`begin_label_indexes` from what a load saw (its distinct label rows, the alias rows of the
    relations and its predicates, see ``TripleCollector.label_rows``), with no read of the store: a
    relation is labelled, then aliased, by the rows whose subject names it
    (:func:`kg_adapters.relation_index.label_subjects`), as :func:`store_relation_rows` does. The label
    rows are read once, as they are written: only the relations' own are kept."""
    from kg_adapters.relation_index import alias_tag, grouped_labels, label_subjects, relation_rows

    naming = {subject for relation in relations for subject in label_subjects(relation)}
    named: list[tuple[str, str, str]] = []

    def passing() -> Iterator[tuple[str, str, str]]:
        for row in labels:
            if row[0] in naming:
                named.append(row)
            yield row

    if isinstance(labels, list):  # held: picked in one pass (a comprehension: ~5x less than passing on)
        named.extend([row for row in labels if row[0] in naming])

    def relation_index_rows() -> Iterator[tuple[str, str, str]]:  # once every label row has passed
        named.extend((subject, alias, alias_tag(lang)) for subject, alias, lang in aliases if subject in naming)
        yield from relation_rows(sorted(relations), grouped_labels(named))

    return begin_label_indexes(labels if isinstance(labels, list) else passing(), relation_index_rows(), index_path)


def store_relation_rows(store: ox.Store, label_predicates: Sequence[str]) -> Iterator[tuple[str, str, str]]:
    """The relation index's rows (:func:`kg_adapters.relation_index.relation_rows`) of a store: its
    distinct predicates (one scan inside Oxigraph), each labelled from the store's label and alias triples
    as its rows are written (a Wikidata store's property labels in every language are never all held)."""
    from kg_adapters.relation_index import ALIAS_PREDICATES, alias_tag, relation_rows

    def labels_of(subject: str) -> Iterator[tuple[str, str]]:
        for predicate in (*label_predicates, *ALIAS_PREDICATES):
            alias = predicate in ALIAS_PREDICATES
            for quad in store.quads_for_pattern(_NamedNode(subject), _NamedNode(predicate), None):
                if type(quad.object) is _Literal:
                    lang = str(quad.object.language or "")
                    yield str(quad.object.value), alias_tag(lang) if alias else lang

    try:
        solutions = store.query("SELECT DISTINCT ?p WHERE { ?s ?p ?o }")
        assert isinstance(solutions, ox.QuerySolutions)
        relations = sorted(str(solution[0].value) for solution in solutions if type(solution[0]) is _NamedNode)
        yield from relation_rows(relations, labels_of)
    except OSError as exc:
        raise BackendError(f"Oxigraph failed while listing relations: {exc}") from exc


def store_label_rows(store: ox.Store) -> Iterator[tuple[str, str, str]]:
    """(iri, label, lang) of every indexed label triple of the default graph (the graph every
    operation reads; named graphs such as a RoG dataset's per-question copies are not indexed again),
    read straight from the store's index (no SPARQL query to parse, plan and convert)."""
    for predicate in INDEXED_LABEL_PREDICATES:
        for quad in store.quads_for_pattern(None, _NamedNode(predicate), None, graph_name=ox.DefaultGraph()):
            subject, label = quad.subject, quad.object
            if type(subject) is _NamedNode and type(label) is _Literal:
                yield str(subject.value), str(label.value), str(label.language or "")
