"""The words of each definition's own text, for the lexical index (ranking issue: "bodies are indexed").

A definition's *own* text is the lines of its span that no nested definition claims: a method's body belongs to the
method, not to its class; a file keeps its module-level lines (imports, constants, top-level code). Every word there
counts: identifiers used in calls and attributes, imported names, constants, and the words of comments, docstrings
and string literals (error messages repeat the words of the change that touches them). Splitting identifiers into
parts, folding and stemming (:func:`m1nd.graph.lexicon.forms_many`) happen here, in the parallel extraction
workers, once per distinct word a worker meets (cached across its files); what is stored is each node's index
terms with repeats, so the index build only counts.

Language-agnostic on purpose: it needs only the definitions' line spans, so every extractor (and the regex
fallback) gets body terms for free, and the blob stays the per-file cache unit. The result is stored in the
extract blob as one space-separated string of index terms per definition, which the index build reads back from
``graph.db``.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import filterfalse
from typing import Any

import numpy as np

from m1nd.graph.lexicon import forms_many

#: bump when the term extraction changes: cached extract blobs are then re-extracted (it is part of
#: :func:`m1nd.ingest.extract.extractor_version`)
TERMS_VERSION = 5
#: words kept per definition (the first ones): bounds the blob and the index on generated or data-heavy code
MAX_WORDS_PER_NODE = 20_000
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]{1,79}")


#: written word -> its index terms joined by spaces, per extraction process (words repeat across files)
_FOLDED: dict[bytes, str] = {}
FOLD_CACHE_WORDS = 500_000


def unpack_counts(text: str) -> list[tuple[str, int]]:
    """A stored term list as sorted (term, count) pairs (for tests and diagnostics)."""
    return sorted(Counter(text.split()).items())


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
    # the file's distinct words not folded yet (filterfalse: C-level, and O(file) rather than O(cache))
    new = list(filterfalse(_FOLDED.__contains__, set().union(*words)))
    if new:
        if len(_FOLDED) > FOLD_CACHE_WORDS:
            _FOLDED.clear()
        for w, fs in forms_many(w.decode("ascii") for w in new).items():
            _FOLDED[w.encode("ascii")] = " ".join(fs)
    # a stopword folds to "": the doubled spaces it leaves cost nothing to the reader (str.split), and the join
    # stays one C-level pass
    fold = _FOLDED.__getitem__
    for i, d in enumerate(defs):
        d["terms"] = " ".join(map(fold, words[i][:MAX_WORDS_PER_NODE])).strip()
    blob["terms"] = " ".join(map(fold, words[-1][:MAX_WORDS_PER_NODE])).strip()
