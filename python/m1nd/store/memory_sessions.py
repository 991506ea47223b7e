"""SQLite sessions of the knowledge memory (:class:`~m1nd.store.memory_contract.SessionRepository`)."""

from __future__ import annotations

from typing import Any

from m1nd.store.db import Database
from m1nd.store.memory_repo import visible_sql


class SessionRepo:
    def __init__(self, db: Database) -> None:
        self.db = db

    def ensure(self, session_id: str, now: str, created_by: str | None, session_type: str = "agent_task") -> None:
        self.db.execute("INSERT OR IGNORE INTO sessions(id, session_type, project, started_at, ended_at, created_by) "
                        "VALUES (?, ?, NULL, ?, NULL, ?)", (session_id, session_type, now, created_by))

    def exists(self, session_id: str) -> bool:
        return self.db.one("SELECT 1 FROM sessions WHERE id = ?", (session_id,)) is not None

    def create(self, session_id: str, session_type: str, project: str | None, now: str,
               created_by: str | None) -> None:
        self.db.execute("INSERT INTO sessions(id, session_type, project, started_at, ended_at, created_by) "
                        "VALUES (?, ?, ?, ?, NULL, ?)", (session_id, session_type, project, now, created_by))

    def ended_at(self, session_id: str) -> tuple[str | None] | None:
        """``(ended_at,)`` of a session, or None when it does not exist."""
        return self.db.one("SELECT ended_at FROM sessions WHERE id = ?", (session_id,))

    def close(self, session_id: str, now: str) -> None:
        self.db.execute("UPDATE sessions SET ended_at = ? WHERE id = ?", (now, session_id))

    def visible(self, agent: str | None, project: str | None) -> list[tuple[Any, ...]]:
        """Sessions ``agent`` may know of, newest first: ``(id, session_type, project, started_at, ended_at,
        created_by)``. Its own, empty ones, and those holding an entry it can see."""
        return self.db.all(
            "SELECT s.id, s.session_type, s.project, s.started_at, s.ended_at, s.created_by FROM sessions s "
            "WHERE (s.created_by IS :agent OR NOT EXISTS (SELECT 1 FROM entries e WHERE e.session_id = s.id) "
            f"OR EXISTS (SELECT 1 FROM entries e WHERE e.session_id = s.id AND {visible_sql()}))"
            + (" AND s.project = :project" if project else "") + " ORDER BY s.started_at DESC, s.id",
            {"agent": agent, "project": project})
