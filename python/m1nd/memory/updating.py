"""Updating an entry: plan (:mod:`m1nd.memory.update_plan`), then write with a backup and optimistic concurrency.

The entry is read in one snapshot, the plan computed and the vectors prepared outside any transaction; the write
checks the entry's ``rev`` and starts over (at most three times) when another writer moved it in between.
"""

from __future__ import annotations

from typing import Any

from m1nd.errors import InvalidInputError
from m1nd.memory import fields as F
from m1nd.memory.core import Retry, env_truthy
from m1nd.memory.fts import ident_text
from m1nd.memory.ids import new_backup_id
from m1nd.memory.normalize import content_hash, dedup_hash, dedup_scope
from m1nd.memory.results import Updated
from m1nd.memory.update_plan import UpdatePlanning
from m1nd.timeutil import now_iso

# Changing any of these (or the tags) snapshots the entry first.
SNAPSHOT_KEYS = ("title", "body", "summary", "category", "wake_phrases", "code_refs")
# Changing any of these moves the entry's dedup identity.
DEDUP_KEYS = ("title", "body", "category", "owner", "visibility", "session_id")


def operation_of(changes: dict[str, Any]) -> str:
    """The operation a change set is recorded as in its backup: its content mode, else ``update``."""
    return ("append" if "append" in changes else "prepend" if "prepend" in changes else "edit" if "find" in changes
            else "update")


class Updating(UpdatePlanning):
    def update(self, raw_id: str, changes: dict[str, Any], *, agent: str | None, operation: str = "update",
               no_embed: bool = False, no_auto_anchor: bool = False) -> Updated:
        """Apply ``changes`` (keys of :meth:`_plan_update`) with a backup and optimistic concurrency."""
        modes = [k for k in ("content", "append", "prepend", "find") if changes.get(k) is not None]
        if len(modes) > 1:
            raise InvalidInputError(f"content modes cannot be combined: {', '.join(modes)}")
        if changes.get("find") is not None and changes.get("replace") is None:
            raise InvalidInputError("--find requires --replace")
        if changes.get("replace") is not None and changes.get("find") is None:
            raise InvalidInputError("--replace requires --find")
        if changes.get("replace_all") and changes.get("nth") is not None:
            raise InvalidInputError("--replace-all and --nth cannot be combined")
        missing = "Entry not found: {id}"

        def attempt() -> Updated:
            with self._read() as tx:
                rowid = self._resolve(tx, raw_id, agent, missing)
                entry = self._entry(tx, rowid, agent)
                regs = self._registries(tx)
            plan = self._plan_update(entry, changes, agent, regs)
            if plan.empty:
                return Updated(id=entry.id, changes=[], replacements=plan.replacements, bytes_added=plan.bytes_added)
            new_title = plan.values.get("title", entry["title"])
            new_body = plan.values.get("body", entry["body"])
            new_tags = plan.tags if plan.tags is not None else entry["tags"]
            text_changed = (new_title, new_body, new_tags) != (entry["title"], entry["body"], entry["tags"])
            embed = text_changed and not no_embed and not env_truthy("M1ND_SKIP_WRITE_EMBED")
            payload = None
            deferred = None
            if embed and self.vector_hook is not None:
                try:
                    payload = self.vector_hook.prepare([F.embedding_text(new_title, new_body, entry["summary"],
                                                                         new_tags)])[0]
                except Exception as e:  # noqa: BLE001
                    deferred = f"{type(e).__name__}: {e}"
            ts = now_iso()
            with self._write() as tx:
                if plan.tags is not None or any(k in plan.values for k in SNAPSHOT_KEYS):
                    tx.backups.insert(new_backup_id(), entry, operation, agent, ts)
                values = dict(plan.values)
                values["updated_at"] = ts
                if "body" in values:
                    values["content_hash"] = content_hash(values["body"])
                if any(k in values for k in DEDUP_KEYS):
                    src = tx.entries.value_of(entry.rowid, "source_agent")
                    scope = dedup_scope(values.get("visibility", entry["visibility"]),
                                        values.get("owner", entry["owner"]), src)
                    dh = dedup_hash(new_title, new_body)
                    values["dedup_hash"], values["dedup_scope"] = dh, scope
                    if tx.entries.dedup_taken(values.get("session_id", entry["session_id"]), scope,
                                              values.get("category", entry["category_id"]), dh, entry.rowid):
                        values["dedup_exempt"] = 1
                if values.get("session_id"):
                    tx.sessions.ensure(values["session_id"], ts, agent)
                if not tx.entries.update_entry(entry.rowid, entry.rev, values):
                    raise Retry
                if plan.tags is not None:
                    tx.entries.set_tags(entry.rowid, plan.tags)
                if plan.applicability is not None:
                    tx.entries.set_applicability(entry.rowid, plan.applicability)
                for a in plan.anchors_remove:
                    tx.entries.remove_anchor(entry.rowid, a)
                for a in plan.anchors_add:
                    tx.entries.add_anchor(entry.rowid, a, ts)
                if text_changed or "summary" in values:
                    tx.entries.fts_refresh(entry.rowid, new_title, new_body, values.get("summary", entry["summary"]),
                                           new_tags, ident_text(new_title, new_body))
                if payload is not None:
                    self.vector_hook.store(tx, entry.rowid, payload,
                                           auto_anchor=not no_auto_anchor
                                           and not env_truthy("M1ND_SKIP_WRITE_ANCHOR"))
            return Updated(id=entry.id, changes=plan.changes, replacements=plan.replacements,
                           bytes_added=plan.bytes_added, embed_deferred=deferred)

        updated: Updated = self._retrying(attempt, raw_id)
        return updated
