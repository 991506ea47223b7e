"""Service-level behaviour that the CLI cannot easily provoke: optimistic concurrency, busy, ambiguity, hooks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from m1nd.errors import BusyError, InvalidInputError, M1ndError
from m1nd.memory.results import Added
from m1nd.memory.service import Filters, MemoryService
from m1nd.store.db import Database

# Note: another writer must use the same SQLite library (APSW) as the service: POSIX locks are per process, so a
# stdlib sqlite3 connection in this process would not see the service's locks at all.


def other_writer(svc: MemoryService, sql: str, params: tuple = ()) -> None:
    if svc.backend == "postgresql":  # another connection, committing on its own
        from memory_backends import execute

        execute(None, svc.url, sql, params)
        return
    db = Database(svc.path)
    try:
        with db.write():
            db.execute(sql, params)
    finally:
        db.close()


def add(svc: MemoryService, title: str, **kw: Any) -> str:
    raw = {"category": "insight", "title": title, "content": kw.pop("content", "body")}
    raw.update(kw)
    return svc.add(raw, agent="alice").id


def test_update_retries_when_rev_moves(service: MemoryService, monkeypatch: pytest.MonkeyPatch) -> None:
    eid = add(service, "T")
    real = MemoryService._plan_update
    calls = {"n": 0}

    def racing(self, e, c, agent, regs):  # another writer commits between our read and our write
        calls["n"] += 1
        if calls["n"] == 1:
            other_writer(self, "UPDATE entries SET resonance = 9, rev = rev + 1 WHERE id = ?", (eid,))
        return real(self, e, c, agent, regs)
    monkeypatch.setattr(MemoryService, "_plan_update", racing)
    res = service.update(eid, {"title": "New"}, agent="alice")
    assert res.changes == ["title: T -> New"] and calls["n"] == 2
    e = service.show(eid, agent="alice", activate=False)
    assert (e["title"], e["resonance"]) == ("New", 9)  # the other writer's change survived


def test_update_plan_is_typed(service: MemoryService) -> None:
    """The planner answers an UpdatePlan: the column values, the list fields, the anchors and the change lines."""
    from m1nd.memory.update_plan import UpdatePlan

    other = add(service, "Other")
    eid = add(service, "T", content="a b a", tags="x")
    with service._read() as tx:
        entry = service._entry(tx, service._resolve(tx, eid, "alice", "{id}"), "alice")
        regs = service._registries(tx)
    plan = service._plan_update(entry, {"title": "U", "find": "a", "replace": "c", "replace_all": True,
                                        "add_tags": "y", "add_anchors": other}, "alice", regs)
    assert isinstance(plan, UpdatePlan) and not plan.empty
    assert plan.values == {"title": "U", "body": "c b c"} and plan.tags == ["x", "y"] and plan.applicability is None
    assert plan.replacements == 2 and plan.bytes_added == 0 and len(plan.anchors_add) == 1 and not plan.anchors_remove
    assert plan.changes == ["title: T -> U", "content: 2 replacement(s)", "tags: x, y", f"anchors: added '{other}'"]
    same = service._plan_update(entry, {"title": "T", "tags": "x"}, "alice", regs)
    assert same.empty and same.changes == []


def test_update_gives_up_after_three_races(service: MemoryService, monkeypatch: pytest.MonkeyPatch) -> None:
    eid = add(service, "T")
    real = MemoryService._plan_update

    def always(self, e, c, agent, regs):
        other_writer(self, "UPDATE entries SET rev = rev + 1 WHERE id = ?", (eid,))
        return real(self, e, c, agent, regs)
    monkeypatch.setattr(MemoryService, "_plan_update", always)
    with pytest.raises(M1ndError, match=f"entry {eid} changed concurrently; retry"):
        service.update(eid, {"title": "New"}, agent="alice")


def test_busy_error_message(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    svc = MemoryService(path, busy_timeout_ms=100)
    con = Database(path)
    con.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(BusyError, match=r"memory database is busy \(another writer held it for 0.1 s\); retry"):
            add(svc, "T")
        assert svc.list_entries(Filters(), agent=None).entries == []  # readers are not blocked (WAL)
    finally:
        con.execute("ROLLBACK")
        con.close()
        svc.close()


def test_ambiguous_prefix(service: MemoryService) -> None:
    a = add(service, "A")
    b = add(service, "B")
    db = service.db
    with db.write():
        db.execute("UPDATE entries SET id = 'kn-1a2b3c4d00000001' WHERE id = ?", (a,))
        db.execute("UPDATE entries SET id = 'kn-1a2b3c4d9f000002' WHERE id = ?", (b,))
    with pytest.raises(InvalidInputError, match="id 'kn-1a2b3c4d' is ambiguous: kn-1a2b3c4d00…, kn-1a2b3c4d9f…"):
        service.show("1a2b3c4d", agent="alice")
    assert service.show("kn-1a2b3c4d9f", agent="alice").id == "kn-1a2b3c4d9f000002"


class FakeHook:
    model_id = "fake-model"

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.prepared: list[str] = []
        self.stored: list[int] = []

    def prepare(self, texts: list[str]) -> list[Any]:
        if self.fail:
            raise RuntimeError("model exploded")
        self.prepared.extend(texts)
        return [f"vec:{t}" for t in texts]

    def store(self, repo: Any, rowid: int, payload: Any, *, auto_anchor: bool) -> None:
        self.stored.append(rowid)


def test_vector_hook_runs_before_and_inside_the_write(tmp_path: Path) -> None:
    hook = FakeHook()
    svc = MemoryService(tmp_path / "m.db", vector_hook=hook)
    eid = add(svc, "Title", content="Body", tags="b,a")
    assert hook.prepared == ["Title\n\nBody\n\nTags: a, b"] and len(hook.stored) == 1
    svc.update(eid, {"resonance": 3}, agent="alice")
    assert len(hook.prepared) == 1  # metadata-only change: no re-embedding
    svc.update(eid, {"append": "more"}, agent="alice")
    assert hook.prepared[-1] == "Title\n\nBody\nmore\n\nTags: a, b"
    res = svc.add({"category": "insight", "title": "N", "content": "x"}, agent="alice", no_embed=True)
    assert len(hook.prepared) == 2 and isinstance(res, Added) and res.embed_deferred is None
    assert "embed_deferred" not in res.to_dict()
    svc.close()


def test_failing_embedder_defers_but_keeps_the_entry(tmp_path: Path) -> None:
    svc = MemoryService(tmp_path / "m.db", vector_hook=FakeHook(fail=True))
    res = svc.add({"category": "insight", "title": "T", "content": "x"}, agent="alice")
    assert isinstance(res, Added) and res.embed_deferred == "RuntimeError: model exploded"
    assert res.to_dict()["embed_deferred"] == "RuntimeError: model exploded"
    assert svc.stats(agent="alice").total == 1
    batch = svc.add_batch(['{"category": "insight", "title": "B", "content": "y"}'], agent="alice")
    assert batch.embed_deferred and len(batch.added) == 1 and batch.embedded == 0
    assert batch.to_dict()["embed_deferred"] == batch.embed_deferred
    svc.close()


def test_fts_and_tags_follow_every_write(service: MemoryService) -> None:
    eid = add(service, "Alpha", tags="one")
    f = Filters(visibility="include")
    assert [e.id for e in service.search("one", f, agent="alice").entries] == [eid]  # tags are searchable
    service.update(eid, {"tags": "two"}, agent="alice")
    assert service.search("one", f, agent="alice").entries == []
    assert [e.id for e in service.search("two", f, agent="alice").entries] == [eid]
    service.delete(eid, agent="alice")
    assert service.search("alpha", f, agent="alice").entries == []
    service.restore(eid, agent="alice")
    assert [e.id for e in service.search("alpha", f, agent="alice").entries] == [eid]
    db = service.db
    if service.backend == "sqlite":
        db.execute("INSERT INTO entries_fts(entries_fts) VALUES ('integrity-check')")
        assert db.integrity_check() == "ok"
    else:  # one keyword document per entry
        assert db.all("SELECT rowid FROM entries_fts") == db.all("SELECT rowid FROM entries")


def test_reads_survive_a_busy_database(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    svc = MemoryService(path, busy_timeout_ms=50)
    eid = add(svc, "Readable")
    con = Database(path)
    con.execute("BEGIN IMMEDIATE")
    try:
        e = svc.show(eid, agent="alice")  # the activation bookkeeping is skipped, the read is answered
        assert e["title"] == "Readable"
        assert e["activation_count"] == 0
    finally:
        con.execute("ROLLBACK")
        con.close()
    assert svc.show(eid, agent="alice")["activation_count"] == 1
    svc.close()


@pytest.mark.parametrize("limit", [1, 7, 50, 400])
def test_top_effective_matches_a_full_sort(service: MemoryService, limit: int) -> None:
    import random

    from m1nd.timeutil import format_ms, now_ms

    rng = random.Random(limit)
    types = [None, "foundational", "transformative", "operational", "ephemeral"]
    lines = [json.dumps({"category": "insight", "title": f"E{i}", "content": "x", "resonance": rng.randint(-3, 12),
                         **({"resonance_type": t} if (t := rng.choice(types)) else {})}) for i in range(300)]
    service.add_batch(lines, agent="alice", no_embed=True)
    db = service.db
    now = now_ms()
    with db.write():
        for (rowid,) in db.all("SELECT rowid FROM entries"):
            age = rng.uniform(0, 700) * 86_400_000
            last = format_ms(now - rng.uniform(0, age)) if rng.random() < 0.3 else None
            db.execute("UPDATE entries SET created_at = ?, last_activated = ? WHERE rowid = ?",
                       (format_ms(now - age), last, rowid))
    got = [e.id for e in service.list_entries(Filters(visibility="include"), agent="alice", sort="resonance",
                                              limit=limit).entries]
    want = [r[0] for r in db.all(
        "SELECT id FROM entries ORDER BY eff_res(resonance, resonance_type, last_activated, created_at, ?) DESC, id "
        "LIMIT ?", (now, limit))]
    assert got == want
