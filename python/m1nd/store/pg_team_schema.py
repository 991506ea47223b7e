"""Schema of trails and learned weights on PostgreSQL (issue 18), component ``learning`` of
:meth:`m1nd.store.pg.PgStore.migrate`: the ``graph.db`` tables of :mod:`m1nd.store.graph_schema` (same names and
columns) plus a ``project`` column, because one server holds the trails and learned weights of every project a team
works on, while each machine's code graph — and so each ``graph.db`` — holds one.

Differences from SQLite, each for a reason:

* ``project`` leads every key and index: every statement is scoped to one project (:func:`m1nd.config.team_project`).
* ``learned_edges`` replaces the learned columns of ``edges`` (the edges themselves are local): one row per learned
  edge keyed by external ids, with the base weight ``w0`` the learning started from, the learned ``w`` and ``seq``,
  drawn from a sequence on every change, so that a process replays only what changed since it last looked.
  Writers of one project are serialized (an advisory lock held to ``COMMIT``), so ``seq`` order is commit order
  and a reader never skips a change committed after a later one.
* ``learning_generation`` is the per-project ``weights_generation`` of ``graph.db``'s ``meta``.
* Every TEXT column is ``COLLATE "C"``: ids sort byte-wise as on SQLite whatever the database locale.
"""

from __future__ import annotations

COMPONENT = "learning"

_V1 = """
CREATE TABLE trails(
    project TEXT COLLATE "C" NOT NULL, trail_id TEXT COLLATE "C" NOT NULL, agent_id TEXT COLLATE "C",
    label TEXT COLLATE "C", status TEXT COLLATE "C", summary TEXT COLLATE "C", tags_json TEXT COLLATE "C",
    visited_json TEXT COLLATE "C", hypotheses_json TEXT COLLATE "C", conclusions_json TEXT COLLATE "C",
    open_questions_json TEXT COLLATE "C", boosts_json TEXT COLLATE "C", graph_generation BIGINT, created_ms BIGINT,
    last_modified_ms BIGINT, source_trails_json TEXT COLLATE "C", merged_into TEXT COLLATE "C",
    resumed_by_json TEXT COLLATE "C", PRIMARY KEY (project, trail_id));
CREATE INDEX trails_recent ON trails(project, last_modified_ms DESC, trail_id);
CREATE TABLE trail_tags(
    project TEXT COLLATE "C" NOT NULL, trail_id TEXT COLLATE "C" NOT NULL, tag TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (project, trail_id, tag),
    FOREIGN KEY (project, trail_id) REFERENCES trails(project, trail_id) ON DELETE CASCADE);
CREATE INDEX trail_tags_tag ON trail_tags(project, tag);
CREATE TABLE trail_seq(
    project TEXT COLLATE "C" NOT NULL, agent_slug TEXT COLLATE "C" NOT NULL, next BIGINT NOT NULL,
    PRIMARY KEY (project, agent_slug));
CREATE TABLE learn_log(
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, project TEXT COLLATE "C" NOT NULL,
    agent_id TEXT COLLATE "C", query TEXT COLLATE "C", feedback TEXT COLLATE "C", strength DOUBLE PRECISION,
    node_ids_json TEXT COLLATE "C", edges_adjusted INTEGER, created_ms BIGINT);
CREATE INDEX learn_log_project ON learn_log(project, id);
CREATE SEQUENCE learned_edges_seq;
CREATE TABLE learned_edges(
    project TEXT COLLATE "C" NOT NULL, src TEXT COLLATE "C" NOT NULL, dst TEXT COLLATE "C" NOT NULL,
    relation INTEGER NOT NULL, w0 DOUBLE PRECISION NOT NULL, w DOUBLE PRECISION NOT NULL,
    n_ltp BIGINT NOT NULL DEFAULT 0, n_ltd BIGINT NOT NULL DEFAULT 0, updated_ms BIGINT NOT NULL,
    seq BIGINT NOT NULL, PRIMARY KEY (project, src, dst, relation));
CREATE INDEX learned_edges_changes ON learned_edges(project, seq);
CREATE TABLE learning_generation(project TEXT COLLATE "C" PRIMARY KEY, weights_generation BIGINT NOT NULL);
"""

MIGRATIONS: list[str] = [_V1]
