"""Ingest orchestration against a real SQLite store: incremental == full, no-op re-ingest, errors, recovery."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from shop_repo import write_repo
from m1nd.tools.registry import call_tool


def ingest(ws, path: Path, **kw) -> dict:
    r = call_tool(ws, "ingest", {"agent_id": "t", "path": str(path), **kw})
    assert not r.is_error, r.structured
    return r.structured


def snapshot(ws) -> tuple[dict, dict]:
    db = ws.graph.store.db
    nodes = {r[0]: r[1:] for r in db.all(
        "SELECT ext_id, label, qname, kind, lang, source_path, line_start, line_end, signature, doc, is_test, "
        "content_hash, last_change_ms, round(churn, 5), commit_count FROM nodes")}
    edges = {(r[0], r[1], r[2]): (round(r[3], 6), r[4]) for r in db.all(
        "SELECT s.ext_id, d.ext_id, e.relation, e.w0, e.count FROM edges e JOIN nodes s ON s.id = e.src "
        "JOIN nodes d ON d.id = e.dst")}
    return nodes, edges


def test_ingest_builds_the_expected_graph(repo, ws_factory) -> None:
    ws = ws_factory(repo)
    r = ingest(ws, repo)
    assert r["files_scanned"] == 7 and r["changed"] is True and r["graph_generation"] == 1
    nodes, edges = snapshot(ws)
    assert "file::src/shop/cart.py::class::Cart::fn::add_item" in nodes
    ls, le = nodes["file::src/shop/cart.py::class::Cart::fn::add_item"][5:7]
    assert (ls, le) == (13, 15)
    rel = {name: code for code, name in enumerate(
        ["contains", "imports", "calls", "inherits", "implements", "references", "tests", "co_changes"])}
    assert ("file::src/shop/cart.py::class::Cart::fn::add_item",
            "file::src/shop/store.py::class::Inventory::fn::reserve", rel["calls"]) in edges
    assert ("file::src/shop/cart.py", "file::src/shop/pricing.py", rel["imports"]) in edges
    assert any(k[0] == "file::tests/test_cart.py" and k[2] == rel["tests"] for k in edges)
    # every invariant of graph.md §16.1 / §16.3
    for (s, d, _), (w0, _c) in edges.items():
        assert s != d and 0.05 <= w0 <= 1.0
    for ext, row in nodes.items():
        if not ext.startswith("dir::"):
            assert row[5] >= 1 and row[6] >= row[5], ext


def test_reingest_unchanged_changes_nothing(repo, ws_factory) -> None:
    ws = ws_factory(repo)
    ingest(ws, repo)
    before = snapshot(ws)
    r = ingest(ws, repo)
    assert r["changed"] is False and r["files_parsed"] == 0 and r["files_reused"] == 7
    assert r["graph_generation"] == 1
    assert snapshot(ws) == before


def test_incremental_equals_full(repo, tmp_path, ws_factory) -> None:
    ws = ws_factory(repo)
    ingest(ws, repo)
    (repo / "src/shop/pricing.py").write_text("def price_of(sku):\n    return 2.0\n\n\ndef tax(x):\n    return x\n")
    (repo / "src/shop/store.py").unlink()
    (repo / "src/shop/new.py").write_text("from .pricing import tax\n\n\ndef use():\n    return tax(1)\n")
    r = ingest(ws, repo)
    assert r["files_parsed"] == 2 and r["files_removed"] == 1 and r["graph_generation"] == 2
    full_ws = ws_factory(repo, home=tmp_path / "home2")
    ingest(full_ws, repo, incremental=False)
    inc_nodes, inc_edges = snapshot(ws)
    full_nodes, full_edges = snapshot(full_ws)
    assert inc_nodes == full_nodes
    assert inc_edges == full_edges


def test_surviving_edges_keep_learned_weights(repo, ws_factory) -> None:
    ws = ws_factory(repo)
    ingest(ws, repo)
    db = ws.graph.store.db
    with db.write():
        db.execute("UPDATE edges SET w = 0.99")
    (repo / "src/shop/new.py").write_text("def f():\n    return 1\n")
    ingest(ws, repo)
    ws_vals = {
        round(r[0], 4)
        for r in db.all(
            "SELECT w FROM edges e JOIN nodes n ON n.id = e.src "
            "WHERE n.source_path != 'src/shop/new.py' AND n.ext_id != 'dir::src/shop'"
        )
    }
    assert ws_vals == {0.99}


def test_git_history_sets_temporal_data_and_co_change(git_repo, ws_factory) -> None:
    ws = ws_factory(git_repo)
    r = ingest(ws, git_repo)
    assert r["git"]["available"] is True and r["git"]["commits_read"] == 4
    nodes, edges = snapshot(ws)
    cart = nodes["file::src/shop/cart.py"]
    assert cart[11] == 1767528000000 and cart[13] == 4  # last change 2026-01-04T12:00Z, 4 commits
    assert ("file::src/shop/cart.py", "file::src/shop/pricing.py", 7) in edges
    # symbols inherit their file's temporal data
    assert nodes["file::src/shop/cart.py::class::Cart"][11] == cart[11]


def test_file_path_reingests_inside_its_root(repo, ws_factory) -> None:
    ws = ws_factory(repo)
    ingest(ws, repo)
    (repo / "src/shop/pricing.py").write_text("def price_of(sku):\n    return 3.0\n")
    r = ingest(ws, repo / "src/shop/pricing.py")
    assert r["root"] == str(repo.resolve()) and r["files_parsed"] == 1


@pytest.mark.parametrize(("path", "message"), [
    ("does/not/exist", "does not exist"),
], ids=["missing"])
def test_bad_paths_are_refused(repo, ws_factory, path, message) -> None:
    ws = ws_factory(repo)
    r = call_tool(ws, "ingest", {"agent_id": "t", "path": str(repo / path)})
    assert r.is_error and r.structured["error"]["code"] == "invalid_argument"
    assert message in r.structured["error"]["message"]
    assert ws.graph.store.counts() == (0, 0)


def test_file_outside_every_root_is_refused(repo, tmp_path, ws_factory) -> None:
    ws = ws_factory(repo)
    other = tmp_path / "elsewhere.py"
    other.write_text("x = 1\n")
    r = call_tool(ws, "ingest", {"agent_id": "t", "path": str(other)})
    assert r.is_error and "is not under an ingested root" in r.structured["error"]["message"]


def test_unparseable_and_binary_files_do_not_abort(repo, ws_factory) -> None:
    (repo / "src/shop/broken.py").write_text("def broken(:\n    pass\n")
    (repo / "src/shop/blob.py").write_bytes(b"\x00\x01binary")
    ws = ws_factory(repo)
    r = ingest(ws, repo)
    assert r["skipped"]["binary"] == 1
    nodes, _ = snapshot(ws)
    assert "file::src/shop/broken.py" in nodes and "file::src/shop/cart.py::class::Cart" in nodes


def test_store_is_a_valid_sqlite_file_in_wal_mode(repo, ws_factory) -> None:
    ws = ws_factory(repo)
    ingest(ws, repo)
    path = ws.settings.graph_db
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("PRAGMA user_version").fetchone()[0] >= 2
    con.close()
    assert oct(os.stat(ws.settings.workspace_dir).st_mode & 0o777) == "0o700"


def test_merge_adds_a_namespaced_root(repo, tmp_path, ws_factory) -> None:
    other = write_repo(tmp_path / "tools", {"cli/main.py": "def main():\n    return 0\n"})
    ws = ws_factory(repo)
    ingest(ws, repo)
    r = ingest(ws, other, mode="merge")
    assert r["namespace"] == "tools"
    nodes, _ = snapshot(ws)
    assert "tools::file::cli/main.py::fn::main" in nodes and "file::src/shop/cart.py" in nodes


def test_git_subdirectory_root_paths_are_root_relative(git_repo, ws_factory) -> None:
    sub = git_repo / "src"
    ws = ws_factory(sub)
    ingest(ws, sub)
    nodes, _ = snapshot(ws)
    assert nodes["file::shop/cart.py"][13] == 4


def test_child_process_ingest_builds_the_cache_and_reports_errors(repo, tmp_path, ws_factory, monkeypatch) -> None:
    monkeypatch.setenv("M1ND_INGEST_PROCESS", "child")
    ws = ws_factory(repo)
    r = ingest(ws, repo)
    assert r["changed"] is True
    cache = list(ws.settings.workspace_dir.glob("graph.cache-*.bin"))
    assert [p.name for p in cache] == [f"graph.cache-{r['graph_generation']}.bin"]
    assert ws.graph.graph().n == r["nodes"]["total"]
    # an error raised in the child crosses back with its code and message
    other = write_repo(tmp_path / "a" / "tools", {"x.py": "x = 1\n"})
    clash = write_repo(tmp_path / "b" / "tools", {"y.py": "y = 1\n"})
    ingest(ws, other, mode="merge")
    res = call_tool(ws, "ingest", {"agent_id": "t", "path": str(clash), "mode": "merge"})
    assert res.is_error and res.structured["error"]["code"] == "invalid_argument"
    assert "namespace 'tools' is already used" in res.structured["error"]["message"]


def test_weight_relaxation_toward_w0(repo, ws_factory, monkeypatch) -> None:
    from m1nd.codegraph.service import CodeGraph

    ws = ws_factory(repo)
    ingest(ws, repo)
    db = ws.graph.store.db
    day = 86_400_000
    import time as _t

    with db.write():
        db.execute("UPDATE edges SET w = 0.95, updated_ms = ? WHERE relation = 2", (int(_t.time() * 1000) - 7 * day,))
        db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'weights_generation'")
    monkeypatch.setenv("M1ND_WEIGHT_RELAXATION_DAYS", "7")
    cg = CodeGraph(ws.settings)
    g = cg.graph()
    calls = g.engine.csr.relations == 2
    w0 = g.engine.csr.base_weights[calls]
    expected = w0 + (0.95 - w0) * 0.5  # one half-life later
    assert abs(g.engine.weights[calls] - expected).max() < 1e-3
    assert db.scalar("SELECT MIN(w) FROM edges WHERE relation = 2") == 0.95  # the store keeps the learned value
    cg.close()


def test_activate_include_memory_finds_entries_about_results(repo, ws_factory) -> None:
    ws = ws_factory(repo)
    ingest(ws, repo)
    cart = "file::src/shop/cart.py::class::Cart"
    add = call_tool(ws, "memory_add", {"agent_id": "a", "title": "Cart reserves stock first", "category": "insight",
                                       "content": "add_item reserves before appending", "code_refs": [cart]})
    assert not add.is_error, add.structured
    secret = call_tool(ws, "memory_add", {"agent_id": "b", "title": "B's private note on Cart", "category": "insight",
                                          "content": "x", "code_refs": [cart], "private": True})
    assert not secret.is_error, secret.structured
    r = call_tool(ws, "activate", {"agent_id": "a", "query": "cart add item", "include_memory": True})
    assert not r.is_error, r.structured
    titles = [m["title"] for m in r.structured["related_memories"]]
    assert titles == ["Cart reserves stock first"]  # b's private entry never leaks to a


def test_cli_ingest_stores_the_graph_in_the_workspace_of_its_path(repo, tmp_path) -> None:
    """`m1nd ingest PATH` from elsewhere: later commands run inside PATH find the graph."""
    import subprocess
    import sys

    home = tmp_path / "clihome"
    env = {k: v for k, v in os.environ.items() if k not in ("M1ND_WORKSPACE", "M1ND_HOME")}
    run = lambda args, cwd: subprocess.run([sys.executable, "-m", "m1nd", "--home", str(home), *args],  # noqa: E731
                                           cwd=cwd, capture_output=True, text=True, env=env, timeout=120)
    out = run(["ingest", str(repo)], tmp_path)
    assert out.returncode == 0, out.stderr
    found = run(["activate", "cart add item", "--json"], repo)
    assert found.returncode == 0, found.stderr
    assert '"activated"' in found.stdout and "file::src/shop/cart.py" in found.stdout


def test_ingest_reports_files_cut_by_the_per_file_bounds(repo, ws_factory) -> None:
    ws = ws_factory(repo)
    n = 50_000
    (repo / "src" / "deep.py").write_bytes(b"def shallow():\n    pass\n\nx = " + b"f(" * n + b")" * n + b"\n")
    (repo / "src" / "chain.py").write_bytes(b"x = a" + b".b()" * 20_000 + b"\n")
    r = ingest(ws, repo)
    cut = {f["path"]: f["cut"] for f in r["files_cut"]}
    assert r["files_cut_total"] == 2 and set(cut) == {"src/deep.py", "src/chain.py"}
    assert "deeper than 4000 levels" in cut["src/deep.py"]
    assert any("extraction bounded in src/chain.py" in w for w in r["warnings"])
    nodes, _ = snapshot(ws)
    assert "file::src/deep.py::fn::shallow" in nodes  # what the bounds keep is still in the graph
