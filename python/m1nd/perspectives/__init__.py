"""Perspectives: stateful, navigable exploration of the code graph (spec perspectives.md).

A perspective holds a focus node and a set of scored *routes* (moves to related code, in eight families) that an
agent inspects, peeks at and follows; it keeps a history for ``back``, can be branched and compared, and is
persisted per agent in ``graph.db``.

Modules: ``lens`` (validated lens, weights), ``state`` (persisted state, ids), ``graph_facts`` (per-graph facts,
semantic backends, adjacency, local activation), ``synthesis`` (families, score terms, assembly, affinity; pure
functions of a graph), ``peek`` (confined file reading), ``service`` (the twelve
operations, versions, persistence, limits, region locks). Tool declarations live in ``m1nd.tools.perspectives``.
"""

from typing import Any

__all__ = ["FAMILIES", "Lens", "PerspectiveService", "SemanticBackend", "parse_lens", "service_for"]

_HOMES = {"SemanticBackend": "graph_facts",
          "FAMILIES": "lens", "Lens": "lens", "parse_lens": "lens", "PerspectiveService": "service",
          "service_for": "service"}


def __getattr__(name: str) -> Any:
    """Lazy: importing a submodule (e.g. the result types, :mod:`m1nd.perspectives.results`, which :mod:`m1nd.api`
    re-exports) does not load the service and the graph."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'm1nd.perspectives' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"m1nd.perspectives.{home}"), name)
