"""Scenario: show, list, search and recent, with the shared filters and visibility rules."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def store(cli):
    ids = {}
    ids["retry"] = cli.add("--category", "pattern", "-t", "Retry with backoff", "--content",
                           "Use exponential backoff with jitter when calling getUserName", "--tags", "net,tier/1",
                           "--resonance", "8", "--resonance-type", "foundational", "--wake-phrase", "breathe")
    ids["wal"] = cli.add("--category", "gotcha", "-t", "SQLite WAL needs shared memory", "--content",
                         "WAL mode fails on network filesystems", "--tags", "sqlite", "--resonance", "4",
                         "--anchors", ids["retry"], "--code-ref", "file::src/db.py")
    ids["alice_private"] = cli.add("--category", "insight", "-t", "Private backoff idea", "--content",
                                   "my own backoff notes", "--private")
    ids["bob_private"] = cli.add("--category", "insight", "-t", "Bob backoff secret", "--content",
                                 "bob backoff", "--private", agent="bob")
    return ids


def test_show_text_json_and_activation(cli, store) -> None:
    r = cli("show", store["wal"], agent="alice")
    assert r.code == 0
    lines = r.out.splitlines()
    assert lines[:4] == [f"ID:       {store['wal']}", "Category: gotcha", "Title:    SQLite WAL needs shared memory",
                         "Resonance: 4 (effective 4.00)"]
    assert "Tags:     sqlite" in lines and f"Anchors:  {store['retry']}" in lines
    assert "Code refs: file::src/db.py" in lines
    assert lines[-2:] == ["", "WAL mode fails on network filesystems"]
    assert cli.scalar("SELECT activation_count FROM entries WHERE id = ?", (store["wal"],)) == 1
    js = cli("show", store["wal"][3:], "--json", agent="alice").json()
    assert list(js)[:6] == ["id", "category_id", "title", "body", "summary", "applicability"]
    assert list(js)[-4:] == ["code_refs", "chunk_count", "embedding_model", "embedded_at"]
    assert js["anchors"] == [store["retry"]] and js["activation_count"] == 2 and js["last_activated"]
    assert js["effective_resonance"] == pytest.approx(4.0, abs=0.01)
    r = cli("show", store["wal"], "--content-only", agent="alice")
    assert r.out == "WAL mode fails on network filesystems"


def test_show_unique_prefix_and_ambiguity(cli, store) -> None:
    assert cli("show", store["wal"][:11], "--json", agent="alice").json()["id"] == store["wal"]
    r = cli("show", "kn-0123456789abcdef", agent="alice")
    assert (r.code, r.err) == (1, "Error: Entry 'kn-0123456789abcdef' not found\n")


def test_show_divert_large_output(cli, store, tmp_path: Path) -> None:
    eid = cli.add("--category", "reference", "-t", "Big", "--content", "line\n" * 10000)
    r = cli("show", eid, "--max-bytes", "1000", agent="alice", env={"TMPDIR": str(tmp_path)})
    lines = r.out.splitlines()
    assert lines[0].startswith(f"Memory {eid} is ") and lines[0].endswith(" lines).")
    path = Path(lines[1].removeprefix("Content written to: "))
    assert path.read_text(encoding="utf-8").endswith("\n\n" + "line\n" * 10000)
    assert lines[2] == "Read the file to see full content."


def test_private_entries_are_invisible_to_others(cli, store) -> None:
    for cmd in (["show", store["alice_private"]], ["delete", store["alice_private"]],
                ["reinforce", store["alice_private"]], ["relationships", "list", store["alice_private"]]):
        r = cli(*cmd, agent="bob")
        assert r.code == 1 and r.err == f"Error: Entry '{store['alice_private']}' not found\n", cmd
    r = cli("update", store["alice_private"], "--title", "x", agent="bob")
    assert r.err == f"Error: Entry not found: {store['alice_private']}\n"
    r = cli("show", store["alice_private"])  # no agent at all
    assert r.code == 1
    assert cli("show", store["alice_private"], agent="alice").code == 0


def test_list_visibility_modes_and_hint(cli, store) -> None:
    r = cli("list", "--json", agent="alice")
    ids = [e["id"] for e in r.json()]
    assert set(ids) == {store["retry"], store["wal"]}
    assert r.err == "note: 1 private entry of yours matched but is hidden; use --include-private to see them\n"
    r = cli("list", "--include-private", "--json", agent="alice")
    assert {e["id"] for e in r.json()} == {store["retry"], store["wal"], store["alice_private"]} and r.err == ""
    r = cli("list", "--mine", "--json", agent="alice")
    assert [e["id"] for e in r.json()] == [store["alice_private"]]
    r = cli("list", "--json")
    assert r.err == "" and len(r.json()) == 2
    assert cli("list", "--mine", "--include-private", agent="alice").code == 2


def test_list_filters(cli, store) -> None:
    def ids(*args: str) -> set[str]:
        r = cli("list", "--json", *args, agent="alice")
        assert r.code == 0, r.err
        return {e["id"] for e in r.json()}
    assert ids("-c", "gotcha") == {store["wal"]}
    assert ids("-c", "gotcha,pattern") == {store["wal"], store["retry"]}
    assert ids("--min-resonance", "5") == {store["retry"]}
    assert ids("--max-resonance", "5") == {store["wal"]}
    assert ids("--has-wake-phrase") == {store["retry"]}
    assert ids("--missing-wake-phrase") == {store["wal"]}
    assert ids("--has-anchors") == {store["wal"]}
    assert ids("--missing-anchors") == {store["retry"]}
    assert ids("--has-resonance-type") == {store["retry"]}
    assert ids("--missing-resonance-type") == {store["wal"]}
    assert ids("--tags", "sqlite,zzz") == {store["wal"]}
    assert ids("--exclude-tags", "tier/,") == {store["wal"]}
    assert ids("--code-ref", "file::src/db.py") == {store["wal"]}
    assert ids("--limit", "1", "--sort", "resonance") == {store["retry"]}
    r = cli("list", "-c", "gotcha,bogus", agent="alice")
    assert r.code == 1 and r.err.startswith("Error: Unknown category 'bogus'. Valid categories:")
    assert cli("list", "--exclude-tags", "a", "--exclude-tags", "b").code == 2
    assert cli("list", "--has-anchors", "--missing-anchors").code == 2


def test_list_text(cli, store) -> None:
    r = cli("list", "-c", "pattern", agent="alice")
    assert r.out == (f"Found 1 entries:\n\n  {store['retry']} [pattern]\n  Retry with backoff\n"
                     "  Use exponential backoff with jitter when calling getUserName\n  Tags: net, tier/1\n\n")
    assert cli("list", "-c", "decision").out == "No entries found\n"


def test_search_ranking_identifiers_and_fallback(cli, store) -> None:
    r = cli("search", "backoff", "--json", agent="alice")
    res = r.json()
    assert [e["id"] for e in res] == [store["retry"]]
    assert res[0]["score"] > 0
    assert r.err == "note: 1 private entry of yours matched but is hidden; use --include-private to see them\n"
    r = cli("search", "backoff", "--include-private", "--json", agent="alice")
    assert {e["id"] for e in r.json()} == {store["retry"], store["alice_private"]}
    # title matches outrank body matches (bm25 weights), identifier parts are searchable, stemming works
    assert [e["id"] for e in cli("search", "user name", "--json").json()] == [store["retry"]]
    assert [e["id"] for e in cli("search", "filesystem", "--json").json()] == [store["wal"]]
    assert [e["id"] for e in cli("search", "shar*", "--json").json()] == [store["wal"]]
    r = cli("search", "backoff sqlite", "--json")
    assert {e["id"] for e in r.json()} == {store["retry"], store["wal"]}
    assert "note: no entry matched every word; showing entries that match any" in r.err
    r = cli("search", '"network filesystems"', "--json")
    assert [e["id"] for e in r.json()] == [store["wal"]]
    for hostile in ('NEAR(a b)', '" OR *', "title:x", "-", "a AND"):
        assert cli("search", hostile).code == 0, hostile
    assert cli("search", "nothing-like-this").out == "No results for 'nothing-like-this'\n"


def test_search_activate_and_semantic_fallback(cli, store) -> None:
    r = cli("search", "backoff", "--activate", agent="alice")
    assert "Activated 1 result(s)" in r.err and r.out.startswith("Found 1 results:")
    assert cli.scalar("SELECT activation_count FROM entries WHERE id = ?", (store["retry"],)) == 1
    r = cli("search", "backoff", "--semantic", "--json")
    assert "note: no embedding model installed; using keyword search" in r.err and len(r.json()) == 1
    assert cli("search", "x", "--semantic", "--hybrid").code == 2


def test_recent(cli) -> None:
    fact = cli.add("--type", "decision", "--content", "Chose SQLite")
    plain = cli.add("--category", "insight", "-t", "Plain", "--content", "x", "--resonance", "5")
    cli.add("--category", "insight", "-t", "Zero", "--content", "x")
    r = cli("recent", "--json", agent="alice")
    assert [e["id"] for e in r.json()] == [fact]
    assert list(r.json()[0]) == ["id", "type", "category", "content", "created_at", "resonance",
                                 "effective_resonance", "state"]
    r = cli("recent", "--all-types", "--sort", "resonance", "--json", agent="alice")
    assert [e["id"] for e in r.json()] == [plain, fact]
    r = cli("recent", agent="alice")
    assert r.out.startswith("[") and f"decision: Chose SQLite ({fact}, resonance 3)" in r.out
    r = cli("recent", "--days", "0")
    assert r.code == 1 and r.err == "Error: --days must be a positive integer (got 0)\n"


def test_resonance_basis_raw_vs_decayed(cli) -> None:
    old = cli.add("--category", "insight", "-t", "Old", "--content", "x", "--resonance", "6")
    cli.execute("UPDATE entries SET created_at = '2020-01-01T00:00:00.000Z' WHERE id = ?", (old,))
    assert cli("list", "--min-resonance", "5", "--json").json() == []
    assert [e["id"] for e in cli("list", "--min-resonance", "5", "--resonance-basis", "raw", "--json").json()] == [old]
    r = cli("list", "--min-resonance", "5", "--json", env={"M1ND_RESONANCE_BASIS": "raw"})
    assert [e["id"] for e in r.json()] == [old]
    assert cli("show", old, "--json").json()["effective_resonance"] < 1
