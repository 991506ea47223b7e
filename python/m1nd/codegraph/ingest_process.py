"""The ingest's processes: the ingest child, the cache child, and what passes between them.

A large tree is ingested in a short-lived spawned child (:func:`run_ingest_isolated`), so the hundreds of MB of
short-lived objects it makes go back to the OS when it exits; a second child builds the new generation's cache
(:class:`CacheChild`). The two overlap on a 2-core machine: the cache child starts once extraction is done (the
ingest child then uses one core), and after a fresh ingest it indexes the node rows the ingest child sends it ahead
of its write (:class:`ChildHooks`), so the text indexes are built while the rows are written.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from m1nd.codegraph.ingestion import run_ingest
from m1nd.codegraph.results import IngestReport
from m1nd.fork_safety import fork_is_safe

if TYPE_CHECKING:
    from m1nd.config import Settings

log = logging.getLogger(__name__)


class ChildHooks:
    """What the ingest child does at three points of :func:`m1nd.codegraph.ingestion.run_ingest`: tell the parent
    that extraction is done, send the rows about to be written to the cache child, and keep what the ingest built
    alive until the process ends (which then skips freeing it: :meth:`end_without_teardown`)."""

    def __init__(self, extracted: Any, nodes_out: Any, walked: tuple[tuple[Any, ...], Any] | None = None) -> None:
        self._extracted = extracted  # a spawn-context Event the parent waits on
        self._nodes_out = nodes_out  # the pipe to the cache child (None: no cache child reads)
        self._walked = walked  # (walk arguments, WalkResult) of the parent's walk (_looks_large)
        self._kept: list[Any] = []
        self._sent: tuple[int, dict[str, tuple[Any, ...]]] | None = None  # (root id, rows) sent ahead
        self._sending: threading.Thread | None = None
        #: (generation, node count) of the commit when the rows sent ahead are exactly the table it committed
        self.sent_as_written: tuple[int, int] | None = None

    def walked(self, *key: Any) -> Any:
        """The parent's walk of the tree (it walked it to decide on this child) when it was made with the same
        arguments ``key`` (root, include_dotfiles, dotfile_patterns, exclude, max_file_bytes), else None; once. The
        parent forks this child right after its walk: walking again found the same files 0.05-0.2 s later."""
        got, self._walked = self._walked, None
        if got is None or got[0] != key:
            return None
        return got[1]

    def extracted(self) -> None:
        self._extracted.set()

    def send_ahead(self, rid: int, new_nodes: dict[str, tuple[Any, ...]], file_rows: list[list[Any]],
                   whole: bool) -> threading.Thread | None:
        """Give the cache child the node rows and term blobs being written (``whole``: they are the entire graph
        once committed), else None; once per ingest. It builds the text indexes from them during the write (the
        write uses one core) and keeps them only if the table is this one once committed (:meth:`written`, else it
        reads the table back and compares). Returns the sending thread (joined before the commit's end; the one
        started before when sent already) or None."""
        import pickle

        out, self._nodes_out = self._nodes_out, None
        if out is None:
            return self._sending
        if whole:
            self._sent = (rid, new_nodes)
        payload = pickle.dumps((list(new_nodes.values()), [(rid, row[0], row[10]) for row in file_rows]) if whole
                               else None, protocol=pickle.HIGHEST_PROTOCOL)

        def send() -> None:
            try:
                out.send_bytes(payload)
            except OSError:
                pass  # no cache child reads (it could not start): it builds from the store as before
            finally:
                out.close()

        # the pipe drains as the cache child reads; meanwhile this thread waits without the GIL and the write goes on
        thread = threading.Thread(target=send, name="m1nd-send-ahead", daemon=True)
        thread.start()
        self._sending = thread
        return thread

    def written(self, rid: int, new_nodes: dict[str, tuple[Any, ...]], gen: int, total: int, *,
                every_row_created: bool) -> None:
        """The write of generation ``gen`` (in its transaction) inserted ``new_nodes`` under root ``rid``, and
        with ``every_row_created`` they are the whole table of ``total`` nodes: when they are the rows sent ahead,
        the cache child is told so (:attr:`sent_as_written`) and skips reading the table back."""
        sent = self._sent
        same = sent is not None and sent[0] == rid and (sent[1] is new_nodes or sent[1] == new_nodes)
        self.sent_as_written = (gen, total) if same and every_row_created and total == len(new_nodes) else None

    def retain(self, *built: Any) -> None:
        self._kept.append(built)

    def end_without_teardown(self) -> None:
        """The ingest child's exit (at exit): what the ingest built (hundreds of MB of small objects on the
        stdlib) goes back to the OS at once instead of being freed object by object (~1 s of the wait for the new
        graph on the stdlib: once when run_ingest returns, again in interpreter finalisation). Everything durable
        is committed and the store closed by then."""
        import atexit

        from m1nd.process_exit import exit_process

        atexit.unregister(self.end_without_teardown)
        exit_process(0)


#: in the ingest child: its hooks, made by the pool's initializer (the child's own process state)
_HOOKS: ChildHooks | None = None


def _start_ingest_child(extracted: Any, nodes_out: Any = None, nodes_in: Any = None,
                        walked: tuple[tuple[Any, ...], Any] | None = None) -> None:
    """Initializer of the ingest child (an event or a pipe can only reach a process when it starts). ``nodes_in``,
    the cache child's end of the pipe, is closed here: with a copy of it alive in this process, a send to a cache
    child that died would wait forever instead of failing."""
    import atexit

    if nodes_in is not None:
        nodes_in.close()
    global _HOOKS
    _HOOKS = ChildHooks(extracted, nodes_out, walked)
    atexit.register(_HOOKS.end_without_teardown)


def _child_ingest(settings: Settings, path: str, opts: dict[str, Any]) -> dict[str, Any]:
    """Entry point of the ingest child process: returns {"report": …} or {"error": …} (never raises)."""
    from m1nd.errors import M1ndError
    from m1nd.store.graph_repo import GraphStore

    logging.basicConfig(stream=sys.stderr, level=os.environ.get("M1ND_LOG_LEVEL", "WARNING").upper())
    # no cyclic collection after the ingest either (run_ingest leaves the collector as it found it): its first pass
    # would walk everything the hooks retain (0.6 s on the stdlib) for nothing
    gc.disable()
    store = GraphStore(settings.graph_db, busy_timeout_ms=settings.busy_timeout_ms)
    try:
        report = run_ingest(store, path, hooks=_HOOKS, **opts)
        _report_peak("ingest")
    except M1ndError as e:
        return {"error": e.to_dict(), "kind": type(e).__name__}
    except Exception as e:
        log.exception("ingest failed")
        return {"error": {"code": "internal", "message": f"internal error ({type(e).__name__}): {e}",
                          "recover": "details were logged to stderr; retry or report", "details": {}},
                "kind": "M1ndError"}
    finally:
        store.close()
    return {"report": report, "sent_as_written": _HOOKS.sent_as_written if _HOOKS is not None else None}


def _report_peak(what: str) -> None:
    if os.environ.get("M1ND_PROGRESS_RSS") == "1":
        import resource

        print(f"m1nd {what}: peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10} MB", file=sys.stderr)


def walk_key(root: Path, opts: dict[str, Any]) -> tuple[Any, ...]:
    """The arguments of :func:`m1nd.ingest.walker.walk` an ingest with options ``opts`` walks ``root`` with (the
    defaults are :func:`m1nd.codegraph.ingestion.run_ingest`'s)."""
    return (root, bool(opts.get("include_dotfiles", False)), tuple(opts.get("dotfile_patterns") or ()),
            tuple(opts.get("exclude") or ()), opts.get("max_file_bytes", 1 << 20))


def _looks_large(path: Path, opts: dict[str, Any], threshold: int = 300) -> tuple[bool, Any]:
    """Whether the tree at ``path`` has ``threshold`` files or more, and the walk that told (None when there was
    none): the ingest child starts from it (:meth:`ChildHooks.walked`) instead of walking the tree again."""
    from m1nd.ingest import walker

    if not path.is_dir():
        return False, None
    key = walk_key(path, opts)
    try:
        walked = walker.walk(path, include_dotfiles=key[1], dotfile_patterns=key[2], exclude=key[3],
                             max_file_bytes=key[4])
    except OSError:
        return False, None
    return len(walked.files) >= threshold, (key, walked)


def _ingest_context(spawn: Any, fork: bool) -> Any:
    """How the ingest child starts: forked (``fork``: the caller holds no graph whose pages the child would share
    and count in its peak memory) from a process without other threads (the CLI), so it starts at once with the
    modules loaded here (spawned, its start-up and imports cost ~0.7 s before the ingest begins); spawned from a
    server, whose threads could hold locks a fork would copy. A forked child never touches the database connections
    it inherits and ends with ``os._exit``, as do the extraction workers it forks itself."""
    import multiprocessing

    if fork and fork_is_safe():
        return multiprocessing.get_context("fork")
    return spawn


def run_ingest_isolated(settings: Settings, path: str, opts: dict[str, Any], *,
                        build_cache: Callable[[Settings, Any, tuple[int, int] | None], None] | None = None,
                        prebuild: Callable[[list[tuple[Any, ...]], list[Any]], Any] | None = None,
                        process: str | None = None, live: Any = None, fork: bool = False) -> IngestReport:
    """Run the ingest in a short-lived child process.

    Parsing a large tree allocates a few hundred MB of short-lived Python objects (extraction results, resolver
    tables); in a child they are returned to the OS when it exits, so a long-running server's footprint stays that of
    the graph it holds. ``M1ND_INGEST_PROCESS`` = ``auto`` (default: a child for trees of 300+ files), ``child``
    or ``inprocess``. ``build_cache`` (a module-level function, run in a second child after a changed ingest)
    builds the new generation's arrays; the graph service passes it, so this module never imports that service.
    ``prebuild(node rows, term blobs)`` (module-level too) runs in that child while the ingest child writes a fresh
    graph; what it returns is ``build_cache``'s second argument (None when nothing was sent ahead), its third is
    :attr:`ChildHooks.sent_as_written` of the ingest child.
    ``live`` (a :class:`m1nd.codegraph.patch.LiveRoots`): an in-process ingest leaves its resolver there.
    ``fork``: the child may be forked from this process (see :func:`_ingest_context`).
    """
    import concurrent.futures
    import multiprocessing

    from m1nd import errors
    from m1nd.store.graph_repo import GraphStore

    abs_path = str(Path(path).expanduser() if Path(path).expanduser().is_absolute() else Path.cwd() / path)
    mode = process or os.environ.get("M1ND_INGEST_PROCESS", "auto")  # auto | child | inprocess
    walked = None
    if mode == "auto":
        # Small trees are ingested in this process: a child's start-up would cost more than the garbage it saves.
        large, walked = _looks_large(Path(abs_path), opts)
        mode = "child" if large else "inprocess"
    if mode == "inprocess":
        store = GraphStore(settings.graph_db, busy_timeout_ms=settings.busy_timeout_ms)
        try:
            if live is None:
                return run_ingest(store, abs_path, **opts)
            kept: dict[str, Any] = {}  # the resolver stays with ``live`` (m1nd.codegraph.patch.LiveRoots)
            report = run_ingest(store, abs_path, keep=kept, **opts)
            live.keep(store, kept)
            return report
        finally:
            store.close()
    ctx = multiprocessing.get_context("spawn")
    extracted = ctx.Event()
    # the ingest child's rows, sent ahead of its write, reach the cache child directly through this pipe
    nodes_in, nodes_out = ctx.Pipe(duplex=False) if build_cache is not None and prebuild is not None else (None, None)
    cache_child: CacheChild | None = None
    died = errors.M1ndError("internal error: the ingest process died (out of memory or killed); the previous "
                            "graph is unchanged", recover="retry; exclude large generated directories")
    try:
        child_ctx = _ingest_context(ctx, fork)
        # a forked child inherits the walk; a spawned one would receive it pickled, no cheaper than walking again
        if child_ctx is ctx:
            walked = None
        with concurrent.futures.ProcessPoolExecutor(1, mp_context=child_ctx, initializer=_start_ingest_child,
                                                    initargs=(extracted, nodes_out, nodes_in, walked)) as ex:
            fut = ex.submit(_child_ingest, settings, abs_path, opts)  # starts the child (it holds its own copy)
            try:
                if nodes_out is not None:
                    nodes_out.close()
                if build_cache is not None:
                    # Once the ingest child has extracted (its resolution and write use one core), the cache child
                    # starts on the other: its start-up and imports (~0.7 s) are done when the new graph is
                    # written, and it indexes the rows the ingest child sends ahead of its write.
                    while not fut.done() and not extracted.wait(0.05):
                        pass
                    if not fut.done():
                        cache_child = CacheChild(ctx, build_cache, prebuild, nodes_in)
            finally:
                if nodes_in is not None:
                    nodes_in.close()  # the cache child has its own copy; without one, the ingest child's send fails
            out = fut.result()
        if build_cache is not None and "report" in out and out["report"].changed:
            (cache_child or CacheChild(ctx, build_cache)).run(settings, died, out.get("sent_as_written"))
            cache_child = None
    except concurrent.futures.process.BrokenProcessPool as e:
        raise died from e
    finally:
        if cache_child is not None:
            cache_child.close()  # the ingest failed or changed nothing: no cache to build
    if "error" in out:
        e = out["error"]
        cls = getattr(errors, out.get("kind", "M1ndError"), errors.M1ndError)
        if not (isinstance(cls, type) and issubclass(cls, errors.M1ndError)):
            cls = errors.M1ndError
        raise cls(e["message"], recover=e.get("recover"), details=e.get("details"), code=e.get("code"))
    report: IngestReport = out["report"]
    return report


class CacheChild:
    """The process that builds the new generation's cache (``build_cache``), started before it is needed: the
    function reaches it pickled, so its module and what that imports are loaded while the ingest child works; it
    then waits for the settings (or for the pipe to close: nothing to build), and ends at once when it is done."""

    def __init__(self, ctx: Any, build_cache: Callable[[Settings, Any, tuple[int, int] | None], None],
                 prebuild: Callable[[list[tuple[Any, ...]], list[Any]], Any] | None = None,
                 nodes_in: Any = None) -> None:
        self._conn, theirs = ctx.Pipe()
        self._proc = ctx.Process(target=_cache_child_main, args=(theirs, build_cache, prebuild, nodes_in),
                                 name="m1nd-cache")
        self._proc.start()
        theirs.close()

    def run(self, settings: Settings, died: Exception, written: tuple[int, int] | None = None) -> None:
        """Build the cache now; ``died`` is raised when the process ends without saying it is done. ``written``:
        :attr:`ChildHooks.sent_as_written` of the ingest child."""
        try:
            self._conn.send((settings, written))
            self._conn.recv()
        except (EOFError, OSError) as e:
            raise died from e
        finally:
            self.close()

    def close(self) -> None:
        self._conn.close()
        self._proc.join()


def _cache_child_main(conn: Any, build_cache: Callable[[Settings, Any, tuple[int, int] | None], None],
                      prebuild: Callable[[list[tuple[Any, ...]], list[Any]], Any] | None, nodes_in: Any) -> None:
    prebuilt = None
    if nodes_in is not None:
        # first what the ingest child sends ahead of its write (None, or nothing when it ends before writing)
        try:
            ahead = nodes_in.recv()
        except EOFError:
            ahead = None
        nodes_in.close()
        if ahead is not None and prebuild is not None:
            try:
                prebuilt = prebuild(*ahead)
            except Exception:
                log.exception("indexing the rows sent ahead failed; the cache is built from the store")
            del ahead
    try:
        settings, written = conn.recv()
    except EOFError:
        return
    # never raises: it logs its own failure (the graph is served without a cache)
    build_cache(settings, prebuilt, written)
    conn.send("done")
    # The parent waits for this process to end: interpreter finalisation would first free what the build left
    # (the prebuilt table and indexes: ~0.07 s on the stdlib). Everything is written and closed by now.
    conn.close()
    from m1nd.process_exit import exit_process

    exit_process(0)
