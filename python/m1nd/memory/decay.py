"""Effective resonance (spec memory.md §5).

``foundational`` and ``transformative`` entries are exempt (``eff = resonance``); every other type, and none, decays
as ``resonance × base^(days / 7)`` with ``base`` 0.90 (resonance ≤ 3), 0.95 (≤ 5) or 0.975, where ``days`` are the
fractional days since ``last_activated``, else since ``created_at``. Registered on every connection as the SQL
function ``eff_res(resonance, resonance_type, last_activated, created_at, now_ms)`` so filters and ORDER BY use it.
"""

from __future__ import annotations

import math

from m1nd.timeutil import MS_PER_DAY, parse_ms

EXEMPT = frozenset({"foundational", "transformative"})


def base_for(resonance: int) -> float:
    if resonance <= 3:
        return 0.90
    if resonance <= 5:
        return 0.95
    return 0.975


def effective_resonance(resonance: int | None, resonance_type: str | None, last_activated: str | None,
                        created_at: str | None, now_ms: float) -> float:
    r = int(resonance or 0)
    if resonance_type in EXEMPT or r == 0:
        return float(r)
    clock = last_activated or created_at
    if not clock:
        return float(r)
    try:
        days = max(0.0, (now_ms - parse_ms(clock)) / MS_PER_DAY)
    except ValueError:
        return float(r)
    return r * math.pow(base_for(r), days / 7.0)


def eff_res_sql(resonance, resonance_type, last_activated, created_at, now_ms):
    """The SQL scalar function (argument order of the spec)."""
    return effective_resonance(resonance, resonance_type, last_activated, created_at, float(now_ms or 0))
