"""``activate``'s ``code_only`` filter (the tool, the file view and the CLI flag): implementation code only, the rule
``m1nd eval`` scores against (:func:`m1nd.graph.ranking.is_implementation`)."""

from __future__ import annotations

from pathlib import Path

from m1nd.tools.registry import call_tool
from shop_repo import make_ws, write_repo
from testkit import run_cli

QUERY = "cart pricing reserve stock shop currency test"
IMPLEMENTATION = {"src/shop/__init__.py", "src/shop/cart.py", "src/shop/pricing.py", "src/shop/store.py"}


def test_code_only_keeps_implementation_files_in_the_same_order(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo")
    ws = make_ws(tmp_path / "home", root)
    try:
        assert not call_tool(ws, "ingest", {"agent_id": "t", "path": str(root), "embed": "skip"}).is_error
        q = {"agent_id": "t", "query": QUERY, "top_k": 50, "coactivation_ltp": False, "group_by": "file",
             "max_per_file": 0}
        every = call_tool(ws, "activate", q).structured
        code = call_tool(ws, "activate", {**q, "code_only": True}).structured
        all_paths = {n["source_path"] for n in every["activated"]}
        assert all_paths - IMPLEMENTATION, "the query must also reach tests, docs or config for the test to mean much"
        assert code["activated"] and {n["source_path"] for n in code["activated"]} <= IMPLEMENTATION
        # a filter, not another ranking: the implementation nodes keep their order and scores
        kept = [(n["node_id"], n["activation"]) for n in every["activated"] if n["source_path"] in IMPLEMENTATION]
        got = [(n["node_id"], n["activation"]) for n in code["activated"]]
        m = min(len(got), len(kept))
        assert m and got[:m] == kept[:m]
        assert [f["source_path"] for f in code["files"]] == \
            [f["source_path"] for f in every["files"] if f["source_path"] in IMPLEMENTATION]
    finally:
        ws.close()


def test_cli_code_only_flag(tmp_path: Path, monkeypatch) -> None:
    root = write_repo(tmp_path / "repo")
    monkeypatch.setenv("M1ND_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(root)
    assert run_cli(["ingest", str(root)]).code == 0
    r = run_cli(["activate", QUERY, "--code-only", "--json"])
    assert r.code == 0, r.err
    paths = {n["source_path"] for n in r.json()["activated"]}
    assert paths and paths <= IMPLEMENTATION
