"""Regenerate ``python/m1nd/memory/data/bert_unicode.json``: the per-character behaviour of ``tokenizers``'
``BertNormalizer`` and ``BertPreTokenizer``, read from that package itself, for :mod:`m1nd.memory.wordpiece`.

Why a table: the Rust code classifies characters with its own Unicode tables (an older Unicode version than any
CPython's ``unicodedata``), so deriving the classes from ``unicodedata`` gives other ids for ~760 rarely used code
points, and different ones on each Python version. Frozen here, m1nd tokenises identically on every Python.

Run (with the test extra installed, which brings ``tokenizers``): ``python ci/gen_bert_unicode.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tokenizers import __version__ as tokenizers_version
from tokenizers.normalizers import BertNormalizer
from tokenizers.pre_tokenizers import BertPreTokenizer

OUT = Path(__file__).resolve().parents[1] / "python" / "m1nd" / "memory" / "data" / "bert_unicode.json"
CODE_POINTS = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]


def ranges(points: list[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for c in points:
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return out


def hangul_nfd(c: int) -> str:
    """NFD of a precomposed Hangul syllable (algorithmic, Unicode ch. 3.12): m1nd.memory.wordpiece computes these
    11,172 instead of reading them from the table."""
    s = c - 0xAC00
    out = chr(0x1100 + s // 588) + chr(0x1161 + (s % 588) // 28)
    return out + chr(0x11A7 + s % 28) if s % 28 else out


def main() -> int:
    clean = BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False)
    chinese = BertNormalizer(clean_text=False, handle_chinese_chars=True, strip_accents=False, lowercase=False)
    strip = BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False)
    lower = BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=True)
    pre = BertPreTokenizer()
    removed, space, cjk, stripped_away, split_space, punct = [], [], [], [], [], []
    strip_map: dict[str, str] = {}
    lower_map: dict[str, str] = {}
    for c in CODE_POINTS:
        ch = chr(c)
        r = clean.normalize_str(ch)
        if r == "":
            removed.append(c)
        elif r == " " and ch != " ":
            space.append(c)
        if chinese.normalize_str(ch) == f" {ch} ":
            cjk.append(c)
        r = strip.normalize_str(ch)
        if r == "":
            stripped_away.append(c)
        elif 0xAC00 <= c <= 0xD7A3:
            if r != hangul_nfd(c):
                print(f"U+{c:04X}: {r!r} is not the algorithmic Hangul decomposition", file=sys.stderr)
                return 1
        elif r != ch:
            strip_map[ch] = r
        r = lower.normalize_str(ch)
        if r != ch:
            lower_map[ch] = r
        words = [w for w, _ in pre.pre_tokenize_str(f"a{ch}b")]
        if words == ["a", "b"]:
            split_space.append(c)
        elif words == ["a", ch, "b"]:
            punct.append(c)
        elif words != [f"a{ch}b"]:
            print(f"unexpected pre-tokenisation of U+{c:04X}: {words}", file=sys.stderr)
            return 1
    table = {
        "source": f"tokenizers {tokenizers_version} (ci/gen_bert_unicode.py)",
        "clean_removed": ranges(removed), "clean_space": ranges(space), "cjk": ranges(cjk),
        "strip_removed": ranges(stripped_away), "strip": strip_map, "lower": lower_map,
        "split_space": ranges(split_space), "punctuation": ranges(punct),
    }
    OUT.write_text(json.dumps(table, ensure_ascii=True, separators=(",", ":")) + "\n", encoding="ascii")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes): {len(strip_map)} accent and {len(lower_map)} case mappings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
