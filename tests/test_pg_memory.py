"""The knowledge memory on PostgreSQL against the SQLite store (issue 18, items 1, 2, 3 and 6): one table of searches
run on both stores over the same data, migration both ways, a server killed mid-batch, and eight writer processes.

The memory's command suites (tests/memory, tests/wake) run on both stores through their parametrized ``cli`` and
``service`` fixtures; this module holds what compares the two stores or breaks the server."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("psycopg")

from m1nd.errors import M1ndError, StoreError
from m1nd.memory.fts import ident_text
from m1nd.memory.semantic import vector_hook_for
from m1nd.memory.service import Filters, MemoryService
from m1nd.store.memory_copy import TABLES, copy_memory

# The shared table: entries written in this order on both stores (same rowids), then the searches below.
ENTRIES = [
    {"category": "pattern", "title": "Retry with exponential backoff", "content": "Wrap network calls; sleep "
     "between attempts and double the delay each time.", "tags": ["network", "resilience"]},
    {"category": "gotcha", "title": "SQLite WAL needs shared memory", "content": "The write-ahead log keeps a "
     "shm file; network filesystems break it. Backoff does not help.", "tags": ["sqlite"]},
    {"category": "decision", "title": "Connection pool size", "content": "Eight connections per process; the "
     "server caps at two hundred.", "tags": ["postgres", "network"]},
    {"category": "insight", "title": "Parsers fail on BOM", "content": "A byte order mark at the start of a "
     "file confuses the tokenizer; strip it before parsing.", "tags": ["parsing"]},
    {"category": "reference", "title": "HTTP status codes", "content": "Retry on 503 and 429 only; never "
     "retry a 400.", "tags": ["network", "http"]},
    {"category": "insight", "title": "Tokenizer speed", "content": "The tokenizer spends its time in "
     "regular expressions; precompile them.", "tags": ["performance", "parsing"]},
    {"category": "gotcha", "title": "Clock skew breaks leases", "content": "Lease expiry compares wall clocks "
     "of two machines; use the server's clock.", "tags": ["distributed"]},
    {"category": "pattern", "title": "getUserName camelCase lookup", "content": "Identifiers split on case "
     "boundaries: getUserName finds user name.", "tags": ["search"]},
]
PRIVATE = {"category": "insight", "title": "Private retry note", "content": "my own retry budget is three",
           "visibility": "private", "owner": "alice"}
# (query, filters) — keyword searches; each must find the same entries on both stores, in an order that differs
# only where a store gives equal scores.
KEYWORD = [
    ("retry", {}), ("network", {}), ("backoff", {}), ("tokenizer parsing", {}), ("pars*", {}),
    ('"shared memory"', {}), ("clock skew", {}), ("user name", {}), ("retry", {"visibility": "include"}),
    ("retry", {"categories": ["reference"]}), ("network", {"tags": ["postgres"]}), ("nonexistentword", {}),
    ("retry budget", {"visibility": "mine"}), ("server connections", {}),
]
SEMANTIC = ["how to retry failed network calls", "parsing files with a byte order mark", "database pool"]


def _fill(svc: MemoryService) -> None:
    for e in ENTRIES:
        out = svc.add(dict(e), agent="alice")
        assert out.id
    svc.add(dict(PRIVATE), agent="alice")


def _pair(tmp_path: Path, pg_url: str) -> tuple[MemoryService, MemoryService]:
    lite = MemoryService(tmp_path / "lite" / "memory.db",
                         vector_hook=vector_hook_for(tmp_path / "lite" / "memory.db"))
    pg = MemoryService(pg_url, vector_hook=vector_hook_for(tmp_path / "pg" / "memory.db", url=pg_url))
    return lite, pg


def _close(*svcs: MemoryService) -> None:
    for s in svcs:
        if s.vector_hook is not None:
            s.vector_hook.close()
        s.close()


def _ranked(svc: MemoryService, query: str, filters: dict[str, Any], mode: str) -> list[tuple[str, float]]:
    out = svc.search(query, Filters(**filters), agent="alice", mode=mode)
    return [(e["title"], e.to_json()["score"]) for e in out.entries]


def _strict_order(hits: list[tuple[str, float]]) -> set[tuple[str, str]]:
    """Pairs (a, b) where a scored strictly higher than b."""
    return {(a, b) for a, sa in hits for b, sb in hits if sa > sb + 1e-9}


@pytest.fixture(params=["postgresql", "postgresql+pgvector"])
def server_url(request: pytest.FixtureRequest) -> str:
    """Both kinds of server: semantic search on a local mirror of the vectors, and on the server with pgvector."""
    return request.getfixturevalue("pg_url" if request.param == "postgresql" else "pgvector_url")


def test_search_agrees_between_stores(tmp_path: Path, server_url: str, request: pytest.FixtureRequest) -> None:
    lite, pg = _pair(tmp_path, server_url)
    try:
        _fill(lite)
        _fill(pg)
        with pg.vector_hook.db.read():
            searches = pg.vector_hook.server_searches(pg.vector_hook.db)
        assert searches == request.node.callspec.params["server_url"].endswith("pgvector")
        for query, filters in KEYWORD:
            a, b = _ranked(lite, query, filters, "keyword"), _ranked(pg, query, filters, "keyword")
            assert {t for t, _ in a} == {t for t, _ in b}, (query, a, b)
            # order may differ only where a store's scores tie: no pair strictly ordered one way on one store
            # and strictly the other way on the other
            flipped = {(x, y) for x, y in _strict_order(a) if (y, x) in _strict_order(b)}
            assert not flipped, (query, a, b)
        assert _ranked(lite, "retry", {}, "keyword")  # the table is not vacuous
        for query in SEMANTIC:
            a, b = _ranked(lite, query, {}, "semantic"), _ranked(pg, query, {}, "semantic")
            assert [t for t, _ in a] == [t for t, _ in b], (query, a, b)
            assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-3)
            ha, hb = _ranked(lite, query, {}, "hybrid"), _ranked(pg, query, {}, "hybrid")
            assert {t for t, _ in ha} == {t for t, _ in hb}, (query, ha, hb)
        # the same entries, field for field (ids and timestamps differ: they were written twice)
        skip = {"id", "created_at", "updated_at", "last_activated", "embedded_at", "effective_resonance",
                "anchors"}
        la = [{k: v for k, v in e.to_json().items() if k not in skip}
              for e in lite.list_entries(Filters(visibility="include"), agent="alice", sort="id", limit=50).entries]
        pa = [{k: v for k, v in e.to_json().items() if k not in skip}
              for e in pg.list_entries(Filters(visibility="include"), agent="alice", sort="id", limit=50).entries]
        assert sorted(map(json.dumps, la)) == sorted(map(json.dumps, pa))
    finally:
        _close(lite, pg)


def test_effective_resonance_is_computed_identically(tmp_path: Path, pg_url: str) -> None:
    """eff_res in PL/pgSQL against the Python function the SQLite store registers."""
    from m1nd.memory.decay import effective_resonance

    pg = MemoryService(pg_url)
    try:
        now = 1_800_000_000_000
        cases = [(0, None, None, "2026-01-01T00:00:00.000Z"), (3, None, None, "2026-01-01T00:00:00.000Z"),
                 (5, "ephemeral", "2026-06-01T12:30:00.500Z", "2025-01-01T00:00:00.000Z"),
                 (9, "foundational", None, "2020-01-01T00:00:00.000Z"), (7, None, None, "2027-03-01T00:00:00Z"),
                 (-2, None, None, "2026-01-01T00:00:00.000+02:00"), (4, None, "garbage", "x"),
                 (6, "transformative", None, None), (2, None, None, "2026-05-01T00:00:00")]
        with pg.db.read():
            for r, t, la, ca in cases:
                got = pg.db.scalar("SELECT eff_res(?, ?, ?, ?, ?)", (r, t, la, ca, now))
                assert got == pytest.approx(effective_resonance(r, t, la, ca, now), rel=1e-12), (r, t, la, ca)
    finally:
        pg.close()


def _counts(svc: MemoryService) -> dict[str, int]:
    with svc.db.read():
        return {t: int(svc.db.scalar(f"SELECT count(*) FROM {t}")) for t, _, _ in TABLES}


def test_migrate_both_ways_loses_nothing(tmp_path: Path, server_url: str, make_home_cli) -> None:
    home = tmp_path / "home"
    cli = make_home_cli(home)
    for e in ENTRIES:
        args = ["add", "--category", e["category"], "-t", e["title"], "--content", e["content"],
                "--tags", ",".join(e["tags"]), "--session-id", "s-1"]
        assert cli(*args).code == 0
    ids = [r["id"] for r in json.loads(cli("list", "--json", "--limit", "50").out)]
    assert cli("relationships", "add", "--from", ids[0], "--to", ids[1], "--type", "related").code == 0
    assert cli("update", ids[2], "--content", "changed once").code == 0  # a backup row
    before = json.loads(cli("list", "--json", "--limit", "50").out)

    r = cli("migrate", "--to", server_url, "--json")
    assert r.code == 0, r.err
    assert "migrate: entries 8/8" in r.err
    report = json.loads(r.out)
    assert report["verified"] and report["entries"] == 8 and report["tables"]["backups"] >= 1
    on_pg = json.loads(cli("list", "--json", "--limit", "50", env={"M1ND_MEMORY_URL": server_url}).out)
    assert on_pg == before
    assert json.loads(cli("list", "--json", "--limit", "50", "--memory-url", server_url).out) == before  # the flag
    assert [e["title"] for e in json.loads(cli("search", "backoff", "--json",
                                               env={"M1ND_MEMORY_URL": server_url}).out)] == \
        [e["title"] for e in json.loads(cli("search", "backoff", "--json").out)]
    semantic = ("search", "retrying flaky network calls", "--semantic", "--json")
    on_server = [e["title"] for e in json.loads(cli(*semantic, env={"M1ND_MEMORY_URL": server_url}).out)]
    assert on_server and on_server == [e["title"] for e in json.loads(cli(*semantic).out)]
    # a second copy into the now non-empty server is refused, nothing changes
    again = cli("migrate", "--to", server_url)
    assert again.code == 1 and "not empty" in again.err and "--replace" in again.err
    # and back to a new SQLite file
    back = tmp_path / "back" / "memory.db"
    r = cli("migrate", "--to", f"sqlite:{back}", "--json", env={"M1ND_MEMORY_URL": server_url})
    assert r.code == 0, r.err
    src, pg, dst = MemoryService(home / "memory.db"), MemoryService(server_url), MemoryService(back)
    try:
        assert _counts(src) == _counts(pg) == _counts(dst)
        assert _counts(src)["entries"] == 8 and _counts(src)["relationships"] >= 1
    finally:
        for s in (src, pg, dst):
            s.close()
    back_cli = make_home_cli(tmp_path / "back")
    assert json.loads(back_cli("list", "--json", "--limit", "50").out) == before
    assert cli("migrate", "--to", "ftp://nowhere").code != 0


def test_migrate_replace_overwrites_a_non_empty_target(tmp_path: Path, pg_url: str) -> None:
    a, b = MemoryService(tmp_path / "a.db"), MemoryService(pg_url)
    try:
        a.add({"category": "insight", "title": "from a", "content": "x"}, agent="alice")
        b.add({"category": "insight", "title": "only on b", "content": "y"}, agent="alice")
        with pytest.raises(M1ndError, match="not empty"):
            copy_memory(a, b, ident=ident_text)
        assert [e["title"] for e in b.list_entries(Filters(), agent="alice").entries] == ["only on b"]
        counts = copy_memory(a, b, ident=ident_text, replace=True)
        assert counts["entries"] == 1
        assert [e["title"] for e in b.list_entries(Filters(), agent="alice").entries] == ["from a"]
        b.add({"category": "insight", "title": "after", "content": "z"}, agent="alice")  # identity moved past
    finally:
        a.close()
        b.close()


def test_server_killed_mid_batch_loses_nothing_acknowledged(pg_server, pg_url: str) -> None:
    svc = MemoryService(pg_url)
    svc._pg.timeout_s = 3.0
    acknowledged: list[str] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def writer() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            lines = [json.dumps({"category": "insight", "title": f"w{n}-{i}", "content": "x"}) for i in range(20)]
            try:
                out = svc.add_batch(lines, agent="alice")
            except M1ndError as e:
                errors.append(e)
                continue
            acknowledged.extend(f"w{n}-{i}" for i in range(20) if not out.failed)

    t = threading.Thread(target=writer)
    t.start()
    try:
        while len(acknowledged) < 100:
            t.join(0.05)
        pg_server.kill()
        while not errors:
            t.join(0.05)
        pg_server.start()
        mark = len(acknowledged)
        while len(acknowledged) < mark + 100:
            t.join(0.05)
    finally:
        stop.set()
        t.join(60)
        if pg_server.pid() is None:
            pg_server.start()
    messages = [str(e) for e in errors]
    assert all(isinstance(e, StoreError) for e in errors), messages
    assert any("unreachable" in m or "was lost" in m for m in messages), messages
    assert all("Traceback" not in m for m in messages)
    with svc.db.read():
        stored = {r[0] for r in svc.db.all("SELECT title FROM entries")}
    svc.close()
    assert set(acknowledged) <= stored
    # a batch is one transaction: whatever was not acknowledged is either wholly there (lost during COMMIT) or absent
    batches: dict[str, int] = {}
    for title in stored:
        batches[title.split("-")[0]] = batches.get(title.split("-")[0], 0) + 1
    assert set(batches.values()) == {20}


_WRITER = """
import sys
from m1nd.memory.service import MemoryService
svc = MemoryService(sys.argv[1])
for i in range(int(sys.argv[3])):
    svc.add({"category": "insight", "title": f"{sys.argv[2]}-{i}", "content": "concurrent"}, agent="w" + sys.argv[2])
svc.close()
"""


def test_eight_writer_processes(pg_url: str) -> None:
    MemoryService(pg_url).close()  # schema first, so the writers race on rows, not on the migration
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, pg_url, str(p), "500"], stderr=subprocess.PIPE)
             for p in range(8)]
    for p in procs:
        _, err = p.communicate(timeout=900)
        assert p.returncode == 0, err.decode()[-2000:]
    svc = MemoryService(pg_url)
    try:
        with svc.db.read():
            assert svc.db.scalar("SELECT count(*) FROM entries") == 4000
            assert svc.db.scalar("SELECT count(DISTINCT title) FROM entries") == 4000
            assert svc.db.scalar("SELECT count(*) FROM entries_fts") == 4000
    finally:
        svc.close()


def test_bad_memory_url_is_a_clear_error(tmp_path: Path, make_home_cli) -> None:
    cli = make_home_cli(tmp_path / "h")
    r = cli("list", env={"M1ND_MEMORY_URL": "mysql://x@y/z"})
    assert r.code != 0 and "not a postgresql:// URL" in r.err and "Traceback" not in r.err
    r = cli("list", "--memory-url", "mysql://x@y/z")
    assert r.code != 0 and "not a postgresql:// URL" in r.err
    r = cli("list", env={"M1ND_MEMORY_URL": "postgresql://u:secret@127.0.0.1:1/m1nd"})
    assert r.code != 0 and "cannot connect" in r.err and "secret" not in r.err and "Traceback" not in r.err


@pytest.fixture
def make_home_cli():
    from testkit import run_cli

    def make(home: Path):
        def call(*args: str, env: dict[str, str | None] | None = None) -> Any:
            environ: dict[str, str | None] = {"M1ND_MEMORY_URL": None, "M1ND_CURRENT_AGENT": None,
                                              "M1ND_EMBEDDER": "none"}
            environ.update(env or {})
            return run_cli(["--home", str(home), "--agent", "alice", "memory", *args], env=environ)

        return call

    return make


def test_a_stuck_writer_makes_others_busy_not_stalled(pg_url: str) -> None:
    """A writer that keeps its transaction open holds the others back only for the busy timeout (as on SQLite)."""
    import psycopg
    from m1nd.errors import BusyError

    svc = MemoryService(pg_url, busy_timeout_ms=300)
    eid = svc.add({"category": "insight", "title": "before", "content": "x"}, agent="alice").id
    stuck = psycopg.connect(pg_url)
    try:
        stuck.execute("SELECT pg_advisory_xact_lock(hashtext('m1nd_writer'))")  # psycopg opened a transaction
        with pytest.raises(BusyError, match=r"memory database is busy \(another writer held it for 0.3 s\)"):
            svc.add({"category": "insight", "title": "during", "content": "y"}, agent="alice")
        assert svc.show(eid, agent="alice", activate=False)["title"] == "before"  # readers are not blocked
    finally:
        stuck.rollback()
        stuck.close()
    svc.add({"category": "insight", "title": "after", "content": "z"}, agent="alice")
    assert sorted(e["title"] for e in svc.list_entries(Filters(), agent="alice").entries) == ["after", "before"]
    svc.close()
