"""Text mechanics of the wake ritual (spec memory.md §12): byte chunking, wake phrases per chunk, and judging a
guess against them. Pure functions over strings, no database.

Chunking
--------
An entry's content is cut into chunks of at most ``M1ND_WAKE_CHUNK_BYTES`` UTF-8 bytes (default 28000). Each cut
looks backwards from the byte limit for the last separator in the order ``\\n---\\n`` (cut after it), ``\\n## ``,
``\\n### `` (cut before the heading, so the next chunk opens with it), ``\\n\\n``, ``\\n`` (cut after them), else the
last UTF-8 character boundary. A cut never falls strictly inside a fenced code block (a line opening with three
backticks up to the next such line). When the chunk starts with a fence that runs past the limit, no cut is possible
inside the window: that chunk runs to the end of the closing fence and is flagged ``oversized``. The chunks always
concatenate back to the exact content.

Phrases
-------
Chunk 0 of an entry with authored wake phrases is matched against all of them (``authored``); without any, against
one phrase made from the content (``auto``: first heading, else a sentence picked by the content's SHA-256, else the
first non-blank line, else the title). Later chunks get one phrase from their own text (``derived``) when the entry
has authored phrases, and none otherwise (``unphrased``). Headings and sentences are looked for outside fences only.

Judging
-------
``exact``: equal after trimming. ``close``: equal after :func:`normalise`, or Levenshtein similarity ≥ 0.8 over the
normalised characters (an empty normalisation never matches). Otherwise ``none``. An exact match on any phrase wins
over a close match on an earlier one.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import re
import unicodedata
from dataclasses import dataclass

DEFAULT_CHUNK_BYTES = 28000
HEADING_MAX = 120
SENTENCE_MAX = 100
DERIVED_LINE_MAX = 80
CLOSE_SIMILARITY = 0.8
NO_CONTENT = "(no content)"

# Separators in priority order and where the cut goes relative to the match start.
_SEPARATORS = ((b"\n---\n", 5), (b"\n## ", 1), (b"\n### ", 1), (b"\n\n", 2), (b"\n", 1))
# Text scanners are linear in their input (issue 14: ``\S.*?[.!?](?=\s|$)`` was quadratic on text without a full
# stop, 8 s for 20 kB): no pattern here may retry a scan from every start position.
_ATX_OPEN = re.compile(r" {0,3}#{1,6}(?=[ \t]|$)")
_ATX_CLOSE = re.compile(r"[ \t]#+$")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_NON_SPACE = re.compile(r"\S")
_PART = re.compile(r" \(Part \d+/\d+\)$")

# Opens every wake-log report (and ``wake-log report --help``).
NOTICE = ("Axis A climbs by construction once wake phrases are rewritten to resemble logged guesses; it only tells a "
          "phrase author how close the phrases sit to the model's words and must never be presented as proof of "
          "identity or of recall. Axis B cannot be lifted by editing phrases; at most it shows that the model reaches "
          "for the same thing again, which is not remembering.")


def chunk_limit() -> int:
    """``M1ND_WAKE_CHUNK_BYTES``; 0, negative or not a number → the default."""
    raw = os.environ.get("M1ND_WAKE_CHUNK_BYTES", "").strip()
    try:
        n = int(raw)
    except ValueError:
        return DEFAULT_CHUNK_BYTES
    return n if n > 0 else DEFAULT_CHUNK_BYTES


def entry_content(body: str | None, summary: str | None) -> str:
    """What the ritual shows of an entry: the body, else the summary, else ``(no content)``."""
    if body:
        return body
    if summary:
        return summary
    return NO_CONTENT


# -- fences ---------------------------------------------------------------------------------------------------
def _is_fence(line: bytes | str) -> bool:
    stripped = line.lstrip(b" " if isinstance(line, bytes) else " ")
    return len(line) - len(stripped) <= 3 and stripped[:3] in (b"```", "```")


def fence_spans(b: bytes) -> list[tuple[int, int]]:
    """Byte spans ``[start of opening line, end of closing line)`` of fenced blocks; an unclosed fence runs to the
    end."""
    spans: list[tuple[int, int]] = []
    open_at: int | None = None
    pos = 0
    n = len(b)
    while pos < n:
        nl = b.find(b"\n", pos)
        end = n if nl == -1 else nl + 1
        if _is_fence(b[pos:end].rstrip(b"\r\n")):
            if open_at is None:
                open_at = pos
            else:
                spans.append((open_at, end))
                open_at = None
        pos = end
    if open_at is not None:
        spans.append((open_at, n))
    return spans


class _Fences:
    def __init__(self, spans: list[tuple[int, int]]) -> None:
        self.spans = spans
        self.starts = [s for s, _ in spans]

    def inside(self, c: int) -> tuple[int, int] | None:
        """The span that strictly contains offset ``c`` (a cut there would split the block), else None."""
        i = bisect.bisect_left(self.starts, c) - 1
        if i >= 0:
            s, e = self.spans[i]
            if s < c < e:
                return self.spans[i]
        return None

    def starting_at(self, c: int) -> tuple[int, int] | None:
        i = bisect.bisect_left(self.starts, c)
        if i < len(self.starts) and self.starts[i] == c:
            return self.spans[i]
        return None


# -- chunking -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Chunk:
    text: str
    oversized: bool = False


def _best_cut(b: bytes, pos: int, end: int, fences: _Fences) -> int | None:
    for sep, offset in _SEPARATORS:
        # match start i with pos < i + offset <= end
        i = b.rfind(sep, pos, end - offset + len(sep))
        while i != -1:
            c = i + offset
            if pos < c <= end and fences.inside(c) is None:
                return c
            i = b.rfind(sep, pos, i + len(sep) - 1)
    c = end
    while c > pos:
        if (b[c] & 0xC0) != 0x80 and fences.inside(c) is None:
            return c
        c -= 1
    return None


def split_chunks(text: str, limit: int | None = None) -> list[Chunk]:
    """Cut ``text`` into chunks of at most ``limit`` UTF-8 bytes (see the module docstring)."""
    limit = chunk_limit() if limit is None else (limit if limit > 0 else DEFAULT_CHUNK_BYTES)
    b = text.encode("utf-8")
    if len(b) <= limit:
        return [Chunk(text)]
    fences = _Fences(fence_spans(b))
    out: list[Chunk] = []
    pos = 0
    n = len(b)
    while n - pos > limit:
        end = pos + limit
        cut = _best_cut(b, pos, end, fences)
        oversized = False
        if cut is None:  # trapped: a fence opens at pos and runs past the window
            span = fences.starting_at(pos) or fences.inside(end)
            if span is not None:
                cut, oversized = span[1], True
            else:  # a character longer than the limit: take it whole
                cut = pos + 1
                while cut < n and (b[cut] & 0xC0) == 0x80:
                    cut += 1
        out.append(Chunk(b[pos:cut].decode("utf-8"), oversized))
        pos = cut
    if pos < n:
        out.append(Chunk(b[pos:].decode("utf-8")))
    return out


def shown_title(title: str, index: int, total: int) -> str:
    return f"{title} (Part {index + 1}/{total})" if total > 1 else title


def strip_part(title: str) -> str:
    """The shown title without the ritual's own ``(Part i/N)`` suffix."""
    return _PART.sub("", title)


# -- phrases --------------------------------------------------------------------------------------------------
@dataclass
class _Doc:
    headings: list[str]
    paragraphs: list[str]
    lines: list[str]  # non-blank lines outside fences, stripped


def _scan(text: str) -> _Doc:
    headings: list[str] = []
    paragraphs: list[str] = []
    lines: list[str] = []
    para: list[str] = []
    in_fence = False

    def flush() -> None:
        if para:
            paragraphs.append(" ".join(para))
            para.clear()

    for raw in text.split("\n"):
        line = raw.rstrip("\r")
        if _is_fence(line):
            flush()
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        s = line.strip()
        if not s:
            flush()
            continue
        lines.append(s)
        heading = atx_heading(line)
        if heading is not None:
            flush()
            headings.append(heading)
            continue
        para.append(s)
    flush()
    return _Doc(headings, paragraphs, lines)


def _first_heading(doc: _Doc) -> str | None:
    h = doc.headings[0] if doc.headings else ""
    return h if h and len(h) <= HEADING_MAX else None


def atx_heading(line: str) -> str | None:
    """The text of an ATX heading line (``## Title ##`` -> ``Title``), None for any other line. Linear: the
    optional closing run of ``#`` is stripped from the right instead of matched lazily."""
    m = _ATX_OPEN.match(line)
    if m is None:
        return None
    rest = line[m.end():].strip(" \t")
    close = _ATX_CLOSE.search(rest)
    if close is not None:
        rest = rest[:close.start()]
    return rest.strip()


def sentences(paragraph: str) -> list[str]:
    """Runs of text from a non-space character up to the first ``.``, ``!`` or ``?`` followed by whitespace or the
    end (at least two characters); text after the last such mark is not a sentence. One left-to-right pass."""
    out: list[str] = []
    start_search = 0
    start = -1
    for m in _SENTENCE_END.finditer(paragraph):
        end = m.start()
        if start < start_search:
            found = _NON_SPACE.search(paragraph, start_search)
            if found is None:
                break
            start = found.start()
        if end <= start:  # the mark is the sentence's first character: it needs one more
            continue
        out.append(" ".join(paragraph[start:end + 1].split()))
        start_search = end + 1
    return out


def auto_phrase(content: str, title: str) -> str:
    """The one ``auto`` phrase of an entry without authored phrases."""
    doc = _scan(content)
    h = _first_heading(doc)
    if h:
        return h
    cands = [s for p in doc.paragraphs for s in sentences(p) if len(s) <= SENTENCE_MAX]
    if cands:
        pick = int(hashlib.sha256(content.encode("utf-8")).hexdigest()[:8], 16) % len(cands)
        return cands[pick]
    if doc.lines:
        return doc.lines[0]
    return title


def derived_phrase(chunk_text: str) -> str | None:
    """The ``derived`` phrase of a later chunk; None when the chunk has no non-blank text outside fences."""
    doc = _scan(chunk_text)
    if not doc.lines:
        return None
    h = _first_heading(doc)
    if h:
        return h
    if doc.paragraphs:
        first = sentences(doc.paragraphs[0])
        if first and len(first[0]) <= SENTENCE_MAX:
            return first[0]
    return doc.lines[0][:DERIVED_LINE_MAX]


def chunk_phrases(index: int, chunk_text: str, content: str, title: str, authored: list[str]
                  ) -> tuple[str, list[str]]:
    """``(phrase_source, phrases)`` for chunk ``index`` of an entry."""
    if index == 0:
        if authored:
            return "authored", list(authored)
        return "auto", [auto_phrase(content, title)]
    if not authored:
        return "unphrased", []
    p = derived_phrase(chunk_text)
    return ("derived", [p]) if p else ("unphrased", [])


# -- judging --------------------------------------------------------------------------------------------------
_ASCII = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "\u00b4": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
    "\u2026": "...",
})
_TRAILING = ".!?…,;:"


def normalise(s: str) -> str:
    """Case-folded, smart quotes/dashes mapped to ASCII, trailing ``.!?…,;:`` dropped, only alphanumerics and
    single spaces kept."""
    s = unicodedata.normalize("NFKC", s).translate(_ASCII).casefold().strip()
    s = s.rstrip(_TRAILING + " \t\r\n")
    kept = "".join(ch if (ch.isalnum() or ch.isspace()) else "" for ch in s)
    return " ".join(kept.split())


def levenshtein(a: str, b: str, max_distance: int | None = None) -> int:
    """Edit distance; with ``max_distance``, any value above it may be reported as ``max_distance + 1``."""
    if len(a) < len(b):
        a, b = b, a
    la, lb = len(a), len(b)
    if max_distance is not None and la - lb > max_distance:
        return max_distance + 1
    if lb == 0:
        return la
    if la * lb <= 4096:
        prev = list(range(lb + 1))
        for i, ca in enumerate(a, 1):
            cur = [i]
            for j, cb in enumerate(b, 1):
                cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
            if max_distance is not None and min(cur) > max_distance:
                return max_distance + 1
            prev = cur
        return prev[-1]
    # Row-wise dynamic programming in numpy: substitutions/deletions vectorised, insertions as a running minimum.
    import numpy as np

    bb = np.fromiter((ord(c) for c in b), dtype=np.int64, count=lb)
    ar = np.arange(lb + 1, dtype=np.int64)
    prev_a = ar.copy()
    for i, ca in enumerate(a, 1):
        cur = np.empty(lb + 1, dtype=np.int64)
        cur[0] = i
        np.minimum(prev_a[1:] + 1, prev_a[:-1] + (bb != ord(ca)), out=cur[1:])
        cur = np.minimum.accumulate(cur - ar) + ar
        if max_distance is not None and int(cur.min()) > max_distance:
            return max_distance + 1
        prev_a = cur
    return int(prev_a[-1])


def similar(a: str, b: str, threshold: float = CLOSE_SIMILARITY) -> bool:
    """``1 − distance / max(len a, len b) ≥ threshold`` (both non-empty)."""
    if not a or not b:
        return False
    m = max(len(a), len(b))
    budget = int(m * (1.0 - threshold) + 1e-9)
    return levenshtein(a, b, budget) <= budget


def judge(guess: str, phrases: list[str]) -> tuple[str, int | None]:
    """``(kind, phrase_index)``: ``exact`` / ``close`` / ``none`` and the 0-based index of the first matching
    phrase (None for ``none``)."""
    g = guess.strip()
    for i, p in enumerate(phrases):
        if g == p.strip():
            return "exact", i
    ng = normalise(guess)
    if not ng:
        return "none", None
    for i, p in enumerate(phrases):
        npn = normalise(p)
        if npn and (ng == npn or similar(ng, npn)):
            return "close", i
    return "none", None


def has_alnum(s: str) -> bool:
    return any(ch.isalnum() for ch in s)


# -- safe display ---------------------------------------------------------------------------------------------
_BIDI = frozenset([0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def escape_controls(s: str) -> str:
    """Every control character and bidirectional control shown escaped (``\\n``, ``\\u{1b}``, ``\\u{202e}``), so
    stored text can neither drive nor reorder a terminal."""
    out = []
    for ch in s:
        o = ord(ch)
        if ch in _NAMED:
            out.append(_NAMED[ch])
        elif o in _BIDI or unicodedata.category(ch) in ("Cc", "Zl", "Zp"):
            out.append(f"\\u{{{o:x}}}")
        else:
            out.append(ch)
    return "".join(out)
