"""Embeddings of code nodes (spec embeddings.md §7–§9, activation.md §1, §3): the semantic signal of ``activate``.

Every node except directories is embedded from a short text:

* file — ``"file <relpath>\\n<module docstring>\\n<names of ≤ 30 top-level symbols>"``;
* section (markdown) — heading path and the first 300 characters of its text;
* any other symbol — ``"<kind> <qname>\\n<signature>\\n<doc>"``.

Vectors live in ``graph.db``'s ``node_vectors`` keyed by ``embed_hash = sha256(model_id ‖ text)``, so identical texts
share a vector and an unchanged tree re-ingested performs **zero** inferences. The usearch index
``<workspace>/graph.code.usearch`` holds one vector per node keyed by the node's row id (stable across re-ingests for
unchanged external ids) and is diff-synchronised with the database like the memory's (:mod:`m1nd.memory.vectors`).

When embeddings are computed: ``ingest`` with ``embed="sync"`` waits for them; ``"background"`` queues them for the
embedding worker of a server process (``m1nd serve``; a one-shot CLI process only reports what is queued, and the
next server start picks the queue up); ``"skip"`` queues nothing. The worker is a child process
(:mod:`m1nd.embed_worker`, issue 13): it has its own inference session with one thread fewer than the shared one, runs
at a lower priority, embeds length-sorted batches and commits every batch; tool calls never wait for it. The server
learns of new vectors from the child's progress messages and reloads the set of embedded texts off the query path;
a stop ends the child at once and keeps every committed batch.

``activate`` asks :meth:`CodeVectors.scores` for sem(n): the query vector's 200 nearest nodes, rescaled with the
model's floor and ceiling, ``clamp((cos − floor) / (ceiling − floor), 0, 1)``. That array feeds both the noisy-OR seed
combination and the semantic dimension D2. While fewer than ``MIN_COVERAGE`` of the embeddable nodes have vectors
(a cold background job), ``scores`` returns None and activation keeps the trigram backend, so a half-embedded graph
never ranks worse than an unembedded one.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

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
from m1nd.memory.vectors import VectorIndex, tag_of
from m1nd.store.db import Database, PerThread, open_db

log = logging.getLogger(__name__)

INDEX_FILE = "graph.code.usearch"
COMMIT_EVERY = 256
MIN_COVERAGE = 0.9
SEM_TOP = 200
DIR_KIND = 0
FILE_KIND = 1
SECTION_KIND = 11


def node_texts(t: Any) -> list[str | None]:
    """The text each node is embedded from (None for directories), aligned with the node table."""
    from m1nd.graph.nodes import KIND_NAMES

    n = t.n
    kinds = t.kind
    file_of = t.file_of
    top: dict[int, list[tuple[int, str]]] = {}
    qnames = t.qname
    labels = t.label
    for i in range(n):
        k = int(kinds[i])
        if k in (DIR_KIND, FILE_KIND):
            continue
        f = int(file_of[i]) if len(file_of) == n else -1
        if f < 0:
            continue
        q = qnames[i] or labels[i]
        if "." in q or "::" in q:
            continue
        top.setdefault(f, []).append((int(t.line_start[i]), labels[i]))
    out: list[str | None] = []
    for i in range(n):
        k = int(kinds[i])
        if k == DIR_KIND:
            out.append(None)
        elif k == FILE_KIND:
            names = [lab for _, lab in sorted(top.get(i, []))[:30]]
            out.append(f"file {t.source_path[i]}\n{t.doc[i] or ''}\n{', '.join(names)}".strip())
        elif k == SECTION_KIND:
            out.append(f"{qnames[i] or labels[i]}\n{(t.doc[i] or '')[:300]}".strip())
        else:
            kind = KIND_NAMES[k] if k < len(KIND_NAMES) else "symbol"
            out.append(f"{kind} {qnames[i] or labels[i]}\n{t.signature[i] or ''}\n{t.doc[i] or ''}".strip())
    return out


def embed_hash(model_id: str, text: str) -> str:
    return hashlib.sha256(model_id.encode("utf-8") + b"\x00" + text.encode("utf-8")).hexdigest()


@dataclass
class _GenState:
    generation: int
    hashes: list[str | None]  # per graph index
    row_ids: np.ndarray  # int64[N] nodes.id per graph index (-1 unknown)
    sorted_ids: np.ndarray  # row ids sorted
    sorted_pos: np.ndarray  # graph index of each sorted id
    embeddable: int


class CodeVectors:
    """Code-node vectors of one :class:`m1nd.codegraph.CodeGraph` (one per process and workspace)."""

    def __init__(self, cg: Any, embedder: Any = None) -> None:
        self.cg = cg
        self.emb = embedder if embedder is not None else get_embedder()
        self._threads = PerThread(lambda: open_db(cg.settings.graph_db, busy_timeout_ms=cg.settings.busy_timeout_ms))
        self._index: VectorIndex | None = None
        self._state: _GenState | None = None
        self._have: set[str] | None = None  # embed hashes with a vector of this model
        self._coverage: tuple[Any, float] | None = None
        self._lock = threading.RLock()
        self._worker: Any = None  # m1nd.embed_worker.Worker while a child runs
        self._again = False  # more work arrived while the child ran: start another when it exits
        self._stop = False
        self._have_loaded = 0.0  # monotonic time of the last reload of self._have while a child runs
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
            self._index = VectorIndex(self.cg.workdir / INDEX_FILE, model_id=self.emb.model_id, dim=int(self.emb.dim))
        return self._index

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
            texts = node_texts(g.nodes)
            mid = self.emb.model_id
            hashes = [embed_hash(mid, x) if x is not None else None for x in texts]
            ids_by_ext = dict(self.db.all("SELECT ext_id, id FROM nodes"))
            row_ids = np.fromiter((ids_by_ext.get(e, -1) for e in g.nodes.ext_id), np.int64, count=g.n)
            order = np.argsort(row_ids, kind="stable")
            # the texts themselves are not kept: only embedding needs them (node_texts again, in the worker child), and
            # they are the largest part of this state in a serving process (~40 MB on the stdlib)
            del texts
            st = _GenState(g.graph_generation, hashes, row_ids, row_ids[order], order.astype(np.int64),
                           sum(1 for h in hashes if h is not None))
            self._state = st
            return st

    def _have_hashes(self) -> set[str]:
        if self._have is None:
            self._have = {r[0] for r in self.db.all("SELECT embed_hash FROM node_vectors WHERE model_id = ? AND "
                                                    "dim = ?", (self.emb.model_id, int(self.emb.dim)))}
        return self._have

    def missing(self, g: Any) -> list[int]:
        """Graph indices of embeddable nodes whose text has no vector of this model (distinct texts once)."""
        st = self._gen_state(g)
        have = self._have_hashes()
        seen: set[str] = set()
        out = []
        for i, h in enumerate(st.hashes):
            if h is None or h in have or h in seen:
                continue
            seen.add(h)
            out.append(i)
        return out

    def has_vectors(self) -> bool:
        """Whether the store holds any code vector of this model (one cached query; no per-node work)."""
        return bool(self._have_hashes())

    def coverage(self, g: Any) -> float:
        st = self._gen_state(g)
        if not st.embeddable:
            return 1.0
        have = self._have_hashes()
        key = (st.generation, len(have), id(have))
        if self._coverage is None or self._coverage[0] != key:
            self._coverage = (key, sum(1 for h in st.hashes if h is not None and h in have) / st.embeddable)
        return self._coverage[1]

    def _generation(self, g: Any) -> int:
        v = self.db.scalar("SELECT value FROM meta WHERE key = 'code_vectors_generation'")
        return (int(g.graph_generation) << 32) | (int(v) if v is not None else 0)

    def sync(self, g: Any) -> VectorIndex:
        """Make the index agree with the current graph and ``node_vectors``."""
        ix = self.index()
        gen = self._generation(g)
        if ix.generation == gen:
            return ix
        st = self._gen_state(g)
        with self._lock:
            self._have = None
            have = self._have_hashes()
            sel = [i for i, h in enumerate(st.hashes) if h is not None and h in have and st.row_ids[i] >= 0]

            def rows() -> tuple[np.ndarray, np.ndarray]:
                return (np.asarray([st.row_ids[i] for i in sel], np.uint64),
                        np.asarray([tag_of(st.hashes[i]) for i in sel], np.int64))

            by_id = {int(st.row_ids[i]): st.hashes[i] for i in sel}

            def fetch(keys: np.ndarray) -> np.ndarray:
                hs = [by_id[int(k)] for k in keys.tolist()]
                got = self._vectors_by_hash(hs)
                out = np.zeros((len(keys), ix.dim), np.float32)
                for j, h in enumerate(hs):
                    v = got.get(h)
                    if v is not None:
                        out[j] = v
                return out

            ix.sync(gen, rows, fetch)
        return ix

    def _vectors_by_hash(self, hashes: list[str]) -> dict[str, np.ndarray]:
        import json

        out: dict[str, np.ndarray] = {}
        dim = int(self.emb.dim)
        for a in range(0, len(hashes), 900):
            part = hashes[a:a + 900]
            for h, b in self.db.execute("SELECT embed_hash, vec FROM node_vectors WHERE embed_hash IN "
                                        "(SELECT value FROM json_each(?)) AND model_id = ? AND dim = ?",
                                        (json.dumps(part), self.emb.model_id, dim)):
                if len(b) == 4 * dim:
                    out[h] = np.frombuffer(b, "<f4").astype(np.float32)
        return out

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
        all_texts = node_texts(g.nodes)
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
            with db.write():
                db.executemany("INSERT OR REPLACE INTO node_vectors(embed_hash, model_id, dim, vec) VALUES "
                               "(?, ?, ?, ?)", rows)
                db.execute("INSERT INTO meta(key, value) VALUES ('code_vectors_generation', '1') ON CONFLICT(key) "
                           "DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)")
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
        rec = dict(db.all("SELECT key, value FROM meta WHERE key IN ('embed_model_id', 'embed_dim')"))
        if rec.get("embed_model_id") == emb.model_id and rec.get("embed_dim") == str(int(emb.dim)):
            return
        with db.write():
            db.executemany("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = "
                           "excluded.value", [("embed_model_id", emb.model_id), ("embed_dim", str(int(emb.dim)))])
            db.execute("DELETE FROM node_vectors WHERE model_id != ? OR dim != ?", (emb.model_id, int(emb.dim)))

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
        from m1nd.embed_worker import Worker

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
            fresh = {r[0] for r in self.db.all("SELECT embed_hash FROM node_vectors WHERE model_id = ? AND dim = ?",
                                               (self.emb.model_id, int(self.emb.dim)))}
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
            emb = usable(self.emb)
            if emb is None:
                return None
            ix = self.sync(g)
            q = emb.embed_query(query)
        except EmbedderUnavailableError:
            return None
        keys, sims = ix.search(q, SEM_TOP)
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
        out[idx] = np.clip((sims[ok] - floor) / max(ceil - floor, 1e-6), 0.0, 1.0)
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
        ix = self.sync(g)
        st = self._gen_state(g)
        key = int(st.row_ids[node])
        if key < 0 or key not in ix:
            return []
        v = ix.vectors([key])[0]
        keys, sims = ix.search(v, k + 1)
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
                    out["code_vectors"] = sum(1 for h in st.hashes if h is not None and h in have)
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


_attach_lock = threading.Lock()
_instances: weakref.WeakSet[CodeVectors] = weakref.WeakSet()
_provider_registered = [False]


def code_vectors_for(cg: Any) -> CodeVectors:
    """The code-vector service of a code graph (one per CodeGraph instance)."""
    cv = getattr(cg, "_code_vectors", None)
    if cv is not None and cv.emb is get_embedder():
        return cv
    with _attach_lock:
        cv = getattr(cg, "_code_vectors", None)
        if cv is None or cv.emb is not get_embedder():
            old = cv
            cv = CodeVectors(cg)
            cg._code_vectors = cv
            _instances.add(cv)
            if old is not None:
                _instances.discard(old)
            _register_affinity_provider()
        return cv


def _affinity(g: Any, i: int) -> tuple[np.ndarray, str] | None:
    """The perspectives' semantic backend (``semantic_affinity`` routes, ``perspective_affinity``): similarity of
    every node to node ``i`` by embedding — the 200 nearest, rescaled like sem(n) — or None (trigram answers)."""
    for cv in list(_instances):
        if cv.cg.__dict__.get("_graph") is g:
            near = cv.similar(g, i, SEM_TOP)
            if not near:
                return None
            out = np.zeros(g.n, np.float32)
            idx = np.fromiter((j for j, _ in near), np.int64, count=len(near))
            out[idx] = np.fromiter((s for _, s in near), np.float32, count=len(near))
            return out, "embedding"
    return None


def _register_affinity_provider() -> None:
    if _provider_registered[0]:
        return
    try:
        from m1nd.perspectives.synthesis import register_semantic_backend
    except ImportError:  # pragma: no cover - perspectives not shipped
        return
    register_semantic_backend(_affinity)
    _provider_registered[0] = True


def start_server_jobs(ws: Any) -> None:
    """At server start (embeddings.md §5, §9): embed code nodes still missing vectors and, when the memory store was
    embedded by another model, re-embed it afterwards — both in the worker child (:mod:`m1nd.embed_worker`)."""
    cv = code_vectors_for(ws.graph)
    if not cv.background_allowed:
        return
    hook = getattr(ws.memory, "vector_hook", None)
    memory_changed = False
    if hook is not None:
        with contextlib.suppress(Exception):
            memory_changed = bool(hook.model_state()["changed"])
    try:
        g = ws.graph.graph()
        code_missing = bool(g.n) and bool(cv.missing(g))
    except EmbedderUnavailableError:
        return
    if code_missing or memory_changed:
        cv.start_background()


def semantic_status(cg: Any, g: Any) -> str | None:
    """Why ``activate`` ran without the embedding backend while a model is installed (issue 13 item 4), or None: the
    result says so instead of silently ranking with trigrams."""
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


def worker_embedder(emb: Any) -> Any:
    """The worker child's embedder: its own session with one thread fewer than a query session (embeddings.md §9),
    so on 2 cores one stays free for the server; None when no model is usable."""
    if isinstance(emb, OnnxEmbedder):
        emb = emb.clone(threads=max(1, default_threads() - 1))
    return usable(emb)


def semantic_scores(cg: Any, g: Any, query: str) -> np.ndarray | None:
    """sem(n) for ``activate`` / ``warmup`` / ``missing`` (None: use the trigram backend)."""
    try:
        return code_vectors_for(cg).scores(g, query)
    except Exception as e:  # noqa: BLE001 — the semantic signal is optional; never fail a query over it
        log.warning("semantic scores unavailable: %s", e)
        return None
