"""Identifier splitting, the one home (issue 16 item 6: the graph's words, the memory's keyword index and the file
ranker of ``m1nd eval`` each had their own pattern).

An identifier splits at its separators and, inside each piece, at camel humps and letter↔digit boundaries:
``parseHTTPResponse_v2`` → parse, http, response, v, 2. :data:`HUMPS` finds the parts of a separator-free piece
(callers fold the case); :func:`identifier_parts` is the graph's whole split (separators ``_ - . / :`` included, parts
lower-cased, cached). The ingest's native word kernels (``m1nd_core.wordfold``) find the written words only; their
parts come from here too (:func:`m1nd.graph.lexicon.forms_many`).
"""

from __future__ import annotations

import functools
import re

#: the parts of one separator-free piece: an acronym before a capitalised word, a (capitalised) lower-case run, an
#: upper-case run, a digit run. The separators (``_ - . / :``) are never part of a hump, so one scan over a whole
#: word splits both ways.
HUMPS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
#: :data:`HUMPS` for any text rather than code words: it also keeps runs of letters outside A–Z (identifiers and words
#: in other scripts) as parts and takes ASCII digit runs only (the file ranker of ``m1nd eval``, an FTS5 BM25
#: baseline; its scores must not move with this refactor)
HUMPS_ANY_SCRIPT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W\d_A-Za-z]+")


@functools.lru_cache(maxsize=1 << 17)
def _parts_cached(word: str) -> tuple[str, ...]:
    return tuple(h.lower() for h in HUMPS.findall(word))


def identifier_parts(word: str) -> list[str]:
    """``parseHTTPResponse_v2`` → ``parse http response v 2``: separators, camel humps, letter↔digit."""
    return list(_parts_cached(word))
