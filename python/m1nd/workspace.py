"""Composition root: builds the services for one (home, workspace) pair, lazily, and the typed Python API.

The CLI and the MCP server hold a :class:`Workspace` and hand it to the tool layer (:mod:`m1nd.tools`); nothing below
this module knows about adapters. Services are created on first use so ``m1nd --help`` and memory-only commands never
load the graph, each with its collaborators passed in (the perspective service gets the graph service; ``health``
gets the perspective service).

Python callers use the typed methods (:meth:`Workspace.activate`, :meth:`~Workspace.why`, :meth:`~Workspace.impact`,
:meth:`~Workspace.warmup`, :meth:`~Workspace.missing`, :meth:`~Workspace.hypothesize`, :meth:`~Workspace.trace`,
:meth:`~Workspace.learn`, :meth:`~Workspace.drift`, :meth:`~Workspace.diverge`, :meth:`~Workspace.persist`,
:meth:`~Workspace.health`, :meth:`~Workspace.ingest`, :meth:`~Workspace.memory_add`, :meth:`~Workspace.memory_search`,
:meth:`~Workspace.memory_update`, :meth:`~Workspace.memory_restore`, :meth:`~Workspace.memory_backups`,
:meth:`~Workspace.memory_recent`, :meth:`~Workspace.memory_stats`, :meth:`~Workspace.memory_open_threads`,
:meth:`~Workspace.memory_sessions`; the maintenance calls :meth:`~Workspace.weight_stats`,
:meth:`~Workspace.weights_reset`, :meth:`~Workspace.trail_show`, :meth:`~Workspace.trail_archive`,
:meth:`~Workspace.learning_migrate`), which return the dataclasses of :mod:`m1nd.api`. They call the same service
methods as the tools, with the same defaults, but return whole results (no response budget) and take Python values
that the tool layer's schema checks do not see.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from m1nd.config import Settings, load_settings

if TYPE_CHECKING:
    from m1nd.api import (ActivationResult, DivergeResult, DriftResult, HealthReport, HypothesisResult,
                          ImpactResult, IngestReport, LearningMigrated, LearnResult, MemorySearchResult,
                          MissingResult, PersistResult, TraceResult, TrailArchived, TrailDetail, WarmupResult,
                          WeightsReset, WeightStats, WhyResult)
    from m1nd.memory.results import (AddResult, Backup, MemoryStats, OpenThread, RecentFact, Restored, Session,
                                     Updated)
    from m1nd.codegraph.service import CodeGraph
    from m1nd.memory.service import MemoryService
    from m1nd.perspectives.service import PerspectiveService


class Workspace:
    def __init__(self, settings: Settings | None = None, *, transport: str = "cli") -> None:
        self.settings = settings or load_settings()
        self.transport = transport
        self._lock = threading.RLock()
        # Per-agent in-process state (priming boosts, query logs, perspectives) lives in the services.
        self.state: dict[str, Any] = {}

    @cached_property
    def graph(self) -> CodeGraph:
        from m1nd.codegraph.service import CodeGraph

        with self._lock:
            return CodeGraph(self.settings, transport=self.transport, code_vectors=_code_vectors)

    @cached_property
    def perspectives(self) -> PerspectiveService:
        """Stateful navigation of the code graph (one per process and workspace; tests may assign another, e.g.
        with other limits, before first use)."""
        from m1nd.perspectives.service import PerspectiveService

        with self._lock:
            cg = self.graph
            return PerspectiveService(cg, semantic=_code_affinity(cg))

    def count_query(self, agent_id: str) -> None:
        """Count one code-graph query of ``agent_id`` (the tool layer calls this for tools that query the graph)."""
        self.graph.count_query(agent_id)

    def health(self, agent_id: str = "python") -> HealthReport:
        """The ``health`` report: the graph service's, with this workspace's perspective counts."""
        return self.graph.health(agent_id, perspectives=self.perspectives)

    @cached_property
    def memory(self) -> MemoryService:
        """The knowledge memory (shared by every workspace of the home), with its embedding hook."""
        return self._open_memory(apply_schema=None)

    def memory_unmigrated(self) -> MemoryService:
        """The knowledge memory opened without applying pending schema migrations, for a caller that applies and
        reports them itself (``m1nd memory migrate``); it is this workspace's memory from then on."""
        with self._lock:
            if "memory" not in self.__dict__:
                self.__dict__["memory"] = self._open_memory(apply_schema=False)
            return self.memory

    def _open_memory(self, *, apply_schema: bool | None) -> MemoryService:
        from m1nd.memory.semantic import vector_hook_for
        from m1nd.memory.service import MemoryService

        with self._lock:  # the embedding hook is None when no model is installed (issue 6)
            hook = vector_hook_for(self.settings.memory_db, busy_timeout_ms=self.settings.busy_timeout_ms,
                                   url=self.settings.memory_url)
            self.state["memory_hook"] = hook
            return MemoryService.open(self.settings, vector_hook=hook, apply_schema=apply_schema)

    # -- the typed Python API (m1nd.api) --------------------------------------------------------------------------
    def ingest(self, path: str, *, incremental: bool = True, embed: str = "background", **options: Any
               ) -> IngestReport:
        """Parse the repository at ``path`` into the code graph (the ``ingest`` tool; ``options``: mode, namespace,
        include_dotfiles, dotfile_patterns, exclude, max_file_bytes, git_window_days)."""
        return self.graph.ingest(path, incremental=incremental, embed=embed, **options)

    def activate(self, query: str, *, agent: str = "python", top_k: int = 20, include_memory: bool = False,
                 **options: Any) -> ActivationResult:
        """Rank the code most related to ``query`` (the ``activate`` tool; ``options``: dimensions, max_hops, decay,
        threshold, max_seeds, node_kinds, path_prefix, include_ghost_edges, include_structural_holes,
        coactivation_ltp, max_per_file, group_by, history_before).

        >>> hits = ws.activate("session pool", top_k=5).activated  # doctest: +SKIP
        >>> hits[0].node_id, hits[0].source_path, hits[0].line_start  # doctest: +SKIP
        """
        self.count_query(agent)
        return self.activation(agent, query, include_memory=include_memory, top_k=top_k, **options)

    def activation(self, agent_id: str, query: str, *, include_memory: bool = False, **options: Any
                   ) -> ActivationResult:
        """The graph service's ``activate`` answer, joined with the memory entries about its results when
        ``include_memory`` (the two halves of m1nd meet here, in the composition root)."""
        out = self.graph.activate(agent_id, query, **options)
        if include_memory and out.activated:
            out = replace(out, related_memories=self.related_memories(agent_id, out.node_ids))
        return out

    def why(self, source: str, target: str, *, agent: str = "python", max_paths: int = 10, **options: Any
            ) -> WhyResult:
        """The strongest simple paths between two external ids (the ``why`` tool; ``options``: max_hops,
        path_budget, min_strength, relations)."""
        self.count_query(agent)
        return self.graph.why(source=source, target=target, max_paths=max_paths, **options)

    def impact(self, node_id: str, *, agent: str = "python", direction: str = "both", top_k: int = 50,
               **options: Any) -> ImpactResult:
        """What a change to ``node_id`` affects (the ``impact`` tool; ``options``: max_hops, min_signal, relations,
        include_causal_chains, max_chains)."""
        self.count_query(agent)
        return self.graph.impact(node_id=node_id, direction=direction, top_k=top_k, **options)

    def warmup(self, task_description: str, *, agent: str = "python", **options: Any) -> WarmupResult:
        """Prime ``agent``'s later ``activate`` calls toward the code a task description matches (the ``warmup``
        tool; ``options``: boost_strength (``0`` clears the priming), max_primed)."""
        self.count_query(agent)
        return self.graph.warmup(agent, task_description, **options)

    def missing(self, query: str, *, agent: str = "python", **options: Any) -> MissingResult:
        """Structural holes (likely missing links) and ghost edges around ``query`` (the ``missing`` tool;
        ``options``: min_sibling_activation, top_k, include_ghost_edges)."""
        self.count_query(agent)
        return self.graph.missing(agent, query, **options)

    def hypothesize(self, claim: str, *, agent: str = "python", **options: Any) -> HypothesisResult:
        """Test a claim such as "A depends on B", "A is unused" or "A is tested" against the graph (the
        ``hypothesize`` tool; ``options``: max_hops, path_budget, include_ghost_edges, include_partial_flow).

        >>> r = ws.hypothesize("`pkg/pool.py` depends on `pkg/db.py`")  # doctest: +SKIP
        >>> r.verdict, r.confidence, [e.description for e in r.supporting_evidence]  # doctest: +SKIP
        """
        self.count_query(agent)
        return self.graph.hypothesize(agent, claim, **options)

    def trace(self, trace: str, *, agent: str = "python", **options: Any) -> TraceResult:
        """Rank the code a stack trace or error output points at (the ``trace`` tool; ``options``: top_k,
        max_hops)."""
        self.count_query(agent)
        return self.graph.trace(trace, **options)

    def learn(self, query: str, feedback: str, node_ids: list[str], *, agent: str = "python", **options: Any
              ) -> LearnResult:
        """Feedback on the results of ``query`` (the ``learn`` tool): ``correct`` strengthens the paths from the
        query's seeds to ``node_ids``, ``wrong`` weakens them, ``partial`` confirms ``node_ids`` and rejects
        ``wrong_node_ids``; committed before it returns (``options``: strength, wrong_node_ids, max_path_hops,
        paths_per_pair)."""
        from m1nd.codegraph.learning import learn

        self.count_query(agent)
        return learn(self.graph, agent, query, feedback, node_ids, **options)

    def drift(self, since: str = "last_session", *, agent: str = "python", **options: Any) -> DriftResult:
        """The graph now against a saved baseline: nodes added and removed, learned weights moved (the ``drift``
        tool; ``options``: include_weight_drift, top_n, max_list)."""
        from m1nd.codegraph.baselines import drift

        self.count_query(agent)
        return drift(self.graph, since=since, **options)

    def diverge(self, baseline: str = "last_session", *, agent: str = "python", **options: Any) -> DivergeResult:
        """How the ingested files moved away from a session's baseline or a date, with git's view of coupling (the
        ``diverge`` tool; ``options``: scope, include_coupling_changes, include_anomalies, top_k)."""
        from m1nd.codegraph.diverge import diverge

        self.count_query(agent)
        return diverge(self.graph, baseline, **options)

    def persist(self, action: str = "save") -> PersistResult:
        """Flush learned weights now (``save``), report unsaved learning (``status``) or record a manual baseline
        for ``drift`` (``baseline``): the ``persist`` tool."""
        from m1nd.codegraph.learning import persist

        return persist(self.graph, action)

    def memory_add(self, title: str | None = None, content: str = "", *, category: str | None = None,
                   agent: str | None = "python", tags: list[str] | None = None,
                   code_refs: list[str] | None = None, private: bool = False, **fields: Any) -> AddResult:
        """Store a knowledge entry (the ``memory_add`` tool: title + category + content, or ``type=`` and content
        for a fact; ``fields``: any other add field, e.g. session_id, project, resonance, wake_phrases). The answer
        is :class:`~m1nd.memory.results.Added` (the entry written), :class:`~m1nd.memory.results.AlreadySaved` (an
        identical entry of the same session, nothing written) or :class:`~m1nd.memory.results.ThreadClosed` (a
        ``thread_closed`` fact); each has ``id``."""
        raw: dict[str, Any] = {k: v for k, v in (("title", title), ("content", content), ("category", category),
                                                 ("tags", tags), ("code_refs", code_refs)) if v not in (None, "")}
        if private:
            raw["private"] = True
        raw.update({k: v for k, v in fields.items() if v is not None})
        return self.memory.add(raw, agent=agent)

    def memory_search(self, query: str, *, agent: str | None = "python", limit: int = 20, mode: str | None = None,
                      category: list[str] | None = None, code_ref: str | None = None) -> MemorySearchResult:
        """Entries matching ``query``, best first (the ``memory_search`` tool's keyword/semantic/hybrid search; the
        default mode is hybrid when an embedding model is installed, else keyword)."""
        from m1nd.api import MemoryEntry, MemorySearchResult
        from m1nd.memory.service import Filters

        res = self.memory.search(query, Filters(categories=list(category or []), visibility="include",
                                                code_ref=code_ref), agent=agent, limit=limit, mode=mode)
        return MemorySearchResult(query=query, mode=res.mode,
                                  results=[MemoryEntry.from_service(e.to_json()) for e in res.entries],
                                  notes=list(res.notes))

    def memory_update(self, entry_id: str, *, agent: str | None = "python", embed: bool = True,
                      auto_anchor: bool = True, **changes: Any) -> Updated:
        """Change an entry (the ``memory_update`` tool; ``changes``: title, content or append/prepend/find+replace,
        category, tags/add_tags/remove_tags, anchors, wake_phrases, code_refs, resonance, visibility, …). A backup
        is kept; ``changes`` of the answer is empty when the values were already those."""
        from m1nd.memory.updating import operation_of

        ch = {k: v for k, v in changes.items() if v is not None}
        return self.memory.update(entry_id, ch, agent=agent, operation=operation_of(ch), no_embed=not embed,
                                  no_auto_anchor=not auto_anchor)

    def memory_backups(self, entry_id: str, *, agent: str | None = "python") -> list[Backup]:
        """An entry's backups, newest first (``memory_restore list=true``)."""
        return self.memory.list_backups(entry_id, agent=agent)

    def memory_restore(self, entry_id: str, *, agent: str | None = "python", backup_id: str | None = None
                       ) -> Restored:
        """Bring back an entry's newest backup (or ``backup_id``), also after a delete (``memory_restore``)."""
        return self.memory.restore(entry_id, agent=agent, backup_id=backup_id)

    def memory_recent(self, *, agent: str | None = "python", **options: Any) -> list[RecentFact]:
        """Recent facts still resonant (``memory_recent``; ``options``: days, limit, resonance_type, all_types,
        sort, basis)."""
        return self.memory.recent(agent=agent, **options)

    def memory_stats(self, *, agent: str | None = "python") -> MemoryStats:
        """Counts of the entries ``agent`` can see (``memory_stats``'s ``stats``; ``ws.memory.health`` and
        ``ws.memory.growth`` give the other two parts)."""
        return self.memory.stats(agent=agent)

    def memory_open_threads(self, *, agent: str | None = "python", limit: int | None = None) -> list[OpenThread]:
        """Open questions and commitments, most resonant first (``memory_open_threads``)."""
        return self.memory.open_threads(agent=agent, limit=limit)

    def memory_sessions(self, *, agent: str | None = "python", project: str | None = None) -> list[Session]:
        """The work sessions ``agent`` may know of (``memory_sessions action=list``; ``ws.memory.create_session``,
        ``close_session``, ``for_session`` and ``fact_session`` do the other actions)."""
        return self.memory.sessions(agent=agent, project=project)

    # -- code-graph operations the command line offers without a tool ------------------------------------------------
    def trail_show(self, trail_id: str) -> TrailDetail:
        """One stored trail in full (``m1nd trail show``)."""
        from m1nd.codegraph.trails import show

        return show(self.graph, trail_id)

    def trail_archive(self, trail_id: str) -> TrailArchived:
        """Mark a trail archived (``m1nd trail archive``)."""
        from m1nd.codegraph.trails import archive

        return archive(self.graph, trail_id)

    def learning_migrate(self, to: str, *, replace: bool = False) -> LearningMigrated:
        """Copy this workspace's trails and learned weights to another shared store (``m1nd learning migrate``)."""
        from m1nd.codegraph.learning_migrate import migrate_learning

        return migrate_learning(self.graph, to, replace=replace)

    def weight_stats(self, top: int = 20) -> WeightStats:
        """Counts of learned edges and the largest changes (``m1nd weights stats``)."""
        from m1nd.codegraph.learning import weight_stats

        return weight_stats(self.graph, top)

    def weights_reset(self, *, relation: str | None = None, node: str | None = None, apply: bool = False
                      ) -> WeightsReset:
        """Reset learned weights to w0 (all edges, or one relation / node's); a dry run unless ``apply``."""
        from m1nd.codegraph.learning import weights_reset

        return weights_reset(self.graph, relation=relation, node=node, apply=apply)

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
                for e in out.entries:
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
        worker child for missing vectors) gets ready in a thread meanwhile
        (:class:`m1nd.codegraph.vector_startup.Warmup`)."""
        # issues 6, 13: embedding jobs and the model, beside the graph
        from m1nd.codegraph.vector_startup import Warmup

        g = self.graph
        warm = g.semantic_warmup = Warmup(self)  # (handed over first: queries of the graph wait for it)
        warm.start()
        try:
            warm.graph_loaded(g.graph())
        except BaseException:
            warm.stop()  # the process is about to exit: not while the warm-up is inside ONNX Runtime
            raise
        if self.settings.watch:  # issue 15: the graph follows edits (m1nd.watch)
            from m1nd.watch import start_for_workspace

            self.state["watcher"] = start_for_workspace(self)
        try:
            from m1nd.codegraph.baselines import record_server_start
        except ModuleNotFoundError as e:
            if e.name != "m1nd.codegraph.baselines":
                raise
            return
        record_server_start(g)

    def close(self) -> None:
        watcher = self.state.pop("watcher", None)
        if watcher is not None:
            watcher.stop()
        if "graph" in self.__dict__:
            self.graph.close()
        if "memory" in self.__dict__:
            self.memory.close()
        hook = self.state.pop("memory_hook", None)
        if hook is not None:
            hook.close()


def _code_vectors(cg: CodeGraph, current: Any) -> Any:
    """The code graph's code-node vectors (:func:`m1nd.codegraph.vectors.code_vectors_of`), imported when first
    asked for: a command that never ranks imports no embedding module."""
    from m1nd.codegraph.vectors import code_vectors_of

    return code_vectors_of(cg, current)


def _code_affinity(cg: CodeGraph) -> Any:
    """The perspectives' semantic backend: the code graph's embeddings
    (:class:`m1nd.codegraph.vectors.CodeAffinity`)."""
    from m1nd.codegraph.vectors import CodeAffinity

    return CodeAffinity(cg)


def preload_embedder(settings: Settings) -> None:
    """``m1nd serve`` calls this first thing: the query model starts loading in a thread while the server's modules
    are imported and the graph loads (issue 13 item 5; :func:`m1nd.codegraph.vector_startup.preload_model`)."""
    from m1nd.codegraph.vector_startup import preload_model
    from m1nd.memory.embeddings import serve_queries
    from m1nd.memory.query_process import RemoteEmbedder

    # the query session lives in a child process, not in the server (issue 13 item 1)
    serve_queries(RemoteEmbedder)
    preload_model(settings)
