"""Embeddings of code nodes (spec embeddings.md §7–§9, activation.md §1, §3): the semantic signal of ``activate``.

Every node except directories is embedded from a short text (:mod:`m1nd.codegraph.vector_texts`).

Vectors live in ``graph.db``'s ``node_vectors`` keyed by ``embed_hash = sha256(model_id ‖ text)``, so identical texts
share a vector and an unchanged tree re-ingested performs **zero** inferences. The usearch index
``<workspace>/graph.code.usearch`` holds one vector per node keyed by the node's row id (stable across re-ingests for
unchanged external ids) and is diff-synchronised with the database like the memory's (:mod:`m1nd.memory.vectors`).
In a server the query child owns it (builds, saves and searches it: :mod:`m1nd.memory.code_index`); the server
holds only the per-node hashes and the set of embedded texts.

When embeddings are computed: ``ingest`` with ``embed="sync"`` waits for them; ``"background"`` queues them for the
embedding worker of a server process (``m1nd serve``; a one-shot CLI process only reports what is queued, and the
next server start picks the queue up); ``"skip"`` queues nothing. The worker is a child process
(:mod:`m1nd.embed_worker`, issue 13): it has its own inference session with one thread fewer than the shared one, runs
at a lower priority, embeds length-sorted batches and commits every batch; tool calls never wait for it. The server
learns of new vectors from the child's progress messages and reloads the set of embedded texts off the query path;
a stop ends the child at once and keeps every committed batch. A server's start-up work (the model, the index,
the worker child) runs beside the graph load: :mod:`m1nd.codegraph.vector_startup`.

``activate`` asks :meth:`CodeVectors.scores` for sem(n): the query vector's 200 nearest nodes, rescaled with the
model's floor and ceiling, ``clamp((cos − floor) / (ceiling − floor), 0, 1)``. That array feeds both the noisy-OR seed
combination and the semantic dimension D2. While fewer than ``MIN_COVERAGE`` of the embeddable nodes have vectors
(a cold background job), ``scores`` returns None and activation keeps the trigram backend, so a half-embedded graph
never ranks worse than an unembedded one.

Why one module of this size (~730 lines): it is one object, :class:`CodeVectors` (~500 lines), and the query-side
functions the graph service calls on it. Its per-generation state, sidecar files, embedding loop, worker-child
lifecycle and index queries share one lock and one cached state (the hashes, row ids and embedded set of a graph
generation); split apart they would pass those privates across modules. What is a separate idea lives apart: the
node texts (:mod:`m1nd.codegraph.vector_texts`) and the server's start-up (:mod:`m1nd.codegraph.vector_startup`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from m1nd.codegraph.vector_texts import DIR_KIND, embed_hash, iter_node_texts, node_texts
from m1nd.graph.embedding_weight import weight
from m1nd.memory.code_index import EmbeddedSet, embedded_hashes, node_tags, read_state, sync_code_index
from m1nd.memory.embeddings import (
    CODE_MAX_TOKENS,
    EmbedderUnavailableError,
    HashingEmbedder,
    NoEmbedder,
    OnnxEmbedder,
    default_threads,
    describe,
    get_embedder,
    notice_no_model,
    usable,
)
from m1nd.memory.vectors import VectorIndex
from m1nd.store import node_vectors_repo
from m1nd.store.db import Database, PerThread, open_db

if TYPE_CHECKING:
    from m1nd.codegraph.vector_startup import Warmup

__all__ = ["COVERAGE_FILE", "INDEX_FILE", "STATE_FILE", "CodeAffinity", "CodeVectors", "SemanticCall",
           "code_vectors_for", "code_vectors_of", "embed_hash", "iter_node_texts", "node_texts",
           "semantic_after_warmup", "semantic_scores", "semantic_status", "startup_wait_s", "warmup_pending",
           "worker_embedder", "worker_threads"]

log = logging.getLogger(__name__)

INDEX_FILE = "graph.code.usearch"
STATE_FILE = "graph.code.state.npz"
COVERAGE_FILE = "graph.code.coverage.json"
STATE_VERSION = 1  # bump when node_texts or embed_hash change
COMMIT_EVERY = 256
MIN_COVERAGE = 0.9
SEM_TOP = 200
RESYNC_WHILE_EMBEDDING_S = 30.0
# A query does not wait for the start-up warm-up by default (m1nd.codegraph.vector_startup): M1ND_EMBED_WAIT_S
STARTUP_WAIT_S = 0.0


@dataclass
class _GenState:
    generation: int
    hashes: list[str | None]  # per graph index
    row_ids: np.ndarray  # int64[N] nodes.id per graph index (-1 unknown)
    sorted_ids: np.ndarray  # row ids sorted
    sorted_pos: np.ndarray  # graph index of each sorted id
    embeddable: int
    key: str = ""  # identifies the generation, node ids and model (the sidecar files' key)
    tags: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # per node its hash's tag, -1: none


class CodeVectors:
    """Code-node vectors of one :class:`m1nd.codegraph.service.CodeGraph` (one per process and workspace)."""

    def __init__(self, cg: Any, embedder: Any = None) -> None:
        self.cg = cg
        self.emb = embedder if embedder is not None else get_embedder()
        self._threads = PerThread(lambda: open_db(cg.settings.graph_db, busy_timeout_ms=cg.settings.busy_timeout_ms))
        self._index: VectorIndex | None = None
        self._state: _GenState | None = None
        self._have: EmbeddedSet | None = None  # embed hashes with a vector of this model
        self._any_vector = False
        self._coverage: tuple[Any, float] | None = None
        self._lock = threading.RLock()
        self._worker: Any = None  # m1nd.codegraph.embed_child.Worker while a child runs
        self._again = False  # more work arrived while the child ran: start another when it exits
        self._stop = False
        self._have_loaded = 0.0  # monotonic time of the last reload of self._have while a child runs
        self._synced_at = 0.0  # monotonic time of the last index sync (throttled while the child embeds)
        self._asked: int | None = None  # the generation the query child's index was last asked for
        self.pending = 0
        self.done = 0
        self.rate = 0.0
        self.inferences = 0
        self.memory_reembed: dict[str, Any] | None = None  # the child's memory re-embedding: pending, done, rate
        self.last_error: str | None = None

    # -- identity ---------------------------------------------------------------------------------------------------
    @property
    def available(self) -> bool:
        if isinstance(self.emb, NoEmbedder) or not self.emb.available:
            return False
        return not (isinstance(self.emb, OnnxEmbedder) and self.emb._failed is not None)

    @property
    def db(self) -> Database:
        return self._threads.get()

    def index(self) -> VectorIndex:
        if self._index is None:
            self._index = VectorIndex(self.cg.workdir / INDEX_FILE, model_id=self._index_model_id(),
                                      dim=int(self.emb.dim))
        return self._index

    def _index_model_id(self) -> str:
        """The index file's model id: another node-text choice is another index (its tags are of other texts)."""
        from m1nd.graph.node_text import DEFAULT, chosen

        return self.emb.model_id if chosen() == DEFAULT else f"{self.emb.model_id}+{chosen()}"

    def close(self) -> None:
        self._stop = True
        w = self._worker
        if w is not None:
            w.stop()  # immediate: the child's committed batches stay, the rest resumes at the next start
        if self._index is not None:
            self._index.save()
        self._threads.close_all()

    # -- per-generation state ---------------------------------------------------------------------------------------
    def _gen_state(self, g: Any) -> _GenState:
        st = self._state
        if st is not None and st.generation == g.graph_generation:
            return st
        with self._lock:
            st = self._state
            if st is not None and st.generation == g.graph_generation:
                return st
            mid = self.emb.model_id
            key = self._state_key(g, mid)
            cached = self._read_state_file(g, key)
            if cached is not None:
                hashes, row_ids = cached
            else:
                # One text at a time, hashed as it comes, and the row ids looked up through the graph's own ext ids:
                # a serving process never holds every text (~40 MB on the stdlib) nor a copy of every ext id, whose
                # freed memory used to stay in the process (issue 13: +30 MB of serving RSS on Django).
                hashes = [embed_hash(mid, x) if x is not None else None
                          for x in iter_node_texts(g.nodes, self._roots())]
                pos = {e: i for i, e in enumerate(g.nodes.ext_id)}
                row_ids = np.full(g.n, -1, np.int64)
                for e, rid in node_vectors_repo.node_row_ids(self.db):
                    i = pos.get(e)
                    if i is not None:
                        row_ids[i] = rid
                del pos
                self._write_state_file(key, hashes, row_ids)
            order = np.argsort(row_ids, kind="stable")
            st = _GenState(g.graph_generation, hashes, row_ids, row_ids[order], order.astype(np.int64),
                           sum(1 for h in hashes if h is not None), key, node_tags(hashes))
            self._state = st
            return st

    # The per-node embed hashes and row ids of one graph generation cost ~0.5 s to compute on the stdlib (every node's
    # text, hashed); a server start reads them from a sidecar instead (issue 13 item 5). Keyed like the graph cache
    # (the generation) plus the model, the node count and a digest of the node ids; anything else recomputes.
    def _state_key(self, g: Any, mid: str) -> str:
        from m1nd.graph.node_text import chosen

        h = hashlib.sha256(f"{STATE_VERSION}\0{g.graph_generation}\0{g.n}\0{mid}\0{chosen()}\0".encode())
        h.update("\0".join(g.nodes.ext_id).encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    def _read_state_file(self, g: Any, key: str) -> tuple[list[str | None], np.ndarray] | None:
        got = read_state(self.cg.workdir / STATE_FILE, key)
        return got if got is not None and len(got[1]) == g.n else None

    def _write_state_file(self, key: str, hashes: list[str | None], row_ids: np.ndarray) -> None:
        path = self.cg.workdir / STATE_FILE
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp.npz")
        try:
            np.savez(tmp, key=np.asarray(key),
                     hashes=np.asarray([h or "" for h in hashes], dtype="S64"), row_ids=row_ids)
            os.replace(tmp, path)
        except OSError as e:  # a cache that cannot be written is not an error
            log.info("could not write %s: %s", path, e)
            with contextlib.suppress(OSError):
                tmp.unlink()

    def _roots(self) -> dict[int, str]:
        """Root id → path, for node texts that read bodies (:mod:`m1nd.graph.node_text`)."""
        from m1nd.graph.node_text import chosen

        if chosen() not in ("body", "idents"):
            return {}
        return {r.id: r.path for r in self.cg.store.roots()}

    def _have_hashes(self) -> EmbeddedSet:
        if self._have is None:
            self._have = embedded_hashes(self.db, self.emb.model_id, int(self.emb.dim))
        return self._have

    def missing(self, g: Any) -> list[int]:
        """Graph indices of embeddable nodes whose text has no vector of this model (distinct texts once)."""
        st = self._gen_state(g)
        done = self._have_hashes().mask(st.tags) | (st.tags < 0)
        seen: set[str] = set()
        out = []
        for i in np.nonzero(~done)[0].tolist():
            h = st.hashes[i]
            if h is None or h in seen:
                continue
            seen.add(h)
            out.append(i)
        return out

    def has_vectors(self) -> bool:
        """Whether the store holds any code vector of this model (one cheap query; no per-node work)."""
        if self._have is not None:
            return bool(self._have)
        if not self._any_vector:
            self._any_vector = node_vectors_repo.any_vector(self.db, self.emb.model_id, int(self.emb.dim))
        return self._any_vector

    def coverage(self, g: Any) -> float:
        if not self.has_vectors():
            # no vector of this model at all (one cheap query): the share is 0 unless nothing is embeddable (only
            # directories), known without the per-node hashes (~60 ms on the stdlib, most of a CLI activate's own work)
            return 0.0 if bool(np.any(np.asarray(g.nodes.kind) != DIR_KIND)) else 1.0
        st = self._gen_state(g)
        if not st.embeddable:
            return 1.0
        if self._have is None and self._coverage is None:
            # a server start: the share computed by an earlier process, while no vector was written since (the
            # set of embedded texts is a ~0.2 s query on the stdlib, not needed to answer queries)
            cached = self._read_coverage_file(st)
            if cached is not None:
                return cached
        have = self._have_hashes()
        key = (st.generation, len(have), id(have))
        if self._coverage is None or self._coverage[0] != key:
            vgen = self._vectors_generation()
            self._coverage = (key, int(have.mask(st.tags).sum()) / st.embeddable)
            self._write_coverage_file(st, vgen, self._coverage[1])
        return self._coverage[1]

    def _vectors_generation(self) -> str | None:
        return node_vectors_repo.vectors_generation(self.db)

    def _read_coverage_file(self, st: _GenState) -> float | None:
        try:
            d = json.loads((self.cg.workdir / COVERAGE_FILE).read_text(encoding="utf-8"))
            if d["key"] == st.key and d["vectors_generation"] == self._vectors_generation():
                return float(d["coverage"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
        return None

    def _write_coverage_file(self, st: _GenState, vgen: str | None, cov: float) -> None:
        path = self.cg.workdir / COVERAGE_FILE
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            tmp.write_text(json.dumps({"key": st.key, "vectors_generation": vgen, "coverage": cov}), encoding="utf-8")
            os.replace(tmp, path)
        except OSError as e:
            log.info("could not write %s: %s", path, e)
            with contextlib.suppress(OSError):
                tmp.unlink()

    def _generation(self, g: Any) -> int:
        v = node_vectors_repo.vectors_generation(self.db)
        return (int(g.graph_generation) << 32) | (int(v) if v is not None else 0)

    def sync(self, g: Any) -> VectorIndex:
        """Make the index agree with the current graph and ``node_vectors``.

        In a serving process (issue 13: serving memory) the index is searched as a memory map of its file: after a
        sync that changed it, it is saved and mapped again. While the worker child commits a batch every second or
        so, the server re-syncs at most every ``RESYNC_WHILE_EMBEDDING_S`` (each sync copies the index into memory):
        until then a query searches the index as of the last sync (coverage ≥ 90 % already), then the rest."""
        ix = self.index()
        ix.ensure_loaded()  # (the file records the generation it reflects)
        gen = self._generation(g)
        if ix.generation == gen:
            return ix
        serving = self.cg.transport in ("stdio", "http")
        if (serving and self.worker_running and ix.generation is not None and len(ix)
                and time.monotonic() - self._synced_at < RESYNC_WHILE_EMBEDDING_S
                and ix.generation >> 32 == gen >> 32):  # (same graph generation: only new vectors are missing)
            return ix
        self._synced_at = time.monotonic()
        st = self._gen_state(g)
        with self._lock:
            self._have = None
            changed = sync_code_index(ix, gen, st.hashes, st.row_ids, self.db, self.emb.model_id,
                                      int(self.emb.dim), self._have_hashes())
        if serving and (changed["added"] or changed["removed"]):
            ix.release()
        return ix

    # -- the index in the query child (issue 13 item 1) ------------------------------------------------------------
    def index_in_child(self) -> bool:
        """A serving process whose queries embed in the query child leaves the code index to it: the child syncs
        the index file from the database and searches it; the server holds neither the index nor its maps."""
        return self.cg.transport in ("stdio", "http") and callable(getattr(self.emb, "nearest", None))

    def _child_generation(self, g: Any) -> int:
        """The generation the child's index is asked to reflect. While the worker child commits a batch every few
        seconds this moves at most every ``RESYNC_WHILE_EMBEDDING_S`` (each move is a diff sync in the child)."""
        gen = self._generation(g)
        asked = self._asked
        if (asked is not None and self.worker_running and asked >> 32 == gen >> 32
                and time.monotonic() - self._synced_at < RESYNC_WHILE_EMBEDDING_S):
            return asked
        self._asked = gen
        self._synced_at = time.monotonic()
        return gen

    def _nearest_in_child(self, emb: Any, g: Any, k: int, *, text: str | None = None,
                          key: int | None = None) -> tuple[np.ndarray, np.ndarray] | None:
        """The ``k`` nearest index keys and similarities of a query text (or of node ``key``'s vector), found by
        the query child; None when it could not (the caller syncs and searches here)."""
        st = self._gen_state(g)
        return emb.nearest(index=str(self.cg.workdir / INDEX_FILE), index_model_id=self._index_model_id(),
                           db=str(self.cg.settings.graph_db), state=str(self.cg.workdir / STATE_FILE), key=st.key,
                           generation=self._child_generation(g), k=k, text=text, node_key=key)

    # -- embedding --------------------------------------------------------------------------------------------------
    def embed_missing(self, g: Any, *, emb: Any = None, limit: int | None = None, commit_every: int = COMMIT_EVERY,
                      progress: Any = None, update_index: bool = True) -> int:
        """Embed the nodes without vectors now, committing every ``commit_every`` vectors. Returns the count.

        Texts are sorted by length first so each commit's batches pad little (and a stop that loses the batch in
        flight loses a short one). ``progress(done, total)`` is called after each commit; ``update_index=False``
        (the worker child) leaves the usearch file to the server process, its only writer.
        """
        emb = usable(emb or self.emb)
        if emb is None:
            return 0
        st = self._gen_state(g)
        todo = self.missing(g)
        if limit is not None:
            todo = todo[:limit]
        all_texts = node_texts(g.nodes, self._roots())
        todo.sort(key=lambda i: len(all_texts[i] or ""))
        self.pending = len(todo)
        done = 0
        db = self.db
        for a in range(0, len(todo), commit_every):
            if self._stop:
                break
            part = todo[a:a + commit_every]
            texts = [all_texts[i] or "" for i in part]
            vecs = emb.embed_documents(texts, max_tokens=CODE_MAX_TOKENS)
            self.inferences += len(part)
            rows = [(st.hashes[i], emb.model_id, int(emb.dim), np.ascontiguousarray(v, "<f4").tobytes())
                    for i, v in zip(part, vecs) if np.any(v)]
            node_vectors_repo.save_vectors(db, rows)
            with self._lock:
                have = self._have_hashes()
                have.update(r[0] for r in rows)
            done += len(part)
            self.pending = max(0, len(todo) - done)
            if progress is not None:
                progress(done, len(todo))
        self.pending = 0
        if not self._stop and not self.missing(g):
            self._finish_model(db, emb)
        if done and update_index:
            ix = self.sync(g)
            ix.save()
        return done

    def _finish_model(self, db: Database, emb: Any) -> None:
        """Every node has a vector of this model: record it in ``meta`` and drop vectors of other models."""
        if node_vectors_repo.recorded_model(db) == (emb.model_id, str(int(emb.dim))):
            return
        node_vectors_repo.record_model(db, emb.model_id, int(emb.dim))

    def after_ingest(self, mode: str) -> dict[str, Any]:
        """The ``embed`` parameter of ``ingest``: ``sync`` embeds now, ``background`` queues for the server's worker,
        ``skip`` queues nothing. Returns the report's ``embeddings`` object."""
        if not self.available or mode == "skip":
            return {"queued": 0, "model_id": self.emb.model_id if self.available else None}
        server = self.cg.transport in ("stdio", "http")
        try:
            g = self.cg.graph()
            if mode == "sync" and not server:
                from m1nd.progress import RateProgress, wanted

                bar = RateProgress("m1nd embed: code nodes") if wanted() else None
                n = self.embed_missing(g, progress=bar.update if bar else None)
                if bar is not None:
                    bar.close()
                return {"queued": 0, "embedded": n, "model_id": self.emb.model_id}
            queued = len(self.missing(g))
        except EmbedderUnavailableError:
            return {"queued": 0, "model_id": None}
        if mode == "sync":
            # In a server the work runs in the worker child even when the call waits for it: a stop must be able to
            # end it at once (see m1nd.embed_worker), which an inference on a tool thread cannot.
            if queued:
                self.start_background()
                self.wait_idle()
            return {"queued": 0, "embedded": queued - len(self.missing(g)), "model_id": self.emb.model_id}
        if queued and server and self.background_allowed:
            self.start_background()
        return {"queued": queued, "model_id": self.emb.model_id}

    @property
    def background_allowed(self) -> bool:
        """The hashing embedder (tests) never embeds code in the background: tests that pin trigram rankings stay
        deterministic, and tests of the embedding path ask for ``embed: "sync"``."""
        return self.available and not isinstance(self.emb, HashingEmbedder)

    def start_background(self) -> None:
        """Start the embedding child, or ask for another run when one is going (it may have missed new nodes)."""
        if not self.available:
            return
        from m1nd.codegraph.embed_child import Worker

        with self._lock:
            if self._stop:
                return
            w = self._worker
            if w is not None and w.running:
                self._again = True
                return
            self._again = False
            self._stop = False
            w = Worker(self.cg.settings, self._on_progress, self._on_exit)
            self._worker = w
            w.start()

    def _on_progress(self, msg: dict[str, Any]) -> None:
        if msg.get("event") == "memory":  # the child re-embeds the memory store (another model embedded it)
            done, total = int(msg.get("done", 0)), int(msg.get("total", 0))
            self.memory_reembed = {"pending": max(0, total - done), "done": done, "rate": float(msg.get("rate", 0.0))}
            return
        if msg.get("event") not in ("progress", "done"):
            return
        self.done = int(msg.get("done", 0))
        self.pending = max(0, int(msg.get("total", 0)) - self.done)
        self.rate = float(msg.get("rate", 0.0))
        if msg.get("error"):
            self.last_error = str(msg["error"])
        # Reload the embedded texts here, on the reader thread, at most once a second: queries never pay for it.
        now = time.monotonic()
        if msg["event"] == "done" or now - self._have_loaded >= 1.0:
            self._have_loaded = now
            self._reload_have()

    def _on_exit(self, rc: int | None) -> None:
        self._reload_have()
        with self._lock:
            if rc not in (0, None) and not self._stop:
                self.last_error = f"embedding worker exited with status {rc}"
                log.warning("background embedding: %s", self.last_error)
            again = self._again and not self._stop
            self.pending = 0
        if again:
            self.start_background()

    def _reload_have(self) -> None:
        try:
            fresh = embedded_hashes(self.db, self.emb.model_id, int(self.emb.dim))
        except Exception as e:  # noqa: BLE001 — a busy database: the next message retries
            log.info("reloading embedded code texts failed: %s", e)
            return
        self._have = fresh

    @property
    def worker_running(self) -> bool:
        w = self._worker
        return w is not None and w.running

    def wait_idle(self, timeout: float = 600.0) -> bool:
        """Block until the worker child is done and no node misses a vector (tests and ``embed: sync``)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end and not self._stop:
            w = self._worker
            if w is not None and not w.wait(min(0.25, max(0.0, end - time.monotonic()))):
                continue
            if self._again or self.worker_running:
                time.sleep(0.05)
                continue
            self._reload_have()
            return not self.missing(self.cg.graph())
        return False

    # -- queries ----------------------------------------------------------------------------------------------------
    def scores(self, g: Any, query: str) -> np.ndarray | None:
        """sem(n) ∈ [0, 1] for the 200 nearest nodes (float32[N]); None when no model or too few vectors."""
        if not self.available:
            notice_no_model()  # once per process (embeddings.md §12)
            return None
        if g.n == 0:
            return None
        try:
            # coverage first: a server whose vectors are still being computed (by the worker child) never loads its
            # query session for nothing (issue 13: the session is most of the serving process's memory)
            if self.coverage(g) < MIN_COVERAGE:
                return None
            w = weight(self.emb.model_id)  # (0: the benchmark found this model hurts ranking: trigrams instead)
            if w <= 0.0:
                return None
            emb = usable(self.emb)
            if emb is None:
                return None
            found = self._nearest_in_child(emb, g, SEM_TOP, text=query) if self.index_in_child() else None
            if found is None:
                found = self.sync(g).search(emb.embed_query(query), SEM_TOP)
        except EmbedderUnavailableError:
            return None
        keys, sims = found
        st = self._gen_state(g)
        out = np.zeros(g.n, np.float32)
        if len(keys) == 0:
            return out
        k = keys.astype(np.int64)
        pos = np.searchsorted(st.sorted_ids, k)
        pos = np.minimum(pos, len(st.sorted_ids) - 1)
        ok = st.sorted_ids[pos] == k
        idx = st.sorted_pos[pos[ok]]
        floor, ceil = float(emb.sim_floor), float(emb.sim_ceiling)
        out[idx] = w * np.clip((sims[ok] - floor) / max(ceil - floor, 1e-6), 0.0, 1.0)
        return out

    def similar(self, g: Any, node: int, k: int = 20) -> list[tuple[int, float]]:
        """Graph indices of the ``k`` nodes nearest ``node`` by embedding, with rescaled similarity (affinity)."""
        if not self.available or g.n == 0:
            return []
        if self.coverage(g) < MIN_COVERAGE:
            return []
        emb = usable(self.emb)
        if emb is None:
            return []
        st = self._gen_state(g)
        key = int(st.row_ids[node])
        if key < 0:
            return []
        found = self._nearest_in_child(emb, g, k + 1, key=key) if self.index_in_child() else None
        if found is None:
            ix = self.sync(g)
            if key not in ix:
                return []
            found = ix.search(ix.vectors([key])[0], k + 1)
        keys, sims = found
        out = []
        floor, ceil = float(emb.sim_floor), float(emb.sim_ceiling)
        for kk, s in zip(keys.astype(np.int64).tolist(), sims.tolist()):
            p = int(np.searchsorted(st.sorted_ids, kk))
            if p >= len(st.sorted_ids) or st.sorted_ids[p] != kk:
                continue
            j = int(st.sorted_pos[p])
            if j == node:
                continue
            out.append((j, float(min(1.0, max(0.0, (s - floor) / max(ceil - floor, 1e-6))))))
        return out[:k]

    def health(self) -> dict[str, Any]:
        d = describe(self.emb)
        out = {"model_id": d["model_id"], "dim": d["dim"], "available": d["available"], "code_vectors": 0,
               "pending": self.pending}
        if d.get("error"):
            out["error"] = d["error"]
        if self.available:
            with self._lock:
                try:
                    g = self.cg.graph()
                    st = self._gen_state(g)
                    have = self._have_hashes()
                    out["code_vectors"] = int(have.mask(st.tags).sum())
                    if not self.worker_running or not (self.done or self.pending):  # no report yet
                        out["pending"] = len(self.missing(g))
                    else:
                        out["done"] = self.done
                        out["rate"] = self.rate
                except Exception as e:  # noqa: BLE001 — health must answer
                    out["error"] = str(e)
        if self.memory_reembed is not None and self.worker_running:
            out["memory_reembed"] = dict(self.memory_reembed)
        if self.last_error:
            out["last_error"] = self.last_error
        return out


def code_vectors_of(cg: Any, current: CodeVectors | None) -> CodeVectors:
    """The standard ``code_vectors`` dependency of a :class:`~m1nd.codegraph.service.CodeGraph`: ``current`` while
    it embeds with the process's embedder, else new code vectors (tests swap the embedder between calls)."""
    if current is not None and current.emb is get_embedder():
        return current
    return CodeVectors(cg)


def code_vectors_for(cg: Any) -> CodeVectors:
    """The code-vector service of a code graph (one per CodeGraph instance, owned by it)."""
    return cg.code_vectors()  # type: ignore[no-any-return]


class CodeAffinity:
    """The perspectives' semantic backend (``semantic_affinity`` routes, ``perspective_affinity``) of one code graph:
    similarity of every node to node ``i`` by embedding — the 200 nearest, rescaled like sem(n) — or None (trigram
    answers). Given to the perspective service by the composition root (:attr:`m1nd.workspace.Workspace.perspectives`).
    """

    def __init__(self, cg: Any) -> None:
        self.cg = cg

    @property
    def epoch(self) -> int:
        """Changes when the graph's code vectors are (re)made, so cached similarities are recomputed."""
        return int(self.cg.code_vectors_epoch)

    def __call__(self, g: Any, i: int) -> tuple[np.ndarray, str] | None:
        cv = self.cg.code_vectors_made()  # (none yet: nothing asked for embeddings, the trigram backend answers)
        if cv is None:
            return None
        near = cv.similar(g, i, SEM_TOP)
        if not near:
            return None
        out = np.zeros(g.n, np.float32)
        idx = np.fromiter((j for j, _ in near), np.int64, count=len(near))
        out[idx] = np.fromiter((s for _, s in near), np.float32, count=len(near))
        return out, "embedding"


def startup_wait_s() -> float:
    """How long a query waits for the start-up warm-up (``M1ND_EMBED_WAIT_S``; 0: never wait)."""
    raw = os.environ.get("M1ND_EMBED_WAIT_S", "").strip()
    try:
        return max(0.0, float(raw)) if raw else STARTUP_WAIT_S
    except ValueError:
        return STARTUP_WAIT_S


def warmup_pending(cg: Any) -> Warmup | None:
    """The start-up warm-up of ``cg`` while it runs, else None."""
    w = cg.semantic_warmup
    return w if w is not None and not w.done.is_set() else None


class SemanticCall:
    """sem(n) of one query, computed in a helper thread (beside the lexical stage of ``run_activation``). Calling it
    gives the scores (or None); afterwards ``loading`` says whether it gave up waiting for the start-up warm-up."""

    def __init__(self, fut: Any) -> None:
        self._fut = fut
        self.loading = False

    def __call__(self) -> np.ndarray | None:
        scores, self.loading = self._fut.result()
        return scores


def semantic_after_warmup(cg: Any, g: Any, query: str, w: Warmup) -> tuple[np.ndarray | None, bool]:
    """Wait for the start-up warm-up, then sem(n); ``(None, True)`` when the wait ran out."""
    if not w.wait():
        return None, True
    return semantic_scores(cg, g, query), False


def semantic_status(cg: Any, g: Any, *, loading: bool = False) -> str | None:
    """Why ``activate`` ran without the embedding backend while a model is installed (issue 13 item 4), or None: the
    result says so instead of silently ranking with trigrams. ``loading``: the query gave up waiting for the
    start-up warm-up (:class:`Warmup`)."""
    if loading:
        return (f"semantic dimension not ready: the embedding model was still loading after "
                f"{startup_wait_s():g} s (M1ND_EMBED_WAIT_S sets how long a query waits for it); ranked with the "
                f"trigram fallback")
    try:
        cv = code_vectors_for(cg)
        if not cv.available or g.n == 0:
            return None
        cov = cv.coverage(g)
        if cov >= MIN_COVERAGE:
            return None
        running = cv.worker_running
    except Exception:  # noqa: BLE001 — a status line must never fail a query
        return None
    how = ("being embedded in the background" if running else
           "not embedded yet (start the server, or run: m1nd ingest PATH --embed sync)")
    return (f"semantic dimension not ready: {cov:.0%} of code nodes have embeddings ({how}); ranked with the "
            f"trigram fallback until {MIN_COVERAGE:.0%}")


def worker_threads() -> int:
    """Threads of the worker child's session: one fewer than a query session (embeddings.md §9), so on 2 cores one
    stays free for the server."""
    return max(1, default_threads() - 1)


def worker_embedder(emb: Any, threads: int | None = None) -> Any:
    """The worker child's embedder with its own session of ``threads`` threads, or None when no model is usable.
    The process's embedder itself when it has that thread count (a model folder is loaded when it is chosen: no
    second session in the child, issue 13 item 7)."""
    threads = threads or worker_threads()
    if isinstance(emb, OnnxEmbedder) and emb.threads != threads:
        emb = emb.clone(threads=threads)
    return usable(emb)


def semantic_scores(cg: Any, g: Any, query: str) -> np.ndarray | None:
    """sem(n) for ``activate`` / ``warmup`` / ``missing`` (None: use the trigram backend)."""
    try:
        return code_vectors_for(cg).scores(g, query)
    except Exception as e:  # noqa: BLE001 — the semantic signal is optional; never fail a query over it
        log.warning("semantic scores unavailable: %s", e)
        return None
