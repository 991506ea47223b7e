"""The words of each definition's own text, for the lexical index (ranking issue: "bodies are indexed").

A definition's *own* text is the lines of its span that no nested definition claims: a method's body belongs to the
method, not to its class; a file keeps its module-level lines (imports, constants, top-level code). Every word there
counts: identifiers used in calls and attributes, imported names, constants, and the words of comments, docstrings
and string literals (error messages repeat the words of the change that touches them). Splitting identifiers into
parts and weighting happen when the index is built (:mod:`m1nd.graph.lexicon`); here a word is kept as written, so
camel humps survive.

Language-agnostic on purpose: it needs only the definitions' line spans, so every extractor (and the regex
fallback) gets body terms for free, and the blob stays the per-file cache unit. The result is stored in the
extract blob as a compact string per definition (``"name other*3"``: a word, ``*count`` when it occurs more than
once), which the index build reads back from ``graph.db``.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import numpy as np

#: bump when the term extraction changes: cached extract blobs are then re-extracted (it is part of
#: :func:`m1nd.ingest.extract.extractor_version`)
TERMS_VERSION = 1
#: distinct words kept per definition (the most frequent ones): bounds the index on generated or data-heavy code
MAX_TERMS_PER_NODE = 600
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]{1,79}")


def pack_counts(counts: Counter[bytes] | dict[bytes, int]) -> str:
    """``{b"foo": 1, b"bar": 3}`` → ``"bar*3 foo"`` (most frequent first, ties by word; capped)."""
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_TERMS_PER_NODE]
    return " ".join(w.decode("ascii") if c == 1 else f"{w.decode('ascii')}*{c}" for w, c in items)


def unpack_counts(text: str) -> list[tuple[str, int]]:
    """Inverse of :func:`pack_counts`."""
    out: list[tuple[str, int]] = []
    for item in text.split():
        word, star, count = item.partition("*")
        out.append((word, int(count) if star else 1))
    return out


def attach_terms(blob: dict[str, Any], data: bytes) -> None:
    """Set ``blob["terms"]`` (the file's own lines) and ``d["terms"]`` on every definition, in place."""
    defs = blob.get("definitions") or []
    newlines = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
    n_lines = len(newlines) + 1
    # byte offset where each line starts (line k, 0-based); one extra entry for the end
    starts = np.empty(n_lines + 1, np.int64)
    starts[0] = 0
    starts[1:n_lines] = newlines + 1
    starts[n_lines] = len(data)
    owner = np.full(n_lines, -1, np.int32)
    # source order lists a parent before what it contains, so nested spans overwrite their parents' lines
    for i, d in enumerate(defs):
        a = max(int(d.get("line_start") or 1), 1) - 1
        b = min(max(int(d.get("line_end") or a + 1), a + 1), n_lines)
        owner[a:b] = i
    counts: list[Counter[bytes]] = [Counter() for _ in range(len(defs) + 1)]  # last one: the file
    if n_lines:
        cut = np.flatnonzero(owner[1:] != owner[:-1]) + 1
        run_start = np.concatenate(([0], cut))
        run_end = np.concatenate((cut, [n_lines]))
        findall = _WORD.findall
        for s, e, o in zip(run_start.tolist(), run_end.tolist(), owner[run_start].tolist()):
            words = findall(data, int(starts[s]), int(starts[e]))
            if words:
                counts[o].update(words)
    for i, d in enumerate(defs):
        d["terms"] = pack_counts(counts[i])
    blob["terms"] = pack_counts(counts[-1])
