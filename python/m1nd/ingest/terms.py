"""The words of each definition's own text, for the lexical index (ranking issue: "bodies are indexed").

A definition's *own* text is the lines of its span that no nested definition claims: a method's body belongs to the
method, not to its class; a file keeps its module-level lines (imports, constants, top-level code). Every word there
counts: identifiers used in calls and attributes, imported names, constants, and the words of comments, docstrings
and string literals (error messages repeat the words of the change that touches them). Splitting identifiers into
parts, folding and stemming (:func:`m1nd.graph.lexicon.folded_texts`) happen here, in the parallel extraction
workers, once per distinct word a worker meets (cached across its files); what is stored is each node's index
terms with repeats, so the index build only counts.

Language-agnostic on purpose: it needs only the definitions' line spans, so every extractor (and the regex
fallback) gets body terms for free, and the blob stays the per-file cache unit. The result is stored in the
extract blob as one space-separated string of index terms per definition, which the index build reads back from
``graph.db``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from m1nd.graph.lexicon import folded_texts, word_folds

#: bump when the term extraction changes: cached extract blobs are then re-extracted (it is part of
#: :func:`m1nd.ingest.extract.extractor_version`)
TERMS_VERSION = 5
#: words kept per definition (the first ones): bounds the blob and the index on generated or data-heavy code
MAX_WORDS_PER_NODE = 20_000
#: what a written word is (the kernel m1nd_core.wordfold finds exactly these, as re.findall would)
WORD_PATTERN = rb"[A-Za-z_][A-Za-z0-9_]{1,79}"
#: written words whose index terms each extraction process keeps (words repeat across files); past it the
#: table starts over
FOLD_CACHE_WORDS = 500_000


def unpack_counts(text: str) -> list[tuple[str, int]]:
    """A stored term list as sorted (term, count) pairs (for tests and diagnostics)."""
    return sorted(Counter(text.split()).items())


def attach_terms(blob: dict[str, Any], data: bytes) -> None:
    """Set ``blob["terms"]`` (the file's own lines) and ``d["terms"]`` on every definition, in place."""
    defs = blob.get("definitions") or []
    raw = np.frombuffer(data, np.uint8)
    newlines = np.flatnonzero(raw == 10)
    n_lines = len(newlines) + 1
    # byte offset where each line starts (line k, 0-based); one extra entry for the end
    starts = np.empty(n_lines + 1, np.int64)
    starts[0] = 0
    starts[1:n_lines] = newlines + 1
    starts[n_lines] = len(data)
    owner = np.full(n_lines, len(defs), np.int32)  # len(defs): the file
    # source order lists a parent before what it contains, so nested spans overwrite their parents' lines
    for i, d in enumerate(defs):
        a = max(int(d.get("line_start") or 1), 1) - 1
        b = min(max(int(d.get("line_end") or a + 1), a + 1), n_lines)
        owner[a:b] = i
    cut = np.flatnonzero(owner[1:] != owner[:-1]) + 1
    run_start = np.concatenate(([0], cut))
    run_end = np.concatenate((cut, [n_lines]))
    # the words of each run of lines with one owner (as re.findall(WORD_PATTERN) finds them), the first
    # MAX_WORDS_PER_NODE per owner, as ids into this process's word table (m1nd_core.wordfold)
    table = _word_table()
    ids, offsets, first_new, new = table.scan(raw, starts[run_start], starts[run_end], owner[run_start],
                                              len(defs) + 1, MAX_WORDS_PER_NODE)
    if new:  # the words this process had not folded yet
        table.set_folds(first_new, folded_texts([w.decode("ascii") for w in new]))
    # a stopword folds to "": the doubled spaces it leaves cost nothing to the reader (str.split)
    texts = table.join(ids, offsets)
    for d, text in zip(defs, texts):
        d["terms"] = text
    blob["terms"] = texts[-1]


_TABLE: list[Any] = []


def _word_table() -> Any:
    """This process's written word -> folded text table (made on first use: a forked worker inherits the
    parent's, which is as good as its own)."""
    if not _TABLE:
        _TABLE.append(word_folds(FOLD_CACHE_WORDS))
    return _TABLE[0]
