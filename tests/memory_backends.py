"""Raw row access to either memory store for tests that check what was written (issue 18: the memory suites run
against the ``memory.db`` file and a PostgreSQL server alike). SQL is written for SQLite, as the tests always were,
and spelled for PostgreSQL by the store's own translator (:func:`m1nd.store.pg_memory_db.to_pg`)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

STORES = ["sqlite", "postgresql"]


def store_param(request: pytest.FixtureRequest) -> str | None:
    """The PostgreSQL address for the ``postgresql`` parameter (a fresh database), None for ``sqlite``."""
    if request.param == "sqlite":
        return None
    return request.getfixturevalue("pg_url")


def rows(db_path: Path, url: str | None, sql: str, params: tuple = ()) -> list[tuple]:
    if url is None:
        con = sqlite3.connect(db_path)
        try:
            return con.execute(sql, params).fetchall()
        finally:
            con.close()
    import psycopg
    from m1nd.store.pg_memory_db import to_pg

    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(to_pg(sql)[0], params)
        return [tuple(_plain(v) for v in r) for r in cur.fetchall()] if cur.description else []


def execute(db_path: Path, url: str | None, sql: str, params: tuple = ()) -> None:
    if url is None:
        con = sqlite3.connect(db_path)
        try:
            con.execute(sql, params)
            con.commit()
        finally:
            con.close()
        return
    rows(db_path, url, sql, params)


def _plain(v: Any) -> Any:
    return bytes(v) if isinstance(v, memoryview) else v
