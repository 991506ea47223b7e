"""The ten-step workflow of the perspective reference, end to end on an ingested fixture repository.

The same scenario runs twice: in process through ``call_tool``, and through the official MCP SDK client over stdio
against ``m1nd serve`` (which also validates every structured result against the tool's output schema).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from m1nd.tools.registry import call_tool

from .conftest import ingest, make_shop, open_workspace

Call = Callable[[str, dict[str, Any]], Awaitable[tuple[bool, dict[str, Any]]]]
ANCHOR = "file::src/shop/session_pool.py"
ROUTE_KEYS = {"route_id", "index", "target_node", "target_label", "target_kind", "family", "score", "path_preview",
              "reason", "peek_available", "also_families"}
TERMS = ("local_activation", "path_coherence", "novelty", "anchor_relevance", "continuity")
FAMILIES = {"structural_neighbor", "causal_downstream", "causal_upstream", "semantic_affinity", "co_change",
            "test_coverage", "configuration", "hub"}


def check_routes(routes: list[dict[str, Any]], first_index: int = 1) -> None:
    assert routes, "expected routes"
    for k, r in enumerate(routes, start=first_index):
        assert set(r) == ROUTE_KEYS, set(r) ^ ROUTE_KEYS
        assert r["index"] == k
        assert re.fullmatch(r"R_[0-9a-f]{8}(_\d+)?", r["route_id"])
        assert r["family"] in FAMILIES
        assert 0.0 <= r["score"] <= 1.0
        assert r["target_node"].startswith(("file::", "dir::"))
        assert r["reason"] and r["path_preview"]
    scores = [r["score"] for r in routes]
    assert scores == sorted(scores, reverse=True)


async def run_workflow(call: Call, agent: str = "agent-1") -> dict[str, Any]:
    async def ok(name: str, **args: Any) -> dict[str, Any]:
        is_error, out = await call(name, {"agent_id": agent, **args})
        assert not is_error, (name, out)
        assert out["response_chars"] > 0
        return out

    # 1. START an anchored perspective from a query.
    s = await ok("perspective_start", query="session pool connection", anchor_node=ANCHOR)
    pid = s["perspective_id"]
    assert re.fullmatch(r"persp_agent1_\d{3}", pid)
    assert s["mode"] == "anchored" and s["mode_effective"] == "anchored"
    assert s["anchor_node"] == ANCHOR and s["focus_node"] == ANCHOR and s["focus_label"] == "session_pool.py"
    assert s["route_set_version"] == 1 and s["page"] == 1 and s["cache_generation"] >= 1
    assert s["seeds"] and all({"node_id", "label", "relevance"} <= set(x) for x in s["seeds"])
    assert len(s["routes"]) == min(6, s["total_routes"]) and s["total_routes"] > 6
    assert s["total_pages"] == -(-s["total_routes"] // 6)
    check_routes(s["routes"])
    assert s["lens_summary"] == "all dimensions, no type filter"
    assert re.fullmatch(r"lock_agent1_\d{3}", s["lock_id"]) and s["overlapping_locks"] == []
    assert re.match(r"(follow|inspect|branch) R_[0-9a-f]{8}", s["suggested"])
    v1 = s["route_set_version"]

    # 2. BROWSE the second page.
    p2 = await ok("perspective_routes", perspective_id=pid, page=2, route_set_version=v1)
    check_routes(p2["routes"], first_index=7)
    assert p2["page"] == 2 and p2["page_size"] == 6 and not p2["page_size_clamped"] and not p2["page_clamped"]
    assert p2["route_set_version"] == v1 and p2["version_mismatch"] is False and p2["refreshed"] is False
    assert p2["suggested"] is None and p2["anchor"] == ANCHOR and p2["focus"] == ANCHOR
    assert sum(p2["family_counts"].values()) == s["total_routes"]

    # 3. INSPECT the best route before following it (and peek at its code).
    best = s["routes"][0]
    ins = await ok("perspective_inspect", perspective_id=pid, route_id=best["route_id"], route_set_version=v1)
    assert ins["route_id"] == best["route_id"] and ins["target_node"] == best["target_node"]
    assert set(ins["score_breakdown"]) == set(TERMS) and set(ins["score_weights"]) == set(TERMS)
    assert all(0.0 <= ins["score_breakdown"][k] <= 1.0 for k in TERMS)
    recomputed = sum(ins["score_breakdown"][k] * ins["score_weights"][k] for k in TERMS)
    assert abs(recomputed - ins["score"]) < 2e-3
    assert abs(sum(ins["score_weights"].values()) - 1.0) < 1e-3
    prov = ins["provenance"]
    assert prov["source_path"] and prov["line_start"] >= 1 and prov["line_end"] >= prov["line_start"]
    assert prov["provenance_stale"] is False and prov["namespace"] is None
    assert ins["path"][0] in (ANCHOR, ins["target_node"]) and len(ins["path_relations"]) >= 1
    assert ins["family_explanation"] and ins["target_type"] == best["target_kind"]
    assert len(ins["affinity_candidates"]) <= 3
    assert {"in_degree", "out_degree", "pagerank", "churn", "last_change_ms"} <= set(ins["target_metrics"])
    peek = await ok("perspective_peek", perspective_id=pid, route_index=1, route_set_version=v1)
    content = peek["content"]
    assert content["excerpt"] and content["file_path"] == prov["source_path"]
    assert content["line_start"] >= 1 and content["line_end"] >= content["line_start"]

    # 4. FOLLOW the route.
    f = await ok("perspective_follow", perspective_id=pid, route_id=best["route_id"], route_set_version=v1)
    assert f["previous_focus"] == ANCHOR and f["new_focus"] == best["target_node"]
    assert f["followed"] == {"route_id": best["route_id"], "family": best["family"],
                             "target_node": best["target_node"]}
    v2 = f["route_set_version"]
    assert v2 == v1 + 1
    check_routes(f["routes"])
    focus2 = f["new_focus"]

    # 5. ASK for a suggestion.
    sg = await ok("perspective_suggest", perspective_id=pid, route_set_version=v2)
    assert sg["based_on"] == "navigation_history"
    assert sg["suggestion"]["action"] in {"follow", "inspect", "branch", "back", "close"}
    assert 0.05 <= sg["suggestion"]["confidence"] <= 0.95 and sg["suggestion"]["reason"]
    assert len(sg["alternatives"]) <= 3

    # 6. BRANCH before exploring a risky path.
    b = await ok("perspective_branch", perspective_id=pid, branch_name="session-path")
    bid = b["branch_perspective_id"]
    assert bid != pid and re.fullmatch(r"persp_agent1_\d{3}", bid)
    assert b["branch_name"] == "session-path" and b["branched_from_focus"] == focus2
    assert b["route_set_version"] == v2

    # 7. FOLLOW different routes in each branch (unvisited targets).
    fresh = [r for r in f["routes"] if r["target_node"] not in (ANCHOR, focus2)]
    ra, rb = fresh[0], fresh[1]
    fa = await ok("perspective_follow", perspective_id=pid, route_id=ra["route_id"], route_set_version=v2)
    fb = await ok("perspective_follow", perspective_id=bid, route_id=rb["route_id"], route_set_version=v2)
    assert fa["new_focus"] == ra["target_node"] and fb["new_focus"] == rb["target_node"]

    # 8. COMPARE the two branches.
    cmp_ = await ok("perspective_compare", perspective_id_a=pid, perspective_id_b=bid)
    shared = [n["node_id"] for n in cmp_["shared_nodes"]]
    assert shared == [ANCHOR, focus2]
    assert [n["node_id"] for n in cmp_["unique_to_a"]] == [ra["target_node"]]
    assert [n["node_id"] for n in cmp_["unique_to_b"]] == [rb["target_node"]]
    assert all(set(n) == {"node_id", "label"} for n in cmp_["shared_nodes"])
    assert cmp_["overlap"] == 0.5
    assert [d["dimension"] for d in cmp_["dimension_deltas"]] == ["structural", "semantic", "temporal", "causal"]
    for d in cmp_["dimension_deltas"]:
        assert abs(d["score_a"] - d["score_b"] - d["delta"]) < 1e-3
    assert any(d["score_a"] > 0 for d in cmp_["dimension_deltas"])

    # 9. BACK: undo the last follow in branch 1.
    bk = await ok("perspective_back", perspective_id=pid)
    assert bk["restored_focus"] == focus2 and bk["restored_mode"] in ("anchored", "local")
    assert bk["route_set_version"] == fa["route_set_version"] + 1
    assert [r["route_id"] for r in bk["routes"]] == [r["route_id"] for r in f["routes"]]
    assert bk["nav_event_count"] == 3

    lst = await ok("perspective_list")
    assert {p["perspective_id"] for p in lst["perspectives"]} == {pid, bid}
    assert lst["total_memory_bytes"] == sum(p["memory_bytes"] for p in lst["perspectives"]) > 0
    assert lst["limits"]["max_perspectives"] == 8

    # 10. CLOSE both.
    c1 = await ok("perspective_close", perspective_id=pid)
    c2 = await ok("perspective_close", perspective_id=bid)
    assert c1["closed"] is True and c1["locks_released"] == [s["lock_id"]]
    assert c2["closed"] is True and len(c2["locks_released"]) == 1
    assert (await ok("perspective_list"))["perspectives"] == []
    return {"start": s, "follow": f}


def test_ten_step_workflow_in_process(shop_ws) -> None:
    async def call(name: str, args: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        r = call_tool(shop_ws, name, args)
        # what an MCP client reads as text is the same JSON
        if not r.is_error:
            assert json.loads(r.text()) == r.structured
        return r.is_error, r.structured

    asyncio.run(run_workflow(call))


@pytest.mark.skipif(importlib.util.find_spec("m1nd.mcp.server") is None, reason="m1nd.mcp.server (m1nd serve) is "
                    "not available yet")
def test_ten_step_workflow_over_stdio(tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the official MCP SDK is not installed")
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    repo = make_shop(tmp_path / "shop")
    env = {"M1ND_HOME": str(tmp_path / "home"), "M1ND_WORKSPACE": str(repo), "M1ND_EMBEDDER": "hashing",
           "SKBUILD_EDITABLE_VERBOSE": "0", "M1ND_TOOLS": "all"}
    server = StdioServerParameters(command=sys.executable, args=["-m", "m1nd", "serve"], env=env)

    async def main() -> None:
        async with Client(server, mode="legacy") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"perspective_start", "perspective_routes", "perspective_inspect", "perspective_peek",
                    "perspective_follow", "perspective_suggest", "perspective_affinity", "perspective_branch",
                    "perspective_back", "perspective_compare", "perspective_list", "perspective_close"} <= names
            ing = await client.call_tool("ingest", {"agent_id": "setup", "path": str(repo)})
            assert ing.is_error is False, ing.content[0].text

            async def call(name: str, args: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
                res = await client.call_tool(name, args)
                if res.is_error:
                    return True, res.structured_content or {"text": res.content[0].text}
                assert json.loads(res.content[0].text) == res.structured_content
                return False, res.structured_content

            await run_workflow(call)
            # an error crosses the wire as a tool result with the documented text
            bad = await client.call_tool("perspective_back", {"agent_id": "agent-1", "perspective_id": "persp_x_001"})
            assert bad.is_error is True and bad.content[0].text.startswith("Error (not_found): ")

    asyncio.run(main())


def test_workflow_state_is_per_workspace_process(tmp_path: Path) -> None:
    """Two workspaces on different homes never see each other's perspectives."""
    repo = make_shop(tmp_path / "shop")
    ws1, ws2 = open_workspace(tmp_path / "h1", repo), open_workspace(tmp_path / "h2", repo)
    try:
        ingest(ws1, repo)
        ingest(ws2, repo)
        r = call_tool(ws1, "perspective_start", {"agent_id": "a", "query": "session pool"})
        assert not r.is_error
        lst = call_tool(ws2, "perspective_list", {"agent_id": "a"}).structured
        assert lst["perspectives"] == []
    finally:
        ws1.close()
        ws2.close()
