"""Scenario: adding entries and facts, write-boundary dedup, add-batch (outputs and stored rows)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def count(cli) -> int:
    return cli.scalar("SELECT count(*) FROM entries")


def test_add_text_output_and_row(cli) -> None:
    r = cli("add", "--category", "insight", "-t", "Retry with backoff", "--content", "Use jitter.",
            "--tags", "net, reliability", "-a", "python,cli", "--resonance", "7", "--resonance-type", "operational",
            "--wake-phrases", "one,two", "--code-ref", "file::src/a.py::fn::retry", "--session-id", "ses-1",
            agent="alice")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    eid = lines[0].removeprefix("Added entry: ")
    assert lines[1:] == ["  Category: insight", "  Title: Retry with backoff", "  Visibility: public",
                         "  Resonance: 7", "  Resonance Type: operational", "  Tags: net, reliability",
                         "  Applicability: python, cli", "  Wake Phrases: one, two",
                         "  Code refs: file::src/a.py::fn::retry"]
    assert r.err == ""
    row = cli.rows("SELECT id, title, body, category, visibility, owner, source_agent, source_type, resonance, "
                   "resonance_type, session_id, wake_phrases, code_refs, dedup_scope, rev FROM entries")[0]
    assert row == (eid, "Retry with backoff", "Use jitter.", "insight", "public", None, "alice", "manual", 7,
                   "operational", "ses-1", '["one", "two"]', '["file::src/a.py::fn::retry"]', "public:alice", 1)
    assert cli.rows("SELECT tag FROM entry_tags ORDER BY rowid") == [("net",), ("reliability",)]
    assert cli.rows("SELECT applicability_id FROM entry_applicability ORDER BY rowid") == [("python",), ("cli",)]
    # the unknown session was registered on first use
    assert cli.rows("SELECT id, session_type, created_by FROM sessions") == [("ses-1", "agent_task", "alice")]


def test_add_json_shape_and_bypass_signal(cli) -> None:
    r = cli("add", "--category", "gotcha", "-t", "T", "--content", "B", "--private", "--json", agent="bob")
    assert r.code == 0 and r.err == ""
    js = r.json()
    assert list(js) == ["id", "category", "title", "visibility", "owner", "resonance", "resonance_type", "tags",
                        "applicability", "anchors", "wake_phrases", "code_refs", "session_id", "dedup"]
    assert js["dedup"] == "bypassed_no_session" and js["owner"] == "bob" and js["visibility"] == "private"
    r = cli("add", "--category", "gotcha", "-t", "T2", "--content", "B", agent="bob")
    assert r.err == "  (dedup bypassed: no --session-id provided)\n"


def test_add_content_from_file_and_stdin(cli, tmp_path: Path) -> None:
    f = tmp_path / "note.md"
    f.write_text("from a file\n", encoding="utf-8")
    cli.add("--category", "reference", "-t", "F", "-f", str(f))
    cli.add("--category", "reference", "-t", "S", "--content-file", "-") if False else None
    r = cli("add", "--category", "reference", "-t", "S", "-f", "-", "--json", input="from stdin", agent="alice")
    assert r.code == 0, r.err
    assert cli.rows("SELECT body FROM entries ORDER BY rowid") == [("from a file\n",), ("from stdin",)]


@pytest.mark.parametrize(("args", "message"), [
    (["--category", "nope", "-t", "T", "--content", "x"], "Invalid category 'nope'. Valid categories: bloom,"),
    (["--category", "insight", "-t", "T"], "Either --content or --file must be provided"),
    (["--category", "insight", "-t", "T", "--content", "x", "--resonance-type", "weird"],
     "Invalid resonance type 'weird'. Valid types: foundational"),
    (["--category", "insight", "-t", "T", "--content", "x", "--source-type", "bogus"], "Invalid source type 'bogus'"),
    (["--category", "insight", "-t", "T", "--content", "x", "-p", "ghost"],
     "Unknown project 'ghost'; register it with m1nd memory projects add"),
    (["--category", "insight", "-t", "T", "--content", "x", "--anchors", "kn-0000000000000000"],
     "Anchor 'kn-0000000000000000' not found"),
    (["--category", "insight", "-t", "x" * 501, "--content", "x"], "Title must be 1..500 characters"),
    (["--category", "insight", "-t", "T", "--content", "x", "--tags", "a," + "b" * 65],
     "Tag '" + "b" * 65 + "' is invalid"),
    (["--category", "insight", "-t", "T", "--content", "x", "--visibility", "secret"],
     "--visibility must be 'public' or 'private'"),
    (["--category", "insight", "-t", "T", "--content", "x", "--owner", "bob"], "Cannot set owner on public entry"),
    (["--type", "rumour", "--content", "x"], "Invalid fact type 'rumour'. Valid types: decision, insight"),
    (["--category", "insight", "-t", "T", "--content", "x", "--code-ref", "not-an-id"], "Invalid code ref"),
], ids=["category", "content", "resonance-type", "source-type", "project", "anchor", "title", "tag", "visibility",
        "owner-public", "fact-type", "code-ref"])
def test_add_validation_errors_write_nothing(cli, args: list[str], message: str) -> None:
    r = cli("add", *args, agent="alice")
    assert r.code == 1
    assert r.out == ""
    assert r.err.startswith("Error: " + message), r.err
    assert count(cli) == 0


def test_add_without_agent(cli) -> None:
    r = cli("add", "--category", "insight", "-t", "T", "--content", "x")
    assert r.code == 1 and r.err == "Error: --source-agent not provided and M1ND_CURRENT_AGENT not set\n"
    r = cli("add", "--category", "insight", "-t", "T", "--content", "x", "--source-agent", "x", "--private")
    assert r.code == 1 and "Cannot make entry private without an owner" in r.err
    r = cli("add", "--category", "insight", "-t", "T", "--content", "x", "--json")
    assert r.code == 1 and json.loads(r.err) == {
        "status": "error", "error": "invalid_argument",
        "message": "--source-agent not provided and M1ND_CURRENT_AGENT not set"}


@pytest.mark.parametrize("args", [
    ["--category", "insight", "-t", "T", "--content", "x", "-f", "y"],
    ["--category", "insight", "-t", "T", "--content", "x", "--private", "--visibility", "public"],
    ["--category", "insight", "-t", "T", "--content", "x", "--session", "s"],
    ["--category", "insight", "-t", "T", "--content", "x", "--thread-id", "kn-1"],
    ["--type", "decision", "--content", "x", "--category", "insight"],
    ["--type", "decision", "--content", "x", "--title", "T"],
    ["--type", "decision", "--content", "x", "--wake-phrase", "w"],
    ["--type", "decision", "--content", "x", "--anchors", "kn-1"],
    ["-t", "T", "--content", "x"],
    ["--category", "insight", "--content", "x"],
    ["--category", "insight", "-t", "T", "--content", "x", "--resonance", "high"],
    ["--category", "insight", "-t", "T", "--content", "x", "--frobnicate"],
], ids=["content+file", "private+visibility", "session-no-type", "thread-no-type", "type+category", "type+title",
        "type+wake", "type+anchors", "no-category", "no-title", "bad-int", "unknown-flag"])
def test_add_usage_errors_exit_2(cli, args: list[str]) -> None:
    r = cli("add", *args, agent="alice")
    assert r.code == 2, (r.code, r.err)
    assert r.out == ""


def test_fact_routing(cli) -> None:
    body = "We decided to use SQLite with WAL for the memory store because it is embedded"
    r = cli("add", "--type", "decision", "--content", body, "--session", "s-1", agent="alice")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    eid = lines[0].removeprefix("Added fact: ")
    assert lines[1:] == ["  Type: decision", "  Category: decision", f"  Content: {body}"]
    row = cli.rows("SELECT title, category, fact_type, fact_state, resonance, resonance_type, ephemeral, source_type,"
                   " session_id FROM entries WHERE id = ?", (eid,))[0]
    assert row == ("decision: " + body[:57] + "...", "decision", "decision", None, 3, "ephemeral", 1,
                   "agent_session", "s-1")
    js = cli("add", "--type", "person", "--content", "Ada wrote the parser", "--json", agent="alice").json()
    assert js["category"] == "reference" and js["tags"] == ["person"] and js["fact_type"] == "person"
    js = cli("add", "--type", "commitment", "--content", "Ship it", "--private", "--resonance", "6", "--json",
             agent="alice").json()
    assert (js["category"], js["tags"], js["visibility"], js["owner"], js["resonance"]) == (
        "thread", ["commitment"], "private", "alice", 6)
    assert cli.scalar("SELECT fact_state FROM entries WHERE id = ?", (js["id"],)) == "open"


def test_thread_close_by_content_and_id(cli) -> None:
    t1 = cli.add("--type", "thread_opened", "--content", "Why is   the build slow?")
    t2 = cli.add("--type", "thread_opened", "--content", "Other question")
    r = cli("add", "--type", "thread_closed", "--content", "why is the BUILD slow?", agent="alice")
    assert (r.code, r.out) == (0, f"Closed thread: {t1}\n")
    r = cli("add", "--type", "thread_closed", "--thread-id", t2[3:], "--json", agent="alice")
    assert r.json() == {"id": t2, "closed": True}
    assert cli.rows("SELECT fact_state FROM entries ORDER BY rowid") == [("closed",), ("closed",)]
    r = cli("add", "--type", "thread_closed", "--content", "never asked", agent="alice")
    assert r.code == 1 and r.err == "Error: No open thread found matching content: 'never asked'\n"
    other = cli.add("--category", "insight", "-t", "x", "--content", "y")
    r = cli("add", "--type", "thread_closed", "--thread-id", other, agent="alice")
    assert r.err == f"Error: Entry {other} is not a thread\n"
    r = cli("add", "--type", "thread_closed", "--thread-id", "kn-00000000000000aa", agent="alice")
    assert r.err == "Error: Thread not found: kn-00000000000000aa\n"


def test_dedup_skip_scope_and_allow_duplicate(cli) -> None:
    first = cli.add("--category", "insight", "-t", "Retry with backoff", "--content", "Use jitter", "--session-id",
                    "s1", "--tags", "a")
    r = cli("add", "--category", "insight", "-t", "RETRY with backoff!", "--content", "use   jitter",
            "--session-id", "s1", "--tags", "other", agent="alice")
    assert (r.code, r.out) == (0, f"Already saved as {first} (identical entry this session — nothing to do).\n")
    r = cli("add", "--category", "insight", "-t", "Retry with", "--content", "backoff. Use jitter", "--session-id",
            "s1", "--json", agent="alice")
    assert r.json() == {"id": first, "skipped": True, "duplicate_of": first, "status": "already_persisted",
                        "note": "identical entry exists this session; no write needed"}
    assert count(cli) == 1
    # other category, other session, other agent: distinct facts
    cli.add("--category", "gotcha", "-t", "Retry with backoff", "--content", "Use jitter", "--session-id", "s1")
    cli.add("--category", "insight", "-t", "Retry with backoff", "--content", "Use jitter", "--session-id", "s2")
    cli.add("--category", "insight", "-t", "Retry with backoff", "--content", "Use jitter", "--session-id", "s1",
            agent="bob")
    assert count(cli) == 4
    forced = cli.add("--category", "insight", "-t", "Retry with backoff", "--content", "Use jitter", "--session-id",
                     "s1", "--allow-duplicate")
    assert forced != first and count(cli) == 5
    assert cli.scalar("SELECT dedup_exempt FROM entries WHERE id = ?", (forced,)) == 1


def test_dedup_never_reveals_anothers_private_entry(cli) -> None:
    cli.add("--category", "insight", "-t", "Secret", "--content", "x", "--session-id", "s1", "--private",
            agent="bob")
    # alice cannot claim bob as source agent (issue 14), so she can never reach his dedup scope
    r = cli("add", "--category", "insight", "-t", "Secret", "--content", "x", "--session-id", "s1",
            "--source-agent", "bob", "--json", agent="alice")
    assert r.code == 1 and "another agent" in r.err
    # her own equal entry is hers, not a duplicate of his
    r = cli("add", "--category", "insight", "-t", "Secret", "--content", "x", "--session-id", "s1", "--json",
            agent="alice")
    assert r.code == 0 and "skipped" not in r.json()
    assert count(cli) == 2


def test_session_id_naming_an_entry_links_extracted_from(cli) -> None:
    summary = cli.add("--category", "session", "-t", "Session summary", "--content", "we worked")
    fact = cli.add("--type", "insight", "--content", "WAL helps", "--session", summary)
    assert cli.rows("SELECT f.id, t.id, r.type FROM relationships r JOIN entries f ON f.rowid = r.from_rowid "
                    "JOIN entries t ON t.rowid = r.to_rowid") == [(fact, summary, "extracted_from")]


def write_jsonl(path: Path, lines: list) -> Path:
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def test_add_batch_partial_success(cli, tmp_path: Path) -> None:
    (tmp_path / "body.md").write_text("body from file", encoding="utf-8")
    f = write_jsonl(tmp_path / "in.jsonl", [
        {"category": "insight", "title": "T1", "content": "C1", "session_id": "s1", "tags": ["a", "b"]},
        "",
        "# a comment",
        {"category": "insight", "title": "t1!", "content": "c1", "session_id": "s1"},
        {"category": "insight", "title": "T2", "content": "C2", "resonance": "high"},
        {"type": "decision", "content": "chose Rust", "session": "s1"},
        "{not json",
        {"category": "reference", "title": "From file", "file": "body.md", "session_id": "s1"},
        {"type": "thread_opened", "content": "open question", "session": "s1"},
        {"type": "thread_closed", "content": "Open question"},
        {"category": "insight", "title": "T3", "content": "C3", "colour": "red"},
        {"category": "nope", "title": "T4", "content": "C4"},
    ])
    r = cli("add-batch", "-f", str(f), agent="alice")
    assert r.code == 1
    ids = cli.rows("SELECT id, title FROM entries ORDER BY rowid")
    t1, dec, ff, q = ids[0][0], ids[1][0], ids[2][0], ids[3][0]
    assert r.out.splitlines() == [
        f"  [1] Added entry: {t1} (T1)",
        f"  [4] Already saved: {t1} (T1) — identical this session, no action",
        f"  [6] Added fact: {dec}",
        f"  [8] Added entry: {ff} (From file)",
        f"  [9] Added fact: {q}",
        f"  [10] Closed thread: {q}",
        "",
        "Batch complete: 5 added, 1 already saved (no action needed), 4 failed.",
    ]
    assert "\nBatch errors (4 of 10 entries failed):\n" in r.err
    for msg in ("  line 5: field 'resonance' must be an integer", "  line 7: invalid JSON",
                "  line 11: unknown field 'colour'", "  line 12: Invalid category 'nope'"):
        assert msg in r.err
    assert "  line 10: (dedup bypassed: no session provided)" not in r.err
    assert cli.scalar("SELECT body FROM entries WHERE id = ?", (ff,)) == "body from file"
    assert cli.scalar("SELECT fact_state FROM entries WHERE id = ?", (q,)) == "closed"


def test_add_batch_stdin_json_and_exit_0(cli) -> None:
    text = "\n".join(json.dumps(x) for x in [
        {"category": "insight", "title": "A", "content": "a"},
        {"category": "insight", "title": "B", "content": "b", "session_id": "s"},
        {"category": "insight", "title": "b", "content": "B", "session_id": "s"},
    ])
    r = cli("add-batch", "--json", "--no-embed", input=text, agent="alice")
    assert r.code == 0, r.err
    js = r.json()
    assert [a["line"] for a in js["added"]] == [1, 2] and js["added"][0]["kind"] == "added"
    assert js["already_saved"] == [{"line": 3, "id": js["added"][1]["id"], "title": "B"}]
    assert js["failed"] == [] and js["embedded"] == 0
    assert "  line 1: (dedup bypassed: no session provided)" in r.err


def test_add_batch_missing_file(cli, tmp_path: Path) -> None:
    r = cli("add-batch", "-f", str(tmp_path / "missing.jsonl"), agent="alice")
    assert r.code == 1 and r.err.startswith("Error: cannot read")
