"""What a memory entry is embedded as (spec embeddings.md §7, memory.md §11): one vector, or chunks.

The embedding text of an entry is counted in tokens without special tokens and without truncation. Up to
``CHUNK_THRESHOLD`` (400) tokens it is embedded whole. Longer texts are cut into windows of 400 tokens starting every
300 tokens (100 overlap), stopping after the first window that reaches the end; every window is embedded and the
entry keeps the L2-normalised mean of its window vectors.

:func:`prepare` does the model work for many texts at once — the "before the transaction" half of a write: every
distinct unit (whole text or window) is looked up by its sha256 in the caller's vector cache first, and only the
misses go to the embedder, in one length-sorted batched call. The result (:class:`Prepared`) is what the write
transaction stores.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from m1nd.memory.embeddings import DOCUMENT_MAX_TOKENS, Embedder

CHUNK_THRESHOLD = 400
CHUNK_SIZE = 400
CHUNK_STRIDE = 300


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class PreparedChunk:
    index: int
    token_offset: int
    token_count: int
    text: str
    content_hash: str
    vector: np.ndarray  # float32[dim]


@dataclass
class Prepared:
    """The vectors of one entry text, ready to store."""

    model_id: str
    dim: int
    content_hash: str  # sha256 of the embedding text
    vector: np.ndarray  # float32[dim], L2-normalised (zero when the model failed on this text)
    token_count: int
    chunks: list[PreparedChunk] = field(default_factory=list)
    inferred: int = 0  # units that needed the model (the rest came from the cache)

    @property
    def ok(self) -> bool:
        return bool(np.any(self.vector))


def chunk_windows(emb: Embedder, text: str) -> tuple[int, list[tuple[int, int, str]]]:
    """``(token_count, windows)``; windows are ``(token_offset, token_count, text)`` and empty when the text
    fits in one vector."""
    n = emb.count_tokens(text)
    if n <= CHUNK_THRESHOLD:
        return n, []
    return n, [(w.token_offset, w.token_count, w.text) for w in emb.windows(text, CHUNK_SIZE, CHUNK_STRIDE)]


def prepare(emb: Embedder, texts: Sequence[str], *,
            cached: Callable[[list[str]], dict[str, np.ndarray]] | None = None) -> list[Prepared]:
    """Embed entry texts (chunking long ones). ``cached(hashes)`` returns known vectors by content hash."""
    plans = []
    units: dict[str, str] = {}  # content hash -> text, in first-seen order
    for text in texts:
        h = sha256_text(text)
        n, windows = chunk_windows(emb, text)
        wins = [(off, cnt, t, sha256_text(t)) for off, cnt, t in windows]
        plans.append((h, n, wins))
        if wins:
            for *_, t, wh in wins:
                units.setdefault(wh, t)
        else:
            units.setdefault(h, text)
    known = dict(cached(list(units))) if cached is not None and units else {}
    todo = [h for h in units if h not in known]
    inferred = set(todo)
    if todo:
        vecs = emb.embed_documents([units[h] for h in todo], max_tokens=DOCUMENT_MAX_TOKENS)
        for h, v in zip(todo, vecs):
            known[h] = np.asarray(v, np.float32)
    dim = int(emb.dim)
    zero = np.zeros(dim, np.float32)
    out = []
    for h, n, wins in plans:
        if not wins:
            v = known.get(h, zero)
            out.append(Prepared(emb.model_id, dim, h, v, n, inferred=int(h in inferred)))
            continue
        chunks = [PreparedChunk(i, off, cnt, t, wh, known.get(wh, zero)) for i, (off, cnt, t, wh) in enumerate(wins)]
        good = [c.vector for c in chunks if np.any(c.vector)]
        if good:
            m = np.mean(np.stack(good), axis=0)
            v = (m / max(float(np.linalg.norm(m)), 1e-12)).astype(np.float32)
        else:
            v = zero
        out.append(Prepared(emb.model_id, dim, h, v, n, chunks,
                            inferred=sum(1 for c in chunks if c.content_hash in inferred)))
    return out
