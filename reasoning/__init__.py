"""Retrieval-and-reasoning loops of the seed methods, built only on the KnowledgeGraph interface."""
