"""PostgreSQL connections through psycopg 3: the one place psycopg is imported (issue 18, team mode).

The knowledge memory can live on a PostgreSQL server (``M1ND_MEMORY_URL=postgresql://…``) so that agents on many
machines share it. This module gives the repositories the same guarantees the SQLite store gives
(:mod:`m1nd.store.db`):

* **One transaction per command.** :meth:`PgStore.run` runs a function inside one transaction on a pooled
  connection: ``SERIALIZABLE`` for writers, so concurrent commands behave as if run one after another (SQLite's
  ``BEGIN IMMEDIATE``), ``REPEATABLE READ READ ONLY`` for readers (one snapshot).
* **Retry where safe.** A serialization failure or deadlock, or a connection lost *before* ``COMMIT`` was sent,
  rolls the whole transaction back on the server, so the function is run again (bounded, with jittered backoff,
  on a fresh connection). A connection lost *during* ``COMMIT`` leaves the outcome unknown: that is reported, never
  retried blindly (a retry could write twice).
* **Clear errors.** An unreachable server, a refused login or a missing database becomes a :class:`StoreError`
  naming the server (password hidden) and what to check.
* **Versioned schemas.** :meth:`PgStore.migrate` applies ordered steps per component, recorded in
  ``m1nd_schema``, under an advisory lock so that processes starting together migrate once.
"""

from __future__ import annotations

import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool, PoolTimeout

from m1nd.errors import BusyError, StoreError
from m1nd.store.pg_url import is_postgres_url, redact  # noqa: F401 — re-exported

log = logging.getLogger(__name__)
T = TypeVar("T")

RETRIES = 8
POOL_TIMEOUT_S = 15.0  # waiting for a pooled connection (the server down or saturated) before giving up
CONNECT_TIMEOUT_S = 5
_RETRYABLE = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def retries_for_connect() -> int:
    return RETRIES


@contextmanager
def _suppress() -> Iterator[None]:
    try:
        yield
    except psycopg.Error:
        pass


class Tx:
    """The statements of one transaction (``%s`` placeholders). Thin on purpose: repositories hold the SQL."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn
        self.cur = conn.cursor()

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Tx:
        self.cur.execute(sql, params)
        return self

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self.cur.executemany(sql, rows)

    def one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> tuple[Any, ...] | None:
        self.cur.execute(sql, params)
        return self.cur.fetchone()

    def scalar(self, sql: str, params: Sequence[Any] | dict[str, Any] = (), default: Any = None) -> Any:
        row = self.one(sql, params)
        return default if row is None else row[0]

    def all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        self.cur.execute(sql, params)
        return self.cur.fetchall()

    @property
    def rowcount(self) -> int:
        return self.cur.rowcount

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """A nested unit rolled back alone on any exception (partial batch success)."""
        with self.conn.transaction():
            yield


# A migration step: SQL text, or a callable given the transaction (for seeds that need Python).
PgMigration = str | Callable[[Tx], None]


class PgStore:
    """A pool of connections to one PostgreSQL database."""

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 8, app: str = "m1nd",
                 timeout_s: float = POOL_TIMEOUT_S, lock_timeout_ms: int = 10_000) -> None:
        self.url = url
        self.timeout_s = timeout_s
        self.lock_timeout_ms = lock_timeout_ms
        self.shown = redact(url)
        self._closed = threading.Event()
        try:  # fail fast, with the server's own reason, before a pool would retry in the background
            psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S).close()
        except psycopg.OperationalError as e:
            raise StoreError(f"cannot connect to the memory database {self.shown}: {_first_line(e)}",
                             recover="check that the server runs and accepts this user and database "
                                     "(M1ND_MEMORY_URL / --memory-url)") from e
        except psycopg.Error as e:
            raise StoreError(f"bad memory database address {self.shown}: {_first_line(e)}",
                             recover="use postgresql://user[:password]@host[:port]/database") from e
        # No check on every checkout (a round trip per transaction, the largest part of a short read): a pooled
        # connection that died with the server fails at BEGIN, before anything ran, and _lost() then drops every
        # dead idle connection at once so that the retry gets a live one without waiting.
        self.pool = ConnectionPool(url, min_size=min_size, max_size=max_size, open=False, timeout=timeout_s,
                                   kwargs={"autocommit": True, "application_name": app,
                                           "connect_timeout": CONNECT_TIMEOUT_S},
                                   reconnect_timeout=60.0)
        try:
            self.pool.open(wait=True, timeout=timeout_s)
        except PoolTimeout as e:
            raise StoreError(f"cannot open connections to the memory database {self.shown}",
                             recover="check the server's max_connections and that it stays up") from e

    @property
    def fingerprint(self) -> str:
        """A short stable name of this server and database (for local files that mirror it)."""
        import hashlib

        return hashlib.sha256(self.shown.encode()).hexdigest()[:12]

    # -- transactions ---------------------------------------------------------------------------------------------
    def run(self, fn: Callable[[Tx], T], *, write: bool = True, retries: int = RETRIES,
            read_committed: bool = False) -> T:
        """``fn(tx)`` inside one transaction, retried as the module docstring says. ``read_committed``: each
        statement sees every commit before it (for bodies that first wait on an advisory lock: at a snapshot level
        the lock query itself would fix the snapshot before the wait, and the body would miss what the lock's
        previous holder committed)."""
        attempt = 0
        while True:
            attempt += 1
            committing = False
            try:
                with self.pool.connection(timeout=self.timeout_s) as conn:
                    conn.execute("BEGIN ISOLATION LEVEL READ COMMITTED" if read_committed else
                                 "BEGIN ISOLATION LEVEL SERIALIZABLE" if write else
                                 "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    try:
                        result = fn(Tx(conn))
                    except BaseException:
                        if not conn.closed and not conn.broken:
                            conn.execute("ROLLBACK")
                        raise
                    committing = True
                    conn.execute("COMMIT")
                    return result
            except _RETRYABLE as e:
                if attempt > retries:
                    raise BusyError(f"the memory database {self.shown} kept refusing this write as conflicting with "
                                    f"concurrent ones ({attempt} attempts)", recover="retry in a moment") from e
                self._backoff(attempt)
            except (psycopg.OperationalError, PoolTimeout) as e:
                if committing:
                    raise StoreError(f"the connection to {self.shown} was lost while committing: the change may or "
                                     "may not be stored", recover="check with a read (memory_show / memory_search) "
                                     "before repeating the write") from e
                if attempt > retries or self._closed.is_set():
                    raise StoreError(f"the memory database {self.shown} is unreachable: {_first_line(e)}",
                                     recover="check that the server runs; nothing was written") from e
                log.warning("memory database connection lost (%s); retrying (%d/%d)", type(e).__name__, attempt,
                            retries)
                self._lost(attempt)
            except pg_errors.IntegrityError:
                raise  # the repositories translate the constraint they expect
            except psycopg.Error as e:
                raise StoreError(f"database error on {self.shown}: {e}") from e

    @contextmanager
    def transaction(self, *, write: bool, lock: str = "m1nd_writer") -> Iterator[Tx]:
        """One transaction as a context manager, for services written as ``with …:`` blocks (the memory's unit of
        work), where the body cannot be re-run. Writers take a transaction-scoped advisory lock first and run at
        ``READ COMMITTED``: writers queue one after another as under SQLite's ``BEGIN IMMEDIATE`` and every
        statement after the lock sees every earlier commit, so no serialization failure can reach the body.
        Readers get one ``REPEATABLE READ READ ONLY`` snapshot. Only getting a connection is retried (nothing ran
        yet); a connection lost inside the body or at ``COMMIT`` becomes a :class:`StoreError` saying which."""
        attempt = 0
        while True:
            attempt += 1
            try:
                cm = self.pool.connection(timeout=self.timeout_s)
                conn = cm.__enter__()
                if write:
                    # a writer that hangs inside its transaction must not stall every other writer for ever: wait
                    # at most as long as SQLite's busy timeout, then report busy. One message (no parameters, so
                    # several statements may share it): four round trips would be most of a short write's time.
                    name = lock.replace("'", "''")
                    conn.execute(f"BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = "
                                 f"{int(self.lock_timeout_ms)}; SELECT pg_advisory_xact_lock(hashtext('{name}')); "
                                 "SET LOCAL lock_timeout = 0")
                else:
                    conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                break
            except pg_errors.LockNotAvailable as e:
                with contextlib.suppress(Exception):
                    conn.execute("ROLLBACK")
                cm.__exit__(type(e), e, None)
                raise BusyError(f"the memory database {self.shown} is busy (another writer held it for "
                                f"{self.lock_timeout_ms / 1000:g} s)", recover="retry when the other writer finishes"
                                ) from e
            except (psycopg.OperationalError, PoolTimeout) as e:
                with contextlib.suppress(Exception):  # the connection is already lost; the pool discards it
                    cm.__exit__(type(e), e, None)
                if attempt > retries_for_connect() or self._closed.is_set():
                    raise StoreError(f"the memory database {self.shown} is unreachable: {_first_line(e)}",
                                     recover="check that the server runs; nothing was written") from e
                log.warning("memory database connection lost (%s); retrying (%d)", type(e).__name__, attempt)
                self._lost(attempt)
        committing = False
        try:
            try:
                yield Tx(conn)
            except BaseException:
                if not conn.closed and not conn.broken:
                    with _suppress():
                        conn.execute("ROLLBACK")
                raise
            committing = True
            conn.execute("COMMIT")
        except (psycopg.OperationalError, PoolTimeout) as e:
            cm.__exit__(type(e), e, None)
            if committing:
                raise StoreError(f"the connection to {self.shown} was lost while committing: the change may or "
                                 "may not be stored", recover="check with a read (memory_show / memory_search) "
                                 "before repeating the write") from e
            raise StoreError(f"the connection to the memory database {self.shown} was lost: {_first_line(e)}",
                             recover="run the command again once the server is back; nothing of it was written"
                             ) from e
        except pg_errors.IntegrityError:
            cm.__exit__(None, None, None)
            raise
        except psycopg.Error as e:
            cm.__exit__(type(e), e, None)
            raise StoreError(f"database error on {self.shown}: {_first_line(e)}") from e
        except BaseException as e:
            cm.__exit__(type(e), e, None)
            raise
        else:
            cm.__exit__(None, None, None)

    def _lost(self, attempt: int) -> None:
        """A connection failed: discard the idle ones that died with it; retry at once the first time (a stale
        pooled connection after a server restart), with backoff after that (the server is down)."""
        with contextlib.suppress(Exception):
            self.pool.check()
        if attempt > 1:
            self._backoff(attempt - 1)

    def once(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        """One read statement outside any transaction (autocommit: a single statement is its own snapshot), so
        without the round trips of ``BEGIN`` and ``COMMIT``; retried on a lost connection, as reads may be."""
        attempt = 0
        while True:
            attempt += 1
            try:
                with self.pool.connection(timeout=self.timeout_s) as conn:
                    cur = conn.execute(sql, params)
                    return cur.fetchall() if cur.description is not None else []
            except (psycopg.OperationalError, PoolTimeout) as e:
                if attempt > retries_for_connect() or self._closed.is_set():
                    raise StoreError(f"the memory database {self.shown} is unreachable: {_first_line(e)}",
                                     recover="check that the server runs") from e
                log.warning("memory database connection lost (%s); retrying (%d)", type(e).__name__, attempt)
                self._lost(attempt)
            except psycopg.Error as e:
                raise StoreError(f"database error on {self.shown}: {_first_line(e)}") from e

    @staticmethod
    def _backoff(attempt: int) -> None:
        time.sleep(min(2.0, 0.02 * (2 ** min(attempt, 7))) * (0.5 + random.random()))

    # -- schema ---------------------------------------------------------------------------------------------------
    def version(self, component: str) -> int:
        def read(tx: Tx) -> int:
            if tx.scalar("SELECT to_regclass('m1nd_schema')") is None:
                return 0
            return int(tx.scalar("SELECT version FROM m1nd_schema WHERE component = %s", (component,), default=0))

        return self.run(read, write=False)

    def migrate(self, component: str, steps: Sequence[PgMigration]) -> int:
        """Apply ``steps[version:]`` of ``component`` in order, each in its own transaction; the number applied.
        A database newer than this code is refused rather than misread."""
        applied = 0
        for number in range(1, len(steps) + 1):
            def step(tx: Tx, number: int = number) -> bool:
                tx.execute("SELECT pg_advisory_xact_lock(hashtext('m1nd_schema'))")
                tx.execute("CREATE TABLE IF NOT EXISTS m1nd_schema (component TEXT PRIMARY KEY, version INTEGER "
                           "NOT NULL)")
                current = int(tx.scalar("SELECT version FROM m1nd_schema WHERE component = %s", (component,),
                                        default=0))
                if current > len(steps):
                    raise StoreError(f"the {component} schema of {self.shown} is version {current}, newer than this "
                                     f"m1nd understands ({len(steps)})", recover="upgrade m1nd")
                if current >= number:
                    return False
                s = steps[number - 1]
                if callable(s):
                    s(tx)
                else:
                    tx.execute(s)
                tx.execute("INSERT INTO m1nd_schema(component, version) VALUES (%s, %s) ON CONFLICT (component) "
                           "DO UPDATE SET version = excluded.version", (component, number))
                return True

            applied += int(self.run(step, read_committed=True))  # the version read must follow the lock
        return applied

    def close(self) -> None:
        self._closed.set()
        self.pool.close()
