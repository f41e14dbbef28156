"""``wikidata+api:``: Wikidata through its entity API (``wbgetentities``, ``wbsearchentities``) instead of
the Query Service, for entity-by-entity exploration without SPARQL limits and for entity linking.

Every operation is batched: ``wbgetentities`` takes up to :data:`MAX_IDS` (50) ids per request, so
``neighbors``/``labels``/``describe`` of ``n`` ids cost ceil(n / 50) requests; ``paths``,
``shortest_paths`` and ``subgraph`` run the shared algorithms over ``neighbors``. Entity JSON is
turned into edges by :mod:`kg_adapters.wikidata_json`, the same code that loads JSON dumps, so the
answers equal those of a store loaded from a dump (and those of WDQS): truthy ``wdt:`` edges by
default, statements with qualifiers and ranks with ``qualifiers=True``. ``neighbors`` answers
Wikidata properties only; names and descriptions come from ``labels``/``describe``.

Incoming edges are not part of entity JSON. ``direction="in"`` (and ``"both"``) finds candidate
subjects, then fetches them and keeps the statements whose value is the entity:

* with ``relations``, CirrusSearch ``haswbstatement:P69=Q42|P108=Q42`` (``list=search``), which
  indexes item, property, lexeme, string and external-id statements (Wikidata leaves out P1433 and P2860);
* without, the pages linking to the entity (``list=backlinks``), which a statement value, a
  qualifier or a reference makes.

Both are bounded by ``max_incoming`` candidates per entity (default 500). When more exist, the
answer would be incomplete: ``neighbors`` raises :class:`~kg_adapters.errors.ResultTooLarge`
unless ``limit_per_entity`` says a cut answer is wanted. The search index lags edits by minutes;
candidates are always checked against the current entity, so an edge is never invented.

Labels and descriptions: ``wbgetentities`` with ``languages`` (the caller's tags, their base tags and
``mul``) and ``languagefallback``; the value is chosen with the same ranking as the SPARQL backends
(wanted tags in order, regional variants, ``mul``, untagged, any). Entities with no value in those
languages are fetched again with every language, so "any" means any. (A regional variant is only
seen when MediaWiki's fallback chains lead to it, so in rare cases a variant is passed over for
``mul``.)

Policy (https://www.mediawiki.org/wiki/API:Etiquette): a descriptive ``user_agent`` with contact
information is required; ``maxlag=5`` is sent with every request and a ``maxlag`` answer (HTTP 200,
with Retry-After) is retried after the time it asks for, as is HTTP 429; one request at a time
unless ``concurrency`` says otherwise. Options: ``user_agent``, ``base_url`` (default
:data:`WIKIDATA_API`; tests point it at a local server), ``timeout``, ``maxlag``, ``retries``,
``retry_seconds``, ``concurrency``, ``min_interval``, ``language`` (of ``search``), ``max_incoming``,
``session``, and ``sleep``/``clock`` (the test seam of the retry and rate-limit wrappers).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import requests

from kg_adapters import algorithms
from kg_adapters.backends.http_transport import remote_json, wikimedia_user_agent
from kg_adapters.backends.query_log import count_query, logs_query_counts
from kg_adapters.backends.sparql_graph import chunks
from kg_adapters.base import ClosesOnExit, Direction, HoldsConnection, Ids, Langs, as_id_list
from kg_adapters.budgets import check_count, option_count, option_seconds
from kg_adapters.errors import (
    BackendError,
    InvalidTermError,
    QueryError,
    RateLimited,
    ResultMismatch,
    ResultTooLarge,
    TransientError,
)
from kg_adapters.http_exchange import HttpExchange, parse_retry_after
from kg_adapters.profiles import Profile, get_profile
from kg_adapters.records import Edge, Entity, Literal, best_label, edge_sort_key, statement_sort_key
from kg_adapters.sparql_terms import check_lang, check_text
from kg_adapters.transport import Transport
from kg_adapters.url import KGUrl
from kg_adapters.wikidata_json import WikidataEntity, parse_entity

WIKIDATA_API = "https://www.wikidata.org/w/api.php"
MAX_IDS = 50
"""Most ids ``wbgetentities`` takes in one request."""
MAX_SEARCH = 50
"""Most results ``wbsearchentities`` gives per request."""
RELATION_WORD_SEARCHES = 3
"""Most content words of a phrasing searched on their own by ``search_relations`` (one request each)."""
MAX_LIST = 500
"""Most results ``list=search`` and ``list=backlinks`` give per request."""
_WIKIDATA = get_profile("wikidata")
_NAMESPACES = "0|120|146"
"""Items, properties and lexemes."""
_RETRYABLE_CODES = {"maxlag", "ratelimited", "readonly"}

ApiRequest = Mapping[str, str]
ApiAnswer = dict[str, Any]


class WikibaseApiTransport(HttpExchange):
    """Sends one Action API request (parameters) and answers its JSON. Adds ``format=json``,
    ``formatversion=2`` and ``maxlag``; an API error becomes a typed error here: ``maxlag``,
    ``ratelimited`` and ``readonly`` are :class:`RateLimited` (with the Retry-After, else the lag),
    ``internal_api_error_*`` a :class:`TransientError`, a refused parameter a :class:`QueryError`."""

    def __init__(
        self,
        endpoint: str = WIKIDATA_API,
        *,
        user_agent: str,
        maxlag: float | None = 5,
        timeout: float = 60.0,
        session: requests.Session | None = None,
    ) -> None:
        super().__init__(
            endpoint, timeout=timeout, user_agent=user_agent, headers={"Accept": "application/json"}, session=session
        )
        self.maxlag = maxlag

    def execute(self, request: ApiRequest, /) -> ApiAnswer:
        fields = {**request, "format": "json", "formatversion": "2"}
        if self.maxlag is not None:
            fields["maxlag"] = f"{self.maxlag:g}"
        body, headers = self.exchange(fields, use_get=True)
        answer = remote_json(body, document=f"{self.endpoint} answered a JSON document", body_name="API answer")
        if not isinstance(answer, dict):
            raise TransientError(f"{self.endpoint} answered {type(answer).__name__} instead of a JSON object")
        error = answer.get("error")
        if isinstance(error, dict):
            raise self._error(error, headers)
        return answer

    def _error(self, error: Mapping[str, Any], headers: Mapping[str, str]) -> Exception:
        code = str(error.get("code", ""))
        message = f"{self.endpoint} refused the request ({code}): {str(error.get('info', ''))[:300]}"
        if code in _RETRYABLE_CODES:
            retry_after = parse_retry_after(headers.get("Retry-After"))
            if retry_after is None and isinstance(error.get("lag"), (int, float)):
                retry_after = float(error["lag"])
            return RateLimited(message, retry_after=retry_after)
        if code.startswith("internal_api_error"):
            return TransientError(message)
        if code in ("badtoken", "permissiondenied", "readapidenied", "blocked"):
            return BackendError(message)
        return QueryError(message)


@logs_query_counts
class WikidataApiGraph(algorithms.WalksOverNeighbors, HoldsConnection, ClosesOnExit):
    """The :class:`~kg_adapters.base.KnowledgeGraph` of the Wikidata entity API, reached through
    ``transport`` (parameters in, JSON out)."""

    def __init__(
        self,
        transport: Transport[ApiRequest, ApiAnswer],
        *,
        language: str = "en",
        max_incoming: int = 500,
    ) -> None:
        self.transport = transport
        self.language = check_lang(language)
        self.max_incoming: int = check_count(max_incoming, "max_incoming", minimum=1) or 500
        self._profile = _WIKIDATA
        self._closed = False

    @property
    def profile(self) -> Profile:
        return self._profile

    @property
    def endpoint(self) -> str:
        return self.transport.endpoint

    def use_relation_filter(self, relation_filter: object) -> None:
        """Replaces the profile's relation filter (``connect(..., relation_filter=...)``); as on every
        backend it hides relations only when the caller did not name them."""
        self._profile = self._profile.with_relation_filter(relation_filter)

    # -- KnowledgeGraph --------------------------------------------------------------------------
    def _neighbors(self, ids: Ids, asked: algorithms.NeighborOptions) -> dict[str, list[Edge]]:
        """``neighbors`` (:class:`~kg_adapters.algorithms.WalksOverNeighbors` checked the options)."""
        direction, limit = asked.direction, asked.limit_per_entity
        qualifiers = asked.qualifiers
        canonical = self._canonical(ids)
        wanted = self._properties(asked.relations)
        found: dict[str, list[Edge]] = {node: [] for node in canonical.values()}
        entity_ids = [node for node in found if _WIKIDATA.is_local_id(node)]
        if wanted != set():
            if direction in ("out", "both"):
                for node, entity in self._entities(entity_ids, props="claims").items():
                    found[node].extend(_edges(entity, qualifiers))
            if direction in ("in", "both"):
                for node, edges in self._incoming(entity_ids, wanted, qualifiers, cut=limit is not None).items():
                    # a self-loop is an outgoing edge too: with "both", it is listed once
                    found[node].extend(e for e in edges if direction == "in" or e.head != e.tail)
        key = statement_sort_key if qualifiers else edge_sort_key
        keeps = self._profile.relation_filter.keeps
        for node, edges in found.items():
            kept = [
                edge
                for edge in edges
                if (edge.relation in wanted if wanted is not None else keeps(edge.relation))
                and (asked.literals or isinstance(edge.tail, str))
            ]
            if direction == "both" and not qualifiers:
                kept = list(dict.fromkeys(kept))
            kept.sort(key=key)
            found[node] = kept[:limit] if limit is not None else kept
        return {spelling: list(found[node]) for spelling, node in canonical.items()}

    def relations(self, ids: Ids, *, direction: Direction = "out", expand_cvt: bool = False) -> dict[str, list[str]]:
        edges = self.neighbors(ids, direction=direction)
        return {node: sorted({edge.relation for edge in found}) for node, found in edges.items()}

    def labels(self, ids: Ids, *, lang: Langs = "en") -> dict[str, str]:
        wanted, named = self._named(ids, lang, descriptions=False)
        return {
            spelling: _pick(entity.labels, wanted)
            for spelling, _, entity in named
            if entity is not None and entity.labels
        }

    def describe(self, ids: Ids, *, lang: Langs = "en") -> dict[str, Entity]:
        wanted, named = self._named(ids, lang, descriptions=True)
        return {
            spelling: Entity(
                id=node,
                label=_pick(entity.labels, wanted) if entity is not None and entity.labels else None,
                description=(
                    _pick(entity.descriptions, wanted) if entity is not None and entity.descriptions else None
                ),
            )
            for spelling, node, entity in named
        }

    def _named(
        self, ids: Ids, lang: Langs, *, descriptions: bool
    ) -> tuple[tuple[str, ...], list[tuple[str, str, WikidataEntity | None]]]:
        """For ``labels`` and ``describe``: the languages to pick in, and each spelling of ``ids`` with
        its entity id and the names fetched for it (None when the API has none)."""
        self._check_open()
        wanted = self._profile.label_langs(lang)
        canonical = self._canonical(ids)
        entities = self._terms(list(canonical.values()), wanted, descriptions=descriptions)
        return wanted, [(spelling, node, entities.get(node)) for spelling, node in canonical.items()]

    def search(self, text: str, *, limit: int = 10) -> list[Entity]:
        """Items whose label or alias starts with ``text`` (``wbsearchentities``, in ``language``),
        in Wikidata's ranking; labels and descriptions as the API gives them."""
        return self._search_entities(text, limit, "item")

    def search_relations(self, text: str, *, limit: int = 10) -> list[Entity]:
        """Properties whose label or alias starts with ``text`` (``wbsearchentities`` with
        ``type=property``), as relation ids (``P19``); properties the relation filter hides are left out.
        When the whole text finds nothing, its content words are searched instead, longest first (at most
        :data:`RELATION_WORD_SEARCHES`): "where was he born" finds the property aliased "born in"."""
        from kg_adapters.label_index import content_words

        keeps = self._profile.relation_filter.keeps
        found = {hit.id: hit for hit in self._search_entities(text, limit, "property") if keeps(hit.id)}
        words = [word for word in content_words(re.findall(r"[^\W_]+", text.casefold())) if len(word) > 2]
        if not found and (len(words) > 1 or (words and words[0] != " ".join(text.casefold().split()))):
            for word in sorted(dict.fromkeys(words), key=len, reverse=True)[:RELATION_WORD_SEARCHES]:
                if len(found) >= limit:
                    break
                for hit in self._search_entities(word, limit - len(found), "property"):
                    if keeps(hit.id):
                        found.setdefault(hit.id, hit)
        return list(found.values())[:limit]

    def _search_entities(self, text: str, limit: int, kind: str) -> list[Entity]:
        """``wbsearchentities`` for ``text``: at most ``limit`` hits, in Wikidata's ranking."""
        self._check_open()
        check_text(text, "search text")
        check_count(limit, "limit", required=True)
        found: list[Entity] = []
        offset: int | None = 0
        while offset is not None and len(found) < limit and text.strip():
            count_query()
            answer = self.transport.execute(
                {
                    "action": "wbsearchentities",
                    "search": text,
                    "language": self.language,
                    "uselang": self.language,
                    "type": kind,
                    "limit": str(min(MAX_SEARCH, limit - len(found))),
                    "continue": str(offset),
                }
            )
            hits = answer.get("search", [])
            if not isinstance(hits, list):
                raise ResultMismatch(f"{self.endpoint}: wbsearchentities answered a 'search' that is not a list")
            for hit in hits:
                entity_id, label, description = _search_hit(hit, self.endpoint)
                if len(found) < limit:
                    found.append(Entity(id=entity_id, label=label, description=description))
            following = answer.get("search-continue")
            offset = following if isinstance(following, int) and following > offset else None
        return found

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.transport.close()

    def __repr__(self) -> str:
        return f"WikidataApiGraph({self.endpoint!r})"

    # -- requests ----------------------------------------------------------------------------------
    def _entities(
        self, ids: Sequence[str], *, props: str, languages: Sequence[str] | None = None
    ) -> dict[str, WikidataEntity]:
        """The entities among ``ids`` that exist, under the id asked for (a redirected id gives the
        entity it redirects to); :data:`MAX_IDS` ids per request."""
        found: dict[str, WikidataEntity] = {}
        for chunk in chunks(list(dict.fromkeys(ids)), MAX_IDS):
            request = {"action": "wbgetentities", "ids": "|".join(chunk), "props": props}
            if languages is not None:
                request["languages"] = "|".join(languages)
                request["languagefallback"] = "1"
            count_query()
            answer = self.transport.execute(request)
            entities = answer.get("entities")
            if not isinstance(entities, dict):
                raise BackendError(f"{self.endpoint}: wbgetentities answered without entities")
            for key, data in entities.items():
                if not isinstance(data, dict) or "missing" in data:
                    continue
                try:
                    found[str(key)] = parse_entity(data)
                except InvalidTermError as exc:
                    raise BackendError(f"{self.endpoint}: {exc}") from exc
        return found

    def _terms(self, ids: list[str], wanted: Sequence[str], *, descriptions: bool) -> dict[str, WikidataEntity]:
        """Labels (and descriptions) in the wanted languages; entities left without one are asked
        again in every language. (MediaWiki's fallback answers English for a language it has nothing
        in; such a value ranks only as "any language", so it is asked again too.)"""
        props = "labels|descriptions" if descriptions else "labels"
        entity_ids = [node for node in dict.fromkeys(ids) if _WIKIDATA.is_local_id(node)]
        languages = list(dict.fromkeys([*wanted, *(tag.split("-")[0] for tag in wanted)]))
        found = self._entities(entity_ids, props=props, languages=languages)
        bases = {tag.split("-")[0] for tag in wanted}

        def settled(values: Sequence[Literal]) -> bool:
            return any(not value.lang or value.lang.split("-")[0] in bases for value in values)

        bare = [
            node
            for node in entity_ids
            if node in found
            and (not settled(found[node].labels) or (descriptions and not settled(found[node].descriptions)))
        ]
        found.update(self._entities(bare, props=props))
        return found

    def _incoming(
        self, targets: list[str], wanted: set[str] | None, qualifiers: bool, *, cut: bool
    ) -> dict[str, list[Edge]]:
        """Edges whose tail is a target: candidates from the search index or backlinks, checked
        against their current statements."""
        candidates: dict[str, list[str]] = {}
        for target in targets:
            subjects, complete = self._candidates(target, wanted)
            if not complete and not cut:
                raise ResultTooLarge(
                    f"{target} has more than {self.max_incoming} candidate subjects for incoming edges on "
                    f"{self.endpoint}; narrow the request (relations=...), pass limit_per_entity, or raise max_incoming"
                )
            candidates[target] = subjects
        entities = self._entities([s for subjects in candidates.values() for s in subjects], props="claims")
        found: dict[str, list[Edge]] = {}
        for target, subjects in candidates.items():
            found[target] = [
                edge
                for subject in dict.fromkeys(subjects)
                if subject in entities
                for edge in _edges(entities[subject], qualifiers)
                if edge.tail == target
            ]
        return found

    def _candidates(self, target: str, wanted: set[str] | None) -> tuple[list[str], bool]:
        """(subject ids that may have an edge to ``target``, whether that list is complete)."""
        if wanted is not None:
            request = {
                "action": "query",
                "list": "search",
                "srsearch": "haswbstatement:" + "|".join(f"{p}={target}" for p in sorted(wanted)),
                "srnamespace": _NAMESPACES,
                "srprop": "",
                "srinfo": "",
            }
            size, listed, following = "srlimit", "search", "sroffset"
        else:
            namespace = {"P": "Property:", "L": "Lexeme:"}.get(target[0], "")
            request = {
                "action": "query",
                "list": "backlinks",
                "bltitle": namespace + target.split("-")[0],
                "blnamespace": _NAMESPACES,
                "blfilterredir": "nonredirects",  # a merged item's redirect names no statement
            }
            size, listed, following = "bllimit", "backlinks", "blcontinue"
        subjects: list[str] = []
        while True:
            request[size] = str(min(MAX_LIST, self.max_incoming - len(subjects)))
            count_query()
            answer = self.transport.execute(request)
            listing, more = answer.get("query", {}), answer.get("continue", {})
            if not isinstance(listing, dict) or not isinstance(more, dict):
                raise ResultMismatch(f"{self.endpoint}: a {listed} answer whose query or continue is not an object")
            pages = listing.get(listed, [])
            if not isinstance(pages, list) or not all(isinstance(page, dict) for page in pages):
                raise ResultMismatch(f"{self.endpoint}: a {listed} answer that is not a list of page objects")
            before = len(set(subjects))
            subjects.extend(_title_id(page.get("title")) for page in pages if _title_id(page.get("title")))
            if following not in more:
                return subjects, True
            if len(set(subjects)) == before:  # a server repeating itself would be paged forever
                raise ResultMismatch(
                    f"{self.endpoint}: a {listed} page with a continuation brought no new subject; "
                    "the listing makes no progress"
                )
            if len(subjects) >= self.max_incoming:
                return subjects[: self.max_incoming], False
            request = {**request, following: str(more[following]), "continue": str(more.get("continue", ""))}

    # -- helpers -----------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise BackendError(f"{type(self).__name__} is closed")

    def _canonical(self, ids: Ids) -> dict[str, str]:
        """The caller's spelling -> canonical id (``Q42`` for ``wd:Q42``'s IRI), validated."""
        return {spelling: self._profile.canonical_id(spelling) for spelling in as_id_list(ids)}

    def _properties(self, relations: Sequence[str] | None) -> set[str] | None:
        """The property ids among ``relations`` (all validated); relations outside ``wdt:`` match nothing."""
        if relations is None:
            return None
        if isinstance(relations, str):
            raise InvalidTermError("relations must be a list of relation ids, not one string")
        profile = self._profile
        ids = {profile.relation_id(profile.relation_iri(relation)) for relation in relations}
        return {relation for relation in ids if relation.startswith("P") and profile.is_local_id(relation)}


def _edges(entity: WikidataEntity, qualifiers: bool) -> list[Edge]:
    return entity.statement_edges() if qualifiers else entity.truthy_edges()


def _title_id(title: Any) -> str:
    """The entity id of a page title (``Q42``, ``Property:P31``, ``Lexeme:L1``); "" otherwise."""
    if not isinstance(title, str):
        return ""
    entity_id = title.rpartition(":")[2]
    return entity_id if _WIKIDATA.is_local_id(entity_id) else ""


def _pick(literals: Sequence[Literal], wanted: Sequence[str]) -> str:
    """The value the SPARQL backends would pick from the same literals."""
    return best_label(sorted(literals, key=lambda lit: (lit.lang or "", lit.value)), wanted)


# -- construction from URLs -----------------------------------------------------------------------------


class WikidataApi:
    """Registry factory for ``wikidata+api:`` (and ``wikidata+api://host/w/api.php`` for another
    Wikibase over HTTPS)."""

    @classmethod
    def from_url(cls, url: KGUrl, **options: Any) -> WikidataApiGraph:
        from kg_adapters.wrappers.stack import guarded

        settings = dict(options)
        base_url = settings.pop("base_url", None)
        if url.host or url.path:
            if base_url is not None:
                raise TypeError("give the API either in the URL or as base_url, not both")
            base_url = f"https://{url.host}{url.path}"
        user_agent = wikimedia_user_agent(
            settings.pop("user_agent", None), service="the Wikidata API", scheme="wikidata+api:"
        )
        profile = str(settings.pop("profile", "wikidata"))
        if profile != "wikidata":
            raise InvalidTermError(f"wikidata+api: serves the wikidata profile only, not {profile!r}")
        timeout = option_seconds(settings, "timeout")
        maxlag = settings.pop("maxlag", 5)
        maxlag_seconds = None if maxlag in (None, "", "none") else option_seconds({"maxlag": maxlag}, "maxlag")
        max_incoming = option_count(settings, "max_incoming")
        language = str(settings.pop("language", "en"))
        session = settings.pop("session", None)
        transport: Transport[ApiRequest, ApiAnswer] = WikibaseApiTransport(
            str(base_url or WIKIDATA_API),
            user_agent=user_agent,
            maxlag=maxlag_seconds,
            timeout=timeout if timeout is not None else 60.0,
            session=session,
        )
        try:
            transport = guarded(transport, settings, default_concurrency=1)
            if settings:
                raise TypeError(f"unknown option(s) for wikidata+api: {', '.join(sorted(settings))}")
        except BaseException:
            transport.close()  # the HTTP session is open already
            raise
        return WikidataApiGraph(
            transport, language=language, max_incoming=max_incoming if max_incoming is not None else 500
        )


def _search_hit(hit: object, endpoint: str) -> tuple[str, str | None, str | None]:
    """(id, label, description) of one wbsearchentities hit; anything else is a ResultMismatch."""
    if isinstance(hit, dict):
        entity_id, label, description = hit.get("id"), hit.get("label"), hit.get("description")
        if (
            isinstance(entity_id, str)
            and (label is None or isinstance(label, str))
            and (description is None or isinstance(description, str))
        ):
            return entity_id, label, description
    raise ResultMismatch(f"{endpoint}: wbsearchentities answered a malformed hit: {hit!r:.100}")
