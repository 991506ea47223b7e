"""The code-graph service: ingest orchestration, loading, per-agent state and learned-weight persistence.

:class:`CodeGraph` is one object made of parts of one idea each: this module (loading a generation from the store or
the cache, re-synchronising weights with other processes, learned-weight persistence, ingest orchestration),
:mod:`m1nd.codegraph.agent_state` (priming boosts, query logs, learn-log factors), :mod:`m1nd.codegraph.queries`
(activate, why, trace, impact, warmup, missing, hypothesize) and :mod:`m1nd.codegraph.health`.

It composes the storage layer (``m1nd.store.graph_repo``), the ingest pipeline (``m1nd.ingest``) and the in-memory
graph (``m1nd.graph``). One instance per process and workspace; tool handlers call its methods. Shared state lives
in ``graph.db`` and is re-synchronised through the generation counters before every call (spec graph.md §14).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from m1nd.codegraph import text_indexes
from m1nd.codegraph.agent_state import AgentState, AgentStates
from m1nd.codegraph.health import GraphHealth
from m1nd.codegraph.queries import GraphQueries
from m1nd.codegraph.results import IngestReport
from m1nd.config import Settings
from m1nd.errors import BusyError, graph_empty_error
from m1nd.graph import cache, regen
from m1nd.graph.engine import W_MAX, W_MIN, Engine
from m1nd.graph.history import HistoryIndex
from m1nd.graph.lexicon import TermIndex, node_terms_from_blobs
from m1nd.graph.model import PAGERANK_MASK, Graph
from m1nd.graph.nodes import NodeTable
from m1nd.graph.ranking import Priors, priors
from m1nd.graph.seeds import SeedIndex
from m1nd.graph.semantic import TrigramIndex
from m1nd.store.graph_repo import GraphStore
from m1nd.store.team_contract import SharedLearningStore
from m1nd.store.team_sqlite import SqliteLearningStore
from m1nd.timeutil import MS_PER_DAY, now_ms

log = logging.getLogger(__name__)


class CodeGraph(AgentStates, GraphQueries, GraphHealth):
    """The code graph of one workspace: this module loads and re-synchronises it and persists its learned weights;
    the per-agent state (:mod:`m1nd.codegraph.agent_state`), the queries (:mod:`m1nd.codegraph.queries`) and the
    health report (:mod:`m1nd.codegraph.health`) are its other parts."""

    def __init__(self, settings: Settings, *, transport: str = "cli",
                 code_vectors: Callable[[CodeGraph, Any], Any] | None = None) -> None:
        self.settings = settings
        self.transport = transport
        self.workdir = settings.workspace_dir
        self.workdir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.store = GraphStore(settings.graph_db, busy_timeout_ms=settings.busy_timeout_ms)
        self._shared: SharedLearningStore | None = None  # trails and learned weights (opened on first use)
        self._graph: Graph | None = None
        #: build the two text indexes of a new generation in two processes (m1nd.codegraph.text_indexes)
        self.indexes_side_by_side = False
        #: the text indexes the cache child built while the ingest child wrote (m1nd.codegraph.text_indexes)
        self.prebuilt_text_indexes: text_indexes.Prebuilt | None = None
        self._weights_generation = 0
        self._watermark_ms = 0
        self._synced: np.ndarray | None = None
        self._pending_ltp: dict[int, int] = {}
        self._pending_ltd: dict[int, int] = {}
        self.lock = threading.RLock()
        self._live: Any = None  # m1nd.codegraph.patch.LiveRoots, made on first use
        # (generation before, generation after, {(root id, relpath)}) of the last patched batch: the next load
        # builds its text indexes from the previous generation's (m1nd.graph.regen)
        self._delta: tuple[int, int, set[tuple[int, str]]] | None = None
        self._node_ids: tuple[int, np.ndarray] | None = None  # (generation, row id of the node at each position)
        self.agents: dict[str, AgentState] = {}
        self.queries_processed = 0
        self.started = time.time()
        self.last_persist_ms = now_ms()
        # learn-log rows and per-agent node feedback, valid for one (newest learn_log id, graph generation)
        self._feedback_cache: dict[Any, Any] = {}
        # the id of the server_start baseline this process recorded (m1nd.codegraph.baselines), if any
        self.server_baseline_id: int | None = None
        # The code-node vectors (issue 6): ``code_vectors(graph, current)`` returns ``current`` while it is still
        # right, else new ones. Given by the composition root (m1nd.workspace); a bare CodeGraph (the cache-build
        # child, tests) gets the standard one. Made on first use, so a command that never ranks loads no embedder.
        self._make_code_vectors = code_vectors or _standard_code_vectors
        self._code_vectors: Any = None
        self._code_vectors_lock = threading.Lock()
        self.code_vectors_epoch = 0  # bumped when they are (re)made: cached perspective similarities recompute
        # the server's start-up warm-up of the semantic dimension (m1nd.codegraph.vector_startup.Warmup), set by the
        # composition root (Workspace.on_server_start) while it runs
        self.semantic_warmup: Any = None

    def code_vectors(self) -> Any:
        """The code-vector service of this graph (:class:`m1nd.codegraph.vectors.CodeVectors`)."""
        with self._code_vectors_lock:
            cv = self._make_code_vectors(self, self._code_vectors)
            if cv is not self._code_vectors:
                self._code_vectors = cv
                self.code_vectors_epoch += 1
            return cv

    def code_vectors_made(self) -> Any:
        """The code vectors if something asked for them already, else None (never makes them)."""
        return self._code_vectors

    def close(self) -> None:
        w = self.semantic_warmup  # issue 13: never exit while the warm-up is inside ONNX Runtime
        if w is not None:
            w.stop()
        cv = self._code_vectors  # issue 6: stop the background embedding worker first
        if cv is not None:
            cv.close()
        try:
            self.flush()
        finally:
            if self._shared is not None:
                self._shared.close()
            self.store.close()

    @property
    def shared(self) -> SharedLearningStore:
        """Where trails and learned weights live: ``graph.db`` itself, or the PostgreSQL server of the memory URL
        (issue 18), where every machine working on the same project shares them (:func:`m1nd.config.team_project`).
        """
        if self._shared is None:
            url = self.settings.memory_url
            if url is None:
                self._shared = SqliteLearningStore(self.store.db)
            else:
                from m1nd.config import team_project
                from m1nd.store.pg_team_repo import open_pg_learning

                self._shared = open_pg_learning(url, team_project(self.settings.workspace_key),
                                                lock_timeout_ms=self.settings.busy_timeout_ms)
        return self._shared

    def generations(self) -> tuple[int, int]:
        """(graph generation of the local graph, weights generation of the shared learned weights)."""
        if self.settings.memory_url is None:
            return self.store.generations()  # one query: both counters are in graph.db's meta
        return self.store.generations()[0], self.shared.learning.generation()

    # -- loading ------------------------------------------------------------------------------------------------
    def graph(self) -> Graph:
        """The current graph, re-synchronised with the database (reload on a new generation, patch weights)."""
        with self.lock:
            gen, wgen = self.generations()
            if self._graph is None or self._graph.graph_generation != gen:
                self._load(gen)
            elif wgen != self._weights_generation:
                self._sync_weights(wgen)
            assert self._graph is not None
            return self._graph

    def require_graph(self) -> Graph:
        g = self.graph()
        if g.n == 0:
            raise graph_empty_error(self.settings.workspace_key)
        return g

    def _load(self, gen: int) -> None:
        started = time.perf_counter()
        hit = cache.load(self.workdir, gen)
        if hit is not None and not (TermIndex.compatible(hit.get("lex"))
                                    and HistoryIndex.compatible(hit.get("hist"))):
            hit = None  # written by an older ranking: rebuilt from graph.db below
        if hit is not None:
            nodes = NodeTable.from_arrays(hit["nodes"])
            engine = Engine.from_arrays(nodes.n, hit["csr"])
            meta = hit["meta"]
            g = Graph(nodes, engine, SeedIndex.from_arrays(hit["seeds"], nodes.ext_id, nodes.index),
                      TrigramIndex.from_arrays(hit["tri"]), gen, bool(meta["has_git"][0]),
                      lexicon=TermIndex.from_arrays(hit["lex"]), history=HistoryIndex.from_arrays(hit["hist"]))
            if "rank" in hit:
                r = hit["rank"]
                g.extra["priors"] = Priors(r["prior"], r["testy"].astype(bool), r["docsy"].astype(bool),
                                           r["declsy"].astype(bool))
            self._watermark_ms = int(meta["watermark_ms"][0])
            self._weights_generation = int(meta["weights_generation"][0])
            self._graph = g
            self._synced = engine.weights.copy()
            if not self.shared.remote:
                _, wgen = self.generations()
                if wgen != self._weights_generation:
                    self._sync_weights(wgen)
        else:
            with self.store.db.read():
                how = "rows"
                delta, self._delta = self._delta, None
                prev = self._graph
                patched = (delta is not None and prev is not None and delta[0] == prev.graph_generation
                           and delta[1] == gen and regen.reusable(prev) and self._node_ids is not None
                           and self._node_ids[0] == prev.graph_generation)
                pre = None
                if patched:
                    # a watcher patched a few files: only their nodes (and their directories') rows are read
                    assert delta is not None and prev is not None and self._node_ids is not None
                    paths = regen.with_directories(delta[2])
                    nodes, ids = regen.patched_nodes(prev.nodes, self._node_ids[1], self.store.node_rows_of(paths),
                                                     paths)
                    edges = self.store.edge_arrays(ids)
                else:
                    pre, self.prebuilt_text_indexes = self.prebuilt_text_indexes, None
                    got = text_indexes.committed_ids(pre, self.store, gen)
                    if got is not None:
                        assert pre is not None
                        ids, nodes = got, pre.nodes  # the table is pre's: only the edges are read
                        edges = self.store.edge_arrays(ids)
                    else:
                        cols, edges = self.store.load_columns()
                        ids = np.asarray(cols["id"], dtype=np.int64)
                        pre = text_indexes.prebuilt_for(pre, cols)
                        nodes = pre.nodes if pre is not None else NodeTable.from_columns(cols)
                        del cols  # the table keeps what it needs; the row lists would double the peak
                self._node_ids = (gen, ids)
                if patched:
                    assert delta is not None and prev is not None
                    # their nodes' index pieces are made again, the rest kept
                    trigram, lexicon = regen.patched_indexes(prev, nodes, delta[2], self.store.extract_terms_of)
                    how = "patched"
                elif pre is not None:
                    trigram, lexicon = pre.trigram, pre.lexicon
                    how = "rows, text indexes built while they were written"
                    del pre  # and the columns it was built from
                else:
                    # the two text indexes, each with only its own temporaries alive: side by side in the cache
                    # child, else one after the other (m1nd.codegraph.text_indexes)
                    trigram, lexicon = text_indexes.build(
                        nodes, lambda: TermIndex.build(nodes, node_terms_from_blobs(nodes, self.store.extract_terms())),
                        side_by_side=self.indexes_side_by_side)
                history = HistoryIndex.build(nodes, self.store.git_histories())
                _, wgen = self.store.generations()
                watermark = self.shared.learning.weights_mark() if not self.shared.remote else 0
                has_git = self.store.has_git_root()
            g = self._build(nodes, edges, gen, has_git, lexicon, trigram)
            g.history = history
            self._graph = g
            self._synced = g.engine.weights.copy()
            self._weights_generation = wgen
            self._watermark_ms = watermark
            # the cache holds the weights as loaded; later learning is re-read through the watermark
            cache.save(self.workdir, gen, {
                "csr": g.engine.arrays(), "nodes": g.nodes.arrays(), "seeds": g.seeds.arrays(),
                "tri": g.trigram.arrays(), "lex": g.lexicon.arrays(), "hist": history.arrays(),
                "rank": _priors_arrays(g),
                "meta": {"has_git": np.asarray([int(has_git)]), "watermark_ms": np.asarray([watermark]),
                         "weights_generation": np.asarray([wgen])}})
        cache.prune(self.workdir, gen)
        if self.shared.remote:
            self._replay_shared_weights()
        self._relax_weights()
        self._pending_ltp.clear()
        self._pending_ltd.clear()
        log.info("graph generation %d loaded in %.0f ms (%s)", gen, (time.perf_counter() - started) * 1000,
                 "cache" if hit else how)

    @staticmethod
    def _build(nodes: NodeTable, edges: dict[str, np.ndarray], gen: int, has_git: bool, lexicon: TermIndex,
               trigram: TrigramIndex) -> Graph:
        """Engine and PageRank of a node table, with its query indexes."""
        engine = Engine.from_edges(nodes.n, edges["src"], edges["dst"], edges["w"], edges["w0"], edges["relation"])
        # PageRank on base weights, once per generation (activation.md §6).
        nodes.pagerank = engine.pagerank(mask=PAGERANK_MASK) if nodes.n else np.zeros(0, np.float32)
        g = Graph(nodes, engine, SeedIndex.build(nodes), trigram, gen, has_git, lexicon=lexicon)
        g.extra["priors"] = priors(nodes)
        return g

    def _replay_shared_weights(self) -> None:
        """On a server store the local graph holds base weights only: start from ``w0`` and replay every learned
        weight of the project (a process's own ``graph.db`` learning from before team mode is not mixed in)."""
        g = self._graph
        assert g is not None
        g.engine.weights[:] = g.engine.csr.base_weights
        self._synced = g.engine.weights.copy()
        self._watermark_ms = 0
        self._sync_weights(self.shared.learning.generation())

    def _relax_weights(self) -> None:
        """Optional relaxation of learned weights toward ``w0`` (learning.md §1), applied in memory at load:
        ``w ← w0 + (w − w0)·2^(−Δt / half_life)`` with Δt since the edge was last learned. Off unless
        ``M1ND_WEIGHT_RELAXATION_DAYS`` > 0; the database keeps the learned value, so turning it off restores it."""
        raw = os.environ.get("M1ND_WEIGHT_RELAXATION_DAYS", "").strip()
        try:
            half_life = float(raw) if raw else 0.0
        except ValueError:
            log.warning("M1ND_WEIGHT_RELAXATION_DAYS=%r is not a number; relaxation stays off", raw)
            return
        g = self._graph
        if half_life <= 0 or g is None or self._synced is None:
            return
        rows, _ = self.shared.learning.weights_since(0)
        if not rows:
            return
        now = now_ms()
        idx = g.nodes.index
        positions, ages = [], []
        for src, dst, rel, _w0, _w, upd in rows:
            u, v = idx.get(src), idx.get(dst)
            if u is None or v is None:
                continue
            p = g.engine.csr.find_edge(u, v, rel)
            if p >= 0:
                positions.append(p)
                ages.append(max(0.0, (now - int(upd)) / MS_PER_DAY))
        if positions:
            pos = np.asarray(positions, np.int64)
            w, w0 = g.engine.weights, g.engine.csr.base_weights
            relaxed = w0[pos] + (w[pos] - w0[pos]) * np.exp2(-np.asarray(ages) / half_life)
            w[pos] = np.clip(relaxed, W_MIN, W_MAX).astype(np.float32)
            self._synced[pos] = w[pos]  # relaxation is a view of time, not learning to flush

    def build_cache(self) -> None:
        """Build the current generation's arrays and indexes and write the on-disk cache (no-op if present)."""
        gen, _ = self.store.generations()
        if cache.path_for(self.workdir, gen).exists():
            return
        self._load(gen)

    def _sync_weights(self, wgen: int) -> None:
        """Another process (or our own flush) changed learned weights: patch them in place."""
        g = self._graph
        assert g is not None and self._synced is not None
        rows, mark = self.shared.learning.weights_since(self._watermark_ms)
        idx = g.nodes.index
        w = g.engine.weights
        base = g.engine.csr.base_weights
        for src, dst, rel, w0_db, w_db, _upd in rows:
            u, v = idx.get(src), idx.get(dst)
            if u is None or v is None:
                continue
            p = g.engine.csr.find_edge(u, v, rel)
            if p < 0:
                continue
            # the learned change replayed onto this graph's own base (exactly w_db where both bases agree: always
            # on graph.db, and on a server whenever the machines ingested the same code)
            b = float(base[p])
            target = w_db if abs(b - w0_db) < 1e-6 else min(W_MAX, max(W_MIN, b + (w_db - w0_db)))
            local = float(w[p]) - float(self._synced[p])  # unflushed learning of this process survives
            w[p] = min(W_MAX, max(W_MIN, target + local))
            self._synced[p] = target
        self._watermark_ms = mark
        self._weights_generation = wgen

    # -- learned weights ------------------------------------------------------------------------------------------
    def dirty_positions(self) -> np.ndarray:
        if self._graph is None or self._synced is None:
            return np.zeros(0, np.int64)
        return np.nonzero(self._graph.engine.weights != self._synced)[0]

    def edge_keys(self, g: Graph, positions: np.ndarray) -> list[tuple[str, str, int]]:
        src, dst = g.edge_endpoints()
        rel = g.engine.csr.relations
        t = g.nodes.ext_id
        return [(t[int(src[p])], t[int(dst[p])], int(rel[p])) for p in positions.tolist()]

    def write_weights(self, g: Graph, positions: np.ndarray, *, ltp: dict[int, int] | None = None,
                      ltd: dict[int, int] | None = None) -> int:
        """Commit the in-memory change of the given edges as deltas (inside the caller's transaction)."""
        assert self._synced is not None
        w = g.engine.weights
        base = g.engine.csr.base_weights
        keys = self.edge_keys(g, positions)
        rows = []
        for p, (s, d, r) in zip(positions.tolist(), keys):
            rows.append((s, d, r, float(base[p]), float(w[p]) - float(self._synced[p]), (ltp or {}).get(p, 0),
                         (ltd or {}).get(p, 0)))
        n = self.shared.learning.apply_weight_deltas(rows, w_min=W_MIN, w_max=W_MAX, updated_ms=now_ms())
        self._synced[positions] = w[positions]
        return n

    def flush(self) -> int:
        """Persist dirty learned weights (learning.md §4) and decayed priming boosts. Returns the number of edges
        written."""
        with self.lock:
            for agent_id, st in self.agents.items():
                if st.boosts_dirty:
                    self._save_boosts(agent_id, st)
            if self._graph is None:
                return 0
            g = self._graph
            dirty = self.dirty_positions()
            if len(dirty) == 0:
                return 0
            with self.shared.write():
                # The graph may have been replaced by another process's ingest meanwhile: ext-id keyed deltas
                # simply miss edges that no longer exist.
                n = self.write_weights(g, dirty, ltp=self._pending_ltp, ltd=self._pending_ltd)
                self._weights_generation = self.shared.learning.bump_generation()
            self._pending_ltp.clear()
            self._pending_ltd.clear()
            self.last_persist_ms = now_ms()
            return n

    def note_coactivation(self, positions: np.ndarray) -> None:
        for p in positions.tolist():
            self._pending_ltp[p] = self._pending_ltp.get(p, 0) + 1

    # -- ingest ---------------------------------------------------------------------------------------------------
    def ingest(self, path: str, *, process: str | None = None, changed: list[str] | None = None,
               **opts: Any) -> IngestReport:
        """``process``: where the ingest runs (auto | child | inprocess; see ``run_ingest_isolated``).
        ``changed``: the root-relative paths a watcher saw change; with ``process="inprocess"`` they are patched
        into the graph in place when that is exact (:mod:`m1nd.codegraph.patch`), else the root is ingested."""
        from m1nd.codegraph.ingest_process import run_ingest_isolated

        from m1nd.codegraph import baselines

        with self.lock:
            self.flush()
            before = baselines.record_before_ingest(self)
        # Not under the lock: other calls keep answering from the previous generation while the tree is parsed
        # (the database's ingest lock keeps ingests one at a time); the new generation is swapped in below.
        try:
            report = None
            if changed is not None and process == "inprocess":
                try:
                    report = self._patch(path, changed, opts)
                except BusyError:
                    raise  # the watcher waits for the other ingest and tries again
                except Exception:
                    # the kept resolver is dropped and nothing was committed: the full ingest does the batch
                    log.exception("patching %s failed; ingesting the root instead", path)
                    report = None
                if report is not None and report.changed:
                    with self.lock:
                        self._delta = report.delta
                if report is not None:
                    report = replace(report, delta=None)
            if report is None:
                report = run_ingest_isolated(self.settings, path, opts, build_cache=build_cache_in_child,
                                             prebuild=prebuild_in_child,
                                             # a graph held here would count in a forked child's peak memory
                                             fork=self._graph is None or self._graph.n == 0,
                                             process=process,
                                             # kept when a watcher follows this graph (it primed them)
                                             live=self._live if changed is None else self.live_roots())
        except BaseException:
            if before is not None:
                baselines.forget(self, before)
            raise
        with self.lock:
            if before is not None and not report.changed:
                baselines.forget(self, before)
            self.graph()  # load the new generation now (builds and caches the arrays)
            # issue 6: node embeddings (embed: background|sync|skip)
            return replace(report, embeddings=self.code_vectors().after_ingest(str(opts.get("embed") or "background")))

    def live_roots(self) -> Any:
        """The resolvers kept for the watcher's fast path (:class:`m1nd.codegraph.patch.LiveRoots`)."""
        from m1nd.codegraph.patch import LiveRoots

        with self.lock:
            if self._live is None:
                self._live = LiveRoots()
            return self._live

    def prime_live_roots(self) -> list[str]:
        """Build the kept resolvers from the store, and the current generation's index pieces when it was mapped
        from the cache (a watcher does this before its first batch, so even that batch is patched)."""
        store = GraphStore(self.settings.graph_db, busy_timeout_ms=self.settings.busy_timeout_ms)
        try:
            done = self.live_roots().prime(store)
            g = self.graph()
            if g.lexicon is not None and not regen.reusable(g):
                # the same rows the cached arrays were built from: only the pieces are new (built unlocked)
                trigram = TrigramIndex.build(g.nodes)
                lexicon = TermIndex.build(g.nodes, node_terms_from_blobs(g.nodes, store.extract_terms()))
                with store.db.read():
                    ids = store.node_ids_in_order()
                    gen = store.generations()[0]
                with self.lock:
                    if self._graph is g and gen == g.graph_generation and len(ids) == g.n:
                        g.trigram.parts = trigram.parts
                        g.lexicon.parts = lexicon.parts
                        self._node_ids = (gen, ids)
            return done
        finally:
            store.close()

    def _patch(self, path: str, changed: list[str], opts: dict[str, Any]) -> IngestReport | None:
        store = GraphStore(self.settings.graph_db, busy_timeout_ms=self.settings.busy_timeout_ms)
        try:
            return self.live_roots().try_patch(store, path, changed, opts)
        finally:
            store.close()

def prebuild_in_child(rows: list[tuple[Any, ...]], terms: list[tuple[int, str, bytes | None]]) -> Any:
    """Second ingest child, while the ingest child writes: the text indexes of the node table it writes."""
    import gc

    gc.disable()  # as in build_cache_in_child
    return text_indexes.prebuild(rows, terms)


def build_cache_in_child(settings: Settings, prebuilt: Any = None, written: tuple[int, int] | None = None) -> None:
    """Second ingest child: build the new generation's arrays and indexes and write the cache, so the parent only
    maps the finished arrays (its memory stays that of the graph; the build's temporaries die with this process).
    ``prebuilt``: what :func:`prebuild_in_child` gave, used when the table written is the one it was built from;
    ``written``: (generation, node count) of the ingest child's commit when it inserted every node row of the table
    (:func:`m1nd.codegraph.text_indexes.committed_ids`)."""
    import gc

    from m1nd.codegraph.ingest_process import _report_peak

    # a short-lived process building arrays from millions of acyclic objects (rows, term strings): the cyclic
    # collector's passes over them cost ~0.4 s on the stdlib and never found anything to free
    gc.disable()
    cg = CodeGraph(settings)
    cg.indexes_side_by_side = True  # this process is single-threaded and exits after the build
    if prebuilt is not None:
        prebuilt.written = written
    cg.prebuilt_text_indexes = prebuilt
    try:
        cg.build_cache()
    except Exception:
        log.exception("building the graph cache after ingest failed")
    finally:
        cg.store.close()
    _report_peak("cache build")


def _priors_arrays(g: Graph) -> dict[str, np.ndarray]:
    pr = g.extra.get("priors") or priors(g.nodes)
    return {"prior": pr.prior, "testy": pr.testy.astype(np.uint8), "docsy": pr.docsy.astype(np.uint8),
            "declsy": pr.declsy.astype(np.uint8)}


def _standard_code_vectors(cg: CodeGraph, current: Any) -> Any:
    from m1nd.codegraph.vectors import code_vectors_of  # (imported on first use: numpy work, embedder choice)

    return code_vectors_of(cg, current)
