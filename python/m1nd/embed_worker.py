"""Bulk embedding in a child process (issue 13): ``python -m m1nd.embed_worker``, the child's program.

Why a child process and not a thread of the server:

* **Clean stops.** A process that exits while a thread is inside ONNX Runtime's ``InferenceSession.run`` aborts
  with SIGABRT: interpreter finalisation runs the C++ static destructors under the running kernel
  ("GetElementType is not implemented", then "terminate called without an active exception"). A thread cannot be
  interrupted inside ``run`` (a 32 × 128 batch takes about a second on a loaded 2-core machine), so a server could
  either wait (slow exits) or risk the abort. A child is stopped by SIGTERM at any instant: the kernel ends it, no
  destructor runs, and SQLite's journal keeps exactly the committed batches.
* **Memory.** The bulk session's arena grows with batch shapes and never shrinks; in a child it is returned to the
  system when the job ends, and the server keeps only the small session that embeds queries.
* **Priority.** The child lowers its own scheduling priority, so tool calls in the server win the CPU.

Protocol: the server starts ``python -m m1nd.embed_worker --home H --workspace-key K`` with a pipe on stdin and one
on stdout. The child embeds every code node still missing a vector of the active model (committing every batch), then
re-embeds the memory store when it was embedded by another model, and exits 0. It writes one JSON object per line on
its stdout (``{"event": "progress", "done", "total", "rate"}`` for code nodes, ``{"event": "memory", "done", "total",
"rate"}`` while it re-embeds the memory store, then ``{"event": "done", ...}``); logs go to stderr.
It exits at once when its stdin reaches EOF (the server closed it or died, even by SIGKILL), on SIGTERM and on
SIGINT. The server reads the vectors from ``graph.db`` (:mod:`m1nd.codegraph.vectors`); the child never writes the
server's usearch file. The server's side (start, follow, stop) is :mod:`m1nd.codegraph.embed_child`: this
module is the child's program only, so the code-graph services that start it never import the Workspace it
builds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

NICE = 10  # the child's priority increment: tool calls of the server come first
COMMIT_EVERY = 32  # one inference batch: a stop loses at most the batch in flight (about a second of work)
MEMORY_PROGRESS_EVERY_S = 1.0  # memory re-embedding reports per entry; the server hears of it at most this often


def _exit_on_eof(fd: int) -> None:
    """Exit the moment the server closes our stdin or dies. ``os._exit`` skips interpreter finalisation, which is
    what makes it safe while the main thread is inside an ONNX Runtime call (see the module docstring)."""
    while True:
        try:
            if not os.read(fd, 1 << 16):
                break
        except OSError:
            break
    os._exit(0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m m1nd.embed_worker", description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", required=True)
    ap.add_argument("--workspace-key", required=True)
    ap.add_argument("--busy-timeout-ms", type=int, default=5000)
    args = ap.parse_args(argv)

    # Killed by the kernel, never by a Python exception unwinding through a running session.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    with contextlib.suppress(OSError, AttributeError):
        os.nice(NICE)
    # Our stdout is the progress channel: keep a private copy and point fd 1 at stderr, so nothing else (a stray
    # print, native warnings) can write into it.
    out_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    threading.Thread(target=_exit_on_eof, args=(0,), name="m1nd-parent-watch", daemon=True).start()
    logging.basicConfig(level=os.environ.get("M1ND_LOG_LEVEL", "WARNING").upper(), stream=sys.stderr,
                        format="m1nd embed-worker: %(levelname)s %(message)s")

    def emit(msg: dict[str, Any]) -> None:
        data = (json.dumps(msg) + "\n").encode()
        with contextlib.suppress(OSError):
            os.write(out_fd, data)

    from m1nd.codegraph.vectors import worker_threads
    from m1nd.config import Settings
    from m1nd.workspace import Workspace

    # the embedder chosen in this process gets the worker's thread count from the start: a model folder, loaded
    # when chosen, is then the only session here (issue 13 item 7)
    os.environ["M1ND_EMBED_THREADS"] = str(worker_threads())
    settings = Settings(home=Path(args.home), workspace_key=Path(args.workspace_key),
                        busy_timeout_ms=args.busy_timeout_ms)
    ws = Workspace(settings, transport="worker")
    return run(ws, emit)


def run(ws: Any, emit: Callable[[dict[str, Any]], None]) -> int:
    """Embed what is missing in the workspace's graph, then re-embed a memory store of another model."""
    from m1nd.codegraph.vectors import code_vectors_for, worker_embedder

    cv = code_vectors_for(ws.graph)
    emb = worker_embedder(cv.emb, int(os.environ.get("M1ND_EMBED_THREADS", "0")) or None)
    if emb is None:
        emit({"event": "done", "done": 0, "total": 0, "rate": 0.0, "error": "no embedding model"})
        return 0
    t0 = time.monotonic()
    state = {"done": 0, "total": 0}

    def progress(done: int, total: int) -> None:
        state.update(done=done, total=total)
        dt = time.monotonic() - t0
        emit({"event": "progress", "done": done, "total": total, "rate": round(done / dt, 2) if dt > 0 else 0.0})

    g = ws.graph.graph()
    if g.n:
        cv.embed_missing(g, emb=emb, commit_every=COMMIT_EVERY, progress=progress, update_index=False)
    hook = getattr(ws.memory, "vector_hook", None)
    if hook is not None and hook.model_state()["changed"]:
        emit({"event": "memory", "done": 0, "total": 0, "rate": 0.0})
        t1 = time.monotonic()
        last = [0.0]

        def memory_progress(done: int, total: int, _title: str) -> None:
            now = time.monotonic()
            if done < total and now - last[0] < MEMORY_PROGRESS_EVERY_S:
                return
            last[0] = now
            dt = now - t1
            emit({"event": "memory", "done": done, "total": total, "rate": round(done / dt, 2) if dt > 0 else 0.0})

        hook.embed(ws.memory, agent=None, all_=True, every_owner=True, progress=memory_progress)
    dt = time.monotonic() - t0
    emit({"event": "done", "done": state["done"], "total": state["total"],
          "rate": round(state["done"] / dt, 2) if dt > 0 else 0.0})
    ws.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
