"""SQLite rows of the memory's vectors: chunks, entry and chunk vectors, the generation counter that keeps the
in-memory usearch indexes in step, the recorded embedding model, and the anchors the embedding hook maintains.

The embedding hook (:mod:`m1nd.memory.semantic`) decides what to embed and which anchors to keep; this repository
only reads and writes rows. Vectors are little-endian float32 blobs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from m1nd.store.db import Database
from m1nd.store.memory_repo import Where, visible_sql

_TEXT_SELECT = ("SELECT e.rowid, e.id, e.title, e.body, e.summary, (SELECT json_group_array(tag) FROM entry_tags t "
                "WHERE t.entry_rowid = e.rowid), (SELECT v.content_hash FROM vectors v WHERE v.owner_kind = 'entry' "
                "AND v.owner_rowid = e.rowid AND v.model_id = :model AND v.dim = :dim) FROM entries e WHERE ")


class VectorRepo:
    def __init__(self, db: Database) -> None:
        self.db = db

    # -- generation and model identity --------------------------------------------------------------------------
    def generation(self) -> int:
        v = self.db.scalar("SELECT value FROM meta WHERE key = 'vectors_generation'")
        try:
            return int(v) if v is not None else 0
        except (TypeError, ValueError):
            return 0

    def bump_generation(self) -> int:
        self.db.execute("INSERT INTO meta(key, value) VALUES ('vectors_generation', '1') ON CONFLICT(key) DO UPDATE "
                        "SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)")
        return self.generation()

    def recorded_model(self) -> tuple[str | None, str | None]:
        """``(model_id, dim)`` the store was embedded with, as recorded (None when never recorded)."""
        return (self.db.scalar("SELECT value FROM meta WHERE key = 'embed_model_id'"),
                self.db.scalar("SELECT value FROM meta WHERE key = 'embed_dim'"))

    def record_model(self, model: str, dim: int) -> None:
        self.db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                            [("embed_model_id", model), ("embed_dim", str(dim))])

    def missing(self, model: str, dim: int) -> int:
        """Entries without a whole-entry vector of ``model``."""
        return int(self.db.scalar(
            "SELECT count(*) FROM entries e WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.owner_kind = "
            "'entry' AND v.owner_rowid = e.rowid AND v.model_id = ? AND v.dim = ?)", (model, dim), default=0))

    def drop_other_models(self, model: str, dim: int) -> int:
        """Delete vectors of any other model; returns how many went."""
        self.db.execute("DELETE FROM vectors WHERE model_id != ? OR dim != ?", (model, dim))
        return self.db.changes()

    # -- index synchronisation ----------------------------------------------------------------------------------
    def keys_and_hashes(self, kind: str, model: str, dim: int) -> list[tuple[int, str]]:
        return self.db.all("SELECT rowid, content_hash FROM vectors WHERE owner_kind = ? AND model_id = ? AND "
                           "dim = ?", (kind, model, dim))

    def by_keys(self, keys: list[int]) -> dict[int, bytes]:
        return dict(self.db.all("SELECT rowid, vec FROM vectors WHERE rowid IN (SELECT value FROM json_each(?))",
                                (json.dumps(keys),)))

    def by_hashes(self, model: str, dim: int, hashes: list[str]) -> Iterator[tuple[str, bytes]]:
        """Stored vectors of unchanged text (any owner), by content hash."""
        return self.db.execute(
            "SELECT content_hash, vec FROM vectors WHERE model_id = ? AND dim = ? AND content_hash IN "
            "(SELECT value FROM json_each(?))", (model, dim, json.dumps(hashes)))

    def owners(self, keys: list[int], model: str, dim: int) -> dict[int, int]:
        """Vector key → the entry rowid it belongs to (directly or through its chunk)."""
        return dict(self.db.all(
            "SELECT v.rowid, CASE v.owner_kind WHEN 'entry' THEN v.owner_rowid ELSE c.entry_rowid END "
            "FROM vectors v LEFT JOIN chunks c ON v.owner_kind = 'chunk' AND c.rowid = v.owner_rowid "
            "WHERE v.rowid IN (SELECT value FROM json_each(?)) AND v.model_id = ? AND v.dim = ?",
            (json.dumps(keys), model, dim)))

    def in_scope(self, rowids: list[int], where: Where) -> list[int]:
        """Those of ``rowids`` inside the entry filter ``where`` (the repository's scope)."""
        params = dict(where.params, _sem_ids=json.dumps(rowids))
        return [r[0] for r in self.db.execute(
            f"SELECT e.rowid FROM entries e WHERE e.rowid IN (SELECT value FROM json_each(:_sem_ids)) "
            f"AND {where.sql()}", params)]

    # -- storing an entry's vectors -----------------------------------------------------------------------------
    def entry_keys(self, rowid: int) -> tuple[list[int], list[int]]:
        """``(chunk vector keys, entry vector keys)`` of an entry."""
        chunk_keys = [r[0] for r in self.db.all(
            "SELECT v.rowid FROM vectors v JOIN chunks c ON v.owner_kind = 'chunk' AND v.owner_rowid = c.rowid "
            "WHERE c.entry_rowid = ?", (rowid,))]
        entry_keys = [r[0] for r in self.db.all(
            "SELECT rowid FROM vectors WHERE owner_kind = 'entry' AND owner_rowid = ?", (rowid,))]
        return chunk_keys, entry_keys

    def clear_entry(self, rowid: int) -> None:
        self.db.execute("DELETE FROM chunks WHERE entry_rowid = ?", (rowid,))  # the trigger drops their vectors
        self.db.execute("DELETE FROM vectors WHERE owner_kind = 'entry' AND owner_rowid = ?", (rowid,))

    def add_chunk(self, rowid: int, index: int, token_offset: int, token_count: int, text: str) -> int:
        self.db.execute("INSERT INTO chunks(entry_rowid, chunk_index, token_offset, token_count, chunk_text) "
                        "VALUES (?, ?, ?, ?, ?)", (rowid, index, token_offset, token_count, text))
        return self.db.last_insert_rowid()

    def add_vector(self, kind: str, owner: int, model: str, dim: int, content_hash: str, blob: bytes) -> int:
        self.db.execute("INSERT INTO vectors(owner_kind, owner_rowid, model_id, dim, content_hash, vec) VALUES "
                        "(?, ?, ?, ?, ?, ?)", (kind, owner, model, dim, content_hash, blob))
        return self.db.last_insert_rowid()

    def mark_embedded(self, rowid: int, chunk_count: int, model: str, now: str) -> None:
        self.db.execute("UPDATE entries SET chunk_count = ?, embedding_model = ?, embedded_at = ? WHERE rowid = ?",
                        (chunk_count, model, now, rowid))

    # -- anchors ------------------------------------------------------------------------------------------------
    def brief(self, rowid: int) -> tuple[str, str, str, str | None] | None:
        """``(id, title, visibility, owner)`` of an entry."""
        return self.db.one("SELECT id, title, visibility, owner FROM entries WHERE rowid = ?", (rowid,))

    def anchors_with_vectors(self, rowid: int, model: str, dim: int) -> list[tuple[Any, ...]]:
        """The entry's anchors: ``(anchor_rowid, recorded_similarity, id, vec | None, visibility, owner)``."""
        return self.db.all(
            "SELECT an.anchor_rowid, an.similarity, x.id, v.vec, x.visibility, x.owner FROM entry_anchors an "
            "JOIN entries x ON x.rowid = an.anchor_rowid LEFT JOIN vectors v ON v.owner_kind = 'entry' AND "
            "v.owner_rowid = an.anchor_rowid AND v.model_id = ? AND v.dim = ? WHERE an.entry_rowid = ?",
            (model, dim, rowid))

    def anchor_candidates(self, keys: list[int], model: str, dim: int, me: int, visibility: str,
                          owner: str | None) -> Iterator[tuple[int, str, str, bytes]]:
        """Entries behind entry-vector ``keys`` that ``me`` may anchor to (its visibility allows, never removed by
        hand): ``(rowid, id, title, vec)``."""
        priv = ("x.visibility = 'public'" if visibility == "public"
                else "(x.visibility = 'public' OR (x.visibility = 'private' AND x.owner = :owner))")
        return self.db.execute(
            f"SELECT x.rowid, x.id, x.title, v.vec FROM vectors v JOIN entries x ON x.rowid = v.owner_rowid "
            f"WHERE v.rowid IN (SELECT value FROM json_each(:keys)) AND v.owner_kind = 'entry' AND "
            f"v.model_id = :model AND v.dim = :dim AND x.rowid != :me AND {priv} AND NOT EXISTS "
            f"(SELECT 1 FROM anchor_removed r WHERE r.entry_rowid = :me AND r.anchor_rowid = x.rowid)",
            {"keys": json.dumps(keys), "model": model, "dim": dim, "me": me, "owner": owner})

    def prune_anchor(self, rowid: int, anchor_rowid: int) -> None:
        """Drop an automatic anchor (unlike a removal by hand, it may come back)."""
        self.db.execute("DELETE FROM entry_anchors WHERE entry_rowid = ? AND anchor_rowid = ?", (rowid, anchor_rowid))

    def add_anchor(self, rowid: int, anchor_rowid: int, similarity: float, now: str) -> None:
        self.db.execute("INSERT OR IGNORE INTO entry_anchors(entry_rowid, anchor_rowid, similarity, created_at) "
                        "VALUES (?, ?, ?, ?)", (rowid, anchor_rowid, similarity, now))

    # -- commands -----------------------------------------------------------------------------------------------
    def entry_vector(self, rowid: int, model: str, dim: int) -> list[tuple[int, bytes | None]]:
        """``[(rowid, vec | None)]`` for an existing entry (empty when it does not exist)."""
        return self.db.all("SELECT e.rowid, v.vec FROM entries e LEFT JOIN vectors v ON v.owner_kind = 'entry' "
                           "AND v.owner_rowid = e.rowid AND v.model_id = ? AND v.dim = ? WHERE e.rowid = ?",
                           (model, dim, rowid))

    def visible_with_vectors(self, agent: str | None, model: str, dim: int, *, unanchored_only: bool
                             ) -> list[tuple[int, bytes]]:
        """Visible entries with a vector of ``model``, oldest first: ``(rowid, vec)``."""
        fill_sql = " AND NOT EXISTS (SELECT 1 FROM entry_anchors an WHERE an.entry_rowid = e.rowid)" \
            if unanchored_only else ""
        return self.db.all(
            "SELECT e.rowid, v.vec FROM entries e JOIN vectors v ON v.owner_kind = 'entry' AND "
            "v.owner_rowid = e.rowid AND v.model_id = :model AND v.dim = :dim WHERE "
            "(e.visibility = 'public' OR (e.visibility = 'private' AND e.owner = :agent))" + fill_sql +
            " ORDER BY e.created_at, e.rowid", {"model": model, "dim": dim, "agent": agent})

    def texts(self, model: str, dim: int, *, rowid: int | None = None, agent: str | None = None,
              every_owner: bool = False) -> list[tuple[Any, ...]]:
        """Embedding inputs, oldest first: ``(rowid, id, title, body, summary, tags_json, current_hash)`` of one
        entry (``rowid``), of every entry (``every_owner``), or of those ``agent`` may see."""
        params: dict[str, Any]
        if rowid is not None:
            where, params = "e.rowid = :rowid", {"rowid": rowid}
        elif every_owner:
            where, params = "1", {}
        else:
            where, params = visible_sql(), {"agent": agent}
        return self.db.all(_TEXT_SELECT + where + " ORDER BY e.created_at, e.rowid",
                           dict(params, model=model, dim=dim))

    def text_of(self, entry_id: str) -> tuple[Any, ...] | None:
        """``(rowid, title, body, summary, tags_json)`` of an entry by id."""
        return self.db.one("SELECT e.rowid, e.title, e.body, e.summary, (SELECT json_group_array(tag) FROM entry_tags "
                           "t WHERE t.entry_rowid = e.rowid) FROM entries e WHERE e.id = ?", (entry_id,))

    def exists(self, rowid: int) -> bool:
        return self.db.one("SELECT 1 FROM entries WHERE rowid = ?", (rowid,)) is not None
