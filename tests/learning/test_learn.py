"""``learn`` (learning.md §1–§2) through the tool registry on a real ingested repository."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest
from m1nd.codegraph.baselines import record_server_start
from m1nd.graph.engine import W_MAX, W_MIN

from .support import call, db_weights, error, shared_db

CACHE = "file::pkg/cache.py::class::Cache"
ACQUIRE = "file::pkg/pool.py::class::SessionPool::fn::acquire"
LOGIN = "file::pkg/auth.py::fn::login"
RENDER = "file::pkg/render.py::fn::render_page"
TEMPLATE = "file::pkg/template.py::class::Template"


def ranking(ws, query: str, agent: str = "agent-1") -> tuple[list[str], dict[str, float]]:
    r = call(ws, "activate", agent, query=query, top_k=40, coactivation_ltp=False)
    return [a["node_id"] for a in r["activated"]], {a["node_id"]: a["activation"] for a in r["activated"]}


def test_correct_ranks_the_confirmed_node_higher(ws) -> None:
    order0, act0 = ranking(ws, "login token")
    r = call(ws, "learn", query="login token", feedback="correct", node_ids=[CACHE], strength=0.5)
    assert r["edges_adjusted"] > 0 and r["strengthened"] == r["edges_adjusted"] and r["weakened"] == 0
    assert r["seed_source"] == "query_log" and r["nodes_affected"] == 1 and r["plasticity_delta"] == 0.5
    assert r["mean_weight_change"] > 0
    call(ws, "learn", query="login token", feedback="correct", node_ids=[CACHE], strength=0.5)
    order1, act1 = ranking(ws, "login token")
    assert act1[CACHE] > act0[CACHE]
    assert order1.index(CACHE) < order0.index(CACHE)


def test_wrong_lowers_the_rejected_node(ws) -> None:
    _, act0 = ranking(ws, "login token")
    r = call(ws, "learn", query="login token", feedback="wrong", node_ids=[ACQUIRE], strength=0.8)
    assert r["weakened"] >= 1 and r["strengthened"] == 0 and r["mean_weight_change"] < 0
    _, act1 = ranking(ws, "login token")
    assert act1.get(ACQUIRE, 0.0) < act0[ACQUIRE]  # lower, or no longer activated at all


def test_partial_uses_half_rate_and_both_lists(ws) -> None:
    ranking(ws, "login token")
    r = call(ws, "learn", query="login token", feedback="partial", node_ids=[CACHE], wrong_node_ids=[ACQUIRE],
             strength=0.4)
    assert r["plasticity_delta"] == pytest.approx(0.2)
    assert r["strengthened"] > 0 and r["weakened"] > 0
    assert r["nodes_affected"] == 2


def test_strength_zero_is_a_no_op(ws) -> None:
    before = db_weights(ws)
    r = call(ws, "learn", query="login token", feedback="correct", node_ids=[CACHE], strength=0.0)
    assert r["edges_adjusted"] == 0
    assert db_weights(ws) == before


def test_seed_source_follows_the_agents_own_query_log(ws) -> None:
    ranking(ws, "login token", agent="a")
    assert call(ws, "learn", "a", query="  LOGIN   token ", feedback="correct", node_ids=[CACHE])[
        "seed_source"] == "query_log"
    r = call(ws, "learn", "b", query="login token", feedback="correct", node_ids=[CACHE])
    assert r["seed_source"] == "recomputed"
    assert r["seeds_used"] and len(r["seeds_used"]) <= 10
    assert {"node_id", "label"} <= set(r["seeds_used"][0])


def test_without_seeds_direct_edges_among_nodes_still_learn(ws) -> None:
    r = call(ws, "learn", query="zzqxv", feedback="correct", node_ids=[RENDER, TEMPLATE])
    assert r["seeds_used"] == [] and r["edges_adjusted"] >= 1
    assert "query that names the code" in r["hint"]


def test_pairs_without_path_are_reported(ws) -> None:
    r = call(ws, "learn", query="render page", feedback="correct", node_ids=[CACHE], max_path_hops=1)
    assert {"seed": "file::pkg/render.py::fn::render_page", "node": CACHE} in r["pairs_without_path"]


def test_feedback_is_committed_before_the_response(workspaces) -> None:
    a, b = workspaces(), workspaces()  # two processes on one store
    before = db_weights(b)
    r = call(a, "learn", query="login token", feedback="correct", node_ids=[CACHE])
    after = db_weights(b)
    changed = {k for k in after if after[k][1] != before[k][1]}
    assert len(changed) == r["edges_adjusted"] > 0
    assert all(after[k][2] == before[k][2] + 1 for k in changed)  # n_ltp counted
    assert all(after[k][0] == before[k][0] for k in after)  # w0 untouched
    assert shared_db(b).scalar("SELECT COUNT(*) FROM learn_log") == 1
    assert b.graph.generations()[1] == r["weights_generation"]
    # the other process sees the new weights on its next call
    gb = b.graph.graph()
    ga = a.graph.graph()
    assert np.array_equal(ga.engine.weights, gb.engine.weights)


def test_weights_stay_in_bounds_and_w0_never_changes(ws, monkeypatch) -> None:
    monkeypatch.setenv("M1ND_COACTIVATION_RATE", "0")
    g = ws.graph.graph()
    w0 = np.array(g.engine.csr.base_weights, copy=True)
    ids = [i for i in g.nodes.ext_id if "::" in i]
    rnd = random.Random(7)
    queries = ["login token", "session pool acquire", "render page", "cache get", "database connection"]
    for _ in range(120):
        fb = rnd.choice(["correct", "wrong", "partial"])
        picked = rnd.sample(ids, 3)
        args = {"query": rnd.choice(queries), "feedback": fb, "node_ids": picked[:2],
                "strength": rnd.choice([0.0, 0.3, 1.0])}
        if fb == "partial":
            args["wrong_node_ids"] = picked[2:]
        call(ws, "learn", **args)
        w = ws.graph.graph().engine.weights
        assert w.min() >= W_MIN and w.max() <= W_MAX
    assert np.array_equal(np.asarray(ws.graph.graph().engine.csr.base_weights), w0)
    for _bw0, w, _, _ in db_weights(ws).values():
        assert W_MIN <= w <= W_MAX
    assert shared_db(ws).scalar("SELECT COUNT(*) FROM learn_log") == 120


def test_unrelated_edges_never_change(ws) -> None:
    before = db_weights(ws)
    call(ws, "learn", query="login token", feedback="correct", node_ids=[CACHE], strength=1.0)
    after = db_weights(ws)
    changed = {k for k in after if after[k][1] != before[k][1]}
    assert changed
    assert not any("render" in s or "render" in d or "template" in s or "template" in d for s, d, _ in changed)


def test_many_activations_never_lower_a_weight(ws) -> None:
    g = ws.graph.graph()
    w_start = np.array(g.engine.weights, copy=True)
    for k in range(300):
        call(ws, "activate", f"agent-{k % 3}", query=["login token", "render page", "session pool"][k % 3], top_k=10)
    w = ws.graph.graph().engine.weights
    assert np.all(w >= w_start)


def test_learn_log_keeps_query_feedback_and_ids(ws) -> None:
    call(ws, "learn", query="login token", feedback="partial", node_ids=[CACHE], wrong_node_ids=[ACQUIRE])
    row = shared_db(ws).one("SELECT agent_id, query, feedback, strength, node_ids_json FROM learn_log")
    assert row[:4] == ("agent-1", "login token", "partial", 0.2)
    assert CACHE in row[4] and ACQUIRE in row[4]


@pytest.mark.parametrize(("args", "code", "message"), [
    ({"feedback": "correct", "node_ids": ["file::pkg/nope.py", CACHE]}, "unknown_node",
     "node(s) not in the graph: file::pkg/nope.py"),
    ({"feedback": "good", "node_ids": [CACHE]}, "invalid_argument",
     'feedback must be "correct", "wrong" or "partial" (got "good")'),
    ({"feedback": "correct", "node_ids": [CACHE], "wrong_node_ids": [ACQUIRE]}, "invalid_argument",
     'wrong_node_ids is only valid with feedback="partial"'),
    ({"feedback": "partial", "node_ids": [CACHE, ACQUIRE], "wrong_node_ids": [ACQUIRE]}, "invalid_argument",
     f"node '{ACQUIRE}' is both confirmed and rejected"),
    ({"feedback": "correct", "node_ids": [CACHE], "strength": 1.5}, "invalid_argument",
     "strength must be between 0.0 and 1.0 (got 1.5)"),
    ({"feedback": "correct", "node_ids": []}, "invalid_argument", "argument 'node_ids'"),
    ({"feedback": "correct", "node_ids": [CACHE], "max_path_hops": 9}, "invalid_argument",
     "argument 'max_path_hops' must be an integer between 1 and 5"),
    ({"feedback": "correct"}, "invalid_argument", "missing required argument 'node_ids'"),
], ids=["unknown-node", "bad-feedback", "wrong-ids-not-partial", "confirmed-and-rejected", "strength-range",
        "empty-ids", "hops-range", "missing-ids"])
def test_bad_input_writes_nothing(ws, args, code, message) -> None:
    before = db_weights(ws)
    gens = ws.graph.generations()
    err = error(ws, "learn", query="login token", **args)
    assert err["code"] == code
    assert err["message"].startswith(message) if code != "invalid_argument" or "argument '" not in message \
        else message in err["message"]
    assert db_weights(ws) == before
    assert ws.graph.generations() == gens
    assert shared_db(ws).scalar("SELECT COUNT(*) FROM learn_log") == 0


def test_unknown_node_lists_closest_ids(ws) -> None:
    err = error(ws, "learn", query="x", feedback="correct", node_ids=["file::pkg/cache.py::class::Cach"])
    assert "; closest: " in err["message"] and CACHE in err["details"]["closest"]


# -- drift after a restart ----------------------------------------------------------------------------------------
def test_drift_after_restart_shows_the_changes(workspaces) -> None:
    first = workspaces("stdio")
    first.on_server_start()  # what m1nd serve does before the first request
    ranking(first, "login token")
    learned = call(first, "learn", query="login token", feedback="correct", node_ids=[CACHE], strength=0.6)
    call(first, "learn", query="login token", feedback="wrong", node_ids=[ACQUIRE], strength=0.6)
    first.close()
    time.sleep(0.01)

    second = workspaces("stdio")
    second.on_server_start()
    d = call(second, "drift", "agent-2")
    assert d["baseline"]["kind"] == "server_start" and "baseline_note" not in d
    assert d["weights_changed_total"] >= learned["edges_adjusted"]
    assert d["strengthened_total"] > 0 and d["weakened_total"] > 0
    assert d["learn_events_since"] == 2
    assert d["node_count_delta"] == 0 and d["new_nodes"] == [] and d["removed_nodes"] == []
    top = d["top_weight_drifts"][0]
    assert set(top) == {"edge", "source", "target", "relation", "old", "new", "delta"}
    assert " -> " in top["edge"] and abs(top["delta"]) == max(abs(x["delta"]) for x in d["top_weight_drifts"])
    assert top["delta"] == pytest.approx(top["new"] - top["old"], abs=1e-3)
    # this session started after the learning: nothing drifted yet
    d2 = call(second, "drift", "agent-2", since="this_session")
    assert d2["weights_changed_total"] == 0 and d2["learn_events_since"] == 0
    # weight fields omitted on request
    d3 = call(second, "drift", "agent-2", include_weight_drift=False)
    assert "top_weight_drifts" not in d3 and "weights_changed_total" not in d3


def test_drift_weights_reset_to_w0_count_as_drift(workspaces) -> None:
    from m1nd.codegraph.learning import weights_reset

    first = workspaces("stdio")
    call(first, "learn", query="login token", feedback="correct", node_ids=[CACHE], strength=0.6)
    first.on_server_start()  # the baseline holds learned weights
    weights_reset(first.graph, apply=True)
    d = call(first, "drift", since="this_session")
    assert d["weakened_total"] > 0 and d["strengthened_total"] == 0
    assert all(x["new"] < x["old"] for x in d["top_weight_drifts"])


def test_drift_baseline_selection_and_errors(workspaces) -> None:
    cli = workspaces()
    err = error(cli, "drift")
    assert err["code"] == "not_found"
    assert err["message"] == 'no baseline yet; run m1nd serve once, or call persist with action="baseline"'
    assert error(cli, "drift", since="yesterday-ish")["message"] == (
        'since must be "last_session", "this_session", an ISO-8601 time or epoch milliseconds')
    p = call(cli, "persist", action="baseline")
    d = call(cli, "drift")
    assert d["baseline"]["kind"] == "manual" and "manual" in d["baseline_note"]
    created = d["baseline"]["created_ms"]
    assert call(cli, "drift", since=str(created))["baseline"]["created_ms"] == created
    err = error(cli, "drift", since="2001-01-01T00:00:00Z")
    assert err["code"] == "not_found" and err["message"].startswith("no baseline at or before 2001-01-01T00:00:00")
    assert "; oldest is " in err["message"]
    assert p["baseline_id"] >= 1
    server = workspaces("stdio")
    server.on_server_start()
    own = call(server, "drift")
    assert own["baseline"]["kind"] == "server_start" and "own baseline" in own["baseline_note"]
    # a CLI process without a baseline of its own uses the newest server_start one
    d = call(cli, "drift", since="this_session")
    assert d["baseline"]["kind"] == "server_start" and "newest server_start" in d["baseline_note"]


def test_drift_lists_new_and_removed_nodes(fresh_workspace) -> None:
    ws, repo = fresh_workspace()
    record_server_start(ws.graph)
    (repo / "pkg" / "template.py").unlink()
    (repo / "pkg" / "extra.py").write_text("def brand_new():\n    return 1\n", encoding="utf-8")
    call(ws, "ingest", path=str(repo))
    d = call(ws, "drift", since="this_session", max_list=1)
    assert "file::pkg/extra.py" in d["new_nodes"] or d["new_nodes_total"] >= 1
    assert len(d["new_nodes"]) == 1 and len(d["removed_nodes"]) == 1
    assert d["removed_nodes_total"] >= 2  # the file, its class and methods
    assert d["node_count_delta"] == d["new_nodes_total"] - d["removed_nodes_total"]


def test_baselines_keep_the_newest_twenty_per_kind(ws) -> None:
    for _ in range(23):
        call(ws, "persist", action="baseline")
    assert ws.graph.store.db.scalar("SELECT COUNT(*) FROM baselines WHERE kind = 'manual'") == 20


# -- persist ------------------------------------------------------------------------------------------------------
def test_persist_save_flushes_coactivation_learning(workspaces) -> None:
    a = workspaces()
    call(a, "activate", query="session pool acquire")
    st = call(a, "persist", action="status")
    assert st["dirty_weights"] > 0 and st["flushed_edges"] == 0
    sv = call(a, "persist", action="save")
    assert sv["flushed_edges"] == st["dirty_weights"] and sv["dirty_weights"] == 0
    assert sv["weights_generation"] == st["weights_generation"] + 1
    err = error(a, "persist", action="sav")
    assert err["code"] == "invalid_argument" and "save, status, baseline" in err["message"]


# -- weights stats / reset ----------------------------------------------------------------------------------------
def test_weight_stats_and_reset(ws) -> None:
    from m1nd.codegraph.learning import weight_stats, weights_reset

    call(ws, "learn", query="login token", feedback="correct", node_ids=[CACHE], strength=0.5)
    call(ws, "learn", query="login token", feedback="wrong", node_ids=[ACQUIRE], strength=0.5)
    s = weight_stats(ws.graph)
    assert s.strengthened > 0 and s.weakened > 0 and s.mean_abs_change > 0
    assert s.top[0].delta == pytest.approx(s.top[0].w - s.top[0].w0, abs=1e-3)
    assert list(s.to_dict()) == ["edges_total", "strengthened", "weakened", "mean_abs_change", "weights_generation",
                                 "top"] and s.to_dict()["top"][0] == s.top[0].to_dict()
    dry = weights_reset(ws.graph, relation="calls")
    assert not dry.applied and dry.edges_selected > 0 and dry.relation == "calls" and dry.node is None
    assert weight_stats(ws.graph) == s
    node = weights_reset(ws.graph, node=ACQUIRE, apply=True)
    assert node.applied and node.edges_selected >= 1
    g = ws.graph.graph()
    for p in g.engine.in_edges(g.nodes.index[ACQUIRE])[0].tolist():
        assert g.engine.weights[p] == g.engine.csr.base_weights[p]
    weights_reset(ws.graph, apply=True)
    s2 = weight_stats(ws.graph)
    assert s2.strengthened == s2.weakened == 0 and s2.weights_generation > s.weights_generation
    assert all(v[0] == v[1] for v in db_weights(ws).values())


def test_a_failed_commit_leaves_memory_and_database_unchanged(ws, monkeypatch) -> None:
    from m1nd.errors import BusyError

    g = ws.graph.graph()
    w_before = np.array(g.engine.weights, copy=True)
    db_before = db_weights(ws)
    learned = ws.graph.shared.learning

    def busy() -> int:
        raise BusyError("database is busy")

    monkeypatch.setattr(learned, "bump_generation", busy)
    err = error(ws, "learn", query="login token", feedback="correct", node_ids=[CACHE])
    assert err["code"] == "busy"
    monkeypatch.undo()
    assert np.array_equal(ws.graph.graph().engine.weights, w_before)
    assert db_weights(ws) == db_before
    assert len(ws.graph.dirty_positions()) == 0  # nothing left to flush later
    assert shared_db(ws).scalar("SELECT COUNT(*) FROM learn_log") == 0


def test_priming_boosts_outlive_the_process_per_agent(workspaces) -> None:
    first = workspaces()
    primed = call(first, "warmup", "alice", task_description="login token cache")["total_primed"]
    assert primed > 0
    first.close()  # a one-shot CLI call ends here
    second = workspaces()
    mine = call(second, "activate", "alice", query="session pool")
    assert mine["priming"]["active"] and mine["priming"]["sources"] == ["warmup"]
    theirs = call(second, "activate", "bob", query="session pool")
    assert not theirs["priming"]["active"]  # boosts are per agent
    second.close()  # the decayed boosts are written back
    third = workspaces()
    decayed = max(b for b, _c, _s in third.graph.agent("alice").boosts.values())
    assert 0 < decayed < max(b for b, _c, _s in first.graph.agent("alice").boosts.values())
    call(third, "warmup", "alice", task_description="login token cache", boost_strength=0)  # clears them
    third.close()
    assert not workspaces().graph.agent("alice").boosts
