"""Query embeddings served by a child process (issue 13 item 1): ``python -m m1nd.memory.query_process`` and the
serving process's handle on it, :class:`RemoteEmbedder`.

Why a child: an ONNX Runtime session of the default int8 MiniLM costs ~163 MB however it is configured (ONNX Runtime
folds the int8 weights into fp32 constants; without that folding a query takes ~0.7 s instead of ~20-40 ms), and
importing ``onnxruntime`` and ``tokenizers`` adds ~30 MB more. A serving process that embeds its queries itself
therefore holds 2-5x the memory of one without the model. With the session in this child, ``m1nd serve`` imports
neither package. The child also owns the code index (:mod:`m1nd.memory.code_index`): it syncs it from the database,
saves it and searches it, so what remains of the model in the server is the per-node hashes and the set of
embedded texts (on the stdlib, syncing the index in the server cost ~90 MB: the in-memory copy and its key maps).
The child's own session is the small one (arena off, memory patterns off, one intra-op thread: the measured settings,
see README "Embeddings"), and the bulk worker child (:mod:`m1nd.embed_worker`) keeps its own.

It also takes the model's load off the server's start: the session (1-3 s of CPU on a loaded 2-core machine) is
created in the child while the server answers with the trigram fallback and says so (``semantic_status``).

Protocol: one JSON object per line each way, strictly request then answer. Requests: ``{"op": "hello"}`` (answers
``model_id`` and ``dim`` once the session is up), ``{"op": "query", "text"}``, ``{"op": "documents", "texts",
"max_tokens"}`` (both answer ``vecs``: base64 of little-endian float32, ``n`` rows of ``dim``), ``{"op":
"count_tokens", "text"}`` (``n``), ``{"op": "windows", "text", "size", "stride"}`` (``windows``: ``[text, offset,
count]`` triples), ``{"op": "nearest", "index", "index_model_id", "model_id", "db", "state", "key",
"generation", "k", "text" | "node_key"}`` (the code index: brought to ``generation`` from the database by a diff sync,
saved, then searched; answers ``found``, ``keys`` and ``sims``, base64 float32). A failure answers ``{"ok": false,
"error": message}``. The child exits when its stdin reaches EOF
(the server closed it, or died), on SIGTERM and on SIGINT, without finalising the interpreter.

Module state: ``_instances`` is at-exit bookkeeping of live children (see there), not a registry anything reads.
"""

from __future__ import annotations

import argparse
import atexit
import base64
import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from m1nd.memory.embeddings import (
    DOCUMENT_MAX_TOKENS,
    QUERY_MAX_TOKENS,
    EmbedderUnavailableError,
    ModelSpec,
    OnnxEmbedder,
    Window,
    default_spec,
    dir_spec,
)

log = logging.getLogger(__name__)

DOCUMENTS_PER_REQUEST = 256  # a long `memory embed` goes in pieces: other requests (queries) get their turn between
STOP_WAIT_S = 0.5


class RemoteEmbedder(OnnxEmbedder):
    """An :class:`OnnxEmbedder` whose session lives in a child process. Same model identity, floor and ceiling, same
    query cache; :meth:`load` starts the child and waits for its session (``loaded`` afterwards)."""

    def __init__(self, spec: ModelSpec, *, model_dir: str | None = None) -> None:
        super().__init__(spec, threads=1)
        self.model_dir = model_dir
        self._proc: subprocess.Popen[bytes] | None = None
        self._io = threading.Lock()  # one request at a time on the pipe
        self.restarts = 0
        self.searches = 0  # code-index searches the child answered
        _instances.add(self)

    # -- the child ----------------------------------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        p = self._proc
        return p.pid if p is not None and p.poll() is None else None

    def _load(self) -> None:  # (OnnxEmbedder.load holds self._lock)
        self._spawn()
        try:
            hello = self._request({"op": "hello"})
        except EmbedderUnavailableError:
            self._kill()
            raise
        got = int(hello["dim"])
        if self._dim is not None and self._dim != got:
            self._kill()
            raise EmbedderUnavailableError(f"embedding model dimension {got} does not match the configured {self._dim}")
        self._dim = got
        self._session = self._proc  # "loaded" (OnnxEmbedder's marker)

    def _spawn(self) -> None:
        cmd = [sys.executable, "-m", "m1nd.memory.query_process"]
        if self.model_dir:
            cmd += ["--model-dir", self.model_dir]
        # start_new_session: a Ctrl-C in the server's terminal reaches the server only; it closes our pipe
        self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None,
                                      start_new_session=True)

    def _request(self, req: dict[str, Any]) -> dict[str, Any]:
        p = self._proc
        if p is None or p.stdin is None or p.stdout is None:
            raise EmbedderUnavailableError("the query embedding process is not running")
        with self._io:
            try:
                p.stdin.write((json.dumps(req) + "\n").encode("utf-8"))
                p.stdin.flush()
                line = p.stdout.readline()
            except (OSError, ValueError) as e:
                raise _ChildGone(f"the query embedding process stopped ({e})") from None
        if not line:
            raise _ChildGone(f"the query embedding process exited (status {p.poll()})")
        msg = json.loads(line)
        if not msg.get("ok"):
            raise EmbedderUnavailableError(str(msg.get("error") or "the query embedding process failed"))
        return msg

    def _call(self, req: dict[str, Any]) -> dict[str, Any]:
        """A request to a loaded child; one restart when it died since (killed by the OOM killer, say)."""
        self.load()
        try:
            return self._request(req)
        except _ChildGone as e:
            log.warning("%s; restarting it", e.message)
        with self._lock:
            self._kill()
            self._session = None
            self.restarts += 1
        self.load()
        return self._request(req)

    def _kill(self) -> None:
        p, self._proc = self._proc, None
        if p is None:
            return
        with contextlib.suppress(OSError, ValueError):
            if p.stdin is not None:
                p.stdin.close()  # the child exits at EOF ...
        try:
            p.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:  # ... or, inside a long request, now
            with contextlib.suppress(OSError):
                p.kill()
            p.wait()
        with contextlib.suppress(OSError, ValueError):
            if p.stdout is not None:
                p.stdout.close()

    def close(self) -> None:
        with self._lock:
            self._kill()
            self._session = None

    def clone(self, *, threads: int) -> OnnxEmbedder:
        """A bulk embedder with a session of its own (in the process that asks: the worker child)."""
        return OnnxEmbedder(self.spec, threads=threads, batch=self.batch)

    # -- the Embedder protocol ----------------------------------------------------------------------------------------
    def embed_query(self, text: str) -> np.ndarray:
        hit = self._queries.get(text)
        if hit is not None:
            return hit
        v = _vectors(self._call({"op": "query", "text": text}))[0]
        self._queries.put(text, v)
        return v

    def embed_documents(self, texts: Sequence[str], *, max_tokens: int = DOCUMENT_MAX_TOKENS) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        parts = [_vectors(self._call({"op": "documents", "texts": texts[a:a + DOCUMENTS_PER_REQUEST],
                                      "max_tokens": max_tokens}))
                 for a in range(0, len(texts), DOCUMENTS_PER_REQUEST)]
        self.inferences += len(texts)
        return np.concatenate(parts)

    def count_tokens(self, text: str) -> int:
        return int(self._call({"op": "count_tokens", "text": text})["n"])

    def windows(self, text: str, size: int, stride: int) -> list[Window]:
        got = self._call({"op": "windows", "text": text, "size": size, "stride": stride})["windows"]
        return [Window(t, int(o), int(c)) for t, o, c in got]

    def nearest(self, *, index: str, index_model_id: str, db: str, state: str, key: str, generation: int, k: int,
                text: str | None = None, node_key: int | None = None) -> tuple[np.ndarray, np.ndarray] | None:
        """The ``k`` nearest keys and cosine similarities of ``text`` (or of the vector stored for ``node_key``) in
        the code index at ``index``, which the child first brings to ``generation`` from the database ``db`` and
        the per-node state file ``state`` (written for ``key``): the server never holds the index (issue 13 item
        1). None when the child cannot (the state file holds another key): the caller syncs and searches itself."""
        req: dict[str, Any] = {"op": "nearest", "index": index, "index_model_id": index_model_id,
                               "model_id": self.model_id, "db": db, "state": state, "key": key,
                               "generation": generation, "k": k}
        if text is not None:
            req["text"] = text
        else:
            req["node_key"] = int(node_key)  # type: ignore[arg-type]
        got = self._call(req)
        if not got.get("found"):
            return None
        self.searches += 1
        return (np.asarray(got["keys"], np.uint64), np.frombuffer(base64.b64decode(got["sims"]), "<f4"))

    def tokenize(self, texts: Sequence[str], max_tokens: int, prefix: str = "") -> list[list[int]]:
        raise NotImplementedError("token ids stay in the query embedding process; use embed_documents")


class _ChildGone(EmbedderUnavailableError):
    pass


def _vectors(msg: dict[str, Any]) -> np.ndarray:
    raw = base64.b64decode(msg["vecs"])
    return np.frombuffer(raw, "<f4").astype(np.float32).reshape(int(msg["n"]), int(msg["dim"]))


# Module state, on purpose: at-exit bookkeeping of live query children. Their handles belong to the process's embedder
# (chosen once per process, before and beside any Workspace), and the atexit hook is what runs however the
# interpreter exits, so a child never outlives its server.
_instances: weakref.WeakSet[RemoteEmbedder] = weakref.WeakSet()


@atexit.register
def _close_children() -> None:
    for r in list(_instances):
        with contextlib.suppress(Exception):
            r._kill()


# -- the child --------------------------------------------------------------------------------------------------------
def _answer(emb: OnnxEmbedder, req: dict[str, Any]) -> dict[str, Any]:
    op = req.get("op")
    if op == "hello":
        return {"ok": True, "model_id": emb.model_id, "dim": emb.dim}
    if op == "query":
        m = emb.embed_tokenized(emb.tokenize([str(req["text"])], QUERY_MAX_TOKENS, emb.query_prefix))
    elif op == "documents":
        m = emb.embed_documents([str(t) for t in req["texts"]], max_tokens=int(req.get("max_tokens",
                                                                                        DOCUMENT_MAX_TOKENS)))
    elif op == "count_tokens":
        return {"ok": True, "n": emb.count_tokens(str(req["text"]))}
    elif op == "nearest":
        return _nearest(emb, req)
    elif op == "windows":
        ws = emb.windows(str(req["text"]), int(req["size"]), int(req["stride"]))
        return {"ok": True, "windows": [[w.text, w.token_offset, w.token_count] for w in ws]}
    else:
        return {"ok": False, "error": f"unknown request {op!r}"}
    m = np.ascontiguousarray(m, "<f4")
    return {"ok": True, "n": int(m.shape[0]), "dim": int(m.shape[1]), "vecs": base64.b64encode(m.tobytes()).decode()}


_indexes: dict[str, Any] = {}  # index path -> VectorIndex
_states: dict[str, tuple[str, list[str | None], np.ndarray]] = {}  # state path -> (key, hashes, row ids)
_dbs: dict[str, Any] = {}  # graph.db path -> read-only Database


def _nearest(emb: OnnxEmbedder, req: dict[str, Any]) -> dict[str, Any]:
    """Bring a code index to the asked generation (a diff sync from the database, then saved and mapped again: the
    file is what the next process starts from) and search it."""
    from m1nd.memory.code_index import read_state, sync_code_index
    from m1nd.memory.vectors import VectorIndex
    from m1nd.store.db import Database

    path, generation, mid = str(req["index"]), int(req["generation"]), str(req["index_model_id"])
    ix = _indexes.get(path)
    if ix is None or ix.model_id != mid:
        ix = _indexes[path] = VectorIndex(path, model_id=mid, dim=emb.dim)
    ix.ensure_loaded()
    if ix.generation != generation:
        state_path, key = str(req["state"]), str(req["key"])
        st = _states.get(state_path)
        if st is None or st[0] != key:
            got = read_state(state_path, key)
            if got is None:
                return {"ok": True, "found": False, "why": "the state file holds another generation"}
            st = _states[state_path] = (key, got[0], got[1])
        db = _dbs.get(str(req["db"]))
        if db is None:
            db = _dbs[str(req["db"])] = Database(str(req["db"]), busy_timeout_ms=30000, readonly=True)
        changed = sync_code_index(ix, generation, st[1], st[2], db, str(req["model_id"]), int(emb.dim))
        if changed["added"] or changed["removed"]:
            ix.release()  # saved, and searched as a memory map again (the child stays small too)
    if "text" in req:
        q = emb.embed_tokenized(emb.tokenize([str(req["text"])], QUERY_MAX_TOKENS, emb.query_prefix))[0]
    else:
        node_key = int(req["node_key"])
        if node_key not in ix._tags:
            return {"ok": True, "found": True, "keys": [], "sims": ""}
        q = ix.vectors([node_key])[0]
    keys, sims = ix.search(q, int(req["k"]))
    return {"ok": True, "found": True, "keys": np.asarray(keys, np.uint64).tolist(),
            "sims": base64.b64encode(np.ascontiguousarray(sims, "<f4").tobytes()).decode()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m m1nd.memory.query_process", description=__doc__.split("\n\n")[0])
    ap.add_argument("--model-dir", default=None)
    args = ap.parse_args(argv)
    # Killed by the kernel, never by a Python exception unwinding through a running session (see m1nd.embed_worker).
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    out_fd = os.dup(1)  # the answer channel; fd 1 goes to stderr so nothing else can write into it
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    logging.basicConfig(level=os.environ.get("M1ND_LOG_LEVEL", "WARNING").upper(), stream=sys.stderr,
                        format="m1nd query-embedder: %(levelname)s %(message)s")
    out = os.fdopen(out_fd, "wb", buffering=0)

    def send(msg: dict[str, Any]) -> None:
        out.write((json.dumps(msg) + "\n").encode("utf-8"))

    emb: OnnxEmbedder | None = None
    failure: str | None = None
    try:
        spec = dir_spec(args.model_dir) if args.model_dir else default_spec()
        if spec is None:
            raise EmbedderUnavailableError()
        emb = OnnxEmbedder(spec, profile="query")
        emb.load()
    except EmbedderUnavailableError as e:
        failure = e.message
    for line in sys.stdin.buffer:
        try:
            req = json.loads(line)
            msg = _answer(emb, req) if emb is not None else {"ok": False, "error": failure}
        except Exception as e:  # noqa: BLE001 — one bad request must not end the process
            msg = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        try:
            send(msg)
        except OSError:
            break
    os._exit(0)  # EOF: no interpreter finalisation (the session's destructors are the kernel's job)


if __name__ == "__main__":
    sys.exit(main())
