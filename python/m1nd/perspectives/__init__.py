"""Perspectives: stateful, navigable exploration of the code graph (spec perspectives.md).

A perspective holds a focus node and a set of scored *routes* (moves to related code, in eight families) that an
agent inspects, peeks at and follows; it keeps a history for ``back``, can be branched and compared, and is
persisted per agent in ``graph.db``.

Modules: ``lens`` (validated lens, weights), ``state`` (persisted state, ids), ``graph_facts`` (per-graph facts,
semantic backends, adjacency, local activation), ``synthesis`` (families, score terms, assembly, affinity; pure
functions of a graph), ``peek`` (confined file reading), ``service`` (the twelve
operations, versions, persistence, limits, region locks). Tool declarations live in ``m1nd.tools.perspectives``.
"""

from m1nd.perspectives.graph_facts import register_semantic_backend, unregister_semantic_backend
from m1nd.perspectives.lens import FAMILIES, Lens, parse_lens
from m1nd.perspectives.service import PerspectiveService, service_for

__all__ = ["FAMILIES", "Lens", "PerspectiveService", "parse_lens", "register_semantic_backend", "service_for",
           "unregister_semantic_backend"]
