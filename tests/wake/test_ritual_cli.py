"""Scenario: one full token ritual walked through the real CLI against a real database file — every status path,
replay after a lost response, stale and forged tokens, a bloom deleted and one shrunk mid-ritual, the guess log, and
the summary arithmetic."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest

CHUNK = {"M1ND_WAKE_CHUNK_BYTES": "40"}
# 3 chunks at 40 bytes: cut before each "## " heading
A_BODY = "I build memory engines.\n## Tests\nI like tests a lot.\n## Tools\nI use sharp tools."
B_BODY = "Quiet mornings. Coffee first!"
C_BODY = "Alpha section text here ok.\n## Beta\nBeta text goes here."
E_BODY = "First half of E.\n## Second\nSecond half of E."


def sig(secret_hex: str, sid: str, step: int, agent: str, *, key: bytes | None = None) -> str:
    mac = hmac.new(key if key is not None else bytes.fromhex(secret_hex), f"{sid}.{step}.{agent}".encode(),
                   hashlib.sha256).digest()[:16]
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


class Walk:
    def __init__(self, cli) -> None:
        self.cli = cli
        self.token: str | None = None

    def respond(self, guess: str, bloom: str, token: str | None = None, agent: str | None = "alice"):
        return self.cli("wake", "--respond", guess, "--bloom-id", bloom, "--session", token or self.token,
                        agent=agent, env=CHUNK)

    def step(self, guess: str, bloom: str):
        r = self.respond(guess, bloom)
        assert r.code == 0, r.err
        assert r.err == ""
        js = r.json()
        self.token = js["session"]
        return js

    def refused(self, guess: str, bloom: str, code: str, token: str | None = None, agent: str | None = "alice"):
        r = self.respond(guess, bloom, token, agent)
        assert r.code == 1 and r.out == "", (r.out, r.err)
        e = r.err_json()
        assert e["status"] == "error" and e["error"] == code, e
        return e


@pytest.fixture
def setup(cli):
    ids = {
        "A": cli.add("Who I am", A_BODY, resonance=9, extra=("--wake-phrases", "memory builder,tester",
                                                             "--wake-order", "1", "--resonance-type",
                                                             "foundational")),
        "B": cli.add("Mornings", B_BODY, resonance=8, extra=("--wake-order", "2")),
        "C": cli.add("Greek letters", C_BODY, resonance=8, extra=("--wake-order", "3")),
        "D": cli.add("Private me", "Only mine.", resonance=8, extra=("--wake-order", "4", "--private")),
        "E": cli.add("Halves", E_BODY, resonance=8, extra=("--wake-order", "5", "--wake-phrases", "ending")),
    }
    # another agent's private bloom never enters alice's ritual
    ids["bob"] = cli.add("Bob secret", "bob only", resonance=10, agent="bob", extra=("--private",))
    return ids


def test_full_ritual_every_path(cli, setup, make_cli, tmp_path) -> None:
    ids = setup
    r = cli("wake", "--begin", "--wake", "1", "--model", "model-x", env=CHUNK)
    assert r.code == 0, r.err
    begun = r.json()
    assert list(begun) == ["status", "session", "prompt", "progress", "wake", "model", "excluded", "warnings"]
    assert begun["status"] == "started" and begun["wake"] == 1 and begun["model"] == "model-x"
    assert begun["progress"] == {"current": 0, "total": 9}
    assert begun["prompt"] == {"id": ids["A"], "title": "Who I am (Part 1/3)", "phrase_source": "authored",
                               "chunk": {"index": 0, "total": 3}}
    assert begun["excluded"] == {"archive": 0, "wake-exclude": 0} and begun["warnings"] == []
    assert "phrases" not in json.dumps(begun["prompt"])  # the title alone
    w = Walk(cli)
    w.token = begun["session"]
    sid = w.token.split(".")[0]
    assert len(sid) == 32

    # -- tokens: the HMAC construction over the store's secret; forgeries are refused --------------------------
    secret = cli.scalar("SELECT value FROM meta WHERE key = 'wake_secret'")
    assert w.token == f"{sid}.0.{sig(secret, sid, 0, 'alice')}"
    forged = [
        f"{sid}.0.{sig(secret, sid, 0, 'alice')[:-1]}{'A' if w.token[-1] != 'A' else 'B'}",  # flipped signature
        f"{sid}.0.{sig('', sid, 0, 'alice', key=sid.encode())}",  # keyed by the public session id
        f"{sid}.1.{w.token.split('.')[2]}",  # another step with this step's signature
        f"{sid}.0.{sig(secret, sid, 0, 'mallory')}",  # signed for another agent
        "not-a-token", f"{'0' * 32}.0.{sig(secret, '0' * 32, 0, 'alice')}",  # malformed; unknown session
    ]
    for tok in forged:
        w.refused("guess", ids["A"], "invalid_token", token=tok)
    # the agent check
    e = w.refused("guess", ids["A"], "wrong_agent", agent="bob")
    assert "alice" in e["message"]
    w.refused("guess", ids["A"], "wrong_agent", agent=None)

    # -- refused guesses write nothing and keep the token valid --------------------------------------------------
    for bad in ("x" * 2001, "  ?! -- …  "):
        w.refused(bad, ids["A"], "invalid_guess")
    e = w.refused("guess", "kn-0000000000000000", "invalid_bloom_id")
    assert e["expected_id"] == ids["A"] and e["message"] == f"Expected bloom {ids['A']}, got kn-0000000000000000"
    assert cli.scalar("SELECT count(*) FROM wake_guesses") == 0
    assert cli.scalar("SELECT step FROM wake_sessions WHERE id = ?", (sid,)) == 0

    # -- A: authored (close), derived (exact), derived (none; a guess starting with '-') -------------------------
    s = w.step("Memory Builder!", ids["A"][3:])  # the kn- prefix is optional
    assert s["status"] == "shown" and s["bucket"] == "unhinted" and s["guess"] == "Memory Builder!"
    assert s["match"] == {"kind": "close", "phrase_index": 0}
    assert s["bloom"] == {"id": ids["A"], "title": "Who I am (Part 1/3)", "phrases": ["memory builder", "tester"],
                          "phrase_source": "authored", "content": "I build memory engines.\n",
                          "chunk": {"index": 0, "total": 3}}
    assert s["next"] == {"id": ids["A"], "title": "Who I am (Part 2/3)", "phrase_source": "derived",
                         "chunk": {"index": 1, "total": 3}}
    assert s["progress"] == {"current": 1, "total": 9, "buckets": {"unhinted": 1, "revealed": 0}}
    assert (s["wake"], s["model"]) == (1, "model-x") and "summary" not in s and "replayed" not in s
    assert not any(k.startswith("sim") for k in json.dumps(s).split('"'))
    spent_a0 = begun["session"]

    s = w.step("Tests", ids["A"])
    assert (s["bucket"], s["match"]) == ("unhinted", {"kind": "exact", "phrase_index": 0})
    assert s["bloom"]["phrases"] == ["Tests"] and s["bloom"]["content"] == "## Tests\nI like tests a lot.\n"
    s = w.step("-hammers", ids["A"])
    assert (s["bucket"], s["match"]) == ("revealed", {"kind": "none", "phrase_index": None})
    assert s["guess"] == "-hammers" and s["bloom"]["phrases"] == ["Tools"]
    assert s["next"]["phrase_source"] == "auto" and s["next"]["chunk"] is None

    # a token older than the last call is refused with a true pointer to the last one that worked
    e = w.refused("again", ids["A"], "token_out_of_sync", token=spent_a0)
    pointer = e["last_valid_token"]
    assert e["message"].endswith(f"the last valid token is {pointer}")
    again = w.respond("anything", ids["A"], token=pointer)
    assert again.code == 0 and again.json()["replayed"] is True and again.json()["session"] == w.token

    # -- B: one chunk, auto phrase = one of its sentences picked by sha256(content) ------------------------------
    sentences = ["Quiet mornings.", "Coffee first!"]
    auto = sentences[int(hashlib.sha256(B_BODY.encode()).hexdigest()[:8], 16) % 2]
    token_b = w.token
    first = w.step(auto, ids["B"])
    assert (first["bucket"], first["match"], first["bloom"]["phrases"]) == (
        "unhinted", {"kind": "exact", "phrase_index": 0}, [auto])
    # the response was "lost": the same call again gets it back, replayed, with the token never received
    r = w.respond("a different guess", ids["B"], token=token_b)
    assert r.code == 0
    replay = r.json()
    assert replay.pop("replayed") is True and replay == first  # the logged guess counts, not the new one
    assert cli.scalar("SELECT count(*) FROM wake_guesses WHERE session_id = ?", (sid,)) == 4

    # -- C: auto from the content's first heading, then an unphrased later chunk (2000 characters accepted) -----
    s = w.step("beta", ids["C"])
    assert s["bloom"]["phrase_source"] == "auto" and s["bloom"]["phrases"] == ["Beta"]
    assert s["match"] == {"kind": "close", "phrase_index": 0}
    s = w.step("y" * 2000, ids["C"])
    assert s["bloom"]["phrase_source"] == "unphrased" and s["bloom"]["phrases"] == []
    assert s["bucket"] == "revealed" and s["next"]["id"] == ids["D"]

    # -- D: deleted mid-ritual (an owned private bloom) → bloom_missing, nothing judged, step advances ----------
    assert cli("delete", ids["D"]).code == 0
    token_d = w.token
    s = w.step("whatever", ids["D"])
    assert s["status"] == "bloom_missing"
    assert set(s) == {"status", "session", "next", "progress", "wake", "model"}
    assert s["progress"] == {"current": 7, "total": 9, "buckets": {"unhinted": 4, "revealed": 2}}
    r = w.respond("whatever", ids["D"], token=token_d)  # a lost bloom_missing answer comes back too
    assert r.json() == {**s, "replayed": True}
    w.refused("whatever", ids["D"], "invalid_token", token=token_d[:-2] + "xx")

    # -- E: chunk 0 judged, then the entry shrinks past chunk 1 → chunk_truncated -------------------------------
    s = w.step("nope", ids["E"])
    assert (s["bucket"], s["bloom"]["phrase_source"]) == ("revealed", "authored")
    assert cli("update", ids["E"], "--content", "Short.").code == 0
    s = w.step("second", ids["E"])
    assert s["status"] == "chunk_truncated" and s["next"] is None
    assert "bloom" not in s and "bucket" not in s and "guess" not in s and "match" not in s
    summary = s["summary"]
    assert summary == {"chunks": 9, "blooms": 5,
                       "buckets": {"unhinted": {"authored": 1, "derived": 1, "auto": 2, "unphrased": 0},
                                   "revealed": {"authored": 1, "derived": 1, "auto": 0, "unphrased": 1}},
                       "unjudged": 2}
    judged = sum(sum(b.values()) for b in summary["buckets"].values())
    assert summary["chunks"] == judged + summary["unjudged"]
    assert s["progress"] == {"current": 9, "total": 9, "buckets": {"unhinted": 4, "revealed": 3}}
    # the session is kept, completed; its final token cannot judge anything more
    assert cli.scalar("SELECT completed_at FROM wake_sessions WHERE id = ?", (sid,)) is not None
    w.refused("more", ids["E"], "invalid_token")

    # -- the guess log: one row per judged step, written with the advance ----------------------------------------
    rows = cli.rows("SELECT position, agent, wake, model_id, bloom_id, chunk_index, chunk_total, bloom_position, "
                    "bloom_total, title_shown, guess, phrase_source, phrases_json, match_kind, match_index, bucket, "
                    "content_sha256, scored_at FROM wake_guesses WHERE session_id = ? ORDER BY position", (sid,))
    assert [r[0] for r in rows] == [0, 1, 2, 3, 4, 5, 7]  # 6 (bloom_missing) and 8 (chunk_truncated) judged nothing
    assert rows[0][1:12] == ("alice", 1, "model-x", ids["A"], 0, 3, 0, 5, "Who I am (Part 1/3)", "Memory Builder!",
                             "authored")
    assert json.loads(rows[0][12]) == ["memory builder", "tester"]
    assert rows[0][13:16] == ("close", 0, "unhinted")
    assert rows[0][16] == hashlib.sha256(b"I build memory engines.\n").hexdigest()
    assert rows[3][10] == auto and rows[5][10] == "y" * 2000
    assert all(r[17] is None for r in rows)  # pending until wake-log score


def test_begin_wake_number_rules_and_empty(cli, setup) -> None:
    ids = setup
    r = cli("wake", "--begin", "--wake", "0")
    assert r.code == 1 and r.err_json()["error"] == "invalid_argument"
    b = cli.ok("wake", "--begin", "--wake", "3", "--limit", "1").json()
    assert b["progress"]["total"] == 1 and b["warnings"] == []  # nothing logged yet: no warning
    s = cli.ok("wake", "--respond", "memory builder", "--bloom-id", ids["A"], "--session", b["session"]).json()
    assert s["match"]["kind"] == "exact" and s["summary"]["chunks"] == 1
    # wake 3 now has guesses: refused unless forced
    r = cli("wake", "--begin", "--wake", "3")
    assert r.code == 1 and r.out == "" and r.err_json()["error"] == "wake_taken"
    assert cli.scalar("SELECT count(*) FROM wake_sessions") == 1
    forced = cli.ok("wake", "--begin", "--wake", "3", "--force-wake").json()
    assert forced["status"] == "started"
    low = cli.ok("wake", "--begin", "--wake", "2").json()
    assert low["warnings"] == ["wake 2 is lower than the highest wake you have logged (3)"]
    assert cli.ok("wake", "--begin", "--wake", "4").json()["warnings"] == []
    high = cli.ok("wake", "--begin", "--wake", "9").json()
    assert high["warnings"] == ["wake 9 skips ahead: the highest wake you have logged is 3"]
    # an empty wake set: no session, exit 0
    n = cli.scalar("SELECT count(*) FROM wake_sessions")
    empty = cli.ok("wake", "--begin", "--min-resonance", "100", "--wake", "4").json()
    assert empty == {"status": "empty", "session": None, "prompt": None, "progress": {"current": 0, "total": 0},
                     "wake": 4, "model": None, "excluded": {"archive": 0, "wake-exclude": 0}, "warnings": []}
    assert cli.scalar("SELECT count(*) FROM wake_sessions") == n


def test_begin_reports_exclusions_and_needs_an_agent(cli, setup) -> None:
    cli.add("Old me", "archived", resonance=10, extra=("--tags", "archive"))
    b = cli.ok("wake", "--begin").json()
    assert b["excluded"] == {"archive": 1, "wake-exclude": 0} and b["progress"]["total"] == 5
    assert cli.ok("wake", "--begin", "--include-excluded").json()["progress"]["total"] == 6
    r = cli("wake", "--begin", agent=None)
    assert r.code == 1 and r.err_json() == {"status": "error", "error": "invalid_argument",
                                            "message": "M1ND_CURRENT_AGENT not set. Cannot wake without identity."}


@pytest.mark.parametrize("args", [
    ["--respond", "x"], ["--respond", "x", "--bloom-id", "kn-1"], ["--bloom-id", "kn-1", "--session", "t"],
    ["--respond", "x", "--bloom-id", "kn-1", "--session", "t", "--limit", "3"],
    ["--respond", "x", "--bloom-id", "kn-1", "--session", "t", "--begin"],
    ["--respond", "x", "--bloom-id", "kn-1", "--session", "t", "--wake", "2"],
    ["--wake", "2"], ["--model", "m"], ["--force-wake"],
], ids=["respond-alone", "no-session", "no-guess", "wake-set-flag", "with-begin", "with-wake", "wake-no-begin",
        "model-no-begin", "force-no-begin"])
def test_usage_errors_exit_2(cli, args) -> None:
    r = cli("wake", *args)
    assert r.code == 2 and r.out == ""


def test_stale_pointer_after_many_steps_and_concurrent_replay(cli, setup) -> None:
    ids = setup
    w = Walk(cli)
    w.token = cli.ok("wake", "--begin", env=CHUNK).json()["session"]
    tokens = [w.token]
    for guess, bloom in (("a", "A"), ("b", "A"), ("c", "A"), ("d", "B")):
        w.step(guess, ids[bloom])
        tokens.append(w.token)
    # every older token points at the token of the last call (tokens[-2]), which replays it
    for old in tokens[:-2]:
        e = w.refused("z", ids["C"], "token_out_of_sync", token=old)
        assert e["last_valid_token"] == tokens[-2]
    r = w.respond("z", ids["B"], token=tokens[-2])
    assert r.json()["replayed"] is True and r.json()["guess"] == "d"
    # the current token still works after all that
    assert w.step("e", ids["C"])["progress"]["current"] == 5
