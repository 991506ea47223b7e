"""SQLite connections through APSW: the one place apsw is imported.

Every database m1nd opens (``graph.db`` per workspace, ``memory.db`` per home) goes through :func:`open_db`, which
sets the shared conventions of spec graph.md §1 / memory.md §1 on the connection itself (never process-global):
WAL, ``synchronous=NORMAL``, busy timeout, foreign keys, no double-quoted string literals. Writers use
:meth:`Database.write` (one ``BEGIN IMMEDIATE … COMMIT`` per command, rolled back on any exception); readers use
:meth:`Database.read` (one deferred read transaction = one consistent snapshot).

Schemas are lists of migration steps applied in order, keyed by ``PRAGMA user_version``.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import apsw

from m1nd.errors import BusyError, StoreError

# A migration is SQL text or a callable taking the connection (for backfills that need Python).
Migration = str | Callable[["Database"], None]


class Database:
    """One APSW connection with m1nd's conventions. Not shared across threads: use one per thread."""

    def __init__(self, path: Path | str, *, busy_timeout_ms: int = 10000, readonly: bool = False) -> None:
        self.path = str(path)
        self.busy_timeout_ms = busy_timeout_ms
        flags = apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
        try:
            if not readonly and self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self.conn = apsw.Connection(self.path, flags=flags)
            self.conn.set_busy_timeout(busy_timeout_ms)
            # Double-quoted string literals are a classic source of silent bugs: turn them off.
            for opt in (apsw.SQLITE_DBCONFIG_DQS_DML, apsw.SQLITE_DBCONFIG_DQS_DDL):
                self.conn.config(opt, 0)
            if not readonly:
                self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
        except apsw.BusyError as e:
            raise self._busy() from e
        except apsw.Error as e:
            raise StoreError(f"cannot open database {self.path}: {e}") from e
        self._in_tx = False

    # -- errors -------------------------------------------------------------------------------------------------
    def _busy(self) -> BusyError:
        return BusyError(f"database {self.path} is busy (another writer held it for "
                         f"{self.busy_timeout_ms / 1000:g} s); retry",
                         recover="retry after the other writer finishes")

    # -- transactions -------------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def write(self) -> Iterator[Database]:
        """``BEGIN IMMEDIATE … COMMIT``; rollback on any exception (nothing half-written)."""
        if self._in_tx:  # nested use joins the outer transaction
            yield self
            return
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except apsw.BusyError as e:
            raise self._busy() from e
        self._in_tx = True
        try:
            yield self
        except BaseException:
            self._in_tx = False
            with contextlib.suppress(apsw.Error):
                self.conn.execute("ROLLBACK")
            raise
        self._in_tx = False
        try:
            self.conn.execute("COMMIT")
        except apsw.BusyError as e:
            with contextlib.suppress(apsw.Error):
                self.conn.execute("ROLLBACK")
            raise self._busy() from e

    @contextlib.contextmanager
    def read(self) -> Iterator[Database]:
        """One deferred transaction: every query inside sees the same snapshot."""
        if self._in_tx:
            yield self
            return
        self.conn.execute("BEGIN")
        self._in_tx = True
        try:
            yield self
        finally:
            self._in_tx = False
            with contextlib.suppress(apsw.Error):
                self.conn.execute("COMMIT")

    # -- statements ---------------------------------------------------------------------------------------------
    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> apsw.Cursor:
        try:
            return self.conn.execute(sql, params)
        except apsw.BusyError as e:
            raise self._busy() from e
        except apsw.Error as e:
            raise StoreError(f"database error on {self.path}: {e}") from e

    def executemany(self, sql: str, rows: Any) -> None:
        try:
            self.conn.executemany(sql, rows)
        except apsw.BusyError as e:
            raise self._busy() from e
        except apsw.Error as e:
            raise StoreError(f"database error on {self.path}: {e}") from e

    def one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> tuple[Any, ...] | None:
        return self.execute(sql, params).fetchone()

    def scalar(self, sql: str, params: Sequence[Any] | dict[str, Any] = (), default: Any = None) -> Any:
        row = self.one(sql, params)
        return default if row is None else row[0]

    def all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        return self.execute(sql, params).fetchall()

    def changes(self) -> int:
        return self.conn.changes()

    def last_insert_rowid(self) -> int:
        return self.conn.last_insert_rowid()

    @property
    def is_constraint_error(self) -> type[Exception]:
        return apsw.ConstraintError

    # -- schema -------------------------------------------------------------------------------------------------
    def user_version(self) -> int:
        return int(self.scalar("PRAGMA user_version", default=0))

    def migrate(self, migrations: Sequence[Migration]) -> int:
        """Apply migrations ``user_version+1 … len(migrations)`` in order, each in its own write transaction.

        Returns the number applied. A database newer than this code is refused rather than silently misread.
        """
        current = self.user_version()
        if current > len(migrations):
            raise StoreError(f"database {self.path} has schema version {current}, newer than this m1nd "
                             f"understands ({len(migrations)})", recover="upgrade m1nd")
        applied = 0
        for version in range(current + 1, len(migrations) + 1):
            step = migrations[version - 1]
            with self.write():
                if self.user_version() >= version:  # another process got there first
                    continue
                if callable(step):
                    step(self)
                else:
                    self.execute(step)
                self.execute(f"PRAGMA user_version={version}")
                applied += 1
        return applied

    def create_scalar_function(self, name: str, fn: Callable[..., Any], nargs: int = -1, *,
                               deterministic: bool = True) -> None:
        """Register a Python scalar SQL function on this connection (never process-wide)."""
        self.conn.create_scalar_function(name, fn, nargs, deterministic=deterministic)

    def integrity_check(self) -> str:
        return str(self.scalar("PRAGMA integrity_check"))

    def close(self) -> None:
        with contextlib.suppress(apsw.Error):
            self.conn.close()


def open_db(path: Path | str, migrations: Sequence[Migration] = (), *, busy_timeout_ms: int = 10000,
            apply_schema: bool = True) -> Database:
    db = Database(path, busy_timeout_ms=busy_timeout_ms)
    if apply_schema and migrations:
        db.migrate(migrations)
    return db


class PerThread:
    """One :class:`Database` per thread for the same file (APSW connections are not shared across threads)."""

    def __init__(self, factory: Callable[[], Database]) -> None:
        self._factory = factory
        self._local = threading.local()
        self._all: list[Database] = []
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def get(self) -> Database:
        db = getattr(self._local, "db", None)
        if db is None or self._pid != os.getpid():
            db = self._factory()
            self._local.db = db
            with self._lock:
                self._all.append(db)
        return db

    def close_all(self) -> None:
        with self._lock:
            for db in self._all:
                db.close()
            self._all.clear()
