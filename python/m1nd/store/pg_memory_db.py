"""The memory's statements on PostgreSQL: a :class:`PgMemoryDb` with the surface of :class:`m1nd.store.db.Database`
that the memory repositories use (``execute``, ``one``, ``scalar``, ``all``, ``executemany``, ``changes``,
``last_insert_rowid``, ``write()``/``read()`` transactions), so the PostgreSQL repositories
(:mod:`m1nd.store.pg_memory_repo`) share every portable statement with the SQLite ones and override only those that
differ in meaning (keyword ranking, aggregates over booleans, ordered JSON arrays, the vector change counter).

:func:`to_pg` rewrites the few SQLite spellings those portable statements use, and nothing else:

===============================================  ===============================================================
SQLite                                           PostgreSQL
===============================================  ===============================================================
``?`` / ``:name``                                ``%s`` / ``%(name)s`` (a literal ``%`` doubled)
``INSERT OR IGNORE INTO …``                      ``INSERT INTO … ON CONFLICT DO NOTHING``
``INSERT OR REPLACE INTO t(k, c…)``              ``… ON CONFLICT (k) DO UPDATE SET c = excluded.c`` (k: the key)
``x IS :p`` / ``x IS NOT :p``                    ``IS NOT DISTINCT FROM`` / ``IS DISTINCT FROM``
``json_group_array(c)``                          ``coalesce(json_agg(c)::text, '[]')``
``DO UPDATE SET c = coalesce(excluded.c, c)``    ``… coalesce(excluded.c, t.c)`` (t: the table inserted into)
``r.rowid IN (SELECT value FROM json_each(:p))``  ``… IN (SELECT value::bigint FROM json_array_elements_text(…))``
``json_each(:p) a``                              ``json_array_elements_text(CAST(:p AS json)) AS a(value)``
``+e.col`` (an index hint)                       ``e.col``
``WHERE 1``                                      ``WHERE true``
===============================================  ===============================================================

An ``INSERT`` into a table with an identity ``rowid`` (entries, chunks, vectors) gets ``RETURNING rowid`` so that
:meth:`PgMemoryDb.last_insert_rowid` answers as on SQLite.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # psycopg is imported by m1nd.store.pg alone, and only when a server store is used
    from m1nd.store.pg import PgStore, Tx

_IDENTITY_TABLES = ("entries", "chunks", "vectors")
_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
_IS_PARAM = re.compile(r"\bIS (NOT )?(%\(\w+\)s|%s)")
_GROUP_ARRAY = re.compile(r"json_group_array\(([\w.]+)\)")
_ID_IN_JSON = re.compile(r"\b((?:\w+\.)?(?:rowid|entry_rowid|anchor_rowid)) (NOT )?IN \(SELECT value FROM "
                         r"json_each\(([^()]+)\)\)")
_JSON_EACH = re.compile(r"json_each\(([^()]+)\)(?:\s+(?!WHERE\b|AND\b|ON\b|JOIN\b)([a-z]\w*)\b)?")
_HINT = re.compile(r"(?<=[\s(])\+(?=[a-z]\.)")
_WHERE_1 = re.compile(r"\bWHERE 1(?=\s|$|\))")
_REPLACE = re.compile(r"INSERT OR REPLACE INTO (\w+)\(([^)]*)\)")
_COALESCE_KEEP = re.compile(r"coalesce\(excluded\.(\w+), \1\)")
_INSERT_INTO = re.compile(r"^\s*INSERT (?:OR IGNORE )?INTO (\w+)")


@functools.lru_cache(maxsize=1024)
def to_pg(sql: str) -> tuple[str, bool]:
    """``(statement, returns_rowid)``: ``sql`` in PostgreSQL's spelling (see the module docstring)."""
    s = sql.replace("%", "%%")
    s = _GROUP_ARRAY.sub(r"coalesce(json_agg(\1)::text, '[]')", s)
    s = _ID_IN_JSON.sub(lambda m: f"{m.group(1)} {m.group(2) or ''}IN (SELECT value::bigint FROM "
                                  f"json_array_elements_text(CAST({m.group(3)} AS json)) AS j(value))", s)
    s = _JSON_EACH.sub(lambda m: f"json_array_elements_text(CAST({m.group(1)} AS json)) AS "
                                 f"{m.group(2) or 'j'}(value)", s)
    s = _HINT.sub("", s)
    s = _WHERE_1.sub("WHERE true", s)
    s = s.replace("?", "%s")
    s = _NAMED.sub(r"%(\1)s", s)
    s = _IS_PARAM.sub(lambda m: ("IS DISTINCT FROM " if m.group(1) else "IS NOT DISTINCT FROM ") + m.group(2), s)
    rep = _REPLACE.search(s)
    if rep:
        cols = [c.strip() for c in rep.group(2).split(",")]
        s = s.replace("INSERT OR REPLACE INTO", "INSERT INTO", 1)
        s += (f" ON CONFLICT ({cols[0]}) DO UPDATE SET "
              + ", ".join(f"{c} = excluded.{c}" for c in cols[1:]))
    if re.match(r"^\s*INSERT OR IGNORE INTO", s):
        s = s.replace("INSERT OR IGNORE INTO", "INSERT INTO", 1) + " ON CONFLICT DO NOTHING"
    ins = _INSERT_INTO.match(s)
    if ins and "DO UPDATE SET" in s:  # PostgreSQL wants the kept value named by table: coalesce(excluded.c, t.c)
        s = _COALESCE_KEEP.sub(lambda m: f"coalesce(excluded.{m.group(1)}, {ins.group(1)}.{m.group(1)})", s)
    returning = bool(ins and ins.group(1) in _IDENTITY_TABLES)
    if returning:
        s += " RETURNING rowid"
    return s, returning


class PgMemoryDb:
    """One thread's view of the memory database on a :class:`PgStore` (the ``Database`` surface, see above)."""

    dialect = "postgresql"

    def __init__(self, store: PgStore, *, lock: str = "m1nd_writer") -> None:
        self.store = store
        self.lock = lock  # the advisory lock writers queue on (one per kind of shared state)
        self._tx: Tx | None = None
        self._changes = 0
        self._last_rowid = 0

    # -- transactions -------------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _transaction(self, write: bool) -> Iterator[PgMemoryDb]:
        if self._tx is not None:  # nested use joins the outer transaction, as on SQLite
            yield self
            return
        with self.store.transaction(write=write, lock=self.lock) as tx:
            self._tx = tx
            try:
                yield self
            finally:
                self._tx = None

    def write(self) -> contextlib.AbstractContextManager[PgMemoryDb]:
        return self._transaction(True)

    def read(self) -> contextlib.AbstractContextManager[PgMemoryDb]:
        return self._transaction(False)

    @property
    def in_transaction(self) -> bool:
        return self._tx is not None

    # -- statements ---------------------------------------------------------------------------------------------
    def _run(self, tx: Tx, stmt: str, returning: bool, params: Sequence[Any] | dict[str, Any]
             ) -> list[tuple[Any, ...]]:
        tx.execute(stmt, params)
        self._changes = tx.rowcount
        if returning:
            row = tx.cur.fetchone()
            if row is not None:
                self._last_rowid = int(row[0])
            return []
        return tx.cur.fetchall() if tx.cur.description is not None else []

    def _statement(self, stmt: str, returning: bool, params: Sequence[Any] | dict[str, Any]
                   ) -> list[tuple[Any, ...]]:
        if self._tx is not None:
            return self._run(self._tx, stmt, returning, params)
        # outside a transaction (as SQLite's autocommit): a lone read is one statement on its own; a write gets a
        # transaction of its own (the writers' lock)
        write = bool(re.match(r"^\s*(INSERT|UPDATE|DELETE|WITH)", stmt, re.IGNORECASE))
        if not write and not returning:
            return self.store.once(stmt, params)
        with self.store.transaction(write=write, lock=self.lock) as tx:
            return self._run(tx, stmt, returning, params)

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Iterator[tuple[Any, ...]]:
        stmt, returning = to_pg(sql)
        return iter(self._statement(stmt, returning, params))

    def native(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        """A statement already in PostgreSQL's spelling (the repositories' own)."""
        return self._statement(sql, False, params)

    def executemany(self, sql: str, rows: Any) -> None:
        rows = list(rows)
        if not rows:
            return
        if self._tx is None:
            with self.write():
                self.executemany(sql, rows)
            return
        stmt, _ = to_pg(sql)
        self._tx.cur.executemany(stmt, rows)
        self._changes = self._tx.rowcount

    def native_many(self, sql: str, rows: Sequence[Sequence[Any] | dict[str, Any]]) -> None:
        """:meth:`executemany` of a statement already in PostgreSQL's spelling, inside the current transaction
        (psycopg pipelines the rows: one round trip per batch, not per row)."""
        if not rows:
            return
        if self._tx is None:
            with self.write():
                self.native_many(sql, rows)
            return
        self._tx.cur.executemany(sql, rows)
        self._changes = self._tx.rowcount

    def one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> tuple[Any, ...] | None:
        return next(self.execute(sql, params), None)

    def scalar(self, sql: str, params: Sequence[Any] | dict[str, Any] = (), default: Any = None) -> Any:
        row = self.one(sql, params)
        return default if row is None else row[0]

    def all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        return list(self.execute(sql, params))

    def changes(self) -> int:
        return self._changes

    def last_insert_rowid(self) -> int:
        return self._last_rowid

    def close(self) -> None:
        self._tx = None
