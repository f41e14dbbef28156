"""The retrieval half of Think-on-Graph's ``ToG/freebase_func.py`` over any :class:`KnowledgeGraph`.

Before (ToG: one SPARQLWrapper request per entity, per relation and per name)::

    from freebase_func import *            # reads the module-level SPARQLPATH

After (the same call sites; the graph is set once, with our batching, retries and cache)::

    from kg_adapters import connect
    from kg_adapters.compat import tog
    from kg_adapters.compat.tog import abandon_rels, entity_search, id2entity_name_or_type
    tog.use(connect("sparql+http://localhost:8890/sparql?profile=freebase&dialect=virtuoso&relation_filter=none"))

Every function also takes ``kg=`` (a graph for this call). The originals and what changes:

* ``relation_search(entity_id, pre_relations, pre_head)`` is the retrieval part of ToG's
  ``relation_search_prune``: the relations of the entity as head and as tail, ToG's filter
  (:func:`abandon_rels`) applied when ``remove_unnecessary_rel`` (ToG's default), the previous
  step's relations removed from the side ToG removes them from (``pre_head`` truthy: tail side,
  as ToG; its first step passes ``-1``, which is truthy). Answered as ``(head_relations,
  tail_relations)``, each sorted (ToG's are unordered sets; it sorts their concatenation).
  The LLM/BM25 pruning stays in the caller's code. With the Freebase profile's default relation
  filter the graph also hides ``type.*``, ``kg.*``, ``dataworld.*``, ``key/`` and RDF/RDFS/OWL
  copies, which ToG keeps; connect with ``relation_filter=none`` for exactly ToG's lists.
* ``entity_search(entity, relation, head=True)``: the tails of ``entity --relation-->``
  (``head=True``) or the heads of ``--relation--> entity`` (``head=False``). ToG's own
  ``head=False`` fills its template's slots in the wrong order (``?e ns:<entity> ns:<relation>``)
  and always answers nothing; ours answers correctly. Like ToG, only ``m.`` ids are kept on
  Freebase (literals and ``g.`` ids dropped); on other profiles every entity (no literals). Sorted.
* ``id2entity_name_or_type(entity_id)``: the entity's name, or ``"UnName_Entity"`` (a CVT, or
  anything nameless). ToG takes whichever ``type.object.name`` the endpoint lists first, in any
  language, then an ``owl:sameAs`` IRI; ours prefers English (then untagged, then any) and does not
  fall back to ``sameAs``.
* Batched equivalents, one bounded set of backend calls for many entities: :func:`relation_search_batch`
  (two ``relations`` calls), :func:`entity_search_batch` (at most two ``neighbors`` calls),
  :func:`id2entity_name_or_type_batch` (one call).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from kg_adapters.base import KnowledgeGraph, as_id_list
from kg_adapters.compat._default import DefaultGraph
from kg_adapters.errors import InvalidTermError
from kg_adapters.records import Literal, best_label

UNNAMED = "UnName_Entity"
"""ToG's name for an entity without one."""

_default = DefaultGraph("kg_adapters.compat.tog", "pass kg=")


def use(kg: KnowledgeGraph | None) -> None:
    """Sets the graph every function reads when called without ``kg=`` (ToG's ``SPARQLPATH``)."""
    _default.use(kg)


_resolve = _default.resolve


def abandon_rels(relation: str) -> bool:
    """ToG's relation filter: schema/name plumbing, ``common.*``, ``freebase.*`` and ``sameAs``."""
    return (
        relation in ("type.object.type", "type.object.name")
        or relation.startswith(("common.", "freebase."))
        or "sameAs" in relation
    )


def relation_search(
    entity_id: str,
    pre_relations: Collection[str] = (),
    pre_head: object = False,
    *,
    remove_unnecessary_rel: bool = True,
    kg: KnowledgeGraph | None = None,
) -> tuple[list[str], list[str]]:
    """``(head_relations, tail_relations)`` of one entity, as ToG's ``relation_search_prune`` has
    them before pruning (see the module docstring)."""
    return relation_search_batch(
        [entity_id], pre_relations, [pre_head], remove_unnecessary_rel=remove_unnecessary_rel, kg=kg
    )[entity_id]


def relation_search_batch(
    entity_ids: Sequence[str],
    pre_relations: Collection[str] = (),
    pre_heads: Sequence[object] | None = None,
    *,
    remove_unnecessary_rel: bool = True,
    kg: KnowledgeGraph | None = None,
) -> dict[str, tuple[list[str], list[str]]]:
    """:func:`relation_search` for many entities in two ``relations`` calls; ``pre_heads[i]``
    goes with ``entity_ids[i]`` (default: ToG's first step, ``-1`` for every entity)."""
    graph = _resolve(kg)
    ids = as_id_list(list(entity_ids))
    heads = list(pre_heads) if pre_heads is not None else [-1] * len(entity_ids)
    if len(heads) != len(entity_ids):
        raise InvalidTermError(f"pre_heads has {len(heads)} items for {len(entity_ids)} entities")
    previous = set(pre_relations)
    out = graph.relations(ids, direction="out") if ids else {}
    into = graph.relations(ids, direction="in") if ids else {}
    answer: dict[str, tuple[list[str], list[str]]] = {}
    for entity, pre_head in zip(entity_ids, heads, strict=True):
        head_relations, tail_relations = set(out.get(entity, ())), set(into.get(entity, ()))
        if remove_unnecessary_rel:
            head_relations = {r for r in head_relations if not abandon_rels(r)}
            tail_relations = {r for r in tail_relations if not abandon_rels(r)}
        if pre_head:
            tail_relations -= previous
        else:
            head_relations -= previous
        answer[entity] = (sorted(head_relations), sorted(tail_relations))
    return answer


def entity_search(entity: str, relation: str, head: bool = True, *, kg: KnowledgeGraph | None = None) -> list[str]:
    """The entities one ``relation`` step from ``entity``: its tails (``head=True``, the entity
    is the head) or its heads (``head=False``), correctly in both cases (see the module docstring)."""
    return entity_search_batch([(entity, relation, head)], kg=kg)[0]


def entity_search_batch(
    requests: Iterable[tuple[str, str, bool]], *, kg: KnowledgeGraph | None = None
) -> list[list[str]]:
    """:func:`entity_search` for many ``(entity, relation, head)`` at once, answered in order, with
    one ``neighbors`` call per direction."""
    graph = _resolve(kg)
    asked = list(requests)
    for item in asked:
        if not (isinstance(item, tuple) and len(item) == 3 and isinstance(item[0], str) and isinstance(item[1], str)):
            raise InvalidTermError(f"each request must be (entity, relation, head), got {item!r:.120}")
    freebase = graph.profile.name == "freebase"
    found: dict[tuple[str, str, bool], list[str]] = {}
    for forward in (True, False):
        wanted = [(e, r) for e, r, h in asked if bool(h) is forward]
        if not wanted:
            continue
        entities = as_id_list([e for e, _ in wanted])
        relations = list(dict.fromkeys(r for _, r in wanted))
        edges = graph.neighbors(entities, direction="out" if forward else "in", relations=relations, literals=False)
        for entity, edge_list in edges.items():
            for edge in edge_list:
                other = edge.tail if forward else edge.head
                if isinstance(other, Literal) or (freebase and not other.startswith("m.")):
                    continue
                found.setdefault((entity, edge.relation, forward), []).append(other)
    return [sorted(dict.fromkeys(found.get((e, r, bool(h)), []))) for e, r, h in asked]


def id2entity_name_or_type(entity_id: str, *, kg: KnowledgeGraph | None = None) -> str:
    """The entity's name, or ``"UnName_Entity"`` (see the module docstring)."""
    return id2entity_name_or_type_batch([entity_id], kg=kg)[entity_id]


def id2entity_name_or_type_batch(entity_ids: Sequence[str], *, kg: KnowledgeGraph | None = None) -> dict[str, str]:
    """Names of many entities in one call. On profiles with CVT nodes the name predicates are read
    directly, so a CVT is ``UnName_Entity`` as in ToG (``labels`` would describe it)."""
    graph = _resolve(kg)
    ids = as_id_list(list(entity_ids))
    if not ids:
        return {}
    profile = graph.profile
    if not profile.has_cvt_nodes:
        names = graph.labels(ids)
        return {entity: names.get(entity, UNNAMED) for entity in ids}
    predicates = [profile.relation_id(p) for p in profile.label_predicates]
    edges = graph.neighbors(ids, direction="out", relations=predicates)
    answer: dict[str, str] = {}
    for entity in ids:
        literals = [edge.tail for edge in edges.get(entity, ()) if isinstance(edge.tail, Literal)]
        answer[entity] = best_label(literals, ("en",)) if literals else UNNAMED
    return answer
