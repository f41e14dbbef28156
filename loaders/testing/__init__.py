"""The loaders' test kit, shipped like :mod:`kg_adapters.testing` (this ``__init__`` imports nothing):

* :mod:`loaders.testing.malformed_dumps` -- malformed dump files and exactly what loading each must do;
* :mod:`loaders.testing.kill` -- run an extraction in a child process that SIGKILLs itself at a chosen
  checkpoint (the fault is injected from the test side, through ``extract_subgraph(checkpoint=...)``).
"""
