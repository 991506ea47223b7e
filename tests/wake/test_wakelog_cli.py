"""Scenario: the guess log after real rituals — ``wake-log score`` (axis A, axis B, the one-line stdout, skips, no
model), the readers written with ``--out``, escaping, and the terminal-only rule checked in child processes."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys

import pytest

from .conftest import run_m1nd, subprocess_env

NOTICE_START = "Axis A climbs by construction once wake phrases are rewritten"


def walk(cli, guesses: dict[str, str], *args: str, agent: str = "alice") -> str:
    """Begin a ritual and answer every prompt with ``guesses[title]`` (default "no idea"); return the session id."""
    r = cli("wake", "--begin", *args, agent=agent)
    assert r.code == 0, r.err
    js = r.json()
    prompt, token = js["prompt"], js["session"]
    sid = token.split(".")[0]
    while prompt is not None:
        r = cli("wake", "--respond", guesses.get(prompt["title"], "no idea"), "--bloom-id", prompt["id"],
                "--session", token, agent=agent)
        assert r.code == 0, r.err
        js = r.json()
        prompt, token = js["next"], js["session"]
    return sid


@pytest.fixture
def blooms(cli):
    a = cli.add("Builder", "I build memory engines. Tests matter.", resonance=9,
                extra=("--wake-phrases", "memory builder,tester", "--wake-order", "1"))
    b = cli.add("Mornings", "Quiet mornings. Coffee first!", resonance=8, extra=("--wake-order", "2"))
    c = cli.add("Evenings", "Long walks at dusk.", resonance=8, extra=("--wake-order", "3"))
    return {"a": a, "b": b, "c": c}


GUESSES = {"Builder": "memory builder", "Mornings": "coffee", "Evenings": "walking"}


def score(cli, **env):
    return cli("wake-log", "score", env=env or None)


def test_score_axes_and_stdout(cli, blooms) -> None:
    assert cli.scalar("SELECT count(*) FROM vectors WHERE owner_kind = 'entry'") == 3  # embedded on add
    # nothing pending: no model needed, exactly the one line
    r = score(cli, M1ND_EMBEDDER="none")
    assert (r.code, r.out) == (0, '{"status":"scored","rows":0,"skipped":0}\n')
    s1 = walk(cli, GUESSES, "--wake", "1", "--model", "m-a")
    # rows pending and no model: exit 1, stdout empty, every row left pending
    r = score(cli, M1ND_EMBEDDER="none")
    assert r.code == 1 and r.out == "" and "no embedding model" in r.err.lower()
    assert cli.scalar("SELECT count(*) FROM wake_guesses WHERE scored_at IS NULL") == 3
    r = score(cli)
    assert (r.code, r.out, r.err) == (0, '{"status":"scored","rows":3,"skipped":0}\n', "")
    rows = {r[0]: r[1:] for r in cli.rows(
        "SELECT bloom_id, phrase_source, embedding IS NOT NULL, embedding_model, sim_phrase, sim_content, sim_title, "
        "sim_prior, sim_prior_null, prior_n, scored_at FROM wake_guesses WHERE session_id = ?", (s1,))}
    a = rows[blooms["a"]]
    assert a[0] == "authored" and a[1] == 1 and a[2] == "hashing-v1-256"
    assert a[3] == pytest.approx(1.0, abs=1e-5)  # the guess is the first phrase
    assert a[4] is not None and a[5] is not None and a[9] is not None
    assert a[6:9] == (None, None, 0)  # no earlier ritual: axis B is empty
    assert rows[blooms["b"]][3] is None and rows[blooms["b"]][0] == "auto"  # sim_phrase: authored rows only
    # the phrase cache holds vectors under hashes, never the phrase text
    keys = cli.rows("SELECT key, model_id FROM wake_phrase_vectors")
    assert len(keys) == 2 and all(re.fullmatch(r"[0-9a-f]{64}", k) for k, _ in keys)
    assert "builder" not in json.dumps(keys)
    assert score(cli).out == '{"status":"scored","rows":0,"skipped":0}\n'

    # axis B: later rituals see earlier scored rows of other sessions, split by same/cross answering model
    s2 = walk(cli, GUESSES, "--wake", "2", "--model", "m-a")
    s3 = walk(cli, GUESSES, "--wake", "3", "--model", "m-b")
    s4 = walk(cli, GUESSES, "--wake", "4")
    cli.ok("delete", blooms["c"])  # the entry is gone before scoring: no sim_content
    assert score(cli).out == '{"status":"scored","rows":9,"skipped":0}\n'

    def row(sid: str, bloom: str) -> tuple:
        return cli.rows("SELECT sim_prior, sim_prior_null, prior_n, sim_prior_same, sim_prior_null_same, "
                        "prior_n_same, sim_prior_cross, sim_prior_null_cross, prior_n_cross, sim_content "
                        "FROM wake_guesses WHERE session_id = ? AND bloom_id = ?", (sid, bloom))[0]

    r2 = row(s2, blooms["a"])
    assert r2[0] == pytest.approx(1.0, abs=1e-5) and r2[2] == 1 and r2[1] is not None and r2[1] < r2[0]
    assert r2[5] == 1 and r2[3] == pytest.approx(1.0, abs=1e-5) and r2[8] == 0 and r2[6] is None
    r3 = row(s3, blooms["a"])
    assert r3[2] == 2 and r3[5] == 0 and r3[3] is None and r3[8] == 2
    r4 = row(s4, blooms["a"])
    assert r4[2] == 3 and r4[3:9] == (None,) * 6  # no model_id: neither same nor cross
    assert row(s2, blooms["c"])[9] is None and row(s2, blooms["b"])[9] is not None


def test_failed_row_is_skipped_and_stays_pending(cli, blooms) -> None:
    sid = walk(cli, GUESSES, "--wake", "1")
    cli.execute("UPDATE wake_guesses SET phrases_json = 'not json' WHERE session_id = ? AND position = 0", (sid,))
    r = score(cli)
    assert r.code == 0 and r.out == '{"status":"scored","rows":2,"skipped":1}\n'
    assert r.err.count("\n") == 1 and "memory builder" not in r.err and "skipped" in r.err
    assert cli.scalar("SELECT count(*) FROM wake_guesses WHERE scored_at IS NULL") == 1


def test_wake_log_needs_an_agent(cli, blooms) -> None:
    for args in (["score"], ["report", "--out", "x.json"], ["wake", "1", "--out", "x.txt"]):
        r = cli("wake-log", *args, agent=None)
        assert r.code == 1 and r.out == ""
        assert r.err == ("Error: M1ND_CURRENT_AGENT not set. wake-log reads and scores only the calling agent's "
                         "guess log, and will not guess which agent that is.\n")


def test_readers_with_out(cli, blooms, tmp_path) -> None:
    out = tmp_path / "r.json"
    r = cli("wake-log", "report", "--out", str(out))
    assert r.code == 1 and "no scored wake: run `m1nd memory wake-log score` first, or pass --wake N" in r.err
    evil = "memory builder\x1b[2J\u202eevil\nline"
    walk(cli, {**GUESSES, "Builder": evil}, "--wake", "7", "--model", "m\x07x")
    walk(cli, GUESSES, "--wake", "8", "--model", "m-a")
    score(cli)
    walk(cli, GUESSES, "--wake", "9")  # not scored: not the default report
    walk(cli, GUESSES, "--wake", "7", "--force-wake", agent="bob")  # another agent's rows never count
    r = cli("wake-log", "report", "--out", str(out))
    assert (r.code, r.out) == (0, f"{out}\n")
    rep = json.loads(out.read_text())
    assert list(rep) == ["notice", "wake", "models", "chunks", "entries", "scored", "buckets", "axis_a", "axis_b"]
    assert rep["notice"].startswith(NOTICE_START) and rep["wake"] == 8 and rep["models"] == ["m-a"]
    assert (rep["chunks"], rep["entries"], rep["scored"]) == (3, 3, 3)
    assert rep["buckets"] == {"unhinted": {"authored": 1, "derived": 0, "auto": 0, "unphrased": 0},
                              "revealed": {"authored": 0, "derived": 0, "auto": 2, "unphrased": 0}}
    assert rep["axis_a"]["sim_phrase"]["n"] == 1 and rep["axis_a"]["sim_content"]["n"] == 3
    assert rep["axis_b"]["same_model"]["n"] == 0 and rep["axis_b"]["any_model"]["n"] == 3

    txt = tmp_path / "r7.txt"
    assert cli("wake-log", "report", "--wake", "7", "--out", str(txt)).out == f"{txt}\n"
    text = txt.read_text()
    assert text.startswith("Axis A climbs by construction") and "Wake 7   model m\\u{7}x   3 chunks, 3 entries" in text
    assert "scored 3/3" in text and "\x07" not in text

    w7 = tmp_path / "w7.txt"
    cli.ok("wake-log", "wake", "7", "--out", str(w7))
    text = w7.read_text()
    assert "memory builder\\u{1b}[2J\\u{202e}evil\\nline" in text
    assert "\x1b" not in text and "\u202e" not in text
    assert [m for m in re.findall(r"step (\d+)", text)] == ["0", "1", "2"]
    w9 = tmp_path / "w9.json"
    cli.ok("wake-log", "wake", "9", "--out", str(w9))
    assert all(r["scored_at"] is None for r in json.loads(w9.read_text())["rows"])
    assert "pending (not scored yet)" in (cli.ok("wake-log", "wake", "9", "--out", str(tmp_path / "w9.txt")) and
                                          (tmp_path / "w9.txt").read_text())
    hist = tmp_path / "b.json"
    cli.ok("wake-log", "bloom", blooms["a"][3:], "--limit", "2", "--out", str(hist))
    rows = json.loads(hist.read_text())["rows"]
    assert [r["wake"] for r in rows] == [9, 8] and all(r["bloom_id"] == blooms["a"] for r in rows)
    assert cli("wake-log", "wake", "42", "--out", str(tmp_path / "none.txt")).code == 1
    r = cli("wake-log", "wake", "8", "--out", str(tmp_path / "no-such-dir" / "x.txt"))
    assert r.code == 1 and r.out == "" and "cannot write --out" in r.err


def test_report_help_carries_the_notice(cli) -> None:
    r = cli("wake-log", "report", "--help")
    flat = " ".join(r.out.split())
    assert r.code == 0 and "Axis B cannot be lifted by editing phrases; at most it shows that the model reaches" in flat


def test_wake_log_is_not_an_mcp_tool() -> None:
    from m1nd.tools.registry import load_all

    assert not [n for n in load_all() if "log" in n and "wake" in n]


# -- the terminal-only rule, in real child processes ---------------------------------------------------------
@pytest.mark.parametrize("cmd", [["report"], ["bloom", "kn-0123456789abcdef"], ["wake", "1"]],
                         ids=["report", "bloom", "wake"])
def test_piped_stdout_is_refused_before_anything_is_read(tmp_path, cmd) -> None:
    home = tmp_path / "home"
    p = run_m1nd(home, "wake-log", *cmd)
    assert p.returncode == 1 and p.stdout == b""
    assert p.stderr.decode() == (f"Error: wake-log {cmd[0]} is terminal-only: stdout is not a terminal, so nothing "
                                 "was read or printed. Use --out FILE\n")
    assert not (home / "memory.db").exists()  # the store was never opened


def test_out_must_be_a_safe_regular_file(tmp_path) -> None:
    home = tmp_path / "home"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "dir").mkdir()
    for target in (tmp_path / "dir", fifo, "/dev/stdout", "/dev/stderr", "/dev/null"):
        p = run_m1nd(home, "wake-log", "report", "--out", str(target))
        assert p.returncode == 1 and p.stdout == b"", target
        assert "nothing was read or written" in p.stderr.decode(), (target, p.stderr)
    # the file this process's stdout (or stderr) is redirected to
    for which in ("stdout", "stderr"):
        f = tmp_path / f"captured-{which}.txt"
        with f.open("wb") as fh:
            p = run_m1nd(home, "wake-log", "report", "--out", str(f), **{which: fh})
        assert p.returncode == 1, which
        assert "is this process's own stdout or stderr" in f.read_text() + (
            p.stderr.decode() if isinstance(p.stderr, bytes) else "")
    assert not (home / "memory.db").exists()


def test_a_terminal_gets_the_report(cli, blooms, tmp_path) -> None:
    walk(cli, GUESSES, "--wake", "1", "--model", "m-a")
    assert score(cli).code == 0
    master, slave = pty.openpty()
    argv = [sys.executable, "-m", "m1nd", "--agent", "alice", "memory", "wake-log", "report"]
    env = subprocess_env(cli.home, **({"M1ND_MEMORY_URL": cli.url} if cli.url else {}))
    proc = subprocess.Popen(argv, stdout=slave, stderr=subprocess.PIPE, env=env)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO once the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=60) == 0, proc.stderr.read()
    text = b"".join(chunks).decode().replace("\r\n", "\n")
    assert text.startswith("Axis A climbs by construction") and "Wake 1   model m-a   3 chunks, 3 entries" in text
