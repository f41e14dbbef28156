"""Surfaces that open a graph to other programs: ``kga mcp`` (LLM agents over the Model Context
Protocol) and ``kga serve`` (SPARQL 1.1 Protocol clients). They translate a protocol onto the
:class:`~kg_adapters.base.KnowledgeGraph` interface and own nothing else; their HTTP and MCP
dependencies are extras (``kg-adapters[serve]``, ``kg-adapters[mcp]``), imported only here."""
