"""The code-graph services: everything that turns a repository into the learning code graph and answers over it.

- :mod:`~m1nd.codegraph.service` — :class:`CodeGraph`: loading and re-synchronising the graph, learned-weight
  persistence, ingest orchestration; its other parts are :mod:`~m1nd.codegraph.agent_state` (priming boosts, query
  logs), :mod:`~m1nd.codegraph.queries` (activate, why, impact, warmup, missing, hypothesize, ...) and
  :mod:`~m1nd.codegraph.health`;
- :mod:`~m1nd.codegraph.ingestion` — ingest orchestration (the parse runs in child processes);
- :mod:`~m1nd.codegraph.vectors` — code-node embeddings feeding ``activate`` and perspective affinity;
- :mod:`~m1nd.codegraph.learning` — feedback (``learn``) and weight persistence;
- :mod:`~m1nd.codegraph.baselines` — baselines and ``drift``;
- :mod:`~m1nd.codegraph.diverge` — structural drift against a git ref;
- :mod:`~m1nd.codegraph.trails` — saved investigations.

They stand on :mod:`m1nd.graph` (arrays and kernels), :mod:`m1nd.ingest` (parsing) and :mod:`m1nd.store` (SQL);
:class:`m1nd.workspace.Workspace` builds them; the tool layer (:mod:`m1nd.tools`) calls them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from m1nd.codegraph.service import CodeGraph

__all__ = ["CodeGraph"]


def __getattr__(name: str) -> Any:
    if name == "CodeGraph":  # lazy: importing a submodule does not load the service
        from m1nd.codegraph.service import CodeGraph

        return CodeGraph
    raise AttributeError(f"module 'm1nd.codegraph' has no attribute {name!r}")
