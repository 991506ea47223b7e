"""The code-graph service's queries (:class:`~m1nd.codegraph.service.CodeGraph` is made of them): ``activate``,
``why``, ``trace``, ``neighbourhood``, ``impact``, ``warmup``, ``missing`` and ``hypothesize``, each under the
service's lock on its current generation, with the agent's priming boosts and learn-log factors
(:mod:`m1nd.codegraph.agent_state`) and the code-vector half of semantic scoring (:func:`query_semantic`).

A mixin over the service's own attributes and methods (``lock``, ``require_graph``, ``code_vectors``,
``note_coactivation``, the agent-state methods), as the memory service is made of its command families.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from m1nd.codegraph.agent_state import BOOST_DECAY
from m1nd.defaults import (ACTIVATE_MAX_HOPS, ACTIVATE_MAX_PER_FILE, ACTIVATE_MAX_SEEDS, ACTIVATE_TOP_K, DECAY,
                           MISSING_MIN_SIBLING, MISSING_TOP_K, THRESHOLD, TRACE_MAX_HOPS, TRACE_TOP_K, WARMUP_BOOST,
                           WARMUP_MAX_PRIMED)
from m1nd.errors import InvalidInputError
from m1nd.graph.engine import W_MAX
from m1nd.graph.results import (ActivationHit, ActivationResult, HypothesisResult, ImpactResult, MissingResult,
                                PrimedNode, Seed, TraceResult, WarmupResult, WhyResult)

if TYPE_CHECKING:
    from m1nd.codegraph.service import CodeGraph
    from m1nd.graph.model import Graph


class GraphQueries:
    """The query half of the code-graph service."""

    lock: Any
    workdir: Any
    require_graph: Any
    agent: Any
    boosts_for: Any
    decay_boosts: Any
    add_boosts: Any
    feedback_for: Any
    note_coactivation: Any
    _save_boosts: Any

    def query_semantic(self, g: Graph, query: str) -> Callable[[], np.ndarray | None]:
        """sem(n) of a query from code-node embeddings, for ``run_activation`` (see :func:`_sem`): every query path
        (activate, warmup, missing, perspective start) seeds and fuses the same way."""
        return _sem(self, g, query)

    def activate(self, agent_id: str, query: str, *, top_k: int = ACTIVATE_TOP_K, dimensions: list[str] | None = None,
                 max_hops: int = ACTIVATE_MAX_HOPS, decay: float = DECAY, threshold: float = THRESHOLD,
                 max_seeds: int = ACTIVATE_MAX_SEEDS,
                 node_kinds: list[str] | None = None, path_prefix: str | None = None,
                 include_ghost_edges: bool = True, include_structural_holes: bool = False,
                 coactivation_ltp: bool = True, learn: bool = True, max_per_file: int = ACTIVATE_MAX_PER_FILE,
                 group_by: str = "node", history_before: int | None = None, code_only: bool = False
                 ) -> ActivationResult:
        from m1nd.codegraph.learning import normalise_query
        from m1nd.graph import activation as A
        from m1nd.graph.seeds import tokenize

        with self.lock:
            g = self.require_graph()
            if not tokenize(query) and g.seeds.lookup(query.strip()) is None:
                raise InvalidInputError("query has no searchable words", details={"argument": "query"},
                                        recover="use identifiers, file names or a few descriptive words")
            params = A.ActivationParams(top_k=top_k, dimensions=tuple(dimensions or A.DIMENSIONS), max_hops=max_hops,
                                        decay=decay, threshold=threshold, max_seeds=max_seeds,
                                        node_kinds=tuple(node_kinds or ()), path_prefix=path_prefix,
                                        history_before=history_before)
            boosts = self.boosts_for(g, agent_id)
            sem = self.query_semantic(g, query)
            run = A.run_activation(g, query, params, boosts=boosts, semantic_scores=sem,
                                   feedback=self.feedback_for(g, agent_id, query))
            top, total = A.ranked(g, run, top_k, params.node_kinds, params.path_prefix, per_file=max_per_file,
                                  code_only=code_only)
            files = (A.file_view(g, run, top_k, params.node_kinds, params.path_prefix, code_only=code_only)
                     if group_by == "file" else None)
            t = g.nodes
            strengthened = 0
            rate = coactivation_rate()
            if learn and coactivation_ltp and rate > 0 and len(top) > 1:
                pos, inc = A.coactivation_edges(g, top[: min(10, top_k)], run.activation, rate)
                if len(pos):
                    w = g.engine.weights
                    w[pos] = np.minimum(W_MAX, w[pos] + inc)
                    self.note_coactivation(pos)
                    strengthened = len(pos)
            st = self.agent(agent_id)
            st.query_log.append((normalise_query(query), [t.ext_id[i] for i in run.seeds.nodes.tolist()]))
            if learn:
                self.decay_boosts(agent_id)
        activated = [
            ActivationHit(node_id=t.ext_id[i], label=t.label[i], kind=t.kind_name(i),
                          activation=round(float(run.activation[i]), 5),
                          dimensions={d: round(float(run.dims[d][i]), 5) for d in A.DIMENSIONS},
                          pagerank=round(float(t.pagerank[i]), 5), primed=round(float(run.primed[i]), 5),
                          source_path=t.source_path[i], line_start=int(t.line_start[i]), line_end=int(t.line_end[i]))
            for i in top.tolist()]
        from m1nd.watch import freshness

        fresh = freshness(self.workdir)  # issue 15: say when a watcher has edits not yet in this graph
        note = None
        if run.semantic_backend == "trigram":
            from m1nd.codegraph.vectors import semantic_status

            note = semantic_status(self, g, loading=bool(getattr(sem, "loading", False))) or None
        return ActivationResult(
            query=query,
            seeds=[Seed(node_id=t.ext_id[i], label=t.label[i], relevance=round(float(s), 4), via=v)
                   for i, s, v in zip(run.seeds.nodes.tolist()[:10], run.seeds.scores.tolist()[:10],
                                      run.seeds.via[:10])],
            activated=activated, files=files,
            ghost_edges=A.ghost_edges(g, run, top) if include_ghost_edges and len(top) else [],
            structural_holes=(A.structural_holes(g, run.activation, 0.3, 5)
                              if include_structural_holes and len(top) else []),
            priming={"active": bool(boosts), "boosted_nodes": run.boosted_nodes,
                     "sources": sorted({src for _b, _c, src in self.agent(agent_id).boosts.values()})},
            learning={"coactivation_edges_strengthened": strengthened},
            dimensions_used=run.used, semantic_backend=run.semantic_backend, total_activated=total,
            graph_generation=g.graph_generation,
            freshness=fresh, semantic_status=note)

    def why(self, **kw: Any) -> WhyResult:
        from m1nd.graph import queries
        from m1nd.graph.model import mask_from_names

        rel = kw.pop("relations", None)
        with self.lock:
            g = self.require_graph()
            return queries.why(g, relations_mask=mask_from_names(rel) if rel else None, **kw)

    def trace(self, trace: str, *, top_k: int = TRACE_TOP_K, max_hops: int = TRACE_MAX_HOPS) -> TraceResult:
        """Suspects of an error output or stack trace: its frames (:mod:`m1nd.stacktrace`) mapped to nodes, and the
        code activation reaches from them (:mod:`m1nd.graph.suspects`)."""
        from m1nd.graph.suspects import suspects
        from m1nd.stacktrace import parse

        frames = [f.to_json() for f in parse(trace)]
        with self.lock:
            g = self.require_graph()
            return suspects(g, frames, top_k=top_k, max_hops=max_hops)

    def neighbourhood(self, **kw: Any) -> dict[str, Any]:
        from m1nd.graph import queries
        from m1nd.graph.model import mask_from_names

        rel = kw.pop("relations", None)
        with self.lock:
            g = self.require_graph()
            return queries.neighbourhood(g, relations_mask=mask_from_names(rel) if rel else None, **kw)

    def impact(self, **kw: Any) -> ImpactResult:
        from m1nd.graph import queries
        from m1nd.graph.model import mask_from_names

        rel = kw.pop("relations", None)
        with self.lock:
            g = self.require_graph()
            return queries.impact(g, relations_mask=mask_from_names(rel) if rel else None, **kw)

    def warmup(self, agent_id: str, task_description: str, *, boost_strength: float = WARMUP_BOOST,
               max_primed: int = WARMUP_MAX_PRIMED) -> WarmupResult:
        """Prime this agent's later queries with a task description (activation.md §9)."""
        from m1nd.graph import activation as A

        with self.lock:
            g = self.require_graph()
            st = self.agent(agent_id)
            if boost_strength == 0:
                for ext in [e for e, v in st.boosts.items() if v[2] == "warmup"]:
                    del st.boosts[ext]
                self._save_boosts(agent_id, st)
                run = None
                primed: dict[str, float] = {}
            else:
                run = A.run_activation(g, task_description, A.ActivationParams(), boosts=None,
                                       semantic_scores=self.query_semantic(g, task_description))
                top, _ = A.ranked(g, run, max_primed)
                peak = float(run.activation[top[0]]) if len(top) else 0.0
                primed = {g.nodes.ext_id[i]: boost_strength * float(run.activation[i]) / peak
                          for i in top.tolist()} if peak > 0 else {}
                self.add_boosts(agent_id, primed, "warmup")
            t = g.nodes
        strongest = max(primed.values(), default=0.0)
        expires = 0
        b = strongest
        while b >= 0.01:
            b *= BOOST_DECAY
            expires += 1
        return WarmupResult(
            task_description=task_description,
            seeds=([Seed(node_id=t.ext_id[i], label=t.label[i], relevance=round(float(v), 4), via=via)
                    for i, v, via in zip(run.seeds.nodes.tolist()[:20], run.seeds.scores.tolist()[:20],
                                         run.seeds.via[:20])] if run else []),
            primed_nodes=[PrimedNode(node_id=e, label=t.label[t.index[e]], boost=round(v, 5))
                          for e, v in sorted(primed.items(), key=lambda kv: -kv[1])],
            decay_per_query=BOOST_DECAY, expires_after_queries=expires)

    def missing(self, agent_id: str, query: str, *, min_sibling_activation: float = MISSING_MIN_SIBLING,
                top_k: int = MISSING_TOP_K, include_ghost_edges: bool = True) -> MissingResult:
        """Structural holes and ghost edges around a query (activation.md §12); no learning side effects."""
        from m1nd.graph import activation as A
        from m1nd.graph.seeds import tokenize

        with self.lock:
            g = self.require_graph()
            if not tokenize(query) and g.seeds.lookup(query.strip()) is None:
                raise InvalidInputError("query has no searchable words", details={"argument": "query"})
            run = A.run_activation(g, query, A.ActivationParams(top_k=200), boosts=self.boosts_for(g, agent_id),
                                   semantic_scores=self.query_semantic(g, query))
            top, _ = A.ranked(g, run, 200)
            holes = A.structural_holes(g, run.activation, min_sibling_activation, top_k)
            ghosts = A.ghost_edges(g, run, top) if include_ghost_edges and len(top) else []
            self.decay_boosts(agent_id)
        return MissingResult(query=query, structural_holes=holes, ghost_edges=ghosts)

    def hypothesize(self, agent_id: str, claim: str, **kw: Any) -> HypothesisResult:
        from m1nd.graph import activation as A
        from m1nd.graph.hypothesis import hypothesize

        with self.lock:
            g = self.require_graph()
            ghost_pairs: set[tuple[int, int]] = set()
            if kw.get("include_ghost_edges", True):
                run = A.run_activation(g, claim, A.ActivationParams(top_k=50))
                top, _ = A.ranked(g, run, 50)
                if len(top):
                    idx = g.nodes.index
                    ghost_pairs = {(idx[x["source"]], idx[x["target"]]) for x in A.ghost_edges(g, run, top, 50)}
            return hypothesize(g, claim, ghost_pairs=ghost_pairs, **kw)


def coactivation_rate() -> float:
    raw = os.environ.get("M1ND_COACTIVATION_RATE", "")
    try:
        v = float(raw) if raw.strip() else 0.01
    except ValueError:
        return 0.01
    return min(0.1, max(0.0, v))


#: the process's semantic-query threads, made on first use (see tests/test_layering.py GLOBAL_REBINDS_ALLOWED)
_SEM_POOL: Any = None


def _sem(cg: CodeGraph, g: Graph, query: str) -> Callable[[], np.ndarray | None]:
    """sem(n) from code-node embeddings (issue 6, :mod:`m1nd.codegraph.vectors`); None keeps the trigram backend.

    Returned as a callable whose work already runs in a helper thread: the query embedding (ONNX Runtime, GIL
    released, ~5 ms for a new query) overlaps with the lexical seed matching that run_activation does meanwhile.
    """
    from m1nd.codegraph.vectors import SemanticCall, semantic_after_warmup, semantic_scores, warmup_pending

    w = warmup_pending(cg)
    if w is not None:  # a server starting up: the model is loading beside us (issue 13 item 5); wait for it there
        return SemanticCall(_sem_pool().submit(semantic_after_warmup, cg, g, query, w))
    cv = cg.code_vectors()
    try:
        # no model or no code vector at all (one cached query): nothing to overlap. The coverage check hashes every
        # node's text once per generation, so it stays in the helper thread, beside the lexical stage.
        idle = not cv.available or not cv.has_vectors()
    except Exception:  # noqa: BLE001 — semantic_scores reports it; the query goes on without embeddings
        idle = True
    if idle:  # (the no-model notice is printed once, by semantic_scores)
        return lambda: semantic_scores(cg, g, query)
    return _sem_pool().submit(semantic_scores, cg, g, query).result


def _sem_pool() -> Any:
    global _SEM_POOL
    if _SEM_POOL is None:
        from concurrent.futures import ThreadPoolExecutor

        _SEM_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="m1nd-sem")
    return _SEM_POOL
