"""Backups: the snapshots kept before every change and delete (ten per entry), listing and restoring them, delete.

Restoring writes a backup of the current state first (so a restore can be undone); a deleted entry comes back with
its id, timestamps, tags and applicability, then is re-embedded outside the transaction.
"""

from __future__ import annotations

import contextlib
import json

from m1nd.errors import InvalidInputError, NotFoundError
from m1nd.memory.core import env_truthy, visible
from m1nd.memory.results import Backup, Deleted, Restored
from m1nd.memory.fts import ident_text
from m1nd.memory.ids import new_backup_id, normalize_entry_id, prefix_candidate
from m1nd.memory.normalize import content_hash, dedup_hash
from m1nd.memory.snapshots import Snapshots
from m1nd.timeutil import format_ms, now_iso, now_ms


class Backups(Snapshots):
    def list_backups(self, raw_id: str, *, agent: str | None) -> list[Backup]:
        eid = normalize_entry_id(raw_id)
        with self._read() as tx:
            rows = tx.backups.of_entry(eid, agent)
            if not rows:
                with contextlib.suppress(NotFoundError, InvalidInputError):
                    rowid = self._resolve(tx, raw_id, agent, "Entry '{id}' not found")
                    eid = tx.entries.id_of(rowid)
                    rows = tx.backups.of_entry(eid, agent)
        out = []
        for bk, entry_id, snap, op, src, created in rows:
            s = json.loads(snap)
            out.append(Backup(id=bk, entry_id=entry_id, title=s.get("title"), body=s.get("body", ""), operation=op,
                              source_agent=src, created_at=created))
        return out

    def restore(self, raw_id: str, *, agent: str | None, backup_id: str | None = None, no_embed: bool = False,
                no_auto_anchor: bool = False) -> Restored:
        eid = normalize_entry_id(raw_id)
        now = now_ms()
        ts = format_ms(now)
        with self._write() as tx:
            hit = tx.entries.rowid_of(eid)
            if hit is not None and not visible(hit, agent):
                raise NotFoundError(f"Entry '{eid}' not found")
            if hit is None and prefix_candidate(eid):
                with contextlib.suppress(NotFoundError):
                    rowid = self._resolve(tx, eid, agent, "Entry '{id}' not found")
                    eid = tx.entries.id_of(rowid)
                    hit = tx.entries.rowid_of(eid)
            rows = tx.backups.of_entry(eid, agent)
            if not rows:
                if hit is None:
                    raise NotFoundError(f"Entry '{eid}' not found")
                raise NotFoundError(f"No backups found for {eid}")
            if backup_id is not None:
                rows = [r for r in rows if r[0] == backup_id.strip()]
                if not rows:
                    raise NotFoundError(f"Backup '{backup_id}' not found for {eid}")
            bk, _, snap_json, op, _, created = rows[0]
            snap = json.loads(snap_json)
            recreated = hit is None
            regs = self._registries(tx)
            self._ensure_registry_values(tx, snap, regs, ts, notes=[])
            if recreated:
                self._insert_snapshot(tx, snap, ts, agent, restoring=True)
            else:
                entry = self._entry(tx, hit[0], agent, now)
                tx.backups.insert(new_backup_id(), entry, "restore", agent, ts)
                title, body = snap["title"], snap.get("body") or ""
                values = {
                    "title": title, "body": body, "summary": snap.get("summary"), "category": snap["category_id"],
                    "wake_phrases": json.dumps(snap.get("wake_phrases") or [], ensure_ascii=False),
                    "code_refs": json.dumps(snap.get("code_refs") or [], ensure_ascii=False),
                    "content_hash": content_hash(body), "dedup_hash": dedup_hash(title, body), "updated_at": ts,
                }
                if tx.entries.dedup_taken(entry["session_id"], entry.dedup_scope, values["category"],
                                          values["dedup_hash"], entry.rowid):
                    values["dedup_exempt"] = 1
                tx.entries.update_entry(entry.rowid, entry.rev, values)
                tags = list(snap.get("tags") or [])
                tx.entries.set_tags(entry.rowid, tags)
                tx.entries.fts_refresh(entry.rowid, title, body, values["summary"], tags, ident_text(title, body))
        deferred = None
        if self.vector_hook is not None and not no_embed and not env_truthy("M1ND_SKIP_WRITE_EMBED"):
            try:  # issue 6: re-embed and re-anchor the restored text (the entry is already durable)
                self.vector_hook.refresh(self, eid, auto_anchor=not no_auto_anchor
                                         and not env_truthy("M1ND_SKIP_WRITE_ANCHOR"))
            except Exception as e:  # noqa: BLE001 — a failing model must never fail the restore
                deferred = f"{type(e).__name__}: {e}"
        return Restored(id=eid, from_backup=bk, backup_created=created, operation=op, recreated=recreated,
                        embed_deferred=deferred)

    def delete(self, raw_id: str, *, agent: str | None) -> Deleted:
        with self._write() as tx:
            rowid = self._resolve(tx, raw_id, agent, "Entry '{id}' not found")
            entry = self._entry(tx, rowid, agent)
            tx.backups.insert(new_backup_id(), entry, "delete", agent, now_iso())
            tx.entries.delete_entry(rowid)
        return Deleted(id=entry.id)
