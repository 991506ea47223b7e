"""Latency of ``learn``, ``trail_save``, ``trail_resume`` (and ``drift``, ``trail_merge``) on a real corpus: the
stdlib packages ``json``, ``email``, ``http`` and ``asyncio`` copied into a temporary directory and ingested.

Run with timing:            pytest bench/test_learning_bench.py
As correctness checks (CI): pytest bench/test_learning_bench.py --benchmark-disable

Every call goes through the tool registry (``call_tool``: validation, handler, shaping), as ``m1nd call`` and the
MCP server do; ``learn`` includes its commit (changed edges, counters, ``learn_log`` row) to ``graph.db``.

Each benchmark runs on both shared stores (issue 18): ``graph.db``, and a PostgreSQL server (a throwaway one from
``initdb``, :mod:`pg_cluster`) holding the trails, learn log and learned weights while the graph stays local; the
pairs share a group in the report.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest
from corpus import copy_subset, workspace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
STORES = ["sqlite", "postgresql"]

PACKAGES = ("json", "email", "http", "asyncio")
QUERIES = ["json decoder scan string", "email message header parse", "http client connection request",
           "asyncio event loop run until complete", "stream reader readline", "cookie jar policy"]


@pytest.fixture(scope="module")
def pg_cluster():
    from pg_cluster import start_or_skip

    cluster = start_or_skip()
    yield cluster
    cluster.close()


@pytest.fixture(scope="module", params=STORES)
def ws(request, tmp_path_factory):
    from m1nd.codegraph.baselines import record_server_start
    from m1nd.tools.registry import call_tool

    url = request.getfixturevalue("pg_cluster").new_database("bench_learning") if request.param != "sqlite" else None
    base = tmp_path_factory.mktemp("learning-bench")
    repo = copy_subset(base / "corpus", PACKAGES)
    w = workspace(base / "home", repo, memory_url=url)
    res = call_tool(w, "ingest", {"agent_id": "bench", "path": str(repo)})
    assert not res.is_error, res.structured
    assert res.structured["nodes"]["total"] > 1000
    record_server_start(w.graph)
    yield w
    w.close()


def _call(ws, tool: str, **args):
    from m1nd.tools.registry import call_tool

    res = call_tool(ws, tool, {"agent_id": "bench", **args})
    assert not res.is_error, res.structured
    return res.structured


@pytest.fixture(scope="module")
def results(ws):
    """Per query: the activated node ids (top 10), computed once."""
    out = {}
    for q in QUERIES:
        r = _call(ws, "activate", query=q, top_k=10, coactivation_ltp=False)
        out[q] = [a["node_id"] for a in r["activated"]]
    return out


@pytest.mark.parametrize("feedback", ["correct", "wrong", "partial"])
def test_learn(benchmark, ws, results, feedback):
    cases = itertools.cycle(QUERIES)

    def one():
        q = next(cases)
        ids = results[q]
        args = {"query": q, "feedback": feedback, "node_ids": ids[2:5], "strength": 0.1}
        if feedback == "partial":
            args["wrong_node_ids"] = ids[5:7]
        return _call(ws, "learn", **args)

    benchmark.group = f"learn {feedback}"
    r = benchmark(one)
    assert r["edges_adjusted"] >= 0 and r["seed_source"] in ("query_log", "recomputed")
    w = ws.graph.graph().engine.weights
    assert w.min() >= 0.05 and w.max() <= 1.0


def _trail_args(ws, results, k: int):
    q = QUERIES[k % len(QUERIES)]
    ids = results[q]
    return {"label": f"bench {k}", "tags": ["bench"], "open_questions": ["what next?"],
            "hypotheses": [{"statement": f"{q} is the culprit", "confidence": 0.6, "supporting_nodes": ids[:3]},
                           {"statement": f"{q} is not involved", "confidence": 0.4, "supporting_nodes": ids[3:5],
                            "contradicting_nodes": ids[:1]}],
            "conclusions": [{"statement": "look deeper", "from_hypotheses": [f"{q} is the culprit"],
                             "supporting_nodes": ids[5:6]}],
            "visited_nodes": [{"node_external_id": i, "annotation": "seen", "relevance": 0.5} for i in ids]}


def test_trail_save(benchmark, ws, results):
    counter = itertools.count()
    benchmark.group = "trail_save"
    r = benchmark(lambda: _call(ws, "trail_save", **_trail_args(ws, results, next(counter))))
    assert r["nodes_saved"] >= 5


def test_trail_resume(benchmark, ws, results):
    tid = _call(ws, "trail_save", **_trail_args(ws, results, 0))["trail_id"]
    benchmark.group = "trail_resume"
    r = benchmark(lambda: _call(ws, "trail_resume", trail_id=tid))
    assert r["stale"] is False and r["nodes_reactivated"] >= 5


def test_trail_merge(benchmark, ws, results):
    def setup():
        a = _call(ws, "trail_save", **_trail_args(ws, results, 1))["trail_id"]
        b = _call(ws, "trail_save", **_trail_args(ws, results, 2))["trail_id"]
        return ([a, b],), {}

    benchmark.group = "trail_merge"
    r = benchmark.pedantic(lambda ids: _call(ws, "trail_merge", trail_ids=ids), setup=setup, rounds=20)
    assert r["nodes_merged"] >= 10


def test_trail_list(benchmark, ws, results):
    for k in range(20):
        _call(ws, "trail_save", **_trail_args(ws, results, k))
    benchmark.group = "trail_list"
    r = benchmark(lambda: _call(ws, "trail_list", limit=50))
    assert r["total_count"] >= 20


def test_drift(benchmark, ws, results):
    _call(ws, "learn", query=QUERIES[0], feedback="correct", node_ids=results[QUERIES[0]][2:4])
    benchmark.group = "drift"
    r = benchmark(lambda: _call(ws, "drift", since="this_session"))
    assert r["baseline"]["kind"] == "server_start" and r["weights_changed_total"] > 0
