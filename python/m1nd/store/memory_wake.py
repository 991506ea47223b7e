"""SQLite side of waking up: the cascade's layer queries and ``wake-fetch`` (:class:`WakeRepo`), the ritual's
session state (:class:`RitualRepo`) and the guess log with its phrase-vector cache (:class:`GuessLogRepo`).

The rules (which layer takes which entries, how a guess is judged) live in :mod:`m1nd.memory.wake`,
:mod:`m1nd.memory.ritual` and :mod:`m1nd.memory.wakelog`; these classes only read and write rows.
"""

from __future__ import annotations

import json
from typing import Any, cast

from m1nd.store.db import Database
from m1nd.store.memory_repo import visible_sql

LAYERS = ("core", "recent", "bridges")
EXCLUDE_TAGS = ("archive", "wake-exclude")
# The visibility predicate with its columns kept off the (unselective) visibility/owner indexes, so the resonance and
# timestamp indexes drive the layer queries.
_VISIBLE = "(+e.visibility = 'public' OR (+e.visibility = 'private' AND +e.owner = :agent))"
_NOT_EPHEMERAL = "(e.resonance_type IS NULL OR e.resonance_type != 'ephemeral')"
_EXCLUDED = ("NOT EXISTS (SELECT 1 FROM entry_tags x WHERE x.entry_rowid = e.rowid "
             "AND x.tag IN ('archive', 'wake-exclude'))")


def _value(basis: str) -> str:
    return ("e.resonance" if basis == "raw"
            else "eff_res(e.resonance, e.resonance_type, e.last_activated, e.created_at, :now)")


def _at_least(basis: str, threshold: str | int, positive: bool) -> list[str]:
    """``basis value >= threshold``, plus ``resonance >= threshold`` (index-usable) when the threshold is positive:
    decay never raises a positive resonance, so the raw value bounds the decayed one from above."""
    clauses = [f"{_value(basis)} >= {threshold}"]
    if basis == "decayed" and positive:
        clauses.append(f"e.resonance >= {threshold}")
    return clauses


class WakeRepo:
    """The cascade's layers and ``wake-fetch`` over the visible entries of one agent."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def _pick(self, where: list[str], params: dict[str, Any], basis: str, limit: int | None) -> list[int]:
        sql = (f"SELECT e.rowid FROM entries e WHERE {' AND '.join(f'({w})' for w in where)} "
               f"ORDER BY (e.wake_order IS NULL), e.wake_order, {_value(basis)} DESC, e.id")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [r[0] for r in self.db.execute(sql, params)]

    def choose(self, agent: str, *, limit: int, min_resonance: int | None, days_since: str, basis: str,
               exclude: bool, now: int, core_min: int, bridge_min: int) -> dict[str, list[int]]:
        """Rowids per layer (the cascade rules of :mod:`m1nd.memory.wake`)."""
        base = [_VISIBLE]
        if exclude:
            base.append(_EXCLUDED)
        params: dict[str, Any] = {"agent": agent, "now": now}
        out: dict[str, list[int]] = {k: [] for k in LAYERS}
        if min_resonance is not None:
            out["core"] = self._pick([*base, _NOT_EPHEMERAL, *_at_least(basis, ":minr", min_resonance > 0)],
                                     {**params, "minr": min_resonance}, basis, None)
            return out
        out["core"] = self._pick([*base, _NOT_EPHEMERAL, *_at_least(basis, core_min, True)], params, basis, limit)
        left = limit - len(out["core"])
        if left > 0:
            out["recent"] = self._pick([
                *base, _NOT_EPHEMERAL, "e.rowid NOT IN (SELECT value FROM json_each(:chosen))",
                # three index range scans instead of a table scan for the OR of the three clocks
                ("e.rowid IN (SELECT rowid FROM entries WHERE created_at >= :since UNION ALL SELECT rowid FROM "
                 "entries WHERE updated_at >= :since UNION ALL SELECT rowid FROM entries WHERE last_activated >= "
                 ":since)")],
                {**params, "since": days_since, "chosen": json.dumps(out["core"])}, basis, left)
            left -= len(out["recent"])
        if left > 0 and (out["core"] or out["recent"]):
            chosen = json.dumps(out["core"] + out["recent"])
            out["bridges"] = self._pick([
                *base, *_at_least(basis, bridge_min, True), "e.rowid NOT IN (SELECT value FROM json_each(:chosen))",
                ("e.rowid IN (SELECT a.anchor_rowid FROM entry_anchors a WHERE a.entry_rowid IN "
                 "(SELECT value FROM json_each(:chosen)) UNION ALL SELECT a.entry_rowid FROM entry_anchors a "
                 "WHERE a.anchor_rowid IN (SELECT value FROM json_each(:chosen)))")],
                {**params, "chosen": chosen}, basis, left)
        return out

    def any_excluded(self, agent: str) -> bool:
        """Whether any entry ``agent`` can see carries an exclusion tag."""
        return bool(self.db.scalar(
            f"SELECT 1 FROM entry_tags x JOIN entries e ON e.rowid = x.entry_rowid "
            f"WHERE x.tag IN ('archive', 'wake-exclude') AND {visible_sql()} LIMIT 1", {"agent": agent}))

    def exclusion_counts(self, rowids: list[int]) -> dict[str, int]:
        """How many of ``rowids`` carry each exclusion tag."""
        counts = dict.fromkeys(EXCLUDE_TAGS, 0)
        for tag, n in self.db.execute(
                "SELECT x.tag, count(*) FROM entry_tags x WHERE x.tag IN ('archive', 'wake-exclude') "
                "AND x.entry_rowid IN (SELECT value FROM json_each(:ids)) GROUP BY x.tag",
                {"ids": json.dumps(rowids)}):
            counts[tag] = int(n)
        return counts

    def rows(self, rowids: list[int], now: int) -> list[tuple[Any, ...]]:
        """``(rowid, id, title, category, resonance, effective, body, summary, wake_phrases_json)`` per rowid."""
        if not rowids:
            return []
        return self.db.all(
            "SELECT e.rowid, e.id, e.title, e.category, e.resonance, "
            "eff_res(e.resonance, e.resonance_type, e.last_activated, e.created_at, :now), e.body, e.summary, "
            "e.wake_phrases FROM entries e WHERE e.rowid IN (SELECT value FROM json_each(:ids))",
            {"now": now, "ids": json.dumps(rowids)})

    def fetch(self, agent: str | None, *, now: int, since: str, basis: str, exclude_prefixes: list[str],
              limit: int, min_resonance: int, min_value: float) -> list[tuple[Any, ...]]:
        """Recent resonant facts: ``(id, created_at, label, resonance, body)``, strongest first."""
        value = _value(basis)
        where = [visible_sql(), "e.created_at >= :since", "e.resonance >= :minr", f"{value} > :floor"]
        params: dict[str, Any] = {"agent": agent, "now": now, "since": since, "minr": min_resonance,
                                  "floor": min_value}
        if exclude_prefixes:
            where.append("NOT EXISTS (SELECT 1 FROM entry_tags t, json_each(:pfx) p WHERE t.entry_rowid = e.rowid "
                         "AND substr(t.tag, 1, length(p.value)) = p.value)")
            params["pfx"] = json.dumps(exclude_prefixes)
        sql = (f"SELECT e.id, e.created_at, coalesce(e.fact_type, e.category), e.resonance, e.body FROM entries e "
               f"WHERE {' AND '.join(f'({w})' for w in where)} ORDER BY {value} DESC, e.created_at DESC, e.id "
               f"LIMIT {int(limit)}")
        return self.db.all(sql, params)


class RitualRepo:
    """The token ritual's sessions (``wake_sessions``) and the guesses it logs (``wake_guesses``)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def wake_has_guesses(self, agent: str, wake: int) -> bool:
        return bool(self.db.scalar("SELECT 1 FROM wake_guesses WHERE agent = ? AND wake = ? LIMIT 1", (agent, wake)))

    def highest_wake(self, agent: str, *, scored: bool = False) -> int | None:
        return cast("int | None", self.db.scalar("SELECT max(wake) FROM wake_guesses WHERE agent = ?"
                                                 + (" AND scored_at IS NOT NULL" if scored else ""), (agent,)))

    def begin(self, sid: str, agent: str, wake: int | None, model: str | None, plan_json: str, counters_json: str,
              now: str) -> None:
        self.db.execute(
            "INSERT INTO wake_sessions(id, agent, wake, model_id, plan_json, step, prev_step, last_response_json, "
            "last_status, counters_json, created_at, completed_at) VALUES (?, ?, ?, ?, ?, 0, NULL, NULL, NULL, ?, "
            "?, NULL)", (sid, agent, wake, model, plan_json, counters_json, now))

    def session(self, sid: str) -> tuple[Any, ...] | None:
        """``(agent, wake, model_id, plan_json, step, prev_step, last_response_json, counters_json, completed_at)``."""
        return self.db.one("SELECT agent, wake, model_id, plan_json, step, prev_step, last_response_json, "
                           "counters_json, completed_at FROM wake_sessions WHERE id = ?", (sid,))

    def advance(self, sid: str, cur: int, nxt: int, response_json: str, status: str, counters_json: str,
                completed_at: str | None) -> bool:
        """Move a session from step ``cur`` to ``nxt``; False when another writer moved it first."""
        self.db.execute(
            "UPDATE wake_sessions SET step = ?, prev_step = ?, last_response_json = ?, last_status = ?, "
            "counters_json = ?, completed_at = ? WHERE id = ? AND step = ?",
            (nxt, cur, response_json, status, counters_json, completed_at, sid, cur))
        return self.db.changes() == 1

    def log_guess(self, row: tuple[Any, ...]) -> None:
        """One judged guess (the 19 columns of ``wake_guesses`` from ``session_id`` to ``ts``)."""
        self.db.execute(
            "INSERT INTO wake_guesses(session_id, position, agent, wake, model_id, bloom_id, chunk_index, "
            "chunk_total, bloom_position, bloom_total, title_shown, guess, phrase_source, phrases_json, "
            "match_kind, match_index, bucket, content_sha256, ts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "?, ?, ?, ?, ?, ?, ?)", row)

    def bloom(self, entry_id: str) -> tuple[Any, ...] | None:
        """``(body, summary, visibility, owner)`` of a prompted entry, visible or not."""
        return self.db.one("SELECT body, summary, visibility, owner FROM entries WHERE id = ?", (entry_id,))


_ROW_COLUMNS = ("g.session_id", "g.position", "g.wake", "g.ts", "g.model_id", "g.bloom_id", "g.chunk_index",
                "g.chunk_total", "g.bloom_position", "g.bloom_total", "g.title_shown", "g.guess", "g.phrase_source",
                "g.match_kind", "g.match_index", "g.bucket", "g.sim_phrase", "g.sim_content", "g.sim_title",
                "g.sim_prior", "g.sim_prior_null", "g.prior_n", "g.sim_prior_same", "g.sim_prior_null_same",
                "g.prior_n_same", "g.sim_prior_cross", "g.sim_prior_null_cross", "g.prior_n_cross", "g.scored_at",
                "g.embedding_model")
GUESS_COLUMNS = tuple(c[2:] for c in _ROW_COLUMNS)
_GUESS_ORDERS = {"ritual": "s.created_at, g.session_id, g.position", "newest": "g.ts DESC, g.rowid DESC"}


class GuessLogRepo:
    """Scoring and reading the guess log (``wake-log``), and the cache of phrase vectors."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def pending(self, agent: str) -> list[tuple[Any, ...]]:
        """Unscored guesses: ``(rowid, session_id, position, bloom_id, title_shown, guess, phrase_source,
        phrases_json, model_id)``, in log order."""
        return self.db.all("SELECT rowid, session_id, position, bloom_id, title_shown, guess, phrase_source, "
                           "phrases_json, model_id FROM wake_guesses WHERE agent = ? AND scored_at IS NULL "
                           "ORDER BY rowid", (agent,))

    def scored_vectors(self, agent: str, model: str) -> list[tuple[Any, ...]]:
        """Scored guesses with a vector of ``model``: ``(rowid, session_id, bloom_id, title_shown, model_id,
        embedding)``."""
        return self.db.all("SELECT rowid, session_id, bloom_id, title_shown, model_id, embedding FROM wake_guesses "
                           "WHERE agent = ? AND scored_at IS NOT NULL AND embedding_model = ? AND embedding IS NOT "
                           "NULL ORDER BY rowid", (agent, model))

    def record_score(self, agent: str, sid: str, pos: int, values: dict[str, Any], embedding: bytes, model: str,
                     now: str) -> bool:
        """Write a guess's scores unless someone scored it first; True when this call wrote them."""
        sets = ", ".join(f"{k} = :{k}" for k in values)
        self.db.execute(f"UPDATE wake_guesses SET {sets}, embedding = :embedding, embedding_model = :em, "
                        f"scored_at = :ts WHERE session_id = :sid AND position = :pos AND agent = :agent "
                        f"AND scored_at IS NULL",
                        {**values, "embedding": embedding, "em": model, "ts": now, "sid": sid, "pos": pos,
                         "agent": agent})
        return self.db.changes() == 1

    def phrase_vectors(self, keys: list[str]) -> list[tuple[str, str, bytes]]:
        return self.db.all("SELECT key, model_id, vec FROM wake_phrase_vectors WHERE key IN "
                           "(SELECT value FROM json_each(?))", (json.dumps(keys),))

    def store_phrase_vectors(self, rows: list[tuple[str, str, bytes]]) -> None:
        self.db.executemany("INSERT OR REPLACE INTO wake_phrase_vectors(key, model_id, vec) VALUES (?, ?, ?)", rows)

    def entry_vectors(self, entry_id: str, model: str, dim: int) -> list[bytes] | None:
        """The entry's whole and chunk vectors of ``model``; None when the entry does not exist."""
        hit = self.db.one("SELECT rowid FROM entries WHERE id = ?", (entry_id,))
        if hit is None:
            return None
        return [r[0] for r in self.db.all(
            "SELECT vec FROM vectors WHERE owner_kind = 'entry' AND owner_rowid = :r AND model_id = :m AND dim = :d "
            "UNION ALL SELECT v.vec FROM chunks c JOIN vectors v ON v.owner_kind = 'chunk' AND v.owner_rowid = "
            "c.rowid WHERE c.entry_rowid = :r AND v.model_id = :m AND v.dim = :d",
            {"r": hit[0], "m": model, "d": dim})]

    def rows(self, agent: str, *, wake: int | None = None, bloom_id: str | None = None, order: str = "ritual",
             limit: int | None = None) -> list[tuple[Any, ...]]:
        """Guesses of ``agent`` under one wake or about one bloom, columns :data:`GUESS_COLUMNS`."""
        where, params = ("g.agent = ? AND g.wake = ?", (agent, wake)) if bloom_id is None else (
            "g.agent = ? AND g.bloom_id = ?", (agent, bloom_id))
        sql = (f"SELECT {', '.join(_ROW_COLUMNS)} FROM wake_guesses g JOIN wake_sessions s ON s.id = g.session_id "
               f"WHERE {where} ORDER BY {_GUESS_ORDERS[order]}")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return self.db.all(sql, params)
