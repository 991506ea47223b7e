"""The knowledge memory service: every ``m1nd memory`` command and ``memory_*`` tool goes through here.

Layering: adapters (``m1nd.cli.memory``, ``m1nd.mcp.tools.memory``) parse their input, call one method, and render
the plain dictionaries it returns; they decide nothing. This module validates, enforces visibility (spec memory.md
§3), runs each command in one write transaction (``BEGIN IMMEDIATE … COMMIT``) or one read snapshot, and keeps
``entries_fts`` current inside the writing transaction. All SQL lives in :mod:`m1nd.store.memory_repo`.

Hooks for later issues
----------------------
``vector_hook`` (None for now) is the embedding/anchoring plug-in of issue 6. When set, it is an object with

* ``prepare(texts: list[str]) -> list[Any]`` — model inference, called **before** the write transaction;
* ``store(repo, rowid, payload, *, auto_anchor: bool) -> None`` — called inside the transaction to store vectors,
  chunks and anchors; ``payload`` is what ``prepare`` returned for that text;
* ``model_id`` (str | None) — the active model, used by ``health``;
* ``search(query, *, candidates) -> list[tuple[int, float]]`` — entry rowids with scores, for semantic search.

When ``prepare`` raises, the entry is still written without vectors and the result says ``embed_deferred``.
The wake cascade and ritual (issue 7) use :meth:`MemoryService.visible_where` and the repository directly.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from m1nd.errors import BusyError, InvalidInputError, M1ndError, NotFoundError
from m1nd.memory import fields as F
from m1nd.memory.decay import eff_res_sql
from m1nd.memory.fts import build_match, ident_text, query_terms
from m1nd.memory.ids import (
    new_backup_id,
    new_entry_id,
    new_relationship_id,
    new_session_id,
    normalize_entry_id,
    prefix_candidate,
)
from m1nd.memory.normalize import content_hash, dedup_hash, dedup_scope, thread_key
from m1nd.memory.timeutil import format_ms, now_ms
from m1nd.store.db import Database, PerThread, open_db
from m1nd.store.memory_repo import Entry, MemoryRepo, Where, visible_sql
from m1nd.store.memory_schema import FACT_TYPES, MIGRATIONS, RESONANCE_TYPES

log = logging.getLogger(__name__)

TRUTHY = ("1", "true", "yes")
REGISTRY_TABLES = {
    "categories": "categories", "source_types": "source_types", "entry_types": "entry_types",
    "content_types": "content_types", "session_types": "session_types",
    "relationship_types": "relationship_types", "applicability": "applicability_types",
}
CATEGORY_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
NO_REINFORCE_TYPES = frozenset({"contradicts", "supersedes"})
MAX_RETRIES = 3


def env_truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in TRUTHY


def default_basis(command_default: str) -> str:
    env = os.environ.get("M1ND_RESONANCE_BASIS", "").strip().lower()
    return env if env in ("raw", "decayed") else command_default


class _Retry(Exception):
    """An optimistic-concurrency conflict: the entry's rev moved between read and write."""


@dataclass
class Filters:
    """The shared filter flags of ``list`` and ``search`` (spec memory.md §9)."""

    categories: list[str] = field(default_factory=list)
    visibility: str = "public"  # "public", "include" (public + own private) or "mine" (own private only)
    min_resonance: float | None = None
    max_resonance: float | None = None
    basis: str = "decayed"
    has_wake_phrase: bool | None = None
    has_anchors: bool | None = None
    has_resonance_type: bool | None = None
    tags: list[str] = field(default_factory=list)
    exclude_tags: list[str] = field(default_factory=list)
    code_ref: str | None = None
    project: str | None = None
    session_id: str | None = None


@dataclass
class Outcome:
    """A command result: ``data`` is the JSON answer; ``notes`` are stderr lines; ``lines`` are text output."""

    data: Any
    notes: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


class MemoryService:
    """The knowledge memory over one ``memory.db`` file (one APSW connection per thread)."""

    def __init__(self, path: Path | str, *, busy_timeout_ms: int = 10000, apply_schema: bool = True,
                 vector_hook: Any = None) -> None:
        self.path = Path(path)
        self.busy_timeout_ms = busy_timeout_ms
        self.vector_hook = vector_hook
        self._threads = PerThread(self._connect)
        if apply_schema:
            self.migrate()

    @classmethod
    def open(cls, settings: Any, *, vector_hook: Any = None) -> MemoryService:
        return cls(settings.memory_db, busy_timeout_ms=settings.busy_timeout_ms,
                   apply_schema=not env_truthy("M1ND_SKIP_SCHEMA"), vector_hook=vector_hook)

    def _connect(self) -> Database:
        db = open_db(self.path, busy_timeout_ms=self.busy_timeout_ms)
        db.create_scalar_function("eff_res", eff_res_sql, 5, deterministic=True)
        return db

    @property
    def db(self) -> Database:
        return self._threads.get()

    @property
    def repo(self) -> MemoryRepo:
        return MemoryRepo(self.db)

    def migrate(self) -> tuple[int, int]:
        """Apply pending migrations; returns ``(applied, version)``."""
        db = self.db
        applied = db.migrate(MIGRATIONS)
        return applied, db.user_version()

    def close(self) -> None:
        self._threads.close_all()

    # -- transactions -------------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _write(self) -> Iterator[MemoryRepo]:
        try:
            with self.db.write():
                yield self.repo
        except BusyError as e:
            raise BusyError(f"memory database is busy (another writer held it for {self.busy_timeout_ms / 1000:g} "
                            "s); retry", recover="retry when the other writer finishes") from e

    @contextlib.contextmanager
    def _read(self) -> Iterator[MemoryRepo]:
        with self.db.read():
            yield self.repo

    def _savepoint(self, name: str = "line") -> Any:
        db = self.db

        @contextlib.contextmanager
        def sp() -> Iterator[None]:
            db.execute(f"SAVEPOINT {name}")
            try:
                yield
            except BaseException:
                db.execute(f"ROLLBACK TO {name}")
                db.execute(f"RELEASE {name}")
                raise
            db.execute(f"RELEASE {name}")
        return sp()

    def _retrying(self, fn: Callable[[], Any], entry_id: str) -> Any:
        for _ in range(MAX_RETRIES):
            try:
                return fn()
            except _Retry:
                continue
        raise M1ndError(f"entry {entry_id} changed concurrently; retry", code="busy",
                        recover="run the command again")

    # -- ids and visibility -------------------------------------------------------------------------------------
    @staticmethod
    def visible_where(agent: str | None) -> tuple[str, dict[str, Any]]:
        """The visibility predicate over ``entries e`` and its parameters (for the wake module)."""
        return visible_sql(), {"agent": agent}

    def _resolve(self, repo: MemoryRepo, raw: str, agent: str | None, missing: str) -> int:
        """The rowid of a visible entry by id or unique ≥ 8-hex prefix; ``missing`` formats the not-found text."""
        try:
            eid = normalize_entry_id(raw)
        except InvalidInputError:
            raise NotFoundError(missing.format(id=raw.strip()), recover="list entries to find a valid id") from None
        hit = repo.rowid_of(eid)
        if hit is not None and (hit[1] == "public" or (agent is not None and hit[2] == agent)):
            return hit[0]
        pre = prefix_candidate(eid) if hit is None else None
        if pre:
            ids = repo.visible_by_prefix(pre, agent, limit=3)
            if len(ids) == 1:
                return repo.rowid_of(ids[0])[0]
            if len(ids) > 1:
                shown = ", ".join(i[:len(pre) + 2] + "…" for i in ids[:2])
                raise InvalidInputError(f"id '{eid}' is ambiguous: {shown}", recover="give more hex digits")
        raise NotFoundError(missing.format(id=eid), recover="list entries to find a valid id")

    def _entry(self, repo: MemoryRepo, rowid: int, agent: str | None, now: int | None = None) -> Entry:
        return repo.hydrate_rowids([rowid], agent=agent, now=now or now_ms())[0]

    def _registries(self, repo: MemoryRepo) -> dict[str, set[str]]:
        out = {k: set(repo.registry_ids(t)) for k, t in REGISTRY_TABLES.items()}
        out["projects"] = set(repo.registry_ids("projects"))
        return out

    # =========================================================================================================
    # Adding
    # =========================================================================================================
    def add(self, raw: dict[str, Any], *, agent: str | None, no_embed: bool = False, no_auto_anchor: bool = False,
            default_source_type: str = "manual", base_dir: Path | None = None) -> Outcome:
        """One add (plain or fact, or a thread close). ``raw`` uses the batch-style keys of :mod:`fields`."""
        plan = F.parse_add(raw, agent=agent, base_dir=base_dir, default_source_type=default_source_type)
        embed = plan.embed and not no_embed and not env_truthy("M1ND_SKIP_WRITE_EMBED")
        payloads, deferred = self._prepare_vectors([plan], embed)
        with self._write() as repo:
            regs = self._registries(repo)
            res = self._apply_plan(repo, plan, agent, regs, payload=payloads[0],
                                   auto_anchor=plan.auto_anchor and not no_auto_anchor
                                   and not env_truthy("M1ND_SKIP_WRITE_ANCHOR"))
        if deferred and res["kind"] in ("added", "fact"):
            res["json"]["embed_deferred"] = deferred
            res.setdefault("notes", []).append(f"embedding deferred (entry durable, id={res['json']['id']}): "
                                               f"{deferred}")
        return Outcome(res["json"], notes=res.get("notes", []),
                       extra={"kind": res["kind"], "title": res.get("title"), "body": res.get("body")})

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

    def _apply_plan(self, repo: MemoryRepo, plan: F.AddPlan, agent: str | None, regs: dict[str, set[str]], *,
                    payload: Any = None, auto_anchor: bool = True) -> dict[str, Any]:
        if plan.kind == "close":
            return self._close_thread(repo, plan, agent)
        self._validate_refs(repo, plan, agent, regs)
        now = now_ms()
        ts = format_ms(now)
        scope = dedup_scope(plan.visibility, plan.owner, plan.source_agent)
        dh = dedup_hash(plan.title, plan.body)
        notes: list[str] = []
        dedup_note = None
        if plan.session_id is not None:
            if plan.session_id not in regs.setdefault("sessions_seen", set()):
                repo.ensure_session(plan.session_id, ts, agent or plan.source_agent)
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
            rowid = repo.insert_entry(row)
            if rowid is not None:
                break
            hit = (repo.find_dedup(plan.session_id, scope, plan.category, dh)
                   if plan.session_id and not plan.allow_duplicate else None)
            if hit is not None:
                if hit[3] == "public" or (agent is not None and hit[4] == agent):
                    return {"kind": "skipped", "title": hit[2], "json": {
                        "id": hit[1], "skipped": True, "duplicate_of": hit[1], "status": "already_persisted",
                        "note": "identical entry exists this session; no write needed"}}
                row["dedup_exempt"] = 1  # never reveal (or collide with) an entry the caller cannot see
            row["id"] = new_entry_id()  # an id collision (2^-64) or the exemption above: try again
        if rowid is None:
            raise M1ndError("could not allocate an entry id; retry")
        repo.set_tags(rowid, plan.tags, replace=False)
        if plan.applicability:
            repo.set_applicability(rowid, plan.applicability, replace=False)
        for a in plan.anchor_rowids:  # type: ignore[attr-defined]
            repo.add_anchor(rowid, a, ts)
        if plan.session_id and plan.session_id.startswith("kn-"):
            target = repo.rowid_of(plan.session_id)
            if target is not None and (target[1] == "public" or (agent is not None and target[2] == agent)):
                repo.insert_relationship(new_relationship_id(), rowid, target[0], "extracted_from", ts)
        repo.fts_refresh(rowid, plan.title, plan.body, None, plan.tags, ident_text(plan.title, plan.body), new=True)
        if payload is not None and self.vector_hook is not None:
            self.vector_hook.store(repo, rowid, payload, auto_anchor=auto_anchor)
        out = {
            "id": row["id"], "category": plan.category, "title": plan.title, "visibility": plan.visibility,
            "owner": plan.owner, "resonance": plan.resonance, "resonance_type": plan.resonance_type,
            "tags": plan.tags, "applicability": plan.applicability, "anchors": plan.anchors,
            "wake_phrases": plan.wake_phrases, "code_refs": plan.code_refs, "session_id": plan.session_id,
        }
        if dedup_note:
            out["dedup"] = dedup_note
        if plan.kind == "fact":
            out["fact_type"] = plan.fact_type
        return {"kind": "fact" if plan.kind == "fact" else "added", "title": plan.title, "json": out,
                "notes": notes, "body": plan.body}

    def _validate_refs(self, repo: MemoryRepo, plan: F.AddPlan, agent: str | None,
                       regs: dict[str, set[str]]) -> None:
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
            hit = repo.rowid_of(aid)
            if hit is None or not (hit[1] == "public" or (agent is not None and hit[2] == agent)):
                raise NotFoundError(f"Anchor '{aid}' not found")
            rowids.append(hit[0])
        plan.anchor_rowids = rowids  # type: ignore[attr-defined]

    def _close_thread(self, repo: MemoryRepo, plan: F.AddPlan, agent: str | None) -> dict[str, Any]:
        ts = format_ms(now_ms())
        if plan.thread_id:
            hit = repo.rowid_of(plan.thread_id)
            if hit is None or not (hit[1] == "public" or (agent is not None and hit[2] == agent)):
                raise NotFoundError(f"Thread not found: {plan.thread_id}")
            rowid = hit[0]
            cat = repo.db.scalar("SELECT category FROM entries WHERE rowid = ?", (rowid,))
            if cat != "thread":
                raise InvalidInputError(f"Entry {plan.thread_id} is not a thread")
            eid = plan.thread_id
        else:
            want = thread_key(plan.body)
            rowid, eid = None, None
            for r in repo.db.execute(
                    f"SELECT e.rowid, e.id, e.body FROM entries e WHERE e.category = 'thread' AND "
                    f"(e.fact_state IS NULL OR e.fact_state = 'open') AND {visible_sql()} "
                    f"ORDER BY e.created_at, e.rowid", {"agent": agent}):
                if thread_key(r[2]) == want:
                    rowid, eid = r[0], r[1]
                    break
            if rowid is None:
                raise NotFoundError(f"No open thread found matching content: '{plan.body}'")
        repo.db.execute("UPDATE entries SET fact_state = 'closed', updated_at = ?, rev = rev + 1 WHERE rowid = ?",
                        (ts, rowid))
        return {"kind": "closed", "title": None, "json": {"id": eid, "closed": True}}

    def add_batch(self, lines: Iterable[str], *, agent: str | None, base_dir: Path | None = None,
                  no_embed: bool = False, no_auto_anchor: bool = False, default_source_type: str = "manual",
                  objects: bool = False, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        """Add many entries: one transaction, a savepoint per line (partial success).

        ``lines`` are JSONL text lines (``objects=False``; blank and ``#`` lines are skipped but counted, numbers
        are physical 1-based lines) or already-decoded objects (``objects=True``, MCP; numbers are 0-based).
        Returns ``{added, already_saved, failed, embedded, bypassed, events}``; ``events`` are
        ``(number, kind, item)`` in input order, ``bypassed`` the numbers written without a session (no dedup).
        """
        items: list[tuple[int, Any]] = []
        failed: list[dict[str, Any]] = []
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
                failed.append({"line": n, "error": f"invalid JSON: {e.msg} (column {e.colno})"})
                continue
            if not isinstance(obj, dict):
                failed.append({"line": n, "error": "line is not a JSON object"})
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
                failed.append({"line": n, "error": e.message})
        embed = not no_embed and not env_truthy("M1ND_SKIP_WRITE_EMBED")
        payloads, deferred = self._prepare_vectors([p for _, p in plans], embed)
        auto_anchor = not no_auto_anchor and not env_truthy("M1ND_SKIP_WRITE_ANCHOR")
        added: list[dict[str, Any]] = []
        saved: list[dict[str, Any]] = []
        events: list[tuple[int, str, dict[str, Any]]] = []
        bypassed: list[int] = []
        total = len(plans)
        with self._write() as repo:
            regs = self._registries(repo)
            for i, ((n, plan), payload) in enumerate(zip(plans, payloads, strict=True)):
                try:
                    with self._savepoint():
                        res = self._apply_plan(repo, plan, agent, regs, payload=payload,
                                               auto_anchor=auto_anchor and plan.auto_anchor)
                except M1ndError as e:
                    failed.append({"line": n, "error": e.message})
                    continue
                kind, js = res["kind"], res["json"]
                if kind == "skipped":
                    item = {"line": n, "id": js["id"], "title": res["title"]}
                    saved.append(item)
                else:
                    item = {"line": n, "id": js["id"], "title": res["title"], "kind": kind}
                    added.append(item)
                    if js.get("dedup") == "bypassed_no_session":
                        bypassed.append(n)
                events.append((n, kind, item))
                if progress is not None and (i + 1) % 1000 == 0:
                    progress(i + 1, total)
        failed.sort(key=lambda f: f["line"])
        embedded = 0 if (deferred or not embed or self.vector_hook is None) else sum(
            1 for a in added if a["kind"] != "closed")
        out: dict[str, Any] = {"added": added, "already_saved": saved, "failed": failed, "embedded": embedded,
                               "bypassed": bypassed, "events": events}
        if deferred:
            out["embed_deferred"] = deferred
        return out

    # =========================================================================================================
    # Reading
    # =========================================================================================================
    def show(self, raw_id: str, *, agent: str | None, activate: bool = True) -> Entry:
        with self._read() as repo:
            rowid = self._resolve(repo, raw_id, agent, "Entry '{id}' not found")
            entry = self._entry(repo, rowid, agent)
        if activate:
            ts = format_ms(now_ms())
            if self._bookkeep([rowid], ts):
                entry.data["last_activated"] = ts
                entry.data["activation_count"] += 1
        return entry

    def _bookkeep(self, rowids: list[int], ts: str, *, full: bool = True) -> bool:
        """Activation bookkeeping in its own short transaction; a busy database skips it (the read succeeded)."""
        try:
            with self._write() as repo:
                repo.activate(rowids, ts, full=full)
        except BusyError:
            log.warning("activation bookkeeping skipped: memory database busy")
            return False
        return True

    @staticmethod
    def top_effective(repo: MemoryRepo, w: Where, limit: int) -> list[int]:
        """Rowids of the ``limit`` entries with the highest effective resonance (ties by id), without evaluating
        the decay of every row: entries are walked by raw resonance (index ``entries_resonance``) and the walk stops
        once the raw value falls below the current k-th best effective value — decay never raises a positive
        resonance (``eff ≤ raw`` for ``raw > 0``; ``eff = 0`` for 0; ``raw ≤ eff ≤ 0`` below)."""
        import heapq

        if limit <= 0:
            return []
        sql = (f"SELECT e.rowid, e.id, e.resonance, eff_res(e.resonance, e.resonance_type, e.last_activated, "
               f"e.created_at, :now) FROM entries e WHERE {w.sql()} "
               f"ORDER BY e.resonance DESC")
        kth: list[float] = []  # min-heap of the best `limit` effective values
        seen: list[tuple[float, str, int]] = []
        for rowid, eid, raw, eff in repo.db.execute(sql, w.params):
            if len(kth) >= limit and raw > 0 and raw < kth[0]:
                break
            if len(kth) >= limit and raw <= 0 < kth[0]:
                break
            seen.append((-eff, eid, rowid))
            if len(kth) < limit:
                heapq.heappush(kth, eff)
            elif eff > kth[0]:
                heapq.heapreplace(kth, eff)
        seen.sort()
        return [r for _, _, r in seen[:limit]]

    def _check_filters(self, repo: MemoryRepo, f: Filters) -> None:
        cats = set(repo.registry_ids("categories"))
        for c in f.categories:
            if c not in cats:
                raise InvalidInputError(f"Unknown category '{c}'. Valid categories: {', '.join(sorted(cats))}")
        if f.project is not None and not repo.registry_has("projects", f.project):
            raise InvalidInputError(f"Unknown project '{f.project}'; register it with m1nd memory projects add")
        if f.basis not in ("raw", "decayed"):
            raise InvalidInputError(f"--resonance-basis must be 'raw' or 'decayed' (got '{f.basis}')")

    def _where(self, f: Filters, agent: str | None, now: int, visibility: str | None = None) -> Where:
        w = Where(params={"agent": agent, "now": now})
        mode = visibility or f.visibility
        # The unary + keeps the planner off the low-selectivity visibility index, so the ORDER BY index (or the
        # owner index for --mine, or the FTS hits) drives the query and LIMIT stops it early.
        if mode == "public":
            w.add("+e.visibility = 'public'")
        elif mode == "include":
            w.add("(+e.visibility = 'public' OR (+e.visibility = 'private' AND e.owner = :agent))")
        else:
            w.add("+e.visibility = 'private' AND e.owner = :agent")
        if f.categories:
            w.add(f"e.category IN (SELECT value FROM json_each({w.param(json.dumps(f.categories))}))")
        value = ("e.resonance" if f.basis == "raw"
                 else "eff_res(e.resonance, e.resonance_type, e.last_activated, e.created_at, :now)")
        if f.min_resonance is not None:
            w.add(f"{value} >= {w.param(f.min_resonance)}")
        if f.max_resonance is not None:
            w.add(f"{value} <= {w.param(f.max_resonance)}")
        if f.has_wake_phrase is not None:
            w.add("e.wake_phrases != '[]'" if f.has_wake_phrase else "e.wake_phrases = '[]'")
        if f.has_anchors is not None:
            ex = (f"EXISTS (SELECT 1 FROM entry_anchors an JOIN entries x ON x.rowid = an.anchor_rowid "
                  f"WHERE an.entry_rowid = e.rowid AND {visible_sql('x')})")
            w.add(ex if f.has_anchors else "NOT " + ex)
        if f.has_resonance_type is not None:
            w.add("e.resonance_type IS NOT NULL" if f.has_resonance_type else "e.resonance_type IS NULL")
        if f.tags:
            w.add(f"e.rowid IN (SELECT t.entry_rowid FROM entry_tags t WHERE t.tag IN "
                  f"(SELECT value FROM json_each({w.param(json.dumps(f.tags))})))")
        if f.exclude_tags:
            w.add(f"NOT EXISTS (SELECT 1 FROM entry_tags t, json_each({w.param(json.dumps(f.exclude_tags))}) p "
                  f"WHERE t.entry_rowid = e.rowid AND substr(t.tag, 1, length(p.value)) = p.value)")
        if f.code_ref:
            w.add(f"EXISTS (SELECT 1 FROM json_each(e.code_refs) c WHERE c.value = {w.param(f.code_ref)})")
        if f.project:
            w.add(f"e.source_project = {w.param(f.project)}")
        if f.session_id:
            w.add(f"e.session_id = {w.param(f.session_id)}")
        return w

    def _check_mode(self, f: Filters, agent: str | None) -> None:
        if f.visibility == "mine" and not agent:
            raise InvalidInputError("--mine needs an agent: pass --agent NAME or set M1ND_CURRENT_AGENT")

    def list_entries(self, f: Filters, *, agent: str | None, sort: str = "updated", limit: int = 100,
                     count: bool = False) -> Outcome:
        self._check_mode(f, agent)
        orders = {"updated": "e.updated_at DESC, e.id", "created": "e.created_at DESC, e.id", "id": "e.id",
                  "resonance": ("e.resonance DESC, e.id" if f.basis == "raw" else
                                "eff_res(e.resonance, e.resonance_type, e.last_activated, e.created_at, :now) "
                                "DESC, e.id")}
        if sort not in orders:
            raise InvalidInputError(f"--sort must be one of updated, created, resonance, id (got '{sort}')")
        now = now_ms()
        notes: list[str] = []
        with self._read() as repo:
            self._check_filters(repo, f)
            w = self._where(f, agent, now)
            if sort == "resonance" and f.basis == "decayed":
                rowids = self.top_effective(repo, w, limit)
            else:
                rowids = repo.select_rowids(w, orders[sort], limit)
            entries = repo.hydrate_rowids(rowids, agent=agent, now=now)
            total = repo.count(w) if count else len(entries)
            if f.visibility == "public" and agent:
                with contextlib.suppress(Exception):
                    hidden = repo.count(self._where(f, agent, now, visibility="mine"))
                    if hidden:
                        notes.append(hidden_hint(hidden))
        return Outcome(entries, notes=notes, extra={"total": total})

    def search(self, query: str, f: Filters, *, agent: str | None, limit: int = 20, activate: bool = False,
               mode: str = "keyword") -> Outcome:
        self._check_mode(f, agent)
        if not query.strip():
            raise InvalidInputError("search query must not be empty")
        notes: list[str] = []
        if mode in ("semantic", "hybrid") and getattr(self.vector_hook, "search", None) is None:
            notes.append("note: no embedding model installed; using keyword search")
            mode = "keyword"
        now = now_ms()
        terms = query_terms(query)
        entries: list[Entry] = []
        with self._read() as repo:
            self._check_filters(repo, f)
            sem = self._semantic_hits(repo, f, agent, now, query, limit, notes) if mode != "keyword" else None
            if sem is None:
                mode = "keyword"
            if terms and mode != "semantic":
                w = self._where(f, agent, now)
                hits = self._fts(repo, w, build_match(terms), limit)
                if not hits and len(terms) > 1:
                    hits = self._fts(repo, w, build_match(terms, any_word=True), limit)
                    if hits:
                        notes.append("note: no entry matched every word; showing entries that match any")
                entries = repo.hydrate_rowids([h[0] for h in hits], agent=agent, now=now)
                scores = dict(hits)
                for e in entries:
                    e.extra["score"] = round(scores[e.rowid], 6)
                if f.visibility == "public" and agent:
                    with contextlib.suppress(Exception):
                        wm = self._where(f, agent, now, visibility="mine")
                        hidden = self._fts_count(repo, wm, build_match(terms))
                        if hidden:
                            notes.append(hidden_hint(hidden))
            if sem is not None:
                entries = self._fuse(repo, sem, entries, mode, agent, now, limit)
        if activate and entries:
            ts = format_ms(now_ms())
            if self._bookkeep([e.rowid for e in entries], ts):
                for e in entries:
                    e.data["last_activated"] = ts
                    e.data["activation_count"] += 1
                notes.append(f"Activated {len(entries)} result(s)")
        return Outcome(entries, notes=notes, extra={"mode": mode})

    def _semantic_hits(self, repo: MemoryRepo, f: Filters, agent: str | None, now: int, query: str, limit: int,
                       notes: list[str]) -> list[tuple[int, float]] | None:
        """Semantic hits through the embedding hook (issue 6, :mod:`m1nd.memory.semantic`); None without a model."""
        from m1nd.memory.embeddings import EmbedderUnavailableError

        try:
            hits, more = self.vector_hook.semantic_search(repo, self._where(f, agent, now), query, limit)
        except EmbedderUnavailableError:
            notes.append("note: no embedding model installed; using keyword search")
            return None
        notes.extend(more)
        return hits

    @staticmethod
    def _fuse(repo: MemoryRepo, sem: list[tuple[int, float]], keyword: list[Entry], mode: str, agent: str | None,
              now: int, limit: int) -> list[Entry]:
        """Semantic results, or (hybrid) reciprocal-rank fusion (k = 60) of the keyword and semantic lists."""
        from m1nd.memory.semantic import rrf

        hits = sem if mode == "semantic" else rrf([[e.rowid for e in keyword], [r for r, _ in sem]])[:limit]
        scores = dict(hits)
        entries = repo.hydrate_rowids([r for r, _ in hits], agent=agent, now=now)
        for e in entries:
            e.extra["score"] = round(scores[e.rowid], 6)
        return entries

    _BM25 = "bm25(entries_fts, 4.0, 1.0, 2.0, 2.0, 1.5)"

    def _fts(self, repo: MemoryRepo, w: Where, match: str, limit: int) -> list[tuple[int, float]]:
        params = dict(w.params, _q=match)
        sql = (f"SELECT e.rowid, -{self._BM25} FROM entries_fts JOIN entries e ON e.rowid = entries_fts.rowid "
               f"WHERE entries_fts MATCH :_q AND {w.sql()} ORDER BY {self._BM25}, e.updated_at DESC "
               f"LIMIT {int(limit)}")
        return [(r[0], r[1]) for r in repo.db.execute(sql, params)]

    def _fts_count(self, repo: MemoryRepo, w: Where, match: str) -> int:
        params = dict(w.params, _q=match)
        return int(repo.db.scalar(f"SELECT count(*) FROM entries_fts JOIN entries e ON e.rowid = entries_fts.rowid "
                                  f"WHERE entries_fts MATCH :_q AND {w.sql()}", params, default=0))

    def recent(self, *, agent: str | None, days: int = 10, limit: int = 100, resonance_type: str | None = None,
               all_types: bool = False, sort: str = "chronological", basis: str = "decayed") -> list[dict[str, Any]]:
        if days <= 0:
            raise InvalidInputError(f"--days must be a positive integer (got {days})")
        if sort not in ("chronological", "resonance"):
            raise InvalidInputError(f"--sort must be 'chronological' or 'resonance' (got '{sort}')")
        F.check_resonance_type(resonance_type)
        now = now_ms()
        value = ("e.resonance" if basis == "raw"
                 else "eff_res(e.resonance, e.resonance_type, e.last_activated, e.created_at, :now)")
        w = Where(params={"agent": agent, "now": now, "since": format_ms(now - days * 86_400_000)})
        w.add(visible_sql()).add("e.created_at >= :since").add(f"{value} > 0.5")
        if resonance_type:
            w.add("e.resonance_type = :rt", rt=resonance_type)
        elif not all_types:
            w.add("e.resonance_type = 'ephemeral'")
        order = "e.created_at DESC, e.id" if sort == "chronological" else f"{value} DESC, e.created_at DESC, e.id"
        with self._read() as repo:
            entries = repo.hydrate_rowids(repo.select_rowids(w, order, limit), agent=agent, now=now)
        return [{"id": e.id, "type": e["fact_type"] or e["category_id"], "category": e["category_id"],
                 "content": e["body"], "created_at": e["created_at"], "resonance": e["resonance"],
                 "effective_resonance": e["effective_resonance"], "state": e["fact_state"]} for e in entries]

    # =========================================================================================================
    # Updating, restoring, deleting
    # =========================================================================================================
    def update(self, raw_id: str, changes: dict[str, Any], *, agent: str | None, operation: str = "update",
               no_embed: bool = False, no_auto_anchor: bool = False) -> dict[str, Any]:
        """Apply ``changes`` (keys of :func:`_plan_update`) with a backup and optimistic concurrency."""
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

        def attempt() -> dict[str, Any]:
            with self._read() as repo:
                rowid = self._resolve(repo, raw_id, agent, missing)
                entry = self._entry(repo, rowid, agent)
                regs = self._registries(repo)
            plan = self._plan_update(entry, changes, agent, regs)
            if not plan["set"] and plan["tags"] is None and plan["applicability"] is None and not plan["anchors_add"] \
                    and not plan["anchors_remove"]:
                return {"id": entry.id, "changes": [], "replacements": plan.get("replacements", 0),
                        "bytes_added": plan.get("bytes_added", 0)}
            new_title = plan["set"].get("title", entry["title"])
            new_body = plan["set"].get("body", entry["body"])
            new_tags = plan["tags"] if plan["tags"] is not None else entry["tags"]
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
            ts = format_ms(now_ms())
            with self._write() as repo:
                snapshot_keys = ("title", "body", "summary", "category", "wake_phrases", "code_refs")
                if plan["tags"] is not None or any(k in plan["set"] for k in snapshot_keys):
                    repo.insert_backup(new_backup_id(), entry, operation, agent, ts)
                values = dict(plan["set"])
                values["updated_at"] = ts
                if "body" in values:
                    values["content_hash"] = content_hash(values["body"])
                if "title" in values or "body" in values or "category" in values or "owner" in values \
                        or "visibility" in values or "session_id" in values:
                    src = repo.db.scalar("SELECT source_agent FROM entries WHERE rowid = ?", (entry.rowid,))
                    scope = dedup_scope(values.get("visibility", entry["visibility"]),
                                        values.get("owner", entry["owner"]), src)
                    dh = dedup_hash(new_title, new_body)
                    values["dedup_hash"], values["dedup_scope"] = dh, scope
                    if repo.dedup_taken(values.get("session_id", entry["session_id"]), scope,
                                        values.get("category", entry["category_id"]), dh, entry.rowid):
                        values["dedup_exempt"] = 1
                if values.get("session_id"):
                    repo.ensure_session(values["session_id"], ts, agent)
                if not repo.update_entry(entry.rowid, entry.rev, values):
                    raise _Retry
                if plan["tags"] is not None:
                    repo.set_tags(entry.rowid, plan["tags"])
                if plan["applicability"] is not None:
                    repo.set_applicability(entry.rowid, plan["applicability"])
                for a in plan["anchors_remove"]:
                    repo.remove_anchor(entry.rowid, a)
                for a in plan["anchors_add"]:
                    repo.add_anchor(entry.rowid, a, ts)
                if text_changed or "summary" in values:
                    repo.fts_refresh(entry.rowid, new_title, new_body, values.get("summary", entry["summary"]),
                                     new_tags, ident_text(new_title, new_body))
                if payload is not None:
                    self.vector_hook.store(repo, entry.rowid, payload,
                                           auto_anchor=not no_auto_anchor
                                           and not env_truthy("M1ND_SKIP_WRITE_ANCHOR"))
            out = {"id": entry.id, "changes": plan["changes"], "replacements": plan.get("replacements", 0),
                   "bytes_added": plan.get("bytes_added", 0)}
            if deferred:
                out["embed_deferred"] = deferred
            return out

        return self._retrying(attempt, raw_id)

    def _plan_update(self, e: Entry, c: dict[str, Any], agent: str | None, regs: dict[str, set[str]]
                     ) -> dict[str, Any]:
        """Compute the new values from the current entry (pure); ``changes`` are the human change lines."""
        s: dict[str, Any] = {}
        lines: list[str] = []
        plan: dict[str, Any] = {"set": s, "changes": lines, "tags": None, "applicability": None,
                                "anchors_add": [], "anchors_remove": []}
        if c.get("title") is not None:
            t = F.check_title(c["title"])
            if t != e["title"]:
                s["title"] = t
                lines.append(f"title: {e['title']} -> {t}")
        body = e["body"]
        if c.get("content") is not None:
            nb = F.check_body(c["content"])
            if nb != body:
                s["body"] = nb
                lines.append(f"content: updated ({c.get('content_source', 'inline')})")
        elif c.get("append") is not None or c.get("prepend") is not None:
            add = c.get("append") if c.get("append") is not None else c.get("prepend")
            if add == "":
                raise InvalidInputError("No content provided")
            if c.get("append") is not None:
                nb = body + "\n" + add if body else add
                word = "appended"
            else:
                nb = add + "\n" + body if body else add
                word = "prepended"
            s["body"] = F.check_body(nb)
            plan["bytes_added"] = len(add.encode("utf-8"))
            lines.append(f"content: {word} {plan['bytes_added']} bytes")
        elif c.get("find") is not None:
            nb, n = find_replace(body, c["find"], c["replace"], replace_all=bool(c.get("replace_all")),
                                 nth=c.get("nth"))
            plan["replacements"] = n
            if nb != body:
                s["body"] = F.check_body(nb)
            lines.append(f"content: {n} replacement(s)")
        if c.get("category") is not None and c["category"] != e["category_id"]:
            if c["category"] not in regs["categories"]:
                raise InvalidInputError(f"Invalid category '{c['category']}'. Valid categories: "
                                        f"{', '.join(sorted(regs['categories']))}")
            s["category"] = c["category"]
            lines.append(f"category: {e['category_id']} -> {c['category']}")
        # tags
        tags = edited_list(e["tags"], F.tag_list(c["tags"]) if c.get("tags") is not None else None,
                           F.tag_list(c.get("add_tags")), F.split_list(c.get("remove_tags")))
        if tags != e["tags"]:
            plan["tags"] = tags
            lines.append(f"tags: {', '.join(tags) if tags else '(none)'}")
        if c.get("applicability") is not None:
            apps = F.split_list(c["applicability"])
            for a in apps:
                if a not in regs["applicability"]:
                    raise InvalidInputError(f"Invalid applicability '{a}'. Valid: "
                                            f"{', '.join(sorted(regs['applicability']))}")
            if apps != e["applicability"]:
                plan["applicability"] = apps
                lines.append(f"applicability: {', '.join(apps) if apps else '(none)'}")
        if c.get("content_type") is not None and c["content_type"] != e["content_type_id"]:
            if c["content_type"] not in regs["content_types"]:
                raise InvalidInputError(f"Invalid content type '{c['content_type']}'. Valid: "
                                        f"{', '.join(sorted(regs['content_types']))}")
            s["content_type"] = c["content_type"]
            lines.append(f"content_type: {e['content_type_id']} -> {c['content_type']}")
        if c.get("resonance") is not None and c["resonance"] != e["resonance"]:
            s["resonance"] = int(c["resonance"])
            lines.append(f"resonance: {e['resonance']} -> {c['resonance']}")
        if "resonance_type" in c:
            rt = c["resonance_type"]
            if rt == "-" or (rt is None and c.get("clear_resonance_type")):
                if e["resonance_type"] is not None:
                    s["resonance_type"] = None
                    lines.append("resonance_type: cleared")
            elif rt is not None and rt != e["resonance_type"]:
                F.check_resonance_type(rt)
                s["resonance_type"] = rt
                lines.append(f"resonance_type: {e['resonance_type'] or '-'} -> {rt}")
        # anchors (rowids resolved against visible entries)
        self._plan_anchors(e, c, agent, plan)
        # wake phrases
        phrases = list(e["wake_phrases"])
        if c.get("wake_phrases") is not None:
            phrases = F.split_list(c["wake_phrases"])
        if c.get("wake_phrase") is not None:
            one = c["wake_phrase"].strip()
            phrases = [one] + [p for p in phrases if p != one] if c.get("wake_phrases") is not None else [one]
        for p in F.split_list(c.get("add_wake_phrases")) if not isinstance(c.get("add_wake_phrases"), str) \
                else [c["add_wake_phrases"].strip()]:
            if p and p not in phrases:
                phrases.append(p)
        for p in F.split_list(c.get("remove_wake_phrases")) if not isinstance(c.get("remove_wake_phrases"), str) \
                else [c["remove_wake_phrases"].strip()]:
            if p in phrases:
                phrases.remove(p)
        if phrases != e["wake_phrases"]:
            F.check_wake_phrases(phrases)
            s["wake_phrases"] = json.dumps(phrases, ensure_ascii=False)
            lines.append(f"wake_phrases: {', '.join(phrases) if phrases else '(none)'}")
        if "wake_order" in c:
            wo = c["wake_order"]
            if wo == "-" or (wo is None and c.get("clear_wake_order")):
                if e["wake_order"] is not None:
                    s["wake_order"] = None
                    lines.append("wake_order: cleared")
            elif wo is not None:
                try:
                    n = int(wo)
                except (TypeError, ValueError):
                    raise InvalidInputError(f"Invalid wake_order value '{wo}' (use number or '-' to clear)") from None
                if n != e["wake_order"]:
                    s["wake_order"] = n
                    lines.append(f"wake_order: {n}")
        # code refs
        refs = edited_list(e["code_refs"], F.split_list(c["code_refs"]) if c.get("code_refs") is not None else None,
                           F.split_list(c.get("add_code_refs")), F.split_list(c.get("remove_code_refs")))
        if refs != e["code_refs"]:
            F.check_code_refs(refs)
            s["code_refs"] = json.dumps(refs, ensure_ascii=False)
            lines.append(f"code_refs: {', '.join(refs) if refs else '(none)'}")
        # visibility / owner
        vis = c.get("visibility")
        if c.get("private"):
            if vis is not None and vis != "private":
                raise InvalidInputError("--private and --visibility cannot be combined")
            vis = "private"
        if vis is not None and vis not in ("public", "private"):
            raise InvalidInputError("--visibility must be 'public' or 'private'")
        new_vis = vis or e["visibility"]
        owner = c.get("owner")
        if new_vis == "public":
            if owner:
                raise InvalidInputError("Cannot set owner on public entry. Use --visibility private to make entry "
                                        "private first.")
            if e["visibility"] == "private":
                if e["category_id"] == "bloom" and not c.get("force"):
                    raise InvalidInputError(f"Making bloom '{e.id}' public will expose identity data. Use --force "
                                            "to confirm.")
                s["visibility"], s["owner"] = "public", None
                lines.append("visibility: private -> public")
        else:
            F.check_acting_agent(agent, owner=owner)
            new_owner = owner or e["owner"] or agent
            if not new_owner:
                raise InvalidInputError("Cannot make entry private without an owner. Provide --owner or set "
                                        "M1ND_CURRENT_AGENT.")
            if e["visibility"] != "private":
                s["visibility"] = "private"
                lines.append("visibility: public -> private")
            if new_owner != e["owner"]:
                s["owner"] = new_owner
                lines.append(f"owner: {new_owner}")
        if "session_id" in c and c["session_id"] is not None:
            sid = c["session_id"].strip()
            sid = None if sid in ("", "-") else F.check_session_id(sid)
            if sid != e["session_id"]:
                s["session_id"] = sid
                lines.append(f"session_id: {e['session_id'] or '-'} -> {sid or '-'}")
        return plan

    def _plan_anchors(self, e: Entry, c: dict[str, Any], agent: str | None, plan: dict[str, Any]) -> None:
        if c.get("anchors") is None and not c.get("add_anchors") and not c.get("remove_anchors"):
            return
        with self._read() as repo:
            def rid(raw: str) -> tuple[int, str]:
                aid = normalize_entry_id(raw)
                rowid = self._resolve(repo, aid, agent, "Anchor '{id}' not found")
                return rowid, repo.db.scalar("SELECT id FROM entries WHERE rowid = ?", (rowid,))
            current = {r: i for r, i in (rid(a) for a in e["anchors"])}
            target = dict(current)
            if c.get("anchors") is not None:
                target = dict(rid(a) for a in F.split_list(c["anchors"]))
            for a in F.split_list(c.get("add_anchors")):
                r, i = rid(a)
                target[r] = i
            for a in F.split_list(c.get("remove_anchors")):
                try:
                    r, i = rid(a)
                except NotFoundError:
                    continue
                target.pop(r, None)
        if e.rowid in target:
            raise InvalidInputError("An entry cannot anchor to itself")
        for r, i in target.items():
            if r not in current:
                plan["anchors_add"].append(r)
                plan["changes"].append(f"anchors: added '{i}'")
        for r, i in current.items():
            if r not in target:
                plan["anchors_remove"].append(r)
                plan["changes"].append(f"anchors: removed '{i}'")

    def list_backups(self, raw_id: str, *, agent: str | None) -> list[dict[str, Any]]:
        eid = normalize_entry_id(raw_id)
        with self._read() as repo:
            rows = repo.backups(eid, agent)
            if not rows:
                with contextlib.suppress(NotFoundError, InvalidInputError):
                    rowid = self._resolve(repo, raw_id, agent, "Entry '{id}' not found")
                    eid = repo.db.scalar("SELECT id FROM entries WHERE rowid = ?", (rowid,))
                    rows = repo.backups(eid, agent)
        out = []
        for bk, entry_id, snap, op, src, created in rows:
            s = json.loads(snap)
            out.append({"id": bk, "entry_id": entry_id, "title": s.get("title"), "body": s.get("body", ""),
                        "operation": op, "source_agent": src, "created_at": created})
        return out

    def restore(self, raw_id: str, *, agent: str | None, backup_id: str | None = None, no_embed: bool = False,
                no_auto_anchor: bool = False) -> dict[str, Any]:
        eid = normalize_entry_id(raw_id)
        now = now_ms()
        ts = format_ms(now)
        with self._write() as repo:
            hit = repo.rowid_of(eid)
            visible = hit is not None and (hit[1] == "public" or (agent is not None and hit[2] == agent))
            if hit is not None and not visible:
                raise NotFoundError(f"Entry '{eid}' not found")
            if hit is None and prefix_candidate(eid):
                with contextlib.suppress(NotFoundError):
                    rowid = self._resolve(repo, eid, agent, "Entry '{id}' not found")
                    eid = repo.db.scalar("SELECT id FROM entries WHERE rowid = ?", (rowid,))
                    hit = repo.rowid_of(eid)
            rows = repo.backups(eid, agent)
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
            regs = self._registries(repo)
            self._ensure_registry_values(repo, snap, regs, ts, notes=[])
            if recreated:
                self._insert_snapshot(repo, snap, ts, agent, restoring=True)
            else:
                entry = self._entry(repo, hit[0], agent, now)
                repo.insert_backup(new_backup_id(), entry, "restore", agent, ts)
                title, body = snap["title"], snap.get("body") or ""
                values = {
                    "title": title, "body": body, "summary": snap.get("summary"), "category": snap["category_id"],
                    "wake_phrases": json.dumps(snap.get("wake_phrases") or [], ensure_ascii=False),
                    "code_refs": json.dumps(snap.get("code_refs") or [], ensure_ascii=False),
                    "content_hash": content_hash(body), "dedup_hash": dedup_hash(title, body), "updated_at": ts,
                }
                if repo.dedup_taken(entry["session_id"], entry.dedup_scope, values["category"],
                                    values["dedup_hash"], entry.rowid):
                    values["dedup_exempt"] = 1
                repo.update_entry(entry.rowid, entry.rev, values)
                tags = list(snap.get("tags") or [])
                repo.set_tags(entry.rowid, tags)
                repo.fts_refresh(entry.rowid, title, body, values["summary"], tags, ident_text(title, body))
        out = {"restored": True, "id": eid, "from_backup": bk, "backup_created": created, "operation": op,
               "recreated": recreated}
        if self.vector_hook is not None and not no_embed and not env_truthy("M1ND_SKIP_WRITE_EMBED"):
            try:  # issue 6: re-embed and re-anchor the restored text (the entry is already durable)
                self.vector_hook.refresh(self, eid, auto_anchor=not no_auto_anchor
                                         and not env_truthy("M1ND_SKIP_WRITE_ANCHOR"))
            except Exception as e:  # noqa: BLE001 — a failing model must never fail the restore
                out["embed_deferred"] = f"{type(e).__name__}: {e}"
        return out

    def delete(self, raw_id: str, *, agent: str | None) -> dict[str, Any]:
        with self._write() as repo:
            rowid = self._resolve(repo, raw_id, agent, "Entry '{id}' not found")
            entry = self._entry(repo, rowid, agent)
            repo.insert_backup(new_backup_id(), entry, "delete", agent, format_ms(now_ms()))
            repo.delete_entry(rowid)
        return {"deleted": True, "id": entry.id}

    # =========================================================================================================
    # Relationships and reinforcement
    # =========================================================================================================
    def relationships(self, raw_id: str, *, agent: str | None) -> tuple[str, list[dict[str, Any]]]:
        with self._read() as repo:
            rowid = self._resolve(repo, raw_id, agent, "Entry '{id}' not found")
            eid = repo.db.scalar("SELECT id FROM entries WHERE rowid = ?", (rowid,))
            rows = repo.db.all(
                f"SELECT r.id, f.id, t.id, r.type, r.created_at, r.from_rowid = :me FROM relationships r "
                f"JOIN entries f ON f.rowid = r.from_rowid JOIN entries t ON t.rowid = r.to_rowid "
                f"WHERE (r.from_rowid = :me AND {visible_sql('t')}) OR (r.to_rowid = :me AND {visible_sql('f')}) "
                f"ORDER BY r.created_at, r.id", {"me": rowid, "agent": agent})
        return eid, [{"id": r[0], "from_entry_id": r[1], "to_entry_id": r[2], "relationship_type": r[3],
                      "created_at": r[4], "direction": "out" if r[5] else "in"} for r in rows]

    def relate(self, from_raw: str, to_raw: str, rel_type: str, *, agent: str | None, reinforce: bool = True
               ) -> Outcome:
        with self._write() as repo:
            types = repo.registry_ids("relationship_types")
            if rel_type not in types:
                raise InvalidInputError(f"Invalid relationship type '{rel_type}'. Valid types: {', '.join(types)}")
            fr = self._resolve(repo, from_raw, agent, "Entry '{id}' not found")
            to = self._resolve(repo, to_raw, agent, "Entry '{id}' not found")
            if fr == to:
                raise InvalidInputError("An entry cannot be related to itself")
            fid = repo.db.scalar("SELECT id FROM entries WHERE rowid = ?", (fr,))
            tid = repo.db.scalar("SELECT id FROM entries WHERE rowid = ?", (to,))
            ts = format_ms(now_ms())
            rel_id = new_relationship_id()
            existing = repo.insert_relationship(rel_id, fr, to, rel_type, ts)
            reinforced = False
            notes = []
            if existing is None and reinforce and rel_type not in NO_REINFORCE_TYPES:
                old = repo.db.scalar("SELECT resonance FROM entries WHERE rowid = ?", (to,))
                if old < 10:
                    repo.db.execute("UPDATE entries SET resonance = min(resonance + 1, 10), last_activated = ?, "
                                    "activation_count = activation_count + 1, updated_at = ?, rev = rev + 1 "
                                    "WHERE rowid = ?", (ts, ts, to))
                    reinforced = True
                    notes.append(f"  reinforced {tid} (+1)")
        return Outcome({"id": existing or rel_id, "from": fid, "to": tid, "type": rel_type,
                        "reinforced": reinforced, "existing": existing is not None}, notes=notes)

    def unrelate(self, rel_id: str, *, agent: str | None) -> dict[str, Any]:
        rid = rel_id.strip()
        with self._write() as repo:
            ok = repo.db.one(
                f"SELECT 1 FROM relationships r JOIN entries f ON f.rowid = r.from_rowid "
                f"JOIN entries e ON e.rowid = r.to_rowid WHERE r.id = :rid AND {visible_sql('f')} AND "
                f"{visible_sql('e')}", {"rid": rid, "agent": agent})
            if ok is None:
                raise NotFoundError(f"Relationship '{rid}' not found")
            repo.db.execute("DELETE FROM relationships WHERE id = ?", (rid,))
        return {"deleted": True, "id": rid}

    def reinforce(self, raw_id: str, *, agent: str | None, amount: int = 1, cap: int = 10) -> dict[str, Any]:
        if not isinstance(amount, int) or amount == 0 or not -10 <= amount <= 10:
            raise InvalidInputError("--amount must be a non-zero integer between -10 and 10")
        if not 1 <= cap <= 100:
            raise InvalidInputError("--cap must be an integer between 1 and 100")
        with self._write() as repo:
            rowid = self._resolve(repo, raw_id, agent, "Entry '{id}' not found")
            eid, old, count = repo.db.one("SELECT id, resonance, activation_count FROM entries WHERE rowid = ?",
                                          (rowid,))
            if old > cap:
                new, capped = old, True
            else:
                new = min(old + amount, cap)
                capped = old + amount > cap
            ts = format_ms(now_ms())
            repo.db.execute("UPDATE entries SET resonance = ?, last_activated = ?, activation_count = "
                            "activation_count + 1, updated_at = ?, rev = rev + 1 WHERE rowid = ?",
                            (new, ts, ts, rowid))
        return {"id": eid, "old_resonance": old, "new_resonance": new, "amount_added": new - old,
                "capped": capped, "cap": cap, "last_activated": ts, "activation_count": count + 1}

    # =========================================================================================================
    # Statistics
    # =========================================================================================================
    def stats(self, *, agent: str | None) -> dict[str, Any]:
        with self._read() as repo:
            rows = repo.db.all(f"SELECT e.category, count(*) FROM entries e WHERE {visible_sql()} "
                               "GROUP BY e.category ORDER BY e.category", {"agent": agent})
            own = repo.db.scalar("SELECT count(*) FROM entries WHERE visibility = 'private' AND owner = ?",
                                 (agent,), default=0) if agent else 0
        return {"total": sum(n for _, n in rows), "categories": dict(rows), "private_own": own}

    def health(self, *, agent: str | None) -> dict[str, Any]:
        model = getattr(self.vector_hook, "model_id", None)
        now = now_ms()
        with self._read() as repo:
            p = {"agent": agent, "model": model, "cutoff": format_ms(now - 30 * 86_400_000)}
            total, embedded, anchored, stale, stale_vec = repo.db.one(
                f"""SELECT count(*),
                  coalesce(sum(EXISTS (SELECT 1 FROM vectors v WHERE v.owner_kind = 'entry'
                       AND v.owner_rowid = e.rowid AND v.model_id = :model)), 0),
                  coalesce(sum(EXISTS (SELECT 1 FROM entry_anchors an JOIN entries x ON x.rowid = an.anchor_rowid
                       WHERE an.entry_rowid = e.rowid AND {visible_sql('x')})), 0),
                  coalesce(sum(e.resonance >= 5 AND (e.last_activated IS NULL OR e.last_activated < :cutoff)), 0),
                  coalesce(sum(EXISTS (SELECT 1 FROM vectors v WHERE v.owner_kind = 'entry'
                       AND v.owner_rowid = e.rowid AND v.model_id IS NOT :model)), 0)
                FROM entries e WHERE {visible_sql()}""", p)

        def pct(n: int) -> int:
            return 0 if not total else (n * 200 + total) // (2 * total)
        return {"total": total, "embedded": embedded, "anchored": anchored, "stale_high_res": stale,
                "embedded_pct": pct(embedded), "anchored_pct": pct(anchored), "stale_high_res_pct": pct(stale),
                "model_id": model, "stale_vectors": stale_vec}

    def growth(self, *, agent: str | None) -> list[int]:
        now = datetime.now(UTC)
        monday = (now - timedelta(days=now.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
        starts = [monday - timedelta(weeks=k) for k in range(7, -1, -1)]
        bounds = [format_ms(s.timestamp() * 1000) for s in starts] + [format_ms((monday + timedelta(weeks=1))
                                                                                .timestamp() * 1000)]
        out = []
        with self._read() as repo:
            for i in range(8):
                out.append(int(repo.db.scalar(
                    f"SELECT count(*) FROM entries e WHERE {visible_sql()} AND e.created_at >= :a "
                    f"AND e.created_at < :b", {"agent": agent, "a": bounds[i], "b": bounds[i + 1]}, default=0)))
        return out

    def open_threads(self, *, agent: str | None, limit: int | None = None) -> list[dict[str, Any]]:
        now = now_ms()
        with self._read() as repo:
            rows = repo.db.all(
                f"SELECT e.rowid, e.id, e.body, e.fact_state, e.created_at, e.resonance, "
                f"(SELECT json_group_array(tag) FROM (SELECT tag FROM entry_tags WHERE entry_rowid = e.rowid "
                f"ORDER BY rowid)) FROM entries e WHERE e.category = 'thread' AND "
                f"(e.fact_state IS NULL OR e.fact_state = 'open') AND {visible_sql()}", {"agent": agent})
        from m1nd.memory.decay import parse_ms

        def score(r: tuple[Any, ...]) -> float:
            weeks = max(0.0, (now - parse_ms(r[4])) / (7 * 86_400_000))
            return r[5] * (0.95 ** weeks)
        rows.sort(key=lambda r: (-score(r), r[4], r[1]))
        if limit is not None:
            rows = rows[:limit]
        return [{"id": r[1], "body": r[2], "state": r[3] or "open", "created_at": r[4], "resonance": r[5],
                 "tags": json.loads(r[6])} for r in rows]

    # =========================================================================================================
    # Registries
    # =========================================================================================================
    def registry(self, kind: str, *, agent: str | None = None, category: str | None = None) -> list[Any]:
        if kind == "fact_types":
            return [{"id": t, "category": F.FACT_ROUTES.get(t, ("thread", None))[0]} for t in FACT_TYPES]
        if kind == "resonance_types":
            return [{"id": t, "decays": t not in ("foundational", "transformative")} for t in RESONANCE_TYPES]
        if kind == "tags":
            return self.tags(agent=agent, category=category)
        with self._read() as repo:
            if kind == "agents":
                rows = repo.registry_rows("agents", "id, description, domain, created_at, updated_at")
                return [dict(zip(("id", "description", "domain", "created_at", "updated_at"), r, strict=True))
                        for r in rows]
            if kind == "projects":
                rows = repo.registry_rows("projects", "id, name, path, repo_url, description, active, created_at",
                                          order="name, id")
                return [{"id": r[0], "name": r[1], "path": r[2], "repo_url": r[3], "description": r[4],
                         "active": bool(r[5]), "created_at": r[6]} for r in rows]
            if kind == "applicability":
                rows = repo.registry_rows("applicability_types", "id, description, scope, created_at")
                return [dict(zip(("id", "description", "scope", "created_at"), r, strict=True)) for r in rows]
            if kind == "relationship_types":
                rows = repo.registry_rows("relationship_types", "id, description, directional, created_at")
                return [{"id": r[0], "description": r[1], "directional": bool(r[2]), "created_at": r[3]}
                        for r in rows]
            if kind == "content_types":
                rows = repo.registry_rows("content_types", "id, description, file_extensions, created_at")
                return [{"id": r[0], "description": r[1], "file_extensions": json.loads(r[2]), "created_at": r[3]}
                        for r in rows]
            if kind in ("categories", "source_types", "entry_types", "session_types"):
                rows = repo.registry_rows(kind, "id, description, created_at")
                return [dict(zip(("id", "description", "created_at"), r, strict=True)) for r in rows]
        raise InvalidInputError(f"unknown registry '{kind}'")

    def tags(self, *, agent: str | None, category: str | None = None) -> list[str]:
        with self._read() as repo:
            if category is not None and not repo.registry_has("categories", category):
                cats = repo.registry_ids("categories")
                raise InvalidInputError(f"Unknown category '{category}'. Valid categories: {', '.join(cats)}")
            w = f"{visible_sql()}" + (" AND e.category = :cat" if category else "")
            return [r[0] for r in repo.db.all(
                f"SELECT DISTINCT t.tag FROM entry_tags t JOIN entries e ON e.rowid = t.entry_rowid WHERE {w} "
                f"ORDER BY t.tag", {"agent": agent, "cat": category})]

    def add_agent(self, agent_id: str, description: str | None, domain: str | None) -> dict[str, Any]:
        aid = agent_id.strip()
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$", aid):
            raise InvalidInputError(f"Invalid agent id '{agent_id}' (letters, digits, '.', '_', ':', '@', '-')")
        ts = format_ms(now_ms())
        with self._write() as repo:
            repo.db.execute("INSERT INTO agents(id, description, domain, created_at, updated_at) VALUES (?, ?, ?, ?, ?) "
                            "ON CONFLICT(id) DO UPDATE SET description = coalesce(excluded.description, description),"
                            " domain = coalesce(excluded.domain, domain), updated_at = excluded.updated_at",
                            (aid, description or "", domain, ts, ts))
        return {"id": aid}

    def show_agent(self, agent_id: str) -> dict[str, Any]:
        with self._read() as repo:
            r = repo.db.one("SELECT id, description, domain, created_at, updated_at FROM agents WHERE id = ?",
                            (agent_id,))
        if r is None:
            raise NotFoundError(f"Agent '{agent_id}' not found")
        return dict(zip(("id", "description", "domain", "created_at", "updated_at"), r, strict=True))

    def add_project(self, pid: str, name: str, *, path: str | None = None, repo_url: str | None = None,
                    description: str | None = None) -> dict[str, Any]:
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$", pid or ""):
            raise InvalidInputError(f"Invalid project id '{pid}' (letters, digits, '.', '_', ':', '-')")
        if not name or not name.strip():
            raise InvalidInputError("--name must not be empty")
        ts = format_ms(now_ms())
        with self._write() as repo:
            repo.db.execute(
                "INSERT INTO projects(id, name, path, repo_url, description, active, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, 1, ?, ?) ON CONFLICT(id) DO UPDATE SET name = excluded.name, "
                "path = coalesce(excluded.path, path), repo_url = coalesce(excluded.repo_url, repo_url), "
                "description = coalesce(excluded.description, description), active = 1, updated_at = excluded.updated_at",
                (pid, name, path, repo_url, description, ts, ts))
        return {"id": pid, "name": name}

    def add_category(self, cid: str, description: str) -> dict[str, Any]:
        if not CATEGORY_ID.match(cid or ""):
            raise InvalidInputError(f"Invalid category id '{cid}' (lowercase letters, digits, '_' or '-')")
        with self._write() as repo:
            if repo.registry_has("categories", cid):
                raise InvalidInputError(f"Category '{cid}' already exists")
            repo.db.execute("INSERT INTO categories(id, description, created_at) VALUES (?, ?, ?)",
                            (cid, description, format_ms(now_ms())))
        return {"id": cid}

    def remove_category(self, cid: str) -> dict[str, Any]:
        with self._write() as repo:
            if not repo.registry_has("categories", cid):
                raise NotFoundError(f"Category '{cid}' not found")
            n = repo.db.scalar("SELECT count(*) FROM entries WHERE category = ?", (cid,))
            if n:
                raise InvalidInputError(f"Cannot remove category '{cid}': {n} entries still use it")
            repo.db.execute("DELETE FROM categories WHERE id = ?", (cid,))
        return {"id": cid, "deleted": True}

    def add_applicability(self, aid: str, description: str, scope: str | None) -> dict[str, Any]:
        if not CATEGORY_ID.match(aid or ""):
            raise InvalidInputError(f"Invalid applicability id '{aid}' (lowercase letters, digits, '_' or '-')")
        with self._write() as repo:
            if repo.registry_has("applicability_types", aid):
                raise InvalidInputError(f"Applicability '{aid}' already exists")
            repo.db.execute("INSERT INTO applicability_types(id, description, scope, created_at) VALUES (?, ?, ?, ?)",
                            (aid, description, scope, format_ms(now_ms())))
        return {"id": aid}

    # =========================================================================================================
    # Sessions
    # =========================================================================================================
    def sessions(self, *, agent: str | None, project: str | None = None) -> list[dict[str, Any]]:
        """Sessions ``agent`` may know of: its own, empty ones, and those holding an entry it can see. A session
        that exists only through another agent's private entries stays hidden (its id and ``created_by`` would
        reveal that agent's private work)."""
        with self._read() as repo:
            if project is not None and not repo.registry_has("projects", project):
                raise InvalidInputError(f"Unknown project '{project}'; register it with m1nd memory projects add")
            rows = repo.db.all(
                "SELECT s.id, s.session_type, s.project, s.started_at, s.ended_at, s.created_by FROM sessions s "
                "WHERE (s.created_by IS :agent OR NOT EXISTS (SELECT 1 FROM entries e WHERE e.session_id = s.id) "
                f"OR EXISTS (SELECT 1 FROM entries e WHERE e.session_id = s.id AND {visible_sql()}))"
                + (" AND s.project = :project" if project else "") + " ORDER BY s.started_at DESC, s.id",
                {"agent": agent, "project": project})
        return [dict(zip(("id", "session_type", "project", "started_at", "ended_at", "created_by"), r, strict=True))
                for r in rows]

    def create_session(self, *, session_type: str | None = None, project: str | None = None,
                       session_id: str | None = None, agent: str | None = None) -> dict[str, Any]:
        sid = F.check_session_id(session_id) if session_id else new_session_id()
        st = session_type or "manual"
        ts = format_ms(now_ms())
        with self._write() as repo:
            types = repo.registry_ids("session_types")
            if st not in types:
                raise InvalidInputError(f"Invalid session type '{st}'. Valid: {', '.join(types)}")
            if project is not None and not repo.registry_has("projects", project):
                raise InvalidInputError(f"Unknown project '{project}'; register it with m1nd memory projects add")
            if repo.db.one("SELECT 1 FROM sessions WHERE id = ?", (sid,)):
                raise InvalidInputError(f"Session '{sid}' already exists")
            repo.db.execute("INSERT INTO sessions(id, session_type, project, started_at, ended_at, created_by) "
                            "VALUES (?, ?, ?, ?, NULL, ?)", (sid, st, project, ts, agent))
        return {"id": sid, "session_type": st, "project": project, "started_at": ts, "ended_at": None,
                "created_by": agent}

    def close_session(self, session_id: str) -> dict[str, Any]:
        ts = format_ms(now_ms())
        with self._write() as repo:
            r = repo.db.one("SELECT ended_at FROM sessions WHERE id = ?", (session_id,))
            if r is None:
                raise NotFoundError(f"Session '{session_id}' not found")
            if r[0] is None:
                repo.db.execute("UPDATE sessions SET ended_at = ? WHERE id = ?", (ts, session_id))
            ended = r[0] or ts
        return {"id": session_id, "closed": True, "ended_at": ended}

    def for_session(self, sid: str, *, agent: str | None) -> list[dict[str, Any]]:
        s = sid.strip()
        cands = [s] if s.startswith("kn-") else [s, "kn-" + s]
        now = now_ms()
        with self._read() as repo:
            w = Where(params={"agent": agent, "now": now, "c": json.dumps(cands)})
            w.add(visible_sql())
            w.add("e.session_id IN (SELECT value FROM json_each(:c)) OR e.rowid IN (SELECT r.from_rowid FROM "
                  "relationships r JOIN entries t ON t.rowid = r.to_rowid WHERE r.type = 'extracted_from' AND "
                  "t.id IN (SELECT value FROM json_each(:c)))")
            entries = repo.hydrate_rowids(repo.select_rowids(w, "e.created_at, e.id", None), agent=agent, now=now)
        if entries:
            self._bookkeep([e.rowid for e in entries], "", full=False)
        return [{"id": e.id, "type": e["fact_type"], "content": e["body"], "created_at": e["created_at"],
                 "resonance": e["resonance"]} for e in entries]

    def fact_session(self, fid: str, *, agent: str | None) -> dict[str, Any]:
        eid = normalize_entry_id(fid)
        sid = None
        rowid = None
        with self._read() as repo:
            hit = repo.rowid_of(eid)
            if hit is not None and (hit[1] == "public" or (agent is not None and hit[2] == agent)):
                rowid = hit[0]
                sid = repo.db.scalar("SELECT session_id FROM entries WHERE rowid = ?", (rowid,))
                if sid is None:
                    sid = repo.db.scalar(
                        f"SELECT t.id FROM relationships r JOIN entries t ON t.rowid = r.to_rowid WHERE "
                        f"r.from_rowid = :r AND r.type = 'extracted_from' AND {visible_sql('t')} ORDER BY r.created_at "
                        f"LIMIT 1", {"r": rowid, "agent": agent})
        if rowid is not None:
            self._bookkeep([rowid], format_ms(now_ms()))
        return {"fact_id": eid, "session_id": sid}

    # =========================================================================================================
    # Export and seeding
    # =========================================================================================================
    def export_entries(self, *, agent: str | None, include_embeddings: bool = False) -> Iterator[dict[str, Any]]:
        """Every visible entry in the entry JSON shape, oldest first (one read snapshot)."""
        now = now_ms()
        with self._read() as repo:
            for e in repo.hydrate_where(visible_sql(), {"agent": agent, "now": now}, order="e.created_at, e.rowid"):
                js = e.to_json()
                if include_embeddings:
                    blob = repo.db.scalar("SELECT vec FROM vectors WHERE owner_kind = 'entry' AND owner_rowid = ?",
                                          (e.rowid,))
                    if blob is not None:
                        import numpy as np
                        js["embedding"] = np.frombuffer(blob, dtype="<f4").tolist()
                yield js

    def seed_knowledge(self, path: Path, *, agent: str | None, overwrite: bool = False,
                       progress: Callable[[int], None] | None = None) -> dict[str, Any]:
        """Import one JSONL file of entry objects in one transaction; a bad line aborts the file."""
        notes: list[str] = []
        imported = skipped = 0
        ts = format_ms(now_ms())
        try:
            fh = path.open("r", encoding="utf-8")
        except OSError as e:
            raise InvalidInputError(f"cannot read {path}: {e.strerror or e}") from None
        pending_anchors: list[tuple[int, list[str]]] = []
        seen: set[str] = set()
        with fh, self._write() as repo:
            regs = self._registries(repo)
            for n, line in enumerate(fh, start=1):
                s = line.strip()
                if not s or s.startswith("#"):
                    continue
                try:
                    obj = json.loads(s)
                    if not isinstance(obj, dict):
                        raise InvalidInputError("line is not a JSON object")
                    snap = normalise_import(obj)
                    eid = snap["id"]
                    hit = repo.rowid_of(eid)
                    if hit is not None:
                        if not overwrite:
                            skipped += 1
                            continue
                        repo.delete_entry(hit[0])
                    self._ensure_registry_values(repo, snap, regs, ts, notes)
                    rowid, collided = self._insert_snapshot(repo, snap, ts, agent, sessions_seen=seen)
                    if collided:
                        notes.append(f"note: {eid} duplicates an entry of its session; imported with dedup exemption")
                    if snap.get("anchors"):
                        pending_anchors.append((rowid, snap["anchors"]))
                    imported += 1
                    if progress is not None and imported % 10000 == 0:
                        progress(imported)
                except json.JSONDecodeError as e:
                    raise InvalidInputError(f"line {n}: invalid JSON: {e.msg} (column {e.colno})") from None
                except M1ndError as e:
                    raise InvalidInputError(f"line {n}: {e.message}") from None
            for rowid, anchors in pending_anchors:
                for aid in anchors:
                    hit = repo.rowid_of(aid)
                    if hit is None or hit[0] == rowid:
                        notes.append(f"note: anchor {aid} of an imported entry does not exist; dropped")
                        continue
                    repo.add_anchor(rowid, hit[0], ts)
        return {"imported": imported, "skipped": skipped, "notes": notes}

    def _ensure_registry_values(self, repo: MemoryRepo, snap: dict[str, Any], regs: dict[str, set[str]], ts: str,
                                notes: list[str]) -> None:
        def need(kind: str, table: str, value: str | None, label: str) -> None:
            if value is None or value in regs[kind]:
                return
            if table == "projects":
                repo.db.execute("INSERT OR IGNORE INTO projects(id, name, active, created_at, updated_at) "
                                "VALUES (?, ?, 1, ?, ?)", (value, value, ts, ts))
            elif table == "applicability_types":
                repo.db.execute("INSERT OR IGNORE INTO applicability_types(id, description, created_at) "
                                "VALUES (?, '', ?)", (value, ts))
            else:
                repo.db.execute(f"INSERT OR IGNORE INTO {table}(id, description, created_at) VALUES (?, '', ?)",
                                (value, ts))
            regs[kind].add(value)
            notes.append(f"note: created {label} '{value}'")
        need("categories", "categories", snap["category_id"], "category")
        need("projects", "projects", snap.get("source_project_id"), "project")
        need("source_types", "source_types", snap.get("source_type_id"), "source type")
        need("entry_types", "entry_types", snap.get("entry_type_id"), "entry type")
        need("content_types", "content_types", snap.get("content_type_id"), "content type")
        for a in snap.get("applicability") or []:
            need("applicability", "applicability_types", a, "applicability")

    def _insert_snapshot(self, repo: MemoryRepo, snap: dict[str, Any], ts: str, agent: str | None, *,
                         restoring: bool = False, sessions_seen: set[str] | None = None) -> tuple[int, bool]:
        """Insert an entry from its JSON shape keeping id and timestamps. Returns ``(rowid, dedup_collided)``."""
        title, body = snap["title"], snap.get("body") or ""
        owner = snap.get("owner") if snap.get("visibility") == "private" else None
        source_agent = snap.get("source_agent_id") or owner or agent or "unknown"
        scope = dedup_scope("private" if owner else "public", owner, source_agent)
        dh = dedup_hash(title, body)
        sid = snap.get("session_id")
        if sid and (sessions_seen is None or sid not in sessions_seen):
            repo.ensure_session(sid, snap.get("created_at") or ts, source_agent)
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
        rowid = repo.insert_entry(row)  # ON CONFLICT DO NOTHING: None when the dedup index (or the id) collides
        if rowid is None:
            if not (sid and repo.dedup_taken(sid, scope, row["category"], dh, -1)):
                raise InvalidInputError(f"entry id '{row['id']}' appears twice")
            row["dedup_exempt"] = 1
            collided = True
            rowid = repo.insert_entry(row, strict=True)
        tags = list(snap.get("tags") or [])
        repo.set_tags(rowid, tags, replace=False)
        if snap.get("applicability"):
            repo.set_applicability(rowid, snap["applicability"], replace=False)
        repo.fts_refresh(rowid, title, body, row["summary"], tags, ident_text(title, body), new=True)
        return rowid, collided

    def seed_agents(self, directory: Path) -> dict[str, Any]:
        if not directory.is_dir():
            raise NotFoundError(f"No agent seed directory at {directory}")
        seeded: list[str] = []
        notes: list[str] = []
        ts = format_ms(now_ms())
        rows = []
        for p in sorted(directory.glob("*.md")):
            if p.name.startswith("_"):
                continue
            try:
                meta = front_matter(p.read_text(encoding="utf-8"))
                for key in ("name", "description"):
                    if not meta.get(key):
                        raise ValueError(f"missing '{key}'")
                rows.append((meta["name"], meta["description"], meta.get("domain") or None))
            except (OSError, UnicodeDecodeError, ValueError) as e:
                notes.append(f"skipped {p.name}: {e}")
        with self._write() as repo:
            for name, desc, domain in rows:
                repo.db.execute("INSERT INTO agents(id, description, domain, created_at, updated_at) "
                                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET description = "
                                "excluded.description, domain = excluded.domain, updated_at = excluded.updated_at",
                                (name, desc, domain, ts, ts))
                seeded.append(name)
        return {"seeded": seeded, "notes": notes}


# -- helpers ---------------------------------------------------------------------------------------------------
def edited_list(current: list[str], replace: list[str] | None, add: list[str], remove: list[str]) -> list[str]:
    """A list field after an edit: replaced wholesale when ``replace`` is given, then ``add`` appended (each once),
    then ``remove`` dropped."""
    out = list(current) if replace is None else list(replace)
    for x in add:
        if x not in out:
            out.append(x)
    for x in remove:
        if x in out:
            out.remove(x)
    return out


def hidden_hint(n: int) -> str:
    word, verb = ("entry", "is") if n == 1 else ("entries", "are")
    return f"note: {n} private {word} of yours matched but {verb} hidden; use --include-private to see them"


def find_replace(body: str, find: str, replace: str, *, replace_all: bool = False, nth: int | None = None
                 ) -> tuple[str, int]:
    if find == "":
        raise InvalidInputError("--find must not be empty")
    count = body.count(find)
    if count == 0:
        raise InvalidInputError(f'Text not found in content: "{find}"')
    if nth is not None:
        if nth < 1 or nth > count:
            raise InvalidInputError(f"Invalid occurrence number: {nth} (found {count} matches)")
        idx = -1
        for _ in range(nth):
            idx = body.find(find, idx + 1)
        return body[:idx] + replace + body[idx + len(find):], 1
    if count > 1 and not replace_all:
        raise InvalidInputError(f'Found {count} matches for "{find}". Use --replace-all to replace all, or --nth N '
                                "to replace a specific occurrence.")
    return body.replace(find, replace), count


def front_matter(text: str) -> dict[str, str]:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError("no front matter (--- block)")
    out: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() == "---":
            return out
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"malformed front matter line: {line.strip()!r}")
        v = value.strip()
        if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
            v = v[1:-1]
        out[key.strip()] = v
    raise ValueError("front matter is not closed with ---")


_IMPORT_ALIASES = {"category": "category_id", "source_agent": "source_agent_id", "project": "source_project_id",
                   "source_project": "source_project_id", "source_type": "source_type_id",
                   "entry_type": "entry_type_id", "content_type": "content_type_id", "content": "body"}
_IMPORT_IGNORED = {"embedding", "decay_rate", "format", "file_path", "effective_resonance", "content_hash",
                   "chunk_count", "embedding_model", "embedded_at", "score", "rev"}


def normalise_import(obj: dict[str, Any]) -> dict[str, Any]:
    """A seed line (entry JSON shape, or the reference's shape) → the entry JSON shape, validated."""
    from m1nd.memory.timeutil import normalise_ts

    snap: dict[str, Any] = {}
    for k, v in obj.items():
        if k in _IMPORT_IGNORED:
            continue
        snap[_IMPORT_ALIASES.get(k, k)] = v
    if not isinstance(snap.get("title"), str):
        raise InvalidInputError("field 'title' is required and must be a string")
    F.check_title(snap["title"])
    body = snap.get("body")
    if body is None:
        snap["body"] = ""
    elif not isinstance(body, str):
        raise InvalidInputError("field 'body' must be a string")
    F.check_body(snap["body"])
    if not isinstance(snap.get("category_id"), str) or not CATEGORY_ID.match(snap["category_id"]):
        raise InvalidInputError(f"field 'category_id' must be a category id (got {snap.get('category_id')!r})")
    raw_id = snap.get("id")
    if raw_id is None:
        snap["id"] = new_entry_id()
    elif not isinstance(raw_id, str):
        raise InvalidInputError("field 'id' must be a string")
    else:
        snap["id"] = normalize_entry_id(raw_id)
    for key in ("tags", "applicability", "anchors", "wake_phrases", "code_refs"):
        v = snap.get(key)
        if v is None:
            snap[key] = []
        elif isinstance(v, str):
            snap[key] = F.split_list(v)
        elif isinstance(v, list) and all(isinstance(x, str) for x in v):
            snap[key] = [x.strip() for x in v if x.strip()]
        else:
            raise InvalidInputError(f"field '{key}' must be an array of strings")
    F.check_tags(snap["tags"])
    snap["anchors"] = [normalize_entry_id(a) for a in snap["anchors"]]
    one = snap.pop("wake_phrase", None)
    if isinstance(one, str) and one.strip() and one.strip() not in snap["wake_phrases"]:
        snap["wake_phrases"].insert(0, one.strip())
    for key in ("resonance", "activation_count", "wake_order"):
        v = snap.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise InvalidInputError(f"field '{key}' must be an integer")
        if isinstance(v, float):
            snap[key] = round(v)
    summary = snap.get("summary")
    if isinstance(summary, str) and summary.lstrip().startswith("{"):
        with contextlib.suppress(ValueError):
            meta = json.loads(summary)
            if isinstance(meta, dict) and ("fact_type" in meta or "type" in meta):
                ft = meta.get("fact_type") or meta.get("type")
                if ft in FACT_TYPES:
                    snap.setdefault("fact_type", ft)
                    if snap.get("fact_type") is None:
                        snap["fact_type"] = ft
                st = meta.get("state") or meta.get("fact_state")
                if st in ("open", "closed") and snap.get("fact_state") is None:
                    snap["fact_state"] = st
                snap["summary"] = None
    if snap.get("fact_type") is not None and snap["fact_type"] not in FACT_TYPES:
        raise InvalidInputError(f"Invalid fact type '{snap['fact_type']}'")
    if snap.get("fact_state") not in (None, "open", "closed"):
        raise InvalidInputError(f"field 'fact_state' must be open or closed (got {snap['fact_state']!r})")
    rt = snap.get("resonance_type")
    if rt is not None:
        F.check_resonance_type(rt)
    vis = snap.get("visibility") or "public"
    if vis not in ("public", "private"):
        raise InvalidInputError("field 'visibility' must be 'public' or 'private'")
    snap["visibility"] = vis
    if vis == "private" and not snap.get("owner"):
        raise InvalidInputError("a private entry needs an 'owner'")
    for key in ("created_at", "updated_at", "last_activated"):
        if snap.get(key) is not None:
            snap[key] = normalise_ts(snap[key], key)
    if snap.get("session_id") is not None:
        snap["session_id"] = F.check_session_id(str(snap["session_id"]))
    for key in ("source_agent_id", "source_project_id", "source_type_id", "entry_type_id", "content_type_id",
                "domain", "owner"):
        if snap.get(key) is not None and not isinstance(snap[key], str):
            raise InvalidInputError(f"field '{key}' must be a string")
    return snap
