"""The traversal index of one store version: its entity-to-entity edges as integer CSR arrays and its
literal objects as a table, read by walks that answer exactly what the generic algorithms answer.

The package, by job:

- :mod:`~kg_adapters.index.layout`: the files' names and format version.
- :mod:`~kg_adapters.index.build`: numbering a load's triples (``TripleCollector``) and computing the arrays;
  :mod:`~kg_adapters.index.spill` the same past a memory budget; :mod:`~kg_adapters.index.emit` writes the files.
- :mod:`~kg_adapters.index.read`: :class:`~kg_adapters.index.read.TraversalIndex` maps the files;
  :class:`~kg_adapters.index.read.Side` is the one read of a node's edges on one side
  (:meth:`~kg_adapters.index.read.Side.edges`: one relation or a relation mask, answer order,
  optional limit); ``TraversalIndex.literal_runs`` the one read of an entity's literal objects.
- :mod:`~kg_adapters.index.edges`: a node's edges in answer order, composed from those two reads: the
  one place where the ``both`` merge (a self-loop once) and the placing of literal edges are written.
  Change the order of an answer or the handling of literals there.
- the walks: ``neighbors`` is :func:`~kg_adapters.index.edges.read_edges` then
  :func:`~kg_adapters.index.edges.edge_records` (in the backend); :mod:`~kg_adapters.index.paths`,
  :mod:`~kg_adapters.index.shortest` and :mod:`~kg_adapters.index.subgraph` walk on the same reads.
- :mod:`~kg_adapters.index.backend`: :class:`~kg_adapters.index.backend.IndexBackend`, what an
  ``OxigraphGraph`` dispatches to (its ``can_answer(operation, ...)`` decides, as networkx's backend
  dispatch does); :mod:`~kg_adapters.index.ids`: the graph's id memo.
- :mod:`~kg_adapters.index.memo` (the one cache type), :mod:`~kg_adapters.index.records` (records built
  fast), :mod:`~kg_adapters.index.tuning` (the thresholds the walks choose their way by).

The files (a store version directory may hold ``traversal/`` beside ``oxigraph/``)::

    meta.json          format, profile, counts (written last: its presence marks a complete index)
    entities.bin       the entities' ids (as the profile spells them), UTF-8, sorted, concatenated
    entity_offsets.npy int64[n + 1]: where each id starts in entities.bin
    relations.json     the relation ids, sorted (small: loaded at open)
    out_key.npy        int64, sorted: head * R + relation of every IRI-to-IRI edge
    out_other.npy      int32: its tail (same order; so edges sort by (head, relation, tail))
    in_key.npy         int64, sorted: tail * R + relation
    in_other.npy       int32: its head
    literal_key.npy    int64, sorted: entity * R + relation of each literal object, each key's literals
                       in answer order (literal_tag.npy, literal_offsets.npy and literals.bin hold
                       their datatype or language and text)
    out_extra.npy      int64, sorted distinct: node * R + relation where the node has a literal or
                       blank-node object of the relation (ends the CSR does not hold)
    in_extra.npy       int64, sorted distinct: node * R + relation with a blank-node subject
    *_start.npy        int32 (int64 when the keys outgrow int32) [n + 1], one per key array
                       (out, in, out_extra, in_extra, literal): node n's keys are
                       ``keys[start[n]:start[n + 1]]``

Entities and relations are numbered in the order of their ids, so integer order is the order answers
are sorted in (``edge_sort_key``). Literal objects are answered from the index's literal table; blank
nodes and named graphs are not in the index: a store with blank nodes answers walks through Oxigraph
(its index still reads entity edges for the generic code, with the blank-node ends from Oxigraph).

numpy, not a graph library (igraph, scipy.sparse, graph-tool): the index needs exactly sorted
arrays, ``searchsorted`` and memory mapping, which numpy does well and keeps on disk in a plain,
documented format (``.npy``) that opens without parsing; the graph libraries load whole graphs
into their own memory and know nothing of relations or RDF terms.

Every cache of the package is a :class:`~kg_adapters.index.memo.BoundedMemo`: reads are dict reads,
fills take a lock, and a memo that is full is emptied whole before it takes more::

    cache                   owner                  key -> value                 bound               emptied
    name_cache              TraversalIndex (one    entity number -> id          NAME_CACHE_CAP      when full; when
                            per opened index,                                   entries and         the index closes
                            shared by its graphs                                NAME_CACHE_BYTES
                            and threads)                                        (estimated)
    literal_cache           TraversalIndex         literal table position ->    LITERAL_CACHE_CAP   when full (a literal
                                                   Literal record               and LITERAL_CACHE_  over the budget is
                                                                                BYTES (estimated)   never kept); closed
    IndexIds.canonical      IndexIds of one        entity spelling ->           IDS_CAP entries     when full; with its
                            IndexBackend (one      canonical id                                     backend (a new one
                            graph, index and                                                        when the profile
                            profile)                                                                changes, after a
                                                                                                    write; none once
                                                                                                    closed)
    IndexIds.numbers        IndexIds               canonical id -> number       IDS_CAP             as above
                                                   (None: not in the index)
    IndexIds.relations      IndexIds               relation id -> number        IDS_CAP             as above
                                                   (None: not in the index)
    IndexIds.path_calls     IndexIds               (start id, relation path)    IDS_CAP             as above
                                                   -> a default paths call's
                                                   checked arguments

Besides these, ``IndexBackend`` keeps its two relation masks (one per value of ``layer``) and
``TraversalIndex`` maps each ``.npy`` file at most once as a numpy array: both are bounded by the
index itself. Only ids the profile accepted are kept: a bad id is refused, with the same error, on
every call. ``tests/test_traversal_index.py`` checks every bound.
"""
