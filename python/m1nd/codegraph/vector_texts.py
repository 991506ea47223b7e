"""What a code node is embedded from, and the key of its vector (spec embeddings.md §7): the texts of
:mod:`m1nd.codegraph.vectors`.

Every node except directories is embedded from a short text:

* file — ``"file <relpath>\\n<module docstring>\\n<names of ≤ 30 top-level symbols>"``;
* section (markdown) — heading path and the first 300 characters of its text;
* any other symbol — ``"<kind> <qname>\\n<signature>\\n<doc>"`` (or another node-text choice,
  :mod:`m1nd.graph.node_text`).

A vector is keyed by ``embed_hash = sha256(model_id ‖ text)``, so identical texts share it.
"""

from __future__ import annotations

import hashlib
from typing import Any

DIR_KIND = 0
FILE_KIND = 1
SECTION_KIND = 11


def node_texts(t: Any, roots: dict[int, str] | None = None) -> list[str | None]:
    """The text each node is embedded from (None for directories), aligned with the node table. ``roots`` (root id
    → path) is needed only by node-text choices that read bodies (:mod:`m1nd.graph.node_text`)."""
    return list(iter_node_texts(t, roots))


def iter_node_texts(t: Any, roots: dict[int, str] | None = None) -> Any:
    """:func:`node_texts` one at a time (a serving process hashes them as they come: the list of every text is
    ~10 MB on Django, and its freed memory stayed in the process)."""
    from m1nd.graph.node_text import SourceLines, body_lines, chosen, symbol_text
    from m1nd.graph.nodes import KIND_NAMES

    n = t.n
    kinds = t.kind
    file_of = t.file_of
    top: dict[int, list[tuple[int, str]]] = {}
    qnames, docs, signatures = (_transient(c) for c in (t.qname, t.doc, t.signature))
    labels = t.label
    variant = chosen()
    source = SourceLines(roots or {})
    for i in range(n):
        k = int(kinds[i])
        if k in (DIR_KIND, FILE_KIND):
            continue
        f = int(file_of[i]) if len(file_of) == n else -1
        if f < 0:
            continue
        q = qnames[i] or labels[i]
        if "." in q or "::" in q:
            continue
        top.setdefault(f, []).append((int(t.line_start[i]), labels[i]))
    for i in range(n):
        k = int(kinds[i])
        if k == DIR_KIND:
            yield None
        elif k == FILE_KIND:
            names = [lab for _, lab in sorted(top.get(i, []))[:30]]
            yield f"file {t.source_path[i]}\n{docs[i] or ''}\n{', '.join(names)}".strip()
        elif k == SECTION_KIND:
            yield f"{qnames[i] or labels[i]}\n{(docs[i] or '')[:300]}".strip()
        else:
            kind = KIND_NAMES[k] if k < len(KIND_NAMES) else "symbol"
            doc = docs[i] or ""
            yield symbol_text(variant, kind, qnames[i] or labels[i], signatures[i] or "", doc,
                              lambda i=i, doc=doc: body_lines(source.get(int(t.root_id[i]), t.source_path[i]),
                                                              int(t.line_start[i]), int(t.line_end[i]), doc))


def _transient(column: Any) -> Any:
    """A string column for one pass: a packed column is split without being kept split (see LazyStrings)."""
    return column.transient() if hasattr(column, "transient") else column


def embed_hash(model_id: str, text: str) -> str:
    return hashlib.sha256(model_id.encode("utf-8") + b"\x00" + text.encode("utf-8")).hexdigest()
