"""Progress of long jobs on stderr, with rate and ETA (issue 13 item 4): a bar rewritten in place on a terminal,
plain lines every ``PLAIN_EVERY_S`` seconds otherwise (logs and CI keep a readable, bounded record). Never stdout.

Standard library only, so ``import m1nd`` stays light; enabled by :func:`wanted` (stderr is a terminal, or
``M1ND_PROGRESS=1``, which the CLI's long commands set).
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

PLAIN_EVERY_S = 10.0
TTY_EVERY_S = 0.2


def wanted() -> bool:
    return sys.stderr.isatty() or os.environ.get("M1ND_PROGRESS") == "1"


def _clock(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class RateProgress:
    """``update(done, total)`` as work advances; ``close()`` prints the final line."""

    def __init__(self, label: str, *, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.t0 = time.monotonic()
        self._last = 0.0
        self.done = 0
        self.total = 0
        self.detail = ""

    def line(self) -> str:
        dt = time.monotonic() - self.t0
        rate = self.done / dt if dt > 0 else 0.0
        left = self.total - self.done
        eta = _clock(left / rate) if rate > 0 and left > 0 else "--:--"
        pct = 100.0 * self.done / self.total if self.total else 100.0
        text = f"{self.label} {self.done}/{self.total} ({pct:.0f}%) {rate:.1f}/s, elapsed {_clock(dt)}, ETA {eta}"
        if self.tty:
            width = 24
            filled = int(width * self.done / max(self.total, 1))
            text = f"[{'#' * filled}{'.' * (width - filled)}] " + text
            if self.detail:
                text = (text + " · " + " ".join(self.detail.split()))[:119]
        return text

    def update(self, done: int, total: int, detail: str | None = None) -> None:
        """Record progress; writes at most every 0.2 s on a terminal (with ``detail``, e.g. the item in hand) and
        every ``PLAIN_EVERY_S`` otherwise (the first call writes at once)."""
        self.done, self.total = done, total
        if detail is not None:
            self.detail = detail
        now = time.monotonic()
        if now - self._last < (TTY_EVERY_S if self.tty else PLAIN_EVERY_S):
            return
        self._last = now
        self._write()

    def _write(self, final: bool = False) -> None:
        if self.tty:
            self.stream.write("\r" + self.line().ljust(120) + ("\n" if final else ""))
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()

    def close(self) -> None:
        """The final line (when there was anything to do)."""
        if self.total:
            self.detail = ""
            self._write(final=True)
