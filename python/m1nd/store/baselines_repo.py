"""Baselines: saved snapshots of the code graph that ``drift`` and ``diverge`` compare against (learning.md §5).

The repository of the ``baselines`` table of ``graph.db`` (created by :mod:`m1nd.store.graph_schema`). Rows are
written and read here; what a snapshot holds (compressed node list, learned-weight digests, file hashes) and which
baseline a ``since`` value means are decided by :mod:`m1nd.codegraph.baselines`. Writes run inside the caller's
``db.write()`` transaction.
"""

from __future__ import annotations

from typing import Any

from m1nd.store.db import Database

# The header columns of a baseline, in the order of :class:`m1nd.codegraph.baselines.Baseline`'s fields.
HEADER_COLUMNS = "id, kind, created_ms, pid, graph_generation, weights_generation, node_count, edge_count"
Row = tuple[Any, ...]


class BaselineRepo:
    def __init__(self, db: Database) -> None:
        self.db = db

    # -- writing -------------------------------------------------------------------------------------------------
    def file_hashes(self) -> list[tuple[str, str | None]]:
        """(relpath, content hash) of every ingested file, by relpath: the snapshot of the tree."""
        return [(str(p), h) for p, h in self.db.all("SELECT relpath, content_hash FROM files ORDER BY relpath")]

    def insert(self, *, kind: str, created_ms: int, pid: int, graph_generation: int, weights_generation: int,
               node_count: int, edge_count: int, nodes_blob: bytes, weights_blob: bytes, files_blob: bytes) -> int:
        self.db.execute(
            "INSERT INTO baselines(kind, created_ms, pid, graph_generation, weights_generation, node_count, "
            "edge_count, nodes_blob, weights_blob, files_blob) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (
                kind,
                created_ms,
                pid,
                graph_generation,
                weights_generation,
                node_count,
                edge_count,
                nodes_blob,
                weights_blob,
                files_blob,
            ),
        )
        return int(self.db.last_insert_rowid())

    def prune(self, kind: str, keep: int) -> None:
        """Keep the newest ``keep`` baselines of ``kind``."""
        self.db.execute("DELETE FROM baselines WHERE kind = ? AND id NOT IN "
                        "(SELECT id FROM baselines WHERE kind = ? ORDER BY created_ms DESC, id DESC LIMIT ?)",
                        (kind, kind, keep))

    def delete(self, baseline_id: int) -> None:
        self.db.execute("DELETE FROM baselines WHERE id = ?", (baseline_id,))

    # -- reading -------------------------------------------------------------------------------------------------
    def newest(self, *, kinds: tuple[str, ...] = (), baseline_id: int | None = None, exclude_id: int | None = None,
               created_at_most: int | None = None, created_before: int | None = None) -> Row | None:
        """The header (:data:`HEADER_COLUMNS`) of the newest baseline matching every given condition, or None."""
        where: list[str] = []
        params: list[Any] = []
        if kinds:
            where.append(f"kind IN ({', '.join('?' * len(kinds))})")
            params.extend(kinds)
        if baseline_id is not None:
            where.append("id = ?")
            params.append(baseline_id)
        if exclude_id is not None:
            where.append("id != ?")
            params.append(exclude_id)
        if created_at_most is not None:
            where.append("created_ms <= ?")
            params.append(created_at_most)
        if created_before is not None:
            where.append("created_ms < ?")
            params.append(created_before)
        sql = (f"SELECT {HEADER_COLUMNS} FROM baselines{' WHERE ' + ' AND '.join(where) if where else ''} "
               "ORDER BY created_ms DESC, id DESC LIMIT 1")
        row: Row | None = self.db.one(sql, tuple(params))
        return row

    def blobs(self, baseline_id: int) -> tuple[bytes | None, bytes | None, bytes | None] | None:
        """(nodes, weights, files) blobs of one baseline, or None when it is gone."""
        r = self.db.one("SELECT nodes_blob, weights_blob, files_blob FROM baselines WHERE id = ?", (baseline_id,))
        return (r[0], r[1], r[2]) if r else None

    def oldest_created_ms(self) -> int | None:
        r = self.db.one("SELECT MIN(created_ms) FROM baselines")
        return None if not r or r[0] is None else int(r[0])

    # -- the file snapshots diverge compares (created_ms, files blob) ---------------------------------------------
    def own_server_start_files(self, pid: int, since_ms: int) -> Row | None:
        """This process's server_start baseline (recorded at or after ``since_ms``)."""
        row: Row | None = self.db.one(
            "SELECT created_ms, files_blob FROM baselines WHERE kind = 'server_start' AND pid = ? "
            "AND created_ms >= ? ORDER BY created_ms DESC LIMIT 1", (pid, since_ms))
        return row

    def server_start_files_before(self, before_ms: int) -> Row | None:
        row: Row | None = self.db.one(
            "SELECT created_ms, files_blob FROM baselines WHERE kind = 'server_start' AND created_ms < ? "
            "ORDER BY created_ms DESC LIMIT 1", (before_ms,))
        return row

    def newest_files(self) -> Row | None:
        """The newest baseline's files, a server_start one first."""
        row: Row | None = self.db.one(
            "SELECT created_ms, files_blob FROM baselines ORDER BY (kind = 'server_start') DESC, "
            "created_ms DESC LIMIT 1")
        return row
