"""Adding entries: one add (plain, fact, or a thread close) and the batch add (one transaction, a savepoint per line).

Model inference for the vectors (the ``vector_hook``, issue 6) runs before the write transaction; storing the vectors
runs inside it. A failing model never loses the entry: it is written without vectors and the answer says
``embed_deferred``. The answers are the dataclasses of :mod:`m1nd.memory.results` (:class:`Added`,
:class:`AlreadySaved` or :class:`ThreadClosed` for one add, :class:`BatchAdded` for a batch); the tools and commands add
the wire shape and the notes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from m1nd.errors import InvalidInputError, M1ndError, NotFoundError
from m1nd.memory import fields as F
from m1nd.memory.core import MemoryCore, env_truthy, visible
from m1nd.memory.fts import ident_text
from m1nd.memory.ids import new_entry_id, new_relationship_id
from m1nd.memory.normalize import content_hash, dedup_hash, dedup_scope, thread_key
from m1nd.memory.results import Added, AddResult, AlreadySaved, BatchAdded, BatchFailure, BatchItem, ThreadClosed
from m1nd.store.memory_tx import MemoryTx
from m1nd.timeutil import format_ms, now_iso, now_ms


class Adding(MemoryCore):
    def add(self, raw: dict[str, Any], *, agent: str | None, no_embed: bool = False, no_auto_anchor: bool = False,
            default_source_type: str = "manual", base_dir: Path | None = None) -> AddResult:
        """One add (plain or fact, or a thread close). ``raw`` uses the batch-style keys of :mod:`fields`."""
        plan = F.parse_add(raw, agent=agent, base_dir=base_dir, default_source_type=default_source_type)
        embed = plan.embed and not no_embed and not env_truthy("M1ND_SKIP_WRITE_EMBED")
        payloads, deferred = self._prepare_vectors([plan], embed)
        with self._write() as tx:
            regs = self._registries(tx)
            res = self._apply_plan(tx, plan, agent, regs, payload=payloads[0],
                                   auto_anchor=plan.auto_anchor and not no_auto_anchor
                                   and not env_truthy("M1ND_SKIP_WRITE_ANCHOR"))
        if deferred and isinstance(res, Added):
            res = replace(res, embed_deferred=deferred)
        return res

    def _prepare_vectors(self, plans: list[F.AddPlan], embed: bool) -> tuple[list[Any], str | None]:
        """Model inference before the transaction (issue 6 plugs in here)."""
        hook = self.vector_hook
        if hook is None or not embed:
            return [None] * len(plans), None
        todo = [i for i, p in enumerate(plans) if p.kind != "close"]  # closing a thread embeds nothing
        out: list[Any] = [None] * len(plans)
        if not todo:
            return out, None
        texts = [F.embedding_text(plans[i].title, plans[i].body, None, plans[i].tags) for i in todo]
        try:
            for i, payload in zip(todo, hook.prepare(texts), strict=True):
                out[i] = payload
        except Exception as e:  # noqa: BLE001 — a failing model must never lose the entry
            return [None] * len(plans), f"{type(e).__name__}: {e}"
        return out, None

    def _apply_plan(self, tx: MemoryTx, plan: F.AddPlan, agent: str | None, regs: dict[str, set[str]], *,
                    payload: Any = None, auto_anchor: bool = True) -> AddResult:
        if plan.kind == "close":
            return self._close_thread(tx, plan, agent)
        anchor_rowids = self._validate_refs(tx, plan, agent, regs)
        now = now_ms()
        ts = format_ms(now)
        scope = dedup_scope(plan.visibility, plan.owner, plan.source_agent)
        dh = dedup_hash(plan.title, plan.body)
        dedup_note = None
        if plan.session_id is not None:
            if plan.session_id not in regs.setdefault("sessions_seen", set()):
                tx.sessions.ensure(plan.session_id, ts, agent or plan.source_agent)
                regs["sessions_seen"].add(plan.session_id)
        elif not plan.allow_duplicate:
            dedup_note = "bypassed_no_session"
        row = {
            "id": new_entry_id(), "title": plan.title, "body": plan.body, "summary": None,
            "category": plan.category, "visibility": plan.visibility, "owner": plan.owner,
            "source_agent": plan.source_agent, "source_project": plan.project, "source_type": plan.source_type,
            "entry_type": plan.entry_type, "content_type": plan.content_type, "session_id": plan.session_id,
            "domain": plan.domain, "ephemeral": int(plan.ephemeral), "resonance": plan.resonance,
            "resonance_type": plan.resonance_type, "fact_type": plan.fact_type, "fact_state": plan.fact_state,
            "wake_phrases": json.dumps(plan.wake_phrases, ensure_ascii=False), "wake_order": plan.wake_order,
            "code_refs": json.dumps(plan.code_refs, ensure_ascii=False), "content_hash": content_hash(plan.body),
            "dedup_hash": dh, "dedup_scope": scope, "dedup_exempt": int(plan.allow_duplicate),
            "last_activated": None, "activation_count": 0, "chunk_count": 0, "embedding_model": None,
            "embedded_at": None, "created_at": ts, "updated_at": ts, "rev": 1,
        }
        rowid = None
        for _ in range(4):
            rowid = tx.entries.insert_entry(row)
            if rowid is not None:
                break
            hit = (tx.entries.find_dedup(plan.session_id, scope, plan.category, dh)
                   if plan.session_id and not plan.allow_duplicate else None)
            if hit is not None:
                if hit[3] == "public" or (agent is not None and hit[4] == agent):
                    return AlreadySaved(id=hit[1], title=hit[2])
                row["dedup_exempt"] = 1  # never reveal (or collide with) an entry the caller cannot see
            row["id"] = new_entry_id()  # an id collision (2^-64) or the exemption above: try again
        if rowid is None:
            raise M1ndError("could not allocate an entry id; retry")
        tx.entries.set_tags(rowid, plan.tags, replace=False)
        if plan.applicability:
            tx.entries.set_applicability(rowid, plan.applicability, replace=False)
        for a in anchor_rowids:
            tx.entries.add_anchor(rowid, a, ts)
        if plan.session_id and plan.session_id.startswith("kn-"):
            target = tx.entries.rowid_of(plan.session_id)
            if visible(target, agent):
                tx.relationships.insert(new_relationship_id(), rowid, target[0], "extracted_from", ts)
        tx.entries.fts_refresh(rowid, plan.title, plan.body, None, plan.tags, ident_text(plan.title, plan.body),
                               new=True)
        if payload is not None and self.vector_hook is not None:
            self.vector_hook.store(tx, rowid, payload, auto_anchor=auto_anchor)
        return Added(id=row["id"], category=plan.category, title=plan.title, visibility=plan.visibility,
                     owner=plan.owner, resonance=plan.resonance, resonance_type=plan.resonance_type, tags=plan.tags,
                     applicability=plan.applicability, anchors=plan.anchors, wake_phrases=plan.wake_phrases,
                     code_refs=plan.code_refs, session_id=plan.session_id, body=plan.body, dedup=dedup_note,
                     fact=plan.kind == "fact", fact_type=plan.fact_type)

    def _validate_refs(self, tx: MemoryTx, plan: F.AddPlan, agent: str | None, regs: dict[str, set[str]]
                       ) -> list[int]:
        """Check the plan's registry values and anchors; returns the anchors' rowids."""
        def check(kind: str, value: str | None, label: str) -> None:
            if value is not None and value not in regs[kind]:
                raise InvalidInputError(f"Invalid {label} '{value}'. Valid: {', '.join(sorted(regs[kind]))}")
        if plan.category not in regs["categories"]:
            raise InvalidInputError(f"Invalid category '{plan.category}'. Valid categories: "
                                    f"{', '.join(sorted(regs['categories']))}")
        check("source_types", plan.source_type, "source type")
        check("entry_types", plan.entry_type, "entry type")
        check("content_types", plan.content_type, "content type")
        for a in plan.applicability:
            check("applicability", a, "applicability")
        if plan.project is not None and plan.project not in regs["projects"]:
            raise InvalidInputError(f"Unknown project '{plan.project}'; register it with m1nd memory projects add")
        rowids = []
        for aid in plan.anchors:
            hit = tx.entries.rowid_of(aid)
            if not visible(hit, agent):
                raise NotFoundError(f"Anchor '{aid}' not found")
            rowids.append(hit[0])
        return rowids

    def _close_thread(self, tx: MemoryTx, plan: F.AddPlan, agent: str | None) -> ThreadClosed:
        ts = now_iso()
        if plan.thread_id:
            hit = tx.entries.rowid_of(plan.thread_id)
            if not visible(hit, agent):
                raise NotFoundError(f"Thread not found: {plan.thread_id}")
            rowid = hit[0]
            if tx.entries.value_of(rowid, "category") != "thread":
                raise InvalidInputError(f"Entry {plan.thread_id} is not a thread")
            eid = plan.thread_id
        else:
            want = thread_key(plan.body)
            rowid, eid = None, None
            for r in tx.entries.open_threads(agent):
                if thread_key(r[2]) == want:
                    rowid, eid = r[0], r[1]
                    break
            if rowid is None:
                raise NotFoundError(f"No open thread found matching content: '{plan.body}'")
        tx.entries.close_thread(rowid, ts)
        return ThreadClosed(id=eid)

    def add_batch(self, lines: Iterable[str], *, agent: str | None, base_dir: Path | None = None,
                  no_embed: bool = False, no_auto_anchor: bool = False, default_source_type: str = "manual",
                  objects: bool = False, progress: Callable[[int, int], None] | None = None) -> BatchAdded:
        """Add many entries: one transaction, a savepoint per line (partial success).

        ``lines`` are JSONL text lines (``objects=False``; blank and ``#`` lines are skipped but counted, numbers
        are physical 1-based lines) or already-decoded objects (``objects=True``, MCP; numbers are 0-based).
        """
        items: list[tuple[int, Any]] = []
        failed: list[BatchFailure] = []
        for n, line in enumerate(lines, start=0 if objects else 1):
            if objects:
                items.append((n, line))
                continue
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            try:
                obj = json.loads(s)
            except json.JSONDecodeError as e:
                failed.append(BatchFailure(n, f"invalid JSON: {e.msg} (column {e.colno})"))
                continue
            if not isinstance(obj, dict):
                failed.append(BatchFailure(n, "line is not a JSON object"))
                continue
            items.append((n, obj))
        plans: list[tuple[int, F.AddPlan]] = []
        for n, obj in items:
            try:
                if not isinstance(obj, dict):
                    raise InvalidInputError("entry is not an object")
                F.check_field_types(obj)
                plans.append((n, F.parse_add(obj, agent=agent, base_dir=base_dir,
                                             default_source_type=default_source_type)))
            except M1ndError as e:
                failed.append(BatchFailure(n, e.message))
        embed = not no_embed and not env_truthy("M1ND_SKIP_WRITE_EMBED")
        payloads, deferred = self._prepare_vectors([p for _, p in plans], embed)
        auto_anchor = not no_auto_anchor and not env_truthy("M1ND_SKIP_WRITE_ANCHOR")
        added: list[BatchItem] = []
        saved: list[BatchItem] = []
        bypassed: list[int] = []
        total = len(plans)
        with self._write() as tx:
            regs = self._registries(tx)
            for i, ((n, plan), payload) in enumerate(zip(plans, payloads, strict=True)):
                try:
                    with tx.savepoint():
                        res = self._apply_plan(tx, plan, agent, regs, payload=payload,
                                               auto_anchor=auto_anchor and plan.auto_anchor)
                except M1ndError as e:
                    failed.append(BatchFailure(n, e.message))
                    continue
                if isinstance(res, AlreadySaved):
                    saved.append(BatchItem(n, res.id, res.title, res.kind))
                elif isinstance(res, ThreadClosed):
                    added.append(BatchItem(n, res.id, None, res.kind))
                else:
                    added.append(BatchItem(n, res.id, res.title, res.kind))
                    if res.dedup == "bypassed_no_session":
                        bypassed.append(n)
                if progress is not None and (i + 1) % 1000 == 0:
                    progress(i + 1, total)
        failed.sort(key=lambda f: f.line)
        embedded = 0 if (deferred or not embed or self.vector_hook is None) else sum(
            1 for a in added if a.kind != "closed")
        return BatchAdded(added=added, already_saved=saved, failed=failed, embedded=embedded, bypassed=bypassed,
                          embed_deferred=deferred)
