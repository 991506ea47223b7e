"""m1nd.progress (issue 13 item 4): rate and ETA, a bar on a terminal, bounded plain lines otherwise."""

from __future__ import annotations

import io

from m1nd import progress as P


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_are_periodic_not_per_item(monkeypatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(P.time, "monotonic", lambda: clock[0])
    s = io.StringIO()
    bar = P.RateProgress("Embedding", stream=s)
    for i in range(1, 1001):
        clock[0] += 0.05  # 50 s in all: a line at the start and one every 10 s
        bar.update(i, 1000, f"entry {i}")
    bar.close()
    lines = s.getvalue().splitlines()
    assert 5 <= len(lines) <= 7
    assert lines[-1] == "Embedding 1000/1000 (100%) 20.0/s, elapsed 0:50, ETA --:--"
    assert "entry" not in s.getvalue()  # the item in hand is only shown on a terminal


def test_eta_from_the_rate(monkeypatch) -> None:
    clock = [0.0]
    monkeypatch.setattr(P.time, "monotonic", lambda: clock[0])
    bar = P.RateProgress("m1nd embed: code nodes", stream=io.StringIO())
    clock[0] = 10.0
    bar.done, bar.total = 100, 1300
    assert bar.line() == "m1nd embed: code nodes 100/1300 (8%) 10.0/s, elapsed 0:10, ETA 2:00"


def test_terminal_bar_is_rewritten_in_place_with_the_item() -> None:
    s = _Tty()
    bar = P.RateProgress("Embedding", stream=s)
    bar.update(1, 4, "Retry   policy\nfor uploads")
    bar.close()
    out = s.getvalue()
    assert out.startswith("\r[") and "Embedding 1/4 (25%)" in out and "Retry policy for uploads" in out
    assert out.endswith("\n") and out.count("\n") == 1
