"""SQL of the knowledge memory (``memory.db``): every statement the memory service runs lives here.

The repository is deliberately thin: it knows tables, predicates and row shapes, not command semantics. The service
(:mod:`m1nd.memory.service`) validates input, decides, and calls these helpers inside its transactions.

Visibility (spec memory.md §3) is one predicate, :func:`visible_sql`, used by every query that returns or counts
entries: ``visibility = 'public' OR (visibility = 'private' AND owner = :agent)``; with no agent, public only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from m1nd.store.db import Database

ENTRY_COLUMNS = (
    "id", "title", "body", "summary", "category", "visibility", "owner", "source_agent", "source_project",
    "source_type", "entry_type", "content_type", "session_id", "domain", "ephemeral", "resonance", "resonance_type",
    "fact_type", "fact_state", "wake_phrases", "wake_order", "code_refs", "content_hash", "dedup_hash", "dedup_scope",
    "dedup_exempt", "last_activated", "activation_count", "chunk_count", "embedding_model", "embedded_at",
    "created_at", "updated_at", "rev",
)
_INSERT_ENTRY = (f"INSERT INTO entries({', '.join(ENTRY_COLUMNS)}) VALUES ({', '.join('?' * len(ENTRY_COLUMNS))}) "
                 "ON CONFLICT DO NOTHING")
_INSERT_ENTRY_STRICT = (f"INSERT INTO entries({', '.join(ENTRY_COLUMNS)}) "
                        f"VALUES ({', '.join('?' * len(ENTRY_COLUMNS))})")


def visible_sql(alias: str = "e", agent_param: str = ":agent") -> str:
    return (f"({alias}.visibility = 'public' OR ({alias}.visibility = 'private' AND {alias}.owner = "
            f"{agent_param}))")


# Columns of the hydrated entry row, in the order :func:`row_to_entry` expects.
_HYDRATE_SELECT = f"""
SELECT e.rowid, e.id, e.category, e.title, e.body, e.summary,
  (SELECT json_group_array(applicability_id) FROM
     (SELECT applicability_id FROM entry_applicability WHERE entry_rowid = e.rowid ORDER BY rowid)),
  e.source_project, e.source_agent,
  (SELECT json_group_array(tag) FROM (SELECT tag FROM entry_tags WHERE entry_rowid = e.rowid ORDER BY rowid)),
  e.created_at, e.updated_at, e.content_hash, e.source_type, e.entry_type, e.session_id, e.ephemeral,
  e.content_type, e.owner, e.visibility, e.resonance, e.resonance_type,
  eff_res(e.resonance, e.resonance_type, e.last_activated, e.created_at, :now),
  e.fact_type, e.fact_state, e.last_activated, e.activation_count,
  (SELECT json_group_array(x.id) FROM
     (SELECT x.id FROM entry_anchors an JOIN entries x ON x.rowid = an.anchor_rowid
       WHERE an.entry_rowid = e.rowid AND {visible_sql('x')} ORDER BY an.rowid) AS x),
  e.wake_phrases, e.wake_order, e.code_refs, e.chunk_count, e.embedding_model, e.embedded_at,
  e.rev, e.dedup_hash, e.dedup_scope, e.dedup_exempt
FROM entries e
"""


@dataclass
class Entry:
    """A hydrated entry: the public JSON shape (:meth:`to_json`) plus internal columns."""

    rowid: int
    data: dict[str, Any]
    rev: int
    dedup_hash: str
    dedup_scope: str
    dedup_exempt: int
    extra: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    @property
    def id(self) -> str:
        return self.data["id"]

    def to_json(self) -> dict[str, Any]:
        out = dict(self.data)
        out.update(self.extra)
        return out


def row_to_entry(r: Sequence[Any]) -> Entry:
    wake = json.loads(r[28]) if r[28] else []
    data = {
        "id": r[1], "category_id": r[2], "title": r[3], "body": r[4], "summary": r[5],
        "applicability": json.loads(r[6]), "source_project_id": r[7], "source_agent_id": r[8],
        "tags": json.loads(r[9]), "created_at": r[10], "updated_at": r[11], "content_hash": r[12],
        "source_type_id": r[13], "entry_type_id": r[14], "session_id": r[15], "ephemeral": bool(r[16]),
        "content_type_id": r[17], "owner": r[18], "visibility": r[19], "resonance": r[20],
        "resonance_type": r[21], "effective_resonance": round(float(r[22]), 4), "fact_type": r[23],
        "fact_state": r[24], "last_activated": r[25], "activation_count": r[26], "anchors": json.loads(r[27]),
        "wake_phrases": wake, "wake_phrase": wake[0] if wake else None, "wake_order": r[29],
        "code_refs": json.loads(r[30]) if r[30] else [], "chunk_count": r[31], "embedding_model": r[32],
        "embedded_at": r[33],
    }
    return Entry(rowid=r[0], data=data, rev=r[34], dedup_hash=r[35], dedup_scope=r[36], dedup_exempt=r[37])


@dataclass
class Where:
    """A conjunction of SQL predicates over ``entries e`` with named parameters."""

    clauses: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    _n: int = 0

    def add(self, clause: str, **params: Any) -> Where:
        self.clauses.append(clause)
        self.params.update(params)
        return self

    def param(self, value: Any) -> str:
        self._n += 1
        name = f"p{self._n}"
        self.params[name] = value
        return ":" + name

    def sql(self) -> str:
        return " AND ".join(f"({c})" for c in self.clauses) if self.clauses else "1"


class MemoryRepo:
    """SQL helpers over one :class:`~m1nd.store.db.Database` connection."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # -- registries ---------------------------------------------------------------------------------------------
    def registry_ids(self, table: str) -> list[str]:
        return [r[0] for r in self.db.all(f"SELECT id FROM {table} ORDER BY id")]

    def registry_rows(self, table: str, columns: str, order: str = "id") -> list[tuple[Any, ...]]:
        return self.db.all(f"SELECT {columns} FROM {table} ORDER BY {order}")

    def registry_has(self, table: str, key: str) -> bool:
        return self.db.one(f"SELECT 1 FROM {table} WHERE id = ?", (key,)) is not None

    def meta(self, key: str) -> str | None:
        return self.db.scalar("SELECT value FROM meta WHERE key = ?", (key,))

    # -- entries: lookup ----------------------------------------------------------------------------------------
    def hydrate_where(self, where: str, params: dict[str, Any], order: str = "", limit: int | None = None
                      ) -> Iterator[Entry]:
        sql = _HYDRATE_SELECT + f" WHERE {where}"
        if order:
            sql += f" ORDER BY {order}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        for r in self.db.execute(sql, params):
            yield row_to_entry(r)

    def hydrate_rowids(self, rowids: Sequence[int], *, agent: str | None, now: int) -> list[Entry]:
        if not rowids:
            return []
        got = {e.rowid: e for e in self.hydrate_where(
            "e.rowid IN (SELECT value FROM json_each(:ids))",
            {"ids": json.dumps(list(rowids)), "agent": agent, "now": now})}
        return [got[r] for r in rowids if r in got]

    def rowid_of(self, entry_id: str) -> tuple[int, str, str | None] | None:
        """``(rowid, visibility, owner)`` of an id, visible or not."""
        return self.db.one("SELECT rowid, visibility, owner FROM entries WHERE id = ?", (entry_id,))

    def visible_by_prefix(self, prefix: str, agent: str | None, limit: int = 3) -> list[str]:
        hi = prefix + "\uffff"
        return [r[0] for r in self.db.all(
            f"SELECT e.id FROM entries e WHERE e.id >= :lo AND e.id < :hi AND {visible_sql()} ORDER BY e.id "
            f"LIMIT {int(limit)}", {"lo": prefix, "hi": hi, "agent": agent})]

    def select_rowids(self, where: Where, order: str, limit: int | None, *, join: str = "") -> list[int]:
        sql = f"SELECT e.rowid FROM entries e {join} WHERE {where.sql()} ORDER BY {order}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [r[0] for r in self.db.execute(sql, where.params)]

    def count(self, where: Where, *, join: str = "") -> int:
        return int(self.db.scalar(f"SELECT count(*) FROM entries e {join} WHERE {where.sql()}", where.params,
                                  default=0))

    # -- entries: writes ----------------------------------------------------------------------------------------
    def insert_entry(self, row: dict[str, Any], *, strict: bool = False) -> int | None:
        """Insert one entry row. Returns the new rowid, or None when a uniqueness constraint kept it out."""
        values = [row.get(c) for c in ENTRY_COLUMNS]
        self.db.execute(_INSERT_ENTRY_STRICT if strict else _INSERT_ENTRY, values)
        if self.db.changes() == 0:
            return None
        return self.db.last_insert_rowid()

    def find_dedup(self, session_id: str, scope: str, category: str, dedup_hash: str
                   ) -> tuple[int, str, str, str, str | None] | None:
        return self.db.one(
            "SELECT rowid, id, title, visibility, owner FROM entries WHERE session_id = ? AND dedup_scope = ? "
            "AND category = ? AND dedup_hash = ? AND dedup_exempt = 0", (session_id, scope, category, dedup_hash))

    def dedup_taken(self, session_id: str | None, scope: str, category: str, dedup_hash: str,
                    except_rowid: int) -> bool:
        if session_id is None:
            return False
        return self.db.one(
            "SELECT 1 FROM entries WHERE session_id = ? AND dedup_scope = ? AND category = ? AND dedup_hash = ? "
            "AND dedup_exempt = 0 AND rowid != ?", (session_id, scope, category, dedup_hash, except_rowid)) is not None

    def update_entry(self, rowid: int, rev: int, values: dict[str, Any]) -> bool:
        """Optimistic update: only when ``rev`` still matches. Bumps ``rev``. Returns False on a lost race."""
        sets = ", ".join(f"{k} = :{k}" for k in values)
        params = dict(values)
        params.update(_rowid=rowid, _rev=rev)
        self.db.execute(f"UPDATE entries SET {sets}{', ' if sets else ''}rev = rev + 1 "
                        "WHERE rowid = :_rowid AND rev = :_rev", params)
        return self.db.changes() == 1

    def set_tags(self, rowid: int, tags: Iterable[str], *, replace: bool = True) -> None:
        if replace:
            self.db.execute("DELETE FROM entry_tags WHERE entry_rowid = ?", (rowid,))
        self.db.executemany("INSERT OR IGNORE INTO entry_tags(entry_rowid, tag) VALUES (?, ?)",
                            [(rowid, t) for t in tags])

    def set_applicability(self, rowid: int, ids: Iterable[str], *, replace: bool = True) -> None:
        if replace:
            self.db.execute("DELETE FROM entry_applicability WHERE entry_rowid = ?", (rowid,))
        self.db.executemany("INSERT OR IGNORE INTO entry_applicability(entry_rowid, applicability_id) "
                            "VALUES (?, ?)", [(rowid, a) for a in ids])

    def add_anchor(self, rowid: int, anchor_rowid: int, now: str, similarity: float | None = None) -> None:
        self.db.execute("INSERT OR IGNORE INTO entry_anchors(entry_rowid, anchor_rowid, similarity, created_at) "
                        "VALUES (?, ?, ?, ?)", (rowid, anchor_rowid, similarity, now))
        self.db.execute("DELETE FROM anchor_removed WHERE entry_rowid = ? AND anchor_rowid = ?",
                        (rowid, anchor_rowid))

    def remove_anchor(self, rowid: int, anchor_rowid: int) -> None:
        self.db.execute("DELETE FROM entry_anchors WHERE entry_rowid = ? AND anchor_rowid = ?",
                        (rowid, anchor_rowid))
        self.db.execute("INSERT OR IGNORE INTO anchor_removed(entry_rowid, anchor_rowid) VALUES (?, ?)",
                        (rowid, anchor_rowid))

    def anchor_rowids(self, rowid: int) -> list[int]:
        return [r[0] for r in self.db.all("SELECT anchor_rowid FROM entry_anchors WHERE entry_rowid = ? "
                                          "ORDER BY rowid", (rowid,))]

    def delete_entry(self, rowid: int) -> None:
        self.db.execute("DELETE FROM entries_fts WHERE rowid = ?", (rowid,))
        self.db.execute("DELETE FROM entries WHERE rowid = ?", (rowid,))

    def fts_refresh(self, rowid: int, title: str, body: str, summary: str | None, tags: Sequence[str],
                    ident: str, *, new: bool = False) -> None:
        if not new:
            self.db.execute("DELETE FROM entries_fts WHERE rowid = ?", (rowid,))
        self.db.execute("INSERT INTO entries_fts(rowid, title, body, summary, tags_text, ident_text) "
                        "VALUES (?, ?, ?, ?, ?, ?)", (rowid, title, body, summary or "", " ".join(tags), ident))

    def activate(self, rowids: Sequence[int], now: str, *, full: bool = True) -> None:
        """Activation bookkeeping: ``full`` sets the decay clock too; otherwise only the count moves."""
        if not rowids:
            return
        if full:
            self.db.executemany("UPDATE entries SET last_activated = ?, activation_count = activation_count + 1 "
                                "WHERE rowid = ?", [(now, r) for r in rowids])
        else:
            self.db.executemany("UPDATE entries SET activation_count = activation_count + 1 WHERE rowid = ?",
                                [(r,) for r in rowids])

    # -- sessions -----------------------------------------------------------------------------------------------
    def ensure_session(self, session_id: str, now: str, created_by: str | None,
                       session_type: str = "agent_task") -> None:
        self.db.execute("INSERT OR IGNORE INTO sessions(id, session_type, project, started_at, ended_at, created_by) "
                        "VALUES (?, ?, NULL, ?, NULL, ?)", (session_id, session_type, now, created_by))

    # -- relationships ------------------------------------------------------------------------------------------
    def insert_relationship(self, rel_id: str, from_rowid: int, to_rowid: int, rel_type: str, now: str
                            ) -> str | None:
        """Insert unless the triple exists; returns the id of the existing relationship when it does."""
        self.db.execute("INSERT INTO relationships(id, from_rowid, to_rowid, type, created_at) VALUES (?, ?, ?, ?, ?) "
                        "ON CONFLICT(from_rowid, to_rowid, type) DO NOTHING",
                        (rel_id, from_rowid, to_rowid, rel_type, now))
        if self.db.changes() == 1:
            return None
        return self.db.scalar("SELECT id FROM relationships WHERE from_rowid = ? AND to_rowid = ? AND type = ?",
                              (from_rowid, to_rowid, rel_type))

    # -- backups ------------------------------------------------------------------------------------------------
    def insert_backup(self, bk_id: str, entry: Entry, operation: str, agent: str | None, now: str,
                      keep: int = 10) -> None:
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

    def backups(self, entry_id: str, agent: str | None) -> list[tuple[Any, ...]]:
        return self.db.all(
            f"SELECT b.id, b.entry_id, b.snapshot_json, b.operation, b.source_agent, b.created_at FROM backups b "
            f"WHERE b.entry_id = :eid AND {visible_sql('b')} ORDER BY b.rowid DESC", {"eid": entry_id, "agent": agent})
