"""Reading entries: show, list (filters, sorts) and search (keyword BM25, semantic, hybrid), recent facts.

Reads run in one snapshot; activation bookkeeping (``show``, ``search --activate``) runs afterwards in its own short
write, skipped when the database is busy (the read already succeeded). Private entries the caller owns but did not
ask for are never shown; the answer says how many matched (``hidden_private``).
"""

from __future__ import annotations

import contextlib

from m1nd.defaults import LIST_LIMIT, RECENT_DAYS, RECENT_LIMIT, RECENT_MIN_RESONANCE, SEARCH_LIMIT
from m1nd.errors import InvalidInputError
from m1nd.memory import fields as F
from m1nd.memory.core import MemoryCore
from m1nd.memory.fts import build_match, query_terms
from m1nd.memory.results import EntryList, RecentFact, SearchHits
from m1nd.store.memory_contract import Entry, Filters, Scope
from m1nd.store.memory_tx import MemoryTx
from m1nd.timeutil import MS_PER_DAY, format_ms, now_iso, now_ms

SORTS = ("updated", "created", "resonance", "id")


class Reading(MemoryCore):
    def show(self, raw_id: str, *, agent: str | None, activate: bool = True) -> Entry:
        with self._read() as tx:
            rowid = self._resolve(tx, raw_id, agent, "Entry '{id}' not found")
            entry = self._entry(tx, rowid, agent)
        if activate:
            ts = now_iso()
            if self._bookkeep([rowid], ts):
                entry.data["last_activated"] = ts
                entry.data["activation_count"] += 1
        return entry

    def _check_filters(self, tx: MemoryTx, f: Filters) -> None:
        # the registry is read only when a filter names categories: on a server store every statement is a round
        # trip, and most searches name none
        cats = set(tx.registries.ids("categories")) if f.categories else set()
        for c in f.categories:
            if c not in cats:
                raise InvalidInputError(f"Unknown category '{c}'. Valid categories: {', '.join(sorted(cats))}")
        if f.project is not None and not tx.registries.has("projects", f.project):
            raise InvalidInputError(f"Unknown project '{f.project}'; register it with m1nd memory projects add")
        if f.basis not in ("raw", "decayed"):
            raise InvalidInputError(f"--resonance-basis must be 'raw' or 'decayed' (got '{f.basis}')")

    def _check_mode(self, f: Filters, agent: str | None) -> None:
        if f.visibility == "mine" and not agent:
            raise InvalidInputError("--mine needs an agent: pass --agent NAME or set M1ND_CURRENT_AGENT")

    def list_entries(self, f: Filters, *, agent: str | None, sort: str = "updated", limit: int = LIST_LIMIT,
                     count: bool = False) -> EntryList:
        self._check_mode(f, agent)
        if sort not in SORTS:
            raise InvalidInputError(f"--sort must be one of updated, created, resonance, id (got '{sort}')")
        now = now_ms()
        hidden = 0
        with self._read() as tx:
            self._check_filters(tx, f)
            scope = tx.entries.scope(f, agent, now)
            if sort == "resonance" and f.basis == "decayed":
                rowids = tx.entries.top_effective(scope, limit)
            else:
                order = f"resonance_{f.basis}" if sort == "resonance" else sort
                rowids = tx.entries.select_rowids(scope, order, limit)
            entries = tx.entries.hydrate_rowids(rowids, agent=agent, now=now)
            total = tx.entries.count(scope) if count else len(entries)
            if f.visibility == "public" and agent:
                with contextlib.suppress(Exception):
                    hidden = tx.entries.count(tx.entries.scope(f, agent, now, visibility="mine"))
        return EntryList(entries=entries, total=total, hidden_private=hidden)

    def search(self, query: str, f: Filters, *, agent: str | None, limit: int = SEARCH_LIMIT, activate: bool = False,
               mode: str | None = "keyword") -> SearchHits:
        """Entries matching ``query`` in ``mode`` (keyword, semantic or hybrid; None: hybrid when an embedding model
        is installed, else keyword, the default of the ``memory_search`` tool and ``Workspace.memory_search``)."""
        if mode is None:
            mode = "hybrid" if getattr(self.vector_hook, "search", None) is not None else "keyword"
        self._check_mode(f, agent)
        if not query.strip():
            raise InvalidInputError("search query must not be empty")
        notes: list[str] = []
        hidden = activated = 0
        if mode in ("semantic", "hybrid") and getattr(self.vector_hook, "search", None) is None:
            notes.append("note: no embedding model installed; using keyword search")
            mode = "keyword"
        now = now_ms()
        terms = query_terms(query)
        entries: list[Entry] = []
        with self._read() as tx:
            self._check_filters(tx, f)
            sem = self._semantic_hits(tx, f, agent, now, query, limit, notes) if mode != "keyword" else None
            if sem is None:
                mode = "keyword"
            if terms and mode != "semantic":
                scope = tx.entries.scope(f, agent, now)
                hits = tx.entries.keyword_hits(scope, build_match(terms), limit)
                if not hits and len(terms) > 1:
                    hits = tx.entries.keyword_hits(scope, build_match(terms, any_word=True), limit)
                    if hits:
                        notes.append("note: no entry matched every word; showing entries that match any")
                entries = tx.entries.hydrate_rowids([h[0] for h in hits], agent=agent, now=now)
                scores = dict(hits)
                for e in entries:
                    e.extra["score"] = round(scores[e.rowid], 6)
                if f.visibility == "public" and agent:
                    with contextlib.suppress(Exception):
                        mine = tx.entries.scope(f, agent, now, visibility="mine")
                        hidden = tx.entries.keyword_count(mine, build_match(terms))
            if sem is not None:
                entries = self._fuse(tx, sem, entries, mode, agent, now, limit)
        if activate and entries:
            ts = now_iso()
            if self._bookkeep([e.rowid for e in entries], ts):
                for e in entries:
                    e.data["last_activated"] = ts
                    e.data["activation_count"] += 1
                activated = len(entries)
        return SearchHits(entries=entries, mode=mode, notes=notes, hidden_private=hidden, activated=activated)

    def _semantic_hits(self, tx: MemoryTx, f: Filters, agent: str | None, now: int, query: str, limit: int,
                       notes: list[str]) -> list[tuple[int, float]] | None:
        """Semantic hits through the embedding hook (issue 6, :mod:`m1nd.memory.semantic`); None without a model."""
        from m1nd.memory.embeddings import EmbedderUnavailableError  # onnxruntime loads only when asked

        scope: Scope = tx.entries.scope(f, agent, now)
        try:
            hits, more = self.vector_hook.semantic_search(tx, scope, query, limit)
        except EmbedderUnavailableError:
            notes.append("note: no embedding model installed; using keyword search")
            return None
        notes.extend(more)
        return hits

    @staticmethod
    def _fuse(tx: MemoryTx, sem: list[tuple[int, float]], keyword: list[Entry], mode: str, agent: str | None,
              now: int, limit: int) -> list[Entry]:
        """Semantic results, or (hybrid) reciprocal-rank fusion (k = 60) of the keyword and semantic lists."""
        from m1nd.memory.semantic import rrf

        hits = sem if mode == "semantic" else rrf([[e.rowid for e in keyword], [r for r, _ in sem]])[:limit]
        scores = dict(hits)
        entries = tx.entries.hydrate_rowids([r for r, _ in hits], agent=agent, now=now)
        for e in entries:
            e.extra["score"] = round(scores[e.rowid], 6)
        return entries

    def recent(self, *, agent: str | None, days: int = RECENT_DAYS, limit: int = RECENT_LIMIT,
               resonance_type: str | None = None, all_types: bool = False, sort: str = "chronological",
               basis: str = "decayed") -> list[RecentFact]:
        if days <= 0:
            raise InvalidInputError(f"--days must be a positive integer (got {days})")
        if sort not in ("chronological", "resonance"):
            raise InvalidInputError(f"--sort must be 'chronological' or 'resonance' (got '{sort}')")
        F.check_resonance_type(resonance_type)
        now = now_ms()
        with self._read() as tx:
            rowids = tx.entries.recent_rowids(agent, now, format_ms(now - days * MS_PER_DAY), basis=basis,
                                              resonance_type=resonance_type, all_types=all_types,
                                              by_resonance=sort == "resonance", limit=limit,
                                              min_value=RECENT_MIN_RESONANCE)
            entries = tx.entries.hydrate_rowids(rowids, agent=agent, now=now)
        return [RecentFact(id=e.id, type=e["fact_type"] or e["category_id"], category=e["category_id"],
                           content=e["body"], created_at=e["created_at"], resonance=e["resonance"],
                           effective_resonance=e["effective_resonance"], state=e["fact_state"]) for e in entries]
