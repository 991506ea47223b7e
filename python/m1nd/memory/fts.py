"""Keyword search helpers: the identifier-parts column of ``entries_fts`` and safe FTS5 query building.

Query building (spec memory.md §9): every word becomes a double-quoted FTS5 string (embedded quotes doubled), so no
FTS syntax can be injected; ``"…"`` in the query is a phrase; a trailing ``*`` makes a prefix query. ``all_words``
joins with AND (the default), ``any_word`` with OR (the fallback when nothing matches every word).
"""

from __future__ import annotations

import re

from m1nd.identifiers import HUMPS

# Identifier-like words only: some upper case, underscore or digit inside (plain words are skipped by the engine).
_IDENT = re.compile(r"\b(?=[A-Za-z0-9_]*[A-Z_0-9])[A-Za-z_][A-Za-z0-9_]{2,}")
_QUERY_TOKEN = re.compile(r'"([^"]*)"?|(\S+)')
_WORDISH = re.compile(r"\w")
MAX_IDENT_CHARS = 200_000


def ident_text(*texts: str) -> str:
    """camelCase / snake_case / digit-boundary parts of the identifiers in ``texts`` (each identifier once)."""
    seen: set[str] = set()
    parts: list[str] = []
    for text in texts:
        if not text:
            continue
        for m in _IDENT.finditer(text[:MAX_IDENT_CHARS]):
            word = m.group(0)
            if word in seen:
                continue
            seen.add(word)
            pieces = [p for chunk in word.split("_") for p in HUMPS.findall(chunk)]
            if len(pieces) >= 2:
                parts.append(" ".join(pieces))
    return " ".join(parts)


def _quote(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


def query_terms(query: str) -> list[str]:
    """FTS5 terms for a user query; empty when the query holds nothing searchable."""
    terms: list[str] = []
    for m in _QUERY_TOKEN.finditer(query):
        phrase, word = m.group(1), m.group(2)
        if phrase is not None:
            if _WORDISH.search(phrase):
                terms.append(_quote(phrase.strip()))
            continue
        prefix = word.endswith("*")
        w = word.rstrip("*")
        if not _WORDISH.search(w):
            continue
        terms.append(_quote(w) + ("*" if prefix else ""))
    return terms


def build_match(terms: list[str], *, any_word: bool = False) -> str:
    return (" OR " if any_word else " AND ").join(terms)
