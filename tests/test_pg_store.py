"""The PostgreSQL connection layer (:mod:`m1nd.store.pg`) against a real server: versioned migrations, one
serializable transaction per call with retries, clear errors for a server that is down, and recovery after the
server is killed and restarted (issue 18, items 5 and 6)."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("psycopg")

from m1nd.errors import StoreError  # noqa: E402
from m1nd.store import pg_memory_schema as S  # noqa: E402
from m1nd.store.pg import PgStore, redact  # noqa: E402

STEPS = ["CREATE TABLE counters(k TEXT PRIMARY KEY, n INTEGER NOT NULL DEFAULT 0)",
         "ALTER TABLE counters ADD COLUMN note TEXT"]


def test_migrations_are_versioned_and_applied_once(pg_url: str) -> None:
    store = PgStore(pg_url)
    try:
        assert store.version("demo") == 0
        assert store.migrate("demo", STEPS[:1]) == 1
        assert store.migrate("demo", STEPS) == 1 and store.version("demo") == 2
        assert store.migrate("demo", STEPS) == 0
        with pytest.raises(StoreError, match="newer than this m1nd understands"):
            store.migrate("demo", STEPS[:1])
        # The memory schema seeds its registries.
        assert store.migrate(S.COMPONENT, S.MIGRATIONS) == len(S.MIGRATIONS)
        cats = store.run(lambda tx: tx.all("SELECT id FROM categories ORDER BY id"), write=False)
        assert [c for (c,) in cats] == sorted(c for c, _ in S.CATEGORIES)
    finally:
        store.close()


def test_concurrent_first_migrations_apply_each_step_once(pg_url: str) -> None:
    """Processes that open a fresh database at once all wait on the schema lock; the later ones must see the
    version the first one committed (not re-run its CREATE TABLE)."""
    store = PgStore(pg_url, max_size=8)
    steps = ["CREATE TABLE race_one(x INTEGER)", "SELECT pg_sleep(0.2)", "CREATE TABLE race_two(x INTEGER)"]
    errors: list[BaseException] = []
    applied: list[int] = []

    def open_it() -> None:
        try:
            applied.append(store.migrate("race", steps))
        except BaseException as e:  # noqa: BLE001 — reported by the assertion below
            errors.append(e)

    try:
        threads = [threading.Thread(target=open_it) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert sum(applied) == len(steps) and store.version("race") == len(steps)
    finally:
        store.close()


def test_concurrent_read_modify_write_is_serialized(pg_url: str) -> None:
    store = PgStore(pg_url)
    try:
        store.migrate("demo", STEPS)
        store.run(lambda tx: tx.execute("INSERT INTO counters(k) VALUES ('x')"))

        def bump() -> None:
            for _ in range(40):
                store.run(lambda tx: tx.execute("UPDATE counters SET n = %s WHERE k = 'x'",
                                                (tx.scalar("SELECT n FROM counters WHERE k = 'x'") + 1,)))

        threads = [threading.Thread(target=bump) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # A lost update would leave fewer than 240: every read-modify-write ran as if alone.
        assert store.run(lambda tx: tx.scalar("SELECT n FROM counters WHERE k = 'x'"), write=False) == 240
    finally:
        store.close()


def test_a_failed_command_writes_nothing(pg_url: str) -> None:
    store = PgStore(pg_url)
    try:
        store.migrate("demo", STEPS)

        def half(tx) -> None:
            tx.execute("INSERT INTO counters(k) VALUES ('a')")
            raise ValueError("boom")

        with pytest.raises(ValueError, match="boom"):
            store.run(half)
        assert store.run(lambda tx: tx.scalar("SELECT count(*) FROM counters"), write=False) == 0
    finally:
        store.close()


def test_unreachable_server_is_a_clear_error() -> None:
    with pytest.raises(StoreError, match=r"cannot connect to the memory database postgresql://u:\*\*\*@127\.0\.0\.1:1"):
        PgStore("postgresql://u:secret@127.0.0.1:1/m1nd")
    assert redact("postgresql://u:secret@h/db") == "postgresql://u:***@h/db"


def test_survives_a_server_crash_and_restart(pg_server, pg_url: str) -> None:
    store = PgStore(pg_url, timeout_s=3.0)
    try:
        store.migrate("demo", STEPS)
        store.run(lambda tx: tx.execute("INSERT INTO counters(k) VALUES ('before')"))
        pg_server.kill()
        with pytest.raises(StoreError, match="unreachable|lost while committing"):
            store.run(lambda tx: tx.execute("INSERT INTO counters(k) VALUES ('during')"), retries=1)
        pg_server.start()
        store.run(lambda tx: tx.execute("INSERT INTO counters(k) VALUES ('after')"))
        keys = store.run(lambda tx: tx.all("SELECT k FROM counters ORDER BY k"), write=False)
        assert [k for (k,) in keys] == ["after", "before"]  # acknowledged kept; the refused write absent
    finally:
        store.close()
