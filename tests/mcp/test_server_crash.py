"""SIGKILL safety (issue 3): a server killed with SIGKILL loses at most the co-activation learning since its last
50-query flush, never explicit feedback, and never corrupts the store."""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path

from test_server_support import (  # noqa: F401 — fixtures are used by name
    fixture_repo,
    ingest_fixture,
    raw_server,
    server_env,
)

ACQUIRE = "file::shop/pool.py::class::SessionPool::fn::acquire"
CONNECT = "file::shop/db.py::fn::connect"


def _graph_db(home: Path) -> Path:
    (db,) = list((home / "workspaces").glob("*/graph.db"))
    return db


def test_sigkill_keeps_committed_learning_and_a_sound_store(server_env, fixture_repo, raw_server) -> None:
    ingest_fixture(server_env, fixture_repo)
    home = Path(server_env["M1ND_HOME"])
    db_path = _graph_db(home)
    con = sqlite3.connect(db_path)
    before = dict(con.execute("SELECT key, value FROM meta"))
    con.close()

    srv = raw_server()
    srv.initialize()
    learned = srv.call("learn", {"agent_id": "a", "query": "session pool acquire", "feedback": "correct",
                                 "node_ids": [ACQUIRE, CONNECT]})
    assert learned["isError"] is False and learned["structuredContent"]["edges_adjusted"] > 0
    # 60 more counted queries: the 50th call (learn included) triggers a flush of co-activation learning
    for k in range(60):
        r = srv.call("activate", {"agent_id": "a", "query": ["session pool", "connect database", "place order"][k % 3]})
        assert r["isError"] is False
    srv.proc.send_signal(signal.SIGKILL)
    srv.proc.wait(30)

    con = sqlite3.connect(db_path)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    meta = dict(con.execute("SELECT key, value FROM meta"))
    # learn committed before answering (+1), and the 50-query flush committed co-activation learning (+1)
    assert int(meta["weights_generation"]) >= int(before["weights_generation"]) + 2
    assert con.execute("SELECT COUNT(*) FROM learn_log").fetchone()[0] == 1
    lo, hi = con.execute("SELECT MIN(w), MAX(w) FROM edges").fetchone()
    assert 0.05 <= lo and hi <= 1.0
    assert con.execute("SELECT COUNT(*) FROM edges WHERE n_ltp > 0").fetchone()[0] > 0
    con.close()
