"""Backends: how to reach a graph. Each registers in :mod:`kg_adapters.registry` by URL scheme."""
