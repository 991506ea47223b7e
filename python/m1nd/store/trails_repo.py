"""Trails: saved investigations (learning.md §8), in the ``trails``, ``trail_tags`` and ``trail_seq`` tables.

The repository reads and writes rows (tuples in :data:`TRAIL_COLUMNS` order, the JSON columns already encoded);
what a trail holds, its staleness and its merges are :mod:`m1nd.codegraph.trails`'s. Every method runs inside the
caller's ``db.read()`` / ``db.write()`` transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from m1nd.store.db import Database

TRAIL_COLUMNS = ("trail_id", "agent_id", "label", "status", "summary", "tags_json", "visited_json",
                 "hypotheses_json", "conclusions_json", "open_questions_json", "boosts_json", "graph_generation",
                 "created_ms", "last_modified_ms", "source_trails_json", "merged_into", "resumed_by_json")
_SELECT = f"SELECT {', '.join(TRAIL_COLUMNS)} FROM trails"
Row = tuple[Any, ...]


class TrailRepo:
    def __init__(self, db: Database) -> None:
        self.db = db

    def row(self, trail_id: str) -> Row | None:
        r: Row | None = self.db.one(f"{_SELECT} WHERE trail_id = ?", (trail_id,))
        return r

    def exists(self, trail_id: str) -> bool:
        return self.db.scalar("SELECT 1 FROM trails WHERE trail_id = ?", (trail_id,)) is not None

    def insert(self, row: Sequence[Any], tags: Sequence[str]) -> None:
        """A new trail (``row`` in :data:`TRAIL_COLUMNS` order) and its tags."""
        self.db.execute(
            f"INSERT INTO trails({', '.join(TRAIL_COLUMNS)}) VALUES ({', '.join('?' * len(TRAIL_COLUMNS))})", tuple(row)
        )
        self.db.executemany("INSERT OR IGNORE INTO trail_tags(trail_id, tag) VALUES (?, ?)",
                            [(row[0], g) for g in tags])

    def take_sequence_number(self, agent_slug: str) -> int:
        """The agent's next trail number (starting at 1), advanced by one."""
        n = int(self.db.scalar("SELECT next FROM trail_seq WHERE agent_slug = ?", (agent_slug,), default=1))
        self.db.execute("INSERT INTO trail_seq(agent_slug, next) VALUES (?, ?) "
                        "ON CONFLICT(agent_slug) DO UPDATE SET next = excluded.next", (agent_slug, n + 1))
        return n

    def mark_resumed(self, trail_id: str, *, modified_ms: int, resumed_by_json: str, hypotheses_json: str) -> None:
        self.db.execute("UPDATE trails SET status = 'active', last_modified_ms = ?, resumed_by_json = ?, "
                        "hypotheses_json = ? WHERE trail_id = ?",
                        (modified_ms, resumed_by_json, hypotheses_json, trail_id))

    def mark_merged(self, trail_ids: Sequence[str], *, into: str, modified_ms: int) -> None:
        self.db.executemany("UPDATE trails SET status = 'merged', merged_into = ?, last_modified_ms = ? "
                            "WHERE trail_id = ?", [(into, modified_ms, tid) for tid in trail_ids])

    def mark_archived(self, trail_id: str, *, modified_ms: int) -> None:
        self.db.execute("UPDATE trails SET status = 'archived', last_modified_ms = ? WHERE trail_id = ?",
                        (modified_ms, trail_id))

    # -- listing ---------------------------------------------------------------------------------------------------
    @staticmethod
    def _filter(agent_id: str | None, tags: Sequence[str], statuses: Sequence[str]) -> tuple[str, list[Any]]:
        where: list[str] = []
        params: list[Any] = []
        if agent_id:
            where.append("agent_id = ?")
            params.append(agent_id)
        if tags:
            where.append(f"trail_id IN (SELECT trail_id FROM trail_tags WHERE tag IN ({', '.join('?' * len(tags))}))")
            params += list(tags)
        if len(statuses) == 1:
            where.append("status = ?")
            params.append(statuses[0])
        elif statuses:
            where.append(f"status IN ({', '.join('?' * len(statuses))})")
            params += list(statuses)
        return (" WHERE " + " AND ".join(where) if where else ""), params

    def ids(self, *, agent_id: str | None = None, tags: Sequence[str] = (), statuses: Sequence[str] = (),
            limit: int | None = None) -> list[str]:
        """Trail ids matching the filters (any of ``tags``, one of ``statuses``), most recently modified first."""
        cond, params = self._filter(agent_id, tags, statuses)
        sql = f"SELECT trail_id FROM trails{cond} ORDER BY last_modified_ms DESC, trail_id"
        rows = self.db.all(sql, params) if limit is None else self.db.all(sql + " LIMIT ?", [*params, limit])
        return [str(r[0]) for r in rows]

    def count(self, *, agent_id: str | None = None, tags: Sequence[str] = (), statuses: Sequence[str] = ()) -> int:
        cond, params = self._filter(agent_id, tags, statuses)
        return int(self.db.scalar(f"SELECT COUNT(*) FROM trails{cond}", params, default=0))

    def rows(self, trail_ids: Sequence[str]) -> list[Row]:
        """The rows of ``trail_ids`` (any order; fetched 500 at a time)."""
        out: list[Row] = []
        for k in range(0, len(trail_ids), 500):
            chunk = list(trail_ids[k:k + 500])
            out += self.db.all(f"{_SELECT} WHERE trail_id IN ({', '.join('?' * len(chunk))})", chunk)
        return out
