"""An agent writes as itself (issue 14): one rule (``m1nd.memory.fields.check_acting_agent``), one table, run
through the CLI and through the MCP tools. Refused rows write nothing into anyone's private space; allowed rows
write as the acting agent."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from m1nd.tools.registry import call_tool
from memory_backends import rows

ME, OTHER = "alice", "bob"
ENTRY = ["--category", "insight", "-t", "T", "--content", "the text"]
ENTRY_MCP = {"category": "insight", "title": "T", "content": "the text"}

# (row id, CLI arguments after `memory`, MCP (tool, arguments), refused?)
TABLE: list[tuple[str, list[str], tuple[str, dict[str, Any]], bool]] = [
    ("owner-other", ["add", *ENTRY, "--private", "--owner", OTHER],
     ("memory_add", {**ENTRY_MCP, "private": True, "owner": OTHER}), True),
    ("source-agent-other", ["add", *ENTRY, "--source-agent", OTHER],
     ("memory_add", {**ENTRY_MCP, "source_agent": OTHER}), True),
    ("fact-source-agent-other", ["add", "--type", "insight", "--content", "x", "--source-agent", OTHER],
     ("memory_add", {"type": "insight", "content": "x", "source_agent": OTHER}), True),
    ("batch-owner-other", ["add-batch"],
     ("memory_add_batch", {"entries": [{**ENTRY_MCP, "visibility": "private", "owner": OTHER}]}), True),
    ("batch-source-agent-other", ["add-batch"],
     ("memory_add_batch", {"entries": [{**ENTRY_MCP, "source_agent": OTHER}]}), True),
    ("update-owner-other", ["update", "{id}", "--private", "--owner", OTHER],
     ("memory_update", {"id": "{id}", "private": True, "owner": OTHER}), True),
    ("private-as-self", ["add", *ENTRY, "--private", "--owner", ME],
     ("memory_add", {**ENTRY_MCP, "private": True}), False),
    ("source-agent-self", ["add", *ENTRY, "--source-agent", ME], ("memory_add", ENTRY_MCP), False),
    ("update-private-as-self", ["update", "{id}", "--private"],
     ("memory_update", {"id": "{id}", "private": True}), False),
]
BATCH_LINES = {"batch-owner-other": {"category": "insight", "title": "T", "content": "the text",
                                     "visibility": "private", "owner": OTHER},
               "batch-source-agent-other": {"category": "insight", "title": "T", "content": "the text",
                                            "source_agent": OTHER}}


def _written_for_other(read: Callable[[str], list[tuple]]) -> int:
    return len(read(f"SELECT 1 FROM entries WHERE owner = '{OTHER}' OR source_agent = '{OTHER}'"))


@pytest.mark.parametrize(("row", "argv", "mcp", "refused"), TABLE, ids=[r[0] for r in TABLE])
def test_cli(cli, row: str, argv: list[str], mcp: tuple[str, dict[str, Any]], refused: bool) -> None:
    eid = cli.add("--category", "insight", "-t", "Mine", "--content", "mine", agent=ME)
    argv = [a.replace("{id}", eid) for a in argv]
    before = len(cli.rows("SELECT 1 FROM entries"))
    if row in BATCH_LINES:
        r = cli(*argv, "--json", input=json.dumps(BATCH_LINES[row]) + "\n", agent=ME)
        ok = r.code == 0 and not r.json()["failed"]
        if not ok:
            assert "another agent" in r.out + r.err
    else:
        r = cli(*argv, agent=ME)
        ok = r.code == 0
        if not ok:
            assert "another agent" in r.err and "Traceback" not in r.err
    assert ok is not refused, (r.out, r.err)
    assert _written_for_other(cli.rows) == 0
    if refused:
        assert len(cli.rows("SELECT 1 FROM entries")) == before


@pytest.mark.parametrize(("row", "argv", "mcp", "refused"), TABLE, ids=[r[0] for r in TABLE])
def test_mcp(memory_ws, row: str, argv: list[str], mcp: tuple[str, dict[str, Any]], refused: bool) -> None:
    made = call_tool(memory_ws, "memory_add", {"agent_id": ME, "category": "insight", "title": "Mine",
                                               "content": "mine"})
    eid = made.structured["id"]
    tool, args = mcp[0], json.loads(json.dumps(mcp[1]).replace("{id}", eid))
    def read(sql: str) -> list[tuple]:
        return rows(memory_ws.settings.memory_db, memory_ws.settings.memory_url, sql)

    before = len(read("SELECT 1 FROM entries"))
    res = call_tool(memory_ws, tool, {"agent_id": ME, **args})
    ok = not res.is_error and not res.structured.get("failed")
    assert ok is not refused, res.structured
    assert _written_for_other(read) == 0
    if refused:
        assert len(read("SELECT 1 FROM entries")) == before
