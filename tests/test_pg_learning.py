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
