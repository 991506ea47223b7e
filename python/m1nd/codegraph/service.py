"""The code-graph service: ingest orchestration, loading, per-agent state and learned-weight persistence.

It composes the storage layer (``m1nd.store.graph_repo``), the ingest pipeline (``m1nd.ingest``) and the in-memory
graph (``m1nd.graph``). One instance per process and workspace; tool handlers call its methods. Shared state lives
in ``graph.db`` and is re-synchronised through the generation counters before every call (spec graph.md §14).
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from m1nd.codegraph import text_indexes
from m1nd.config import Settings
from m1nd.defaults import (ACTIVATE_MAX_HOPS, ACTIVATE_MAX_PER_FILE, ACTIVATE_MAX_SEEDS, ACTIVATE_TOP_K, DECAY,
                           MISSING_MIN_SIBLING, MISSING_TOP_K, THRESHOLD, TRACE_MAX_HOPS, TRACE_TOP_K, WARMUP_BOOST,
                           WARMUP_MAX_PRIMED)
from m1nd.errors import BusyError, InvalidInputError, graph_empty_error
from m1nd.graph import cache, regen
from m1nd.graph.engine import W_MAX, W_MIN, Engine, core_build_info
from m1nd.graph.history import HistoryIndex
from m1nd.graph.lexicon import TermIndex, node_terms_from_blobs
from m1nd.graph.model import PAGERANK_MASK, Graph
from m1nd.graph.nodes import NodeTable
from m1nd.codegraph.results import HealthReport
from m1nd.graph.results import (ActivationHit, ActivationResult, HypothesisResult, ImpactResult, MissingResult,
                                PrimedNode, Seed, TraceResult, WarmupResult, WhyResult)
from m1nd.graph.ranking import priors
from m1nd.graph.seeds import SeedIndex
from m1nd.graph.semantic import TrigramIndex
from m1nd.store.graph_repo import GraphStore
from m1nd.store.team_contract import SharedLearningStore
from m1nd.store.team_sqlite import SqliteLearningStore
from m1nd.timeutil import MS_PER_DAY, now_ms

log = logging.getLogger(__name__)

NAMESPACE_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
FLUSH_EVERY = 50
BOOST_DECAY = 0.7
BOOST_TTL_MS = 24 * 3600 * 1000
MAX_BOOSTS = 500


@dataclass
class AgentState:
    first_seen: float = field(default_factory=time.time)
    last_seen: float = field(default_factory=time.time)
    query_count: int = 0
    boosts: dict[str, tuple[float, int, str]] = field(default_factory=dict)  # ext id -> (boost, created_ms, source)
    boosts_dirty: bool = False  # decayed since last persisted (written at the next flush)
    query_log: deque = field(default_factory=lambda: deque(maxlen=100))  # (normalised query, [seed ext ids])


def normalise_query(q: str) -> str:
    return " ".join(q.casefold().split())


class CodeGraph:
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
                g.extra["priors"] = (r["prior"], r["testy"].astype(bool), r["docsy"].astype(bool))
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
                    cols, edges = self.store.load_columns()
                    ids = np.asarray(cols["id"], dtype=np.int64)
                    pre = text_indexes.prebuilt_for(self.prebuilt_text_indexes, cols)
                    self.prebuilt_text_indexes = None
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

    # -- per-agent state ------------------------------------------------------------------------------------------
    def agent(self, agent_id: str) -> AgentState:
        st = self.agents.get(agent_id)
        if st is None:
            # priming boosts outlive the process that set them (a CLI `trail resume` primes the next CLI `activate`)
            st = self.agents[agent_id] = AgentState()
            for ext, b, created, src in self.store.agent_boosts(agent_id, now_ms() - BOOST_TTL_MS):
                st.boosts[ext] = (b, created, src)
        st.last_seen = time.time()
        return st

    def _save_boosts(self, agent_id: str, st: AgentState) -> None:
        self.store.save_agent_boosts(agent_id, [(e, b, c, s) for e, (b, c, s) in st.boosts.items()],
                                     now_ms() - BOOST_TTL_MS)
        st.boosts_dirty = False

    def count_query(self, agent_id: str) -> None:
        """Every graph/learning/perspective call counts; every 50th flushes learned weights."""
        with self.lock:
            self.queries_processed += 1
            self.agent(agent_id).query_count += 1
            if self.queries_processed % FLUSH_EVERY == 0:
                self.flush()

    def query_semantic(self, g: Graph, query: str) -> Callable[[], np.ndarray | None]:
        """sem(n) of a query from code-node embeddings, for ``run_activation`` (see :func:`_sem`): every query path
        (activate, warmup, missing, perspective start) seeds and fuses the same way."""
        return _sem(self, g, query)

    def feedback_for(self, g: Graph, agent_id: str, query: str) -> tuple[dict[int, float], dict[int, float]]:
        """Per-node score factors from the persisted learn log (learning.feedback_factors), re-read only when a new
        verdict was logged (by any process) and cached per agent and graph generation."""
        from m1nd.codegraph.learning import feedback_factors

        newest = self.shared.learning.newest_feedback_id()
        if newest == 0:
            return {}, {}
        cache = self._feedback_cache
        if cache.get("key") != (newest, g.graph_generation):
            cache.clear()
            cache["key"] = (newest, g.graph_generation)
            cache["rows"] = self.shared.learning.feedback_log()
        hit = cache.get(("agent", agent_id))
        if hit is None:
            hit = cache[("agent", agent_id)] = feedback_factors(cache["rows"], agent_id, g.nodes.index)
        return hit.for_query(query)

    def boosts_for(self, g: Graph, agent_id: str) -> dict[int, float]:
        st = self.agent(agent_id)
        now = now_ms()
        out: dict[int, float] = {}
        for ext, (b, created, _src) in list(st.boosts.items()):
            if b < 0.01 or now - created > BOOST_TTL_MS:
                del st.boosts[ext]
                continue
            i = g.nodes.index.get(ext)
            if i is not None:
                out[i] = b
        return out

    def decay_boosts(self, agent_id: str) -> None:
        st = self.agent(agent_id)
        st.boosts_dirty = st.boosts_dirty or bool(st.boosts)
        for ext, (b, created, src) in list(st.boosts.items()):
            nb = b * BOOST_DECAY
            if nb < 0.01:
                del st.boosts[ext]
            else:
                st.boosts[ext] = (nb, created, src)

    def add_boosts(self, agent_id: str, boosts: dict[str, float], source: str) -> None:
        st = self.agent(agent_id)
        now = now_ms()
        for ext, b in boosts.items():
            old = st.boosts.get(ext)
            if old is None or b > old[0]:
                st.boosts[ext] = (b, now, source)
        if len(st.boosts) > MAX_BOOSTS:
            for ext, _ in sorted(st.boosts.items(), key=lambda kv: kv[1][0])[: len(st.boosts) - MAX_BOOSTS]:
                del st.boosts[ext]
        self._save_boosts(agent_id, st)  # warmup and trail resume are writes: their boosts are durable at once

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
               **opts: Any) -> dict[str, Any]:
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
                if report is not None and report.get("changed"):
                    with self.lock:
                        self._delta = report.pop("_delta")
                elif report is not None:
                    report.pop("_delta", None)
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
            if before is not None and not report.get("changed", True):
                baselines.forget(self, before)
            self.graph()  # load the new generation now (builds and caches the arrays)
            # issue 6: node embeddings (embed: background|sync|skip)
            report["embeddings"] = self.code_vectors().after_ingest(str(opts.get("embed") or "background"))
            return report

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

    def _patch(self, path: str, changed: list[str], opts: dict[str, Any]) -> dict[str, Any] | None:
        store = GraphStore(self.settings.graph_db, busy_timeout_ms=self.settings.busy_timeout_ms)
        try:
            return self.live_roots().try_patch(store, path, changed, opts)
        finally:
            store.close()

    # -- queries --------------------------------------------------------------------------------------------------
    def activate(self, agent_id: str, query: str, *, top_k: int = ACTIVATE_TOP_K, dimensions: list[str] | None = None,
                 max_hops: int = ACTIVATE_MAX_HOPS, decay: float = DECAY, threshold: float = THRESHOLD,
                 max_seeds: int = ACTIVATE_MAX_SEEDS,
                 node_kinds: list[str] | None = None, path_prefix: str | None = None,
                 include_ghost_edges: bool = True, include_structural_holes: bool = False,
                 coactivation_ltp: bool = True, learn: bool = True, max_per_file: int = ACTIVATE_MAX_PER_FILE,
                 group_by: str = "node", history_before: int | None = None, code_only: bool = False
                 ) -> ActivationResult:
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

    # -- health ---------------------------------------------------------------------------------------------------
    def health(self, agent_id: str, *, perspectives: Any = None) -> HealthReport:
        """``perspectives``: the workspace's perspective service (its counts are part of the report), or None."""
        from m1nd import __version__

        g = self.graph()
        gen, wgen = self.generations()
        roots = self.store.roots()
        counts = self.store.file_counts()
        warnings: list[str] = []
        git_info: dict[str, Any] = {"available": False}
        for r in roots:
            rep = r.report or {}
            files = rep.get("files_scanned", 0) or 0
            perr = (rep.get("skipped") or {}).get("parse_error", 0)
            if files and perr / files > 0.05:
                warnings.append(f"last ingest of {r.path} had parse errors in {perr} of {files} files")
        if roots:
            from m1nd.codegraph.ingestion import git_status

            git_info = git_status(Path(roots[0].path))
            if git_info.get("missing_git"):
                warnings.append("git is not installed but an ingest root is inside a git repository")
        try:
            with self.store.db.write():
                pass
        except Exception:  # noqa: BLE001 — probing writability; any failure means read-only
            warnings.append("the graph database is read-only")
        rss = _rss_bytes()
        from m1nd.watch import watch_status
        embedder = _embedder_health(self)
        lexicon = {"terms": len(g.lexicon.terms), "nodes_with_body_terms": g.lexicon.bodies} if g.lexicon else None
        if g.n and g.lexicon is not None and g.lexicon.bodies == 0:
            warnings.append("the lexical index holds no function bodies (the graph was ingested by an older m1nd): "
                            "run ingest again to index them")
        if embedder.get("error"):  # issue 6: an installed model that fails to load degrades health
            warnings.append(f"embedding model unavailable: {embedder['error']}")
        return HealthReport(
            status="degraded" if warnings else "ok", warnings=warnings, version=__version__,
            workspace=str(self.settings.workspace_key), node_count=g.n, edge_count=g.e, graph_generation=gen,
            weights_generation=wgen, queries_processed=self.queries_processed,
            uptime_seconds=round(time.time() - self.started, 3), memory_usage_bytes=rss, graph_bytes=g.engine.nbytes,
            last_persist_ms_ago=now_ms() - self.last_persist_ms, dirty_weights=len(self.dirty_positions()),
            ingest_roots=[{"path": r.path, "namespace": r.namespace, "files": counts.get(r.id, 0),
                           "last_ingest_ms": r.last_ingest_ms} for r in roots],
            embedder=embedder, lexicon=lexicon,
            history={"commits": g.history.commits, "terms": len(g.history.terms)} if g.history else None,
            agents=[{"agent_id": a, "first_seen_s_ago": round(time.time() - s.first_seen, 3),
                     "last_seen_s_ago": round(time.time() - s.last_seen, 3), "query_count": s.query_count}
                    for a, s in sorted(self.agents.items())],
            perspectives=perspectives.count(agent_id) if perspectives is not None else 0,
            locks=perspectives.lock_count() if perspectives is not None else 0, git=git_info,
            transport=self.transport, core=core_build_info(),
            watch=watch_status(self.workdir),  # issue 15: live watchers and what they have not ingested yet
        )


def prebuild_in_child(rows: list[tuple[Any, ...]], terms: list[tuple[int, str, bytes | None]]) -> Any:
    """Second ingest child, while the ingest child writes: the text indexes of the node table it writes."""
    import gc

    gc.disable()  # as in build_cache_in_child
    return text_indexes.prebuild(rows, terms)


def build_cache_in_child(settings: Settings, prebuilt: Any = None) -> None:
    """Second ingest child: build the new generation's arrays and indexes and write the cache, so the parent only
    maps the finished arrays (its memory stays that of the graph; the build's temporaries die with this process).
    ``prebuilt``: what :func:`prebuild_in_child` gave, used when the table written is the one it was built from."""
    import gc

    from m1nd.codegraph.ingest_process import _report_peak

    # a short-lived process building arrays from millions of acyclic objects (rows, term strings): the cyclic
    # collector's passes over them cost ~0.4 s on the stdlib and never found anything to free
    gc.disable()
    cg = CodeGraph(settings)
    cg.indexes_side_by_side = True  # this process is single-threaded and exits after the build
    cg.prebuilt_text_indexes = prebuilt
    try:
        cg.build_cache()
    except Exception:
        log.exception("building the graph cache after ingest failed")
    finally:
        cg.store.close()
    _report_peak("cache build")


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


def _priors_arrays(g: Graph) -> dict[str, np.ndarray]:
    prior, testy, docsy = g.extra.get("priors") or priors(g.nodes)
    return {"prior": prior, "testy": testy.astype(np.uint8), "docsy": docsy.astype(np.uint8)}


def _embedder_health(cg: CodeGraph) -> dict[str, Any]:
    return cg.code_vectors().health()  # type: ignore[no-any-return]


def _standard_code_vectors(cg: CodeGraph, current: Any) -> Any:
    from m1nd.codegraph.vectors import code_vectors_of  # (imported on first use: numpy work, embedder choice)

    return code_vectors_of(cg, current)


def coactivation_rate() -> float:
    raw = os.environ.get("M1ND_COACTIVATION_RATE", "")
    try:
        v = float(raw) if raw.strip() else 0.01
    except ValueError:
        return 0.01
    return min(0.1, max(0.0, v))


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource

        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * (1 if sys.platform == "darwin" else 1024)
