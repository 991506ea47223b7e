"""Graph repository: SQL for ``graph.db`` (nodes, edges, files, roots, meta counters, ingest lock, weights).

Only plain Python/numpy values cross this boundary; callers never see SQL or apsw. Bulk reads return columns
(lists / numpy arrays) because the graph is consumed column-wise by the CSR builder.
"""

from __future__ import annotations

import json
import math
import os
import socket
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from m1nd.errors import BusyError
from m1nd.store.baselines_repo import BaselineRepo
from m1nd.store.db import Database, open_db
from m1nd.store.perspectives_repo import PerspectiveRepo
from m1nd.store.graph_schema import GRAPH_MIGRATIONS
from m1nd.timeutil import now_ms  # also re-exported for codegraph.ingestion (its one home is m1nd.timeutil)

NODE_COLUMNS = ("ext_id", "label", "qname", "kind", "lang", "root_id", "source_path", "line_start", "line_end",
                "signature", "doc", "is_test", "content_hash", "last_change_ms", "churn", "commit_count")
#: the Python type a node column's non-NULL values read back as: SQLite converts a value of another type to its
#: column's affinity (an int into a REAL column reads back as a float, a float 3.0 into an INTEGER one as 3)
NODE_COLUMN_TYPES: dict[str, type] = {
    "ext_id": str, "label": str, "qname": str, "kind": int, "lang": str, "root_id": int, "source_path": str,
    "line_start": int, "line_end": int, "signature": str, "doc": str, "is_test": int, "content_hash": str,
    "last_change_ms": int, "churn": float, "commit_count": int}
STALE_LOCK_MS = 30 * 60 * 1000


def reads_back_as_written(columns: dict[str, list[Any]]) -> bool:
    """Whether node ``columns`` (``NODE_COLUMNS`` -> values) inserted into the nodes table read back as the same
    values of the same types: each value None or of its column's type (:data:`NODE_COLUMN_TYPES`; bool is not
    int), and no float NaN (stored as NULL) or -0.0 (a REAL without fraction is stored as an integer)."""
    for name, kind in NODE_COLUMN_TYPES.items():
        if not set(map(type, columns[name])) <= {kind, type(None)}:
            return False
    return not any(v != v or (v == 0.0 and math.copysign(1.0, v) < 0) for v in columns["churn"] if v is not None)


def pack_json(obj: Any) -> bytes:
    return zlib.compress(json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8"), 1)


def unpack_json(blob: bytes | None) -> Any:
    return None if blob is None else json.loads(zlib.decompress(blob).decode("utf-8"))


def terms_rows(rows: Iterable[tuple[int, str, bytes | None]]) -> Iterator[tuple[int, str, str, list[tuple[str, str]]]]:
    """``(root_id, relpath, files.terms_blob)`` rows as :meth:`GraphStore.extract_terms` gives them."""
    for root_id, relpath, blob in rows:
        t = unpack_json(blob) if blob is not None else None
        if not t:
            yield int(root_id), relpath, "", []
            continue
        yield int(root_id), relpath, t.get("file", ""), [(i, x) for i, x in t.get("defs") or ()]


@dataclass
class RootRow:
    id: int
    path: str
    namespace: str | None
    is_primary: bool
    last_ingest_ms: int | None
    git_head: str | None
    git_state: str | None
    report: dict[str, Any] | None


@dataclass
class FileRow:
    relpath: str
    size: int
    mtime_ns: int
    content_hash: str
    lang: str
    extractor_version: int
    blob: bytes


class GraphStore:
    def __init__(self, path: Path | str, *, busy_timeout_ms: int = 10000) -> None:
        self.path = Path(path)
        self.db: Database = open_db(self.path, GRAPH_MIGRATIONS, busy_timeout_ms=busy_timeout_ms)
        self.baselines = BaselineRepo(self.db)
        self.perspectives = PerspectiveRepo(self.db)

    def close(self) -> None:
        self.db.close()

    # -- meta -----------------------------------------------------------------------------------------------
    def meta(self, key: str, default: str | None = None) -> str | None:
        value = self.db.scalar("SELECT value FROM meta WHERE key = ?", (key,), default)
        return None if value is None else str(value)

    def set_meta(self, key: str, value: Any) -> None:
        self.db.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, None if value is None else str(value)),
        )

    def has_git_root(self) -> bool:
        """Whether an ingest root is inside a git repository."""
        return bool(self.db.scalar("SELECT COUNT(*) FROM roots WHERE git_head IS NOT NULL", default=0))

    def generations(self) -> tuple[int, int]:
        rows = dict(self.db.all("SELECT key, value FROM meta WHERE key IN ('graph_generation', 'weights_generation')"))
        return int(rows.get("graph_generation", 0)), int(rows.get("weights_generation", 0))

    def bump(self, key: str) -> int:
        self.db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = ?", (key,))
        return int(self.meta(key, "0") or 0)

    # -- ingest lock ------------------------------------------------------------------------------------------
    def acquire_ingest_lock(self) -> str:
        me = f"{os.getpid()}@{socket.gethostname()}:{now_ms()}"
        with self.db.write():
            cur = self.meta("ingest_lock")
            if cur and not self._lock_is_stale(cur):
                pid, _, rest = cur.partition("@")
                _, _, started = rest.rpartition(":")
                when = (
                    time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(started) / 1000)) if started.isdigit() else "?"
                )
                raise BusyError(f"an ingest is already running in this workspace (pid {pid}, started {when}); "
                                "retry when it finishes")
            self.set_meta("ingest_lock", me)
        return me

    @staticmethod
    def _lock_is_stale(lock: str) -> bool:
        pid_s, _, rest = lock.partition("@")
        host, _, started = rest.rpartition(":")
        if started.isdigit() and now_ms() - int(started) > STALE_LOCK_MS:
            return True
        if host == socket.gethostname() and pid_s.isdigit():
            try:
                os.kill(int(pid_s), 0)
            except ProcessLookupError:
                return True
            except PermissionError:
                return False
            return int(pid_s) == os.getpid() and False
        return False

    def release_ingest_lock(self, token: str) -> None:
        with self.db.write():
            self.db.execute("UPDATE meta SET value = NULL WHERE key = 'ingest_lock' AND value = ?", (token,))

    # -- roots and files ----------------------------------------------------------------------------------------
    def roots(self) -> list[RootRow]:
        rows = self.db.all("SELECT id, path, namespace, is_primary, last_ingest_ms, git_head, git_state, report_json "
                           "FROM roots ORDER BY is_primary DESC, id")
        return [RootRow(r[0], r[1], r[2], bool(r[3]), r[4], r[5], r[6], json.loads(r[7]) if r[7] else None)
                for r in rows]

    def git_histories(self) -> Iterator[tuple[int, list[Any]]]:
        """Per root with git data: ``(root_id, [(commit_time_s, subject, [relpaths]), ...])`` (the history field's
        input; roots read before subjects were kept yield nothing until their next ingest)."""
        for root_id, blob in self.db.execute("SELECT id, git_blob FROM roots WHERE git_blob IS NOT NULL"):
            history = (unpack_json(blob) or {}).get("history") or []
            if history:
                yield int(root_id), history

    def root_git_blob(self, root_id: int) -> Any:
        return unpack_json(self.db.scalar("SELECT git_blob FROM roots WHERE id = ?", (root_id,)))

    def upsert_root(self, path: str, namespace: str | None, is_primary: bool) -> int:
        row = self.db.one("SELECT id FROM roots WHERE path = ?", (path,))
        if row:
            self.db.execute("UPDATE roots SET namespace = ?, is_primary = ? WHERE id = ?",
                            (namespace, int(is_primary), row[0]))
            return int(row[0])
        self.db.execute("INSERT INTO roots(path, namespace, is_primary) VALUES (?, ?, ?)",
                        (path, namespace, int(is_primary)))
        return self.db.last_insert_rowid()

    def delete_root(self, root_id: int) -> None:
        self.db.execute("DELETE FROM nodes WHERE root_id = ?", (root_id,))
        self.db.execute("DELETE FROM roots WHERE id = ?", (root_id,))

    def finish_root(self, root_id: int, *, git_head: str | None, git_state: str | None, git_blob: Any,
                    report: dict[str, Any]) -> None:
        self.db.execute("UPDATE roots SET last_ingest_ms = ?, git_head = ?, git_state = ?, git_blob = ?, "
                        "report_json = ? WHERE id = ?",
                        (now_ms(), git_head, git_state, pack_json(git_blob) if git_blob is not None else None,
                         json.dumps(report, separators=(",", ":")), root_id))

    def files(self, root_id: int) -> dict[str, FileRow]:
        rows = self.db.all("SELECT relpath, size, mtime_ns, content_hash, lang, extractor_version, extract_blob "
                           "FROM files WHERE root_id = ?", (root_id,))
        return {r[0]: FileRow(*r) for r in rows}

    def file_stats(self, root_id: int) -> dict[str, tuple[int, int, str, str, int]]:
        """relpath -> (size, mtime_ns, content_hash, lang, extractor_version) of a root's files (no blobs)."""
        rows = self.db.all("SELECT relpath, size, mtime_ns, content_hash, lang, extractor_version FROM files "
                           "WHERE root_id = ?", (root_id,))
        return {r[0]: (r[1], r[2], r[3], r[4], r[5]) for r in rows}

    def finish_root_report(self, root_id: int, *, git_state: str | None, report: dict[str, Any]) -> None:
        """A patched root (the watcher's fast path): new work-tree fingerprint and report, git data unchanged."""
        self.db.execute("UPDATE roots SET last_ingest_ms = ?, git_state = ?, report_json = ? WHERE id = ?",
                        (now_ms(), git_state, json.dumps(report, separators=(",", ":")), root_id))

    def file_hashes(self) -> dict[str, str]:
        return dict(self.db.all("SELECT relpath, content_hash FROM files"))

    def write_files(self, root_id: int, upserts: Iterable[Sequence[Any]], deletes: Iterable[str],
                    touch: Iterable[tuple[int, str]]) -> None:
        """``upserts`` rows: relpath, size, mtime_ns, content_hash, lang, is_test, extractor_version, blob,
        external_imports_json, parse_error, terms_blob."""
        self.db.executemany("DELETE FROM files WHERE root_id = ? AND relpath = ?", ((root_id, p) for p in deletes))
        self.db.executemany(
            "INSERT INTO files(root_id, relpath, size, mtime_ns, content_hash, lang, is_test, extractor_version, "
            "extract_blob, external_imports_json, parse_error, terms_blob) VALUES (?,?,?,?,?,?,?,?,?,?,?,?) "
            "ON CONFLICT(root_id, relpath) DO UPDATE SET size=excluded.size, mtime_ns=excluded.mtime_ns, "
            "content_hash=excluded.content_hash, lang=excluded.lang, is_test=excluded.is_test, "
            "extractor_version=excluded.extractor_version, extract_blob=excluded.extract_blob, "
            "external_imports_json=excluded.external_imports_json, parse_error=excluded.parse_error, "
            "terms_blob=excluded.terms_blob",
            ((root_id, *row) for row in upserts))
        self.db.executemany("UPDATE files SET mtime_ns = ? WHERE root_id = ? AND relpath = ?",
                            ((m, root_id, p) for m, p in touch))

    def file_counts(self) -> dict[int, int]:
        return dict(self.db.all("SELECT root_id, COUNT(*) FROM files GROUP BY root_id"))

    # -- nodes and edges ----------------------------------------------------------------------------------------
    def node_rows(self, root_id: int | None = None) -> dict[str, tuple[Any, ...]]:
        """ext_id -> (id, *NODE_COLUMNS[1:])."""
        cols = ", ".join(NODE_COLUMNS[1:])
        sql = f"SELECT ext_id, id, {cols} FROM nodes"
        rows = self.db.all(sql + " WHERE root_id = ?", (root_id,)) if root_id is not None else self.db.all(sql)
        return {r[0]: r[1:] for r in rows}

    def node_rows_at(self, root_id: int, source_paths: Iterable[str]) -> dict[str, tuple[Any, ...]]:
        """:meth:`node_rows` of the nodes of one root whose source path is one of ``source_paths``."""
        cols = ", ".join(NODE_COLUMNS[1:])
        out = {}
        for p in source_paths:
            for r in self.db.all(f"SELECT ext_id, id, {cols} FROM nodes WHERE source_path = ? AND root_id = ?",
                                 (p, root_id)):
                out[r[0]] = r[1:]
        return out

    def edges_from(self, src_ids: Iterable[int]) -> dict[tuple[int, int, int], tuple[float, float, int]]:
        """:meth:`edge_rows` of the edges leaving the given nodes."""
        out = {}
        for s in src_ids:
            for d, rel, w0, w, c in self.db.all("SELECT dst, relation, w0, w, count FROM edges WHERE src = ?", (s,)):
                out[(s, d, rel)] = (w0, w, c)
        return out

    def edge_rows(self, node_ids: Iterable[int] | None = None) -> dict[tuple[int, int, int], tuple[float, float, int]]:
        """(src, dst, relation) -> (w0, w, count) for every edge (or edges whose source is in ``node_ids``)."""
        rows = self.db.all("SELECT src, dst, relation, w0, w, count FROM edges")
        if node_ids is None:
            return {(r[0], r[1], r[2]): (r[3], r[4], r[5]) for r in rows}
        keep = set(node_ids)
        return {(r[0], r[1], r[2]): (r[3], r[4], r[5]) for r in rows if r[0] in keep}

    def insert_nodes(self, rows: Iterable[Sequence[Any]]) -> None:
        cols = ", ".join(NODE_COLUMNS)
        marks = ", ".join("?" * len(NODE_COLUMNS))
        self.db.executemany(f"INSERT INTO nodes({cols}) VALUES ({marks})", rows)

    def update_nodes(self, rows: Iterable[Sequence[Any]]) -> None:
        """rows: (*NODE_COLUMNS[1:], id)."""
        sets = ", ".join(f"{c} = ?" for c in NODE_COLUMNS[1:])
        self.db.executemany(f"UPDATE nodes SET {sets} WHERE id = ?", rows)

    def delete_nodes(self, ids: Iterable[int]) -> None:
        self.db.executemany("DELETE FROM nodes WHERE id = ?", ((i,) for i in ids))

    def node_ids_by_ext(self, ext_ids: Iterable[str] | None = None) -> dict[str, int]:
        if ext_ids is None:
            return dict(self.db.all("SELECT ext_id, id FROM nodes"))
        out = {}
        for e in ext_ids:
            v = self.db.scalar("SELECT id FROM nodes WHERE ext_id = ?", (e,))
            if v is not None:
                out[e] = v
        return out

    def insert_edges(self, rows: Iterable[Sequence[Any]]) -> None:
        """rows: (src, dst, relation, w0, w, count, updated_ms)."""
        self.db.executemany("INSERT INTO edges(src, dst, relation, w0, w, count, updated_ms) VALUES (?,?,?,?,?,?,?)",
                            rows)

    def update_edges_base(self, rows: Iterable[Sequence[Any]]) -> None:
        """Re-based edge (its ingest weight changed): rows (w0, count, src, dst, relation). Learned ``w`` is kept
        but clamped into bounds."""
        self.db.executemany("UPDATE edges SET w0 = ?, count = ? WHERE src = ? AND dst = ? AND relation = ?", rows)

    def delete_edges(self, keys: Iterable[tuple[int, int, int]]) -> None:
        self.db.executemany("DELETE FROM edges WHERE src = ? AND dst = ? AND relation = ?", keys)

    def counts(self) -> tuple[int, int]:
        return (int(self.db.scalar("SELECT COUNT(*) FROM nodes", default=0)),
                int(self.db.scalar("SELECT COUNT(*) FROM edges", default=0)))

    def agent_boosts(self, agent_id: str, since_ms: int) -> list[tuple[str, float, int, str]]:
        """An agent's persisted priming boosts created at or after ``since_ms``: (ext id, boost, created_ms, source)."""
        return [(e, float(b), int(c), s) for e, b, c, s in self.db.all(
            "SELECT ext_id, boost, created_ms, source FROM agent_boosts WHERE agent_id = ? AND created_ms >= ?",
            (agent_id, since_ms))]

    def save_agent_boosts(self, agent_id: str, rows: Iterable[tuple[str, float, int, str]], expired_ms: int) -> None:
        """Replace an agent's persisted boosts, and drop every agent's boosts created before ``expired_ms``."""
        with self.db.write():
            self.db.execute("DELETE FROM agent_boosts WHERE agent_id = ? OR created_ms < ?", (agent_id, expired_ms))
            self.db.executemany("INSERT INTO agent_boosts(agent_id, ext_id, boost, created_ms, source) "
                                "VALUES (?,?,?,?,?)", [(agent_id, e, b, c, s) for e, b, c, s in rows])

    def extract_terms(self) -> Iterator[tuple[int, str, str, list[tuple[str, str]]]]:
        """Per stored file: ``(root_id, relpath, the file's own terms, [(local definition id, terms), ...])`` (the
        lexical index's input). Files extracted before body terms existed yield empty terms until the next ingest
        re-extracts them (their extractor version is older)."""
        return terms_rows(self.db.execute("SELECT root_id, relpath, terms_blob FROM files"))

    def extract_terms_of(
        self, files: Iterable[tuple[int, str]]
    ) -> Iterator[tuple[int, str, str, list[tuple[str, str]]]]:
        """:meth:`extract_terms` of the given (root id, relpath) files only."""
        for root_id, relpath in sorted(files):
            blob = self.db.scalar("SELECT terms_blob FROM files WHERE root_id = ? AND relpath = ?", (root_id, relpath))
            t = unpack_json(blob) if blob is not None else None
            if not t:
                yield int(root_id), relpath, "", []
                continue
            yield int(root_id), relpath, t.get("file", ""), [(i, x) for i, x in t.get("defs") or ()]

    def load_columns(self) -> tuple[dict[str, list[Any]], dict[str, np.ndarray]]:
        """All nodes ordered by ext_id (the CSR order) and all edges as index arrays.

        Streams the cursors into columns / flat numpy arrays instead of materialising row tuples: on a 100k-node
        graph that halves the transient memory of a load from rows.
        """
        names = ("id", *NODE_COLUMNS)
        cols: dict[str, list[Any]] = {k: [] for k in names}
        appenders = [cols[k].append for k in names]
        for row in self.db.execute(f"SELECT id, {', '.join(NODE_COLUMNS)} FROM nodes ORDER BY ext_id"):
            for app, v in zip(appenders, row):
                app(v)
        return cols, self.edge_arrays(np.asarray(cols["id"], dtype=np.int64))

    def edge_arrays(self, ids: np.ndarray) -> dict[str, np.ndarray]:
        """Every edge as arrays of node positions, given the row id of the node at each position."""
        import itertools

        lookup = np.full(int(ids.max()) + 1 if len(ids) else 1, -1, dtype=np.int64)
        lookup[ids] = np.arange(len(ids))
        n_edges = int(self.db.scalar("SELECT COUNT(*) FROM edges", default=0))
        flat = np.fromiter(
            itertools.chain.from_iterable(self.db.execute("SELECT src, dst, relation, w0, w FROM edges")),
            dtype=np.float64,
            count=n_edges * 5,
        )
        e = flat.reshape(-1, 5)
        return {
            "src": lookup[e[:, 0].astype(np.int64)].astype(np.int32),
            "dst": lookup[e[:, 1].astype(np.int64)].astype(np.int32),
            "relation": e[:, 2].astype(np.uint8),
            "w0": e[:, 3].astype(np.float32),
            "w": e[:, 4].astype(np.float32),
        }

    def node_ids_and_ext_ids(self) -> tuple[np.ndarray, list[str]]:
        """The row id and the ext_id of every node in ext_id order (the positions :meth:`load_columns` gives)."""
        rows = self.db.all("SELECT id, ext_id FROM nodes ORDER BY ext_id")
        return np.fromiter((r[0] for r in rows), np.int64, count=len(rows)), [r[1] for r in rows]

    def node_ids_in_order(self) -> np.ndarray:
        """The row id of every node in ext_id order (the positions :meth:`load_columns` gives)."""
        return np.fromiter((r[0] for r in self.db.execute("SELECT id FROM nodes ORDER BY ext_id")), np.int64)

    def node_rows_of(self, paths: Iterable[tuple[int, str]]) -> list[tuple[Any, ...]]:
        """``(id, *NODE_COLUMNS)`` of every node whose (root id, source path) is one of ``paths``."""
        out: list[tuple[Any, ...]] = []
        for root_id, p in sorted(paths):
            out += self.db.all(f"SELECT id, {', '.join(NODE_COLUMNS)} FROM nodes WHERE source_path = ? AND root_id = ?",
                               (p, root_id))
        return out
