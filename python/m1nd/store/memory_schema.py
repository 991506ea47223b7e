"""Schema of ``memory.db`` (spec memory.md §1, §2): ordered migrations keyed by ``PRAGMA user_version``.

Rules for later migrations: append, never edit a shipped step. A new column is ``ALTER TABLE … ADD COLUMN … DEFAULT``
plus a backfill guarded by ``WHERE col IS NULL`` so re-running a half-applied step is harmless.

Design notes
------------
* ``entries.rowid`` is the internal key every child table references (tags, applicability, anchors, relationships,
  chunks, vectors); the public ``kn-`` id is a separate UNIQUE column so renames of the key never ripple.
* Dedup (§6) is enforced by the partial unique index ``entries_dedup``: the write is ``INSERT … ON CONFLICT DO
  NOTHING`` inside the command's transaction, so two concurrent writers can never both store the same fact.
* ``entries_fts`` is an FTS5 index over ``entries`` maintained by the writing transaction itself (``m1nd.memory``
  refreshes the row after every write). It is declared *contentless with delete support* rather than with
  ``content='entries'``: two of its columns (``tags_text``, ``ident_text``) are derived and do not exist in
  ``entries``, and an external-content ``delete`` would need the exact old derived values. Nothing ever reads column
  values back from the index (hits join ``entries`` by rowid), so no content copy is needed.
* ``entries_owner`` is ``(owner, visibility)`` so the "own private entries" counts (hidden-private hint,
  ``--mine``, ``stats``) are index-only.
* ``chunks``, ``vectors``, ``wake_*`` exist from the start so the embedding and wake issues only add code.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from m1nd.store.db import Database, Migration

SEED_TIME = "1970-01-01T00:00:00.000Z"

CATEGORIES = (
    ("pattern", "Reusable solutions and approaches"),
    ("technique", "How to do a specific thing"),
    ("insight", "Realisations and lessons learned"),
    ("gotcha", "Traps, pitfalls and surprising behaviour"),
    ("reference", "Facts, people, quotes and pointers worth keeping"),
    ("decision", "Choices made and why"),
    ("bloom", "Identity memories surfaced by wake"),
    ("session", "Session summaries"),
    ("thread", "Open questions and commitments"),
)
SOURCE_TYPES = (
    ("manual", "Written by hand"),
    ("ram", "Captured from working memory"),
    ("cache", "Imported from a cache"),
    ("agent_session", "Written by an agent during a session"),
)
ENTRY_TYPES = (
    ("primary", "An original entry"),
    ("summary", "A summary of other entries"),
    ("synthesis", "A synthesis across entries"),
)
CONTENT_TYPES = (
    ("text", "Prose or notes", '[".md", ".txt"]'),
    ("code", "Source code", '[".py", ".rs", ".ts", ".js", ".go", ".java", ".c", ".cpp", ".sh"]'),
    ("config", "Configuration", '[".toml", ".yaml", ".yml", ".json", ".ini"]'),
    ("data", "Structured data", '[".csv", ".jsonl", ".tsv"]'),
    ("binary", "Binary or opaque data", "[]"),
)
SESSION_TYPES = (
    ("claude_desktop", "Claude desktop conversation"),
    ("claude_code", "Claude Code session"),
    ("agent_task", "An agent working on a task"),
    ("manual", "Created by hand"),
    ("development", "Development work"),
    ("review", "Review work"),
    ("exploration", "Exploration and research"),
)
RELATIONSHIP_TYPES = (
    ("related", "Related entries", 0),
    ("supersedes", "Replaces an older entry", 1),
    ("extends", "Builds on another entry", 1),
    ("implements", "Realises an idea described elsewhere", 1),
    ("contradicts", "Disagrees with another entry", 0),
    ("example_of", "Is an instance of a general entry", 1),
    ("extracted_from", "Was extracted from a session entry", 1),
)
APPLICABILITY = (
    ("cross_platform", "Applies on every platform", None),
    ("linux", "Linux", None),
    ("macos", "macOS", None),
    ("windows", "Windows", None),
    ("rust", "Rust code", None),
    ("python", "Python code", None),
    ("typescript", "TypeScript code", None),
    ("shell", "Shell scripts", None),
    ("async", "Asynchronous code", None),
    ("cli", "Command-line tools", None),
    ("api", "APIs and services", None),
)

RESONANCE_TYPES = ("foundational", "transformative", "relational", "operational", "ephemeral", "session")
FACT_TYPES = ("decision", "insight", "person", "quote", "thread_opened", "commitment", "thread_closed")

_V1_TABLES = f"""
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE categories(id TEXT PRIMARY KEY, description TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL);
CREATE TABLE agents(id TEXT PRIMARY KEY, description TEXT NOT NULL DEFAULT '', domain TEXT,
                    created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE projects(id TEXT PRIMARY KEY, name TEXT NOT NULL, path TEXT, repo_url TEXT, description TEXT,
                      active INTEGER NOT NULL DEFAULT 1, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE applicability_types(id TEXT PRIMARY KEY, description TEXT NOT NULL DEFAULT '', scope TEXT,
                                 created_at TEXT NOT NULL);
CREATE TABLE source_types(id TEXT PRIMARY KEY, description TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL);
CREATE TABLE entry_types(id TEXT PRIMARY KEY, description TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL);
CREATE TABLE content_types(id TEXT PRIMARY KEY, description TEXT NOT NULL DEFAULT '',
                           file_extensions TEXT NOT NULL DEFAULT '[]', created_at TEXT NOT NULL);
CREATE TABLE session_types(id TEXT PRIMARY KEY, description TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL);
CREATE TABLE relationship_types(id TEXT PRIMARY KEY, description TEXT NOT NULL DEFAULT '',
                                directional INTEGER NOT NULL DEFAULT 1, created_at TEXT NOT NULL);

CREATE TABLE sessions(
  id TEXT PRIMARY KEY,
  session_type TEXT NOT NULL REFERENCES session_types(id),
  project TEXT REFERENCES projects(id),
  started_at TEXT NOT NULL,
  ended_at TEXT,
  created_by TEXT
);
CREATE INDEX sessions_project ON sessions(project);

CREATE TABLE entries(
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 500),
  body TEXT NOT NULL DEFAULT '',
  summary TEXT,
  category TEXT NOT NULL REFERENCES categories(id),
  visibility TEXT NOT NULL DEFAULT 'public' CHECK (visibility IN ('public', 'private')),
  owner TEXT,
  source_agent TEXT NOT NULL,
  source_project TEXT REFERENCES projects(id),
  source_type TEXT NOT NULL DEFAULT 'manual' REFERENCES source_types(id),
  entry_type TEXT NOT NULL DEFAULT 'primary' REFERENCES entry_types(id),
  content_type TEXT NOT NULL DEFAULT 'text' REFERENCES content_types(id),
  session_id TEXT REFERENCES sessions(id),
  domain TEXT,
  ephemeral INTEGER NOT NULL DEFAULT 0 CHECK (ephemeral IN (0, 1)),
  resonance INTEGER NOT NULL DEFAULT 0,
  resonance_type TEXT CHECK (resonance_type IN ({", ".join(repr(t) for t in RESONANCE_TYPES)})),
  fact_type TEXT CHECK (fact_type IN ({", ".join(repr(t) for t in FACT_TYPES)})),
  fact_state TEXT CHECK (fact_state IN ('open', 'closed')),
  wake_phrases TEXT NOT NULL DEFAULT '[]',
  wake_order INTEGER,
  code_refs TEXT NOT NULL DEFAULT '[]',
  content_hash TEXT NOT NULL,
  dedup_hash TEXT NOT NULL,
  dedup_scope TEXT NOT NULL,
  dedup_exempt INTEGER NOT NULL DEFAULT 0,
  last_activated TEXT,
  activation_count INTEGER NOT NULL DEFAULT 0,
  chunk_count INTEGER NOT NULL DEFAULT 0,
  embedding_model TEXT,
  embedded_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
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
  entry_rowid INTEGER NOT NULL REFERENCES entries(rowid) ON DELETE CASCADE,
  tag TEXT NOT NULL,
  PRIMARY KEY (entry_rowid, tag)
);
CREATE INDEX entry_tags_tag ON entry_tags(tag);

CREATE TABLE entry_applicability(
  entry_rowid INTEGER NOT NULL REFERENCES entries(rowid) ON DELETE CASCADE,
  applicability_id TEXT NOT NULL REFERENCES applicability_types(id),
  PRIMARY KEY (entry_rowid, applicability_id)
);
CREATE INDEX entry_applicability_id ON entry_applicability(applicability_id);

CREATE TABLE entry_anchors(
  entry_rowid INTEGER NOT NULL REFERENCES entries(rowid) ON DELETE CASCADE,
  anchor_rowid INTEGER NOT NULL REFERENCES entries(rowid) ON DELETE CASCADE,
  similarity REAL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (entry_rowid, anchor_rowid)
);
CREATE INDEX entry_anchors_anchor ON entry_anchors(anchor_rowid);

CREATE TABLE anchor_removed(
  entry_rowid INTEGER NOT NULL REFERENCES entries(rowid) ON DELETE CASCADE,
  anchor_rowid INTEGER NOT NULL REFERENCES entries(rowid) ON DELETE CASCADE,
  PRIMARY KEY (entry_rowid, anchor_rowid)
);

CREATE TABLE relationships(
  id TEXT PRIMARY KEY,
  from_rowid INTEGER NOT NULL REFERENCES entries(rowid) ON DELETE CASCADE,
  to_rowid INTEGER NOT NULL REFERENCES entries(rowid) ON DELETE CASCADE,
  type TEXT NOT NULL REFERENCES relationship_types(id),
  created_at TEXT NOT NULL,
  UNIQUE (from_rowid, to_rowid, type)
);
CREATE INDEX relationships_to ON relationships(to_rowid);

CREATE TABLE backups(
  id TEXT PRIMARY KEY,
  entry_id TEXT NOT NULL,
  snapshot_json TEXT NOT NULL,
  operation TEXT NOT NULL CHECK (operation IN ('update', 'edit', 'append', 'prepend', 'delete', 'restore')),
  source_agent TEXT,
  visibility TEXT NOT NULL,
  owner TEXT,
  created_at TEXT NOT NULL,
  seq INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX backups_entry ON backups(entry_id, created_at, seq);

CREATE TABLE chunks(
  rowid INTEGER PRIMARY KEY,
  entry_rowid INTEGER NOT NULL REFERENCES entries(rowid) ON DELETE CASCADE,
  chunk_index INTEGER NOT NULL,
  token_offset INTEGER NOT NULL,
  token_count INTEGER NOT NULL,
  chunk_text TEXT NOT NULL,
  UNIQUE (entry_rowid, chunk_index)
);

CREATE TABLE vectors(
  rowid INTEGER PRIMARY KEY,
  owner_kind TEXT NOT NULL CHECK (owner_kind IN ('entry', 'chunk')),
  owner_rowid INTEGER NOT NULL,
  model_id TEXT NOT NULL,
  dim INTEGER NOT NULL,
  content_hash TEXT NOT NULL,
  vec BLOB NOT NULL,
  UNIQUE (owner_kind, owner_rowid)
);
CREATE TRIGGER entries_vectors_gone AFTER DELETE ON entries BEGIN
  DELETE FROM vectors WHERE owner_kind = 'entry' AND owner_rowid = old.rowid;
END;
CREATE TRIGGER chunks_vectors_gone AFTER DELETE ON chunks BEGIN
  DELETE FROM vectors WHERE owner_kind = 'chunk' AND owner_rowid = old.rowid;
END;

CREATE TABLE wake_sessions(
  id TEXT PRIMARY KEY,
  agent TEXT NOT NULL,
  wake INTEGER,
  model_id TEXT,
  plan_json TEXT NOT NULL,
  step INTEGER NOT NULL DEFAULT 0,
  prev_step INTEGER,
  last_response_json TEXT,
  last_status TEXT,
  counters_json TEXT NOT NULL DEFAULT '{{}}',
  created_at TEXT NOT NULL,
  completed_at TEXT
);
CREATE INDEX wake_sessions_agent ON wake_sessions(agent, wake);

CREATE TABLE wake_guesses(
  session_id TEXT NOT NULL REFERENCES wake_sessions(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  agent TEXT NOT NULL,
  wake INTEGER,
  model_id TEXT,
  bloom_id TEXT NOT NULL,
  chunk_index INTEGER NOT NULL,
  chunk_total INTEGER NOT NULL,
  bloom_position INTEGER NOT NULL,
  bloom_total INTEGER NOT NULL,
  title_shown TEXT NOT NULL,
  guess TEXT NOT NULL,
  phrase_source TEXT NOT NULL,
  phrases_json TEXT NOT NULL,
  match_kind TEXT NOT NULL,
  match_index INTEGER,
  bucket TEXT NOT NULL,
  content_sha256 TEXT NOT NULL,
  ts TEXT NOT NULL,
  embedding BLOB,
  embedding_model TEXT,
  sim_phrase REAL, sim_content REAL, sim_title REAL,
  sim_prior REAL, sim_prior_null REAL, prior_n INTEGER,
  sim_prior_same REAL, sim_prior_null_same REAL, prior_n_same INTEGER,
  sim_prior_cross REAL, sim_prior_null_cross REAL, prior_n_cross INTEGER,
  scored_at TEXT,
  PRIMARY KEY (session_id, position)
);
CREATE INDEX wake_guesses_agent ON wake_guesses(agent, scored_at);
CREATE INDEX wake_guesses_bloom ON wake_guesses(bloom_id);

CREATE TABLE wake_phrase_vectors(key TEXT PRIMARY KEY, model_id TEXT NOT NULL, vec BLOB NOT NULL);

CREATE VIRTUAL TABLE entries_fts USING fts5(
  title, body, summary, tags_text, ident_text,
  content='', contentless_delete=1,
  tokenize='porter unicode61 remove_diacritics 2'
);
"""


def _v1(db: Database) -> None:
    for stmt in _split(_V1_TABLES):
        db.execute(stmt)
    t = SEED_TIME
    db.executemany("INSERT INTO categories(id, description, created_at) VALUES (?, ?, ?)",
                   [(i, d, t) for i, d in CATEGORIES])
    db.executemany("INSERT INTO source_types(id, description, created_at) VALUES (?, ?, ?)",
                   [(i, d, t) for i, d in SOURCE_TYPES])
    db.executemany("INSERT INTO entry_types(id, description, created_at) VALUES (?, ?, ?)",
                   [(i, d, t) for i, d in ENTRY_TYPES])
    db.executemany("INSERT INTO content_types(id, description, file_extensions, created_at) VALUES (?, ?, ?, ?)",
                   [(i, d, x, t) for i, d, x in CONTENT_TYPES])
    db.executemany("INSERT INTO session_types(id, description, created_at) VALUES (?, ?, ?)",
                   [(i, d, t) for i, d in SESSION_TYPES])
    db.executemany("INSERT INTO relationship_types(id, description, directional, created_at) VALUES (?, ?, ?, ?)",
                   [(i, d, k, t) for i, d, k in RELATIONSHIP_TYPES])
    db.executemany("INSERT INTO applicability_types(id, description, scope, created_at) VALUES (?, ?, ?, ?)",
                   [(i, d, s, t) for i, d, s in APPLICABILITY])
    db.executemany("INSERT INTO meta(key, value) VALUES (?, ?)",
                   [("schema_version", "1"), ("wake_secret", secrets.token_hex(32))])


def _split(script: str) -> list[str]:
    """Split a DDL script on top-level semicolons (trigger bodies keep theirs)."""
    out, buf, depth = [], [], 0
    for line in script.splitlines():
        s = line.strip()
        if not s:
            continue
        buf.append(line)
        upper = s.upper()
        if upper.startswith("CREATE TRIGGER"):
            depth += 1
        if depth and upper == "END;":
            depth -= 1
            out.append("\n".join(buf))
            buf = []
        elif not depth and s.endswith(";"):
            out.append("\n".join(buf))
            buf = []
    if buf:
        out.append("\n".join(buf))
    return out


# v2 (issue 14): visibility is part of a duplicate's identity. The scope was the owner (private) or the source
# agent (public), so an agent's public entry collided with its own private twin and was never written. Splitting
# scopes by visibility only separates rows that shared a key before, so the unique index cannot be violated.
_V2 = """
UPDATE entries SET dedup_scope = CASE WHEN visibility = 'private' THEN 'private:' || coalesce(owner, source_agent)
  ELSE 'public:' || source_agent END;
UPDATE meta SET value = '2' WHERE key = 'schema_version';
"""

MIGRATIONS: list[Migration] = [_v1, _V2]
