"""The graph follows edits (issue 15 item 4): real watchers (watchfiles) over a real git repository, real ingests
into a real store; after the watchers settle, the store equals a fresh full ingest of the edited tree."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from m1nd.errors import BusyError
from m1nd.watch import Watcher, freshness
from m1nd.workspace import Workspace
from shop_repo import git, make_ws

SETTLE_S = 120.0  # generous overall bound on a loaded machine; the tests never assert how long anything took


def wait_for(pred, what: str, timeout: float = SETTLE_S) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = pred()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def graph_rows(ws: Workspace) -> tuple[set[tuple[Any, ...]], set[tuple[Any, ...]]]:
    """Node rows (without row ids) and edges (by external ids, with relation, base weight and count)."""
    db = ws.graph.store.db
    nodes = {
        tuple(r)
        for r in db.all(
            "SELECT ext_id, label, qname, kind, lang, source_path, line_start, line_end, "
            "signature, doc, is_test, content_hash, last_change_ms, ROUND(churn, 5), commit_count FROM nodes"
        )
    }
    edges = {(s, d, int(rel), round(float(w0), 6), int(c)) for s, d, rel, w0, c in db.all(
        "SELECT a.ext_id, b.ext_id, e.relation, e.w0, e.count FROM edges e JOIN nodes a ON a.id = e.src "
        "JOIN nodes b ON b.id = e.dst")}
    return nodes, edges


def fresh_rows(tmp_path: Path, repo: Path) -> tuple[set[tuple[Any, ...]], set[tuple[Any, ...]]]:
    ws = make_ws(tmp_path / f"fresh-{time.monotonic_ns()}", repo)
    try:
        ws.graph.ingest(str(repo), incremental=False, embed="skip")
        return graph_rows(ws)
    finally:
        ws.close()


def assert_same(got: tuple[set, set], want: tuple[set, set]) -> None:
    for what, g, w in (("nodes", got[0], want[0]), ("edges", got[1], want[1])):
        assert g == w, f"{what} differ: only watched {sorted(g - w)[:5]}, only fresh {sorted(w - g)[:5]}"


def assert_converges(ws: Workspace, watchers: list[Watcher], tmp_path: Path, repo: Path) -> None:
    """The tree has stopped changing: once the watchers have taken every event (the last ones may still be in
    watchfiles' debounce when a watcher looks idle), the watched graph equals a fresh full ingest."""
    want = fresh_rows(tmp_path, repo)
    end = time.monotonic() + SETTLE_S
    while time.monotonic() < end and not (all(w.idle() for w in watchers) and graph_rows(ws) == want):
        time.sleep(0.1)
    assert_same(graph_rows(ws), want)


def busy_retry(call):
    """``call()``, or None while another ingest holds the lock."""
    try:
        return call()
    except BusyError:
        return None


def has_node(ws: Workspace, query: str, fragment: str) -> bool:
    r = ws.graph.activate("t", query, learn=False)
    return any(fragment in a.node_id for a in r.activated[:5])


def start(ws: Workspace, **kw: Any) -> Watcher:
    kw.setdefault("prime", ws.graph.prime_live_roots)  # as `m1nd serve` does: small batches may be patched
    w = Watcher(ws.settings, lambda path, **o: ws.graph.ingest(path, embed="skip", **o), **kw).start()
    assert w.ready.wait(30), "the file watch was never installed"
    return w


def add_function(path: Path, name: str) -> None:
    path.write_text(path.read_text() + f"\n\ndef {name}(order):\n    return price_of(order)\n", encoding="utf-8")


def test_edit_reaches_activate_and_matches_full_ingest(git_repo: Path, ws_factory, tmp_path: Path) -> None:
    ws = ws_factory(git_repo)
    ws.graph.ingest(str(git_repo), embed="skip")
    w = start(ws)
    try:
        add_function(git_repo / "src/shop/cart.py", "reconcile_ledger_quokka")
        wait_for(lambda: has_node(ws, "reconcile_ledger_quokka", "fn::reconcile_ledger_quokka"), "the new function")
        (git_repo / "src/shop/pricing.py").unlink()  # a deletion: its nodes and the edges into them go
        wait_for(lambda: not any("pricing.py" in a.node_id for a in ws.graph.activate(
            "t", "price_of apply_discount", learn=False).activated), "the deleted file to leave the graph")
        assert_converges(ws, [w], tmp_path, git_repo)
        assert ws.graph.activate("t", "reconcile ledger", learn=False).freshness["stale"] is False
    finally:
        w.stop()


def test_stale_and_pending_files_while_a_batch_waits(git_repo: Path, ws_factory) -> None:
    ws = ws_factory(git_repo)
    ws.graph.ingest(str(git_repo), embed="skip")
    gate = threading.Event()

    def gated_ingest(path: str, **opts: Any) -> dict[str, Any]:
        gate.wait(SETTLE_S)  # the batch is pending until the test lets the (real) ingest run
        return ws.graph.ingest(path, embed="skip", **opts)

    w = Watcher(ws.settings, gated_ingest, catch_up=False).start()
    assert w.ready.wait(30)
    try:
        add_function(git_repo / "src/shop/cart.py", "settle_invoice_narwhal")
        def stale_result() -> dict[str, Any] | None:
            out = ws.graph.activate("t", "cart", learn=False).freshness
            return out if out["stale"] else None

        r = wait_for(stale_result, "activate to report stale")
        assert r["pending_files"] == ["src/shop/cart.py"] and r["pending_count"] == 1
        assert "re-ingested" in r["stale_hint"]
        assert not has_node(ws, "settle_invoice_narwhal", "settle_invoice_narwhal")  # really behind
        gate.set()
        wait_for(lambda: has_node(ws, "settle_invoice_narwhal", "fn::settle_invoice_narwhal"), "the new function")
        wait_for(lambda: not freshness(ws.settings.workspace_dir)["stale"], "stale to clear")
    finally:
        gate.set()
        w.stop()
    assert not list(ws.settings.workspace_dir.glob("watch-*.json")), "a stopped watcher leaves no state behind"


def test_branch_switch_is_one_batch_and_exact(git_repo: Path, ws_factory, tmp_path: Path) -> None:
    git(git_repo, "checkout", "-q", "-b", "feature")
    for k in range(40):
        (git_repo / f"src/shop/gen_{k}.py").write_text(f"def generated_{k}(x):\n    return x + {k}\n")
    add_function(git_repo / "src/shop/cart.py", "feature_only_pangolin")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "feature", date="2026-01-05T12:00:00Z")
    git(git_repo, "checkout", "-q", "main")
    ws = ws_factory(git_repo)
    ws.graph.ingest(str(git_repo), embed="skip")
    calls: list[str] = []

    def counted(path: str, **opts: Any) -> dict[str, Any]:
        calls.append(path)
        return ws.graph.ingest(path, embed="skip", **opts)

    w = Watcher(ws.settings, counted).start()
    assert w.ready.wait(30)
    try:
        git(git_repo, "checkout", "-q", "feature")  # 42 files change at once
        wait_for(lambda: has_node(ws, "feature_only_pangolin", "fn::feature_only_pangolin"), "the branch's code")
        assert_converges(ws, [w], tmp_path, git_repo)
        # one ingest takes the whole switch (a few more only if the checkout straddled batch boundaries)
        assert 1 <= len(calls) < 10, calls
    finally:
        w.stop()


def test_concurrent_watchers_and_cli_ingest_keep_one_exact_graph(git_repo: Path, ws_factory, tmp_path: Path) -> None:
    """Two watchers (each its own connection, as two servers would have) and CLI ingests in another process, all
    on one store, through a sequence of edits: the store ends equal to a fresh full ingest, without duplicates."""
    home = tmp_path / "home"
    a, b = ws_factory(git_repo, home), ws_factory(git_repo, home)
    a.graph.ingest(str(git_repo), embed="skip")
    wa, wb = start(a), start(b)
    env = {"M1ND_HOME": str(home), "M1ND_WORKSPACE": str(git_repo), "M1ND_EMBEDDER": "hashing"}
    import os

    cli = subprocess.Popen(  # a CLI ingest loop racing the watchers (busy answers are expected and fine)
        [sys.executable, "-c", ("import subprocess, sys\nfor _ in range(6):\n    subprocess.run([sys.executable, "
                                "'-m', 'm1nd', 'ingest', sys.argv[1], '--embed', 'skip'], capture_output=True)\n"),
         str(git_repo)],
        env={**os.environ, **env})
    try:
        for k in range(8):
            add_function(git_repo / ("src/shop/cart.py" if k % 2 else "src/shop/store.py"), f"edit_step_{k}_okapi")
            time.sleep(0.15)
        (git_repo / "src/shop/extra.py").write_text("def brand_new_module_ibex():\n    return 1\n")
        cli.wait(timeout=SETTLE_S)
        for ws in (a, b):
            wait_for(lambda ws=ws: has_node(ws, "brand_new_module_ibex", "brand_new_module_ibex"), "the last edit")
        assert_converges(a, [wa, wb], tmp_path, git_repo)
        # a last ordinary ingest, as a user would run: nothing may be left to do
        last = wait_for(lambda: busy_retry(lambda: a.graph.ingest(str(git_repo), embed="skip")), "the ingest lock")
        assert last.changed is False
        db = a.graph.store.db
        assert db.scalar("SELECT COUNT(*) FROM nodes") == db.scalar("SELECT COUNT(DISTINCT ext_id) FROM nodes")
        assert db.scalar("SELECT COUNT(*) FROM files") == db.scalar(
            "SELECT COUNT(*) FROM (SELECT DISTINCT root_id, relpath FROM files)")
        assert not db.scalar("SELECT value FROM meta WHERE key = 'ingest_lock'"), "the ingest lock was released"
        for k in range(8):
            assert has_node(a, f"edit_step_{k}_okapi", f"edit_step_{k}_okapi")
    finally:
        if cli.poll() is None:
            cli.kill()
        wa.stop()
        wb.stop()


@pytest.mark.parametrize("edits", [3])
def test_random_edit_sequences_match_full_ingest(git_repo: Path, ws_factory, tmp_path: Path, edits: int) -> None:
    """Hypothesis draws edit sequences (add, rename, body change, delete, new file); after each sequence the
    watched graph equals a fresh full ingest."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    ws = ws_factory(git_repo)
    ws.graph.ingest(str(git_repo), embed="skip")
    reports: list[dict[str, Any]] = []
    w = start(ws, on_report=reports.append)
    files = ["src/shop/cart.py", "src/shop/pricing.py", "src/shop/store.py"]
    counter = iter(range(10_000))
    op = st.tuples(st.sampled_from(["add", "body", "rename", "delete", "new"]), st.sampled_from(files))

    @settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(st.lists(op, min_size=1, max_size=edits))
    def run(ops: list[tuple[str, str]]) -> None:
        marker = f"marker_{next(counter)}_tapir"
        for kind, rel in ops:
            p = git_repo / rel
            if kind == "delete" and p.exists():
                p.unlink()
                continue
            text = p.read_text() if p.exists() else ""
            n = next(counter)
            if kind == "add" or not text:
                text += f"\n\ndef added_{n}(x):\n    return price_of(x)\n"
            elif kind == "body":
                text = text.replace("return", f"_ = {n}\n    return", 1) if "return" in text else text + "\n"
            elif kind == "rename":
                text = text.replace("def ", f"def r{n}_", 1)
            else:
                (git_repo / f"src/shop/new_{n}.py").write_text(f"from .cart import Cart\n\n\ndef new_{n}():\n"
                                                               f"    return Cart(None)\n")
            p.write_text(text)
        (git_repo / "src/shop/marker.py").write_text(f"def {marker}():\n    return 1\n")
        wait_for(lambda: has_node(ws, marker, marker), "the sequence's last edit")
        assert_converges(ws, [w], tmp_path, git_repo)

    try:
        run()
    finally:
        w.stop()
    assert reports and all("error" not in r for r in reports)


def assert_indexes_fresh(ws: Workspace) -> None:
    """The served generation's text indexes (made from the previous generation's after a patch) equal a full build
    of its node table."""
    from m1nd.graph.lexicon import TermIndex, node_terms_from_blobs
    from m1nd.graph.semantic import TrigramIndex

    g = ws.graph.graph()
    assert g.lexicon is not None
    lex = TermIndex.build(g.nodes, node_terms_from_blobs(g.nodes, ws.graph.store.extract_terms()))
    tri = TrigramIndex.build(g.nodes)
    assert lex.terms == g.lexicon.terms
    for k in TermIndex._ARRAYS:
        a, b = getattr(lex, k), getattr(g.lexicon, k)
        assert a.dtype == b.dtype and np.array_equal(a, b), k
    for k in ("codes", "idf", "indptr", "nodes", "weights"):
        a, b = getattr(tri, k), getattr(g.trigram, k)
        assert a.dtype == b.dtype and np.array_equal(a, b), k
    # the node table and the CSR (patched from the previous generation's) equal a full read of the store
    from m1nd.graph.engine import Engine
    from m1nd.graph.model import PAGERANK_MASK
    from m1nd.graph.nodes import NodeTable

    cols, edges = ws.graph.store.load_columns()
    fresh = NodeTable.from_columns(cols)
    engine = Engine.from_edges(fresh.n, edges["src"], edges["dst"], edges["w"], edges["w0"], edges["relation"])
    fresh.pagerank = engine.pagerank(mask=PAGERANK_MASK)
    for k, v in fresh.arrays().items():
        got = g.nodes.arrays()[k]
        assert got.dtype == v.dtype and np.array_equal(got, v), k
    for k, v in engine.arrays().items():
        assert np.array_equal(g.engine.arrays()[k], v), k


def test_small_edits_are_patched_in_place_and_exact(git_repo: Path, ws_factory, tmp_path: Path) -> None:
    """A body edit and a new function nobody calls yet are patched into the graph (no whole-root ingest); a new
    file is not (the full incremental ingest runs); each time the store equals a fresh full ingest."""
    ws = ws_factory(git_repo)
    ws.graph.ingest(str(git_repo), embed="skip")
    reports: list[dict[str, Any]] = []
    w = start(ws, on_report=reports.append, catch_up=False)  # as the server's watcher
    wait_for(w.idle, "the kept resolver")
    try:
        cart = git_repo / "src/shop/cart.py"
        cart.write_text(cart.read_text().replace("return", "_ = apply_discount(1.0)\n        return", 1))
        wait_for(lambda: reports and w.idle(), "the body edit's batch")
        assert reports[-1].get("patched") is True and reports[-1]["changed"], reports
        assert_converges(ws, [w], tmp_path, git_repo)
        assert_indexes_fresh(ws)
        add_function(cart, "settle_invoice_okapi")
        wait_for(lambda: has_node(ws, "settle_invoice_okapi", "fn::settle_invoice_okapi"), "the new function")
        assert reports[-1].get("patched") is True and reports[-1]["nodes"]["created"] == 1, reports[-1]
        assert_converges(ws, [w], tmp_path, git_repo)
        assert_indexes_fresh(ws)
        # a rename: the old name's terms leave the vocabulary, the new one's come in
        cart.write_text(cart.read_text().replace("settle_invoice_okapi", "settle_receipt_dingo"))
        wait_for(lambda: has_node(ws, "settle_receipt_dingo", "fn::settle_receipt_dingo"), "the renamed function")
        assert reports[-1].get("patched") is True and reports[-1]["nodes"]["removed"] == 1, reports[-1]
        assert_converges(ws, [w], tmp_path, git_repo)
        assert_indexes_fresh(ws)
        assert "okapi" not in ws.graph.graph().lexicon.term_id
        n = len(reports)
        (git_repo / "src/shop/audit.py").write_text("def audit_trail_wombat():\n    return 1\n")
        wait_for(lambda: has_node(ws, "audit_trail_wombat", "audit_trail_wombat"), "the new file")
        assert len(reports) > n and "patched" not in reports[-1], reports[-1]
        assert_converges(ws, [w], tmp_path, git_repo)
        add_function(cart, "refund_ledger_numbat")  # the resolver the full ingest left behind is patched next
        wait_for(lambda: has_node(ws, "refund_ledger_numbat", "fn::refund_ledger_numbat"), "the next function")
        assert reports[-1].get("patched") is True, reports[-1]
        assert_converges(ws, [w], tmp_path, git_repo)
        assert_indexes_fresh(ws)
    finally:
        w.stop()


def test_a_starting_watcher_catches_up_with_edits_made_while_none_ran(git_repo: Path, ws_factory,
                                                                      tmp_path: Path) -> None:
    """As the server's watcher starts (no whole-root catch-up): one walk finds the file edited and the file added
    while nothing watched, and the first batch brings the graph to what a full ingest gives."""
    ws = ws_factory(git_repo)
    ws.graph.ingest(str(git_repo), embed="skip")
    add_function(git_repo / "src/shop/cart.py", "reopen_basket_quoll")
    (git_repo / "src/shop/late.py").write_text("def added_offline_kiwi():\n    return 2\n")
    reports: list[dict[str, Any]] = []
    w = start(ws, on_report=reports.append, catch_up=False,
              stale_files=lambda: ws.graph.live_roots().stale_files())
    try:
        wait_for(lambda: has_node(ws, "added_offline_kiwi", "added_offline_kiwi"), "the file added offline")
        assert has_node(ws, "reopen_basket_quoll", "fn::reopen_basket_quoll")
        assert_converges(ws, [w], tmp_path, git_repo)
    finally:
        w.stop()


def test_an_offline_edit_of_an_existing_file_is_patched_at_start(git_repo: Path, ws_factory, tmp_path: Path) -> None:
    ws = ws_factory(git_repo)
    ws.graph.ingest(str(git_repo), embed="skip")
    add_function(git_repo / "src/shop/pricing.py", "tariff_table_wallaby")
    reports: list[dict[str, Any]] = []
    w = start(ws, on_report=reports.append, catch_up=False,
              stale_files=lambda: ws.graph.live_roots().stale_files())
    try:
        wait_for(lambda: has_node(ws, "tariff_table_wallaby", "fn::tariff_table_wallaby"), "the offline edit")
        assert reports[0].get("patched") is True and reports[0]["files_parsed"] == 1, reports[0]
        assert_converges(ws, [w], tmp_path, git_repo)
    finally:
        w.stop()
