"""``m1nd serve`` follows edits (issue 15 item 4), through the official MCP SDK client, and ``m1nd watch``."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from m1nd.config import Settings
from m1nd.store.graph_repo import GraphStore
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from test_server_support import (  # noqa: F401 — fixtures are used by name
    anyio_backend,
    fixture_repo,
    full_env,
    ingest_fixture,
    server_env,
)

pytestmark = pytest.mark.anyio
SETTLE_S = 120.0  # generous overall bound; nothing here asserts how long a step took


def params(env: dict[str, str], *args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "m1nd", "serve", *args], env=env)


def add_function(repo: Path, name: str) -> None:
    p = repo / "shop/pool.py"
    p.write_text(p.read_text() + f"\n\ndef {name}():\n    return connect('x')\n", encoding="utf-8")


async def poll_activate(client: Client, query: str, until) -> dict:
    end = time.monotonic() + SETTLE_S
    while time.monotonic() < end:
        r = await client.call_tool("activate", {"query": query, "coactivation_ltp": False})
        assert r.is_error is False, r.content[0].text
        if until(r.structured_content):
            return r.structured_content
        await anyio.sleep(0.1)
    raise AssertionError(f"activate never satisfied the condition for {query!r}")


def found(name: str):
    return lambda out: any(a["node_id"].endswith(f"fn::{name}") for a in out["activated"][:5])


async def test_server_watches_by_default_and_reports_stale(server_env: dict[str, str], fixture_repo: Path,
                                                           tmp_path: Path) -> None:
    ingest_fixture(server_env, fixture_repo)
    settings = Settings(home=Path(server_env["M1ND_HOME"]), workspace_key=fixture_repo, busy_timeout_ms=10000)
    async with Client(params(server_env), mode="legacy") as client:
        first = await poll_activate(client, "session pool", lambda out: True)
        assert first["stale"] is False
        health = await client.call_tool("health", {})
        assert health.structured_content["watch"] == {"stale": False, "watchers": 1}
        # Hold the store's ingest lock, as a long CLI ingest would: the server's watcher sees the edit but has to
        # wait, so the edit is pending and activate must say so.
        store = GraphStore(settings.graph_db, busy_timeout_ms=10000)
        token = store.acquire_ingest_lock()
        try:
            add_function(fixture_repo, "drain_connections_wombat")
            stale = await poll_activate(client, "drain connections", lambda out: out["stale"])
            assert stale["pending_files"] == ["shop/pool.py"] and stale["pending_count"] == 1
            assert not found("drain_connections_wombat")(stale)
        finally:
            store.release_ingest_lock(token)
            store.close()
        fresh = await poll_activate(client, "drain_connections_wombat", found("drain_connections_wombat"))
        assert fresh["graph_generation"] > first["graph_generation"]
        await poll_activate(client, "drain connections", lambda out: out["stale"] is False)
        # a second edit, with nothing in the way
        add_function(fixture_repo, "rotate_credentials_axolotl")
        await poll_activate(client, "rotate_credentials_axolotl", found("rotate_credentials_axolotl"))


async def test_no_watch_leaves_the_graph_alone(server_env: dict[str, str], fixture_repo: Path) -> None:
    ingest_fixture(server_env, fixture_repo)
    async with Client(params(server_env, "--no-watch"), mode="legacy") as client:
        await poll_activate(client, "session pool", lambda out: True)
        assert (await client.call_tool("health", {})).structured_content["watch"]["watchers"] == 0
        add_function(fixture_repo, "unwatched_edit_gecko")
        await anyio.sleep(1.5)  # ample time for a watcher to have started a batch, had there been one
        r = await client.call_tool("ingest", {"path": str(fixture_repo), "embed": "skip"})
        assert r.is_error is False, r.content[0].text
        assert r.structured_content["files_parsed"] == 1  # nobody re-ingested the edit before this call
        await poll_activate(client, "unwatched_edit_gecko", found("unwatched_edit_gecko"))


def test_watch_cli_follows_edits(server_env: dict[str, str], fixture_repo: Path) -> None:
    env = full_env({k: v for k, v in server_env.items() if k != "M1ND_WORKSPACE"})
    proc = subprocess.Popen([sys.executable, "-m", "m1nd", "watch", str(fixture_repo), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        first = json.loads(proc.stdout.readline())  # PATH was not a root yet: ingested first
        assert first["changed"] is True and first["nodes"]["total"] > 0
        for _ in range(100):  # progress lines of the first ingest may come first
            line = proc.stderr.readline()
            if "watching" in line or not line:
                break
        assert f"watching {fixture_repo}" in line
        add_function(fixture_repo, "defrag_cache_manatee")
        end = time.monotonic() + SETTLE_S
        while time.monotonic() < end:
            report = json.loads(proc.stdout.readline())
            if report.get("changed"):
                break
        assert report["files_parsed"] >= 1
        out = subprocess.run([sys.executable, "-m", "m1nd", "--workspace", str(fixture_repo), "activate",
                              "defrag_cache_manatee", "--json"], capture_output=True, text=True, env=env, timeout=300,
                             check=False)
        assert out.returncode == 0, out.stderr
        got = json.loads(out.stdout)
        assert any(a["node_id"].endswith("fn::defrag_cache_manatee") for a in got["activated"][:5])
        assert got["stale"] is False
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    assert code == 0


def test_watch_cli_without_a_graph_says_what_to_do(server_env: dict[str, str], tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    out = subprocess.run([sys.executable, "-m", "m1nd", "--workspace", str(empty), "watch"], capture_output=True,
                         text=True, env=full_env({"M1ND_HOME": server_env["M1ND_HOME"]}), timeout=120, check=False)
    assert out.returncode == 1
    assert f"nothing is ingested in workspace {empty}" in out.stderr and "m1nd watch PATH" in out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""
