"""``node_vectors`` in ``graph.db`` (code-node embeddings by embed hash) and their bookkeeping rows in ``meta``:
the reads of the code index and the writes of the code vectors (:mod:`m1nd.codegraph.vectors`)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

# SQLite's default limit on bound variables is far above this; a chunk keeps each statement's JSON small.
CHUNK = 900


def embedded_hashes(db: Any, model_id: str, dim: int) -> Iterator[str]:
    """Embed hashes with a vector of this model, streamed from the cursor."""
    for (h,) in db.execute("SELECT embed_hash FROM node_vectors WHERE model_id = ? AND dim = ?", (model_id, int(dim))):
        yield str(h)


def vectors_of(db: Any, hashes: Sequence[str], model_id: str, dim: int) -> Iterator[tuple[str, bytes]]:
    """``(embed_hash, float32 blob)`` of those of ``hashes`` that have a vector of this model."""
    for a in range(0, len(hashes), CHUNK):
        part = list(hashes[a:a + CHUNK])
        for h, b in db.execute("SELECT embed_hash, vec FROM node_vectors WHERE embed_hash IN "
                               "(SELECT value FROM json_each(?)) AND model_id = ? AND dim = ?",
                               (json.dumps(part), model_id, int(dim))):
            yield str(h), bytes(b)


# -- the code vectors' writes and bookkeeping (m1nd.codegraph.vectors) ------------------------------------------------
GENERATION_KEY = "code_vectors_generation"  # meta row bumped by every batch of new vectors


def node_row_ids(db: Any) -> Iterator[tuple[str, int]]:
    """``(ext_id, row id)`` of every node row, streamed from the cursor."""
    for e, rid in db.execute("SELECT ext_id, id FROM nodes"):
        yield str(e), int(rid)


def any_vector(db: Any, model_id: str, dim: int) -> bool:
    """Whether any vector of this model is stored (one indexed probe)."""
    return db.one("SELECT 1 FROM node_vectors WHERE model_id = ? AND dim = ? LIMIT 1", (model_id, int(dim))) \
        is not None


def vectors_generation(db: Any) -> str | None:
    """The counter of vector batches written (None before the first)."""
    v = db.scalar(f"SELECT value FROM meta WHERE key = '{GENERATION_KEY}'")
    return None if v is None else str(v)


def save_vectors(db: Any, rows: Sequence[tuple[str, str, int, bytes]]) -> None:
    """Store ``(embed_hash, model_id, dim, float32 blob)`` rows and bump the generation, in one transaction."""
    with db.write():
        db.executemany("INSERT OR REPLACE INTO node_vectors(embed_hash, model_id, dim, vec) VALUES (?, ?, ?, ?)",
                       rows)
        db.execute(f"INSERT INTO meta(key, value) VALUES ('{GENERATION_KEY}', '1') ON CONFLICT(key) "
                   "DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)")


def recorded_model(db: Any) -> tuple[str | None, str | None]:
    """``(model_id, dim)`` recorded as the model every node has a vector of (None, None before the first)."""
    rec = dict(db.all("SELECT key, value FROM meta WHERE key IN ('embed_model_id', 'embed_dim')"))
    return rec.get("embed_model_id"), rec.get("embed_dim")


def record_model(db: Any, model_id: str, dim: int) -> None:
    """Record the model every node now has a vector of and drop the vectors of any other, in one transaction."""
    with db.write():
        db.executemany("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = "
                       "excluded.value", [("embed_model_id", model_id), ("embed_dim", str(int(dim)))])
        db.execute("DELETE FROM node_vectors WHERE model_id != ? OR dim != ?", (model_id, int(dim)))
