"""Drop-in replacements for the graph functions of research code people already run.

* :mod:`kg_adapters.compat.rog`: RoG's ``src/utils/graph_utils.py`` (``build_graph``,
  ``bfs_with_rule``, ``get_truth_paths``, ``get_simple_paths``) over any :class:`KnowledgeGraph`.
* :mod:`kg_adapters.compat.tog`: the retrieval half of Think-on-Graph's ``freebase_func.py``
  (relation retrieval, ``entity_search``, ``id2entity_name_or_type``) plus batched equivalents.

Each module is a surface: it translates the original function names and return shapes onto the
interface and owns nothing else; every difference from the original is named in its docstring.
"""
