"""Timestamps of the memory: RFC 3339 UTC with milliseconds (``2026-01-02T03:04:05.678Z``)."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from m1nd.errors import InvalidInputError


def format_ms(ms: float) -> str:
    ms = int(ms)
    dt = datetime.fromtimestamp(ms // 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def now_iso() -> str:
    return format_ms(now_ms())


def normalise_ts(raw: str, field: str = "timestamp") -> str:
    """Any ISO-8601 time (naive taken as UTC) → canonical RFC 3339 with milliseconds."""
    s = str(raw).strip()
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        raise InvalidInputError(f"field '{field}' is not an RFC 3339 time: {raw!r}") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return format_ms(round(dt.timestamp() * 1000))
