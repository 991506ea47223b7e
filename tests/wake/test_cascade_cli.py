"""Scenario: the wake cascade and wake-fetch through the real CLI — layers, quotas, ordering, the resonance basis,
exclusion tags (filled layers, exact counts), visibility, activation bookkeeping, text and JSON outputs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest


def ids_of(layer: list[dict]) -> list[str]:
    return [e["id"] for e in layer]


def age(cli, entry_id: str, days: float, *, activated: bool = False) -> None:
    """Move an entry's clocks ``days`` into the past."""
    ts = (datetime.now(UTC) - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    cli.execute("UPDATE entries SET created_at = ?, updated_at = ?, last_activated = ? WHERE id = ?",
                (ts, ts, ts if activated else None, entry_id))


@pytest.fixture
def store(cli):
    e = {}
    e["c9"] = cli.add("Core nine", "body nine", resonance=9, extra=("--resonance-type", "foundational"))
    e["c8"] = cli.add("Core eight", "", resonance=8, extra=("--resonance-type", "transformative"))
    e["c10_ordered"] = cli.add("Core ordered", "first by wake order", resonance=8,
                               extra=("--wake-order", "1", "--resonance-type", "foundational"))
    e["eph"] = cli.add("Ephemeral high", "never core", resonance=9, extra=("--resonance-type", "ephemeral"))
    e["recent"] = cli.add("Recent low", "a recent note", resonance=1)
    e["old"] = cli.add("Old low", "an old note", resonance=2)
    age(cli, e["old"], 30)
    e["bridge"] = cli.add("Bridge", "anchored to core nine", resonance=6,
                          extra=("--anchors", e["c9"], "--resonance-type", "ephemeral"))
    age(cli, e["bridge"], 30)
    e["weak_bridge"] = cli.add("Weak bridge", "anchored but weak", resonance=4, extra=("--anchors", e["c9"]))
    age(cli, e["weak_bridge"], 30)
    e["mine"] = cli.add("My private", "mine", resonance=8, extra=("--private", "--resonance-type", "foundational"))
    e["bobs"] = cli.add("Bob private", "bob's", resonance=10, agent="bob", extra=("--private",))
    return e


def test_layers_order_and_visibility(cli, store) -> None:
    js = cli.ok("wake", "--json").json()
    assert list(js) == ["agent", "resonance_basis", "layers", "excluded", "total"]
    assert js["agent"] == "alice" and js["resonance_basis"] == "raw"
    # wake_order first, then resonance desc, then id; ephemeral never core; another agent's private never shown
    core = ids_of(js["layers"]["core"])
    assert core[0] == store["c10_ordered"] and core[1] == store["c9"]
    assert set(core[2:]) == {store["c8"], store["mine"]} and core[2:] == sorted(core[2:])
    assert ids_of(js["layers"]["recent"]) == [store["recent"]]
    assert ids_of(js["layers"]["bridges"]) == [store["bridge"]]  # ephemeral allowed; resonance 4 is not a bridge
    assert js["total"] == 6 and js["excluded"] == {"archive": 0, "wake-exclude": 0}
    item = js["layers"]["core"][1]
    assert item == {"id": store["c9"], "title": "Core nine", "category": "bloom", "resonance": 9,
                    "effective_resonance": 9.0, "content": "body nine"}
    assert store["bobs"] not in str(js)
    # bob sees his own and the public ones, not alice's private one
    bob = cli.ok("wake", "--json", agent="bob").json()
    assert ids_of(bob["layers"]["core"])[0] == store["c10_ordered"]
    assert store["bobs"] in str(bob) and store["mine"] not in str(bob)


def test_quota_fills_layers_in_order(cli, store) -> None:
    js = cli.ok("wake", "--json", "--limit", "5").json()
    assert len(js["layers"]["core"]) == 4 and ids_of(js["layers"]["recent"]) == [store["recent"]]
    assert js["layers"]["bridges"] == [] and js["total"] == 5
    js = cli.ok("wake", "--json", "-l", "2").json()
    assert ids_of(js["layers"]["core"]) == [store["c10_ordered"], store["c9"]] and js["total"] == 2
    # --days: the old note becomes recent with a wider window (activated long ago counts as its clock)
    js = cli.ok("wake", "--json", "-d", "31").json()
    assert set(ids_of(js["layers"]["recent"])) == {store["recent"], store["old"], store["weak_bridge"]}
    assert ids_of(js["layers"]["bridges"]) == [store["bridge"]]  # ephemeral: a bridge, never recent
    assert cli("wake", "--days", "0").code == 1


def test_min_resonance_overrides_limit(cli, store) -> None:
    js = cli.ok("wake", "--json", "--min-resonance", "6", "--limit", "1").json()
    core = ids_of(js["layers"]["core"])
    # every non-ephemeral entry ≥ 6 (the bridge and the ephemeral one are ephemeral)
    assert set(core) == {store["c10_ordered"], store["c9"], store["c8"], store["mine"]}
    assert js["layers"]["recent"] == [] and js["layers"]["bridges"] == []


def test_resonance_basis(cli, store) -> None:
    # a non-exempt entry with raw 9 that decayed below 8 over 60 days
    faded = cli.add("Faded", "old strong memory", resonance=9, extra=("--resonance-type", "relational"))
    age(cli, faded, 60)
    raw = cli.ok("wake", "--json").json()
    assert faded in ids_of(raw["layers"]["core"])
    dec = cli.ok("wake", "--json", "--resonance-basis", "decayed").json()
    assert dec["resonance_basis"] == "decayed" and faded not in str(dec)
    env = cli.ok("wake", "--json", env={"M1ND_RESONANCE_BASIS": "decayed"}).json()
    assert env["resonance_basis"] == "decayed"
    item = next(e for e in raw["layers"]["core"] if e["id"] == faded)
    assert item["resonance"] == 9 and item["effective_resonance"] < 8


def test_exclusion_keeps_layers_full_and_counts_exactly(cli, store) -> None:
    a1 = cli.add("Archived top", "x", resonance=10, extra=("--tags", "archive"))
    a2 = cli.add("Archived too", "x", resonance=10, extra=("--tags", "archive,wake-exclude"))
    cli.add("Archived low", "x", resonance=8, extra=("--tags", "wake-exclude"))  # ranked below the cut
    kept = cli.add("Archivedish", "tag merely starts with archive", resonance=8, extra=("--tags", "archived"))
    js = cli.ok("wake", "--json", "--limit", "3").json()
    core = ids_of(js["layers"]["core"])
    assert len(core) == 3 and a1 not in core and a2 not in core  # the layer still fills
    # without the exclusion a1 and a2 would have taken two of the three places
    assert js["excluded"] == {"archive": 2, "wake-exclude": 1}
    big = cli.ok("wake", "--json").json()
    assert kept in str(big) and big["excluded"] == {"archive": 2, "wake-exclude": 2}
    inc = cli.ok("wake", "--json", "--include-excluded", "--limit", "3").json()
    assert ids_of(inc["layers"]["core"])[1:] == sorted([a1, a2])
    assert inc["excluded"] == {"archive": 0, "wake-exclude": 0}


def test_activation_bookkeeping(cli, store) -> None:
    def counts() -> dict:
        return dict(cli.rows("SELECT id, activation_count FROM entries"))

    before = counts()
    cli.ok("wake", "--no-activate")
    assert counts() == before
    js = cli.ok("wake", "--json").json()
    after = counts()
    chosen = {e["id"] for layer in js["layers"].values() for e in layer}
    assert all(after[i] == before[i] + (1 if i in chosen else 0) for i in before)
    # the decay clock is not touched by the cascade
    assert cli.scalar("SELECT last_activated FROM entries WHERE id = ?", (store["c9"],)) is None


def test_text_output_and_empty_messages(cli, store, make_cli, tmp_path) -> None:
    out = cli.ok("wake", "--limit", "7").out.splitlines()
    assert out[:4] == ["", "=== CORE (Foundational) ===", "", f"  {store['c10_ordered']} [8] Core ordered"]
    assert out[4] == "    first by wake order"
    assert "=== RECENT ===" in out and "=== BRIDGES ===" in out
    assert out[-2:] == ["", "Loaded 6 memories across 3 layers."]
    other = make_cli(tmp_path / "empty")
    assert other.ok("wake").out == "No blooms to wake\n"
    other.add("Gone", "x", resonance=9, extra=("--tags", "archive"))
    other.add("Gone too", "x", resonance=9, extra=("--tags", "wake-exclude"))
    assert other.ok("wake").out == ("No blooms to wake: 2 excluded by tag (archive: 1, wake-exclude: 1); pass "
                                    "--include-excluded to include them\n")
    r = other("wake", agent=None)
    assert r.code == 1 and r.err == "Error: M1ND_CURRENT_AGENT not set. Cannot wake without identity.\n"
    assert r.out == ""


def test_wake_fetch(cli, store) -> None:
    t = cli.add("Tagged", "project note ]]> with end marker", category="insight", resonance=5,
                extra=("--tags", "project/x"))
    fact = cli("add", "--type", "decision", "--content", "Use WAL", "--resonance", "4", "--json").json()["id"]
    js = cli.ok("wake-fetch", "--json").json()
    got = [f["id"] for f in js["facts"]]
    # raw resonance ≥ 3 and decayed value > 0.5, strongest first; the old (30 days) ones fell out of --days 15
    assert store["recent"] not in got and store["old"] not in got and store["bobs"] not in got
    assert got[0] == store["c9"] and t in got and fact in got
    f = next(x for x in js["facts"] if x["id"] == fact)
    assert f["label"] == "decision" and f["resonance"] == 4 and len(f["date"]) == 10 and f["content"] == "Use WAL"
    assert next(x for x in js["facts"] if x["id"] == t)["label"] == "insight"
    excl = cli.ok("wake-fetch", "--json", "--exclude-tags", "tier/,project/,").json()
    assert t not in [x["id"] for x in excl["facts"]]
    assert len(cli.ok("wake-fetch", "--json", "--limit", "2").json()["facts"]) == 2
    wide = cli.ok("wake-fetch", "--json", "--days", "45").json()
    assert store["bridge"] in [x["id"] for x in wide["facts"]]
    text = cli.ok("wake-fetch", "--exclude-tags", "zzz/").out
    assert text.startswith("<facts>\n[") and text.endswith("</facts>\n")
    assert "<![CDATA[project note ]]]]><![CDATA[> with end marker]]>" in text
    assert cli("wake-fetch", "--exclude-tags", "a/", "--exclude-tags", "b/").code == 2
    # another agent sees the public facts only
    nobody = cli.ok("wake-fetch", "--json", "--resonance-basis", "raw", agent="nobody").json()
    assert store["mine"] not in str(nobody) and store["c9"] in str(nobody)


def test_wake_fetch_empty(make_cli, tmp_path) -> None:
    assert make_cli(tmp_path / "x").ok("wake-fetch").out == "(no memory entries returned)\n"
