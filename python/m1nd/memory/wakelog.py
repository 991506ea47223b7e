"""The guess log of the wake ritual: scoring (``wake-log score``) and reading it back (``report``, ``bloom``,
``wake``), spec memory.md §12.

Every function works on the calling agent's rows only (``agent = ?`` in every query).

Scoring
-------
Pending rows (``scored_at`` NULL) are scored oldest first (by insertion order), each written — guarded by
``scored_at IS NULL`` — before the next is computed, so one run over many rituals stores what a run after every
ritual would have. The embedding model comes through :class:`Embeddings`, a small adapter over
:mod:`m1nd.memory.embeddings` that is created only when a row is pending.

* Axis A: ``sim_phrase`` (authored rows only) — best cosine to the authored phrase vectors, cached in
  ``wake_phrase_vectors`` under sha256(model ‖ whitespace-normalised phrase) with no phrase text stored;
  ``sim_content`` — best cosine to the entry's stored vectors of the same model (entry vector and its chunk vectors;
  null when the entry is gone or not embedded); ``sim_title`` — cosine to the shown title without its Part suffix.
* Axis B: over this agent's scored rows of the same embedding model, from *other* ritual sessions, logged earlier:
  ``sim_prior`` = cosine to the mean of the 5 latest guesses on the same entry with the same shown title
  (``prior_n`` of them); ``sim_prior_null`` = mean cosine to the same kind of mean for up to 10 other entries with the
  most recent history. Repeated over rows answered by the same ``model_id`` (``*_same``) and by a different known one
  (``*_cross``); rows without ``model_id`` get neither.

Reading
-------
The three readers return plain data plus a text rendering in which every control and bidirectional character is
escaped. The terminal-only rule and the ``--out`` checks are enforced by the CLI before anything here runs
(:func:`check_out_path` is the shared check).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import statistics
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from m1nd.errors import InvalidInputError, M1ndError, NotFoundError
from m1nd.memory.ids import normalize_entry_id
from m1nd.memory.service import MemoryService
from m1nd.memory.waketext import NOTICE, escape_controls, strip_part
from m1nd.store.memory_wake import GUESS_COLUMNS
from m1nd.timeutil import now_iso

NO_AGENT = ("M1ND_CURRENT_AGENT not set. wake-log reads and scores only the calling agent's guess log, and will not "
            "guess which agent that is.")
TERMINAL_ONLY = ("wake-log {cmd} is terminal-only: stdout is not a terminal, so nothing was read or printed. "
                 "Use --out FILE")
PRIOR_K = 5
NULL_ENTRIES = 10
PHRASE_SOURCES = ("authored", "derived", "auto", "unphrased")
SIM_FIELDS = ("sim_phrase", "sim_content", "sim_title", "sim_prior", "sim_prior_null")


def need_agent(agent: str | None) -> str:
    if not agent:
        raise InvalidInputError(NO_AGENT, recover="pass --agent NAME or set M1ND_CURRENT_AGENT")
    return agent


# =============================================================================================================
# Embeddings (a small interface so the scorer never depends on how models are chosen)
# =============================================================================================================
class Embeddings:
    """``model_id``, ``dim`` and ``embed(texts) -> float32 rows, L2-normalised``."""

    def __init__(self, emb: Any) -> None:
        self.emb = emb
        self.model_id: str = emb.model_id
        self.dim = int(emb.dim)

    def embed(self, texts: list[str]) -> np.ndarray:
        m = np.asarray(self.emb.embed_documents(texts), dtype=np.float32)
        n = np.linalg.norm(m, axis=1, keepdims=True)
        n[n == 0] = 1.0
        return m / n

    @classmethod
    def load(cls) -> Embeddings:
        """The process's embedding model; raises ``embedder_unavailable`` when none can be used."""
        from m1nd.memory.embeddings import EmbedderUnavailableError, usable

        emb = usable()
        if emb is None:
            raise EmbedderUnavailableError()
        return cls(emb)


def _blob(v: np.ndarray) -> bytes:
    return np.ascontiguousarray(v, dtype="<f4").tobytes()


def _vec(b: bytes) -> np.ndarray:
    return np.frombuffer(b, dtype="<f4").astype(np.float32)


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(_unit(a), _unit(b)))


def phrase_key(model_id: str, phrase: str) -> str:
    return hashlib.sha256((model_id + "\u2016" + " ".join(phrase.split())).encode("utf-8")).hexdigest()


@dataclass
class _Prior:
    rowid: int
    session_id: str
    bloom_id: str
    title: str
    model_id: str | None
    vec: np.ndarray


def _axis_b(guess: np.ndarray, rowid: int, session_id: str, bloom_id: str, title: str,
            prior: list[_Prior], keep: Callable[[_Prior], bool]) -> tuple[float | None, float | None, int]:
    eligible = [p for p in prior if p.rowid < rowid and p.session_id != session_id and keep(p)]
    same = [p for p in eligible if p.bloom_id == bloom_id and p.title == title]
    same.sort(key=lambda p: p.rowid)
    last = same[-PRIOR_K:]
    sim_prior = _cos(guess, np.mean([p.vec for p in last], axis=0)) if last else None
    # other entries, most recent history first; per entry its most recent (entry, title) history
    groups: dict[tuple[str, str], list[_Prior]] = {}
    for p in eligible:
        if p.bloom_id != bloom_id:
            groups.setdefault((p.bloom_id, p.title), []).append(p)
    ordered = sorted(groups.items(), key=lambda kv: -max(p.rowid for p in kv[1]))
    seen: set[str] = set()
    sims = []
    for (b, _t), ps in ordered:
        if b in seen:
            continue
        seen.add(b)
        ps.sort(key=lambda p: p.rowid)
        sims.append(_cos(guess, np.mean([p.vec for p in ps[-PRIOR_K:]], axis=0)))
        if len(seen) >= NULL_ENTRIES:
            break
    sim_null = float(np.mean(sims)) if sims else None
    return sim_prior, sim_null, len(last)


def score(svc: MemoryService, agent: str | None, *, loader: Callable[[], Embeddings] = Embeddings.load
          ) -> tuple[dict[str, Any], list[str]]:
    """Score every pending row of ``agent``. Returns ``({"status": "scored", "rows": N, "skipped": M}, notes)``;
    raises when a row is pending and no model can be loaded (nothing is scored then)."""
    agent = need_agent(agent)
    log_rows = svc.repo.guesses
    pending = log_rows.pending(agent)
    if not pending:
        return {"status": "scored", "rows": 0, "skipped": 0}, []
    emb = loader()
    prior = [
        _Prior(r[0], r[1], r[2], r[3], r[4], _vec(r[5]))
        for r in log_rows.scored_vectors(agent, emb.model_id)]
    prior = [p for p in prior if p.vec.shape == (emb.dim,)]
    scored = skipped = 0
    notes: list[str] = []
    for rowid, sid, pos, bloom_id, title, guess, source, phrases_json, model_id in pending:
        try:
            vals, gvec = _score_row(svc, emb, bloom_id, title, guess, source, json.loads(phrases_json))
            vals.update(_axis_b_all(gvec, rowid, sid, bloom_id, title, model_id, prior))
            with svc._write() as tx:
                wrote = tx.guesses.record_score(agent, sid, pos, vals, _blob(gvec), emb.model_id,
                                                now_iso())
            if wrote:
                scored += 1
                prior.append(_Prior(rowid, sid, bloom_id, title, model_id, gvec))
        except Exception as e:  # noqa: BLE001 — one bad row must not stop the run; it stays pending
            skipped += 1
            notes.append(f"wake-log score: row {sid}:{pos} skipped ({type(e).__name__}); it stays pending")
    return {"status": "scored", "rows": scored, "skipped": skipped}, notes


def _axis_b_all(g: np.ndarray, rowid: int, sid: str, bloom_id: str, title: str, model_id: str | None,
                prior: list[_Prior]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    out["sim_prior"], out["sim_prior_null"], out["prior_n"] = _axis_b(g, rowid, sid, bloom_id, title, prior,
                                                                      lambda p: True)
    if model_id is None:
        out.update(sim_prior_same=None, sim_prior_null_same=None, prior_n_same=None, sim_prior_cross=None,
                   sim_prior_null_cross=None, prior_n_cross=None)
        return out
    out["sim_prior_same"], out["sim_prior_null_same"], out["prior_n_same"] = _axis_b(
        g, rowid, sid, bloom_id, title, prior, lambda p: p.model_id == model_id)
    out["sim_prior_cross"], out["sim_prior_null_cross"], out["prior_n_cross"] = _axis_b(
        g, rowid, sid, bloom_id, title, prior, lambda p: p.model_id is not None and p.model_id != model_id)
    return out


def _phrase_vectors(svc: MemoryService, emb: Embeddings, phrases: list[str]) -> list[np.ndarray]:
    keys = [phrase_key(emb.model_id, p) for p in phrases]
    found: dict[str, np.ndarray] = {}
    with contextlib.suppress(Exception):  # an unreadable cache only costs time
        for k, model, blob in svc.repo.guesses.phrase_vectors(keys):
            v = _vec(blob)
            if model == emb.model_id and v.shape == (emb.dim,):
                found[k] = v
    todo = [i for i, k in enumerate(keys) if k not in found]
    if todo:
        vecs = emb.embed([phrases[i] for i in todo])
        for i, v in zip(todo, vecs, strict=True):
            found[keys[i]] = v
        with contextlib.suppress(Exception), svc._write() as tx:
            tx.guesses.store_phrase_vectors([(keys[i], emb.model_id, _blob(found[keys[i]])) for i in todo])
    return [found[k] for k in keys]


def _content_vectors(svc: MemoryService, emb: Embeddings, bloom_id: str) -> list[np.ndarray] | None:
    blobs = svc.repo.guesses.entry_vectors(bloom_id, emb.model_id, emb.dim)
    return None if blobs is None else [_vec(b) for b in blobs]


def _score_row(svc: MemoryService, emb: Embeddings, bloom_id: str, title: str, guess: str, source: str,
               phrases: list[str]) -> tuple[dict[str, Any], np.ndarray]:
    g, t = emb.embed([guess, strip_part(title)])
    vals: dict[str, Any] = {"sim_title": _cos(g, t), "sim_phrase": None, "sim_content": None}
    if source == "authored" and phrases:
        vals["sim_phrase"] = max(_cos(g, v) for v in _phrase_vectors(svc, emb, phrases))
    content = _content_vectors(svc, emb, bloom_id)
    if content:
        vals["sim_content"] = max(_cos(g, v) for v in content)
    return vals, g


# =============================================================================================================
# Reading
# =============================================================================================================
def _row(r: tuple[Any, ...]) -> dict[str, Any]:
    d = dict(zip(GUESS_COLUMNS, r, strict=True))
    d["step"] = d.pop("position")
    d["date"] = (d["ts"] or "")[:10]
    return d


def _select_rows(svc: MemoryService, agent: str, *, wake: int | None = None, bloom_id: str | None = None,
                 order: str = "ritual", limit: int | None = None) -> list[dict[str, Any]]:
    with svc._read() as tx:
        return [_row(r) for r in tx.guesses.rows(agent, wake=wake, bloom_id=bloom_id, order=order, limit=limit)]


def _median(values: list[float]) -> float | None:
    return float(statistics.median(values)) if values else None


def report(svc: MemoryService, agent: str | None, wake: int | None = None) -> dict[str, Any]:
    agent = need_agent(agent)
    if wake is None:
        wake = svc.repo.ritual.highest_wake(agent, scored=True)
        if wake is None:
            raise NotFoundError("no scored wake: run `m1nd memory wake-log score` first, or pass --wake N",
                                recover="run m1nd memory wake-log score")
    rows = _select_rows(svc, agent, wake=wake)
    if not rows:
        raise NotFoundError(f"no guesses logged under wake {wake}", recover="pass another --wake")
    buckets = {b: dict.fromkeys(PHRASE_SOURCES, 0) for b in ("unhinted", "revealed")}
    for r in rows:
        if r["bucket"] in buckets and r["phrase_source"] in PHRASE_SOURCES:
            buckets[r["bucket"]][r["phrase_source"]] += 1

    def med(key: str) -> dict[str, Any]:
        vals = [r[key] for r in rows if r[key] is not None]
        return {"median": _median(vals), "n": len(vals)}

    def gap(suffix: str) -> dict[str, Any]:
        vals = [r["sim_prior" + suffix] - r["sim_prior_null" + suffix] for r in rows
                if r["sim_prior" + suffix] is not None and r["sim_prior_null" + suffix] is not None]
        return {"median": _median(vals), "n": len(vals)}

    return {"notice": NOTICE, "wake": wake, "models": sorted({r["model_id"] for r in rows if r["model_id"]}),
            "chunks": len(rows), "entries": len({r["bloom_id"] for r in rows}),
            "scored": sum(1 for r in rows if r["scored_at"]), "buckets": buckets,
            "axis_a": {"sim_phrase": med("sim_phrase"), "sim_content": med("sim_content"),
                       "sim_title": med("sim_title")},
            "axis_b": {"same_model": gap("_same"), "cross_model": gap("_cross"), "any_model": gap("")}}


def bloom_history(svc: MemoryService, agent: str | None, bloom_id: str, limit: int = 20) -> dict[str, Any]:
    agent = need_agent(agent)
    if limit < 1:
        raise InvalidInputError(f"--limit must be a positive integer (got {limit})")
    eid = normalize_entry_id(bloom_id)
    rows = _select_rows(svc, agent, bloom_id=eid, order="newest", limit=limit)
    return {"notice": NOTICE, "bloom_id": eid, "rows": rows}


def wake_rows(svc: MemoryService, agent: str | None, wake: int) -> dict[str, Any]:
    agent = need_agent(agent)
    rows = _select_rows(svc, agent, wake=wake)
    if not rows:
        raise NotFoundError(f"no guesses logged under wake {wake}", recover="pass another wake number")
    return {"notice": NOTICE, "wake": wake, "rows": rows}


# -- text -----------------------------------------------------------------------------------------------------
def _f(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def _notice_lines() -> list[str]:
    return [*textwrap.wrap(NOTICE, 100), ""]


def render_report(d: dict[str, Any]) -> str:
    e = escape_controls
    lines = _notice_lines()
    lines.append(f"Wake {d['wake']}   model {e(', '.join(d['models'])) or '-'}   {d['chunks']} chunks, "
                 f"{d['entries']} entries   scored {d['scored']}/{d['chunks']}")
    lines.append("")
    lines.append(f"{'bucket':<10}" + "".join(f"{s:>11}" for s in PHRASE_SOURCES))
    for b in ("unhinted", "revealed"):
        lines.append(f"{b:<10}" + "".join(f"{d['buckets'][b][s]:>11}" for s in PHRASE_SOURCES))
    lines.append("")
    lines.append("Axis A (medians; a phrase-tuning dial, not evidence)")
    for k in ("sim_phrase", "sim_content", "sim_title"):
        a = d["axis_a"][k]
        lines.append(f"  {k:<12} {_f(a['median']):>6}   n={a['n']}")
    lines.append("")
    lines.append("Axis B (median of sim_prior - sim_prior_null)")
    for k, label in (("same_model", "same model"), ("cross_model", "cross model"), ("any_model", "any model")):
        a = d["axis_b"][k]
        lines.append(f"  {label:<12} {_f(a['median']):>6}   n={a['n']}")
    return "\n".join(lines) + "\n"


def render_rows(d: dict[str, Any]) -> str:
    e = escape_controls
    lines = _notice_lines()
    if "bloom_id" in d:
        lines.append(f"Bloom {d['bloom_id']}: {len(d['rows'])} guesses, most recent first")
    else:
        lines.append(f"Wake {d['wake']}: {len(d['rows'])} guesses in sequence order")
    for r in d["rows"]:
        lines.append("")
        chunk = f"{r['chunk_index'] + 1}/{r['chunk_total']}"
        match = r["match_kind"] + (f" #{r['match_index']}" if r["match_index"] is not None else "")
        lines.append(f"wake {r['wake'] if r['wake'] is not None else '-'}  {r['date']}  model "
                     f"{e(r['model_id'] or '-')}  step {r['step']}  entry {r['bloom_position'] + 1}/"
                     f"{r['bloom_total']}  chunk {chunk}  {r['bucket']} ({match}, {r['phrase_source']})")
        lines.append(f"  bloom: {r['bloom_id']}")
        lines.append(f"  title: {e(r['title_shown'])}")
        lines.append(f"  guess: {e(r['guess'])}")
        if r["scored_at"] is None:
            lines.append("  pending (not scored yet)")
        else:
            lines.append("  " + "  ".join(f"{k} {_f(r[k])}" for k in SIM_FIELDS) + f"  prior_n {r['prior_n']}")
    return "\n".join(lines) + "\n"


# -- output safety --------------------------------------------------------------------------------------------
def _std_ids() -> set[tuple[int, int]]:
    import sys

    ids = set()
    fds = {1, 2}
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        with contextlib.suppress(Exception):
            fds.add(stream.fileno())
    for fd in fds:
        with contextlib.suppress(OSError):
            st = os.fstat(fd)
            ids.add((st.st_dev, st.st_ino))
    return ids


def check_out_path(path: str) -> None:
    """An existing ``--out`` must be a regular file and not this process's own stdout or stderr."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise M1ndError(f"--out {path} cannot be checked ({e.strerror}); nothing was read or written",
                        code="invalid_argument", recover="pick another --out path") from None
    if not stat.S_ISREG(st.st_mode):
        raise M1ndError(f"--out {path} exists and is not a regular file; nothing was read or written",
                        code="invalid_argument", recover="pass a path to a regular file")
    if (st.st_dev, st.st_ino) in _std_ids():
        raise M1ndError(f"--out {path} is this process's own stdout or stderr; nothing was read or written",
                        code="invalid_argument", recover="pass a separate file")


def write_out(path: str, data: dict[str, Any], render: Callable[[dict[str, Any]], str]) -> None:
    """JSON when the path ends in ``.json``, the escaped text otherwise."""
    text = (json.dumps(data, indent=2, ensure_ascii=False) + "\n" if path.lower().endswith(".json")
            else render(data))
    # Checked again on the opened descriptor (the path may have changed since check_out_path): non-blocking, so a
    # FIFO cannot stall the open, and truncated only once it is known to be a safe regular file.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError as e:
        raise M1ndError(f"cannot write --out {path}: {e.strerror}", code="invalid_argument",
                        recover="pick another --out path") from None
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) in _std_ids():
            raise M1ndError(f"--out {path} is not a separate regular file; nothing was written",
                            code="invalid_argument", recover="pass a path to a regular file")
        os.ftruncate(fd, 0)
        fh.write(text)
