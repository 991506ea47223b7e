"""Entries from their JSON shape: the snapshot insert shared by restore (a deleted entry comes back) and seeding.

The entry keeps its id and timestamps; registry values it names but the store lacks are created (with a note).
"""

from __future__ import annotations

import json
from typing import Any

from m1nd.errors import InvalidInputError
from m1nd.memory.core import MemoryCore
from m1nd.memory.fts import ident_text
from m1nd.memory.normalize import content_hash, dedup_hash, dedup_scope
from m1nd.store.memory_tx import MemoryTx


class Snapshots(MemoryCore):
    def _ensure_registry_values(self, tx: MemoryTx, snap: dict[str, Any], regs: dict[str, set[str]], ts: str,
                                notes: list[str]) -> None:
        def need(kind: str, value: str | None, label: str) -> None:
            if value is None or value in regs[kind]:
                return
            tx.registries.ensure(kind, value, ts)
            regs[kind].add(value)
            notes.append(f"note: created {label} '{value}'")
        need("categories", snap["category_id"], "category")
        need("projects", snap.get("source_project_id"), "project")
        need("source_types", snap.get("source_type_id"), "source type")
        need("entry_types", snap.get("entry_type_id"), "entry type")
        need("content_types", snap.get("content_type_id"), "content type")
        for a in snap.get("applicability") or []:
            need("applicability", a, "applicability")

    def _insert_snapshot(self, tx: MemoryTx, snap: dict[str, Any], ts: str, agent: str | None, *,
                         restoring: bool = False, sessions_seen: set[str] | None = None) -> tuple[int, bool]:
        """Insert an entry from its JSON shape keeping id and timestamps. Returns ``(rowid, dedup_collided)``."""
        title, body = snap["title"], snap.get("body") or ""
        owner = snap.get("owner") if snap.get("visibility") == "private" else None
        source_agent = snap.get("source_agent_id") or owner or agent or "unknown"
        scope = dedup_scope("private" if owner else "public", owner, source_agent)
        dh = dedup_hash(title, body)
        sid = snap.get("session_id")
        if sid and (sessions_seen is None or sid not in sessions_seen):
            tx.sessions.ensure(sid, snap.get("created_at") or ts, source_agent)
            if sessions_seen is not None:
                sessions_seen.add(sid)
        row = {
            "id": snap["id"], "title": title, "body": body, "summary": snap.get("summary"),
            "category": snap["category_id"], "visibility": "private" if owner else "public", "owner": owner,
            "source_agent": source_agent, "source_project": snap.get("source_project_id"),
            "source_type": snap.get("source_type_id") or "manual", "entry_type": snap.get("entry_type_id") or "primary",
            "content_type": snap.get("content_type_id") or "text", "session_id": sid, "domain": snap.get("domain"),
            "ephemeral": int(bool(snap.get("ephemeral"))), "resonance": int(snap.get("resonance") or 0),
            "resonance_type": snap.get("resonance_type"), "fact_type": snap.get("fact_type"),
            "fact_state": snap.get("fact_state"),
            "wake_phrases": json.dumps(snap.get("wake_phrases") or [], ensure_ascii=False),
            "wake_order": snap.get("wake_order"),
            "code_refs": json.dumps(snap.get("code_refs") or [], ensure_ascii=False),
            "content_hash": content_hash(body), "dedup_hash": dh, "dedup_scope": scope, "dedup_exempt": 0,
            "last_activated": snap.get("last_activated"), "activation_count": int(snap.get("activation_count") or 0),
            "chunk_count": 0, "embedding_model": None, "embedded_at": None,
            "created_at": snap.get("created_at") or ts, "updated_at": ts if restoring else (snap.get("updated_at")
                                                                                          or ts), "rev": 1,
        }
        collided = False
        rowid = tx.entries.insert_entry(row)  # ON CONFLICT DO NOTHING: None when the dedup index (or the id) collides
        if rowid is None:
            if not (sid and tx.entries.dedup_taken(sid, scope, row["category"], dh, -1)):
                raise InvalidInputError(f"entry id '{row['id']}' appears twice")
            row["dedup_exempt"] = 1
            collided = True
            rowid = tx.entries.insert_entry(row, strict=True)
        tags = list(snap.get("tags") or [])
        tx.entries.set_tags(rowid, tags, replace=False)
        if snap.get("applicability"):
            tx.entries.set_applicability(rowid, snap["applicability"], replace=False)
        tx.entries.fts_refresh(rowid, title, body, row["summary"], tags, ident_text(title, body), new=True)
        return rowid, collided
