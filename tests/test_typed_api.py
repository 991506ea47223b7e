"""The typed Python API (``Workspace.activate(...) -> ActivationResult`` and friends, :mod:`m1nd.api`): the same
answers as the tools, as dataclasses, on a real ingested repository and a real memory store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from m1nd import Workspace, call_tool
from m1nd.api import (ActivationHit, ActivationResult, Added, ClaimEvidence, DivergeResult, DriftResult, HealthReport,
                      HypothesisResult, ImpactResult, IngestReport, LearnResult, MissingResult, NodeBrief,
                      PersistResult, PerspectiveBack, PerspectiveClosed, PerspectiveFollowed, PerspectiveList,
                      PerspectiveRoutes, PerspectiveStarted, TraceResult, WarmupResult, WhyResult)
from m1nd.config import Settings

FILES = {
    "shop/cart.py": '''from .pricing import price_of


class Cart:
    """A customer's cart of items."""

    def __init__(self):
        self.items = []

    def add_item(self, sku, qty=1):
        self.items.append((sku, qty))

    def total(self):
        return sum(price_of(s) * q for s, q in self.items)
''',
    "shop/pricing.py": '''PRICES = {"apple": 1.0}


def price_of(sku):
    """The unit price of a product."""
    return PRICES[sku]
''',
    "tests/test_cart.py": '''from shop.cart import Cart


def test_total():
    c = Cart()
    c.add_item("apple", 2)
    assert c.total() == 2.0
''',
}


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    monkeypatch.setenv("M1ND_EMBEDDER", "hashing")
    repo = tmp_path / "repo"
    for rel, text in FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    w = Workspace(Settings(home=tmp_path / "home", workspace_key=repo, busy_timeout_ms=5000))
    report = w.ingest(str(repo), embed="skip")
    assert isinstance(report, IngestReport)
    assert report.files_scanned == 3 and report.graph_generation >= 1 and report.changed
    assert report.nodes["total"] == report.data["nodes"]["total"] > 5
    yield w
    w.close()


def _tool(w: Workspace, name: str, **args: object) -> dict:
    res = call_tool(w, name, {"agent_id": "python", "max_output_chars": 100000, **args})
    assert not res.is_error, res.structured
    return res.structured


def test_activate_is_the_tool_answer_typed(ws: Workspace) -> None:
    typed = ws.activate("cart total price", top_k=5, coactivation_ltp=False)
    wire = _tool(ws, "activate", query="cart total price", top_k=5, coactivation_ltp=False)
    assert isinstance(typed, ActivationResult) and all(isinstance(h, ActivationHit) for h in typed.activated)
    assert typed.node_ids == [a["node_id"] for a in wire["activated"]]
    assert [h.activation for h in typed.activated] == [a["activation"] for a in wire["activated"]]
    top = typed.activated[0]
    assert top.source_path.startswith("shop/") and top.line_end >= top.line_start >= 1
    assert set(top.dimensions) == set(wire["activated"][0]["dimensions"])
    assert [s.node_id for s in typed.seeds] == [s["node_id"] for s in wire["seeds"]]
    assert typed.graph_generation == wire["graph_generation"] and typed.query == "cart total price"


def test_why_and_impact_typed(ws: Workspace) -> None:
    src, dst = "file::shop/cart.py::class::Cart::fn::total", "file::shop/pricing.py::fn::price_of"
    why = ws.why(src, dst)
    assert isinstance(why, WhyResult) and why.paths and why.total_paths_found >= len(why.paths)
    assert why.paths[0].nodes[0] == src and why.paths[0].nodes[-1] == dst
    assert len(why.paths[0].relations) == len(why.paths[0].nodes) - 1
    assert [p.nodes for p in why.paths] == [p["nodes"] for p in _tool(ws, "why", source=src, target=dst)["paths"]]
    imp = ws.impact(dst, direction="reverse", top_k=10)
    assert isinstance(imp, ImpactResult) and imp.direction == "reverse"
    assert src in {e.node_id for e in imp.blast_radius}
    assert all(e.signal_strength > 0 and e.hop_distance >= 1 for e in imp.blast_radius)


# What the tool layer adds to a service's answer (issue 16 item 3): the agent-facing hint, the call's timing and
# the response size. Everything else on the wire is the typed result, key for key and in the same order.
TOOL_LAYER_KEYS = ("hint", "elapsed_ms", "response_chars")


def _service_part(wire: dict) -> list[tuple[str, object]]:
    return [(k, v) for k, v in wire.items() if k not in TOOL_LAYER_KEYS]


def test_the_wire_is_the_typed_result_plus_the_tool_layers_fields(ws: Workspace) -> None:
    typed = ws.activate("cart total price", top_k=5, coactivation_ltp=False)
    wire = _tool(ws, "activate", query="cart total price", top_k=5, coactivation_ltp=False)
    assert list(typed.to_dict().items()) == _service_part(wire)
    assert wire["hint"].startswith("then: learn") and "elapsed_ms" in wire
    src, dst = "file::shop/cart.py::class::Cart::fn::total", "file::shop/pricing.py::fn::price_of"
    wire = _tool(ws, "why", source=src, target=dst)
    assert list(ws.why(src, dst).to_dict().items()) == _service_part(wire) and "elapsed_ms" in wire
    wire = _tool(ws, "impact", node_id=dst, direction="reverse", top_k=10)
    assert list(ws.impact(dst, direction="reverse", top_k=10).to_dict().items()) == _service_part(wire)
    assert wire["hint"].startswith("run why SOURCE TARGET")


def test_warmup_and_missing_typed(ws: Workspace) -> None:
    wire = _tool(ws, "missing", query="cart total price")
    typed_missing = ws.missing("cart total price")
    assert isinstance(typed_missing, MissingResult)
    assert list(typed_missing.to_dict().items()) == _service_part(wire)
    primed = ws.warmup("fix the cart total", agent="warm")
    assert isinstance(primed, WarmupResult) and primed.primed_nodes and primed.total_primed == len(primed.primed_nodes)
    boosts = [p.boost for p in primed.primed_nodes]
    assert boosts == sorted(boosts, reverse=True) and boosts[0] == pytest.approx(0.15)
    wire = _tool(ws, "warmup", agent_id="warm2", task_description="fix the cart total")
    assert _service_part(wire) == list(primed.to_dict().items())
    assert wire["hint"] == "later activate calls by this agent are primed toward these nodes"
    assert ws.warmup("x", agent="warm", boost_strength=0).primed_nodes == []


def test_trail_results_are_typed(ws: Workspace) -> None:
    from m1nd.codegraph.results import TrailList, TrailResumed, TrailSaved
    from m1nd.codegraph.trails import list_trails, resume, save

    src = "file::shop/cart.py::class::Cart::fn::total"
    saved = save(ws.graph, "python", "typed trail", open_questions=["who calls it?"],
                 visited_nodes=[{"node_external_id": src}])
    assert isinstance(saved, TrailSaved) and saved.nodes_saved == 1 and saved.open_questions_saved == 1
    listed = list_trails(ws.graph)
    assert isinstance(listed, TrailList) and listed.trails[0].trail_id == saved.trail_id
    assert list(listed.to_dict().items()) == _service_part(_tool(ws, "trail_list"))
    back = resume(ws.graph, "python", saved.trail_id)
    assert isinstance(back, TrailResumed) and back.trail.label == "typed trail" and back.next_focus_node == src
    wire = _tool(ws, "trail_resume", trail_id=saved.trail_id)  # (a resume touches last_modified_ms: keys only)
    assert list(back.to_dict()) == [k for k, _ in _service_part(wire)]
    assert list(back.to_dict()["trail"]) == list(wire["trail"]) and "stale" not in wire["trail"]


def test_hypothesize_and_trace_typed(ws: Workspace) -> None:
    claim = "`file::shop/cart.py::class::Cart::fn::total` depends on `file::shop/pricing.py::fn::price_of`"
    typed = ws.hypothesize(claim)
    assert isinstance(typed, HypothesisResult) and typed.claim_type == "depends_on"
    evidence = typed.supporting_evidence + typed.contradicting_evidence
    assert typed.verdict in ("likely_true", "inconclusive", "likely_false") and evidence
    assert all(isinstance(e, ClaimEvidence) for e in evidence) and 0 < typed.confidence < 1
    assert typed.subject_nodes[0].node_id == "file::shop/cart.py::class::Cart::fn::total"
    assert list(typed.to_dict().items()) == _service_part(_tool(ws, "hypothesize", claim=claim))
    trace = ('Traceback (most recent call last):\n  File "shop/cart.py", line 14, in total\n'
             '    return sum(price_of(s) * q for s, q in self.items)\n  File "shop/pricing.py", line 6, in price_of\n'
             '    return PRICES[sku]\nKeyError: \'pear\'\n')
    suspects = ws.trace(trace, top_k=5)
    assert isinstance(suspects, TraceResult) and suspects.frames_total == 2 and len(suspects.mapped) == 2
    assert suspects.suspects[0].in_trace and suspects.suspects[0].node_id == "file::shop/pricing.py::fn::price_of"
    wire = _tool(ws, "trace", trace=trace, top_k=5)
    assert list(suspects.to_dict().items()) == _service_part(wire) and "hint" not in wire
    elsewhere = trace.replace("shop/cart.py", "other/zz.py").replace("shop/pricing.py", "other/yy.py")
    unmapped = _tool(ws, "trace", trace=elsewhere)
    assert unmapped["hint"].startswith("no frame matched an ingested file")


def test_learning_calls_typed(ws: Workspace) -> None:
    src = "file::shop/cart.py::class::Cart::fn::total"
    assert isinstance(ws.persist("baseline"), PersistResult)
    learned = ws.learn("cart total price", "correct", [src])
    assert isinstance(learned, LearnResult) and learned.feedback == "correct" and learned.seeds_used
    assert learned.weights_generation >= 1 and learned.reported_labels == ["total"]
    assert "reported_labels" not in learned.to_dict()
    wire = _tool(ws, "learn", query="zzqq nothing", feedback="correct", node_ids=[src])
    assert wire["seeds_used"] == [] and wire["hint"].endswith('pass a query that names the code, e.g. "total"')
    drift = ws.drift("this_session")
    assert isinstance(drift, DriftResult) and drift.learn_events_since == 2 and drift.weights is not None
    assert drift.weights.weights_changed_total == len(drift.weights.top_weight_drifts) > 0
    wire = _tool(ws, "drift", since="this_session")
    assert [k for k, _ in _service_part(wire)] == list(drift.to_dict())
    assert "top_weight_drifts" not in ws.drift("this_session", include_weight_drift=False).to_dict()
    saved = ws.persist("status")
    assert saved.baseline_id is None and list(saved.to_dict())[0] == "action"
    assert "baseline_id" not in saved.to_dict() and ws.persist("baseline").baseline_id is not None
    diverged = ws.diverge("this_session")
    assert isinstance(diverged, DivergeResult) and diverged.structural_drift == 0.0 and diverged.new_nodes == []
    assert list(diverged.to_dict().items()) == _service_part(_tool(ws, "diverge", baseline="this_session"))
    health = ws.health()
    assert isinstance(health, HealthReport) and health.node_count > 5 and health.status in ("ok", "degraded")
    assert [k for k, _ in _service_part(_tool(ws, "health"))] == list(health.to_dict())


def test_perspective_results_are_typed(ws: Workspace) -> None:
    svc = ws.perspectives
    started = svc.start("python", "cart total price")
    assert isinstance(started, PerspectiveStarted) and started.routes and started.route_set_version == 1
    assert started.seeds and all(isinstance(s, NodeBrief) for s in started.seeds) and started.mode_note is None
    wire = _tool(ws, "perspective_start", query="cart total price")
    assert [k for k, _ in _service_part(wire)] == list(started.to_dict())
    pid, version = started.perspective_id, started.route_set_version
    page = svc.routes("python", pid, 1, 2, version)
    assert isinstance(page, PerspectiveRoutes) and len(page.routes) <= 2 and not page.version_mismatch
    assert list(page.to_dict().items()) == _service_part(
        _tool(ws, "perspective_routes", perspective_id=pid, page=1, page_size=2, route_set_version=version))
    moved = svc.follow("python", pid, version, route_index=started.routes[0]["index"])
    assert isinstance(moved, PerspectiveFollowed) and moved.route_set_version == version + 1
    back = svc.back("python", pid)
    assert isinstance(back, PerspectiveBack) and back.restored_focus == started.focus_node
    listed = svc.list("python")
    assert isinstance(listed, PerspectiveList) and {p.perspective_id for p in listed.perspectives} >= {pid}
    assert list(listed.to_dict().items()) == _service_part(_tool(ws, "perspective_list"))
    closed = svc.close("python", pid)
    assert isinstance(closed, PerspectiveClosed) and closed.closed


def test_unknown_node_is_a_clear_error(ws: Workspace) -> None:
    from m1nd.errors import M1ndError

    with pytest.raises(M1ndError, match="no_such"):
        ws.impact("file::no_such.py")


def test_memory_add_and_search_typed(ws: Workspace) -> None:
    added = ws.memory_add("Cart totals use unit prices", "price_of is the only price source", category="decision",
                          tags=["pricing"], code_refs=["file::shop/pricing.py::fn::price_of"])
    assert isinstance(added, Added) and added.id.startswith("kn-") and added.category == "decision"
    assert added.tags == ["pricing"] and added.body == "price_of is the only price source" and not added.fact
    found = ws.memory_search("unit prices")
    wire = _tool(ws, "memory_search", query="unit prices")
    assert found.mode == wire["mode"] and [e.id for e in found.results] == [r["id"] for r in wire["results"]]
    assert found.results[0].id == added.id
    hit = found.results[0]
    assert hit.title == "Cart totals use unit prices" and hit.tags == ["pricing"]
    assert hit.code_refs == ["file::shop/pricing.py::fn::price_of"] and "price_of" in hit.body
    with_memory = ws.activate("price of", include_memory=True, coactivation_ltp=False)
    assert added.id in {m["id"] for m in with_memory.data["related_memories"]}


def test_memory_adds_are_typed_and_their_dicts_are_the_wire(ws: Workspace) -> None:
    """One add answers Added, AlreadySaved or ThreadClosed and a batch BatchAdded; ``to_dict()`` is what the tools
    send (the tool adds only its ``notes``, its batch indexes and counts, and ``response_chars``)."""
    from m1nd.api import AlreadySaved, BatchAdded, BatchItem, ThreadClosed

    fields = {"title": "Totals round once", "content": "at the end", "category": "decision", "session_id": "s-add"}
    first = ws.memory_add(**fields)
    assert isinstance(first, Added) and first.dedup is None and first.session_id == "s-add"
    again = ws.memory_add(**fields)
    assert again == AlreadySaved(id=first.id, title="Totals round once") and again.kind == "skipped"
    wire = _tool(ws, "memory_add", **fields)
    assert _bare(wire) == again.to_dict() and wire["status"] == "already_persisted"
    opened = ws.memory_add(type="thread_opened", content="round per line?")
    assert isinstance(opened, Added) and opened.fact and opened.fact_type == "thread_opened"
    assert opened.dedup == "bypassed_no_session" and list(opened.to_dict())[-2:] == ["dedup", "fact_type"]
    closed = ws.memory_add(type="thread_closed", thread_id=opened.id)
    assert closed == ThreadClosed(id=opened.id) and closed.to_dict() == {"id": opened.id, "closed": True}
    mine = ws.memory_add("Mine", "x", category="insight", private=True)
    assert isinstance(mine, Added) and (mine.visibility, mine.owner) == ("private", "python")
    lines = ['{"title": "B1", "category": "insight", "content": "x", "session_id": "s-b"}',
             '{"title": "B1", "category": "insight", "content": "x", "session_id": "s-b"}', "not json",
             '{"type": "decision", "content": "batch"}']
    batch = ws.memory.add_batch(lines, agent="python")
    assert isinstance(batch, BatchAdded) and batch.bypassed == [4] and batch.embed_deferred is None
    assert [(i.line, i.kind) for i in batch.events] == [(1, "added"), (2, "skipped"), (4, "fact")]
    assert batch.already_saved == [BatchItem(2, batch.added[0].id, "B1", "skipped")]
    assert batch.to_dict()["failed"] == [{"line": 3, "error": "invalid JSON: Expecting value (column 1)"}]
    assert list(batch.to_dict()) == ["added", "already_saved", "failed", "embedded"]
    assert batch.to_dict()["already_saved"] == [{"line": 2, "id": batch.added[0].id, "title": "B1"}]


def test_memory_links_and_deletes_are_typed(ws: Workspace) -> None:
    from m1nd.api import Deleted, Reinforcement, Related, Relationship

    a = ws.memory_add("Prices come from one table", "PRICES", category="decision").id
    b = ws.memory_add("Cart totals use unit prices", "price_of", category="decision").id
    linked = ws.memory.relate(b, a, "extends", agent="python")
    assert isinstance(linked, Related) and linked.reinforced and not linked.existing
    assert list(linked.to_dict()) == ["id", "from", "to", "type", "reinforced", "existing"]
    again = _tool(ws, "memory_relate", from_id=b, to_id=a, type="extends")
    assert again["existing"] is True and again["id"] == linked.id and again["from"] == b
    eid, rels = ws.memory.relationships(a, agent="python")
    assert eid == a and [r for r in rels if isinstance(r, Relationship)] == rels and rels[0].direction == "in"
    assert _tool(ws, "memory_relationships", id=a)["relationships"] == [r.to_dict() for r in rels]
    up = ws.memory.reinforce(a, agent="python", amount=2, cap=3)
    assert isinstance(up, Reinforcement) and (up.old_resonance, up.new_resonance, up.capped) == (1, 3, False)
    assert "cap" not in up.to_dict() and up.cap == 3
    wire = _tool(ws, "memory_reinforce", id=a, amount=1, cap=3)
    assert wire["capped"] is True and "cap" not in wire
    gone = ws.memory.unrelate(linked.id, agent="python")
    assert isinstance(gone, Deleted) and gone.to_dict() == {"deleted": True, "id": linked.id}
    removed = ws.memory.delete(b, agent="python")
    assert isinstance(removed, Deleted) and removed.id == b


def test_ingest_report_is_typed_and_stored_without_its_timing(ws: Workspace) -> None:
    """The ingest report is a dataclass and the record stored with the root; the record no longer holds the duration,
    which the tool layer (and the watcher) put on the wire where it has always been, before ``warnings``."""
    from m1nd.watch import timed_report

    root = ws.graph.store.roots()[0]
    stored = dict(root.report or {})
    assert "elapsed_ms" not in stored and stored["changed"] is True and "patched" not in stored
    again = ws.ingest(root.path, embed="skip")
    assert isinstance(again, IngestReport) and not again.changed and again.files_reused == 3
    assert list(again.to_dict()) == list(stored)  # "nothing changed" answers the stored record, same keys and order
    assert IngestReport.from_record(stored).to_dict() == stored
    wire = _tool(ws, "ingest", path=root.path, embed="skip")
    keys = [k for k in stored if k != "warnings"]
    assert list(wire) == [*keys, "elapsed_ms", "warnings", "response_chars"]
    assert {k: wire[k] for k in keys} == {k: v for k, v in again.to_dict().items() if k != "warnings"}
    watched = timed_report(again, 0.0)
    assert list(watched) == [*keys, "elapsed_ms", "warnings"]
    legacy = IngestReport.from_record({**stored, "elapsed_ms": 12.5, "patched": True})  # a record of before
    assert "elapsed_ms" not in legacy.to_dict() and list(legacy.to_dict())[-2:] == ["warnings", "patched"]


def _bare(wire: dict) -> dict:
    return {k: v for k, v in wire.items() if k not in ("hint", "elapsed_ms", "response_chars")}


def test_memory_changes_sessions_and_figures_are_typed(ws: Workspace) -> None:
    """Update, backups, restore, sessions, statistics, open threads, recent facts and registries answer dataclasses
    whose ``to_dict()`` is what the memory tools send, key for key and in order."""
    from m1nd.api import (Backup, FactSession, MemoryHealth, MemoryStats, OpenThread, RecentFact, RegistryValue,
                          Restored, Session, SessionClosed, SessionFact, Updated)

    eid = ws.memory_add("Prices come from one table", "PRICES", category="decision", tags=["pricing"]).id
    changed = ws.memory_update(eid, append="and nowhere else", add_tags=["cart"])
    assert isinstance(changed, Updated) and changed.id == eid and changed.bytes_added == len("and nowhere else")
    assert changed.changes == ["content: appended 16 bytes", "tags: pricing, cart"]
    same = _tool(ws, "memory_update", id=eid, title="Prices come from one table")
    assert _bare(same) == ws.memory_update(eid, title="Prices come from one table").to_dict()
    assert list(same) == ["id", "changes", "replacements", "bytes_added", "response_chars"] and same["changes"] == []
    backups = ws.memory_backups(eid)
    assert [b for b in backups if isinstance(b, Backup)] == backups and backups[0].operation == "append"
    listed = _tool(ws, "memory_restore", id=eid, list=True)
    assert listed["backups"] == [b.to_dict() for b in backups] and backups[0].body == "PRICES"
    back = ws.memory_restore(eid)
    assert isinstance(back, Restored) and (back.from_backup, back.operation) == (backups[0].id, "append")
    assert list(back.to_dict()) == ["restored", "id", "from_backup", "backup_created", "operation", "recreated"]
    assert ws.memory.show(eid, agent="python", activate=False)["body"] == "PRICES"

    opened = ws.memory.create_session(session_id="s-typed", agent="python")
    assert isinstance(opened, Session) and opened.ended_at is None and opened.created_by == "python"
    fact = ws.memory_add(type="thread_opened", content="should prices be per currency?", session_id="s-typed").id
    assert [s.id for s in ws.memory_sessions()] == [s["id"] for s in
                                                    _tool(ws, "memory_sessions", action="list")["sessions"]]
    facts = ws.memory.for_session("s-typed", agent="python")
    assert isinstance(facts[0], SessionFact) and facts[0].id == fact and facts[0].type == "thread_opened"
    wire = _tool(ws, "memory_sessions", action="facts", session_id="s-typed")
    assert wire["facts"] == [f.to_dict() for f in facts]
    of = ws.memory.fact_session(fact, agent="python")
    assert of == FactSession(fact_id=fact, session_id="s-typed")
    assert _bare(_tool(ws, "memory_sessions", action="session_of", fact_id=fact)) == {"action": "session_of",
                                                                                      **of.to_dict()}
    closed = ws.memory.close_session("s-typed")
    assert isinstance(closed, SessionClosed) and closed.to_dict() == {"id": "s-typed", "closed": True,
                                                                      "ended_at": closed.ended_at}

    threads = ws.memory_open_threads()
    assert isinstance(threads[0], OpenThread) and threads[0].id == fact and threads[0].state == "open"
    assert _tool(ws, "memory_open_threads")["threads"] == [t.to_dict() for t in threads]
    recent = ws.memory_recent(all_types=True)
    assert fact in {r.id for r in recent} and all(isinstance(r, RecentFact) for r in recent)  # resonance > 0.5
    assert _tool(ws, "memory_recent", all_types=True)["entries"] == [r.to_dict() for r in recent]
    stats, health = ws.memory_stats(), ws.memory.health(agent="python")
    assert isinstance(stats, MemoryStats) and stats.total == 2 and stats.categories == {"decision": 1, "thread": 1}
    assert isinstance(health, MemoryHealth) and health.total == 2
    figures = _tool(ws, "memory_stats")
    assert (figures["stats"], figures["health"]) == (stats.to_dict(), health.to_dict())
    categories = ws.memory.registry("categories")
    assert all(isinstance(c, RegistryValue) for c in categories) and "decision" in {c.id for c in categories}
    for kind in ("categories", "relationship_types", "fact_types", "resonance_types", "content_types", "tags"):
        values = ws.memory.registry(kind, agent="python")
        assert _tool(ws, "memory_registries", kind=kind)["values"] == [v if isinstance(v, str) else v.to_dict()
                                                                       for v in values]


def test_python_callers_get_the_tools_defaults() -> None:
    """One home per default (issue 16 item 6): a service method's keyword defaults are the tool's, so a Python caller
    (``Workspace.learn(...)`` forwards its options) gets what an agent gets."""
    import inspect

    from m1nd.codegraph.baselines import drift
    from m1nd.codegraph.learning import learn
    from m1nd.codegraph.service import CodeGraph
    from m1nd.codegraph.trails import list_trails
    from m1nd.graph.hypothesis import hypothesize
    from m1nd.graph.queries import impact, why
    from m1nd.tools.registry import load_all

    tools = load_all()
    checked = 0
    for name, fn in (("learn", learn), ("drift", drift), ("trace", CodeGraph.trace), ("warmup", CodeGraph.warmup),
                     ("missing", CodeGraph.missing), ("hypothesize", hypothesize), ("activate", CodeGraph.activate),
                     ("why", why), ("impact", impact), ("trail_list", list_trails)):
        signature = inspect.signature(fn).parameters
        for param in tools[name].params:
            arg = signature.get(param.name)
            if arg is not None and arg.default not in (inspect.Parameter.empty, None) and param.default is not None:
                assert arg.default == param.default, (name, param.name, arg.default, param.default)
                checked += 1
    assert checked >= 25


def test_learning_maintenance_is_typed(ws: Workspace) -> None:
    """The weights and trail maintenance calls of the command line answer dataclasses too (their ``to_dict()`` is
    what ``--json`` prints)."""
    from m1nd.api import TrailArchived, TrailDetail, WeightsReset, WeightStats

    node = "file::shop/pricing.py::fn::price_of"
    ws.learn("cart total price", "correct", [node])
    stats = ws.weight_stats(top=3)
    assert isinstance(stats, WeightStats) and stats.strengthened > 0 and 0 < len(stats.top) <= 3
    assert abs(stats.top[0].delta) == max(abs(c.delta) for c in stats.top)
    dry = ws.weights_reset(node=node)
    assert isinstance(dry, WeightsReset) and not dry.applied and dry.to_dict()["node"] == node
    saved = _tool(ws, "trail_save", label="prices", visited_nodes=[{"node_external_id": node}])["trail_id"]
    shown = ws.trail_show(saved)
    assert isinstance(shown, TrailDetail) and shown.label == "prices"
    assert shown.visited_nodes[0]["node_external_id"] == node
    assert ws.trail_archive(saved) == TrailArchived(trail_id=saved) and ws.trail_show(saved).status == "archived"
