"""Trails and learned weights on PostgreSQL (issue 18): the server side of :mod:`m1nd.store.team_contract`.

Every statement names the project (:mod:`m1nd.store.pg_team_schema`); the trail statements are
:class:`m1nd.store.trails_repo.TrailRepo`'s with that one condition added. Statements run through
:class:`m1nd.store.pg_memory_db.PgMemoryDb` (SQLite spelling, translated), so the tests read either store with the
same SQL. Writers take the project's advisory lock: one writing command at a time per project, as ``BEGIN
IMMEDIATE`` on ``graph.db``, which also keeps ``learned_edges.seq`` in commit order (see the schema).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from m1nd.store.pg_memory_db import PgMemoryDb
from m1nd.store.team_contract import LearnedWeight, LearningDump, TrailRow, WeightDelta
from m1nd.store.trails_repo import TRAIL_COLUMNS

if TYPE_CHECKING:
    from m1nd.store.pg import PgStore

_SELECT = f"SELECT {', '.join(TRAIL_COLUMNS)} FROM trails WHERE project = ?"
_LOG_COLUMNS = "agent_id, query, feedback, strength, node_ids_json, edges_adjusted, created_ms"


class PgTrailRepo:
    def __init__(self, db: PgMemoryDb, project: str) -> None:
        self.db = db
        self.project = project

    def row(self, trail_id: str) -> TrailRow | None:
        return self.db.one(f"{_SELECT} AND trail_id = ?", (self.project, trail_id))

    def exists(self, trail_id: str) -> bool:
        return self.db.scalar("SELECT 1 FROM trails WHERE project = ? AND trail_id = ?",
                              (self.project, trail_id)) is not None

    def insert(self, row: Sequence[Any], tags: Sequence[str]) -> None:
        self.db.execute(f"INSERT INTO trails(project, {', '.join(TRAIL_COLUMNS)}) "
                        f"VALUES (?, {', '.join('?' * len(TRAIL_COLUMNS))})", (self.project, *row))
        self.db.executemany("INSERT OR IGNORE INTO trail_tags(project, trail_id, tag) VALUES (?, ?, ?)",
                            [(self.project, row[0], g) for g in tags])

    def take_sequence_number(self, agent_slug: str) -> int:
        # one statement: the number handed out is the one stored minus one, whatever another writer did
        n = self.db.scalar("INSERT INTO trail_seq(project, agent_slug, next) VALUES (?, ?, 2) "
                           "ON CONFLICT(project, agent_slug) DO UPDATE SET next = trail_seq.next + 1 "
                           "RETURNING next", (self.project, agent_slug))
        return int(n) - 1

    def mark_resumed(self, trail_id: str, *, modified_ms: int, resumed_by_json: str, hypotheses_json: str) -> None:
        self.db.execute("UPDATE trails SET status = 'active', last_modified_ms = ?, resumed_by_json = ?, "
                        "hypotheses_json = ? WHERE project = ? AND trail_id = ?",
                        (modified_ms, resumed_by_json, hypotheses_json, self.project, trail_id))

    def mark_merged(self, trail_ids: Sequence[str], *, into: str, modified_ms: int) -> None:
        self.db.executemany("UPDATE trails SET status = 'merged', merged_into = ?, last_modified_ms = ? "
                            "WHERE project = ? AND trail_id = ?",
                            [(into, modified_ms, self.project, tid) for tid in trail_ids])

    def mark_archived(self, trail_id: str, *, modified_ms: int) -> None:
        self.db.execute("UPDATE trails SET status = 'archived', last_modified_ms = ? WHERE project = ? AND "
                        "trail_id = ?", (modified_ms, self.project, trail_id))

    def _filter(self, agent_id: str | None, tags: Sequence[str], statuses: Sequence[str]) -> tuple[str, list[Any]]:
        where = ["project = ?"]
        params: list[Any] = [self.project]
        if agent_id:
            where.append("agent_id = ?")
            params.append(agent_id)
        if tags:
            where.append(f"trail_id IN (SELECT trail_id FROM trail_tags WHERE project = ? AND tag IN "
                         f"({', '.join('?' * len(tags))}))")
            params += [self.project, *tags]
        if statuses:
            where.append(f"status IN ({', '.join('?' * len(statuses))})")
            params += list(statuses)
        return " WHERE " + " AND ".join(where), params

    def ids(self, *, agent_id: str | None = None, tags: Sequence[str] = (), statuses: Sequence[str] = (),
            limit: int | None = None) -> list[str]:
        cond, params = self._filter(agent_id, tags, statuses)
        sql = f"SELECT trail_id FROM trails{cond} ORDER BY last_modified_ms DESC, trail_id"
        rows = self.db.all(sql, params) if limit is None else self.db.all(sql + " LIMIT ?", [*params, limit])
        return [str(r[0]) for r in rows]

    def count(self, *, agent_id: str | None = None, tags: Sequence[str] = (), statuses: Sequence[str] = ()) -> int:
        cond, params = self._filter(agent_id, tags, statuses)
        return int(self.db.scalar(f"SELECT COUNT(*) FROM trails{cond}", params, default=0))

    def rows(self, trail_ids: Sequence[str]) -> list[TrailRow]:
        out: list[TrailRow] = []
        for k in range(0, len(trail_ids), 500):
            chunk = list(trail_ids[k:k + 500])
            out += self.db.all(f"{_SELECT} AND trail_id IN ({', '.join('?' * len(chunk))})", [self.project, *chunk])
        return out


class PgLearnedRepo:
    def __init__(self, db: PgMemoryDb, project: str) -> None:
        self.db = db
        self.project = project

    def append_event(self, *, agent_id: str, query: str, feedback: str, strength: float, node_ids_json: str,
                     edges_adjusted: int, created_ms: int, keep: int) -> None:
        self.db.execute(
            "INSERT INTO learn_log(project, agent_id, query, feedback, strength, node_ids_json, edges_adjusted, "
            "created_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (self.project, agent_id, query, feedback, strength, node_ids_json, edges_adjusted, created_ms))
        self.db.execute(
            "DELETE FROM learn_log WHERE project = ? AND id <= (SELECT id FROM learn_log WHERE project = ? "
            "ORDER BY id DESC LIMIT 1 OFFSET ?)", (self.project, self.project, keep))

    def events_since(self, created_ms: int) -> int:
        return int(self.db.scalar("SELECT COUNT(*) FROM learn_log WHERE project = ? AND created_ms >= ?",
                                  (self.project, created_ms), default=0))

    def feedback_log(self) -> list[tuple[str, str, str, float, str]]:
        return [(a or "", q or "", f or "", float(s or 0.0), j or "{}") for a, q, f, s, j in self.db.execute(
            "SELECT agent_id, query, feedback, strength, node_ids_json FROM learn_log WHERE project = ? "
            "ORDER BY id", (self.project,))]

    def newest_feedback_id(self) -> int:
        return int(self.db.scalar("SELECT COALESCE(MAX(id), 0) FROM learn_log WHERE project = ?", (self.project,),
                                  default=0) or 0)

    def generation(self) -> int:
        return int(self.db.scalar("SELECT weights_generation FROM learning_generation WHERE project = ?",
                                  (self.project,), default=0) or 0)

    def bump_generation(self) -> int:
        return int(self.db.scalar(
            "INSERT INTO learning_generation(project, weights_generation) VALUES (?, 1) ON CONFLICT(project) "
            "DO UPDATE SET weights_generation = learning_generation.weights_generation + 1 "
            "RETURNING weights_generation", (self.project,)))

    def apply_weight_deltas(self, rows: Iterable[WeightDelta], *, w_min: float, w_max: float,
                            updated_ms: int) -> int:
        """Upsert each edge's learned weight: a first delta starts from the sender's ``w0``; later ones compose
        with every machine's, bounded like the local kernel's."""
        batch = [(self.project, s, d, r, w0, w_max, w_min, w0, delta, ltp, ltd, updated_ms, w_max, w_min, delta)
                 for s, d, r, w0, delta, ltp, ltd in rows]
        self.db.executemany(
            "INSERT INTO learned_edges AS l(project, src, dst, relation, w0, w, n_ltp, n_ltd, updated_ms, seq) "
            "VALUES (?, ?, ?, ?, ?, least(?, greatest(?, ? + ?)), ?, ?, ?, nextval('learned_edges_seq')) "
            "ON CONFLICT(project, src, dst, relation) DO UPDATE SET w = least(?, greatest(?, l.w + ?)), "
            "n_ltp = l.n_ltp + excluded.n_ltp, n_ltd = l.n_ltd + excluded.n_ltd, updated_ms = excluded.updated_ms, "
            "seq = excluded.seq", batch)
        return len(batch)

    def weights_since(self, mark: int) -> tuple[list[LearnedWeight], int]:
        rows = self.db.all("SELECT src, dst, relation, w0, w, updated_ms, seq FROM learned_edges "
                           "WHERE project = ? AND seq > ? ORDER BY seq", (self.project, mark))
        learned: list[LearnedWeight] = [(r[0], r[1], int(r[2]), float(r[3]), float(r[4]), int(r[5])) for r in rows]
        return learned, max([mark, *(int(r[6]) for r in rows)])

    def weights_mark(self) -> int:
        return int(self.db.scalar("SELECT COALESCE(MAX(seq), 0) FROM learned_edges WHERE project = ?",
                                  (self.project,), default=0) or 0)

    def learned_edges(self, *, relation: int | None = None, node_ext_id: str | None = None
                      ) -> list[tuple[Any, ...]]:
        where = ["project = ?", "w <> w0"]
        params: list[Any] = [self.project]
        if relation is not None:
            where.append("relation = ?")
            params.append(relation)
        if node_ext_id is not None:
            where.append("(src = ? OR dst = ?)")
            params += [node_ext_id, node_ext_id]
        return self.db.all(f"SELECT src, dst, relation, w0, w FROM learned_edges WHERE {' AND '.join(where)}",
                           params)

    def reset_to_base(self, edges: list[tuple[Any, ...]], updated_ms: int) -> None:
        self.db.executemany("UPDATE learned_edges SET w = w0, updated_ms = ?, seq = nextval('learned_edges_seq') "
                            "WHERE project = ? AND src = ? AND dst = ? AND relation = ?",
                            [(updated_ms, self.project, r[0], r[1], r[2]) for r in edges])


class PgLearningStore:
    """Trails and learned weights of one project on a PostgreSQL server."""

    backend = "postgresql"
    remote = True

    def __init__(self, store: PgStore, project: str) -> None:
        self.store = store
        self.project = project
        self.db = PgMemoryDb(store, lock=f"m1nd_learning:{project}")
        self.trails = PgTrailRepo(self.db, project)
        self.learning = PgLearnedRepo(self.db, project)

    def write(self) -> AbstractContextManager[Any]:
        return self.db.write()

    def read(self) -> AbstractContextManager[Any]:
        return self.db.read()

    def close(self) -> None:
        self.store.close()

    # -- moving everything (one project) --------------------------------------------------------------------------
    def dump(self) -> LearningDump:
        p = (self.project,)
        return LearningDump(
            trails=self.db.all(f"{_SELECT} ORDER BY trail_id", p),
            tags=self.db.all("SELECT trail_id, tag FROM trail_tags WHERE project = ? ORDER BY trail_id, tag", p),
            sequences=self.db.all("SELECT agent_slug, next FROM trail_seq WHERE project = ? ORDER BY agent_slug", p),
            log=self.db.all(f"SELECT {_LOG_COLUMNS} FROM learn_log WHERE project = ? ORDER BY id", p),
            weights=self.db.all("SELECT src, dst, relation, w0, w, n_ltp, n_ltd, updated_ms FROM learned_edges "
                                "WHERE project = ? AND (w <> w0 OR n_ltp > 0 OR n_ltd > 0) ORDER BY 1, 2, 3", p))

    def is_empty(self) -> bool:
        p = (self.project,)
        return not (self.db.scalar("SELECT EXISTS (SELECT 1 FROM trails WHERE project = ?)", p)
                    or self.db.scalar("SELECT EXISTS (SELECT 1 FROM learn_log WHERE project = ?)", p)
                    or self.db.scalar("SELECT EXISTS (SELECT 1 FROM learned_edges WHERE project = ? AND w <> w0)", p))

    def clear(self, updated_ms: int) -> None:
        p = (self.project,)
        for table in ("trail_tags", "trails", "trail_seq", "learn_log"):
            self.db.execute(f"DELETE FROM {table} WHERE project = ?", p)
        # not deleted: a reset with a new seq reaches every machine's replay (a deleted row would not)
        self.db.execute("UPDATE learned_edges SET w = w0, n_ltp = 0, n_ltd = 0, updated_ms = ?, "
                        "seq = nextval('learned_edges_seq') WHERE project = ?", (updated_ms, self.project))

    def load(self, dump: LearningDump, *, w_min: float, w_max: float, updated_ms: int) -> int:
        """Insert ``dump`` into this project; every learned weight is stored (keyed by external ids)."""
        p = self.project
        self.db.executemany(f"INSERT INTO trails(project, {', '.join(TRAIL_COLUMNS)}) "
                            f"VALUES (?, {', '.join('?' * len(TRAIL_COLUMNS))})", [(p, *r) for r in dump.trails])
        self.db.executemany("INSERT INTO trail_tags(project, trail_id, tag) VALUES (?, ?, ?)",
                            [(p, *r) for r in dump.tags])
        self.db.executemany("INSERT INTO trail_seq(project, agent_slug, next) VALUES (?, ?, ?)",
                            [(p, *r) for r in dump.sequences])
        self.db.executemany(f"INSERT INTO learn_log(project, {_LOG_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            [(p, *r) for r in dump.log])
        self.db.executemany(
            "INSERT INTO learned_edges AS l(project, src, dst, relation, w0, w, n_ltp, n_ltd, updated_ms, seq) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, nextval('learned_edges_seq')) ON CONFLICT(project, src, dst, relation) "
            "DO UPDATE SET w0 = excluded.w0, w = excluded.w, n_ltp = excluded.n_ltp, n_ltd = excluded.n_ltd, "
            "updated_ms = excluded.updated_ms, seq = excluded.seq",
            [(p, s, d, r, w0, min(w_max, max(w_min, w)), ltp, ltd, updated_ms)
             for s, d, r, w0, w, ltp, ltd, _u in dump.weights])
        return len(dump.weights)


def open_pg_learning(url: str, project: str, *, lock_timeout_ms: int = 10_000) -> PgLearningStore:
    """Connect, apply the ``learning`` schema steps not yet applied, and scope to ``project``."""
    from m1nd.store.pg import PgStore
    from m1nd.store.pg_team_schema import COMPONENT, MIGRATIONS

    store = PgStore(url, min_size=1, max_size=4, app="m1nd-learning", lock_timeout_ms=lock_timeout_ms)
    try:
        store.migrate(COMPONENT, MIGRATIONS)
    except BaseException:
        store.close()
        raise
    return PgLearningStore(store, project)
