"""The ingest's helper processes give what the one-process paths give: the blobs compressed in the extraction
workers, the trigram index built in a fork beside the lexical one, the cache child started ahead of time."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from m1nd.codegraph import ingestion, text_indexes
from m1nd.codegraph.ingest_process import CacheChild
from m1nd.codegraph.ingestion import stored_forms
from m1nd.errors import M1ndError
from m1nd.fork_safety import fork_is_safe
from m1nd.graph.lexicon import TermIndex, node_terms_from_blobs
from m1nd.graph.semantic import TrigramIndex
from m1nd.ingest.extract import extract_many
from m1nd.tools.registry import call_tool


def _ingested(ws, repo):
    r = call_tool(ws, "ingest", {"agent_id": "t", "path": str(repo)})
    assert not r.is_error, r.structured
    return ws.graph.graph()


def _same_arrays(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]), k


def test_blobs_compressed_in_the_workers_equal_the_parents(repo) -> None:
    items = [(p.relative_to(repo).as_posix(), p.read_bytes(), "python") for p in sorted(repo.rglob("*.py"))]
    assert len(items) >= 5
    here = [stored_forms(b) for b in extract_many(items, workers=1)]
    there = extract_many(items, workers=2, finish=stored_forms)
    assert there == here
    blob, packed, terms = here[0]
    assert "terms" not in blob and ingestion._decompress(packed) == blob
    assert set(ingestion._decompress(terms)) == {"file", "defs"}


def _side_by_side(graph_db: str, fail_in_fork: bool) -> dict:
    """In a fresh process (one thread, so the build may fork): the text indexes built side by side vs one after
    the other; ``fail_in_fork`` makes the trigram build fail in the fork."""
    import io
    import logging

    from m1nd.graph.nodes import NodeTable
    from m1nd.store.graph_repo import GraphStore

    store = GraphStore(graph_db)
    cols, _ = store.load_columns()
    nodes = NodeTable.from_columns(cols)
    lexicon_pids = []

    def lexicon() -> TermIndex:
        lexicon_pids.append(os.getpid())
        return TermIndex.build(nodes, node_terms_from_blobs(nodes, store.extract_terms()))

    real, here = TrigramIndex.build, os.getpid()
    if fail_in_fork:
        def only_here(t):
            if os.getpid() != here:
                raise MemoryError("no room")
            return real(t)

        TrigramIndex.build = staticmethod(only_here)  # this throwaway process only
    log = io.StringIO()
    logging.getLogger("m1nd.codegraph.text_indexes").addHandler(logging.StreamHandler(log))
    try:
        tri_a, lex_a = text_indexes.build(nodes, lexicon, side_by_side=True)
        tri_b, lex_b = text_indexes.build(nodes, lexicon, side_by_side=False)
    finally:
        TrigramIndex.build = real
        store.close()
    return {"could_fork": fork_is_safe(), "lexicon_here": lexicon_pids == [here] * 2, "log": log.getvalue(),
            "tri": (tri_a.arrays(), tri_b.arrays(), real(nodes).arrays()), "lex": (lex_a.arrays(), lex_b.arrays())}


def _in_fresh_process(fn, *args):
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=ctx) as pool:
        return pool.submit(fn, *args).result()


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")
@pytest.mark.parametrize("fail_in_fork", [False, True], ids=["forked", "fork-fails"])
def test_trigram_index_built_beside_the_lexical_one_is_the_same(repo, ws_factory, fail_in_fork) -> None:
    ws = ws_factory(repo)
    _ingested(ws, repo)
    got = _in_fresh_process(_side_by_side, str(ws.settings.graph_db), fail_in_fork)
    assert got["could_fork"] and got["lexicon_here"]  # the lexical index is always built in the process itself
    side, sequential, direct = got["tri"]
    _same_arrays(side, sequential)
    _same_arrays(side, direct)
    _same_arrays(*got["lex"])
    # a failing fork is reported and the index built in the process instead
    assert ("MemoryError: no room" in got["log"]) == fail_in_fork


def test_with_other_threads_the_indexes_are_built_one_after_the_other(repo, ws_factory, monkeypatch) -> None:
    import threading

    ws = ws_factory(repo)
    g = _ingested(ws, repo)
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert not fork_is_safe()
        monkeypatch.setattr(multiprocessing, "get_context", lambda *a: pytest.fail("forked beside a thread"))
        tri, _ = text_indexes.build(g.nodes, lambda: None, side_by_side=True)
    finally:
        stop.set()
        t.join()
    _same_arrays(tri.arrays(), TrigramIndex.build(g.nodes).arrays())


def _dies(settings, prebuilt, written) -> None:
    os._exit(3)


def test_cache_child_closed_unused_exits_and_a_dead_one_is_reported(tmp_path) -> None:
    ctx = multiprocessing.get_context("spawn")
    idle = CacheChild(ctx, _dies)
    idle.close()  # nothing to build: the child sees the pipe close and ends
    assert idle._proc.exitcode == 0
    dead = CacheChild(ctx, _dies)
    with pytest.raises(M1ndError, match="died"):
        dead.run(None, M1ndError("the process died"))
    assert dead._proc.exitcode == 3


def test_text_indexes_of_the_rows_sent_ahead_are_the_stores(git_repo, ws_factory) -> None:
    """The cache child's early build (node rows as the ingest child holds them, in its order, and the term blobs
    it writes) gives the indexes and table a build from the store gives; another table is refused."""
    import random

    from m1nd.graph.nodes import NodeTable
    from m1nd.store.graph_repo import NODE_COLUMNS

    ws = ws_factory(git_repo)
    g = _ingested(ws, git_repo)
    store = ws.graph.store
    cols, _ = store.load_columns()
    rows = list(zip(*(cols[k] for k in NODE_COLUMNS)))
    random.Random(7).shuffle(rows)
    terms = store.db.all("SELECT root_id, relpath, terms_blob FROM files ORDER BY relpath DESC")
    assert len(rows) > 20 and any(t for _, _, t in terms)
    pre = text_indexes.prebuild(rows, terms)
    _same_arrays(pre.trigram.arrays(), g.trigram.arrays())
    _same_arrays(pre.lexicon.arrays(), g.lexicon.arrays())
    _same_arrays(pre.nodes.arrays(), NodeTable.from_columns(cols).arrays())
    assert text_indexes.prebuilt_for(pre, cols) is pre
    cols["doc"][3] = (cols["doc"][3] or "") + " changed"
    assert text_indexes.prebuilt_for(pre, cols) is None
    assert text_indexes.prebuilt_for(None, cols) is None


def _prebuild_and_mark(rows, terms):
    from m1nd.codegraph.service import prebuild_in_child

    with open(os.environ["M1ND_TEST_AHEAD_MARK"], "a") as f:
        f.write(f"{len(rows)} {len(terms)}\n")
    return prebuild_in_child(rows, terms)


def _assert_cache_is_the_stores(ws) -> None:
    """The cache a child ingest wrote is byte for byte the one this process builds from the store afterwards."""
    from m1nd.codegraph.service import CodeGraph
    from m1nd.graph import cache

    gen, _ = ws.graph.store.generations()
    written = cache.path_for(ws.graph.workdir, gen).read_bytes()
    cache.path_for(ws.graph.workdir, gen).unlink()
    cg = CodeGraph(ws.settings)
    try:
        cg.build_cache()  # from the store, in this process
    finally:
        cg.store.close()
    assert cache.path_for(ws.graph.workdir, gen).read_bytes() == written


def test_child_ingest_sends_its_rows_ahead_and_the_cache_is_the_stores(git_repo, ws_factory, tmp_path,
                                                                       monkeypatch) -> None:
    """A fresh ingest in a child process: the cache child receives every node row and file ahead of the write,
    and the cache it writes from them is byte for byte the one built from the store afterwards. An unchanged
    re-ingest sends nothing ahead (its files are reused)."""
    from m1nd.codegraph.ingest_process import run_ingest_isolated
    from m1nd.codegraph.service import build_cache_in_child

    mark = tmp_path / "ahead.txt"
    monkeypatch.setenv("M1ND_TEST_AHEAD_MARK", str(mark))  # inherited by the spawned cache child
    ws = ws_factory(git_repo)
    settings = ws.settings
    report = run_ingest_isolated(settings, str(git_repo), {"embed": "skip"}, build_cache=build_cache_in_child,
                                 prebuild=_prebuild_and_mark, process="child")
    assert report.changed
    n_nodes, _ = ws.graph.store.counts()
    n_files = len(ws.graph.store.files(ws.graph.store.roots()[0].id))
    assert mark.read_text().split() == [str(n_nodes), str(n_files)]
    _assert_cache_is_the_stores(ws)
    again = run_ingest_isolated(settings, str(git_repo), {"embed": "skip"}, build_cache=build_cache_in_child,
                                prebuild=_prebuild_and_mark, process="child")
    assert not again.changed and mark.read_text().split() == [str(n_nodes), str(n_files)]



def _dies_on_rows(rows, terms):
    os._exit(3)


def test_a_cache_child_dying_on_the_rows_sent_ahead_is_reported(git_repo, ws_factory) -> None:
    """The cache child dies while indexing the rows sent ahead: the ingest is reported as for any cache child that
    dies, and the graph itself was written."""
    from m1nd.codegraph.ingest_process import run_ingest_isolated
    from m1nd.codegraph.service import build_cache_in_child

    ws = ws_factory(git_repo)
    with pytest.raises(M1ndError, match="died"):
        run_ingest_isolated(ws.settings, str(git_repo), {"embed": "skip"}, build_cache=build_cache_in_child,
                            prebuild=_dies_on_rows, process="child", fork=True)
    assert ws.graph.store.counts()[0] > 20


def _send_big_ahead() -> bool:
    from m1nd.codegraph import ingest_process

    rows = {f"n{k}": (f"n{k}", f"text {k} " * 20) for k in range(5000)}  # ~1 MB: far past a pipe's buffer
    sending = ingest_process._HOOKS.send_ahead(1, rows, [], True)
    sending.join(30)
    return not sending.is_alive()


def _rows_sent_ahead_to_no_reader(method: str) -> bool:
    from m1nd.codegraph import ingest_process

    ctx = multiprocessing.get_context(method)
    receive, send = ctx.Pipe(duplex=False)
    with ProcessPoolExecutor(1, mp_context=ctx, initializer=ingest_process._start_ingest_child,
                             initargs=(ctx.Event(), send, receive)) as pool:
        fut = pool.submit(_send_big_ahead)
        send.close()
        receive.close()  # this process's copies: nobody reads now
        return fut.result(timeout=120)


@pytest.mark.parametrize("method", [m for m in ("fork", "spawn") if m in multiprocessing.get_all_start_methods()])
def test_rows_sent_ahead_to_no_reader_fail_instead_of_waiting(method) -> None:
    """The ingest child keeps no copy of the cache child's end of the pipe (a forked one inherits it): when no cache
    child reads (it died, or never started), the send fails at once and the write can finish. Forked from a fresh
    process, as m1nd forks: this test process may hold ONNX Runtime's threads by now (m1nd.fork_safety)."""
    assert _in_fresh_process(_rows_sent_ahead_to_no_reader, method)


def test_the_ingest_child_starts_from_its_parents_walk_of_the_same_tree(tmp_path) -> None:
    """The parent walks the tree to decide on a child (``_looks_large``); a forked child is handed that walk and uses
    it only when its own walk would have had the same arguments, once."""
    from m1nd.codegraph import ingest_process
    from m1nd.ingest import walker

    for k in range(3):
        (tmp_path / f"m{k}.py").write_text(f"def f{k}():\n    pass\n")
    large, walked = ingest_process._looks_large(tmp_path, {"exclude": ["m2.py"]}, threshold=2)
    assert large and walked is not None
    key, result = walked
    assert [f.relpath for f in result.files] == ["m0.py", "m1.py"]
    assert [f.relpath for f in walker.walk(tmp_path, exclude=["m2.py"]).files] == ["m0.py", "m1.py"]
    hooks = ingest_process.ChildHooks(None, None, walked)
    assert hooks.walked(tmp_path, False, (), (), 1 << 20) is None  # other arguments (no exclude): walk again
    hooks = ingest_process.ChildHooks(None, None, walked)
    assert hooks.walked(*key) is result
    assert hooks.walked(*key) is None  # once


def _build_and_mark(settings, prebuilt, written) -> None:
    """build_cache_in_child, noting what the handshake gave: the ingest's (generation, count), and whether the
    table was taken as committed without reading it back (this spawned child's own module state)."""
    from m1nd.codegraph.service import build_cache_in_child

    real = text_indexes.committed_ids

    def noted(pre, store, gen):
        got = real(pre, store, gen)
        with open(os.environ["M1ND_TEST_AHEAD_MARK"], "a") as f:
            f.write(f"{written} {got is not None}\n")
        return got

    text_indexes.committed_ids = noted
    build_cache_in_child(settings, prebuilt, written)


def test_a_fresh_graph_is_taken_as_committed_without_reading_it_back(git_repo, ws_factory, tmp_path,
                                                                      monkeypatch) -> None:
    """A fresh ingest's write creates every node: the ingest child says so (generation, count) and the cache child
    uses the rows it was sent without reading the node table back; the cache is byte for byte the store's. A
    re-ingest that keeps nodes says nothing, and the table is read back and compared as before."""
    from m1nd.codegraph.ingest_process import run_ingest_isolated
    from m1nd.codegraph.service import prebuild_in_child

    mark = tmp_path / "handshake.txt"
    monkeypatch.setenv("M1ND_TEST_AHEAD_MARK", str(mark))
    ws = ws_factory(git_repo)
    settings = ws.settings

    def ingest(opts):
        report = run_ingest_isolated(settings, str(git_repo), {"embed": "skip", **opts}, build_cache=_build_and_mark,
                                     prebuild=prebuild_in_child, process="child")
        _assert_cache_is_the_stores(ws)
        return report

    first = ingest({})
    n_nodes, _ = ws.graph.store.counts()
    assert first.nodes["created"] == n_nodes
    assert mark.read_text().splitlines() == [f"({first.graph_generation}, {n_nodes}) True"]
    (git_repo / "src/shop/extra.py").write_text("def added():\n    return 1\n")
    again = ingest({"incremental": False})  # every file extracted again (rows sent ahead), most nodes kept
    assert again.changed and 0 < again.nodes["created"] < again.nodes["total"]
    assert mark.read_text().splitlines()[1:] == ["None False"]


def test_committed_ids_need_the_generation_the_count_the_order_and_the_types(git_repo, ws_factory) -> None:
    from m1nd.store.graph_repo import NODE_COLUMNS

    ws = ws_factory(git_repo)
    _ingested(ws, git_repo)
    store = ws.graph.store
    gen, _ = store.generations()
    cols, _ = store.load_columns()
    terms = store.db.all("SELECT root_id, relpath, terms_blob FROM files")

    def pre(edit=None, written=(gen, len(cols["id"]))):
        rows = [list(r) for r in zip(*(cols[k] for k in NODE_COLUMNS))]
        if edit is not None:
            edit(rows)
        p = text_indexes.prebuild([tuple(r) for r in rows], terms)
        p.written = written
        return p

    assert np.array_equal(text_indexes.committed_ids(pre(), store, gen), np.asarray(cols["id"]))
    assert text_indexes.committed_ids(pre(written=None), store, gen) is None
    assert text_indexes.committed_ids(pre(written=(gen - 1, len(cols["id"]))), store, gen) is None
    assert text_indexes.committed_ids(pre(written=(gen, len(cols["id"]) + 1)), store, gen) is None
    assert text_indexes.committed_ids(pre(lambda rows: rows.pop()), store, gen) is None
    line_start, churn, is_test = (NODE_COLUMNS.index(k) for k in ("line_start", "churn", "is_test"))

    def set_(j, v):
        return lambda rows: rows[0].__setitem__(j, v)

    # values SQLite would have stored as another type: the table read back would not be these rows
    for edit in (set_(line_start, 3.0), set_(churn, 1), set_(is_test, True), set_(churn, float("nan")),
                 set_(churn, -0.0)):
        assert text_indexes.committed_ids(pre(edit), store, gen) is None


def test_reads_back_as_written_is_what_sqlite_gives_back(tmp_path) -> None:
    """The rule behind the handshake, against the store itself: rows it accepts read back equal and of the same
    types; each kind of value it refuses reads back as something else."""
    from m1nd.store.graph_repo import NODE_COLUMNS, GraphStore, reads_back_as_written

    store = GraphStore(tmp_path / "graph.db")
    try:
        with store.db.write():
            rid = store.upsert_root(str(tmp_path), None, True)
        base = ["file::a.py", "a.py", "a", 2, "python", rid, "a.py", 1, 9, None, "doc", 0, "h", 5, 0.25, 3]
        churn, line_end, doc, is_test = (NODE_COLUMNS.index(k) for k in ("churn", "line_end", "doc", "is_test"))
        variants = [({}, True), ({churn: 0.0}, True), ({churn: 1.0}, True), ({doc: None}, True),
                    ({churn: 1}, False), ({line_end: 9.0}, False), ({doc: 7}, False), ({is_test: True}, False),
                    ({churn: float("nan")}, False), ({churn: -0.0}, False)]
        for k, (change, accepted) in enumerate(variants):
            row = list(base)
            row[0] = f"file::a{k}.py"
            for j, v in change.items():
                row[j] = v
            with store.db.write():
                store.insert_nodes([row])
            back = store.db.all(f"SELECT {', '.join(NODE_COLUMNS)} FROM nodes WHERE ext_id = ?", (row[0],))[0]
            same = [type(a) for a in back] == [type(b) for b in row] and [str(a) for a in back] == [str(b) for b in row]
            got = reads_back_as_written({name: [row[j]] for j, name in enumerate(NODE_COLUMNS)})
            assert got == accepted == same, change
    finally:
        store.close()


def test_the_ingest_child_says_the_rows_sent_ahead_were_written_only_when_they_were() -> None:
    """Rows sent ahead of the write count as the committed table only when the write inserted those very rows (or
    equal ones) under that root id and they are the whole table."""
    from m1nd.codegraph.ingest_process import ChildHooks

    rows = {f"n{k}": (f"n{k}", 1, f"label {k}") for k in range(5)}

    def told(rid, written_rows, total, every_row_created=True):
        receive, send = multiprocessing.Pipe(duplex=False)
        hooks = ChildHooks(None, send)
        sending = hooks.send_ahead(1, rows, [], True)
        assert receive.recv_bytes()
        sending.join()
        assert hooks.send_ahead(rid, written_rows, [], True) is sending  # sent once: the write joins that thread
        hooks.written(rid, written_rows, 7, total, every_row_created=every_row_created)
        receive.close()
        return hooks.sent_as_written

    assert told(1, rows, 5) == (7, 5)
    assert told(1, dict(rows), 5) == (7, 5)  # equal rows made again by the write
    assert told(2, rows, 5) is None  # another root id than expected
    assert told(1, {**rows, "n0": ("n0", 1, "other")}, 5) is None
    assert told(1, rows, 6) is None  # other rows in the table too
    assert told(1, rows, 5, every_row_created=False) is None
    hooks = ChildHooks(None, None)  # nothing sent (no cache child reads)
    assert hooks.send_ahead(1, rows, [], True) is None
    hooks.written(1, rows, 7, 5, every_row_created=True)
    assert hooks.sent_as_written is None

