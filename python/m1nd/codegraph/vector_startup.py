"""The server's start-up work for the semantic dimension (issue 13 item 5): the query model, the code index and the
worker child for vectors still missing are made ready beside the graph load, never in front of it.

A query does not wait for the model by default: the first calls rank with the trigram fallback and say so in
``semantic_status`` until the query child's session is up; ``M1ND_EMBED_WAIT_S`` makes them wait instead
(:func:`m1nd.codegraph.vectors.startup_wait_s`). The composition root starts a :class:`Warmup` and hands it to
the code graph (``CodeGraph.semantic_warmup``), whose queries wait for it there
(:func:`m1nd.codegraph.vectors.warmup_pending`).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import threading
import time
from typing import Any

from m1nd.codegraph.vectors import MIN_COVERAGE, code_vectors_for, startup_wait_s
from m1nd.memory.embeddings import EmbedderUnavailableError, OnnxEmbedder, get_embedder, usable
from m1nd.store import node_vectors_repo
from m1nd.store.db import Database

log = logging.getLogger(__name__)

WARM_QUERY = "m1nd start-up warm query"


def start_server_jobs(ws: Any, g: Any = None) -> None:
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
        g = g if g is not None else ws.graph.graph()
        code_missing = bool(g.n) and bool(cv.missing(g))
    except EmbedderUnavailableError:
        return
    if code_missing or memory_changed:
        cv.start_background()


class Warmup:
    """The server's start-up work for the semantic dimension, in a thread of its own.

    Started by :meth:`m1nd.workspace.Workspace.on_server_start` *before* the graph loads. One thread chooses the
    embedder (a model folder is loaded and validated there) and, when the graph database says its code was fully
    embedded by this model (``meta.embed_model_id``), loads the query session at once: tokenizer, checksums and the
    ONNX Runtime session, which is created without holding the GIL. Meanwhile another waits for the graph the main
    thread loads (:meth:`graph_loaded`), computes the coverage (per-node hashes from a sidecar file) and opens the code
    index (a memory map). When both are done queries may use embeddings; then the worker child is started for vectors
    still missing (:func:`start_server_jobs`).

    Queries that need embeddings wait for it (:meth:`wait`, at most :func:`startup_wait_s`), so a result never
    depends on how fast the model happened to load; one that gives up runs with the trigram fallback and says so in
    ``semantic_status``.
    """

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.done = threading.Event()
        self.stopping = False
        self.seconds: float | None = None
        self.preloaded = False
        self._graph: Any = None
        self._graph_ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="m1nd-semantic-warmup", daemon=True)
        self._loader: threading.Thread | None = None
        self._t0 = time.monotonic()

    def start(self) -> Warmup:
        self._thread.start()
        return self

    def graph_loaded(self, g: Any) -> None:
        """The main thread loaded the graph (the warm-up never takes the graph lock: a query holding it may be
        waiting for the warm-up)."""
        self._graph = g
        self._graph_ready.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Until queries may use embeddings (or know they cannot)."""
        return self.done.wait(startup_wait_s() if timeout is None else timeout)

    def join(self, timeout: float | None = None) -> bool:
        """Until all of it ran, including the start of the worker child (tests)."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def stop(self, timeout: float = 10.0) -> None:
        """At shutdown: skip what has not started and wait for the step in progress. A process must not exit while
        a thread is inside ONNX Runtime (here: the session being created), which can abort it (see embed_worker)."""
        self.stopping = True
        self._graph_ready.set()
        end = time.monotonic() + timeout
        for t in (self._thread, self._loader, *_preloads):
            if t is not None and t.is_alive() and t is not threading.current_thread():
                t.join(max(0.0, end - time.monotonic()))

    def _run(self) -> None:
        t0 = time.monotonic()
        try:
            self._warm()
        except Exception as e:  # noqa: BLE001 — the semantic signal is optional; queries fall back and say so
            log.warning("semantic warm-up failed: %s", e)
        finally:
            if self.seconds is None:
                self.seconds = time.monotonic() - t0
            self.done.set()

    def _warm(self) -> None:
        t0 = time.monotonic()
        cg = self.ws.graph
        # 1. the model, in a thread of its own (session creation runs in C++ without the GIL) ...
        self._loader = threading.Thread(target=self._load_model, args=(cg,), name="m1nd-model-load", daemon=True)
        self._loader.start()
        # 2. ... while this one waits for the graph, then computes the coverage and opens the code index
        self._graph_ready.wait()
        self._mark("graph ready")
        g = self._graph
        if self.stopping or g is None:
            return
        emb = get_embedder()  # (a model folder: once its loader has validated it)
        if not emb.available:
            return
        cv = code_vectors_for(cg)
        if cv.available and g.n and cv.coverage(g) >= MIN_COVERAGE and not self.stopping:
            self._mark("coverage")
            if not cv.index_in_child():  # (else the child syncs it at the warm query below)
                cv.sync(g)
            self._mark("index")
            self._loader.join()
            if not self.stopping and usable(cv.emb) is not None:  # loaded already when the database said so
                cv.scores(g, WARM_QUERY)  # first-use costs (shapes, index pages, imports) off the first real query
        self._mark("ready")
        self.seconds = time.monotonic() - t0
        self.done.set()  # queries go ahead from here
        # 3. then the worker child for vectors still missing, and the memory store's re-embedding
        if not self.stopping:
            start_server_jobs(self.ws, g)

    def _load_model(self, cg: Any) -> None:
        for t in _preloads[:]:  # the early load begun by `m1nd serve` (preload_model)
            t.join()
        try:
            emb = get_embedder()  # a model folder is loaded and validated here (embeddings.md §4)
            if isinstance(emb, OnnxEmbedder) and self._fully_embedded(cg, emb) and not self.stopping:
                self._mark("model load starts")
                self.preloaded = usable(emb) is not None
                self._mark("model loaded")
        except Exception as e:  # noqa: BLE001 — reported again by the first query that needs the model
            log.warning("loading the embedding model failed: %s", e)

    def _mark(self, what: str) -> None:
        log.debug("start-up warm-up: %s after %.0f ms", what, (time.monotonic() - self._t0) * 1000)

    @staticmethod
    def _fully_embedded(cg: Any, emb: Any) -> bool:
        try:
            return cg.store.meta("embed_model_id") == emb.model_id
        except Exception:  # noqa: BLE001 — a busy or new database: decide once the graph is loaded
            return False


# Module state, on purpose: the early model loads begun by ``m1nd serve`` before any Workspace exists, joined at exit
# (a thread inside ONNX Runtime must not outlive the interpreter's finalisation).
_preloads: list[threading.Thread] = []


def preload_model(settings: Any) -> None:
    """Begin loading the query model at the very start of ``m1nd serve`` (issue 13 item 5), before the command
    modules are even imported, when the workspace's graph says its code is fully embedded by the default model (so a
    server that still has vectors to compute never holds a session for nothing). :class:`Warmup` takes it over."""

    def run() -> None:
        try:
            emb = get_embedder()  # (a model folder is loaded here)
            path = settings.graph_db
            if not isinstance(emb, OnnxEmbedder) or not path.is_file():
                return
            db = Database(path, busy_timeout_ms=settings.busy_timeout_ms, readonly=True)
            try:
                mid = node_vectors_repo.recorded_model(db)[0]
            finally:
                db.close()
            if mid == emb.model_id:
                usable(emb)
        except Exception as e:  # noqa: BLE001 — the warm-up and the first query try again and report it
            log.info("early model load failed: %s", e)

    t = threading.Thread(target=run, name="m1nd-model-preload", daemon=True)
    _preloads.append(t)
    t.start()


@atexit.register
def _join_preloads() -> None:
    """Never let the interpreter finalise while a thread creates an ONNX Runtime session (a start-up that failed)."""
    for t in _preloads[:]:
        t.join(10.0)


