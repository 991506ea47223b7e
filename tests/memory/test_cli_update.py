"""Scenario: update / edit / append / prepend, backups, restore and delete."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def eid(cli) -> str:
    return cli.add("--category", "insight", "-t", "Original", "--content", "alpha beta alpha", "--tags", "a,b",
                   "--session-id", "s1")


def backups(cli, eid: str) -> list[tuple]:
    return cli.rows("SELECT operation FROM backups WHERE entry_id = ? ORDER BY rowid", (eid,))


def test_update_metadata_and_change_lines(cli, eid) -> None:
    anchor = cli.add("--category", "insight", "-t", "Anchor", "--content", "x")
    r = cli("update", eid, "-t", "Renamed", "--add-tag", "c", "--remove-tag", "a", "--resonance", "6",
            "--resonance-type", "relational", "--add-anchor", anchor, "--wake-order", "2", "--add-wake-phrase",
            "hello", "--add-code-ref", "file::x.py", "--category", "gotcha", agent="alice")
    assert r.code == 0, r.err
    assert r.out.splitlines() == [
        f"Updated entry: {eid}", "  title: Original -> Renamed", "  category: insight -> gotcha", "  tags: b, c",
        "  resonance: 0 -> 6", "  resonance_type: - -> relational", f"  anchors: added '{anchor}'",
        "  wake_phrases: hello", "  wake_order: 2", "  code_refs: file::x.py"]
    row = cli.rows("SELECT id, title, category, resonance, resonance_type, wake_order, wake_phrases, code_refs, rev "
                   "FROM entries WHERE id = ?", (eid,))[0]
    assert row == (eid, "Renamed", "gotcha", 6, "relational", 2, '["hello"]', '["file::x.py"]', 2)
    assert backups(cli, eid) == [("update",)]
    r = cli("update", eid, "--resonance-type", "-", "--wake-order", "-", "--remove-anchor", anchor, "--json",
            agent="alice")
    assert r.json() == {"id": eid, "changes": ["resonance_type: cleared", f"anchors: removed '{anchor}'",
                                               "wake_order: cleared"]}
    assert cli.rows("SELECT count(*) FROM anchor_removed") == [(1,)]


def test_update_without_change_writes_nothing(cli, eid) -> None:
    r = cli("update", eid, "-t", "Original", "--tags", "a,b", agent="alice")
    assert (r.code, r.out) == (0, "  No changes specified\n")
    assert cli.scalar("SELECT rev FROM entries") == 1 and backups(cli, eid) == []


@pytest.mark.parametrize("args", [
    ["--content", "x", "--append-content", "y"],
    ["--find", "a", "--replace", "b", "--content", "x"],
    ["--find", "a"],
    ["--replace", "b"],
    ["--find", "a", "--replace", "b", "--replace-all", "--nth", "1"],
    ["--private", "--visibility", "public"],
], ids=["content+append", "find+content", "find-alone", "replace-alone", "all+nth", "private+visibility"])
def test_update_conflicting_flags_exit_2(cli, eid, args) -> None:
    r = cli("update", eid, *args, agent="alice")
    assert r.code == 2 and r.out == ""
    assert cli.scalar("SELECT rev FROM entries") == 1


def test_update_content_modes(cli, eid, tmp_path) -> None:
    r = cli("update", eid, "--find", "alpha", "--replace", "ALPHA", "--nth", "2", agent="alice")
    assert r.out.splitlines()[1] == "  content: 1 replacement(s)"
    assert cli.scalar("SELECT body FROM entries WHERE id = ?", (eid,)) == "alpha beta ALPHA"
    f = tmp_path / "c.txt"
    f.write_text("from file", encoding="utf-8")
    assert cli("update", eid, "-f", str(f), agent="alice").out.splitlines()[1] == "  content: updated (from file)"
    assert cli("update", eid, "--append-content", "tail", agent="alice").out.splitlines()[1] == \
        "  content: appended 4 bytes"
    assert cli("update", eid, "--prepend-content", "head", agent="alice").code == 0
    assert cli.scalar("SELECT body FROM entries WHERE id = ?", (eid,)) == "head\nfrom file\ntail"
    # the FTS index follows the content inside the same transaction
    assert [e["id"] for e in cli("search", "tail", "--json").json()] == [eid]
    assert cli("search", "alpha", "--json").json() == []
    r = cli("update", eid, "--wake-order", "soon", agent="alice")
    assert (r.code, r.err) == (1, "Error: Invalid wake_order value 'soon' (use number or '-' to clear)\n")


def test_visibility_rules(cli) -> None:
    bloom = cli.add("--category", "bloom", "-t", "Who I am", "--content", "identity", "--private")
    r = cli("update", bloom, "--visibility", "public", agent="alice")
    assert r.err == f"Error: Making bloom '{bloom}' public will expose identity data. Use --force to confirm.\n"
    assert cli("update", bloom, "--visibility", "public", "--force", agent="alice").code == 0
    assert cli.rows("SELECT visibility, owner FROM entries WHERE id = ?", (bloom,)) == [("public", None)]
    r = cli("update", bloom, "--owner", "bob", agent="alice")
    assert r.err.startswith("Error: Cannot set owner on public entry.")
    r = cli("update", bloom, "--private", "--owner", "bob", agent="alice")  # issue 14: not into bob's space
    assert r.code == 1 and "another agent" in r.err
    assert cli("update", bloom, "--private", "--owner", "bob", agent="bob").code == 0
    assert cli.rows("SELECT visibility, owner, dedup_scope FROM entries WHERE id = ?", (bloom,)) == [
        ("private", "bob", "private:bob")]
    assert cli("show", bloom, agent="alice").code == 1  # now bob's


def test_edit(cli, eid) -> None:
    r = cli("edit", eid, "--old", "alpha", "--new", "omega", agent="alice")
    assert r.code == 1
    assert r.err == ('Error: Found 2 matches for "alpha". Use --replace-all to replace all, or --nth N to replace a '
                     "specific occurrence.\n")
    r = cli("edit", eid, "--find", "alpha", "--replace", "omega", "--replace-all", "--json", agent="alice")
    assert r.json() == {"id": eid, "replacements": 2}
    r = cli("edit", eid, "--find", "zzz", "--replace", "y", agent="alice")
    assert r.err == 'Error: Text not found in content: "zzz"\n'
    r = cli("edit", eid, "--find", "", "--replace", "y", agent="alice")
    assert r.err == "Error: --find must not be empty\n"
    r = cli("edit", eid, "--find", "beta", "--replace", "B", agent="alice")
    assert r.out == f"Edited entry: {eid}\n  1 replacement(s)\n"
    assert backups(cli, eid) == [("edit",), ("edit",)]
    assert cli("edit", eid, "--find", "x", agent="alice").code == 2


def test_append_prepend_stdin(cli, eid) -> None:
    r = cli("append", eid, input="from stdin \n\n", agent="alice")
    assert r.out == f"Appended to entry: {eid}\n  10 bytes added\n"
    r = cli("prepend", eid, "--content", "é", "--json", agent="alice")
    assert r.json() == {"id": eid, "bytes_added": 2}
    assert cli.scalar("SELECT body FROM entries WHERE id = ?", (eid,)) == "é\nalpha beta alpha\nfrom stdin"
    r = cli("append", eid, input="", agent="alice")
    assert (r.code, r.err) == (1, "Error: No content provided\n")
    assert backups(cli, eid) == [("append",), ("prepend",)]
    r = cli("append", "kn-00000000000000ff", "--content", "x", agent="alice")
    assert r.err == "Error: Entry not found: kn-00000000000000ff\n"


def test_backups_restore_and_undo(cli, eid) -> None:
    cli("update", eid, "-t", "Second", "--tags", "z", agent="alice")
    cli("update", eid, "--content", "third body", agent="alice")
    r = cli("restore", eid, "--list", agent="alice")
    lines = r.out.splitlines()
    assert lines[0] == f"Backups for {eid}:" and len(lines) == 3
    assert lines[1].endswith("| update | 16 bytes") and lines[2].endswith("| update | 16 bytes")
    js = cli("restore", eid, "--list", "--json", agent="alice").json()
    assert [b["title"] for b in js] == ["Second", "Original"]
    assert list(js[0]) == ["id", "entry_id", "title", "body", "operation", "source_agent", "created_at"]
    r = cli("restore", eid, "--json", agent="alice")
    res = r.json()
    assert res["restored"] and res["from_backup"] == js[0]["id"] and res["recreated"] is False
    assert cli.rows("SELECT title, body FROM entries WHERE id = ?", (eid,)) == [("Second", "alpha beta alpha")]
    assert cli.rows("SELECT tag FROM entry_tags") == [("z",)]
    # the restore backed up the state it replaced: restoring again undoes it
    r = cli("restore", eid, agent="alice")
    assert r.out.splitlines()[0] == f"Restored entry: {eid}" and "  original operation: restore" in r.out
    assert cli.rows("SELECT title, body FROM entries WHERE id = ?", (eid,)) == [("Second", "third body")]
    r = cli("restore", eid, "--backup", js[1]["id"], agent="alice")
    assert cli.rows("SELECT title FROM entries WHERE id = ?", (eid,)) == [("Original",)]
    assert cli("restore", eid, "--backup", "bk-000000000000", agent="alice").code == 1


def test_backups_are_pruned_to_ten(cli, eid) -> None:
    for i in range(13):
        cli("update", eid, "-t", f"title {i}", agent="alice")
    assert cli.scalar("SELECT count(*) FROM backups WHERE entry_id = ?", (eid,)) == 10


def test_delete_and_restore_after_delete(cli, eid) -> None:
    other = cli.add("--category", "insight", "-t", "Other", "--content", "x", "--anchors", eid)
    cli("relationships", "add", "--from", other, "--to", eid, "--type", "related", agent="alice")
    r = cli("delete", eid, agent="alice")
    assert r.out == f"Deleted entry '{eid}'\n"
    for table in ("entry_tags", "entry_anchors", "relationships"):
        assert cli.scalar(f"SELECT count(*) FROM {table}") == 0, table
    assert cli("search", "alpha", "--json").json() == []
    assert cli("show", eid).code == 1
    r = cli("delete", eid, "--json", agent="alice")
    assert json.loads(r.err)["error"] == "not_found"
    res = cli("restore", eid, "--json", agent="alice").json()
    assert res["recreated"] is True and res["operation"] == "delete"
    js = cli("show", eid, "--json").json()
    assert (js["title"], js["body"], js["tags"], js["session_id"]) == ("Original", "alpha beta alpha", ["a", "b"], "s1")
    assert [e["id"] for e in cli("search", "alpha", "--json").json()] == [eid]


def test_private_backups_stay_private(cli) -> None:
    p = cli.add("--category", "insight", "-t", "Mine", "--content", "x", "--private")
    cli("delete", p, agent="alice")
    assert cli("restore", p, "--list", "--json", agent="bob").json() == []
    assert cli("restore", p, agent="bob").code == 1
    assert cli("restore", p, agent="alice").code == 0
