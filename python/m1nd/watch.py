"""A graph that follows edits: watch the ingested roots and re-ingest what changed, in debounced batches.

One :class:`Watcher` per workspace and process (``m1nd serve --watch``, on by default over stdio, and ``m1nd
watch``). A thread reads file events (``watchfiles``, the only module that imports it); a second thread turns each
batch into one incremental ingest of the roots it touched, so a branch switch or a mass rewrite is one ingest, and
changes that arrive while an ingest runs form the next batch. Ingests of one store are serialised by its ingest
lock (another watcher or a CLI ``ingest`` holding it makes this one wait and retry): every ingest diffs the files
against the store in one transaction, so concurrent watchers never double-write.

What is pending is published in ``watch-<pid>.json`` in the workspace directory, so any process answering from the
same store (a server beside ``m1nd watch``, a CLI ``activate``) can say its graph is behind the files
(:func:`freshness`, the ``stale`` / ``pending_files`` fields of ``activate``).
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from m1nd.errors import BusyError, M1ndError
from m1nd.timeutil import now_ms

log = logging.getLogger(__name__)

STEP_MS = 50  # quiet time that closes a batch: an editor's save is one batch
DEBOUNCE_MS = 800  # the longest one batch keeps collecting while changes keep coming (a checkout, a formatter run)
ROOTS_POLL_MS = 1000  # how often the watched roots are compared with the store's (an ingest may add one)
BUSY_RETRY_S = 0.25
# A batch of at most this many files is ingested in this process: a child's start-up and a second cache-building
# child would cost more than the edit; larger batches (a branch switch) keep the child, whose garbage dies with it.
IN_PROCESS_BATCH = 50  # wait between tries while another process holds the ingest lock
STATE_PREFIX = "watch-"
SHOWN_PENDING = 20  # pending files named in a result (the count is always exact)
# ingest options a root was last ingested with, replayed by the watcher (see ingestion.run_ingest's report)
_WATCHER_IDS = itertools.count(1)
REPLAYED_OPTIONS = ("include_dotfiles", "dotfile_patterns", "exclude", "max_file_bytes", "git_window_days")


def freshness(workdir: Path) -> dict[str, Any]:
    """Whether the graph of this workspace is behind its files, from every live watcher's published state.

    ``{"stale": False}`` when nothing is pending; else ``stale`` true, ``pending_files`` (the first few relative
    paths) and ``pending_count``. State files of watchers that died are removed on the way."""
    out = watch_status(workdir)
    del out["watchers"]
    return out


def watch_status(workdir: Path) -> dict[str, Any]:
    """:func:`freshness` plus ``watchers``: how many live watchers (any process) follow this workspace."""
    pending: set[str] = set()
    checking = False
    watchers = 0
    try:
        entries = list(os.scandir(workdir))
    except OSError:
        return {"stale": False, "watchers": 0}
    for entry in entries:
        if not (entry.name.startswith(STATE_PREFIX) and entry.name.endswith(".json")):
            continue
        try:
            with open(entry.path, encoding="utf-8") as f:
                state = json.load(f)
        except (OSError, ValueError):
            continue  # being replaced right now, or not ours
        if not _alive(int(state.get("pid", 0))):
            try:
                os.unlink(entry.path)
            except OSError:
                pass
            continue
        watchers += 1
        pending.update(state.get("pending") or ())
        checking = checking or bool(state.get("checking"))
    if not pending and not checking:
        return {"stale": False, "watchers": watchers}
    return {
        "stale": True,
        "watchers": watchers,
        "pending_files": sorted(pending)[:SHOWN_PENDING],
        "pending_count": len(pending),
        "stale_hint": (
            "files changed since this graph was built are being re-ingested; results may miss those edits for a moment"
            if pending
            else "the watcher is checking for files changed while no watcher ran"
        ),
    }


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Watcher:
    """Watch the ingested roots of one store and keep its graph in step with their files.

    ``ingest(path, **options)`` runs one incremental ingest and returns its report (``CodeGraph.ingest``, so the
    process's in-memory graph is reloaded too). ``on_report(report_or_error)`` sees every batch's outcome as the
    ``ingest`` tool would answer it (:func:`timed_report`), or ``{"root", "error"}``."""

    def __init__(self, settings: Any, ingest: Callable[..., Any], *,
                 on_report: Callable[[dict[str, Any]], None] | None = None, catch_up: bool = True,
                 step_ms: int = STEP_MS, debounce_ms: int = DEBOUNCE_MS,
                 prime: Callable[[], Any] | None = None,
                 stale_files: Callable[[], dict[str, list[str]]] | None = None) -> None:
        self.settings = settings
        self.ingest = ingest
        # builds what small batches are patched with (CodeGraph.prime_live_roots), before the first batch
        self.prime = prime
        # after priming: root -> files that changed while nothing watched (a cheap catch-up; without catch_up)
        self.stale_files = stale_files
        self.on_report = on_report
        self.step_ms = step_ms
        self.debounce_ms = debounce_ms
        self.stop_event = threading.Event()
        self._cond = threading.Condition()
        self._seq = 0
        # root path -> {relpath: sequence number of its newest change}; "" stands for "check the whole root"
        self._pending: dict[str, dict[str, int]] = {}
        self._busy = False
        # one file per watcher (a process may watch several workspaces, or one twice); readers merge them all
        self._state_path = Path(settings.workspace_dir) / f"{STATE_PREFIX}{os.getpid()}-{next(_WATCHER_IDS)}.json"
        self._threads: list[threading.Thread] = []
        self._local = threading.local()
        self._catch_up = catch_up
        self.batches = 0
        self.ready = threading.Event()  # set once the file watch is installed (tests wait for it)

    # -- life cycle ------------------------------------------------------------------------------------------------
    def start(self) -> Watcher:
        self._publish()  # present (no pending files yet): health counts this watcher
        for name, target in (("m1nd-watch", self._watch_loop), ("m1nd-watch-ingest", self._ingest_loop)):
            t = threading.Thread(target=self._thread(target), name=name, daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self.stop_event.set()
        with self._cond:
            self._cond.notify_all()
        for t in self._threads:
            t.join(timeout)
        try:
            self._state_path.unlink()
        except OSError:
            pass

    def pending(self) -> dict[str, list[str]]:
        with self._cond:
            return {root: sorted(files) for root, files in self._pending.items() if files}

    def idle(self) -> bool:
        """Nothing pending and no ingest running."""
        with self._cond:
            return not self._busy and not any(self._pending.values())

    # -- roots -----------------------------------------------------------------------------------------------------
    def _roots(self) -> list[tuple[str, str | None, bool, dict[str, Any]]]:
        """(path, namespace, is primary, replayed options) of every ingested root."""
        if not Path(self.settings.graph_db).exists():
            return []  # nothing ingested yet (and no store file created by merely looking)
        store = getattr(self._local, "store", None)
        if store is None:  # one connection per thread (both threads read the store), closed when it ends
            from m1nd.store.graph_repo import GraphStore

            store = self._local.store = GraphStore(self.settings.graph_db,
                                                   busy_timeout_ms=self.settings.busy_timeout_ms)
        out = []
        for r in store.roots():
            opts = (r.report or {}).get("options") or {}
            out.append((r.path, r.namespace, r.is_primary,
                        {k: opts[k] for k in REPLAYED_OPTIONS if opts.get(k) is not None}))
        return out

    def _thread(self, target: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                target()
            finally:
                store = getattr(self._local, "store", None)
                if store is not None:
                    store.close()
        return run

    # -- the watch thread ------------------------------------------------------------------------------------------
    def _watch_loop(self) -> None:
        import watchfiles

        home = Path(self.settings.home).resolve()
        default = watchfiles.DefaultFilter()

        def wanted(change: Any, path: str) -> bool:
            p = Path(path)
            if p.is_relative_to(home):  # the store's own files (a home inside the repository would feed back)
                return False
            if ".git" in p.parts:
                # A checkout or commit moves HEAD or a ref after the last work-tree write: history-derived fields
                # (co-change, churn) follow only if that counts too. Never the index: `git status` rewrites it.
                inner = p.parts[len(p.parts) - p.parts[::-1].index(".git"):]
                return inner[:1] in (("HEAD",), ("refs",), ("packed-refs",))
            return default(change, path)

        while not self.stop_event.is_set():
            try:
                roots = sorted({r[0] for r in self._roots() if Path(r[0]).is_dir()})
            except Exception as e:  # noqa: BLE001 — the store busy or being replaced: look again shortly
                log.warning("watch: cannot read the ingested roots (%s); retrying", e)
                self.stop_event.wait(ROOTS_POLL_MS / 1000)
                continue
            if not roots:
                self.ready.set()
                self.stop_event.wait(ROOTS_POLL_MS / 1000)  # nothing ingested yet: wait for the first ingest
                continue
            try:
                gen = watchfiles.watch(*roots, watch_filter=wanted, debounce=self.debounce_ms, step=self.step_ms,
                                       stop_event=self.stop_event, rust_timeout=ROOTS_POLL_MS,
                                       yield_on_timeout=True, raise_interrupt=False)
                self.ready.set()
                for changes in gen:
                    if changes:
                        self._add(roots, [p for _c, p in changes])
                    if sorted({r[0] for r in self._roots() if Path(r[0]).is_dir()}) != roots:
                        break  # a root was added or removed: watch the new set
            except (OSError, RuntimeError) as e:  # a root vanished, or the OS refused a watch
                log.warning("watching %s failed (%s); retrying", ", ".join(roots), e)
                self.stop_event.wait(ROOTS_POLL_MS / 1000)

    def _add(self, roots: list[str], paths: list[str]) -> None:
        with self._cond:
            for p in paths:
                root = max((r for r in roots if p == r or p.startswith(r.rstrip("/") + "/")), key=len, default=None)
                if root is None:
                    continue
                rel = os.path.relpath(p, root)
                self._pending.setdefault(root, {})[rel if rel != "." else ""] = self._next()
            self._cond.notify_all()
        self._publish()

    def _next(self) -> int:
        self._seq += 1
        return self._seq

    # -- the ingest thread -----------------------------------------------------------------------------------------
    def _ingest_loop(self) -> None:
        if self.prime is not None:
            with self._cond:
                self._busy = True  # idle() is false until the fast path is ready
            try:
                self.prime()
                # files edited (or removed) while nothing watched: a batch of their own, patched when it can be
                stale = self.stale_files() if self.stale_files is not None and not self._catch_up else {}
                if stale:
                    with self._cond:
                        for root, rels in stale.items():
                            for rel in rels:
                                self._pending.setdefault(root, {})[rel] = self._next()
                    self._publish()
            except Exception:
                log.exception("watch: preparing the fast path failed; batches ingest their roots")
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
        if self._catch_up:
            # files may have changed while no watcher ran: one ordinary incremental ingest per root finds them
            with self._cond:
                for path, _ns, _primary, _opts in self._roots():
                    self._pending.setdefault(path, {})[""] = self._next()
            self._publish()
        while not self.stop_event.is_set():
            with self._cond:
                while not self.stop_event.is_set() and not any(self._pending.values()):
                    self._cond.wait(1.0)
                if self.stop_event.is_set():
                    return
                batch = {root: (max(files.values()), sorted(files), "" in files)
                         for root, files in self._pending.items() if files}
                self._busy = True
            try:
                self._run_batch(batch)
            except Exception:
                log.exception("watch: a batch failed")
            finally:
                with self._cond:
                    self._busy = False
                    for root, (upto, _n, _whole) in batch.items():
                        files = self._pending.get(root, {})
                        for rel in [r for r, s in files.items() if s <= upto]:
                            del files[rel]
                    self._cond.notify_all()
                self._publish()

    def _run_batch(self, batch: dict[str, tuple[int, list[str], bool]]) -> None:
        known = {r[0]: r for r in self._roots()}
        # the primary root first: re-ingesting it replaces the graph, after which secondary roots are merged again
        order = sorted(batch, key=lambda p: (not known.get(p, (p, None, False, {}))[2], p))
        for path in order:
            root = known.get(path)
            if root is None:
                continue  # the root was dropped meanwhile
            _upto, files, whole = batch[path]
            small = len(files) <= IN_PROCESS_BATCH and not whole and not os.environ.get("M1ND_INGEST_PROCESS")
            # a small batch names its files: the graph patches them in place when that is exact
            self._ingest_root(root, process="inprocess" if small else None, changed=files if small else None)
            if small:
                _release_garbage()
            if root[2]:
                after = {r[0] for r in self._roots()}
                for lost in [r for p, r in known.items() if p not in after and not r[2] and p != path]:
                    self._ingest_root(lost)
        self.batches += 1

    def _ingest_root(self, root: tuple[str, str | None, bool, dict[str, Any]], process: str | None = None,
                     changed: list[str] | None = None) -> None:
        path, namespace, primary, opts = root
        args = dict(opts)
        if process is not None:
            args["process"] = process
        if changed is not None:
            args["changed"] = changed
        if not primary:
            args.update(mode="merge", namespace=namespace)
        while not self.stop_event.is_set():
            started = time.perf_counter()
            try:
                report = self.ingest(path, **args)
            except BusyError:  # another watcher or a CLI ingest holds the lock: ours follows it
                self.stop_event.wait(BUSY_RETRY_S)
                continue
            except M1ndError as e:
                log.warning("watch: ingest of %s failed: %s", path, e.message)
                self._report({"root": path, "error": e.to_dict()})
                return
            except Exception as e:
                log.exception("watch: ingest of %s failed", path)
                self._report({"root": path, "error": {"code": "internal", "message": f"{type(e).__name__}: {e}"}})
                return
            self._report(timed_report(report, started))
            return

    def _report(self, report: dict[str, Any]) -> None:
        if self.on_report is not None:
            try:
                self.on_report(report)
            except Exception:
                log.exception("watch: reporting a batch failed")

    # -- published state -------------------------------------------------------------------------------------------
    def _publish(self) -> None:
        if self.stop_event.is_set():
            return  # stopped: the state file is gone for good (an ingest finishing late must not bring it back)
        with self._cond:
            pending = sorted({rel for files in self._pending.values() for rel in files if rel})
            checking = any("" in files for files in self._pending.values())
        state = {"pid": os.getpid(), "pending": pending, "checking": checking, "updated_ms": now_ms()}
        tmp = self._state_path.with_suffix(f".{threading.get_ident()}.tmp")
        try:
            self._state_path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(state), encoding="utf-8")
            os.replace(tmp, self._state_path)  # readers see the old state or the new one, never half of one
        except OSError as e:
            log.warning("watch: cannot publish the pending state (%s)", e)


def _release_garbage() -> None:
    """Hand the in-process ingest's temporaries back to the OS (glibc keeps freed arenas otherwise), so a serving
    process that follows many edits stays near the size of the graph it holds."""
    import gc

    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")  # runs ldconfig: once per process
    if not name or "libc.so" not in name:
        return None
    try:
        return ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def timed_report(report: Any, started: float) -> dict[str, Any]:
    """An ingest report (:class:`m1nd.codegraph.results.IngestReport`) as the ``ingest`` tool sends it: with the
    duration since ``started`` (``time.perf_counter()``) before ``warnings``, as the tool declares it
    (``elapsed_before``). What ``m1nd watch`` prints; this module runs below the tool layer, so it places it itself."""
    elapsed = round((time.perf_counter() - started) * 1000, 1)
    out: dict[str, Any] = {}
    for key, value in report.to_dict().items():
        if key == "warnings":
            out["elapsed_ms"] = elapsed
        out[key] = value
    return out


def start_for_workspace(ws: Any) -> Watcher:
    """The watcher of a serving workspace: ingests through its CodeGraph, so the server answers from the new
    generation as soon as a batch is in."""

    def ingest(path: str, **opts: Any) -> Any:
        return ws.graph.ingest(path, **opts)

    def on_report(report: dict[str, Any]) -> None:
        if "error" not in report and report.get("changed"):
            log.info("watch: %s re-ingested (%d files parsed, generation %s)", report.get("root"),
                     report.get("files_parsed", 0), report.get("graph_generation"))

    # catch_up off: no whole-root ingest at start; files changed while no watcher ran are found by one walk of
    # each kept root and form the first batch (patched when only existing files were edited)
    return Watcher(ws.settings, ingest, on_report=on_report, catch_up=False,
                   prime=ws.graph.prime_live_roots, stale_files=lambda: ws.graph.live_roots().stale_files()).start()
