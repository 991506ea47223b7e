"""Semantic dimension without an embedding model: character-trigram TF-IDF over node text (activation.md §3).

Node text = label, qname parts and the first line of the doc, as identifier words. Trigrams are integer codes over
a 38-symbol alphabet (a–z, 0–9, space, "other"), extracted for all nodes at once with numpy (no per-node Python
loop), so building the index for 100k nodes takes a fraction of a second. Vectors are TF-IDF weighted and
L2-normalised, stored as posting lists sorted by trigram code; a query costs one ``np.bincount`` over the postings
of its trigrams.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field

import numpy as np

from m1nd.graph.engine import PostingLists
from m1nd.graph.nodes import NodeTable
from m1nd.graph.seeds import run_starts
from m1nd.identifiers import identifier_parts
from m1nd.lru import LRU

_WORDS = re.compile(r"[A-Za-z0-9]+")
_ALPHA = 38  # 0 = space, 1..26 = a-z, 27..36 = 0-9, 37 = other
_LUT = np.full(256, 37, np.int64)
_LUT[ord(" ")] = 0
_LUT[np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", np.uint8)] = np.arange(1, 27)
_LUT[np.frombuffer(b"0123456789", np.uint8)] = np.arange(27, 37)


@functools.lru_cache(maxsize=1 << 17)
def _segment_text(seg: str) -> str:
    return " ".join(w for w in identifier_parts(seg) if len(w) >= 2)


def node_text(label: str, qname: str, doc: str) -> str:
    """Space-separated words of a node: label parts, qname parts (per segment), first doc line words."""
    parts = [_segment_text(label)]
    parts.extend(_segment_text(seg) for seg in qname.split("."))
    if doc:
        first = doc.split("\n", 1)[0]
        parts.extend(w.lower() for w in _WORDS.findall(first) if len(w) >= 2)
    return " ".join(p for p in parts if p)


def node_text_words(label: str, qname: str, doc: str) -> list[str]:
    return node_text(label, qname, doc).split()


def trigram_codes(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(owner index int64, trigram code int64) for every trigram of every text (space-separated words)."""
    if not texts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    # Each text becomes " w1 w2 … " (a leading and trailing space); windows whose middle character is a space
    # straddle two words and are dropped, which leaves exactly the trigrams of each " w " padded word.
    joined = "".join(f" {t} " if t else "" for t in texts)
    raw = np.frombuffer(joined.encode("ascii", "replace"), np.uint8)
    if len(raw) < 3:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    lengths = np.fromiter((len(t) + 2 if t else 0 for t in texts), np.int64, count=len(texts))
    bounds = np.cumsum(lengths)
    sym = _LUT[raw]
    keep = np.flatnonzero(sym[1:-1] != 0)  # window start positions whose middle is not a space
    # a window never straddles two texts: every text starts and ends with a space, so its middle would be one
    code = sym[keep] * (_ALPHA * _ALPHA) + sym[keep + 1] * _ALPHA + sym[keep + 2]
    owner = np.searchsorted(bounds, keep, side="right").astype(np.int64)
    return owner, code.astype(np.int64)


@dataclass
class TrigramIndex:
    codes: np.ndarray  # int64[G] sorted unique trigram codes
    idf: np.ndarray  # float32[G]
    indptr: np.ndarray  # int64[G+1]
    nodes: np.ndarray  # int32[P]
    weights: np.ndarray  # float32[P]
    n: int
    _postings: PostingLists | None = field(default=None, repr=False, compare=False)
    _top_cache: LRU[tuple, tuple[np.ndarray, np.ndarray]] = field(
        default_factory=lambda: LRU(1024), repr=False, compare=False)

    # the (node, trigram) pairs it was built from (absent when loaded from the cache): a patched build starts there
    parts: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def build(cls, t: NodeTable) -> TrigramIndex:
        texts = [node_text(t.label[i], t.qname[i], t.doc[i]) for i in range(t.n)]
        owner, code = trigram_codes(texts)
        del texts
        return cls.from_pairs(t.n, owner.astype(np.int32), code)

    @classmethod
    def patched(cls, old: TrigramIndex, t: NodeTable, old_to_new: np.ndarray, redo: np.ndarray) -> TrigramIndex:
        """:meth:`build` of ``t`` from ``old``'s pairs: nodes kept (``old_to_new`` ≥ 0) and not in ``redo`` (new
        positions whose label, qualified name or doc changed, or that are new) keep their trigrams at their new
        position; ``redo`` nodes' trigrams are made again. The kept pairs stay sorted by (trigram, node) (node
        positions move monotonically), so the redo pairs are merged in rather than everything sorted again."""
        assert old.parts is not None
        owner, code = old.parts
        gone = old_to_new < 0
        gone[np.flatnonzero(np.isin(old_to_new, redo))] = True
        keep = ~gone[owner]
        redo_l = np.asarray(redo, np.int64).tolist()
        r_owner, r_code = trigram_codes([node_text(t.label[j], t.qname[j], t.doc[j]) for j in redo_l])
        n = max(t.n, 1)
        key = code[keep].astype(np.int64) * n + old_to_new[owner[keep]]
        if len(r_owner):
            r_key = np.sort(r_code * n + np.asarray(redo_l, np.int64)[r_owner])
            key = np.insert(key, np.searchsorted(key, r_key, side="right"), r_key)
        return cls.from_sorted_keys(t.n, key)

    @classmethod
    def from_pairs(cls, n: int, owner: np.ndarray, code: np.ndarray) -> TrigramIndex:
        # One sort by (code, owner) gives term frequencies and posting lists already grouped by code.
        key = code.astype(np.int64) * max(n, 1) + owner.astype(np.int64)
        del owner, code
        key.sort()
        return cls.from_sorted_keys(n, key)

    @classmethod
    def from_sorted_keys(cls, n: int, key: np.ndarray) -> TrigramIndex:
        """The index from every (trigram, node) occurrence as ``code * n + node``, sorted (repeats are the term
        frequencies); the occurrences are kept as sorted pairs for a later :meth:`patched`."""
        parts = ((key % max(n, 1)).astype(np.int32), (key // max(n, 1)).astype(np.int32))
        if key.size == 0:
            return cls(np.zeros(0, np.int64), np.zeros(0, np.float32), np.zeros(1, np.int64),
                       np.zeros(0, np.int32), np.zeros(0, np.float32), n, parts=parts)
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        tf = np.diff(np.r_[starts, len(key)])
        uniq = key[starts]
        del key
        u_code, u_owner = uniq // max(n, 1), (uniq % max(n, 1)).astype(np.int32)
        g_starts = np.flatnonzero(np.r_[True, u_code[1:] != u_code[:-1]])
        codes = u_code[g_starts]
        df = np.diff(np.r_[g_starts, len(u_code)])
        idf = (np.log((1.0 + n) / (1.0 + df)) + 1.0).astype(np.float32)
        w = (1.0 + np.log(tf)).astype(np.float32) * np.repeat(idf, df)
        norms = np.sqrt(np.bincount(u_owner, weights=w.astype(np.float64) ** 2, minlength=n))
        w = (w / np.maximum(norms[u_owner], 1e-9)).astype(np.float32)
        indptr = np.r_[g_starts, len(u_code)].astype(np.int64)
        return cls(codes, idf, indptr, u_owner, w, n, parts=parts)

    def arrays(self) -> dict[str, np.ndarray]:
        return {"codes": self.codes, "idf": self.idf, "indptr": self.indptr, "nodes": self.nodes,
                "weights": self.weights, "n": np.asarray([self.n])}

    @classmethod
    def from_arrays(cls, a: dict[str, np.ndarray]) -> TrigramIndex:
        return cls(a["codes"], a["idf"], a["indptr"], a["nodes"], a["weights"], int(a["n"][0]))

    def similarity(self, tokens: list[str]) -> np.ndarray:
        """Cosine of the query's trigram vector with every node (float32[N])."""
        idx, val = self.similarity_sparse(tokens)
        out = np.zeros(self.n, np.float32)
        out[idx] = val
        return out

    def drop_query_caches(self) -> None:
        self._top_cache.clear()

    def top_similar(self, tokens: list[str], k: int, floor: float) -> tuple[np.ndarray, np.ndarray]:
        """The k nodes most similar to the tokens with similarity ≥ floor (by similarity desc, index asc), returned
        in ascending node order with their similarities (read-only). Cached per query for this index: D2 of a query
        that was just activated costs a lookup."""
        key = (tuple(tokens), k, floor)
        hit = self._top_cache.get(key)
        if hit is None:
            si, sv = self.similarity_sparse(tokens, floor)
            if len(si) > k:
                best = np.sort(np.lexsort((si, -sv))[:k])
                si, sv = si[best], sv[best]
            si.flags.writeable = sv.flags.writeable = False
            hit = (si, sv)
            self._top_cache.put(key, hit)
        return hit

    def similarity_sparse(self, tokens: list[str], floor: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The non-zero cosines only (with ``floor``: those at least ``floor``): (ascending node indices int32,
        similarity float32)."""
        words = [w for t in tokens for w in ([t] if t.isalnum() else identifier_parts(t)) if len(w) >= 2]
        _, code = trigram_codes([" ".join(words)])
        if code.size == 0 or self.codes.size == 0:
            return np.zeros(0, np.int32), np.zeros(0, np.float32)
        code = np.sort(code)
        starts = np.flatnonzero(run_starts(code))
        q_codes, tf = code[starts], np.diff(np.append(starts, len(code)))
        pos = np.searchsorted(self.codes, q_codes)
        pos_c = np.minimum(pos, len(self.codes) - 1)
        known = self.codes[pos_c] == q_codes
        unseen_idf = math.log(1 + self.n) + 1.0  # a trigram no node has: rarest possible
        idf = np.where(known, self.idf[pos_c], unseen_idf)
        qw = (1.0 + np.log(tf)) * idf
        qw /= max(1e-9, float(np.sqrt((qw ** 2).sum())))
        if self._postings is None:
            self._postings = PostingLists(self.nodes, self.indptr, self.n, self.weights)
        idx, sums, _ = self._postings.accumulate(pos_c[known], qw[known].astype(np.float32), floor)
        return idx, sums.astype(np.float32)
