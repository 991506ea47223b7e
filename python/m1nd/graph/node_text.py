"""Which text of a code symbol is embedded (issue 13 item 2: "which node text gives the best retrieval per second of
embedding"). One function per choice, chosen by ``M1ND_EMBED_TEXT`` (default :data:`DEFAULT`):

* ``name`` — ``"<kind> <qname>\\n<signature>"``;
* ``doc`` — the above plus the docstring (what m1nd embeds by default);
* ``body`` — ``doc``'s text with the first :data:`BODY_LINES` lines of the body between signature and docstring
  (read from the source file; the identifiers a function uses are mostly there);
* ``idents`` — ``doc``'s text plus the distinct identifiers of the whole body, in order of first use (≤ 40).

The measurement (bench/embed_text_report.py, README "Embeddings") chose the default; files and markdown sections
always embed as described in :mod:`m1nd.codegraph.vectors`. The choice is part of every embed hash (a different text is
a different hash), so switching re-embeds only what changed and vectors of both choices can share the database.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

VARIANTS = ("name", "doc", "body", "idents")
DEFAULT = "doc"
BODY_LINES = 6
BODY_CHARS = 400
MAX_IDENTS = 40
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_QUOTES = re.compile(r"^[rbuRBU]?(\"\"\"|'''|\"|'|/\*\*|/\*|\*/|\*|//+|#+)\s*|\s*(\"\"\"|'''|\*/)$")


def chosen() -> str:
    """The node-text choice of this process (``M1ND_EMBED_TEXT``; an unknown name is the default)."""
    v = os.environ.get("M1ND_EMBED_TEXT", "").strip().lower()
    return v if v in VARIANTS else DEFAULT


class SourceLines:
    """Lines of the files nodes come from (one file kept at a time: nodes of a file are consecutive)."""

    def __init__(self, roots: dict[int, str]) -> None:
        self.roots = roots
        self._key: tuple[int, str] | None = None
        self._lines: list[str] = []

    def get(self, root_id: int, relpath: str) -> list[str]:
        key = (root_id, relpath)
        if key != self._key:
            self._key = key
            base = self.roots.get(root_id)
            try:
                self._lines = (Path(base, relpath).read_text(encoding="utf-8", errors="replace").splitlines()
                               if base else [])
            except OSError:
                self._lines = []
        return self._lines


def body_lines(lines: list[str], start: int, end: int, doc: str) -> list[str]:
    """The body's lines after the signature line (1-based ``start``..``end``), stripped, blank and docstring lines
    left out (a line whose text, without quotes/comment marks, is part of the docstring)."""
    out = []
    for raw in lines[max(0, start):max(start, min(end, len(lines)))]:
        s = raw.strip()
        if not s:
            continue
        bare = _QUOTES.sub("", s).strip()
        if doc and bare and bare in doc:
            continue
        out.append(s)
    return out


def symbol_text(variant: str, kind: str, name: str, signature: str, doc: str,
                body: Callable[[], list[str]]) -> str:
    """The embedded text of one symbol; ``body()`` gives its body lines (read only by the variants that use them)."""
    head = f"{kind} {name}\n{signature}"
    if variant == "name":
        return head.strip()
    if variant == "body":
        code = "\n".join(body()[:BODY_LINES])[:BODY_CHARS]
        return f"{head}\n{code}\n{doc}".strip()
    if variant == "idents":
        seen = dict.fromkeys(m for ln in body() for m in _IDENT.findall(ln))
        names = " ".join(list(seen)[:MAX_IDENTS])
        return f"{head}\n{doc}\n{names}".strip()
    return f"{head}\n{doc}".strip()
