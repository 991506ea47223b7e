"""The memory_* MCP tools through the in-process registry (the path `m1nd call` and the server use)."""

from __future__ import annotations

import pytest
from m1nd.tools.registry import load_all

EXPECTED = {"memory_add", "memory_add_batch", "memory_show", "memory_list", "memory_search", "memory_recent",
            "memory_update", "memory_delete", "memory_restore", "memory_relate", "memory_relationships",
            "memory_unrelate", "memory_reinforce", "memory_stats", "memory_open_threads", "memory_sessions",
            "memory_registries"}


@pytest.fixture
def tools(memory_tools):
    """Tool calls as ``alice`` on a workspace whose memory is on each store (root conftest)."""
    return memory_tools


def test_catalogue() -> None:
    tools = load_all()
    assert EXPECTED <= set(tools)
    for name in EXPECTED:
        t = tools[name]
        assert 0 < len(t.description) <= 600
        schema = t.input_schema()
        assert schema["additionalProperties"] is False and "agent_id" in schema["properties"]
    ro = {n for n in EXPECTED if tools[n].read_only}
    assert ro == {"memory_list", "memory_recent", "memory_relationships", "memory_stats", "memory_open_threads",
                  "memory_registries"}
    assert {n for n in EXPECTED if tools[n].destructive} == {"memory_delete", "memory_unrelate", "memory_update"}


def test_visibility_isolation_between_agents(tools) -> None:
    mine = tools.ok("memory_add", title="Alice secret", category="insight", content="hidden backoff", private=True)
    pub = tools.ok("memory_add", title="Public backoff", category="insight", content="shared")
    assert mine["owner"] == "alice" and mine["visibility"] == "private"
    # alice sees both by default (include_private defaults to true over MCP)
    assert {e["id"] for e in tools.ok("memory_list")["entries"]} == {mine["id"], pub["id"]}
    assert {e["id"] for e in tools.ok("memory_search", query="backoff")["results"]} == {mine["id"], pub["id"]}
    assert [e["id"] for e in tools.ok("memory_list", mine=True)["entries"]] == [mine["id"]]
    assert [e["id"] for e in tools.ok("memory_list", include_private=False)["entries"]] == [pub["id"]]
    # bob never sees it anywhere
    assert [e["id"] for e in tools.ok("memory_list", agent_id="bob")["entries"]] == [pub["id"]]
    assert tools.ok("memory_list", agent_id="bob")["total"] == 1
    assert [e["id"] for e in tools.ok("memory_search", agent_id="bob", query="backoff")["results"]] == [pub["id"]]
    assert tools.ok("memory_stats", agent_id="bob")["stats"]["total"] == 1
    for name, extra in (("memory_show", {}), ("memory_delete", {}), ("memory_reinforce", {}),
                        ("memory_relationships", {}), ("memory_update", {"title": "x"})):
        e = tools.err(name, agent_id="bob", id=mine["id"], **extra)
        assert e["code"] == "not_found", name
    e = tools.err("memory_relate", agent_id="bob", from_id=pub["id"], to_id=mine["id"], type="related")
    assert e["code"] == "not_found"
    assert tools.ok("memory_show", id=mine["id"])["entry"]["title"] == "Alice secret"


def test_add_dedup_facts_batch(tools) -> None:
    a = tools.ok("memory_add", type="decision", content="Use WAL", session_id="s1")
    assert a["fact_type"] == "decision" and a["category"] == "decision"
    again = tools.ok("memory_add", type="decision", content="use wal!", session_id="s1")
    assert again["status"] == "already_persisted" and again["id"] == a["id"]
    e = tools.err("memory_add", title="only title")
    assert e["code"] == "invalid_argument"
    assert e["message"] == "memory_add needs title and category, or type and content"
    assert tools.err("memory_add", type="decision", content="x", category="insight")["code"] == "invalid_argument"
    assert tools.err("memory_add", title="t", category="insight", owner="x")["code"] == "invalid_argument"
    b = tools.ok("memory_add_batch", entries=[
        {"title": "One", "category": "insight", "content": "1", "session_id": "s1"},
        {"type": "decision", "content": "Use WAL", "session_id": "s1"},
        {"title": "Bad", "category": "nope"},
        {"title": "Two", "category": "insight", "resonance": "high"},
        {"type": "quote", "content": "hello", "tags": ["people"]},
    ])
    assert [x["index"] for x in b["added"]] == [0, 4]
    assert b["already_saved"] == [{"id": a["id"], "title": a["title"], "index": 1}]
    assert [x["index"] for x in b["failed"]] == [2, 3]
    assert "resonance" in b["failed"][1]["error"]
    row = tools.ok("memory_show", id=b["added"][1]["id"])["entry"]
    assert row["source_type_id"] == "agent_session" and row["tags"] == ["quote", "people"]


def test_update_restore_relate_sessions_registries(tools) -> None:
    e = tools.ok("memory_add", title="T", category="insight", content="alpha alpha", resonance_type="operational",
             wake_phrases=["w"], tags=["a"])
    r = tools.ok("memory_update", id=e["id"], find="alpha", replace="beta", replace_all=True, resonance_type=None,
             wake_order=None, add_tags=["b"])
    assert r["changes"] == ["content: 2 replacement(s)", "tags: a, b", "resonance_type: cleared"]
    assert tools.err("memory_update", id=e["id"], content="x", append="y")["code"] == "invalid_argument"
    r = tools.ok("memory_update", id=e["id"], private=True)
    assert r["changes"] == ["visibility: public -> private", "owner: alice"]
    backups = tools.ok("memory_restore", id=e["id"], list=True)["backups"]
    assert [b["operation"] for b in backups] == ["edit"]
    res = tools.ok("memory_restore", id=e["id"])
    assert res["restored"] is True and res["from_backup"] == backups[0]["id"]
    assert tools.ok("memory_show", id=e["id"], max_body_chars=100)["entry"]["body"] == "alpha alpha"
    f = tools.ok("memory_add", title="F", category="insight")
    rel = tools.ok("memory_relate", from_id=f["id"], to_id=e["id"], type="extends")
    assert rel["existing"] is False and rel["reinforced"] is True
    rels = tools.ok("memory_relationships", id=e["id"])["relationships"]
    assert [x["direction"] for x in rels] == ["in"]
    un = tools.ok("memory_unrelate", relationship_id=rel["id"])
    assert (un["deleted"], un["id"]) == (True, rel["id"])
    r = tools.ok("memory_reinforce", id=f["id"], amount=4)
    assert (r["old_resonance"], r["new_resonance"], r["capped"]) == (0, 4, False)
    assert tools.err("memory_reinforce", id=f["id"], amount=0)["code"] == "invalid_argument"
    s = tools.ok("memory_sessions", action="create", session_id="run-1", session_type="development")
    assert s["session"]["id"] == "run-1"
    tools.ok("memory_add", type="insight", content="learned", session_id="run-1")
    facts = tools.ok("memory_sessions", action="facts", session_id="run-1")["facts"]
    assert [x["content"] for x in facts] == ["learned"]
    assert tools.ok("memory_sessions", action="session_of", fact_id=facts[0]["id"])["session_id"] == "run-1"
    assert tools.ok("memory_sessions", action="close", session_id="run-1")["session"]["closed"] is True
    assert tools.err("memory_sessions", action="close")["message"] == "action 'close' needs argument 'session_id'"
    assert "decision" in [c["id"] for c in tools.ok("memory_registries", kind="categories")["values"]]
    assert tools.ok("memory_registries", kind="fact_types")["values"][0] == {"id": "decision", "category": "decision"}
    assert "related" in [c["id"] for c in tools.ok("memory_registries", kind="relationship_types")["values"]]
    threads = tools.ok("memory_open_threads")
    assert threads["threads"] == []
    assert tools.ok("memory_recent", all_types=True)["entries"][0]["content"] == "learned"
    d = tools.ok("memory_delete", id=e["id"])
    assert d["deleted"] is True


def test_budget_shapes_long_lists(tools) -> None:
    tools.ok("memory_add_batch", entries=[{"title": f"Entry {i}", "category": "insight", "content": "word " * 200}
                                          for i in range(60)])
    r = tools.ok("memory_list", limit=60, max_output_chars=3000)
    assert r["truncated"] is True and r["omitted"]["entries"] > 0 and r["total"] == 60
    assert all(len(e["body"]) <= 301 for e in r["entries"])
    # list items are compact (no nulls, empties or defaults); memory_show has the whole entry shape
    item = r["entries"][0]
    assert "content_hash" not in item and "summary" not in item and "chunk_count" not in item
    full = tools.ok("memory_show", id=item["id"])["entry"]
    assert full["content_hash"] and full["summary"] is None and full["chunk_count"] == 0
