"""The traversal index of one store version: the entity-to-entity edges as integer CSR arrays.

The package, by job: :mod:`~kg_adapters.index.layout` (file names, format version),
:mod:`~kg_adapters.index.build` (the N-Triples collector and the writer),
:mod:`~kg_adapters.index.read` (the reader, :class:`~kg_adapters.index.read.TraversalIndex`, and its
decoded caches), :mod:`~kg_adapters.index.records` (records built fast),
:mod:`~kg_adapters.index.tuning` (the thresholds the walks choose their way by),
:mod:`~kg_adapters.index.hops` (reading a node's or a frontier's edges),
:mod:`~kg_adapters.index.ids` (the id memo of a graph), and the walks:
:mod:`~kg_adapters.index.neighbors`, :mod:`~kg_adapters.index.paths`,
:mod:`~kg_adapters.index.shortest`, :mod:`~kg_adapters.index.subgraph`. Each walk answers exactly what
its counterpart in :mod:`kg_adapters.algorithms` answers over ``neighbors``.

A store version directory may hold ``traversal/`` beside ``oxigraph/``::

    meta.json          format, profile, counts (written last: its presence marks a complete index)
    entities.bin       the entities' ids (as the profile spells them), UTF-8, sorted, concatenated
    entity_offsets.npy int64[n + 1]: where each id starts in entities.bin
    relations.json     the relation ids, sorted (small: loaded at open)
    out_key.npy        int64, sorted: head * R + relation of every IRI-to-IRI edge
    out_other.npy      int32: its tail (same order; so edges sort by (head, relation, tail))
    in_key.npy         int64, sorted: tail * R + relation
    in_other.npy       int32: its head
    out_extra.npy      int64, sorted distinct: node * R + relation where the node has a literal or
                       blank-node object of the relation (those edges stay in Oxigraph)
    in_extra.npy       int64, sorted distinct: node * R + relation with a blank-node subject
    literal_key.npy    int64, sorted: node * R + relation of each literal object (literal_tag.npy,
                       literal_offsets.npy and literals.bin hold its datatype or language and text)
    *_start.npy        int32 (int64 when the keys outgrow int32) [n + 1], one per key array
                       (out, in, out_extra, in_extra, literal): node n's keys are
                       ``keys[start[n]:start[n + 1]]``

Entities and relations are numbered in the order of their ids, so integer order is the order answers
are sorted in (``edge_sort_key``). A node's keys are found by two reads of a start array (a
``bisect`` over all the keys would cost ~log2(edges) scattered reads, each a Python int); one
relation of a node by a ``bisect`` bounded to the node's keys. A process opens an index in well
under a millisecond and pages in only what its queries touch.

numpy, not a graph library (igraph, scipy.sparse, graph-tool): the index needs exactly sorted
arrays, ``searchsorted`` and memory mapping, which numpy does well and keeps on disk in a plain,
documented format (``.npy``) that opens without parsing; the graph libraries load whole graphs
into their own memory and know nothing of relations or RDF terms.

Building is atomic: the files are written into a temporary directory inside the version directory
and renamed to ``traversal`` last (a crash leaves only the temporary directory, never a half index).
A load numbers the triples as it hands them to Oxigraph (:class:`TripleCollector`) and writes the
index from those numbers; ``kga index`` and appends read the store back, which costs about as much as
loading it (Oxigraph looks every IRI of every triple up on disk). Both give the same files.
Anything the index does not hold (literals, blank nodes, named graphs) is answered by Oxigraph.
"""
