"""Vector indexes over usearch (spec embeddings.md §8): the only importer of ``usearch``.

A :class:`VectorIndex` is a *cache* of vectors whose source of truth is a database table: every key is a row id
(``vectors.rowid`` for the memory, ``nodes.id`` for code) and carries a 64-bit *tag* derived from the row's content
hash. The index file lives beside its database with two sidecars:

* ``<file>.meta.json`` — ``{model_id, dim, count, vectors_generation}``;
* ``<file>.keys.npy`` — the ``(key, tag)`` pairs the file holds.

:meth:`VectorIndex.sync` makes the index agree with the database: nothing to do when the generation matches; else
the stored ``(key, tag)`` pairs are diffed against the database's and only the difference is fetched and applied
(a row id that was reused for other content has another tag, so it is replaced). A missing or unreadable file, or
another model/dimension, starts from empty; more than 20 % tombstones triggers a full rebuild.

Construction is always explicit about metric and dtype (the defaults changed across usearch versions):
``Index(ndim=dim, metric="cos", dtype="f16", connectivity=16, expansion_add=128, expansion_search=64)``. Search is
exact below 50,000 vectors and HNSW above. Similarity = 1 − cosine distance.

An index file is opened as a read-only memory map (``Index.view``: start-up reads nothing) and copied into memory
at the first write; the ``(key, tag)`` map is built on first need. Writes go to the in-memory index; :meth:`save`
writes the files atomically (``*.tmp`` then rename), at most every
5 s from :meth:`maybe_save`, and at interpreter exit for every index still dirty.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

EXACT_BELOW = 50_000
SAVE_EVERY_S = 5.0
TOMBSTONE_REBUILD = 0.2

_live: weakref.WeakSet[VectorIndex] = weakref.WeakSet()


def _usearch_index() -> Any:
    from usearch.index import Index

    return Index


def tag_of(content_hash: str) -> int:
    """A 63-bit tag from a hex content hash (fits int64 and uint64 alike)."""
    return int(content_hash[:16], 16) & 0x7FFF_FFFF_FFFF_FFFF if content_hash else 0


class VectorIndex:
    """One usearch index persisted at ``path`` (see the module docstring)."""

    def __init__(self, path: Path | str, *, model_id: str, dim: int, persist: bool = True) -> None:
        self.path = Path(path)
        self.model_id = model_id
        self.dim = int(dim)
        self.persist = persist
        self.generation: int | None = None  # the database generation this index reflects
        self._index: Any = None
        self._tag_map: dict[int, int] | None = {}
        self._pairs: np.ndarray | None = None  # (key, tag) rows of a file just opened; the dict is built on demand
        self._viewed = False  # the index is a read-only memory map of the file until the first write
        self._removed = 0
        self._dirty = False
        self._last_save = 0.0
        self._loaded = False
        self._lock = threading.RLock()
        _live.add(self)

    # -- the (key -> tag) map, built lazily: a server opening its index only to search never needs it ------------------
    @property
    def _tags(self) -> dict[int, int]:
        if self._tag_map is None:
            pairs = self._pairs if self._pairs is not None else np.zeros((0, 2), np.int64)
            self._tag_map = dict(zip(pairs[:, 0].tolist(), pairs[:, 1].tolist()))
            self._pairs = None
        return self._tag_map

    @_tags.setter
    def _tags(self, value: dict[int, int]) -> None:
        self._tag_map = value
        self._pairs = None

    def _count(self) -> int:
        return len(self._pairs) if self._tag_map is None and self._pairs is not None else len(self._tags)

    def _writable(self) -> None:
        """Before the first change: an index opened as a memory map becomes an in-memory copy."""
        if self._viewed:
            self._index = self._index.copy()
            self._viewed = False

    # -- construction ----------------------------------------------------------------------------------------------
    def _new(self) -> Any:
        Index = _usearch_index()
        return Index(ndim=self.dim, metric="cos", dtype="f16", connectivity=16, expansion_add=128,
                     expansion_search=64)

    @property
    def meta_path(self) -> Path:
        return self.path.with_name(self.path.name + ".meta.json")

    @property
    def keys_path(self) -> Path:
        return self.path.with_name(self.path.name + ".keys.npy")

    def _load_file(self) -> None:
        """Load the persisted index if it matches this model and dimension; otherwise start empty."""
        self._loaded = True
        self._index = self._new()
        self._tags = {}
        self._viewed = False
        self._removed = 0
        self.generation = None
        if not self.persist:
            return
        try:
            meta = json.loads(self.meta_path.read_text(encoding="utf-8"))
            if meta.get("model_id") != self.model_id or int(meta.get("dim", -1)) != self.dim:
                return
            pairs = np.asarray(np.load(self.keys_path), np.int64).reshape(-1, 2)
            idx = self._new()
            # a memory map (issue 13: start-up): tens of ms instead of reading the whole file; saves replace the file
            # by rename, so the mapped one never changes under us; the first write takes an in-memory copy
            idx.view(str(self.path))
            if len(idx) != len(pairs) or int(meta.get("count", -1)) != len(pairs):
                return
        except (OSError, ValueError, RuntimeError, KeyError, TypeError) as e:
            if self.path.exists():
                log.info("vector index %s unreadable (%s); rebuilding from the database", self.path, e)
            return
        self._index = idx
        self._viewed = True
        self._tag_map = None
        self._pairs = pairs
        self.generation = int(meta.get("vectors_generation", -1))
        self._last_save = time.monotonic()

    def ensure_loaded(self) -> None:
        with self._lock:
            if not self._loaded:
                self._load_file()

    # -- synchronisation -------------------------------------------------------------------------------------------
    def sync(self, generation: int, rows: Callable[[], tuple[np.ndarray, np.ndarray]],
             fetch: Callable[[np.ndarray], np.ndarray]) -> dict[str, int]:
        """Bring the index to the database state of ``generation``.

        ``rows()`` returns every current ``(keys uint64[n], tags int64[n])``; ``fetch(keys)`` returns their vectors
        ``float32[(len(keys), dim)]`` in the same order. Returns ``{added, removed}``.
        """
        with self._lock:
            self.ensure_loaded()
            if self.generation == generation:
                return {"added": 0, "removed": 0}
            keys, tags = rows()
            want = dict(zip(keys.tolist(), tags.tolist()))
            stale = [k for k, t in self._tags.items() if want.get(k) != t]
            missing = [k for k, t in want.items() if self._tags.get(k) != t]
            if stale and (self._removed + len(stale)) > TOMBSTONE_REBUILD * max(1, len(self._tags)):
                # too many tombstones: rebuild from the database
                self._viewed = False
                self._index = self._new()
                self._tags = {}
                self._removed = 0
                missing = list(want)
                stale = []
            if stale:
                self._remove(np.asarray(stale, np.uint64))
            if missing:
                mk = np.asarray(missing, np.uint64)
                for a in range(0, len(mk), 4096):
                    part = mk[a:a + 4096]
                    self._add(part, np.asarray([want[int(k)] for k in part.tolist()], np.int64), fetch(part))
            self.generation = generation
            if stale or missing:
                self._dirty = True
            return {"added": len(missing), "removed": len(stale)}

    # -- mutation --------------------------------------------------------------------------------------------------
    def _remove(self, keys: np.ndarray) -> None:
        present = [k for k in keys.tolist() if k in self._tags]
        if not present:
            return
        self._writable()
        self._index.remove(np.asarray(present, np.uint64))
        for k in present:
            del self._tags[k]
        self._removed += len(present)

    def _compact_if_needed(self) -> None:
        """More than 20 % tombstones: rebuild the graph from the live vectors (kept in the index itself)."""
        live = len(self._tags)
        if self._removed <= 100 or self._removed <= TOMBSTONE_REBUILD * max(1, live):
            return
        keys = np.asarray(sorted(self._tags), np.uint64)
        fresh = self._new()
        for a in range(0, len(keys), 4096):
            part = keys[a:a + 4096]
            vecs = np.asarray(self._index.get(part, dtype=np.float32), np.float32).reshape(len(part), self.dim)
            fresh.add(part, vecs, threads=0)
        self._index = fresh
        self._viewed = False
        self._removed = 0

    def _add(self, keys: np.ndarray, tags: np.ndarray, vecs: np.ndarray) -> None:
        if len(keys) == 0:
            return
        vecs = np.ascontiguousarray(vecs, dtype=np.float32).reshape(len(keys), self.dim)
        ok = np.einsum("ij,ij->i", vecs, vecs) > 0  # zero rows are "not embedded"
        keys, tags, vecs = keys[ok], tags[ok], vecs[ok]
        if len(keys) == 0:
            return
        self._remove(keys)
        self._writable()
        self._index.add(np.asarray(keys, np.uint64), vecs, threads=0)
        for k, t in zip(keys.tolist(), tags.tolist()):
            self._tags[int(k)] = int(t)

    def upsert(self, keys: Any, tags: Any, vecs: np.ndarray, *, generation: int | None = None) -> None:
        """Add (or replace) vectors; ``generation`` is the database generation after this write."""
        with self._lock:
            self.ensure_loaded()
            self._add(np.asarray(keys, np.uint64).reshape(-1), np.asarray(tags, np.int64).reshape(-1), vecs)
            if generation is not None:
                self.generation = generation
            self._dirty = True

    def remove(self, keys: Any, *, generation: int | None = None) -> None:
        with self._lock:
            self.ensure_loaded()
            self._remove(np.asarray(keys, np.uint64).reshape(-1))
            self._compact_if_needed()
            if generation is not None:
                self.generation = generation
            self._dirty = True

    def clear(self) -> None:
        with self._lock:
            self._loaded = True
            self._index = self._new()
            self._viewed = False
            self._tags = {}
            self._removed = 0
            self.generation = None
            self._dirty = True

    # -- queries ---------------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        with self._lock:
            self.ensure_loaded()
            return self._count()

    def __contains__(self, key: int) -> bool:
        return int(key) in self._tags

    def search(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` nearest keys (uint64) and their cosine similarities (float32), best first."""
        with self._lock:
            self.ensure_loaded()
            n = self._count()
            if n == 0 or k <= 0:
                return np.zeros(0, np.uint64), np.zeros(0, np.float32)
            k = min(int(k), n)
            q = np.ascontiguousarray(q, dtype=np.float32).reshape(-1)
            m = self._index.search(q, k, exact=n < EXACT_BELOW)
            cnt = len(m)
            keys = np.asarray(m.keys, np.uint64).reshape(-1)[:cnt]
            sims = (1.0 - np.asarray(m.distances, np.float32).reshape(-1))[:cnt]
        return keys, sims

    def vectors(self, keys: Any) -> np.ndarray:
        """The stored (f16-rounded) vectors of ``keys`` as float32 (NaN rows for unknown keys)."""
        with self._lock:
            self.ensure_loaded()
            ks = np.asarray(keys, np.uint64).reshape(-1)
            out = np.full((len(ks), self.dim), np.nan, np.float32)
            for i, k in enumerate(ks.tolist()):
                if k in self._tags:
                    out[i] = np.asarray(self._index.get(k), np.float32).reshape(-1)
            return out

    # -- persistence -----------------------------------------------------------------------------------------------
    def maybe_save(self) -> None:
        if self._dirty and time.monotonic() - self._last_save >= SAVE_EVERY_S:
            self.save()

    def save(self) -> None:
        """Write the index and its sidecars atomically (no-op when nothing changed or not persisted)."""
        with self._lock:
            if not self.persist or not self._dirty or self._index is None:
                return
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                tmp = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
                self._index.save(str(tmp))
                pairs = (self._pairs if self._tag_map is None and self._pairs is not None else
                         np.asarray(sorted(self._tags.items()), np.int64).reshape(-1, 2))
                ktmp = self.keys_path.with_name(self.keys_path.name + f".{os.getpid()}.tmp.npy")
                np.save(ktmp, pairs)
                mtmp = self.meta_path.with_name(self.meta_path.name + f".{os.getpid()}.tmp")
                mtmp.write_text(json.dumps({"model_id": self.model_id, "dim": self.dim, "count": len(pairs),
                                            "vectors_generation": self.generation}), encoding="utf-8")
                os.replace(tmp, self.path)
                os.replace(ktmp, self.keys_path)
                os.replace(mtmp, self.meta_path)
            except (OSError, RuntimeError) as e:
                log.warning("cannot save vector index %s: %s", self.path, e)
                return
            self._dirty = False
            self._last_save = time.monotonic()


    def release(self) -> None:
        """Save, then search the file as a memory map again instead of an in-memory copy (a serving process after a
        sync: the copy of a 70k-vector code index is ~70 MB of anonymous memory that the kernel cannot reclaim)."""
        with self._lock:
            if not self.persist or self._viewed or not self._loaded:
                return
            self.save()
            if self._dirty:  # the save failed: keep the copy
                return
            generation = self.generation
            self._load_file()
            if self.generation != generation:  # (another writer replaced the file meanwhile): resync next time
                self.generation = None


@atexit.register
def _save_all() -> None:
    for ix in list(_live):
        try:
            ix.save()
        except Exception as e:  # noqa: BLE001 — never fail interpreter exit
            log.warning("saving %s at exit failed: %s", getattr(ix, "path", "?"), e)


def exact_top_k(matrix: np.ndarray, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Brute-force reference (tests): indices and cosine similarities of the ``k`` rows nearest ``q``."""
    sims = matrix @ q
    k = min(k, len(sims))
    top = np.argpartition(-sims, k - 1)[:k] if k < len(sims) else np.arange(len(sims))
    top = top[np.argsort(-sims[top], kind="stable")]
    return top, sims[top]
