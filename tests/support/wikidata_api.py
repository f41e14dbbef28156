"""A real Wikibase Action API on loopback (``/w/api.php``) that answers from recorded entity JSON,
with the scripted faults of :class:`~kg_adapters.testing.fault_server.FaultServer` (429 + Retry-After, MediaWiki
``maxlag`` answers, resets, ...).

It serves what the ``wikidata+api:`` backend asks, the way the Wikidata API answers it:

* ``wbgetentities``: the recorded entities (``props`` filtered; ``languages`` with
  ``languagefallback``, where a missing language falls back to its base tag, then ``mul``, then
  ``en``, reported with ``for-language``); unknown ids come back ``missing``; more than 50 ids is
  the API's ``toomanyvalues`` error;
* ``wbsearchentities``: recorded search answers by search text (``type=item``), or the recorded
  properties whose label or alias starts with the text (``type=property``), paged by ``limit``/``continue``;
* ``query`` + ``list=search`` with ``haswbstatement:P=V|...``: the entities with such a statement;
* ``query`` + ``list=backlinks``: the entities that mention the entity anywhere (statement values,
  qualifiers, references), paged by ``bllimit``/``blcontinue``.

Every request is recorded as its sorted query string (``requests[i].query``); :meth:`calls`
parses them back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode

from kg_adapters.records import Edge, Literal, Qualifiers
from kg_adapters.testing.fault_server import FaultPlan, FaultServer, _Answer
from kg_adapters.wikidata_json import XSD_DATETIME

MAX_IDS = 50
_JSON = (("Content-Type", "application/json; charset=utf-8"),)
_NAMESPACE = {"P": (120, "Property:"), "L": (146, "Lexeme:")}


class WikidataApiServer(FaultServer):
    """See the module docstring. ``entities`` maps ids to entity JSON (the values of a
    Special:EntityData ``entities`` map); ``searches`` maps search texts to recorded hit lists."""

    def __init__(
        self,
        entities: Mapping[str, Mapping[str, Any]],
        *,
        searches: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
        plan: FaultPlan | None = None,
    ) -> None:
        super().__init__(plan=plan, path="/w/api.php")
        self.entities = dict(entities)
        self.searches = {text.casefold(): list(hits) for text, hits in (searches or {}).items()}

    def request_text(self, fields: Mapping[str, list[str]]) -> str | None:
        return urlencode(sorted((name, values[0]) for name, values in fields.items())) if fields else None

    def calls(self) -> list[dict[str, str]]:
        """The parameters of every request received, in order."""
        return [dict(parse_qsl(request.query or "", keep_blank_values=True)) for request in self.requests]

    # -- answers -----------------------------------------------------------------------------------
    def _answer(self, query: str | None, accept: str | None) -> _Answer:
        params = dict(parse_qsl(query or "", keep_blank_values=True))
        action, listing = params.get("action"), params.get("list")
        if action == "wbgetentities":
            body = self._get_entities(params)
        elif action == "wbsearchentities":
            body = self._search_entities(params)
        elif action == "query" and listing == "search":
            body = self._statement_search(params)
        elif action == "query" and listing == "backlinks":
            body = self._backlinks(params)
        else:
            body = _error("badvalue", f"Unrecognized value for parameter action: {action}.")
        return _Answer(200, _JSON, json.dumps(body).encode("utf-8"))

    def _get_entities(self, params: Mapping[str, str]) -> dict[str, Any]:
        ids = params.get("ids", "").split("|")
        if len(ids) > MAX_IDS:
            return _error("toomanyvalues", f"Too many values supplied for parameter ids. The limit is {MAX_IDS}.")
        props = params.get("props", "info|sitelinks|aliases|labels|descriptions|claims|datatype").split("|")
        languages = params["languages"].split("|") if "languages" in params else None
        fallback = params.get("languagefallback") is not None
        entities: dict[str, Any] = {}
        for entity_id in ids:
            stored = self.entities.get(entity_id)
            if stored is None:
                entities[entity_id] = {"id": entity_id, "missing": ""}
                continue
            entity: dict[str, Any] = {"type": stored["type"], "id": stored["id"]}
            for prop in props:
                if prop in ("labels", "descriptions", "aliases") and prop in stored:
                    entity[prop] = _terms(stored[prop], languages, fallback)
                elif prop in stored:
                    entity[prop] = stored[prop]
            entities[entity_id] = entity
        return {"entities": entities, "success": 1}

    def _search_entities(self, params: Mapping[str, str]) -> dict[str, Any]:
        kind = params.get("type", "item")
        hits: Sequence[Mapping[str, Any]]
        if kind == "property":
            hits = self._property_hits(params.get("search", ""), params.get("language", "en"))
        elif kind == "item":
            hits = self.searches.get(params.get("search", "").casefold(), [])
        else:
            return _error("badvalue", f"Unrecognized value for parameter type: {kind}.")
        start, limit = int(params.get("continue", "0")), int(params.get("limit", "7"))
        if limit > 50:
            return _error("toomanyvalues", "Too many values supplied for parameter limit. The limit is 50.")
        body: dict[str, Any] = {"searchinfo": {"search": params.get("search", "")}}
        body["search"] = hits[start : start + limit]
        if start + limit < len(hits):
            body["search-continue"] = start + limit
        body["success"] = 1
        return body

    def _property_hits(self, text: str, language: str) -> list[dict[str, Any]]:
        """What Wikidata answers for ``type=property``: the recorded properties whose label or an
        alias in ``language`` starts with ``text`` (case-insensitive), labels before aliases, then by id."""
        wanted = " ".join(text.split()).casefold()
        ranked: list[tuple[int, int, dict[str, Any]]] = []
        for entity_id, entity in self.entities.items():
            if entity.get("type") != "property" or not wanted:
                continue
            label = (entity.get("labels") or {}).get(language, {}).get("value")
            aliases = [alias["value"] for alias in (entity.get("aliases") or {}).get(language, [])]
            match = next(
                (
                    (rank, term)
                    for rank, term in [(0, label)] + [(1, alias) for alias in aliases]
                    if term and term.casefold().startswith(wanted)
                ),
                None,
            )
            if match is None:
                continue
            description = (entity.get("descriptions") or {}).get(language, {}).get("value")
            hit = {
                "id": entity_id,
                "title": f"Property:{entity_id}",
                "label": label,
                "description": description,
                "match": {"type": "label" if match[0] == 0 else "alias", "language": language, "text": match[1]},
            }
            ranked.append((match[0], int(entity_id[1:]), hit))
        return [hit for *_, hit in sorted(ranked, key=lambda item: item[:2])]

    def _statement_search(self, params: Mapping[str, str]) -> dict[str, Any]:
        text = params.get("srsearch", "")
        if not text.startswith("haswbstatement:"):
            return _error("badvalue", "only haswbstatement: searches are recorded")
        wanted = {tuple(pair.split("=", 1)) for pair in text.removeprefix("haswbstatement:").split("|")}
        titles = [
            _title(entity_id)
            for entity_id, entity in sorted(self.entities.items())
            if any((prop, value) in wanted for prop, value in _main_values(entity))
        ]
        return _page(titles, params, "search", "srlimit", "sroffset", offset=True)

    def _backlinks(self, params: Mapping[str, str]) -> dict[str, Any]:
        target = params.get("bltitle", "").rpartition(":")[2]
        titles = [
            _title(entity_id)
            for entity_id, entity in sorted(self.entities.items())
            if entity_id != target and target in set(_mentions(entity))
        ]
        return _page(titles, params, "backlinks", "bllimit", "blcontinue", offset=False)


def _error(code: str, info: str) -> dict[str, Any]:
    return {"error": {"code": code, "info": info}, "servedby": "wikidata-api-server"}


def _terms(terms: Any, languages: Sequence[str] | None, fallback: bool) -> Any:
    if languages is None or not terms:
        return terms
    out: dict[str, Any] = {}
    for language in languages:
        if language in terms:
            out[language] = terms[language]
            continue
        if not fallback:
            continue
        chain = [language.split("-")[0], "mul", "en"]
        found = next((code for code in chain if code in terms), None)
        if found is not None and not isinstance(terms[found], list):
            out[language] = {**terms[found], "for-language": language}
    return out


def _title(entity_id: str) -> dict[str, Any]:
    namespace, prefix = _NAMESPACE.get(entity_id[0], (0, ""))
    return {"ns": namespace, "title": prefix + entity_id}


def _page(
    titles: list[dict[str, Any]], params: Mapping[str, str], key: str, size: str, following: str, *, offset: bool
) -> dict[str, Any]:
    start = int(params.get(following, "0"))
    limit = int(params.get(size, "10"))
    body: dict[str, Any] = {"batchcomplete": True, "query": {key: titles[start : start + limit]}}
    if start + limit < len(titles):
        body["continue"] = {following: start + limit if offset else str(start + limit), "continue": "-||"}
    return body


def _main_values(entity: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(property, value) of every statement main value, as haswbstatement indexes them."""
    for prop, claims in (entity.get("claims") or {}).items():
        for claim in claims:
            value = claim["mainsnak"].get("datavalue", {}).get("value")
            if isinstance(value, dict) and "id" in value:
                yield prop, value["id"]
            elif isinstance(value, str):
                yield prop, value


def _mentions(data: Any) -> Iterator[str]:
    """Every entity id an entity's JSON links to (values of statements, qualifiers, references)."""
    if isinstance(data, dict):
        if data.get("type") == "wikibase-entityid" and isinstance(data.get("value"), dict):
            yield str(data["value"].get("id"))
        for value in data.values():
            yield from _mentions(value)
    elif isinstance(data, list):
        for value in data:
            yield from _mentions(value)


def date(text: str) -> Literal:
    """A Wikidata time value as the entity JSON gives it (xsd:dateTime)."""
    return Literal(value=text, datatype=XSD_DATETIME)


Q42_SCHOOLS = [
    Edge(
        head="Q42",
        relation="P69",
        tail="Q4961791",
        rank="normal",
        qualifiers=Qualifiers({"P580": [date("1959-01-01T00:00:00Z")], "P582": [date("1970-01-01T00:00:00Z")]}),
    ),
    Edge(
        head="Q42",
        relation="P69",
        tail="Q691283",
        rank="normal",
        qualifiers=Qualifiers(
            {
                "P512": ["Q1765120"],
                "P580": [date("1971-01-01T00:00:00Z")],
                "P582": [date("1974-01-01T00:00:00Z")],
                "P812": ["Q109587623"],
            }
        ),
    ),
]
"""Douglas Adams's two P69 (educated at) statements in the recorded Q42 entity JSON, with their qualifiers."""
