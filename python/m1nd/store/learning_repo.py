"""The learn log and learned-weight resets: the rows ``learn`` writes and ``m1nd weights reset`` rewrites.

The repository of the ``learn_log`` table (one row per feedback event, the newest few thousand kept) and of the
``edges`` table's learned weights ``w`` when they are reset to their base ``w0``. The rules (what feedback changes,
which edges a reset selects) are :mod:`m1nd.codegraph.learning`'s; writes run inside the caller's ``db.write()``
transaction.
"""

from __future__ import annotations

from typing import Any

from m1nd.store.db import Database


class LearningRepo:
    def __init__(self, db: Database) -> None:
        self.db = db

    def append_event(self, *, agent_id: str, query: str, feedback: str, strength: float, node_ids_json: str,
                     edges_adjusted: int, created_ms: int, keep: int) -> None:
        """Record one feedback event and keep only the newest ``keep`` events."""
        self.db.execute(
            "INSERT INTO learn_log(agent_id, query, feedback, strength, node_ids_json, edges_adjusted, "
            "created_ms) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (agent_id, query, feedback, strength, node_ids_json, edges_adjusted, created_ms))
        self.db.execute(
            "DELETE FROM learn_log WHERE id <= (SELECT id FROM learn_log ORDER BY id DESC LIMIT 1 OFFSET ?)",
            (keep,))

    def events_since(self, created_ms: int) -> int:
        """Feedback events recorded at or after ``created_ms``."""
        return int(self.db.scalar("SELECT COUNT(*) FROM learn_log WHERE created_ms >= ?", (created_ms,), default=0))

    def learned_edges(self, *, relation: int | None = None, node_ext_id: str | None = None
                      ) -> list[tuple[Any, ...]]:
        """(src, dst, relation, w0, w) of the edges whose learned weight differs from w0, of one relation code
        and/or touching one node."""
        where = ["e.w != e.w0"]
        params: list[Any] = []
        if relation is not None:
            where.append("e.relation = ?")
            params.append(relation)
        if node_ext_id is not None:
            where.append("(e.src = n.id OR e.dst = n.id)")
            base = "FROM edges e, nodes n WHERE n.ext_id = ? AND "
            params = [node_ext_id, *params]
        else:
            base = "FROM edges e WHERE "
        return self.db.all(f"SELECT e.src, e.dst, e.relation, e.w0, e.w {base}{' AND '.join(where)}", params)

    def reset_to_base(self, edges: list[tuple[Any, ...]], updated_ms: int) -> None:
        """``w ← w0`` for ``edges`` (rows of :meth:`learned_edges`)."""
        self.db.executemany("UPDATE edges SET w = w0, updated_ms = ? WHERE src = ? AND dst = ? AND relation = ?",
                            [(updated_ms, r[0], r[1], r[2]) for r in edges])
