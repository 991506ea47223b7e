"""The workspace a server serves (issue 15 item 3): the client's MCP roots when it announces them (asked with
``roots/list``, asked again on ``notifications/roots/list_changed``), else ``--workspace``, else the current
directory; errors name the workspace they checked. The README's host configurations (Claude Code, Cursor, VS Code)
are started the way each host starts them. Everything goes through the official MCP SDK client."""

from __future__ import annotations

import json
import re
import shutil
import sys
import warnings
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import ListRootsResult, Root

from test_server_support import (  # noqa: F401 — fixtures are used by name
    anyio_backend,
    fixture_repo,
    http_server,
    server_env,
    write_fixture_repo,
)

pytestmark = pytest.mark.anyio

README = Path(__file__).resolve().parents[2] / "README.md"
ACQUIRE = "file::shop/pool.py::class::SessionPool::fn::acquire"


def host_env(server_env: dict[str, str]) -> dict[str, str]:
    """The test server environment without a workspace chosen by variable: as a host starts the server."""
    return {k: v for k, v in server_env.items() if k not in ("M1ND_WORKSPACE", "M1ND_TOOLS")}


def m1nd_command() -> str:
    """The ``m1nd`` console script of this interpreter (hosts run ``m1nd`` from PATH)."""
    script = Path(sys.executable).parent / "m1nd"
    found = str(script) if script.exists() else shutil.which("m1nd")
    if not found:
        pytest.skip("the m1nd console script is not installed next to this interpreter")
    return found


def roots_of(*paths: Path):
    current = list(paths)

    async def list_roots(_context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=p.as_uri(), name=p.name) for p in current])

    return list_roots, current


async def workspace_of(client: Client) -> str:
    res = await client.call_tool("health", {})
    assert res.is_error is False, res.content[0].text
    return res.structured_content["workspace"]


def elsewhere(tmp_path: Path) -> Path:
    d = tmp_path / "host-cwd"
    d.mkdir(exist_ok=True)
    return d


# -- roots ----------------------------------------------------------------------------------------------------------
async def test_client_roots_choose_the_workspace(server_env: dict[str, str], fixture_repo: Path,
                                                 tmp_path: Path) -> None:
    callback, _ = roots_of(fixture_repo)
    params = StdioServerParameters(command=sys.executable, args=["-m", "m1nd", "serve"], env=host_env(server_env),
                                   cwd=str(elsewhere(tmp_path)))
    async with Client(params, mode="legacy", list_roots_callback=callback) as client:
        assert await workspace_of(client) == str(fixture_repo)
        empty = await client.call_tool("activate", {"query": "session pool"})
        assert empty.is_error is True
        err = empty.structured_content["error"]
        assert err["code"] == "graph_empty" and str(fixture_repo) in err["message"]
        assert "--workspace" in err["recover"]
        ingested = await client.call_tool("ingest", {"path": str(fixture_repo)})
        assert ingested.is_error is False, ingested.content[0].text
        act = await client.call_tool("activate", {"query": "session pool acquire", "top_k": 3})
        assert act.structured_content["activated"][0]["node_id"] == ACQUIRE


async def test_roots_list_changed_switches_the_workspace(server_env: dict[str, str], fixture_repo: Path,
                                                         tmp_path: Path) -> None:
    other = write_fixture_repo(tmp_path / "other")
    callback, current = roots_of(fixture_repo)
    params = StdioServerParameters(command=sys.executable, args=["-m", "m1nd", "serve"], env=host_env(server_env),
                                   cwd=str(elsewhere(tmp_path)))
    async with Client(params, mode="legacy", list_roots_callback=callback) as client:
        assert (await client.call_tool("ingest", {"path": str(fixture_repo)})).is_error is False
        assert (await workspace_of(client)) == str(fixture_repo)
        current[:] = [other]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the SDK marks roots deprecated for protocol versions after ours
            await client.send_roots_list_changed()
        assert (await workspace_of(client)) == str(other)
        health = await client.call_tool("health", {})
        assert health.structured_content["node_count"] == 0  # a different graph: the other root is not ingested
        current[:] = [fixture_repo]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await client.send_roots_list_changed()
        back = await client.call_tool("health", {})
        assert back.structured_content["workspace"] == str(fixture_repo) and back.structured_content["node_count"] > 0


async def test_without_roots_workspace_flag_then_current_directory(server_env: dict[str, str], fixture_repo: Path,
                                                                   tmp_path: Path) -> None:
    cwd_params = StdioServerParameters(command=sys.executable, args=["-m", "m1nd", "serve"],
                                       env=host_env(server_env), cwd=str(fixture_repo))
    async with Client(cwd_params, mode="legacy") as client:
        assert await workspace_of(client) == str(fixture_repo)
    flag_params = StdioServerParameters(command=sys.executable,
                                        args=["-m", "m1nd", "serve", "--workspace", str(fixture_repo)],
                                        env=host_env(server_env), cwd=str(elsewhere(tmp_path)))
    async with Client(flag_params, mode="legacy") as client:
        assert await workspace_of(client) == str(fixture_repo)
        empty = await client.call_tool("why", {"source": "a", "target": "b"})
        err = empty.structured_content["error"]
        assert err["code"] == "graph_empty" and f"workspace {fixture_repo} is empty" in err["message"]


async def test_http_client_roots_choose_its_session_workspace(http_server, fixture_repo: Path,
                                                              tmp_path: Path) -> None:
    """Over HTTP the roots/list request travels on the session's GET event stream; a session without roots keeps
    the server's workspace (here --workspace by variable, a different directory)."""
    server_ws = elsewhere(tmp_path)
    srv = http_server(env={"M1ND_WORKSPACE": str(server_ws), "M1ND_TOOLS": "core"})
    callback, _ = roots_of(fixture_repo)
    async with Client(srv.url, mode="legacy", list_roots_callback=callback) as client:
        # The client opens its event stream right after initialize; the first calls may precede the answer.
        for _ in range(200):
            if await workspace_of(client) == str(fixture_repo):
                break
            await anyio.sleep(0.05)
        assert await workspace_of(client) == str(fixture_repo)
        async with Client(srv.url, mode="legacy") as plain:
            assert await workspace_of(plain) == str(server_ws)
        assert (await client.call_tool("ingest", {"path": str(fixture_repo)})).is_error is False
        act = await client.call_tool("activate", {"query": "session pool acquire", "top_k": 3})
        assert act.structured_content["activated"][0]["node_id"] == ACQUIRE


# -- README host configurations -------------------------------------------------------------------------------------
def readme_config(host: str) -> dict[str, Any]:
    """The JSON block that follows ``<!-- host: NAME -->`` in the README."""
    text = README.read_text(encoding="utf-8")
    m = re.search(r"<!-- host: " + re.escape(host) + r" -->\s*```json\n(.*?)\n```", text, re.S)
    assert m is not None, f"README has no configuration for {host}"
    return json.loads(m.group(1))


def server_entry(config: dict[str, Any]) -> dict[str, Any]:
    servers = config.get("mcpServers") or config.get("servers")
    assert servers and "m1nd" in servers, config
    return servers["m1nd"]


def expand(value: str, workspace: Path) -> str:
    """The variables Cursor and VS Code expand in their MCP configurations."""
    return value.replace("${workspaceFolder}", str(workspace))


# How each host starts a stdio server: the working directory, and whether it announces roots.
#  - Claude Code: project servers (.mcp.json) start in the project directory.
#  - Cursor: the working directory is not the project; ${workspaceFolder} is expanded in args.
#  - VS Code: the server starts outside the project (no cwd in the snippet) and the workspace folders are roots.
HOSTS = {"claude-code": ("project", False), "cursor": ("elsewhere", False), "vscode": ("elsewhere", True)}


@pytest.mark.parametrize("host", sorted(HOSTS))
async def test_readme_host_configuration(host: str, server_env: dict[str, str], fixture_repo: Path,
                                         tmp_path: Path) -> None:
    entry = server_entry(readme_config(host))
    assert entry["command"] == "m1nd"
    if "type" in entry:
        assert entry["type"] == "stdio"
    args = [expand(a, fixture_repo) for a in entry.get("args", [])]
    where, sends_roots = HOSTS[host]
    cwd = expand(entry["cwd"], fixture_repo) if "cwd" in entry else (
        str(fixture_repo) if where == "project" else str(elsewhere(tmp_path)))
    env = {**host_env(server_env), **{k: expand(str(v), fixture_repo) for k, v in entry.get("env", {}).items()}}
    params = StdioServerParameters(command=m1nd_command(), args=args, env=env, cwd=cwd)
    kwargs: dict[str, Any] = {}
    if sends_roots:
        kwargs["list_roots_callback"] = roots_of(fixture_repo)[0]
    async with Client(params, mode="legacy", **kwargs) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"health", "ingest", "activate"} <= names and len(names) <= 12
        assert await workspace_of(client) == str(fixture_repo)
        assert (await client.call_tool("ingest", {"path": str(fixture_repo)})).is_error is False
        act = await client.call_tool("activate", {"query": "session pool acquire", "top_k": 3})
        assert act.structured_content["activated"][0]["node_id"] == ACQUIRE
