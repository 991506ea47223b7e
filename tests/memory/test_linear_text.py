"""Every text scanner is linear in its input (issue 14: the wake-text sentence regex was quadratic on text without
a full stop, 8 s for 20 kB). Each scanner gets 1 MB without sentence breaks in several shapes; the check compares
CPU time at n and 4n (a linear scan grows ~4x, a quadratic one ~16x), never an absolute time, and keeps the best of
a few attempts so a busy machine cannot fail it."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from m1nd.memory import chunking, fts, normalize, waketext
from m1nd.memory.embeddings import HashingEmbedder

MB = 1 << 20
GROWTH = 4
BOUND = 10.0  # linear: ~4; quadratic: ~16


def _repeat(unit: str) -> Callable[[int], str]:
    return lambda n: (unit * (n // len(unit) + 1))[:n]


SHAPES: dict[str, Callable[[int], str]] = {
    "words": _repeat("lorem ipsum dolor sit amet "),
    "one-token": _repeat("x"),
    "marks-inside-words": _repeat("a.b!c?d"),
    "camel-identifiers": _repeat("parseHttpRequest_v2 "),
    "heading-space-run": lambda n: "# a" + " " * (n - 4) + "b",
    "quotes": _repeat('"a b'),
}

SCANNERS: dict[str, Callable[[str], object]] = {
    "wake-sentences": waketext.sentences,
    "wake-auto-phrase": lambda t: waketext.auto_phrase(t, "title"),
    "wake-derived-phrase": waketext.derived_phrase,
    "wake-chunk-phrases": lambda t: waketext.chunk_phrases(1, t, t, "title", ["phrase"]),
    "wake-chunking": waketext.split_chunks,
    "wake-normalise": waketext.normalise,
    "dedup-normalisation": lambda t: normalize.dedup_hash("title", t),
    "fts-query-building": lambda t: fts.build_match(fts.query_terms(t)),
    "fts-identifier-parts": fts.ident_text,
    "embedding-chunking": lambda t: chunking.chunk_windows(HashingEmbedder(), t),
}


def _cpu(fn: Callable[[str], object], text: str) -> float:
    best = float("inf")
    for _ in range(2):
        t0 = time.process_time()
        fn(text)
        best = min(best, time.process_time() - t0)
    return max(best, 1e-4)  # below the clock's resolution both sizes look alike


def _growth(fn: Callable[[str], object], make: Callable[[int], str], n: int) -> float:
    small, big = make(n), make(GROWTH * n)
    return _cpu(fn, big) / _cpu(fn, small)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("scanner", SCANNERS)
def test_text_scanners_are_linear(scanner: str, shape: str) -> None:
    fn, make = SCANNERS[scanner], SHAPES[shape]
    # 16 kB -> 64 kB first, so a quadratic scanner fails in seconds instead of running for hours on 1 MB.
    for n in (16 * 1024, MB // GROWTH):
        growths = []
        for _ in range(3):
            growths.append(_growth(fn, make, n))
            if growths[-1] < BOUND:
                break
        assert min(growths) < BOUND, f"{scanner} on {shape}: x{GROWTH} input took x{min(growths):.1f} time"
