"""MCP transport overhead on a real corpus (issue 3 targets).

1. Round-trip latency of ``activate``, ``why``, ``impact`` (and ``learn``) through ``m1nd serve`` over stdio (raw
JSON lines over
   pipes, one persistent server process) against the in-process :func:`m1nd.tools.registry.call_tool` on the same
   persisted graph. Reported: medians and the overhead ratio ``stdio / in-process`` (target < 1.5x).
2. Server start to the first answered ``tools/call`` (initialize + activate) with a persisted graph (target < 1 s).

Corpus: the stdlib's ``json``, ``email``, ``http`` and ``asyncio`` packages copied into a temporary directory; with
``M1ND_BENCH_FULL=1`` the whole standard library (``sysconfig.get_paths()["stdlib"]``).

Run with timing:            pytest bench/test_mcp_bench.py -s
As correctness checks (CI): pytest bench/test_mcp_bench.py --benchmark-disable
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

import pytest

from corpus import full, ingest_stdlib, workspace
from m1nd.tools.registry import call_tool, load_all

FULL = full()
ROUNDS = 60
WARMUP = 5
RATIO_TARGET = 1.5
START_TARGET_S = 1.0
QUERIES = {"activate": "parse json string", "why": None, "impact": None}


class LineServer:
    """``m1nd serve`` spoken to with raw newline-delimited JSON-RPC over pipes."""

    def __init__(self, env: dict[str, str]) -> None:
        full_env = {**os.environ, **env}
        full_env.pop("M1ND_LOG_LEVEL", None)
        self.proc = subprocess.Popen([sys.executable, "-m", "m1nd", "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=full_env)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin
        self._out = self.proc.stdout
        self._id = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._id += 1
        self._in.write(json.dumps({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params}).encode()
                       + b"\n")
        self._in.flush()
        line = self._out.readline()
        assert line, "server closed stdout"
        reply = json.loads(line)
        assert reply["id"] == self._id, reply
        return reply

    def initialize(self) -> None:
        r = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "clientInfo": {"name": "bench", "version": "0"}})
        assert "result" in r, r
        self._in.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self._in.flush()

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        r = self.request("tools/call", {"name": name, "arguments": arguments})
        assert "result" in r and r["result"]["isError"] is False, r
        return r["result"]["structuredContent"]

    def close(self) -> int:
        self._in.close()
        return self.proc.wait(60)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[str, Any]:
    """Ingest the corpus once and persist it (graph rows + array cache); return the server environment."""
    c = ingest_stdlib(tmp_path_factory, "mcp-bench")
    c.ws.close()
    assert c.nodes > (20000 if FULL else 2000)
    env = {"M1ND_HOME": str(c.home), "M1ND_WORKSPACE": str(c.root), "M1ND_EMBEDDER": "hashing",
           "SKBUILD_EDITABLE_VERBOSE": "0", "M1ND_TOOLS": "all"}
    return {"home": c.home, "root": c.root, "env": env, "nodes": c.nodes, "edges": c.edges}


@pytest.fixture(scope="module")
def inproc(corpus):
    ws = workspace(corpus["home"], corpus["root"])
    ws.graph.graph()
    yield ws
    ws.close()


@pytest.fixture(scope="module")
def server(corpus):
    s = LineServer(corpus["env"])
    s.initialize()
    yield s
    assert s.close() == 0


@pytest.fixture(scope="module")
def tool_args(inproc) -> dict[str, dict[str, Any]]:
    """Arguments of the three measured calls, with node ids taken from a real activation."""
    r = call_tool(inproc, "activate", {"agent_id": "probe", "query": QUERIES["activate"], "top_k": 20})
    assert not r.is_error, r.structured
    ids = [a["node_id"] for a in r.structured["activated"]]
    assert len(ids) >= 5
    fns = [a["node_id"] for a in r.structured["activated"] if a["kind"] in ("fn", "method", "class")] or ids
    return {
        "activate": {"agent_id": "bench", "query": QUERIES["activate"], "coactivation_ltp": False},
        "why": {"agent_id": "bench", "source": fns[0], "target": ids[-1]},
        "impact": {"agent_id": "bench", "node_id": fns[0]},
        "learn": {"agent_id": "bench", "query": QUERIES["activate"], "feedback": "correct", "node_ids": ids[:3]},
    }


def _time(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


RESULTS: dict[str, dict[str, float]] = {}


@pytest.mark.parametrize("tool", ["activate", "why", "impact", "learn"])
def test_stdio_round_trip_overhead(benchmark, corpus, inproc, server, tool_args, tool: str) -> None:
    if tool not in load_all():
        pytest.skip(f"tool {tool} is not registered yet")
    args = tool_args[tool]
    # Same answer both ways (elapsed_ms and response_chars aside).
    direct = call_tool(inproc, tool, args)
    assert not direct.is_error, direct.structured
    via = server.call(tool, args)
    for key in ("activated", "paths", "blast_radius"):
        if key in direct.structured:
            assert [x.get("node_id", x.get("nodes")) for x in via[key]] == \
                   [x.get("node_id", x.get("nodes")) for x in direct.structured[key]]

    for _ in range(WARMUP):
        call_tool(inproc, tool, args)
        server.call(tool, args)
    local, remote = [], []
    for _ in range(ROUNDS):  # interleaved, so drift (flushes, caches) hits both sides alike
        local.append(_time(lambda: call_tool(inproc, tool, args)))
        remote.append(_time(lambda: server.call(tool, args)))
    m_local, m_remote = statistics.median(local), statistics.median(remote)
    q_local, q_remote = _p10(local), _p10(remote)  # less sensitive to other load on the machine
    ratio, ratio_p10 = m_remote / m_local, q_remote / q_local
    RESULTS[tool] = {"inproc_ms": m_local * 1e3, "stdio_ms": m_remote * 1e3, "ratio": ratio, "ratio_p10": ratio_p10}
    benchmark.extra_info.update({"inproc_median_ms": round(m_local * 1e3, 3),
                                 "stdio_median_ms": round(m_remote * 1e3, 3), "overhead_ratio": round(ratio, 3),
                                 "overhead_ratio_p10": round(ratio_p10, 3), "nodes": corpus["nodes"],
                                 "edges": corpus["edges"]})
    sys.stderr.write(f"\n{tool:>8}: in-process {m_local * 1e3:7.3f} ms, stdio {m_remote * 1e3:7.3f} ms, "
                     f"overhead {ratio:.2f}x (+{(m_remote - m_local) * 1e3:.3f} ms); "
                     f"p10 {q_local * 1e3:.3f} vs {q_remote * 1e3:.3f} ms = {ratio_p10:.2f}x "
                     f"[{corpus['nodes']} nodes, {corpus['edges']} edges]\n")
    benchmark.pedantic(server.call, args=(tool, args), rounds=20, iterations=1, warmup_rounds=2)
    # The target is < 1.5x. Timing is reported (extra_info, stderr, the benchmark's own table), never asserted: a
    # ratio of wall-clock medians fails on a busy machine without anything being wrong (issue 14).


def _p10(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 10]


def _start_to_first_call(env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    s = LineServer(env)
    s.initialize()
    s.call("activate", {"agent_id": "bench", "query": QUERIES["activate"], "top_k": 10})
    elapsed = time.perf_counter() - t0
    assert s.close() == 0
    return elapsed


def test_start_to_first_answered_call(benchmark, corpus) -> None:
    _start_to_first_call(corpus["env"])  # warm the OS page cache
    times = [_start_to_first_call(corpus["env"]) for _ in range(3)]
    best, med = min(times), statistics.median(times)
    benchmark.extra_info.update({"median_s": round(med, 3), "min_s": round(best, 3), "nodes": corpus["nodes"]})
    sys.stderr.write(f"\nstart -> first tools/call: median {med * 1e3:.0f} ms, min {best * 1e3:.0f} ms "
                     f"[{corpus['nodes']} nodes]\n")
    benchmark.pedantic(_start_to_first_call, args=(corpus["env"],), rounds=3, iterations=1)
    benchmark.extra_info["target_s"] = START_TARGET_S  # reported against the target, not asserted
