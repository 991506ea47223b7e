"""Route set versions and staleness (perspectives.md §5, §9)."""

from __future__ import annotations

from pathlib import Path

from .conftest import Client, git, ingest


def _start(c: Client, **kw) -> dict:
    return c.ok("perspective_start", query=kw.pop("query", "session pool acquire"), **kw)


def test_follow_with_an_old_version_is_refused_then_accepted(client: Client) -> None:
    s = _start(client)
    pid, v1 = s["perspective_id"], s["route_set_version"]
    f = client.ok("perspective_follow", perspective_id=pid, route_index=1, route_set_version=v1)
    v2 = f["route_set_version"]
    assert v2 == v1 + 1
    e = client.err("perspective_follow", perspective_id=pid, route_index=1, route_set_version=v1)
    assert e["code"] == "stale_route_set"
    assert e["message"] == (
        f"route set version {v1} is stale (the focus moved since; current version is {v2}). "
        f"Call perspective_routes with route_set_version={v2} to see the current routes, then retry"
    )
    assert e["details"] == {"current_version": v2, "refreshed": False}
    assert f"route_set_version={v2}" in e["recover"]
    # every version-checked tool refuses the same way and changes nothing
    for tool, extra in (("perspective_inspect", {"route_index": 1}), ("perspective_peek", {"route_index": 1}),
                        ("perspective_suggest", {}), ("perspective_affinity", {"route_index": 1})):
        assert client.err(tool, perspective_id=pid, route_set_version=v1, **extra)["code"] == "stale_route_set"
    r = client.ok("perspective_routes", perspective_id=pid, route_set_version=v1)
    assert r["version_mismatch"] is True and r["refreshed"] is False and r["route_set_version"] == v2
    assert client.ok("perspective_routes", perspective_id=pid)["version_mismatch"] is True
    assert client.ok("perspective_routes", perspective_id=pid, route_set_version=v2)["version_mismatch"] is False
    client.ok("perspective_follow", perspective_id=pid, route_index=1, route_set_version=v2)


def test_versions_move_only_on_follow_back_and_refresh(client: Client) -> None:
    s = _start(client)
    pid = s["perspective_id"]
    for tool, extra in (("perspective_inspect", {"route_index": 1}), ("perspective_peek", {"route_index": 1}),
                        ("perspective_suggest", {}), ("perspective_affinity", {"route_index": 1})):
        client.ok(tool, perspective_id=pid, route_set_version=1, **extra)
    client.ok("perspective_list")
    assert client.ok("perspective_routes", perspective_id=pid, route_set_version=1)["route_set_version"] == 1
    b = client.ok("perspective_branch", perspective_id=pid)
    assert b["route_set_version"] == 1
    assert client.ok("perspective_follow", perspective_id=pid, route_index=1, route_set_version=1)[
        "route_set_version"] == 2
    assert client.ok("perspective_back", perspective_id=pid)["route_set_version"] == 3
    assert client.ok("perspective_routes", perspective_id=b["branch_perspective_id"])["route_set_version"] == 1


def _edit_and_reingest(ws, repo: Path) -> int:
    (repo / "src/shop/extra.py").write_text('"""More sessions."""\n\n\ndef session_helper():\n    return 1\n')
    with open(repo / "src/shop/pool.py", "a", encoding="utf-8") as f:
        f.write("\n\ndef drain(pool):\n    \"\"\"Empty a pool.\"\"\"\n    return []\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "more")
    out = ingest(ws, repo)
    assert out["changed"] is True
    return out["graph_generation"]


def test_reingest_makes_open_perspectives_stale(client: Client, shop_ws, shop_repo: Path) -> None:
    s = _start(client, anchor_node="file::src/shop/session_pool.py")
    pid, gen1 = s["perspective_id"], s["cache_generation"]
    f = client.ok("perspective_follow", perspective_id=pid, route_index=1, route_set_version=1)
    gen2 = _edit_and_reingest(shop_ws, shop_repo)
    assert gen2 > gen1
    item = client.ok("perspective_list")["perspectives"][0]
    assert item["stale"] is True and item["route_set_version"] == 2
    # a version-checked call refreshes first, then refuses the old version with "the graph changed"
    e = client.err("perspective_inspect", perspective_id=pid, route_index=1, route_set_version=2)
    assert e["code"] == "stale_route_set"
    assert "(the graph changed; current version is 3)" in e["message"]
    assert e["details"] == {"current_version": 3, "refreshed": True}
    item = client.ok("perspective_list")["perspectives"][0]
    assert item["stale"] is False and item["route_set_version"] == 3
    r = client.ok("perspective_routes", perspective_id=pid, route_set_version=3)
    assert r["refreshed"] is False and r["cache_generation"] == gen2 and r["focus"] == f["new_focus"]
    # the old version keeps being refused as a graph change (not a focus move)
    assert "the graph changed" in client.err("perspective_follow", perspective_id=pid, route_index=1,
                                             route_set_version=2)["message"]
    client.ok("perspective_inspect", perspective_id=pid, route_index=1, route_set_version=3)


def test_routes_refreshes_a_stale_set(client: Client, shop_ws, shop_repo: Path) -> None:
    s = _start(client)
    pid = s["perspective_id"]
    _edit_and_reingest(shop_ws, shop_repo)
    r = client.ok("perspective_routes", perspective_id=pid, route_set_version=1)
    assert r["refreshed"] is True and r["version_mismatch"] is True and r["route_set_version"] == 2
    r = client.ok("perspective_routes", perspective_id=pid, route_set_version=2)
    assert r["refreshed"] is False and r["version_mismatch"] is False


def test_back_after_a_graph_change_resynthesises(client: Client, shop_ws, shop_repo: Path) -> None:
    s = _start(client)
    pid = s["perspective_id"]
    client.ok("perspective_follow", perspective_id=pid, route_index=1, route_set_version=1)
    gen2 = _edit_and_reingest(shop_ws, shop_repo)
    bk = client.ok("perspective_back", perspective_id=pid)
    assert bk["restored_focus"] == s["focus_node"] and bk["cache_generation"] == gen2
    assert bk["route_set_version"] == 3
    client.ok("perspective_follow", perspective_id=pid, route_index=1, route_set_version=3)


def test_vanished_focus_falls_back_to_history(client: Client, shop_ws, shop_repo: Path) -> None:
    s = _start(client, query="render page html")
    pid = s["perspective_id"]
    assert s["focus_node"].startswith("file::src/shop/render.py")
    routes = s["routes"]
    to_file = next(r for r in routes if r["target_node"] == "file::src/shop/render.py")
    client.ok("perspective_follow", perspective_id=pid, route_id=to_file["route_id"], route_set_version=1)
    # render.py disappears entirely: focus and start focus are gone
    (shop_repo / "src/shop/render.py").unlink()
    git(shop_repo, "commit", "-qam", "drop render")
    ingest(shop_ws, shop_repo)
    e = client.err("perspective_routes", perspective_id=pid)
    assert e["code"] == "perspective_broken"
    assert "close this perspective and start again" in e["message"]


def test_learning_does_not_make_a_perspective_stale(client: Client, shop_ws) -> None:
    s = _start(client)
    pid = s["perspective_id"]
    g = shop_ws.graph
    with g.lock:
        gr = g.graph()
        gr.engine.weights[:] = gr.engine.weights * 0.99  # a learning step on every edge
        g.flush()
    client.ok("perspective_inspect", perspective_id=pid, route_index=1, route_set_version=1)
    assert client.ok("perspective_list")["perspectives"][0]["stale"] is False
