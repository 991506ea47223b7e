"""Scenario: export/seed round trip, seed agents, registries, sessions, for-session, fact-session, migrate."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest


@pytest.fixture
def filled(cli) -> dict[str, str]:
    ids = {}
    ids["a"] = cli.add("--category", "pattern", "-t", "Retry, with \"backoff\"", "--content", "line1\nline2",
                       "--tags", "net,retry", "-a", "python", "--resonance", "7", "--resonance-type", "foundational",
                       "--wake-phrases", "w1,w2", "--wake-order", "1", "--code-ref", "file::a.py", "--session-id",
                       "s1")
    ids["b"] = cli.add("--type", "thread_opened", "--content", "Open question?", "--session", "s1")
    ids["p"] = cli.add("--category", "insight", "-t", "Private thing", "--content", "secret", "--private",
                       "--anchors", ids["a"])
    ids["bob"] = cli.add("--category", "insight", "-t", "Bob's", "--content", "x", "--private", agent="bob")
    return ids


def strip_volatile(entries: list[dict]) -> list[dict]:
    return [{k: v for k, v in e.items() if k != "effective_resonance"} for e in entries]


def test_export_jsonl_seeds_back_to_the_same_entries(cli, filled, tmp_path: Path, make_cli) -> None:
    out = tmp_path / "dump.jsonl"
    r = cli("export", "-f", "jsonl", "-o", str(out), agent="alice")
    assert r.out == f"Exported to {out}\n"
    exported = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert {e["id"] for e in exported} == {filled["a"], filled["b"], filled["p"]}  # never bob's private entry
    stdout = cli("export", "-f", "jsonl", agent="alice").out
    assert [json.loads(x)["id"] for x in stdout.splitlines()] == [e["id"] for e in exported]
    other = make_cli(tmp_path / "other-home")
    r = other("seed", "knowledge", str(out), agent="alice")
    assert r.code == 0, r.err
    assert r.out == f"Imported 3 entries from {out}\n"
    again = [json.loads(x) for x in other("export", "-f", "jsonl", agent="alice").out.splitlines()]
    assert strip_volatile(again) == strip_volatile(exported)
    # seeding again skips existing ids; --overwrite replaces them
    r = other("seed", "knowledge", str(out), agent="alice")
    assert r.out == f"Imported 0 entries from {out}\n" and "skipped 3 existing" in r.err
    assert other("seed", "knowledge", str(out), "--overwrite", agent="alice").out == f"Imported 3 entries from {out}\n"
    assert other.scalar("SELECT count(*) FROM entries") == 3
    assert [e["id"] for e in other("search", "backoff", "--json").json()] == [filled["a"]]


def test_seed_knowledge_bad_line_aborts_file(cli, tmp_path: Path) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text(json.dumps({"id": "kn-1234abcd", "title": "ok", "category_id": "newcat", "body": "b"}) + "\n"
                 + json.dumps({"title": 5, "category_id": "insight"}) + "\n", encoding="utf-8")
    r = cli("seed", "knowledge", str(f), agent="alice")
    assert r.code == 1 and r.err.startswith("Error: line 2: field 'title' is required and must be a string")
    assert cli.scalar("SELECT count(*) FROM entries") == 0


def test_seed_knowledge_reference_shape_and_default_dir(cli, tmp_path: Path) -> None:
    d = cli.home / "memory" / "seed" / "knowledge"
    assert cli("seed", "knowledge").out == f"No .jsonl files found in {d}\n"
    d.mkdir(parents=True)
    (d / "a.jsonl").write_text(json.dumps({
        "id": "kn-1a2b3c4d", "title": "Legacy", "category": "recipe", "content": "body", "embedding": [0.1],
        "decay_rate": 0.5, "format": "md", "file_path": "/x", "wake_phrase": "old phrase",
        "summary": json.dumps({"fact_type": "decision", "state": "open"}), "created_at": "2025-01-02T03:04:05",
        "session_id": "s9"}) + "\n", encoding="utf-8")
    (d / "b.jsonl").write_text(json.dumps({"title": "No id", "category_id": "insight", "body": "x"}) + "\n",
                               encoding="utf-8")
    r = cli("seed", "knowledge", agent="alice")
    assert r.out.splitlines() == [
        f"Imported 1 entries from {d / 'a.jsonl'}",
        f"Imported 1 entries from {d / 'b.jsonl'}",
        "Total: 2",
    ]
    assert "note: created category 'recipe'" in r.err
    js = cli("show", "kn-1a2b3c4d", "--json").json()
    assert (js["category_id"], js["fact_type"], js["fact_state"], js["summary"], js["wake_phrases"],
            js["created_at"], js["session_id"]) == ("recipe", "decision", "open", None, ["old phrase"],
                                                    "2025-01-02T03:04:05.000Z", "s9")


def test_export_csv_and_md(cli, filled, tmp_path: Path) -> None:
    r = cli("export", "-f", "csv", agent="alice")
    rows = list(csv.reader(io.StringIO(r.out)))
    assert rows[0] == ["id", "category_id", "title", "tags", "applicability", "source_project_id", "created_at",
                       "updated_at"]
    first = next(x for x in rows if x[0] == filled["a"])
    assert first[2] == 'Retry, with "backoff"' and first[3] == "net;retry" and first[4] == "python"
    assert '"Retry, with ""backoff"""' in r.out and "\r\n" in r.out
    outdir = tmp_path / "md"
    r = cli("export", "-o", str(outdir), agent="alice")
    assert r.out == f"Exported to directory: {outdir}\n"
    f = outdir / "pattern" / "retry_-with-_backoff_.md"
    text = f.read_text(encoding="utf-8")
    assert text.startswith(f'---\nid: "{filled["a"]}"\ntitle: "Retry, with \\"backoff\\""\ncategory: "pattern"\n')
    assert text.endswith("---\n\nline1\nline2\n")
    assert sorted(p.name for p in (outdir / "thread").iterdir()) == ["thread-opened_-open-question_.md"]
    r = cli("export", "-f", "xml")
    assert (r.code, r.err) == (1, "Error: Invalid format 'xml'. Valid formats: md, jsonl, csv\n")


def test_seed_agents(cli, tmp_path: Path) -> None:
    d = tmp_path / "agents"
    assert cli("seed", "agents", "-p", str(d)).err == f"Error: No agent seed directory at {d}\n"
    d.mkdir()
    (d / "ada.md").write_text("---\nname: ada\ndescription: Builder\ndomain: dev\n---\n# Ada\n", encoding="utf-8")
    (d / "_template.md").write_text("---\nname: x\ndescription: y\n---\n", encoding="utf-8")
    (d / "bad.md").write_text("no front matter", encoding="utf-8")
    r = cli("seed", "agents", "-p", str(d))
    assert r.out == "Seeded 1 agents:\n  ada\n" and "skipped bad.md:" in r.err
    assert cli("agents", "list").out == "Registered agents:\n  ada - Builder\n    Domain: dev\n"
    assert cli("agents", "show", "ada").out.splitlines()[:3] == ["Agent: ada", "Description: Builder", "Domain: dev"]
    assert cli("agents", "show", "zed").err == "Error: Agent 'zed' not found\n"
    assert cli("agents", "add", "zed", "-d", "Z", "-D", "ops").out == "Added agent: zed\n"
    assert [a["id"] for a in cli("agents", "list", "--json").json()] == ["ada", "zed"]


def test_registries(cli, filled) -> None:
    assert cli("categories", "add", "Bad Id", "x").err == \
        "Error: Invalid category id 'Bad Id' (lowercase letters, digits, '_' or '-')\n"
    assert cli("categories", "add", "recipe", "Recipes").out == "Added category: recipe\n"
    assert cli("categories", "add", "recipe", "again").err == "Error: Category 'recipe' already exists\n"
    assert (
        cli("categories", "remove", "pattern").err
        == "Error: Cannot remove category 'pattern': 1 entries still use it\n"
    )
    assert cli("categories", "remove", "recipe").out == "Deleted category: recipe\n"
    assert cli("categories", "remove", "recipe").err == "Error: Category 'recipe' not found\n"
    cats = cli("categories", "list", "--json").json()
    assert [c["id"] for c in cats][:3] == ["bloom", "decision", "gotcha"] and set(cats[0]) == {
        "id", "description", "created_at"}
    assert cli("projects", "add", "--id", "m1", "--name", "M one", "--path", "/x").out == "Added project: m1\n"
    pj = cli("projects", "list", "--json").json()
    assert pj[0]["id"] == "m1" and pj[0]["active"] is True and pj[0]["path"] == "/x"
    assert cli("applicability", "add", "--id", "wasm", "--description", "WebAssembly", "--scope", "global").code == 0
    assert any(a["id"] == "wasm" and a["scope"] == "global" for a in cli("applicability", "list", "--json").json())
    rt = cli("relationship-types", "list").out
    assert (
        "  related - Related entries (bidirectional)" in rt
        and "  extends - Builds on another entry (directional)" in rt
    )
    assert ".md" in cli("content-types", "list").out
    for name in ("source-types", "entry-types", "session-types"):
        assert cli(name, "list", "--json").code == 0
    assert cli("tags", "list", agent="alice").out == "All tags:\n  net\n  question\n  retry\n"
    assert cli("tags", "list", "--json", agent="bob").json() == ["net", "question", "retry"]
    assert cli("tags", "list", "--category", "thread").out == "Tags in category 'thread':\n  question\n"
    assert cli("tags", "list", "--category", "decision").out == "No tags found\n"


def test_sessions_for_session_fact_session(cli, filled) -> None:
    cli("projects", "add", "--id", "m1", "--name", "M one")
    r = cli("sessions", "create", "--session-type", "development", "--project", "m1", "--id", "dev-1",
            agent="alice")
    assert r.out == "Created session: dev-1\n"
    assert cli("sessions", "create", "--id", "dev-1").err == "Error: Session 'dev-1' already exists\n"
    assert cli("sessions", "create", "--session-type", "party").err.startswith("Error: Invalid session type 'party'")
    assert cli("sessions", "create", "--project", "nope").err.startswith("Error: Unknown project 'nope'")
    assert cli("sessions", "close", "--id", "dev-1").out == "Closed session: dev-1\n"
    assert cli("sessions", "close", "--id", "ghost").err == "Error: Session 'ghost' not found\n"
    rows = cli("sessions", "list", "--json").json()
    assert {r_["id"] for r_ in rows} == {"dev-1", "s1"}
    assert set(rows[0]) == {"id", "session_type", "project", "started_at", "ended_at", "created_by"}
    assert [r_["id"] for r_ in cli("sessions", "list", "--project", "m1", "--json").json()] == ["dev-1"]
    txt = cli("sessions", "list", "--project", "m1").out
    assert txt.startswith("  dev-1 [development] started ") and " ended 20" in txt
    facts = cli("for-session", "s1", "--json", agent="alice").json()
    assert [f["id"] for f in facts] == [filled["a"], filled["b"]]
    assert facts[1]["type"] == "thread_opened" and facts[0]["type"] is None
    out = cli("for-session", "s1").out.splitlines()
    assert out[0] == "Facts for session s1:" and "] unknown: line1 line2 (" in out[1]
    assert cli.scalar("SELECT activation_count FROM entries WHERE id = ?", (filled["b"],)) == 2
    assert cli.scalar("SELECT last_activated FROM entries WHERE id = ?", (filled["b"],)) is None
    assert cli("for-session", "nothing").out == "No facts found for session: nothing\n"
    assert cli("fact-session", filled["b"][3:], "--json").json() == {"fact_id": filled["b"], "session_id": "s1"}
    assert cli("fact-session", filled["b"]).out == f"Fact {filled['b']} was extracted from session: s1\n"
    assert cli("fact-session", filled["p"], agent="bob").out == f"No session found for fact: {filled['p']}\n"


def test_migrate_and_skip_schema(tmp_path: Path, make_cli) -> None:
    cli = make_cli(tmp_path / "h")
    r = cli("stats", env={"M1ND_SKIP_SCHEMA": "1"})
    assert r.code == 1  # no schema yet
    r = cli("migrate", env={"M1ND_SKIP_SCHEMA": "1"})
    assert r.out == "Applied 2 migration(s); schema version 2\n"
    assert cli("migrate").out == "Schema up to date (version 2)\n"
    assert cli.scalar("PRAGMA user_version") == 2
    assert len(cli.scalar("SELECT value FROM meta WHERE key = 'wake_secret'")) == 64
    assert cli.scalar("PRAGMA journal_mode") == "wal"


def test_memory_db_env(tmp_path: Path, make_cli) -> None:
    cli = make_cli(tmp_path / "h")
    db = tmp_path / "elsewhere" / "m.db"
    r = cli("add", "--category", "insight", "-t", "T", "--content", "x", env={"M1ND_MEMORY_DB": str(db)},
            agent="alice")
    assert r.code == 0 and db.exists() and not (tmp_path / "h" / "memory.db").exists()
