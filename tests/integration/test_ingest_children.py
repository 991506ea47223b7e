"""The ingest's helper processes give what the one-process paths give: the blobs compressed in the extraction
workers, the trigram index built in a fork beside the lexical one, the cache child started ahead of time."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from m1nd.codegraph import ingestion, text_indexes
from m1nd.codegraph.ingestion import CacheChild, stored_forms
from m1nd.errors import M1ndError
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
    return {"could_fork": text_indexes.can_fork(), "lexicon_here": lexicon_pids == [here] * 2, "log": log.getvalue(),
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
        assert not text_indexes.can_fork()
        monkeypatch.setattr(multiprocessing, "get_context", lambda *a: pytest.fail("forked beside a thread"))
        tri, _ = text_indexes.build(g.nodes, lambda: None, side_by_side=True)
    finally:
        stop.set()
        t.join()
    _same_arrays(tri.arrays(), TrigramIndex.build(g.nodes).arrays())


def _dies(settings) -> None:
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
