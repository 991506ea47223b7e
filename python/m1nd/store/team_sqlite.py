"""Trails and learned weights in the workspace's own ``graph.db`` (the default :class:`SharedLearningStore`).

Shared by every process of this machine on the workspace; transactions are ``graph.db``'s own, so a learning write
and the local graph's weights commit together as they always did.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from m1nd.store.db import Database
from m1nd.store.learning_repo import LearningRepo
from m1nd.store.team_contract import LearningDump
from m1nd.store.trails_repo import TRAIL_COLUMNS, TrailRepo

_LOG_COLUMNS = "agent_id, query, feedback, strength, node_ids_json, edges_adjusted, created_ms"


class SqliteLearningStore:
    backend = "sqlite"
    remote = False

    def __init__(self, db: Database) -> None:
        self.db = db
        self.trails = TrailRepo(db)
        self.learning = LearningRepo(db)

    def write(self) -> AbstractContextManager[Any]:
        return self.db.write()

    def read(self) -> AbstractContextManager[Any]:
        return self.db.read()

    def close(self) -> None:
        """The database belongs to the graph store, which closes it."""

    # -- moving everything ----------------------------------------------------------------------------------------
    def dump(self) -> LearningDump:
        return LearningDump(
            trails=self.db.all(f"SELECT {', '.join(TRAIL_COLUMNS)} FROM trails ORDER BY trail_id"),
            tags=self.db.all("SELECT trail_id, tag FROM trail_tags ORDER BY trail_id, tag"),
            sequences=self.db.all("SELECT agent_slug, next FROM trail_seq ORDER BY agent_slug"),
            log=self.db.all(f"SELECT {_LOG_COLUMNS} FROM learn_log ORDER BY id"),
            weights=self.db.all(
                "SELECT s.ext_id, d.ext_id, e.relation, e.w0, e.w, e.n_ltp, e.n_ltd, e.updated_ms "
                "FROM edges e JOIN nodes s ON s.id = e.src JOIN nodes d ON d.id = e.dst "
                "WHERE e.updated_ms > 0 AND (e.w != e.w0 OR e.n_ltp > 0 OR e.n_ltd > 0) ORDER BY 1, 2, 3"
            ),
        )

    def is_empty(self) -> bool:
        return not (self.db.scalar("SELECT EXISTS (SELECT 1 FROM trails)")
                    or self.db.scalar("SELECT EXISTS (SELECT 1 FROM learn_log)")
                    or self.db.scalar("SELECT EXISTS (SELECT 1 FROM edges WHERE w != w0)"))

    def clear(self, updated_ms: int) -> None:
        for table in ("trail_tags", "trails", "trail_seq", "learn_log"):
            self.db.execute(f"DELETE FROM {table}")
        self.db.execute("UPDATE edges SET w = w0, n_ltp = 0, n_ltd = 0, updated_ms = ? WHERE updated_ms > 0",
                        (updated_ms,))

    def load(self, dump: LearningDump, *, w_min: float, w_max: float, updated_ms: int) -> int:
        """Insert ``dump``; learned weights land on the local edges with the same external ids, replayed onto
        their own base weights (exact where the bases agree). The number of learned weights applied; the rest
        name edges this graph does not have."""
        self.db.executemany(f"INSERT INTO trails({', '.join(TRAIL_COLUMNS)}) "
                            f"VALUES ({', '.join('?' * len(TRAIL_COLUMNS))})", dump.trails)
        self.db.executemany("INSERT INTO trail_tags(trail_id, tag) VALUES (?, ?)", dump.tags)
        self.db.executemany("INSERT INTO trail_seq(agent_slug, next) VALUES (?, ?)", dump.sequences)
        self.db.executemany(f"INSERT INTO learn_log({_LOG_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)", dump.log)
        applied = 0
        for src, dst, rel, w0, w, ltp, ltd, _upd in dump.weights:
            self.db.execute(
                "UPDATE edges SET w = CASE WHEN abs(w0 - ?) < 1e-6 THEN ? ELSE MIN(?, MAX(?, w0 + ?)) END, "
                "n_ltp = ?, n_ltd = ?, updated_ms = ? WHERE src = (SELECT id FROM nodes WHERE ext_id = ?) "
                "AND dst = (SELECT id FROM nodes WHERE ext_id = ?) AND relation = ?",
                (w0, w, w_max, w_min, w - w0, ltp, ltd, updated_ms, src, dst, rel))
            applied += self.db.changes()
        return applied
