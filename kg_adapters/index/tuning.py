"""The thresholds the walks choose their way by (node by node or one numpy hop, a scan or a search,
the shortest-path search's cost model). Tests set them to extremes so that every way is taken.
"""

SMALL_FRONTIER = 4096
"""Frontiers up to this size are expanded node by node through the memoryviews. Both ways do
Python work per edge for the answer; on FB15k-237 2/3-hop ``paths()`` the CPU time was the same
for limits 48 to unbounded, and staying node by node spares importing numpy (~0.2 s, ~16 MiB of
peak RSS) in processes whose walks stay small. Larger frontiers take one vectorised hop."""

SCAN = 64
"""A node's keys up to this many are read in one slice by ``node_relations``; a longer range is
stepped over relation by relation."""

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
"""Lists of at least this many entity numbers are named through one numpy gather (``names_of``): its
~15 us of numpy calls cost less than decoding them one by one from about 64 (1M entities) to 150
(FB15k-237, whose ids stay in the CPU caches) on."""
