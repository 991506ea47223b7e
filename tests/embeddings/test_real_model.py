"""The real default model (int8 all-MiniLM-L6-v2 from PyPI), loaded offline. Marked ``model``; they run in CI."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from m1nd.memory import embeddings as E

pytestmark = pytest.mark.model

LONG_SECTIONS = [
    "## Build\nThe project builds with scikit-build-core and CMake; the Cython kernels compile into m1nd_core.",
    "## Storage\nEvery table lives in SQLite through APSW with write-ahead logging and a busy timeout.",
    "## Releases\nWheels are tagged by the release workflow and uploaded after the test matrix passes.",
    ("## Garden\nTomatoes need full sun, deep watering twice a week and a stake once the first flowers appear; "
    "prune the suckers so the plant spends its energy on fruit."),
]


def test_related_sentences_score_above_unrelated(real_model) -> None:
    v = real_model.embed_documents(["A man is playing a guitar.", "Someone plays an acoustic guitar on stage.",
                                    "The central bank raised interest rates again."])
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    related, unrelated = float(v[0] @ v[1]), float(v[0] @ v[2])
    assert related > 0.5 > unrelated + 0.3
    q = real_model.embed_query("music performance")
    assert q @ v[1] > q @ v[2]


def test_batching_gives_the_same_vectors_as_one_by_one(real_model) -> None:
    texts = ["short", "a medium sized sentence about vector search", "x " * 200, "retry with backoff"]
    together = real_model.embed_documents(texts)
    alone = np.stack([real_model.embed_documents([t])[0] for t in texts])
    np.testing.assert_allclose(together, alone, atol=2e-5)


def test_a_long_entry_is_found_by_a_query_matching_its_last_section(real_model, mcli) -> None:
    filler = "\n\n".join(LONG_SECTIONS[:3] * 8)
    body = filler + "\n\n" + LONG_SECTIONS[3]
    long_id = mcli.add("Project handbook", body)
    for t, c in (("Build system", "How the native extension is compiled with CMake."),
                 ("Database settings", "SQLite pragmas and the busy timeout for writers."),
                 ("Release process", "How wheels are published after CI passes.")):
        mcli.add(t, c)
    assert mcli.rows("SELECT chunk_count FROM entries WHERE id = ?", (long_id,))[0][0] >= 2
    r = mcli("search", "how much sun and water do tomato plants need", "--semantic", "--limit", "3", "--json")
    assert r.code == 0, r.err
    assert r.json()[0]["id"] == long_id


def test_an_entry_in_an_excluded_tag_never_surfaces(real_model, mcli) -> None:
    hidden = mcli.add("Retry network calls", "Use exponential backoff with jitter when retrying network calls.",
                      "--tags", "tier/archive")
    shown = mcli.add("Backoff for HTTP clients", "HTTP clients should back off exponentially between retries.")
    for limit in ("1", "5", "20"):
        r = mcli("search", "retry with exponential backoff", "--semantic", "--exclude-tags", "tier/", "--limit",
                 limit, "--json")
        ids = [e["id"] for e in r.json()]
        assert hidden not in ids and ids[0] == shown
        r = mcli("search", "retry with exponential backoff", "--hybrid", "--exclude-tags", "tier/", "--limit",
                 limit, "--json")
        assert hidden not in [e["id"] for e in r.json()]
    r = mcli("search", "retry with exponential backoff", "--semantic", "--json")
    assert hidden in [e["id"] for e in r.json()]


def test_auto_anchor_links_related_entries_with_the_real_model(real_model, mcli) -> None:
    a = mcli.add("Retry network calls with backoff", "Use exponential backoff with jitter when retrying flaky "
                 "network calls.")
    b = mcli.add("Retrying flaky HTTP requests", "When an HTTP request fails, retry it with exponential backoff "
                 "and random jitter.")
    mcli.add("Tomato care", "Tomatoes need full sun and deep watering.")
    anchors = mcli.rows("SELECT x.id, an.similarity FROM entry_anchors an JOIN entries e ON e.rowid = "
                        "an.entry_rowid JOIN entries x ON x.rowid = an.anchor_rowid WHERE e.id = ?", (b,))
    sim = float(real_model.embed_documents([
        "Retry network calls with backoff\n\nUse exponential backoff with jitter when retrying flaky network calls.",
        ("Retrying flaky HTTP requests\n\nWhen an HTTP request fails, retry it with exponential backoff and random "
        "jitter.")]).prod(axis=0).sum())
    if 0.75 <= sim <= 0.95:
        assert [x for x, _ in anchors] == [a]
    else:
        assert anchors == []


def test_a_model_folder_with_cls_pooling_and_a_query_prefix(tmp_path, monkeypatch) -> None:
    spec = E.default_spec()
    d = tmp_path / "bge-like"
    d.mkdir()
    os.symlink(spec.model_path, d / "model.onnx")
    os.symlink(spec.tokenizer_path, d / "tokenizer.json")
    (d / "m1nd-embed.json").write_text(json.dumps({"model_id": "minilm-cls", "pooling": "cls",
                                                   "query_prefix": "query: ", "sim_floor": 0.45,
                                                   "sim_ceiling": 0.85}))
    monkeypatch.setenv("M1ND_EMBEDDER", "onnx")
    monkeypatch.setenv("M1ND_EMBED_MODEL_DIR", str(d))
    E.reset_embedder()
    emb = E.get_embedder()
    assert isinstance(emb, E.OnnxEmbedder) and emb.loaded and emb.model_id == "minilm-cls" and emb.dim == 384
    doc = emb.embed_documents(["retry with backoff"])[0]
    mean = E.OnnxEmbedder(spec).embed_documents(["retry with backoff"])[0]
    assert abs(float(np.linalg.norm(doc)) - 1) < 1e-5 and float(doc @ mean) < 0.999  # CLS, not mean pooling
    q = emb.embed_query("retry with backoff")
    assert float(q @ doc) < 0.9999  # the prefix applies to queries only
    assert (emb.sim_floor, emb.sim_ceiling) == (0.45, 0.85)


def test_code_activation_with_the_real_model(real_model, small_repo, workspace_for) -> None:
    ws = workspace_for(small_repo)
    rep = ws.graph.ingest(str(small_repo), embed="sync")
    assert rep.embeddings["model_id"] == E.DEFAULT_MODEL_ID
    r = ws.graph.activate("a", "wait longer between attempts when a request fails", top_k=5, learn=False)
    assert r.semantic_backend == "embedding"
    assert r.activated[0].source_path == "src/net/retry.py"


def test_a_model_folder_serves_embeds_in_the_worker_child_with_one_session(tmp_path, monkeypatch, small_repo,
                                                                          workspace_for) -> None:
    """Issue 13 item 7: a user model folder (copies of the installed int8 MiniLM, laid out like a BGE download) goes
    through the server start-up and the worker child like the default model; in the child the folder's model, loaded
    when chosen, is the only session (it gets the worker's thread count from the start)."""
    import shutil

    from m1nd.codegraph import vectors as C

    spec = E.default_spec()
    d = tmp_path / "bge-like"
    d.mkdir()
    shutil.copyfile(spec.model_path, d / "model.onnx")
    shutil.copyfile(spec.tokenizer_path, d / "tokenizer.json")
    (d / "m1nd-embed.json").write_text(json.dumps({"model_id": "minilm-folder", "pooling": "cls",
                                                   "query_prefix": "query: ", "sim_floor": 0.45,
                                                   "sim_ceiling": 0.85}))
    monkeypatch.setenv("M1ND_EMBEDDER", "onnx")
    monkeypatch.setenv("M1ND_EMBED_MODEL_DIR", str(d))
    E.reset_embedder()
    ws = workspace_for(small_repo)
    ws.graph.ingest(str(small_repo), embed="skip")
    ws.close()
    ws = workspace_for(small_repo, transport="stdio")
    monkeypatch.setattr(C.CodeVectors, "background_allowed", property(lambda self: True))
    ws.on_server_start()
    assert ws.graph.semantic_warmup.join(60)
    cv = C.code_vectors_for(ws.graph)
    assert cv.wait_idle(timeout=120)
    assert {m for (m,) in cv.db.all("SELECT DISTINCT model_id FROM node_vectors")} == {"minilm-folder"}
    r = ws.graph.activate("a", "exponential backoff between retries", top_k=5, learn=False)
    assert r.semantic_backend == "embedding"
    ws.close()

    monkeypatch.setenv("M1ND_EMBED_THREADS", str(C.worker_threads()))  # what the child sets before choosing
    E.reset_embedder()
    emb = E.get_embedder()
    assert emb.loaded and C.worker_embedder(emb, emb.threads) is emb
