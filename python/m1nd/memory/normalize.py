"""Text normalisation used by write-boundary dedup (spec memory.md §6) and thread matching.

``dedup_hash`` = sha256 hex of ``normalise(title) + " " + normalise(body)`` with whitespace collapsed and trimmed
again, so a sentence that moves between title and body still collides. Normalisation: Unicode NFKC, case-fold,
delete every ASCII punctuation character and every character of Unicode general category ``P*``, collapse
whitespace runs to one space, trim.
"""

from __future__ import annotations

import hashlib
import string
import unicodedata
from functools import lru_cache

_ASCII_PUNCT = {ord(c): None for c in string.punctuation}


@lru_cache(maxsize=4096)
def _is_punct(ch: str) -> bool:
    return unicodedata.category(ch)[0] == "P"


def normalise(text: str) -> str:
    s = unicodedata.normalize("NFKC", text).casefold().translate(_ASCII_PUNCT)
    if not s.isascii():
        s = "".join(ch for ch in s if ch < "\x80" or not _is_punct(ch))
    return " ".join(s.split())


def dedup_hash(title: str, body: str) -> str:
    joined = " ".join(f"{normalise(title)} {normalise(body)}".split())
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()


def dedup_scope(visibility: str, owner: str | None, source_agent: str) -> str:
    """Whose duplicate an entry can be: a private entry is its owner's, a public one its source agent's. Visibility
    is part of the identity, so a public entry equal to a private one is a different entry (issue 14)."""
    return f"private:{owner}" if visibility == "private" else f"public:{source_agent}"


def content_hash(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def thread_key(text: str) -> str:
    """Thread matching for ``thread_closed``: trim, case-fold, collapse whitespace."""
    return " ".join(text.casefold().split())
