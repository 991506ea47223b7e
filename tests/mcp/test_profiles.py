"""Tool profiles and optional agent ids (issue 15 items 1 and 2): what ``tools/list`` offers under each profile,
how the profile is chosen (flag, environment, config file), and which agent acts when a call carries no agent_id.
Server tests go through the official MCP SDK client."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import Implementation

from test_server_support import (  # noqa: F401 — fixtures are used by name
    RawServer,
    anyio_backend,
    fixture_repo,
    full_env,
    http_server,
    server_env,
)

from m1nd.tools.profiles import CORE, CORE_PARAMS, PROFILES, listed_params, profile_tools
from m1nd.tools.registry import load_all

CORE_MAX_TOOLS = 12
CORE_MAX_CHARS = 16_000


def listing_json(profile: str) -> str:
    tools = load_all()
    return json.dumps({"tools": [tools[n].listing(listed_params(profile, n)) for n in profile_tools(profile, tools)]},
                      separators=(",", ":"), ensure_ascii=False)


# -- declarations ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
def test_every_parameter_of_every_listed_tool_has_a_description(profile: str) -> None:
    tools = load_all()
    names = profile_tools(profile, tools)
    assert names and len(names) == len(set(names))
    for name in names:
        listing = tools[name].listing(listed_params(profile, name))
        Draft202012Validator.check_schema(listing["inputSchema"])
        for pname, schema in listing["inputSchema"]["properties"].items():
            assert schema.get("description", "").strip(), f"{profile}: {name}.{pname} has no description"


def test_every_declared_parameter_has_a_description() -> None:
    missing = [f"{t.name}.{p.name}" for t in load_all().values() for p in t.all_params if not p.description.strip()]
    assert missing == []


def test_core_profile_is_small() -> None:
    tools = load_all()
    core = profile_tools("core", tools)
    assert set(core) == set(CORE) and len(core) <= CORE_MAX_TOOLS
    assert len(listing_json("core")) <= CORE_MAX_CHARS
    assert len(listing_json("core")) < len(listing_json("all")) / 3
    assert set(CORE_PARAMS) == set(CORE)
    for name, shown in CORE_PARAMS.items():  # the listed subset names real parameters, required ones included
        declared = {p.name for p in tools[name].params}
        assert set(shown) <= declared, name
        assert {p.name for p in tools[name].params if p.required} <= set(shown), name


def test_profiles_partition_sensibly() -> None:
    tools = load_all()
    assert profile_tools("all", tools) == list(tools)
    for profile in ("graph", "memory", "perspectives"):
        names = profile_tools(profile, tools)
        assert {"health", "ingest"} <= set(names) and len(names) < 40, profile
    assert any(n.startswith("perspective_") for n in profile_tools("perspectives", tools))
    assert any(n.startswith("memory_") for n in profile_tools("memory", tools))
    union = set().union(*(profile_tools(p, tools) for p in ("core", "graph", "memory", "perspectives")))
    assert union == set(tools)  # every tool is reachable without `all`


# -- the server -----------------------------------------------------------------------------------------------------
def params(env: dict[str, str], args: list[str] | None = None, cwd: Path | None = None) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "m1nd", "serve", *(args or [])], env=env,
                                 cwd=str(cwd) if cwd else None)


def without_profile(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k != "M1ND_TOOLS"}




@pytest.mark.anyio
async def test_default_profile_is_core_and_other_tools_are_refused(server_env: dict[str, str]) -> None:
    async with Client(params(without_profile(server_env)), mode="legacy") as client:
        listing = await client.list_tools()
        names = [t.name for t in listing.tools]
        assert sorted(names) == sorted(CORE)
        wire = json.dumps({"tools": [t.model_dump(by_alias=True, exclude_none=True) for t in listing.tools]},
                          separators=(",", ":"), ensure_ascii=False)
        assert len(wire) <= CORE_MAX_CHARS
        for t in listing.tools:
            Draft202012Validator.check_schema(t.input_schema)
            assert all(s.get("description") for s in t.input_schema["properties"].values()), t.name
        with pytest.raises(MCPError) as e:
            await client.call_tool("perspective_list", {})
        assert e.value.code == -32602
        assert "not in the 'core' tool profile" in e.value.error.message and "--tools" in e.value.error.message
        # A parameter the core listing leaves out is still accepted.
        res = await client.call_tool("health", {"max_output_chars": 4000})
        assert res.is_error is False


@pytest.mark.anyio
@pytest.mark.parametrize(("how", "expect"), [("flag", "graph"), ("env", "memory"), ("config", "perspectives"),
                                             ("flag-beats-env", "all")])
async def test_profile_from_flag_env_or_config_file(server_env: dict[str, str], tmp_path: Path, how: str,
                                                    expect: str) -> None:
    env = without_profile(server_env)
    args: list[str] = []
    if how == "flag":
        args = ["--tools", "graph"]
    elif how == "env":
        env["M1ND_TOOLS"] = "memory"
    elif how == "config":
        home = Path(env["M1ND_HOME"])
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text('tools = "perspectives"\n', encoding="utf-8")
    else:
        env["M1ND_TOOLS"] = "memory"
        args = ["--tools", "all"]
    async with Client(params(env, args), mode="legacy") as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert names == set(profile_tools(expect, load_all()))


def test_unknown_profile_is_refused_before_serving(server_env: dict[str, str]) -> None:
    for args, env in ((["--tools", "everything"], {}), ([], {"M1ND_TOOLS": "cor"})):
        out = subprocess.run([sys.executable, "-m", "m1nd", "serve", *args], input=b"", capture_output=True,
                             env=full_env({**without_profile(server_env), **env}), timeout=60)
        assert out.returncode == 2
        err = out.stderr.decode()
        assert "unknown tool profile" in err and "core, graph, memory, perspectives, all" in err
        assert out.stdout == b""


# -- agent ids ------------------------------------------------------------------------------------------------------
async def _add_private(client: Client, title: str) -> str:
    res = await client.call_tool("memory_add", {"title": title, "category": "gotcha", "private": True,
                                                "content": f"{title} body"})
    assert res.is_error is False, res.content[0].text
    return res.structured_content["id"]


async def _search(client: Client, words: str) -> set[str]:
    res = await client.call_tool("memory_search", {"query": words})
    assert res.is_error is False, res.content[0].text
    return {r["id"] for r in res.structured_content["results"]}


@pytest.mark.anyio
async def test_two_clients_without_agent_id_keep_private_memory_apart(server_env: dict[str, str]) -> None:
    env = without_profile(server_env)
    async with Client(params(env), mode="legacy", client_info=Implementation(name="cursor", version="1")) as a, \
            Client(params(env), mode="legacy", client_info=Implementation(name="cursor", version="1")) as b:
        mine = await _add_private(a, "zebra migration quirk")
        theirs = await _add_private(b, "zebra cache quirk")
        assert await _search(a, "zebra quirk") == {mine}
        assert await _search(b, "zebra quirk") == {theirs}
        # An explicit agent_id still wins over the connection's agent.
        res = await a.call_tool("memory_search", {"query": "zebra quirk", "agent_id": "someone-else"})
        assert res.structured_content["results"] == []


@pytest.mark.anyio
async def test_server_agent_flag_names_every_call_without_agent_id(server_env: dict[str, str]) -> None:
    env = without_profile(server_env)
    async with Client(params(env, ["--agent", "bob"]), mode="legacy") as a:
        entry = await _add_private(a, "walrus deploy note")
    async with Client(params(env, ["--agent", "bob"]), mode="legacy") as again, \
            Client(params(env), mode="legacy") as stranger:
        assert await _search(again, "walrus note") == {entry}  # same name, new connection: same agent
        assert await _search(stranger, "walrus note") == set()
        res = await stranger.call_tool("memory_search", {"query": "walrus note", "agent_id": "bob"})
        assert {r["id"] for r in res.structured_content["results"]} == {entry}


def test_bad_server_agent_is_refused(server_env: dict[str, str]) -> None:
    out = subprocess.run([sys.executable, "-m", "m1nd", "serve", "--agent", "bad name!"], input=b"",
                         capture_output=True, env=full_env(server_env), timeout=60)
    assert out.returncode == 2 and "agent name 'bad name!'" in out.stderr.decode()


def test_raw_session_agent_is_client_name_at_session(server_env: dict[str, str]) -> None:
    """Over the wire: health lists the agents that made calls; the derived name is client@token."""
    s = RawServer(server_env)
    try:
        s.initialize()  # clientInfo name "raw-test"
        res = s.call("memory_add", {"title": "otter", "category": "gotcha", "content": "x"})
        assert res["isError"] is False, res
        shown = s.call("memory_show", {"id": res["structuredContent"]["id"]})["structuredContent"]
        text = json.dumps(shown)
        assert "raw-test@" in text
    finally:
        s.close()


@pytest.mark.anyio
async def test_http_sessions_without_agent_id_are_separate_agents(http_server) -> None:
    """The same rule over HTTP: the client's name and the Mcp-Session-Id name the agent."""
    srv = http_server(env={"M1ND_TOOLS": "core"})
    info = Implementation(name="vscode", version="1")
    async with Client(srv.url, mode="legacy", client_info=info) as a, \
            Client(srv.url, mode="legacy", client_info=info) as b:
        assert len((await a.list_tools()).tools) == len(CORE)
        mine = await _add_private(a, "heron retry gotcha")
        theirs = await _add_private(b, "heron timeout gotcha")
        assert await _search(a, "heron gotcha") == {mine}
        assert await _search(b, "heron gotcha") == {theirs}
    async with Client(srv.url, mode="legacy", client_info=info) as again:
        assert await _search(again, "heron gotcha") == set()  # a new session is a new agent
