"""Code-node embeddings (hashing embedder): texts, ingest's embed parameter, zero inferences on an unchanged
re-ingest, the index beside the workspace, activate's semantic backend, health.embedder, no-model fallback."""

from __future__ import annotations

import numpy as np
from m1nd.codegraph.vectors import CodeVectors, code_vectors_for, node_texts


def test_node_texts_follow_the_spec(small_repo, workspace_for) -> None:
    ws = workspace_for(small_repo)
    ws.graph.ingest(str(small_repo), embed="skip")
    g = ws.graph.graph()
    texts = dict(zip(g.nodes.ext_id, node_texts(g.nodes)))
    assert texts["file::src/net/retry.py"] == ("file src/net/retry.py\nRetrying flaky network calls.\n"
                                               "backoff_delays, call_with_retry")
    assert texts["file::src/net/retry.py::fn::backoff_delays"] == (
        "fn backoff_delays\ndef backoff_delays(attempts: int) -> list\n"
        "Exponential backoff delays with jitter between retries.")
    assert all(t is None for e, t in texts.items() if e.startswith("dir::"))


def test_ingest_sync_embeds_and_activate_uses_the_embedding_backend(small_repo, workspace_for) -> None:
    ws = workspace_for(small_repo)
    rep = ws.graph.ingest(str(small_repo), embed="sync")
    cv = code_vectors_for(ws.graph)
    g = ws.graph.graph()
    embeddable = sum(1 for t in node_texts(g.nodes) if t is not None)
    assert rep.embeddings["model_id"] == "hashing-v1-256" and rep.embeddings["embedded"] == embeddable
    h = ws.graph.health("a").embedder
    assert h == {"model_id": "hashing-v1-256", "dim": 256, "available": True, "code_vectors": embeddable,
                 "pending": 0}
    assert (ws.graph.workdir / "graph.code.usearch").exists()
    r = ws.graph.activate("a", "exponential backoff between retries", top_k=5, learn=False)
    assert r.semantic_backend == "embedding" and r.semantic_status is None
    assert r.activated[0].node_id == "file::src/net/retry.py::fn::backoff_delays"
    assert any(s.via in ("semantic", "both") for s in r.seeds)
    assert max(a.dimensions["semantic"] for a in r.activated) > 0
    # warmup and missing go through the same semantic scores
    assert ws.graph.warmup("a", "render invoice pdf").primed_nodes
    # an unchanged tree re-ingested performs zero inferences
    before = cv.inferences
    rep2 = ws.graph.ingest(str(small_repo), embed="sync")
    assert rep2.embeddings["embedded"] == 0 and cv.inferences == before


def test_sem_scores_are_rescaled_and_limited_to_the_nearest(small_repo, workspace_for) -> None:
    ws = workspace_for(small_repo)
    ws.graph.ingest(str(small_repo), embed="sync")
    g = ws.graph.graph()
    sem = code_vectors_for(ws.graph).scores(g, "login token session")
    assert sem is not None and sem.dtype == np.float32 and sem.shape == (g.n,)
    assert 0.0 <= float(sem.min()) and float(sem.max()) <= 1.0
    best = g.nodes.ext_id[int(np.argmax(sem))]
    assert best.startswith("file::src/auth/session.py")


def test_skip_and_background_in_a_cli_process_only_queue(small_repo, workspace_for) -> None:
    ws = workspace_for(small_repo)
    assert ws.graph.ingest(str(small_repo), embed="skip").embeddings["queued"] == 0
    rep = ws.graph.ingest(str(small_repo), embed="background")
    assert rep.embeddings["queued"] > 0
    cv = code_vectors_for(ws.graph)
    assert cv._worker is None  # a one-shot CLI process does not start the worker
    r = ws.graph.activate("a", "exponential backoff between retries", top_k=5, learn=False)
    assert r.semantic_backend == "trigram"  # no vectors yet: the trigram backend, never a half-empty one
    assert (r.semantic_status or "").startswith("semantic dimension not ready: 0% of code nodes")  # and it says so
    assert ws.graph.health("a").embedder["pending"] == rep.embeddings["queued"]
    cv.start_background()
    assert cv.wait_idle(timeout=60)
    r = ws.graph.activate("a", "exponential backoff between retries", top_k=5, learn=False)
    assert r.semantic_backend == "embedding"


def test_index_is_rebuilt_from_the_database_when_missing(small_repo, workspace_for) -> None:
    ws = workspace_for(small_repo)
    ws.graph.ingest(str(small_repo), embed="sync")
    cv = code_vectors_for(ws.graph)
    cv.index().save()
    for p in ws.graph.workdir.glob("graph.code.usearch*"):
        p.unlink()
    fresh = CodeVectors(ws.graph)
    g = ws.graph.graph()
    a = cv.scores(g, "render invoice as pdf")
    b = fresh.scores(g, "render invoice as pdf")
    np.testing.assert_allclose(a, b, atol=1e-6)
    fresh.close()


def test_no_model_keeps_the_trigram_backend(small_repo, workspace_for, monkeypatch) -> None:
    monkeypatch.setenv("M1ND_EMBEDDER", "none")
    ws = workspace_for(small_repo)
    rep = ws.graph.ingest(str(small_repo), embed="sync")
    assert rep.embeddings == {"queued": 0, "model_id": None}
    r = ws.graph.activate("a", "exponential backoff between retries", top_k=5, learn=False)
    assert r.semantic_backend == "trigram" and r.activated
    assert ws.graph.health("a").embedder == {"model_id": None, "dim": None, "available": False,
                                                "code_vectors": 0, "pending": 0}


def test_perspective_semantic_affinity_uses_embeddings(small_repo, workspace_for) -> None:
    from m1nd.perspectives import graph_facts

    ws = workspace_for(small_repo)
    ws.graph.ingest(str(small_repo), embed="skip")
    g = ws.graph.graph()
    i = g.nodes.index["file::src/net/retry.py::fn::backoff_delays"]
    semantic = ws.perspectives.semantic  # the code graph's embeddings, given by the workspace
    assert graph_facts.semantic_similarity(g, i, semantic)[1] == "trigram"  # nothing asked for embeddings yet
    code_vectors_for(ws.graph)
    assert graph_facts.semantic_similarity(g, i, semantic)[1] == "trigram"  # no vectors yet
    ws.graph.ingest(str(small_repo), embed="sync")
    g = ws.graph.graph()
    graph_facts.facts(g).sim_cache.clear()
    sim, backend = graph_facts.semantic_similarity(g, i, semantic)
    assert backend == "embedding" and sim.shape == (g.n,) and float(sim.max()) <= 1.0
    assert sim[i] == 0.0 and float(sim.max()) > 0.0


def test_perspective_start_seeds_like_activate_with_embeddings(small_repo, workspace_for) -> None:
    """perspective_start's query activation uses the same semantic scores as activate: same seeds, same focus."""
    from m1nd.perspectives import service_for

    ws = workspace_for(small_repo)
    ws.graph.ingest(str(small_repo), embed="sync")
    q = "exponential backoff between retries"
    act = ws.graph.activate("a", q, top_k=5, learn=False)
    assert act.semantic_backend == "embedding"
    start = service_for(ws).start("a", q)
    assert [s.node_id for s in start.seeds] == [s.node_id for s in act.seeds[:5]]
    assert start.focus_node == act.seeds[0].node_id


def test_server_start_embeds_code_and_reembeds_memory_after_a_model_change(small_repo, workspace_for,
                                                                          monkeypatch) -> None:
    """The worker child (issue 13) embeds the code and re-embeds a memory store written by another model. The child
    chooses its embedder from the environment (hashing-v1-256), so the store is first written in-process by a 128-d
    hashing embedder."""
    import time

    from m1nd.codegraph import vectors as C
    from m1nd.memory import embeddings as E

    E.set_embedder(E.HashingEmbedder(dim=128))
    ws = workspace_for(small_repo, transport="stdio")
    ws.graph.ingest(str(small_repo), embed="skip")
    ws.memory.add({"category": "insight", "title": "Retry", "content": "backoff"}, agent="alice")
    ws.memory.add({"category": "insight", "title": "Mine", "content": "private", "private": True}, agent="bob")
    assert ws.memory.db.all("SELECT DISTINCT model_id FROM vectors") == [("hashing-v1-128",)]
    ws.close()

    monkeypatch.setattr(C.CodeVectors, "background_allowed", property(lambda self: True))
    E.reset_embedder()
    ws2 = workspace_for(small_repo, transport="stdio")
    assert ws2.memory.vector_hook.model_state()["changed"]
    ws2.on_server_start()
    assert ws2.graph.semantic_warmup.join(30)  # the worker child is started by the start-up warm-up (issue 13)
    cv = C.code_vectors_for(ws2.graph)
    assert cv.worker_running
    assert cv.wait_idle(timeout=60)
    deadline = time.monotonic() + 30
    while ws2.memory.vector_hook.model_state()["changed"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not ws2.memory.vector_hook.model_state()["changed"]
    assert ws2.memory.db.all("SELECT DISTINCT model_id FROM vectors") == [("hashing-v1-256",)]
    assert ws2.graph.health("a").embedder["code_vectors"] > 0
    # the child reported the memory re-embedding too (health shows it as memory_reembed while the child runs)
    assert cv.memory_reembed == {"pending": 0, "done": 2, "rate": cv.memory_reembed["rate"]}


def test_the_graph_records_its_embedding_model(small_repo, workspace_for) -> None:
    ws = workspace_for(small_repo)
    ws.graph.ingest(str(small_repo), embed="sync")
    meta = dict(ws.graph.store.db.all("SELECT key, value FROM meta WHERE key LIKE 'embed_%'"))
    assert meta == {"embed_model_id": "hashing-v1-256", "embed_dim": "256"}


def test_no_model_notice_is_printed_once_by_activate(small_repo, workspace_for, monkeypatch, capsys) -> None:
    from m1nd.memory import embeddings as E

    monkeypatch.setenv("M1ND_EMBEDDER", "none")
    E.reset_embedder()
    ws = workspace_for(small_repo)
    ws.graph.ingest(str(small_repo), embed="skip")
    capsys.readouterr()
    for _ in range(3):
        ws.graph.activate("a", "retry backoff", learn=False)
    assert capsys.readouterr().err.count(E.NO_MODEL_NOTICE) == 1


def test_a_model_that_fails_to_load_degrades_health(small_repo, workspace_for, monkeypatch) -> None:
    from m1nd.memory import embeddings as E

    spec = E.default_spec()
    spec.checksums = {"model.onnx": "0" * 64}
    monkeypatch.setenv("M1ND_EMBEDDER", "")
    E.set_embedder(E.OnnxEmbedder(spec))
    ws = workspace_for(small_repo)
    ws.graph.ingest(str(small_repo), embed="sync")
    r = ws.graph.activate("a", "retry backoff", learn=False)
    assert r.semantic_backend == "trigram"
    h = ws.graph.health("a")
    assert h.status == "degraded" and h.embedder["available"] is False
    assert any("failed their checksum" in w for w in h.warnings)
