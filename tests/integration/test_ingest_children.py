"""The ingest's helper processes give what the one-process paths give: the blobs compressed in the extraction
workers, the trigram index built in a fork beside the lexical one, the cache child started ahead of time."""

from __future__ import annotations

import multiprocessing
import os

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


@pytest.mark.skipif(not text_indexes.can_fork(), reason="needs fork and a single thread")
def test_trigram_index_built_beside_the_lexical_one_is_the_same(repo, ws_factory) -> None:
    ws = ws_factory(repo)
    g = _ingested(ws, repo)
    store = ws.graph.store
    nodes = g.nodes
    calls = []

    def lexicon() -> TermIndex:
        calls.append(os.getpid())
        return TermIndex.build(nodes, node_terms_from_blobs(nodes, store.extract_terms()))

    tri_a, lex_a = text_indexes.build(nodes, lexicon, side_by_side=True)
    tri_b, lex_b = text_indexes.build(nodes, lexicon, side_by_side=False)
    assert calls == [os.getpid()] * 2  # the lexical index is always built here
    _same_arrays(tri_a.arrays(), tri_b.arrays())
    _same_arrays(tri_a.arrays(), TrigramIndex.build(nodes).arrays())
    _same_arrays(lex_a.arrays(), lex_b.arrays())


@pytest.mark.skipif(not text_indexes.can_fork(), reason="needs fork and a single thread")
def test_a_failing_trigram_fork_falls_back_to_building_here(repo, ws_factory, monkeypatch, caplog) -> None:
    ws = ws_factory(repo)
    g = _ingested(ws, repo)
    nodes = g.nodes
    real = TrigramIndex.build
    parent = os.getpid()

    def only_here(t):
        if os.getpid() != parent:
            raise MemoryError("no room")
        return real(t)

    monkeypatch.setattr(TrigramIndex, "build", staticmethod(only_here))
    tri, _ = text_indexes.build(nodes, lambda: None, side_by_side=True)
    _same_arrays(tri.arrays(), real(nodes).arrays())
    assert "MemoryError: no room" in caplog.text


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
