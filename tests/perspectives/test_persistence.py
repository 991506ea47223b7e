"""Perspectives are persisted in graph.db: they survive a restart and another process can continue them."""

from __future__ import annotations

from pathlib import Path

from m1nd.perspectives import service_for

from .conftest import Client, git, ingest, open_workspace

ANCHOR = "file::src/shop/session_pool.py"


def test_perspective_survives_a_new_workspace(tmp_path: Path, shop_repo: Path) -> None:
    home = tmp_path / "home"
    ws1 = open_workspace(home, shop_repo)
    ingest(ws1, shop_repo)
    c1 = Client(ws1)
    s = c1.ok("perspective_start", query="session pool", anchor_node=ANCHOR)
    pid = s["perspective_id"]
    f = c1.ok("perspective_follow", perspective_id=pid, route_index=1, route_set_version=1)
    b = c1.ok("perspective_branch", perspective_id=pid, branch_name="side")
    before = {p["perspective_id"]: p for p in c1.ok("perspective_list")["perspectives"]}
    routes_before = c1.ok("perspective_routes", perspective_id=pid, route_set_version=2)
    ws1.close()

    ws2 = open_workspace(home, shop_repo)
    try:
        c2 = Client(ws2)
        after = {p["perspective_id"]: p for p in c2.ok("perspective_list")["perspectives"]}
        assert set(after) == {pid, b["branch_perspective_id"]}
        for k in ("focus_node", "route_set_version", "nav_event_count", "mode", "mode_effective", "anchor_node",
                  "branch_of", "branch_name", "route_count", "created_at_ms", "stale"):
            assert after[pid][k] == before[pid][k], k
        assert after[b["branch_perspective_id"]]["branch_of"] == pid
        r = c2.ok("perspective_routes", perspective_id=pid, route_set_version=2)
        assert r["refreshed"] is False and r["version_mismatch"] is False
        assert r["routes"] == routes_before["routes"]
        # the history survived: back returns to the start focus with the exact start routes
        bk = c2.ok("perspective_back", perspective_id=pid)
        assert bk["restored_focus"] == f["previous_focus"] == ANCHOR
        assert [x["route_id"] for x in bk["routes"]] == [x["route_id"] for x in s["routes"]]
        # the anchored perspective took its region lock again in this process; close releases it
        assert service_for(ws2).lock_count() >= 1
        closed = c2.ok("perspective_close", perspective_id=pid)
        assert len(closed["locks_released"]) == 1
        # ids are never reused, even across restarts
        s3 = c2.ok("perspective_start", query="database connect")
        assert s3["perspective_id"] == "persp_agent1_003"
    finally:
        ws2.close()


def test_restart_after_a_graph_change_resynthesises(tmp_path: Path, shop_repo: Path) -> None:
    home = tmp_path / "home"
    ws1 = open_workspace(home, shop_repo)
    ingest(ws1, shop_repo)
    c1 = Client(ws1)
    s = c1.ok("perspective_start", query="session pool")
    pid = s["perspective_id"]
    f = c1.ok("perspective_follow", perspective_id=pid, route_index=1, route_set_version=1)
    ws1.close()
    (shop_repo / "src/shop/extra.py").write_text('"""Extra."""\n\n\ndef helper():\n    return 2\n')
    git(shop_repo, "add", "-A")
    git(shop_repo, "commit", "-qm", "extra")
    ws2 = open_workspace(home, shop_repo)
    try:
        gen = ingest(ws2, shop_repo)["graph_generation"]
        c2 = Client(ws2)
        assert c2.ok("perspective_list")["perspectives"][0]["stale"] is True
        r = c2.ok("perspective_routes", perspective_id=pid, route_set_version=2)
        assert r["refreshed"] is True and r["route_set_version"] == 3 and r["cache_generation"] == gen
        assert r["focus"] == f["new_focus"]
        bk = c2.ok("perspective_back", perspective_id=pid)
        assert bk["restored_focus"] == s["focus_node"] and bk["route_set_version"] == 4
    finally:
        ws2.close()


def test_two_processes_continue_the_same_perspective(tmp_path: Path, shop_repo: Path) -> None:
    home = tmp_path / "home"
    ws_a = open_workspace(home, shop_repo)
    ingest(ws_a, shop_repo)
    ws_b = open_workspace(home, shop_repo)
    try:
        a, b = Client(ws_a), Client(ws_b)
        s = a.ok("perspective_start", query="session pool")
        pid = s["perspective_id"]
        fb = b.ok("perspective_follow", perspective_id=pid, route_index=1, route_set_version=1)
        # A notices B's follow: the old version is stale, the new one works
        assert a.err("perspective_inspect", perspective_id=pid, route_index=1, route_set_version=1)["code"] == \
            "stale_route_set"
        fa = a.ok("perspective_follow", perspective_id=pid, route_index=1, route_set_version=fb["route_set_version"])
        assert fa["previous_focus"] == fb["new_focus"]
        b.ok("perspective_close", perspective_id=pid)
        assert a.err("perspective_routes", perspective_id=pid)["code"] == "not_found"
    finally:
        ws_a.close()
        ws_b.close()


def test_query_activation_is_stored_exactly_and_older_states_still_load() -> None:
    """The packed form round-trips bit for bit; states written with number lists (before packing) decode too."""
    import json

    import numpy as np

    from m1nd.perspectives.state import pack_activation, unpack_activation

    idx = np.array([3, 17, 70_000], np.int64)
    val = np.array([0.1, 0.333333343, 1.0], np.float32)
    packed = json.loads(json.dumps(pack_activation(7, idx, val)))
    got_i, got_v = unpack_activation(packed)
    assert packed["gen"] == 7 and got_i.tolist() == idx.tolist() and np.array_equal(got_v, val)
    old_i, old_v = unpack_activation({"gen": 7, "idx": [3, 17], "val": [0.5, 0.25]})
    assert old_i.tolist() == [3, 17] and old_v.tolist() == [0.5, 0.25]
    assert [len(a) for a in unpack_activation({})] == [0, 0]
