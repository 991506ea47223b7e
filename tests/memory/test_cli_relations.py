"""Scenario: relationships (auto-reinforce), reinforce, stats/health/growth/open-threads."""

from __future__ import annotations

import pytest


@pytest.fixture
def pair(cli) -> tuple[str, str]:
    a = cli.add("--category", "decision", "-t", "Use SQLite", "--content", "embedded")
    b = cli.add("--category", "decision", "-t", "Use WAL", "--content", "concurrency", "--resonance", "9")
    return a, b


def test_relationships_add_list_delete(cli, pair) -> None:
    a, b = pair
    r = cli("relationships", "add", "--from", a, "--to", b, "--type", "extends", agent="alice")
    lines = r.out.splitlines()
    rel = lines[0].removeprefix("Added relationship: ")
    assert lines[1:] == [f"  From: {a}", f"  To: {b}", "  Type: extends"]
    assert r.err == f"  reinforced {b} (+1)\n"
    assert cli.rows("SELECT resonance, activation_count FROM entries WHERE id = ?", (b,)) == [(10, 1)]
    r = cli("relationships", "add", "--from", a, "--to", b, "--type", "extends", "--json", agent="alice")
    assert r.json() == {"id": rel, "from": a, "to": b, "type": "extends", "reinforced": False, "existing": True}
    assert cli("relationships", "add", "--from", a, "--to", b, "--type", "extends").out == \
        f"Relationship already exists: {rel}\n"
    # capped at 10: no further reinforcement
    r = cli("relationships", "add", "--from", a, "--to", b, "--type", "related", "--json", agent="alice")
    assert r.json()["reinforced"] is False
    r = cli("relationships", "add", "--from", b, "--to", a, "--type", "supersedes", "--json", agent="alice")
    assert r.json()["reinforced"] is False and cli.scalar("SELECT resonance FROM entries WHERE id = ?", (a,)) == 0
    r = cli("relationships", "list", a, agent="alice")
    assert r.out.splitlines()[0] == f"Relationships for '{a}':"
    assert f"  {rel} -> {b} (extends)" in r.out and f"<- {b} (supersedes)" in r.out
    js = cli("relationships", "list", b, "--json").json()
    assert len(js) == 3 and set(js[0]) == {"id", "from_entry_id", "to_entry_id", "relationship_type", "created_at"}
    assert cli("relationships", "delete", rel).out == f"Deleted relationship: {rel}\n"
    assert cli("relationships", "delete", rel).err == f"Error: Relationship '{rel}' not found\n"


def test_relationship_errors(cli, pair) -> None:
    a, b = pair
    r = cli("relationships", "add", "--from", a, "--to", b, "--type", "loves")
    assert r.code == 1 and r.err.startswith("Error: Invalid relationship type 'loves'. Valid types: contradicts,")
    assert cli("relationships", "add", "--from", a, "--to", a, "--type", "related").err == \
        "Error: An entry cannot be related to itself\n"
    assert cli("relationships", "add", "--from", a, "--to", "kn-00000000000000ab", "--type", "related").err == \
        "Error: Entry 'kn-00000000000000ab' not found\n"
    assert cli("relationships", "list", a).out == f"No relationships found for '{a}'\n"
    assert cli("relationships", "add", "--from", a, "--type", "related").code == 2
    assert cli.scalar("SELECT count(*) FROM relationships") == 0


def test_relationships_hide_private_counterparts(cli, pair) -> None:
    a, _ = pair
    p = cli.add("--category", "insight", "-t", "Private", "--content", "x", "--private", agent="bob")
    cli("relationships", "add", "--from", p, "--to", a, "--type", "related", agent="bob")
    assert cli("relationships", "list", a, "--json", agent="alice").json() == []
    assert len(cli("relationships", "list", a, "--json", agent="bob").json()) == 1
    rel = cli.scalar("SELECT id FROM relationships")
    assert cli("relationships", "delete", rel, agent="alice").code == 1


def test_reinforce(cli, pair) -> None:
    a, b = pair
    r = cli("reinforce", a, "--amount", "3", agent="alice")
    lines = r.out.splitlines()
    assert lines[:4] == [f"Reinforced entry: {a}", "  Old resonance: 0", "  New resonance: 3", "  Amount added: 3"]
    assert lines[4].startswith("  Last activated: ") and lines[5] == "  Activation count: 1"
    js = cli("reinforce", b, "--amount", "5", "--json").json()
    assert (js["old_resonance"], js["new_resonance"], js["capped"]) == (9, 10, True)
    cli("update", b, "--resonance", "15", agent="alice")
    js = cli("reinforce", b, "--json").json()
    assert (js["old_resonance"], js["new_resonance"], js["capped"]) == (15, 15, True)  # never lowered
    js = cli("reinforce", a, "--amount", "-2", "--json").json()
    assert js["new_resonance"] == 1 and js["amount_added"] == -2
    for bad in (["--amount", "0"], ["--amount", "11"]):
        r = cli("reinforce", a, *bad)
        assert r.err == "Error: --amount must be a non-zero integer between -10 and 10\n"
    assert cli("reinforce", a, "--cap", "0").err == "Error: --cap must be an integer between 1 and 100\n"


def test_stats_health_growth_visible_only(cli, pair) -> None:
    cli.add("--category", "insight", "-t", "Mine", "--content", "x", "--private", "--resonance", "7")
    cli.add("--category", "insight", "-t", "Bob's", "--content", "x", "--private", agent="bob")
    r = cli("stats", agent="alice")
    assert r.out == "Memory Index Statistics\n\nTotal entries: 3\n\n  decision     2\n  insight      1\n"
    assert cli("stats", "--json", agent="alice").json() == {"total": 3, "categories": {"decision": 2, "insight": 1},
                                                            "private_own": 1}
    assert cli("stats", "--json").json()["total"] == 2
    h = cli("health", "--json", agent="alice").json()
    assert h == {"total": 3, "embedded": 0, "anchored": 0, "stale_high_res": 2, "embedded_pct": 0,
                 "anchored_pct": 0, "stale_high_res_pct": 67, "model_id": None, "stale_vectors": 0}
    assert cli("health", agent="alice").out == ("Graph Health\n\n  Total entries: 3\n    0% embedded\n"
                                                "    0% anchored\n   67% stale (high-res, >30d)\n")
    g = cli("growth", "--json", agent="alice").json()
    assert g == [0, 0, 0, 0, 0, 0, 0, 3]
    assert cli("growth").out.splitlines() == ["Growth (last 8 weeks)"] + [
        f"  week -{k}: {2 if k == 0 else 0}" for k in range(7, -1, -1)]


def test_open_threads(cli) -> None:
    assert cli("open-threads").out == "No open threads.\n"
    t1 = cli.add("--type", "thread_opened", "--content", "Low question")
    t2 = cli.add("--type", "commitment", "--content", "Important promise", "--resonance", "8")
    t3 = cli.add("--type", "thread_opened", "--content", "Closed one")
    cli("add", "--type", "thread_closed", "--thread-id", t3, agent="alice")
    cli.add("--type", "thread_opened", "--content", "Bob's secret", "--private", agent="bob")
    js = cli("open-threads", "--json", agent="alice").json()
    assert [t["id"] for t in js] == [t2, t1]
    assert js[0] == {"id": t2, "body": "Important promise", "state": "open", "created_at": js[0]["created_at"],
                     "resonance": 8, "tags": ["commitment"]}
    out = cli("open-threads", agent="alice").out.splitlines()
    assert out[:2] == ["Open threads (2)", ""] and out[2].startswith(f"  [r8] {t2} ")
