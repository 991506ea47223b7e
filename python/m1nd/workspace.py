"""Composition root: builds the services for one (home, workspace) pair, lazily.

The CLI and the MCP server hold a :class:`Workspace` and hand it to tool handlers; nothing below this module knows
about adapters. Services are created on first use so ``m1nd --help`` and memory-only commands never load the graph.
"""

from __future__ import annotations

import threading
from functools import cached_property
from typing import TYPE_CHECKING, Any

from m1nd.config import Settings, load_settings

if TYPE_CHECKING:
    from m1nd.codegraph import CodeGraph
    from m1nd.memory.service import MemoryService


class Workspace:
    def __init__(self, settings: Settings | None = None, *, transport: str = "cli") -> None:
        self.settings = settings or load_settings()
        self.transport = transport
        self._lock = threading.RLock()
        # Per-agent in-process state (priming boosts, query logs, perspectives) lives in the services.
        self.state: dict[str, Any] = {}

    @cached_property
    def graph(self) -> CodeGraph:
        from m1nd.codegraph import CodeGraph

        with self._lock:
            return CodeGraph(self.settings, transport=self.transport)

    @cached_property
    def memory(self) -> MemoryService:
        from m1nd.memory.semantic import vector_hook_for
        from m1nd.memory.service import MemoryService

        with self._lock:  # the embedding hook is None when no model is installed (issue 6)
            return MemoryService.open(self.settings, vector_hook=vector_hook_for(
                self.settings.memory_db, busy_timeout_ms=self.settings.busy_timeout_ms,
                url=self.settings.memory_url))

    def related_memories(self, agent_id: str, node_ids: list[str], limit: int = 3) -> list[dict[str, Any]]:
        """Knowledge entries visible to ``agent_id`` whose ``code_refs`` name one of ``node_ids`` (best first).

        Joins the two halves of m1nd for ``activate(include_memory=true)``; a memory store that cannot be opened
        answers with no entries rather than failing the graph query.
        """
        from m1nd.errors import M1ndError
        from m1nd.memory.service import Filters

        found: dict[str, dict[str, Any]] = {}
        try:
            for node in node_ids:
                out = self.memory.list_entries(Filters(visibility="include", code_ref=node), agent=agent_id,
                                               limit=limit)
                for e in out.data:
                    if e["id"] not in found:
                        found[e["id"]] = {"id": e["id"], "title": e["title"], "code_refs": list(e["code_refs"])}
                if len(found) >= limit:
                    break
        except M1ndError:
            return []
        return list(found.values())[:limit]

    def on_server_start(self) -> None:
        """Called by ``m1nd serve`` once, before the first request: load the graph and record the ``server_start``
        baseline (learning.md §5) so ``drift`` can compare sessions. The semantic dimension (query model, code index,
        worker child for missing vectors) gets ready in a thread meanwhile (:class:`m1nd.code_vectors.Warmup`)."""
        # issues 6, 13: embedding jobs and the model, beside the graph
        from m1nd.code_vectors import start_warmup

        warm = start_warmup(self)
        g = self.graph
        try:
            warm.graph_loaded(g.graph())
        except BaseException:
            warm.stop()  # the process is about to exit: not while the warm-up is inside ONNX Runtime
            raise
        try:
            from m1nd.baselines import record_server_start
        except ModuleNotFoundError as e:
            if e.name != "m1nd.baselines":
                raise
            return
        record_server_start(g)

    def close(self) -> None:
        if "graph" in self.__dict__:
            self.graph.close()
        if "memory" in self.__dict__:
            self.memory.close()


def preload_embedder(settings: Settings) -> None:
    """``m1nd serve`` calls this first thing: the query model starts loading in a thread while the server's modules
    are imported and the graph loads (issue 13 item 5; :func:`m1nd.code_vectors.preload_model`)."""
    from m1nd.code_vectors import preload_model
    from m1nd.memory.embeddings import serve_queries

    serve_queries()  # the query session lives in a child process, not in the server (issue 13 item 1)
    preload_model(settings)
