"""Trails (learning.md §6–§11): save, resume, list, merge through the tool registry."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from m1nd.codegraph import trails
from m1nd.codegraph.trails import TRAIL_ID_RE, agent_slug, normalise_text

from .support import call, error, open_workspace, shared_db

POOL = "file::pkg/pool.py"
POOL_CLS = "file::pkg/pool.py::class::SessionPool"
ACQUIRE = "file::pkg/pool.py::class::SessionPool::fn::acquire"
SESSION = "file::pkg/session.py::class::Session"
DB = "file::pkg/db.py"
CONNECT = "file::pkg/db.py::fn::connect"
CACHE = "file::pkg/cache.py::class::Cache"
LOGIN = "file::pkg/auth.py::fn::login"
AUTH = "file::pkg/auth.py"
TEMPLATE = "file::pkg/template.py"
TEMPLATE_CLS = "file::pkg/template.py::class::Template"
TEMPLATE_RENDER = "file::pkg/template.py::class::Template::fn::render"
RENDER = "file::pkg/render.py::fn::render_page"


def show(cg, trail_id: str) -> dict:
    """A stored trail as ``m1nd trail show --json`` prints it (the service answers a TrailDetail)."""
    return trails.show(cg, trail_id).to_dict()


def archive(cg, trail_id: str) -> dict:
    return trails.archive(cg, trail_id).to_dict()


def trail_count(ws) -> int:
    return shared_db(ws).scalar("SELECT COUNT(*) FROM trails")


def full_save(ws, agent: str = "agent-1", **extra):
    args: dict = {"label": "pool-leak", "hypotheses": [
        {"statement": "Sessions leak when release is skipped", "confidence": 0.7,
         "supporting_nodes": [ACQUIRE, SESSION], "contradicting_nodes": [CACHE]},
        {"statement": "The cache is unrelated", "supporting_nodes": [CACHE]},
    ], "conclusions": [{"statement": "Pool needs a context manager", "confidence": 0.8,
                        "from_hypotheses": ["Sessions leak when release is skipped"], "supporting_nodes": [POOL_CLS]}],
        "open_questions": ["Does login release on error?"], "tags": ["pool", "leak"]}
    args.update(extra)
    return call(ws, "trail_save", agent, **args)


# -- ids --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("agent", "slug"), [("agent-1", "agent1"), ("Ünïcode_Agent.Ω", "ncodeagent"),
                                            ("ßß", "ssss"), ("---", "agent"), ("a" * 40, "a" * 16)],
                         ids=["plain", "unicode", "casefold", "empty", "long"])
def test_agent_slug(agent, slug) -> None:
    assert agent_slug(agent) == slug


def test_ids_follow_the_per_agent_sequence(ws) -> None:
    ids = [call(ws, "trail_save", "Agent.One", label=f"t{k}")["trail_id"] for k in range(3)]
    assert all(TRAIL_ID_RE.match(i) for i in ids)
    assert [i.split("_")[2] for i in ids] == ["001", "002", "003"]
    assert ids[0].startswith("trail_agentone_001_")
    other = call(ws, "trail_save", "b", label="x")["trail_id"]
    assert other.startswith("trail_b_001_")


# -- save -------------------------------------------------------------------------------------------------------
def test_save_captures_nodes_and_derives_boosts(ws) -> None:

    r = full_save(ws)
    assert r["nodes_saved"] == 4 and r["hypotheses_saved"] == 2 and r["conclusions_saved"] == 1
    assert r["open_questions_saved"] == 1 and r["boosts_saved"] == 4
    assert r["graph_generation_at_creation"] == ws.graph.store.generations()[0]
    t = show(ws.graph, r["trail_id"])
    rel = {v["node_external_id"]: v["relevance"] for v in t["visited_nodes"]}
    # supports max(conf, 0.6); contradiction max(0.8·conf, 0.45) vs support of the second hypothesis (0.6)
    assert rel == {ACQUIRE: 0.7, SESSION: 0.7, CACHE: 0.6, POOL_CLS: 0.8}
    # derived boosts: visited 0.2 + 0.5·relevance, supports 0.7, contradiction 0.45, conclusion support 0.8
    assert t["activation_boosts"] == {ACQUIRE: 0.7, SESSION: 0.7, CACHE: 0.7, POOL_CLS: 0.8}
    assert t["summary"] == ("pool-leak: 4 nodes, 2 hypotheses, 1 conclusions, 1 open questions — "
                            "Sessions leak when release is skipped")
    assert t["status"] == "saved" and t["tags"] == ["pool", "leak"]


def test_given_visited_nodes_and_boosts_are_stored_as_given(ws) -> None:

    r = call(ws, "trail_save", label="explicit", visited_nodes=[
        {"node_external_id": "pkg/db.py", "annotation": "entry", "relevance": 0.9},
        {"node_external_id": CONNECT}], activation_boosts={CACHE: 0.25}, summary="my words")
    t = show(ws.graph, r["trail_id"])
    assert t["visited_nodes"] == [{"node_external_id": DB, "annotation": "entry", "relevance": 0.9},
                                  {"node_external_id": CONNECT, "annotation": "", "relevance": 0.5}]
    assert t["activation_boosts"] == {CACHE: 0.25} and t["summary"] == "my words"
    assert r["nodes_saved"] == 3


def test_same_label_twice_gives_two_trails(ws) -> None:
    a = call(ws, "trail_save", label="same")["trail_id"]
    b = call(ws, "trail_save", label="same")["trail_id"]
    assert a != b and trail_count(ws) == 2


@pytest.mark.parametrize(("args", "code", "message"), [
    ({"hypotheses": [{"statement": "a"}, {"statement": "b"}, {"confidence": 0.3}]}, "invalid_argument",
     "hypotheses[2].statement is required"),
    ({"hypotheses": [{"statement": "a", "supporting_nodes": ["file::nope.py", "file::gone.py"]}]}, "unknown_node",
     "node(s) not in the graph: file::nope.py, file::gone.py"),
    ({"visited_nodes": [{"node_external_id": "file::nope.py"}]}, "unknown_node", "node(s) not in the graph"),
    ({"activation_boosts": {"file::nope.py": 0.5}}, "unknown_node", "node(s) not in the graph"),
    ({"activation_boosts": {CACHE: 1.5}}, "invalid_argument", "activation_boosts['"),
    ({"hypotheses": [{"statement": "a"}], "conclusions": [{"statement": "c", "from_hypotheses": ["b"]}]},
     "invalid_argument", "conclusions[0].from_hypotheses[0] matches no hypothesis statement"),
    ({"hypotheses": [{"statement": "a", "confidence": 2}]}, "invalid_argument",
     "hypotheses[0].confidence must be a number between 0 and 1"),
    ({"hypotheses": [{"statement": "a", "weight": 2}]}, "invalid_argument", "hypotheses[0]: unknown field 'weight'"),
    ({"hypotheses": [{"statement": "x" * 2001}]}, "invalid_argument", "hypotheses[0].statement is too long"),
    ({"hypotheses": [{"statement": "a"}] * 101}, "invalid_argument", "argument 'hypotheses' has 101 items"),
    ({"tags": ["ok", "-bad"]}, "invalid_argument", "tags[1] must match"),
    ({"open_questions": [""]}, "invalid_argument", "open_questions[0] must be a non-empty string"),
    ({"label": ""}, "invalid_argument", "argument 'label'"),
    ({"visited_nodes": [{"annotation": "no id"}]}, "invalid_argument", "visited_nodes[0].node_external_id is required"),
], ids=["statement-missing", "unknown-supports", "unknown-visited", "unknown-boost", "boost-range", "from-hyp",
        "confidence-range", "unknown-field", "statement-long", "too-many", "tag-pattern", "empty-question",
        "empty-label", "visited-no-id"])
def test_save_bad_input_saves_nothing(ws, args, code, message) -> None:
    args = {"label": "bad", **args}
    err = error(ws, "trail_save", **args)
    assert err["code"] == code
    assert message in err["message"]
    assert trail_count(ws) == 0
    assert shared_db(ws).scalar("SELECT COUNT(*) FROM trail_seq") == 0


def test_save_lists_at_most_ten_unknown_ids(ws) -> None:
    ids = [f"file::missing{k}.py" for k in range(15)]
    err = error(ws, "trail_save", label="x", visited_nodes=[{"node_external_id": i} for i in ids])
    assert "file::missing9.py" in err["message"] and "file::missing10.py" not in err["message"]
    assert "(15 in all)" in err["message"]


# -- round trip and restart ----------------------------------------------------------------------------------------
def test_trails_survive_a_restart(workspaces) -> None:

    a = workspaces()
    saved = full_save(a)
    before = show(a.graph, saved["trail_id"])
    a.close()
    b = workspaces()
    listed = call(b, "trail_list", "someone-else")
    assert listed["total_count"] == 1 and listed["trails"][0]["trail_id"] == saved["trail_id"]
    assert show(b.graph, saved["trail_id"]) == before
    r = call(b, "trail_resume", "agent-2", trail_id=saved["trail_id"])
    assert r["stale"] is False and r["missing_total"] == 0 and r["nodes_reactivated"] == 4
    assert r["trail"]["status"] == "active" and r["open_questions"] == ["Does login release on error?"]
    assert r["next_focus_node"] == POOL_CLS  # the highest boost
    assert show(b.graph, saved["trail_id"])["resumed_by"] == ["agent-2"]


def test_resume_boosts_change_only_the_resuming_agents_activations(ws) -> None:
    saved = call(ws, "trail_save", "author", label="boosted", activation_boosts={CACHE: 1.0})

    def act(agent: str) -> dict:
        r = call(ws, "activate", agent, query="login token", top_k=40, coactivation_ltp=False)
        return r

    base = act("reader")
    call(ws, "trail_resume", "reader", trail_id=saved["trail_id"])
    boosted = act("reader")
    other = act("bystander")
    val = lambda r: {a["node_id"]: a["activation"] for a in r["activated"]}[CACHE]
    assert val(boosted) > val(base)
    assert val(other) == pytest.approx(val(base))
    assert boosted["priming"]["active"] and f"trail:{saved['trail_id']}" in boosted["priming"]["sources"]
    assert not other["priming"]["active"]
    # the boost decays x0.7 per activation, like warmup boosts
    later = act("reader")
    assert val(base) < val(later) < val(boosted)


# -- staleness after a re-ingest ---------------------------------------------------------------------------------
def _stale_setup(fresh_workspace):
    ws, repo = fresh_workspace()
    mostly_template = call(ws, "trail_save", label="templates", hypotheses=[
        {"statement": "Template rendering is slow", "confidence": 0.8,
         "supporting_nodes": [TEMPLATE_CLS, TEMPLATE_RENDER, RENDER]},
        {"statement": "Only render_page matters", "confidence": 0.6, "supporting_nodes": [RENDER]},
        {"statement": "Templates are cached", "confidence": 0.5, "supporting_nodes": [TEMPLATE]},
    ])
    healthy = call(ws, "trail_save", label="pool", visited_nodes=[{"node_external_id": POOL},
                                                                  {"node_external_id": TEMPLATE}])
    (repo / "pkg" / "template.py").unlink()
    call(ws, "ingest", path=str(repo))
    return ws, repo, mostly_template["trail_id"], healthy["trail_id"]


def test_stale_trail_is_refused_unless_forced(fresh_workspace) -> None:

    ws, _repo, stale_id, healthy_id = _stale_setup(fresh_workspace)
    listed = {t["trail_id"]: t for t in call(ws, "trail_list")["trails"]}
    assert listed[stale_id]["status"] == "stale" and listed[stale_id]["stale"] is True
    assert listed[healthy_id]["status"] == "saved" and listed[healthy_id]["stale"] is False
    before = show(ws.graph, stale_id)
    err = error(ws, "trail_resume", trail_id=stale_id)
    assert err["code"] == "trail_stale"
    gen = ws.graph.store.generations()[0]
    assert err["message"] == (
        f"trail {stale_id} is stale: 75% of its 4 nodes no longer exist (graph generation {gen - 1} → {gen}). "
        "Call trail_resume with force=true to resume with the surviving nodes, or trail_list to pick another trail")
    assert show(ws.graph, stale_id) == before  # nothing changed
    r = call(ws, "trail_resume", trail_id=stale_id, force=True, max_listed=2)
    assert r["stale"] is True and r["generations_behind"] == 1 and r["missing_total"] == 3
    assert len(r["missing_nodes"]) == 2 and r["missing_ratio"] == 0.75
    assert r["nodes_reactivated"] == 1 and r["next_focus_node"] == RENDER
    down = {d["statement"]: d for d in r["hypotheses_downgraded"]}
    # exactly the hypotheses that lost supports
    assert set(down) == {"Template rendering is slow", "Templates are cached"}
    assert down["Template rendering is slow"]["new_confidence"] == round(0.8 / 3, 4)
    assert down["Template rendering is slow"]["missing_supporting_nodes"] == [TEMPLATE_CLS, TEMPLATE_RENDER]
    assert down["Templates are cached"]["new_confidence"] == 0
    hyps = {h["statement"]: h for h in show(ws.graph, stale_id)["hypotheses"]}
    assert hyps["Templates are cached"]["unsupported"] is True and hyps["Templates are cached"]["confidence"] == 0
    assert hyps["Only render_page matters"]["confidence"] == 0.6
    # a second resume does not downgrade again for the same loss
    again = call(ws, "trail_resume", trail_id=stale_id, force=True)
    assert again["hypotheses_downgraded"] == []
    assert show(ws.graph, stale_id)["hypotheses"][0]["confidence"] == round(0.8 / 3, 4)
    # the healthy trail lost one of its two nodes: not stale, resumable
    h = call(ws, "trail_resume", trail_id=healthy_id)
    assert h["stale"] is False and h["missing_ratio"] == 0.5 and h["missing_nodes"] == [TEMPLATE]


def test_restart_preserves_generation_and_staleness(fresh_workspace, tmp_path, learning_store) -> None:
    ws, repo, stale_id, healthy_id = _stale_setup(fresh_workspace)
    gen = ws.graph.store.generations()[0]
    ws.close()
    again = open_workspace(tmp_path / "own-home", repo, memory_url=learning_store)
    try:
        assert again.graph.store.generations()[0] == gen
        listed = {t["trail_id"]: t for t in call(again, "trail_list", filter_status="stale")["trails"]}
        assert set(listed) == {stale_id}
        assert error(again, "trail_resume", trail_id=stale_id)["code"] == "trail_stale"
        assert call(again, "trail_resume", trail_id=healthy_id)["generations_behind"] == 1
    finally:
        again.close()


@pytest.mark.parametrize(("trail_id", "code", "message"), [
    ("trail_x", "invalid_argument", "'trail_x' is not a trail id (expected trail_<agent>_<NNN>_<hex6>)"),
    ("TRAIL_A_001_abcdef", "invalid_argument", "is not a trail id"),
    ("trail_a_001_abcdeg", "invalid_argument", "is not a trail id"),
    ("trail_a_001_abcdef", "not_found", "no trail 'trail_a_001_abcdef'; call trail_list"),
], ids=["short", "upper", "bad-hex", "unknown"])
def test_resume_bad_ids(ws, trail_id, code, message) -> None:
    err = error(ws, "trail_resume", trail_id=trail_id)
    assert err["code"] == code and message in err["message"]


# -- list ---------------------------------------------------------------------------------------------------------
def test_list_filters_sorting_and_limit(ws) -> None:
    a1 = call(ws, "trail_save", "alice", label="a1", tags=["auth"], visited_nodes=[{"node_external_id": LOGIN}])
    time.sleep(0.002)
    a2 = call(ws, "trail_save", "alice", label="a2", tags=["pool", "perf"])
    time.sleep(0.002)
    b1 = call(ws, "trail_save", "bob", label="b1", tags=["pool"])
    ids = lambda r: [t["trail_id"] for t in r["trails"]]
    assert ids(call(ws, "trail_list")) == [b1["trail_id"], a2["trail_id"], a1["trail_id"]]
    assert ids(call(ws, "trail_list", filter_agent_id="alice")) == [a2["trail_id"], a1["trail_id"]]
    assert ids(call(ws, "trail_list", filter_tags=["pool", "nothing"])) == [b1["trail_id"], a2["trail_id"]]
    r = call(ws, "trail_list", limit=1)
    assert r["total_count"] == 3 and len(r["trails"]) == 1
    call(ws, "trail_resume", "carol", trail_id=a1["trail_id"])
    assert ids(call(ws, "trail_list", filter_status="active")) == [a1["trail_id"]]
    assert ids(call(ws, "trail_list", filter_status="saved")) == [b1["trail_id"], a2["trail_id"]]

    archive(ws.graph, b1["trail_id"])
    assert ids(call(ws, "trail_list", filter_status="archived")) == [b1["trail_id"]]
    t = call(ws, "trail_list", filter_agent_id="alice")["trails"][-1]
    assert set(t) >= {"trail_id", "agent_id", "label", "status", "stale", "created_at_ms", "last_modified_ms",
                      "node_count", "hypothesis_count", "conclusion_count", "open_question_count", "tags", "summary"}
    err = error(ws, "trail_list", filter_status="open")
    assert err["code"] == "invalid_argument"
    assert "active, saved, archived, stale, merged" in err["message"]
    assert call(ws, "trail_list", filter_agent_id="nobody")["trails"] == []


# -- merge --------------------------------------------------------------------------------------------------------
def _set_age(ws, trail_id: str, days: float) -> None:
    shared_db(ws).execute("UPDATE trails SET last_modified_ms = ? WHERE trail_id = ?",
                              (int(time.time() * 1000 - days * 86_400_000), trail_id))


def _pair(ws, conf_a: float, conf_b: float, *, days_a: float = 0.0, days_b: float = 0.0):
    a = call(ws, "trail_save", "alice", label="leak", hypotheses=[
        {"statement": "The pool leaks sessions", "confidence": conf_a, "supporting_nodes": [POOL_CLS]}])
    b = call(ws, "trail_save", "bob", label="no-leak", hypotheses=[
        {"statement": "The pool never leaks sessions!", "confidence": conf_b, "supporting_nodes": [POOL_CLS]}])
    _set_age(ws, a["trail_id"], days_a)
    _set_age(ws, b["trail_id"], days_b)
    return a["trail_id"], b["trail_id"]


def test_merge_conflict_resolved_above_the_threshold(ws) -> None:

    a, b = _pair(ws, 0.6 + 0.16 / 0.7, 0.6)  # score delta 0.16
    r = call(ws, "trail_merge", "carol", trail_ids=[a, b])
    (c,) = r["conflicts"]
    assert c["resolution"] == "resolved" and c["winner"] == "The pool leaks sessions"
    assert c["score_delta"] == pytest.approx(0.16, abs=1e-3) and (c["trail_a"], c["trail_b"]) == (a, b)
    assert c["hypothesis_b"] == "The pool never leaks sessions!"
    merged = show(ws.graph, r["merged_trail_id"])
    status = {h["statement"]: h["merge_status"] for h in merged["hypotheses"]}
    assert status == {"The pool leaks sessions": "won", "The pool never leaks sessions!": "lost"}
    assert {h["statement"]: h["confidence"] for h in merged["hypotheses"]}["The pool never leaks sessions!"] == 0.6
    assert merged["agent_id"] == "carol" and merged["status"] == "saved" and merged["source_trails"] == [a, b]
    for src in (a, b):
        s = show(ws.graph, src)
        assert s["status"] == "merged" and s["merged_into"] == r["merged_trail_id"]
        err = error(ws, "trail_resume", trail_id=src)
        assert err["message"] == f"trail {src} was merged into {r['merged_trail_id']}; resume that one"
    err = error(ws, "trail_merge", trail_ids=[a, r["merged_trail_id"]])
    assert err["message"] == f"trail {a} was already merged into {r['merged_trail_id']}"


def test_merge_conflict_unresolved_below_the_threshold(ws) -> None:

    a, b = _pair(ws, 0.8, 0.6)  # score delta 0.14
    r = call(ws, "trail_merge", trail_ids=[a, b])
    (c,) = r["conflicts"]
    assert c["resolution"] == "unresolved" and c["winner"] is None
    assert c["score_delta"] == pytest.approx(0.14, abs=1e-3)
    merged = show(ws.graph, r["merged_trail_id"])
    assert {h["merge_status"] for h in merged["hypotheses"]} == {"unresolved"}


def test_merge_recency_decides_between_equal_confidences(ws) -> None:
    a, b = _pair(ws, 0.7, 0.7, days_a=30)
    (c,) = call(ws, "trail_merge", trail_ids=[a, b])["conflicts"]
    assert c["resolution"] == "resolved" and c["winner"] == "The pool never leaks sessions!"
    assert c["score_a"] == pytest.approx(0.7 * 0.7 + 0.3 * 2 ** (-30 / 7), abs=1e-3)


def test_merge_contradicting_nodes_signal_a_conflict(ws) -> None:
    a = call(ws, "trail_save", label="a", hypotheses=[
        {"statement": "Cache misses cause the slowness", "confidence": 0.9, "supporting_nodes": [CACHE, POOL_CLS]}])
    b = call(ws, "trail_save", label="b", hypotheses=[
        {"statement": "Database round trips dominate", "confidence": 0.3, "supporting_nodes": [POOL_CLS, DB],
         "contradicting_nodes": [CACHE]}])
    (c,) = call(ws, "trail_merge", trail_ids=[a["trail_id"], b["trail_id"]])["conflicts"]
    assert c["winner"] == "Cache misses cause the slowness"


def test_merge_fuses_equal_statements_and_combines(ws) -> None:

    a = call(ws, "trail_save", "alice", label="one", tags=["x", "y"], open_questions=["Why so slow?"],
             hypotheses=[{"statement": "Login is slow.", "confidence": 0.4, "supporting_nodes": [LOGIN]}],
             visited_nodes=[{"node_external_id": LOGIN, "annotation": "entry", "relevance": 0.3}],
             activation_boosts={LOGIN: 0.3, CACHE: 0.9})
    b = call(ws, "trail_save", "bob", label="two", tags=["y", "z"], open_questions=["why so SLOW"],
             hypotheses=[{"statement": "login is  SLOW", "confidence": 0.9, "supporting_nodes": [AUTH]}],
             visited_nodes=[{"node_external_id": LOGIN, "annotation": "hot path", "relevance": 0.8}],
             activation_boosts={LOGIN: 0.6})
    r = call(ws, "trail_merge", trail_ids=[a["trail_id"], b["trail_id"]], label="combined")
    assert r["label"] == "combined" and r["hypotheses_merged"] == 1 and r["conflicts"] == []
    m = show(ws.graph, r["merged_trail_id"])
    (h,) = m["hypotheses"]
    assert h["statement"] == "Login is slow." and h["confidence"] == 0.9
    assert h["supporting_nodes"] == [LOGIN, AUTH] and h["sources"] == [a["trail_id"], b["trail_id"]]
    assert m["visited_nodes"] == [{"node_external_id": LOGIN, "annotation": "entry | hot path", "relevance": 0.8}]
    assert m["activation_boosts"] == {LOGIN: 0.6, CACHE: 0.9}
    assert m["tags"] == ["x", "y", "z"] and m["open_questions"] == ["Why so slow?"]
    assert normalise_text("Can't  STOP, won't!") == "cant stop wont"


def test_merge_discovers_bridge_edges_and_shared_nodes(ws) -> None:
    a = call(ws, "trail_save", label="pool side", visited_nodes=[{"node_external_id": POOL},
                                                                 {"node_external_id": CACHE}])
    b = call(ws, "trail_save", label="session side", visited_nodes=[{"node_external_id": "file::pkg/session.py"},
                                                                    {"node_external_id": CACHE}])
    r = call(ws, "trail_merge", trail_ids=[a["trail_id"], b["trail_id"]])
    assert r["label"] == "merge: pool side + session side"
    by_type = {}
    for c in r["connections_discovered"]:
        by_type.setdefault(c["type"], []).append(c)
    (bridge,) = by_type["bridge_edge"]
    assert bridge["from_node"] == POOL and bridge["to_node"] == "file::pkg/session.py"
    assert bridge["detail"] == "pool.py (pool side) imports session.py (session side) links the two investigations"
    assert bridge["weight"] == pytest.approx(0.6)
    (shared,) = by_type["shared_node"]
    assert shared["from_node"] == CACHE and shared["weight"] == 1.0
    assert r["connections_discovered"][0]["type"] == "shared_node"  # weight 1.0 before 0.6
    # the reverse direction is reported with the inverse relation name
    c = call(ws, "trail_save", label="db side", visited_nodes=[{"node_external_id": DB}])
    d = call(ws, "trail_save", label="session", visited_nodes=[{"node_external_id": "file::pkg/session.py"}])
    (rev,) = call(ws, "trail_merge", trail_ids=[c["trail_id"], d["trail_id"]])["connections_discovered"]
    assert rev["detail"] == "db.py (db side) imported_by session.py (session) links the two investigations"


@pytest.mark.parametrize(("ids", "message"), [
    (["one"], "argument 'trail_ids' must be an array with at least 2 items"),
    (["dup", "dup"], "is listed twice"),
    (["ok", "trail_zz_001_abcdef"], "no trail 'trail_zz_001_abcdef'"),
    (["ok", "not-an-id"], "'not-an-id' is not a trail id"),
], ids=["too-few", "duplicate", "unknown", "malformed"])
def test_merge_bad_input_writes_nothing(ws, ids, message) -> None:
    real = call(ws, "trail_save", label="real")["trail_id"]
    ids = [real if x in ("one", "ok", "dup") else x for x in ids]
    err = error(ws, "trail_merge", trail_ids=ids)
    assert message in err["message"]
    assert trail_count(ws) == 1
    assert call(ws, "trail_list")["trails"][0]["status"] == "saved"
    assert "at most 10" in error(ws, "trail_merge", trail_ids=[real] * 11)["message"]
    assert "label" in error(ws, "trail_merge", trail_ids=[real, real], label="x" * 201)["message"]


# -- several processes on one store ------------------------------------------------------------------------------
def test_two_workspaces_interleave_without_losing_trails(workspaces) -> None:
    a, b = workspaces(), workspaces()
    ids = []
    for k in range(10):
        ids.append(call(a, "trail_save", "same-agent", label=f"a{k}")["trail_id"])
        ids.append(call(b, "trail_save", "same-agent", label=f"b{k}")["trail_id"])
    assert len(set(ids)) == 20
    assert sorted(int(i.split("_")[2]) for i in ids) == list(range(1, 21))
    assert call(a, "trail_list", limit=500)["total_count"] == 20


WRITER = textwrap.dedent('''
    import sys
    from pathlib import Path
    sys.path[:0] = [{tests!r}, {suite!r}]  # support.py, and testkit.py beside the root conftest
    from support import open_workspace, call
    ws = open_workspace(Path({home!r}), Path({repo!r}), memory_url={url!r})
    ids = [call(ws, "trail_save", "shared", label=f"{{sys.argv[1]}}-{{k}}",
                visited_nodes=[{{"node_external_id": "file::pkg/pool.py"}}])["trail_id"] for k in range(25)]
    ws.close()
    print("\\n".join(ids))
''')


def test_two_processes_do_not_lose_each_others_trails(home_repo, learning_store) -> None:
    home, repo = home_repo
    code = WRITER.format(tests=str(Path(__file__).parent), suite=str(Path(__file__).parent.parent), home=str(home),
                         repo=str(repo), url=learning_store)
    procs = [subprocess.Popen([sys.executable, "-c", code, name], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for name in ("p1", "p2")]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
    ids = [line for out, _ in outs for line in out.split()]
    assert len(ids) == 50 and len(set(ids)) == 50
    ws = open_workspace(home, repo, memory_url=learning_store)
    try:
        listed = call(ws, "trail_list", limit=500, max_output_chars=100000)
        assert listed["total_count"] == 50 and {t["trail_id"] for t in listed["trails"]} == set(ids)
        assert {t["label"].split("-")[0] for t in listed["trails"]} == {"p1", "p2"}
    finally:
        ws.close()
    assert all(re.match(r"^trail_shared_\d{3}_[0-9a-f]{6}$", i) for i in ids)


def test_show_and_archive(ws) -> None:
    from m1nd.errors import InvalidInputError, NotFoundError

    tid = full_save(ws)["trail_id"]
    t = show(ws.graph, tid)
    assert set(t) == {"trail_id", "agent_id", "label", "status", "stale", "missing_ratio", "generations_behind",
                      "summary", "tags", "visited_nodes", "hypotheses", "conclusions", "open_questions",
                      "activation_boosts", "graph_generation", "created_at_ms", "last_modified_ms",
                      "source_trails", "merged_into", "resumed_by"}
    assert archive(ws.graph, tid)["status"] == "archived"
    assert show(ws.graph, tid)["status"] == "archived"
    with pytest.raises(NotFoundError):
        show(ws.graph, "trail_a_001_abcdef")
    with pytest.raises(InvalidInputError):
        show(ws.graph, "nope")
    json.dumps(t)


def test_save_captures_the_callers_open_perspectives(ws) -> None:

    p = call(ws, "perspective_start", "explorer", query="session pool acquire")
    focus = p["focus_node"]
    focus_id = focus["node_id"] if isinstance(focus, dict) else focus
    r = call(ws, "trail_save", "explorer", label="captured")
    t = show(ws.graph, r["trail_id"])
    assert {"node_external_id": focus_id, "annotation": "", "relevance": 0.5} in t["visited_nodes"]
    assert t["activation_boosts"][focus_id] == 0.45  # 0.2 + 0.5 * 0.5
    other = call(ws, "trail_save", "someone-else", label="nothing open")
    assert other["nodes_saved"] == 0
