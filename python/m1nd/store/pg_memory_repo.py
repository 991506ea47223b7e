"""The knowledge memory's repositories on PostgreSQL (issue 18): the protocols of
:mod:`m1nd.store.memory_contract` over a :class:`~m1nd.store.pg_memory_db.PgMemoryDb`.

Each class extends its SQLite sibling: statements that mean the same on both engines are shared (spelled for
PostgreSQL by :func:`m1nd.store.pg_memory_db.to_pg`); the ones below are PostgreSQL's own because the engines
differ in meaning there:

* **keyword search** — ``entries_fts.doc`` is a weighted ``tsvector`` (title A, tags and identifier parts B,
  summary C, body D, configuration ``m1nd``: Snowball English stemming without a stop-word list, like FTS5's
  porter tokenizer which drops no word) ranked by ``ts_rank`` with weights 1.0/0.5/0.5/0.25, the proportions of
  the SQLite store's BM25 column weights (title 4, tags 2, summary 2, body 1). The FTS5 expression the services
  build (:func:`m1nd.memory.fts.build_match`: quoted words and phrases, a trailing ``*`` for a prefix, joined by
  ``AND``/``OR``) is parsed back into a ``tsquery`` with bound parameters only (:func:`tsquery_sql`);
* **ordered JSON arrays** of tags, applicability and anchors (``json_agg … ORDER BY rowid``, a derived table
  needs an alias on PostgreSQL 15);
* **aggregates over conditions** (``count(*) FILTER``, SQLite sums booleans), ``least`` for SQLite's scalar ``min``;
* **the vector generation** is ``vectors_changes.counter``, moved by a statement trigger on ``vectors``: every
  machine's usearch mirror notices any writer's change (:meth:`PgVectorRepo.generation`).

Visibility is the same SQL predicate (:func:`m1nd.store.memory_repo.visible_sql`); dedup is the same partial
unique index with ``ON CONFLICT DO NOTHING``; ``eff_res`` is a PL/pgSQL function of the schema computing the
decay of :mod:`m1nd.memory.decay` with the same formula.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence
from typing import Any, cast

from m1nd.store.memory_backups import BackupRepo
from m1nd.store.memory_contract import Entry
from m1nd.store.memory_registries import RegistryRepo
from m1nd.store.memory_relationships import RelationshipRepo
from m1nd.store.memory_repo import EntryRepo, MetaRepo, Where, row_to_entry, visible_sql
from m1nd.store.memory_sessions import SessionRepo
from m1nd.store.memory_vectors import VectorRepo
from m1nd.store.memory_wake import GuessLogRepo, RitualRepo, WakeRepo
from m1nd.store.pg_memory_db import PgMemoryDb

TS_CONFIG = "m1nd"
# ts_rank weights, in PostgreSQL's order {D, C, B, A}: body, summary, tags + identifiers, title
_RANK_WEIGHTS = "'{0.25, 0.5, 0.5, 1.0}'"

_HYDRATE_SELECT = f"""
SELECT e.rowid, e.id, e.category, e.title, e.body, e.summary,
  (SELECT coalesce(json_agg(a.applicability_id ORDER BY a.rowid)::text, '[]') FROM entry_applicability a
     WHERE a.entry_rowid = e.rowid),
  e.source_project, e.source_agent,
  (SELECT coalesce(json_agg(t.tag ORDER BY t.rowid)::text, '[]') FROM entry_tags t WHERE t.entry_rowid = e.rowid),
  e.created_at, e.updated_at, e.content_hash, e.source_type, e.entry_type, e.session_id, e.ephemeral,
  e.content_type, e.owner, e.visibility, e.resonance, e.resonance_type,
  eff_res(e.resonance, e.resonance_type, e.last_activated, e.created_at, %(now)s),
  e.fact_type, e.fact_state, e.last_activated, e.activation_count,
  (SELECT coalesce(json_agg(x.id ORDER BY an.rowid)::text, '[]') FROM entry_anchors an
     JOIN entries x ON x.rowid = an.anchor_rowid
     WHERE an.entry_rowid = e.rowid AND {visible_sql('x', '%(agent)s')}),
  e.wake_phrases, e.wake_order, e.code_refs, e.chunk_count, e.embedding_model, e.embedded_at,
  e.rev, e.dedup_hash, e.dedup_scope, e.dedup_exempt
FROM entries e
"""

_FTS_TERM = re.compile(r'"((?:[^"]|"")*)"(\*?)|\b(AND|OR)\b')
_LEXEME = re.compile(r"\w+", re.UNICODE)


def tsquery_sql(match: str) -> tuple[str, dict[str, Any]]:
    """An FTS5 expression of :func:`m1nd.memory.fts.build_match` as a ``tsquery`` expression with parameters.

    A quoted word or phrase becomes ``phraseto_tsquery`` (the words in sequence, stemmed); with ``*`` its last
    word matches as a prefix (``to_tsquery`` over the quoted lexemes, the last with ``:*``)."""
    parts: list[str] = []
    params: dict[str, Any] = {}
    for m in _FTS_TERM.finditer(match):
        if m.group(3):
            parts.append("&&" if m.group(3) == "AND" else "||")
            continue
        text = m.group(1).replace('""', '"')
        name = f"_t{len(params)}"
        if m.group(2):
            words = _LEXEME.findall(text)
            if not words:
                continue
            params[name] = " <-> ".join("'" + w.replace("'", "''") + "'" for w in words) + ":*"
            parts.append(f"to_tsquery('{TS_CONFIG}', %({name})s)")
        else:
            params[name] = text
            parts.append(f"phraseto_tsquery('{TS_CONFIG}', %({name})s)")
    # drop dangling operators (a term that held no lexeme)
    cleaned: list[str] = []
    for p in parts:
        if p in ("&&", "||") and (not cleaned or cleaned[-1] in ("&&", "||")):
            continue
        cleaned.append(p)
    while cleaned and cleaned[-1] in ("&&", "||"):
        cleaned.pop()
    return ("(" + " ".join(cleaned) + ")" if cleaned else "''::tsquery"), params


def _scope_sql(where: Where) -> tuple[str, dict[str, Any]]:
    """A scope's predicate and parameters in PostgreSQL's spelling (named parameters)."""
    from m1nd.store.pg_memory_db import to_pg

    return to_pg(where.sql())[0], dict(where.params)


_FTS_UPSERT = (
    f"INSERT INTO entries_fts(rowid, doc) VALUES (%(r)s, setweight(to_tsvector('{TS_CONFIG}', %(t)s), 'A') || "
    f"setweight(to_tsvector('{TS_CONFIG}', %(g)s), 'B') || setweight(to_tsvector('{TS_CONFIG}', %(s)s), 'C') || "
    f"setweight(to_tsvector('{TS_CONFIG}', %(b)s), 'D')) ON CONFLICT (rowid) DO UPDATE SET doc = excluded.doc")


def _fts_params(rowid: int, title: str, body: str, summary: str | None, tags: Sequence[str],
                ident: str) -> dict[str, Any]:
    return {"r": rowid, "t": title, "g": " ".join(tags) + " " + ident, "s": summary or "", "b": body}


class PgEntryRepo(EntryRepo):
    @property
    def pg(self) -> PgMemoryDb:
        """The connection view, with its PostgreSQL-only ``native`` statements."""
        return cast(PgMemoryDb, self.db)

    def _hydrate_where(self, where: str, params: dict[str, Any], order: str = "", limit: int | None = None
                       ) -> Iterator[Entry]:
        from m1nd.store.pg_memory_db import to_pg

        sql = _HYDRATE_SELECT + f" WHERE {to_pg(where)[0]}"
        if order:
            sql += f" ORDER BY {order}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        for r in self.pg.native(sql, params):
            yield row_to_entry(r)

    def hydrate_rowids(self, rowids: Sequence[int], *, agent: str | None, now: int) -> list[Entry]:
        if not rowids:
            return []
        got = self._prefetched(rowids, agent, now)
        if got is None:
            got = {e.rowid: e for e in self._hydrate_where(
                "e.rowid = ANY(:ids)", {"ids": list(rowids), "agent": agent, "now": now})}
        return [got[r] for r in rowids if r in got]

    def _prefetched(self, rowids: Sequence[int], agent: str | None, now: int) -> dict[int, Entry] | None:
        """The entries :meth:`keyword_hits` already read, when this same transaction asks for them next (as a
        search does): one statement instead of two, each a round trip to the server."""
        cached = self.__dict__.pop("_keyword_entries", None)
        if cached is None:
            return None
        tx, key, entries = cast(tuple[Any, tuple[Any, Any], dict[int, Entry]], cached)
        if tx is not self.pg._tx or key != (agent, now) or not set(rowids) <= entries.keys():
            return None
        return entries

    def keyword_hits(self, w: Where, match: str, limit: int) -> list[tuple[int, float]]:
        pred, params = _scope_sql(w)
        q, qp = tsquery_sql(match)
        params.update(qp)
        # The keyword hits drive the query (GIN index, materialised), then the scope filters them, as FTS5 does on
        # SQLite: a planner misled by stale statistics cannot start from the visibility index instead. The top
        # hits come back hydrated, for the hydrate_rowids call that follows in a search (see _prefetched).
        hydrate = _HYDRATE_SELECT.replace("SELECT e.rowid,", "SELECT top.s, e.rowid,", 1)
        rows = self.pg.native(
            f"WITH hits AS MATERIALIZED (SELECT f.rowid, ts_rank({_RANK_WEIGHTS}, f.doc, {q}) AS s "
            f"FROM entries_fts f WHERE f.doc @@ {q}), "
            f"top AS MATERIALIZED (SELECT e.rowid, h.s, e.updated_at FROM hits h JOIN entries e "
            f"ON e.rowid = h.rowid WHERE {pred} ORDER BY h.s DESC, e.updated_at DESC LIMIT {int(limit)}) "
            f"{hydrate} JOIN top ON top.rowid = e.rowid ORDER BY top.s DESC, top.updated_at DESC", params)
        entries = {int(r[1]): row_to_entry(r[1:]) for r in rows}
        self.__dict__["_keyword_entries"] = (self.pg._tx, (params.get("agent"), params.get("now")), entries)
        return [(int(r[1]), float(r[0])) for r in rows]

    def keyword_count(self, w: Where, match: str) -> int:
        pred, params = _scope_sql(w)
        q, qp = tsquery_sql(match)
        params.update(qp)
        return int(self.pg.native(
            f"WITH hits AS MATERIALIZED (SELECT f.rowid FROM entries_fts f WHERE f.doc @@ {q}) "
            f"SELECT count(*) FROM hits h JOIN entries e ON e.rowid = h.rowid WHERE {pred}", params)[0][0])

    def fts_refresh(self, rowid: int, title: str, body: str, summary: str | None, tags: Sequence[str],
                    ident: str, *, new: bool = False) -> None:
        self.pg.native(_FTS_UPSERT, _fts_params(rowid, title, body, summary, tags, ident))

    def fts_refresh_many(self, rows: Sequence[tuple[int, str, str, str | None, Sequence[str], str]]) -> None:
        # one pipelined batch instead of a round trip per entry: the keyword index of a migrated memory
        self.pg.native_many(_FTS_UPSERT, [_fts_params(*r) for r in rows])

    def bump_resonance(self, rowid: int, now: str, *, cap: int) -> None:
        self.db.execute("UPDATE entries SET resonance = least(resonance + 1, ?), last_activated = ?, "
                        "activation_count = activation_count + 1, updated_at = ?, rev = rev + 1 "
                        "WHERE rowid = ?", (cap, now, now, rowid))

    def open_threads(self, agent: str | None) -> list[tuple[Any, ...]]:
        return self.pg.native(
            "SELECT e.rowid, e.id, e.body, e.fact_state, e.created_at, e.resonance, "
            "(SELECT coalesce(json_agg(t.tag ORDER BY t.rowid)::text, '[]') FROM entry_tags t "
            "WHERE t.entry_rowid = e.rowid) FROM entries e WHERE e.category = 'thread' AND "
            f"(e.fact_state IS NULL OR e.fact_state = 'open') AND {visible_sql('e', '%(agent)s')} "
            "ORDER BY e.created_at, e.rowid", {"agent": agent})

    def health_counts(self, agent: str | None, model: str | None, cutoff: str) -> tuple[int, int, int, int, int]:
        vis = visible_sql("e", "%(agent)s")
        row = self.pg.native(
            f"""SELECT count(*),
              count(*) FILTER (WHERE EXISTS (SELECT 1 FROM vectors v WHERE v.owner_kind = 'entry'
                   AND v.owner_rowid = e.rowid AND v.model_id = %(model)s)),
              count(*) FILTER (WHERE EXISTS (SELECT 1 FROM entry_anchors an JOIN entries x
                   ON x.rowid = an.anchor_rowid WHERE an.entry_rowid = e.rowid AND {visible_sql('x', '%(agent)s')})),
              count(*) FILTER (WHERE e.resonance >= 5 AND (e.last_activated IS NULL
                   OR e.last_activated < %(cutoff)s)),
              count(*) FILTER (WHERE EXISTS (SELECT 1 FROM vectors v WHERE v.owner_kind = 'entry'
                   AND v.owner_rowid = e.rowid AND v.model_id IS DISTINCT FROM %(model)s))
            FROM entries e WHERE {vis}""", {"agent": agent, "model": model, "cutoff": cutoff})[0]
        return tuple(int(x) for x in row)  # type: ignore[return-value]


class PgVectorRepo(VectorRepo):
    def generation(self) -> int:
        return int(self.db.scalar("SELECT counter FROM vectors_changes WHERE id = 1", default=0) or 0)

    def bump_generation(self) -> int:
        """The trigger on ``vectors`` already moved the counter for this transaction's writes; a bump without a
        vector write (a model change recorded) moves it explicitly."""
        self.db.execute("UPDATE vectors_changes SET counter = counter + 1 WHERE id = 1")
        return self.generation()

    # -- pgvector (issue 18 item 2) ----------------------------------------------------------------------------------
    def native_search(self) -> bool:
        """Whether this database searches vectors itself (pgvector enabled by
        :func:`m1nd.memory.core.enable_pgvector`)."""
        return bool(self.db.scalar(
            "SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND "
            "table_name = 'vectors' AND column_name = 'emb'",
            default=0))

    def record_model(self, model: str, dim: int) -> None:
        super().record_model(model, dim)
        if self.native_search():
            ensure_ann_indexes(self.db, dim)

    def nearest(self, kind: str, model: str, dim: int, query: list[float], k: int) -> list[tuple[int, float]]:
        """The ``k`` vectors of ``kind`` nearest to ``query`` among the model's, as ``(vector key, cosine
        similarity)``, best first (ties by key), through the HNSW index of this dimension and kind
        (:func:`ensure_ann_indexes`); ``hnsw.ef_search`` is raised to ``k`` (at least 100, at most pgvector's 1000)
        so the candidate list of the graph walk covers what is asked."""
        q = "[" + ",".join(repr(float(x)) for x in query) + "]"
        d = int(dim)
        pg = cast(PgMemoryDb, self.db)
        pg.native(f"SET LOCAL hnsw.ef_search = {min(1000, max(100, int(k)))}")
        rows = pg.native(
            f"SELECT rowid, 1 - (emb::vector({d}) <=> %(q)s::vector({d})) AS sim FROM vectors WHERE dim = {d} AND "
            f"owner_kind = %(kind)s AND model_id = %(model)s ORDER BY emb::vector({d}) <=> %(q)s::vector({d}) "
            "LIMIT %(k)s", {"q": q, "kind": kind, "model": model, "k": int(k)})
        return sorted(((int(r), float(sim)) for r, sim in rows), key=lambda t: (-t[1], t[0]))


class PgMemoryTx:
    """The repositories of one memory transaction on PostgreSQL (:class:`MemoryUnitOfWork`)."""

    def __init__(self, db: PgMemoryDb) -> None:
        self.db = db
        self.entries = PgEntryRepo(db)  # type: ignore[arg-type]
        self.sessions = SessionRepo(db)  # type: ignore[arg-type]
        self.relationships = RelationshipRepo(db)  # type: ignore[arg-type]
        self.registries = RegistryRepo(db)  # type: ignore[arg-type]
        self.backups = BackupRepo(db)  # type: ignore[arg-type]
        self.meta = MetaRepo(db)  # type: ignore[arg-type]
        self.vectors = PgVectorRepo(db)  # type: ignore[arg-type]
        self.wake = WakeRepo(db)  # type: ignore[arg-type]
        self.ritual = RitualRepo(db)  # type: ignore[arg-type]
        self.guesses = GuessLogRepo(db)  # type: ignore[arg-type]

    @contextlib.contextmanager
    def savepoint(self, name: str = "line") -> Iterator[None]:
        self.db.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            self.db.execute(f"ROLLBACK TO SAVEPOINT {name}")
            self.db.execute(f"RELEASE SAVEPOINT {name}")
            raise
        self.db.execute(f"RELEASE SAVEPOINT {name}")


def vector_repo(db: Any) -> VectorRepo:
    """The vector rows of either store for ``db`` (the embedding hook holds a database, not a unit of work)."""
    return PgVectorRepo(db) if getattr(db, "dialect", "sqlite") == "postgresql" else VectorRepo(db)


def ensure_ann_indexes(db: Any, dim: int) -> None:
    """The HNSW indexes of one dimension (:func:`m1nd.store.pg_memory_schema.ann_index_sql`), created once, in the
    caller's write transaction."""
    from m1nd.store.pg_memory_schema import ann_index_sql

    pg = cast(PgMemoryDb, db)
    for sql in ann_index_sql(dim):
        pg.native(sql)
