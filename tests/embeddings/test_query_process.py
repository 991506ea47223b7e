"""Query embeddings served by a child process (issue 13 item 1): the serving process holds no ONNX Runtime session
(checked structurally: onnxruntime is not even mapped into it), and embeddings still work end to end through the
child — the same vectors as an in-process session, the same ranking over MCP, a restart when the child dies."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from m1nd.memory import embeddings as E

from .conftest import write_repo

pytestmark = pytest.mark.model

QUERY = "exponential backoff between retries"


def _need_model() -> E.ModelSpec:
    spec = E.default_spec()
    if spec is None:
        pytest.skip("the default embedding model is not installed")
    return spec


@pytest.fixture
def remote(monkeypatch):
    from m1nd.memory.query_process import RemoteEmbedder

    r = RemoteEmbedder(_need_model())
    yield r
    r.close()


def test_the_child_gives_the_vectors_of_an_in_process_session(remote, real_model) -> None:
    texts = ["Tax owed on an amount at a given rate.", "Exponential backoff delays with jitter between retries.",
             "a much longer text " * 40]
    assert remote.model_id == real_model.model_id and remote.dim == real_model.dim == 384
    assert np.allclose(remote.embed_query(QUERY), real_model.embed_query(QUERY), atol=1e-5)
    assert np.allclose(remote.embed_documents(texts, max_tokens=128),
                       real_model.embed_documents(texts, max_tokens=128), atol=1e-5)
    assert remote.count_tokens(texts[2]) == real_model.count_tokens(texts[2])
    assert remote.windows(texts[2], 32, 24) == real_model.windows(texts[2], 32, 24)
    assert "onnxruntime" in _maps(remote.pid)


def test_a_dead_child_is_restarted_by_the_next_request(remote) -> None:
    first = remote.embed_query("first query")
    pid = remote.pid
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    got = remote.embed_query("a query never seen")  # (not the query cache)
    assert remote.pid not in (None, pid) and remote.restarts == 1
    assert got.shape == first.shape and abs(float(np.linalg.norm(got)) - 1.0) < 1e-4


def test_a_broken_model_folder_is_reported_by_the_child(tmp_path) -> None:
    from m1nd.memory.query_process import RemoteEmbedder

    _need_model()
    (tmp_path / "model.onnx").write_bytes(b"not an onnx graph")
    (tmp_path / "tokenizer.json").write_bytes(E.default_spec().tokenizer_path.read_bytes())
    (tmp_path / "m1nd-embed.json").write_text(json.dumps({"model_id": "broken", "pooling": "mean"}))
    r = RemoteEmbedder(E.dir_spec(tmp_path), model_dir=str(tmp_path))
    with pytest.raises(E.EmbedderUnavailableError, match="cannot load"):
        r.load()
    assert r.pid is None


def _maps(pid: int | None) -> str:
    assert pid is not None
    return Path(f"/proc/{pid}/maps").read_text()


def _children(pid: int) -> list[int]:
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def test_a_server_embeds_queries_without_holding_a_session(tmp_path) -> None:
    """``m1nd serve`` over stdio on a fully embedded repository: the first call waits for the model
    (``M1ND_EMBED_WAIT_S``) and ranks by embedding, like an in-process run; onnxruntime is mapped into the query
    child only, never into the server."""
    from m1nd.config import Settings
    from m1nd.workspace import Workspace

    _need_model()
    repo, home = write_repo(tmp_path / "repo"), tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("M1ND_")}
    env.update(M1ND_HOME=str(home), M1ND_EMBEDDER="onnx")
    subprocess.run([sys.executable, "-m", "m1nd", "--workspace", str(repo), "ingest", str(repo), "--embed", "sync"],
                   env=env, check=True, capture_output=True, timeout=300)
    os.environ.update(M1ND_EMBEDDER="onnx")
    E.reset_embedder()
    ws = Workspace(Settings(home=home, workspace_key=repo, busy_timeout_ms=10000))
    try:
        want = ws.graph.activate("a", QUERY, top_k=8, learn=False).node_ids
    finally:
        ws.close()

    p = subprocess.Popen([sys.executable, "-m", "m1nd", "--workspace", str(repo), "serve"],
                         env={**env, "M1ND_EMBED_WAIT_S": "60"}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)

    def rpc(i: int, method: str, params: dict) -> dict:
        assert p.stdin is not None and p.stdout is not None
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
        p.stdin.flush()
        return json.loads(p.stdout.readline())

    try:
        rpc(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}})
        res = rpc(1, "tools/call", {"name": "activate", "arguments": {"agent_id": "a", "query": QUERY, "top_k": 8}})
        got = res["result"].get("structuredContent") or {}
        assert not res["result"].get("isError"), res
        assert got["semantic_backend"] == "embedding", got.get("semantic_status")
        assert [a["node_id"] for a in got["activated"]] == want
        assert "onnxruntime" not in _maps(p.pid) and "tokenizers" not in _maps(p.pid)
        kids = [c for c in _children(p.pid) if "onnxruntime" in _maps(c)]
        assert len(kids) == 1  # the query child
    finally:
        assert p.stdin is not None
        p.stdin.close()
        assert p.wait(30) == 0
    for k in kids:  # it ended with the server
        assert not Path(f"/proc/{k}").exists() or "zombie" in Path(f"/proc/{k}/status").read_text()


def test_a_serving_workspace_searches_the_code_index_in_the_child(small_repo, workspace_for, real_model,
                                                                  remote) -> None:
    """Same ranking as an in-process session, with the index built and searched by the child only (issue 13 item
    1): the server never opens the index; the child builds it from the database and saves it."""
    from m1nd.codegraph.vectors import INDEX_FILE, code_vectors_for

    ws = workspace_for(small_repo)
    ws.graph.ingest(str(small_repo), embed="sync")
    want = ws.graph.activate("a", QUERY, top_k=8, learn=False)
    index_file = ws.graph.workdir / INDEX_FILE
    ws.close()
    for f in index_file.parent.glob(INDEX_FILE + "*"):  # the child must build it from the database
        f.unlink()
    E.set_embedder(remote)
    served = workspace_for(small_repo, transport="stdio")
    got = served.graph.activate("a", QUERY, top_k=8, learn=False)
    assert got.semantic_backend == want.semantic_backend == "embedding"
    assert got.node_ids == want.node_ids
    assert remote.searches >= 1
    assert code_vectors_for(served.graph)._index is None  # never opened by the server
    assert index_file.is_file()  # built and saved by the child
    # perspectives' affinity asks the child too, and agrees with an in-process search
    cv = code_vectors_for(served.graph)
    g = served.graph.graph()
    node = int(np.argmax(cv.scores(g, QUERY)))
    near = cv.similar(g, node, 5)
    assert near and cv._index is None
    E.set_embedder(real_model)
    local = workspace_for(small_repo)
    lcv = code_vectors_for(local.graph)
    assert [j for j, _ in lcv.similar(local.graph.graph(), node, 5)] == [j for j, _ in near]
