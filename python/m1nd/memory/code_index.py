"""Keeping the code-node vector index (``graph.code.usearch``) in step with ``graph.db`` — one function, used by the
process that owns the index: a CLI process itself, or in a server the query child (:mod:`m1nd.memory.query_process`,
issue 13 item 1: the server never holds the index; on the stdlib a synced in-memory copy, its key/tag maps and the
sync's temporaries cost the server ~90 MB).

Inputs are what :class:`m1nd.codegraph.vectors.CodeVectors` derives from one graph generation: per node its embed hash
(None: not embedded, e.g. directories) and its ``nodes.id`` row id (the index key). A serving process hands them to
the child through the sidecar file ``graph.code.state.npz`` (written by the server, keyed by generation, node ids,
model and node-text choice), so only a path and a key cross the pipe.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from m1nd.memory.vectors import VectorIndex, tag_of
from m1nd.store import node_vectors_repo


class EmbeddedSet:
    """The embed hashes that have a vector, kept as their sorted 63-bit tags (the index's tags): a set of the 71k hex
    strings of the stdlib was ~20 MB of a serving process (reloaded every second while the worker embeds); this is
    0.6 MB. Membership by tag: two texts colliding in 63 bits (~1e-10 at 70k texts) would share a vector anyway."""

    def __init__(self, tags: np.ndarray | None = None) -> None:
        self.tags = np.unique(np.asarray(tags if tags is not None else [], np.int64))

    @classmethod
    def of(cls, hashes: Any) -> EmbeddedSet:
        return cls(np.fromiter((tag_of(h) for h in hashes), np.int64))

    def __contains__(self, h: object) -> bool:
        if not isinstance(h, str) or not h:
            return False
        t = tag_of(h)
        i = int(np.searchsorted(self.tags, t))
        return i < len(self.tags) and int(self.tags[i]) == t

    def __len__(self) -> int:
        return len(self.tags)

    def update(self, hashes: Any) -> None:
        add = np.fromiter((tag_of(h) for h in hashes), np.int64)
        if len(add):
            self.tags = np.union1d(self.tags, add)

    def mask(self, tags: np.ndarray) -> np.ndarray:
        """Which of ``tags`` (per node; -1: nothing embeddable) have a vector."""
        return np.isin(tags, self.tags) & (tags >= 0)


def node_tags(hashes: Sequence[str | None]) -> np.ndarray:
    """Per node the tag of its embed hash, -1 for none (directories)."""
    return np.fromiter((tag_of(h) if h else -1 for h in hashes), np.int64, count=len(hashes))


def embedded_hashes(db: Any, model_id: str, dim: int) -> EmbeddedSet:
    """Embed hashes with a vector of this model in ``node_vectors`` (streamed from the cursor: no list of them)."""
    return EmbeddedSet.of(node_vectors_repo.embedded_hashes(db, model_id, dim))


def vectors_by_hash(db: Any, hashes: Sequence[str], model_id: str, dim: int) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for h, b in node_vectors_repo.vectors_of(db, hashes, model_id, dim):
        if len(b) == 4 * dim:
            out[h] = np.frombuffer(b, "<f4").astype(np.float32)
    return out


def sync_code_index(ix: VectorIndex, generation: int, hashes: Sequence[str | None], row_ids: np.ndarray, db: Any,
                    model_id: str, dim: int, have: EmbeddedSet | None = None) -> dict[str, int]:
    """Make ``ix`` hold one vector per embedded node (key: row id, tag: from its hash) as of ``generation``."""
    have = embedded_hashes(db, model_id, dim) if have is None else have
    sel = np.nonzero(have.mask(node_tags(hashes)) & (np.asarray(row_ids) >= 0))[0].tolist()

    def rows() -> tuple[np.ndarray, np.ndarray]:
        return (np.asarray([row_ids[i] for i in sel], np.uint64),
                np.asarray([tag_of(hashes[i]) for i in sel], np.int64))  # type: ignore[arg-type]

    by_id = {int(row_ids[i]): hashes[i] for i in sel}

    def fetch(keys: np.ndarray) -> np.ndarray:
        hs = [by_id[int(k)] for k in keys.tolist()]
        got = vectors_by_hash(db, hs, model_id, dim)  # type: ignore[arg-type]
        out = np.zeros((len(keys), dim), np.float32)
        for j, h in enumerate(hs):
            v = got.get(h)  # type: ignore[arg-type]
            if v is not None:
                out[j] = v
        return out

    return ix.sync(generation, rows, fetch)


def read_state(path: Path | str, key: str) -> tuple[list[str | None], np.ndarray] | None:
    """Per-node embed hashes and row ids from the sidecar file written for ``key``; None when it holds another."""
    try:
        with np.load(path, allow_pickle=False) as z:
            if str(z["key"]) != key:
                return None
            raw, row_ids = z["hashes"], np.asarray(z["row_ids"], np.int64)
    except (OSError, ValueError, KeyError, EOFError):
        return None
    if len(raw) != len(row_ids):
        return None
    return [h.decode("ascii") if h else None for h in raw.tolist()], row_ids
