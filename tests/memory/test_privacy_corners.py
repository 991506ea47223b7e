"""Privacy corners of issue 14: a session known only through another agent's private entries stays hidden, and
visibility and owner are part of a duplicate's identity."""

from __future__ import annotations

from pathlib import Path

import pytest
from m1nd.config import Settings
from m1nd.tools.registry import call_tool
from m1nd.workspace import Workspace


def _session_ids(cli, agent: str) -> set[str]:
    r = cli("sessions", "list", "--json", agent=agent)
    assert r.code == 0, r.err
    return {s["id"] for s in r.json()}


def test_sessions_list_hides_sessions_known_only_through_private_entries(cli) -> None:
    cli.add("--category", "insight", "-t", "Secret", "--content", "x", "--private", "--session-id", "bob-work",
            agent="bob")
    cli.add("--category", "insight", "-t", "Open", "--content", "y", "--session-id", "shared", agent="bob")
    r = cli("sessions", "create", "--json", agent="bob")
    assert r.code == 0, r.err
    empty = r.json()["id"]
    assert _session_ids(cli, "alice") == {"shared", empty}
    assert _session_ids(cli, "bob") == {"bob-work", "shared", empty}
    # Once the session holds something alice may see, she sees it.
    cli.add("--category", "insight", "-t", "Later", "--content", "z", "--session-id", "bob-work", agent="bob")
    assert "bob-work" in _session_ids(cli, "alice")


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("M1ND_MEMORY_DB", raising=False)
    w = Workspace(Settings(home=tmp_path / "home", workspace_key=tmp_path, busy_timeout_ms=5000), transport="mcp")
    yield w
    w.close()


def _call(ws, name: str, agent: str, **args):
    r = call_tool(ws, name, {"agent_id": agent, **args})
    assert not r.is_error, r.structured
    return r.structured


def test_memory_sessions_tool_hides_them_too(ws) -> None:
    _call(ws, "memory_add", "bob", category="insight", title="Secret", content="x", private=True, session_id="b1")
    assert "b1" not in {s["id"] for s in _call(ws, "memory_sessions", "alice", action="list")["sessions"]}
    assert "b1" in {s["id"] for s in _call(ws, "memory_sessions", "bob", action="list")["sessions"]}


@pytest.mark.parametrize("first_private", [True, False], ids=["private-then-public", "public-then-private"])
def test_visibility_is_part_of_a_duplicates_identity(ws, first_private: bool) -> None:
    entry = {"category": "insight", "title": "Same", "content": "same words", "session_id": "s1"}
    a = _call(ws, "memory_add", "alice", **entry, private=first_private)
    b = _call(ws, "memory_add", "alice", **entry, private=not first_private)
    assert b.get("status") != "already_persisted" and b["id"] != a["id"]
    seen = {e["id"]: e["visibility"] for e in _call(ws, "memory_list", "alice", session_id="s1")["entries"]}
    assert sorted(seen.values()) == ["private", "public"]
    # The same visibility still deduplicates.
    again = _call(ws, "memory_add", "alice", **entry, private=first_private)
    assert again["status"] == "already_persisted" and again["id"] == a["id"]
    # Another agent's equal public entry is its own.
    other = _call(ws, "memory_add", "bob", **entry)
    assert other.get("status") != "already_persisted"


def test_migration_rescopes_old_rows(tmp_path: Path) -> None:
    from m1nd.memory.service import MemoryService

    db = tmp_path / "m.db"
    svc = MemoryService(db)
    svc.add({"category": "insight", "title": "T", "content": "c", "session_id": "s", "private": True},
            agent="alice")
    svc.close()
    import sqlite3

    con = sqlite3.connect(db)
    con.execute("UPDATE entries SET dedup_scope = owner")  # the v1 scope
    con.execute("PRAGMA user_version = 1")
    con.commit()
    con.close()
    svc = MemoryService(db)
    res = svc.add({"category": "insight", "title": "T", "content": "c", "session_id": "s"}, agent="alice")
    assert res.kind == "added"
    res = svc.add({"category": "insight", "title": "T", "content": "c", "session_id": "s", "private": True},
                  agent="alice")
    assert res.kind == "skipped"
    svc.close()
