"""A small DBpedia-shaped graph (resources, ontology relations, raw infobox properties, labels,
comments and abstracts in two languages), in the spellings FactKG's DBpedia graph uses."""

from __future__ import annotations

from pathlib import Path

TURTLE = r"""@prefix dbr: <http://dbpedia.org/resource/> .
@prefix dbo: <http://dbpedia.org/ontology/> .
@prefix dbp: <http://dbpedia.org/property/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix dct: <http://purl.org/dc/terms/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

dbr:Barack_Obama a dbo:Person ;
    dbo:birthPlace dbr:Honolulu ;
    dbo:spouse dbr:Michelle_Obama ;
    dbo:birthDate "1961-08-04"^^xsd:date ;
    dbp:birthPlace "Honolulu, Hawaii"@en ;
    dct:subject <http://dbpedia.org/resource/Category:Presidents_of_the_United_States> ;
    owl:sameAs <http://www.wikidata.org/entity/Q76> ;
    rdfs:label "Barack Obama"@en , "Barack Obama"@de ;
    rdfs:comment "Barack Obama is an American politician."@en ;
    dbo:abstract "Barack Hussein Obama II is an American politician who served as president."@en ,
        "Barack Obama ist ein US-amerikanischer Politiker."@de .
dbr:Michelle_Obama dbo:birthPlace dbr:Chicago ; rdfs:label "Michelle Obama"@en .
dbr:Honolulu dbo:isPartOf dbr:Hawaii ; dbo:country dbr:United_States ; rdfs:label "Honolulu"@en .
dbr:Chicago dbo:country dbr:United_States ; rdfs:label "Chicago"@en .
<http://dbpedia.org/resource/AC/DC> dbo:hometown dbr:Sydney ; rdfs:label "AC/DC"@en .
<http://dbpedia.org/resource/Saint-Étienne> dbo:country dbr:France ; rdfs:label "Saint-Étienne"@fr .
<http://dbpedia.org/resource/Category:Presidents_of_the_United_States> rdfs:label "Presidents of the United States"@en .
"""


def write_dbpedia_graph(directory: Path, name: str = "dbpedia-mini.ttl") -> Path:
    path = Path(directory) / name
    path.write_text(TURTLE, encoding="utf-8")
    return path
