"""The knowledge memory: service (``service``), add-field parsing (``fields``), ids, dedup normalisation, decay
and keyword-search helpers. Embeddings (issue 6) and the wake cascade/ritual (issue 7) plug into
:class:`m1nd.memory.service.MemoryService` through its ``vector_hook`` and the repository."""
