"""Perspectives: each agent's navigable explorations of the code graph (perspectives.md), in the ``perspectives``
table (one row per perspective: its agent, encoded state and last write time).

The state's encoding, versions, locks and limits are :mod:`m1nd.perspectives.service`'s; the repository reads and
writes rows inside the caller's ``db.write()`` transaction (reads need none).
"""

from __future__ import annotations

from typing import Any

from m1nd.store.db import Database


class PerspectiveRepo:
    def __init__(self, db: Database) -> None:
        self.db = db

    def count(self, agent: str) -> int:
        return int(self.db.scalar("SELECT COUNT(*) FROM perspectives WHERE agent = ?", (agent,), default=0))

    def state(self, perspective_id: str) -> str | None:
        """The encoded state of one perspective, or None when it is gone."""
        text = self.db.scalar("SELECT state FROM perspectives WHERE id = ?", (perspective_id,))
        return None if text is None else str(text)

    def owner_and_stamp(self, perspective_id: str) -> tuple[str, int] | None:
        """(agent, updated_ms) of one perspective, or None."""
        row = self.db.one("SELECT agent, updated_ms FROM perspectives WHERE id = ?", (perspective_id,))
        return None if row is None else (str(row[0]), int(row[1]))

    def stamps_of(self, agent: str) -> list[tuple[str, int]]:
        """(id, updated_ms) of every perspective of ``agent``."""
        return [(str(r[0]), int(r[1])) for r in
                self.db.all("SELECT id, updated_ms FROM perspectives WHERE agent = ?", (agent,))]

    def idle_since(self, cutoff_ms: int) -> list[str]:
        """Ids of the perspectives last written before ``cutoff_ms``."""
        return [str(r[0]) for r in self.db.all("SELECT id FROM perspectives WHERE updated_ms < ?", (cutoff_ms,))]

    def save(self, perspective_id: str, agent: str, state: str, updated_ms: int) -> None:
        self.db.execute("INSERT INTO perspectives(id, agent, state, updated_ms) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT(id) DO UPDATE SET state = excluded.state, updated_ms = excluded.updated_ms",
                        (perspective_id, agent, state, updated_ms))

    def delete(self, perspective_id: str, agent: str | None = None) -> None:
        """Drop one perspective (only if it belongs to ``agent``, when given)."""
        if agent is None:
            self.db.execute("DELETE FROM perspectives WHERE id = ?", (perspective_id,))
        else:
            self.db.execute("DELETE FROM perspectives WHERE id = ? AND agent = ?", (perspective_id, agent))

    def file_record(self, root_id: int, relpath: str) -> tuple[Any, ...] | None:
        """(size, mtime_ns) of an ingested file as the last ingest saw it (to tell whether it changed since)."""
        row: tuple[Any, ...] | None = self.db.one(
            "SELECT size, mtime_ns FROM files WHERE root_id = ? AND relpath = ?", (root_id, relpath))
        return row
