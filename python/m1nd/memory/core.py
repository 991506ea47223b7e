"""The memory service's foundation: one ``memory.db`` per home, a connection per thread, one transaction per command.

Every command family of :class:`m1nd.memory.service.MemoryService` (adding, reading and search, updating, backups,
relationships, statistics, registries, sessions, export and seeding) stands on :class:`MemoryCore`: it opens the
store, runs each command in one write transaction (``BEGIN IMMEDIATE … COMMIT``) or one read snapshot through
:meth:`MemoryCore._write` / :meth:`MemoryCore._read`, which yield the repositories of that transaction
(:class:`~m1nd.store.memory_contract.MemoryUnitOfWork`), and resolves ids under the visibility rules (spec memory.md
§3). No SQL here or in the command modules: it lives in ``m1nd.store.memory_*``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from m1nd.errors import BusyError, InvalidInputError, M1ndError, NotFoundError
from m1nd.memory.decay import eff_res_sql
from m1nd.memory.ids import normalize_entry_id, prefix_candidate
from m1nd.store.db import Database, PerThread, open_db
from m1nd.store.memory_contract import Entry
from m1nd.store.memory_schema import MIGRATIONS
from m1nd.store.memory_tx import MemoryTx
from m1nd.store.pg_url import is_postgres_url
from m1nd.timeutil import now_ms

log = logging.getLogger("m1nd.memory.service")

TRUTHY = ("1", "true", "yes")
# The registries an add or update validates against (kind names of m1nd.store.memory_registries).
VALUE_REGISTRIES = ("categories", "source_types", "entry_types", "content_types", "session_types",
                    "relationship_types", "applicability", "projects")
MAX_RETRIES = 3


def env_truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in TRUTHY


def default_basis(command_default: str) -> str:
    env = os.environ.get("M1ND_RESONANCE_BASIS", "").strip().lower()
    return env if env in ("raw", "decayed") else command_default


def visible(hit: tuple[int, str, str | None] | None, agent: str | None) -> bool:
    """Whether an entry reference ``(rowid, visibility, owner)`` may be seen by ``agent``."""
    return hit is not None and (hit[1] == "public" or (agent is not None and hit[2] == agent))


class Retry(Exception):
    """An optimistic-concurrency conflict: the entry's rev moved between read and write."""


class MemoryCore:
    """The knowledge memory over one ``memory.db`` file (one APSW connection per thread)."""

    def __init__(self, path: Path | str, *, busy_timeout_ms: int = 10000, apply_schema: bool = True,
                 vector_hook: Any = None) -> None:
        # A postgresql:// address selects the server store (issue 18, team mode); anything else is a memory.db file.
        self.url: str | None = str(path) if is_postgres_url(str(path)) else None
        self.path = Path(path) if self.url is None else None
        self.busy_timeout_ms = busy_timeout_ms
        self.vector_hook = vector_hook
        self._pg: Any = None
        if self.url is not None:
            from m1nd.store.pg import PgStore  # psycopg only when a server store is chosen

            self._pg = PgStore(self.url, lock_timeout_ms=busy_timeout_ms)
        self._threads = PerThread(self._connect)
        self._units = threading.local()  # this thread's MemoryTx, rebuilt only when its connection changes
        if apply_schema:
            self.migrate()

    @classmethod
    def open(cls, settings: Any, *, vector_hook: Any = None, apply_schema: bool | None = None) -> Any:
        """The memory of ``settings`` (``apply_schema``: None = unless M1ND_SKIP_SCHEMA is set)."""
        if apply_schema is None:
            apply_schema = not env_truthy("M1ND_SKIP_SCHEMA")
        return cls(settings.memory_store, busy_timeout_ms=settings.busy_timeout_ms, apply_schema=apply_schema,
                   vector_hook=vector_hook)

    @property
    def backend(self) -> str:
        return "sqlite" if self.url is None else "postgresql"

    def _connect(self) -> Any:
        if self._pg is not None:
            from m1nd.store.pg_memory_db import PgMemoryDb

            return PgMemoryDb(self._pg)
        db = open_db(self.path, busy_timeout_ms=self.busy_timeout_ms)
        db.create_scalar_function("eff_res", eff_res_sql, 5, deterministic=True)
        return db

    @property
    def db(self) -> Database:
        return self._threads.get()

    @property
    def repo(self) -> MemoryTx:
        """The repositories over this thread's connection (inside a transaction the caller opened)."""
        db = self.db
        tx = getattr(self._units, "tx", None)
        if tx is None or tx.db is not db:
            if self._pg is not None:
                from m1nd.store.pg_memory_repo import PgMemoryTx

                tx = self._units.tx = PgMemoryTx(db)
            else:
                tx = self._units.tx = MemoryTx(db)
        return tx

    def migrate(self) -> tuple[int, int]:
        """Apply pending migrations; returns ``(applied, version)``."""
        if self._pg is not None:
            from m1nd.store.pg_memory_schema import COMPONENT
            from m1nd.store.pg_memory_schema import MIGRATIONS as PG_MIGRATIONS

            applied = self._pg.migrate(COMPONENT, PG_MIGRATIONS)
            enable_pgvector(self._pg)
            return applied, self._pg.version(COMPONENT)
        db = self.db
        applied = db.migrate(MIGRATIONS)
        return applied, db.user_version()

    def close(self) -> None:
        self._threads.close_all()
        if self._pg is not None:
            self._pg.close()

    # -- transactions -------------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _write(self) -> Iterator[MemoryTx]:
        try:
            with self.db.write():
                yield self.repo
        except BusyError as e:
            raise BusyError(f"memory database is busy (another writer held it for {self.busy_timeout_ms / 1000:g} "
                            "s); retry", recover="retry when the other writer finishes") from e

    @contextlib.contextmanager
    def _read(self) -> Iterator[MemoryTx]:
        with self.db.read():
            yield self.repo

    def _retrying(self, fn: Callable[[], Any], entry_id: str) -> Any:
        for _ in range(MAX_RETRIES):
            try:
                return fn()
            except Retry:
                continue
        raise M1ndError(f"entry {entry_id} changed concurrently; retry", code="busy",
                        recover="run the command again")

    def _bookkeep(self, rowids: list[int], ts: str, *, full: bool = True) -> bool:
        """Activation bookkeeping in its own short transaction; a busy database skips it (the read succeeded)."""
        try:
            with self._write() as tx:
                tx.entries.activate(rowids, ts, full=full)
        except BusyError:
            log.warning("activation bookkeeping skipped: memory database busy")
            return False
        return True

    # -- ids and visibility -------------------------------------------------------------------------------------
    def _resolve(self, tx: MemoryTx, raw: str, agent: str | None, missing: str) -> int:
        """The rowid of a visible entry by id or unique ≥ 8-hex prefix; ``missing`` formats the not-found text."""
        try:
            eid = normalize_entry_id(raw)
        except InvalidInputError:
            raise NotFoundError(missing.format(id=raw.strip()), recover="list entries to find a valid id") from None
        hit = tx.entries.rowid_of(eid)
        if hit is not None and visible(hit, agent):
            return hit[0]
        pre = prefix_candidate(eid) if hit is None else None
        if pre:
            ids = tx.entries.visible_by_prefix(pre, agent, limit=3)
            if len(ids) == 1:
                return tx.entries.rowid_of(ids[0])[0]
            if len(ids) > 1:
                shown = ", ".join(i[:len(pre) + 2] + "…" for i in ids[:2])
                raise InvalidInputError(f"id '{eid}' is ambiguous: {shown}", recover="give more hex digits")
        raise NotFoundError(missing.format(id=eid), recover="list entries to find a valid id")

    def _entry(self, tx: MemoryTx, rowid: int, agent: str | None, now: int | None = None) -> Entry:
        return tx.entries.hydrate_rowids([rowid], agent=agent, now=now or now_ms())[0]

    def _registries(self, tx: MemoryTx) -> dict[str, set[str]]:
        return {k: set(tx.registries.ids(k)) for k in VALUE_REGISTRIES}


def enable_pgvector(pg: Any) -> bool:
    """Bring pgvector into a PostgreSQL memory when the server offers it (issue 18 item 2): semantic search then runs
    on the server. A server that offers it but refuses to create it (the extension needs rights this user lacks)
    keeps the local usearch mirror, with a note on stderr; nothing else changes."""
    from m1nd.errors import StoreError
    from m1nd.store.pg_memory_schema import PGVECTOR_COMPONENT, PGVECTOR_MIGRATIONS, pgvector_offered

    if pg.version(PGVECTOR_COMPONENT) >= len(PGVECTOR_MIGRATIONS):
        return True
    if not pg.run(pgvector_offered, write=False):
        return False
    try:
        pg.migrate(PGVECTOR_COMPONENT, PGVECTOR_MIGRATIONS)
    except StoreError as e:
        log.warning("the memory server offers pgvector but it could not be enabled (%s); semantic search keeps "
                    "the local vector mirror (a database superuser can enable the vector extension for this database)",
                    e.message)
        return False
    return True

