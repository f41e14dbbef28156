"""A Wikidata-profile graph made of real facts: FB15k-237's triples recast as Wikidata truthy statements.

The issue's Wikidata-profile questions need many people, places and works linked by Wikidata properties
(``P26`` spouse, ``P19`` place of birth, ...) named by their labels; the repository's Wikidata data (Q42's
entity JSON and its recorded neighbourhood) holds one person. So the relations of
``benchmarks/data/fb15k237_wikidata.json`` (Freebase relation -> Wikidata property, its direction and
English label) turn FB15k-237 into ``wd:Q.. wdt:P.. wd:Q..`` triples: entities keep their Freebase names
as ``rdfs:label``, get ``Q`` ids numbered in the order of their Freebase ids, and each property
``wd:P..`` gets its label, as in the Wikidata dumps.

    python -m benchmarks.wikidata_profile OUT.nt    # writes the N-Triples file
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path

from benchmarks.common import REPO_ROOT

MAPPING = Path(__file__).resolve().parent / "data" / "fb15k237_wikidata.json"
FB15K237 = REPO_ROOT.parent / "shared" / "data" / "fb15k237-freebase.nt.gz"
FB = "http://rdf.freebase.com/ns/"
WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
_LINE = re.compile(r'<([^>]+)> <([^>]+)> (?:<([^>]+)>|("(?:[^"\\]|\\.)*")(\S*)) \.')


def write_graph(out: Path, source: Path = FB15K237) -> dict[str, int]:
    """Writes the recast graph to ``out`` (N-Triples); returns its counts."""
    rows = json.loads(MAPPING.read_text(encoding="utf-8"))["properties"]
    mapping = {FB + relation: (reverse, pid) for relation, reverse, pid, _ in rows}
    labels = {pid: label for _, _, pid, label in rows}
    names: dict[str, str] = {}
    facts: set[tuple[str, str, str]] = set()
    with gzip.open(source, "rt", encoding="utf-8") as handle:
        for line in handle:
            match = _LINE.match(line)
            if match is None:
                continue
            head, relation, tail, literal, suffix = match.groups()
            if relation == FB + "type.object.name" and literal is not None and suffix in ("", "@en"):
                names[head] = literal
            elif tail is not None and relation in mapping:
                reverse, pid = mapping[relation]
                facts.add((tail, pid, head) if reverse else (head, pid, tail))
    entities = sorted({node for head, _, tail in facts for node in (head, tail)})
    qid = {node: f"Q{number}" for number, node in enumerate(entities, start=1)}
    with open(out, "w", encoding="utf-8") as handle:
        for head, pid, tail in sorted(facts):
            handle.write(f"<{WD}{qid[head]}> <{WDT}{pid}> <{WD}{qid[tail]}> .\n")
        for node in entities:
            if node in names:
                handle.write(f"<{WD}{qid[node]}> <{RDFS_LABEL}> {names[node]}@en .\n")
        for pid, label in sorted(labels.items()):
            handle.write(f"<{WD}{pid}> <{RDFS_LABEL}> {json.dumps(label)}@en .\n")
    return {"facts": len(facts), "entities": len(entities), "properties": len(labels)}


if __name__ == "__main__":
    print(write_graph(Path(sys.argv[1])))
