"""The history field end to end: git subjects read at ingest, kept with the graph, fused by activate, as of a time."""

from __future__ import annotations

from pathlib import Path

from m1nd.ingest.gitdata import read_git
from m1nd.tools.registry import call_tool
from shop_repo import git, make_ws, write_repo


def history_repo(root: Path) -> Path:
    write_repo(root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial import", date="2026-01-01T12:00:00Z")
    for k in range(3):  # pricing.py is where "surcharge" work happens, though its code never says so
        p = root / "src/shop/pricing.py"
        p.write_text(p.read_text() + f"\n# note {k}\n")
        git(root, "commit", "-q", "-am", f"pricing: surcharge for bulk orders, step {k}",
            date=f"2026-01-0{k + 2}T12:00:00Z")
    return root


def file_score(result: dict, path: str) -> float:
    return max((n["activation"] for n in result["activated"] if n["source_path"] == path), default=0.0)


def test_read_git_keeps_the_subjects_with_their_files(tmp_path: Path) -> None:
    root = history_repo(tmp_path / "r")
    g = read_git(root)
    subjects = {s: files for _t, s, files in g.history}
    assert subjects["pricing: surcharge for bulk orders, step 2"] == ["src/shop/pricing.py"]
    assert "initial import" in subjects
    times = [t for t, _s, _f in g.history]
    assert times == sorted(times, reverse=True)  # newest first, like git log


def test_activate_fuses_the_history_only_as_of_the_given_time(tmp_path: Path) -> None:
    root = history_repo(tmp_path / "r")
    ws = make_ws(tmp_path / "home", root)
    try:
        assert not call_tool(ws, "ingest", {"agent_id": "t", "path": str(root), "embed": "skip"}).is_error
        q = {"agent_id": "t", "query": "surcharge when reserving stock", "top_k": 50, "coactivation_ltp": False,
             "max_per_file": 0}
        now = call_tool(ws, "activate", q).structured
        before_any = call_tool(ws, "activate", {**q, "history_before": 1767225600}).structured  # 2026-01-01
        assert file_score(now, "src/shop/pricing.py") > file_score(before_any, "src/shop/pricing.py")
        # the code match is unchanged by the history: store.py (reserve, stock) keeps its score
        assert abs(file_score(now, "src/shop/store.py") - file_score(before_any, "src/shop/store.py")) < 1e-6
        health = call_tool(ws, "health", {"agent_id": "t"}).structured
        assert health["history"] == {"commits": 4, "terms": health["history"]["terms"]}
        assert health["history"]["terms"] > 0
        bad = call_tool(ws, "activate", {**q, "history_before": -1})
        assert bad.is_error and bad.structured["error"]["code"] == "invalid_argument"
    finally:
        ws.close()



def test_a_reworded_subject_reaches_the_index_though_no_node_changes(tmp_path: Path) -> None:
    """A commit subject reworded (same files, same dates) changes the history field but no node or edge: the
    ingest must still move the graph's generation, or the cached graph keeps answering from the old subjects. The
    same holds when an upgrade reads subjects further back."""
    root = history_repo(tmp_path / "r")
    ws = make_ws(tmp_path / "home", root)
    try:
        args = {"agent_id": "t", "path": str(root), "embed": "skip"}
        assert not call_tool(ws, "ingest", args).is_error
        q = {"agent_id": "t", "query": "levy when reserving stock", "top_k": 50, "coactivation_ltp": False,
             "max_per_file": 0}
        before = file_score(call_tool(ws, "activate", q).structured, "src/shop/pricing.py")
        for n, incremental in enumerate((True, False)):
            git(root, "commit", "-q", "--amend", "-m", f"pricing: levy for bulk orders, take {n}",
                date="2026-01-04T12:00:00Z")
            report = call_tool(ws, "ingest", {**args, "incremental": incremental}).structured
            assert report["nodes"]["created"] == report["nodes"]["removed"] == report["nodes"]["updated"] == 0
            assert report["changed"], incremental
            now = file_score(call_tool(ws, "activate", q).structured, "src/shop/pricing.py")
            assert now > before, incremental  # the reworded subject's "levy" now points at pricing.py
    finally:
        ws.close()
