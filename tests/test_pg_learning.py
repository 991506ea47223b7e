"""Team mode for trails and learned weights (issue 18): two "machines" — each its own home, its own checkout of the
same project and its own local code graph — share one PostgreSQL server. The learning and trail suites
(``tests/learning``) run on both stores; this file checks what only a shared server can show."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from learning.support import call, open_workspace, write_repo
from m1nd.codegraph.learning import weights_reset
from m1nd.tools.registry import call_tool

CACHE = "file::pkg/cache.py::class::Cache"
POOL = "file::pkg/pool.py"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("M1ND_TEAM_PROJECT", raising=False)
    monkeypatch.delenv("M1ND_COACTIVATION_RATE", raising=False)
    monkeypatch.delenv("M1ND_WEIGHT_RELAXATION_DAYS", raising=False)


@pytest.fixture
def machines(tmp_path: Path, pg_url: str):
    """``machine(name)``: a workspace on its own home and its own copy of the repository (the same directory name,
    so the same project), ingested locally, trails and weights on the shared server."""
    opened = []

    def machine(name: str, repo_name: str = "repo"):
        repo = write_repo(tmp_path / name / repo_name)
        ws = open_workspace(tmp_path / name / "home", repo, memory_url=pg_url)
        opened.append(ws)
        call(ws, "ingest", path=str(repo))
        return ws

    yield machine
    for ws in opened:
        ws.close()


def learned_weights(ws) -> dict[tuple[str, str, int], float]:
    """The in-memory weight of every edge, keyed by external ids (comparable across machines)."""
    g = ws.graph.graph()
    keys = ws.graph.edge_keys(g, np.arange(g.e))
    return {k: float(w) for k, w in zip(keys, g.engine.weights.tolist())}


def test_two_machines_share_trails_and_learned_weights(machines) -> None:
    a, b = machines("laptop"), machines("ci")
    assert a.graph.settings.workspace_key != b.graph.settings.workspace_key  # different checkouts
    base_b = learned_weights(b)
    learned = call(a, "learn", "alice", query="login token", feedback="correct", node_ids=[CACHE], strength=0.6)
    assert learned["edges_adjusted"] > 0
    wa, wb = learned_weights(a), learned_weights(b)
    assert wa == wb  # b replayed a's learning onto its own graph on its next call
    assert sum(wb[k] != base_b[k] for k in wb) == learned["edges_adjusted"]
    assert b.graph.generations()[1] == learned["weights_generation"]

    saved = call(a, "trail_save", "alice", label="pool leak", hypotheses=[
        {"statement": "The pool leaks", "supporting_nodes": [POOL]}])
    listed = call(b, "trail_list", "bob")
    assert [t["trail_id"] for t in listed["trails"]] == [saved["trail_id"]]
    resumed = call(b, "trail_resume", "bob", trail_id=saved["trail_id"])
    assert resumed["nodes_reactivated"] >= 1 and resumed["trail"]["agent_id"] == "alice"
    other = call(b, "trail_save", "bob", label="cache", visited_nodes=[{"node_external_id": CACHE}])
    merged = call(a, "trail_merge", "alice", trail_ids=[saved["trail_id"], other["trail_id"]])
    assert call(b, "trail_list", "bob", filter_status="merged")["total_count"] == 2
    mine = {t["trail_id"] for t in call(b, "trail_list", "bob", filter_agent_id="alice")["trails"]}
    assert mine == {saved["trail_id"], merged["merged_trail_id"]}

    # node feedback: a's verdict counts (at half) in b's ranking of the same query
    assert b.graph.shared.learning.feedback_log()[0][:3] == ("alice", "login token", "correct")

    # a reset on one machine resets every machine's learned weights
    weights_reset(b.graph, apply=True)
    assert learned_weights(a) == base_b


def test_a_new_machine_starts_from_the_shared_learning(machines) -> None:
    a = machines("first")
    call(a, "learn", query="login token", feedback="correct", node_ids=[CACHE], strength=0.6)
    call(a, "activate", query="session pool acquire")  # co-activation learning, flushed below
    assert call(a, "persist", action="save")["flushed_edges"] > 0
    late = machines("late")  # ingests after the learning happened
    assert learned_weights(late) == learned_weights(a)


def test_projects_are_kept_apart(machines, monkeypatch) -> None:
    a = machines("one")
    call(a, "trail_save", label="mine")
    call(a, "learn", query="login token", feedback="correct", node_ids=[CACHE])
    elsewhere = machines("two", repo_name="other-project")  # same code, another project name
    assert call(elsewhere, "trail_list")["total_count"] == 0
    g = elsewhere.graph.graph()
    assert np.array_equal(g.engine.weights, g.engine.csr.base_weights)
    monkeypatch.setenv("M1ND_TEAM_PROJECT", "repo")  # named explicitly: shares the first project
    again = machines("three", repo_name="checkout")
    assert call(again, "trail_list")["total_count"] == 1


def test_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    repo = write_repo(tmp_path / "repo")
    ws = open_workspace(tmp_path / "home", repo, memory_url="postgresql://m1nd:secret@127.0.0.1:9/none")
    try:
        res = call_tool(ws, "trail_list", {"agent_id": "a"})
        assert res.is_error
        msg = res.structured["error"]["message"]
        assert "cannot connect" in msg and "secret" not in msg
    finally:
        ws.close()


# -- m1nd learning migrate (item 3) -------------------------------------------------------------------------------
def _cli(capsys, home: Path, repo: Path, *argv: str, url: str | None = None) -> tuple[int, str, str]:
    from m1nd.cli.app import run

    code = run(["--home", str(home), "--workspace", str(repo), *(["--memory-url", url] if url else []), *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_learning_migrates_to_the_server_and_back(tmp_path: Path, pg_url: str, capsys) -> None:
    import json

    repo = write_repo(tmp_path / "solo" / "repo")
    home = tmp_path / "solo" / "home"
    local = open_workspace(home, repo)
    call(local, "ingest", path=str(repo))
    t1 = call(local, "trail_save", "alice", label="pool", tags=["pool"], hypotheses=[
        {"statement": "The pool leaks", "supporting_nodes": [POOL]}])["trail_id"]
    call(local, "trail_save", "bob", label="cache", visited_nodes=[{"node_external_id": CACHE}])
    call(local, "learn", "alice", query="login token", feedback="correct", node_ids=[CACHE], strength=0.6)
    call(local, "learn", "bob", query="session pool", feedback="wrong", node_ids=[CACHE], strength=0.3)
    learned = learned_weights(local)
    listed = call(local, "trail_list")
    local.close()

    code, out, err = _cli(capsys, home, repo, "learning", "migrate", "--to", pg_url, "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["verified"] and r["tables"]["trails"] == 2 and r["tables"]["learn_log"] == 2
    assert r["learned_weights_skipped"] == 0 and r["learned_weights_applied"] == r["tables"]["learned_weights"] > 0
    # a second upload is refused (nothing written), --replace overwrites
    code, out, err = _cli(capsys, home, repo, "learning", "migrate", "--to", pg_url)
    assert code == 1 and "already holds trails or learned weights" in err and "--replace" in err
    code, out, err = _cli(capsys, home, repo, "learning", "migrate", "--to", pg_url, "--replace")
    assert code == 0 and out.startswith("Copied 2 trails, 2 learn events and ") and "row counts verified" in out

    # another machine on the server sees the same trails, learn log and weights
    other_repo = write_repo(tmp_path / "ci" / "repo")
    team = open_workspace(tmp_path / "ci" / "home", other_repo, memory_url=pg_url)
    call(team, "ingest", path=str(other_repo))
    assert learned_weights(team) == learned
    def timeless(r: dict) -> dict:
        return {k: v for k, v in r.items() if k not in ("elapsed_ms", "response_chars")}

    assert timeless(call(team, "trail_list")) == timeless(listed)
    assert call(team, "trail_save", "alice", label="next")["trail_id"].startswith("trail_alice_002_")  # sequence moved
    call(team, "learn", "carol", query="render page", feedback="correct", node_ids=[CACHE])
    expected = learned_weights(team)
    team.close()

    # and down into a fresh machine's graph.db, where it works without the server
    code, out, err = _cli(capsys, tmp_path / "ci" / "home", other_repo, "learning", "migrate", "--to", "local",
                          url=pg_url)
    assert code == 0, err
    offline = open_workspace(tmp_path / "ci" / "home", other_repo)
    try:
        assert learned_weights(offline) == expected
        assert call(offline, "trail_list")["total_count"] == 3
        assert call(offline, "trail_resume", trail_id=t1)["nodes_reactivated"] >= 1
        assert offline.graph.shared.learning.feedback_log()[-1][0] == "carol"
    finally:
        offline.close()


def test_learning_migrate_bad_targets(tmp_path: Path, capsys) -> None:
    repo = write_repo(tmp_path / "repo")
    home = tmp_path / "home"
    ws = open_workspace(home, repo)
    call(ws, "ingest", path=str(repo))
    ws.close()
    code, out, err = _cli(capsys, home, repo, "learning", "migrate", "--to", "local")
    assert code == 1 and out == "" and "already in this workspace's graph.db" in err
    code, out, err = _cli(capsys, home, repo, "learning", "migrate", "--to", "mysql://x@y/z")
    assert code == 1 and "names no store" in err
