"""The thresholds the walks choose their way by (node by node or one numpy hop, a scan or a search,
the shortest-path search's cost model). Tests set them to extremes so that every way is taken.
"""

SMALL_FRONTIER = 4096
"""Frontiers up to this many nodes are read node by node through the memoryviews (``Side.ends``,
the shortest-path search); larger ones by one vectorised numpy hop. Both ways do Python work per
edge for the answer, and staying node by node spares importing numpy (its import time and memory
count in ``benchmarks.bfs_vs_networkx``'s time to first answer and peak RSS) in processes whose
walks stay small."""

FILTER_ROWS = 16
"""A vectorised hop of one relation over a frontier whose nodes hold at most this many rows each on
average reads all their rows and keeps the relation's; a frontier with hubs searches each node's
rows for the relation instead (``read._relation_bounds``)."""

SCAN = 64
"""A node's rows up to this many are read in one slice by ``Side.relations``, and a node with more
keys than ``4 * limit + SCAN`` has its first ``limit`` edges found from its relations' runs
(``Side.edges``); a longer range is stepped over relation by relation."""

DEGREE_BY_NUMPY = 512
"""Frontiers of more nodes than this have their total degree counted by one vectorised pass over
the start arrays rather than two reads per node."""

PAIR_COST = 32
"""The cost, in edges scanned, of looking up the edges between two unscanned nodes on the search's
last round (their relations' runs intersected, one ``bisect`` per relation both have); see ``_join``."""
HUB_COST = 160
"""The cost, in edges scanned, of finding one unscanned node's relation runs (a ``bisect`` per relation)."""
NODE_COST = 16
"""The cost, in edges scanned, of one scanned node's slices and set lookups, whatever its degree."""
JOIN_LIMIT = 1 << 16
"""A last round whose join would still scan more edges than this is one vectorised hop instead."""


NAMES_BY_NUMPY = 96
"""Batches of at least this many missed ids are decoded by one numpy gather (``decode_names``, when
numpy is loaded already): the gather's fixed cost in numpy calls pays off only for long lists."""
