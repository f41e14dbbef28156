"""``?profile=auto``: the profile a graph's data is written in, judged from one bounded sample.

One ``SELECT ?s ?p WHERE { ?s ?p ?o } LIMIT n`` (never a scan: every engine stops after ``n`` rows)
and a count of sampled triples whose subject or predicate lies in a profile's
``detect_namespaces``. A profile wins with at least half of the sample; otherwise the graph is
generic. The chosen profile says why in ``Profile.detection``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from kg_adapters.profiles import PROFILES, Profile, get_profile

SAMPLE_SIZE = 1000
SAMPLE_QUERY = f"SELECT ?s ?p WHERE {{ ?s ?p ?o }} LIMIT {SAMPLE_SIZE}"
MAJORITY = 0.5


def choose_profile(rows: Iterable[Sequence[object]]) -> Profile:
    """The profile of the sampled ``(subject, predicate)`` rows, with ``detection`` set."""
    counts: Counter[str] = Counter()
    total = 0
    for row in rows:
        total += 1
        terms = [term for term in row[:2] if isinstance(term, str)]
        for name, profile_class in PROFILES.items():
            namespaces = profile_class.detect_namespaces
            if namespaces and any(term.startswith(namespaces) for term in terms):
                counts[name] += 1
    if total == 0:
        return _detected("generic", "the graph is empty")
    if not counts:
        return _detected("generic", f"no known profile namespace in {total} sampled triples")
    name, hits = max(counts.items(), key=lambda item: (item[1], item[0]))
    used = ", ".join(PROFILES[name].detect_namespaces)
    if hits < MAJORITY * total:
        return _detected("generic", f"only {hits} of {total} sampled triples use {name} namespaces ({used})")
    return _detected(name, f"{hits} of {total} sampled triples use {used}")


def _detected(name: str, reason: str) -> Profile:
    profile = get_profile(name)
    profile.detection = reason
    return profile
