"""Time, the one home of m1nd's clock and timestamp formats (issue 16: ``now_ms`` had three definitions).

Everything that stamps a row or measures an age asks :func:`now_ms` (epoch milliseconds, integer, from
``time.time_ns`` so a test can freeze the clock in one place). The knowledge memory writes RFC 3339 UTC with
milliseconds (``2026-01-02T03:04:05.678Z``): :func:`format_ms` makes it, :func:`parse_ms` reads it back and
:func:`normalise_ts` canonicalises imported times.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from functools import lru_cache

from m1nd.errors import InvalidInputError

MS_PER_DAY = 86_400_000


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def format_ms(ms: float) -> str:
    ms = int(ms)
    dt = datetime.fromtimestamp(ms // 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


def now_iso() -> str:
    return format_ms(now_ms())


def now_utc() -> datetime:
    """The current time as an aware UTC datetime (calendar arithmetic: weeks, weekdays)."""
    return datetime.fromtimestamp(now_ms() / 1000, tz=UTC)


@lru_cache(maxsize=65536)
def parse_ms(ts: str) -> float:
    """Epoch milliseconds of an RFC 3339 timestamp (naive = UTC)."""
    s = ts.strip()
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"
    dt = datetime.fromisoformat(s)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp() * 1000.0


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
