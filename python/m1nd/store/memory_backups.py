"""SQLite backups (entry snapshots before a change) of the memory
(:class:`~m1nd.store.memory_contract.BackupRepository`)."""

from __future__ import annotations

import json
from typing import Any

from m1nd.store.db import Database
from m1nd.store.memory_contract import Entry
from m1nd.store.memory_repo import visible_sql


class BackupRepo:
    def __init__(self, db: Database) -> None:
        self.db = db

    def insert(self, bk_id: str, entry: Entry, operation: str, agent: str | None, now: str, keep: int = 10) -> None:
        """Snapshot ``entry`` and keep only its ``keep`` newest backups."""
        snap = entry.to_json()
        snap.pop("effective_resonance", None)
        self.db.execute(
            "INSERT INTO backups(id, entry_id, snapshot_json, operation, source_agent, visibility, owner, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (bk_id, entry.id, json.dumps(snap, ensure_ascii=False), operation, agent, entry["visibility"],
             entry["owner"], now))
        self.db.execute("DELETE FROM backups WHERE entry_id = ? AND rowid NOT IN "
                        "(SELECT rowid FROM backups WHERE entry_id = ? ORDER BY rowid DESC LIMIT ?)",
                        (entry.id, entry.id, keep))

    def of_entry(self, entry_id: str, agent: str | None) -> list[tuple[Any, ...]]:
        """Visible backups of an entry, newest first: ``(id, entry_id, snapshot_json, operation, source_agent,
        created_at)``."""
        return self.db.all(
            f"SELECT b.id, b.entry_id, b.snapshot_json, b.operation, b.source_agent, b.created_at FROM backups b "
            f"WHERE b.entry_id = :eid AND {visible_sql('b')} ORDER BY b.rowid DESC", {"eid": entry_id, "agent": agent})
