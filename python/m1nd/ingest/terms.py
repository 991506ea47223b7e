"""The words of each definition's own text, for the lexical index (ranking issue: "bodies are indexed").

A definition's *own* text is the lines of its span that no nested definition claims: a method's body belongs to the
method, not to its class; a file keeps its module-level lines (imports, constants, top-level code). Every word there
counts: identifiers used in calls and attributes, imported names, constants, and the words of comments, docstrings
and string literals (error messages repeat the words of the change that touches them). Splitting identifiers into
parts, folding and stemming (:func:`m1nd.graph.lexicon.forms`) happen when the index is built, once per distinct
word of the whole repository; here the words are only found and kept as written, so camel humps survive and the
extraction stays a pair of C-level scans per file.

Language-agnostic on purpose: it needs only the definitions' line spans, so every extractor (and the regex
fallback) gets body terms for free, and the blob stays the per-file cache unit. The result is stored in the
extract blob as one space-separated string of words per definition, which the index build reads back from ``graph.db``.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import numpy as np

from m1nd.graph.lexicon import forms

#: bump when the term extraction changes: cached extract blobs are then re-extracted (it is part of
#: :func:`m1nd.ingest.extract.extractor_version`)
TERMS_VERSION = 3
#: words kept per definition (the first ones): bounds the blob and the index on generated or data-heavy code
MAX_WORDS_PER_NODE = 20_000
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]{1,79}")


def unpack_counts(text: str) -> list[tuple[str, int]]:
    """The index terms of a stored word list with their counts: ``"parseURL x parseURL"`` →
    ``[("pars", 2), ("parseurl", 2), ("url", 2), ("x", 1)]`` (sorted by term; for tests and diagnostics)."""
    counts: dict[str, int] = {}
    for w, c in Counter(text.split()).items():
        for f in forms(w):
            counts[f] = counts.get(f, 0) + c
    return sorted(counts.items())


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
    words: list[list[bytes]] = [[] for _ in range(len(defs) + 1)]  # last one: the file
    if n_lines:
        cut = np.flatnonzero(owner[1:] != owner[:-1]) + 1
        run_start = np.concatenate(([0], cut))
        run_end = np.concatenate((cut, [n_lines]))
        findall = _WORD.findall
        for s, e, o in zip(run_start.tolist(), run_end.tolist(), owner[run_start].tolist()):
            found = findall(data, int(starts[s]), int(starts[e]))
            if found:
                words[o].extend(found)
    for i, d in enumerate(defs):
        d["terms"] = b" ".join(words[i][:MAX_WORDS_PER_NODE]).decode("ascii")
    blob["terms"] = b" ".join(words[-1][:MAX_WORDS_PER_NODE]).decode("ascii")
