"""Memory and session settings of the embedding path (issue 13 items 1 and 2). Figures go to ``extra_info`` and
stdout; nothing here asserts on time or on RSS (both depend on the machine's load), only on structure.

* Serving RSS: ``m1nd serve`` over stdio after 30 ``activate`` calls, with the model (bulk embedding running in the
  worker child, and fully embedded with the index built by the query child) vs ``M1ND_EMBEDDER=none``; the query
  embeddings served by the query child (default) vs a session in
  the server (``M1ND_EMBED_QUERY_PROCESS=0``). Two corpora: a stdlib subset fully embedded but for 10 % of its nodes
  (so queries embed while the bulk job runs), and — in a full run with the sdist at hand (bench/test_e2e_sdist.py
  fetches it; ``$M1ND_CORPORA``) — Django 5.1.4 with nothing embedded yet.
* Query embedding p50: one never-seen query, in the process (a small session) vs through the child's pipe.
* Session settings: texts/s and the RSS of a process embedding the same code texts, per arena / threads / batch
  (each configuration in a fresh process, interleaved rounds).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
from corpus import copy_subset
from m1nd.memory import embeddings as E

QUERIES = ["retry failed http requests", "parse json document", "send email with attachment", "http cookie handling",
           "thread pool executor", "xml element tree parser", "logging handler rotation", "url quoting and parsing",
           "asyncio event loop", "ordered dictionary"]
PACKAGES = ("json", "email", "http", "logging", "urllib", "concurrent")
CORPORA = Path(os.environ.get("M1ND_CORPORA", Path(__file__).parent / "corpora"))


def _full(config: pytest.Config) -> bool:
    return not config.getoption("benchmark_disable", default=False)


def _need_model() -> None:
    if E.default_spec() is None:
        pytest.skip("the default embedding model is not installed")


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("M1ND_")}
    env.update(M1ND_HOME=str(home), **extra)
    return env


def _status(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) // 1024
    return 0


def _maps_ort(pid: int) -> bool:
    return "onnxruntime" in Path(f"/proc/{pid}/maps").read_text()


def serve_rss(home: Path, repo: Path, calls: int = 30, **extra: str) -> dict:
    """``m1nd serve``, ``initialize``, ``calls`` × ``activate`` (new words each time); RSS of the server and its
    children, and whether onnxruntime is mapped into each."""
    p = subprocess.Popen([sys.executable, "-m", "m1nd", "--workspace", str(repo), "serve"],
                         env=_env(home, **extra), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    assert p.stdin is not None and p.stdout is not None

    def rpc(i: int, method: str, params: dict) -> dict:
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
        p.stdin.flush()
        return json.loads(p.stdout.readline())

    try:
        rpc(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b"}})
        backends: list[str] = []
        for k in range(calls):
            r = rpc(k + 1, "tools/call", {"name": "activate", "arguments": {
                "agent_id": "b", "query": f"{QUERIES[k % len(QUERIES)]} {k}"}})
            backends.append(r["result"]["structuredContent"]["semantic_backend"])
            time.sleep(0.2)
        kids = [int(c) for c in Path(f"/proc/{p.pid}/task/{p.pid}/children").read_text().split()]
        h = rpc(99, "tools/call", {"name": "health", "arguments": {"agent_id": "b"}})["result"]["structuredContent"]
        return {"server_mb": _status(p.pid, "VmRSS"), "server_anon_mb": _status(p.pid, "RssAnon"),
                "server_maps_onnxruntime": _maps_ort(p.pid), "children_mb": [_status(c, "VmRSS") for c in kids],
                "children_map_onnxruntime": [_maps_ort(c) for c in kids],
                "embedding_answers": backends.count("embedding"),
                "pending": h.get("embedder", {}).get("pending")}
    finally:
        p.stdin.close()
        p.wait(30)


def _drop_vectors(home: Path, share: float) -> None:
    """Forget ``share`` of the code vectors: the next server embeds them in its worker child."""
    db = next(home.rglob("graph.db"))
    con = sqlite3.connect(db)
    try:
        n = con.execute("SELECT count(*) FROM node_vectors").fetchone()[0]
        con.execute("DELETE FROM node_vectors WHERE embed_hash IN (SELECT embed_hash FROM node_vectors ORDER BY "
                    "random() LIMIT ?)", (int(n * share),))
        con.execute("DELETE FROM meta WHERE key = 'embed_model_id'")
        con.execute("UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = "
                    "'code_vectors_generation'")
        con.commit()
    finally:
        con.close()


@pytest.fixture(scope="module")
def embedded_subset(tmp_path_factory, request) -> tuple[Path, Path]:
    """A stdlib subset ingested and fully embedded by the default model (through the CLI)."""
    _need_model()
    root = tmp_path_factory.mktemp("mem")
    repo = copy_subset(root / "repo", PACKAGES if _full(request.config) else ("json",))
    home = root / "home"
    subprocess.run([sys.executable, "-m", "m1nd", "--workspace", str(repo), "ingest", str(repo), "--embed", "sync"],
                   env=_env(home, M1ND_EMBEDDER="onnx"), check=True, capture_output=True, timeout=3600)
    return repo, home


def _fresh(home: Path, dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(home, dest)
    return dest


def test_serving_rss_with_and_without_the_model(benchmark, embedded_subset, tmp_path, request) -> None:
    repo, home = embedded_subset
    calls = 30 if _full(request.config) else 5
    runs = {
        "none": serve_rss(_fresh(home, tmp_path / "h0"), repo, calls, M1ND_EMBEDDER="none"),
        "model, queries in the child": None,
        "model, session in the server": None,
    }
    for name, extra in (("model, queries in the child", {}),
                        ("model, session in the server", {"M1ND_EMBED_QUERY_PROCESS": "0"})):
        h = _fresh(home, tmp_path / "h1")
        _drop_vectors(h, 0.08)  # a bulk job runs while the queries embed
        runs[name] = serve_rss(h, repo, calls, M1ND_EMBED_WAIT_S="60", **extra)
    # fully embedded, nothing to compute: the query child builds the index from the database (no index file) and
    # the server never opens it
    h = _fresh(home, tmp_path / "h2")
    for f in h.rglob("graph.code.usearch*"):
        f.unlink()
    runs["model, fully embedded"] = serve_rss(h, repo, calls, M1ND_EMBED_WAIT_S="60")
    assert runs["model, fully embedded"]["embedding_answers"] == calls
    child = runs["model, queries in the child"]
    assert not child["server_maps_onnxruntime"] and any(child["children_map_onnxruntime"])
    assert runs["model, session in the server"]["server_maps_onnxruntime"]
    base = runs["none"]["server_mb"]
    out = {name: {**r, "ratio": round(r["server_mb"] / base, 2)} for name, r in runs.items()}

    dj = CORPORA / "django-5.1.4"
    if _full(request.config) and dj.is_dir():  # nothing embedded: the bulk job runs during the 30 calls
        dj_home = tmp_path / "dj"
        subprocess.run([sys.executable, "-m", "m1nd", "--workspace", str(dj), "ingest", str(dj), "--embed", "skip"],
                       env=_env(dj_home, M1ND_EMBEDDER="onnx"), check=True, capture_output=True, timeout=3600)
        none = serve_rss(_fresh(dj_home, tmp_path / "d0"), dj, calls, M1ND_EMBEDDER="none")
        model = serve_rss(_fresh(dj_home, tmp_path / "d1"), dj, calls)
        assert not model["server_maps_onnxruntime"]
        out["django none"] = none
        out["django model, bulk running"] = {**model, "ratio": round(model["server_mb"] / none["server_mb"], 2)}
    benchmark.extra_info.update(out)
    for name, r in out.items():
        print(f"\n{name}: {r}")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)


def test_query_embedding_p50_in_process_vs_child(benchmark, request) -> None:
    """One never-seen query embedded by a small session in this process vs by the query child over its pipe."""
    from m1nd.memory.query_process import RemoteEmbedder

    _need_model()
    n = 60 if _full(request.config) else 6
    local = E.OnnxEmbedder(E.default_spec(), profile="query")
    remote = RemoteEmbedder(E.default_spec())
    try:
        local.load()
        remote.load()
        lat: dict[str, list[float]] = {"in process": [], "child": []}
        for k in range(n):
            for name, emb in (("in process", local), ("child", remote)):
                t = time.perf_counter()
                emb.embed_query(f"{QUERIES[k % len(QUERIES)]} number {k}")
                lat[name].append((time.perf_counter() - t) * 1e3)
    finally:
        remote.close()
    p50 = {f"{k}_p50_ms": round(statistics.median(v), 2) for k, v in lat.items()}
    benchmark.extra_info.update(p50)
    print(f"\nquery embedding p50: {p50}")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)


SESSION_PROBE = r"""
import json, sys, time
from m1nd.memory import embeddings as E
texts, batch = json.load(open(sys.argv[1])), int(sys.argv[2])
emb = E.OnnxEmbedder(E.default_spec(), threads=int(sys.argv[3]), batch=batch)
emb.load()
t = time.perf_counter()
emb.embed_documents(texts, max_tokens=E.CODE_MAX_TOKENS)
dt = time.perf_counter() - t
rss = next(int(l.split()[1]) // 1024 for l in open("/proc/self/status") if l.startswith("VmRSS"))
print(json.dumps({"texts_s": len(texts) / dt, "rss_mb": rss}))
"""


def test_session_settings(benchmark, tmp_path, request) -> None:
    """Arena on/off × intra-op threads 1/2 × batch 8/32 over the same code texts, each in a fresh process."""
    from corpus import workspace
    from m1nd.codegraph.vectors import node_texts

    _need_model()
    big = _full(request.config)
    root = copy_subset(tmp_path / "src", PACKAGES if big else ("json",))
    os.environ["M1ND_EMBEDDER"] = "none"
    E.reset_embedder()
    try:
        ws = workspace(tmp_path / "home", root)
        ws.graph.ingest(str(root), embed="skip")
        texts = [t for t in node_texts(ws.graph.graph().nodes) if t]
        ws.close()
    finally:
        os.environ.pop("M1ND_EMBEDDER", None)
        E.reset_embedder()
    texts = texts[: 1500 if big else 60]
    (tmp_path / "texts.json").write_text(json.dumps(texts))
    (tmp_path / "probe.py").write_text(SESSION_PROBE)
    configs = [(arena, threads, batch) for arena in ("0", "1") for threads in (1, 2) for batch in (8, 32)]
    got: dict[str, list[dict]] = {}
    for _ in range(3 if big else 1):
        for arena, threads, batch in configs:
            env = {**os.environ, "M1ND_EMBED_ARENA": arena}
            out = subprocess.run([sys.executable, str(tmp_path / "probe.py"), str(tmp_path / "texts.json"),
                                  str(batch), str(threads)], env=env, capture_output=True, text=True, timeout=1800)
            assert out.returncode == 0, out.stderr[-2000:]
            got.setdefault(f"arena={arena} threads={threads} batch={batch}", []).append(json.loads(out.stdout))
    table = {k: {"texts_s": round(statistics.median(r["texts_s"] for r in v), 1),
                 "rss_mb": max(r["rss_mb"] for r in v)} for k, v in got.items()}
    benchmark.extra_info.update({"texts": len(texts), **table})
    print(f"\nsession settings over {len(texts)} code texts:")
    for k, v in table.items():
        print(f"  {k}: {v}")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
