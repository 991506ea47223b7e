"""SQLite relationships between memory entries (:class:`~m1nd.store.memory_contract.RelationshipRepository`)."""

from __future__ import annotations

from typing import Any, cast

from m1nd.store.db import Database
from m1nd.store.memory_repo import visible_sql


class RelationshipRepo:
    def __init__(self, db: Database) -> None:
        self.db = db

    def insert(self, rel_id: str, from_rowid: int, to_rowid: int, rel_type: str, now: str) -> str | None:
        """Insert unless the triple exists; returns the id of the existing relationship when it does."""
        self.db.execute("INSERT INTO relationships(id, from_rowid, to_rowid, type, created_at) VALUES (?, ?, ?, ?, ?) "
                        "ON CONFLICT(from_rowid, to_rowid, type) DO NOTHING",
                        (rel_id, from_rowid, to_rowid, rel_type, now))
        if self.db.changes() == 1:
            return None
        return cast("str | None", self.db.scalar(
            "SELECT id FROM relationships WHERE from_rowid = ? AND to_rowid = ? AND type = ?",
            (from_rowid, to_rowid, rel_type)))

    def of_entry(self, rowid: int, agent: str | None) -> list[tuple[Any, ...]]:
        """Links of an entry whose other end ``agent`` can see: ``(id, from_id, to_id, type, created_at, out)``."""
        return self.db.all(
            f"SELECT r.id, f.id, t.id, r.type, r.created_at, r.from_rowid = :me FROM relationships r "
            f"JOIN entries f ON f.rowid = r.from_rowid JOIN entries t ON t.rowid = r.to_rowid "
            f"WHERE (r.from_rowid = :me AND {visible_sql('t')}) OR (r.to_rowid = :me AND {visible_sql('f')}) "
            f"ORDER BY r.created_at, r.id", {"me": rowid, "agent": agent})

    def visible(self, rel_id: str, agent: str | None) -> bool:
        """Whether the relationship exists with both ends visible to ``agent``."""
        return self.db.one(
            f"SELECT 1 FROM relationships r JOIN entries f ON f.rowid = r.from_rowid "
            f"JOIN entries e ON e.rowid = r.to_rowid WHERE r.id = :rid AND {visible_sql('f')} AND "
            f"{visible_sql('e')}", {"rid": rel_id, "agent": agent}) is not None

    def delete(self, rel_id: str) -> None:
        self.db.execute("DELETE FROM relationships WHERE id = ?", (rel_id,))

    def extracted_from(self, rowid: int, agent: str | None) -> str | None:
        """The id of the (visible) entry this one was extracted from, the oldest link first."""
        return cast("str | None", self.db.scalar(
            f"SELECT t.id FROM relationships r JOIN entries t ON t.rowid = r.to_rowid WHERE "
            f"r.from_rowid = :r AND r.type = 'extracted_from' AND {visible_sql('t')} ORDER BY r.created_at "
            f"LIMIT 1", {"r": rowid, "agent": agent}))
