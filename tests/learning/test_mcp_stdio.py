"""The learning and trail tools over ``m1nd serve`` (stdio) with the official SDK client: schemas, structured
results validated by the client against each ``outputSchema``, the ``server_start`` baseline recorded by serve, and
two sequential server processes on one store (drift across the restart, trails kept)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from .support import call, open_workspace, write_repo

pytestmark = pytest.mark.anyio
CACHE = "file::pkg/cache.py::class::Cache"
POOL = "file::pkg/pool.py"
TOOLS = {"learn", "drift", "persist", "trail_save", "trail_resume", "trail_list", "trail_merge"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def setup(tmp_path: Path, learning_store: str | None) -> tuple[dict[str, str], Path]:
    repo = write_repo(tmp_path / "repo")
    home = tmp_path / "home"
    ws = open_workspace(home, repo, memory_url=learning_store)
    call(ws, "ingest", path=str(repo))
    ws.close()
    env = {**os.environ, "M1ND_HOME": str(home), "M1ND_WORKSPACE": str(repo), "M1ND_EMBEDDER": "hashing",
           "SKBUILD_EDITABLE_VERBOSE": "0", "M1ND_TOOLS": "all"}
    if learning_store:  # the served workspace keeps its trails and learned weights on the server
        env["M1ND_MEMORY_URL"] = learning_store
    return env, repo


def params(env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "m1nd", "serve"], env=env)


async def _call(client, name: str, **args):
    res = await client.call_tool(name, {"agent_id": "sdk-agent", **args})
    assert res.is_error is False, res.content[0].text
    return res.structured_content


async def test_learning_and_trail_tools_over_stdio(setup) -> None:
    env, _repo = setup
    async with Client(params(env), mode="legacy") as client:
        listing = {t.name: t for t in (await client.list_tools()).tools}
        assert set(listing) >= TOOLS
        assert listing["learn"].input_schema["properties"]["feedback"]["enum"] == ["correct", "wrong", "partial"]
        assert listing["drift"].annotations.read_only_hint is True
        assert listing["trail_resume"].input_schema["properties"]["trail_id"]["pattern"].startswith("^trail_")

        await _call(client, "activate", query="login token")
        learned = await _call(client, "learn", query="login token", feedback="correct", node_ids=[CACHE])
        assert learned["seed_source"] == "query_log" and learned["edges_adjusted"] > 0
        drift = await _call(client, "drift", since="this_session")
        assert drift["baseline"]["kind"] == "server_start"  # recorded by serve before the first request
        assert drift["weights_changed_total"] >= learned["edges_adjusted"]
        assert (await _call(client, "persist", action="status"))["action"] == "status"
        a = await _call(client, "trail_save", label="one", hypotheses=[
            {"statement": "The pool leaks", "supporting_nodes": [POOL]}])
        b = await _call(client, "trail_save", label="two", visited_nodes=[{"node_external_id": CACHE}])
        listed = await _call(client, "trail_list")
        assert listed["total_count"] == 2
        resumed = await _call(client, "trail_resume", trail_id=a["trail_id"])
        assert resumed["nodes_reactivated"] == 1 and resumed["trail"]["status"] == "active"
        merged = await _call(client, "trail_merge", trail_ids=[a["trail_id"], b["trail_id"]])
        assert merged["source_trails"] == [a["trail_id"], b["trail_id"]]

        bad = await client.call_tool("trail_resume", {"agent_id": "sdk-agent", "trail_id": "nope"})
        assert bad.is_error is True
        assert bad.content[0].text.startswith("Error (invalid_argument): 'nope' is not a trail id")
        bad = await client.call_tool("learn", {"agent_id": "sdk-agent", "query": "q", "feedback": "meh",
                                               "node_ids": [CACHE]})
        assert bad.structured_content["error"]["message"] == (
            'feedback must be "correct", "wrong" or "partial" (got "meh")')

    # a second server process: drift since the previous session shows the learning, trails are all there
    async with Client(params(env), mode="legacy") as client:
        drift = await _call(client, "drift")
        assert drift["baseline"]["kind"] == "server_start" and "baseline_note" not in drift
        assert drift["strengthened_total"] > 0 and drift["learn_events_since"] == 1
        listed = await _call(client, "trail_list")
        assert listed["total_count"] == 3
        assert {t["status"] for t in listed["trails"]} == {"merged", "saved"}
