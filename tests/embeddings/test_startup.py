"""Start-up of a server with embeddings (issue 13 item 5): the semantic path gets ready in a thread beside the graph
load; a query waits for it (same answer as a server that was long up) or, when the wait runs out, ranks with the
trigram fallback and says so; the per-node hashes and the coverage come from sidecar files on the next start."""

from __future__ import annotations

import threading

import pytest
from m1nd.api import ActivationResult
from m1nd.codegraph import vector_startup as S
from m1nd.codegraph import vectors as C

QUERY = "exponential backoff between retries"


def _ids(r: ActivationResult) -> list[str]:
    return r.node_ids


def _embedded(small_repo, workspace_for):
    ws = workspace_for(small_repo)
    ws.graph.ingest(str(small_repo), embed="sync")
    want = ws.graph.activate("a", QUERY, top_k=8, learn=False)
    assert want.semantic_backend == "embedding"
    ws.close()
    return want


def _slow_warmup(monkeypatch) -> threading.Event:
    """Hold the warm-up's model loader until the returned event is set."""
    gate = threading.Event()
    orig = S.Warmup._load_model

    def slow(self, cg):
        gate.wait(20)
        orig(self, cg)

    monkeypatch.setattr(S.Warmup, "_load_model", slow)
    return gate


def test_a_query_during_start_up_waits_for_the_semantic_path(small_repo, workspace_for, monkeypatch) -> None:
    want = _embedded(small_repo, workspace_for)
    gate = _slow_warmup(monkeypatch)
    monkeypatch.setenv("M1ND_EMBED_WAIT_S", "30")
    ws = workspace_for(small_repo, transport="stdio")
    ws.on_server_start()
    w = ws.graph.semantic_warmup
    assert not w.done.is_set()
    threading.Timer(0.3, gate.set).start()
    got = ws.graph.activate("a", QUERY, top_k=8, learn=False)
    assert w.done.is_set()
    assert got.semantic_backend == "embedding" and got.semantic_status is None
    assert _ids(got) == _ids(want)  # the same answer as once the server is up
    assert w.join(10)
    ws.close()


def test_a_query_that_stops_waiting_says_it_ran_without_the_model(small_repo, workspace_for, monkeypatch) -> None:
    _embedded(small_repo, workspace_for)
    gate = _slow_warmup(monkeypatch)
    monkeypatch.setenv("M1ND_EMBED_WAIT_S", "0")
    ws = workspace_for(small_repo, transport="stdio")
    ws.on_server_start()
    try:
        got = ws.graph.activate("a", QUERY, top_k=8, learn=False)
        assert got.semantic_backend == "trigram"
        assert (got.semantic_status or "").startswith("semantic dimension not ready: the embedding model was still "
                                                      "loading after 0 s (M1ND_EMBED_WAIT_S sets how long")
    finally:
        gate.set()
    assert ws.graph.semantic_warmup.join(10)
    assert ws.graph.activate("a", QUERY, top_k=8, learn=False).semantic_backend == "embedding"
    ws.close()


def test_closing_during_start_up_waits_for_the_warm_up_and_starts_nothing(small_repo, workspace_for,
                                                                          monkeypatch) -> None:
    ws = workspace_for(small_repo)
    ws.graph.ingest(str(small_repo), embed="skip")  # vectors missing: a warm-up would start the worker child
    ws.close()
    monkeypatch.setattr(C.CodeVectors, "background_allowed", property(lambda self: True))
    gate = _slow_warmup(monkeypatch)
    ws = workspace_for(small_repo, transport="stdio")
    ws.on_server_start()
    threading.Timer(0.2, gate.set).start()
    ws.close()
    w = ws.graph.semantic_warmup
    assert w.stopping and not w._thread.is_alive()
    cv = ws.graph.code_vectors_made()
    assert cv is None or not cv.worker_running


def test_the_node_hashes_and_the_coverage_come_from_sidecars_on_the_next_start(small_repo, workspace_for,
                                                                              monkeypatch) -> None:
    ws = workspace_for(small_repo)
    ws.graph.ingest(str(small_repo), embed="sync")
    g = ws.graph.graph()
    cv = C.code_vectors_for(ws.graph)
    st = cv._gen_state(g)
    assert cv.coverage(g) == 1.0
    assert (ws.graph.workdir / C.STATE_FILE).exists() and (ws.graph.workdir / C.COVERAGE_FILE).exists()

    fresh = C.CodeVectors(ws.graph)
    with monkeypatch.context() as m:
        m.setattr(C, "node_texts", lambda t: pytest.fail("the sidecar should have been used"))
        st2 = fresh._gen_state(g)
    assert st2.hashes == st.hashes and st2.row_ids.tolist() == st.row_ids.tolist() and st2.key == st.key
    assert fresh.coverage(g) == 1.0 and fresh._have is None  # no per-text query needed

    # a vector written since (another process) invalidates the cached coverage
    db = cv.db
    with db.write():
        db.execute("DELETE FROM node_vectors WHERE embed_hash = ?", (next(h for h in st.hashes if h),))
        db.execute("UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = "
                   "'code_vectors_generation'")
    third = C.CodeVectors(ws.graph)
    assert third.coverage(g) < 1.0
    # another model, or a state file of other nodes, is recomputed
    (ws.graph.workdir / C.STATE_FILE).write_bytes(b"not a zip")
    assert C.CodeVectors(ws.graph)._gen_state(g).hashes == st.hashes
    ws.close()


@pytest.mark.model
def test_a_server_start_preloads_the_model_when_the_graph_is_fully_embedded(small_repo, workspace_for,
                                                                           real_model, monkeypatch) -> None:
    from m1nd.memory import embeddings as E

    _embedded(small_repo, workspace_for)
    fresh = E.OnnxEmbedder(E.default_spec())  # a new process's embedder: not loaded yet
    E.set_embedder(fresh)
    monkeypatch.setenv("M1ND_EMBED_WAIT_S", "30")  # the first query waits for the model (default: it does not)
    ws = workspace_for(small_repo, transport="stdio")
    S.preload_model(ws.settings)  # what `m1nd serve` does first
    ws.on_server_start()
    got = ws.graph.activate("a", QUERY, top_k=8, learn=False)
    assert got.semantic_backend == "embedding" and fresh.loaded
    assert ws.graph.semantic_warmup.preloaded or S._preloads
    ws.close()
