"""BERT WordPiece tokenisation from a ``tokenizer.json`` file, id for id and offset for offset what the
``tokenizers`` package computes for that file (tests/embeddings/test_wordpiece.py compares them).

Why it exists (issue 17): ``tokenizers`` requires the Hugging Face Hub client and its HTTP stack (12 packages,
~31 MB) that m1nd never uses; the default model and the BERT-family models of ``M1ND_EMBED_MODEL_DIR`` (MiniLM, BGE,
E5, GTE) all use this one pipeline, which fits in a page of Python. Files of any other kind (SentencePiece, BPE,
other normalisers) raise :class:`UnsupportedTokenizer`; :func:`m1nd.memory.embeddings.load_tokenizer` then uses
``tokenizers`` when it is installed (``pip install 'm1nd[tokenizers]'``).

The pipeline, in the order ``tokenizers`` applies it:

1. special tokens (``added_tokens``, matched in the raw text) are split out first;
2. ``BertNormalizer``: drop NUL, U+FFFD and control characters, whitespace to spaces (``clean_text``); spaces around
   CJK ideographs (``handle_chinese_chars``); NFD then drop non-spacing marks (``strip_accents``, which defaults to
   ``lowercase``); lowercase character by character (no final-sigma context, as Rust's ``char::to_lowercase``);
3. ``BertPreTokenizer``: split on whitespace (dropped) and punctuation (each mark its own word);
4. ``WordPiece``: greedy longest match, ``##`` continuation, the whole word as ``[UNK]`` when a part has no match
   or the word is longer than ``max_input_chars_per_word``;
5. the post-processor's ``[CLS] … [SEP]`` around the sequence when special tokens are asked for.

Offsets are character offsets into the original text (each normalised character keeps its source character's
position), as ``tokenizers`` returns them for ``str`` input. Which characters are control, whitespace, punctuation or
CJK, and what stripping accents and lowercasing make of each, come from ``data/bert_unicode.json``, read from
``tokenizers`` itself by ``ci/gen_bert_unicode.py`` (its Unicode tables are older than any CPython's
``unicodedata``, which would classify ~760 rare code points otherwise, and differently on each Python version).
"""

from __future__ import annotations

import json
import re
import threading
from bisect import bisect_right
from pathlib import Path
from typing import Any, NamedTuple

# ASCII text with no control character other than tab, newline and carriage return normalises to its lowercase with
# one character per character: the fast path, taken by nearly all code and prose.
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ASCII_WORDS = re.compile(r"[^\s!-/:-@\[-`{-~]+|[!-/:-@\[-`{-~]")
_CACHE_LIMIT = 200_000


class UnsupportedTokenizer(ValueError):
    """The file describes a tokenizer other than BERT WordPiece."""


class Encoding(NamedTuple):
    ids: list[int]
    offsets: list[tuple[int, int]]


TABLE = Path(__file__).parent / "data" / "bert_unicode.json"
WORD, SPACE, PUNCT = 0, 1, 2


class _Ranges:
    """Sorted, disjoint inclusive code point ranges."""

    def __init__(self, pairs: list[list[int]]) -> None:
        self.starts = [a for a, _ in pairs]
        self.ends = [b for _, b in pairs]

    def __contains__(self, o: int) -> bool:
        i = bisect_right(self.starts, o) - 1
        return i >= 0 and o <= self.ends[i]


class _Unicode:
    def __init__(self, d: dict[str, Any]) -> None:
        self.clean_removed = _Ranges(d["clean_removed"])
        self.clean_space = _Ranges(d["clean_space"])
        self.cjk = _Ranges(d["cjk"])
        self.strip_removed = _Ranges(d["strip_removed"])
        self.strip: dict[str, str] = d["strip"]
        self.lower: dict[str, str] = d["lower"]
        self.split_space = _Ranges(d["split_space"])
        self.punctuation = _Ranges(d["punctuation"])

    def strip_char(self, c: str) -> str:
        o = ord(c)
        if o in self.strip_removed:
            return ""
        if 0xAC00 <= o <= 0xD7A3:  # precomposed Hangul: the algorithmic NFD (Unicode ch. 3.12), kept out of the table
            s = o - 0xAC00
            out = chr(0x1100 + s // 588) + chr(0x1161 + (s % 588) // 28)
            return out + chr(0x11A7 + s % 28) if s % 28 else out
        return self.strip.get(c, c)

    def kind(self, c: str) -> int:
        o = ord(c)
        return SPACE if o in self.split_space else PUNCT if o in self.punctuation else WORD


_UNICODE: _Unicode | None = None
_UNICODE_LOCK = threading.Lock()


def unicode_table() -> _Unicode:
    global _UNICODE
    with _UNICODE_LOCK:
        if _UNICODE is None:
            _UNICODE = _Unicode(json.loads(TABLE.read_text(encoding="ascii")))
        return _UNICODE


class WordPieceTokenizer:
    """Thread-safe after construction (the word cache is a dict written under the GIL)."""

    def __init__(self, vocab: dict[str, int], *, unk_token: str, prefix: str, max_chars: int, clean_text: bool,
                 chinese: bool, strip_accents: bool, lowercase: bool, special: dict[str, int],
                 wrap: tuple[list[int], list[int]]) -> None:
        self.vocab = vocab
        self.unk_id = vocab[unk_token]
        self.prefix = prefix
        self.max_chars = max_chars
        self.clean_text, self.chinese = clean_text, chinese
        self.strip_accents, self.lowercase = strip_accents, lowercase
        self.special = special
        self._special_re = (re.compile("|".join(re.escape(t) for t in sorted(special, key=len, reverse=True)))
                            if special else None)
        self.head, self.tail = wrap
        self._cache: dict[str, tuple[tuple[int, int, int], ...]] = {}
        self._uni = unicode_table()
        self._norm: dict[str, str] = {}  # what each non-ASCII character normalises to
        self._kind: dict[str, int] = {}  # WORD, SPACE or PUNCT of each normalised character

    @classmethod
    def from_file(cls, path: str | Path) -> WordPieceTokenizer:
        """Raises OSError or ValueError when the file cannot be read, :class:`UnsupportedTokenizer` when it describes
        another kind of tokenizer."""
        return cls.from_config(json.loads(Path(path).read_text(encoding="utf-8")))

    @classmethod
    def from_config(cls, cfg: dict[str, Any]) -> WordPieceTokenizer:
        model, norm, pre, post = (cfg.get(k) or {} for k in ("model", "normalizer", "pre_tokenizer", "post_processor"))
        if model.get("type") != "WordPiece":
            raise UnsupportedTokenizer(f"model type {model.get('type')!r} is not WordPiece")
        if norm.get("type") != "BertNormalizer":
            raise UnsupportedTokenizer(f"normalizer {norm.get('type')!r} is not BertNormalizer")
        if pre.get("type") != "BertPreTokenizer":
            raise UnsupportedTokenizer(f"pre-tokenizer {pre.get('type')!r} is not BertPreTokenizer")
        vocab = {str(k): int(v) for k, v in model["vocab"].items()}
        for t in cfg.get("added_tokens") or []:
            if not t.get("special") or t.get("normalized") or t.get("lstrip") or t.get("rstrip") \
                    or t.get("single_word"):
                raise UnsupportedTokenizer(f"added token {t.get('content')!r} has options this reader does not apply")
        special = {str(t["content"]): int(t["id"]) for t in cfg.get("added_tokens") or []}
        lowercase = bool(norm.get("lowercase", True))
        strip = norm.get("strip_accents")
        if model.get("unk_token") not in vocab:
            raise UnsupportedTokenizer("the unknown token is not in the vocabulary")
        return cls(vocab, unk_token=model["unk_token"], prefix=str(model.get("continuing_subword_prefix", "##")),
                   max_chars=int(model.get("max_input_chars_per_word", 100)),
                   clean_text=bool(norm.get("clean_text", True)), chinese=bool(norm.get("handle_chinese_chars", True)),
                   strip_accents=lowercase if strip is None else bool(strip), lowercase=lowercase, special=special,
                   wrap=_wrap(post, special))

    # -- encoding ---------------------------------------------------------------------------------------------------
    def encode(self, text: str, add_special_tokens: bool = True) -> Encoding:
        ids: list[int] = []
        offsets: list[tuple[int, int]] = []
        if add_special_tokens:
            ids += self.head
            offsets += [(0, 0)] * len(self.head)
        pos = 0
        if self._special_re is not None:
            for m in self._special_re.finditer(text):
                self._encode_segment(text, pos, m.start(), ids, offsets)
                ids.append(self.special[m.group()])
                offsets.append((m.start(), m.end()))
                pos = m.end()
        self._encode_segment(text, pos, len(text), ids, offsets)
        if add_special_tokens:
            ids += self.tail
            offsets += [(0, 0)] * len(self.tail)
        return Encoding(ids, offsets)

    def encode_batch(self, texts: list[str], add_special_tokens: bool = True) -> list[Encoding]:
        return [self.encode(t, add_special_tokens) for t in texts]

    def _encode_segment(self, text: str, start: int, end: int, ids: list[int], offsets: list[tuple[int, int]]) -> None:
        if start >= end:
            return
        seg = text[start:end]
        if seg.isascii() and not _ASCII_CONTROL.search(seg):
            norm = seg.lower() if self.lowercase else seg
            for m in _ASCII_WORDS.finditer(norm):
                base = start + m.start()
                for tid, s, e in self._wordpiece(m.group()):
                    ids.append(tid)
                    offsets.append((base + s, base + e))
            return
        chars, origin = self._normalize(seg, start)
        kinds = [self._kind.get(c) for c in chars]
        for k, c in enumerate(chars):
            if kinds[k] is None:
                kinds[k] = self._kind[c] = self._uni.kind(c)
        n = len(chars)
        i = 0
        while i < n:
            kind = kinds[i]
            if kind == SPACE:
                i += 1
                continue
            j = i + 1
            if kind == WORD:
                while j < n and kinds[j] == WORD:
                    j += 1
            for tid, s, e in self._wordpiece("".join(chars[i:j])):
                offsets.append((origin[i + s], origin[i + e - 1] + 1))
                ids.append(tid)
            i = j

    def _normalize(self, seg: str, base: int) -> tuple[list[str], list[int]]:
        chars: list[str] = []
        origin: list[int] = []
        norm = self._norm
        for k, c in enumerate(seg):
            out = norm.get(c)
            if out is None:
                out = norm[c] = self._normalize_char(c)
            for x in out:
                chars.append(x)
                origin.append(base + k)
        return chars, origin

    def _normalize_char(self, c: str) -> str:
        u = self._uni
        o = ord(c)
        if self.clean_text:
            if o in u.clean_removed:
                return ""
            if o in u.clean_space:
                c = " "
        out = f" {c} " if self.chinese and o in u.cjk else c
        if self.strip_accents:
            out = "".join(u.strip_char(x) for x in out)
        if self.lowercase:
            out = "".join(u.lower.get(x, x) for x in out)
        return out

    def _wordpiece(self, word: str) -> tuple[tuple[int, int, int], ...]:
        """(id, start, end) per piece, offsets within ``word``."""
        hit = self._cache.get(word)
        if hit is not None:
            return hit
        n = len(word)
        vocab = self.vocab
        pieces: list[tuple[int, int, int]] = []
        if n > self.max_chars:
            pieces = [(self.unk_id, 0, n)]
        else:
            start = 0
            while start < n:
                end = n
                found = None
                while start < end:
                    sub = word[start:end] if start == 0 else self.prefix + word[start:end]
                    found = vocab.get(sub)
                    if found is not None:
                        break
                    end -= 1
                if found is None:
                    pieces = [(self.unk_id, 0, n)]
                    break
                pieces.append((found, start, end))
                start = end
        out = tuple(pieces)
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[word] = out
        return out


def _wrap(post: dict[str, Any], special: dict[str, int]) -> tuple[list[int], list[int]]:
    """The ids the post-processor puts before and after a single sequence."""
    kind = post.get("type")
    if kind == "BertProcessing":
        return [int(post["cls"][1])], [int(post["sep"][1])]
    if kind == "TemplateProcessing":
        tokens = post.get("special_tokens") or {}
        head: list[int] = []
        tail: list[int] = []
        seen_sequence = False
        for item in post.get("single") or []:
            if "Sequence" in item:
                seen_sequence = True
                continue
            name = item["SpecialToken"]["id"]
            ids = [int(x) for x in tokens[name]["ids"]] if name in tokens else [special[name]]
            (tail if seen_sequence else head).extend(ids)
        return head, tail
    if not post:
        return [], []
    raise UnsupportedTokenizer(f"post-processor {kind!r} is not BertProcessing or TemplateProcessing")
