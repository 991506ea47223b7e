"""Migrations of ``graph.db`` (spec graph.md §12, learning.md §6), applied in order by ``PRAGMA user_version``."""

from __future__ import annotations

GRAPH_MIGRATIONS: list[str] = [
    # 1: the code graph
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
    CREATE TABLE roots (
        id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, namespace TEXT, is_primary INTEGER NOT NULL DEFAULT 0,
        last_ingest_ms INTEGER, git_head TEXT, git_state TEXT, git_blob BLOB, report_json TEXT);
    CREATE TABLE files (
        root_id INTEGER NOT NULL REFERENCES roots(id) ON DELETE CASCADE, relpath TEXT NOT NULL,
        size INTEGER, mtime_ns INTEGER, content_hash TEXT, lang TEXT, is_test INTEGER,
        extractor_version INTEGER, extract_blob BLOB, external_imports_json TEXT, parse_error TEXT,
        PRIMARY KEY (root_id, relpath)) WITHOUT ROWID;
    CREATE TABLE nodes (
        id INTEGER PRIMARY KEY, ext_id TEXT NOT NULL UNIQUE, label TEXT NOT NULL, qname TEXT, kind INTEGER NOT NULL,
        lang TEXT, root_id INTEGER REFERENCES roots(id) ON DELETE CASCADE, source_path TEXT, line_start INTEGER,
        line_end INTEGER, signature TEXT, doc TEXT, is_test INTEGER, content_hash TEXT, last_change_ms INTEGER,
        churn REAL, commit_count INTEGER, embed_hash TEXT);
    CREATE INDEX nodes_label ON nodes(label);
    CREATE INDEX nodes_source_path ON nodes(source_path);
    CREATE TABLE edges (
        src INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
        dst INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
        relation INTEGER NOT NULL, w0 REAL NOT NULL, w REAL NOT NULL, count INTEGER NOT NULL DEFAULT 1,
        n_ltp INTEGER NOT NULL DEFAULT 0, n_ltd INTEGER NOT NULL DEFAULT 0, updated_ms INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (src, dst, relation)) WITHOUT ROWID;
    CREATE INDEX edges_dst ON edges(dst);
    CREATE TABLE node_vectors (embed_hash TEXT PRIMARY KEY, model_id TEXT, dim INTEGER, vec BLOB) WITHOUT ROWID;
    INSERT INTO meta(key, value) VALUES ('graph_generation', '0'), ('weights_generation', '0'),
        ('schema_version', '1'), ('queries_total', '0');
    """,
    # 2: learning, baselines and trails
    """
    CREATE TABLE baselines (
        id INTEGER PRIMARY KEY, kind TEXT NOT NULL CHECK (kind IN ('server_start', 'manual')), created_ms INTEGER,
        pid INTEGER, graph_generation INTEGER, weights_generation INTEGER, node_count INTEGER, edge_count INTEGER,
        nodes_blob BLOB, weights_blob BLOB, files_blob BLOB);
    CREATE TABLE learn_log (
        id INTEGER PRIMARY KEY, agent_id TEXT, query TEXT, feedback TEXT, strength REAL, node_ids_json TEXT,
        edges_adjusted INTEGER, created_ms INTEGER);
    CREATE TABLE trails (
        trail_id TEXT PRIMARY KEY, agent_id TEXT, label TEXT, status TEXT, summary TEXT, tags_json TEXT,
        visited_json TEXT, hypotheses_json TEXT, conclusions_json TEXT, open_questions_json TEXT, boosts_json TEXT,
        graph_generation INTEGER, created_ms INTEGER, last_modified_ms INTEGER, source_trails_json TEXT,
        merged_into TEXT, resumed_by_json TEXT);
    CREATE TABLE trail_tags (
        trail_id TEXT NOT NULL REFERENCES trails(trail_id) ON DELETE CASCADE, tag TEXT NOT NULL,
        PRIMARY KEY (trail_id, tag)) WITHOUT ROWID;
    CREATE TABLE trail_seq (agent_slug TEXT PRIMARY KEY, next INTEGER NOT NULL) WITHOUT ROWID;
    """,
    # 3: perspectives (perspectives.md §1): one row per open perspective, state as compact JSON
    """
    CREATE TABLE perspectives (
        id TEXT PRIMARY KEY, agent TEXT NOT NULL, state TEXT NOT NULL, updated_ms INTEGER NOT NULL) WITHOUT ROWID;
    CREATE INDEX perspectives_agent ON perspectives(agent);
    CREATE INDEX perspectives_updated ON perspectives(updated_ms);
    """,
    # 4: the body terms of each file's definitions (ranking issue), kept beside the extract blob so that neither the
    # resolver (which re-reads blobs) nor the lexical index build (which reads only terms) decodes the other's data
    """
    ALTER TABLE files ADD COLUMN terms_blob BLOB;
    """,
    # 5: 'ingest' baselines (the graph as an ingest found it), so that one-shot CLI calls have a previous state to
    # drift from; SQLite cannot alter a CHECK constraint, so the table is rebuilt
    """
    CREATE TABLE baselines_v5 (
        id INTEGER PRIMARY KEY, kind TEXT NOT NULL CHECK (kind IN ('server_start', 'manual', 'ingest')),
        created_ms INTEGER, pid INTEGER, graph_generation INTEGER, weights_generation INTEGER, node_count INTEGER,
        edge_count INTEGER, nodes_blob BLOB, weights_blob BLOB, files_blob BLOB);
    INSERT INTO baselines_v5 SELECT id, kind, created_ms, pid, graph_generation, weights_generation, node_count,
        edge_count, nodes_blob, weights_blob, files_blob FROM baselines;
    DROP TABLE baselines;
    ALTER TABLE baselines_v5 RENAME TO baselines;
    """,
    # 6: each agent's priming boosts (warmup, trail resume), so that they outlive the process that set them
    """
    CREATE TABLE agent_boosts (
        agent_id TEXT NOT NULL, ext_id TEXT NOT NULL, boost REAL NOT NULL, created_ms INTEGER NOT NULL,
        source TEXT NOT NULL, PRIMARY KEY (agent_id, ext_id)) WITHOUT ROWID;
    """,
]
