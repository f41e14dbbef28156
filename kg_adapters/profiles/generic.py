"""Generic RDF: full IRIs as ids, rdfs:label as names."""

from __future__ import annotations

from kg_adapters.profiles.base import Profile


class GenericProfile(Profile):
    name = "generic"
