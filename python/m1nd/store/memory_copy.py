"""Copying a whole knowledge memory from one store to another (``m1nd memory migrate``, issue 18 item 3): the
``memory.db`` file to a PostgreSQL server and back, table by table.

Both ends are opened by their own store code first (schema applied, registries seeded), then, inside one read
snapshot of the source and **one write transaction of the target** (all or nothing):

* a non-empty target (any entry, session or ritual session) is refused unless ``replace`` is given, which empties
  the target's memory tables first;
* registries and ``meta`` take the source's rows (``meta`` keeps the target's own ``schema_version`` and vector
  generation, and takes the source's wake secret so that issued wake tokens stay valid);
* ``entries``, ``chunks`` and ``vectors`` keep their row ids (relationships, anchors, tags and the usearch keys
  refer to them); PostgreSQL's identity sequences are moved past them;
* child tables (tags, applicability, anchors, backups, guesses) are copied in their source order, so the row ids
  that order them on the target follow the same sequence;
* the keyword index is rebuilt on the target from the copied rows (FTS5 and ``tsvector`` differ);
* finally every table's row count is compared; any difference aborts the target transaction; a server's
  planner statistics are gathered (``ANALYZE``) before the commit.

Column lists are the columns both ends have, read from the catalogues (the PostgreSQL schema adds ordering
``rowid`` columns to child tables that SQLite has implicitly).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from m1nd.errors import InvalidInputError, StoreError
from m1nd.store.pg_url import redact

# Parents before children: (table, keeps its rowid, the key it is read in order of; "" = read at once)
TABLES: tuple[tuple[str, bool, str], ...] = (
    ("categories", False, "id"), ("source_types", False, "id"), ("entry_types", False, "id"),
    ("content_types", False, "id"), ("session_types", False, "id"), ("relationship_types", False, "id"),
    ("applicability_types", False, "id"), ("agents", False, "id"), ("projects", False, "id"),
    ("sessions", False, "id"), ("entries", True, "rowid"), ("entry_tags", False, "rowid"),
    ("entry_applicability", False, "rowid"), ("entry_anchors", False, "rowid"), ("anchor_removed", False, ""),
    ("relationships", False, "id"), ("backups", False, "rowid"), ("chunks", True, "rowid"),
    ("vectors", True, "rowid"), ("wake_sessions", False, "id"), ("wake_guesses", False, "rowid"),
    ("wake_phrase_vectors", False, "key"),
)
REGISTRIES = ("categories", "source_types", "entry_types", "content_types", "session_types", "relationship_types",
              "applicability_types")
# meta keys that describe the store itself, never copied
_OWN_META = ("schema_version", "vectors_generation")
BATCH = 2000


def _columns(svc: Any, table: str) -> list[str]:
    if svc.backend == "postgresql":
        return [r[0] for r in svc.db.all(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND "
            "table_name = ? ORDER BY ordinal_position", (table,))]
    return [r[1] for r in svc.db.all(f"PRAGMA table_info({table})")]


def _count(svc: Any, table: str) -> int:
    return int(svc.db.scalar(f"SELECT count(*) FROM {table}", default=0))


def is_empty(svc: Any) -> bool:
    return all(_count(svc, t) == 0 for t in ("entries", "sessions", "wake_sessions"))


def copy_memory(src: Any, dst: Any, *, ident: Callable[[str, str], str], replace: bool = False,
                progress: Callable[[str, int, int], None] | None = None) -> dict[str, int]:
    """Copy every memory table of service ``src`` into service ``dst``; the verified row counts per table.
    ``ident(title, body)`` gives the identifier parts the keyword index holds (the writers' own function)."""
    if src.backend == dst.backend and getattr(src, "url", None) == getattr(dst, "url", None) \
            and getattr(src, "path", None) == getattr(dst, "path", None):
        raise InvalidInputError("the migration target is the memory being migrated", recover="name another store")
    counts: dict[str, int] = {}
    with src.db.read(), dst.db.write():
        if not is_empty(dst) and not replace:
            raise InvalidInputError(
                f"the target memory is not empty ({_count(dst, 'entries')} entries, {_count(dst, 'sessions')} "
                "sessions); migrate into an empty store, or pass --replace to overwrite it",
                recover="migrate into an empty store, or pass --replace to overwrite it")
        # an empty target still holds seeded registries: the source's replace them (as everything, with --replace)
        for table, _, _ in reversed(TABLES):
            if table == "entries":
                dst.db.execute("DELETE FROM entries_fts")
            dst.db.execute(f"DELETE FROM {table}")
        for table, keep_rowid, order in TABLES:
            counts[table] = _copy_table(src, dst, table, keep_rowid, order, progress)
        _copy_meta(src, dst)
        _rebuild_keyword_index(dst, ident, progress)
        if dst.backend == "postgresql":
            _ensure_vector_indexes(dst)
            for table in ("entries", "chunks", "vectors"):
                dst.db.native(f"SELECT setval(pg_get_serial_sequence('{table}', 'rowid'), "
                              f"coalesce((SELECT max(rowid) FROM {table}), 0) + 1, false)")
        for table, expected in counts.items():
            got = _count(dst, table)
            if got != expected:
                raise StoreError(f"migration check failed: {table} has {got} rows on the target, {expected} on the "
                                 "source; nothing was written", recover="report this; the source is unchanged")
        if dst.backend == "postgresql":
            # fresh planner statistics: autovacuum would gather them some time after the commit, and until then a
            # keyword search planned for empty tables took 3-4x (10k entries) to 50x (100k) its time
            dst.db.native("ANALYZE " + ", ".join([t for t, _, _ in TABLES] + ["entries_fts"]))
    return counts


def _copy_table(src: Any, dst: Any, table: str, keep_rowid: bool, order: str,
                progress: Callable[[str, int, int], None] | None) -> int:
    have = set(_columns(dst, table))
    cols = [c for c in _columns(src, table) if c in have and c != "rowid"]
    select = (["rowid"] if keep_rowid else []) + cols
    total = _count(src, table)
    if total == 0:
        return 0
    override = " OVERRIDING SYSTEM VALUE" if keep_rowid and dst.backend == "postgresql" else ""
    insert = (f"INSERT INTO {table}({', '.join(select)}){override} VALUES ({', '.join('?' * len(select))})")
    done = 0
    last: Any = None
    key = order or ", ".join(cols)
    while done < total:
        # keyset pagination on the ordering key: one pass, no OFFSET rescans
        where = "" if last is None else f" WHERE {order} > ?"
        limit = f" LIMIT {BATCH}" if order else ""
        rows = src.db.all(f"SELECT {', '.join(select)}, {order or 'NULL'} FROM {table}{where} ORDER BY {key}{limit}",
                          () if last is None else (last,))
        if not rows:
            break
        last = rows[-1][-1]
        dst.db.executemany(insert, [tuple(_plain(v) for v in r[:-1]) for r in rows])
        done += len(rows)
        if progress is not None:
            progress(table, done, total)
        if not order:
            break
    return done


def _plain(v: Any) -> Any:
    return bytes(v) if isinstance(v, memoryview) else v


def _copy_meta(src: Any, dst: Any) -> None:
    rows = [(k, v) for k, v in src.db.all("SELECT key, value FROM meta") if k not in _OWN_META]
    dst.db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", rows)
    if not dst.db.scalar("SELECT 1 FROM meta WHERE key = 'schema_version'"):
        raise StoreError("the target lost its schema version during the migration", recover="report this")


def _rebuild_keyword_index(dst: Any, ident_text: Callable[[str, str], str],
                           progress: Callable[[str, int, int], None] | None) -> None:
    entries = dst.repo.entries
    rows = dst.db.all("SELECT rowid, title, body, summary FROM entries ORDER BY rowid")
    tags: dict[int, list[str]] = {}
    for rowid, tag in dst.db.all("SELECT entry_rowid, tag FROM entry_tags ORDER BY rowid"):
        tags.setdefault(rowid, []).append(tag)
    for a in range(0, len(rows), BATCH):
        # in batches: on a server, a round trip per batch instead of one per entry (100k entries: minutes)
        entries.fts_refresh_many([(rowid, title, body, summary, tags.get(rowid, []), ident_text(title, body))
                                  for rowid, title, body, summary in rows[a:a + BATCH]])
        if progress is not None:
            progress("keyword index", min(a + BATCH, len(rows)), len(rows))


def _ensure_vector_indexes(dst: Any) -> None:
    """A server that searches vectors itself (pgvector) gets the nearest-neighbour indexes of the copied model's
    dimension, as the first embedded write would have made them (the copied ``meta`` records the model without
    that write). Built once after the rows are in, which is also faster than growing them row by row."""
    from m1nd.store.pg_memory_repo import PgVectorRepo, ensure_ann_indexes

    rows = PgVectorRepo(dst.db)
    dim = rows.recorded_model()[1]
    if dim and rows.native_search():
        ensure_ann_indexes(dst.db, int(dim))


def describe(svc: Any) -> str:
    """The store of a memory service, for messages (a server address without its password)."""
    return redact(svc.url) if svc.backend == "postgresql" else str(svc.path)
