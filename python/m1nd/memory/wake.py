"""The wake cascade and ``wake-fetch`` (spec memory.md §12): which entries an agent wakes up with.

The cascade fills up to ``limit`` places in three layers, each ordered by ``wake_order`` (entries that have one
first, ascending), then the basis value (raw resonance by default, see memory.md §5) descending, then id:

* **core** — basis value ≥ 8, resonance type not ``ephemeral``;
* **recent** — the remaining places: not ephemeral, not already chosen, created, updated or activated within ``days``;
* **bridges** — the remaining places: entries anchored (either direction) to a core or recent entry, basis value ≥ 5.

``min_resonance`` replaces the layers by one core layer of every entry at or above it (no limit). Only entries the
agent may see are considered (public + the agent's own private ones). Entries tagged exactly ``archive`` or
``wake-exclude`` are kept out *inside* each query, so every layer still fills its quota; ``excluded`` counts, per tag,
the excluded entries that would have taken a place had the exclusion been off (computed by running the same cascade
without it, only when such entries exist). Choosing entries is a read; the activation count of the chosen entries
is bumped afterwards in a short transaction of its own (skipped when the database is busy, or with ``activate``
false). The ritual (:mod:`m1nd.memory.ritual`) reuses :func:`select`.

Both answer dataclasses (:class:`WakeSet`, :class:`WakeFacts`) whose ``to_dict`` is the wire object of the ``wake``
and ``wake_fetch`` tools and of the commands' ``--json``; the text forms are :func:`render_cascade` and
:func:`render_facts`.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from m1nd.defaults import RECENT_MIN_RESONANCE, WAKE_DAYS, WAKE_FETCH_DAYS, WAKE_FETCH_LIMIT, WAKE_LIMIT
from m1nd.errors import BusyError, InvalidInputError
from m1nd.memory.service import MemoryService, default_basis
from m1nd.memory.waketext import entry_content
from m1nd.store.memory_tx import MemoryTx
from m1nd.store.memory_wake import EXCLUDE_TAGS, LAYERS
from m1nd.timeutil import MS_PER_DAY, format_ms, now_iso, now_ms

log = logging.getLogger(__name__)

CORE_MIN = 8
BRIDGE_MIN = 5
FETCH_MIN_RESONANCE = 3  # wake-fetch: raw resonance floor
NO_AGENT = "M1ND_CURRENT_AGENT not set. Cannot wake without identity."


@dataclass
class WakeEntry:
    rowid: int
    id: str
    title: str
    category: str
    resonance: int
    effective_resonance: float
    body: str
    summary: str | None
    wake_phrases: list[str]

    @property
    def content(self) -> str:
        """Body, else summary (the cascade's ``content``; empty when neither exists)."""
        return self.body or (self.summary or "")

    @property
    def ritual_content(self) -> str:
        return entry_content(self.body, self.summary)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "category": self.category, "resonance": self.resonance,
                "effective_resonance": self.effective_resonance, "content": self.content}


@dataclass
class WakeSet:
    """The cascade: the chosen entries per layer (core, recent, bridges) and, per exclusion tag, how many entries it
    kept out that would have taken a place."""

    agent: str
    basis: str
    layers: dict[str, list[WakeEntry]] = field(default_factory=lambda: {k: [] for k in LAYERS})
    excluded: dict[str, int] = field(default_factory=lambda: dict.fromkeys(EXCLUDE_TAGS, 0))

    def entries(self) -> list[WakeEntry]:
        return [e for k in LAYERS for e in self.layers[k]]

    @property
    def total(self) -> int:
        return sum(len(v) for v in self.layers.values())

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "resonance_basis": self.basis,
                "layers": {k: [e.to_dict() for e in self.layers[k]] for k in LAYERS},
                "excluded": dict(self.excluded), "total": self.total}


@dataclass(frozen=True)
class WakeFact:
    """A recent resonant fact of ``wake-fetch``: its creation day, label (fact type, else category) and text."""

    id: str
    date: str
    label: str
    resonance: int
    content: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "date": self.date, "label": self.label, "resonance": self.resonance,
                "content": self.content}


@dataclass(frozen=True)
class WakeFacts:
    """The answer of ``wake-fetch``."""

    facts: list[WakeFact]

    def to_dict(self) -> dict[str, Any]:
        return {"facts": [f.to_dict() for f in self.facts]}


def need_agent(agent: str | None) -> str:
    if not agent:
        raise InvalidInputError(NO_AGENT, recover="pass --agent NAME or set M1ND_CURRENT_AGENT")
    return agent


def check_args(*, limit: int, days: int, min_resonance: int | None, basis: str) -> None:
    if limit < 1:
        raise InvalidInputError(f"--limit must be a positive integer (got {limit})")
    if days < 1:
        raise InvalidInputError(f"--days must be a positive integer (got {days})")
    if basis not in ("raw", "decayed"):
        raise InvalidInputError(f"--resonance-basis must be 'raw' or 'decayed' (got '{basis}')")


def _choose(tx: MemoryTx, agent: str, *, limit: int, min_resonance: int | None, days: int, basis: str,
            exclude: bool, now: int) -> dict[str, list[int]]:
    """Rowids per layer (the cascade rules of the module docstring)."""
    return tx.wake.choose(agent, limit=limit, min_resonance=min_resonance,
                          days_since=format_ms(now - days * MS_PER_DAY), basis=basis, exclude=exclude, now=now,
                          core_min=CORE_MIN, bridge_min=BRIDGE_MIN)


def _excluded_counts(tx: MemoryTx, agent: str, chosen: dict[str, list[int]], **kw: Any) -> dict[str, int]:
    if not tx.wake.any_excluded(agent):
        return dict.fromkeys(EXCLUDE_TAGS, 0)
    without = _choose(tx, agent, exclude=False, **kw)
    return tx.wake.exclusion_counts([r for k in LAYERS for r in without[k]])


def _hydrate(tx: MemoryTx, rowids: list[int], now: int) -> dict[int, WakeEntry]:
    out = {}
    for r in tx.wake.rows(rowids, now):
        out[r[0]] = WakeEntry(r[0], r[1], r[2], r[3], int(r[4]), round(float(r[5]), 4), r[6] or "", r[7],
                              json.loads(r[8]) if r[8] else [])
    return out


def select(svc: MemoryService, agent: str | None, *, limit: int = WAKE_LIMIT,
           min_resonance: int | None = None, days: int = WAKE_DAYS, include_excluded: bool = False,
           basis: str | None = None) -> WakeSet:
    """Choose the wake set (one read snapshot); nothing is written."""
    agent = need_agent(agent)
    basis = basis or default_basis("raw")
    check_args(limit=limit, days=days, min_resonance=min_resonance, basis=basis)
    now = now_ms()
    kw = {"limit": limit, "min_resonance": min_resonance, "days": days, "basis": basis, "now": now}
    ws = WakeSet(agent=agent, basis=basis)
    with svc._read() as repo:
        chosen = _choose(repo, agent, exclude=not include_excluded, **kw)
        if not include_excluded:
            ws.excluded = _excluded_counts(repo, agent, chosen, **kw)
        rows = _hydrate(repo, [r for k in LAYERS for r in chosen[k]], now)
    for k in LAYERS:
        ws.layers[k] = [rows[r] for r in chosen[k] if r in rows]
    return ws


def bump_activation(repo: MemoryTx, rowids: list[int]) -> None:
    """The cascade's activation bookkeeping: ``activation_count + 1`` only (the decay clock is left alone)."""
    repo.entries.activate(rowids, now_iso(), full=False)


def cascade(svc: MemoryService, agent: str | None, *, limit: int = WAKE_LIMIT,
            min_resonance: int | None = None, days: int = WAKE_DAYS, activate: bool = True,
            include_excluded: bool = False, basis: str | None = None) -> WakeSet:
    """``m1nd memory wake`` / the ``wake`` tool: the cascade (its activation counts bumped unless ``activate`` is
    false)."""
    ws = select(svc, agent, limit=limit, min_resonance=min_resonance, days=days,
                include_excluded=include_excluded, basis=basis)
    rowids = [e.rowid for e in ws.entries()]
    if activate and rowids:
        try:
            with svc._write() as repo:
                bump_activation(repo, rowids)
        except BusyError:
            log.warning("wake activation bookkeeping skipped: memory database busy")
    return ws


def render_cascade(data: dict[str, Any]) -> list[str]:
    """The text form of :func:`cascade`'s answer (one string per output line)."""
    heads = {"core": "=== CORE (Foundational) ===", "recent": "=== RECENT ===", "bridges": "=== BRIDGES ==="}
    lines: list[str] = []
    layers = [k for k in LAYERS if data["layers"][k]]
    if not layers:
        ex = data["excluded"]
        n = sum(ex.values())
        if n:
            return [(f"No blooms to wake: {n} excluded by tag (archive: {ex['archive']}, wake-exclude: "
                     f"{ex['wake-exclude']}); pass --include-excluded to include them")]
        return ["No blooms to wake"]
    for k in layers:
        lines.append("")
        lines.append(heads[k])
        lines.append("")
        for e in data["layers"][k]:
            lines.append(f"  {e['id']} [{e['resonance']}] {e['title']}")
            lines.extend("    " + ln if ln.strip() else "" for ln in e["content"].splitlines())
    lines.append("")
    lines.append(f"Loaded {data['total']} memories across {len(layers)} layers.")
    return lines


# =============================================================================================================
# wake-fetch
# =============================================================================================================
def fetch(svc: MemoryService, agent: str | None, *, days: int = WAKE_FETCH_DAYS,
          limit: int = WAKE_FETCH_LIMIT, exclude_tags: list[str] | tuple[str, ...] = (),
          basis: str | None = None) -> WakeFacts:
    """Recent resonant facts for a wake presentation, newest first."""
    basis = basis or default_basis("decayed")
    if days < 1:
        raise InvalidInputError(f"--days must be a positive integer (got {days})")
    if limit < 1:
        raise InvalidInputError(f"--limit must be a positive integer (got {limit})")
    if basis not in ("raw", "decayed"):
        raise InvalidInputError(f"--resonance-basis must be 'raw' or 'decayed' (got '{basis}')")
    now = now_ms()
    prefixes = [p for p in (t.strip() for t in exclude_tags) if p]
    with svc._read() as tx:
        rows = tx.wake.fetch(agent, now=now, since=format_ms(now - days * MS_PER_DAY), basis=basis,
                             exclude_prefixes=prefixes, limit=limit, min_resonance=FETCH_MIN_RESONANCE,
                             min_value=RECENT_MIN_RESONANCE)
    return WakeFacts([WakeFact(id=r[0], date=r[1][:10], label=r[2], resonance=int(r[3]), content=r[4] or "")
                      for r in rows])


def render_facts(data: dict[str, Any]) -> list[str]:
    facts = data["facts"]
    if not facts:
        return ["(no memory entries returned)"]
    lines = ["<facts>"]
    for i, f in enumerate(facts):
        if i:
            lines.append("")
        lines.append(f"[{f['date']}] {f['label']} (resonance {f['resonance']}) {f['id']}")
        lines.append("<![CDATA[" + f["content"].replace("]]>", "]]]]><![CDATA[>") + "]]>")
    lines.append("</facts>")
    return lines
