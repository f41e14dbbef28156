"""The test kit other projects use to prove a backend: the contract we hold our own backends to.

Importing ``kg_adapters`` never imports this package, and this ``__init__`` imports nothing, so
pytest and Hypothesis are needed only by the modules that use them (``pip install
'kg-adapters[testing]'``).

* :mod:`kg_adapters.testing.suite` -- :class:`~kg_adapters.testing.suite.KGConformance`, the pytest mixin
  with the hand-written expected answers over the graph of :mod:`kg_adapters.testing.graph`
  (``write_graph(directory)`` writes it as N-Triples for the backend to load). Subclass it and supply a
  ``make_kg`` fixture; capabilities a backend lacks are declared as class attributes, never skipped silently::

      import pytest
      from kg_adapters import connect
      from kg_adapters.testing.graph import write_graph
      from kg_adapters.testing.suite import KGConformance

      class TestMyBackend(KGConformance):
          @pytest.fixture(scope="class")
          @classmethod
          def make_kg(cls, tmp_path_factory):
              path = write_graph(tmp_path_factory.mktemp("graph"))
              return lambda: connect(f"mystore://{path}")

* :mod:`~kg_adapters.testing.freebase_suite` / :mod:`~kg_adapters.testing.wikidata_suite` -- the same for
  the Freebase (CVT nodes, relation filter) and Wikidata (statements, qualifiers) profiles.
* :mod:`~kg_adapters.testing.fuzz` -- Hypothesis injection fuzz: hostile strings as ids, relations,
  languages and search text must be refused with ``InvalidTermError`` or answered exactly (needs Hypothesis).
* :mod:`~kg_adapters.testing.fault_server` -- a real SPARQL endpoint on loopback that fails on purpose
  (429/5xx, resets, stalls, truncated and dripping bodies) with a fake clock, for retry and timeout tests;
  :mod:`~kg_adapters.testing.fault_workload` is a seeded mixed workload to run against it.
* :mod:`~kg_adapters.testing.virtuoso` -- a throwaway Virtuoso 7 on loopback ports (Debian's
  ``virtuoso-opensource-7-bin``), for exact conformance against a real remote engine.
"""
