"""``m1nd serve`` over stdio: the official SDK client end to end, then raw newline-JSON on the wire (bad input,
stdout hygiene, notifications, signals and EOF)."""

from __future__ import annotations

import json
import signal
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from test_server_support import (  # noqa: F401 — fixtures are used by name
    RawServer,
    anyio_backend,
    fixture_repo,
    ingest_fixture,
    raw_server,
    server_env,
)

from m1nd.tools.profiles import profile_tools
from m1nd.tools.registry import load_all
from m1nd.mcp.server import instructions

pytestmark = pytest.mark.anyio

ACQUIRE = "file::shop/pool.py::class::SessionPool::fn::acquire"
CONNECT = "file::shop/db.py::fn::connect"
PLACE_ORDER = "file::shop/orders.py::fn::place_order"


def params(env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "m1nd", "serve"], env=env)


# -- official SDK client ----------------------------------------------------------------------------------------------
async def test_sdk_client_end_to_end(server_env: dict[str, str], fixture_repo: Path) -> None:
    async with Client(params(server_env), mode="legacy") as client:
        assert client.server_info is not None and client.server_info.name == "m1nd"
        offered = profile_tools(server_env.get("M1ND_TOOLS", "core"), load_all())
        assert client.instructions == instructions(offered)
        assert client.server_capabilities.tools is not None

        listing = await client.list_tools()
        names = [t.name for t in listing.tools]
        assert {"ingest", "activate", "why", "impact", "health"} <= set(names)
        assert len(names) == len(set(names))
        for t in listing.tools:
            assert t.description, t.name
            Draft202012Validator.check_schema(t.input_schema)
            assert t.input_schema["additionalProperties"] is False
            assert "agent_id" in t.input_schema["properties"] and "agent_id" not in t.input_schema.get("required", [])
            assert t.output_schema is not None
            Draft202012Validator.check_schema(t.output_schema)
            assert "response_chars" in t.output_schema["required"]

        # The SDK validates structured_content against each outputSchema: a free schema check for each call.
        health = await client.call_tool("health", {"agent_id": "alice"})
        assert health.is_error is False
        assert health.structured_content["node_count"] == 0
        assert health.structured_content["transport"] == "stdio"
        assert json.loads(health.content[0].text) == health.structured_content

        empty = await client.call_tool("activate", {"agent_id": "alice", "query": "session pool"})
        assert empty.is_error is True
        assert empty.structured_content["error"]["code"] == "graph_empty"
        assert empty.content[0].text.startswith("Error (graph_empty): ")

        ingested = await client.call_tool("ingest", {"agent_id": "alice", "path": str(fixture_repo)})
        assert ingested.is_error is False, ingested.content[0].text
        assert ingested.structured_content["nodes"]["total"] > 0
        assert ingested.structured_content["graph_generation"] >= 1

        act = await client.call_tool("activate", {"agent_id": "alice", "query": "session pool acquire", "top_k": 5})
        assert act.is_error is False, act.content[0].text
        r = act.structured_content
        assert r["query"] == "session pool acquire"
        assert 0 < len(r["activated"]) <= 5
        assert r["activated"][0]["node_id"] == ACQUIRE
        for hit in r["activated"]:
            assert {"node_id", "label", "kind", "activation", "source_path"} <= set(hit)
        assert r["seeds"] and r["response_chars"] > 0
        assert len(act.content[0].text) <= 8000

        why = await client.call_tool("why", {"agent_id": "alice", "source": PLACE_ORDER, "target": CONNECT})
        assert why.is_error is False, why.content[0].text
        w = why.structured_content
        assert w["total_paths_found"] >= 1 and w["paths"]
        strengths = [p["cumulative_strength"] for p in w["paths"]]
        assert strengths == sorted(strengths, reverse=True)

        imp = await client.call_tool("impact", {"agent_id": "alice", "node_id": CONNECT, "direction": "reverse"})
        assert imp.is_error is False, imp.content[0].text
        i = imp.structured_content
        assert i["direction"] == "reverse"
        reached = {b["node_id"] for b in i["blast_radius"]}
        assert "file::shop/db.py" in reached and ACQUIRE in reached

        small = await client.call_tool("impact", {"agent_id": "alice", "node_id": CONNECT, "max_output_chars": 500})
        assert small.is_error is False
        assert len(small.content[0].text) <= 500 and small.structured_content.get("truncated") is True

        unknown = await client.call_tool("impact", {"agent_id": "alice", "node_id": "file::shop/nope.py"})
        assert unknown.is_error is True and unknown.structured_content["error"]["code"] == "unknown_node"

        after = await client.call_tool("health", {"agent_id": "alice"})
        assert after.structured_content["node_count"] == ingested.structured_content["nodes"]["total"]


@pytest.mark.parametrize(("tool", "arguments", "named"), [
    ("activate", {"agent_id": "a"}, "'query'"),
    ("activate", {"agent_id": "a", "query": "x", "top_k": "many"}, "'top_k'"),
    ("activate", {"agent_id": "a", "query": "x", "top_k": 100000}, "'top_k'"),
    ("activate", {"agent_id": "a", "query": "x", "topk": 3}, "'topk'"),
    ("why", {"agent_id": "a", "source": "x"}, "'target'"),
    ("health", {"agent_id": "bad id!"}, "'agent_id'"),
], ids=["missing", "wrong-type", "out-of-range", "unknown-key", "missing-second", "agent-pattern"])
async def test_sdk_invalid_arguments_are_tool_errors(server_env: dict[str, str], tool: str,
                                                     arguments: dict[str, Any], named: str) -> None:
    async with Client(params(server_env), mode="legacy") as client:
        res = await client.call_tool(tool, arguments)
        assert res.is_error is True
        assert res.structured_content["error"]["code"] == "invalid_argument"
        assert named in res.content[0].text
        with pytest.raises(MCPError) as e:
            await client.call_tool("activat", {"agent_id": "a"})
        assert e.value.code == -32602
        assert "did you mean 'activate'" in e.value.error.message
        assert (await client.call_tool("health", {"agent_id": "a"})).is_error is False  # still serving


async def test_sdk_auto_mode_falls_back_to_initialize(server_env: dict[str, str]) -> None:
    async with Client(params(server_env), mode="auto") as client:
        assert client.protocol_version == "2025-11-25"
        assert (await client.call_tool("health", {"agent_id": "auto"})).is_error is False


# -- raw wire ---------------------------------------------------------------------------------------------------------
BAD_INPUTS = [
    (b'{"jsonrpc": "2.0", "id": 1 "method": "ping"}', -32700, "parse error: Expecting ',' delimiter", None),
    (b"\xff\xfe\xfd", -32700, "parse error", None),
    (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', -32600, "batches are not supported", 1),
    (b'{"id": 5, "method": "ping"}', -32600, "invalid request: 'jsonrpc' must be \"2.0\"", 5),
    (b'{"jsonrpc": "2.0", "id": 6, "method": "resources/list"}', -32601, "method not found: resources/list", 6),
    (b'{"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {}}', -32600, "already initialized", 7),
    (b'{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "activat", "arguments": {}}}', -32602,
     "unknown tool 'activat' (did you mean 'activate'? call tools/list)", 8),
    (b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "health", "arguments": []}}', -32602,
     "invalid params: 'arguments' must be an object", 9),
    (b'{"jsonrpc": "2.0", "id": 10, "method": "server/discover", "params": {}}', -32601,
     "method not found: server/discover", 10),
]


def test_raw_bad_input_keeps_the_server_serving(raw_server) -> None:
    s: RawServer = raw_server()
    r = s.request("tools/list")
    assert r["error"] == {"code": -32600, "message": "server not initialized; send initialize first"}
    s.initialize()
    for raw, code, message, req_id in BAD_INPUTS:
        s.send_raw(raw + b"\n")
        r = s.recv()
        if raw.startswith(b"["):  # a batch is answered by an array: one error per request, by its id
            assert isinstance(r, list) and len(r) == 1, r
            r = r[0]
        assert r["error"]["code"] == code, (raw, r)
        assert message in r["error"]["message"], (raw, r)
        assert r["id"] == req_id
        assert s.request("ping")["result"] == {}

    # Missing / mistyped arguments: isError results naming the argument.
    res = s.call("activate", {"agent_id": "a", "query": 42})
    assert res["isError"] is True and "'query'" in res["content"][0]["text"]
    res = s.call("why", {"agent_id": "a", "source": "x"})
    assert res["isError"] is True and "missing required argument 'target'" in res["content"][0]["text"]

    # A huge string: a line over 4 MiB is refused without being buffered, the next line is served.
    huge = json.dumps({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
                       "params": {"name": "activate", "arguments": {"agent_id": "a", "query": "x" * (5 << 20)}}})
    s.send_raw(huge.encode() + b"\n")
    r = s.recv()
    assert r["id"] is None and r["error"]["code"] == -32600 and "4 MiB" in r["error"]["message"]
    # Under the line limit but over the argument limit: a tool error naming the argument.
    res = s.call("activate", {"agent_id": "a", "query": "y" * (3 << 20)})
    assert res["isError"] is True and "'query' is too long" in res["content"][0]["text"]

    # Blank lines and notifications get no reply; the next line answered is the ping.
    s.send_raw(b"\n   \n")
    s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    s.send({"jsonrpc": "2.0", "method": "no/such/notification"})
    s.send({"jsonrpc": "2.0", "id": 1234, "result": {}})  # a client response: ignored
    r = s.request("ping")
    assert r["result"] == {}
    assert s.close() == 0
    # stdout hygiene: every line is one JSON-RPC message.
    for line in s.raw_stdout:
        got = json.loads(line)
        for msg in got if isinstance(got, list) else [got]:  # a batch with requests is answered by an array
            assert msg["jsonrpc"] == "2.0" and ("result" in msg or "error" in msg)


def test_stdout_stays_clean_when_something_prints(raw_server, tmp_path: Path) -> None:
    """Stray writes to stdout (print, fd 1, child processes) land on stderr, never on the protocol stream."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(textwrap.dedent("""\
        import os, sys
        import m1nd.workspace as _w
        _orig = _w.Workspace.on_server_start
        def _noisy(self):
            print("noise: print")
            sys.stdout.flush()
            os.write(1, b"noise: fd 1\\n")
            os.system("echo noise: child process")
            _orig(self)
            print("noise: after start", flush=True)
        _w.Workspace.on_server_start = _noisy
        """))
    import os

    pythonpath = os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    s: RawServer = raw_server({"PYTHONPATH": pythonpath})
    s.initialize()
    assert s.call("health", {"agent_id": "a"})["isError"] is False
    assert s.close() == 0
    assert s.raw_stdout, s.stderr
    for line in s.raw_stdout:
        assert json.loads(line)["jsonrpc"] == "2.0"
    for noise in ("noise: print", "noise: fd 1", "noise: child process", "noise: after start"):
        assert noise in s.stderr


def test_eof_answers_queued_requests_then_exits(raw_server) -> None:
    s: RawServer = raw_server()
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-03-26"}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
             {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
              "params": {"name": "health", "arguments": {"agent_id": "eof"}}}]
    s.send_raw(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
    assert s.close() == 0
    replies = [json.loads(line) for line in s.raw_stdout]
    assert [r["id"] for r in replies] == [1, 2, 3]
    assert replies[0]["result"]["protocolVersion"] == "2025-03-26"
    assert replies[2]["result"]["isError"] is False
    assert "Traceback" not in s.stderr


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 0), (signal.SIGINT, 130), (None, 0)],
                         ids=["SIGTERM", "SIGINT", "EOF"])
def test_shutdown_flushes_learned_weights(raw_server, server_env: dict[str, str], fixture_repo: Path,
                                          sig: int | None, code: int) -> None:
    ingest_fixture(server_env, fixture_repo)
    s: RawServer = raw_server()
    s.initialize()
    # activate strengthens co-activated edges in memory (learning that is only persisted by a flush).
    res = s.call("activate", {"agent_id": "a", "query": "session pool acquire release"})
    assert res["isError"] is False, res
    strengthened = res["structuredContent"]["learning"]["coactivation_edges_strengthened"]
    dirty = s.call("health", {"agent_id": "a"})["structuredContent"]["dirty_weights"]
    assert dirty == strengthened > 0
    # A call in flight when the signal arrives is finished (its reply may still be written).
    s.send({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
            "params": {"name": "activate", "arguments": {"agent_id": "a", "query": "place order"}}})
    if sig is None:
        assert s.close() == 0  # EOF: the queued call is answered, then weights are flushed
        assert json.loads(s.raw_stdout[-1])["id"] == 77
        assert "shutting down" not in s.stderr
    else:
        assert s.terminate(sig) == code
        name = signal.Signals(sig).name
        assert f"m1nd: shutting down ({name}); flushed " in s.stderr
        flushed = int(s.stderr.split("; flushed ", 1)[1].split()[0])
        assert flushed >= dirty
    for line in s.raw_stdout:
        json.loads(line)

    # The learned weights were persisted: a new server reports none dirty and a bumped weights generation.
    s2: RawServer = raw_server()
    s2.initialize()
    h = s2.call("health", {"agent_id": "b"})["structuredContent"]
    assert h["weights_generation"] >= 1 and h["dirty_weights"] == 0
    assert s2.close() == 0


def test_start_to_first_call_on_a_persisted_graph(raw_server, server_env: dict[str, str],
                                                  fixture_repo: Path) -> None:
    # How fast is measured by bench/test_mcp_bench.py (a benchmark); here only that it works.
    ingest_fixture(server_env, fixture_repo)
    s: RawServer = raw_server()
    s.initialize()
    res = s.call("activate", {"agent_id": "a", "query": "connect"})
    assert res["isError"] is False
    assert s.close() == 0
