"""Embeddings of the knowledge memory: vectors on write, semantic/hybrid search, auto-anchoring, ``embed``
(spec memory.md §11, embeddings.md §5, §7, §8, §11).

:class:`MemoryVectors` is the ``vector_hook`` of :class:`m1nd.memory.service.MemoryService`:

* ``prepare(texts)`` — model work before the write transaction (:func:`m1nd.memory.chunking.prepare`), vectors
  reused by content hash from the ``vectors`` table;
* ``store(repo, rowid, payload, auto_anchor=)`` — inside the transaction: replaces the entry's chunks and vector
  rows, bumps ``meta.vectors_generation`` and maintains the entry's anchors;
* ``semantic_search(repo, where, query, limit)`` — the over-fetch loop of memory.md §11 (filters are the caller's
  SQL predicate, applied before truncation);
* ``auto_anchor(...)`` and ``embed(...)`` — the two CLI commands.

Two usearch indexes live beside ``memory.db``: ``memory.vectors.usearch`` (one vector per entry: the whole-text
vector, or the normalised mean of the chunks) and ``memory.chunks.usearch`` (chunk vectors). Keeping chunks apart
lets auto-anchoring ask for the nearest *entries* without wading through chunk hits; semantic search queries both
and keeps, per entry, the maximum of its entry and chunk scores. Keys are ``vectors.rowid``; only vectors of the
active model and dimension are ever indexed (anything else is invisible to search and anchoring).

Visibility: every hit is filtered by the caller's visibility predicate before it counts; anchors follow the privacy
rule of memory.md §3 (a public entry anchors only public entries; a private one also private entries of its owner).
On-write maintenance prunes only anchors it created itself (those with a recorded similarity), so an anchor a user
gave explicitly in the same command is never undone; the ``auto-anchor`` command prunes every anchor out of band.
Ranking includes the anchors an entry already has, so repeated runs converge (at most ``max_anchors`` best).
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from m1nd.errors import InvalidInputError, NotFoundError
from m1nd.memory import chunking
from m1nd.memory.embeddings import EmbedderUnavailableError, NoEmbedder, OnnxEmbedder, get_embedder, usable
from m1nd.memory.vectors import VectorIndex, tag_of
from m1nd.store.db import Database, PerThread, open_db
from m1nd.store.pg_memory_repo import vector_repo
from m1nd.timeutil import now_iso

log = logging.getLogger(__name__)

ENTRY_INDEX_FILE = "memory.vectors.usearch"
CHUNK_INDEX_FILE = "memory.chunks.usearch"
DEFAULT_THRESHOLD = 0.75
BAND_CEILING = 0.95
DEFAULT_MAX_ANCHORS = 5
EMBED_BATCH_ENTRIES = 256
_printed: set[str] = set()


def vec_blob(v: np.ndarray) -> bytes:
    return np.ascontiguousarray(v, dtype="<f4").tobytes()


def blob_vec(b: bytes) -> np.ndarray:
    return np.frombuffer(b, dtype="<f4").astype(np.float32)


def embedding_text(title: str, body: str, summary: str | None, tags: Sequence[str]) -> str:
    """Same text as :func:`m1nd.memory.fields.embedding_text` (kept here so the hook has no service import)."""
    text = title + "\n\n" + (body if body else (summary or ""))
    if tags:
        text += "\n\nTags: " + ", ".join(sorted(tags))
    return text


def _stderr_once(msg: str) -> None:
    if msg not in _printed:
        _printed.add(msg)
        print(msg, file=sys.stderr, flush=True)


def rrf(lists: Sequence[Sequence[int]], k: int = 60) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion of ranked id lists: ``Σ 1 / (k + rank)`` (rank from 1), best first, ties by first
    appearance."""
    score: dict[int, float] = {}
    order: dict[int, int] = {}
    for lst in lists:
        for r, i in enumerate(lst, start=1):
            score[i] = score.get(i, 0.0) + 1.0 / (k + r)
            order.setdefault(i, len(order))
    return sorted(score.items(), key=lambda kv: (-kv[1], order[kv[0]]))


@dataclass
class AnchorReport:
    rowid: int
    id: str
    title: str
    added: list[tuple[str, str, float]] = field(default_factory=list)  # (id, title, similarity)
    pruned: list[tuple[str, float]] = field(default_factory=list)  # (id, similarity)
    missing_vector: bool = False


class MemoryVectors:
    """The embedding hook of one ``memory.db`` (see the module docstring)."""

    def __init__(self, db_path: Path | str, embedder: Any = None, *, busy_timeout_ms: int = 10000,
                 url: str | None = None) -> None:
        self.db_path = Path(db_path)  # the usearch files live beside it (a local mirror when ``url`` is set)
        self.emb = embedder if embedder is not None else get_embedder()
        self._pg: Any = None
        if url is not None:  # the memory on a PostgreSQL server (issue 18): rows there, indexes mirrored here
            from m1nd.store.pg import PgStore
            from m1nd.store.pg_memory_db import PgMemoryDb

            self._pg = PgStore(url, max_size=4)
            self._threads = PerThread(lambda: PgMemoryDb(self._pg))
        else:
            self._threads = PerThread(lambda: open_db(self.db_path, busy_timeout_ms=busy_timeout_ms))
        self._entries: VectorIndex | None = None
        self._chunks: VectorIndex | None = None
        self._checked_model = False
        self._native: bool | None = None  # pgvector on the memory server: it searches, no local mirror
        self._lock = threading.Lock()

    # -- identity ---------------------------------------------------------------------------------------------------
    @property
    def model_id(self) -> str:
        return self.emb.model_id

    @property
    def dim(self) -> int:
        return int(self.emb.dim)

    def _embedder(self) -> Any:
        emb = usable(self.emb)
        if emb is None:
            raise EmbedderUnavailableError()
        return emb

    @property
    def db(self) -> Database:
        return self._threads.get()

    def close(self) -> None:
        self.save()
        self._threads.close_all()
        if self._pg is not None:
            self._pg.close()

    def indexes(self) -> tuple[VectorIndex, VectorIndex]:
        if self._entries is None or self._chunks is None:
            with self._lock:
                if self._entries is None or self._chunks is None:
                    d = self.db_path.parent
                    # a server's mirror is named after the server, so a home can mirror several and keep its own
                    pre = "" if self._pg is None else f"memory-pg-{self._pg.fingerprint}."
                    self._chunks = VectorIndex(d / (pre + CHUNK_INDEX_FILE), model_id=self.model_id, dim=self.dim)
                    self._entries = VectorIndex(d / (pre + ENTRY_INDEX_FILE), model_id=self.model_id, dim=self.dim)
        return self._entries, self._chunks

    def save(self) -> None:
        for ix in (self._entries, self._chunks):
            if ix is not None:
                ix.save()

    # -- meta and model identity (embeddings.md §5) -----------------------------------------------------------------
    @staticmethod
    def generation(db: Database) -> int:
        return vector_repo(db).generation()

    @staticmethod
    def _bump(db: Database) -> int:
        return vector_repo(db).bump_generation()

    def model_state(self, db: Database | None = None) -> dict[str, Any]:
        """``{recorded_model, recorded_dim, changed, need}``: whether the store was embedded by another model."""
        db = db or self.db
        rows = vector_repo(db)
        rec, dim = rows.recorded_model()
        changed = rec is not None and (rec != self.model_id or str(dim) != str(self.dim))
        need = 0
        if changed:
            need = rows.missing(self.model_id, self.dim)
        return {"recorded_model": rec, "recorded_dim": dim, "changed": changed, "need": need}

    def _check_model(self, db: Database) -> None:
        if self._checked_model:
            return
        self._checked_model = True
        st = self.model_state(db)
        if st["changed"] and st["need"]:
            _stderr_once(f"note: embedding model changed from {st['recorded_model']} to {self.model_id}; "
                         f"{st['need']} entries need re-embedding (run m1nd memory embed --all, or start the server)")

    def _record_model(self, db: Database) -> None:
        rows = vector_repo(db)
        if rows.recorded_model()[0] is None:
            rows.record_model(self.model_id, self.dim)

    def finish_reembed(self, db: Database) -> bool:
        """After a full re-embed: when every entry has a vector of the active model, record it as the store's model
        and drop vectors of other models (embeddings.md §5). Returns whether the store is now current."""
        rows = vector_repo(db)
        if rows.missing(self.model_id, self.dim):
            return False
        with db.write():
            rows.record_model(self.model_id, self.dim)
            if rows.drop_other_models(self.model_id, self.dim):
                rows.bump_generation()
        return True

    # -- index synchronisation --------------------------------------------------------------------------------------
    def sync(self, db: Database | None = None) -> tuple[VectorIndex, VectorIndex]:
        db = db or self.db
        entries, chunks = self.indexes()
        gen = self.generation(db)
        for kind, ix in (("entry", entries), ("chunk", chunks)):
            if ix.generation == gen:
                continue

            def rows(kind: str = kind) -> tuple[np.ndarray, np.ndarray]:
                r = vector_repo(db).keys_and_hashes(kind, self.model_id, self.dim)
                return (np.fromiter((x[0] for x in r), np.uint64, count=len(r)),
                        np.fromiter((tag_of(x[1]) for x in r), np.int64, count=len(r)))

            def fetch(keys: np.ndarray) -> np.ndarray:
                got = vector_repo(db).by_keys(keys.tolist())
                out = np.zeros((len(keys), self.dim), np.float32)
                for i, k in enumerate(keys.tolist()):
                    b = got.get(k)
                    if b is not None and len(b) == 4 * self.dim:
                        out[i] = blob_vec(b)
                return out

            ix.sync(gen, rows, fetch)
        return entries, chunks

    # =========================================================================================================
    # The service hook
    # =========================================================================================================
    def _cached(self, hashes: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        rows = vector_repo(self.db)
        for a in range(0, len(hashes), 500):
            part = hashes[a:a + 500]
            for h, b in rows.by_hashes(self.model_id, self.dim, part):
                if h not in out and len(b) == 4 * self.dim:
                    out[h] = blob_vec(b)
        return out

    def prepare(self, texts: list[str]) -> list[chunking.Prepared]:
        """Model inference (before the write transaction); vectors of unchanged text come from the table."""
        emb = self._embedder()
        self._check_model(self.db)
        return chunking.prepare(emb, texts, cached=self._cached)

    def store(self, repo: Any, rowid: int, payload: chunking.Prepared | None, *, auto_anchor: bool = True) -> None:
        """Inside the write transaction: replace the entry's chunks and vectors, then maintain its anchors."""
        if payload is None or not payload.ok or payload.model_id != self.model_id or payload.dim != self.dim:
            return
        db: Database = repo.db
        # a local index to keep in step, at the generation before this write (none when the server searches)
        mirror = None if self.server_searches(db) else self.sync(db)
        rows = vector_repo(db)
        old_chunk_keys, old_entry_keys = rows.entry_keys(rowid)
        rows.clear_entry(rowid)
        new_chunks: list[tuple[int, int, np.ndarray]] = []
        for c in payload.chunks:
            crow = rows.add_chunk(rowid, c.index, c.token_offset, c.token_count, c.text)
            if not np.any(c.vector):
                continue
            key = rows.add_vector("chunk", crow, self.model_id, self.dim, c.content_hash, vec_blob(c.vector))
            new_chunks.append((key, tag_of(c.content_hash), c.vector))
        ekey = rows.add_vector("entry", rowid, self.model_id, self.dim, payload.content_hash,
                               vec_blob(payload.vector))
        ts = now_iso()
        rows.mark_embedded(rowid, len(payload.chunks), self.model_id, ts)
        self._record_model(db)
        gen = self._bump(db)
        # Mirror the write in the in-memory indexes. A rollback leaves phantom keys, which hydration ignores and the
        # next generation change repairs (their tags no longer match; see m1nd.memory.vectors).
        if mirror is not None:
            entries, chunks = mirror
            chunks.remove(old_chunk_keys, generation=gen)
            entries.remove(old_entry_keys, generation=gen)
            if new_chunks:
                chunks.upsert([k for k, _, _ in new_chunks], [t for _, t, _ in new_chunks],
                              np.stack([v for _, _, v in new_chunks]), generation=gen)
            entries.upsert([ekey], [tag_of(payload.content_hash)], payload.vector[None, :], generation=gen)
        if auto_anchor:
            self._anchor(db, rowid, payload.vector, threshold=DEFAULT_THRESHOLD, max_anchors=DEFAULT_MAX_ANCHORS,
                         prune_all=False, dry_run=False, agent=None, ts=ts)
        if mirror is not None:
            mirror[0].maybe_save()
            mirror[1].maybe_save()

    # =========================================================================================================
    # Semantic search (memory.md §11)
    # =========================================================================================================
    def search(self, query: str, *, candidates: int) -> list[tuple[int, float]]:
        """Entry rowids with scores (max over entry and chunk hits) among the ``candidates`` nearest vectors of
        each index, unfiltered. See :meth:`semantic_search` for the filtered loop."""
        db = self.db
        with db.read():
            hits, _ = self._hits(db, self._embedder().embed_query(query), candidates)
        return sorted(hits.items(), key=lambda kv: -kv[1])

    def server_searches(self, db: Database) -> bool:
        """Whether the memory's PostgreSQL server searches the vectors itself (pgvector), decided once per process."""
        if self._pg is None:
            return False
        if self._native is None:
            self._native = bool(vector_repo(db).native_search())
        return self._native

    def nearest(self, db: Database, kind: str, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` nearest vector keys of ``kind`` ('entry' or 'chunk') and their cosine similarities, best
        first: on the server with pgvector, else from the usearch index (the local mirror of a server's vectors)."""
        if self.server_searches(db):
            got = vector_repo(db).nearest(kind, self.model_id, self.dim, np.asarray(q, np.float32).tolist(), k)
            return (np.fromiter((r for r, _ in got), np.uint64, count=len(got)),
                    np.fromiter((s for _, s in got), np.float32, count=len(got)))
        entries, chunks = self.sync(db)
        return (entries if kind == "entry" else chunks).search(q, k)

    def _hits(self, db: Database, q: np.ndarray, k: int) -> tuple[dict[int, float], bool]:
        ek, es = self.nearest(db, "entry", q, k)
        ck, cs = self.nearest(db, "chunk", q, k)
        exhausted = len(ek) < k and len(ck) < k
        keys = ek.tolist() + ck.tolist()
        sims = es.tolist() + cs.tolist()
        if not keys:
            return {}, exhausted
        owner = vector_repo(db).owners(keys, self.model_id, self.dim)
        out: dict[int, float] = {}
        for key, s in zip(keys, sims):
            e = owner.get(key)
            if e is None:
                continue
            if s > out.get(e, -2.0):
                out[e] = float(s)
        return out, exhausted

    def semantic_search(self, repo: Any, where: Any, query: str, limit: int) -> tuple[list[tuple[int, float]],
                                                                                      list[str]]:
        """The filtered over-fetch loop: ``(hits, notes)`` with at most ``limit`` ``(entry rowid, score)`` pairs,
        best first. ``where`` is the caller's :class:`m1nd.store.memory_repo.Where` over ``entries e`` (visibility
        and every filter), applied before truncation."""
        emb = self._embedder()
        q = emb.embed_query(query)
        db: Database = repo.db
        self._check_model(db)
        notes: list[str] = []
        k = max(3 * limit, 30)
        budget = max(50 * limit, 1000)
        while True:
            hits, exhausted = self._hits(db, q, k)
            kept: list[int] = []
            if hits:
                kept = vector_repo(db).in_scope(list(hits), where)
            scanned = 2 * k
            if len(kept) >= limit or exhausted:
                break
            if scanned >= budget:
                notes.append(f"Warning: semantic search scanned {scanned} candidates and kept only {len(kept)} of "
                             f"{limit} (filters exclude most of them)")
                break
            k = min(2 * k, budget // 2)
        ranked = sorted(((r, hits[r]) for r in kept), key=lambda kv: (-kv[1], kv[0]))
        return [(r, round(s, 6)) for r, s in ranked[:limit]], notes

    # =========================================================================================================
    # Anchors (memory.md §11)
    # =========================================================================================================
    def _anchor(self, db: Database, rowid: int, vec: np.ndarray, *, threshold: float, max_anchors: int,
                prune_all: bool, dry_run: bool, agent: str | None, ts: str | None = None) -> AnchorReport:
        rows = vector_repo(db)
        me = rows.brief(rowid)
        rep = AnchorReport(rowid, me[0] if me else "", me[1] if me else "")
        if me is None:
            return rep
        _, _, vis, owner = me
        vec = np.asarray(vec, np.float32)
        # existing anchors: similarity of those whose target has a vector of this model
        existing: dict[int, tuple[str, float | None, bool]] = {}
        for ar, sim_rec, xid, b, xvis, xowner in rows.anchors_with_vectors(rowid, self.model_id, self.dim):
            s = float(blob_vec(b) @ vec) if b is not None and len(b) == 4 * self.dim else None
            visible = agent is None or xvis == "public" or xowner == agent
            existing[ar] = (xid, s, visible and (prune_all or sim_rec is not None))
        prune = [(ar, xid, s) for ar, (xid, s, may) in existing.items()
                 if may and s is not None and not (threshold <= s <= BAND_CEILING)]
        # candidates: the 25 nearest entry vectors, 500 when the 25th still passes the threshold
        k = 25
        keys, sims = self.nearest(db, "entry", vec, k + 1)
        if len(sims) > k and float(sims[k - 1]) >= threshold:
            keys, sims = self.nearest(db, "entry", vec, 500)
        cands: list[tuple[float, int, str, str]] = []
        if len(keys):
            for xr, xid, xtitle, b in rows.anchor_candidates(keys.tolist(), self.model_id, self.dim, rowid, vis,
                                                             owner):
                if len(b) != 4 * self.dim:
                    continue
                s = float(blob_vec(b) @ vec)
                if threshold <= s <= BAND_CEILING:
                    cands.append((s, xr, xid, xtitle))
        pruned_rows = {ar for ar, _, _ in prune}
        # rank new candidates together with the anchors that stay, keep the best max_anchors
        staying = [(s, ar) for ar, (_, s, _) in existing.items() if ar not in pruned_rows and s is not None
                   and threshold <= s <= BAND_CEILING]
        pool = sorted([(s, ar, True) for s, ar in staying] + [(s, xr, False) for s, xr, _, _ in cands
                                                               if xr not in existing],
                      key=lambda t: (-t[0], t[1]))[:max_anchors]
        chosen = {xr for _, xr, is_old in pool if not is_old}
        info = {xr: (xid, xt, s) for s, xr, xid, xt in cands}
        rep.pruned = [(xid, s) for _, xid, s in prune]
        rep.added = [(info[xr][0], info[xr][1], info[xr][2]) for _, xr, is_old in pool if not is_old]
        if dry_run:
            return rep
        ts = ts or now_iso()
        for ar, _, _ in prune:
            rows.prune_anchor(rowid, ar)
        for xr in chosen:
            rows.add_anchor(rowid, xr, round(info[xr][2], 6), ts)
        return rep

    def auto_anchor(self, svc: Any, *, agent: str | None, entry_id: str | None = None,
                    threshold: float = DEFAULT_THRESHOLD, max_anchors: int = DEFAULT_MAX_ANCHORS,
                    dry_run: bool = False, fill: bool = False,
                    on_entry: Callable[[AnchorReport], None] | None = None,
                    on_start: Callable[[int], None] | None = None) -> dict[str, Any]:
        """The ``auto-anchor`` command over one entry or every visible entry with a vector of this model."""
        if not (0.0 < threshold < BAND_CEILING):
            raise InvalidInputError(f"--threshold must be between 0 and {BAND_CEILING} (got {threshold})")
        if max_anchors < 1:
            raise InvalidInputError(f"--max-anchors must be at least 1 (got {max_anchors})")
        self._embedder()
        db = svc.db
        with db.read():
            repo = svc.repo
            if entry_id is not None:
                rowid = svc._resolve(repo, entry_id, agent, "Entry '{id}' not found")
                rows = vector_repo(db).entry_vector(rowid, self.model_id, self.dim)
                if not rows or rows[0][1] is None:
                    eid = repo.entries.id_of(rowid)
                    raise NotFoundError(f"Entry {eid} has no embedding. Run `m1nd memory embed {eid}` first.",
                                        recover=f"run m1nd memory embed {eid}")
            else:
                rows = vector_repo(db).visible_with_vectors(agent, self.model_id, self.dim, unanchored_only=fill)
        if on_start is not None:
            on_start(len(rows))
        reports = []
        added = pruned = 0
        for a in range(0, len(rows), 100):  # one transaction per 100 entries
            with (db.read() if dry_run else db.write()):
                for rowid, b in rows[a:a + 100]:
                    rep = self._anchor(db, rowid, blob_vec(b), threshold=threshold, max_anchors=max_anchors,
                                       prune_all=True, dry_run=dry_run, agent=agent)
                    added += len(rep.added)
                    pruned += len(rep.pruned)
                    reports.append(rep)
                    if on_entry is not None:
                        on_entry(rep)
        self.save()
        return {"entries": len(rows), "added": added, "pruned": pruned, "dry_run": dry_run, "reports": reports}

    # =========================================================================================================
    # embed ID | --all
    # =========================================================================================================
    def embed(self, svc: Any, *, agent: str | None, entry_id: str | None = None, all_: bool = False,
              long_only: int | None = None, force: bool = False, every_owner: bool = False,
              on_found: Callable[[int], None] | None = None,
              on_start_entry: Callable[[str], None] | None = None,
              progress: Callable[[int, int, str], None] | None = None) -> dict[str, Any]:
        """Embed one visible entry, or every visible entry whose vector is missing or out of date."""
        if entry_id is None and not all_:
            raise InvalidInputError("Entry ID required (use --all to embed all entries)")
        emb = self._embedder()
        db = svc.db
        with db.read():
            one = None
            if entry_id is not None and not all_:
                one = svc._resolve(svc.repo, entry_id, agent, "Entry not found: {id}")
            # every_owner: maintenance (the server's re-embed job): every entry, nothing is shown
            rows = vector_repo(db).texts(self.model_id, self.dim, rowid=one, agent=agent,
                                        every_owner=every_owner and one is None)
        todo = []
        skipped_threshold = 0
        for rowid, eid, title, body, summary, tags_json, have in rows:
            text = embedding_text(title, body, summary, json.loads(tags_json))
            if all_ and not force and have == chunking.sha256_text(text):
                continue
            if long_only is not None and emb.count_tokens(text) <= long_only:
                skipped_threshold += 1
                continue
            todo.append((rowid, eid, title, text))
        todo.sort(key=lambda t: len(t[3]))  # similar lengths share a batch: less padding (embeddings.md §6)
        if on_found is not None:
            on_found(len(todo))
        if on_start_entry is not None and todo:
            on_start_entry(todo[0][2])
        done = 0
        inferred = 0
        for a in range(0, len(todo), EMBED_BATCH_ENTRIES):
            part = todo[a:a + EMBED_BATCH_ENTRIES]
            payloads = chunking.prepare(emb, [t for *_, t in part], cached=None if force else self._cached)
            inferred += sum(p.inferred for p in payloads)
            with db.write():
                repo = svc.repo
                for (rowid, eid, title, _), p in zip(part, payloads):
                    if not vector_repo(db).exists(rowid):
                        continue  # deleted meanwhile
                    self.store(repo, rowid, p, auto_anchor=False)
                    done += 1
                    if progress is not None:
                        progress(done, len(todo), title)
        self.save()
        current = self.finish_reembed(db) if all_ else None
        out: dict[str, Any] = {"found": len(todo), "embedded": done, "skipped_below_threshold": skipped_threshold,
                               "inferred": inferred, "model_id": self.model_id, "store_current": current}
        if entry_id is not None and not all_ and todo:
            out["id"], out["title"] = todo[0][1], todo[0][2]
        return out

    def refresh(self, svc: Any, entry_id: str, *, auto_anchor: bool = True) -> bool:
        """Re-embed one entry after a write that had no ``prepare`` step (``restore``): inference first, then one
        write transaction (the entry itself is already durable). Returns whether a vector was stored."""
        db = svc.db
        with db.read():
            row = vector_repo(db).text_of(entry_id)
        if row is None:
            return False
        rowid, title, body, summary, tags_json = row
        text = embedding_text(title, body, summary, json.loads(tags_json))
        payload = self.prepare([text])[0]
        with db.write():
            if not vector_repo(db).exists(rowid):
                return False
            self.store(svc.repo, rowid, payload, auto_anchor=auto_anchor)
        return payload.ok

    # =========================================================================================================
    # Health
    # =========================================================================================================
    def describe(self) -> dict[str, Any]:
        entries, chunks = self.indexes()
        out = {"model_id": self.model_id, "dim": self.dim, "entry_vectors": len(entries),
               "chunk_vectors": len(chunks)}
        if self._native:  # the server searches: the local index counts say nothing
            out = {"model_id": self.model_id, "dim": self.dim, "vector_search": "pgvector on the memory server"}
        return out


def vector_hook_for(db_path: Path | str, *, busy_timeout_ms: int = 10000,
                    url: str | None = None) -> MemoryVectors | None:
    """The memory's embedding hook, or None when no embedder is available (cheap: nothing is loaded here).
    With ``url`` (a PostgreSQL memory) the vectors are the server's and the usearch files beside ``db_path`` are
    this machine's mirror of them."""
    emb = get_embedder()
    if isinstance(emb, NoEmbedder) or not emb.available:
        return None
    if isinstance(emb, OnnxEmbedder) and emb._failed is not None:
        return None
    return MemoryVectors(db_path, emb, busy_timeout_ms=busy_timeout_ms, url=url)
