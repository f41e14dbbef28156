"""Test support for this repository's own tests (fixtures live in ``tests/conftest.py``).

What third parties can use too -- the conformance suites, the fault server, the Virtuoso harness --
ships in :mod:`kg_adapters.testing`; import it from there.
"""
