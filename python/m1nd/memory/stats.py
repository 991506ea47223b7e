"""Statistics of the memory as one agent sees it: counts per category, health (embedded, anchored, stale), weekly
growth, and the open threads ranked by decayed resonance."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from m1nd.defaults import STALE_AFTER_DAYS, THREAD_WEEKLY_DECAY
from m1nd.memory.core import MemoryCore
from m1nd.memory.results import MemoryHealth, MemoryStats, OpenThread
from m1nd.timeutil import MS_PER_DAY, format_ms, now_ms, now_utc, parse_ms

GROWTH_WEEKS = 8


class Stats(MemoryCore):
    def stats(self, *, agent: str | None) -> MemoryStats:
        with self._read() as tx:
            rows = tx.entries.category_counts(agent)
            own = tx.entries.private_count(agent) if agent else 0
        return MemoryStats(total=sum(n for _, n in rows), categories=dict(rows), private_own=own)

    def health(self, *, agent: str | None) -> MemoryHealth:
        model = getattr(self.vector_hook, "model_id", None)
        now = now_ms()
        with self._read() as tx:
            total, embedded, anchored, stale, stale_vec = tx.entries.health_counts(
                agent, model, format_ms(now - STALE_AFTER_DAYS * MS_PER_DAY))

        def pct(n: int) -> int:
            return 0 if not total else (n * 200 + total) // (2 * total)
        return MemoryHealth(total=total, embedded=embedded, anchored=anchored, stale_high_res=stale,
                            embedded_pct=pct(embedded), anchored_pct=pct(anchored), stale_high_res_pct=pct(stale),
                            model_id=model, stale_vectors=stale_vec)

    def growth(self, *, agent: str | None) -> list[int]:
        """Entries created in each of the last eight calendar weeks (Monday 00:00 UTC), oldest first."""
        now = now_utc()
        monday = (now - timedelta(days=now.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
        starts = [monday - timedelta(weeks=k) for k in range(GROWTH_WEEKS - 1, -1, -1)]
        bounds = [format_ms(s.timestamp() * 1000) for s in starts] + [format_ms((monday + timedelta(weeks=1))
                                                                                .timestamp() * 1000)]
        with self._read() as tx:
            return [tx.entries.created_between(agent, bounds[i], bounds[i + 1]) for i in range(GROWTH_WEEKS)]

    def open_threads(self, *, agent: str | None, limit: int | None = None) -> list[OpenThread]:
        now = now_ms()
        with self._read() as tx:
            rows = tx.entries.open_threads(agent)

        def score(r: tuple[Any, ...]) -> float:
            weeks = max(0.0, (now - parse_ms(r[4])) / (7 * MS_PER_DAY))
            return r[5] * (THREAD_WEEKLY_DECAY ** weeks)
        rows.sort(key=lambda r: (-score(r), r[4], r[1]))
        if limit is not None:
            rows = rows[:limit]
        return [OpenThread(id=r[1], body=r[2], state=r[3] or "open", created_at=r[4], resonance=r[5],
                           tags=json.loads(r[6])) for r in rows]
