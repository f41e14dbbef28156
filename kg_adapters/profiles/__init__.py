"""KG profiles: what is specific to one graph (id namespaces, label predicates).

A backend knows how to reach a graph; a profile knows what the graph is. Profiles turn
compact ids (``m.0d05w3``, ``Q42``) into full IRIs and back.
"""

from __future__ import annotations

from kg_adapters.profiles.base import Profile
from kg_adapters.profiles.dbpedia import DBpediaProfile
from kg_adapters.profiles.freebase import FreebaseProfile
from kg_adapters.profiles.generic import GenericProfile
from kg_adapters.profiles.names import NamesProfile
from kg_adapters.profiles.relation_filter import NO_FILTER, RelationFilter
from kg_adapters.profiles.wikidata import WikidataProfile

PROFILES: dict[str, type[Profile]] = {
    "generic": GenericProfile,
    "freebase": FreebaseProfile,
    "wikidata": WikidataProfile,
    "dbpedia": DBpediaProfile,
    "names": NamesProfile,
}


def get_profile(name: str | Profile) -> Profile:
    """The profile called ``name`` (or ``name`` itself when it already is a profile)."""
    from kg_adapters.errors import InvalidTermError

    if isinstance(name, Profile):
        return name
    try:
        return PROFILES[name]()
    except KeyError:
        known = ", ".join(sorted(PROFILES))
        raise InvalidTermError(f"unknown profile {name!r}; known profiles: {known}") from None


__all__ = [
    "NO_FILTER",
    "PROFILES",
    "DBpediaProfile",
    "FreebaseProfile",
    "GenericProfile",
    "NamesProfile",
    "Profile",
    "RelationFilter",
    "WikidataProfile",
    "get_profile",
]
