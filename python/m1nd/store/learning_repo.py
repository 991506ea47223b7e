"""The learn log and learned weights on ``graph.db``: the SQLite side of
:class:`m1nd.store.team_contract.LearnedRepository`.

The ``learn_log`` table (one row per feedback event, the newest few thousand kept) and the learned weights ``w`` of
the ``edges`` table (deltas applied in place, reset to their base ``w0``), with the ``weights_generation`` counter
of ``meta``. The rules (what feedback changes, which edges a reset selects) are :mod:`m1nd.codegraph.learning`'s;
writes run inside the caller's ``db.write()`` transaction. The mark of :meth:`weights_since` is ``updated_ms``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from m1nd.store.db import Database
from m1nd.store.team_contract import LearnedWeight, WeightDelta


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

    def feedback_log(self) -> list[tuple[str, str, str, float, str]]:
        """Every learn_log row as (agent_id, query, feedback, strength, node_ids_json), oldest first (node
        feedback)."""
        return [(a or "", q or "", f or "", float(s or 0.0), j or "{}") for a, q, f, s, j in self.db.execute(
            "SELECT agent_id, query, feedback, strength, node_ids_json FROM learn_log ORDER BY id")]

    def newest_feedback_id(self) -> int:
        return int(self.db.scalar("SELECT COALESCE(MAX(id), 0) FROM learn_log", default=0) or 0)

    # -- learned weights ------------------------------------------------------------------------------------------
    def generation(self) -> int:
        return int(self.db.scalar("SELECT value FROM meta WHERE key = 'weights_generation'", default=0) or 0)

    def bump_generation(self) -> int:
        self.db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'weights_generation'")
        return self.generation()

    def apply_weight_deltas(self, rows: Iterable[WeightDelta], *, w_min: float, w_max: float,
                            updated_ms: int) -> int:
        """rows: (src ext, dst ext, relation, w0, delta, n_ltp, n_ltd); deltas compose across processes. ``w0`` is
        the edge's own column here."""
        n = 0
        for src, dst, rel, _w0, delta, ltp, ltd in rows:
            self.db.execute(
                "UPDATE edges SET w = MIN(?, MAX(?, w + ?)), n_ltp = n_ltp + ?, n_ltd = n_ltd + ?, updated_ms = ? "
                "WHERE src = (SELECT id FROM nodes WHERE ext_id = ?) AND dst = (SELECT id FROM nodes WHERE ext_id = ?) "
                "AND relation = ?", (w_max, w_min, delta, ltp, ltd, updated_ms, src, dst, rel))
            n += self.db.changes()
        return n

    def weights_since(self, mark: int) -> tuple[list[LearnedWeight], int]:
        """Edges whose learned weight was written at or after ``mark`` (an ``updated_ms``; re-reading the boundary
        millisecond is harmless; never-learned edges have ``updated_ms = 0`` and are skipped), and the new mark."""
        rows: list[LearnedWeight] = self.db.all(
            "SELECT s.ext_id, d.ext_id, e.relation, e.w0, e.w, e.updated_ms FROM edges e "
            "JOIN nodes s ON s.id = e.src JOIN nodes d ON d.id = e.dst "
            "WHERE e.updated_ms >= ? AND e.updated_ms > 0", (mark,))
        return rows, max([mark, *(int(r[5]) for r in rows)])

    def weights_mark(self) -> int:
        """When an edge weight was last written (0 for none)."""
        return int(self.db.scalar("SELECT MAX(updated_ms) FROM edges", default=0) or 0)

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
