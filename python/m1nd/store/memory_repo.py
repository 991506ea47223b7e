"""SQLite entries of the knowledge memory (``memory.db``): the :class:`~m1nd.store.memory_contract.EntryRepository`.

The repository is deliberately thin: it knows tables, predicates and row shapes, not command semantics. The services
(:mod:`m1nd.memory`) validate input, decide, and call these helpers inside their transactions, reached through
:class:`MemoryTx` (one connection, one transaction, one repository per aggregate: entries here; sessions,
relationships, registries, backups and meta in the sibling ``memory_*`` modules).

Visibility (spec memory.md §3) is one predicate, :func:`visible_sql`, used by every query that returns or counts
entries: ``visibility = 'public' OR (visibility = 'private' AND owner = :agent)``; with no agent, public only.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from m1nd.store.db import Database
from m1nd.store.memory_contract import Entry, Filters

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


_EFF = "eff_res(e.resonance, e.resonance_type, e.last_activated, e.created_at, :now)"
_BM25 = "bm25(entries_fts, 4.0, 1.0, 2.0, 2.0, 1.5)"
# Columns a service may read one at a time (value_of); anything else is a programming error.
_SINGLE_COLUMNS = frozenset({"id", "category", "source_agent", "session_id", "resonance", "body", "title"})
ORDERS = {"updated": "e.updated_at DESC, e.id", "created": "e.created_at DESC, e.id", "id": "e.id",
          "resonance_raw": "e.resonance DESC, e.id", "resonance_decayed": f"{_EFF} DESC, e.id",
          "chronological": "e.created_at, e.id"}


class EntryRepo:
    """SQL of the ``entries`` aggregate (tags, applicability, anchors, FTS rows) over one connection."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # -- lookup -------------------------------------------------------------------------------------------------
    def _hydrate_where(self, where: str, params: dict[str, Any], order: str = "", limit: int | None = None
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
        got = {e.rowid: e for e in self._hydrate_where(
            "e.rowid IN (SELECT value FROM json_each(:ids))",
            {"ids": json.dumps(list(rowids)), "agent": agent, "now": now})}
        return [got[r] for r in rowids if r in got]

    def visible_entries(self, agent: str | None, now: int) -> Iterator[Entry]:
        """Every entry ``agent`` may see, oldest first."""
        return self._hydrate_where(visible_sql(), {"agent": agent, "now": now}, order="e.created_at, e.rowid")

    def rowid_of(self, entry_id: str) -> tuple[int, str, str | None] | None:
        """``(rowid, visibility, owner)`` of an id, visible or not."""
        return self.db.one("SELECT rowid, visibility, owner FROM entries WHERE id = ?", (entry_id,))

    def id_of(self, rowid: int) -> str | None:
        return cast("str | None", self.db.scalar("SELECT id FROM entries WHERE rowid = ?", (rowid,)))

    def value_of(self, rowid: int, column: str) -> Any:
        if column not in _SINGLE_COLUMNS:
            raise ValueError(f"value_of: column {column!r} is not readable alone")
        return self.db.scalar(f"SELECT {column} FROM entries WHERE rowid = ?", (rowid,))

    def reinforce_state(self, rowid: int) -> tuple[str, int, int]:
        """``(id, resonance, activation_count)`` of an entry."""
        return cast("tuple[str, int, int]",
                    self.db.one("SELECT id, resonance, activation_count FROM entries WHERE rowid = ?", (rowid,)))

    def visible_by_prefix(self, prefix: str, agent: str | None, limit: int = 3) -> list[str]:
        hi = prefix + "\uffff"
        return [r[0] for r in self.db.all(
            f"SELECT e.id FROM entries e WHERE e.id >= :lo AND e.id < :hi AND {visible_sql()} ORDER BY e.id "
            f"LIMIT {int(limit)}", {"lo": prefix, "hi": hi, "agent": agent})]

    # -- filtering and ranking ----------------------------------------------------------------------------------
    def scope(self, f: Filters, agent: str | None, now: int, visibility: str | None = None) -> Where:
        """The predicate of :class:`Filters` for ``agent`` at ``now`` (``visibility`` overrides the filter's)."""
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
        value = "e.resonance" if f.basis == "raw" else _EFF
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

    def select_rowids(self, where: Where, order: str, limit: int | None) -> list[int]:
        """Rowids inside ``where`` in ``order``, a key of :data:`ORDERS`."""
        return self._rowids(where, ORDERS[order], limit)

    def _rowids(self, where: Where, order_sql: str, limit: int | None) -> list[int]:
        sql = f"SELECT e.rowid FROM entries e WHERE {where.sql()} ORDER BY {order_sql}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [r[0] for r in self.db.execute(sql, where.params)]

    def count(self, where: Where) -> int:
        return int(self.db.scalar(f"SELECT count(*) FROM entries e WHERE {where.sql()}", where.params, default=0))

    def top_effective(self, w: Where, limit: int) -> list[int]:
        """Rowids of the ``limit`` entries with the highest effective resonance (ties by id), without evaluating
        the decay of every row: entries are walked by raw resonance (index ``entries_resonance``) and the walk stops
        once the raw value falls below the current k-th best effective value — decay never raises a positive
        resonance (``eff ≤ raw`` for ``raw > 0``; ``eff = 0`` for 0; ``raw ≤ eff ≤ 0`` below)."""
        if limit <= 0:
            return []
        sql = (f"SELECT e.rowid, e.id, e.resonance, {_EFF} FROM entries e WHERE {w.sql()} "
               f"ORDER BY e.resonance DESC")
        kth: list[float] = []  # min-heap of the best `limit` effective values
        seen: list[tuple[float, str, int]] = []
        for rowid, eid, raw, eff in self.db.execute(sql, w.params):
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

    def keyword_hits(self, w: Where, match: str, limit: int) -> list[tuple[int, float]]:
        """``(rowid, score)`` of the FTS5 ``match`` inside ``w``, best first (BM25 with the spec's weights)."""
        params = dict(w.params, _q=match)
        sql = (f"SELECT e.rowid, -{_BM25} FROM entries_fts JOIN entries e ON e.rowid = entries_fts.rowid "
               f"WHERE entries_fts MATCH :_q AND {w.sql()} ORDER BY {_BM25}, e.updated_at DESC "
               f"LIMIT {int(limit)}")
        return [(r[0], r[1]) for r in self.db.execute(sql, params)]

    def keyword_count(self, w: Where, match: str) -> int:
        params = dict(w.params, _q=match)
        return int(self.db.scalar(f"SELECT count(*) FROM entries_fts JOIN entries e ON e.rowid = entries_fts.rowid "
                                  f"WHERE entries_fts MATCH :_q AND {w.sql()}", params, default=0))

    def recent_rowids(self, agent: str | None, now: int, since: str, *, basis: str, resonance_type: str | None,
                      all_types: bool, by_resonance: bool, limit: int, min_value: float) -> list[int]:
        """Visible entries created since ``since`` whose (basis) resonance is above ``min_value``."""
        value = "e.resonance" if basis == "raw" else _EFF
        w = Where(params={"agent": agent, "now": now, "since": since})
        w.add(visible_sql()).add("e.created_at >= :since").add(f"{value} > :floor", floor=min_value)
        if resonance_type:
            w.add("e.resonance_type = :rt", rt=resonance_type)
        elif not all_types:
            w.add("e.resonance_type = 'ephemeral'")
        order = f"{value} DESC, e.created_at DESC, e.id" if by_resonance else "e.created_at DESC, e.id"
        return self._rowids(w, order, limit)

    def session_rowids(self, candidates: list[str], agent: str | None, now: int) -> list[int]:
        """Visible entries of a session (by ``session_id``, or extracted from a session entry), oldest first."""
        w = Where(params={"agent": agent, "now": now, "c": json.dumps(candidates)})
        w.add(visible_sql())
        w.add("e.session_id IN (SELECT value FROM json_each(:c)) OR e.rowid IN (SELECT r.from_rowid FROM "
              "relationships r JOIN entries t ON t.rowid = r.to_rowid WHERE r.type = 'extracted_from' AND "
              "t.id IN (SELECT value FROM json_each(:c)))")
        return self.select_rowids(w, "chronological", None)

    # -- writes -------------------------------------------------------------------------------------------------
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

    def fts_refresh_many(self, rows: Sequence[tuple[int, str, str, str | None, Sequence[str], str]]) -> None:
        """The keyword index of new entries, ``(rowid, title, body, summary, tags, ident)`` each."""
        self.db.executemany("INSERT INTO entries_fts(rowid, title, body, summary, tags_text, ident_text) "
                            "VALUES (?, ?, ?, ?, ?, ?)",
                            [(r, t, b, s or "", " ".join(g), i) for r, t, b, s, g, i in rows])

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

    def set_resonance(self, rowid: int, resonance: int, now: str) -> None:
        """Reinforcement: a new resonance, activated now."""
        self.db.execute("UPDATE entries SET resonance = ?, last_activated = ?, activation_count = "
                        "activation_count + 1, updated_at = ?, rev = rev + 1 WHERE rowid = ?",
                        (resonance, now, now, rowid))

    def bump_resonance(self, rowid: int, now: str, *, cap: int) -> None:
        """Reinforcement by a relationship: one more resonance (at most ``cap``), activated now."""
        self.db.execute("UPDATE entries SET resonance = min(resonance + 1, ?), last_activated = ?, "
                        "activation_count = activation_count + 1, updated_at = ?, rev = rev + 1 "
                        "WHERE rowid = ?", (cap, now, now, rowid))

    # -- threads ------------------------------------------------------------------------------------------------
    def open_threads(self, agent: str | None) -> list[tuple[Any, ...]]:
        """Visible open threads: ``(rowid, id, body, fact_state, created_at, resonance, tags_json)``, oldest first."""
        return self.db.all(
            f"SELECT e.rowid, e.id, e.body, e.fact_state, e.created_at, e.resonance, "
            f"(SELECT json_group_array(tag) FROM (SELECT tag FROM entry_tags WHERE entry_rowid = e.rowid "
            f"ORDER BY rowid)) FROM entries e WHERE e.category = 'thread' AND "
            f"(e.fact_state IS NULL OR e.fact_state = 'open') AND {visible_sql()} ORDER BY e.created_at, e.rowid",
            {"agent": agent})

    def close_thread(self, rowid: int, now: str) -> None:
        self.db.execute("UPDATE entries SET fact_state = 'closed', updated_at = ?, rev = rev + 1 WHERE rowid = ?",
                        (now, rowid))

    # -- statistics ---------------------------------------------------------------------------------------------
    def category_counts(self, agent: str | None) -> list[tuple[str, int]]:
        return self.db.all(f"SELECT e.category, count(*) FROM entries e WHERE {visible_sql()} "
                           "GROUP BY e.category ORDER BY e.category", {"agent": agent})

    def private_count(self, agent: str) -> int:
        return int(self.db.scalar("SELECT count(*) FROM entries WHERE visibility = 'private' AND owner = ?",
                                  (agent,), default=0))

    def health_counts(self, agent: str | None, model: str | None, cutoff: str) -> tuple[int, int, int, int, int]:
        """``(total, embedded, anchored, stale_high_res, stale_vectors)`` over the visible entries."""
        return cast("tuple[int, int, int, int, int]", self.db.one(
            f"""SELECT count(*),
              coalesce(sum(EXISTS (SELECT 1 FROM vectors v WHERE v.owner_kind = 'entry'
                   AND v.owner_rowid = e.rowid AND v.model_id = :model)), 0),
              coalesce(sum(EXISTS (SELECT 1 FROM entry_anchors an JOIN entries x ON x.rowid = an.anchor_rowid
                   WHERE an.entry_rowid = e.rowid AND {visible_sql('x')})), 0),
              coalesce(sum(e.resonance >= 5 AND (e.last_activated IS NULL OR e.last_activated < :cutoff)), 0),
              coalesce(sum(EXISTS (SELECT 1 FROM vectors v WHERE v.owner_kind = 'entry'
                   AND v.owner_rowid = e.rowid AND v.model_id IS NOT :model)), 0)
            FROM entries e WHERE {visible_sql()}""", {"agent": agent, "model": model, "cutoff": cutoff}))

    def created_between(self, agent: str | None, start: str, end: str) -> int:
        return int(self.db.scalar(
            f"SELECT count(*) FROM entries e WHERE {visible_sql()} AND e.created_at >= :a AND e.created_at < :b",
            {"agent": agent, "a": start, "b": end}, default=0))

    def category_use(self, category: str) -> int:
        return int(self.db.scalar("SELECT count(*) FROM entries WHERE category = ?", (category,), default=0))

    def visible_tags(self, agent: str | None, category: str | None) -> list[str]:
        w = f"{visible_sql()}" + (" AND e.category = :cat" if category else "")
        return [r[0] for r in self.db.all(
            f"SELECT DISTINCT t.tag FROM entry_tags t JOIN entries e ON e.rowid = t.entry_rowid WHERE {w} "
            f"ORDER BY t.tag", {"agent": agent, "cat": category})]

    def entry_vector(self, rowid: int) -> bytes | None:
        """The stored whole-entry vector (little-endian float32), if any."""
        return cast("bytes | None", self.db.scalar(
            "SELECT vec FROM vectors WHERE owner_kind = 'entry' AND owner_rowid = ?", (rowid,)))


class MetaRepo:
    """The ``meta`` key/value table (schema facts, the wake secret, vector generations)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, key: str) -> str | None:
        return cast("str | None", self.db.scalar("SELECT value FROM meta WHERE key = ?", (key,)))

    def ensure(self, key: str, value: str) -> None:
        """Set ``key`` unless it already has a value."""
        self.db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)", (key, value))
