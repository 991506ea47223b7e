"""Several processes writing at once, and a writer killed mid-batch (real processes, real database file)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import m1nd

PYTHONPATH = str(Path(m1nd.__file__).resolve().parent.parent)


def m1nd_cmd(home: Path, *args: str, agent: str = "alice") -> list[str]:
    return [sys.executable, "-m", "m1nd", "--home", str(home), "--agent", agent, "memory", *args]


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = PYTHONPATH + os.pathsep + e.get("PYTHONPATH", "")
    for k in ("M1ND_MEMORY_DB", "M1ND_CURRENT_AGENT", "M1ND_SKIP_SCHEMA"):
        e.pop(k, None)
    return e


def write_batch(path: Path, n: int, session: str | None = "ses-load") -> Path:
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            obj = {"category": "insight", "title": f"Fact number {i}", "content": f"Body of fact {i} with words",
                   "tags": [f"t{i % 7}", "load"]}
            if session:
                obj["session_id"] = session
            f.write(json.dumps(obj) + "\n")
    return path


def test_four_writers_same_batch_every_fact_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    batch = write_batch(tmp_path / "batch.jsonl", 500)
    subprocess.run(m1nd_cmd(home, "migrate"), env=env(), check=True, capture_output=True)
    procs = [subprocess.Popen(m1nd_cmd(home, "add-batch", "-f", str(batch), "--no-embed", "--json"), env=env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        results.append(json.loads(out))
    assert sum(len(r["added"]) for r in results) == 500
    assert sum(len(r["already_saved"]) for r in results) == 1500
    con = sqlite3.connect(home / "memory.db")
    assert con.execute("SELECT count(*), count(DISTINCT title) FROM entries").fetchone() == (500, 500)
    assert con.execute("SELECT count(*) FROM entry_tags").fetchone()[0] == 1000
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()


def test_sigkill_mid_batch_leaves_whole_entries(tmp_path: Path) -> None:
    home = tmp_path / "home"
    small = write_batch(tmp_path / "small.jsonl", 50, session=None)
    subprocess.run(m1nd_cmd(home, "add-batch", "-f", str(small), "--no-embed"), env=env(), check=True,
                   capture_output=True)
    big = write_batch(tmp_path / "big.jsonl", 60000, session="ses-big")
    p = subprocess.Popen(m1nd_cmd(home, "add-batch", "-f", str(big), "--no-embed"), env=env(),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    killed = False
    assert p.stderr is not None
    for line in p.stderr:
        if line.startswith("progress: "):  # the batch is half-written inside its transaction
            p.send_signal(signal.SIGKILL)
            killed = True
            break
    p.wait(timeout=60)
    assert killed and p.returncode == -signal.SIGKILL
    con = sqlite3.connect(home / "memory.db")
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        n = con.execute("SELECT count(*) FROM entries").fetchone()[0]
        assert n == 50  # nothing of the killed batch; everything committed before it
        # every entry is whole: its tags, its FTS row
        assert con.execute("SELECT count(*) FROM entries e WHERE (SELECT count(*) FROM entry_tags t "
                           "WHERE t.entry_rowid = e.rowid) != 2").fetchone()[0] == 0
    finally:
        con.close()
    # the store opens through m1nd and keeps working
    r = subprocess.run(m1nd_cmd(home, "search", "fact", "--json", "--limit", "100"), env=env(), capture_output=True,
                       text=True, check=True)
    assert len(json.loads(r.stdout)) == 50
    r = subprocess.run(m1nd_cmd(home, "add-batch", "-f", str(small), "--no-embed"), env=env(), capture_output=True,
                       text=True, check=False)
    assert r.returncode == 0
