"""Route synthesis, score terms, lens, pagination, modes, isolation, limits and locks (perspectives.md §2–§10)."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import pytest
from m1nd.graph import ranking as R
from m1nd.graph.model import CAUSAL, CAUSAL_MASK, CAUSAL_RHO, RHO, STRUCTURAL_MASK
from m1nd.graph.schema import INVERSE_RELATION_CODES, RELATION_CODES
from m1nd.perspectives import PerspectiveService, service_for
from m1nd.perspectives import graph_facts as gf
from m1nd.perspectives import synthesis as syn
from m1nd.perspectives.lens import Lens
from m1nd.perspectives.state import Perspective

from .conftest import Client, all_routes, ingest, open_workspace, route_to, write_files

ANCHOR = "file::src/shop/session_pool.py"
ACQUIRE = "file::src/shop/session_pool.py::class::SessionPool::fn::acquire"
TERMS = ("local_activation", "path_coherence", "novelty", "anchor_relevance", "continuity")


def _full(c: Client, **kw) -> dict:
    """Start with a lens wide enough that every candidate is listed."""
    lens = {"top_k": 50, **kw.pop("lens", {})}
    return c.ok("perspective_start", lens=lens, **kw)


# -- determinism and ids --------------------------------------------------------------------------------------
def test_synthesis_is_deterministic(client: Client) -> None:
    a = _full(client, query="session pool", anchor_node=ANCHOR)
    b = _full(client, query="session pool", anchor_node=ANCHOR)
    ra, rb = all_routes(client, a["perspective_id"], 1), all_routes(client, b["perspective_id"], 1)
    assert ra == rb and len(ra) == a["total_routes"]
    for r in ra:
        want = "R_" + hashlib.sha256(f"{ANCHOR}\0{r['target_node']}\0{r['family']}".encode()).hexdigest()[:8]
        assert r["route_id"] == want
    assert len({r["route_id"] for r in ra}) == len(ra)
    assert len({r["target_node"] for r in ra}) == len(ra)  # one route per target
    keys = [(-r["score"], syn.FAMILY_ORDER[r["family"]], r["target_node"]) for r in ra]
    assert keys == sorted(keys)


def test_route_ids_are_stable_across_versions(client: Client) -> None:
    s = client.ok("perspective_start", query="session pool", anchor_node=ANCHOR)
    pid = s["perspective_id"]
    f = client.ok("perspective_follow", perspective_id=pid, route_index=1, route_set_version=1)
    back = client.ok("perspective_back", perspective_id=pid)
    assert [r["route_id"] for r in back["routes"]] == [r["route_id"] for r in s["routes"]]
    assert back["route_set_version"] == 3
    # following the same route again lands on the same route ids
    f2 = client.ok("perspective_follow", perspective_id=pid, route_index=1, route_set_version=3)
    assert {r["route_id"] for r in f2["routes"]} & {r["route_id"] for r in f["routes"]}


# -- families --------------------------------------------------------------------------------------------------
def test_all_eight_families_with_their_facts(client: Client) -> None:
    s = _full(client, query="session pool", anchor_node=ANCHOR)
    routes = all_routes(client, s["perspective_id"], 1)
    families = {r["family"] for r in routes} | {f for r in routes for f in r["also_families"]}
    assert families == set(syn.FAMILIES)
    reasons = {r["reason"] for r in routes}
    assert "session_pool.py contains SessionPool" in reasons
    assert "Changed together in 3 of 3 commits" in reasons
    assert "Reads configuration settings.toml" in reasons
    assert "Documented in Sessions" in reasons
    assert "orders.py imports session_pool.py" in reasons
    up = route_to(routes, "file::src/shop/pool.py::class::Pool")
    assert up is not None and up["family"] == "causal_upstream"
    # a symbol focus: its test, its callee, its siblings
    a = _full(client, query="acquire", anchor_node=ACQUIRE)
    ra = all_routes(client, a["perspective_id"], 1)
    t = route_to(ra, "file::tests/test_session_pool.py::fn::test_acquire")
    assert t is not None and t["family"] == "test_coverage" and t["reason"] == "Tests acquire (1 test function)"
    assert t["path_preview"] == ["test_acquire", "acquire"]
    sib = route_to(ra, "file::src/shop/session_pool.py::class::SessionPool::fn::release")
    assert sib is not None and sib["reason"] == "Sibling of acquire in SessionPool"
    assert sib["path_preview"] == ["acquire", "SessionPool", "release"]
    callee = route_to(ra, "file::src/shop/db.py::fn::connect")
    assert callee is not None and callee["reason"] == "acquire calls connect"
    # a test focus: its subject
    tst = _full(client, query="test acquire", anchor_node="file::tests/test_session_pool.py::fn::test_acquire")
    subj = route_to(all_routes(client, tst["perspective_id"], 1), ACQUIRE, "test_coverage")
    assert subj is not None and subj["reason"] == "Subject of test test_acquire"


def test_semantic_affinity_routes_are_not_within_one_hop(client: Client, shop_ws) -> None:
    s = _full(client, query="acquire", anchor_node=ACQUIRE)
    g = shop_ws.graph.graph()
    f = g.nodes.index[ACQUIRE]
    sem = [r for r in all_routes(client, s["perspective_id"], 1) if r["family"] == "semantic_affinity"]
    assert sem, "expected a similar-purpose route (Pool.acquire)"
    for r in sem:
        t = g.nodes.index[r["target_node"]]
        assert len(g.engine.edges_between(f, t)) == 0 and len(g.engine.edges_between(t, f)) == 0
        assert r["reason"].startswith("Similar purpose (similarity ")
        assert g.nodes.kind_name(t) not in ("file", "dir")


# -- score terms, recomputed independently ---------------------------------------------------------------------
def _edge_weight(g, u: int, v: int, rel_name: str) -> float:
    if rel_name in RELATION_CODES and RELATION_CODES[rel_name] in g.engine.csr.relations[g.engine.edges_between(u, v)]:
        code, a, b = RELATION_CODES[rel_name], u, v
    else:
        code, a, b = INVERSE_RELATION_CODES[rel_name], v, u
    for p in g.engine.edges_between(a, b).tolist():
        if int(g.engine.csr.relations[p]) == code:
            return float(g.engine.weights[p])
    raise AssertionError(f"no {rel_name} edge between {u} and {v}")


def _reference_local_activation(g, f: int) -> np.ndarray:
    """activation.md §2–§7 with f as the only seed, 3 hops, no priming — written out again from the spec."""
    eng = g.engine
    d1, _ = eng.spread([f], [1.0], decay=0.55, threshold=0.04, max_hops=3, mode="both", mask=STRUCTURAL_MASK,
                       rev_mult=RHO)
    sim = gf.semantic_similarity(g, f)[0]
    d2 = np.where(sim >= 0.15, sim, 0.0)
    fwd, _ = eng.spread([f], [1.0], decay=0.55, threshold=0.04, max_hops=3, mode="forward", mask=CAUSAL_MASK,
                        fwd_mult=CAUSAL)
    rev, _ = eng.spread([f], [1.0], decay=0.55, threshold=0.04, max_hops=3, mode="reverse", mask=CAUSAL_MASK,
                        rev_mult=CAUSAL_RHO)
    d4 = np.maximum(fwd, 0.7 * rev)
    t = g.nodes
    newest = t.last_change_ms.max()
    r = 0.6 * np.exp(-math.log(2) * (newest - t.last_change_ms) / 86_400_000 / 14) + 0.4 * t.churn
    seed = np.zeros(g.n)
    seed[f] = 1.0
    cc = np.zeros(g.n)
    ff = t.file_of[f] if t.file_of[f] >= 0 else f
    for p in range(g.e):
        s_, d_ = int(g.edge_endpoints()[0][p]), int(g.edge_endpoints()[1][p])
        if int(g.engine.csr.relations[p]) == RELATION_CODES["co_changes"] and ff in (s_, d_):
            cc[d_ if s_ == ff else s_] = max(cc[d_ if s_ == ff else s_], float(g.engine.weights[p]))
    d3 = r * np.maximum(np.maximum(seed, cc), 0.5 * d1) if g.has_git else np.zeros(g.n)
    dims = {"structural": d1, "semantic": d2, "temporal": d3, "causal": d4}
    # the one fusion of graph/ranking.py, written out: the focus (amplitude 1) is the relevance term
    w = R.DIM_WEIGHTS
    used = [d for d in dims if dims[d].max() > 0]
    comb = (seed + sum(w[d] * dims[d] for d in used)) / (1 + sum(w[d] for d in used))
    docs = np.asarray([p.lower().endswith((".md", ".rst", ".txt")) for p in t.source_path])
    prior = (np.where(t.is_test, R.TEST_PRIOR, 1.0) * np.where(t.kind == 0, R.DIR_PRIOR, 1.0)
             * np.where(docs, R.DOCS_PRIOR, 1.0))
    out = prior * comb + R.PR * t.pagerank
    return np.where(comb > 0, out, 0.0)


@pytest.mark.parametrize("anchored", [True, False], ids=["anchored", "local"])
def test_every_score_term_recomputed(client: Client, shop_ws, anchored: bool) -> None:
    query = "session pool connection"
    kw = {"anchor_node": ANCHOR} if anchored else {}
    s = _full(client, query=query, **kw)
    pid = s["perspective_id"]
    start_routes = all_routes(client, pid, 1)
    f1 = client.ok("perspective_follow", perspective_id=pid, route_index=1, route_set_version=1)
    routes = all_routes(client, pid, 2)
    g = shop_ws.graph.graph()
    idx = g.nodes.index
    focus = idx[f1["new_focus"]]
    visited = {idx[s["focus_node"]], focus}
    earlier = {idx[r["target_node"]] for r in start_routes}
    L = _reference_local_activation(g, focus)
    lmax = max(L[idx[r["target_node"]]] for r in routes)
    act = {
        a["node_id"]: a["activation"]
        for a in client.ok("activate", query=query, top_k=200, coactivation_ltp=False, max_output_chars=100000)[
            "activated"
        ]
    }
    qmax = max(act.values())
    anchor_act = None
    if anchored:
        anchor_act, _ = g.engine.spread([idx[ANCHOR]], [1.0], decay=0.55, threshold=0.01, max_hops=8, mode="both",
                                        mask=STRUCTURAL_MASK, rev_mult=RHO)
        anchor_act[idx[ANCHOR]] = 1.0
    for r in routes:
        ins = client.ok("perspective_inspect", perspective_id=pid, route_id=r["route_id"], route_set_version=2)
        b, w = ins["score_breakdown"], ins["score_weights"]
        t = idx[r["target_node"]]
        # local activation
        assert b["local_activation"] == pytest.approx(L[t] / lmax, abs=2e-4), r
        # path coherence
        path = [idx[e] for e in ins["path"]]
        if ins["path_relations"] == ["similar_to"]:
            want = 0.5 * float(gf.semantic_similarity(g, focus)[0][t])
        else:
            ws_ = [_edge_weight(g, u, v, rel) for u, v, rel in zip(path, path[1:], ins["path_relations"])]
            want = math.prod(ws_) ** (1 / len(ws_)) / (1 + 0.1 * (len(ws_) - 1))
        assert b["path_coherence"] == pytest.approx(want, abs=2e-4), r
        # novelty
        if t in visited:
            nov = 0.0
        elif t in earlier or any(len(g.engine.edges_between(t, v)) or len(g.engine.edges_between(v, t))
                                 for v in visited - {focus}):
            nov = 0.5
        else:
            nov = 1.0
        assert b["novelty"] == nov, r
        # anchor relevance (a number even in local mode, weighted 0 there)
        assert b["anchor_relevance"] == pytest.approx(float(anchor_act[t]) if anchored else 0.0, abs=2e-4)
        # continuity: query activation plus the family of the last followed route
        cont = 0.7 * act.get(r["target_node"], 0.0) / qmax + 0.3 * (r["family"] == f1["followed"]["family"])
        assert b["continuity"] == pytest.approx(cont, abs=2e-3), r
        # the score is the weighted sum; weights are the mode's
        assert ins["score"] == pytest.approx(sum(b[k] * w[k] for k in TERMS), abs=1e-3)
        mode_w = ({"local_activation": 0.35, "path_coherence": 0.25, "novelty": 0.15, "anchor_relevance": 0.15,
                   "continuity": 0.10} if anchored and f1["mode_effective"] == "anchored" else
                  {"local_activation": 0.45, "path_coherence": 0.25, "novelty": 0.20, "anchor_relevance": 0.0,
                   "continuity": 0.10})
        assert w == mode_w


# -- lens ----------------------------------------------------------------------------------------------------
def test_lens_filters_and_summary(client: Client) -> None:
    s = _full(client, query="session pool", anchor_node=ANCHOR, lens={"node_kinds": ["fn", "class"]})
    routes = all_routes(client, s["perspective_id"], 1)
    assert routes and all(r["target_kind"] in ("fn", "class") for r in routes)
    assert s["lens_summary"] == "all dimensions, kinds fn|class, top 50"
    s = _full(client, query="session pool", anchor_node=ANCHOR, lens={"include_tests": False,
                                                                      "route_families": ["causal_downstream"]})
    routes = all_routes(client, s["perspective_id"], 1)
    assert [r["target_node"] for r in routes] == ["file::src/shop/orders.py"]
    s = _full(client, query="session pool", anchor_node=ANCHOR,
              lens={"path_prefix": "src/", "dimensions": ["structural", "causal"],
                    "route_families": ["causal_upstream", "hub"]})
    assert s["lens_summary"].startswith("structural+causal, no type filter, families causal_upstream|hub")
    assert all(r["target_node"].startswith(("file::src/", "dir::src")) for r in all_routes(client,
                                                                                         s["perspective_id"], 1))
    empty = _full(client, query="session pool", anchor_node=ANCHOR, lens={"node_kinds": ["enum"]})
    assert empty["routes"] == [] and empty["diagnostic"]["reason"] == "filtered_out"


def test_ranking_weights_are_renormalised(client: Client) -> None:
    s = client.ok("perspective_start", query="session pool", anchor_node=ANCHOR,
                  lens={"ranking_weights": {"novelty": 0.0, "local_activation": 0.9}})
    ins = client.ok("perspective_inspect", perspective_id=s["perspective_id"], route_index=1, route_set_version=1)
    w = ins["score_weights"]
    assert w["novelty"] == 0.0 and abs(sum(w.values()) - 1.0) < 1e-3
    assert w["local_activation"] == pytest.approx(0.9 / (0.9 + 0.25 + 0.15 + 0.10), abs=1e-4)


@pytest.mark.parametrize(("lens", "named"), [
    ({"topk": 5}, "unknown lens key 'topk' (did you mean 'top_k'?)"),
    ({"node_kinds": ["function"]}, "lens.node_kinds: unknown value 'function'"),
    ({"route_families": ["hubs"]}, "lens.route_families: unknown value 'hubs' (did you mean 'hub'?)"),
    ({"dimensions": ["structure"]}, "lens.dimensions: unknown value 'structure'"),
    ({"ranking_weights": {"novelty": -1}}, "lens.ranking_weights.novelty: must be a finite number ≥ 0"),
    ({"ranking_weights": {"freshness": 1}}, "lens.ranking_weights.freshness: unknown weight"),
    ({"top_k": 0}, "lens.top_k: must be an integer between 1 and 50"),
    ({"include_tests": "no"}, "lens.include_tests: must be true or false"),
], ids=["key", "kind", "family", "dimension", "negative", "weight-name", "top_k", "bool"])
def test_bad_lens_names_the_key(client: Client, lens: dict, named: str) -> None:
    e = client.err("perspective_start", query="session pool", lens=lens)
    assert e["code"] == "invalid_argument" and named in e["message"]
    assert client.ok("perspective_list")["perspectives"] == []  # nothing created


# -- pagination and route selection ------------------------------------------------------------------------
def test_pagination_clamps(client: Client) -> None:
    s = _full(client, query="session pool", anchor_node=ANCHOR)
    pid, n = s["perspective_id"], s["total_routes"]
    r = client.ok("perspective_routes", perspective_id=pid, page_size=0)
    assert r["page_size"] == 1 and r["page_size_clamped"] is True and r["total_pages"] == n
    r = client.ok("perspective_routes", perspective_id=pid, page_size=50)
    assert r["page_size"] == 10 and r["page_size_clamped"] is True and len(r["routes"]) == min(10, n)
    r = client.ok("perspective_routes", perspective_id=pid, page=99, route_set_version=1)
    assert r["page_clamped"] is True and r["page"] == r["total_pages"] == math.ceil(n / 6)
    assert r["routes"][-1]["index"] == n and r["suggested"] is None
    assert client.err("perspective_routes", perspective_id=pid, page=0)["code"] == "invalid_argument"


def test_route_selection_errors(client: Client) -> None:
    s = client.ok("perspective_start", query="session pool", anchor_node=ANCHOR)
    pid, n = s["perspective_id"], s["total_routes"]
    for args in ({}, {"route_id": s["routes"][0]["route_id"], "route_index": 1}):
        e = client.err("perspective_inspect", perspective_id=pid, route_set_version=1, **args)
        assert e["code"] == "invalid_argument" and e["message"] == "pass exactly one of route_id or route_index"
    e = client.err("perspective_follow", perspective_id=pid, route_set_version=1, route_index=99)
    assert e["code"] == "not_found"
    assert e["message"] == f"route index 99 is out of range (1..{n}); call perspective_routes"
    e = client.err("perspective_peek", perspective_id=pid, route_set_version=1, route_id="R_deadbeef")
    assert e["message"] == "route 'R_deadbeef' is not in route set 1; call perspective_routes"
    # route_index is the rank in the whole set: index 7 is the first route of page 2
    p2 = client.ok("perspective_routes", perspective_id=pid, page=2, route_set_version=1)
    ins = client.ok("perspective_inspect", perspective_id=pid, route_index=7, route_set_version=1)
    assert ins["route_id"] == p2["routes"][0]["route_id"]


# -- modes ---------------------------------------------------------------------------------------------------
def test_anchored_degrades_to_local_beyond_8_hops_and_back(tmp_path: Path) -> None:
    repo = write_files(tmp_path / "deep", {"m0.py": "def top():\n    return 0\n",
                                           "a/b/c/d/e/f/g/h/i/j/deep.py": "def deep():\n    return 1\n"})
    ws = open_workspace(tmp_path / "home", repo)
    try:
        ingest(ws, repo)
        c = Client(ws)
        s = c.ok("perspective_start", query="top", anchor_node="file::m0.py")
        pid, v = s["perspective_id"], 1
        assert s["mode"] == "anchored" and s["mode_effective"] == "anchored"
        chain = ["dir::.", "dir::a", "dir::a/b", "dir::a/b/c", "dir::a/b/c/d", "dir::a/b/c/d/e", "dir::a/b/c/d/e/f",
                 "dir::a/b/c/d/e/f/g", "dir::a/b/c/d/e/f/g/h"]  # the last one is 9 hops from m0.py
        modes = []
        for target in chain:
            r = route_to(all_routes(c, pid, v), target)
            assert r is not None, target
            f = c.ok("perspective_follow", perspective_id=pid, route_id=r["route_id"], route_set_version=v)
            v = f["route_set_version"]
            modes.append(f["mode_effective"])
            assert f["mode"] == "anchored"
        assert modes == ["anchored"] * 8 + ["local"]
        assert "more than 8 hops from the anchor" in f["mode_note"]
        ins = c.ok("perspective_inspect", perspective_id=pid, route_index=1, route_set_version=v)
        assert ins["score_weights"]["anchor_relevance"] == 0.0 and ins["mode_effective"] == "local"
        assert c.ok("perspective_routes", perspective_id=pid)["mode_effective"] == "local"
        bk = c.ok("perspective_back", perspective_id=pid)
        assert bk["restored_focus"] == "dir::a/b/c/d/e/f/g" and bk["restored_mode"] == "anchored"
        assert "mode_note" not in bk
    finally:
        ws.close()


# -- isolation, limits, errors ---------------------------------------------------------------------------------
def test_other_agents_see_not_found(client: Client) -> None:
    s = client.ok("perspective_start", query="session pool")
    pid = s["perspective_id"]
    other = client.as_agent("agent-2")
    missing = other.err("perspective_routes", perspective_id="persp_agent2_999")
    foreign = other.err("perspective_routes", perspective_id=pid)
    assert foreign["code"] == missing["code"] == "not_found"
    assert foreign["message"] == f"perspective '{pid}' not found for agent 'agent-2'; see perspective_list"
    for tool, extra in (("perspective_follow", {"route_index": 1, "route_set_version": 1}),
                        ("perspective_back", {}), ("perspective_branch", {}), ("perspective_close", {})):
        assert other.err(tool, perspective_id=pid, **extra)["code"] == "not_found"
    mine = other.ok("perspective_start", query="session pool")["perspective_id"]
    e = other.err("perspective_compare", perspective_id_a=mine, perspective_id_b=pid)
    assert e["message"] == (f"perspective '{pid}' not found for agent 'agent-2' (compare works on your own "
                            "perspectives only)")
    assert other.err("perspective_compare", perspective_id_a=mine, perspective_id_b=mine)["code"] == \
        "invalid_argument"
    assert [p["perspective_id"] for p in other.ok("perspective_list")["perspectives"]] == [mine]
    assert client.ok("perspective_routes", perspective_id=pid)["route_set_version"] == 1


def test_eight_perspectives_per_agent(client: Client) -> None:
    ids = [client.ok("perspective_start", query="session pool")["perspective_id"] for _ in range(8)]
    assert ids[-1] == "persp_agent1_008"
    e = client.err("perspective_start", query="session pool")
    assert e["code"] == "limit_reached"
    assert e["message"] == "agent 'agent-1' has 8 open perspectives; close one (see perspective_list)"
    assert client.err("perspective_branch", perspective_id=ids[0])["code"] == "limit_reached"
    assert client.as_agent("agent-2").ok("perspective_start", query="session pool")  # per agent
    client.ok("perspective_close", perspective_id=ids[3])
    assert client.ok("perspective_start", query="session pool")["perspective_id"] == "persp_agent1_009"


def test_branch_tree_limit_and_names(client: Client, shop_ws) -> None:
    shop_ws.perspectives = PerspectiveService(shop_ws.graph, max_branches=2)
    root = client.ok("perspective_start", query="session pool")["perspective_id"]
    b1 = client.ok("perspective_branch", perspective_id=root)
    assert b1["branch_name"] == "branch_1"
    e = client.err("perspective_branch", perspective_id=b1["branch_perspective_id"], branch_name="branch_1")
    assert e["code"] == "invalid_argument" and "already used in this perspective tree" in e["message"]
    b2 = client.ok("perspective_branch", perspective_id=b1["branch_perspective_id"])  # a branch of a branch
    assert b2["branch_name"] == "branch_2"
    e = client.err("perspective_branch", perspective_id=root)
    assert e["code"] == "limit_reached" and "has 2 branches" in e["message"]
    assert client.err("perspective_branch", perspective_id=root, branch_name="-bad")["code"] == "invalid_argument"
    # closing the root leaves its branches open
    client.ok("perspective_close", perspective_id=root)
    lst = client.ok("perspective_list")["perspectives"]
    assert {p["perspective_id"] for p in lst} == {b1["branch_perspective_id"], b2["branch_perspective_id"]}
    assert next(p for p in lst if p["branch_name"] == "branch_1")["branch_of"] == root


def test_memory_limit(client: Client, shop_ws) -> None:
    shop_ws.perspectives = PerspectiveService(shop_ws.graph, max_total_bytes=2000)
    client.ok("perspective_start", query="session pool")
    e = client.err("perspective_start", query="session pool")
    assert e["code"] == "limit_reached" and "bytes" in e["message"]


def test_start_errors(client: Client, tmp_path: Path) -> None:
    e = client.err("perspective_start", query="zzqx wvvy")
    assert e["code"] == "no_focus"
    assert e["message"] == ("nothing in the graph matches 'zzqx wvvy'; pass anchor_node=<external id> or use other "
                            "words")
    e = client.err("perspective_start", query="session", anchor_node="file::src/shop/sesion_pool.py")
    assert e["code"] == "unknown_node" and "file::src/shop/session_pool.py" in e["message"]
    ok = client.ok("perspective_start", query="zzqx", anchor_node=ANCHOR)  # an anchor is enough
    assert ok["focus_node"] == ANCHOR and ok["seeds"] == []
    e = client.err("perspective_back", perspective_id=ok["perspective_id"])
    assert e["code"] == "navigation_at_root"
    assert e["message"] == "nothing to go back to; this perspective has no follow to undo"
    assert client.ok("perspective_list")["perspectives"][0]["perspective_id"] == ok["perspective_id"]
    empty_ws = open_workspace(tmp_path / "empty-home", tmp_path)
    try:
        assert Client(empty_ws).err("perspective_start", query="session")["code"] == "graph_empty"
    finally:
        empty_ws.close()


# -- locks ---------------------------------------------------------------------------------------------------
def test_region_locks_overlap_and_release(client: Client, shop_ws) -> None:
    a = client.ok("perspective_start", query="session pool", anchor_node=ANCHOR)
    assert a["lock_id"] == "lock_agent1_001" and a["overlapping_locks"] == []
    local = client.ok("perspective_start", query="session pool")
    assert local["lock_id"] is None
    b = client.as_agent("agent-2").ok("perspective_start", query="pool", anchor_node="file::src/shop/pool.py")
    assert b["lock_id"] == "lock_agent2_001"
    assert [x["lock_id"] for x in b["overlapping_locks"]] == ["lock_agent1_001"]
    assert b["overlapping_locks"][0]["agent_id"] == "agent-1" and 0.2 <= b["overlapping_locks"][0]["overlap"] <= 1
    br = client.ok("perspective_branch", perspective_id=a["perspective_id"])
    assert br["lock_id"] == "lock_agent1_002"
    svc = service_for(shop_ws)
    assert svc.lock_count() == 3
    closed = client.ok("perspective_close", perspective_id=a["perspective_id"])
    assert closed["locks_released"] == ["lock_agent1_001"]
    assert sorted(svc.locks) == ["lock_agent1_002", "lock_agent2_001"]


# -- suggest (pure decision rules) -----------------------------------------------------------------------------
def _state(routes: list[tuple[float, str]], *, follows: list[str] | None = None, history: bool = False,
           visited: list[str] | None = None) -> Perspective:
    rs = [{"route_id": f"R_{k:08x}", "index": k + 1, "target_node": f"file::t{k}.py", "target_label": f"t{k}.py",
           "target_kind": "file", "family": fam, "score": sc, "reason": f"reason {k}", "path_labels": [],
           "also_families": [], "peek_available": True} for k, (sc, fam) in enumerate(routes)]
    return Perspective(perspective_id="persp_a_001", agent_id="a", query="q", seeds=[], mode="local",
                       mode_effective="local", anchor_node=None, focus_node="file::f.py", lens=Lens(), routes=rs,
                       route_set_version=1, cache_generation=1, follows=follows or [],
                       history=[{"focus": "file::prev.py", "family": None}] if history else [],
                       visited=visited or ["file::f.py"])


@pytest.mark.parametrize(("state", "action", "confidence", "based_on"), [
    (_state([], history=True), "back", 0.5, "exhaustion_recovery"),
    (_state([]), "close", 0.3, "exhaustion_recovery"),
    (_state([(0.5, "hub")], visited=["file::f.py", "file::t0.py"]), "close", 0.3, "exhaustion_recovery"),
    (_state([(0.60, "hub"), (0.58, "co_change")]), "branch", None, "initial_ranking"),
    (_state([(0.60, "hub"), (0.58, "hub")]), "follow", None, "initial_ranking"),
    (_state([(0.20, "hub"), (0.05, "co_change")]), "inspect", None, "initial_ranking"),
], ids=["back", "close", "all-visited", "branch", "same-family-follow", "inspect"])
def test_suggest_rules(state: Perspective, action: str, confidence: float | None, based_on: str) -> None:
    s = PerspectiveService.suggestion(None, state)  # type: ignore[arg-type]
    assert s["suggestion"]["action"] == action and s["based_on"] == based_on
    if confidence is not None:
        assert s["suggestion"]["confidence"] == confidence
    else:
        a = sorted((r["score"] * 1.2 for r in state.routes), reverse=True)  # no family followed yet: ×1.2
        a1, a2 = a[0], (a[1] if len(a) > 1 else 0.0)
        want = min(0.95, max(0.05, min(0.9, a1) * (0.7 + 0.3 * min(1.0, (a1 - a2) / 0.2))))
        assert s["suggestion"]["confidence"] == pytest.approx(want, abs=1e-4)


def test_suggest_prefers_unexplored_families() -> None:
    # hub was followed twice in a row: 0.5·0.8 = 0.40; co_change never followed: 0.45·1.2 = 0.54
    st = _state([(0.5, "hub"), (0.45, "co_change")], follows=["hub", "hub"], history=True)
    s = PerspectiveService.suggestion(None, st)  # type: ignore[arg-type]
    assert s["suggestion"]["action"] == "follow" and s["suggestion"]["route_id"] == st.routes[1]["route_id"]
    assert s["based_on"] == "navigation_history" and s["suggestion"]["reason"].startswith("Unexplored co_change")
    assert s["alternatives"][0]["route_id"] == st.routes[0]["route_id"]


# -- affinity ------------------------------------------------------------------------------------------------
def test_affinity_candidates_are_probable_not_connected(client: Client, shop_ws) -> None:
    s = _full(client, query="acquire", anchor_node=ACQUIRE)
    pid = s["perspective_id"]
    g = shop_ws.graph.graph()
    idx = g.nodes.index
    nonempty = 0
    for r in all_routes(client, pid, 1):
        out = client.ok("perspective_affinity", perspective_id=pid, route_id=r["route_id"], route_set_version=1,
                        top_k=3)
        assert out["notice"] == "Probable connections, not verified edges." and out["semantic_backend"] == "trigram"
        assert len(out["candidates"]) <= 3
        if not out["candidates"]:
            assert out["diagnostic"]["reason"] == "no_affinity"
        x = idx[r["target_node"]]
        for cand in out["candidates"]:
            nonempty += 1
            c = idx[cand["node_id"]]
            assert cand["is_hypothetical"] is True and 0.15 <= cand["strength"] <= 0.85
            assert len(g.engine.edges_between(x, c)) == 0 and len(g.engine.edges_between(c, x)) == 0
            assert gf.facts(g).group[c] == gf.facts(g).group[x]
            src = [v for v in cand["sources"].values() if v > 0]
            want = 1 - math.prod(1 - v for v in src)
            want = min(0.85, min(0.6, want) if len(src) == 1 else want)
            assert cand["strength"] == pytest.approx(want, abs=2e-4)
            if cand["sources"]["neighbourhood"] > 0:
                assert cand["sources"]["neighbourhood"] == pytest.approx(_weighted_jaccard(g, x, c), abs=2e-4)
                assert cand["reason"].startswith("Shares ")
    assert nonempty > 0


def _weighted_jaccard(g, a: int, b: int) -> float:
    def nbh(u: int) -> dict[int, float]:
        out: dict[int, float] = {}
        src, dst = g.edge_endpoints()
        for p in range(g.e):
            s_, d_ = int(src[p]), int(dst[p])
            if int(g.engine.csr.relations[p]) == RELATION_CODES["co_changes"] or s_ == d_:
                continue
            if u in (s_, d_):
                v = d_ if s_ == u else s_
                out[v] = max(out.get(v, 0.0), float(g.engine.weights[p]))
        return out

    na, nb = nbh(a), nbh(b)
    keys = set(na) | set(nb)
    return sum(min(na.get(k, 0), nb.get(k, 0)) for k in keys) / sum(max(na.get(k, 0), nb.get(k, 0)) for k in keys)


def test_health_counts_perspectives_and_locks(client: Client) -> None:
    client.ok("perspective_start", query="session pool", anchor_node=ANCHOR)
    client.ok("perspective_start", query="session pool")
    client.as_agent("agent-2").ok("perspective_start", query="pool", anchor_node="file::src/shop/pool.py")
    h = client.ok("health")
    assert h["perspectives"] == 2 and h["locks"] == 2
    assert client.as_agent("agent-3").ok("health")["perspectives"] == 0


def test_idle_perspectives_are_closed_automatically(client: Client, shop_ws) -> None:
    import time

    old = client.ok("perspective_start", query="session pool", anchor_node=ANCHOR)
    other = client.as_agent("agent-2").ok("perspective_start", query="session pool")
    svc = service_for(shop_ws)
    svc.idle_ms = 5
    time.sleep(0.05)
    new = client.ok("perspective_start", query="database connect")
    assert [p["perspective_id"] for p in client.ok("perspective_list")["perspectives"]] == [new["perspective_id"]]
    assert client.as_agent("agent-2").ok("perspective_list")["perspectives"] == []
    assert old["lock_id"] not in svc.locks
    assert client.err("perspective_routes", perspective_id=other["perspective_id"])["code"] == "not_found"


def test_semantic_backend_hook(client: Client, shop_ws) -> None:
    """A semantic backend given to the perspective service (the code-node embeddings) replaces the trigram backend
    everywhere; the cached similarities follow its epoch."""
    g = shop_ws.graph.graph()
    pool_acquire = g.nodes.index["file::src/shop/pool.py::class::Pool::fn::acquire"]
    acquire = g.nodes.index[ACQUIRE]

    class FakeEmbeddings:
        epoch = 1
        vectors = True

        def __call__(self, graph, i: int):
            if not self.vectors:
                return None
            sim = np.zeros(graph.n, np.float32)
            sim[i] = 1.0
            if i in (acquire, pool_acquire):
                sim[pool_acquire if i == acquire else acquire] = 0.8
            return sim, "embedding"

    svc = shop_ws.perspectives
    before = svc.semantic
    fake = svc.semantic = FakeEmbeddings()
    try:
        s = _full(client, query="acquire", anchor_node=ACQUIRE)
        assert s["semantic_backend"] == "embedding"
        r = route_to(all_routes(client, s["perspective_id"], 1), "file::src/shop/pool.py::class::Pool::fn::acquire")
        assert (
            r is not None and r["family"] == "semantic_affinity" and r["reason"] == "Similar purpose (similarity 0.80)"
        )
        test_route = route_to(all_routes(client, s["perspective_id"], 1),
                              "file::tests/test_session_pool.py::fn::test_acquire")
        aff = client.ok("perspective_affinity", perspective_id=s["perspective_id"], route_id=test_route["route_id"],
                        route_set_version=1)
        assert aff["semantic_backend"] == "embedding"
        assert gf.semantic_similarity(g, acquire, fake)[0][pool_acquire] == np.float32(0.8)
        fake.vectors = False
        assert gf.semantic_similarity(g, acquire, fake)[1] == "embedding"  # cached for this epoch
        fake.epoch = 2
        assert gf.semantic_similarity(g, acquire, fake)[1] == "trigram"  # a new epoch asks the backend again
    finally:
        svc.semantic = before
    assert gf.semantic_similarity(g, acquire)[1] == "trigram"
