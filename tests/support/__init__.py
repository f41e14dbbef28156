"""Test support shared by tests and benchmarks (not fixtures: ``tests/conftest.py`` owns those).

Import as ``support.virtuoso`` from tests (pytest puts ``tests/`` on ``sys.path``) or as ``tests.support.virtuoso``
from the repository root (``tests`` is a namespace package).
"""

from .virtuoso import (
    DEFAULT_GRAPH,
    VirtuosoError,
    VirtuosoServer,
    VirtuosoUnavailable,
    require_virtuoso,
    virtuoso_fixture,
)

__all__ = [
    "DEFAULT_GRAPH",
    "VirtuosoError",
    "VirtuosoServer",
    "VirtuosoUnavailable",
    "require_virtuoso",
    "virtuoso_fixture",
]
