"""Schema of the knowledge memory on PostgreSQL (issue 18): the tables of :mod:`m1nd.store.memory_schema`, same names
and columns, in PostgreSQL's types, applied as component ``memory`` of :meth:`m1nd.store.pg.PgStore.migrate`.

Differences from SQLite, each for a reason:

* ``rowid`` is a ``BIGINT GENERATED ALWAYS AS IDENTITY`` column (SQLite's implicit rowid), so child tables keep
  their ``entry_rowid`` references unchanged and a migration copies ids over (``OVERRIDING SYSTEM VALUE``).
* Keyword search: ``entries_fts`` holds one ``tsvector`` per entry (title weight A, tags and identifiers B, summary
  C, body D; the ``english`` configuration stems like FTS5's porter tokenizer) with a GIN index, refreshed by the
  writing transaction as on SQLite; ``ts_rank_cd`` orders hits.
* Vectors: ``vec`` is ``BYTEA`` (float32 little-endian, as on SQLite). Semantic search runs on a local usearch
  mirror of them, kept in sync through ``vectors_changes`` (a change counter), because pgvector is not packaged for
  the server here; where the server has pgvector, the same rows can be indexed there later.
* Deleting an entry or chunk deletes its vectors through a trigger function, like SQLite's triggers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from m1nd.store.memory_schema import (
    APPLICABILITY,
    CATEGORIES,
    CONTENT_TYPES,
    ENTRY_TYPES,
    FACT_TYPES,
    RELATIONSHIP_TYPES,
    RESONANCE_TYPES,
    SEED_TIME,
    SESSION_TYPES,
    SOURCE_TYPES,
)

if TYPE_CHECKING:  # the module itself never imports psycopg
    from m1nd.store.pg import PgMigration, Tx

COMPONENT = "memory"


def _in(values: tuple[str, ...]) -> str:
    return ", ".join("'" + v + "'" for v in values)


_V1 = f"""
CREATE TABLE meta(key TEXT COLLATE "C" PRIMARY KEY, value TEXT COLLATE "C" NOT NULL);
CREATE TABLE categories(id TEXT COLLATE "C" PRIMARY KEY, description TEXT COLLATE "C" NOT NULL DEFAULT '', created_at TEXT COLLATE "C" NOT NULL);
CREATE TABLE agents(id TEXT COLLATE "C" PRIMARY KEY, description TEXT COLLATE "C" NOT NULL DEFAULT '', domain TEXT COLLATE "C",
                    created_at TEXT COLLATE "C" NOT NULL, updated_at TEXT COLLATE "C" NOT NULL);
CREATE TABLE projects(id TEXT COLLATE "C" PRIMARY KEY, name TEXT COLLATE "C" NOT NULL, path TEXT COLLATE "C", repo_url TEXT COLLATE "C", description TEXT COLLATE "C",
                      active INTEGER NOT NULL DEFAULT 1, created_at TEXT COLLATE "C" NOT NULL, updated_at TEXT COLLATE "C" NOT NULL);
CREATE TABLE applicability_types(id TEXT COLLATE "C" PRIMARY KEY, description TEXT COLLATE "C" NOT NULL DEFAULT '', scope TEXT COLLATE "C",
                                 created_at TEXT COLLATE "C" NOT NULL);
CREATE TABLE source_types(id TEXT COLLATE "C" PRIMARY KEY, description TEXT COLLATE "C" NOT NULL DEFAULT '', created_at TEXT COLLATE "C" NOT NULL);
CREATE TABLE entry_types(id TEXT COLLATE "C" PRIMARY KEY, description TEXT COLLATE "C" NOT NULL DEFAULT '', created_at TEXT COLLATE "C" NOT NULL);
CREATE TABLE content_types(id TEXT COLLATE "C" PRIMARY KEY, description TEXT COLLATE "C" NOT NULL DEFAULT '',
                           file_extensions TEXT COLLATE "C" NOT NULL DEFAULT '[]', created_at TEXT COLLATE "C" NOT NULL);
CREATE TABLE session_types(id TEXT COLLATE "C" PRIMARY KEY, description TEXT COLLATE "C" NOT NULL DEFAULT '', created_at TEXT COLLATE "C" NOT NULL);
CREATE TABLE relationship_types(id TEXT COLLATE "C" PRIMARY KEY, description TEXT COLLATE "C" NOT NULL DEFAULT '',
                                directional INTEGER NOT NULL DEFAULT 1, created_at TEXT COLLATE "C" NOT NULL);
CREATE TABLE sessions(
  id TEXT COLLATE "C" PRIMARY KEY, session_type TEXT COLLATE "C" NOT NULL REFERENCES session_types(id), project TEXT COLLATE "C" REFERENCES projects(id),
  started_at TEXT COLLATE "C" NOT NULL, ended_at TEXT COLLATE "C", created_by TEXT COLLATE "C");
CREATE INDEX sessions_project ON sessions(project);
CREATE TABLE entries(
  rowid BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id TEXT COLLATE "C" NOT NULL UNIQUE,
  title TEXT COLLATE "C" NOT NULL CHECK (char_length(title) BETWEEN 1 AND 500),
  body TEXT COLLATE "C" NOT NULL DEFAULT '',
  summary TEXT COLLATE "C",
  category TEXT COLLATE "C" NOT NULL REFERENCES categories(id),
  visibility TEXT COLLATE "C" NOT NULL DEFAULT 'public' CHECK (visibility IN ('public', 'private')),
  owner TEXT COLLATE "C",
  source_agent TEXT COLLATE "C" NOT NULL,
  source_project TEXT COLLATE "C" REFERENCES projects(id),
  source_type TEXT COLLATE "C" NOT NULL DEFAULT 'manual' REFERENCES source_types(id),
  entry_type TEXT COLLATE "C" NOT NULL DEFAULT 'primary' REFERENCES entry_types(id),
  content_type TEXT COLLATE "C" NOT NULL DEFAULT 'text' REFERENCES content_types(id),
  session_id TEXT COLLATE "C" REFERENCES sessions(id),
  domain TEXT COLLATE "C",
  ephemeral INTEGER NOT NULL DEFAULT 0 CHECK (ephemeral IN (0, 1)),
  resonance INTEGER NOT NULL DEFAULT 0,
  resonance_type TEXT COLLATE "C" CHECK (resonance_type IN ({_in(RESONANCE_TYPES)})),
  fact_type TEXT COLLATE "C" CHECK (fact_type IN ({_in(FACT_TYPES)})),
  fact_state TEXT COLLATE "C" CHECK (fact_state IN ('open', 'closed')),
  wake_phrases TEXT COLLATE "C" NOT NULL DEFAULT '[]',
  wake_order INTEGER,
  code_refs TEXT COLLATE "C" NOT NULL DEFAULT '[]',
  content_hash TEXT COLLATE "C" NOT NULL,
  dedup_hash TEXT COLLATE "C" NOT NULL,
  dedup_scope TEXT COLLATE "C" NOT NULL,
  dedup_exempt INTEGER NOT NULL DEFAULT 0,
  last_activated TEXT COLLATE "C",
  activation_count INTEGER NOT NULL DEFAULT 0,
  chunk_count INTEGER NOT NULL DEFAULT 0,
  embedding_model TEXT COLLATE "C",
  embedded_at TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL,
  updated_at TEXT COLLATE "C" NOT NULL,
  rev INTEGER NOT NULL DEFAULT 1,
  CHECK (visibility = 'public' OR owner IS NOT NULL)
);
CREATE INDEX entries_category ON entries(category);
CREATE INDEX entries_owner ON entries(owner, visibility);
CREATE INDEX entries_visibility ON entries(visibility);
CREATE INDEX entries_session ON entries(session_id);
CREATE INDEX entries_resonance_type ON entries(resonance_type);
CREATE INDEX entries_created ON entries(created_at);
CREATE INDEX entries_updated ON entries(updated_at);
CREATE INDEX entries_last_activated ON entries(last_activated);
CREATE INDEX entries_wake_order ON entries(wake_order);
CREATE INDEX entries_resonance ON entries(resonance);
CREATE UNIQUE INDEX entries_dedup ON entries(session_id, dedup_scope, category, dedup_hash)
  WHERE session_id IS NOT NULL AND dedup_exempt = 0;
CREATE TABLE entry_tags(
  rowid BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  entry_rowid BIGINT NOT NULL REFERENCES entries(rowid) ON DELETE CASCADE, tag TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (entry_rowid, tag));
CREATE INDEX entry_tags_tag ON entry_tags(tag);
CREATE TABLE entry_applicability(
  rowid BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  entry_rowid BIGINT NOT NULL REFERENCES entries(rowid) ON DELETE CASCADE,
  applicability_id TEXT COLLATE "C" NOT NULL REFERENCES applicability_types(id), PRIMARY KEY (entry_rowid, applicability_id));
CREATE INDEX entry_applicability_id ON entry_applicability(applicability_id);
CREATE TABLE entry_anchors(
  rowid BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  entry_rowid BIGINT NOT NULL REFERENCES entries(rowid) ON DELETE CASCADE,
  anchor_rowid BIGINT NOT NULL REFERENCES entries(rowid) ON DELETE CASCADE,
  similarity DOUBLE PRECISION, created_at TEXT COLLATE "C" NOT NULL, PRIMARY KEY (entry_rowid, anchor_rowid));
CREATE INDEX entry_anchors_anchor ON entry_anchors(anchor_rowid);
CREATE TABLE anchor_removed(
  entry_rowid BIGINT NOT NULL REFERENCES entries(rowid) ON DELETE CASCADE,
  anchor_rowid BIGINT NOT NULL REFERENCES entries(rowid) ON DELETE CASCADE, PRIMARY KEY (entry_rowid, anchor_rowid));
CREATE TABLE relationships(
  id TEXT COLLATE "C" PRIMARY KEY,
  from_rowid BIGINT NOT NULL REFERENCES entries(rowid) ON DELETE CASCADE,
  to_rowid BIGINT NOT NULL REFERENCES entries(rowid) ON DELETE CASCADE,
  type TEXT COLLATE "C" NOT NULL REFERENCES relationship_types(id), created_at TEXT COLLATE "C" NOT NULL,
  UNIQUE (from_rowid, to_rowid, type));
CREATE INDEX relationships_to ON relationships(to_rowid);
CREATE TABLE backups(
  rowid BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE, id TEXT COLLATE "C" PRIMARY KEY, entry_id TEXT COLLATE "C" NOT NULL, snapshot_json TEXT COLLATE "C" NOT NULL,
  operation TEXT COLLATE "C" NOT NULL CHECK (operation IN ('update', 'edit', 'append', 'prepend', 'delete', 'restore')),
  source_agent TEXT COLLATE "C", visibility TEXT COLLATE "C" NOT NULL, owner TEXT COLLATE "C", created_at TEXT COLLATE "C" NOT NULL, seq INTEGER NOT NULL DEFAULT 0);
CREATE INDEX backups_entry ON backups(entry_id, created_at, seq);
CREATE TABLE chunks(
  rowid BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  entry_rowid BIGINT NOT NULL REFERENCES entries(rowid) ON DELETE CASCADE,
  chunk_index INTEGER NOT NULL, token_offset INTEGER NOT NULL, token_count INTEGER NOT NULL, chunk_text TEXT COLLATE "C" NOT NULL,
  UNIQUE (entry_rowid, chunk_index));
CREATE TABLE vectors(
  rowid BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  owner_kind TEXT COLLATE "C" NOT NULL CHECK (owner_kind IN ('entry', 'chunk')), owner_rowid BIGINT NOT NULL,
  model_id TEXT COLLATE "C" NOT NULL, dim INTEGER NOT NULL, content_hash TEXT COLLATE "C" NOT NULL, vec BYTEA NOT NULL,
  UNIQUE (owner_kind, owner_rowid));
CREATE TABLE vectors_changes(id INTEGER PRIMARY KEY CHECK (id = 1), counter BIGINT NOT NULL);
INSERT INTO vectors_changes(id, counter) VALUES (1, 0);
CREATE FUNCTION m1nd_vectors_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM vectors WHERE owner_kind = TG_ARGV[0] AND owner_rowid = OLD.rowid;
  RETURN OLD;
END $$;
CREATE TRIGGER entries_vectors_gone AFTER DELETE ON entries FOR EACH ROW EXECUTE FUNCTION m1nd_vectors_gone('entry');
CREATE TRIGGER chunks_vectors_gone AFTER DELETE ON chunks FOR EACH ROW EXECUTE FUNCTION m1nd_vectors_gone('chunk');
CREATE FUNCTION m1nd_vectors_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE vectors_changes SET counter = counter + 1 WHERE id = 1;
  RETURN NULL;
END $$;
CREATE TRIGGER vectors_changed AFTER INSERT OR UPDATE OR DELETE ON vectors
  FOR EACH STATEMENT EXECUTE FUNCTION m1nd_vectors_changed();
CREATE TABLE wake_sessions(
  id TEXT COLLATE "C" PRIMARY KEY, agent TEXT COLLATE "C" NOT NULL, wake INTEGER, model_id TEXT COLLATE "C", plan_json TEXT COLLATE "C" NOT NULL,
  step INTEGER NOT NULL DEFAULT 0, prev_step INTEGER, last_response_json TEXT COLLATE "C", last_status TEXT COLLATE "C",
  counters_json TEXT COLLATE "C" NOT NULL DEFAULT '{{}}', created_at TEXT COLLATE "C" NOT NULL, completed_at TEXT COLLATE "C");
CREATE INDEX wake_sessions_agent ON wake_sessions(agent, wake);
CREATE TABLE wake_guesses(
  rowid BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE, session_id TEXT COLLATE "C" NOT NULL REFERENCES wake_sessions(id) ON DELETE CASCADE,
  position INTEGER NOT NULL, agent TEXT COLLATE "C" NOT NULL, wake INTEGER, model_id TEXT COLLATE "C", bloom_id TEXT COLLATE "C" NOT NULL,
  chunk_index INTEGER NOT NULL, chunk_total INTEGER NOT NULL, bloom_position INTEGER NOT NULL,
  bloom_total INTEGER NOT NULL, title_shown TEXT COLLATE "C" NOT NULL, guess TEXT COLLATE "C" NOT NULL, phrase_source TEXT COLLATE "C" NOT NULL,
  phrases_json TEXT COLLATE "C" NOT NULL, match_kind TEXT COLLATE "C" NOT NULL, match_index INTEGER, bucket TEXT COLLATE "C" NOT NULL,
  content_sha256 TEXT COLLATE "C" NOT NULL, ts TEXT COLLATE "C" NOT NULL, embedding BYTEA, embedding_model TEXT COLLATE "C",
  sim_phrase DOUBLE PRECISION, sim_content DOUBLE PRECISION, sim_title DOUBLE PRECISION,
  sim_prior DOUBLE PRECISION, sim_prior_null DOUBLE PRECISION, prior_n INTEGER,
  sim_prior_same DOUBLE PRECISION, sim_prior_null_same DOUBLE PRECISION, prior_n_same INTEGER,
  sim_prior_cross DOUBLE PRECISION, sim_prior_null_cross DOUBLE PRECISION, prior_n_cross INTEGER,
  scored_at TEXT COLLATE "C", PRIMARY KEY (session_id, position));
CREATE INDEX wake_guesses_agent ON wake_guesses(agent, scored_at);
CREATE INDEX wake_guesses_bloom ON wake_guesses(bloom_id);
CREATE TABLE wake_phrase_vectors(key TEXT COLLATE "C" PRIMARY KEY, model_id TEXT COLLATE "C" NOT NULL, vec BYTEA NOT NULL);
CREATE TABLE entries_fts(
  rowid BIGINT PRIMARY KEY REFERENCES entries(rowid) ON DELETE CASCADE, doc tsvector NOT NULL);
CREATE INDEX entries_fts_doc ON entries_fts USING GIN (doc);
CREATE TEXT SEARCH DICTIONARY m1nd_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION m1nd (COPY = english);
ALTER TEXT SEARCH CONFIGURATION m1nd ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword,
  hword_part WITH m1nd_stem;
CREATE FUNCTION eff_res(resonance BIGINT, resonance_type TEXT, last_activated TEXT, created_at TEXT,
                        now_ms DOUBLE PRECISION) RETURNS DOUBLE PRECISION
LANGUAGE plpgsql IMMUTABLE SET timezone = 'UTC' AS $$
DECLARE
  r BIGINT := coalesce(resonance, 0);
  clock TEXT := coalesce(last_activated, created_at);
  days DOUBLE PRECISION;
  base DOUBLE PRECISION;
BEGIN
  IF resonance_type IN ('foundational', 'transformative') OR r = 0 OR clock IS NULL OR clock = '' THEN
    RETURN r;
  END IF;
  -- stored times are canonical RFC 3339 (normalised on input); anything else counts as undecayed, as in Python
  -- (a pattern test, not an exception block: a sub-transaction per row would make ORDER BY eff_res slow)
  IF clock !~ '^[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}([T ][0-9]{{2}}:[0-9]{{2}}(:[0-9]{{2}}([.][0-9]+)?)?)?(Z|z|[+-][0-9]{{2}}(:?[0-9]{{2}})?)?$' THEN
    RETURN r;
  END IF;
  days := greatest(0.0, (coalesce(now_ms, 0) - extract(epoch FROM clock::timestamptz)::double precision * 1000.0)
                        / 86400000.0);
  base := CASE WHEN r <= 3 THEN 0.90 WHEN r <= 5 THEN 0.95 ELSE 0.975 END;
  RETURN r * power(base, days / 7.0);
END $$;
"""


def _seed(tx: Tx) -> None:
    import secrets

    t = SEED_TIME
    tx.execute(_V1)
    tx.executemany("INSERT INTO categories(id, description, created_at) VALUES (%s, %s, %s)",
                   [(i, d, t) for i, d in CATEGORIES])
    tx.executemany("INSERT INTO source_types(id, description, created_at) VALUES (%s, %s, %s)",
                   [(i, d, t) for i, d in SOURCE_TYPES])
    tx.executemany("INSERT INTO entry_types(id, description, created_at) VALUES (%s, %s, %s)",
                   [(i, d, t) for i, d in ENTRY_TYPES])
    tx.executemany("INSERT INTO content_types(id, description, file_extensions, created_at) VALUES (%s, %s, %s, %s)",
                   [(i, d, x, t) for i, d, x in CONTENT_TYPES])
    tx.executemany("INSERT INTO session_types(id, description, created_at) VALUES (%s, %s, %s)",
                   [(i, d, t) for i, d in SESSION_TYPES])
    tx.executemany("INSERT INTO relationship_types(id, description, directional, created_at) "
                   "VALUES (%s, %s, %s, %s)", [(i, d, k, t) for i, d, k in RELATIONSHIP_TYPES])
    tx.executemany("INSERT INTO applicability_types(id, description, scope, created_at) VALUES (%s, %s, %s, %s)",
                   [(i, d, s, t) for i, d, s in APPLICABILITY])
    # schema_version 2: the SQLite store's dedup-scope migration is built into this first step
    tx.executemany("INSERT INTO meta(key, value) VALUES (%s, %s)",
                   [("schema_version", "2"), ("wake_secret", secrets.token_hex(32))])


# 2: the keyword index without GIN's pending list (issue 18, search speed). With ``fastupdate`` on, inserted
# documents wait in an unsorted list that every search scans until a VACUUM merges it: right after a bulk add the
# keyword search read 3.5x the buffers (median 291 vs 82 at 10k entries). Inserts now update the index directly.
_V2 = """
ALTER INDEX entries_fts_doc SET (fastupdate = off);
SELECT gin_clean_pending_list('entries_fts_doc'::regclass);
"""

MIGRATIONS: list[PgMigration] = [_seed, _V2]


# -- pgvector (issue 18 item 2) ----------------------------------------------------------------------------------------
#: a second component, applied only on a server that offers the ``vector`` extension (checked at every open, so a
#: server that gains pgvector later is picked up then)
PGVECTOR_COMPONENT = "memory_pgvector"

# ``vec`` stays the stored form (float32 little-endian, as on SQLite, so migration both ways and the local mirror
# keep working); ``emb`` is the same vector as pgvector's type, kept by a trigger so every writer (tools, migrate,
# re-embed) fills it, with an HNSW index per dimension and kind (:func:`ann_index_sql`). PostgreSQL has no bit cast
# from 4 bytes to a float4, so the trigger decodes IEEE 754 by arithmetic: exact, since every step multiplies by a
# power of two.
_PGVECTOR_V1 = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE FUNCTION m1nd_f32le(b BYTEA) RETURNS REAL[] LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  n INTEGER := length(b) / 4;
  out REAL[] := array_fill(0::REAL, ARRAY[n]);
  bits BIGINT;
  e INTEGER;
  m BIGINT;
  v DOUBLE PRECISION;
BEGIN
  FOR i IN 0 .. n - 1 LOOP
    bits := get_byte(b, 4 * i)::BIGINT | (get_byte(b, 4 * i + 1)::BIGINT << 8)
            | (get_byte(b, 4 * i + 2)::BIGINT << 16) | (get_byte(b, 4 * i + 3)::BIGINT << 24);
    e := ((bits >> 23) & 255)::INTEGER;
    m := bits & 8388607;
    IF e = 0 THEN
      v := m * power(2::DOUBLE PRECISION, -149);
    ELSE
      v := (8388608 + m) * power(2::DOUBLE PRECISION, e - 150);
    END IF;
    IF (bits >> 31) = 1 THEN
      v := -v;
    END IF;
    out[i + 1] := v;
  END LOOP;
  RETURN out;
END $$;
ALTER TABLE vectors ADD COLUMN emb vector;
CREATE FUNCTION m1nd_vectors_emb() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.emb := m1nd_f32le(NEW.vec)::vector;
  RETURN NEW;
END $$;
CREATE TRIGGER vectors_emb BEFORE INSERT OR UPDATE OF vec ON vectors FOR EACH ROW EXECUTE FUNCTION m1nd_vectors_emb();
UPDATE vectors SET emb = m1nd_f32le(vec)::vector;
"""



def ann_index_sql(dim: int) -> list[str]:
    """HNSW indexes (cosine) over the entry and the chunk vectors of one dimension. pgvector indexes a column of
    fixed dimension only, so each index is over ``emb::vector(dim)`` restricted to that dimension and kind; the
    nearest-neighbour query spells the same expression (:meth:`m1nd.store.pg_memory_repo.PgVectorRepo.nearest`)."""
    d = int(dim)
    return ["SELECT pg_advisory_xact_lock(hashtext('m1nd_vector_indexes'))"] + [
        f"CREATE INDEX IF NOT EXISTS vectors_hnsw_{kind}_{d} ON vectors USING hnsw ((emb::vector({d})) "
        f"vector_cosine_ops) WHERE dim = {d} AND owner_kind = '{kind}'" for kind in ("entry", "chunk")]


def _pgvector_v1(tx: Tx) -> None:
    tx.execute(_PGVECTOR_V1)
    dim = tx.scalar("SELECT value FROM meta WHERE key = 'embed_dim'")
    if dim:  # vectors written before the extension came: index the recorded model's dimension now
        for sql in ann_index_sql(int(dim)):
            tx.execute(sql)


PGVECTOR_MIGRATIONS: list[PgMigration] = [_pgvector_v1]


def pgvector_offered(tx: Tx) -> bool:
    """Whether the server can provide pgvector (installed in this database, or available to create)."""
    return bool(tx.scalar("SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'", default=0))
