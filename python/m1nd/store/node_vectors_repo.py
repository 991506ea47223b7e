"""Reads of ``node_vectors`` in ``graph.db`` (code-node embeddings by embed hash) for the code index."""

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
